# SPDX-License-Identifier: MIT
"""homa.Socket: the blocking API over <homa/homa.h>.

Integers: every int argument stored into a C field or passed to a C
function is checked against its C type first (_cint.c_int()): one the type
cannot hold raises InvalidArgumentError naming the argument, one that is
not an int TypeError. Timeouts (seconds) must be below 2**63 ns.

Every C call goes through cffi in API mode, which releases the GIL for the
duration of the call, so a thread blocked in recv_response() or a send
waiting for buffer space never stops the other Python threads.

Exports: a caller's buffer is exported to C (ffi.from_buffer()) in a
`with` block around the one call that uses it, and released when the call
returns, before its result is checked. An export left to the garbage
collector would outlive a failed call: the exception's traceback holds
the call's frame, the frame the export, the export the caller's
memoryview; when such an exception ends up in a reference cycle, CPython
releases without the fix for gh-77894 (3.11 among them) crash clearing
that memoryview while it is still exported.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from . import _errors
from ._cint import c_int, c_range, set_int
from ._errors import ShutdownError, check, error
from ._homa_cffi import ffi, lib

#: A peer: (host, port), host numeric IPv4 or IPv6 text.
Address = Tuple[str, int]
#: Data to send: one object with the buffer protocol, or a sequence of them
#: (sent as one message, gathered without a copy in Python).
Data = Union[bytes, bytearray, memoryview, Any]

_DRIVERS = {"udp": lib.HOMA_DRIVER_UDP, "raw": lib.HOMA_DRIVER_RAW, "xdp": lib.HOMA_DRIVER_XDP}
_MODES = {"threaded": lib.HOMA_MODE_THREADED, "polled": lib.HOMA_MODE_POLLED}
_TRANSPORTS = {"homa": lib.HOMA_TRANSPORT_HOMA, "tcp": lib.HOMA_TRANSPORT_TCP,
               "auto": lib.HOMA_TRANSPORT_AUTO}
# Blocking receives wait in slices this long, so that they notice a
# close() deferred by received messages still in use.
_CLOSING_SLICE_NS = 200_000_000
_ETIME = _errors.CODES["HOMA_ETIME"]


_INT64_MAX = c_range("int64_t")[1]


def timeout_ns(timeout: Optional[float], name: str = "timeout") -> int:
    """Seconds (None: wait as long as it takes) -> the C timeout in ns
    (int64_t). A negative timeout, NaN, or one of 2**63 ns (292 years) or
    more raises InvalidArgumentError naming @name; a timeout that is not a
    number raises TypeError."""
    if timeout is None:
        return -1
    if timeout < 0:
        raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "%s: negative" % name)
    ns = timeout * 1e9
    if not ns < _INT64_MAX:   # also NaN and infinity
        raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                           "%s: %r s does not fit int64_t ns" % (name, timeout))
    return int(ns)


def _field_names(ctype: str) -> List[str]:
    """The fields of a struct type the binding knows (homa_build.py)."""
    return [name for name, _ in ffi.typeof(ctype).fields]


def _struct_to_dict(obj: Any, ctype: str) -> Dict[str, Any]:
    """A C struct as a dict; arrays become lists."""
    out: Dict[str, Any] = {}
    for name, field in ffi.typeof(ctype).fields:
        v = getattr(obj, name)
        out[name] = list(v) if field.type.kind == "array" else v
    return out


def default_settings() -> Dict[str, Any]:
    """homa_settings_default() as a dict: the engine's protocol parameters
    (<homa/settings.h> documents each field)."""
    st = ffi.new("struct homa_settings *")
    lib.homa_settings_default(st)
    return _struct_to_dict(st, "struct homa_settings")


def _settings(values: Mapping[str, Any]) -> Any:
    """A struct homa_settings: the defaults with @values applied and
    validated (InvalidArgumentError names the rejected field, also one
    whose value its C type cannot hold; TypeError for a value that is not
    an int, or a list for a field that is not an array)."""
    st = ffi.new("struct homa_settings *")
    lib.homa_settings_default(st)
    known = set(_field_names("struct homa_settings"))
    for k, v in values.items():
        if k not in known or k in ("size", "pad0"):
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "unknown setting %r" % k)
        if isinstance(v, (list, tuple)):
            arr = getattr(st, k)
            if len(v) != len(arr):
                raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                                   "%s needs %d values" % (k, len(arr)))
            item = ffi.typeof(arr).item
            for i, x in enumerate(v):
                arr[i] = c_int(item, "%s[%d]" % (k, i), x)
        else:
            set_int(st, k, v)
    why = ffi.new("const char **")
    if lib.homa_settings_validate(st, why) < 0:
        text = ffi.string(why[0]).decode() if why[0] != ffi.NULL else "rejected"
        raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "bad setting: " + text)
    return st


def _peer(ss: Any) -> Address:
    """A struct sockaddr_storage as (host, port)."""
    host = ffi.new("char[64]")
    port = lib.pyhoma_peer(ss, host, 64)
    return (ffi.string(host).decode(), port) if port >= 0 else ("", 0)


def _recv_error(err: int, m: Any) -> Exception:
    """The exception of a homa_recv() into struct homa_message @m that
    returned @err: a failed RPC's error has `rpc_id` and `cookie` set.
    (Built here, not in the frame that raises it: a local there holding
    the exception would make exception, traceback and frame a reference
    cycle, left to the garbage collector with everything it holds.)"""
    e = error(err)
    if m.error:
        e.rpc_id = m.id  # type: ignore[attr-defined]
        e.cookie = m.cookie  # type: ignore[attr-defined]
    return e


class _Pin:
    """Owns one received C message; releases it when the last reference
    (the Message, or any memoryview over its bytes) goes away."""

    __slots__ = ("msg", "sock", "__weakref__")

    def __init__(self, msg: Any, sock: "Socket") -> None:
        self.msg = msg
        self.sock = sock
        sock._pin()

    def __del__(self, _release: Any = lib.homa_message_release) -> None:
        _release(self.msg)
        self.sock._unpin()


def _keep(pin: _Pin, ptr: Any) -> None:
    """ffi.gc destructor of a view's pointer: only drops its reference to @pin."""


