#!/bin/sh
# The XDP driver end to end (docs/XDP.md): two hosts, each in its own
# network namespace with a veth whose native XDP program the driver
# loads, joined through a router namespace that forwards between them and
# drops LOSS per mille of the UDP packets with nftables. The client runs
# RPCs of 1 B to 4 MiB over the XDP driver, checked byte for byte, while a
# TCP stream through the same interfaces is echoed and checked.
#   xdp_veth.sh BUILD_DIR [LOSS_PER_MILLE]
# Exit 77 (skipped, with the reason) without root, nft or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}; loss=${2:-20}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_veth ip nft
a="hxa-$$"; r="hxr-$$"; b="hxb-$$"; spid=""
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	for n in "$a" "$r" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -f "$fifo"
}
fifo=$(mktemp -u /tmp/xdp_veth.XXXXXX)
trap cleanup EXIT INT TERM
set -e
. "$(dirname "$0")/routed.sh"
# the server's interface has two receive queues: one AF_XDP socket each
routed_hosts "$a" "$r" "$b" x 10.231 2
ip netns exec "$r" nft -f - <<NFT
table inet hx_loss {
	chain forward {
		type filter hook forward priority 0;
		meta l4proto udp numgen random mod 1000 < $loss counter drop
	}
}
NFT
set +e
start_server "$b" "$fifo" xdp_veth xb0 10.231.2.2 4000 4001 || exit 1
ip netns exec "$a" timeout 50 "$peer" client xa0 10.231.1.2 10.231.2.2 4000 4001
rc=$?
ip netns exec "$r" nft list chain inet hx_loss forward | grep -o 'counter.*'
exit $rc
