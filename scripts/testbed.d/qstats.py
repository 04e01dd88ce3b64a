#!/usr/bin/env python3
"""qstats: per-port, per-priority queue counters of the testbed switch.

Runs inside the switch namespace and reads `tc -s -j qdisc show`. The leaf
bfifo under HTB class 1:1P holds Homa priority P's packets.

  qstats.py table              print the current counters of every port
  qstats.py snapshot           print them as JSON
  qstats.py watch OUT [SEC]    sample every SEC (0.05) seconds until SIGTERM
                               or SIGINT, then write to OUT the counters
                               accumulated since the start and the largest
                               backlog seen, per port and priority; creates
                               OUT.ready once it is sampling
"""
import json
import signal
import subprocess
import sys
import time

FIELDS = ("packets", "bytes", "drops")


def read_leaves():
    """Returns {port: {prio: {packets, bytes, drops, backlog, qlen}}} for the
    bfifo leaves of every switch port; raises CalledProcessError if tc fails."""
    out = subprocess.run(["tc", "-s", "-j", "qdisc", "show"], check=True,
                         capture_output=True, text=True).stdout
    ports = {}
    for q in json.loads(out or "[]"):
        parent = q.get("parent", "")
        if q.get("kind") != "bfifo" or not parent.startswith("1:1"):
            continue
        prio = int(parent[3:], 16) if len(parent) == 4 else None
        if prio is None or not 0 <= prio <= 7:
            continue
        ports.setdefault(q["dev"], {})[prio] = {
            k: q.get(k, 0) for k in FIELDS + ("backlog", "qlen")}
    return ports


def delta(start, end, peaks):
    """Counters of END minus START per port/prio, with the peak backlog."""
    res = {}
    for port, prios in sorted(end.items()):
        res[port] = {}
        for prio, c in sorted(prios.items()):
            s = start.get(port, {}).get(prio, {})
            d = {k: c[k] - s.get(k, 0) for k in FIELDS}
            pk = peaks.get(port, {}).get(prio, (0, 0))
            d["max_backlog_bytes"], d["max_backlog_pkts"] = pk
            res[port][str(prio)] = d
    return res


def table(ports):
    """Prints one line per port and priority that carried or dropped anything."""
    print(f"{'port':6} {'prio':>4} {'packets':>10} {'bytes':>13} {'drops':>9} {'backlog':>9}")
    for port, prios in sorted(ports.items(), key=lambda x: int(x[0][1:])):
        for prio, c in sorted(prios.items(), key=lambda x: -int(x[0])):
            if c["packets"] or c["drops"] or c.get("backlog") or c.get("max_backlog_bytes"):
                bl = c.get("max_backlog_bytes", c.get("backlog", 0))
                print(f"{port:6} {prio:>4} {c['packets']:>10} {c['bytes']:>13} "
                      f"{c['drops']:>9} {bl:>9}")


def watch(out, interval):
    """Samples until told to stop, then writes the JSON summary to OUT."""
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    start = read_leaves()
    open(out + ".ready", "w").close()
    peaks = {}
    last = start
    while not stop:
        last = read_leaves()
        for port, prios in last.items():
            for prio, c in prios.items():
                old = peaks.setdefault(port, {}).get(prio, (0, 0))
                peaks[port][prio] = (max(old[0], c["backlog"]), max(old[1], c["qlen"]))
        time.sleep(interval)
    with open(out, "w") as f:
        json.dump(delta(start, last, peaks), f, indent=1, sort_keys=True)


def main(argv):
    """Command-line entry; returns the process exit status."""
    if len(argv) >= 2 and argv[1] == "table":
        table({p: {str(k): v for k, v in c.items()} for p, c in read_leaves().items()})
    elif len(argv) >= 2 and argv[1] == "snapshot":
        json.dump(read_leaves(), sys.stdout, indent=1, sort_keys=True)
    elif len(argv) >= 3 and argv[1] == "watch":
        watch(argv[2], float(argv[3]) if len(argv) > 3 else 0.05)
    elif len(argv) >= 3 and argv[1] == "print":
        with open(argv[2]) as f:
            table(json.load(f))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
