#!/bin/sh
# Instructions executed by the engine per packet, counted by callgrind so
# the figure repeats run to run: homa_engine_input per received packet
# (nearly all DATA) and homa_engine_output per packet produced.
# Usage: scripts/engine-callgrind.sh [BUILD_DIR] [RPCS] [SIZE]
set -eu
build=${1:-build}
rpcs=${2:-300}
size=${3:-100000}
bin="$build/homa-engine-bench"
[ -x "$bin" ] || { echo "engine-callgrind: build $bin first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for fn in homa_engine_input homa_engine_output; do
	valgrind --tool=callgrind --callgrind-out-file="$tmp/$fn.out" \
		--toggle-collect="$fn" "$bin" --rpcs "$rpcs" --size "$size" >"$tmp/$fn.txt" 2>"$tmp/$fn.err"
	ir=$(grep '^summary:' "$tmp/$fn.out" | awk '{print $2}')
	case $fn in
	homa_engine_input) n=$(awk '{print $8}' "$tmp/$fn.txt");;
	*) n=$(awk '{print $10}' "$tmp/$fn.txt");;
	esac
	echo "$fn: $ir instructions over $n packets = $((ir / n)) per packet"
done
echo "(workload: $rpcs echo RPCs of $size bytes; $(cat "$tmp/homa_engine_input.txt"))"
