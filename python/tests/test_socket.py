# SPDX-License-Identifier: MIT
"""homa.Socket: every method, buffers in, zero-copy views out, sizes from
0 B to 64 MiB, errors, threads and the GIL, close."""
import array
import gc
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import homa
from homa._homa_cffi import ffi, lib
from conftest import LOCAL, PATIENT, Echo


def test_call_round_trip(client, echo):
    resp = client.call(echo.addr, b"ping", timeout=10)
    assert isinstance(resp, memoryview) and resp.readonly
    assert bytes(resp) == b"ping"


def test_request_fields_and_reply(client, server):
    rpc = client.send_request((LOCAL, server.port), b"hello", cookie=77)
    assert rpc % 2 == 0
    req = server.recv_request(timeout=10)
    assert isinstance(req, homa.Request) and req.id % 2 == 1
    assert bytes(req) == b"hello" and len(req) == 5 and req.cookie == 0
    assert req.peer == (LOCAL, client.port)
    req.reply([b"wor", bytearray(b"ld")])  # a gather list is one message
    with pytest.raises((homa.StateError, homa.NotFoundError)):
        req.reply(b"again")   # answered (NotFoundError once the client acknowledged)
    resp = client.recv_response(rpc, timeout=10)
    assert resp.id == rpc and resp.cookie == 77 and resp.rtt_ns > 0
    assert resp.peer == (LOCAL, server.port) and bytes(resp.data) == b"world"
    assert "Message" in repr(resp) and str(server.port) in repr(server)


@pytest.mark.parametrize("make", [
    lambda b: b, bytearray, memoryview, lambda b: memoryview(b"xx" + b)[2:],
    lambda b: array.array("B", b), lambda b: [b[:3], memoryview(b)[3:]],
])
def test_buffer_protocol_input(client, echo, make):
    data = os.urandom(1000)
    assert bytes(client.call(echo.addr, make(data), timeout=10)) == data


def test_sizes_bit_exact(client, echo):
    for n in (1, 100, 1400, 65535, 65536, 65537, 1_000_001, 64 << 20):
        data = os.urandom(n) if n < (1 << 20) else (os.urandom(1 << 16) * ((n >> 16) + 1))[:n]
        data = bytearray(data)
        data[-1] ^= 0x5A
        try:
            resp = client.call(echo.addr, data, timeout=60)
        except homa.HomaError as x:
            keys = ("rpc_restarts", "msgs_evicted", "stale_evicted", "resends_sent", "resends_received",
                    "rpcs_timed_out", "unknown_replies_suppressed", "drops", "pkts_sent", "pkts_recv")
            raise AssertionError("%d B: %r; client %r; server %r" % (
                n, x, {k: client.stats()[k] for k in keys}, {k: echo.sock.stats()[k] for k in keys}))
        assert len(resp) == n and resp == data, n


def test_zero_length(client, server):
    """Empty messages: whatever the library does, the binding says it
    (a round trip, or InvalidArgumentError from homa_send)."""
    try:
        rpc = client.send_request((LOCAL, server.port), b"")
    except homa.InvalidArgumentError:
        return
    req = server.recv_request(timeout=10)
    assert len(req) == 0 and bytes(req.data) == b"" and req.segments() == []
    req.reply(b"")
    assert len(client.recv_response(rpc, timeout=10)) == 0


