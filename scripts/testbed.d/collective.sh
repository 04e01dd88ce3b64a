# testbed.d/collective.sh: `scripts/testbed run collective`, the AI-cluster
# measure (docs/COLLECTIVE.md). Sourced by scripts/testbed after bench.sh.
# Every host is an emulated accelerator: a homa-bench server receives for
# it and a homa-bench device computes and sends; the devices of a run share
# a step board file in /dev/shm. Each pattern runs alone and beside
# background bulk traffic (each host sends 2 MB messages, open loop, to the
# host half the ring away, at a share of the link rate), Homa against TCP
# cubic and bbr, one arm after the other.
#
# Every host's NIC sends at the link rate during the run (TB_COLL_NIC=on,
# the default, one FIFO; prio: the switch port's eight DSCP priority
# queues; off keeps the testbed's --nic setting; a list such as on,prio
# runs every case under each), as a real host's does.
# With one FIFO a host's Homa processes (server, device, background
# client) each pace to the whole link, and the background's scheduled DATA
# took 7-32 KB of the busiest server's uplink while it answered a step's
# lookups; with the priority queues the answers go first, but all-to-all's
# P99 step was longer (182-186 against 132-167 ms, docs/COLLECTIVE.md). Unshaped (a testbed up with --nic off)
# a host's veth sends at any rate, so a TCP host answered lookups or sent its all-to-all share to several
# switch ports at once, up to 7x the link rate, while Homa's pacer holds
# each host to the link rate it is given (lookups alone: TCP bbr's
# communication per step 16.4 ms without the NIC limit, 23.3 ms with it;
# Homa's 23.1 and 25.2).
#
# A Homa host is one process (TB_COLL_HOST=one, the default): the
# device's socket is also the host's server (--serve-port) and sends the
# host's background (--bg-peer), so one engine paces everything the host
# sends, shortest message first, as the Linux module does for all the
# sockets of a host. With TB_COLL_HOST=apart the server, the device and
# the background client are three processes, three engines each pacing
# at the full link rate into the one NIC queue: the background's 2 MB
# messages then take about half the link from a step's messages whenever
# they run (the step's last all-to-all message was in flight 65.5 ms P50
# beside 50% background against 50.7 ms alone). TCP's hosts are always
# the three processes: the kernel is one stack per host already.
#
# TB_COLL_MODE picks the length: quick (the default) runs 30 steps after 2
# warm-up, all-reduce beside background 10 after 1 (its TCP steps last
# seconds); full runs 100 after 5 in every case. TB_COLL_STEPS and
# TB_COLL_WARMUP_STEPS, when set, override the mode in every case.

: "${TB_COLL_MODE:=quick}"
: "${TB_COLL_PATTERNS:=alltoall,allreduce,lookups}"
: "${TB_COLL_BG:=0,50}"
: "${TB_COLL_STEPS:=}"
: "${TB_COLL_WARMUP_STEPS:=}"
: "${TB_COLL_COMPUTE_US:=50000}"
: "${TB_COLL_MSG:=16K}"
: "${TB_COLL_LOOKUPS:=16}"
: "${TB_COLL_BG_MSG:=2M}"
: "${TB_COLL_RT:=10}"
: "${TB_COLL_NIC:=on}"
: "${TB_COLL_HOST:=one}"

COLL_BOARD=""
COLL_GATE=""
COLL_NIC_SHAPED=()

# Background bulk traffic beside arm ARM (homa, tcp-cubic or tcp-bbr):
# every host i sends TB_COLL_BG_MSG messages to host i + N/2, open loop,
# PCT percent of the link rate, into the devices' servers; until killed.
coll_bg_start() {
  local arm=$1 dir=$2 pct=$3 i n=$TB_HOSTS b gbps flags
  b=$(bench_bin)
  flags=$(arm_flags "${arm%%+*}")
  gbps=$(awk -v m="$TB_RATE_MBIT" -v f="$pct" 'BEGIN { printf "%.6g", m * f / 100 / 1000 }')
  for ((i = 0; i < n; i++)); do
    # shellcheck disable=SC2086
    ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" \
      ${HOST_RT[@]+"${HOST_RT[@]}"} "$b" client $flags --servers "$(server_list "$arm" $(((i + n / 2) % n)))" \
      --ctl-port -1 --workload "$TB_COLL_BG_MSG" --load-gbps "$gbps" --duration 3600 --warmup 0 \
      --seed $((i + 101)) --quiet >"$dir/bg-h$i.log" 2>&1 &
    BULK_PIDS+=($!)
  done
  sleep 2
}