class Message:
    """A received message: a request (server) or a response (client).

    The bytes stay in the library's buffers (zero copy): segments() gives
    memoryviews over them, and `data` one memoryview of the whole message
    (over the library's memory when the message is in one segment, as
    every message up to 64 KiB is; a copy otherwise). Views keep the
    message alive: its buffers go back to the socket when the Message
    and every view of it are released (release(), `with`, or garbage
    collection). A view is valid until then, also after the socket is
    closed (close() then waits for the last view to free the socket's
    memory and port).
    """

    __slots__ = ("id", "cookie", "peer", "rtt_ns", "_pin", "_length", "_data")

    def __init__(self, sock: "Socket", msg: Any) -> None:
        self.id: int = msg.id                #: RPC id: even for a response, odd for a request
        self.cookie: int = msg.cookie        #: the cookie given to send_request() (0 for requests)
        self.peer: Address = _peer(ffi.addressof(msg, "peer"))  #: the other end (host, port)
        self.rtt_ns: int = msg.rtt_ns        #: responses: time from send to arrival; else 0
        self._length: int = msg.length
        self._pin: Optional[_Pin] = _Pin(msg, sock)
        self._data: Optional[memoryview] = None

    def __len__(self) -> int:
        return self._length

    def __bytes__(self) -> bytes:
        return bytes(self.data)

    def __enter__(self) -> "Message":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return "<%s id=%d len=%d peer=%s>" % (type(self).__name__, self.id, self._length, self.peer)

    def _alive(self) -> _Pin:
        """This message's pin; ValueError once released."""
        if self._pin is None:
            raise ValueError("message released")
        return self._pin

    def segments(self) -> List[memoryview]:
        """Zero-copy read-only views of the message's contiguous pieces, in
        order (homa_message_segment()); they keep the message alive."""
        pin = self._alive()
        views = []
        ptr = ffi.new("const void **")
        off = 0
        while off < self._length:
            n = lib.homa_message_segment(pin.msg, off, ptr)
            if n == 0:
                break
            keep = ffi.gc(ffi.cast("char *", ptr[0]), functools.partial(_keep, pin))
            views.append(memoryview(ffi.buffer(keep, n)).toreadonly())
            off += n
        return views

    @property
    def data(self) -> memoryview:
        """The whole message as one read-only memoryview: over the library's
        buffers when it is in one segment, else a copy gathered once."""
        if self._data is None:
            segs = self.segments()
            if len(segs) == 1:
                self._data = segs[0]
            else:
                buf = bytearray(self._length)
                self.copy_into(buf)
                self._data = memoryview(buf).toreadonly()
        return self._data

    def copy_into(self, buf: Any, offset: int = 0) -> int:
        """Copy the bytes from @offset on into the writable buffer @buf
        (homa_message_copy()); return how many were copied.
        InvalidArgumentError for an @offset size_t cannot hold."""
        pin = self._alive()
        offset = c_int("size_t", "offset", offset)
        with ffi.from_buffer(buf, require_writable=True) as dst:
            return int(lib.homa_message_copy(pin.msg, offset, dst, len(dst)))

    def release(self) -> None:
        """Give up this object's hold on the message (homa_message_release()
        once no view of it remains either). Idempotent."""
        self._pin = None
        self._data = None