def test_send_more_batches():
    """HOMA_SEND_MORE: replies sent with more=True leave nothing until a
    reply without it, which sends all of them in one system call
    (io_stats tx_calls); requests with more=True go with the next send
    without it. Every response arrives with its bytes. Polled sockets
    whose own thread steps in only after 2 s, so nothing else sends
    while the test counts."""
    slow = {"resend_ticks": 2000, "resend_interval": 2000, "timeout_ticks": 40000}
    n = 6
    with homa.Socket(server=True, bind_addr=LOCAL, mode="polled", settings=slow) as server, \
            homa.Socket(bind_addr=LOCAL, mode="polled", settings=slow) as client:
        before = client.io_stats()
        ids = [client.send_request((LOCAL, server.port), b"q%d" % i, cookie=i,
                                   more=i < n - 1) for i in range(n)]
        after = client.io_stats()
        assert after["tx_calls"] - before["tx_calls"] == 1
        assert after["tx_packets"] - before["tx_packets"] == n
        reqs = [server.recv_request(timeout=10) for _ in range(n)]
        before = server.io_stats()
        for r in reqs[:-1]:
            r.reply(b"r" + bytes(r.data), more=True)
        mid = server.io_stats()
        assert mid["tx_calls"] == before["tx_calls"]
        assert mid["tx_packets"] == before["tx_packets"]
        reqs[-1].reply(b"r" + bytes(reqs[-1].data))
        after = server.io_stats()
        assert after["tx_calls"] - before["tx_calls"] == 1
        assert after["tx_packets"] - before["tx_packets"] == n
        for r in reqs:
            r.release()
        got = {}
        for _ in range(n):
            m = client.recv_response(timeout=10)
            got[m.id] = bytes(m.data)
            m.release()
        assert got == {ids[i]: b"rq%d" % i for i in range(n)}


def _segment_address(msg, offset=0):
    p = ffi.new("const void **")
    lib.homa_message_segment(msg._pin.msg, offset, p)
    return int(ffi.cast("uintptr_t", p[0]))


def test_views_are_zero_copy(client, server):
    rpc = client.send_request((LOCAL, server.port), os.urandom(300_000))
    req = server.recv_request(timeout=10)
    segs = req.segments()
    assert len(segs) >= 2 and sum(len(s) for s in segs) == 300_000
    off = 0
    for s in segs:
        assert s.readonly
        assert int(ffi.cast("uintptr_t", ffi.from_buffer(s))) == _segment_address(req, off)
        off += len(s)
    req.reply(b"x" * 1000)
    resp = client.recv_response(rpc, timeout=10)
    assert int(ffi.cast("uintptr_t", ffi.from_buffer(resp.data))) == _segment_address(resp)
    buf = bytearray(10)
    assert resp.copy_into(buf, 995) == 5 and buf[:5] == b"xxxxx"


def test_view_outlives_message_and_release(client, echo):
    data = os.urandom(5000)
    rpc = client.send_request(echo.addr, data)
    msg = client.recv_response(rpc, timeout=10)
    view = msg.data
    del msg
    gc.collect()
    assert client._pins == 1 and view == data   # the view keeps it alive
    view.release()
    gc.collect()
    assert client._pins == 0                     # and frees it when released
    msg = client.recv_response(client.send_request(echo.addr, data), timeout=10)
    with msg:
        assert msg.data == data
    assert client._pins == 0
    with pytest.raises(ValueError):
        msg.data
    msg.release()  # idempotent


def test_close_keeps_views_valid(echo):
    cli = homa.Socket(bind_addr=LOCAL, settings=PATIENT)
    view = cli.call(echo.addr, b"kept", timeout=10)
    port = cli.port
    cli.close()
    assert cli.closed
    with pytest.raises(homa.ShutdownError):
        cli.send_request(echo.addr, b"x")
    assert bytes(view) == b"kept"               # still readable
    with pytest.raises(homa.AddressInUseError):  # socket kept while the view lives
        homa.Socket(port=port, bind_addr=LOCAL)
    del view
    gc.collect()
    homa.Socket(port=port, bind_addr=LOCAL).close()  # freed with the last view
    cli.close()  # idempotent


def test_many_in_flight(client, echo):
    sent = {client.send_request(echo.addr, b"%d" % i, cookie=i): i for i in range(200)}
    got = {}
    for _ in range(200):
        m = client.recv_response(timeout=10)
        got[m.id] = (m.cookie, bytes(m))
    assert got == {rpc: (i, b"%d" % i) for rpc, i in sent.items()}


