#!/bin/sh
# Who waits for a CPU in homa-bench's mixed scenario, and behind whom:
# records the scheduler (`perf sched record -a`) over one `homa-bench
# compare --scenario mixed` run, then prints tools/bench/schedwait.py's
# tables: per process of the run (srv-ARM the server, bulk-ARM the client
# of the two bulk streams, cli-ARM the lookup client) its slices, run
# time and scheduling delay, and which processes ran on a lookup client's
# CPU while it waited more than THRESHOLD_US (default 200) for it.
#
#   tools/bench/schedwait.sh BUILD [--encrypt] [SECONDS] [THRESHOLD_US]
#
# Needs perf and root. Leaves nothing behind but its output.
set -eu
build=$1
shift
enc=
if [ "${1:-}" = --encrypt ]; then enc=--encrypt; shift; fi
secs=${1:-2} thr=${2:-200}
here=$(dirname "$0")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck disable=SC2086
perf sched record -q -a -o "$dir/sched.data" -- "$build/homa-bench" compare --scenario mixed \
  $enc --duration "$secs" --json --quiet > "$dir/compare.json" 2> "$dir/compare.err" ||
  { cat "$dir/compare.err" >&2; exit 1; }
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for arm in ("homa", "tcp"):
    a = d[arm]
    print("%s: lookup P50 / P99 %.0f / %.0f us, bulk %.1f Gbps"
          % (arm, a["p50_us"], a["p99_us"], a["gbps"]))
' "$dir/compare.json"
perf sched timehist -i "$dir/sched.data" > "$dir/timehist.txt" 2> /dev/null
python3 "$here/schedwait.py" "$dir/timehist.txt" --threshold-us "$thr" \
  --match srv- bulk- cli- --blame cli-homa cli-tcp
