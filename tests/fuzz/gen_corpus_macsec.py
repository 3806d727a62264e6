#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates tests/fuzz/corpus/fuzz_macsec (seed inputs of fuzz_macsec.c).
# The frames are protected here with python3-cryptography (not the
# library), with the fuzz target's fixed keys, so the seeds reach every
# step of the receive path including a valid ICV.
#   /usr/bin/python3 tests/fuzz/gen_corpus_macsec.py tests/fuzz/corpus/fuzz_macsec
import os
import struct
import sys

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SCI = 0x0200000000010001
MAC = bytes([0x02, 0, 0, 0, 0, 0x01])
SSCI = 0x7A30C118
SALT = bytes.fromhex("E630E81A48DE86A21C66FA6D")


def key_for(an, klen):
    return bytes((i * 7 + 1 + an * 0x40) & 0xFF for i in range(32))[:klen]


def protect(frame, cipher, an, pn, encrypt, es):
    xpn = cipher >= 2
    klen = 32 if cipher in (1, 3) else 16
    hdr, sd = frame[:12], frame[12:]
    tci = (0x40 if es else 0x20) | (0x0C if encrypt else 0)
    sl = len(sd) if len(sd) < 48 else 0
    tag = b"\x88\xe5" + bytes([tci | an, sl]) + struct.pack(">I", pn & 0xFFFFFFFF)
    if not es:
        tag += struct.pack(">Q", SCI)
    if xpn:
        iv = bytes(a ^ b for a, b in zip(struct.pack(">I", SSCI) + struct.pack(">Q", pn), SALT))
    else:
        iv = struct.pack(">Q", SCI) + struct.pack(">I", pn)
    g = AESGCM(key_for(an, klen))
    if encrypt:
        return hdr + tag + g.encrypt(iv, sd, hdr + tag)
    return hdr + tag + sd + g.encrypt(iv, b"", hdr + tag + sd)


def plain(n, seed):
    payload = bytes((seed * 31 + i * 13) & 0xFF for i in range(n - 14))
    return bytes([0x02, 0, 0, 0, 0, 0x02]) + MAC + b"\x88\xb5" + payload


def main(out):
    os.makedirs(out, exist_ok=True)
    seeds = {}
    k = 0
    for cipher in range(4):
        for integ in (0, 1):
            for es in (0, 1):
                for n in (14, 40, 61, 130):
                    an = k % 4
                    window = k % 3
                    conf = cipher | integ << 2 | (k % 4) << 3 | (k % 2) << 5 | (k % 2) << 6 | es << 7
                    b1 = an | window << 2
                    f = protect(plain(n, k), cipher, an, 1 + k % 3, not integ, es)
                    if n == 14 and k % 2:
                        f += bytes(60 - len(f)) if len(f) < 60 else b""   # MAC padding
                    name = "%s_%s_%s_%d" % (["gcm128", "gcm256", "xpn128", "xpn256"][cipher],
                                            "int" if integ else "conf", "es" if es else "sci", n)
                    seeds[name] = bytes([conf, b1]) + f
                    k += 1
    seeds["plain_frame"] = bytes([0, 0]) + plain(64, 1)
    seeds["plain_short"] = bytes([0x40, 1]) + plain(14, 2)
    seeds["runt"] = bytes([0, 0]) + b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x88\xe5\x2c"
    bad = bytearray(seeds["gcm128_conf_sci_61"])
    bad[2 + 14] |= 0x80   # V bit
    seeds["bad_version"] = bytes(bad)
    bad = bytearray(seeds["gcm128_conf_sci_61"])
    bad[2 + 14] = 0x28    # E=1 C=0
    seeds["e_without_c"] = bytes(bad)
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d seeds written to %s" % (len(seeds), out))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "fuzz_macsec"))
