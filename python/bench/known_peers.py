#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a server's known_peers cap means for the peers beyond it, on
loopback: peer B uploads SIZE-byte requests to a server while peer A is
idle, then while A sends 100 B RPCs back to back, then idle again.

    known_peers.py [--known-peers N] [--size BYTES] [--reps N]

With --known-peers 1, A holds the server's one known-peer slot and B's
packets wait in the port's own queues with strangers' (homa_open(3)
known_peers): while A is active, the strangers' budget (stranger_budget
packets per millisecond) caps B. With the default (64) or -1 (no known
peers, no budget) B is not capped. Prints B's median time and goodput
per phase and the server's rx_known_peers, rx_known_refused and
rx_gate_closed; needs the binding installed (docs/PYTHON.md)."""
import argparse
import threading
import time

import homa

LOCAL = "127.0.0.1"
PATIENT = {"timeout_ticks": 5000}


def serve(srv):
    """Answer every request of @srv with 2 bytes until it closes."""
    while True:
        try:
            req = srv.recv_request()
        except homa.ShutdownError:
            return
        with req:
            req.reply(b"ok")


def upload(b, addr, size, reps):
    """Median seconds of @reps calls of @size bytes from @b to @addr."""
    big = b"y" * size
    times = []
    for _ in range(reps):
        t0 = time.monotonic()
        b.call(addr, big)
        times.append(time.monotonic() - t0)
    return sorted(times)[len(times) // 2]


def report(label, args, med, srv):
    """One line: the phase, B's median and goodput, the server's counters."""
    io = srv.io_stats()
    print("%-9s known_peers %d: B %d x %d B, median %.1f ms, %.2f Gbps; server rx_known_peers %d,"
          " rx_known_refused %d, rx_gate_closed %d" % (
              label, args.known_peers, args.reps, args.size, med * 1e3, args.size * 8 / med / 1e9,
              io["rx_known_peers"], io["rx_known_refused"], io["rx_gate_closed"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--known-peers", type=int, default=1)
    ap.add_argument("--size", type=int, default=4000000)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    with homa.Socket(server=True, bind_addr=LOCAL, known_peers=args.known_peers,
                     settings=PATIENT) as srv, \
            homa.Socket(bind_addr=LOCAL, settings=PATIENT) as a, \
            homa.Socket(bind_addr=LOCAL, settings=PATIENT) as b:
        for _ in range(2):
            threading.Thread(target=serve, args=(srv,), daemon=True).start()
        addr = (LOCAL, srv.port)
        a.call(addr, b"x" * 100)  # A first: it takes the first slot
        b.call(addr, b"x" * 100)
        stop, rpcs = threading.Event(), [0]

        def chatter():
            while not stop.is_set():
                a.call(addr, b"x" * 100)
                rpcs[0] += 1

        time.sleep(0.05)  # A's last packet more than 10 ms ago
        report("A idle", args, upload(b, addr, args.size, args.reps), srv)
        t = threading.Thread(target=chatter)
        t.start()
        report("A active", args, upload(b, addr, args.size, args.reps), srv)
        stop.set()
        t.join()
        time.sleep(0.05)
        report("A idle", args, upload(b, addr, args.size, args.reps), srv)
        print("A's RPCs while active: %d" % rpcs[0])


if __name__ == "__main__":
    main()
