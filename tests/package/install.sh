#!/bin/sh
# Installs the build (cmake --install) into a temporary prefix and checks
# it as a user meets it (check_installed.sh: programs outside the tree by
# pkg-config and find_package, SONAME, man pages).
#   install.sh BUILD_DIR CC [EXTRA_CFLAGS [README]]
# EXTRA_CFLAGS carries the sanitizer flags of a sanitizer build.
set -eu
build=$1 cc=$2 extra=${3:-} readme=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install.sh: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "cmake --install"; }
sh "$here/check_installed.sh" "$tmp/prefix" "$cc" "$extra" "$readme"
