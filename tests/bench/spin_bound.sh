#!/bin/sh
# CTest: --homa-spin-us bounds busy polling. A homa-bench server and client
# (UDP driver, loopback) both run --homa-spin 1 --homa-spin-us 50 while the
# client sends 50 RPCs a second for 2 s: each wait polls at most 50 us and
# then sleeps in homa_recv(), so the thread that waits (each process's main
# thread) blocks at least once per RPC: 25 or more voluntary context switches
# in 1.2 s (about 60 RPCs). Without the bound it polls without sleeping
# (under 12: a few lock waits). The RPCs must complete.
# Usage: spin_bound.sh HOMA_BENCH
set -eu
bench=$1
port=$((20000 + $$ % 20000))
# an address of its own on loopback: another test's server on the same port
# (the UDP driver binds with SO_REUSEPORT) would take some of the requests
addr="127.$(( ($$ >> 8) % 200 + 20 )).$(( $$ % 250 + 1 )).$(( ($$ >> 3) % 250 + 1 ))"
out=$(mktemp); err=$(mktemp)
spid=""; cpid=""
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; [ -n "$cpid" ] && kill "$cpid" 2>/dev/null; rm -f "$out" "$err"' EXIT INT TERM
"$bench" server --transport homa --homa-spin 1 --homa-spin-us 50 --bind "$addr" \
	--port "$port" >/dev/null 2>"$err" &
spid=$!
sleep 0.5
# vcs PID: voluntary context switches of the process's main thread
vcs() {
	awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/task/$1/status" 2>/dev/null ||
		{ echo "spin_bound: FAIL: process $1 ended early" >&2; cat "$err" >&2; exit 1; }
}
"$bench" client --transport homa --homa-spin 1 --homa-spin-us 50 --quiet \
	--servers "$addr:$port" --workload 100 --response 100 --rate 50 --duration 2 \
	--json "$out" >/dev/null &
cpid=$!
sleep 0.4
s0=$(vcs "$spid"); c0=$(vcs "$cpid")
sleep 1.2
s1=$(vcs "$spid"); c1=$(vcs "$cpid")
wait "$cpid"; cpid=""
rpcs=$(jq '[.. | objects | select(has("cpu_us_per_rpc"))][0].rpcs' "$out")
echo "spin_bound: $rpcs RPCs; in 1.2 s the main threads blocked: server $((s1 - s0)), client $((c1 - c0)) times; server main thread CPU ticks $(awk '{ sub(/.*\) /, ""); print $12 + $13 }' /proc/$spid/task/$spid/stat)"
[ "$rpcs" -ge 10 ] || { echo "spin_bound: FAIL: only $rpcs RPCs"; exit 1; }
[ $((s1 - s0)) -ge 25 ] && [ $((c1 - c0)) -ge 25 ] \
	|| { echo "spin_bound: FAIL: a bounded spinner did not sleep between RPCs"; exit 1; }
echo "spin_bound: ok"
