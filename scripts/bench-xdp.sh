#!/bin/sh
# make bench-xdp (docs/XDP.md): Homa over the XDP driver, Homa over the UDP
# driver and kernel TCP, side by side in one run, between two network
# namespaces joined by a veth pair (native XDP on both ends). Per arm:
# 100 B RPC P50/P99 (one outstanding), 100 B RPCs per CPU-second and hosts'
# CPU per RPC (the machine's busy time: wall x CPUs minus /proc/stat idle,
# softirq included; and the two processes' getrusage), and one 500 KB
# stream's goodput with its CPU per message (both ways). The UDP driver also
# runs without its UDP_SEGMENT / UDP_GRO batches (homa_udp_no_offload):
# one datagram per packet through the kernel, as the XDP driver's copy
# mode sends one frame per packet. Both drivers also run busy-polling
# (homa_xdp_spin, homa_udp_spin: --homa-spin 1, client and server call
# homa_recv() with a zero timeout in a loop instead of sleeping), and
# busy-polling with a bound (homa_xdp_spin_bounded, homa_udp_spin_bounded:
# --homa-spin-us 50, each wait polls at most 50 us, yielding the CPU
# between looks, then sleeps). Writes
# BUILD/bench-xdp.json and prints the table with ratios to the UDP driver.
#   scripts/bench-xdp.sh [BUILD_DIR] [SECONDS]
# Needs root (exit 77 otherwise). The namespaces are removed on exit.
set -eu
build=${1:-build}; secs=${2:-3}
bench="$build/homa-bench"
[ "$(id -u)" -eq 0 ] || { echo "bench-xdp: needs root; skipped" >&2; exit 77; }
command -v jq >/dev/null || { echo "bench-xdp: needs jq" >&2; exit 1; }
a="hba-$$"; b="hbb-$$"; out="$build/bench-xdp.json"; tmp=$(mktemp -d)
spid=""
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null && wait "$spid" 2>/dev/null
	ip netns del "$a" 2>/dev/null; ip netns del "$b" 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
ip netns add "$a"; ip netns add "$b"
ip link add ba0 netns "$a" type veth peer name bb0 netns "$b"
ip -n "$a" addr add 10.233.0.1/24 dev ba0; ip -n "$b" addr add 10.233.0.2/24 dev bb0
for n in "$a ba0" "$b bb0"; do set -- $n; ip -n "$1" link set lo up; ip -n "$1" link set "$2" up; done
mode=$(ip netns exec "$a" "$build/xdp_peer" open ba0 10.233.0.1 0 1 | sed -n 's/^mode //p')
[ -n "$mode" ] || { echo "bench-xdp: the XDP driver does not open on veth" >&2; exit 1; }

