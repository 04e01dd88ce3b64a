#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An asyncio key-value service over Homa (the protocol of the C example
examples/kv_server.c, so either client works with either server).

    kv_server.py [--port P] [--bind ADDR]

Request:  b'G' keylen(2, big-endian) key          -> b'K' value | b'N'
          b'P' keylen(2, big-endian) key value    -> b'K'
          anything else                           -> b'E'
One task serves every request: a GET replies from the table (a gather
list, no copy in Python); a PUT copies its value out of the message.
Homa schedules the messages shortest first, so lookups are not stuck
behind multi-megabyte PUTs arriving at the same time. Stops on SIGINT or
SIGTERM.
"""
import argparse
import asyncio
import signal
import sys

import homa
import homa.aio


def handle(table, req):
    """The response to one request (bytes, or a list of buffers)."""
    data = req.data
    if len(data) < 3 or data[0] not in b"GP":
        return b"E"
    klen = int.from_bytes(data[1:3], "big")
    if len(data) < 3 + klen:
        return b"E"
    key = bytes(data[3:3 + klen])
    if data[0] == ord("P"):
        table[key] = bytes(data[3 + klen:])   # a copy: the message goes back to the socket
        return b"K"
    value = table.get(key)
    return b"N" if value is None else [b"K", value]


async def serve(port, bind):
    table = {}
    sock = homa.aio.Socket(server=True, port=port, bind_addr=bind)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, sock.close)
    print("kv_server.py: listening on port %d" % sock.port, flush=True)
    served = 0
    async for req in sock.requests():
        with req:
            try:
                await req.reply(handle(table, req))
                served += 1
            except homa.NotFoundError:
                pass   # the client went away
    print("kv_server.py: served %d requests, %d keys" % (served, len(table)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=4001)
    ap.add_argument("--bind", default=None, help="local address (default: all)")
    a = ap.parse_args()
    try:
        asyncio.run(serve(a.port, a.bind))
    except homa.HomaError as e:
        sys.exit("kv_server.py: %s" % e)


if __name__ == "__main__":
    main()
