#!/usr/bin/env bash
# test_cpustat.sh SRC: the testbed's CPU snapshots (cpustat_snap in
# scripts/testbed.d/bench.sh) read /proc/stat and the wall clock with shell
# builtins only, so no process start (up to a second on a loaded machine)
# falls between the idle counters and the clock, and report.py turns two of
# them into busy seconds between 0 and wall time x host CPUs; with TB_CG
# set they hold its cpuacct.usage (here a made-up file) and report.py
# turns that into the hosts' processes' seconds. No root.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=$(command -v python3)
# PATH has no sed, grep or date: a snapshot that starts one fails.
mkdir "$tmp/cg"
echo 1000000000 >"$tmp/cg/cpuacct.usage"
bash -c "source '$src/scripts/testbed.d/bench.sh'; echo 'hosts 0'; TB_CG='$tmp/cg'
  PATH=/nonexistent; cpustat_snap open; read -rt 0.3 <> <(:) || true
  echo 3500000000 >'$tmp/cg/cpuacct.usage'; cpustat_snap close" \
  >"$tmp/cpustat.txt" 2>"$tmp/err" || { echo "FAIL: cpustat_snap: $(cat "$tmp/err")"; exit 1; }
[[ ! -s $tmp/err ]] || { echo "FAIL: cpustat_snap wrote errors: $(cat "$tmp/err")"; exit 1; }
"$py" - "$src/scripts/testbed.d" "$tmp/cpustat.txt" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import report
lines = open(sys.argv[2]).read().split("\n")
walls = [float(l.split()[2]) for l in lines if " wall " in l]
assert len(walls) == 2 and 0.25 < walls[1] - walls[0] < 30, f"wall lines {walls}"
busy = report.host_cpu_seconds(sys.argv[2])
assert busy is not None and 0 <= busy <= walls[1] - walls[0] + 0.05, f"busy {busy}"
tasks = report.host_tasks_window(sys.argv[2])
assert tasks is not None and abs(tasks[0] - 2.5) < 1e-9 and tasks[1] >= 0, f"tasks {tasks}"
PY
echo "cpustat_snap: ok"
