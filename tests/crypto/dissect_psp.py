#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CTest: tools/wireshark/homa.lua decodes PSP-sealed Homa packets.

Seals Homa DATA packets with the independent reference (psp_ref.py) in all
four PSP versions, on UDP port 1000, on the Homa port and with the UDP
ports the runtime's capture writes (the first four bytes), writes them to a
pcap, and checks what tshark shows: the PSP header fields, the clear
common header (GCM) or the whole packet (GMAC), and that a damaged PSP
header is flagged malformed while a clear Homa packet stays plain Homa.

  dissect_psp.py TSHARK HOMA_LUA
"""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import psp_ref  # noqa: E402


def homa_data(sport, dport, sender_id, payload):
    """A Homa DATA packet: common header, DATA fields (56 bytes), payload."""
    common = struct.pack(">HHI3sBBBHHHQ", sport, dport, 0, b"\0\0\0", 0x10, 0xe0, 0,
                         0x4800, 0, 0, sender_id)
    data = struct.pack(">II12sHBBI", len(payload), len(payload), b"\0" * 12, 0, 0, 0, 0)
    return common + data + payload


def ip_udp(sport, dport, body):
    """IPv4 + UDP (checksum 0) around @body, 10.0.0.1 -> 10.0.0.2."""
    udp = struct.pack(">HHHH", sport, dport, 8 + len(body), 0) + body
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return ip + udp


def write_pcap(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 228))  # IPv4
        for i, p in enumerate(pkts):
            f.write(struct.pack("<IIII", 1700000000 + i, 0, len(p), len(p)) + p)


def tshark_rows(tshark, lua, pcap, fields, extra=()):
    """tshark's decode of @pcap with @lua and options @extra: one dict of
    @fields per packet."""
    cmd = [tshark, "-n", "-X", "lua_script:" + lua, "-r", pcap] + list(extra) + ["-T", "fields",
           "-E", "separator=|", "-E", "occurrence=f"]
    for fld in fields:
        cmd += ["-e", fld]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [dict(zip(fields, line.split("|"))) for line in out.splitlines()]


FIELDS = ["homapsp.version", "homapsp.spi", "homapsp.key_phase", "homapsp.iv",
          "homa.type", "homa.sport", "homa.dport", "homa.message_length",
          "homapsp.encrypted", "homapsp.icv", "_ws.expert.message", "_ws.col.Protocol"]


def main(tshark, lua):
    payload = bytes(range(40))
    cases = []  # (udp sport, udp dport, version, spi, iv)
    for version, spi, iv, port in ((0, 0x00000001, 1, 1000), (1, 0x80000002, 7, 4001),
                                   (2, 0x00000003, 9, 1000), (3, 0x80000004, 2**40, 4001)):
        cases.append((4000, port, version, spi, iv))
    cases.append((0x9201, 0x0701, 0, 0x00000005, 3))  # runtime capture: ports from bytes 0-3
    pkts = []
    for sport, dport, version, spi, iv in cases:
        key = bytes(range(32 if version in (1, 3) else 16))
        sealed = psp_ref.seal(key, version, spi, iv, homa_data(4000, 4001, 42, payload))
        pkts.append(ip_udp(sport, dport, sealed))
    bad = bytearray(pkts[0])
    bad[28 + 2] = 6  # crypt offset 6: not how Homa is sealed
    pkts.append(bytes(bad))
    pkts.append(ip_udp(4000, 4001, homa_data(4000, 4001, 42, payload)))  # clear Homa
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "psp.pcap")
        write_pcap(pcap, pkts)
        rows = tshark_rows(tshark, lua, pcap, FIELDS)
    assert len(rows) == len(pkts), rows
    for (sport, dport, version, spi, iv), r in zip(cases, rows):
        what = "version %d on port %d: %s" % (version, dport, r)
        assert r["_ws.col.Protocol"] == "PSP/HOMA", what
        assert r["homapsp.version"] == str(version), what
        assert int(r["homapsp.spi"], 16) == spi, what
        assert r["homapsp.key_phase"] == str(spi >> 31), what
        assert r["homapsp.iv"] == str(iv), what
        assert r["homa.type"] == "0x10" and r["homa.sport"] == "4000", what
        assert r["homa.dport"] == "4001", what
        assert len(r["homapsp.icv"].replace(":", "")) == 32, what
        if version < 2:  # GCM: the DATA fields are ciphertext
            assert r["homa.message_length"] == "", what
            assert len(r["homapsp.encrypted"].replace(":", "")) == 2 * (28 + len(payload)), what
        else:            # GMAC: everything readable
            assert r["homa.message_length"] == str(len(payload)), what
            assert r["homapsp.encrypted"] == "", what
    n = len(cases)
    assert rows[n]["homapsp.version"] == "" and "not PSP" in rows[n]["_ws.expert.message"], rows[n]
    assert rows[n + 1]["_ws.col.Protocol"] == "HOMA" and rows[n + 1]["homa.message_length"] == "40", \
        rows[n + 1]
    print("ok: PSP dissected in %d packets" % len(rows))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
