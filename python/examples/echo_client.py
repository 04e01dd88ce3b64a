#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Python client of the C echo server (examples/echo_server.c): sends
COUNT requests of SIZE bytes, checks every echo byte for byte and prints
the round-trip times.

    echo_server --port 4000 &
    echo_client.py [--server ADDR] [--port P] [--size BYTES] [--count N]
"""
import argparse
import os
import sys
import time

import homa


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=4000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--count", type=int, default=1000)
    a = ap.parse_args()
    data = os.urandom(a.size)
    rtts = []
    try:
        with homa.Socket() as sock:
            for _ in range(a.count):
                t = time.perf_counter_ns()
                resp = sock.call((a.server, a.port), data, timeout=10)
                rtts.append(time.perf_counter_ns() - t)
                if resp != data:
                    sys.exit("echo_client.py: the echo differs from the request")
                resp.release()
    except homa.HomaError as e:
        sys.exit("echo_client.py: %s (%s)" % (e, e.name))
    rtts.sort()
    print("echo_client.py: %d x %d B echoed intact, RTT P50 %.1f us P99 %.1f us"
          % (a.count, a.size, rtts[len(rtts) // 2] / 1e3, rtts[int(len(rtts) * 0.99)] / 1e3))


if __name__ == "__main__":
    main()
