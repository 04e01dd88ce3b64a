# SPDX-License-Identifier: MIT
"""known_peers, stranger_budget and stranger_cpu_us reach the UDP driver
(docs/HARDENING.md section 6), as seen in the server's io_stats(): how
many clients get a receive queue of their own (rx_known_peers,
rx_known_refused), and whether a flood of junk datagrams from a stranger
beside a known client's RPCs closes the strangers' queues
(rx_gate_closed). The flood and the RPCs repeat until the counter moves
or a generous number of rounds passes: how soon it moves depends on
scheduling, whether it can move does not."""
import socket
import time

import pytest

import homa
from conftest import LOCAL, PATIENT, Echo

# Rounds of (RPC, burst) a test tries before it gives up.
ROUNDS = 300
# Junk datagrams per burst: several receive batches' worth.
BURST = 200


def wait_for(fn, seconds=20.0):
    """Call @fn until it returns true, or @seconds pass; return its last value."""
    end = time.monotonic() + seconds
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.01)


def known(sock):
    """(rx_known_peers, rx_known_refused) of @sock."""
    io = sock.io_stats()
    return io["rx_known_peers"], io["rx_known_refused"]


def test_known_peers_default_gives_each_client_a_queue():
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c1, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c2:
        e = Echo(srv)
        for c in (c1, c2):
            c.call(e.addr, b"hello", timeout=10)
        assert wait_for(lambda: known(srv)[0] == 2), known(srv)


def test_known_peers_minus_one_gives_none():
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, known_peers=-1) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c1, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c2:
        e = Echo(srv)
        for _ in range(10):
            for c in (c1, c2):
                c.call(e.addr, b"hello", timeout=10)
        assert known(srv) == (0, 0)


def test_known_peers_one_refuses_the_second_client():
    """With room for one known peer, a second client that comes while the
    first keeps calling stays on the port's queues (counted refused)."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, known_peers=1) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c1, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as c2:
        e = Echo(srv)
        c1.call(e.addr, b"first", timeout=10)
        assert wait_for(lambda: known(srv)[0] == 1), known(srv)
        for _ in range(ROUNDS):   # c1 stays active, so c2 cannot take its place
            c1.call(e.addr, b"again", timeout=10)
            c2.call(e.addr, b"second", timeout=10)
            if known(srv)[1]:
                break
        peers, refused = known(srv)
        assert peers == 1 and refused >= 1


def flood_rounds(srv, cli, addr, rounds):
    """Up to @rounds times: an RPC of @cli (a known peer of @srv once its
    first request arrived), then a burst of junk datagrams to @addr from a
    stranger; stop once @srv's strangers' gate closed. Return
    rx_gate_closed."""
    junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        junk.bind((LOCAL, 0))
        cli.call(addr, b"meet", timeout=10)
        wait_for(lambda: known(srv)[0] == 1)
        for _ in range(rounds):
            cli.call(addr, b"known", timeout=10)
            for _ in range(BURST):
                junk.sendto(b"\0" * 64, addr)
            if srv.io_stats()["rx_gate_closed"]:
                break
        return srv.io_stats()["rx_gate_closed"]
    finally:
        junk.close()


@pytest.mark.parametrize("opts", [
    {"stranger_budget": 1, "stranger_cpu_us": -1},    # packets run out
    {"stranger_budget": -1, "stranger_cpu_us": 1},    # CPU time runs out
])
def test_stranger_budget_closes_the_gate(opts):
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, **opts) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as cli:
        e = Echo(srv)
        assert flood_rounds(srv, cli, e.addr, ROUNDS) >= 1


@pytest.mark.parametrize("opts", [
    {"stranger_budget": -1, "stranger_cpu_us": -1},              # no limit of either kind
    {"known_peers": -1, "stranger_budget": 1, "stranger_cpu_us": 1},   # no known peers: no gate
])
def test_no_budget_never_closes_the_gate(opts):
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT, **opts) as srv, \
         homa.Socket(bind_addr=LOCAL, settings=PATIENT) as cli:
        e = Echo(srv)
        junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        with junk:
            for _ in range(20):
                cli.call(e.addr, b"known", timeout=10)
                for _ in range(BURST):
                    junk.sendto(b"\0" * 64, e.addr)
        assert wait_for(lambda: sum(srv.stats()["drops"]) > 0)   # junk was read and dropped
        assert srv.io_stats()["rx_gate_closed"] == 0
