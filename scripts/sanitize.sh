#!/bin/sh
# Builds the tree with several compilers and sanitizers and runs the tests
# in each build (docs/HARDENING.md). Each build has its own directory under
# OUT (default build-sanitize/); the first failing build stops the script.
#   scripts/sanitize.sh [OUT] [STEP...]
# Steps (default: all of gcc clang asan tsan):
#   gcc      gcc, -Wall -Wextra -Werror, every test
#   release  gcc, Release (-O3), -Werror, built but not tested: the
#            optimiser's extra warnings (maybe-uninitialized and the like)
#   clang    clang, -Wall -Wextra -Werror, every test
#   asan     clang, AddressSanitizer + UndefinedBehaviorSanitizer (no recovery,
#            LeakSanitizer on), every test
#   tsan     clang, ThreadSanitizer: the runtime, its tests and the hardening
#            tests on the real stack (the threaded code)
#   asan-ci  like asan, but only the engine, simulator and hardening tests
#            (the fast subset registered in `make test`)
# Exit status: 0 if every build and test passed with zero sanitizer reports.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build-sanitize}
[ $# -gt 0 ] && shift
STEPS=${*:-gcc clang asan tsan}
JOBS=$(nproc)
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"

# configure_build NAME CC [cmake args...]: configure (once) and build OUT/NAME.
configure_build() {
	name=$1 cc=$2; shift 2
	dir="$OUT/$name"
	if [ ! -f "$dir/CMakeCache.txt" ]; then
		CC=$cc cmake -S . -B "$dir" -DHOMA_WERROR=ON "$@" >/dev/null
	fi
	cmake --build "$dir" -j "$JOBS" >"$dir.build.log" 2>&1 || {
		tail -30 "$dir.build.log" >&2
		echo "sanitize.sh: $name: build failed (log: $dir.build.log)" >&2
		exit 1
	}
}

# run_tests NAME [ctest args...]: run the tests of OUT/NAME.
run_tests() {
	name=$1; shift
	echo "sanitize.sh: $name: testing" >&2
	(cd "$OUT/$name" && ctest --output-on-failure -j "$JOBS" "$@") >"$OUT/$name.test.log" 2>&1 || {
		grep -E "\*\*\*|Failed|FAILED|ERROR|runtime error|WARNING: ThreadSanitizer|SUMMARY" \
			"$OUT/$name.test.log" | head -40 >&2
		echo "sanitize.sh: $name: tests failed (log: $OUT/$name.test.log)" >&2
		exit 1
	}
	tail -1 "$OUT/$name.test.log" >&2
	grep -E "tests passed" "$OUT/$name.test.log" >&2 || true
}

CI_PARTS="src/core;src/util;src/sim;tests/core;tests/sim;tests/hardening"
TSAN_PARTS="src/core;src/util;src/obs;src/io;src/crypto;src/runtime;src/shim;tests/runtime;tests/hardening;tests/shim"
SAN_FLAGS="-fno-sanitize-recover=undefined"
mkdir -p "$OUT"
for step in $STEPS; do
	t0=$(date +%s)
	case "$step" in
	gcc)
		configure_build gcc gcc
		run_tests gcc ;;
	release)
		configure_build release gcc -DCMAKE_BUILD_TYPE=Release
		echo "sanitize.sh: release: built" >&2 ;;
	clang)
		configure_build clang clang
		run_tests clang ;;
	asan)
		configure_build asan clang -DHOMA_SANITIZE=address,undefined \
			-DCMAKE_C_FLAGS="$SAN_FLAGS"
		run_tests asan -E fuzz_smoke ;;
	asan-ci)
		configure_build asan-ci clang -DHOMA_SANITIZE=address,undefined \
			-DCMAKE_C_FLAGS="$SAN_FLAGS" "-DHOMA_ONLY=$CI_PARTS"
		run_tests asan-ci -E "fuzz_smoke|sanitize" ;;
	tsan)
		configure_build tsan clang -DHOMA_SANITIZE=thread "-DHOMA_ONLY=$TSAN_PARTS"
		run_tests tsan -R "runtime|hardening_rt|hardening_soak|shim" ;;
	*)
		echo "sanitize.sh: unknown step $step" >&2
		exit 2 ;;
	esac
	echo "sanitize.sh: $step: passed in $(($(date +%s) - t0)) s (build and tests)" >&2
done
echo "sanitize.sh: all steps passed: $STEPS" >&2