class Request(Message):
    """A request received by a server socket; answer it with reply()."""

    __slots__ = ("_sock",)

    def __init__(self, sock: "Socket", msg: Any) -> None:
        super().__init__(sock, msg)
        self._sock = sock

    def reply(self, data: Data, more: bool = False) -> None:
        """Send the response (homa_reply()); @data is copied before the
        call returns. With @more (HOMA_SEND_MORE) its packets wait to
        leave in one system call with the next replies (Socket.reply()).
        Raises NotFoundError (the client went away), StateError (answered
        already), MessageTooLongError, ShutdownError, WouldBlockError /
        CallTimeoutError (no buffer space in time)."""
        self._sock.reply(self.id, data, more)

    def abort(self) -> None:
        """Forget the request without replying (homa_abort())."""
        self._sock.abort(self.id)


def _more_opts(cookie: int = 0) -> Any:
    """struct homa_send_opts with HOMA_SEND_MORE (and @cookie) set."""
    o = ffi.new("struct homa_send_opts *")
    lib.homa_send_opts_default(o)
    o.cookie = cookie   # checked by the caller (c_int())
    o.flags = lib.HOMA_SEND_MORE
    return o


@contextlib.contextmanager
def _iov(data: Data) -> Iterator[Tuple[Any, int]]:
    """(struct homa_iov[], count) over one buffer or a sequence of buffers,
    for the duration of the `with` block: the buffers are exported to C
    (ffi.from_buffer()) inside it and released when it ends (see the
    module's note on exports)."""
    parts = list(data) if isinstance(data, (list, tuple)) else [data]
    iov = ffi.new("struct homa_iov[]", max(len(parts), 1))
    keep: List[Any] = []
    try:
        for i, p in enumerate(parts):
            b = ffi.from_buffer(p)
            keep.append(b)
            iov[i].base = b
            iov[i].len = len(b)
        yield iov, len(parts)
    finally:
        for b in keep:
            ffi.release(b)


