#!/usr/bin/env python3
"""coll_msgs: which messages end the steps of `scripts/testbed run collective`.

  coll_msgs.py DIR ARM...
      read DIR/PATTERN-bgPCT/ARM/msgs-h*.txt (homa-bench device --msg-log),
      device.json (warm-up steps) and server-h*.log (the servers' protocol
      counters), print one markdown table: per case and arm, the message
      that came last in each measured step (the step's slowest device's
      last message), when it was started and how long it was in flight,
      against the step's median message; how often its receiver was the
      busiest one; and the RESENDs, retransmitted bytes, timeouts and
      engine drops of the devices' and servers' sockets.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

COUNTERS = ("resends_sent", "retransmitted_bytes", "rpcs_timed_out", "packets_dropped")


def read_log(path):
    """(rank, [(step, round, dst, req, resp, start_us, done_us, tries)], {counter: n})."""
    rank = int(re.search(r"msgs-h(\d+)\.txt$", path).group(1))
    msgs, counters = [], {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                counters.update(parse_counters(line))
                continue
            v = line.split()
            if len(v) != 8:
                continue
            msgs.append((int(v[0]), int(v[1]), int(v[2]), int(v[3]), int(v[4]),
                         float(v[5]), float(v[6]), int(v[7])))
    return rank, msgs, counters


def parse_counters(line):
    """{name: value} of a "homa counters: a=1 b=2" line, {} otherwise."""
    if "homa counters:" not in line:
        return {}
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line.split("homa counters:", 1)[1])}


def server_counters(d):
    """Sum of the servers' protocol counters in D/server-h*.log."""
    tot = {}
    for p in glob.glob(os.path.join(d, "server-h*.log")):
        with open(p) as f:
            for line in f:
                for k, v in parse_counters(line).items():
                    tot[k] = tot.get(k, 0) + v
    return tot


def warmup(d):
    """Warm-up steps of the arm in D (device.json), 0 if unknown."""
    try:
        with open(os.path.join(d, "device.json")) as f:
            return int(json.load(f).get("warmup_steps", 0))
    except (OSError, ValueError):
        return 0


def analyse(d):
    """Figures of one arm folder D, or None without message logs."""
    logs = [read_log(p) for p in sorted(glob.glob(os.path.join(d, "msgs-h*.txt")))]
    if not logs:
        return None
    skip = warmup(d)
    steps = {}
    dev_tot = {}
    for rank, msgs, counters in logs:
        for k, v in counters.items():
            dev_tot[k] = dev_tot.get(k, 0) + v
        for m in msgs:
            if m[0] >= skip:
                steps.setdefault(m[0], []).append((rank,) + m)
    last = []
    for s in sorted(steps):
        ms = steps[s]
        # per receiver, the bytes it gets in this step (requests, the answers' senders for lookups)
        load = {}
        for m in ms:
            load[m[3]] = load.get(m[3], 0) + m[4] + m[5]
        busiest = max(load, key=load.get)
        end = max(ms, key=lambda m: m[7])
        flight = [m[7] - m[6] for m in ms]
        last.append({"done": end[7], "start": end[6], "flight": end[7] - end[6],
                     "median_flight": statistics.median(flight), "busiest": end[3] == busiest,
                     "tries": end[8]})
    srv = server_counters(d)
    return {"steps": len(last), "last": last,
            "counters": {k: dev_tot.get(k, 0) + srv.get(k, 0) for k in COUNTERS}}


def pct(v, q):
    """The q-quantile of V (nearest rank: the ceil(q n)-th smallest)."""
    s = sorted(v)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def rows(d, arms):
    """Markdown rows of every case folder under D."""
    out = []
    for cd in sorted(glob.glob(os.path.join(d, "*-bg*"))):
        for a in arms:
            r = analyse(os.path.join(cd, a))
            if r is None or not r["last"]:
                continue
            L = r["last"]
            c = r["counters"]
            ms = lambda v: f"{v / 1000:.1f}"  # noqa: E731
            out.append(
                f"| {os.path.basename(cd)} | {a} | {r['steps']} "
                f"| {ms(pct([x['done'] for x in L], 0.5))} / {ms(pct([x['done'] for x in L], 0.99))} "
                f"| {ms(pct([x['start'] for x in L], 0.5))} / {ms(max(x['start'] for x in L))} "
                f"| {ms(pct([x['flight'] for x in L], 0.5))} / {ms(max(x['flight'] for x in L))} "
                f"| {ms(statistics.median(x['median_flight'] for x in L))} "
                f"| {sum(x['busiest'] for x in L)} of {len(L)} "
                f"| {sum(x['tries'] > 1 for x in L)} "
                f"| {c['resends_sent']} | {c['retransmitted_bytes']} | {c['rpcs_timed_out']} "
                f"| {c['packets_dropped']} |")
    return out


def main(argv):
    """Command-line entry; returns the exit status."""
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    body = rows(argv[1], argv[2:])
    if not body:
        return 0
    print("**the last message of each step** (ms from the end of its device's compute phase)\n")
    print("| case | arm | steps | last done P50 / P99 | last started P50 / max | last in flight "
          "P50 / max | step's median in flight | to the busiest receiver | last sent again "
          "| RESENDs | retransmitted B | timed out | engine drops |")
    print("|---" * 13 + "|")
    print("\n".join(body))
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
