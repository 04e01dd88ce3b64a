#!/bin/sh
# interop.sh LINUX_ECHO ECHO_SERVER ECHO_CLIENT [SHIM.so|-] [raw]
# A program written against the Linux module's API (linux_echo) and the
# native examples talk both ways on loopback: linux_echo's client against
# echo_server, echo_client against linux_echo's server. With SHIM.so,
# linux_echo runs under LD_PRELOAD (it is not linked with the shim). With
# "raw", every program uses the raw IP driver (HOMA_LINUX_DRIVER=raw and
# --raw); without CAP_NET_RAW (not root) the test is skipped (exit 77).
set -u
echo_prog=$1 srv=$2 cli=$3 shim=${4:-}
[ "$shim" = "-" ] && shim=""
raw=""
if [ "${5:-}" = raw ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "interop: skipped: the raw driver needs root (CAP_NET_RAW)"
		exit 77
	fi
	raw="--raw"
	export HOMA_LINUX_DRIVER=raw
fi
run_echo() { if [ -n "$shim" ]; then LD_PRELOAD=$shim "$echo_prog" "$@"; else "$echo_prog" "$@"; fi; }
port=$((20000 + $$ % 8000))
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
fail() { echo "interop: FAIL: $*"; exit 1; }
# wait_for FILE TEXT: until the server printed TEXT (at most 20 s).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 200 ] && fail "server did not start: $(cat "$1")"
		sleep 0.1
	done
}

# 1. module-API client -> native server (1 B, 1,000 B, 200,000 B: 4 bpages).
"$srv" $raw --port "$port" > /tmp/interop.$$.srv 2>&1 &
pids="$!"
wait_for /tmp/interop.$$.srv listening
# A loaded machine can stall a process past the RPC timeout; a step is
# tried up to 3 times (a real incompatibility fails every time).
for size in 1 1000 200000; do
	ok=0
	for try in 1 2 3; do
		run_echo client "$port" "$size" 10 && { ok=1; break; }
		echo "interop: retry $try: linux_echo client, $size bytes"
	done
	[ $ok = 1 ] || fail "linux_echo client, $size bytes"
done
kill "$pids"
wait "$pids" 2>/dev/null
pids=""

# 2. native client -> module-API server.
port2=$((port + 1))
run_echo server "$port2" 1000000 > /tmp/interop.$$.lsrv 2>&1 &
pids="$!"
wait_for /tmp/interop.$$.lsrv serving
for size in 100 300000; do
	ok=0
	for try in 1 2 3; do
		"$cli" $raw --port "$port2" --size "$size" --count 10 && { ok=1; break; }
		echo "interop: retry $try: echo_client, $size bytes"
	done
	[ $ok = 1 ] || { cat /tmp/interop.$$.lsrv; fail "echo_client, $size bytes"; }
done
kill -0 "$pids" || { cat /tmp/interop.$$.lsrv; fail "linux_echo server died"; }
kill "$pids"
wait "$pids" 2>/dev/null
pids=""
rm -f /tmp/interop.$$.srv /tmp/interop.$$.lsrv
echo "interop: both directions ok"
