#!/bin/sh
# flood_report.sh HOMA_FLOOD: run homa-flood briefly (a flood paced to
# 5,000 packets/s so a shared, sanitized build keeps up; a 5 s RPC timeout
# so a starved machine delays RPCs rather than failing them; the full-speed
# flood is the benchmark's, docs/THREATS.md) and check the report: exit
# status 0, a row per arm with completed RPCs and latency figures, the
# ratio line, the forged-packet cost line, the receive buffer asked for
# (--rcvbuf) and "result: ok"; a receive buffer below 4096 bytes is bad
# usage (exit status 2).
# Timing is printed, never asserted.
set -u
bin=$1
out=$("$bin" --seconds 0.4 --rounds 2 --ports 32 --hosts 4 --timeout-ms 5000 --rate 5000 --rcvbuf 1048576 2>/dev/null)
rc=$?
echo "$out"
fail() { echo "flood_report: $*" >&2; exit 1; }
[ "$rc" -eq 0 ] || fail "homa-flood exited $rc"
for arm in unloaded flood; do
	row=$(echo "$out" | grep "^$arm ") || fail "no $arm row"
	# arm rpcs failed t_out refused hung p50 p99 p999 cpu busy flood_pps fl_cpu busy srv_rx k_drops
	set -- $row
	[ $# -eq 16 ] || fail "$arm row has $# fields, not 16"
	[ "$2" -gt 0 ] || fail "$arm: no RPC completed"
	[ "$3" -eq 0 ] && [ "$4" -eq 0 ] && [ "$5" -eq 0 ] && [ "$6" -eq 0 ] ||
		fail "$arm: $3 failed ($4 timed out), $5 refused, $6 hung"
	echo "$7 $8" | grep -Eq '^[0-9]+\.[0-9] [0-9]+\.[0-9]$' || fail "$arm: latencies '$7 $8'"
done
set -- $(echo "$out" | grep "^flood ")
[ "${12}" -gt 0 ] || fail "the flood sent nothing"
echo "$out" | grep -Eq '^ratio flood/unloaded: P50 [0-9.]+, P99 [0-9.]+ \(target <= 3\), cpu per RPC [0-9.]+ \(getrusage\), [0-9.]+ \(busy time\)$' ||
	fail "no ratio line"
echo "$out" | grep -Eq '^forged packets taken in: [0-9]+ per s of [0-9]+ per s sent; victim cost per forged packet taken in: -?[0-9.]+ us \(getrusage\), -?[0-9.]+ us \(busy time\)$' ||
	fail "no forged-packet cost line"
echo "$out" | grep -q "^kernel receive buffer: 1048576 bytes asked (rcvbuf_bytes)$" || fail "no receive buffer line"
"$bin" --rcvbuf 100 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--rcvbuf 100 was accepted"
echo "$out" | grep -q "^result: ok, all [0-9]* RPCs completed$" || fail "no result line"
echo "flood_report: ok"
