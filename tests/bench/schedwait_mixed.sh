#!/bin/sh
# CTest: tools/bench/schedwait.sh over a real `homa-bench compare --scenario
# mixed` run: the run's processes carry their role in their names (srv-,
# bulk-, cli- and the arm), so each gets its row. A stand-in `perf` on
# PATH runs the command it is given while it notes the names of the
# processes alive every 0.1 s (no recording), and `perf sched timehist`
# prints 100 made-up slices for each, so the test needs neither perf nor
# root. Usage: schedwait_mixed.sh SRC BUILD
set -eu
src=$1 build=$2 d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/perf" <<'FAKE'
#!/bin/sh
if [ "$1 $2" = "sched record" ]; then
  out=
  while [ "$1" != -- ]; do
    [ "$1" = -o ] && { out=$2; shift; }
    shift
  done
  shift
  : > "$out"
  "$@" &
  cmd=$!
  while kill -0 $cmd 2> /dev/null; do
    for f in /proc/[0-9]*/comm; do
      p=${f#/proc/}
      echo "${p%/comm} $(cat "$f" 2> /dev/null)" >> "$out"
    done
    sleep 0.1
  done
  wait $cmd
  exit $?
fi
if [ "$1 $2" = "sched timehist" ]; then
  sort -u "$4" | while read -r pid name; do
    i=0
    while [ $i -lt 100 ]; do
      printf '  %d.%06d [0000]  %s[%s]  0.000  0.%03d  0.050\n' 100 $((i * 1000)) "$name" "$pid" $((i * 5))
      i=$((i + 1))
    done
  done
  exit 0
fi
exit 2
FAKE
chmod +x "$d/perf"
PATH=$d:$PATH sh "$src/tools/bench/schedwait.sh" "$build" 1 > "$d/out" 2>&1 \
  || { echo "schedwait.sh failed"; cat "$d/out"; exit 1; }
for who in srv-homa bulk-homa cli-homa srv-tcp bulk-tcp cli-tcp; do
  grep -Eq "^\| $who\[[0-9]+\] \| 100 \| 50 / 50 \| 245 / 490 / 495 \| 59.00% \|$" "$d/out" \
    || { echo "no row for $who"; cat "$d/out"; exit 1; }
done
grep -Eq '^homa: lookup P50 / P99 [0-9]+ / [0-9]+ us, bulk [0-9.]+ Gbps$' "$d/out" \
  || { echo "no compare figures"; cat "$d/out"; exit 1; }
grep -q '^cli-homa: 59 waits over 200 us' "$d/out" || { echo "no blame of cli-homa"; cat "$d/out"; exit 1; }
echo "ok: schedwait.sh names each process of a mixed run"
