# testbed.d/run.sh: experiments on a running testbed. Sourced by
# scripts/testbed; tb_run dispatches on the experiment name.

BG_PIDS=()
SRV_PIDS=()

# The cpuacct cgroup that holds every process started on the hosts
# (cg_add): its cpuacct.usage is their CPU time in ns, exact (not sampled
# on ticks), with those that exited, and with the softirq work the kernel
# ran while one of them was on the CPU. Unlike the hosts' CPUs' idle time
# it stays a figure when other jobs share the CPUs (docs/RESULTS.md
# section 8). Set by the first cg_add; stays empty where cgroup v1's
# cpuacct is missing.
TB_CG=""
cg_path() { echo "/sys/fs/cgroup/cpuacct/homa-testbed-${TB_PREFIX}"; }

# Moves process PID (with its threads) into TB_CG, creating it.
cg_add() {
  [[ -d /sys/fs/cgroup/cpuacct && -w /sys/fs/cgroup/cpuacct ]] || return 0
  TB_CG=$(cg_path)
  if mkdir -p "$TB_CG" 2>/dev/null; then
    echo "$1" >"$TB_CG/cgroup.procs" 2>/dev/null || true
  fi
}

# Removes the hosts' cgroup once no process is left in it (tb_teardown).
cg_remove() {
  local cg
  cg=$(cg_path)
  if [[ -d $cg ]]; then rmdir "$cg" 2>/dev/null || true; fi
}

# Starts a command on host I in the background; remembers its pid (the
# command's own: ip netns exec and taskset exec into it).
hbg() {
  local i=$1; shift
  ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" "$@" &
  BG_PIDS+=($!)
  cg_add $!
}

# Waits for every background command; fails if any of them failed.
wait_bg() {
  local pid rc=0
  for pid in "${BG_PIDS[@]}"; do wait "$pid" || rc=1; done
  BG_PIDS=()
  return $rc
}

# Sets TB_PYTHON, unless given, to the interpreter `python3` runs, asked
# once: a version manager's shim first in PATH (pyenv's) resolves it anew
# on every start, which took 15 s per start on the loaded machine and, for
# the queue sampler of every collective arm, most of the arm's time.
tb_python() {
  [[ -n ${TB_PYTHON:-} ]] && return
  command -v python3 >/dev/null || die "missing command 'python3' (run scripts/deps.sh)"
  TB_PYTHON=$(python3 -c 'import sys; print(sys.executable)') || die "python3 does not start"
}

# Starts the switch queue sampler writing OUT and waits until it samples;
# sets QWATCH_PID. It is not pinned to the switch CPU: beside background
# traffic that CPU's softirq work left a niced sampler no time to start.
qwatch_start() {
  qwatch_spawn "$1"
  qwatch_wait "$1"
}

# Starts the queue sampler writing OUT without waiting for it (its start
# then overlaps the caller's other set-up); qwatch_wait OUT waits.
qwatch_spawn() {
  rm -f "$1.ready"
  ip netns exec "$TB_SW" nice -n 10 "$TB_PYTHON" "$TB_LIB/qstats.py" watch "$1" 0.2 &
  QWATCH_PID=$!
}

# Waits until the sampler writing OUT samples: up to 180 s of clock time
# (not a count of sleeps, which a loaded machine stretches).
qwatch_wait() {
  local end=$((SECONDS + 180))
  while [[ ! -e $1.ready ]] && ((SECONDS < end)); do sleep 0.05; done
  [[ -e $1.ready ]] || die "queue sampler did not start within 180 s"
  rm -f "$1.ready"
}

qwatch_stop() {
  kill -TERM "$QWATCH_PID" 2>/dev/null || true
  wait "$QWATCH_PID" || true
  QWATCH_PID=
}

