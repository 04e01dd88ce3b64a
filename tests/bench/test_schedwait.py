#!/usr/bin/env python3
"""test_schedwait: tools/bench/schedwait.py on made-up `perf sched
timehist` output. Checks that header lines are skipped, that each thread's
slices, run time and scheduling delay percentiles are nearest rank over
its own slices, that the share of long waits counts only waits over the
threshold, that threads are picked by name prefix, and that a long wait
is charged to the threads that ran on the waiter's CPU during it, in
proportion to their overlap with it (a thread on the other CPU is not).

  test_schedwait.py SRC
"""
import os
import subprocess
import sys

# time cpu task wait sch-delay run (ms); a slice ends at `time`, after
# running `run` ms, which it got after waiting `sch` ms runnable.
TIMEHIST = """\
           time    cpu  task name                       wait time  sch delay   run time
                        [tid/pid]                          (msec)     (msec)     (msec)
--------------- ------  ------------------------------  ---------  ---------  ---------
     100.001000 [0000]  cli-homa[10]                        0.100      0.010      0.020
     100.002000 [0000]  cli-homa[10]                        0.100      0.020      0.020
     100.003000 [0000]  cli-homa[10]                        0.100      0.030      0.020
     100.010000 [0000]  bulk-homa[11]                       0.000      0.000      5.000
     100.011000 [0000]  srv-homa[12]                        0.000      0.000      1.000
     100.011100 [0000]  cli-homa[10]                        0.100      4.000      0.100
     100.011000 [0001]  srv-tcp[13]                         0.000      0.000      6.000
     100.020000 [0001]  cli-tcp[14]                         0.000      0.500      0.050
"""


def run(src, *args):
    """Run schedwait.py on TIMEHIST (standard input) with @args; its stdout."""
    tool = os.path.join(os.path.abspath(src), "tools", "bench", "schedwait.py")
    out = subprocess.run([sys.executable, tool, "-", "--min-slices", "1", *args],
                         input=TIMEHIST, capture_output=True, text=True)
    if out.returncode:
        sys.exit("schedwait.py failed: " + out.stderr)
    return out.stdout


def rows(text):
    """The table's rows as {thread: [cells]}."""
    out = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("| ") and cells[0] not in ("thread", "---"):
            out[cells[0]] = cells[1:]
    return out


def check(cond, what):
    """Fail the test with @what unless @cond."""
    if not cond:
        sys.exit("test_schedwait: " + what)


def main(src):
    text = run(src, "--threshold-us", "200", "--match", "cli-", "--blame", "cli-homa")
    r = rows(text)
    check(set(r) == {"cli-homa[10]", "cli-tcp[14]"}, f"threads picked by prefix: {sorted(r)}")
    # cli-homa: runs 20, 20, 20, 100 us; waits 10, 20, 30, 4000 us
    check(r["cli-homa[10]"] == ["4", "20 / 100", "20 / 4000 / 4000", "25.00%"],
          f"cli-homa row: {r['cli-homa[10]']}")
    check(r["cli-tcp[14]"][3] == "100.00%", f"cli-tcp long waits: {r['cli-tcp[14]']}")
    # cli-homa's 4 ms wait on CPU 0 spans [100.007, 100.011]: bulk-homa ran
    # there until 100.010 (3 ms of it), srv-homa from 100.010 (1 ms);
    # srv-tcp ran on CPU 1 meanwhile and is not charged
    check("cli-homa: 1 waits over 200 us, 4.0 ms in all" in text, "long wait count:\n" + text)
    check("bulk-homa[11]: 3.0 ms (75%)" in text, "bulk charged by overlap:\n" + text)
    check("srv-homa[12]: 1.0 ms (25%)" in text, "server charged by overlap:\n" + text)
    check("srv-tcp" not in text.split("cli-homa:", 1)[1], "other CPU charged:\n" + text)
    # a higher threshold leaves no long wait
    check("0 waits over 5000 us" in run(src, "--threshold-us", "5000", "--blame", "cli-homa"),
          "threshold not applied")
    print("test_schedwait: ok")


if __name__ == "__main__":
    main(sys.argv[1])
