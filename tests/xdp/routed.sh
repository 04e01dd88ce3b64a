# Sourced by the XDP driver's veth tests: two hosts in network namespaces
# joined through a router namespace, and the start of an xdp_peer server.
#   routed_hosts A R B P NET QUEUES
# creates namespaces A, R and B; host A's interface P"a0" and host B's
# P"b0" are veth pairs with the router's P"ra0" and P"rb0"; addresses
# NET.1.2 (A), NET.1.1 and NET.2.1 (R), NET.2.2 (B), each /24; default
# routes through the router, which forwards. B's pair has QUEUES receive
# and transmit queues. Stops at the first command that fails (the
# caller's cleanup removes the namespaces).
routed_hosts() {
	for n in "$1" "$2" "$3"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	ip link add "$4a0" netns "$1" type veth peer name "$4ra0" netns "$2" &&
	ip link add "$4b0" netns "$3" numrxqueues "$6" numtxqueues "$6" type veth \
		peer name "$4rb0" netns "$2" numrxqueues "$6" numtxqueues "$6" &&
	ip -n "$1" addr add "$5.1.2/24" dev "$4a0" &&
	ip -n "$2" addr add "$5.1.1/24" dev "$4ra0" &&
	ip -n "$2" addr add "$5.2.1/24" dev "$4rb0" &&
	ip -n "$3" addr add "$5.2.2/24" dev "$4b0" &&
	ip -n "$1" link set "$4a0" up && ip -n "$2" link set "$4ra0" up &&
	ip -n "$2" link set "$4rb0" up && ip -n "$3" link set "$4b0" up &&
	ip -n "$1" route add default via "$5.1.1" &&
	ip -n "$3" route add default via "$5.2.1" &&
	ip netns exec "$2" sysctl -qw net.ipv4.ip_forward=1
}

# routed_hosts6 A R B P NET6 is routed_hosts over IPv6 only: addresses
# NET6:1::2 (A), NET6:1::1 and NET6:2::1 (R), NET6:2::2 (B), each /64
# without duplicate address detection (usable at once), default routes
# through the router, which forwards; one queue each.
routed_hosts6() {
	for n in "$1" "$2" "$3"; do ip netns add "$n" && ip -n "$n" link set lo up || return 1; done
	ip link add "$4a0" netns "$1" type veth peer name "$4ra0" netns "$2" &&
	ip link add "$4b0" netns "$3" type veth peer name "$4rb0" netns "$2" &&
	ip -n "$1" -6 addr add "$5:1::2/64" dev "$4a0" nodad &&
	ip -n "$2" -6 addr add "$5:1::1/64" dev "$4ra0" nodad &&
	ip -n "$2" -6 addr add "$5:2::1/64" dev "$4rb0" nodad &&
	ip -n "$3" -6 addr add "$5:2::2/64" dev "$4b0" nodad &&
	ip -n "$1" link set "$4a0" up && ip -n "$2" link set "$4ra0" up &&
	ip -n "$2" link set "$4rb0" up && ip -n "$3" link set "$4b0" up &&
	ip -n "$1" -6 route add default via "$5:1::1" &&
	ip -n "$3" -6 route add default via "$5:2::1" &&
	ip netns exec "$2" sysctl -qw net.ipv6.conf.all.forwarding=1
}

# direct_hosts A B P NET creates namespaces A and B joined by the veth
# pair P"a0" (in A, address NET.1) and P"b0" (in B, NET.2), each /24, all
# up. Stops at the first command that fails (the caller's cleanup removes
# the namespaces).
direct_hosts() {
	ip netns add "$1" && ip netns add "$2" &&
	ip link add "$3a0" netns "$1" type veth peer name "$3b0" netns "$2" &&
	ip -n "$1" addr add "$4.1/24" dev "$3a0" &&
	ip -n "$2" addr add "$4.2/24" dev "$3b0" &&
	for n in "$1" "$2"; do ip -n "$n" link set lo up || return 1; done &&
	ip -n "$1" link set "$3a0" up && ip -n "$2" link set "$3b0" up
}

# start_server NS FIFO NAME ARGS... runs "$peer server ARGS" in namespace
# NS with its output on the fifo FIFO (made here) and waits for its
# "ready" line; sets spid. Returns 1, saying so as NAME, if it did not start.
start_server() {
	ns=$1; fifo=$2; name=$3; shift 3
	mkfifo "$fifo"
	ip netns exec "$ns" "$peer" server "$@" >"$fifo" &
	spid=$!
	read -r line <"$fifo" || true
	[ "$line" = "ready" ] && return 0
	wait "$spid"; rc=$?
	echo "$name: the server did not start (exit $rc)"
	return 1
}
