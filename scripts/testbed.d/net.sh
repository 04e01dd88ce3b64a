# testbed.d/net.sh: building, inspecting and tearing down the emulated
# network. Sourced by scripts/testbed; every function uses the TB_* settings.

# Checks that every setting is well formed; exits with a message otherwise.
tb_validate_config() {
  [[ $TB_PREFIX =~ ^[a-z][a-z0-9]{0,7}$ ]] || die "--prefix must be 1-8 lowercase letters/digits"
  [[ $TB_HOSTS =~ ^[0-9]+$ ]] && ((TB_HOSTS >= 2 && TB_HOSTS <= 64)) \
    || die "--hosts must be 2..64 (got $TB_HOSTS)"
  [[ $TB_RATE_MBIT =~ ^[0-9]+$ ]] && ((TB_RATE_MBIT >= 1 && TB_RATE_MBIT <= 100000)) \
    || die "--rate must be Mbit/s, 1..100000 (got $TB_RATE_MBIT)"
  [[ $TB_BUFFER =~ ^[0-9]+$ ]] && ((TB_BUFFER >= 3000)) \
    || die "--buffer must be bytes >= 3000 (got $TB_BUFFER)"
  [[ $TB_NIC_BUFFER =~ ^[0-9]+$ ]] && ((TB_NIC_BUFFER >= 3000)) \
    || die "--nic-buffer must be bytes >= 3000 (got $TB_NIC_BUFFER)"
  [[ $TB_MTU =~ ^[0-9]+$ ]] && ((TB_MTU >= 576 && TB_MTU <= 9000)) \
    || die "--mtu must be 576..9000 (got $TB_MTU)"
  [[ $TB_NIC == on || $TB_NIC == off ]] || die "--nic must be on or off"
  # AF_XDP copy-mode sends leave through the device directly (no qdisc on
  # the host's veth), so NIC shaping would not apply to the homa-xdp arm
  [[ $TB_NIC == on && ,$TB_ARMS, == *,homa-xdp,* ]] \
    && die "--nic must be off with the homa-xdp arm (AF_XDP sends bypass the hosts' veth qdisc)"
  [[ $TB_SWITCH_CPU =~ ^[0-9]+$ ]] || die "--switch-cpu must be a CPU number"
  [[ $TB_HOST_CPUS =~ ^[0-9,-]+$ ]] || die "--host-cpus must be a CPU list like 0 or 0-2"
  [[ $TB_DURATION =~ ^[0-9]+$ ]] && ((TB_DURATION >= 1)) || die "--duration must be seconds >= 1"
  [[ $TB_HOMA_RESEND_US =~ ^([0-9]+|auto)$ ]] || die "--homa-resend-us must be microseconds or auto"
  [[ $TB_WARMUP =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "--warmup must be seconds >= 0"
  [[ $TB_WINDOW_MSGS =~ ^[0-9]+$ ]] || die "--window-msgs must be a count >= 0"
  local nice
  for nice in "$TB_NICE" "${TB_BULK_NICE:-$TB_NICE}"; do
    [[ $nice =~ ^-?[0-9]+$ ]] && ((nice >= -20 && nice <= 19)) || die "--nice and --bulk-nice must be -20..19"
  done
  [[ $TB_HOST_RT =~ ^[0-9]+$ ]] && ((TB_HOST_RT <= 99)) || die "--host-rt must be a priority 0..99"
  [[ $TB_BACKLOG =~ ^[0-9]+$ ]] || die "--backlog must be a packet count"
  [[ $TB_BULK_FLOWS =~ ^[0-9]+$ ]] || die "--bulk-flows must be a flow count (0 = one per host)"
  [[ $TB_TCP_CLASS == shared || $TB_TCP_CLASS == own ]] || die "--tcp-class must be shared or own"
  [[ $TB_HOMA_TICK_US =~ ^[0-9]+$ ]] && ((TB_HOMA_TICK_US <= 1000000)) \
    || die "--homa-tick-us must be 0..1000000 (got $TB_HOMA_TICK_US)"
  [[ $TB_SOFTIRQ_NICE == off || $TB_SOFTIRQ_NICE =~ ^-?[0-9]+$ ]] || die "--softirq-nice must be -20..19 or off"
  local ncpu; ncpu=$(nproc --all)
  ((TB_SWITCH_CPU < ncpu)) || die "--switch-cpu $TB_SWITCH_CPU: only $ncpu CPUs"
  TB_SW="${TB_PREFIX}-sw"
  TB_STATE="/run/homa-testbed-${TB_PREFIX}.env"
  TB_BURST=$((TB_BURST_PKTS * (TB_MTU + 14)))
}

# Prints the hex mask (for rps_cpus) of a CPU list such as "0,2-3".
tb_cpumask() {
  local list=$1 mask=0 part a b c
  IFS=, read -ra parts <<<"$list"
  for part in "${parts[@]}"; do
    a=${part%-*}; b=${part#*-}
    for ((c = a; c <= b; c++)); do mask=$((mask | (1 << c))); done
  done
  printf '%x\n' "$mask"
}

tb_host_ns() { echo "${TB_PREFIX}-h$1"; }
tb_host_ip() { echo "${TB_SUBNET}.$(($1 + 1))"; }
tb_host_mac() { printf '02:77:00:00:%02x:%02x\n' "$((($1 >> 8) & 255))" "$(($1 & 255))"; }

# Runs a command inside host I's namespace, pinned to the host CPUs.
hexec() {
  local i=$1; shift
  ip netns exec "$(tb_host_ns "$i")" nice -n "$TB_NICE" taskset -c "$TB_HOST_CPUS" "$@"
}

# Runs a command inside the switch namespace.
swexec() { ip netns exec "$TB_SW" "$@"; }

tb_require_root() {
  [[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, tc); run with sudo"
}

# Refuses to start without root, tools or kernel features, each named.
tb_preflight() {
  tb_require_root
  local cmd
  for cmd in ip tc ethtool taskset python3; do
    command -v "$cmd" >/dev/null || die "missing command '$cmd' (run scripts/deps.sh)"
  done
  tb_is_up && die "testbed ${TB_PREFIX} is already up (scripts/testbed --prefix ${TB_PREFIX} down)"
  local ns="${TB_PREFIX}-probe"
  ip netns del "$ns" 2>/dev/null || true
  ip netns add "$ns" 2>/dev/null || die "kernel lacks network namespaces (ip netns add failed)"
  local ok=1 what=""
  if ! ip -n "$ns" link add pa type veth peer name pb 2>/dev/null; then ok=0; what="veth"
  elif ! ip -n "$ns" link add pbr type bridge 2>/dev/null; then ok=0; what="bridge"
  elif ! ip netns exec "$ns" tc qdisc add dev pa root handle 1: htb default 10 2>/dev/null; then ok=0; what="htb qdisc (sch_htb)"
  elif ! ip netns exec "$ns" tc class add dev pa parent 1: classid 1:10 htb rate 1mbit quantum 1514 2>/dev/null; then ok=0; what="htb classes"
  elif ! ip netns exec "$ns" tc qdisc add dev pa parent 1:10 bfifo limit 10000 2>/dev/null; then ok=0; what="bfifo qdisc (sch_fifo)"
  elif ! ip netns exec "$ns" tc filter add dev pa parent 1: protocol ip u32 match ip tos 0xe0 0xe0 flowid 1:10 2>/dev/null; then ok=0; what="u32 classifier (cls_u32)"
  elif [[ ! -w /proc/sys/net/core/netdev_max_backlog ]] || ! ip netns exec "$ns" test -e /sys/class/net/pa/queues/rx-0/rps_cpus; then ok=0; what="RPS (rps_cpus)"
  fi
  ip netns del "$ns"
  [[ $ok == 1 ]] || die "kernel lacks $what; cannot build the testbed"
}

tb_is_up() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$TB_SW"; }

# Writes the settings of the running testbed so later commands reuse them.
tb_save_state() {
  {
    local v
    for v in TB_HOSTS TB_RATE_MBIT TB_BUFFER TB_MTU TB_NIC TB_NIC_BUFFER \
             TB_SUBNET TB_HOST_CPUS TB_SWITCH_CPU TB_BURST_PKTS TB_TCP_CLASS; do
      printf '%s=%q\n' "$v" "${!v}"
    done
  } >"$TB_STATE"
}

tb_load_state() {
  [[ -f $TB_STATE ]] || die "testbed ${TB_PREFIX} is up but $TB_STATE is missing"
  # shellcheck disable=SC1090
  source "$TB_STATE"
  tb_validate_config
}

# Builds the switch port qdisc: HTB root, a parent at the link rate, eight
# leaves (Homa priority P -> class 1:1P, HTB prio 7-P) each with a bfifo of
# TB_BUFFER bytes, u32 filters on the top three DSCP bits. With
# TB_TCP_CLASS=own a filter tried first moves UDP with DSCP 0 (Homa's
# priority 0) to class 1:11, so TCP is alone in the lowest class, as on a
# switch configured to keep TCP below every Homa priority.
tb_shape_switch_port() {
  local dev=$1 rate="${TB_RATE_MBIT}mbit" q=$((TB_MTU + 14)) p
  swexec tc qdisc add dev "$dev" root handle 1: htb default 10
  if [[ $TB_TCP_CLASS == own ]]; then
    swexec tc filter add dev "$dev" parent 1: protocol ip prio 9 u32 \
      match ip protocol 17 0xff match ip tos 0 0xe0 flowid 1:11
  fi
  swexec tc class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" \
    burst "$TB_BURST" cburst "$TB_BURST" quantum "$q"
  for p in 0 1 2 3 4 5 6 7; do
    swexec tc class add dev "$dev" parent 1:1 classid "1:1$p" htb rate 8kbit ceil "$rate" \
      burst "$TB_BURST" cburst "$TB_BURST" prio $((7 - p)) quantum "$q"
    swexec tc qdisc add dev "$dev" parent "1:1$p" handle "1$p:" bfifo limit "$TB_BUFFER"
    swexec tc filter add dev "$dev" parent 1: protocol ip prio $((10 + p)) u32 \
      match ip tos $((p << 5)) 0xe0 flowid "1:1$p"
  done
}

# Shapes host I's NIC (its veth) at the link rate with one FIFO queue.
tb_shape_nic() {
  local i=$1 rate="${TB_RATE_MBIT}mbit" q=$((TB_MTU + 14)) ns
  ns=$(tb_host_ns "$i")
  ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: htb default 1
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:1 htb rate "$rate" \
    ceil "$rate" burst "$TB_BURST" cburst "$TB_BURST" quantum "$q"
  ip netns exec "$ns" tc qdisc add dev eth0 parent 1:1 handle 10: bfifo limit "$TB_NIC_BUFFER"
}

# Shapes host I's NIC at the link rate with eight strict-priority queues
# picked by the top three DSCP bits, as a switch port (tb_shape_switch_port)
# and as a NIC whose traffic classes follow DSCP (a datacenter NIC with
# DSCP trust and strict-priority classes): Homa priority P -> class 1:1P,
# HTB prio 7-P, a bfifo of TB_NIC_BUFFER bytes each. TCP (DSCP 0) shares
# the lowest class with Homa's priority 0, so a TCP host's NIC is one FIFO.
tb_shape_nic_prio() {
  local i=$1 rate="${TB_RATE_MBIT}mbit" q=$((TB_MTU + 14)) ns p
  ns=$(tb_host_ns "$i")
  ip netns exec "$ns" tc qdisc add dev eth0 root handle 1: htb default 10
  ip netns exec "$ns" tc class add dev eth0 parent 1: classid 1:1 htb rate "$rate" \
    ceil "$rate" burst "$TB_BURST" cburst "$TB_BURST" quantum "$q"
  for p in 0 1 2 3 4 5 6 7; do
    ip netns exec "$ns" tc class add dev eth0 parent 1:1 classid "1:1$p" htb rate 8kbit \
      ceil "$rate" burst "$TB_BURST" cburst "$TB_BURST" prio $((7 - p)) quantum "$q"
    ip netns exec "$ns" tc qdisc add dev eth0 parent "1:1$p" handle "1$p:" bfifo limit "$TB_NIC_BUFFER"
    ip netns exec "$ns" tc filter add dev eth0 parent 1: protocol ip prio $((10 + p)) u32 \
      match ip tos $((p << 5)) 0xe0 flowid "1:1$p"
  done
}

# Writes MASK to every rx queue's rps_cpus of DEV inside namespace NS.
tb_set_rps() {
  local ns=$1 dev=$2 mask=$3
  ip netns exec "$ns" sh -c "for f in /sys/class/net/$dev/queues/rx-*/rps_cpus; do echo $mask > \$f; done"
}

# Creates host I: namespace, veth pair into the switch, address, static
# neighbours and bridge entries (no ARP or flooding under load), offloads
# off (the switch sees MTU-sized packets), RPS to the host CPUs.
tb_add_host() {
  local i=$1 ns port ip mac
  ns=$(tb_host_ns "$i"); port="p$i"; ip=$(tb_host_ip "$i"); mac=$(tb_host_mac "$i")
  ip netns add "$ns"
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$TB_SW" link add "$port" mtu "$TB_MTU" type veth peer name eth0 netns "$ns"
  ip -n "$ns" link set eth0 address "$mac" mtu "$TB_MTU"
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$TB_SW" link set "$port" master br0
  ip -n "$TB_SW" link set "$port" up
  ip netns exec "$ns" ethtool -K eth0 tso off gso off gro off tx-udp-segmentation off >/dev/null 2>&1 || true
  swexec ethtool -K "$port" tso off gso off gro off tx-udp-segmentation off >/dev/null 2>&1 || true
  swexec bridge fdb replace "$mac" dev "$port" master static
  tb_shape_switch_port "$port"
  [[ $TB_NIC == on ]] && tb_shape_nic "$i"
  tb_set_rps "$TB_SW" "$port" "$(tb_cpumask "$TB_SWITCH_CPU")"
  tb_set_rps "$ns" eth0 "$(tb_cpumask "$TB_HOST_CPUS")"
}

# Every host learns every other host's MAC statically.
tb_add_neighbours() {
  local i j
  for ((i = 0; i < TB_HOSTS; i++)); do
    for ((j = 0; j < TB_HOSTS; j++)); do
      ((i == j)) && continue
      ip -n "$(tb_host_ns "$i")" neigh replace "$(tb_host_ip "$j")" \
        lladdr "$(tb_host_mac "$j")" dev eth0 nud permanent
    done
  done
}

TB_BACKLOG_ORIG=/run/homa-testbed-backlog.orig

# Raises net.core.netdev_max_backlog (the per-CPU queue RPS hands packets
# to) to TB_BACKLOG, remembering the first original value for tb_backlog_restore.
tb_backlog_raise() {
  local cur; cur=$(cat /proc/sys/net/core/netdev_max_backlog)
  ((cur >= TB_BACKLOG)) && return 0
  [[ -e $TB_BACKLOG_ORIG ]] || echo "$cur" >"$TB_BACKLOG_ORIG"
  echo "$TB_BACKLOG" >/proc/sys/net/core/netdev_max_backlog
}

# Puts netdev_max_backlog back once no testbed of any prefix is up.
tb_backlog_restore() {
  [[ -e $TB_BACKLOG_ORIG ]] || return 0
  compgen -G "/run/homa-testbed-*.env" >/dev/null && return 0
  cat "$TB_BACKLOG_ORIG" >/proc/sys/net/core/netdev_max_backlog
  rm -f "$TB_BACKLOG_ORIG"
}

TB_SOFTIRQ_ORIG=/run/homa-testbed-ksoftirqd.orig

# Packet processing that overflows softirq context runs in the ksoftirqd
# threads; on a busy machine they wait behind every other process and the
# emulated switch stalls. While a testbed is up they run at TB_SOFTIRQ_NICE
# (original values kept for tb_softirq_restore).
tb_softirq_raise() {
  [[ $TB_SOFTIRQ_NICE == off ]] && return 0
  local pid
  if [[ ! -e $TB_SOFTIRQ_ORIG ]]; then
    ps -eo pid=,ni=,comm= | awk '$3 ~ /^ksoftirqd\// {print $1, $2}' >"$TB_SOFTIRQ_ORIG"
  fi
  for pid in $(awk '{print $1}' "$TB_SOFTIRQ_ORIG"); do
    renice -n "$TB_SOFTIRQ_NICE" -p "$pid" >/dev/null 2>&1 || true
  done
}

# Puts the ksoftirqd nice values back once no testbed of any prefix is up.
tb_softirq_restore() {
  [[ -e $TB_SOFTIRQ_ORIG ]] || return 0
  compgen -G "/run/homa-testbed-*.env" >/dev/null && return 0
  local pid ni
  while read -r pid ni; do renice -n "$ni" -p "$pid" >/dev/null 2>&1 || true; done <"$TB_SOFTIRQ_ORIG"
  rm -f "$TB_SOFTIRQ_ORIG"
}

# Builds the whole testbed.
tb_up() {
  local i t0=$SECONDS
  log "up: ${TB_HOSTS} hosts, ${TB_RATE_MBIT} Mbit/s links, ${TB_BUFFER} B port buffer, MTU ${TB_MTU}, NIC shaping ${TB_NIC}, hosts on CPU ${TB_HOST_CPUS}, switch on CPU ${TB_SWITCH_CPU}"
  ip netns add "$TB_SW"
  ip netns exec "$TB_SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$TB_SW" link add br0 type bridge stp_state 0 forward_delay 0 ageing_time 100000
  ip -n "$TB_SW" link set lo up
  for ((i = 0; i < TB_HOSTS; i++)); do tb_add_host "$i"; done
  ip -n "$TB_SW" link set br0 up
  tb_add_neighbours
  tb_save_state
  tb_backlog_raise
  tb_softirq_raise
  log "up in $((SECONDS - t0)) s"
}

# Kills every process inside this prefix's namespaces and deletes them.
tb_teardown() {
  local nss ns pids n
  nss=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${TB_PREFIX}-(sw|h[0-9]+|probe)$" || true)
  [[ -z $nss ]] && { rm -f "$TB_STATE"; tb_backlog_restore; tb_softirq_restore; return 0; }
  for ns in $nss; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [[ -n $pids ]] && kill -TERM $pids 2>/dev/null || true
  done
  for n in 1 2 3 4 5 6 7 8 9 10; do
    pids=""
    for ns in $nss; do pids+=" $(ip netns pids "$ns" 2>/dev/null || true)"; done
    [[ -z ${pids// /} ]] && break
    ((n == 10)) && kill -KILL $pids 2>/dev/null || true
    sleep 0.2
  done
  for ns in $nss; do ip netns del "$ns" 2>/dev/null || true; done
  cg_remove
  rm -f "$TB_STATE"
  tb_backlog_restore
  tb_softirq_restore
  log "down: removed $(echo "$nss" | wc -w) namespaces"
}

tb_summary() {
  local i
  echo "testbed ${TB_PREFIX}: switch ${TB_SW}, ${TB_HOSTS} hosts, ${TB_RATE_MBIT} Mbit/s, buffer ${TB_BUFFER} B"
  for ((i = 0; i < TB_HOSTS; i++)); do
    echo "  $(tb_host_ns "$i")  $(tb_host_ip "$i")  switch port p$i"
  done
  echo "run a command on a host: ip netns exec $(tb_host_ns 0) <cmd>"
}

# Shows the testbed and every switch port's per-priority counters.
tb_status() {
  if ! tb_is_up; then echo "testbed ${TB_PREFIX}: down"; return 0; fi
  tb_require_root
  tb_load_state
  tb_summary
  swexec "$TB_PYTHON" "$TB_LIB/qstats.py" table
}
