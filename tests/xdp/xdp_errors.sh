#!/bin/sh
# The XDP driver's documented errors (docs/XDP.md), each checked for its
# code, in a network namespace with a veth pair and a dummy interface:
# no interface name or an unknown one (HOMA_EINVAL), an interface without
# native XDP (a bridge: HOMA_ENOTSUP), an mtu beyond the interface's
# (HOMA_EINVAL; for IPv6 with its 20 more header bytes too, while IPv6's
# default packet size opens), four sockets on one interface
# (all open: they share it), no CAP_NET_ADMIN/CAP_BPF (HOMA_EPERM), and a UMEM
# that RLIMIT_MEMLOCK cannot pin (HOMA_ENOMEM); then a socket opens again.
#   xdp_errors.sh BUILD_DIR
# Exit 77 (skipped, with the reason) without root or AF_XDP.
set -u
build=${1:?build dir}
peer="$build/xdp_peer"
. "$(dirname "$0")/require.sh"
xdp_require xdp_errors ip
ns="hxe-$$"
trap 'ip netns del "$ns" 2>/dev/null' EXIT INT TERM
ip netns add "$ns" || exit 1
ip -n "$ns" link add xe0 type veth peer name xe1
ip -n "$ns" link add xd0 type bridge
ip -n "$ns" addr add 10.232.0.1/24 dev xe0
ip -n "$ns" -6 addr add fd32:9::1/64 dev xe0 nodad
ip -n "$ns" addr add 10.232.1.1/24 dev xd0
for l in lo xe0 xe1 xd0; do ip -n "$ns" link set "$l" up; done
fail=0
# expect NAME CODE ARGS...: xdp_peer open ARGS must print CODE
expect() {
	name=$1; want=$2; shift 2
	got=$(ip netns exec "$ns" "$@" 2>/tmp/xdp_errors.$$ | tail -n 1)
	msg=$(tail -n 1 /tmp/xdp_errors.$$); rm -f /tmp/xdp_errors.$$
	if [ "$got" = "$want" ]; then echo "ok   $name: $got ($msg)"
	else echo "FAIL $name: got '$got', want $want ($msg)"; fail=1; fi
}
expect "no interface name"      -1  "$peer" open - 10.232.0.1 0 1
expect "unknown interface"      -1  "$peer" open nosuch0 10.232.0.1 0 1
expect "no native XDP (bridge)"  -15 "$peer" open xd0 10.232.1.1 0 1
expect "IPv6, default mtu"       0   "$peer" open xe0 fd32:9::1 0 1
expect "IPv6, mtu 1453"          -1  "$peer" open xe0 fd32:9::1 1453 1
expect "mtu above the link's"   -1  "$peer" open xe0 10.232.0.1 3000 1
expect "four sockets, one iface" 0   "$peer" open xe0 10.232.0.1 0 4
expect "no CAP_NET_ADMIN/BPF"   -10 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$peer" open xe0 10.232.0.1 0 1
expect "UMEM over memlock"      -2  sh -c "ulimit -l 1024 && exec setpriv \
	--inh-caps=-ipc_lock --bounding-set=-ipc_lock $peer open xe0 10.232.0.1 0 1"
expect "opens again afterwards" 0   "$peer" open xe0 10.232.0.1 0 1
exit $fail
