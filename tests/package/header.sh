#!/bin/sh
# homa.h stands alone and shows an application only the application API:
# a file that includes nothing but <homa/homa.h> compiles warning-free as
# C11 (and C++ when a compiler is there), and none of the engine, wire or
# observability headers (engine.h, wire.h, obs.h, psp.h, encrypt.h) comes
# in with it.
#   header.sh SOURCE_DIR CC
set -eu
src=$1 cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <homa/homa.h>\nint main(void) { struct homa_open_opts o; homa_open_opts_default(&o); return 0; }\n' \
	>"$tmp/app.c"
"$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I "$src/include" -c "$tmp/app.c" -o "$tmp/app.o"
"$cc" -std=c11 -I "$src/include" -E -dM "$tmp/app.c" >"$tmp/macros"
status=0
for guard in HOMA_ENGINE_H HOMA_WIRE_H HOMA_OBS_H HOMA_PSP_H HOMA_ENCRYPT_H; do
	if grep -q "^#define $guard *\$" "$tmp/macros"; then
		echo "header.sh: <homa/homa.h> pulls in $guard (an internal header)" >&2
		status=1
	fi
done
if command -v c++ >/dev/null 2>&1; then
	cp "$tmp/app.c" "$tmp/app.cc"
	c++ -Wall -Wextra -Werror -I "$src/include" -c "$tmp/app.cc" -o "$tmp/app_cc.o"
fi
[ $status -eq 0 ] && echo "header.sh: homa.h stands alone and includes no internal header"
exit $status
