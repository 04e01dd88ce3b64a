#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest: the runtime's capture of an encrypted socket holds clear text.

Runs echo_server and echo_client on loopback with --encrypt (the TLS 1.3
key exchange, certificates generated for the run) and --pcap on both, then
reads both captures with tshark and tools/wireshark/homa.lua: every packet
decodes as plain Homa (no PSP header, no ciphertext), carries the
"travelled encrypted" flag (homa.travelled_encrypted, DSCP bit 0), and
the client's DATA packets hold the request bytes echo_client sends.
(Clear sockets' captures carry no flag: obs_pcap, obs_rt_capture.)
As root it also captures the wire (tshark on lo, the server's UDP port)
during the run: every packet there decodes as PSP over Homa, with an SPI
and the clear common header's ports, its DATA fields ciphertext, and no
request bytes anywhere in the capture.

  capture_clear.py BUILD_DIR GEN_CERTS TSHARK HOMA_LUA
"""
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dissect_psp  # noqa: E402

FIELDS = ["_ws.col.Protocol", "homa.type", "homa.travelled_encrypted", "homa.offset",
          "homa.payload", "homapsp.spi"]
COUNT, SIZE = 5, 3000


def free_port():
    """A port number free for both UDP (Homa) and TCP (the key exchange) just now."""
    for _ in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("127.0.0.1", 0))
        port = u.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            t.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
        finally:
            t.close()
            u.close()
    raise RuntimeError("no free port")


def listening(port, tcp):
    """True once something listens on @port (TCP: the key-exchange service)."""
    out = subprocess.run(["ss", "-ltn" if tcp else "-lun"], capture_output=True,
                         text=True).stdout
    return (":%d " % port) in out


def start_wire(tshark, port, d):
    """As root: tshark capturing lo's UDP port @port into a file in @d, started.
    Return: (process, path), or (None, None) without root or a capture."""
    if tshark is None or os.geteuid() != 0:
        return None, None
    path = os.path.join(d, "wire.pcap")
    cap = subprocess.Popen([tshark, "-n", "-q", "-i", "lo", "-f", "udp port %d" % port,
                            "-w", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    deadline = time.monotonic() + 20
    line = ""
    while "Capturing on" not in line:
        line = cap.stderr.readline()
        if (not line and cap.poll() is not None) or time.monotonic() > deadline:
            cap.kill()
            cap.wait()
            return None, None
    return cap, path


def stop_wire(cap):
    """Stop the capture @cap (tshark writes its file out on SIGINT)."""
    if cap is None:
        return
    time.sleep(0.5)  # the last packets reach the capture
    cap.send_signal(2)
    try:
        cap.wait(timeout=20)
    except subprocess.TimeoutExpired:
        cap.kill()
        cap.wait()


def run_pair(build, certs, d, encrypt, tshark=None):
    """echo_server and echo_client with captures; return their pcap paths
    and the wire capture's (None without one: start_wire())."""
    port = free_port()
    cap, wire = start_wire(tshark, port, d)
    spcap, cpcap = os.path.join(d, "server.pcap"), os.path.join(d, "client.pcap")
    enc = ["--encrypt", "--certs", certs] if encrypt else []
    srv = subprocess.Popen([os.path.join(build, "echo_server"), "--port", str(port),
                            "--count", str(COUNT), "--pcap", spcap] + enc,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while not listening(port, encrypt):
            assert srv.poll() is None, "server exited: " + srv.stdout.read()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        out = subprocess.run([os.path.join(build, "echo_client"), "--port", str(port),
                              "--count", str(COUNT), "--size", str(SIZE), "--pcap", cpcap]
                             + enc, capture_output=True, text=True, timeout=60)
        assert "%d RPCs of %d bytes, 0 bad echoes" % (COUNT, SIZE) in out.stdout, \
            out.stdout + out.stderr
        srv.wait(timeout=30)
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()
        stop_wire(cap)
    return spcap, cpcap, wire


# The ports are ephemeral, and tshark gives some such ports (44818, 47808,
# ...) to other protocols before it tries heuristics such as Homa's and
# PSP's: heuristics first.
HEUR_FIRST = ["-o", "udp.try_heuristic_first:TRUE"]


def dissect(tshark, lua, pcap):
    """tshark's rows (dicts of FIELDS) for @pcap, at least one."""
    rows = dissect_psp.tshark_rows(tshark, lua, pcap, FIELDS, HEUR_FIRST)
    assert rows, "empty capture " + pcap
    return rows


def request_bytes(k, n):
    """@n bytes of echo_client's request @k from offset 0 (its pattern())."""
    return bytes((k + i * 13) & 0xff for i in range(n))


def check(rows, encrypted, what):
    """Every row plain Homa, flagged iff @encrypted; a request's first DATA readable."""
    flag = ("1", "True") if encrypted else ("",)
    for r in rows:
        assert r["_ws.col.Protocol"] == "HOMA", "%s: %s" % (what, r)
        assert r["homapsp.spi"] == "", "%s: a PSP header in the capture: %s" % (what, r)
        assert r["homa.travelled_encrypted"] in flag, "%s: flag: %s" % (what, r)
    data = [r for r in rows if r["homa.type"] == "0x10" and r["homa.offset"] == "0"]
    assert data, "%s: no DATA at offset 0" % what
    want = [request_bytes(k, 64).hex() for k in range(COUNT)]
    got = [bytes.fromhex(r["homa.payload"].replace(":", ""))[:64].hex() for r in data]
    assert any(w in got for w in want), "%s: no request bytes in clear: %s" % (what, got[:2])


WIRE_FIELDS = ["_ws.col.Protocol", "homapsp.spi", "homa.type", "homa.sport", "homa.dport",
               "homa.message_length", "homapsp.encrypted"]


def check_wire(tshark, lua, pcap):
    """The wire capture @pcap: every packet sealed PSP with its clear common
    header decoded, DATA fields ciphertext, no request bytes in the file."""
    rows = dissect_psp.tshark_rows(tshark, lua, pcap, WIRE_FIELDS, HEUR_FIRST)
    assert rows, "empty wire capture"
    for r in rows:
        assert r["_ws.col.Protocol"] == "PSP/HOMA", "wire: %s" % r
        assert r["homapsp.spi"] != "" and r["homa.type"] != "", "wire: %s" % r
        assert r["homa.sport"] != "" and r["homa.dport"] != "", "wire: %s" % r
        assert r["homa.message_length"] == "", "wire: DATA fields in clear: %s" % r
    assert any(r["homa.type"] == "0x10" and r["homapsp.encrypted"] != "" for r in rows), \
        "wire: no encrypted DATA"
    with open(pcap, "rb") as f:
        raw = f.read()
    for k in range(COUNT):
        assert request_bytes(k, 64) not in raw, "wire: request %d in clear" % k
    return len(rows)


def main(build, gen, tshark, lua):
    with tempfile.TemporaryDirectory() as d:
        certs = os.path.join(d, "certs")
        subprocess.run([gen, certs], check=True, capture_output=True)
        spcap, cpcap, wire = run_pair(build, certs, d, True, tshark)
        for name, pcap in (("client", cpcap), ("server", spcap)):
            rows = dissect(tshark, lua, pcap)
            check(rows, True, name)
            print("ok: %s capture, %d packets" % (name, len(rows)))
        if wire is None:
            print("skip: the wire capture (needs root and a capture on lo)")
        else:
            print("ok: wire capture, %d packets sealed" % check_wire(tshark, lua, wire))


if __name__ == "__main__":
    main(*sys.argv[1:5])