def test_threads_and_gil(client, server):
    """Blocking calls release the GIL; close() wakes a blocked thread."""
    e = Echo(server)
    errors = []

    def worker(k):
        try:
            for i in range(30):
                d = b"%d-%d" % (k, i)
                assert bytes(client.call(e.addr, d, timeout=10)) == d
        except Exception as x:  # noqa: BLE001
            errors.append(x)
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    end = time.monotonic() + 10
    while e.served < 240 and time.monotonic() < end:   # it counts after replying
        time.sleep(0.01)
    assert not errors and e.served == 240

    blocked = []
    t = threading.Thread(target=lambda: blocked.append(
        pytest.raises(homa.ShutdownError, client.recv_response, 0)))
    t.start()
    spins, end = 0, time.monotonic() + 0.3
    while time.monotonic() < end:   # this thread runs while the other waits
        spins += 1
    assert spins > 1000 and t.is_alive()
    client.close()
    t.join(10)
    assert not t.is_alive() and blocked


def test_errors_from_calls(client, server):
    addr = (LOCAL, server.port)
    with pytest.raises(homa.CallTimeoutError):
        client.recv_response(client.send_request(addr, b"q"), timeout=0.05)
    assert bytes(server.recv_request(timeout=10)) == b"q"
    with pytest.raises(homa.WouldBlockError):
        server.recv_request(timeout=0)
    with pytest.raises(homa.InvalidArgumentError):
        client.recv_request(timeout=0)
    with pytest.raises(homa.NotFoundError):
        client.recv_response(12346, timeout=0)
    with pytest.raises(homa.NotFoundError):
        client.abort(12346)
    with pytest.raises(homa.InvalidArgumentError):
        client.send_request(("not an address", 1), b"x")
    with pytest.raises(homa.InvalidArgumentError):
        client.send_request((LOCAL, 0), b"x")
    with pytest.raises(homa.InvalidArgumentError):
        client.recv_response(0, timeout=-1)
    with pytest.raises(homa.AddressInUseError):
        homa.Socket(server=True, port=server.port, bind_addr=LOCAL)
    with pytest.raises(homa.AddressNotAvailableError):
        homa.Socket(bind_addr="192.0.2.1")
    with pytest.raises(homa.InvalidArgumentError):
        homa.Socket(driver="tcp")
    with pytest.raises(homa.InvalidArgumentError):
        homa.Socket(settings={"mtu": 3})
    with pytest.raises(homa.InvalidArgumentError):
        homa.Socket(settings={"no_such_field": 3})
    with pytest.raises(homa.NotSupportedError):
        client.encrypt_stats()
    with pytest.raises(homa.NotSupportedError):
        client.send_request(("::1", server.port), b"x")
    with homa.Socket(bind_addr=LOCAL, settings={"max_message": 1000}) as small:
        with pytest.raises(homa.MessageTooLongError):
            small.send_request(addr, bytes(1001))
    # abort() wakes a thread waiting for the RPC with CanceledError (or, if
    # the abort came first on a loaded machine, its wait finds NotFoundError).
    for _ in range(5):
        rpc = client.send_request(addr, b"abort me")
        waiter = []

        def wait():
            try:
                client.recv_response(rpc, 10)
            except homa.HomaError as x:
                waiter.append(x)
        t = threading.Thread(target=wait)
        t.start()
        time.sleep(0.2)
        client.abort(rpc)
        t.join(10)
        assert waiter and isinstance(waiter[0], (homa.CanceledError, homa.NotFoundError))
        if isinstance(waiter[0], homa.CanceledError):
            assert waiter[0].rpc_id == rpc
            break
    else:
        pytest.fail("no waiter saw CanceledError in 5 tries")

def test_dead_peer(client):
    """A server that never answers: the RPC ends with homa.TimeoutError,
    and the next RPC to that peer fails at once with PeerDeadError."""
    with homa.Socket(bind_addr=LOCAL, settings={"timeout_ticks": 30}) as c, \
         homa.Socket(bind_addr=LOCAL) as silent:   # a client socket: drops requests
        addr = (LOCAL, silent.port)
        with pytest.raises((homa.TimeoutError, homa.NoServerError)) as e:
            c.call(addr, b"anyone?", timeout=20)
        assert isinstance(e.value, TimeoutError) or isinstance(e.value, ConnectionRefusedError)
        assert e.value.rpc_id % 2 == 0


