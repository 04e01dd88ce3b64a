#!/bin/sh
# The AUTO transport's fallback scenario (docs/PROGRAMMING.md,
# "Transports"): a client namespace linked by veth pairs to two server
# namespaces, each running `homa-fallback server` (AUTO: Homa and TCP at
# port 4000). The client sends RPCs to both back to back; at BLOCK s an
# nftables rule in the client's namespace drops UDP to port 4000 toward
# server 1 (Homa only: TCP passes), at UNBLOCK s the rule goes. The
# client prints, per server, the RPCs by transport, the failed ones, how
# long after the block the first response came over TCP and how long
# after the unblock the first came over Homa again (the back-off is
# RETRY_MS, 1000 by default). Needs root (exit 77 otherwise); the
# namespaces go on exit, also after a failure.
#   scripts/transport-fallback.sh [BUILD_DIR] [SECONDS] [BLOCK] [UNBLOCK]
set -eu
if [ "$(id -u)" -ne 0 ] || ! command -v nft >/dev/null 2>&1; then
	echo "transport-fallback.sh: needs root and nft; skipped" >&2
	exit 77
fi
cd "$(dirname "$0")/.."
build=${1:-build}; secs=${2:-8}; block=${3:-2}; unblock=${4:-4}
retry=${RETRY_MS:-1000}
tool="$(pwd)/$build/homa-fallback"
p="tpfb$$"
cleanup() {
	for n in s1 s2; do
		[ -f "/tmp/$p-$n.pid" ] && kill "$(cat "/tmp/$p-$n.pid")" 2>/dev/null || true
		rm -f "/tmp/$p-$n.pid"
	done
	for n in c s1 s2; do ip netns del "$p-$n" 2>/dev/null || true; done
}
trap cleanup EXIT INT TERM
for n in c s1 s2; do
	ip netns add "$p-$n"
	ip -n "$p-$n" link set lo up
done
i=1
for n in s1 s2; do
	ip link add "$p-c$i" netns "$p-c" type veth peer name "$p-$n" netns "$p-$n"
	ip -n "$p-c" addr add "10.77.$i.1/24" dev "$p-c$i"
	ip -n "$p-$n" addr add "10.77.$i.2/24" dev "$p-$n"
	ip -n "$p-c" link set "$p-c$i" up
	ip -n "$p-$n" link set "$p-$n" up
	ip netns exec "$p-$n" "$tool" server "10.77.$i.2" 4000 &
	echo $! > "/tmp/$p-$n.pid"
	i=$((i + 1))
done
sleep 0.5
ip netns exec "$p-c" nft add table inet tpfb
ip netns exec "$p-c" nft add chain inet tpfb out '{ type filter hook output priority 0; }'
ip netns exec "$p-c" "$tool" client --servers 10.77.1.2:4000,10.77.2.2:4000 \
	--seconds "$secs" --retry-ms "$retry" \
	--block-at "$block" --block-cmd \
	"nft add rule inet tpfb out ip daddr 10.77.1.2 udp dport 4000 counter drop" \
	--unblock-at "$unblock" --unblock-cmd "nft flush chain inet tpfb out"
