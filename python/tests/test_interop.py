# SPDX-License-Identifier: MIT
"""The binding against the C examples, the Python examples against each
other, and a server killed in the middle."""
import os
import signal
import subprocess
import sys
import time

import pytest

import homa
from conftest import LOCAL

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def start(cmd, ready=b"port"):
    """Start @cmd; return (process, the port its first line announces)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, PYTHONUNBUFFERED="1"))
    line = p.stdout.readline()
    if ready not in line:
        p.kill()
        raise AssertionError("%s: %r %r" % (cmd, line, p.stderr.read()))
    return p, int(line.split(b"port")[1].split()[0])


def stop(p):
    """SIGTERM, then wait (SIGKILL if it does not go)."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        return p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()


def py(script, *args):
    return [sys.executable, os.path.join(EXAMPLES, script)] + [str(a) for a in args]


def test_python_client_and_c_echo_server(build_dir, client):
    srv, port = start([os.path.join(build_dir, "echo_server"), "--port", "0",
                       "--bind", LOCAL, "--count", "6"])
    try:
        for n in (1, 100, 1400, 70000, 3 << 20):
            data = os.urandom(n)
            assert client.call((LOCAL, port), data, timeout=30) == data
        out = subprocess.run(py("echo_client.py", "--port", port, "--count", 1, "--size", 100),
                             capture_output=True, timeout=60)
        assert out.returncode == 0 and b"echoed intact" in out.stdout, out
    finally:
        stop(srv)


def test_python_kv_client_and_c_kv_server(build_dir):
    srv, port = start([os.path.join(build_dir, "kv_server"), "--port", "0"], ready=b"port")
    try:
        out = subprocess.run(py("kv_client.py", "--port", port, "--seconds", 1,
                                "--value-mb", 2, "--lookups", 3),
                             capture_output=True, timeout=120)
        assert out.returncode == 0, out
        assert b"lookups by 3 tasks" in out.stdout
    finally:
        stop(srv)


def test_c_kv_client_and_python_kv_server(build_dir):
    srv, port = start(py("kv_server.py", "--port", 0, "--bind", LOCAL))
    try:
        out = subprocess.run([os.path.join(build_dir, "kv_client"), "--port", str(port),
                              "--seconds", "1", "--value-mb", "2"],
                             capture_output=True, timeout=120)
        assert out.returncode == 0 and b"lookups" in out.stdout, out
    finally:
        so, se = stop(srv)
    assert b"served" in so, (so, se)


def test_killed_server():
    """kill -9 of the server: the client's RPC ends with an error (the
    server stopped answering) instead of hanging, and the socket goes on."""
    srv, port = start(py("kv_server.py", "--port", 0, "--bind", LOCAL))
    addr = (LOCAL, port)
    with homa.Socket(bind_addr=LOCAL) as c:
        # the default RPC timeout while the new server starts up (a loaded
        # machine may keep it from answering within 50 ticks), a short one
        # for the RPC to the dead server
        assert bytes(c.call(addr, b"P\x00\x01kv", timeout=30)) == b"K"
        assert bytes(c.call(addr, b"G\x00\x01k", timeout=30)) == b"Kv"
        c.set_settings(timeout_ticks=50)
        srv.kill()
        srv.wait(10)
        t = time.monotonic()
        with pytest.raises((homa.TimeoutError, homa.NoServerError, homa.PeerDeadError)) as e:
            c.call(addr, b"G\x00\x01k", timeout=30)
        assert not isinstance(e.value, homa.CallTimeoutError)   # the RPC failed, not our wait
        assert time.monotonic() - t < 25
        srv.communicate()
        # a new server on the same port serves the same client socket
        srv2, _ = start(py("kv_server.py", "--port", port, "--bind", LOCAL))
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    assert bytes(c.call(addr, b"G\x00\x01k", timeout=10)) == b"N"
                    break
                except homa.PeerDeadError:   # until the dead-peer mark clears
                    assert time.monotonic() < deadline
                    time.sleep(0.05)
        finally:
            stop(srv2)
