#!/bin/bash
# make demo: run the examples end to end on loopback and say what happened.
#   scripts/demo.sh <builddir>
# Each demo is a function; add new ones to DEMOS at the bottom.
set -euo pipefail
BUILD=${1:-build}
[ -x "$BUILD/echo_server" ] || { echo "demo: build first (make BUILD=$BUILD)" >&2; exit 1; }
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
OUT=$(mktemp -d)
trap 'cleanup; rm -rf "$OUT"' EXIT

# start_server <name> <logfile> <args...>: run a server, wait for its port.
start_server() {
	local name=$1 log=$2; shift 2
	"$BUILD/$name" "$@" > "$log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 100); do
		grep -q "port [0-9]" "$log" 2>/dev/null && break
		sleep 0.05
	done
	PORT=$(grep -o "port [0-9]*" "$log" | head -1 | cut -d' ' -f2)
	[ -n "$PORT" ] || { echo "demo: $name did not start:"; cat "$log"; exit 1; }
}

stop_last() { kill "${PIDS[-1]}" 2>/dev/null || true; wait "${PIDS[-1]}" 2>/dev/null || true; unset 'PIDS[-1]'; }

demo_echo() {  # <driver flag or empty>
	local drv=${1:-}
	echo "== echo over homa (${drv:-UDP driver}): client checks every byte, prints round-trip times"
	local rc=0
	start_server echo_server "$OUT/echo.log" --port 0 $drv
	"$BUILD/echo_client" --port "$PORT" --size 100 --count 2000 $drv || rc=1
	"$BUILD/echo_client" --port "$PORT" --size 1000000 --count 20 $drv || rc=1
	stop_last
	return $rc
}

demo_kv() {
	echo "== key-value service: 4 threads do small lookups while 2 threads push 4 MB values"
	local rc=0
	start_server kv_server "$OUT/kv.log" --port 0 --threads 2
	"$BUILD/kv_client" --port "$PORT" --lookups 4 --pushers 2 --value-mb 4 --seconds 3 || rc=1
	stop_last
	return $rc
}

demo_rtt() {
	echo "== 100-byte round trip: homa next to kernel TCP and plain UDP, one run"
	local raw=--no-raw
	[ "$(id -u)" -eq 0 ] && raw=
	"$BUILD/rtt_compare" --count 5000 $raw
}

demo_bench() {
	echo "== homa-bench demo: homa against kernel TCP, side by side (docs/BENCH.md)"
	"$BUILD/homa-bench" demo --quiet --plot "$BUILD/homa-bench-demo.png"
}

DEMOS=(demo_echo demo_kv demo_rtt demo_bench)
if [ "$(id -u)" -eq 0 ]; then
	DEMOS+=("demo_echo --raw")
else
	echo "(not root: skipping the raw IP driver demos)"
fi

FAILED=()
for d in "${DEMOS[@]}"; do
	$d || FAILED+=("$d")
	echo
done
if [ ${#FAILED[@]} -gt 0 ]; then
	echo "demo: FAILED: ${FAILED[*]}"
	exit 1
fi
echo "demo: all examples ran and checked their data"

