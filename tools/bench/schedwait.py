#!/usr/bin/env python3
"""Who waits for a CPU, and behind whom: per-thread scheduling figures from
`perf sched timehist` output (a text file, or `-` for standard input).

For each thread whose name starts with one of the --match prefixes (all
threads if none is given) it prints the times it was switched in, its run
time per slice (P50, P99), its scheduling delay per wake-up (time runnable
before it got the CPU: P50, P99, max) and the share of wake-ups that
waited longer than --threshold-us. For each --blame prefix it then sums,
over the matching threads' waits longer than the threshold, which threads
ran on the CPU the waiting thread then ran on, while it waited.

Percentiles are nearest rank. One timehist line is one slice: at TIME
the thread left CPU after running RUN ms, which it got after waiting SCH
ms runnable, so the wait covers [TIME - RUN - SCH, TIME - RUN].

Usage: schedwait.py TIMEHIST [--threshold-us US] [--match PREFIX ...]
                    [--blame PREFIX ...] [--min-slices N]
"""
import argparse
import bisect
import collections
import re
import sys

LINE = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(\S.*?)\s+(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)\s*$")

Slice = collections.namedtuple("Slice", "end cpu task sch_ms run_ms")


def parse(lines):
    """The slices of timehist text @lines (header and other lines skipped)."""
    out = []
    for line in lines:
        m = LINE.match(line)
        if m:
            end, cpu, task, _wait, sch, run = m.groups()
            out.append(Slice(float(end), int(cpu), task, float(sch), float(run)))
    return out


def name_of(task):
    """A timehist task field's name without its [tid/pid] suffix."""
    return task.split("[", 1)[0]


def nearest_rank(sorted_vals, p):
    """The nearest-rank @p percentile (0 < p <= 100) of non-empty @sorted_vals."""
    k = max(1, -(-len(sorted_vals) * p // 100))
    return sorted_vals[k - 1]


def matches(task, prefixes):
    """Whether @task's name starts with one of @prefixes (all do if none)."""
    return not prefixes or any(name_of(task).startswith(p) for p in prefixes)


def thread_stats(slices, prefixes, threshold_ms, min_slices):
    """Per thread (timehist task field) of @slices matching @prefixes with at
    least @min_slices slices: a dict of its figures (milliseconds)."""
    by = collections.defaultdict(list)
    for s in slices:
        if s.task != "<idle>" and matches(s.task, prefixes):
            by[s.task].append(s)
    out = {}
    for task, ss in by.items():
        if len(ss) < min_slices:
            continue
        sch = sorted(s.sch_ms for s in ss)
        run = sorted(s.run_ms for s in ss)
        out[task] = {"slices": len(ss), "run_p50": nearest_rank(run, 50),
                     "run_p99": nearest_rank(run, 99), "sch_p50": nearest_rank(sch, 50),
                     "sch_p99": nearest_rank(sch, 99), "sch_max": sch[-1],
                     "over": sum(1 for v in sch if v > threshold_ms) / len(sch)}
    return out


def per_cpu(slices):
    """@slices by CPU, each CPU's in time order (they do not overlap), with
    their end times beside them for bisect: {cpu: (slices, ends)}."""
    by = collections.defaultdict(list)
    for s in slices:
        by[s.cpu].append(s)
    out = {}
    for cpu, ss in by.items():
        ss.sort(key=lambda s: s.end)
        out[cpu] = (ss, [s.end for s in ss])
    return out


def blame(slices, cpus, prefixes, threshold_ms):
    """Over the waits longer than @threshold_ms of threads matching
    @prefixes: (number of such waits, total ms waited, Counter of ms each
    other task ran on the waiter's CPU during them). @cpus: per_cpu(@slices)."""
    held = collections.Counter()
    n, total = 0, 0.0
    for s in slices:
        if not matches(s.task, prefixes) or s.sch_ms <= threshold_ms:
            continue
        got = s.end - s.run_ms / 1000.0
        start = got - s.sch_ms / 1000.0
        n += 1
        total += s.sch_ms
        ss, ends = cpus[s.cpu]
        # the slices ending after the wait began, until one starts after it
        # ended (the waiter's own slice starts when the wait ends)
        for o in ss[bisect.bisect_right(ends, start):]:
            o_start = o.end - o.run_ms / 1000.0
            if o_start >= got:
                break
            held[o.task] += (min(o.end, got) - max(o_start, start)) * 1000.0
    return n, total, held


def print_stats(stats, threshold_us):
    """Print the per-thread table of thread_stats() output @stats (in us)."""
    print("| thread | slices | run P50 / P99 (us) | sched delay P50 / P99 / max (us) "
          f"| wake-ups waiting > {threshold_us:g} us |")
    print("|---|---|---|---|---|")
    for task, f in sorted(stats.items(), key=lambda kv: -kv[1]["slices"]):
        print(f"| {task} | {f['slices']} | {f['run_p50'] * 1e3:.0f} / {f['run_p99'] * 1e3:.0f} "
              f"| {f['sch_p50'] * 1e3:.0f} / {f['sch_p99'] * 1e3:.0f} / {f['sch_max'] * 1e3:.0f} "
              f"| {f['over'] * 100:.2f}% |")


def print_blame(prefix, n, total, held, threshold_us):
    """Print who held the CPU during @prefix's @n long waits (blame() output)."""
    print(f"\n{prefix}: {n} waits over {threshold_us:g} us, {total:.1f} ms in all; "
          "on the waiter's CPU meanwhile:")
    for task, ms in held.most_common(6):
        print(f"  {task}: {ms:.1f} ms ({ms / total * 100 if total else 0:.0f}%)")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timehist")
    ap.add_argument("--threshold-us", type=float, default=200.0)
    ap.add_argument("--match", nargs="*", default=[])
    ap.add_argument("--blame", nargs="*", default=[])
    ap.add_argument("--min-slices", type=int, default=100)
    a = ap.parse_args(argv)
    fh = sys.stdin if a.timehist == "-" else open(a.timehist, encoding="utf-8", errors="replace")
    with fh:
        slices = parse(fh)
    if not slices:
        sys.exit("schedwait.py: no timehist lines in " + a.timehist)
    thr = a.threshold_us / 1000.0
    print_stats(thread_stats(slices, a.match, thr, a.min_slices), a.threshold_us)
    cpus = per_cpu(slices)
    for p in a.blame:
        print_blame(p, *blame(slices, cpus, [p], thr), a.threshold_us)


if __name__ == "__main__":
    main(sys.argv[1:])
