#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Lookups beside bulk uploads, on one asyncio Homa socket: LOOKUPS tasks
do small GETs and time them while PUSHERS tasks upload multi-megabyte
values and read each one back to check it. Works with kv_server.py and
with the C examples/kv_server.

    kv_client.py [--server ADDR] [--port P] [--lookups N] [--pushers M]
                 [--value-mb K] [--seconds S]

Prints the lookup latency percentiles next to the bytes pushed; exits 1
if any answer was wrong.
"""
import argparse
import asyncio
import os
import sys
import time

import homa
import homa.aio


def request(op, key, value=b""):
    """A kv request: op, key length (2 bytes, big-endian), key, value."""
    return [op + len(key).to_bytes(2, "big") + key, value]


async def lookups(sock, addr, n, until, lat, errors):
    """PUT small keys, then GET them in a loop, timing each GET: at least
    one, however long the PUTs took."""
    keys = [b"small-%d-%d" % (n, k) for k in range(16)]
    for k in keys:
        await sock.call(addr, request(b"P", k, b"value of " + k))
    i = 0
    while i == 0 or time.monotonic() < until:
        k = keys[i % len(keys)]
        t = time.perf_counter_ns()
        resp = await sock.call(addr, request(b"G", k), timeout=10)
        lat.append(time.perf_counter_ns() - t)
        if bytes(resp) != b"Kvalue of " + k:
            errors.append("lookup %r: %r" % (k, bytes(resp[:40])))
        i += 1


async def pusher(sock, addr, n, size, until, pushed, errors):
    """Upload a SIZE-byte value, read it back, compare; repeat."""
    i = 0
    while time.monotonic() < until:
        key = b"big-%d" % n
        value = os.urandom(1 << 16) * (size >> 16)
        value = value[:-1] + bytes([i & 0xFF])
        if bytes(await sock.call(addr, request(b"P", key, value), timeout=60)) != b"K":
            errors.append("put %r refused" % key)
        back = await sock.call(addr, request(b"G", key), timeout=60)
        if len(back) != size + 1 or back[0:1] != b"K" or back[1:] != value:
            errors.append("value %r came back different" % key)
        pushed.append(2 * size)
        i += 1


def pct(values, p):
    """The p-th percentile of @values (nearest rank)."""
    v = sorted(values)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] if v else 0


async def run(a):
    addr = (a.server, a.port)
    lat, pushed, errors = [], [], []
    # give up on the server after 1 s of silence (default 100 ms), as the C
    # examples do: a loaded machine may not run it for longer than 100 ms
    async with homa.aio.Socket(settings={"timeout_ticks": 1000}) as sock:
        until = time.monotonic() + a.seconds
        t0 = time.monotonic()
        await asyncio.gather(
            *(lookups(sock, addr, n, until, lat, errors) for n in range(a.lookups)),
            *(pusher(sock, addr, n, a.value_mb << 20, until, pushed, errors)
              for n in range(a.pushers)))
        wall = time.monotonic() - t0
    print("kv_client.py: %d lookups by %d tasks, latency P50 %.1f us P99 %.1f us, "
          "while %d pushers moved %.1f MB (%.1f MB/s)"
          % (len(lat), a.lookups, pct(lat, 50) / 1e3, pct(lat, 99) / 1e3, a.pushers,
             sum(pushed) / 1e6, sum(pushed) / 1e6 / wall))
    for e in errors[:5]:
        print("kv_client.py: error:", e, file=sys.stderr)
    return 1 if errors or not lat else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--server", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=4001)
    ap.add_argument("--lookups", type=int, default=4)
    ap.add_argument("--pushers", type=int, default=1)
    ap.add_argument("--value-mb", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=3)
    try:
        sys.exit(asyncio.run(run(ap.parse_args())))
    except homa.HomaError as e:
        sys.exit("kv_client.py: %s" % e)


if __name__ == "__main__":
    main()
