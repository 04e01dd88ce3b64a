#!/bin/bash
# System calls by name and context switches per thread, per RPC, of a
# homa-bench server and closed-loop client of one arm on loopback (Homa
# with compare's loopback settings), counted by `perf stat --per-thread`
# over a window in the middle of the run; the RPCs of the window come
# from the server's control port ("stat").
#   tools/bench/wakeups.sh BUILD ARM rtt|rate [SECONDS]
# ARM: homa, tcp or udp (udp: rtt only). Needs perf and root.
set -eu
B=$1/homa-bench arm=$2 scen=$3 secs=${4:-3}
case $scen in
  rtt) load="--workload 100 --outstanding 1"; extra="" ;;
  rate) load="--workload 100 --outstanding 32"; extra="--conns 4" ;;
  *) echo "scenario must be rtt or rate" >&2; exit 2 ;;
esac
[ "$arm" = homa ] && extra="--homa-mtu 65000 --homa-link-gbps 400 --homa-unsched-bytes 600000 --homa-max-incoming 400000"
port=$(( 30000 + $$ % 5000 )) ctl=$(( 35000 + $$ % 5000 ))
out=$(mktemp -d) srv= cli=
trap '[ -n "$cli" ] && kill -INT $cli 2>/dev/null; [ -n "$srv" ] && kill -INT $srv 2>/dev/null; rm -rf "$out"' EXIT
# shellcheck disable=SC2086
"$B" server --transport "$arm" --port $port --ctl-port $ctl $extra >/dev/null 2>&1 &
srv=$!
sleep 1
# shellcheck disable=SC2086
"$B" client --transport "$arm" --servers 127.0.0.1:$port --ctl-port -1 $load $extra \
  --duration $((secs + 3)) --quiet >/dev/null 2>&1 &
cli=$!
sleep 1.5
stat() { exec 3<>/dev/tcp/127.0.0.1/$ctl; echo stat >&3; read -r a b _ <&3; exec 3<&-; echo "$b"; }
ev="-e raw_syscalls:sys_enter -e context-switches"
for s in ppoll poll sendmmsg recvmmsg timerfd_settime read write futex epoll_wait epoll_pwait \
  epoll_pwait2 recvfrom sendto sendmsg recvmsg writev clock_nanosleep; do ev="$ev -e syscalls:sys_enter_$s"; done
ls /proc/$srv/task > "$out/srv-tids"
export -f stat
export ctl out secs
# shellcheck disable=SC2086
perf stat --per-thread -x, $ev -p $srv,$cli -o "$out/all" -- \
  bash -c 'stat > "$out/r0"; sleep "$secs"; stat > "$out/r1"'
n=$(( $(cat "$out/r1") - $(cat "$out/r0") ))
echo "$arm $scen: $n RPCs in the ${secs} s window ($(cut -d' ' -f1-3 /proc/loadavg))"
for side in srv cli; do
  awk -F, -v n="$n" -v side="$side" -v tids="$(tr '\n' ' ' < "$out/srv-tids")" '
    BEGIN { split(tids, a, " "); for (i in a) srvtid[a[i]] = 1 }
    $2 + 0 > 0 { tid = $1; sub(/.*-/, "", tid); if ((tid in srvtid) != (side == "srv")) next
      ev = $4; sub(/.*sys_enter_/, "", ev); sub(/raw_syscalls:sys_enter/, "ALL", ev)
      sub(/context-switches/, "CSW", ev); t = $1; sub(/-[0-9]+$/, "", t)
      v[t, ev] += $2; th[t] = 1; evs[ev] = 1 }
    END { for (t in th) { printf "  %s %-14s", side, t
        if (v[t, "ALL"] + v[t, "CSW"] == 0) { print " idle"; continue }
        printf " syscalls %.2f, switches %.2f |", v[t, "ALL"] / n, v[t, "CSW"] / n
        for (e in evs) if (e != "ALL" && e != "CSW" && v[t, e] / n >= 0.005) printf " %s %.2f", e, v[t, e] / n
        print "" } }' "$out/all"
done
