#!/usr/bin/env python3
"""compare_spread: the spread of several `homa-bench compare --scenario all
--json` runs, for a machine where one run's ratios cannot be trusted.

  compare_spread.py RUN.json RUN.json ...

Prints one Markdown table: each figure of docs/BENCH.md's results with
Homa's and TCP's median (range) over the runs and the median (range) of
the per-run Homa/TCP ratios (a ratio is taken inside one run, whose arms
alternate, never across runs), then Homa's payload copies per byte.
Exit status: 0, 1 on a file that is not such a run (the reason on
stderr), 2 without files.
"""
import json
import statistics
import sys

# (label, scenario, value of one arm's object)
FIGURES = [
    ("rtt: 100 B P50 (µs)", "rtt", lambda a: a["p50_us"]),
    ("rtt: 100 B P99 (µs)", "rtt", lambda a: a["p99_us"]),
    ("rtt: CPU per RPC, getrusage (µs)", "rtt", lambda a: a["cpu_us_per_rpc"]),
    ("rtt: machine busy CPU per RPC (µs)", "rtt", lambda a: a["host_cpu_us_per_rpc"]),
    ("rtt: system calls per RPC", "rtt", lambda a: a["syscalls_per_rpc"]),
    ("rtt: context switches per RPC", "rtt", lambda a: a["ctxsw_per_rpc"]),
    ("1 stream goodput (Gbps)", "throughput", lambda a: a["gbps"]),
    ("4 streams goodput (Gbps)", "throughput", lambda a: a["four_streams"]["gbps"]),
    ("CPU per 500 KB RPC, getrusage (µs)", "throughput", lambda a: a["cpu_us_per_rpc"]),
    ("machine busy CPU per 500 KB RPC (µs)", "throughput", lambda a: a["host_cpu_us_per_rpc"]),
    ("system calls per 500 KB RPC", "throughput", lambda a: a["syscalls_per_rpc"]),
    ("context switches per 500 KB RPC", "throughput", lambda a: a["ctxsw_per_rpc"]),
    ("rate: 100 B RPCs per CPU-second (k)", "rate", lambda a: 1e3 / a["cpu_us_per_rpc"]),
    ("rate: 100 B RPCs per busy CPU-second (k)", "rate",
     lambda a: 1e3 / a["host_cpu_us_per_rpc"]),
    ("rate: system calls per RPC", "rate", lambda a: a["syscalls_per_rpc"]),
    ("rate: context switches per RPC", "rate", lambda a: a["ctxsw_per_rpc"]),
    ("mixed: lookup P99 beside 2 bulk streams (µs)", "mixed", lambda a: a["p99_us"]),
    ("mixed: bulk goodput (Gbps)", "mixed", lambda a: a["bulk"]["gbps"]),
]
COPIES = ("rtt", "throughput", "mixed")


def scenario(run, name):
    """The result of scenario NAME in RUN (KeyError if it has none)."""
    for r in run["results"]:
        if r.get("scenario") == name:
            return r
    raise KeyError(f"no '{name}' scenario")


def num(x):
    """X with three significant digits, thousands separated from 1000 on."""
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def spread(values, fmt):
    """"median (low-high)" of VALUES, each formatted by FMT."""
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def table(runs):
    """The Markdown lines for RUNS (parsed JSON documents)."""
    lines = [f"{len(runs)} runs; homa and tcp: median (range) over the runs; "
             "homa/tcp: median (range) of each run's own ratio", "",
             "| figure | homa | tcp | homa/tcp |", "|---|---|---|---|"]
    for label, scen, get in FIGURES:
        h = [get(scenario(r, scen)["homa"]) for r in runs]
        t = [get(scenario(r, scen)["tcp"]) for r in runs]
        ratio = [a / b for a, b in zip(h, t)]
        lines.append(f"| {label} | {spread(h, num)} | {spread(t, num)} "
                     f"| {spread(ratio, lambda x: f'{x:.2f}')} |")
    copies = [spread([scenario(r, s)["homa"]["copies_per_byte"] for r in runs],
                     lambda x: f"{x:.2f}") for s in COPIES]
    lines += ["", "library payload copies per byte, homa (rtt / throughput / mixed): "
              + " / ".join(copies)]
    return lines


def main(argv):
    """Reads the runs named in ARGV, prints the table; returns the exit status."""
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    runs = []
    for path in argv[1:]:
        try:
            with open(path) as f:
                run = json.load(f)
            for s in ("rtt", "throughput", "rate", "mixed"):
                scenario(run, s)
            runs.append(run)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"compare_spread: {path}: not a 'compare --scenario all --json' run: {e}",
                  file=sys.stderr)
            return 1
    try:
        print("\n".join(table(runs)))
    except (KeyError, TypeError, ZeroDivisionError) as e:
        print(f"compare_spread: a run lacks a figure: {e!r}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
