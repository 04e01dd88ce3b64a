#!/bin/sh
# Two processes on one interface with the XDP driver (docs/XDP.md): a veth
# pair between two network namespaces; one end runs the Homa echo server
# on the XDP driver, the other two client processes on the XDP driver of
# the same interface and queue, whose RPCs (1 B to 200 kB, checked byte
# for byte) run at the same time. The first process (the one that made
# the UMEM and attached the program) is killed with SIGKILL mid-transfer
# while it holds frames; the second must go on with every RPC intact and
# take the dead process's frames back (it prints how many).
#   xdp_procs.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_procs ip
a="hqa-$$"; b="hqb-$$"; spid=""; p1=""; p2=""
dir=$(mktemp -d /tmp/xdp_procs.XXXXXX)
fifo="$dir/fifo"
cleanup() {
	for p in "$p1" "$p2" "$spid"; do
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/routed.sh"
direct_hosts "$a" "$b" xq 10.234.0 || exit 1
start_server "$b" "$fifo" xdp_procs xqb0 10.234.0.2 4000 4001 || exit 1
ip netns exec "$a" "$peer" procs xqa0 10.234.0.1 10.234.0.2 4000 first >"$dir/p1" 2>&1 &
p1=$!
wait_line "$dir/p1" "^ok 0" || { echo "xdp_procs: the first process ran no round"; cat "$dir/p1"; exit 1; }
ip netns exec "$a" timeout 80 "$peer" procs xqa0 10.234.0.1 10.234.0.2 4000 second >"$dir/p2" 2>&1 &
p2=$!
wait_line "$dir/p2" "^joined" || { echo "xdp_procs: the second process did not open"; cat "$dir/p2"; exit 1; }
# both run now: wait for two more rounds of the first, then kill it mid-transfer
n=$(grep -c "^ok" "$dir/p1")
wait_line "$dir/p1" "^ok $((n + 1))$" || { echo "xdp_procs: the first process stopped"; cat "$dir/p1"; exit 1; }
kill -9 "$p1"; wait "$p1" 2>/dev/null; p1=""
echo "xdp_procs: first process killed after $(grep -c '^ok' "$dir/p1") rounds"
wait "$p2"; rc=$?; p2=""
cat "$dir/p2"
[ "$rc" -eq 0 ] || { echo "xdp_procs: FAILED (second process exit $rc)"; exit 1; }
echo "xdp_procs: ok"
