# testbed.d/bench.sh: Homa against kernel TCP on the testbed with
# homa-bench. Sourced by scripts/testbed. An arm is homa, tcp-cubic or
# tcp-bbr; every case runs all its arms one after the other on the same
# testbed, and writes DIR/run.json (report.py case) and a plot.

SERVER_PIDS=()
HOMA_PORT=4000
TCP_PORT=5000

bench_bin() {
  local b="${TB_BENCH:-$TB_BUILD/homa-bench}"
  [[ -x $b ]] || die "$b missing (make BUILD=$TB_BUILD builds it, or --build DIR)"
  echo "$b"
}

# Prints the homa-bench transport flags of ARM; exits on an unknown arm.
# homa-xdp is the homa arm over the AF_XDP driver on each host's eth0
# (native XDP on the host's veth; a host's client and server share its
# queue's UMEM, docs/XDP.md). The encrypted arms (homa-psp: Homa with PSP; tcp-tls, tcp-cubic-tls,
# tcp-bbr-tls: TCP with TLS 1.3) use the run's certificates (tb_certs).
arm_flags() {
  case "$1" in
    homa) echo "--transport homa --homa-link-gbps $(gbps_of "$TB_RATE_MBIT") $(homa_window_flags)" \
      "$(homa_tick_flag) $(homa_resend_flag) $TB_HOMA_FLAGS" ;;
    homa-xdp) echo "$(arm_flags homa) --driver xdp --ifname eth0" ;;
    tcp-cubic) echo "--transport tcp --cc cubic" ;;
    tcp-bbr) echo "--transport tcp --cc bbr" ;;
    tcp) echo "--transport tcp" ;;
    homa-psp|tcp-tls|tcp-cubic-tls|tcp-bbr-tls)
      echo "$(arm_flags "$(arm_clear "$1")") --encrypt --certs $(tb_certs)" ;;
    *) die "unknown arm $1 (homa, homa-xdp, tcp-cubic, tcp-bbr, tcp, homa-psp, tcp-tls, tcp-cubic-tls, tcp-bbr-tls)" ;;
  esac
}

# Prints the arm ARM is the encrypted form of (ARM itself if none).
arm_clear() {
  case "$1" in
    homa-psp) echo homa ;;
    *-tls) echo "${1%-tls}" ;;
    *) echo "$1" ;;
  esac
}

# Prints the certificate folder of the encrypted arms, TB_OUT/certs,
# generating it (scripts/gen_certs.sh) the first time. gen_certs.sh
# renames ca.pem into place last, so a folder with ca.pem is complete.
tb_certs() {
  local d="$TB_OUT/certs"
  [[ -s $d/ca.pem ]] || "$TB_LIB/../gen_certs.sh" "$d" >&2 || die "cannot generate certificates in $d"
  echo "$d"
}

# Makes sure, in this shell (a failure ends the run), that ARM's
# certificates exist and are valid for another day, when ARM is encrypted;
# concurrent callers of gen_certs.sh take turns.
tb_certs_check() {
  [[ $(arm_clear "$1") == "$1" ]] && return 0
  "$TB_LIB/../gen_certs.sh" "$TB_OUT/certs" >&2 || die "cannot generate certificates in $TB_OUT/certs"
}

# Prints Homa's timer tick flag (TB_HOMA_TICK_US; 0: the engine's 1 ms).
# Every endpoint with work wakes once per tick, and the hosts' 16 Homa
# processes share one CPU: at 1 ms the ticks alone took most of it
# (docs/RESULTS.md section 3). RESENDs and timeouts count ticks, so
# they scale with it.
homa_tick_flag() {
  [[ $TB_HOMA_TICK_US == 0 ]] || echo "--homa-tick-us $TB_HOMA_TICK_US"
}

# Prints Homa's RESEND interval flag: TB_HOMA_RESEND_US of time in whole
# ticks (at most 1000; homa-bench lengthens the RPC timeout to 20
# intervals); 0 = the engine's 5 ticks; "auto" = twice the time one full
# priority queue of the switch (TB_BUFFER) takes to drain. Data that
# waits in a queue longer than the interval is asked for and sent again, which deepens the queue it waits in: with the
# engine's 50 ms against a 200 ms queue at 20 Mbit/s, the clients resent
# 1.4-10 MB a run, and once an incast's priority-0 queue filled and
# dropped (docs/RESULTS.md section 3).
homa_resend_flag() {
  local us=$TB_HOMA_RESEND_US tick=$TB_HOMA_TICK_US
  [[ $us == 0 ]] && return
  ((tick > 0)) || tick=1000
  awk -v us="$us" -v t="$tick" -v b="$TB_BUFFER" -v m="$TB_RATE_MBIT" 'BEGIN {
    if (us == "auto") us = 2 * b * 8 / m
    n = int((us + t - 1) / t); if (n < 1) n = 1; if (n > 1000) n = 1000
    printf "--homa-resend-ticks %d", n
  }'
}

