#!/bin/sh
# CTest: `homa-bench compare` counts system calls per RPC when tracefs is
# not mounted (it mounts it in a private mount namespace of a child), and
# says why in the table when it cannot count. Runs in a mount namespace of
# its own (unshare -m) where tracefs is unmounted; the machine's mounts
# are untouched. Skipped (77) without the right to unshare.
# Usage: syscalls_count.sh HOMA_BENCH
set -eu
bench=$1
if [ "${HOMA_SYSCALLS_INNER:-}" != 1 ]; then
  HOMA_SYSCALLS_INNER=1 unshare -m sh "$0" "$@" || {
    rc=$?; [ $rc -eq 77 ] || exit $rc
    echo "skip: cannot unshare a mount namespace"; exit 77; }
  exit 0
fi
umount /sys/kernel/tracing 2>/dev/null || true
umount /sys/kernel/debug/tracing 2>/dev/null || true
umount /sys/kernel/debug 2>/dev/null || true
if [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; then
  echo "skip: tracefs stays mounted here"; exit 77
fi
out=$(mktemp)
table=$(mktemp)
trap 'rm -f "$out" "$table"' EXIT
"$bench" compare --scenario rtt --duration 0.5 --json --quiet > "$out" 2> "$table"
jq -e '.homa.syscalls_per_rpc > 1 and .tcp.syscalls_per_rpc > 1' "$out" > /dev/null \
  || { echo "system calls not counted without tracefs mounted"; cat "$table"; exit 1; }
if [ -e /sys/kernel/tracing/events ]; then
  echo "tracefs left mounted in the caller's namespace"; exit 1
fi
# without CAP_SYS_ADMIN it cannot mount tracefs: the table says why
setpriv --inh-caps=-sys_admin --bounding-set=-sys_admin \
  "$bench" compare --scenario rtt --duration 0.5 > "$table" 2>&1 \
  || { echo "compare failed without CAP_SYS_ADMIN"; cat "$table"; exit 1; }
grep -q "^  system calls not counted: tracefs is not mounted" "$table" \
  || { echo "no reason given when system calls cannot be counted"; cat "$table"; exit 1; }
echo "ok: system calls counted without tracefs, reason given when not"
