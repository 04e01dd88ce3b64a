#!/usr/bin/env python3
"""collective: tables and plots of `scripts/testbed run collective`.

  collective.py DIR RATE_MBIT HOSTS ARM...
      read DIR/PATTERN-bgPCT/ARM/{device.json,queues.json},
      write DIR/collective.json, print markdown tables (one per background
      share) with the targets of issue 28 checked, and draw
      DIR/steps-PATTERN-bgPCT.png (step-time distribution per arm) and
      DIR/idle.png (idle fraction against background load).
"""
import glob
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  (same folder: load, queue_summary, fmt, has_cairo)

PATTERNS = ("alltoall", "allreduce", "lookups")


def arm_result(d):
    """One arm's figures from its folder D, or {"error": ...}."""
    path = os.path.join(d, "device.json")
    if not os.path.exists(path):
        return {"error": "no device.json (see device-h*.log)"}
    dev = report.load(path)
    res = {k: dev.get(k) for k in ("steps", "step_p50_us", "step_p99_us", "step_max_us",
                                   "step_mean_us", "comm_us_per_step", "compute_us_per_step",
                                   "idle_fraction", "device_cpu_us_per_step",
                                   "host_cpu_us_per_step")}
    if (res["host_cpu_us_per_step"] or 0) < 0:
        res["host_cpu_us_per_step"] = None
    res["step_us"] = dev.get("step_us", [])
    res["queues"] = report.queue_summary(os.path.join(d, "queues.json"))
    return res


def collect(d, arms):
    """{pct: {pattern: {arm: figures}}} of every case folder under D."""
    cases = {}
    for cd in sorted(glob.glob(os.path.join(d, "*-bg*"))):
        m = re.match(r"(\w+)-bg(\d+)$", os.path.basename(cd))
        if not m or m.group(1) not in PATTERNS:
            continue
        cases.setdefault(int(m.group(2)), {})[m.group(1)] = {
            a: arm_result(os.path.join(cd, a)) for a in arms if os.path.isdir(os.path.join(cd, a))}
    return cases


def ratio(a, b):
    """a / b, or None."""
    return a / b if a and b else None


def table(pct, pats, arms, rate, hosts):
    """Markdown lines of one background share."""
    out = [f"**collective, background {pct}% of the link** ({hosts} hosts, {rate} Mbit/s)", "",
           "| pattern | arm | step P50 ms | step P99 ms | step max ms | comm ms/step | idle fraction "
           "| idle arm / homa | P99 homa / arm | hosts' CPU ms/step | devices' getrusage ms/step "
           "| drops | max backlog B |", "|---" * 13 + "|"]
    for p in PATTERNS:
        if p not in pats:
            continue
        h = pats[p].get("homa", {})
        for a in arms:
            o = pats[p].get(a)
            if o is None:
                continue
            if "error" in o:
                out.append(f"| {p} | {a} | {o['error']} |" + " |" * 11)
                continue
            q = o.get("queues") or {}
            ms = lambda v: None if v is None else v / 1000  # noqa: E731
            out.append(
                f"| {p} | {a} | {report.fmt(ms(o['step_p50_us']), 1)} | {report.fmt(ms(o['step_p99_us']), 1)} "
                f"| {report.fmt(ms(o['step_max_us']), 1)} | {report.fmt(ms(o['comm_us_per_step']), 1)} "
                f"| {report.fmt(o['idle_fraction'], 3)} "
                f"| {report.fmt(ratio(o['idle_fraction'], h.get('idle_fraction')))} "
                f"| {report.fmt(ratio(h.get('step_p99_us'), o['step_p99_us']))} "
                f"| {report.fmt(ms(o.get('host_cpu_us_per_step')), 2)} "
                f"| {report.fmt(ms(o.get('device_cpu_us_per_step')), 2)} "
                f"| {q.get('drops', '-')} | {q.get('max_backlog_bytes', '-')} |")
    out.append("")
    return out


