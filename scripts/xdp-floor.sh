#!/bin/sh
# What a packet (1472 bytes of UDP payload unless PAYLOAD says otherwise)
# costs between two network namespaces joined by a veth pair with no
# protocol at all (tools/xdp-floor, docs/XDP.md): one
# process sends as fast as it can for SECONDS, another receives. Arms:
#   udp      sendmmsg()/recvmmsg() of single datagrams (as the UDP driver
#            without offloads, homa_udp_no_offload in bench-xdp)
#   udp_gso  64 KB UDP_SEGMENT sends, UDP_GRO receives (as the UDP
#            driver's default)
#   xsk      AF_XDP copy mode both ends, 64 packets per batch (as the XDP
#            driver on veth); above 1472 bytes multi-buffer (XDP_USE_SG,
#            4096-byte frames chained, the program loaded with frags)
# Above 1472 bytes the veth MTU is raised to PAYLOAD + 28 (a non-default
# MTU: compare with a run at 1472).
# Per arm: packets sent and received per second of sending, CPU per packet as the
# sender's getrusage per packet sent plus the receiver's per packet
# received (a receiver that cannot keep up drops packets the sender paid
# for: they count on the sender's side only), split into user and system,
# and the machine's busy CPU per received packet (wall time x CPUs minus
# /proc/stat idle and iowait, softirq and drops included), and both CPU
# figures per 1472 bytes of payload (to compare sizes). Then the ratios
# xsk/udp and xsk/udp_gso. Writes BUILD/xdp-floor.json.
#   scripts/xdp-floor.sh [BUILD_DIR] [SECONDS] [PAYLOAD]
# Needs root and AF_XDP on veth (exit 77 otherwise). The namespaces
# (${XDP_FLOOR_NS}a-PID and ${XDP_FLOOR_NS}b-PID, XDP_FLOOR_NS "xf" unless
# set) are removed on exit.
set -eu
build=${1:-build}; secs=${2:-3}; size=${3:-1472}
floor="$build/homa-xdp-floor"
case $size in ''|*[!0-9]*) echo "xdp-floor: PAYLOAD must be a number of bytes" >&2; exit 2;; esac
sz=""; [ "$size" -eq 1472 ] || sz="-s $size"
[ "$(id -u)" -eq 0 ] || { echo "xdp-floor: needs root; skipped" >&2; exit 77; }
[ -x "$floor" ] || { echo "xdp-floor: $floor not built (needs libxdp); skipped" >&2; exit 77; }
ns=${XDP_FLOOR_NS:-xf}; a="${ns}a-$$"; b="${ns}b-$$"; tmp=$(mktemp -d); out="$build/xdp-floor.json"
cleanup() { ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
ip netns add "$a"; ip netns add "$b"
ip link add fa0 netns "$a" type veth peer name fb0 netns "$b"
ip -n "$a" addr add 10.235.0.1/24 dev fa0; ip -n "$b" addr add 10.235.0.2/24 dev fb0
mtu=$((size + 28 > 1500 ? size + 28 : 1500))
# shellcheck disable=SC2086
for n in "$a fa0" "$b fb0"; do set -- $n; ip -n "$1" link set lo up; ip -n "$1" link set "$2" mtu "$mtu" up; done
amac=$(ip -n "$a" -br link show fa0 | awk '{print $3}')
bmac=$(ip -n "$b" -br link show fb0 | awk '{print $3}')
ncpu=$(nproc)

# idle_ticks: the machine's idle + iowait ticks so far (USER_HZ).
idle_ticks() { awk '/^cpu /{print $5 + $6}' /proc/stat; }
# now_us: CLOCK_MONOTONIC-like wall time in microseconds.
now_us() { awk '{printf "%.0f", $1 * 1e6}' /proc/uptime; }

# arm NAME RX_ARGS TX_ARGS: run one arm, write $tmp/NAME.json.
arm() {
	name=$1; rx=$2; tx=$3
	i0=$(idle_ticks); w0=$(now_us)
	# shellcheck disable=SC2086
	ip netns exec "$b" "$floor" $sz $rx >"$tmp/$name.rx" &
	rpid=$!
	sleep 0.3
	# shellcheck disable=SC2086
	ip netns exec "$a" "$floor" $sz $tx >"$tmp/$name.tx"
	wait "$rpid"
	i1=$(idle_ticks); w1=$(now_us)
	cat "$tmp/$name.rx" "$tmp/$name.tx" | awk -v n="$name" -v secs="$secs" -v wall=$((w1 - w0)) \
		-v idle=$(((i1 - i0) * 10000)) -v ncpu="$ncpu" -v size="$size" '
		/packets/ { if ($1 ~ /rx$/) { got = $3; ru = $7; rs = $9 }
			    else { sent = $3; tu = $7; ts = $9 } }
		END {
			if (got == 0 || sent == 0) { printf "xdp-floor: %s moved nothing\n", n > "/dev/stderr"; exit 1 }
			busy = wall * ncpu - idle; if (busy < 0) busy = 0
			u = tu / sent + ru / got; s = ts / sent + rs / got
			printf "{\"arm\":\"%s\",\"pps\":%.0f,\"sent_pps\":%.0f,", n, got / secs, sent / secs
			printf "\"tx_us_per_pkt\":%.3f,\"rx_us_per_pkt\":%.3f,", (tu + ts) / sent, (ru + rs) / got
			printf "\"user_us_per_pkt\":%.3f,\"sys_us_per_pkt\":%.3f,", u, s
			printf "\"cpu_us_per_pkt\":%.3f,\"busy_us_per_pkt\":%.3f,", u + s, busy / got
			printf "\"cpu_us_per_1472B\":%.3f,\"busy_us_per_1472B\":%.3f}\n", (u + s) * 1472 / size, busy / got * 1472 / size
		}' >"$tmp/$name.json"
}
arm udp "udp-rx fb0 $((secs + 1))" "udp-tx fa0 $secs 10.235.0.2"
arm udp_gso "udp-rx fb0 $((secs + 1)) gso" "udp-tx fa0 $secs 10.235.0.2 gso"
# shellcheck disable=SC2086
if ! ip netns exec "$b" "$floor" $sz xsk-rx fb0 0.1 >/dev/null 2>"$tmp/xsk.err"; then
	echo "xdp-floor: no AF_XDP on veth here ($(cat "$tmp/xsk.err")); skipped" >&2
	exit 77
fi
# The multi-buffer receiver attaches its own program: take the probe's off.
[ "$size" -le 1472 ] || ip -n "$b" link set fb0 xdp off
arm xsk "xsk-rx fb0 $((secs + 1))" "xsk-tx fa0 $secs $amac $bmac 10.235.0.1 10.235.0.2"
jq -s '{arms: ., secs: '"$secs"', payload: '"$size"', mtu: '"$mtu"'}' "$tmp/udp.json" "$tmp/udp_gso.json" "$tmp/xsk.json" >"$out"
jq -r '.arms[] | "\(.arm): \(.pps) of \(.sent_pps) packets/s received; CPU per packet \(.cpu_us_per_pkt) us (sender \(.tx_us_per_pkt) per packet sent, receiver \(.rx_us_per_pkt) per packet received; user \(.user_us_per_pkt), system \(.sys_us_per_pkt)), busy \(.busy_us_per_pkt) us per packet received; per 1472 B of payload: CPU \(.cpu_us_per_1472B) us, busy \(.busy_us_per_1472B) us"' "$out"
echo "payload $size bytes per packet, veth MTU $mtu$( [ "$mtu" -eq 1500 ] || echo ' (not the default 1500)')"
jq -r '.arms as $a | ($a[] | select(.arm == "xsk")) as $x | $a[] | select(.arm != "xsk") |
	"xsk/\(.arm): CPU per packet \($x.cpu_us_per_pkt / .cpu_us_per_pkt * 100 | round / 100)x (getrusage), \(if .busy_us_per_pkt > 0 then $x.busy_us_per_pkt / .busy_us_per_pkt * 100 | round / 100 else 0 end)x (busy)"' "$out"
