#!/bin/sh
# CTest: a short `homa-bench compare --scenario collective`, checking the
# JSON shape other tools rely on (per arm, per pattern: step_p50_us,
# step_p99_us, idle_fraction, alone and beside background) and that the
# figures are consistent. Usage: collective_json.sh HOMA_BENCH
set -eu
bench=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bench" compare --scenario collective --devices 3 --steps 8 --warmup-steps 2 \
  --compute-us 500 --msg-bytes 16K --lookups 4 --background-gbps 0.2 --json --quiet > "$out"
jq -e '.scenario == "collective" and .devices == 3' "$out" > /dev/null \
  || { echo "bad header"; cat "$out"; exit 1; }
for arm in homa tcp; do
  for p in alltoall allreduce lookups; do
    for obj in ".$arm.$p" ".$arm.$p.background"; do
      jq -e "$obj | (.step_p50_us | type == \"number\") and (.step_p99_us | type == \"number\")
             and (.idle_fraction | type == \"number\") and .steps == 8
             and .step_p50_us > 0 and .step_p50_us <= .step_p99_us and .step_p99_us <= .step_max_us
             and .idle_fraction > 0 and .idle_fraction < 1
             and .comm_us_per_step > 0 and .comm_us_per_step <= .step_max_us" "$out" > /dev/null \
        || { echo "$obj missing or inconsistent"; jq "$obj" "$out"; exit 1; }
    done
  done
done
jq -e '.ratios_tcp_over_homa.alltoall.idle_fraction | type == "number"' "$out" > /dev/null \
  || { echo "ratios missing"; exit 1; }
echo "ok: collective"
