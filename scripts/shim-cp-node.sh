#!/bin/bash
# shim-cp-node.sh CP_NODE BUILD [SECONDS] [SIZE] [ROUNDS]
#
# The Linux Homa module's own benchmark, cp_node (built from HomaModule's
# util/ outside this repository: docs/LINUX_API.md), runs client and
# server on loopback under libhoma-linux.so; homa-bench runs the same
# workload on the same stack (threaded sockets, UDP driver). Workload:
# closed loop, one RPC outstanding, SIZE-byte requests and SIZE-byte
# responses, SECONDS per arm. The arms alternate ROUNDS times. cp_node's
# client runs with --port-receivers 0 (the sending thread waits for each
# response itself, as homa-bench's client does; CP_CLIENT_OPTS overrides,
# e.g. CP_CLIENT_OPTS="" for its default separate receiving thread, whose
# sender spins on the clock while an RPC is outstanding).
#
# Per arm: RPCs/s, RTT P50 and P99 (us), CPU per RPC from getrusage of
# client and server (us), and busy CPU per RPC (wall x CPUs minus the
# idle time of /proc/stat: the whole machine, so other load counts).
# cp_node's client looks up its server as "node1": the script runs it in a
# mount namespace whose /etc/hosts maps node1 to 127.0.0.1 (needs root).
set -euo pipefail
cp_node=$(realpath "$1") build=$(realpath "$2") secs=${3:-10} size=${4:-100} rounds=${5:-2}
shim=$build/src/shim/libhoma-linux.so bench=$build/homa-bench
[ -x "$cp_node" ] && [ -f "$shim" ] && [ -x "$bench" ] || {
	echo "usage: shim-cp-node.sh CP_NODE BUILD [SECONDS] [SIZE] [ROUNDS] (needs $shim, $bench)" >&2
	exit 2
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '127.0.0.1 localhost node0 node1\n' > "$tmp/hosts"
ncpu=$(nproc)
cp_client_opts=${CP_CLIENT_OPTS---port-receivers 0}

# idle_s: the machine's idle + iowait seconds so far.
idle_s() { awk '/^cpu /{print ($5 + $6) / 100}' /proc/stat; }

# measure NAME SERVER_CMD CLIENT_CMD: run both (in the hosts namespace),
# the server under /usr/bin/time, the client for $secs under it too.
measure() {
	local name=$1 srv=$2 cli=$3
	local i0 i1 t0 t1
	i0=$(idle_s); t0=$(date +%s.%N)
	unshare -m bash -c "mount --bind $tmp/hosts /etc/hosts
		/usr/bin/time -f '%U %S' -o $tmp/$name.srv.cpu $srv > $tmp/$name.srv.log 2>&1 &
		sleep 1
		/usr/bin/time -f '%U %S' -o $tmp/$name.cli.cpu $cli > $tmp/$name.cli.log 2>&1
		wait"
	t1=$(date +%s.%N); i1=$(idle_s)
	echo "$t0 $t1 $i0 $i1" > "$tmp/$name.wall"
}

# report NAME RPCS P50 P99: one line with CPU per RPC.
report() {
	local name=$1 rpcs=$2 p50=$3 p99=$4
	local cpu busy
	cpu=$(cat "$tmp/$name.srv.cpu" "$tmp/$name.cli.cpu" | grep -E '^[0-9.]+ [0-9.]+$' |
		awk '{s += $1 + $2} END {print s}')
	busy=$(awk -v n="$ncpu" '{print n * ($2 - $1) - ($4 - $3)}' "$tmp/$name.wall")
	awk -v name="$name" -v r="$rpcs" -v p50="$p50" -v p99="$p99" -v c="$cpu" -v b="$busy" \
		-v s="$secs" 'BEGIN {printf "%-18s %10.0f RPC/s  P50 %8.1f us  P99 %9.1f us  CPU/RPC getrusage %7.1f us  busy %7.1f us\n",
		name, r / s, p50, p99, c * 1e6 / r, b * 1e6 / r}' | tee -a "$tmp/summary"
}

run_cp_node() {
	local name=cp_node_shim_$1
	measure "$name" \
		"env LD_PRELOAD=$shim timeout -s INT $((secs + 3)) $cp_node server --first-port 4000" \
		"env LD_PRELOAD=$shim timeout -s INT $((secs + 1)) $cp_node client --first-port 4000 --workload $size --client-max 1 $cp_client_opts"
	# Per-second lines; the last holds the CDF of the whole run.
	local rpcs p50 p99
	rpcs=$(grep -o 'clients: [0-9.]* Kops/sec' "$tmp/$name.cli.log" | awk '{s += $2 * 1000} END {print s}')
	p50=$(grep -o 'P50 [0-9.]*' "$tmp/$name.cli.log" | tail -1 | awk '{print $2}')
	p99=$(grep -o 'P99 [0-9.]*' "$tmp/$name.cli.log" | tail -1 | awk '{print $2}')
	grep -iE 'error|fatal|not supported' "$tmp/$name."*log >&2 || true
	report "$name" "$rpcs" "$p50" "$p99"
}

run_bench() {
	local name=homa_bench_$1
	measure "$name" \
		"timeout -s INT $((secs + 4)) $bench server --port 4100 --threaded --quiet" \
		"$bench client --servers 127.0.0.1:4100 --workload $size --response $size --outstanding 1 --duration $secs --warmup 0 --threaded --quiet"
	local line rpcs p50 p99
	line=$(grep -m1 'RPCs (' "$tmp/$name.cli.log")
	rpcs=$(echo "$line" | awk '{print $2}')
	p50=$(grep -m1 'latency us' "$tmp/$name.cli.log" | awk '{print $4}')
	p99=$(grep -m1 'latency us' "$tmp/$name.cli.log" | awk '{print $6}')
	report "$name" "$rpcs" "$p50" "$p99"
}

echo "workload: closed loop, 1 outstanding, $size B requests and responses, $secs s per arm, $ncpu CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); cp_node client options: ${cp_client_opts:-none}"
for r in $(seq 1 "$rounds"); do
	run_cp_node "$r"
	run_bench "$r"
done
# Ratios of the medians (cp_node under the shim / homa-bench).
awk '{rate[$1 ~ /^cp/] = rate[$1 ~ /^cp/] " " $2; p50[$1 ~ /^cp/] = p50[$1 ~ /^cp/] " " $5
	p99[$1 ~ /^cp/] = p99[$1 ~ /^cp/] " " $8; cpu[$1 ~ /^cp/] = cpu[$1 ~ /^cp/] " " $12
	busy[$1 ~ /^cp/] = busy[$1 ~ /^cp/] " " $15}
function med(s,   a, n, i, j, t) { n = split(s, a, " "); for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
END { printf "ratios cp_node+shim / homa-bench (medians): RPC/s %.2f  P50 %.2f  P99 %.2f  CPU/RPC getrusage %.2f  busy %.2f\n",
	med(rate[1]) / med(rate[0]), med(p50[1]) / med(p50[0]), med(p99[1]) / med(p99[0]),
	med(cpu[1]) / med(cpu[0]), med(busy[1]) / med(busy[0]) }' "$tmp/summary"
