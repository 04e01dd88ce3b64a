# SPDX-License-Identifier: MIT
"""homa.aio: the same sockets for asyncio.

    async with homa.aio.Socket() as sock:
        resp = await sock.call(("127.0.0.1", 4000), b"ping")

One reader on the socket's descriptor (homa_fd(), loop.add_reader) takes
every message the socket receives and hands it to the coroutine waiting
for it: no thread per RPC, no thread per socket. Sends and replies of up
to INLINE_SEND bytes are made on the event loop (homa_send() copies them
and returns); longer ones in the loop's default executor, so the copy of a
large message (or a wait for buffer space) never stalls other tasks.

Cancelling a task that awaits call() or recv_response(id) aborts that RPC
(homa_abort()). close() wakes every waiting coroutine with ShutdownError.
Use each socket from one event loop.

mode="threaded" (default): the socket's runtime thread moves packets and
runs the protocol's timers, also while the event loop is busy.
mode="polled": the event loop itself does (homa_poll() whenever the
descriptor is readable: packets arrived or a timer is due), which saves a
thread hand-off per message; a loop that blocks for long delays the
protocol's retransmissions and grants.
"""
from __future__ import annotations

import asyncio
import collections
from typing import Any, AsyncIterator, Deque, Dict, Optional, Set, Union

from . import _errors
from ._cint import c_int
from ._errors import HomaError, ShutdownError
from ._homa_cffi import lib
from ._socket import Address, Data, Message, Request, Socket as _SyncSocket

#: Sends and replies up to this many bytes are made on the event loop.
INLINE_SEND = 256 * 1024

_Result = Union[Message, HomaError]


def _size(data: Data) -> int:
    """Bytes in @data (a buffer or a sequence of buffers)."""
    if isinstance(data, (list, tuple)):
        return sum(memoryview(p).nbytes for p in data)
    return memoryview(data).nbytes


class AioRequest(Request):
    """A request received by a homa.aio.Socket; `await req.reply(data)`."""

    __slots__ = ("_aio",)

    def __init__(self, sock: _SyncSocket, msg: Any, aio: "Socket") -> None:
        super().__init__(sock, msg)
        self._aio = aio

    async def reply(self, data: Data) -> None:  # type: ignore[override]
        """Send the response (homa_reply()); errors as homa.Request.reply()."""
        await self._aio._run_send(self._sock.reply, self.id, data)


