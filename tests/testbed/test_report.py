#!/usr/bin/env python3
"""test_report: scripts/testbed.d/report.py on a made-up case (no root, no
testbed). Checks that `report.py case` merges two clients' short-message
P99 in microseconds (count-weighted over the one-packet buckets), keeps the
priority-7 probes of `run floor` with the arm and the idle ones with the
case, prints the floor line with P99 / idle P50, and turns the /proc/stat
snapshots of the window into the hosts' busy CPU per RPC: wall time x
host CPUs minus idle and iowait (not the tick-sampled busy columns), CPUs
that are not the hosts' out, and says so when the hosts' CPUs had no idle
time left (a second arm), where that figure is the window over the RPCs;
and that the hosts' processes' CPU (their cgroup's "tasks" lines, ns) and
the host CPUs' softirq time per RPC come out beside it, also for the
saturated arm, where they still measure the arm.

  test_report.py SRC
"""
import json
import os
import subprocess
import sys
import tempfile


def client(p99_short, count):
    """One client's homa-bench JSON with a short and a long bucket."""
    return {"rpcs": count, "gbps": 0.01, "short_p50_slowdown": 2.0,
            "short_p99_slowdown": 10.0, "cpu_us_per_rpc": 100.0,
            "buckets": [{"max_bytes": 500, "count": count, "p50_us": 50.0,
                         "p99_us": p99_short, "p50_slowdown": 1.0, "p99_slowdown": 5.0},
                        {"max_bytes": 100000, "count": count, "p50_us": 900.0,
                         "p99_us": 99999.0, "p50_slowdown": 1.0, "p99_slowdown": 2.0}]}


def probes(p50, p99, lost):
    """A testbed-udp probe document with class 7 only."""
    return {"mode": "probe", "classes": {"7": {"count": 1000, "lost": lost,
                                               "p50_us": p50, "p99_us": p99, "max_us": p99}}}


def write(path, obj):
    """Writes OBJ as JSON to PATH."""
    with open(path, "w") as f:
        json.dump(obj, f)


def main(argv):
    """Runs the check; returns the exit status."""
    report = os.path.join(argv[1], "scripts", "testbed.d", "report.py")
    with tempfile.TemporaryDirectory() as d:
        arm = os.path.join(d, "homa")
        os.mkdir(arm)
        write(os.path.join(arm, "client-h0.json"), client(1000.0, 300))
        write(os.path.join(arm, "client-h1.json"), client(2000.0, 100))
        write(os.path.join(arm, "probe.json"), probes(400.0, 1800.0, 2))
        write(os.path.join(d, "probe-idle.json"), probes(120.0, 300.0, 0))
        tck = os.sysconf("SC_CLK_TCK")
        with open(os.path.join(arm, "cpustat.txt"), "w") as f:
            # a 10 s window; cpu0 idle +5 s and iowait +1 s, so 4 s busy,
            # though its tick columns (user +2 s, system +0.5 s) say 2.5 s
            # as they do for loads that sleep and wake often; steal is
            # busy; cpu1 is not a host CPU
            f.write("hosts 0\n"
                    "open cpu0 100 0 50 1000 0 0 50 0 0 0\n"
                    "open cpu1 0 0 0 0 0 0 0 0 0 0\n"
                    "open wall 1000.25\n"
                    "open tasks 7000000000\n"
                    f"close cpu0 {100 + 2 * tck} 0 {50 + tck // 2} {1000 + 5 * tck} {tck} 0 "
                    f"{50 + tck} {tck} 0 0\n"
                    f"close cpu1 {50 * tck} {9 * tck} 0 0 0 0 {9 * tck} 0 0 0\n"
                    "close wall 1010.25\n"
                    "close tasks 10200000000\n")
        tcp = os.path.join(d, "tcp-cubic")
        os.mkdir(tcp)
        write(os.path.join(tcp, "client-h0.json"), client(3000.0, 500))
        with open(os.path.join(tcp, "cpustat.txt"), "w") as f:
            # a 10 s window in which cpu0 was never idle (other work filled it)
            f.write("hosts 0\n"
                    "open cpu0 100 0 50 1000 0 0 50 0 0 0\n"
                    "open wall 2000.0\n"
                    "open tasks 0\n"
                    f"close cpu0 {100 + 6 * tck} {4 * tck} 50 1000 0 0 {50 + 2 * tck} 0 0 0\n"
                    "close wall 2010.0\n"
                    "close tasks 1000000000\n")
        out = subprocess.run([sys.executable, report, "case", d, "floor", "w4", "80", "20", "8",
                              "homa", "tcp-cubic"], capture_output=True, text=True,
                             check=True).stdout
        with open(os.path.join(d, "run.json")) as f:
            run = json.load(f)
    homa = run["arms"]["homa"]
    bad = []
    if abs(homa["short_p99_us"] - 1250.0) > 1e-6:  # (1000 * 300 + 2000 * 100) / 400
        bad.append(f"short_p99_us {homa['short_p99_us']}, want 1250")
    if homa.get("probe", {}).get("p99_us") != 1800.0:
        bad.append(f"arm probe {homa.get('probe')}")
    if abs((homa.get("host_cpu_us_per_rpc") or 0) - 10000.0) > 1e-6:  # (10 - 5 - 1) s / 400 RPCs
        bad.append(f"host_cpu_us_per_rpc {homa.get('host_cpu_us_per_rpc')}, want 10000")
    if abs((homa.get("host_cpu_busy_fraction") or 0) - 0.4) > 1e-6:  # 4 s of 10
        bad.append(f"host_cpu_busy_fraction {homa.get('host_cpu_busy_fraction')}, want 0.4")
    # tasks 3.2 s / 400 RPCs; softirq cpu0 only, +1 s (cpu1's +9 s is not a host CPU's)
    for key, want in (("host_tasks_us_per_rpc", 8000.0), ("host_softirq_us_per_rpc", 2500.0)):
        if abs((homa.get(key) or 0) - want) > 1e-6:
            bad.append(f"{key} {homa.get(key)}, want {want}")
    sat = run["arms"]["tcp-cubic"]
    # 1 s / 500 RPCs, softirq 2 s / 500
    if abs((sat.get("host_tasks_us_per_rpc") or 0) - 2000.0) > 1e-6:
        bad.append(f"saturated arm's host_tasks_us_per_rpc {sat.get('host_tasks_us_per_rpc')}, want 2000")
    if "| 8000.0 (+ 2500.0) |" not in out or "| 2000.0 (+ 4000.0) |" not in out:
        bad.append("hosts' processes column missing or wrong:\n" + out)
    if abs((sat.get("host_cpu_busy_fraction") or 0) - 1.0) > 1e-6:
        bad.append(f"saturated arm's busy fraction {sat.get('host_cpu_busy_fraction')}, want 1")
    if "| 40% |" not in out or "| 100% (saturated) |" not in out:
        bad.append("busy column missing or wrong:\n" + out)
    if "saturated in tcp-cubic:" not in out or "saturated in homa" in out:
        bad.append("saturation note missing or wrong:\n" + out)
    if run.get("probe_idle", {}).get("p50_us") != 120.0:
        bad.append(f"probe_idle {run.get('probe_idle')}")
    if "P99 / idle P50 = 15.0" not in out or "P99 1250 us" not in out:
        bad.append("floor line missing or wrong:\n" + out)
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