# Sum of the "dropped" column of /proc/net/softnet_stat (packets the
# per-CPU backlogs could not take: drops outside the switch queues).
softnet_drops() {
  local sum=0 d
  while read -r _ d _; do sum=$((sum + 16#$d)); done </proc/net/softnet_stat
  echo "$sum"
}

# Starts a long-running receiver (echo, sink) on host I until srv_stop.
srv_start() {
  local i=$1; shift
  ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" "$@" &
  SRV_PIDS+=($!)
  cg_add $!
}

# Stops the receivers (they print their results on SIGTERM) and waits.
srv_stop() {
  local pid
  for pid in "${SRV_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${SRV_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  SRV_PIDS=()
}

# Waits until UDP port PORT is bound on host I (up to 10 s).
wait_port() {
  local i=$1 port=$2 n
  for ((n = 0; n < 100; n++)); do
    ip netns exec "$(tb_host_ns "$i")" ss -Huln "sport = :$port" | grep -q . && return 0
    sleep 0.1
  done
  die "nothing listens on UDP port $port of host $i"
}

# Fabric check without any transport: (1) two UDP blasters at the link rate
# into one port, (2) open-loop probes at priority 7 and 0 through the same
# port while it is overrun. Writes $TB_OUT/fabric/*.json and fabric.json.
exp_fabric() {
  ((TB_HOSTS >= 4)) || die "fabric needs at least 4 hosts"
  local d="$TB_OUT/fabric" u="$TB_BUILD/testbed-udp" dst dur=$((TB_DURATION < 5 ? TB_DURATION : 5))
  local sn0 sn1
  [[ -x $u ]] || die "$u missing (make BUILD=$TB_BUILD builds it)"
  mkdir -p "$d"
  dst=$(tb_host_ip 0)
  SRV_PIDS=()
  log "fabric: idle probes"
  srv_start 0 "$u" echo 9001 0
  wait_port 0 9001
  hexec 3 "$u" probe "$dst:9001" 7,0 1000 "$dur" >"$d/probe-idle.json"
  log "fabric: h1+h2 blast ${TB_RATE_MBIT} Mbit/s each into h0, priority 0"
  srv_stop
  srv_start 0 "$u" sink 9000 0 >"$d/sink.json"
  wait_port 0 9000
  sn0=$(softnet_drops)
  qwatch_start "$d/queues-overrun.json"
  hbg 1 "$u" blast "$dst:9000" "$TB_RATE_MBIT" 1500 0 "$dur" >"$d/blast1.json"
  hbg 2 "$u" blast "$dst:9000" "$TB_RATE_MBIT" 1500 0 "$dur" >"$d/blast2.json"
  wait_bg
  qwatch_stop
  sn1=$(softnet_drops)
  srv_stop
  srv_start 0 "$u" echo 9001 0
  srv_start 0 "$u" sink 9000 0 >/dev/null
  wait_port 0 9000
  wait_port 0 9001
  log "fabric: same overrun, probes at priority 7 and 0 from h3"
  qwatch_start "$d/queues-probe.json"
  hbg 1 "$u" blast "$dst:9000" "$TB_RATE_MBIT" 1500 0 0 >/dev/null
  hbg 2 "$u" blast "$dst:9000" "$TB_RATE_MBIT" 1500 0 0 >/dev/null
  sleep 1
  hexec 3 "$u" probe "$dst:9001" 7,0 1000 "$dur" >"$d/probe-load.json"
  kill -TERM "${BG_PIDS[@]}" 2>/dev/null || true
  wait_bg
  qwatch_stop
  srv_stop
  "$TB_PYTHON" "$TB_LIB/report.py" fabric "$d" "$TB_RATE_MBIT" "$TB_BUFFER" $((sn1 - sn0)) | tee "$d/summary.txt"
}

# Dispatches an experiment by name.
tb_run() {
  mkdir -p "$TB_OUT"
  case "$1" in
    fabric) exp_fabric ;;
    collective) exp_collective ;;
    alltoall|incast|coexist|floor|ci|all) bench_run "$1" ;;
    *) die "unknown experiment $1 (see scripts/testbed help)" ;;
  esac
}
