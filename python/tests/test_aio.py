# SPDX-License-Identifier: MIT
"""homa.aio: coroutines on the socket's descriptor, many tasks,
cancellation, timeouts, close while awaiting."""
import asyncio
import gc
import os
import socket
import time

import pytest

import homa
import homa.aio
from conftest import LOCAL, PATIENT


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 60))


async def echo_server(srv, delay_on=None):
    """Answer every request with its bytes (requests() loop)."""
    async for req in srv.requests():
        if delay_on is not None and bytes(req.data) == delay_on:
            continue   # never answered
        await req.reply(req.data)


def test_call_and_requests():
    async def main():
        async with homa.aio.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as srv, \
                homa.aio.Socket(bind_addr=LOCAL, settings=PATIENT) as cli:
            task = asyncio.create_task(echo_server(srv))
            resp = await cli.call((LOCAL, srv.port), b"ping")
            assert isinstance(resp, memoryview) and bytes(resp) == b"ping"
            srv.close()
            await task   # requests() ends at close
    run(main())


@pytest.mark.parametrize("mode", ["threaded", "polled"])
def test_many_concurrent_tasks_and_large(mode):
    async def main():
        async with homa.aio.Socket(server=True, bind_addr=LOCAL, mode=mode, settings=PATIENT) as srv, \
                homa.aio.Socket(bind_addr=LOCAL, mode=mode, settings=PATIENT) as cli:
            server = asyncio.create_task(echo_server(srv))
            addr = (LOCAL, srv.port)
            big = os.urandom(1 << 16) * 48          # 3 MiB: sent from the executor

            async def one(i):
                d = b"%d" % i * (i % 50 + 1)
                return bytes(await cli.call(addr, d)) == d
            bulk = asyncio.create_task(cli.call(addr, big))
            oks = await asyncio.gather(*(one(i) for i in range(300)))
            assert all(oks) and (await bulk) == big
            # send_request / recv_response(0): any order, cookies kept
            ids = {await cli.send_request(addr, b"c%d" % i, cookie=i): i for i in range(20)}
            for _ in range(20):
                m = await cli.recv_response()
                assert bytes(m) == b"c%d" % ids[m.id] and m.cookie == ids[m.id]
            # a response that came before anyone waited for its id
            rpc = await cli.send_request(addr, b"later")
            await asyncio.sleep(0.2)
            assert bytes(await cli.recv_response(rpc, timeout=10)) == b"later"
            with pytest.raises(homa.NotFoundError):
                await cli.recv_response(rpc)
            srv.close()
            await server
    run(main())


def test_cancel_aborts_timeout_and_close_while_awaiting():
    async def main():
        async with homa.aio.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as srv, \
                homa.aio.Socket(bind_addr=LOCAL, settings=PATIENT) as cli:
            server = asyncio.create_task(echo_server(srv, delay_on=b"never"))
            addr = (LOCAL, srv.port)
            task = asyncio.create_task(cli.call(addr, b"never"))
            await asyncio.sleep(0.1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert cli.stats()["rpcs_aborted"] == 1 and not cli._outstanding
            with pytest.raises(homa.CallTimeoutError):
                await cli.call(addr, b"never", timeout=0.1)
            assert cli.stats()["rpcs_aborted"] == 2
            with pytest.raises(homa.InvalidArgumentError):
                await cli.recv_request()
            with pytest.raises(homa.CallTimeoutError):
                await srv.recv_request(timeout=0.05)
            waiting = asyncio.create_task(cli.call(addr, b"never"))
            await asyncio.sleep(0.1)
            cli.close()
            with pytest.raises(homa.ShutdownError):
                await waiting
            with pytest.raises(homa.ShutdownError):
                await cli.call(addr, b"x")
            srv.close()
            await server
    run(main())


def test_rpc_timeout_is_not_call_timeout():
    """An RPC whose peer stops answering fails with homa.TimeoutError
    (HOMA_ETIMEDOUT), also while call() (recv_response()) waits with a
    timeout of its own: homa.TimeoutError is a builtin TimeoutError,
    which asyncio.wait_for()'s timeout is too, and both were reported as
    CallTimeoutError (HOMA_ETIME), the RPC aborted, as if the caller's
    30 s had passed."""
    async def main():
        # a UDP port that takes the packets and never answers (no ICMP either)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as mute:
            mute.bind((LOCAL, 0))
            addr = (LOCAL, mute.getsockname()[1])
            async with homa.aio.Socket(bind_addr=LOCAL, settings={"timeout_ticks": 50}) as cli:
                t = time.monotonic()
                with pytest.raises(homa.TimeoutError) as e:
                    await cli.call(addr, b"hello", timeout=30)
                assert not isinstance(e.value, homa.CallTimeoutError)
                assert time.monotonic() - t < 25
    run(main())


def test_close_frees_unclaimed_and_passthroughs():
    """close() gives back messages nobody awaited (the socket is freed at
    once: its port can be bound again); the plain methods pass through."""
    async def main():
        srv = homa.aio.Socket(server=True, bind_addr=LOCAL, settings=PATIENT)
        with homa.aio.Socket(bind_addr=LOCAL, settings=PATIENT) as cli:
            addr = (LOCAL, srv.port)
            assert cli.fileno() >= 0 and cli.io_stats()["tx_packets"] == 0
            cli.set_settings(timeout_ticks=200)
            rpc = await cli.send_request(addr, b"a")
            req = await srv.recv_request(timeout=10)
            await srv.reply(req.id, b"b")                # Socket.reply
            other = await cli.send_request(addr, b"c")
            req2 = await srv.recv_request(timeout=10)
            req2.abort()                                 # Request.abort: never answered
            cli.abort(other)
            with pytest.raises(homa.NotFoundError):
                cli.recv_partial(rpc + 100, 0, bytearray(4))
            assert bytes(await cli.recv_response(rpc, timeout=10)) == b"b"
            assert cli.stats()["client_rpcs_completed"] >= 1
            await cli.send_request(addr, b"unclaimed")
            await asyncio.sleep(0.2)                     # a request waits, unclaimed
            assert srv._requests and srv._s._pins >= 1
            del req, req2
            gc.collect()      # futures and wait_for() keep requests in cycles
            port = srv.port
            srv.close()
            assert srv.closed and srv._s._pins == 0
            homa.Socket(server=True, port=port, bind_addr=LOCAL).close()
    run(main())