def targets(cases, arms):
    """Lines checking issue 28's targets at the largest background share."""
    if not cases or "homa" not in arms:
        return []
    pct = max(cases)
    out = [f"Targets (background {pct}%):"]
    for a in arms:
        if a == "homa":
            continue
        for p in PATTERNS:
            h, t = cases[pct].get(p, {}).get("homa", {}), cases[pct].get(p, {}).get(a, {})
            if "step_p99_us" not in h or "step_p99_us" not in t:
                out.append(f"- {p} vs {a}: missing")
                continue
            r = ratio(h["step_p99_us"], t["step_p99_us"])
            idle_ok = h["idle_fraction"] < t["idle_fraction"]
            line = (f"- {p} vs {a}: idle fraction {h['idle_fraction']:.3f} vs {t['idle_fraction']:.3f} "
                    f"({'lower: met' if idle_ok else 'not lower: NOT met'})")
            if p != "allreduce":
                line += (f"; P99 step Homa / {a} = {r:.2f} "
                         f"({'<= 0.5: met' if r <= 0.5 else '> 0.5: NOT met'})")
            out.append(line)
    out.append("")
    return out


def gnuplot(cmds):
    """Runs gnuplot on the command lines CMDS."""
    term = "set terminal pngcairo size 800,500" if report.has_cairo() else "set terminal png size 800,500"
    subprocess.run(["gnuplot"], input="\n".join([term] + cmds) + "\n", text=True, check=True)


def plot_steps(d, pct, p, arms_figs):
    """Step-time distribution (CDF) of every arm: D/steps-P-bgPCT.png."""
    plots = []
    for a, o in arms_figs.items():
        st = sorted(o.get("step_us") or [])
        if not st:
            continue
        dat = os.path.join(d, f"steps-{p}-bg{pct}-{a}.dat")
        with open(dat, "w") as f:
            for i, v in enumerate(st):
                f.write(f"{v / 1000:.3f} {(i + 1) / len(st):.4f}\n")
        plots.append(f"'{dat}' using 1:2 with steps title '{a}'")
    if plots:
        gnuplot([f"set output '{os.path.join(d, f'steps-{p}-bg{pct}.png')}'",
                 f"set title '{p}, background {pct}%: step time distribution'",
                 "set xlabel 'step time (ms)'", "set ylabel 'share of steps'",
                 "set key bottom right", "set grid", "plot " + ", ".join(plots)])


def plot_idle(d, cases, arms):
    """Idle fraction against background load, a line per pattern and arm: D/idle.png."""
    plots = []
    for p in PATTERNS:
        for a in arms:
            pts = [(pct, cases[pct][p][a]["idle_fraction"]) for pct in sorted(cases)
                   if p in cases[pct] and "idle_fraction" in cases[pct][p].get(a, {})]
            if not pts:
                continue
            dat = os.path.join(d, f"idle-{p}-{a}.dat")
            with open(dat, "w") as f:
                for x, y in pts:
                    f.write(f"{x} {y:.4f}\n")
            plots.append(f"'{dat}' using 1:2 with linespoints title '{p} {a}'")
    if plots:
        gnuplot([f"set output '{os.path.join(d, 'idle.png')}'",
                 "set title 'idle fraction: device time waiting on the network'",
                 "set xlabel 'background load (% of link)'", "set ylabel 'idle fraction'",
                 "set yrange [0:1]", "set key outside right", "set grid", "plot " + ", ".join(plots)])


def main(argv):
    """Command-line entry; returns the exit status."""
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    d, rate, hosts, arms = argv[1], int(argv[2]), int(argv[3]), argv[4:]
    cases = collect(d, arms)
    with open(os.path.join(d, "collective.json"), "w") as f:
        json.dump({"link_mbit": rate, "hosts": hosts, "background_percent": cases}, f, indent=1,
                  sort_keys=True)
    lines = []
    for pct in sorted(cases):
        lines += table(pct, cases[pct], arms, rate, hosts)
        for p, figs in cases[pct].items():
            plot_steps(d, pct, p, figs)
    lines += targets(cases, arms)
    plot_idle(d, cases, arms)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
