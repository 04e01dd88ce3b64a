#!/bin/sh
# The XDP driver's per-batch costs (xdp_batch.c): sends kicked once per
# batch, receives of up to 64 packets, one UMEM lock per receive that
# gives frames back. Two namespaces joined by a veth pair; one process
# opens the driver in each.
#   xdp_batch.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP. The
# namespaces are removed on exit, also after a failure.
set -u
build=${1:?build dir}
. "$(dirname "$0")/require.sh"
xdp_require xdp_batch ip
a="hxba-$$"; b="hxbb-$$"
trap 'ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null' EXIT INT TERM
ip netns add "$a" && ip netns add "$b" || exit 1
# both ends get index 7, each in its own namespace: the process must keep
# the two interfaces apart (index and namespace)
ip link add xb0 index 7 netns "$a" type veth peer name xb1 index 7 netns "$b" || exit 1
ip -n "$a" addr add 10.232.7.1/24 dev xb0
ip -n "$b" addr add 10.232.7.2/24 dev xb1
for n in "$a xb0" "$b xb1"; do set -- $n; ip -n "$1" link set lo up; ip -n "$1" link set "$2" up; done
ia=$(ip -n "$a" -o link show xb0 | cut -d: -f1); ib=$(ip -n "$b" -o link show xb1 | cut -d: -f1)
[ "$ia" = 7 ] && [ "$ib" = 7 ] || { echo "xdp_batch: FAIL: indexes $ia and $ib, not 7"; exit 1; }
"$build/xdp_batch" "$a" xb0 10.232.7.1 "$b" xb1 10.232.7.2
