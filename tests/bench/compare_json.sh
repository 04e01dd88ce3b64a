#!/bin/sh
# CTest: a short `homa-bench compare` per scenario given, checking the JSON
# shape and that both arms moved data. Usage: compare_json.sh HOMA_BENCH SCENARIO
set -eu
bench=$1
scen=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bench" compare --scenario "$scen" --duration 1 --json --quiet > "$out"
jq -e --arg s "$scen" '.scenario == $s' "$out" > /dev/null || { echo "bad scenario field"; cat "$out"; exit 1; }
for arm in homa tcp; do
  for k in p50_us p99_us p999_us gbps rpcs_per_sec cpu_us_per_rpc; do
    jq -e --arg a "$arm" --arg k "$k" '.[$a][$k] | type == "number"' "$out" > /dev/null \
      || { echo "$arm.$k is not a number"; jq ".$arm" "$out"; exit 1; }
  done
  jq -e --arg a "$arm" '.[$a].main.gbps > 0 and .[$a].rpcs_per_sec > 0 and .[$a].main.rpcs > 0
        and .[$a].p50_us > 0 and .[$a].p50_us <= .[$a].p99_us and .[$a].p99_us <= .[$a].p999_us' \
    "$out" > /dev/null || { echo "$arm moved no data or has inconsistent percentiles"; jq ".$arm" "$out"; exit 1; }
done
if [ "$scen" = rtt ]; then
  jq -e '(.udp_floor.p50_us | type == "number") and (.udp_floor.p99_us | type == "number")
         and .udp_floor.p50_us > 0' "$out" > /dev/null || { echo "udp_floor missing"; exit 1; }
fi
if [ "$scen" = mixed ]; then
  # Bulk goodput must be reported; it is not required to be positive: in a
  # 1 s window on a loaded machine Homa's 1-8 MB messages may all finish
  # outside the window (see docs/BENCH.md), and this test checks shape.
  jq -e '(.homa.bulk.gbps | type == "number") and .tcp.bulk.gbps > 0
         and (.homa.by_size.buckets | length) == 10 and (.tcp.by_size.buckets | length) == 10
         and .homa.main.short_p99_slowdown > 0 and .tcp.main.short_p99_slowdown > 0' "$out" \
    > /dev/null || { echo "mixed: bulk or per-size figures missing"; exit 1; }
fi
echo "ok: $scen"
