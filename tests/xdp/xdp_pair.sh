#!/bin/sh
# Several Homa sockets on one interface with the XDP driver (docs/XDP.md):
# a veth pair between two network namespaces; one end runs the Homa echo
# server on the XDP driver, the other two XDP sockets in one process whose
# RPCs (1 B to 200 kB, checked byte for byte) run at the same time, then
# the second socket's alone after the first closed.
#   xdp_pair.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_pair ip
a="hpa-$$"; b="hpb-$$"; spid=""
fifo=$(mktemp -u /tmp/xdp_pair.XXXXXX)
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -f "$fifo"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/routed.sh"
direct_hosts "$a" "$b" xp 10.233.0 || exit 1
start_server "$b" "$fifo" xdp_pair xpb0 10.233.0.2 4000 4001 || exit 1
ip netns exec "$a" timeout 60 "$peer" pair xpa0 10.233.0.1 10.233.0.2 4000
