#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python over Homa (homa.aio) against Python's asyncio TCP streams
(length-prefixed frames), both arms in one run, on loopback.

    bench.py [--seconds S] [--lookups N] [--bulk-mb M] [--json FILE]

Arms: homa (homa.aio, threaded sockets), homa-polled (homa.aio sockets in
polled mode: the event loop moves the packets), tcp (asyncio streams),
tcp-split (bulk only: the uploads on a second connection of their own).
Scenarios, each run for every arm with the same client code shape, the
server in its own process (asyncio, one event loop):
  rtt     one task, 100 B requests answered with 100 B, back to back
  bulk    N lookup tasks (100 B GETs, timed) beside one task uploading
          M MiB values, all to one server over one socket (Homa) or one
          connection (TCP: frames carry an id, replies are matched by it,
          as a multiplexing RPC library does)
Reports P50/P99 of each arm and its ratio to TCP's, and the CPU
per RPC: getrusage of client and server, and the machine's busy time
(wall x CPUs minus /proc/stat idle and iowait).
"""
import argparse
import asyncio
import json
import os
import resource
import struct
import subprocess
import sys
import time

#: arm -> homa.aio mode ("tcp": asyncio streams)
MODES = {"homa": "threaded", "homa-polled": "polled"}
ARMS = ["homa", "homa-polled", "tcp", "tcp-split"]
HDR = struct.Struct("!IQ")   # TCP frame: length of the body, request id
LIMIT = 16 << 20             # StreamReader buffer: a whole upload without pausing the transport


# -- servers ------------------------------------------------------------

def reply_for(length):
    """Both servers: a 100 B answer to a lookup, b"K" to an upload."""
    return b"K" if length > 4096 else bytes(100)


async def serve_homa(port, mode):
    import homa.aio
    sock = homa.aio.Socket(server=True, port=port, bind_addr="127.0.0.1", mode=mode)
    print("ready", sock.port, flush=True)
    asyncio.get_running_loop().add_reader(sys.stdin.fileno(), sock.close)
    async for req in sock.requests():
        with req:
            await req.reply(reply_for(len(req)))


async def serve_tcp(port):
    done = asyncio.get_running_loop().create_future()

    async def conn(reader, writer):
        try:
            while True:
                n, rid = HDR.unpack(await reader.readexactly(HDR.size))
                body = await reader.readexactly(n)
                out = reply_for(len(body))
                writer.write(HDR.pack(len(out), rid) + out)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
    srv = await asyncio.start_server(conn, "127.0.0.1", port, limit=LIMIT)
    print("ready", srv.sockets[0].getsockname()[1], flush=True)
    asyncio.get_running_loop().add_reader(sys.stdin.fileno(), lambda: done.done() or done.set_result(0))
    await done
    srv.close()


# -- clients --------------------------------------------------------------

class TcpClient:
    """One connection; many requests in flight, answers matched by id."""

    async def open(self, port):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", port, limit=LIMIT)
        self.next, self.waiting = 0, {}
        self.task = asyncio.create_task(self.read())

    async def read(self):
        while True:
            n, rid = HDR.unpack(await self.r.readexactly(HDR.size))
            body = await self.r.readexactly(n)
            self.waiting.pop(rid).set_result(body)

    async def call(self, data):
        self.next += 1
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next] = fut
        self.w.writelines((HDR.pack(len(data), self.next), data))
        await self.w.drain()
        return await fut

    def close(self):
        self.task.cancel()
        self.w.close()


class HomaClient:
    def __init__(self, mode):
        self.mode = mode

    async def open(self, port):
        import homa.aio
        self.s = homa.aio.Socket(bind_addr="127.0.0.1", mode=self.mode)
        self.addr = ("127.0.0.1", port)

    async def call(self, data):
        return await self.s.call(self.addr, data)

    def close(self):
        self.s.close()


async def rtt(client, seconds):
    lat, msg = [], bytes(100)
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        t = time.perf_counter_ns()
        r = await client.call(msg)
        lat.append(time.perf_counter_ns() - t)
        assert len(r) == 100
    return lat


async def bulk(client, seconds, lookups, bulk_mb, pusher=None):
    lat, moved = [], [0]
    until = time.monotonic() + seconds
    value = os.urandom(bulk_mb << 20)

    async def lookup():
        msg = bytes(100)
        while time.monotonic() < until:
            t = time.perf_counter_ns()
            r = await client.call(msg)
            lat.append(time.perf_counter_ns() - t)
            assert len(r) == 100

    async def push():
        while time.monotonic() < until:
            assert bytes(await (pusher or client).call(value)) == b"K"
            moved[0] += len(value)
    await asyncio.gather(push(), *(lookup() for _ in range(lookups)))
    return lat, moved[0]


# -- measurement ------------------------------------------------------------

def cpu_idle():
    """(idle + iowait) jiffies of /proc/stat, and jiffies per second."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v[3] + v[4], os.sysconf("SC_CLK_TCK")


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * len(v)))] / 1e3 if v else float("nan")