# Prints "STEPS WARMUP" of pattern P beside background PCT: TB_COLL_STEPS and
# TB_COLL_WARMUP_STEPS if set, else those of TB_COLL_MODE (quick or full).
coll_steps() {
  local p=$1 pct=$2 n w
  case "$TB_COLL_MODE" in
    full) n=100 w=5 ;;
    quick) n=30 w=2; [[ $p == allreduce ]] && ((pct > 0)) && n=10 w=1 ;;
    *) die "TB_COLL_MODE must be quick or full, not '$TB_COLL_MODE'" ;;
  esac
  echo "${TB_COLL_STEPS:-$n} ${TB_COLL_WARMUP_STEPS:-$w}"
}

# Starts device I of pattern P, STEPS steps after WARM warm-up; rank 0
# writes DIR/device.json, every device its messages to DIR/msgs-hI.txt. B is homa-bench, FLAGS the arm's
# flags (and HOST, if given, the host's own: coll_host_flags) and ALL every device's server: computed once per arm by the caller,
# since on a loaded machine each subshell here delayed the next device's
# start (eight took over a minute). The device opens its transport and
# waits for COLL_GATE before its first step.
coll_device_start() {
  local i=$1 dir=$2 p=$3 steps=$4 warm=$5 b=$6 flags=$7 all=$8 host=${9:-}
  local js=""
  ((i == 0)) && js="--json $dir/device.json"
  # shellcheck disable=SC2086
  ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" \
    ${HOST_RT[@]+"${HOST_RT[@]}"} "$b" device $flags $host --pattern "$p" --servers "$all" --rank "$i" \
    --sync "$COLL_BOARD" --start-file "$COLL_GATE" --steps "$steps" --warmup-steps "$warm" \
    --compute-us "$TB_COLL_COMPUTE_US" --msg-bytes "$TB_COLL_MSG" --lookups "$TB_COLL_LOOKUPS" \
    --step-timeout 60 --seed $((i + 1)) --msg-log "$dir/msgs-h$i.txt" $js \
    --quiet >"$dir/device-h$i.log" 2>&1 &
  BG_PIDS+=($!)
}

# Prints the flags that make device I of ARM its whole host (TB_COLL_HOST=one,
# the homa arm only; the arm homa+apart is Homa with the host's three
# processes, to run both host models side by side in one run): it serves on the arm's port and, with PCT > 0, sends the
# host's background (TB_COLL_BG_MSG messages to host I + N/2 at PCT percent
# of the link, as coll_bg_start's client would). Nothing otherwise.
coll_host_flags() {
  local arm=$1 i=$2 pct=$3 gbps
  [[ $TB_COLL_HOST == one && $arm == homa ]] || return 0
  printf -- '--serve-port %s' "$(arm_port "$arm")"
  ((pct > 0)) || return 0
  gbps=$(awk -v m="$TB_RATE_MBIT" -v f="$pct" 'BEGIN { printf "%.6g", m * f / 100 / 1000 }')
  printf -- ' --bg-peer %d --bg-gbps %s --bg-bytes %s' $(((i + TB_HOSTS / 2) % TB_HOSTS)) "$gbps" \
    "$TB_COLL_BG_MSG"
}

# Appends "PHASE SECONDS" to DIR/phases.txt: seconds since the previous
# phase of the arm (COLL_T), so an arm's start and stop cost is visible.
coll_phase() {
  local now=$EPOCHREALTIME
  awk -v p="$2" -v a="$COLL_T" -v b="$now" 'BEGIN { printf "%s %.2f\n", p, b - a }' >>"$1/phases.txt"
  COLL_T=$now
}

