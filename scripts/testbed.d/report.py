#!/usr/bin/env python3
"""report: summaries of testbed experiments.

  report.py fabric DIR RATE_MBIT BUFFER SOFTNET_DROPS
      summarise the fabric check in DIR (testbed-udp and qstats JSON files),
      write DIR/fabric.json and print a table
  report.py baseline OUT FILE...
      write to OUT the per-size minimum of homa-bench baseline FILEs
  report.py case DIR NAME WL LOAD RATE_MBIT HOSTS ARM...
      merge the per-client homa-bench JSON of every arm in DIR/ARM into
      DIR/run.json, print a table, plot P99 slowdown per size to DIR/p99.png
  report.py index OUT
      markdown tables of every OUT/*/*/run.json
"""
import glob
import json
import os
import subprocess
import sys


# Largest message that fits one Homa packet at a 1500 B MTU ("short").
SHORT_BYTES = 1416


def load(path):
    """Returns the JSON object in PATH; raises OSError/ValueError."""
    with open(path) as f:
        return json.load(f)


def port_total(queues, port):
    """Sums a port's per-priority counters from a qstats watch file."""
    tot = {"packets": 0, "bytes": 0, "drops": 0, "max_backlog_bytes": 0}
    for c in queues.get(port, {}).values():
        for k in ("packets", "bytes", "drops"):
            tot[k] += c[k]
        tot["max_backlog_bytes"] = max(tot["max_backlog_bytes"], c["max_backlog_bytes"])
    return tot


