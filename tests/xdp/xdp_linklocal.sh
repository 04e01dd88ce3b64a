#!/bin/sh
# Link-local IPv6 peers over the XDP driver (docs/XDP.md): two network
# namespaces joined by two veth pairs, the first one made first, so the
# kernel's route to fe80::/64 without a scope leaves through it. Homa
# server and client both bind :: on the second pair with the XDP driver;
# the client runs RPCs of 1 B to 20 kB (checked byte for byte) to the
# server's link-local address. The driver looks link-local destinations up
# on its own interface; looked up without that scope, every packet would
# take the first pair's route and be dropped (tx_errors).
#   xdp_linklocal.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_linklocal ip
a="hla-$$"; b="hlb-$$"; spid=""
fifo=$(mktemp -u /tmp/xdp_linklocal.XXXXXX)
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -f "$fifo"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/routed.sh"
ip netns add "$a" && ip netns add "$b" || exit 1
for n in "$a" "$b"; do
	ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 || exit 1
	ip -n "$n" link set lo up
done
ip link add lla0 netns "$a" type veth peer name llb0 netns "$b" || exit 1
ip -n "$a" link set lla0 up; ip -n "$b" link set llb0 up
# ll NS IF: the link-local address of IF in NS (waits up to 5 s for it)
ll() {
	i=0
	while :; do
		x=$(ip -n "$1" -6 -o addr show dev "$2" scope link | awk '{print $4}' | cut -d/ -f1)
		[ -n "$x" ] && { echo "$x"; return 0; }
		i=$((i + 1)); [ "$i" -gt 50 ] && return 1
		sleep 0.1
	done
}
# the second pair only once the first has its link-local routes
ll "$a" lla0 >/dev/null && ll "$b" llb0 >/dev/null || { echo "xdp_linklocal: no link-local address"; exit 1; }
ip link add lxa0 netns "$a" type veth peer name lxb0 netns "$b" || exit 1
ip -n "$a" link set lxa0 up; ip -n "$b" link set lxb0 up
lla=$(ll "$a" lxa0) && llb=$(ll "$b" lxb0) || { echo "xdp_linklocal: no link-local address"; exit 1; }
for n in "$a $llb" "$b $lla"; do
	set -- $n
	ip -n "$1" -6 route get "$2" | grep -q ' dev lxa0\| dev lxb0' && {
		echo "xdp_linklocal: the kernel's unscoped route already takes the XDP pair; nothing tested"
		exit 1
	}
done
start_server "$b" "$fifo" xdp_linklocal lxb0 :: 4000 4001 || exit 1
ip netns exec "$a" timeout 60 "$peer" echo lxa0 :: "$llb" 4000 1,1400,1500,20000 5
