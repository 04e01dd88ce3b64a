#!/bin/sh
# The shared UMEM's robust lock taken over from a process that died
# holding it, and a second socket inside a joined process (docs/XDP.md,
# "Several processes per interface"). A veth pair between two network
# namespaces; one end runs the Homa echo server on the XDP driver, the
# other two client processes on the XDP driver of the same interface and
# queue: the first made the UMEM, the second joined it and opens a second
# Homa socket; both run RPCs of 1 B to 200 kB, checked byte for byte.
# Meanwhile xsk_lockdie enters the queue as a member, takes the lock, takes
# 100 free send frames as its own, empties the free list (a process killed
# mid-update) and dies by SIGKILL holding the lock. The next process to
# take the lock must find EOWNERDEAD, make the lock consistent, rebuild the
# free send frames from the owners and take the dead member's frames back:
# the second process's RPCs on both sockets stay intact and see frames
# reclaimed; the lock is usable afterwards and the free list is exactly
# the send frames nobody owns (xsk_lockdie check); the first process is
# still running RPCs.
#   xdp_lockdead.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
helper="$build/xsk_lockdie"
. "$(dirname "$0")/require.sh"
xdp_require xdp_lockdead ip
a="${NS_PREFIX:-hl}a-$$"; b="${NS_PREFIX:-hl}b-$$"; spid=""; p1=""; p2=""; ino=""
dir=$(mktemp -d /tmp/xdp_lockdead.XXXXXX)
fifo="$dir/fifo"
cleanup() {
	for p in "$p1" "$p2" "$spid"; do
		[ -n "$p" ] && kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# the first process and the server never close: their segments go
	# with the namespaces
	for i in $ino; do rm -f /dev/shm/homa-xdp-"$i"-*; done
	for n in "$a" "$b"; do ip netns del "$n" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM
fail() { echo "xdp_lockdead: $*"; for f in p1 p2; do echo "--- $f"; cat "$dir/$f"; done; exit 1; }
. "$(dirname "$0")/routed.sh"
direct_hosts "$a" "$b" xl 10.235.0 || exit 1
ino="$(ip netns exec "$a" stat -L -c %i /proc/self/ns/net) $(ip netns exec "$b" stat -L -c %i /proc/self/ns/net)"
start_server "$b" "$fifo" xdp_lockdead xlb0 10.235.0.2 4000 4001 || exit 1
ip netns exec "$a" "$peer" procs xla0 10.235.0.1 10.235.0.2 4000 first >"$dir/p1" 2>&1 &
p1=$!
wait_line "$dir/p1" "^ok 0" || fail "the first process ran no round"
ip netns exec "$a" timeout 80 "$peer" procs xla0 10.235.0.1 10.235.0.2 4000 second2 \
	>"$dir/p2" 2>&1 &
p2=$!
wait_line "$dir/p2" "^joined" || fail "the second process did not open"
n=$(grep -c "^ok" "$dir/p1")
wait_line "$dir/p1" "^ok $((n + 1))$" || fail "the first process stopped"
ip netns exec "$a" "$helper" die xla0 >"$dir/die" 2>&1
cat "$dir/die"
grep -q "dying with the lock" "$dir/die" || fail "the helper did not take the lock"
wait "$p2"; rc=$?; p2=""
cat "$dir/p2"
[ "$rc" -eq 0 ] || fail "second process exit $rc"
grep -q "second socket: ok" "$dir/p2" || fail "the joined process's second socket did not run"
ip netns exec "$a" "$helper" check xla0 || fail "the shared frames are inconsistent after the takeover"
n=$(grep -c "^ok" "$dir/p1")
wait_line "$dir/p1" "^ok $((n + 1))$" || fail "the first process stopped after the takeover"
echo "xdp_lockdead: ok"