class Socket:
    """One Homa endpoint (homa_open()): an address and a port.

    Keyword arguments are the fields of struct homa_open_opts:
      server        accept incoming requests (recv_request())
      port          Homa port; 0 picks a free one (see `port`)
      driver        "udp" (default; no privilege), "raw" (IP protocol 146,
                    the Linux module's format; needs CAP_NET_RAW) or "xdp"
                    (AF_XDP kernel bypass on `ifname`; IPv4; needs
                    CAP_NET_ADMIN and CAP_BPF; docs/XDP.md)
      ifname, xdp_queues, xdp_raw   XDP driver: the interface, how many of
                    its receive queues to serve (0: all), and whether to
                    speak the raw format (IP protocol 146) instead of UDP
      transport     "homa" (default), "tcp" (kernel TCP, same calls and
                    errors) or "auto" (Homa per peer, TCP where Homa gets no
                    answer); a tcp or auto server accepts both; man
                    homa_transport(3)
      auto_fallback_ms, auto_retry_ms   "auto": Homa silence before a peer
                    moves to TCP, first back-off before Homa is tried again
                    (0: 50 ms, 1000 ms)
      auto_tcp_min_bytes   "auto": requests of at least this many bytes go
                    over TCP, also to peers Homa reaches (0: size does not
                    matter; non-zero with another transport: invalid)
      rcvbuf_bytes  UDP and raw drivers: bytes the kernel queues for the
                    socket before it drops packets (SO_RCVBUF), 4096..1 GiB
      known_peers   UDP driver: most peers given a kernel receive queue of
                    their own, read before strangers' (-1: none; up to 1024;
                    docs/HARDENING.md section 6)
      stranger_budget, stranger_cpu_us   UDP driver with known peers:
                    packets and µs of CPU per ms the port's own queues
                    (strangers) get while known peers are active (-1: no
                    limit; up to 1000000 and 1000)
      spin_us       µs a thread waiting in the socket, and driving its I/O,
                    looks for packets before it sleeps (0: sleep at once;
                    up to 10000)
      rx_lend_slots UDP driver: receive buffers messages may hold, their
                    bulk payload read in place instead of copied (-1: copy
                    every payload; up to 65536)
      These seven default to None, homa_open_opts_default()'s values (in
      effect: no size rule, 1 MiB, 64 peers, 64 packets, 100 µs, 0 µs,
      256 buffers);
      <homa/homa.h> documents each field, also what 0 means in it.
      mode          "threaded" (default: a runtime thread moves packets) or
                    "polled" (packets move inside this socket's calls)
      bind_addr     local numeric address ("127.0.0.1", "::"); None: 0.0.0.0
      settings      dict of protocol settings (see default_settings())
      send_timeout  seconds a send waits for buffer space (None: forever,
                    0: WouldBlockError at once)
      batch, offload   packets per system call; UDP GSO/GRO
      pcap_path, pcap  capture every packet to this file; dict of
                    max_bytes, keep_files, sample_every, snaplen
      metrics_port, metrics_addr   serve counters on GET /metrics
      encrypt       PSP encryption (<homa/encrypt.h>): True, or a dict of
                    version, master_keys (64 bytes), cert_file, key_file,
                    ca_file, kx_port, rotate_ns, kx_timeout_ms
    Raises what homa_open() returns: InvalidArgumentError (also for an
    integer its C field cannot hold, checked before homa_open(): a port
    of 70000 or -1, a negative batch, a pcap or encrypt value out of its
    field's type, an unknown settings, pcap or encrypt key; the message
    names the argument), AddressInUseError,
    AddressNotAvailableError, PermissionError, NotSupportedError,
    OutOfMemoryError, IOError. An integer argument given another type
    (float, str; None where None is not its default) raises TypeError.
    """

    def __init__(self, server: bool = False, port: int = 0, driver: str = "udp", *,
                 mode: str = "threaded", bind_addr: Optional[str] = None,
                 settings: Optional[Mapping[str, Any]] = None,
                 send_timeout: Optional[float] = None, batch: Optional[int] = None,
                 offload: Optional[bool] = None, pcap_path: Optional[str] = None,
                 pcap: Optional[Mapping[str, int]] = None, metrics_port: int = 0,
                 metrics_addr: Optional[str] = None,
                 encrypt: Union[None, bool, Mapping[str, Any]] = None,
                 ifname: Optional[str] = None, xdp_queues: int = 0,
                 xdp_raw: bool = False, transport: str = "homa",
                 auto_fallback_ms: int = 0, auto_retry_ms: int = 0,
                 auto_tcp_min_bytes: Optional[int] = None,
                 rcvbuf_bytes: Optional[int] = None, known_peers: Optional[int] = None,
                 stranger_budget: Optional[int] = None,
                 stranger_cpu_us: Optional[int] = None,
                 spin_us: Optional[int] = None,
                 rx_lend_slots: Optional[int] = None) -> None:
        self._lock = threading.RLock()
        self._pins = 0
        self._closing = False
        self._h: Any = None
        self._addrs: Dict[Address, Any] = {}
        o = ffi.new("struct homa_open_opts *")
        lib.homa_open_opts_default(o)
        keep: List[Any] = []
        if driver not in _DRIVERS:
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "driver: udp, raw or xdp")
        if transport not in _TRANSPORTS:
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                               "transport: homa, tcp or auto")
        o.transport = _TRANSPORTS[transport]
        if mode not in _MODES:
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "mode: threaded or polled")
        o.driver, o.mode = _DRIVERS[driver], _MODES[mode]
        self.mode = mode
        for name, value in (("port", port), ("server", server),
                            ("auto_fallback_ms", auto_fallback_ms),
                            ("auto_retry_ms", auto_retry_ms), ("metrics_port", metrics_port),
                            ("xdp_queues", xdp_queues), ("xdp_raw", xdp_raw)):
            set_int(o, name, value)
        for name, value in (("auto_tcp_min_bytes", auto_tcp_min_bytes),
                            ("rcvbuf_bytes", rcvbuf_bytes), ("known_peers", known_peers),
                            ("stranger_budget", stranger_budget),
                            ("stranger_cpu_us", stranger_cpu_us), ("spin_us", spin_us),
                            ("rx_lend_slots", rx_lend_slots), ("batch", batch), ("offload", offload)):
            if value is not None:
                set_int(o, name, value)
        o.send_timeout_ns = timeout_ns(send_timeout, "send_timeout")
        if bind_addr is not None:
            o.bind_addr = self._cstr(bind_addr, keep)
        if settings is not None:
            st = _settings(settings)
            keep.append(st)
            o.settings = st
        if pcap_path is not None:
            o.pcap_path = self._cstr(pcap_path, keep)
        for k, v in (pcap or {}).items():
            if k not in _field_names("struct homa_pcap_opts"):
                raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                                   "unknown pcap option %r" % k)
            set_int(o.pcap, k, v, "pcap[%r]" % k)
        if metrics_addr is not None:
            o.metrics_addr = self._cstr(metrics_addr, keep)
        if ifname is not None:
            o.ifname = self._cstr(ifname, keep)
        if encrypt:
            o.encrypt = self._encrypt_opts({} if encrypt is True else encrypt, keep)
        h = ffi.new("homa_socket **")
        check(lib.homa_open(h, o))
        self._h = h[0]
        self._port: int = lib.homa_local_port(self._h)

    @staticmethod
    def _cstr(text: str, keep: List[Any]) -> Any:
        """A C string kept alive in @keep."""
        c = ffi.new("char[]", text.encode())
        keep.append(c)
        return c

    def _encrypt_opts(self, opts: Mapping[str, Any], keep: List[Any]) -> Any:
        """struct homa_encrypt_opts from a dict (defaults for missing keys)."""
        e = ffi.new("struct homa_encrypt_opts *")
        lib.homa_encrypt_opts_default(e)
        keep.append(e)
        for k, v in opts.items():
            if k == "master_keys":
                if len(v) != 64:
                    raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                                       "master_keys: 64 bytes")
                b = ffi.new("uint8_t[]", bytes(v))
                keep.append(b)
                e.master_keys = b
            elif k in ("cert_file", "key_file", "ca_file"):
                setattr(e, k, self._cstr(v, keep))
            elif k in ("version", "kx_port", "rotate_ns", "kx_timeout_ms"):
                set_int(e, k, v, "encrypt[%r]" % k)
            else:
                raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"],
                                                   "unknown encrypt option %r" % k)
        return e

    # -- life cycle ---------------------------------------------------

    def __enter__(self) -> "Socket":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_h", None) is not None:
            self.close()

    def __repr__(self) -> str:
        return "<homa.Socket port=%d%s>" % (self._port, " closed" if self.closed else "")

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closing

    @property
    def port(self) -> int:
        """The socket's Homa port (homa_local_port()), also after port=0."""
        return self._port

    def close(self) -> None:
        """Shut the socket down (homa_close()): outstanding client RPCs end,
        replies still being sent are dropped (their clients time out),
        threads blocked in it raise ShutdownError. Received messages stay
        readable: while any is still referenced the socket's memory and
        port are kept, and freed with the last one. Idempotent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            if self._pins == 0:
                self._close_now()

    def _close_now(self) -> None:
        """homa_close() (called with the lock held, once)."""
        h, self._h = self._h, None
        if h is not None:
            lib.homa_close(h)

    def _pin(self) -> None:
        """A received message now holds the socket's memory."""
        with self._lock:
            self._pins += 1

    def _unpin(self) -> None:
        """A received message was freed; finish a deferred close."""
        with self._lock:
            self._pins -= 1
            if self._pins == 0 and self._closing:
                self._close_now()

    def _handle(self) -> Any:
        """The C handle; ShutdownError after close()."""
        if self._closing:
            raise ShutdownError()
        return self._h

    def fileno(self) -> int:
        """The socket's descriptor for select/poll/epoll (homa_fd()):
        readable while a message waits for recv (threaded mode), or when
        the socket needs poll() (polled mode). Never read or close it."""
        return check(lib.homa_fd(self._handle()))

    # -- addresses ----------------------------------------------------

    def _sockaddr(self, addr: Address) -> Any:
        """struct sockaddr * for (host, port), cached."""
        sa = self._addrs.get(addr)
        if sa is None:
            host, port = addr
            ss = ffi.new("struct sockaddr_storage *")
            ln = ffi.new("socklen_t *")
            if not 0 < port < 65536:
                raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "bad port %r" % port)
            check(lib.homa_sockaddr_parse(host.encode(), port, ss, ln))
            sa = ffi.cast("struct sockaddr *", ss)
            if len(self._addrs) >= 4096:
                self._addrs.clear()
            self._addrs[addr] = (sa, ss)
            return sa
        return sa[0]

    # -- client -------------------------------------------------------

    def send_request(self, addr: Address, data: Data, cookie: int = 0,
                     more: bool = False) -> int:
        """Start a client RPC (homa_send_request()) to the server at
        @addr = (host, port) and return its id (even). @data (any buffer,
        or a sequence of buffers sent as one message) is copied before the
        call returns. With @more (HOMA_SEND_MORE, homa_request_opts())
        more sends follow at once: the request's packets wait and leave
        with the next ones in one system call, at the next send without
        @more or the next receive that finds nothing ready (<homa/homa.h>
        lists every event that sends them). Raises InvalidArgumentError
        (also a @cookie uint64_t cannot hold), NotSupportedError, MessageTooLongError, WouldBlockError /
        CallTimeoutError (no buffer space within send_timeout),
        PeerDeadError, ShutdownError, OutOfMemoryError."""
        h = self._handle()
        sa = self._sockaddr(addr)
        cookie = c_int("uint64_t", "cookie", cookie)
        idp = ffi.new("uint64_t *")
        if more:
            with _iov(data) as (iov, n):
                err = lib.homa_request_opts(h, sa, iov, n, _more_opts(cookie), idp)
        elif isinstance(data, (list, tuple)):
            with _iov(data) as (iov, n):
                err = lib.homa_send_request(h, sa, iov, n, cookie, idp)
        else:
            with ffi.from_buffer(data) as buf:
                err = lib.homa_send(h, sa, buf, len(buf), cookie, idp)
        check(err)
        return int(idp[0])

    def _recv(self, flags: int, rpc_id: int, timeout: Optional[float]) -> Any:
        """homa_recv() into a new struct homa_message; raises the error of
        a failed RPC with its `rpc_id` attribute set."""
        h = self._handle()
        rpc_id = c_int("uint64_t", "id", rpc_id)
        m = ffi.new("struct homa_message *")
        t = timeout_ns(timeout)
        if t == 0:
            err = lib.homa_recv(h, flags, rpc_id, 0, m)
        else:
            # Wait in slices: a close() deferred by messages still in use
            # cannot wake a thread inside homa_recv(), so look at it often.
            end = None if t < 0 else time.monotonic_ns() + t
            while True:
                left = _CLOSING_SLICE_NS if end is None else min(end - time.monotonic_ns(), _CLOSING_SLICE_NS)
                err = lib.homa_recv(h, flags, rpc_id, max(left, 1), m)
                if err != _ETIME or (end is not None and time.monotonic_ns() >= end):
                    break
                self._handle()
        if err < 0:
            raise _recv_error(err, m)
        return m

    def recv_response(self, id: int = 0, timeout: Optional[float] = None) -> Message:
        """Wait for the response to client RPC @id (0: to any of this
        socket's RPCs) for at most @timeout seconds (None: as long as it
        takes, 0: not at all) (homa_recv()). A failed RPC raises its error
        (TimeoutError: the server stopped answering; NoServerError,
        CanceledError, AbandonedError) with `rpc_id` set; CallTimeoutError
        (nothing within @timeout), WouldBlockError (timeout 0),
        NotFoundError (@id is not an outstanding RPC), ShutdownError,
        InvalidArgumentError (an @id uint64_t cannot hold, a @timeout
        negative or of 2**63 ns or more)."""
        return Message(self, self._recv(lib.HOMA_RECV_RESPONSE, id, timeout))

    def call(self, addr: Address, data: Data, timeout: Optional[float] = None) -> memoryview:
        """One RPC: send @data to @addr and return the response's bytes as
        a read-only memoryview (Message.data). If no response comes within
        @timeout seconds the RPC is aborted and CallTimeoutError raised;
        other errors as send_request() and recv_response() (a bad @timeout
        raises before the request is sent)."""
        timeout_ns(timeout)
        rpc = self.send_request(addr, data)
        try:
            return self.recv_response(rpc, timeout).data
        except _errors.CallTimeoutError:
            h = self._h
            if h is not None:
                lib.homa_abort(h, rpc)
            raise

    def abort(self, id: int) -> None:
        """Abandon RPC @id (homa_abort()). Client: no response will be
        delivered, a thread waiting for it raises CanceledError. Server:
        the request is forgotten, no reply is sent. Raises NotFoundError,
        ShutdownError, InvalidArgumentError (an @id uint64_t cannot hold)."""
        check(lib.homa_abort(self._handle(), c_int("uint64_t", "id", id)))

    def recv_partial(self, id: int, offset: int, buf: Any) -> Tuple[int, int]:
        """Copy bytes of a response that is still arriving for client RPC
        @id, from @offset on, into the writable buffer @buf
        (homa_recv_partial()). Return (bytes copied, bytes arrived so
        far). NotFoundError when the response has not started or is
        complete (then recv_response() returns it); InvalidArgumentError
        for an @id (uint64_t) or @offset (size_t) out of its C type."""
        h = self._handle()
        id, offset = c_int("uint64_t", "id", id), c_int("size_t", "offset", offset)
        avail = ffi.new("size_t *")
        with ffi.from_buffer(buf, require_writable=True) as dst:
            n = lib.homa_recv_partial(h, id, offset, dst, len(dst), avail)
        return check(n), avail[0]

    # -- server -------------------------------------------------------

    def recv_request(self, timeout: Optional[float] = None) -> Request:
        """Wait for a request (server sockets; homa_recv()) for at most
        @timeout seconds. Raises CallTimeoutError, WouldBlockError
        (timeout 0), InvalidArgumentError (not a server socket),
        ShutdownError."""
        return Request(self, self._recv(lib.HOMA_RECV_REQUEST, 0, timeout))

    def reply(self, id: int, data: Data, more: bool = False) -> None:
        """Send the response to request @id (homa_reply()); see
        Request.reply(). With @more (HOMA_SEND_MORE, homa_reply_opts())
        its packets wait for the next reply without @more or this
        socket's next receive that finds nothing ready, and leave with
        the others in one system call: a server answering the requests
        that were waiting replies to all but the last with it.
        InvalidArgumentError for an @id uint64_t cannot hold."""
        h = self._handle()
        id = c_int("uint64_t", "id", id)
        if more:
            with _iov(data) as (iov, n):
                err = lib.homa_reply_opts(h, id, iov, n, _more_opts())
        elif isinstance(data, (list, tuple)):
            with _iov(data) as (iov, n):
                err = lib.homa_reply(h, id, iov, n)
        else:
            with ffi.from_buffer(data) as buf:
                err = lib.homa_reply_buf(h, id, buf, len(buf))
        check(err)

    # -- polled mode, settings, counters ------------------------------

    def poll(self, timeout: Optional[float] = 0) -> int:
        """Polled mode: move packets and run timers, waiting up to @timeout
        seconds for the first packet (homa_poll()). Return the number of
        messages ready. InvalidArgumentError on a threaded socket, and for
        a @timeout negative or of 2**63 ns or more."""
        return check(lib.homa_poll(self._handle(), timeout_ns(timeout)))

    def set_settings(self, **fields: Any) -> None:
        """Change protocol settings at run time (homa_set_settings()): the
        defaults with @fields applied (see default_settings()).
        InvalidArgumentError names a rejected field."""
        check(lib.homa_set_settings(self._handle(), _settings(fields)))

    def stats(self) -> Dict[str, Any]:
        """The engine's protocol counters (homa_socket_stats(), <homa/stats.h>)."""
        out = ffi.new("struct homa_stats *")
        check(lib.homa_socket_stats(self._handle(), out))
        return _struct_to_dict(out, "struct homa_stats")

    def io_stats(self) -> Dict[str, Any]:
        """The runtime's and driver's counters (homa_io_stats())."""
        out = ffi.new("struct homa_io_stats *")
        check(lib.homa_io_stats(self._handle(), out))
        return _struct_to_dict(out, "struct homa_io_stats")

    # -- encryption (<homa/encrypt.h>) ----------------------------------

    def encrypt_connect(self, addr: Address) -> None:
        """Run the key exchange with @addr now unless an association is
        fresh (homa_encrypt_connect()). NotSupportedError, CertificateError,
        HandshakeError, KeyExpiredError, ShutdownError."""
        check(lib.homa_encrypt_connect(self._handle(), self._sockaddr(addr)))

    def encrypt_tx_add(self, addr: Address, spi: int, key: bytes, version: int = 0) -> None:
        """Seal packets to @addr with the receiver's @spi and @key
        (homa_encrypt_tx_add()). InvalidArgumentError also for an @spi
        (uint32_t) or @version (int) out of its C type."""
        spi, version = c_int("uint32_t", "spi", spi), c_int("int", "version", version)
        if len(key) != lib.homa_psp_key_len(version):
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "key length")
        check(lib.homa_encrypt_tx_add(self._handle(), self._sockaddr(addr), spi, key, version))

    def encrypt_tx_remove(self, addr: Address) -> None:
        """Forget @addr's association (homa_encrypt_tx_remove()); NoAssociationError."""
        check(lib.homa_encrypt_tx_remove(self._handle(), self._sockaddr(addr)))

    def encrypt_rx_issue(self, version: int = 0) -> Tuple[int, bytes]:
        """Issue an SPI and key of this socket for one sender
        (homa_encrypt_rx_issue()); return (spi, key). @version is the
        socket's encrypt version (it sizes the key; InvalidArgumentError
        when a C int cannot hold it)."""
        version = c_int("int", "version", version)
        spi = ffi.new("uint32_t *")
        key = ffi.new("uint8_t[64]")
        check(lib.homa_encrypt_rx_issue(self._handle(), spi, key))
        return spi[0], bytes(ffi.buffer(key, lib.homa_psp_key_len(version)))

    def encrypt_rotate(self, key: Optional[bytes] = None) -> None:
        """Rotate the master keys (homa_encrypt_rotate()); @key 32 bytes or None."""
        if key is not None and len(key) != 32:
            raise _errors.InvalidArgumentError(_errors.CODES["HOMA_EINVAL"], "key: 32 bytes")
        check(lib.homa_encrypt_rotate(self._handle(), ffi.NULL if key is None else key))

    def encrypt_stats(self) -> Dict[str, Any]:
        """PSP counters (homa_encrypt_stats()); NotSupportedError if not encrypted."""
        out = ffi.new("struct homa_psp_stats *")
        check(lib.homa_encrypt_stats(self._handle(), out))
        return _struct_to_dict(out, "struct homa_psp_stats")
