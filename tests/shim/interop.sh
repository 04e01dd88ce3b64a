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
# linux_echo itself (not a shell function: a server started in the
# background must be the process that cleanup() kills).
if [ -n "$shim" ]; then
	run_echo="env LD_PRELOAD=$shim $echo_prog"
else
	run_echo=$echo_prog
fi
pids=""
cleanup() { for p in $pids; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
fail() { echo "interop: FAIL: $*"; exit 1; }
# start LOG TEXT CMD...: start the server CMD on a free port, the port
# given as its last argument, until it printed TEXT (at most 20 s); a port
# another test holds makes it exit, then the next port is tried. Sets
# $port and $pids.
start() {
	log=$1 text=$2
	shift 2
	for attempt in 1 2 3 4 5; do
		port=$((10000 + ($$ * 7 + attempt * 3571) % 20000))
		"$@" "$port" > "$log" 2>&1 &
		pids="$!"
		i=0
		while ! grep -q "$text" "$log" 2>/dev/null; do
			kill -0 "$pids" 2>/dev/null || break
			i=$((i + 1))
			[ $i -gt 200 ] && fail "server did not start: $(cat "$log")"
			sleep 0.1
		done
		grep -q "$text" "$log" && return 0
		wait "$pids" 2>/dev/null
		pids=""
	done
	fail "no free port for the server: $(cat "$log")"
}

# 1. module-API client -> native server (1 B, 1,000 B, 200,000 B: 4 bpages).
start /tmp/interop.$$.srv listening "$srv" $raw --port
# A loaded machine can stall a process past the RPC timeout; a step is
# tried up to 3 times (a real incompatibility fails every time).
for size in 1 1000 200000; do
	ok=0
	for try in 1 2 3; do
		$run_echo client "$port" "$size" 10 && { ok=1; break; }
		echo "interop: retry $try: linux_echo client, $size bytes"
	done
	[ $ok = 1 ] || fail "linux_echo client, $size bytes"
done
kill "$pids"
wait "$pids" 2>/dev/null
pids=""

# 2. native client -> module-API server.
start /tmp/interop.$$.lsrv serving $run_echo server
port2=$port
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
