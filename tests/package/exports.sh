#!/bin/sh
# Checks libhoma.so's dynamic symbol table against the public headers:
# every function declared in include/homa/ is exported (HOMA_API), and
# nothing else is (the library is built with hidden visibility).
#   exports.sh SOURCE_DIR LIBHOMA_SO
set -eu
src=$1 so=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/scripts/homa-api.py" --list >"$tmp/declared"
nm -D --defined-only "$so" | awk '$2 ~ /^[TWiDBR]$/ {print $3}' | sort -u >"$tmp/exported"
comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing"
comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/extra"
status=0
if [ -s "$tmp/missing" ]; then
	echo "exports.sh: declared in include/homa/ but not exported (add HOMA_API: scripts/homa-api.py):" >&2
	sed 's/^/  /' "$tmp/missing" >&2
	status=1
fi
if [ -s "$tmp/extra" ]; then
	echo "exports.sh: exported but not declared in include/homa/ (internal symbols leak):" >&2
	sed 's/^/  /' "$tmp/extra" >&2
	status=1
fi
[ $status -eq 0 ] && echo "exports.sh: $(wc -l <"$tmp/exported") functions exported, all declared in include/homa/"
exit $status
