#!/bin/sh
# backlog.sh BUILD OUT WORKLOAD LOAD N...: does the backlog stay bounded?
#
# Runs homa-sim at one offered load with each message count N (same seed,
# so each run extends the one before) and tabulates the backlog: the wire
# bytes that arrived in the measurement window and were not delivered in
# it, (generated - achieved) x window, in milliseconds of one host link,
# per host; the same for the ideal SRPT reference on the same arrivals.
# A sustainable load's backlog levels off as the window doubles; an
# unsustainable one grows in proportion to the window. The column "growth"
# is the engine's added backlog over the added window time, as a share of
# the link: the rate at which the backlog grows over that stretch.
# "refused" counts messages a sender's engine refused (its max_tx_buffered
# was full): the backlog overflowed a sender, and generated load is then
# short of offered.
#
# Writes OUT/<w>_<load>_<N>.json per run and OUT/backlog.md (appends).
# Environment: BACKLOG_ARGS more homa-sim options (e.g. "--hosts 16 --racks 2").
set -eu
BUILD=$1
OUT=$2
W=$3
LOAD=$4
shift 4
ARGS=${BACKLOG_ARGS:-}
mkdir -p "$OUT"
TABLE=$OUT/backlog.md
if [ ! -s "$TABLE" ]; then
	echo "| workload | hosts | offered | messages | window ms | generated | achieved / ideal | engine backlog (ms) | ideal backlog (ms) | growth | refused | max ToR->host queue (KB) | args |" >"$TABLE"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|" >>"$TABLE"
fi
prev_b=""
prev_w=""
for n in "$@"; do
	f=$OUT/${W}_${LOAD}_$n.json
	echo "homa-sim --workload $W --load $LOAD --messages $n $ARGS" >&2
	# shellcheck disable=SC2086
	nice -n 19 "$BUILD/homa-sim" --workload "$W" --load "$LOAD" --messages "$n" --json $ARGS >"$f"
	line=$(jq -r --arg pb "$prev_b" --arg pw "$prev_w" --arg args "$ARGS" '
		(.window_ns / 1e6) as $w
		| ((.generated_load - .achieved_load) * $w) as $b
		| ((.generated_load - .ideal_achieved_load) * $w) as $ib
		| (if $pb == "" then "-" else (($b - ($pb | tonumber)) / ($w - ($pw | tonumber)) * 1000 | round / 10 | tostring) + "%" end) as $g
		| "\($b) \($w) | \(.workload) | \(.hosts) | \(.offered_load) | \(.messages) | \($w * 10 | round / 10) | \(.generated_load * 1000 | round / 1000) | \(.achieved_vs_ideal * 1000 | round / 1000) | \($b * 10 | round / 10) | \($ib * 10 | round / 10) | \($g) | \(.send_errors) | \(.queues.tor_down.max_bytes / 1000 | round) | \($args) |"' "$f")
	prev_b=${line%% *}
	rest=${line#* }
	prev_w=${rest%% *}
	echo "|${rest#*|}" >>"$TABLE"
	tail -1 "$TABLE" >&2
done
