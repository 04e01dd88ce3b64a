#!/usr/bin/env bash
# test_coll_steps.sh SRC: the collective experiment's run lengths
# (coll_steps in scripts/testbed.d/collective.sh): quick and full modes,
# the overrides, and a clear error for an unknown mode. No root needed.
set -euo pipefail
src=$1
die() { echo "die: $*"; exit 3; }
check() { # MODE STEPS WARMUP PATTERN PCT EXPECTED
  local got
  got=$(TB_COLL_MODE=$1 TB_COLL_STEPS=$2 TB_COLL_WARMUP_STEPS=$3 bash -c \
    "die() { echo \"die: \$*\"; exit 3; }; source '$src/scripts/testbed.d/collective.sh'; coll_steps $4 $5" || true)
  [[ $got == "$6" ]] || { echo "FAIL: mode $1 steps '$2' warm-up '$3' $4 bg$5: got '$got', want '$6'"; exit 1; }
}
check quick "" "" alltoall 0 "30 2"
check quick "" "" lookups 50 "30 2"
check quick "" "" allreduce 0 "30 2"
check quick "" "" allreduce 50 "10 1"
check full "" "" allreduce 50 "100 5"
check full "" "" lookups 0 "100 5"
check quick 7 3 allreduce 50 "7 3"
check full 12 "" alltoall 50 "12 5"
check slow "" "" alltoall 0 "die: TB_COLL_MODE must be quick or full, not 'slow'"
echo "coll_steps: ok"