def test_stats_settings_fileno(client, echo):
    client.call(echo.addr, b"x", timeout=10)
    st, io = client.stats(), client.io_stats()
    assert st["client_rpcs_completed"] == 1 and isinstance(st["pkts_sent"], list)
    assert io["tx_packets"] >= 1 and io["rx_packets"] >= 1
    d = homa.default_settings()
    assert d["max_message"] == 64 << 20 and len(d["unsched_cutoffs"]) == 8
    client.set_settings(timeout_ticks=200, unsched_cutoffs=d["unsched_cutoffs"])
    with pytest.raises(homa.InvalidArgumentError):
        client.set_settings(mtu=1)
    assert d["max_peer_partial_msgs"] == 64 and d["max_partial_msgs"] == 1024
    client.set_settings(max_peer_partial_msgs=8, max_partial_msgs=100)
    with pytest.raises(homa.InvalidArgumentError):
        client.set_settings(max_peer_partial_msgs=101, max_partial_msgs=100)
    assert d["max_stranger_partial_msgs"] == 16
    client.set_settings(max_stranger_partial_msgs=4)
    with pytest.raises(homa.InvalidArgumentError):
        client.set_settings(max_stranger_partial_msgs=0)
    assert client.fileno() >= 0
    with pytest.raises(homa.InvalidArgumentError):
        client.poll(0)   # threaded socket


def test_polled_mode_server(client):
    with homa.Socket(server=True, mode="polled", bind_addr=LOCAL, settings=PATIENT) as srv:
        rpc = client.send_request((LOCAL, srv.port), b"polled")
        end = time.monotonic() + 10
        while srv.poll(0.01) == 0 and time.monotonic() < end:
            pass
        req = srv.recv_request(timeout=0)
        req.reply(bytes(req.data)[::-1])
        end = time.monotonic() + 10
        while time.monotonic() < end:   # polled: packets move in our calls
            srv.poll(0.001)
            try:
                m = client.recv_response(rpc, timeout=0.001)
                break
            except homa.CallTimeoutError:
                pass
        assert bytes(m) == b"dellop"


def test_recv_partial(client, server):
    size = 16 << 20
    rpc = client.send_request((LOCAL, server.port), b"big")
    req = server.recv_request(timeout=10)
    with pytest.raises(homa.NotFoundError):
        client.recv_partial(rpc + 2, 0, bytearray(10))   # no such RPC
    data = os.urandom(1 << 16) * (size >> 16)
    t = threading.Thread(target=req.reply, args=(data,))
    t.start()
    buf = bytearray(size)
    got, resp = 0, None
    end = time.monotonic() + 60
    while resp is None and time.monotonic() < end:
        try:
            n, avail = client.recv_partial(rpc, got, memoryview(buf)[got:])
            assert got + n <= avail <= size
            got += n
        except homa.NotFoundError:   # not started, or complete
            try:
                resp = client.recv_response(rpc, timeout=0)
            except homa.WouldBlockError:
                pass
    t.join(30)
    assert resp is not None and resp.data == data
    assert buf[:got] == data[:got]

def _released_after(call, mv):
    """Run @call(@mv), which must fail, keep its exception (and so its
    traceback's frames) alive, and release @mv: memoryview.release()
    raises BufferError while a frame of the failed call still exports it."""
    with pytest.raises(homa.HomaError) as info:
        call(mv)
    mv.release()
    assert info.value is not None


def test_failed_calls_keep_no_export(client, server):
    """A call that fails releases the caller's buffer before it raises."""
    _released_after(lambda mv: client.recv_partial(2, 0, mv), memoryview(bytearray(10)))
    _released_after(lambda mv: server.reply(3, mv), memoryview(b"reply"))
    _released_after(lambda mv: server.reply(3, [b"a", mv]), memoryview(b"reply"))
    _released_after(lambda mv: server.reply(3, mv, more=True), memoryview(b"reply"))
    with homa.Socket(bind_addr=LOCAL, settings={"max_message": 1000}) as small:
        addr = (LOCAL, server.port)
        _released_after(lambda mv: small.send_request(addr, mv), memoryview(bytes(1001)))
        _released_after(lambda mv: small.send_request(addr, [mv]), memoryview(bytes(1001)))
    buf = bytearray(10)
    mv = memoryview(buf)
    rpc = client.send_request((LOCAL, server.port), b"x")
    server.recv_request(timeout=10).reply(b"12345")
    client.recv_response(rpc, timeout=10).copy_into(mv)
    mv.release()   # copy_into() let go of it too
    assert buf[:5] == b"12345"