# One arm of one case: servers, the devices, background (if PCT > 0), then
# the start. The devices start before the background, on a CPU still free
# (beside Homa's background, starting eight took 19-59 s), and wait for the
# gate file, created once the background runs. The background stops before
# the queue sampler: beside Homa background on a saturated host CPU the
# niced sampler took 15 s to stop, 1 s after it. The device of host 0
# reports the hosts' busy CPU over the steps (wall time x host CPUs minus
# /proc/stat idle and iowait) beside the devices' getrusage. Every process
# of the hosts runs SCHED_FIFO at TB_COLL_RT (0: at TB_NICE): at nice -10
# beside the machine's other jobs (load 25) a Homa device waited 11 ms in
# CPU 0's run queue per wake-up and lookup steps grew by 100-350 ms.
coll_arm() {
  local arm=$1 dir=$2 p=$3 pct=$4 base=${1%%+*} i ad="$2/$1" steps warm t0=$SECONDS
  # shellcheck disable=SC2034 # read by host_rt (bench.sh)
  local TB_HOST_RT=$TB_COLL_RT HOST_RT
  host_rt
  read -r steps warm <<<"$(coll_steps "$p" "$pct")"
  mkdir -p "$ad"
  BULK_PIDS=()
  COLL_T=$EPOCHREALTIME
  : >"$ad/phases.txt"
  log "collective $p, background ${pct}%: arm $arm, $steps steps after $warm warm-up"
  qwatch_spawn "$ad/queues.json"
  local one=0
  [[ -n $(coll_host_flags "$arm" 0 0) ]] && one=1
  ((one)) || servers_start "$base" "$ad" $(seq 0 $((TB_HOSTS - 1)))
  coll_phase "$ad" servers
  COLL_BOARD=$(mktemp /dev/shm/homa-coll.XXXXXX)
  COLL_GATE="$COLL_BOARD.go"
  : >"$COLL_BOARD"
  rm -f "$COLL_GATE"
  local b flags all
  b=$(bench_bin)
  flags=$(arm_flags "$base")
  all=$(server_list "$base" $(seq 0 $((TB_HOSTS - 1))))
  for ((i = 0; i < TB_HOSTS; i++)); do
    coll_device_start "$i" "$ad" "$p" "$steps" "$warm" "$b" "$flags" "$all" \
      "$(coll_host_flags "$arm" "$i" "$pct")"
  done
  coll_phase "$ad" devices-started
  # one process per host: the devices send the background from their start;
  # give it the 2 s coll_bg_start gives its clients before the first step
  if ((pct > 0)); then
    if ((one)); then sleep 2; else coll_bg_start "$base" "$ad" "$pct"; fi
    coll_phase "$ad" background
  fi
  qwatch_wait "$ad/queues.json"
  coll_phase "$ad" qwatch-ready
  : >"$COLL_GATE"
  local rc=0
  wait_bg || rc=1
  coll_phase "$ad" devices-done
  bulk_stop
  coll_phase "$ad" background-stop
  qwatch_stop
  coll_phase "$ad" qwatch-stop
  servers_stop
  coll_phase "$ad" servers-stop
  rm -f "$COLL_BOARD" "$COLL_GATE"
  COLL_BOARD=""
  COLL_GATE=""
  ((rc == 0)) || log "warning: a device of $arm failed (see $ad/device-h*.log)"
  log "collective $p, background ${pct}%: arm $arm took $((SECONDS - t0)) s"
}

# Shapes every host's NIC at the link rate (tb_shape_nic_prio, eight
# priority queues, or tb_shape_nic, one FIFO, each of TB_NIC_BUFFER bytes)
# for NIC mode MODE (prio or on; off shapes nothing) when the testbed's
# NICs are not shaped already, first removing what an earlier mode of the
# run added (a root qdisc left on a host's eth0 by a killed run is also
# replaced); COLL_NIC_SHAPED lists the hosts shaped so far, so
# coll_nic_unshape (also called by on_exit) undoes exactly those.
coll_nic_shape() {
  local mode=$1 i
  coll_nic_check "$mode"
  coll_nic_unshape
  [[ $mode != off && $TB_NIC == off ]] || return 0
  for ((i = 0; i < TB_HOSTS; i++)); do
    COLL_NIC_SHAPED+=("$i")
    # a run killed outright (SIGKILL) leaves its shaping: replace it
    ip netns exec "$(tb_host_ns "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
    if [[ $mode == prio ]]; then tb_shape_nic_prio "$i"; else tb_shape_nic "$i"; fi
  done
  log "collective: host NICs shaped at ${TB_RATE_MBIT} Mbit/s ($mode)"
}

