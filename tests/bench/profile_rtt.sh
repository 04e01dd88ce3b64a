#!/bin/sh
# CTest: tools/bench/profile.sh's rtt scenario runs three arms, Homa, TCP
# and the raw UDP floor, each a real homa-bench server and client on
# loopback, and prints a column pair per arm. A stand-in `perf` on PATH
# runs the command it is given (no recording) and `perf script` prints
# one made-up sample, so the test needs neither perf nor root.
# Usage: profile_rtt.sh SRC BUILD
set -eu
src=$1
build=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/perf" <<'FAKE'
#!/bin/sh
if [ "$1" = record ]; then
  while [ "$1" != -- ]; do
    [ "$1" = -o ] && { : > "$2"; shift; }
    shift
  done
  shift
  exec "$@"
fi
printf '    1000 \n\tffffffff81000000 homa_rt_input+0x10 (/b/homa-bench)\n\n'
FAKE
chmod +x "$d/perf"
PATH=$d:$PATH sh "$src/tools/bench/profile.sh" "$build" rtt 1 > "$d/out" 2>&1 \
  || { echo "profile.sh rtt failed"; cat "$d/out"; exit 1; }
for arm in homa tcp udp; do
  grep -Eq "^$arm: [1-9][0-9]* RPCs in 1 s" "$d/out" \
    || { echo "arm $arm did not run"; cat "$d/out"; exit 1; }
done
grep -q '^| where | homa % | homa µs/RPC | tcp % | tcp µs/RPC | udp % | udp µs/RPC |$' "$d/out" \
  || { echo "no udp floor column"; cat "$d/out"; exit 1; }
echo "ok: profile.sh rtt profiles homa, tcp and the udp floor"
