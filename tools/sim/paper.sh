#!/bin/sh
# paper.sh BUILD OUT: regenerate the homa-sim results of docs/SIMULATION.md.
# Runs W1..W5 at 80% load on the default SIGCOMM 2018 fabric (144 hosts,
# 9 racks, 10/40 Gbit/s) in classic and START_MSG modes, then writes
# OUT/<w>_<mode>.json, OUT/<w>.dat (per-bucket P50/P99 slowdowns),
# OUT/table.md and OUT/p99_slowdown.png (gnuplot).
# Environment: SIM_ARGS adds options to every run (e.g. "--hosts 32
# --racks 2"); SIM_SCALE multiplies the message counts (default 1);
# SIM_WORKLOADS and SIM_MODES restrict the runs; SIM_REPORT_ONLY=1 only
# rebuilds the table and plot from the JSON files already in OUT.
set -eu
BUILD=${1:-build}
OUT=${2:-docs/sim}
SIM=$BUILD/homa-sim
SCALE=${SIM_SCALE:-1}
WORKLOADS=${SIM_WORKLOADS:-"w1 w2 w3 w4 w5"}
MODES=${SIM_MODES:-"classic start_msg"}
ARGS=${SIM_ARGS:-}
mkdir -p "$OUT"

# Messages per workload: enough short messages for a stable P99 within
# minutes of CPU (cost grows with packets per message).
msgs() {
	case $1 in
	w1 | w2) n=400000 ;;
	w3) n=200000 ;;
	w4) n=30000 ;;
	*) n=4000 ;;
	esac
	awk -v n="$n" -v s="$SCALE" 'BEGIN { printf "%d\n", n * s }'
}

for w in $WORKLOADS; do
	[ "${SIM_REPORT_ONLY:-0}" = 1 ] && break
	for m in $MODES; do
		echo "homa-sim --workload $w --load 0.8 --messages $(msgs "$w") --mode $m $ARGS" >&2
		# shellcheck disable=SC2086
		"$SIM" --workload "$w" --load 0.8 --messages "$(msgs "$w")" --mode "$m" \
			--json $ARGS >"$OUT/${w}_$m.json"
	done
done

# Per-bucket data for the plot: max_bytes classic_p50 classic_p99
# start_msg_p50 start_msg_p99 ideal_p50 ideal_p99.
for w in $WORKLOADS; do
	c=$OUT/${w}_classic.json
	s=$OUT/${w}_start_msg.json
	[ -f "$c" ] && [ -f "$s" ] || continue
	jq -r -n --slurpfile c "$c" --slurpfile s "$s" '
		range(0; $c[0].buckets | length) as $i |
		[$c[0].buckets[$i].max_bytes,
		 $c[0].buckets[$i].p50_slowdown, $c[0].buckets[$i].p99_slowdown,
		 $s[0].buckets[$i].p50_slowdown, $s[0].buckets[$i].p99_slowdown,
		 $c[0].buckets[$i].ideal_p50_slowdown, $c[0].buckets[$i].ideal_p99_slowdown]
		| @tsv' >"$OUT/$w.dat"
done

{
	echo "| workload | mode | messages | offered | achieved | short-half P99 | ideal short-half P99 | P99 all | max ToR->host queue (KB) | mean ToR->host queue (KB) | events | events/s (CPU) |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	for w in $WORKLOADS; do
		for m in $MODES; do
			f=$OUT/${w}_$m.json
			[ -f "$f" ] || continue
			jq -r '"| \(.workload) | \(.mode) | \(.messages) | \(.offered_load) | \(.achieved_load * 1000 | round / 1000) | \(.short_half_p99_slowdown * 100 | round / 100) | \(.ideal_short_half_p99_slowdown * 100 | round / 100) | \(.p99_slowdown * 100 | round / 100) | \(.queues.tor_down.max_bytes / 1000 | round) | \(.queues.tor_down.mean_bytes / 100 | round / 10) | \(.events) | \(.events_per_sec / 1e4 | round / 100)M |"' "$f"
		done
	done
} >"$OUT/table.md"

cat >"$OUT/plot.gp" <<'EOF'
set terminal pngcairo size 1500,900 font ",10"
set output OUT."/p99_slowdown.png"
set multiplot layout 2,3 title "homa-sim: P99 slowdown by message size, 80% load, 144 hosts (10/40 Gbit/s)"
set logscale x
set xlabel "message size (bytes, bucket upper bound)"
set ylabel "P99 slowdown"
set key top left
set grid
do for [w in WORKLOADS] {
  f = OUT."/".w.".dat"
  set title w
  plot f using 1:3 with linespoints title "classic", \
       f using 1:5 with linespoints title "START\\_MSG", \
       f using 1:7 with linespoints dashtype 2 title "ideal SRPT"
}
unset multiplot
EOF
have=""
for w in $WORKLOADS; do [ -s "$OUT/$w.dat" ] && have="$have $w"; done
if [ -n "$have" ]; then
	gnuplot -e "OUT='$OUT'; WORKLOADS='$have'" "$OUT/plot.gp"
fi
echo "results in $OUT" >&2
