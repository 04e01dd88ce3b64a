#!/usr/bin/env python3
"""test_collective_report: scripts/testbed.d/collective.py on made-up runs
(no root, no testbed). Checks that the tables carry every pattern and arm,
that the TCP/Homa idle ratio and Homa/TCP P99 ratio are computed, that the
targets of issue 28 are judged (met where Homa's P99 is at most half of
TCP's and its idle fraction lower, NOT met otherwise), and that
collective.json keeps the step times.

  test_collective_report.py SRC
"""
import json
import os
import subprocess
import sys
import tempfile


def device(p99, idle, steps=(1000.0, 2000.0)):
    """Rank 0's device.json with the given P99 step time and idle fraction."""
    return {"mode": "device", "steps": len(steps), "warmup_steps": 1, "step_p50_us": min(steps),
            "step_p99_us": p99, "step_max_us": p99, "step_mean_us": p99, "comm_us_per_step": 500.0,
            "compute_us_per_step": 500.0, "idle_fraction": idle, "device_cpu_us_per_step": 10.0,
            "host_cpu_us_per_step": 40.0, "step_us": list(steps)}


def main(argv):
    """Runs the check; returns the exit status."""
    script = os.path.join(argv[1], "scripts", "testbed.d", "collective.py")
    figs = {  # (pattern, background): (homa P99, homa idle, tcp P99, tcp idle)
        ("alltoall", 0): (2000.0, 0.3, 2500.0, 0.4),
        ("alltoall", 50): (2000.0, 0.3, 8000.0, 0.8),   # met
        ("lookups", 50): (3000.0, 0.5, 4000.0, 0.6),    # P99 ratio 0.75: not met
        ("allreduce", 50): (3000.0, 0.7, 3000.0, 0.6),  # idle higher: not met
    }
    with tempfile.TemporaryDirectory() as d:
        for (p, bg), (hp, hi, tp, ti) in figs.items():
            for arm, obj in (("homa", device(hp, hi)), ("tcp-cubic", device(tp, ti))):
                ad = os.path.join(d, f"{p}-bg{bg}", arm)
                os.makedirs(ad)
                with open(os.path.join(ad, "device.json"), "w") as f:
                    json.dump(obj, f)
        out = subprocess.run([sys.executable, script, d, "20", "8", "homa", "tcp-cubic"],
                             capture_output=True, text=True, check=True).stdout
        with open(os.path.join(d, "collective.json")) as f:
            doc = json.load(f)
        plots = sorted(x for x in os.listdir(d) if x.endswith(".png"))
    bad = []
    want = ["| alltoall | tcp-cubic | 1.0 | 8.0 | 8.0 | 0.5 | 0.800 | 2.67 | 0.25 |",
            "- alltoall vs tcp-cubic: idle fraction 0.300 vs 0.800 (lower: met); "
            "P99 step Homa / tcp-cubic = 0.25 (<= 0.5: met)",
            "- lookups vs tcp-cubic: idle fraction 0.500 vs 0.600 (lower: met); "
            "P99 step Homa / tcp-cubic = 0.75 (> 0.5: NOT met)",
            "- allreduce vs tcp-cubic: idle fraction 0.700 vs 0.600 (not lower: NOT met)",
            "**collective, background 0% of the link**"]
    for w in want:
        if w not in out:
            bad.append("missing line: " + w)
    steps = doc["background_percent"]["50"]["alltoall"]["homa"]["step_us"]
    if steps != [1000.0, 2000.0]:
        bad.append(f"step_us {steps}")
    if "idle.png" not in plots or "steps-alltoall-bg50.png" not in plots:
        bad.append(f"plots {plots}")
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    if bad:
        print(out, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
