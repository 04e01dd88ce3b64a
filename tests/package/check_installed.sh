#!/bin/sh
# Checks an installed homa under PREFIX as a user meets it: builds
# tests/package/hello.c outside the tree four ways, by pkg-config (shared,
# and static) and by a CMake project with find_package(homa) (homa::homa,
# homa::homa_static), and runs each (one RPC on loopback); checks the
# SONAME, that the CMake package refuses another major version, and that
# every homa man page renders with man -l without a warning.
# With README (the project's README.md), the program of its "A complete
# program" section is built the same way and must print "pong".
#   check_installed.sh PREFIX CC [EXTRA_CFLAGS [README]]
# Used by install.sh (cmake --install into a temporary prefix) and by
# scripts/deb.sh test (the .deb packages installed on this machine).
set -eu
prefix=$1 cc=$2 extra=${3:-} readme=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check_installed.sh: FAIL: $*" >&2; exit 1; }

pc=$(find "$prefix/lib" -name homa.pc -path "*/pkgconfig/*" | head -1)
[ -n "$pc" ] || fail "homa.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
so=$(readelf -d "$libdir/libhoma.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
case "$so" in
libhoma.so.[0-9]*) echo "SONAME $so" ;;
*) fail "libhoma.so has SONAME '$so', want libhoma.so.N" ;;
esac
[ -f "$libdir/$so" ] || fail "$so not installed"

export PKG_CONFIG_PATH="$(dirname "$pc")"
# Shared, by pkg-config; the program finds the library through its rpath.
# shellcheck disable=SC2046,SC2086
"$cc" $extra -o "$tmp/hello_pc" "$here/hello.c" $(pkg-config --cflags --libs homa) \
	-Wl,-rpath,"$libdir" || fail "pkg-config shared build"
readelf -d "$tmp/hello_pc" | grep -q "NEEDED.*\[$so\]" || fail "hello_pc does not load $so"
if [ -n "$readme" ]; then
	awk '/^```c$/ {f = 1; next} /^```$/ {f = 0} f' "$readme" >"$tmp/readme.c"
	[ -s "$tmp/readme.c" ] || fail "no C program in $readme"
	# shellcheck disable=SC2046,SC2086
	"$cc" $extra -o "$tmp/readme_prog" "$tmp/readme.c" $(pkg-config --cflags --libs homa) \
		-Wl,-rpath,"$libdir" || fail "the README's program does not build"
	out=$("$tmp/readme_prog") || fail "the README's program exited $?"
	[ "$out" = "pong" ] || fail "the README's program printed '$out'"
	echo "README program: $out"
fi
# Static, by pkg-config --static (libhoma.a and its private libraries).
# shellcheck disable=SC2046,SC2086
"$cc" $extra -o "$tmp/hello_pc_static" "$here/hello.c" \
	$(pkg-config --cflags homa) "$libdir/libhoma.a" $(pkg-config --static --libs-only-other --libs-only-l homa | sed 's/-lhoma//') \
	|| fail "pkg-config static build"
if readelf -d "$tmp/hello_pc_static" | grep -q "libhoma"; then
	fail "hello_pc_static loads libhoma.so"
fi

# By find_package(homa) in a CMake project outside the tree.
CC=$cc cmake -S "$here/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >"$tmp/cmake.log" 2>&1 ||
	{ cat "$tmp/cmake.log" >&2; fail "find_package(homa) configure"; }
cmake --build "$tmp/consumer" >"$tmp/cmake-build.log" 2>&1 ||
	{ cat "$tmp/cmake-build.log" >&2; fail "find_package(homa) build"; }

for p in "$tmp/hello_pc" "$tmp/hello_pc_static" "$tmp/consumer/hello_shared" \
	"$tmp/consumer/hello_static"; do
	out=$("$p") || fail "$(basename "$p") exited $?"
	[ "$out" = "hello: pong" ] || fail "$(basename "$p") printed '$out'"
	echo "$(basename "$p"): $out"
done

# Man pages: every installed page (aliases too) renders with man -l, with
# no groff warning; homa(7), the three tools and one page per function
# group are there.
mandir=$prefix/share/man
for want in man7/homa.7 man1/homa-bench.1 man1/homa-sim.1 man1/homa-stat.1 \
	man1/homa-handle-bench.1 man1/homa-hash-bench.1 man1/homa-engine-bench.1 \
	man1/homa-udp-probe.1 man1/homa-flood.1 man3/homa_request_buf.3 man3/homa_recv_partial_wait.3 \
	man3/homa_open.3 man3/homa_send.3 man3/homa_recv.3 man3/homa_reply.3 \
	man3/homa_poll.3 man3/homa_close.3 man3/homa_message_release.3; do
	[ -f "$mandir/$want" ] || fail "man page $want not installed"
done
pages=0
for page in "$mandir"/man*/homa*; do
	rel=${page#"$mandir"/}
	text=$(cd "$mandir" && MANWIDTH=80 man --warnings -l "$rel" 2>"$tmp/man.err") ||
		fail "man -l $rel failed: $(cat "$tmp/man.err")"
	[ ! -s "$tmp/man.err" ] || fail "man -l $rel: $(cat "$tmp/man.err")"
	echo "$text" | grep -q "^NAME" || fail "man -l $rel has no NAME section"
	pages=$((pages + 1))
done
echo "man: $pages pages render"

# Every installed tool answers --help with exit status 0.
for t in homa-bench homa-sim homa-stat homa-handle-bench homa-hash-bench \
	homa-engine-bench homa-udp-probe homa-flood; do
	"$prefix/bin/$t" --help >/dev/null || fail "installed $t --help failed"
done

# SameMajorVersion: a request for the next major version must not match.
major=$(pkg-config --modversion homa | cut -d. -f1)
mkdir "$tmp/major"
cat >"$tmp/major/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.20)
project(major NONE)
find_package(homa $((major + 1)).0 QUIET)
if(homa_FOUND)
  message(FATAL_ERROR "find_package(homa $((major + 1)).0) matched version \${homa_VERSION}")
endif()
CM
cmake -S "$tmp/major" -B "$tmp/major/b" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/major.log" 2>&1 ||
	{ cat "$tmp/major.log" >&2; fail "SameMajorVersion"; }
echo "check_installed.sh: PASS"
