#!/bin/sh
# Soak run of the real stack (tests/hardening/soak.c, docs/HARDENING.md):
#   scripts/soak.sh SECONDS [plain|asan] [DIR]
# plain: the normal build (default build-soak); asan: AddressSanitizer +
# UBSan with LeakSanitizer checking for leaks at exit (default
# build-soak-asan). Writes one sample a second to DIR/soak.csv and a
# summary to stdout. Exit status: 0 if every soak check passed.
set -eu
cd "$(dirname "$0")/.."
secs=${1:?seconds}
kind=${2:-plain}
case "$kind" in
plain) dir=${3:-build-soak}; flags="" ;;
asan) dir=${3:-build-soak-asan}
      flags="-DHOMA_SANITIZE=address,undefined -DCMAKE_C_FLAGS=-fno-sanitize-recover=undefined" ;;
*) echo "usage: $0 SECONDS [plain|asan] [DIR]" >&2; exit 2 ;;
esac
if [ ! -f "$dir/CMakeCache.txt" ]; then
	if [ "$kind" = asan ]; then
		CC=clang cmake -S . -B "$dir" $flags >/dev/null
	else
		cmake -S . -B "$dir" >/dev/null
	fi
fi
cmake --build "$dir" -j "$(nproc)" --target hardening_soak >/dev/null
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
echo "soak.sh: $secs s ($kind), samples in $dir/soak.csv" >&2
"$dir/hardening_soak" "$secs" "$dir/soak.csv"
