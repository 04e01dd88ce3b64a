# SPDX-License-Identifier: MIT
"""homa.Socket's keyword arguments for the newer fields of struct
homa_open_opts (auto_tcp_min_bytes, rcvbuf_bytes, known_peers,
stranger_budget, stranger_cpu_us, spin_us, rx_lend_slots): homa_open() checks their
ranges, a socket opened with each runs RPCs, and where Python can see a
field's effect (the kernel's receive buffer, the transport of a large
request) it is the one asked for. test_strangers.py covers the known
peers and the strangers' budget under a flood."""
import os
import socket

import pytest

import homa
from homa._homa_cffi import lib
from conftest import LOCAL, PATIENT, Echo

# Values homa_open() refuses with HOMA_EINVAL (<homa/homa.h> gives each range).
OUT_OF_RANGE = [
    ("rcvbuf_bytes", 4095), ("rcvbuf_bytes", (1 << 30) + 1),
    ("known_peers", -2), ("known_peers", lib.HOMA_KNOWN_PEERS_MAX + 1),
    ("stranger_budget", -2), ("stranger_budget", lib.HOMA_STRANGER_BUDGET_MAX + 1),
    ("stranger_cpu_us", -2), ("stranger_cpu_us", lib.HOMA_STRANGER_CPU_MAX + 1),
    ("spin_us", lib.HOMA_SPIN_US_MAX + 1),
    ("rx_lend_slots", -2), ("rx_lend_slots", lib.HOMA_RX_LEND_SLOTS_MAX + 1),
    ("auto_tcp_min_bytes", 1),   # only with transport "auto"
]

# Values their C fields cannot hold: refused before homa_open().
UNREPRESENTABLE = [
    ("rcvbuf_bytes", -1), ("spin_us", -1), ("auto_tcp_min_bytes", -1),
    ("known_peers", 1 << 31), ("stranger_budget", -(1 << 31) - 1),
    ("stranger_cpu_us", 1 << 32),
]

# Values at the ends of each range, and the special ones (0, -1).
ACCEPTED = [
    ("rcvbuf_bytes", 0), ("rcvbuf_bytes", 4096), ("rcvbuf_bytes", 1 << 30),
    ("known_peers", -1), ("known_peers", 0), ("known_peers", 1),
    ("known_peers", lib.HOMA_KNOWN_PEERS_MAX),
    ("stranger_budget", -1), ("stranger_budget", 0), ("stranger_budget", 1),
    ("stranger_budget", lib.HOMA_STRANGER_BUDGET_MAX),
    ("stranger_cpu_us", -1), ("stranger_cpu_us", 0), ("stranger_cpu_us", 1),
    ("stranger_cpu_us", lib.HOMA_STRANGER_CPU_MAX),
    ("spin_us", 0), ("spin_us", 50), ("spin_us", lib.HOMA_SPIN_US_MAX),
    ("rx_lend_slots", -1), ("rx_lend_slots", 0), ("rx_lend_slots", 1),
    ("rx_lend_slots", lib.HOMA_RX_LEND_SLOTS_MAX),
]


@pytest.mark.parametrize("name,value", OUT_OF_RANGE)
def test_out_of_range_is_refused_by_homa_open(name, value):
    with pytest.raises(homa.InvalidArgumentError):
        homa.Socket(bind_addr=LOCAL, **{name: value})


@pytest.mark.parametrize("name,value", UNREPRESENTABLE)
def test_value_its_c_field_cannot_hold_is_invalid(name, value):
    with pytest.raises(homa.InvalidArgumentError, match=name):
        homa.Socket(bind_addr=LOCAL, **{name: value})