def fabric(d, rate, buffer, softnet):
    """Builds the fabric summary from the files in D; prints and saves it."""
    q = load(os.path.join(d, "queues-overrun.json"))
    res = {
        "link_mbit": rate, "port_buffer_bytes": buffer,
        "blasters_mbit": [load(os.path.join(d, f))["mbit_per_s"]
                          for f in ("blast1.json", "blast2.json")],
        "sink_mbit": load(os.path.join(d, "sink.json"))["mbit_per_s"],
        "port_p0": port_total(q, "p0"),
        "softnet_backlog_drops": softnet,
        "probe_idle": load(os.path.join(d, "probe-idle.json"))["classes"],
        "probe_loaded": load(os.path.join(d, "probe-load.json"))["classes"],
        "queues_probe_p0": load(os.path.join(d, "queues-probe.json")).get("p0", {}),
    }
    p0 = res["port_p0"]
    offered = p0["packets"] + p0["drops"]
    res["port_p0"]["drop_fraction"] = p0["drops"] / offered if offered else 0
    with open(os.path.join(d, "fabric.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    b = res["blasters_mbit"]
    print(f"link {rate} Mbit/s, port buffer {buffer} B")
    print(f"overrun: blasters sent {b[0]:.0f} + {b[1]:.0f} Mbit/s, h0 received "
          f"{res['sink_mbit']:.0f} Mbit/s")
    print(f"  port p0: {p0['packets']} sent, {p0['drops']} dropped "
          f"({100 * res['port_p0']['drop_fraction']:.1f}%), max backlog "
          f"{p0['max_backlog_bytes']} B; softnet backlog drops {softnet}")
    print(f"{'probe RTT (us)':22} {'p50':>8} {'p99':>8} {'lost':>5}")
    for name in ("probe_idle", "probe_loaded"):
        for t, c in sorted(res[name].items(), key=lambda x: -int(x[0])):
            p50 = c['p50_us'] or 0
            p99 = c['p99_us'] or 0
            print(f"{name[6:] + ' prio ' + t:22} {p50:8.0f} {p99:8.0f} {c['lost']:5}")
    for t, c in sorted(res["queues_probe_p0"].items(), key=lambda x: -int(x[0])):
        if c["packets"] or c["drops"]:
            print(f"  p0 prio {t}: {c['packets']} pkts, {c['drops']} drops, "
                  f"max backlog {c['max_backlog_bytes']} B")


def baseline(out, files):
    """Per-size minimum of several baseline files; raises OSError/ValueError."""
    best = {}
    for path in files:
        with open(path) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                size, ns = line.split()
                best[int(size)] = min(float(ns), best.get(int(size), float("inf")))
    with open(out, "w") as f:
        f.write("# homa-bench baseline: size_bytes best_unloaded_ns (minimum of %s)\n"
                % " ".join(os.path.basename(p) for p in files))
        for size in sorted(best):
            f.write("%d %.1f\n" % (size, best[size]))


def wmean(pairs):
    """Weighted mean of (value, weight) pairs, skipping None; None if empty."""
    pairs = [(v, w) for v, w in pairs if v is not None and w]
    tot = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / tot if tot else None


def queue_summary(path):
    """Totals of a qstats watch file: packets and drops per priority over all
    ports, the largest backlog and the priorities that carried packets."""
    if not os.path.exists(path):
        return None
    q = load(path)
    prio = {str(p): {"packets": 0, "bytes": 0, "drops": 0, "max_backlog_bytes": 0} for p in range(8)}
    for port in q.values():
        for p, c in port.items():
            prio[p]["packets"] += c["packets"]
            prio[p]["bytes"] += c.get("bytes", 0)
            prio[p]["drops"] += c["drops"]
            prio[p]["max_backlog_bytes"] = max(prio[p]["max_backlog_bytes"], c["max_backlog_bytes"])
    return {"per_priority": prio,
            "priorities_used": [int(p) for p in sorted(prio) if prio[p]["packets"] > 0],
            "drops": sum(c["drops"] for c in prio.values()),
            "port_bytes": sum(c["bytes"] for c in prio.values()),  # wire bytes to the hosts
            "max_backlog_bytes": max(c["max_backlog_bytes"] for c in prio.values())}


def server_counters(d):
    """Sum of the "homa counters:" lines the Homa servers of arm directory D
    print when they stop (server-h*.log), or None if there are none."""
    total = {}
    for path in sorted(glob.glob(os.path.join(d, "server-h*.log"))):
        with open(path) as f:
            for line in f:
                if "homa counters:" not in line:
                    continue
                for kv in line.split("homa counters:", 1)[1].split():
                    k, _, v = kv.partition("=")
                    if v.isdigit():
                        total[k] = total.get(k, 0) + int(v)
    return total or None


def cpu_list(spec):
    """CPU numbers of a taskset list such as "0", "0-2" or "0,2-3"."""
    cpus = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return cpus


def host_cpu_window(path):
    """(busy, capacity) seconds of the hosts' CPUs between the two /proc/stat
    snapshots of a cpustat file (cpustat_start in bench.sh): capacity is the
    wall time of the window times the number of host CPUs, busy is capacity
    minus their idle and iowait. The kernel accounts idle exactly, while the
    user, system and softirq columns are sampled on timer ticks and
    undercount loads that sleep and wake often (GUIDE section 6), so the
    busy time is what idle leaves. None if the file is missing, lacks the
    wall-clock lines or the window did not close."""
    if not os.path.exists(path):
        return None
    hosts, snap, wall = set(), {"open": {}, "close": {}}, {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "hosts":
                hosts = cpu_list(w[1])
            elif w[0] in snap and w[1] == "wall":
                wall[w[0]] = float(w[2])
            elif w[0] in snap:
                snap[w[0]][w[1]] = [int(x) for x in w[2:10]]
    names = [f"cpu{c}" for c in sorted(hosts)]
    if not names or any(n not in snap["open"] or n not in snap["close"] for n in names):
        return None
    if "open" not in wall or "close" not in wall:
        return None
    idle = 0
    for n in names:
        d = [b - a for a, b in zip(snap["open"][n], snap["close"][n])]
        idle += d[3] + d[4]  # idle iowait
    capacity = (wall["close"] - wall["open"]) * len(names)
    return max(capacity - idle / os.sysconf("SC_CLK_TCK"), 0.0), capacity


def host_tasks_window(path):
    """(tasks, softirq) seconds in the window of a cpustat file: tasks is
    the CPU time of the processes started on the hosts (the "tasks" lines,
    cpuacct.usage of their cgroup, cg_add in run.sh: exact, other jobs on
    the CPUs do not move it, and it holds the softirq work that ran while
    one of them was on the CPU); softirq is the softirq column of the
    hosts' CPUs (sampled on ticks, other jobs' softirq work included, and
    work the tasks figure already holds may be counted again): tasks alone
    leaves out softirq work done while another process was on the CPU,
    tasks + softirq counts it at most twice. None if the file is missing
    or lacks either tasks line."""
    if not os.path.exists(path):
        return None
    hosts, tasks, soft = set(), {}, {"open": {}, "close": {}}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "hosts":
                hosts = cpu_list(w[1])
            elif w[0] in soft and w[1] == "tasks":
                tasks[w[0]] = int(w[2])
            elif w[0] in soft and w[1].startswith("cpu") and len(w) > 8:
                soft[w[0]][w[1]] = int(w[8])
    if "open" not in tasks or "close" not in tasks:
        return None
    ticks = sum(soft["close"].get(f"cpu{c}", 0) - soft["open"].get(f"cpu{c}", 0)
                for c in hosts)
    return (tasks["close"] - tasks["open"]) / 1e9, max(ticks, 0) / os.sysconf("SC_CLK_TCK")


def host_cpu_seconds(path):
    """Busy seconds of the hosts' CPUs in the window of a cpustat file
    (host_cpu_window()), or None."""
    w = host_cpu_window(path)
    return w[0] if w else None


# Hosts' CPUs busier than this share of the window had (almost) no idle
# time: other work filled whatever the arm left, so busy time per RPC is
# the window divided by the RPCs, not what the arm cost.
SATURATED = 0.98


def merge_arm(d, capacity_gbps):
    """Merges the client JSON files of one arm directory. Percentiles over
    clients are count-weighted means of the clients' own percentiles (the
    clients draw from the same distribution); the worst client's short P99
    is kept too. Returns a dict, or one with "error" if no client finished."""
    clients = [load(p) for p in sorted(glob.glob(os.path.join(d, "client-h*.json")))]
    if not clients:
        return {"error": "no client results"}
    w = [c.get("rpcs") or 0 for c in clients]
    arm = {
        "clients": len(clients),
        "rpcs": sum(w),
        "errors": sum(c.get("errors") or 0 for c in clients),
        "unfinished": sum(c.get("unfinished") or 0 for c in clients),
        "goodput_gbps": sum(c.get("gbps") or 0 for c in clients),
        "cpu_us_per_rpc": wmean((c.get("cpu_us_per_rpc"), x) for c, x in zip(clients, w)),
        "p50_us": wmean((c.get("p50_us"), x) for c, x in zip(clients, w)),
        "p99_us": wmean((c.get("p99_us"), x) for c, x in zip(clients, w)),
    }
    for k in ("short_p50_slowdown", "short_p99_slowdown"):
        arm[k] = wmean((c.get(k), x) for c, x in zip(clients, w))
    arm["short_p99_slowdown_worst_client"] = max(
        (c.get("short_p99_slowdown") or 0 for c in clients), default=None)
    arm["load_fraction"] = arm["goodput_gbps"] / capacity_gbps if capacity_gbps else None
    buckets = []
    for b in range(max(len(c.get("buckets") or []) for c in clients)):
        rows = [(c["buckets"][b], x) for c, x in zip(clients, w) if len(c.get("buckets") or []) > b]
        m = {"max_bytes": rows[0][0]["max_bytes"], "count": sum(r["count"] for r, _ in rows)}
        for k in ("p50_us", "p99_us", "p50_slowdown", "p99_slowdown"):
            m[k] = wmean((r.get(k), r["count"]) for r, _ in rows)
        buckets.append(m)
    arm["buckets"] = buckets
    counters = [c["homa_counters"] for c in clients if "homa_counters" in c]
    if counters:  # Homa arms: the client sockets' protocol counters, summed
        arm["homa_counters"] = {k: sum(c.get(k) or 0 for c in counters) for k in counters[0]}
    servers = server_counters(d)
    if servers:
        arm["homa_server_counters"] = servers
    arm["queues"] = queue_summary(os.path.join(d, "queues.json"))
    window = host_cpu_window(os.path.join(d, "cpustat.txt"))
    busy = window[0] if window else None
    arm["host_cpu_us_per_rpc"] = busy * 1e6 / arm["rpcs"] if busy is not None and arm["rpcs"] else None
    arm["host_cpu_busy_fraction"] = busy / window[1] if window and window[1] > 0 else None
    tasks = host_tasks_window(os.path.join(d, "cpustat.txt"))
    per = (lambda s: s * 1e6 / arm["rpcs"]) if tasks and arm["rpcs"] else (lambda s: None)
    arm["host_tasks_us_per_rpc"] = per(tasks[0]) if tasks else None
    arm["host_softirq_us_per_rpc"] = per(tasks[1]) if tasks else None
    short = [(b.get("p99_us"), b["count"]) for b in buckets if b["max_bytes"] <= SHORT_BYTES]
    arm["short_p99_us"] = wmean(short) if short else None
    probe = os.path.join(d, "probe.json")
    if os.path.exists(probe):  # run floor: top-priority probes during the window
        arm["probe"] = load(probe)["classes"]["7"]
    return arm


def plot(d, title, arms):
    """P99 slowdown per size bucket, every arm on one chart: DIR/p99.png."""
    names = [a for a in arms if arms[a].get("buckets")]
    if not names:
        return
    cmds = ["set terminal pngcairo size 800,500" if has_cairo() else "set terminal png size 800,500",
            f"set output '{os.path.join(d, 'p99.png')}'", f"set title '{title}'",
            "set logscale xy", "set xlabel 'message size (bytes, bucket upper bound)'",
            "set ylabel 'P99 slowdown'", "set key top left", "set grid"]
    plots = []
    for a in names:
        dat = os.path.join(d, f"p99-{a}.dat")
        with open(dat, "w") as f:
            for b in arms[a]["buckets"]:
                if b.get("p99_slowdown"):
                    f.write(f"{b['max_bytes']} {b['p99_slowdown']:.3f}\n")
        plots.append(f"'{dat}' using 1:2 with linespoints title '{a}'")
    cmds.append("plot " + ", ".join(plots))
    subprocess.run(["gnuplot"], input="\n".join(cmds) + "\n", text=True, check=True)


def has_cairo():
    """True if gnuplot has the pngcairo terminal."""
    r = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (r.stdout + r.stderr)


def fmt(v, nd=2):
    """Formats a number for a table; '-' for None."""
    return "-" if v is None else f"{v:.{nd}f}"


def case(d, name, wl, load_pct, rate, hosts, arm_names):
    """Merges every arm of a case into DIR/run.json, prints it, plots it."""
    link = rate / 1000
    capacity = link if name == "incast" else link * hosts
    arms = {a: merge_arm(os.path.join(d, a), capacity) for a in arm_names}
    res = {"experiment": name, "workload": wl, "load_percent": int(load_pct),
           "link_mbit": rate, "hosts": hosts, "arms": arms}
    ref = arms.get(arm_names[0], {})
    idle = os.path.join(d, "probe-idle.json")
    if os.path.exists(idle):
        res["probe_idle"] = load(idle)["classes"]["7"]
    res["ratios"] = {}
    for a in arm_names[1:]:
        o = arms[a]
        r = {}
        if ref.get("short_p99_slowdown") and o.get("short_p99_slowdown"):
            r["short_p99_slowdown_" + a + "_over_" + arm_names[0]] = \
                o["short_p99_slowdown"] / ref["short_p99_slowdown"]
        if ref.get("goodput_gbps") and o.get("goodput_gbps"):
            r["goodput_" + arm_names[0] + "_over_" + a] = ref["goodput_gbps"] / o["goodput_gbps"]
        res["ratios"][a] = r
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print(case_table(res))
    plot(d, f"{name} {wl} {load_pct}% of {rate} Mbit/s, {hosts} hosts", arms)


def busy_cell(fraction):
    """The hosts' CPU busy share as a table cell: "57%", "100% (saturated)", "-"."""
    if fraction is None:
        return "-"
    return f"{fraction:.0%}" + (" (saturated)" if fraction >= SATURATED else "")


def tasks_cell(o):
    """The hosts' processes' CPU per RPC and the hosts' CPUs' softirq time per
    RPC as a table cell: "812.0 (+ 95.1)", "-"."""
    if o.get("host_tasks_us_per_rpc") is None:
        return "-"
    return f"{fmt(o['host_tasks_us_per_rpc'], 1)} (+ {fmt(o.get('host_softirq_us_per_rpc'), 1)})"


def case_table(res):
    """Markdown table of one case."""
    lines = [f"**{res['experiment']} {res['workload']} {res['load_percent']}%** "
             f"({res['hosts']} hosts, {res['link_mbit']} Mbit/s)", "",
             "| arm | short P50 sd | short P99 sd | goodput Gbps | load | CPU us/RPC | hosts' CPU us/RPC | hosts' CPU busy | hosts' processes us/RPC (+ softirq) | RPCs | unfinished | prios used | drops | max backlog B |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for a, o in res["arms"].items():
        q = o.get("queues") or {}
        lines.append(f"| {a} | {fmt(o.get('short_p50_slowdown'))} | {fmt(o.get('short_p99_slowdown'))} "
                     f"| {fmt(o.get('goodput_gbps'), 3)} | {fmt(o.get('load_fraction'))} "
                     f"| {fmt(o.get('cpu_us_per_rpc'), 1)} | {fmt(o.get('host_cpu_us_per_rpc'), 1)} "
                     f"| {busy_cell(o.get('host_cpu_busy_fraction'))} "
                     f"| {tasks_cell(o)} | {o.get('rpcs', '-')} | {o.get('unfinished', '-')} "
                     f"| {','.join(map(str, q.get('priorities_used', [])))} | {q.get('drops', '-')} "
                     f"| {q.get('max_backlog_bytes', '-')} |")
    lines.append("")
    full = [a for a, o in res["arms"].items() if (o.get("host_cpu_busy_fraction") or 0) >= SATURATED]
    if full:
        lines += [f"Hosts' CPUs saturated in {', '.join(full)}: no idle time left in the window "
                  "(other work took what the arm left), so hosts' CPU us/RPC there is the window "
                  "divided by the RPCs, not the arm's cost.", ""]
    lines += floor_lines(res)
    for a, o in res["arms"].items():
        for key, who in (("homa_counters", "clients'"), ("homa_server_counters", "servers'")):
            c = o.get(key)
            if c:
                lines.append(f"{a} {who} sockets: DATA out {c.get('data_pkts_sent')}, GRANTs out "
                             f"{c.get('grants_sent')} / in {c.get('grants_received')}, RESENDs out "
                             f"{c.get('resends_sent')} / in {c.get('resends_received')}, BUSY out "
                             f"{c.get('busy_sent')}, retransmitted {c.get('retransmitted_bytes')} B, "
                             f"timed out {c.get('rpcs_timed_out')}, dropped {c.get('packets_dropped')}")
                lines.append("")
    hdr = "| bucket <= bytes | " + " | ".join(f"{a} P50 / P99 sd" for a in res["arms"]) + " |"
    lines += [hdr, "|---" * (1 + len(res["arms"])) + "|"]
    nb = max(len(o.get("buckets") or []) for o in res["arms"].values())
    for b in range(nb):
        row, size = [], None
        for o in res["arms"].values():
            bk = (o.get("buckets") or [])
            if b < len(bk):
                size = bk[b]["max_bytes"]
                row.append(f"{fmt(bk[b].get('p50_slowdown'), 1)} / {fmt(bk[b].get('p99_slowdown'), 1)}")
            else:
                row.append("-")
        lines.append(f"| {size} | " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def floor_lines(res):
    """Lines comparing each arm's short messages with the top-priority UDP
    probes that crossed the same fabric during its window (run floor)."""
    idle, lines = res.get("probe_idle"), []
    for a, o in res["arms"].items():
        p = o.get("probe")
        if not p or not idle or not idle.get("p50_us"):
            continue
        lines.append(f"floor: priority-7 UDP probes (1 per ms, through an echo) beside {a}: "
                     f"P50 {fmt(p['p50_us'], 0)} / P99 {fmt(p['p99_us'], 0)} us, idle P50 "
                     f"{fmt(idle['p50_us'], 0)} us, P99 / idle P50 = {fmt(p['p99_us'] / idle['p50_us'], 1)}, "
                     f"lost {p['lost']}; {a}'s short messages: P99 {fmt(o.get('short_p99_us'), 0)} us, "
                     f"slowdown {fmt(o.get('short_p99_slowdown'), 1)}")
        lines.append("")
    return lines


def index(out):
    """Prints the tables of every run.json under OUT."""
    for path in sorted(glob.glob(os.path.join(out, "*", "*", "run.json"))):
        print(case_table(load(path)))


def main(argv):
    """Command-line entry; returns the exit status."""
    if len(argv) == 6 and argv[1] == "fabric":
        fabric(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
        return 0
    if len(argv) >= 4 and argv[1] == "baseline":
        baseline(argv[2], argv[3:])
        return 0
    if len(argv) >= 9 and argv[1] == "case":
        case(argv[2], argv[3], argv[4], argv[5], int(argv[6]), int(argv[7]), argv[8:])
        return 0
    if len(argv) == 3 and argv[1] == "index":
        index(argv[2])
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
