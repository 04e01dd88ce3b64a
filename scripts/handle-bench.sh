#!/bin/sh
# Handle lookup under contention: homa-handle-bench (THREADS threads
# calling into SOCKETS sockets) linked against this tree's runtime and
# against the same runtime with src/runtime/registry.c as of BASE (default:
# the revision before per-handle reference counts). The two binaries run
# alternately ROUNDS times in one invocation; the last lines give the
# ratios (this tree / BASE) of the medians.
# Usage: scripts/handle-bench.sh [BUILD] [THREADS] [SOCKETS] [SECONDS] [ROUNDS] [recv|port] [BASE]
set -eu
build=${1:-build}
threads=${2:-8}
socks=${3:-8}
secs=${4:-2}
rounds=${5:-3}
call=${6:-recv}
base=${7:-$(git log --format=%H -S find_slot -- src/runtime/registry.c | head -1)^}
dir="$build/tools/engine-bench"
new="$build/homa-handle-bench"
[ -x "$new" ] || { echo "handle-bench: build $new first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
flags="$build/src/runtime/CMakeFiles/homa.dir/flags.make"
cflags=$(sed -n 's/^C_FLAGS = //p; s/^C_INCLUDES = //p; s/^C_DEFINES = //p' "$flags" | tr '\n' ' ')
git show "$base:src/runtime/registry.c" >"$tmp/registry.c"
# shellcheck disable=SC2086
cc $cflags -Isrc/runtime -c "$tmp/registry.c" -o "$tmp/registry.c.o"
cp "$build/src/runtime/libhoma.a" "$tmp/libhoma.a"
(cd "$tmp" && ar r libhoma.a registry.c.o)
link=$(sed "s#[^ ]*src/runtime/libhoma.a#$tmp/libhoma.a#; s#-o [^ ]*homa-handle-bench#-o $tmp/base-bench#" \
	"$dir/CMakeFiles/homa-handle-bench.dir/link.txt")
(cd "$dir" && sh -c "$link")
echo "# $threads threads, $socks sockets, $secs s per run, $rounds rounds, call $call; base $(git rev-parse --short "$base")"
for r in $(seq "$rounds"); do
	for arm in new base; do
		bin="$new"
		[ $arm = base ] && bin="$tmp/base-bench"
		printf '%s %s\n' "$arm" "$("$bin" --threads "$threads" --sockets "$socks" --seconds "$secs" --call "$call")" | tee -a "$tmp/runs"
	done
done
# medians per arm, then ratios new/base (calls/s, and CPU per call both ways)
awk '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
	if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
{ split($2, c, "="); split($3, u, "="); split($4, b, "="); split($5, w, "="); k = $1; n[k]++
  rate[k, n[k]] = c[2]; ucpu[k, n[k]] = u[2] / (c[2] * w[2]); bcpu[k, n[k]] = b[2] / (c[2] * w[2]) }
END {
	for (k in n) { for (i = 1; i <= n[k]; i++) { x[i] = rate[k, i]; y[i] = ucpu[k, i]; z[i] = bcpu[k, i] }
		R[k] = med(x, n[k]); U[k] = med(y, n[k]); B[k] = med(z, n[k]) }
	printf "median calls/s: new %.0f base %.0f; ratio new/base %.2f\n", R["new"], R["base"], R["new"] / R["base"]
	printf "CPU per call (getrusage) ratio new/base %.2f; (busy time) ratio new/base %.2f\n", U["new"] / U["base"], B["new"] / B["base"]
}' "$tmp/runs"
