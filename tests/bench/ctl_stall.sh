#!/bin/sh
# CTest: a server whose control port answers slowly must not stall the
# load. The Homa server runs without a control listener; a stand-in on
# its control port (PORT+1) accepts and answers each CPU query after 3 s.
# An open-loop client that waited for those answers before issuing RPCs
# charged the wait to every RPC it issued late (P99 over a second); the
# snapshots now run beside the load, so the P99 stays far below that.
# Usage: ctl_stall.sh HOMA_BENCH [PORT] (default: from the pid)
set -eu
bench=$1
# shellcheck source=server_lib.sh
. "$(dirname "$0")/server_lib.sh"
port=${2:-$((10000 + ($$ % 1000) * 20))}
dir=$(mktemp -d)
srv=
ctl=
finish() {
  rc=$?
  for p in $srv $ctl; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ $rc -eq 0 ] || { echo "server log:"; cat "$dir/server.log" "$dir/ctl.log" 2>/dev/null || true; }
  rm -rf "$dir"
  exit $rc
}
trap finish EXIT
# stand_in: the slow control port on $port+1 (sets ctl), in place of the
# one a try on another port started. Returns 1 if it could not bind (the
# port is taken), exits the test if it never starts.
stand_in() {
  [ -z "$ctl" ] || { kill "$ctl"; wait "$ctl" 2>/dev/null || true; ctl=; }
  python3 - "$((port + 1))" > "$dir/ctl.log" 2>&1 <<'PY' &
import socket, sys, threading, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print("ready", flush=True)
def answer(c):
    c.recv(64)
    time.sleep(3)
    c.sendall(b"1000 10\n")
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=answer, args=(c,), daemon=True).start()
PY
  ctl=$!
  i=0
  until grep -qsx ready "$dir/ctl.log"; do
    kill -0 "$ctl" 2>/dev/null || { ctl=; return 1; }
    i=$((i + 1)); [ $i -lt 100 ] || { echo "control stand-in did not start"; exit 1; }
    sleep 0.1
  done
}
# the stand-in before each try: another port while PORT or PORT+1 is taken
# shellcheck disable=SC2034 # read by bench_server_start
bench_before_try=stand_in
bench_server_start "$dir/server.log" --transport homa --ctl-port -1
"$bench" client --transport homa --servers 127.0.0.1:"$port" --workload w1 --rate 500 \
  --duration 2 --quiet --json "$dir/out.json" > /dev/null
# The stand-in's answers arrive after the window: both snapshots are
# counted, 3 s late, and the RPCs issued in the window are not delayed.
jq -e '.rpcs > 500 and .p99_us < 500000 and (.server_cpu_us_per_rpc | type == "number")' \
   "$dir/out.json" > /dev/null || { echo "client stalled on the control port:"; cat "$dir/out.json"; exit 1; }
echo "ok: P99 $(jq .p99_us "$dir/out.json") us with a 3 s control port"