# Dies unless MODE is a NIC mode: prio, on or off.
coll_nic_check() {
  [[ $1 =~ ^(prio|on|off)$ ]] || die "TB_COLL_NIC must be prio, on or off, not '$1'"
}

# Removes the NIC shaping coll_nic_shape added (the testbed's own, with
# --nic on, stays); errors are ignored, a host may be gone already.
coll_nic_unshape() {
  local i
  for i in ${COLL_NIC_SHAPED[@]+"${COLL_NIC_SHAPED[@]}"}; do
    ip netns exec "$(tb_host_ns "$i")" tc qdisc del dev eth0 root 2>/dev/null || true
  done
  COLL_NIC_SHAPED=()
}

# run collective: every pattern x background share x arm, then the tables
# and plots (collective.py) and the steps' last messages (coll_msgs.py)
# in $TB_OUT/collective. With a list of NIC
# modes in TB_COLL_NIC (e.g. on,prio) every case runs its arms under each
# mode in turn, the NICs reshaped between them, into
# $TB_OUT/collective/nic-MODE (tables per mode, one after the other).
exp_collective() {
  local p pct arm nic d="$TB_OUT/collective" cd t0=$SECONDS
  IFS=, read -ra ARMS <<<"$TB_ARMS"
  IFS=, read -ra CPATS <<<"$TB_COLL_PATTERNS"
  IFS=, read -ra CBGS <<<"$TB_COLL_BG"
  IFS=, read -ra CNICS <<<"$TB_COLL_NIC"
  ((TB_HOSTS >= 3)) || die "collective needs at least 3 hosts"
  [[ $TB_COLL_RT =~ ^[0-9]+$ ]] && ((TB_COLL_RT <= 99)) || die "TB_COLL_RT must be a priority 0..99"
  [[ $TB_COLL_HOST =~ ^(one|apart)$ ]] || die "TB_COLL_HOST must be one or apart, not '$TB_COLL_HOST'"
  ((${#CNICS[@]} > 0)) || die "TB_COLL_NIC must be prio, on or off, not ''"
  for nic in "${CNICS[@]}"; do coll_nic_check "$nic"; done
  ((${#CNICS[@]} > 1)) || coll_nic_shape "${CNICS[0]}"
  for pct in "${CBGS[@]}"; do
    for p in "${CPATS[@]}"; do
      for nic in "${CNICS[@]}"; do
        cd=$d
        ((${#CNICS[@]} > 1)) && cd=$d/nic-$nic && coll_nic_shape "$nic"
        mkdir -p "$cd/$p-bg$pct"
        for arm in "${ARMS[@]}"; do coll_arm "$arm" "$cd/$p-bg$pct" "$p" "$pct"; done
      done
    done
  done
  coll_nic_unshape
  if ((${#CNICS[@]} > 1)); then
    : >"$d/summary.md"
    for nic in "${CNICS[@]}"; do
      printf '### host NICs: %s\n\n' "$nic" | tee -a "$d/summary.md"
      { "$TB_PYTHON" "$TB_LIB/collective.py" "$d/nic-$nic" "$TB_RATE_MBIT" "$TB_HOSTS" "${ARMS[@]}"
        "$TB_PYTHON" "$TB_LIB/coll_msgs.py" "$d/nic-$nic" "${ARMS[@]}"; } \
        | tee "$d/nic-$nic/summary.md" | tee -a "$d/summary.md"
    done
  else
    { "$TB_PYTHON" "$TB_LIB/collective.py" "$d" "$TB_RATE_MBIT" "$TB_HOSTS" "${ARMS[@]}"
      "$TB_PYTHON" "$TB_LIB/coll_msgs.py" "$d" "${ARMS[@]}"; } | tee "$d/summary.md"
  fi
  log "collective ($TB_COLL_MODE, NICs $TB_COLL_NIC) took $((SECONDS - t0)) s"
}
