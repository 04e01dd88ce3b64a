#!/bin/sh
# CTest: the end-to-end homa-bench tests start their servers through
# server_lib.sh, which moves to another port when one is taken. Here
# another program holds the first port tried (UDP and TCP) or its control
# port (PORT+1): client_json.sh and ctl_stall.sh must still pass. (They
# read a server's "Address already in use" as its "ready" line, then
# tested whatever held the port, and failed.)
# Usage: port_taken.sh HOMA_BENCH
set -eu
bench=$1
here=$(dirname "$0")
# shellcheck source=server_lib.sh
. "$here/server_lib.sh"
bench_next_port 1
first=$port
dir=$(mktemp -d)
holder=
finish() {
  rc=$?
  [ -z "$holder" ] || { kill $holder 2>/dev/null || true; wait $holder 2>/dev/null || true; }
  rm -rf "$dir"
  exit $rc
}
trap finish EXIT
# hold PORT (UDP and TCP) and PORT+1 (TCP) until killed; print "held"
python3 - "$first" > "$dir/holder.log" 2>&1 <<'PY' &
import socket, sys, time
p = int(sys.argv[1])
held = []
for kind, port in ((socket.SOCK_DGRAM, p), (socket.SOCK_STREAM, p), (socket.SOCK_STREAM, p + 1)):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("0.0.0.0", port))
    if kind == socket.SOCK_STREAM:
        s.listen(1)
    held.append(s)
print("held", flush=True)
time.sleep(600)
PY
holder=$!
i=0
until grep -qsx held "$dir/holder.log"; do
  kill -0 $holder 2>/dev/null || { echo "skip: port $first is in use"; exit 77; }
  i=$((i + 1)); [ $i -lt 100 ] || { echo "port holder did not start"; exit 1; }
  sleep 0.1
done
for tr in homa tcp; do
  sh "$here/client_json.sh" "$bench" $tr "$first" > "$dir/out" 2>&1 ||
    { echo "client_json.sh $tr with port $first taken:"; cat "$dir/out"; exit 1; }
  grep -qx "ok: $tr" "$dir/out" || { cat "$dir/out"; exit 1; }
done
# ctl_stall.sh: its server's port taken, then (starting one below) the
# port of its control stand-in
for p in "$first" $((first - 1)); do
  sh "$here/ctl_stall.sh" "$bench" "$p" > "$dir/out" 2>&1 ||
    { echo "ctl_stall.sh from port $p, $first taken:"; cat "$dir/out"; exit 1; }
done
echo "ok: servers moved off port $first"
