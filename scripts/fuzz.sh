#!/bin/sh
# Builds and runs the libFuzzer targets (fuzz/, docs/HARDENING.md).
#   scripts/fuzz.sh build [DIR]          build fuzz_wire, fuzz_engine, fuzz_pair with clang
#   scripts/fuzz.sh smoke SECONDS [DIR]  run each target SECONDS from the seed corpus
#   scripts/fuzz.sh run TARGET RUNS [DIR]  one long run (-runs=RUNS), corpus kept in DIR/long
# The seed corpus in fuzz/corpus/<target> is only read; new inputs go to
# DIR/work/<target>, crashes to DIR/artifacts/. Exit status 1 if any target
# reported a crash, a sanitizer error or a broken invariant.
set -eu
cd "$(dirname "$0")/.."
TARGETS="wire engine pair"
# ASan holds freed blocks in a quarantine to catch use after free. 32 MB
# instead of the default 256 MB still spans many inputs' worth of frees
# (an input's engines hold at most a few MB) and spares the page faults of
# always touching fresh memory: with it the pair target runs about 2x
# faster (docs/HARDENING.md). A caller's ASAN_OPTIONS wins.
: "${ASAN_OPTIONS:=quarantine_size_mb=32}"
export ASAN_OPTIONS

build() {
	dir=$1
	if ! command -v clang >/dev/null 2>&1; then
		echo "fuzz.sh: clang not installed (scripts/deps.sh installs it)" >&2
		exit 1
	fi
	test -f "$dir/CMakeCache.txt" || CC=clang cmake -S . -B "$dir" \
		-DHOMA_FUZZ=ON -DHOMA_ONLY=fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$dir" -j "$(nproc)" --target fuzz_all >/dev/null
}

run_one() {
	dir=$1 t=$2; shift 2
	mkdir -p "$dir/work/$t" "$dir/artifacts"
	echo "fuzz.sh: fuzz_$t $*" >&2
	if ! "$dir/fuzz_$t" "$@" -max_len=2048 -print_final_stats=1 \
		-artifact_prefix="$dir/artifacts/$t-" "$dir/work/$t" "fuzz/corpus/$t" \
		>"$dir/$t.log" 2>&1; then
		grep -E "invariant broken|ERROR|SUMMARY" "$dir/$t.log" >&2 || true
		echo "fuzz.sh: fuzz_$t FAILED (log: $dir/$t.log)" >&2
		return 1
	fi
	grep -E "^Done|number_of_executed_units" "$dir/$t.log" >&2 || true
}

cmd=${1:-}
case "$cmd" in
build)
	build "${2:-build-fuzz}" ;;
smoke)
	secs=${2:?seconds}; dir=${3:-build-fuzz}
	build "$dir"
	bad=0
	for t in $TARGETS; do
		run_one "$dir" "$t" -max_total_time="$secs" || bad=1
	done
	exit $bad ;;
run)
	t=${2:?target}; runs=${3:?runs}; dir=${4:-build-fuzz}
	build "$dir"
	run_one "$dir" "$t" -runs="$runs" ;;
*)
	echo "usage: $0 build [DIR] | smoke SECONDS [DIR] | run TARGET RUNS [DIR]" >&2
	exit 2 ;;
esac