# Prints Homa's window flags sized to the link: unscheduled bytes about
# TB_HOMA_UNSCHED_US of link time (at least two packets), max_incoming about
# TB_HOMA_INCOMING_US (kept well under the RESEND timer, 5 ticks = 50 ms
# at the testbed's tick, so granted data never waits in a switch queue
# that long; 16 ms carried 8% more bytes than 4 ms at 50 Mbit/s, 32 ms
# no more, with drops: docs/RESULTS.md section 3). A value of 0 for
# either leaves the engine's default (sized for 25 Gbps). The unscheduled
# bytes are whole DATA packets (MTU less 28 bytes of IP and UDP header and
# 56 of Homa's): the engine sends exactly unsched_bytes before the first
# GRANT, so 3750 bytes (1500 us at 20 Mbit/s) sent two full packets and a
# 926-byte piece, and a 4096-byte lookup answer then waited a grant round
# trip for its last 346 bytes, sent at the lowest priority behind the
# background: the last lookup of 31 of 32 steps beside 50% background.
# With unscheduled bytes set, a GRANT moves a window by the whole window
# (--homa-grant-step, the engine's default being a third of it, at least two
# packets): at 20 Mbit/s that is a third fewer GRANTs, each one a wake-up of
# the sender, with the simulated testbed fabric as close to ideal SRPT
# (docs/SIMULATION.md, "GRANT batching").
homa_window_flags() {
  awk -v m="$TB_RATE_MBIT" -v u="$TB_HOMA_UNSCHED_US" -v i="$TB_HOMA_INCOMING_US" -v p="$TB_MTU" 'BEGIN {
    bpus = m / 8                       # bytes per microsecond
    d = p - 28 - 56                    # DATA payload of one packet
    un = int(bpus * u); un = int((un + d - 1) / d) * d; if (un < 2 * d) un = 2 * d
    inc = int(bpus * i); if (inc < 2 * un) inc = 2 * un
    if (u > 0) printf "--homa-unsched-bytes %d --homa-grant-step %d ", un, un
    if (i > 0) printf "--homa-max-incoming %d", inc
  }'
}

# Prints the homa-bench --workload value of WL: W4 and W5 capped at
# TB_MAX_MESSAGE bytes (as the ATC paper truncates them at 1 MB); "mix" is
# testbed.d/mix.txt (95% 200 B, 5% 200 KB); others unchanged.
wl_arg() {
  local wl=$1 f tmp
  if [[ ($wl == w4 || $wl == w5) && $TB_MAX_MESSAGE != 0 ]]; then
    f="$TB_OUT/workloads/$wl-cap$TB_MAX_MESSAGE.txt"
    tmp="$f.$BASHPID"
    mkdir -p "$TB_OUT/workloads"
    # Clients start while later ones call this again: write a private
    # copy and rename it, so no client ever reads a half-written file.
    awk -v m="$TB_MAX_MESSAGE" '/^[0-9]/ { print ($1 > m ? m : $1), $2 }' \
      "$TB_ROOT/workloads/$wl.txt" >"$tmp"
    mv -f "$tmp" "$f"
    echo "file:$f"
  elif [[ $wl == mix ]]; then
    echo "file:$TB_LIB/mix.txt"
  else
    echo "$wl"
  fi
}