@pytest.mark.parametrize("name,value", ACCEPTED)
def test_rpc_with_option_set_on_both_ends(name, value):
    """A server and a client opened with the option run an RPC."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, **{name: value}) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT, **{name: value}) as cli:
        e = Echo(srv)
        assert bytes(cli.call(e.addr, b"opts", timeout=10)) == b"opts"


@pytest.mark.parametrize("spin_us", [0, lib.HOMA_SPIN_US_MAX])
def test_polled_client_waits_with_spin(echo, spin_us):
    """A polled client's blocking receive drives the socket and looks
    spin_us before each sleep: its RPCs complete."""
    with homa.Socket(bind_addr=LOCAL, mode="polled", settings=PATIENT, spin_us=spin_us) as cli:
        for i in range(20):
            assert bytes(cli.call(echo.addr, b"%d" % i, timeout=10)) == b"%d" % i


@pytest.mark.parametrize("lend", [None, -1])
def test_rx_lend_slots_reads_bulk_payload_in_place(lend):
    """By default a client's 600 KB response stays in the UDP driver's
    receive buffers (rx_lent_bytes); rx_lend_slots=-1 copies it all. Each
    byte is counted once either way, and the echo is exact."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT, rx_lend_slots=lend) as cli:
        e = Echo(srv)
        big = os.urandom(600000)
        assert bytes(cli.call(e.addr, big, timeout=10)) == big
        io = cli.io_stats()
        assert io["rx_lent_bytes"] + io["rx_copied_bytes"] == len(big)
        assert (io["rx_lent_bytes"] > len(big) // 2) if lend is None else io["rx_lent_bytes"] == 0


def _port_rcvbufs(port):
    """SO_RCVBUF of each UDP socket of this process bound to @port (the
    driver's own sockets: the port's queues and any known peer's)."""
    out = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink("/proc/self/fd/" + name).startswith("socket:"):
                continue
            s = socket.socket(fileno=os.dup(int(name)))
        except OSError:   # closed meanwhile, or not a socket
            continue
        with s:
            if (s.family in (socket.AF_INET, socket.AF_INET6) and s.type == socket.SOCK_DGRAM
                    and s.getsockname()[1] == port):
                out.append(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
    return out


@pytest.mark.parametrize("rcvbuf", [8192, 65536])
def test_rcvbuf_bytes_sizes_the_kernel_queue(rcvbuf):
    """Every UDP socket of the port has the receive buffer asked for (the
    kernel reports twice the value: its overhead)."""
    with homa.Socket(server=True, bind_addr=LOCAL, rcvbuf_bytes=rcvbuf) as srv:
        bufs = _port_rcvbufs(srv.port)
        assert bufs and all(b == 2 * rcvbuf for b in bufs), bufs


def test_rcvbuf_default_is_not_the_small_one():
    """Control of the test above: without rcvbuf_bytes the queue is the
    library's default, not 8 KiB."""
    with homa.Socket(server=True, bind_addr=LOCAL) as srv:
        bufs = _port_rcvbufs(srv.port)
        assert bufs and all(b > 2 * 8192 for b in bufs), bufs


def test_auto_tcp_min_bytes_sends_large_requests_over_tcp():
    """transport "auto" with auto_tcp_min_bytes: a request of that size
    goes over TCP, so a Homa-only server cannot get it (NoServerError)
    while a smaller one, and one to a server that accepts TCP, succeed."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as homa_only, \
         homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, transport="auto") as both, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT, transport="auto",
                     auto_tcp_min_bytes=1000) as cli, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT, transport="auto") as plain:
        a, b = Echo(homa_only), Echo(both)
        big = os.urandom(2000)
        assert bytes(cli.call(a.addr, b"small", timeout=10)) == b"small"
        with pytest.raises(homa.NoServerError):
            cli.call(a.addr, big, timeout=10)
        assert bytes(plain.call(a.addr, big, timeout=10)) == big   # without the option: Homa
        assert bytes(cli.call(b.addr, big, timeout=10)) == big


def test_aio_socket_forwards_the_options():
    """homa.aio.Socket passes the keyword arguments on to homa.Socket."""
    with pytest.raises(homa.InvalidArgumentError):
        homa.aio.Socket(bind_addr=LOCAL, spin_us=lib.HOMA_SPIN_US_MAX + 1)
    with homa.aio.Socket(server=True, bind_addr=LOCAL, rcvbuf_bytes=8192, known_peers=4,
                         stranger_budget=8, stranger_cpu_us=50, spin_us=10) as s:
        assert all(b == 2 * 8192 for b in _port_rcvbufs(s.port))
