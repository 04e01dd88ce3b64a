#!/usr/bin/env python3
"""test_compare_spread: tools/bench/compare_spread.py on three made-up
`compare --scenario all --json` runs (no homa-bench run). Checks that a
figure's homa/tcp column is the median and range of each run's own ratio
(not the ratio of the medians), that the arms' columns are their own
medians and ranges, and that a file without every scenario is refused
with exit status 1 and its name.

  test_compare_spread.py SRC
"""
import json
import os
import subprocess
import sys
import tempfile


def arm(p50, cpu):
    """One arm's object with every field compare_spread reads."""
    return {"p50_us": p50, "p99_us": 2 * p50, "cpu_us_per_rpc": cpu,
            "host_cpu_us_per_rpc": 2 * cpu, "syscalls_per_rpc": 6.0, "ctxsw_per_rpc": 2.0,
            "gbps": 10.0, "four_streams": {"gbps": 20.0}, "bulk": {"gbps": 5.0},
            "copies_per_byte": 1.5}


def run(homa_p50, tcp_p50):
    """A run whose every scenario has these P50s (CPU 50 / 40 us)."""
    return {"scenario": "all", "results": [
        {"scenario": s, "homa": arm(homa_p50, 50.0), "tcp": arm(tcp_p50, 40.0)}
        for s in ("rtt", "throughput", "rate", "mixed")]}


def main(argv):
    """Runs the checks; returns the exit status."""
    tool = os.path.join(argv[1], "tools", "bench", "compare_spread.py")
    bad = []
    with tempfile.TemporaryDirectory() as d:
        # runs' own ratios 2.0, 0.5, 0.75: median 0.75, where the ratio
        # of the medians (homa 20 / tcp 20) would be 1.00
        docs = [run(20.0, 10.0), run(10.0, 20.0), run(30.0, 40.0)]
        files = []
        for i, doc in enumerate(docs):
            files.append(os.path.join(d, f"c{i}.json"))
            with open(files[-1], "w") as f:
                json.dump(doc, f)
        out = subprocess.run([sys.executable, tool] + files, capture_output=True, text=True)
        if out.returncode != 0:
            bad.append(f"exit {out.returncode}: {out.stderr}")
        row = next((l for l in out.stdout.splitlines() if l.startswith("| rtt: 100 B P50")), "")
        if row != "| rtt: 100 B P50 (µs) | 20 (10-30) | 20 (10-40) | 0.75 (0.50-2.00) |":
            bad.append(f"P50 row: {row!r}")
        if "3 runs" not in out.stdout:
            bad.append("run count missing")
        rate = next((l for l in out.stdout.splitlines()
                     if l.startswith("| rate: 100 B RPCs per CPU-second")), "")
        if "| 20 (20-20) | 25 (25-25) | 0.80 (0.80-0.80) |" not in rate:
            bad.append(f"RPCs per CPU-second row: {rate!r}")
        broken = os.path.join(d, "broken.json")
        with open(broken, "w") as f:
            json.dump({"scenario": "all", "results": docs[0]["results"][:2]}, f)
        out = subprocess.run([sys.executable, tool, files[0], broken], capture_output=True,
                             text=True)
        if out.returncode != 1 or "broken.json" not in out.stderr or "rate" not in out.stderr:
            bad.append(f"a run without 'rate': exit {out.returncode}, {out.stderr!r}")
    for b in bad:
        print("FAIL:", b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
