#!/bin/sh
# CTest: the server/client/calibrate modes the testbed uses, on loopback:
# calibrate a baseline, run an open-loop W1 client against it, check the
# JSON fields the testbed reads.
# Usage: client_json.sh HOMA_BENCH TRANSPORT [PORT] (the first port tried;
# default: from the pid)
set -eu
bench=$1
tr=$2
# shellcheck source=server_lib.sh
. "$(dirname "$0")/server_lib.sh"
port=${3:-$((10000 + ($$ % 1000) * 20))}
dir=$(mktemp -d)
srv=
finish() {
  rc=$?
  [ -z "$srv" ] || { kill $srv 2>/dev/null || true; wait $srv 2>/dev/null || true; }
  [ $rc -eq 0 ] || { echo "server log:"; cat "$dir/server.log" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap finish EXIT
# another port if PORT or PORT+1 is taken (server_lib.sh)
bench_server_start "$dir/server.log" --transport "$tr"
"$bench" calibrate --transport "$tr" --servers 127.0.0.1:"$port" --workload w1 \
  --calib-count 20 --baseline "$dir/base.txt" > /dev/null
"$bench" client --transport "$tr" --servers 127.0.0.1:"$port" --workload w1 --rate 2000 \
  --duration 1 --quiet --baseline "$dir/base.txt" --json "$dir/out.json" > /dev/null
jq -e --arg t "$tr" '.transport == $t and .rpcs > 0 and .gbps > 0
   and (.short_p50_slowdown | type == "number") and (.short_p99_slowdown | type == "number")
   and (.cpu_us_per_rpc > 0) and (.server_cpu_us_per_rpc | type == "number")
   and (.buckets | length) >= 2 and (.buckets[0].p99_slowdown | type == "number")' \
   "$dir/out.json" > /dev/null || { echo "bad client JSON"; cat "$dir/out.json"; exit 1; }
# Homa's protocol counters: as many requests as DATA packets out at least
# (W1 requests fit one packet), one response packet back per RPC; TCP has none.
if [ "$tr" = homa ]; then
  jq -e '.homa_counters.data_pkts_sent >= .rpcs and .homa_counters.data_pkts_received >= .rpcs
     and (.homa_counters.resends_sent | type == "number")
     and (.homa_counters.packets_dropped | type == "number")' "$dir/out.json" > /dev/null ||
    { echo "bad homa_counters"; cat "$dir/out.json"; exit 1; }
  # the server prints its socket's counters when it stops
  kill -INT $srv; wait $srv || true
  grep -Eq '^homa-bench server: homa counters: data_pkts_sent=[1-9][0-9]* data_pkts_received=[1-9]' \
    "$dir/server.log" || { echo "no server counters"; cat "$dir/server.log"; exit 1; }
  grep -Eq '^homa-bench server: restarts=[0-9]+ drops:' "$dir/server.log" ||
    { echo "no server drops line"; cat "$dir/server.log"; exit 1; }
else
  jq -e 'has("homa_counters") | not' "$dir/out.json" > /dev/null ||
    { echo "homa_counters on a TCP arm"; exit 1; }
fi
echo "ok: $tr"