def run_arm(arm, scenario, a, port):
    """Start the server, run one scenario's client, stop the server."""
    srv = subprocess.Popen([sys.executable, __file__, "--serve", arm, "--port", str(port)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ready = srv.stdout.readline().split()
    assert ready[:1] == [b"ready"], "the %s server did not start" % arm
    port = int(ready[1])
    ru0, ch0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    idle0, hz = cpu_idle()
    t0 = time.monotonic()

    async def client_main():
        c = TcpClient() if arm.startswith("tcp") else HomaClient(MODES[arm])
        await c.open(port)
        p = None
        if arm == "tcp-split":       # uploads on a connection of their own
            p = TcpClient()
            await p.open(port)
        try:
            if scenario == "rtt":
                return await rtt(c, a.seconds), 0
            return await bulk(c, a.seconds, a.lookups, a.bulk_mb, p)
        finally:
            c.close()
            if p:
                p.close()
    lat, moved = asyncio.run(client_main())
    wall = time.monotonic() - t0
    idle1, _ = cpu_idle()
    srv.stdin.close()
    srv.wait(30)
    ru1, ch1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(getattr(r1, f) - getattr(r0, f) for r0, r1 in ((ru0, ru1), (ch0, ch1))
              for f in ("ru_utime", "ru_stime"))
    busy = wall * os.cpu_count() - (idle1 - idle0) / hz
    n = max(len(lat), 1)
    return {"arm": arm, "scenario": scenario, "rpcs": len(lat), "p50_us": pct(lat, 50),
            "p99_us": pct(lat, 99), "bulk_MBps": moved / wall / 1e6,
            "cpu_us_per_rpc": cpu / n * 1e6, "busy_us_per_rpc": busy / n * 1e6}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=3)
    ap.add_argument("--lookups", type=int, default=4)
    ap.add_argument("--bulk-mb", type=int, default=4)
    ap.add_argument("--port", type=int, default=0, help="servers' port (default: any free one)")
    ap.add_argument("--json")
    ap.add_argument("--serve", choices=ARMS, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve:
        asyncio.run(serve_tcp(a.port) if a.serve.startswith("tcp") else
                    serve_homa(a.port, MODES[a.serve]))
        return
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    rows = []
    for scenario in ("rtt", "bulk"):
        for arm in ARMS:
            if scenario == "rtt" and arm == "tcp-split":
                continue
            rows.append(run_arm(arm, scenario, a, a.port))
    print("bench.py: %.0f s per arm, %d lookup tasks, %d MiB uploads, load average %s at start"
          % (a.seconds, a.lookups, a.bulk_mb, load))
    print("%-6s %-11s %8s %9s %9s %9s %11s %11s" % ("scen", "arm", "rpcs", "P50 us", "P99 us",
                                                   "bulk MB/s", "cpu us/rpc", "busy us/rpc"))
    for r in rows:
        print("%-6s %-11s %8d %9.1f %9.1f %9.1f %11.1f %11.1f" % (
            r["scenario"], r["arm"], r["rpcs"], r["p50_us"], r["p99_us"], r["bulk_MBps"],
            r["cpu_us_per_rpc"], r["busy_us_per_rpc"]))
    ratios = {}
    for scenario in ("rtt", "bulk"):
        t = [r for r in rows if r["scenario"] == scenario and r["arm"] == "tcp"][0]
        for h in rows:
            if h["scenario"] != scenario or h["arm"].startswith("tcp"):
                continue
            for k in ("p50_us", "p99_us", "cpu_us_per_rpc", "busy_us_per_rpc"):
                ratios["%s %s %s" % (scenario, h["arm"], k)] = h[k] / t[k]
    print("ratios to TCP:")
    for k, v in ratios.items():
        print("  %-36s %.3f" % (k, v))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "ratios": ratios, "load": load}, f, indent=1)


if __name__ == "__main__":
    main()
