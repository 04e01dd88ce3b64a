#!/bin/sh
# What encryption costs: homa-bench compare in clear and with --encrypt,
# one after the other in this run, for each scenario given (default: rtt
# rate throughput), rounds alternating (clear, encrypted, encrypted, clear,
# ...). Prints per scenario Homa with PSP over Homa in clear, TCP with
# TLS 1.3 over TCP, and the Homa/TCP ratios in clear and encrypted; writes
# every compare JSON and the summary to OUT_DIR (default build/bench-encrypt).
# CPU per RPC is getrusage of client and server (cpu) and the machine's
# busy time, wall x CPUs minus /proc/stat idle (host_cpu).
# With --old OLD_BUILD_DIR, every round also runs OLD_BUILD_DIR's
# homa-bench (the builds' order alternating too), prints both builds'
# tables and the new/old ratio of each figure. Arguments after "--" go to
# every homa-bench compare (e.g. -- --homa-copy 1: the Homa arms send with
# the copying calls).
#   bench-encrypt.sh BUILD_DIR [--old DIR] [--duration S] [--rounds N] [--out DIR] [SCENARIO...] [-- ARGS...]
set -eu
build=${1:?usage: bench-encrypt.sh BUILD_DIR [--old DIR] [--duration S] [--rounds N] [--out DIR] [SCENARIO...]}
shift
dur=2 rounds=1 out=$build/bench-encrypt scens= old=
while [ $# -gt 0 ]; do
  case $1 in
    --duration) dur=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --old) old=$2; shift 2 ;;
    rtt|rate|throughput|mixed) scens="$scens $1"; shift ;;
    --) shift; break ;;
    *) echo "bench-encrypt.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$scens" ] || scens="rtt rate throughput"
builds=new
[ -z "$old" ] || builds="new old"
for b in $builds; do mkdir -p "$out/$b"; done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for s in $scens; do
  r=1
  while [ $r -le "$rounds" ]; do
    # alternate the orders from round to round
    if [ $((r % 2)) -eq 1 ]; then order="clear enc" border=$builds
    else order="enc clear" border=$(echo $builds | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for b in $border; do
      bench=$build/homa-bench
      [ $b = new ] || bench=$old/homa-bench
      for m in $order; do
        flag=; [ $m = enc ] && flag=--encrypt
        f="$out/$b/$s-$m-$r"
        "$bench" compare --scenario "$s" $flag --duration "$dur" --json --quiet "$@" \
          > "$f.json" 2> "$f.log" ||
          { echo "$b: compare --scenario $s $flag failed:"; cat "$f.log"; exit 1; }
      done
    done
    r=$((r + 1))
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# summarize BUILD: pool the rounds by their mean and print the ratios.
summarize() {
for s in $scens; do
  jq -n --arg s "$s" '
    def mean(f): (map(f) | map(select(type == "number")) | if length == 0 then null
                  else add / length end);
    def r(a; b): if (a | type) == "number" and (b | type) == "number" and b > 0
                 then (a / b * 1000 | round) / 1000 else null end;
    [inputs] as $all
    | ($all | map(select(.encrypted != true))) as $c
    | ($all | map(select(.encrypted == true))) as $e
    | ["p50_us", "p99_us", "rpcs_per_sec", "gbps", "cpu_us_per_rpc", "host_cpu_us_per_rpc"]
    | map(. as $k | {metric: $k,
        homa: ($c | mean(.homa[$k])), homa_psp: ($e | mean(.homa[$k])),
        tcp: ($c | mean(.tcp[$k])), tcp_tls: ($e | mean(.tcp[$k]))}
      | . + {psp_over_clear: r(.homa_psp; .homa), tls_over_tcp: r(.tcp_tls; .tcp),
             homa_over_tcp: r(.homa; .tcp), psp_over_tls: r(.homa_psp; .tcp_tls)}
      | . + {encrypted_ratio_over_clear_ratio: r(.psp_over_tls; .homa_over_tcp)})
    | {scenario: $s, metrics: .}' "$out/$1/$s"-*.json
done | tee "$out/$1/summary.json" | jq -r '
  "\n\(.scenario):",
  "  metric               homa  homa+psp psp/clr      tcp  tcp+tls tls/tcp homa/tcp psp/tls ratio",
  (.metrics[] | select(.homa != null) |
   "  \(.metric | .[0:19] + " " * (19 - length)) " +
   ([.homa, .homa_psp, .psp_over_clear, .tcp, .tcp_tls, .tls_over_tcp, .homa_over_tcp,
     .psp_over_tls, .encrypted_ratio_over_clear_ratio]
    | map(if . == null then "       -" else (. * 100 | round / 100 | tostring)
          | " " * (8 - length) + . end) | join(" ")))'
}
for b in $builds; do
  [ -z "$old" ] || echo "
== $b build =="
  summarize $b
done
[ -n "$old" ] || exit 0
# new/old of each figure, per arm
echo "
== new build over old build =="
jq -n -r --slurpfile n "$out/new/summary.json" --slurpfile o "$out/old/summary.json" '
  def r(a; b): if (a | type) == "number" and (b | type) == "number" and b > 0
               then (a / b * 100 | round) / 100 else "-" end;
  "  scenario   metric               homa homa+psp      tcp  tcp+tls",
  (range($n | length) as $i | $n[$i] as $ns | $o[$i] as $os
   | range($ns.metrics | length) as $k | $ns.metrics[$k] as $a | $os.metrics[$k] as $b
   | select($a.homa != null)
   | "  \($ns.scenario | . + " " * (10 - length)) \($a.metric | . + " " * (19 - length)) " +
     ([r($a.homa; $b.homa), r($a.homa_psp; $b.homa_psp), r($a.tcp; $b.tcp),
       r($a.tcp_tls; $b.tcp_tls)] | map(tostring | " " * (8 - length) + .) | join(" ")))'