def test_failed_partial_reads_collected():
    """Failed recv_partial() calls whose exceptions end in reference
    cycles (as test_recv_partial's loop makes them when recv_response()
    raises while NotFoundError is handled) are collected without a crash
    (CPython without the fix for gh-77894 crashes clearing a memoryview
    a dead frame still exports). In a child process: a crash fails the
    test instead of ending the run."""
    code = textwrap.dedent("""
        import gc
        import homa

        def cycle():
            e = ValueError()   # the raising frame holds its exception: a cycle
            raise e

        with homa.Socket(bind_addr="127.0.0.1") as c:
            big = bytearray(1 << 16)
            for i in range(500):
                try:
                    c.recv_partial(2 * i + 2, 0, memoryview(big)[i:])
                except homa.NotFoundError:
                    try:
                        cycle()
                    except ValueError:
                        pass
            gc.collect()
        print("collected")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "collected" in r.stdout, (r.returncode, r.stderr[-2000:])


def test_encrypted_pair():
    """encrypt=True: keys handed over by the application."""
    with homa.Socket(server=True, bind_addr=LOCAL, encrypt=True, settings=PATIENT) as srv, \
         homa.Socket(bind_addr=LOCAL, encrypt={"version": 0}, settings=PATIENT) as cli:
        e = Echo(srv)
        with pytest.raises(homa.NoAssociationError):
            cli.send_request(e.addr, b"x")
        spi, key = srv.encrypt_rx_issue()
        cli.encrypt_tx_add(e.addr, spi, key)
        spi2, key2 = cli.encrypt_rx_issue()
        srv.encrypt_tx_add((LOCAL, cli.port), spi2, key2)
        assert bytes(cli.call(e.addr, b"secret", timeout=10)) == b"secret"
        assert cli.encrypt_stats()["sealed"] >= 1 and srv.encrypt_stats()["opened"] >= 1
        cli.encrypt_rotate()
        cli.encrypt_tx_remove(e.addr)
        with pytest.raises(homa.NoAssociationError):
            cli.encrypt_tx_remove(e.addr)
        with pytest.raises(homa.NotSupportedError):
            cli.encrypt_connect(e.addr)   # no certificate files


def test_metrics_and_pcap(tmp_path, echo):
    import socket as pysock
    import urllib.request
    s = pysock.socket()
    s.bind((LOCAL, 0))
    mport = s.getsockname()[1]
    s.close()
    pcap = tmp_path / "c.pcap"
    with homa.Socket(bind_addr=LOCAL, metrics_port=mport, pcap_path=str(pcap), settings=PATIENT) as c:
        c.call(echo.addr, b"watched", timeout=10)
        body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % mport, timeout=10).read()
        assert b"homa_" in body
    assert pcap.stat().st_size > 24


def test_transport_tcp_and_auto():
    """A client over TCP and one over Homa reach the same "auto" server."""
    srv = homa.Socket(server=True, bind_addr=LOCAL, transport="auto")
    tcp = homa.Socket(bind_addr=LOCAL, transport="tcp")
    hom = homa.Socket(bind_addr=LOCAL)
    try:
        for cli, body in ((tcp, b"over tcp"), (hom, b"over homa")):
            rpc = cli.send_request((LOCAL, srv.port), body)
            req = srv.recv_request(timeout=10)
            assert bytes(req) == body
            req.reply(body.upper())
            assert bytes(cli.recv_response(rpc, timeout=10).data) == body.upper()
        with pytest.raises(homa.InvalidArgumentError):
            homa.Socket(transport="udp")
    finally:
        for s in (tcp, hom, srv):
            s.close()