# arm NAME TRANSPORT DRIVER [FLAGS]: server in b, then the rtt and stream clients in a
arm() {
	name=$1; tr=$2; drv=$3
	sx="${4:-}"; cx="${4:-}"
	[ "$drv" = xdp ] && { sx="$sx --ifname bb0"; cx="$cx --ifname ba0"; }
	ip netns exec "$b" "$bench" server --transport "$tr" --driver "$drv" $sx \
		--bind 10.233.0.2 --port 5000 >/dev/null 2>"$tmp/$name.srv" &
	spid=$!
	sleep 1
	for s in rtt:100 stream:500K; do
		ip netns exec "$a" "$bench" client --transport "$tr" --driver "$drv" $cx --quiet \
			--servers 10.233.0.2:5000 --workload "${s#*:}" --response 100 \
			--duration "$secs" --json "$tmp/$name.${s%%:*}.json" >/dev/null
	done
	kill "$spid"; wait "$spid" 2>/dev/null || true; spid=""
}
arm homa_xdp homa xdp
arm homa_udp homa udp
arm homa_udp_no_offload homa udp "--homa-offload 0"
arm homa_xdp_spin homa xdp "--homa-spin 1"
arm homa_udp_spin homa udp "--homa-spin 1"
arm homa_xdp_spin_bounded homa xdp "--homa-spin 1 --homa-spin-us 50"
arm homa_udp_spin_bounded homa udp "--homa-spin 1 --homa-spin-us 50"
arm tcp tcp udp
jq -n --arg mode "$mode" \
	--slurpfile xr "$tmp/homa_xdp.rtt.json" --slurpfile xs "$tmp/homa_xdp.stream.json" \
	--slurpfile ur "$tmp/homa_udp.rtt.json" --slurpfile us "$tmp/homa_udp.stream.json" \
	--slurpfile nr "$tmp/homa_udp_no_offload.rtt.json" \
	--slurpfile ns "$tmp/homa_udp_no_offload.stream.json" \
	--slurpfile xsr "$tmp/homa_xdp_spin.rtt.json" --slurpfile xss "$tmp/homa_xdp_spin.stream.json" \
	--slurpfile usr "$tmp/homa_udp_spin.rtt.json" --slurpfile uss "$tmp/homa_udp_spin.stream.json" \
	--slurpfile xbr "$tmp/homa_xdp_spin_bounded.rtt.json" \
	--slurpfile xbs "$tmp/homa_xdp_spin_bounded.stream.json" \
	--slurpfile ubr "$tmp/homa_udp_spin_bounded.rtt.json" \
	--slurpfile ubs "$tmp/homa_udp_spin_bounded.stream.json" \
	--slurpfile tr "$tmp/tcp.rtt.json" --slurpfile ts "$tmp/tcp.stream.json" '
	def pick(r; s): first(r[0] | .. | objects | select(has("host_cpu_us_per_rpc"))) as $r
		| first(s[0] | .. | objects | select(has("gbps") and has("p50_us"))) as $s
		| {p50_us: $r.p50_us, p99_us: $r.p99_us,
		   rpcs_per_cpu_sec: (if $r.host_cpu_us_per_rpc > 0 then 1e6 / $r.host_cpu_us_per_rpc else null end),
		   gbps: $s.gbps, host_cpu_us_per_rpc: $r.host_cpu_us_per_rpc,
		   rusage_cpu_us_per_rpc: $r.cpu_us_per_rpc,
		   stream_host_cpu_us_per_msg: $s.host_cpu_us_per_rpc,
		   stream_rusage_cpu_us_per_msg: $s.cpu_us_per_rpc};
	{homa_xdp: pick($xr; $xs), homa_udp: pick($ur; $us), homa_udp_no_offload: pick($nr; $ns),
	 homa_xdp_spin: pick($xsr; $xss), homa_udp_spin: pick($usr; $uss),
	 homa_xdp_spin_bounded: pick($xbr; $xbs), homa_udp_spin_bounded: pick($ubr; $ubs),
	 tcp: pick($tr; $ts), xdp_mode: $mode}' >"$out"
echo "bench-xdp: $out (veth, AF_XDP $mode mode, ${secs} s per figure, $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
jq -r 'def r2: if type == "number" then (. * 100 | round / 100) else "-" end;
	def fields: ("p50_us", "p99_us", "rpcs_per_cpu_sec", "gbps", "host_cpu_us_per_rpc",
		"rusage_cpu_us_per_rpc", "stream_host_cpu_us_per_msg", "stream_rusage_cpu_us_per_msg");
	def row(n; o): [n, (o[fields] | r2)];
	def ratio(x; u): if (u // 0) > 0 and x != null then (x / u) else null end;
	["arm", "p50_us", "p99_us", "rpcs/cpu-s", "gbps", "host_cpu/rpc", "rusage_cpu/rpc",
	 "stream_host_cpu/msg", "stream_rusage_cpu/msg"],
	row("homa_xdp"; .homa_xdp), row("homa_udp"; .homa_udp),
	row("homa_udp_no_offload"; .homa_udp_no_offload), row("homa_xdp_spin"; .homa_xdp_spin),
	row("homa_udp_spin"; .homa_udp_spin), row("homa_xdp_spin_bounded"; .homa_xdp_spin_bounded),
	row("homa_udp_spin_bounded"; .homa_udp_spin_bounded), row("tcp"; .tcp),
	((["xdp/udp", .homa_xdp, .homa_udp], ["xdp/udp_no_offload", .homa_xdp, .homa_udp_no_offload],
	  ["xdp_spin/udp_spin", .homa_xdp_spin, .homa_udp_spin],
	  ["xdp_spin_bounded/udp_spin_bounded", .homa_xdp_spin_bounded, .homa_udp_spin_bounded],
	  ["xdp/tcp", .homa_xdp, .tcp], ["xdp_spin_bounded/tcp", .homa_xdp_spin_bounded, .tcp])
		| .[1] as $x | .[2] as $u | [.[0]] + [fields as $f | ratio($x[$f]; $u[$f]) | r2])
	| @tsv' "$out" | column -t
