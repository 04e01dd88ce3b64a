#!/bin/sh
# What the host's PSP receiver costs: homa-bench compare --encrypt with
# Homa's sealed packets sent through the receiver on UDP port PORT
# (--psp-port) and straight to each socket's own port, one after the
# other in this run, rounds alternating the order. With --old DIR, DIR's
# homa-bench runs the same two arms in every round too (the builds' order
# alternating as well). Prints, per build, the Homa arm's means and the
# port/direct ratios, and with --old the new/old ratios of the port arm.
# CPU per RPC is getrusage of client and server (cpu) and the machine's
# busy time, wall x CPUs minus /proc/stat idle (host_cpu). Needs root
# (the receiver forwards with IP_TRANSPARENT).
#   bench-psp-port.sh BUILD_DIR [--old DIR] [--port N] [--duration S] [--rounds N]
#                     [--scenario S] [--out DIR]
set -eu
usage="usage: bench-psp-port.sh BUILD_DIR [--old DIR] [--port N] [--duration S] [--rounds N] [--scenario S] [--out DIR]"
build=${1:?$usage}
shift
dur=3 rounds=2 out=$build/bench-psp-port scen=rtt old='' port=47123
while [ $# -gt 0 ]; do
  case $1 in
    --duration) dur=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --old) old=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --scenario) scen=$2; shift 2 ;;
    *) echo "bench-psp-port.sh: unknown argument $1" >&2; echo "$usage" >&2; exit 2 ;;
  esac
done
builds=new
[ -z "$old" ] || builds="new old"
mkdir -p "$out"
rm -f "$out"/*.json
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$rounds" ]; do
  if [ $((r % 2)) -eq 1 ]; then arms="port direct" border=$builds
  else arms="direct port" border=$(echo "$builds" | tr ' ' '\n' | tac | tr '\n' ' '); fi
  for b in $border; do
    bench=$build/homa-bench
    [ "$b" = new ] || bench=$old/homa-bench
    for a in $arms; do
      flag=; [ "$a" = port ] && flag="--psp-port $port"
      f="$out/$b-$a-$r"
      # shellcheck disable=SC2086
      "$bench" compare --scenario "$scen" --encrypt $flag --duration "$dur" --json --quiet \
        > "$f.json" 2> "$f.log" ||
        { echo "$b: compare --scenario $scen --encrypt $flag failed:"; cat "$f.log"; exit 1; }
    done
  done
  r=$((r + 1))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out" "$builds" <<'EOF'
import glob, json, os, sys
out, builds = sys.argv[1], sys.argv[2].split()
keys = ["p50_us", "p99_us", "rpcs_per_sec", "cpu_us_per_rpc", "host_cpu_us_per_rpc",
        "syscalls_per_rpc", "ctxsw_per_rpc"]
def mean(b, a, k):
    v = [json.load(open(f))["homa"].get(k) for f in sorted(glob.glob(f"{out}/{b}-{a}-*.json"))]
    v = [x for x in v if isinstance(x, (int, float))]
    return sum(v) / len(v) if v else None
def ratio(x, y):
    return x / y if x is not None and y else None
def fmt(x):
    return "       -" if x is None else f"{x:8.2f}"
summary = {}
for b in builds:
    print(f"\n== {b} build: Homa with PSP, means of the rounds ==")
    print("  metric                 port   direct port/direct")
    summary[b] = {}
    for k in keys:
        p, d = mean(b, "port", k), mean(b, "direct", k)
        summary[b][k] = {"port": p, "direct": d, "port_over_direct": ratio(p, d)}
        print(f"  {k:19s} {fmt(p)} {fmt(d)} {fmt(ratio(p, d))}")
if len(builds) == 2:
    print("\n== new build over old build ==")
    print("  metric                 port   direct port/direct")
    for k in keys:
        n, o = summary["new"][k], summary["old"][k]
        print(f"  {k:19s} " + " ".join(fmt(ratio(n[a], o[a]))
                                      for a in ("port", "direct", "port_over_direct")))
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
EOF