class Socket:
    """An asyncio Homa socket; arguments as homa.Socket (mode: see above)."""

    def __init__(self, server: bool = False, port: int = 0, driver: str = "udp",
                 **kwargs: Any) -> None:
        self._s = _SyncSocket(server, port, driver, **kwargs)
        self._polled = self._s.mode == "polled"
        self._server = server
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._fd = -1
        self._outstanding: Set[int] = set()
        self._waiters: Dict[int, "asyncio.Future[Message]"] = {}
        self._any: Deque["asyncio.Future[Message]"] = collections.deque()
        self._ready: Dict[int, _Result] = {}
        self._requests: Deque[AioRequest] = collections.deque()
        self._req_waiters: Deque["asyncio.Future[AioRequest]"] = collections.deque()

    # -- life cycle ---------------------------------------------------

    async def __aenter__(self) -> "Socket":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __enter__(self) -> "Socket":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The socket's Homa port."""
        return self._s.port

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._s.closed

    def close(self) -> None:
        """Close the socket (homa.Socket.close()); every coroutine waiting
        on it raises ShutdownError. Idempotent."""
        if self._s.closed:
            return
        if self._loop is not None and self._fd >= 0:
            self._loop.remove_reader(self._fd)
        # Messages nobody claimed go back now (they would hold the socket).
        self._ready.clear()
        self._requests.clear()
        self._s.close()
        self._fail_all(ShutdownError())

    def _fail_all(self, exc: HomaError) -> None:
        """Wake every waiter with @exc."""
        futs = list(self._waiters.values()) + list(self._any) + list(self._req_waiters)
        self._waiters.clear()
        self._any.clear()
        self._req_waiters.clear()
        for f in futs:
            if not f.done():
                f.set_exception(exc)

    def _attach(self) -> asyncio.AbstractEventLoop:
        """Register the reader on the running loop (first use)."""
        if self._s.closed:
            raise ShutdownError()
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._fd = self._s.fileno()
            self._loop.add_reader(self._fd, self._on_readable)
        return self._loop

    # -- the reader ---------------------------------------------------

    def _on_readable(self) -> None:
        """Take every message waiting and give each to its waiter."""
        flags = lib.HOMA_RECV_RESPONSE | (lib.HOMA_RECV_REQUEST if self._server else 0)
        if self._polled and not self._s.closed:
            # Polled mode: this loop moves the packets and runs the timers.
            lib.homa_poll(self._s._h, 0)
        while not self._s.closed:
            try:
                m = self._s._recv(flags, 0, 0)
            except _errors.WouldBlockError:
                return
            except ShutdownError:
                self.close()
                return
            except HomaError as e:
                rpc = getattr(e, "rpc_id", None)
                if rpc is None:
                    self._fail_all(e)
                    return
                self._deliver(rpc, e)
                continue
            if m.type == lib.HOMA_RECV_REQUEST:
                self._deliver_request(AioRequest(self._s, m, self))
            else:
                self._deliver(m.id, Message(self._s, m))

    def _deliver(self, rpc: int, res: _Result) -> None:
        """A response or an RPC's failure: to the waiter for its id, else to
        the oldest waiter for any, else kept for a later recv_response()."""
        self._outstanding.discard(rpc)
        fut = self._waiters.pop(rpc, None)
        while fut is None or fut.done():
            if not self._any:
                self._ready[rpc] = res
                return
            fut = self._any.popleft()
        if isinstance(res, HomaError):
            fut.set_exception(res)
        else:
            fut.set_result(res)

    def _deliver_request(self, req: AioRequest) -> None:
        """A request: to the oldest waiter, else queued."""
        while self._req_waiters:
            fut = self._req_waiters.popleft()
            if not fut.done():
                fut.set_result(req)
                return
        self._requests.append(req)

    # -- client -------------------------------------------------------

    async def _run_send(self, fn: Any, *args: Any) -> Any:
        """Run a send: inline when short, else in the default executor."""
        loop = self._attach()
        if _size(args[-1]) <= INLINE_SEND:
            return fn(*args)
        return await loop.run_in_executor(None, fn, *args)

    async def send_request(self, addr: Address, data: Data, cookie: int = 0) -> int:
        """Start a client RPC and return its id (homa.Socket.send_request())."""
        rpc = await self._run_send(lambda a, d: self._s.send_request(a, d, cookie), addr, data)
        if rpc not in self._ready:   # a send from the executor may see its response first
            self._outstanding.add(rpc)
        return int(rpc)

    async def recv_response(self, id: int = 0, timeout: Optional[float] = None) -> Message:
        """Wait for the response to RPC @id (0: any of this socket's) for
        at most @timeout seconds; errors as homa.Socket.recv_response()
        (CallTimeoutError when @timeout passes; the RPC goes on;
        InvalidArgumentError for an @id uint64_t cannot hold).
        Cancelling the awaiting task aborts RPC @id."""
        loop = self._attach()
        c_int("uint64_t", "id", id)
        res: Optional[_Result] = None
        if id and id in self._ready:
            res = self._ready.pop(id)
        elif not id and self._ready:
            res = self._ready.pop(next(iter(self._ready)))
        if res is not None:
            if isinstance(res, HomaError):
                raise res
            return res
        if id and id not in self._outstanding:
            raise _errors.NotFoundError()
        fut: "asyncio.Future[Message]" = loop.create_future()
        if id:
            if id in self._waiters:
                raise _errors.StateError(_errors.CODES["HOMA_ESTATE"], "RPC already awaited")
            self._waiters[id] = fut
        else:
            self._any.append(fut)
        try:
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except HomaError:
            raise   # the RPC failed (homa.TimeoutError is a TimeoutError too)
        except asyncio.TimeoutError:
            raise _errors.CallTimeoutError() from None
        except asyncio.CancelledError:
            if id and not self._s.closed:
                self._outstanding.discard(id)
                try:
                    self._s.abort(id)
                except HomaError:
                    pass
            raise
        finally:
            if id and self._waiters.get(id) is fut:
                del self._waiters[id]

    async def call(self, addr: Address, data: Data, timeout: Optional[float] = None) -> memoryview:
        """One RPC (homa.Socket.call()): the response's bytes, zero copy up
        to 64 KiB. On @timeout the RPC is aborted (CallTimeoutError), as
        it is when the awaiting task is cancelled."""
        rpc = await self.send_request(addr, data)
        try:
            return (await self.recv_response(rpc, timeout)).data
        except _errors.CallTimeoutError:
            self._outstanding.discard(rpc)
            try:
                self._s.abort(rpc)
            except HomaError:
                pass
            raise

    def abort(self, id: int) -> None:
        """Abandon RPC @id (homa.Socket.abort()); a coroutine awaiting it
        raises CanceledError."""
        self._s.abort(id)

    # -- server -------------------------------------------------------

    async def recv_request(self, timeout: Optional[float] = None) -> AioRequest:
        """Wait for a request (server sockets) for at most @timeout seconds;
        CallTimeoutError, ShutdownError, InvalidArgumentError (not a server)."""
        loop = self._attach()
        if not self._server:
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "not a server socket")
        if self._requests:
            return self._requests.popleft()
        fut: "asyncio.Future[AioRequest]" = loop.create_future()
        self._req_waiters.append(fut)
        try:
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except HomaError:
            raise   # a failure handed to every waiter (_fail_all), not our timeout
        except asyncio.TimeoutError:
            raise _errors.CallTimeoutError() from None

    async def requests(self) -> AsyncIterator[AioRequest]:
        """`async for req in sock.requests()`: every request, until close()."""
        while True:
            try:
                yield await self.recv_request()
            except ShutdownError:
                return

    async def reply(self, id: int, data: Data) -> None:
        """Send the response to request @id (homa.Socket.reply())."""
        await self._run_send(self._s.reply, id, data)

    # -- the rest: as homa.Socket ---------------------------------------

    def fileno(self) -> int:
        """The socket's descriptor (homa_fd()), watched by this object."""
        return self._s.fileno()

    def recv_partial(self, id: int, offset: int, buf: Any) -> Any:
        """homa.Socket.recv_partial()."""
        return self._s.recv_partial(id, offset, buf)

    def set_settings(self, **fields: Any) -> None:
        """homa.Socket.set_settings()."""
        self._s.set_settings(**fields)

    def stats(self) -> Dict[str, Any]:
        """homa.Socket.stats()."""
        return self._s.stats()

    def io_stats(self) -> Dict[str, Any]:
        """homa.Socket.io_stats()."""
        return self._s.io_stats()
