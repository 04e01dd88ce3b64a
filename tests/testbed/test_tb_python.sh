#!/usr/bin/env bash
# test_tb_python.sh SRC: the testbed asks `python3` for its interpreter once
# (tb_python in scripts/testbed.d/run.sh) and runs every later script with
# it, so a slow shim first in PATH is paid once per run, not per arm; a
# given TB_PYTHON is kept. Also coll_phase (collective.sh): one line per
# phase with the seconds since the previous one. No root needed.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A shim that counts its starts and runs the real interpreter.
real=$(python3 -c 'import sys; print(sys.executable)')
mkdir "$tmp/bin"
cat >"$tmp/bin/python3" <<SH
#!/bin/sh
echo x >>"$tmp/starts"
exec "$real" "\$@"
SH
chmod +x "$tmp/bin/python3"
run() { # prints TB_PYTHON after tb_python, then runs it twice as the scripts do
  PATH="$tmp/bin:$PATH" bash -c "die() { echo \"die: \$*\"; exit 3; }
    source '$src/scripts/testbed.d/run.sh'; tb_python; echo \"\$TB_PYTHON\"
    \"\$TB_PYTHON\" -c pass; \"\$TB_PYTHON\" -c pass"
}
got=$(run)
starts=$(wc -l <"$tmp/starts")
[[ $got == "$real" ]] || { echo "FAIL: TB_PYTHON is '$got', want '$real'"; exit 1; }
[[ $starts == 1 ]] || { echo "FAIL: the shim started $starts times, want once"; exit 1; }
: >"$tmp/starts"
got=$(TB_PYTHON=/bin/true run)
[[ $got == /bin/true && ! -s $tmp/starts ]] || { echo "FAIL: a given TB_PYTHON was not kept ('$got')"; exit 1; }
# coll_phase: "PHASE SECONDS" since the previous phase, appended.
out=$(bash -c "source '$src/scripts/testbed.d/collective.sh'; COLL_T=\$EPOCHREALTIME
  coll_phase '$tmp' first; sleep 0.2; coll_phase '$tmp' second; cat '$tmp/phases.txt'")
awk 'NR == 1 && $1 == "first" && $2 < 0.2 { ok++ } NR == 2 && $1 == "second" && $2 >= 0.2 { ok++ }
     END { exit !(ok == 2 && NR == 2) }' <<<"$out" || { echo "FAIL: phases.txt is '$out'"; exit 1; }
echo "tb_python, coll_phase: ok"
