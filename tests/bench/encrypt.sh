#!/bin/sh
# CTest: homa-bench --encrypt. `compare --scenario rtt --encrypt` keeps the
# JSON shape with "encrypted": true and both arms moving data; and the arms
# are encrypted for real: against an encrypted server of each transport an
# encrypted client completes RPCs and a clear-text one completes none
# (Homa: its packets are dropped; TCP: the TLS handshake fails).
# Usage: encrypt.sh HOMA_BENCH GEN_CERTS
set -eu
bench=$1
gen=$2
# shellcheck source=server_lib.sh
. "$(dirname "$0")/server_lib.sh"
port=$((10000 + ($$ % 500) * 20))
dir=$(mktemp -d)
srv=
finish() {
  rc=$?
  [ -z "$srv" ] || { kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; }
  [ $rc -eq 0 ] || { echo "server log:"; cat "$dir/server.log" 2>/dev/null || true; }
  rm -rf "$dir"
}
trap finish EXIT
"$gen" "$dir/certs"
# the run's own certificates: several test runs may share /tmp (the default folder)
"$bench" compare --scenario rtt --encrypt --certs "$dir/certs" --duration 0.5 --json --quiet \
  > "$dir/cmp.json" \
  2> "$dir/cmp.log" || { echo "compare --encrypt failed"; cat "$dir/cmp.log"; exit 1; }
jq -e '.encrypted == true and .scenario == "rtt"
       and .homa.p50_us > 0 and .tcp.p50_us > 0 and .homa.main.rpcs > 0 and .tcp.main.rpcs > 0
       and (.ratios_homa_over_tcp.p50 | type == "number")' "$dir/cmp.json" > /dev/null ||
  { echo "bad encrypted compare JSON"; cat "$dir/cmp.json"; exit 1; }
for tr in homa tcp; do
  bench_server_start "$dir/server.log" --transport $tr --encrypt --certs "$dir/certs"
  "$bench" client --transport $tr --servers 127.0.0.1:$port --encrypt --certs "$dir/certs" \
    --duration 0.5 --quiet --json "$dir/enc.json" > "$dir/client.log" 2>&1 ||
    { echo "$tr: encrypted client failed"; cat "$dir/client.log"; exit 1; }
  jq -e '.rpcs > 0 and .errors == 0' "$dir/enc.json" > /dev/null ||
    { echo "$tr: encrypted client failed"; cat "$dir/enc.json"; exit 1; }
  rm -f "$dir/clear.json"
  if "$bench" client --transport $tr --servers 127.0.0.1:$port --duration 0.5 --quiet \
      --json "$dir/clear.json" > /dev/null 2>&1; then
    jq -e '.rpcs == 0' "$dir/clear.json" > /dev/null ||
      { echo "$tr: a clear-text client got answers from an encrypted server"; exit 1; }
  fi
  kill $srv; wait $srv 2>/dev/null || true
  srv=
  port=$((port + 2))
done
# --certs needs --encrypt; --encrypt needs the UDP driver
if "$bench" client --servers 127.0.0.1:$port --certs "$dir/certs" 2> /dev/null; then exit 1; fi
if "$bench" client --servers 127.0.0.1:$port --encrypt --driver raw 2> /dev/null; then exit 1; fi
echo "ok: encrypted arms"
