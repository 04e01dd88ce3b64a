#!/bin/sh
# CTest: `homa-bench compare --scenario rtt --homa-transport all` runs, in one
# invocation, the Homa API over Homa, TCP and AUTO beside kernel TCP, and
# reports each API arm with its ratios to kernel TCP (JSON and table).
# Usage: compare_all.sh HOMA_BENCH
set -eu
bench=$1
out=$(mktemp)
table=$(mktemp)
trap 'rm -f "$out" "$table"' EXIT
"$bench" compare --scenario rtt --homa-transport all --duration 1 --json --quiet \
  > "$out" 2> "$table"
for arm in homa tcp api_tcp api_auto; do
  jq -e --arg a "$arm" '.[$a].p50_us > 0 and .[$a].rpcs_per_sec > 0 and .[$a].main.rpcs > 0
        and .[$a].cpu_us_per_rpc > 0 and .[$a].host_cpu_us_per_rpc > 0' "$out" > /dev/null \
    || { echo "arm $arm missing or moved no data"; jq "del(.[].main?)" "$out"; exit 1; }
done
for r in ratios_homa_over_tcp ratios_api_tcp_over_tcp ratios_api_auto_over_tcp; do
  jq -e --arg r "$r" '.[$r].p50 > 0 and .[$r].cpu_us_per_rpc > 0
        and .[$r].host_cpu_us_per_rpc > 0' "$out" > /dev/null \
    || { echo "$r missing"; jq ".$r" "$out"; exit 1; }
done
for row in "homa (over Homa)" "api-tcp (over TCP)" "api-auto (AUTO)" "tcp (kernel TCP)"; do
  grep -q "^  $row " "$table" || { echo "table row '$row' missing"; cat "$table"; exit 1; }
done
# one transport only: no API arms
"$bench" compare --scenario rtt --duration 1 --json --quiet --homa-transport tcp > "$out" 2> /dev/null
jq -e '.api_tcp == null and .api_auto == null and .homa.p50_us > 0' "$out" > /dev/null \
  || { echo "API arms without --homa-transport all"; exit 1; }
echo "ok: all transports"