# Prints the seconds of WL's measurement window: --duration, or longer when
# TB_WINDOW_MSGS link times of WL's largest message (as wl_arg caps it) are.
window_of() {
  local wl=$1 f
  f=$(wl_arg "$wl")
  [[ $f == file:* ]] && f=${f#file:} || f="$TB_ROOT/workloads/$wl.txt"
  awk -v d="$TB_DURATION" -v k="$TB_WINDOW_MSGS" -v m="$TB_RATE_MBIT" '
    /^[0-9]/ && $1 > big { big = $1 }
    END { w = k * big * 8 / (m * 1e6); w = w > d ? int(w) + (w > int(w)) : d; print w }' "$f"
}

arm_port() { [[ $(arm_clear "$1") == homa* ]] && echo $HOMA_PORT || echo $TCP_PORT; }

# Prints "IP:PORT,..." of the given hosts for ARM.
server_list() {
  local arm=$1 i out=""; shift
  for i in "$@"; do out+="${out:+,}$(tb_host_ip "$i"):$(arm_port "$arm")"; done
  echo "$out"
}

# Sets the array HOST_RT to the command prefix that runs a host's process
# SCHED_FIFO at priority TB_HOST_RT (chrt), or to nothing when it is 0.
# Real-time hosts are served ahead of the machine's other jobs on their CPU.
host_rt() {
  HOST_RT=()
  ((TB_HOST_RT > 0)) && HOST_RT=(chrt -f "$TB_HOST_RT")
  return 0
}

# Starts ARM's server on each given host; logs go to DIR/server-hI.log.
servers_start() {
  local arm=$1 dir=$2 i b; shift 2
  b=$(bench_bin)
  host_rt
  # in the foreground: an encrypted arm's certificates are generated once
  # here, not by the background servers while clients already read them
  tb_certs_check "$arm"
  for i in "$@"; do
    # shellcheck disable=SC2046
    ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" \
      ${HOST_RT[@]+"${HOST_RT[@]}"} "$b" server $(arm_flags "$arm") --port "$(arm_port "$arm")" --quiet \
      >"$dir/server-h$i.log" 2>&1 &
    SERVER_PIDS+=($!)
    cg_add $!
  done
  # ready once each server says so (its sockets and, encrypted, its key
  # exchange service are open), within 20 s however loaded the machine
  local k=0 n pid
  for ((k = 0; k < 200; k++)); do
    n=0
    for i in "$@"; do grep -qs "ready on port" "$dir/server-h$i.log" && n=$((n + 1)); done
    ((n == $#)) && break
    for pid in "${SERVER_PIDS[@]}"; do
      kill -0 "$pid" 2>/dev/null || die "a $arm server exited at start (see $dir/server-*.log)"
    done
    sleep 0.1
  done
  ((k < 200)) || die "a $arm server was not ready in 20 s (see $dir/server-*.log)"
}

servers_stop() {
  local pid
  for pid in "${SERVER_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  SERVER_PIDS=()
}

# Unloaded best times of workload WL for ARM, measured h1 -> h0, cached in
# $TB_OUT/baselines/WL.ARM.
calibrate_arm() {
  local arm=$1 wl=$2 d="$TB_OUT/baselines" b
  b=$(bench_bin)
  mkdir -p "$d"
  [[ -s $d/$wl.$arm ]] && return 0
  log "calibrate $arm $wl (h1 -> h0, unloaded)"
  servers_start "$arm" "$d" 0
  # shellcheck disable=SC2046
  hexec 1 "$b" calibrate $(arm_flags "$arm") --servers "$(server_list "$arm" 0)" \
    --workload "$(wl_arg "$wl")" --calib-count "$TB_CALIB_COUNT" --baseline "$d/$wl.$arm" --quiet \
    >"$d/$wl.$arm.log" 2>&1 || { servers_stop; die "calibrate $arm $wl failed (see $d/$wl.$arm.log)"; }
  servers_stop
}

# Writes to OUT the per-size minimum of the arms' baselines of WL, so the
# slowdown ratio of two arms equals their latency ratio.
baseline_merge() {
  local wl=$1 out=$2 arm files=()
  for arm in "${ARMS[@]}"; do files+=("$TB_OUT/baselines/$wl.${arm%%+*}"); done
  "$TB_PYTHON" "$TB_LIB/report.py" baseline "$out" "${files[@]}"
}

# Starts one client on host I for ARM; JSON to DIR/client-hI.json.
# Arguments after DIR: load in Gbps of payload, then the server hosts.
client_start() {
  local arm=$1 i=$2 dir=$3 wl=$4 gbps=$5 b; shift 5
  b=$(bench_bin)
  # shellcheck disable=SC2046
  ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" \
    "$b" client $(arm_flags "$arm") --servers "$(server_list "$arm" "$@")" \
    --workload "$(wl_arg "$wl")" --load-gbps "$gbps" --link-gbps "$(gbps_of "$TB_RATE_MBIT")" \
    --duration "$TB_DURATION" --warmup "$TB_WARMUP" --baseline "$dir/baseline.txt" --seed $((i + 1)) \
    --json "$dir/client-h$i.json" --quiet >"$dir/client-h$i.log" 2>&1 &
  BG_PIDS+=($!)
  cg_add $!
}

gbps_of() { awk -v m="$1" 'BEGIN { printf "%.6g", m / 1000 }'; }

# TCP bulk traffic beside an arm (coexistence): host i sends 1 MB requests
# back to back to host i+1, one connection per pair, until killed; hosts
# 0..TB_BULK_FLOWS-1 do (every host if 0). On one shared host CPU every
# flow's receive work takes CPU from all emulated hosts (docs/RESULTS.md section 6).
bulk_start() {
  local dir=$1 i b n=$TB_HOSTS f=$TB_BULK_FLOWS nice=${TB_BULK_NICE:-$TB_NICE}
  b=$(bench_bin)
  ((f > 0 && f < n)) || f=$n
  TB_NICE=$nice servers_start tcp "$dir" $(seq 0 $((n - 1)))
  for ((i = 0; i < f; i++)); do
    ip netns exec "$(tb_host_ns "$i")" nice -n "$nice" taskset -c "$TB_HOST_CPUS" \
      "$b" client --transport tcp --cc cubic --servers "$(server_list tcp $(((i + 1) % n)))" \
      --workload 1M --outstanding 1 --duration $((TB_DURATION + ${TB_WARMUP%.*} + 30)) --quiet \
      --json "$dir/bulk-h$i.json" >"$dir/bulk-h$i.log" 2>&1 &
    BULK_PIDS+=($!)
    cg_add $!
  done
  sleep 1
}

bulk_stop() {
  local pid
  for pid in "${BULK_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${BULK_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  BULK_PIDS=()
}

# Snapshots /proc/stat and the wall clock when the clients' window opens
# (after TB_WARMUP) and when it closes, into OUT, headed by the hosts' CPU
# list: report.py turns it into the hosts' busy CPU time per RPC, wall time
# x CPUs minus idle and iowait. Unlike the processes' getrusage it also
# counts the kernel's softirq work, where TCP does most of its own. With
# TB_CG set each snapshot also holds the hosts' processes' CPU time
# ("TAG tasks NS", cg_add in run.sh), a figure other jobs on the CPUs do
# not move.
cpustat_start() {
  local out=$1
  { echo "hosts $TB_HOST_CPUS"
    sleep "$TB_WARMUP"; cpustat_snap open
    sleep "$TB_DURATION"; cpustat_snap close
  } >"$out" &
  BG_PIDS+=($!)
}

# Prints one snapshot labelled TAG: the per-CPU lines of /proc/stat and
# "TAG wall SECONDS" (CLOCK_REALTIME, read right after them). Only shell
# builtins: on the loaded machine starting sed or date took up to a second,
# time that fell between the idle counters and the wall clock and so was
# counted as busy (or, at the window's start, as idle).
cpustat_snap() {
  local l lines=()
  while read -r l; do [[ $l == cpu[0-9]* ]] && lines+=("$1 $l"); done </proc/stat
  local now=$EPOCHREALTIME tasks
  if [[ -n ${TB_CG:-} && -r $TB_CG/cpuacct.usage ]]; then read -r tasks <"$TB_CG/cpuacct.usage"; fi
  printf '%s\n' "${lines[@]}"
  echo "$1 wall ${now/,/.}"
  if [[ -n ${tasks:-} ]]; then echo "$1 tasks $tasks"; fi
}

# run floor: priority-7 UDP probes from the last host through an echo on h0,
# one per ms, for SECONDS after a pause of DELAY; RTTs to OUT (JSON).
FLOOR_PROBE=0
probe_start() {
  local out=$1 delay=$2 secs=$3 u="$TB_BUILD/testbed-udp"
  [[ -x $u ]] || die "$u missing (make BUILD=$TB_BUILD builds it)"
  srv_start 0 "$u" echo 9001 0
  wait_port 0 9001
  # shellcheck disable=SC2016  # $1.. are the inner shell's arguments
  hbg $((TB_HOSTS - 1)) sh -c 'sleep "$1" && exec "$2" probe "$3" 7 1000 "$4"' _ \
    "$delay" "$u" "$(tb_host_ip 0):9001" "$secs" >"$out"
}

# run floor, before the loaded arm: the same probes on the idle fabric, to
# DIR/probe-idle.json (DIR: the case's results folder).
probe_idle() {
  local d=$1
  mkdir -p "$d"
  log "floor: idle probes h$((TB_HOSTS - 1)) -> h0, priority 7"
  probe_start "$d/probe-idle.json" 0 5
  wait_bg || die "idle probes failed"
  srv_stop
}

# Runs one arm of a case: servers, clients at load, queue counters.
# KIND is alltoall or incast; ARM may end in +bulk (TCP bulk beside it).
run_arm() {
  local kind=$1 arm=$2 dir=$3 wl=$4 frac=$5 base=${2%%+*} i j gbps others
  local ad="$dir/$arm" n=$TB_HOSTS
  mkdir -p "$ad"
  cp "$dir/baseline.txt" "$ad/baseline.txt"
  BULK_PIDS=()
  [[ $arm == *+bulk ]] && bulk_start "$ad"
  log "$kind $wl ${frac}%: arm $arm"
  if [[ $kind == incast ]]; then
    servers_start "$base" "$ad" 0
    gbps=$(awk -v m="$TB_RATE_MBIT" -v f="$frac" -v c=$((n - 1)) 'BEGIN { printf "%.6g", m * f / 100 / 1000 / c }')
    qwatch_start "$ad/queues.json"
    for ((i = 1; i < n; i++)); do client_start "$base" "$i" "$ad" "$wl" "$gbps" 0; done
  else
    servers_start "$base" "$ad" $(seq 0 $((n - 1)))
    gbps=$(awk -v m="$TB_RATE_MBIT" -v f="$frac" 'BEGIN { printf "%.6g", m * f / 100 / 1000 }')
    qwatch_start "$ad/queues.json"
    for ((i = 0; i < n; i++)); do
      others=()
      for ((j = 0; j < n; j++)); do ((j != i)) && others+=("$j"); done
      client_start "$base" "$i" "$ad" "$wl" "$gbps" "${others[@]}"
    done
  fi
  cpustat_start "$ad/cpustat.txt"
  ((FLOOR_PROBE)) && probe_start "$ad/probe.json" "$TB_WARMUP" "$TB_DURATION"
  local rc=0
  wait_bg || rc=1
  qwatch_stop
  servers_stop
  bulk_stop
  srv_stop
  ((rc == 0)) || log "warning: a client of $arm failed (see $ad/client-*.log)"
}

# Prints the results folder of case NAME, workload WL, load FRAC percent.
case_dir() { echo "$TB_OUT/$1/$2-$3"; }

# One case NAME (the results folder) of KIND (alltoall or incast), workload
# WL, load FRAC percent, over window_of WL seconds: calibrates the arms,
# merges the baselines, runs every arm and summarises into DIR/run.json and
# DIR/p99.png.
run_case() {
  local name=$1 kind=$2 wl=$3 frac=$4 dir arm
  dir=$(case_dir "$name" "$wl" "$frac")
  # the clients and bulk flows of this case see the case's window
  local win
  win=$(window_of "$wl")
  local TB_DURATION=$win
  mkdir -p "$dir"
  for arm in "${ARMS[@]}"; do calibrate_arm "${arm%%+*}" "$wl"; done
  baseline_merge "$wl" "$dir/baseline.txt"
  for arm in "${ARMS[@]}"; do run_arm "$kind" "$arm" "$dir" "$wl" "$frac"; done
  "$TB_PYTHON" "$TB_LIB/report.py" case "$dir" "$name" "$wl" "$frac" "$TB_RATE_MBIT" "$TB_HOSTS" "${ARMS[@]}"
}

# Dispatches a homa-bench experiment (see scripts/testbed help).
bench_run() {
  local exp=$1 wl load
  IFS=, read -ra ARMS <<<"$TB_ARMS"
  IFS=, read -ra WLS <<<"$TB_WORKLOADS"
  IFS=, read -ra LOADS <<<"$TB_LOADS"
  case "$exp" in
    alltoall)
      for wl in "${WLS[@]}"; do for load in "${LOADS[@]}"; do run_case alltoall alltoall "$wl" "$load"; done; done ;;
    incast)
      for wl in "${WLS[@]}"; do run_case incast incast "$wl" "${LOADS[-1]}"; done ;;
    coexist)
      ARMS=(homa homa+bulk)
      run_case coexist alltoall w4 80 ;;
    floor)
      ARMS=(homa)
      probe_idle "$(case_dir floor w4 80)"
      FLOOR_PROBE=1 run_case floor alltoall w4 80 ;;
    ci)
      run_case ci alltoall "${WLS[0]}" "${LOADS[-1]}" ;;
    all)
      exp_fabric
      bench_run alltoall; bench_run incast; bench_run coexist; bench_run floor
      exp_collective ;;
  esac
  [[ $exp == all ]] || "$TB_PYTHON" "$TB_LIB/report.py" index "$TB_OUT" >"$TB_OUT/summary.md"
}
