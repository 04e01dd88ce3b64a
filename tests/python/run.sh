#!/bin/sh
# Installs the Python binding as a user would (pip, no build isolation, no
# network) into a temporary directory, then runs its pytest suite.
#   run.sh SOURCE_DIR BUILD_DIR LIB_DIR [PYTEST_ARGS...]
# Uses Debian's /usr/bin/python3 (python3-cffi, python3-pytest: deps.sh).
set -eu
src=$1 build=$2 libdir=$3
shift 3
py=/usr/bin/python3
$py -c "import cffi, pytest" 2>/dev/null ||
	{ echo "run.sh: $py lacks cffi or pytest (run scripts/deps.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$src/python" "$tmp/src"        # pip builds in the folder it is given
rm -rf "$tmp/src/build"
export HOMA_INCLUDE_DIR="$src/include" HOMA_LIB_DIR="$libdir" HOMA_BUILD_DIR="$build" \
	HOMA_SOURCE_DIR="$src"
$py -m pip install -q --no-build-isolation --no-index --disable-pip-version-check \
	--root-user-action=ignore --target "$tmp/site" "$tmp/src" >"$tmp/pip.log" 2>&1 ||
	{ cat "$tmp/pip.log" >&2; echo "run.sh: pip install failed" >&2; exit 1; }
cd "$tmp"
PYTHONPATH="$tmp/site" PYTHONDONTWRITEBYTECODE=1 \
	$py -m pytest -q -p no:cacheprovider --durations=5 "$tmp/src/tests" "$@"
