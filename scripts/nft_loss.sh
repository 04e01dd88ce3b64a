#!/bin/sh
# Kernel-level packet loss for the fault test (docs/HARDENING.md): runs
# hardening_rt_faults --external in a private network namespace whose
# loopback drops PCT percent of UDP packets with nftables "numgen random".
# Needs root (exit status 77, "skipped", without it). The namespace is
# removed on exit, also after a failure.
#   scripts/nft_loss.sh PCT RPCS [BUILD_DIR]
set -eu
if [ "$(id -u)" -ne 0 ] || ! command -v nft >/dev/null 2>&1; then
	echo "nft_loss.sh: needs root and nft; skipped" >&2
	exit 77
fi
cd "$(dirname "$0")/.."
pct=${1:?percent}; rpcs=${2:?rpcs}; build=${3:-build}
ns="hd-nft-$$"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT INT TERM
ip netns add "$ns"
ip -n "$ns" link set lo up
ip netns exec "$ns" nft -f - <<NFT
table inet hd_loss {
	chain input {
		type filter hook input priority 0;
		meta l4proto udp numgen random mod 1000 < $((pct * 10)) counter drop
	}
}
NFT
ip netns exec "$ns" "$build/hardening_rt_faults" --external $((pct * 10000)) "$rpcs"
ip netns exec "$ns" nft list chain inet hd_loss input | grep counter >&2
