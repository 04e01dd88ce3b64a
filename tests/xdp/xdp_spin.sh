#!/bin/sh
# Spinning on the XDP driver costs no system call per look (docs/XDP.md):
# a polled server socket on a veth calls homa_recv() with a zero timeout
# 2000 times with nothing to receive; the driver answers from its receive
# ring (ops->pending), so the process may make at most 200 ppoll() calls
# (the runtime's standby thread and start-up make a few).
#   xdp_spin.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root, AF_XDP or strace. The
# namespace is removed on exit, also after a failure.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_spin ip strace
ns="hxs-$$"; out=$(mktemp /tmp/xdp_spin.XXXXXX)
trap 'ip netns del "$ns" 2>/dev/null; rm -f "$out"' EXIT INT TERM
ip netns add "$ns" || exit 1
ip -n "$ns" link add xs0 type veth peer name xs1
ip -n "$ns" addr add 10.231.0.1/24 dev xs0
for l in lo xs0 xs1; do ip -n "$ns" link set "$l" up; done
n=2000
# LeakSanitizer cannot run under ptrace: a sanitizer build checks leaks
# everywhere but here.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"; export ASAN_OPTIONS
ip netns exec "$ns" strace -f -qq -c -e trace=ppoll,poll,epoll_wait,epoll_pwait \
	-o "$out" "$peer" spin xs0 10.231.0.1 "$n" || { echo "xdp_spin: FAIL: the spins"; cat "$out"; exit 1; }
# strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall
polls=$(awk '$NF ~ /^(ppoll|poll|epoll_wait|epoll_pwait)$/ { s += $4 } END { print s + 0 }' "$out")
cat "$out"
if [ "$polls" -gt $((n / 10)) ]; then
	echo "xdp_spin: FAIL: $polls poll calls for $n zero-timeout homa_recv() calls"
	exit 1
fi
echo "xdp_spin: ok: $polls poll calls for $n zero-timeout homa_recv() calls"
