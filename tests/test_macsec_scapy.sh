#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# MACsec interop between scapy (Debian python3-scapy 2.5.0, an independent
# 802.1AE implementation) and htoe-pcap, in both directions:
#   scapy protects  -> htoe-pcap macsec-decrypt must give the plaintext back
#   htoe-pcap macsec-encrypt protects -> scapy must decrypt and verify
# for GCM-AES-128/256 and GCM-AES-XPN-128/256, confidentiality and integrity
# only, SCI in the SecTAG and ES mode, with random keys, SCIs, ANs, PNs
# (XPN: including a carry into the upper PN half) and frame lengths
# (including short frames, MAC-padded to 60 octets half of the time). A
# tampered frame per batch must be reported as InPktsNotValid.
#
#   tests/test_macsec_scapy.sh BUILD/app/htoe-pcap [SEED]
# Ends with "macsec_scapy: N passed, M failed"; exit 77 (skip) without scapy.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 HTOE_PCAP [SEED]" >&2
  exit 2
fi
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seed=${2:-${MACSEC_SCAPY_SEED:-$RANDOM$RANDOM}}
py=/usr/bin/python3   # Debian's python: the pyenv one on PATH lacks scapy

if ! "$py" -c 'import scapy.contrib.macsec, cryptography' 2>/dev/null; then
  echo "macsec_scapy: SKIP: $py cannot import scapy.contrib.macsec (apt install python3-scapy)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$py" - "$tool" "$work" "$seed" "$0" <<'PYEOF'
import json
import os
import random
import struct
import subprocess
import sys
import logging

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, RawPcapWriter
from scapy.contrib.macsec import MACsecSA, MACsec
from cryptography.exceptions import InvalidTag

tool, work, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
print("macsec_scapy: seed %d (rerun: %s %s %d)" % (seed, sys.argv[4], tool, seed))

SUITES = [("gcm-aes-128", 16, False), ("gcm-aes-256", 32, False),
          ("gcm-aes-xpn-128", 16, True), ("gcm-aes-xpn-256", 32, True)]
passed = 0
failed = 0


def fail(msg):
    global failed
    failed += 1
    print("FAIL: " + msg)


def rand_mac():
    return bytes([rng.randrange(256) & 0xFE | 0x02]) + bytes(rng.randrange(256) for _ in range(5))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def rand_len():
    # short frames (secure data < 48: SL != 0), the boundary, and big ones
    r = rng.random()
    if r < 0.4:
        return 14 + rng.randrange(0, 46)          # 14..59
    if r < 0.55:
        return 14 + rng.choice([45, 46, 47, 48, 49])
    return 14 + rng.randrange(46, 1487)           # .. 1500


def plain_frame(src):
    n = rand_len()
    return bytes(Ether(dst=mac_str(rand_mac()), src=mac_str(src), type=0x88B5) /
                 Raw(bytes(rng.randrange(256) for _ in range(n - 14))))


def write_pcap(path, frames):
    w = RawPcapWriter(path, linktype=1, sync=True)
    for f in frames:
        w.write(f)
    w.close()


def read_pcap(path):
    return [bytes(d) for d, _ in RawPcapReader(path)]


