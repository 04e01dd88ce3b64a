#!/usr/bin/env bash
# test_harness.sh SRC: pieces of the testbed harness that need no root.
# tb_python (scripts/testbed.d/run.sh) asks `python3` for its interpreter
# once and every later script runs with it, so a slow shim first in PATH
# is paid once per run, not per arm; a given TB_PYTHON is kept.
# coll_phase (collective.sh) writes one line per phase with the seconds
# since the previous one. on_exit (scripts/testbed) ends the processes a
# run started on a testbed it leaves up.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A shim that counts its starts and runs the real interpreter.
real=$(python3 -c 'import sys; print(sys.executable)')
mkdir "$tmp/bin"
cat >"$tmp/bin/python3" <<SH
#!/bin/sh
echo x >>"$tmp/starts"
exec "$real" "\$@"
SH
chmod +x "$tmp/bin/python3"
run() { # prints TB_PYTHON after tb_python, then runs it twice as the scripts do
  PATH="$tmp/bin:$PATH" bash -c "die() { echo \"die: \$*\"; exit 3; }
    source '$src/scripts/testbed.d/run.sh'; tb_python; echo \"\$TB_PYTHON\"
    \"\$TB_PYTHON\" -c pass; \"\$TB_PYTHON\" -c pass"
}
got=$(run)
starts=$(wc -l <"$tmp/starts")
[[ $got == "$real" ]] || { echo "FAIL: TB_PYTHON is '$got', want '$real'"; exit 1; }
[[ $starts == 1 ]] || { echo "FAIL: the shim started $starts times, want once"; exit 1; }
: >"$tmp/starts"
got=$(TB_PYTHON=/bin/true run)
[[ $got == /bin/true && ! -s $tmp/starts ]] || { echo "FAIL: a given TB_PYTHON was not kept ('$got')"; exit 1; }
# coll_phase: "PHASE SECONDS" since the previous phase, appended.
out=$(bash -c "source '$src/scripts/testbed.d/collective.sh'; COLL_T=\$EPOCHREALTIME
  coll_phase '$tmp' first; sleep 0.2; coll_phase '$tmp' second; cat '$tmp/phases.txt'")
awk 'NR == 1 && $1 == "first" && $2 < 0.2 { ok++ } NR == 2 && $1 == "second" && $2 >= 0.2 { ok++ }
     END { exit !(ok == 2 && NR == 2) }' <<<"$out" || { echo "FAIL: phases.txt is '$out'"; exit 1; }
# coll_arm: the devices start before the background (on a CPU it does not
# keep busy yet) and wait for the gate file, which appears only after the
# background started; the board and the gate are gone afterwards. Every
# host process runs SCHED_FIFO at TB_COLL_RT (chrt), or normally with 0.
# With TB_COLL_HOST=one (the default) a Homa host is its device alone: no
# server or background process starts, the device serves on Homa's port
# and sends the host's background to the host half the ring away; TCP
# arms and the arm homa+apart keep their three processes per host.
coll_order() { # RT [HOST [ARM]]: prints the order of coll_arm's steps with TB_COLL_RT=RT
  TB_HOSTS=3 TB_RATE_MBIT=20 TB_COLL_MODE=quick TB_COLL_RT=$1 TB_COLL_HOST=${2:-apart} bash -c "set -u
  source '$src/scripts/testbed.d/bench.sh'; source '$src/scripts/testbed.d/collective.sh'
  log() { :; }; qwatch_spawn() { :; }; qwatch_wait() { :; }; qwatch_stop() { :; }
  bench_bin() { echo b; }; arm_flags() { :; }; server_list() { :; }
  servers_start() { host_rt; echo servers \${HOST_RT[*]}; }; servers_stop() { :; }; bulk_stop() { :; }
  coll_device_start() { [[ -e \${COLL_GATE:-/nonexistent} ]] && echo device-gate-open || echo device \${HOST_RT[*]}\${9:+ \$9}; }
  sleep() { echo sleep \$1; }
  coll_bg_start() { [[ -e \${COLL_GATE:-/nonexistent} ]] && echo background-gate-open || echo background; }
  wait_bg() { [[ -e \${COLL_GATE:-/nonexistent} ]] && echo gate >&3; echo \$COLL_BOARD \${COLL_GATE:-} >'$tmp/files'; }
  coll_arm ${3:-homa} '$tmp' lookups 50 3>&1"
}
order=$(coll_order 10)
want=$'servers chrt -f 10\ndevice chrt -f 10\ndevice chrt -f 10\ndevice chrt -f 10\nbackground\ngate'
[[ $order == "$want" ]] || { echo "FAIL: coll_arm's order is '${order//$'\n'/ / }'"; exit 1; }
read -ra files <"$tmp/files"
for f in "${files[@]}"; do
  [[ ! -e $f ]] || { echo "FAIL: coll_arm left $f"; exit 1; }
done
order=$(coll_order 0)
[[ $order == $'servers\ndevice\ndevice\ndevice\nbackground\ngate' ]] \
  || { echo "FAIL: with TB_COLL_RT=0 coll_arm's order is '${order//$'\n'/ / }'"; exit 1; }
order=$(coll_order 10 one)
want=$'device chrt -f 10 --serve-port 4000 --bg-peer 1 --bg-gbps 0.01 --bg-bytes 2M
device chrt -f 10 --serve-port 4000 --bg-peer 2 --bg-gbps 0.01 --bg-bytes 2M
device chrt -f 10 --serve-port 4000 --bg-peer 0 --bg-gbps 0.01 --bg-bytes 2M\nsleep 2\ngate'
[[ $order == "$want" ]] || { echo "FAIL: TB_COLL_HOST=one: coll_arm's order is '${order//$'\n'/ / }'"; exit 1; }
for arm in homa+apart tcp-bbr; do
  order=$(coll_order 0 one $arm)
  [[ $order == $'servers\ndevice\ndevice\ndevice\nbackground\ngate' ]] \
    || { echo "FAIL: TB_COLL_HOST=one, arm $arm: coll_arm's order is '${order//$'\n'/ / }'"; exit 1; }
done
got=$(TB_COLL_HOST=both bash -c "source '$src/scripts/testbed.d/collective.sh'; die() { echo \"die: \$*\"; exit 0; }
  TB_HOSTS=3 TB_ARMS=homa exp_collective" 2>&1)
[[ $got == "die: TB_COLL_HOST must be one or apart, not 'both'" ]] || { echo "FAIL: TB_COLL_HOST=both: '$got'"; exit 1; }
# exp_collective: every host's NIC is shaped at the link rate before the
# first arm (a root qdisc left by a killed run replaced), with one FIFO by
# default (on) or the eight DSCP priority queues (prio), and unshaped
# after the last; not with TB_COLL_NIC=off or on a testbed up with --nic
# on (its own shaping stays); an unknown TB_COLL_NIC is refused.
coll_nic() { # NIC COLL_NIC: prints exp_collective's NIC steps and arms
  TB_HOSTS=3 TB_NIC=$1 TB_COLL_NIC=$2 TB_ARMS=homa,tcp-bbr TB_COLL_PATTERNS=lookups TB_COLL_BG=0 \
    TB_RATE_MBIT=20 TB_LIB=/nonexistent TB_OUT="$tmp/out" TB_PYTHON=true bash -c "set -eu
  die() { echo \"die: \$*\"; exit 3; }
  source '$src/scripts/testbed.d/bench.sh'; source '$src/scripts/testbed.d/collective.sh'
  log() { :; }; tb_host_ns() { echo ns\$1; }
  ip() { echo \"\$3 \${*:4}\"; }; tb_shape_nic() { echo shape \$1; }
  tb_shape_nic_prio() { echo prio \$1; }
  coll_arm() { echo arm \$1; }
  exp_collective" 2>&1 || true
}
del=$'tc qdisc del dev eth0 root'
want="ns0 $del"$'\nshape 0\n'"ns1 $del"$'\nshape 1\n'"ns2 $del"$'\nshape 2\narm homa\narm tcp-bbr\n'
want+="ns0 $del"$'\n'"ns1 $del"$'\n'"ns2 $del"
got=$(coll_nic off on)
[[ $got == "$want" ]] || { echo "FAIL: exp_collective's NIC steps are '${got//$'\n'/ / }'"; exit 1; }
got=$(TB_COLL_NIC='' bash -c "source '$src/scripts/testbed.d/collective.sh'; echo \$TB_COLL_NIC")
[[ $got == on ]] || { echo "FAIL: TB_COLL_NIC defaults to '$got', want on"; exit 1; }
got=$(coll_nic off prio)
[[ $got == "${want//shape/prio}" ]] || { echo "FAIL: TB_COLL_NIC=prio's NIC steps are '${got//$'\n'/ / }'"; exit 1; }
got=$(coll_nic off off)
[[ $got == $'arm homa\narm tcp-bbr' ]] || { echo "FAIL: with TB_COLL_NIC=off: '${got//$'\n'/ / }'"; exit 1; }
got=$(coll_nic on on)
[[ $got == $'arm homa\narm tcp-bbr' ]] || { echo "FAIL: on a testbed with --nic on: '${got//$'\n'/ / }'"; exit 1; }
got=$(coll_nic off yes)
[[ $got == "die: TB_COLL_NIC must be prio, on or off, not 'yes'" ]] || { echo "FAIL: TB_COLL_NIC=yes: '$got'"; exit 1; }
# A list of NIC modes: each case runs its arms under every mode in turn,
# the NICs reshaped between modes (the earlier mode's shaping removed
# first), into collective/nic-MODE/CASE; one bad mode in the list is refused
# before any arm runs.
coll_nics() { # COLL_NIC: prints exp_collective's NIC steps, arms and folders
  TB_HOSTS=3 TB_NIC=off TB_COLL_NIC=$1 TB_ARMS=homa TB_COLL_PATTERNS=lookups,alltoall TB_COLL_BG=50 \
    TB_RATE_MBIT=20 TB_LIB=/nonexistent TB_OUT="$tmp/outs" TB_PYTHON=true bash -c "set -eu
  die() { echo \"die: \$*\"; exit 3; }
  source '$src/scripts/testbed.d/bench.sh'; source '$src/scripts/testbed.d/collective.sh'
  log() { :; }; tb_host_ns() { echo ns\$1; }
  ip() { [[ \$4 == tc ]] && echo del \$3; }; tb_shape_nic() { echo shape \$1; }
  tb_shape_nic_prio() { echo prio \$1; }
  coll_arm() { echo arm \$1 \${2#$tmp/outs/collective/}; }
  exp_collective" 2>&1 || true
}
got=$(coll_nics on,prio)
want=""
for c in lookups alltoall; do
  [[ $c == alltoall ]] && want+=$'del ns0\ndel ns1\ndel ns2\n'
  want+=$'del ns0\nshape 0\ndel ns1\nshape 1\ndel ns2\nshape 2\n'"arm homa nic-on/$c-bg50"$'\n'
  want+=$'del ns0\ndel ns1\ndel ns2\ndel ns0\nprio 0\ndel ns1\nprio 1\ndel ns2\nprio 2\n'"arm homa nic-prio/$c-bg50"$'\n'
done
want+=$'del ns0\ndel ns1\ndel ns2\n### host NICs: on\n\n### host NICs: prio'
[[ $got == "$want" ]] || { echo "FAIL: TB_COLL_NIC=on,prio's steps are '${got//$'\n'/ / }'"; exit 1; }
for c in lookups alltoall; do
  for m in on prio; do
    [[ -d $tmp/outs/collective/nic-$m/$c-bg50 ]] || { echo "FAIL: no folder nic-$m/$c-bg50"; exit 1; }
  done
done
got=$(coll_nics on,fast)
[[ $got == "die: TB_COLL_NIC must be prio, on or off, not 'fast'" ]] || { echo "FAIL: TB_COLL_NIC=on,fast: '$got'"; exit 1; }
# tb_shape_nic_prio: the host's eth0 at the link rate, Homa priority P
# (DSCP P<<5) in class 1:1P served at HTB prio 7-P, so priority 7 goes
# first and TCP (DSCP 0) shares the lowest class.
got=$(TB_RATE_MBIT=20 TB_MTU=1500 TB_BURST=2k TB_NIC_BUFFER=100000 bash -c "
  source '$src/scripts/testbed.d/net.sh'; ip() { echo \"\${*:4}\"; }; tb_shape_nic_prio 2")
for p in 0 1 2 3 4 5 6 7; do
  grep -qx "tc class add dev eth0 parent 1:1 classid 1:1$p htb rate 8kbit ceil 20mbit burst 2k cburst 2k prio $((7 - p)) quantum 1514" <<<"$got" \
    && grep -qx "tc qdisc add dev eth0 parent 1:1$p handle 1$p: bfifo limit 100000" <<<"$got" \
    && grep -qx "tc filter add dev eth0 parent 1: protocol ip prio $((10 + p)) u32 match ip tos $((p << 5)) 0xe0 flowid 1:1$p" <<<"$got" \
    || { echo "FAIL: tb_shape_nic_prio's priority $p: '${got//$'\n'/ / }'"; exit 1; }
done
grep -qx "tc class add dev eth0 parent 1: classid 1:1 htb rate 20mbit ceil 20mbit burst 2k cburst 2k quantum 1514" <<<"$got" \
  || { echo "FAIL: tb_shape_nic_prio's link class: '${got//$'\n'/ / }'"; exit 1; }
# homa_window_flags: Homa's unscheduled bytes are whole DATA packets (1416
# bytes of data at MTU 1500), so a message a little longer than the window
# does not wait a grant round trip for a piece of its last packet: 1500 us
# at 20 Mbit/s (3750 bytes) gives three packets. A GRANT adds the whole
# window (the grant step is the unscheduled bytes).
win() { TB_RATE_MBIT=$1 TB_HOMA_UNSCHED_US=$2 TB_HOMA_INCOMING_US=16000 TB_MTU=1500 bash -c "
  source '$src/scripts/testbed.d/bench.sh'; homa_window_flags"; }
got=$(win 20 1500)
[[ $got == "--homa-unsched-bytes 4248 --homa-grant-step 4248 --homa-max-incoming 40000" ]] || { echo "FAIL: homa_window_flags gave '$got'"; exit 1; }
got=$(win 20 100)
[[ $got == "--homa-unsched-bytes 2832 --homa-grant-step 2832 --homa-max-incoming 40000" ]] || { echo "FAIL: homa_window_flags (short) gave '$got'"; exit 1; }
got=$(win 1000 1500)
[[ $got == "--homa-unsched-bytes 188328 --homa-grant-step 188328 --homa-max-incoming 2000000" ]] || { echo "FAIL: homa_window_flags (1 Gbit/s) gave '$got'"; exit 1; }
got=$(win 20 0)
[[ $got == "--homa-max-incoming 40000" ]] || { echo "FAIL: homa_window_flags (engine's window) gave '$got'"; exit 1; }
# on_exit: a server and a device left running by a failed run end with it,
# and on a testbed left up the NIC shaping of a collective run is removed.
sleep 60 & s1=$!
sleep 60 & s2=$!
sed -n '/^on_exit() {/,/^}/p' "$src/scripts/testbed" >"$tmp/on_exit.sh"
bash -c "set -u; source '$tmp/on_exit.sh'; CREATED=0 KEEP_UP=0; SERVER_PIDS=($s1) BG_PIDS=($s2)
  coll_nic_unshape() { : >'$tmp/unshaped'; }
  trap on_exit EXIT; exit 1" || true
[[ -e $tmp/unshaped ]] || { echo "FAIL: on_exit left a collective run's NIC shaping"; exit 1; }
end=$((SECONDS + 20))
while { kill -0 $s1 || kill -0 $s2; } 2>/dev/null && ((SECONDS < end)); do sleep 0.1; done
if kill -0 $s1 2>/dev/null || kill -0 $s2 2>/dev/null; then
  kill $s1 $s2 2>/dev/null
  echo "FAIL: on_exit left the run's processes running"; exit 1
fi
echo "tb_python, coll_phase, coll_arm (both host models), exp_collective NIC shaping (one mode and a list), tb_shape_nic_prio, homa_window_flags, on_exit: ok"
