#!/bin/bash
# System calls per RPC of homa-bench's server and client on loopback, by
# call, counted with perf's syscall tracepoints (docs/RESULTS.md section 11).
#   tools/bench/syscalls.sh BUILD TRANSPORT RATE WORKLOAD [SECONDS]
# e.g. tools/bench/syscalls.sh build homa 2000 100
# Needs perf (linux-perf) and root (tracepoints). Uses ports 5100/5101.
set -eu
B=$1/homa-bench t=$2 rate=$3 wl=$4 secs=${5:-5}
out=$(mktemp -d)
trap 'pkill -INT -f "homa-bench server --transport $t --port 5100" 2>/dev/null || true; rm -rf "$out"' EXIT
calls="ppoll sendmmsg recvmmsg timerfd_settime read write futex epoll_wait epoll_pwait epoll_pwait2 recvfrom writev sendto sendmsg recvmsg"
ev=""
for s in $calls; do ev="$ev -e syscalls:sys_enter_$s"; done
# shellcheck disable=SC2086
perf stat $ev -x, -o "$out/srv" "$B" server --transport "$t" --port 5100 --ctl-port -1 \
	>/dev/null 2>&1 &
sleep 1
# shellcheck disable=SC2086
perf stat $ev -x, -o "$out/cli" "$B" client --transport "$t" --servers 127.0.0.1:5100 \
	--ctl-port -1 --workload "$wl" --rate "$rate" --duration "$secs" --quiet \
	--json "$out/cli.json" >/dev/null 2>&1
pkill -INT -f "homa-bench server --transport $t --port 5100" || true
wait
n=$(jq .rpcs "$out/cli.json")
echo "$t: $n RPCs, client $(jq -c '{p50_us, p99_us, client_cpu_us_per_rpc}' "$out/cli.json")"
for side in srv cli; do
	awk -F, -v n="$n" -v side="$side" 'BEGIN { printf "%s per RPC:", side }
		$1 + 0 > 0 { split($3, a, "sys_enter_"); printf " %s %.2f", a[2], $1 / n; tot += $1 }
		END { printf " | all %.2f\n", tot / n }' "$out/$side"
done