def run(args):
    p = subprocess.run([tool] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def batch_params(suite_idx, encrypt):
    name, klen, xpn = SUITES[suite_idx]
    key = bytes(rng.randrange(256) for _ in range(klen))
    es = rng.random() < 0.33
    src = rand_mac()
    sci = (src + b"\x00\x01") if es else bytes(rng.randrange(256) for _ in range(8))
    an = rng.randrange(4)
    if xpn:
        # sometimes start just below a carry into the upper half
        upper = rng.randrange(1 << 32)
        lower = (1 << 32) - rng.randrange(1, 8) if rng.random() < 0.5 else rng.randrange(1, 1 << 31)
        pn = upper << 32 | lower
    else:
        pn = rng.randrange(1, (1 << 32) - 64)
    ssci = rng.randrange(1 << 32)
    salt = bytes(rng.randrange(256) for _ in range(12))
    return dict(name=name, key=key, xpn=xpn, es=es, src=src, sci=sci, an=an, pn=pn,
                ssci=ssci, salt=salt, encrypt=encrypt)


def scapy_sa(p, pn, encrypt, send_sci):
    kw = {}
    if p["xpn"]:
        kw = dict(xpn_en=True, ssci=p["ssci"], salt=p["salt"])
    return MACsecSA(sci=p["sci"], an=p["an"], pn=pn, key=p["key"], icvlen=16,
                    encrypt=encrypt, send_sci=send_sci, **kw)


def scapy_to_htoe(p, nframes):
    """scapy protects, htoe-pcap macsec-decrypt must return the plaintext."""
    global passed
    plains, prot = [], []
    for i in range(nframes):
        pl = plain_frame(p["src"])
        sa = scapy_sa(p, p["pn"] + i, p["encrypt"], not p["es"])
        pkt = sa.encap(Ether(pl))
        if p["es"]:
            pkt[MACsec].ES = 1        # scapy's encap() never sets ES
        f = bytes(sa.encrypt(pkt))
        if len(f) < 60 and rng.random() < 0.5:
            f += bytes(60 - len(f))    # what the MAC does on the wire
        plains.append(pl)
        prot.append(f)
    # one tampered copy of a random frame (a bit of the secure data or ICV)
    k = rng.randrange(nframes)
    t = bytearray(prot[k])
    taglen = 8 if p["es"] else 16
    sl = t[15] & 0x3F
    end = 12 + taglen + (sl if sl else len(t) - 12 - taglen - 16) + 16
    pos = rng.randrange(12 + taglen, end)
    t[pos] ^= 1 << rng.randrange(8)
    frames = prot + [bytes(t)]
    inp, out = os.path.join(work, "s2h_in.pcap"), os.path.join(work, "s2h_out.pcap")
    write_pcap(inp, frames)
    args = ["macsec-decrypt", "--in", inp, "--out", out, "--key", p["key"].hex(),
            "--sci", p["sci"].hex(), "--json"]
    if p["xpn"]:
        args += ["--xpn", "--ssci", "%08x" % p["ssci"], "--salt", p["salt"].hex(),
                 "--pn-high", "%x" % (p["pn"] >> 32)]
    rc, so, se = run(args)
    what = "scapy->htoe %s %s %s" % (p["name"], "conf" if p["encrypt"] else "int",
                                     "ES" if p["es"] else "SCI")
    if rc != 3:
        fail("%s: htoe-pcap exit %d (expected 3: one tampered frame)\n%s%s" % (what, rc, so, se))
        return
    summary = json.loads(so.strip().splitlines()[-1])
    if summary["decrypted"] != nframes or summary["failed"] != 1 or \
            summary["failed_by_reason"] != {"InPktsNotValid": 1}:
        fail("%s: summary %s" % (what, summary))
        return
    got = read_pcap(out)
    if len(got) != nframes + 1:
        fail("%s: %d frames written, expected %d" % (what, len(got), nframes + 1))
        return
    for i in range(nframes):
        if got[i] != plains[i]:
            fail("%s: frame %d (len %d, PN %d): plaintext differs\n  want %s\n  got  %s" %
                 (what, i, len(plains[i]), p["pn"] + i, plains[i].hex(), got[i].hex()))
        else:
            passed += 1
    if got[nframes] != frames[nframes]:
        fail("%s: the tampered frame was not copied unchanged" % what)
    else:
        passed += 1


def htoe_to_scapy(p, nframes):
    """htoe-pcap macsec-encrypt protects, scapy must decrypt and verify."""
    global passed
    plains = [plain_frame(p["src"]) for _ in range(nframes)]
    inp, out = os.path.join(work, "h2s_in.pcap"), os.path.join(work, "h2s_out.pcap")
    write_pcap(inp, plains)
    pad = rng.random() < 0.5
    args = ["macsec-encrypt", "--in", inp, "--out", out, "--key", p["key"].hex(),
            "--sci", p["sci"].hex(), "--an", str(p["an"]), "--pn", str(p["pn"]),
            "--cipher", p["name"]]
    if not p["encrypt"]:
        args.append("--integrity-only")
    if p["xpn"]:
        args += ["--ssci", "%08x" % p["ssci"], "--salt", p["salt"].hex()]
    if p["es"]:
        args.append("--es")
    if pad:
        args.append("--pad")
    rc, so, se = run(args)
    what = "htoe->scapy %s %s %s%s" % (p["name"], "conf" if p["encrypt"] else "int",
                                       "ES" if p["es"] else "SCI", " pad" if pad else "")
    if rc != 0:
        fail("%s: htoe-pcap exit %d\n%s%s" % (what, rc, so, se))
        return
    got = read_pcap(out)
    if len(got) != nframes:
        fail("%s: %d frames, expected %d" % (what, len(got), nframes))
        return
    for i, f in enumerate(got):
        pkt = Ether(f)
        ms = pkt[MACsec]
        pn = p["pn"] + i
        exp_tci = (0x40 if p["es"] else 0x20) | (0x0C if p["encrypt"] else 0)
        tci = f[14] & 0xFC
        if ms.AN != p["an"] or ms.PN != pn & 0xFFFFFFFF or tci != exp_tci:
            fail("%s: frame %d: AN %d PN %d TCI %02x, expected AN %d PN %d TCI %02x" %
                 (what, i, ms.AN, ms.PN, tci, p["an"], pn & 0xFFFFFFFF, exp_tci))
            continue
        exp_sl = len(plains[i]) - 12 if len(plains[i]) - 12 < 48 else 0
        if ms.SL != exp_sl:
            fail("%s: frame %d: SL %d, expected %d" % (what, i, ms.SL, exp_sl))
            continue
        # scapy 2.5 ignores SL: cut the MAC padding off first
        taglen = 8 if p["es"] else 16
        if ms.SL:
            f = f[:12 + taglen + ms.SL + 16]
        sa = scapy_sa(p, pn, bool(ms.E), bool(ms.SC))
        try:
            dec = bytes(sa.decap(sa.decrypt(Ether(f))))
        except InvalidTag:
            fail("%s: frame %d (len %d, PN %d): scapy: InvalidTag" % (what, i, len(plains[i]), pn))
            continue
        if dec != plains[i]:
            fail("%s: frame %d: scapy's plaintext differs\n  want %s\n  got  %s" %
                 (what, i, plains[i].hex(), dec.hex()))
            continue
        # and a flipped bit must make scapy reject it
        if i == 0:
            t = bytearray(f)
            t[rng.randrange(12 + taglen, len(t))] ^= 1
            try:
                sa.decrypt(Ether(bytes(t)))
                fail("%s: scapy accepted a tampered frame" % what)
                continue
            except InvalidTag:
                pass
        passed += 1


for rep in range(2):
    for si in range(len(SUITES)):
        for encrypt in (True, False):
            scapy_to_htoe(batch_params(si, encrypt), 12)
            htoe_to_scapy(batch_params(si, encrypt), 12)

print("macsec_scapy: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PYEOF
