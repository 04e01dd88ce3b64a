# SPDX-License-Identifier: MIT
"""Fixtures of the homa binding's tests: a server and a client socket on
loopback, the build directory of the C examples (HOMA_BUILD_DIR)."""
import os
import threading

import pytest

import homa

LOCAL = "127.0.0.1"
# The default RPC timeout (100 ticks of 1 ms of silence) is shorter than a
# loaded 2-CPU machine may starve a process for: the tests' sockets wait
# 5 s before they declare a peer dead (test_dead_peer sets its own).
PATIENT = {"timeout_ticks": 5000}


@pytest.fixture
def server():
    """A server socket on loopback, ephemeral port."""
    with homa.Socket(server=True, bind_addr=LOCAL, settings=PATIENT) as s:
        yield s


@pytest.fixture
def client():
    """A client socket on loopback."""
    with homa.Socket(bind_addr=LOCAL, settings=PATIENT) as s:
        yield s


@pytest.fixture
def build_dir():
    """The CMake build directory that holds the C examples."""
    d = os.environ.get("HOMA_BUILD_DIR") or os.path.join(
        os.path.dirname(__file__), "..", "..", "build")
    if not os.path.exists(os.path.join(d, "echo_server")):
        pytest.skip("no C examples in %s (set HOMA_BUILD_DIR)" % d)
    return d


class Echo:
    """A thread answering every request of @sock with its own bytes (or
    with reply_fn(request bytes)), until the socket closes."""

    def __init__(self, sock, reply_fn=None):
        self.sock = sock
        self.addr = (LOCAL, sock.port)
        self.reply_fn = reply_fn
        self.served = 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while True:
            try:
                req = self.sock.recv_request()
            except homa.ShutdownError:
                return
            with req:
                req.reply(req.data if self.reply_fn is None else self.reply_fn(req))
            self.served += 1


@pytest.fixture
def echo(server):
    """An echo service on the server fixture."""
    e = Echo(server)
    yield e
    server.close()
    e.thread.join(5)
