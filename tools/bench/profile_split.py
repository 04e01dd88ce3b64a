#!/usr/bin/env python3
"""Split `perf record -g` samples of benchmark processes into where the CPU
goes, per RPC: our code (the homa-bench binary with the library linked in),
user-space copies (libc memmove/memcpy), the rest of libc, the kernel's
copies to and from user space, context switches (samples in the scheduler's
switch path), and the kernel's remaining work grouped by the system call
(or softirq) it ran under.

Usage: profile_split.py ARM:RPCS:FILE.data[,FILE.data...] ...
Rows under 1% in every arm are summed into "other" rows. Prints one table: rows are the categories, per arm the share of samples
and CPU microseconds per RPC (the samples' periods, which cpu-clock counts
in nanoseconds, over RPCS).
"""
import collections
import re
import subprocess
import sys

SWITCH = {"finish_task_switch", "finish_task_switch.isra.0", "__schedule", "schedule",
          "schedule_hrtimeout_range", "schedule_hrtimeout_range_clock", "futex_wait_queue",
          "do_nanosleep"}
KCOPY = re.compile(r"^(_copy_to_iter|_copy_from_iter|copy_user_\w+|rep_movs_alternative|"
                   r"_copy_from_user|_copy_to_user|__copy_\w+|csum_partial_copy\w*|"
                   r"skb_copy_datagram_iter|__skb_datagram_iter|simple_copy_to_iter)$")
UCOPY = re.compile(r"^__(memmove|memcpy)_\w+")
SYSCALL = re.compile(r"^(?:__x64_sys_|__do_sys_|__sys_|do_sys_)(\w+)$")


def frames(block):
    """Yield (symbol, dso) of one sample's call chain, leaf first."""
    for line in block[1:]:
        m = re.match(r"\s*[0-9a-f]+\s+(\S+?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$", line)
        if m:
            yield m.group(1), m.group(2)


def classify(chain):
    """The category of one sample from its chain [(sym, dso), ...], leaf first."""
    if not chain:
        return "unknown"
    sym, dso = chain[0]
    if "kernel" not in dso:
        if any("libcrypto" in d or "libssl" in d for _, d in chain):
            return "user: OpenSSL (libcrypto, libssl, the libc calls they make)"
        if UCOPY.match(sym):
            return "user: payload copies (libc memmove)"
        if "libc" in dso:
            return "user: libc (calls' wrappers, malloc, locks)"
        if "homa-bench" in dso:
            return "user: homa-bench and the library (ours)"
        return "user: other (ld.so, vdso)"
    if KCOPY.match(sym):
        return "kernel: copies to/from user space"
    for s, _ in chain:
        if s in SWITCH:
            return "kernel: context switches (scheduler)"
    for s, _ in chain:
        if s in ("net_rx_action", "__do_softirq", "handle_softirqs", "do_softirq"):
            return "kernel: network softirq (loopback receive)"
    for s, _ in chain:
        m = SYSCALL.match(s)
        if m:
            name = m.group(1).replace("sys_", "")
            return "kernel: syscall " + ("ppoll" if name == "poll" else name)
    return "kernel: other (interrupts, exits)"


def load(path):
    """CPU microseconds per category of one perf.data file (cpu-clock
    samples: each sample's period is nanoseconds of CPU)."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "period,ip,sym,dso"],
                         capture_output=True, text=True, check=True).stdout
    us = collections.Counter()
    for block in re.split(r"\n\s*\n", out.strip()):
        lines = block.splitlines()
        if not lines or not lines[0].strip().isdigit():
            continue
        us[classify(list(frames(lines)))] += int(lines[0]) / 1000.0
    return us


def main(args):
    arms = []
    for a in args:
        name, rpcs, files = a.split(":", 2)
        us = collections.Counter()
        for f in files.split(","):
            us.update(load(f))
        arms.append((name, int(rpcs), us))
    for _, _, u in arms:  # rows under 1% in every arm go to one row
        for k in list(u):
            if all(a[2][k] < 0.01 * sum(a[2].values()) for a in arms):
                u["kernel: other system calls" if "syscall" in k else "other"] += u.pop(k)
    cats = sorted({k for _, _, u in arms for k in u})
    print("| where | " + " | ".join(f"{n} % | {n} µs/RPC" for n, _, _ in arms) + " |")
    print("|---|" + "---|---|" * len(arms))
    for k in cats:
        row = [k]
        for _, rpcs, u in arms:
            row += [f"{100.0 * u[k] / sum(u.values()):.1f}", f"{u[k] / rpcs:.1f}"]
        print("| " + " | ".join(row) + " |")
    row = ["total"]
    for _, rpcs, u in arms:
        row += ["100", f"{sum(u.values()) / rpcs:.1f}"]
    print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
