#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Independent reference of PSP key derivation and sealing, on
python3-cryptography (Debian), for the known-answer tests.

  psp_ref.py derive MASTER_HEX VERSION SPI          -> key hex
  psp_ref.py seal KEY_HEX VERSION SPI IV PKT_HEX    -> sealed packet hex
  psp_ref.py open KEY_HEX SEALED_HEX                -> Homa packet hex, or "reject"
  psp_ref.py batch   (one command above per line of stdin, one answer per line)
"""
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.cmac import CMAC

CLEAR = 28  # Homa common header, crypt offset 7 words


def gmac(version):
    """Versions 2 and 3 (AES-GMAC) authenticate everything, encrypt nothing."""
    return version >= 2


def derive(master, version, spi):
    """SP 800-108 counter mode with AES-256-CMAC, as PSP defines."""
    nbits = 128 if version in (0, 2) else 256
    label = b"Pv0" if nbits == 128 else b"Pv1"
    key = b""
    for i in range(nbits // 128):
        c = CMAC(algorithms.AES(master))
        c.update((i + 1).to_bytes(4, "big") + label + b"\0" +
                 spi.to_bytes(4, "big") + nbits.to_bytes(4, "big"))
        key += c.finalize()
    return key


def header(version, spi, iv):
    return bytes([146, 1, 7, (version << 2) | 1]) + spi.to_bytes(4, "big") + \
        iv.to_bytes(8, "big")


def seal(key, version, spi, iv, pkt):
    h = header(version, spi, iv)
    if gmac(version):
        return h + pkt + AESGCM(key).encrypt(h[4:16], b"", h + pkt)  # tag only
    aad = h + pkt[:CLEAR]
    ct = AESGCM(key).encrypt(h[4:16], pkt[CLEAR:], aad)  # ciphertext || tag
    return aad + ct


def open_(key, sealed):
    if gmac((sealed[3] >> 2) & 15):
        try:
            AESGCM(key).decrypt(sealed[4:16], sealed[-16:], sealed[:-16])
        except InvalidTag:
            return None
        return sealed[16:-16]
    aad = sealed[:16 + CLEAR]
    try:
        pt = AESGCM(key).decrypt(sealed[4:16], sealed[16 + CLEAR:], aad)
    except InvalidTag:
        return None
    return sealed[16:16 + CLEAR] + pt


def main(a):
    if a[0] == "batch":
        for line in sys.stdin:
            if line.strip():
                main(line.split())
    elif a[0] == "derive":
        print(derive(bytes.fromhex(a[1]), int(a[2]), int(a[3], 0)).hex())
    elif a[0] == "seal":
        print(seal(bytes.fromhex(a[1]), int(a[2]), int(a[3], 0), int(a[4], 0),
                   bytes.fromhex(a[5])).hex())
    elif a[0] == "open":
        r = open_(bytes.fromhex(a[1]), bytes.fromhex(a[2]))
        print("reject" if r is None else r.hex())
    else:
        sys.exit("usage: psp_ref.py derive|seal|open ...")


if __name__ == "__main__":
    main(sys.argv[1:])
