#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks tools/wireshark/htoe.lua with tshark (run by tests/test_dissector.sh).

  dissector_check.py --tshark TSHARK --lua HTOE_LUA --htoe-ht HTOE_HT --lease-decode LEASE_DECODE
                     --synth SYNTH_PY PCAP...

(a) `tshark -G fields` lists every htoe.* and ht.* field, and loading the script prints no
    Lua error.
(b) every frame of every pcap, dissected with `tshark -T json`: each HToE header field equals
    the bytes (parsed here, independently, with a CRC32C of our own); the HT packets of each
    DATA payload are split here (by Cmd and Count) and decoded by `htoe-ht decode`, and every
    HT subtree must carry exactly htoe-ht's fields, in its order, with its values; a packet
    htoe-ht rejects must carry ht.invalid with htoe-ht's error text. Every lease message
    (CTRL payload starting with 0x4C) is decoded by lib/htoe's own decoder (tests/lease_decode)
    and every htoe.lease.* field must equal its value; one the library rejects must carry the
    matching lease expert error (truncated / invalid).
(c) no frame has an error-severity expert info or a malformed/Lua-error marker, except in
    malformed.pcap, where each frame must have exactly the error experts that
    scripts/synth_pcaps.py lists for it; expected notes (retransmission, NAK, reset, ...)
    must appear, and the corpus must cover every frame type and HT command.
(d) the header of the worked-example frames (docs/wire-format.md) has the documented values;
    one-pass and two-pass dissection give the same retransmission marks and Info column.
(e) 3000 damaged frames (bit flips, cuts, random bytes; fixed seed) made from the corpus:
    no Lua error, and the header and HT checks of (b) still hold.

Prints one line per failure and a final `dissector: N passed, M failed`; exits 1 on failure.
Standard library only.
"""
import argparse
import importlib.util
import json
import os
import struct
import subprocess
import sys

PASS = 0
FAIL = 0
MAX_REPORT = 60


def ok():
    global PASS
    PASS += 1


def fail(msg):
    global FAIL
    FAIL += 1
    if FAIL <= MAX_REPORT:
        print("FAIL: " + msg)
    elif FAIL == MAX_REPORT + 1:
        print("FAIL: ... (further failures not shown)")


def check(cond, msg):
    if cond:
        ok()
    else:
        fail(msg)
    return cond


# ------------------------------------------------------------ constants

HT_FIELDS = ["cmd", "name", "vc", "len", "seqid", "unitid", "passpw", "srctag", "posted",
             "dword", "isoc", "coherent", "compat", "responsepasspw", "chain", "dataerror",
             "bridge", "error0", "error1", "rquid", "rspvcset", "count", "mask", "addr",
             "addrext", "postcmd", "postdata", "resp", "respdata", "npcmd", "npdata", "discon",
             "diag", "ack", "long", "vcset", "vcsetrsv", "vcsetfree0", "vcsetfree1",
             "vcsetfree2", "vcsetfree3", "op", "error", "data"]
HT_KEYS = {"ht." + f for f in HT_FIELDS}
HTOE_FIELDS = ["htoe.version", "htoe.type", "htoe.flags", "htoe.flags.reserved",
               "htoe.flags.sack", "htoe.sack", "htoe.sack.format", "htoe.sack.words",
               "htoe.sack.dup", "htoe.sack.bitmap", "htoe.sack.held", "htoe.flags.credit_req", "htoe.flags.cold", "htoe.flags.vc", "htoe.vc",
               "htoe.npkts", "htoe.epoch", "htoe.src", "htoe.dst", "htoe.node", "htoe.seq",
               "htoe.nonce", "htoe.ack", "htoe.credit.p_cmd", "htoe.credit.p_data",
               "htoe.credit.np_cmd", "htoe.credit.np_data", "htoe.credit.r_cmd",
               "htoe.credit.r_data", "htoe.payload_len", "htoe.reserved", "htoe.crc",
               "htoe.crc.status", "htoe.crc.computed", "htoe.payload", "htoe.retransmission",
               "htoe.type_name", "ht.invalid", "ht.prefix", "ht.atomic.addend",
               "ht.atomic.compare", "ht.atomic.swap", "htoe.ctrl.proto", "htoe.lease",
               "htoe.lease.proto", "htoe.lease.version", "htoe.lease.type",
               "htoe.lease.type_name", "htoe.lease.status", "htoe.lease.session",
               "htoe.lease.req_id", "htoe.lease.lease_id", "htoe.lease.size",
               "htoe.lease.offset", "htoe.lease.addr", "htoe.lease.duration",
               "htoe.lease.extra"]
LEASE_FIELDS = ["type", "status", "session", "req_id", "lease_id", "size", "offset", "addr",
                "duration"]
LEASE_ERRORS = {"htoe.expert.lease_truncated", "htoe.expert.lease_invalid"}
SEV_ERROR = 0x00800000
TYPE_NAMES = {1: "DATA", 2: "ACK", 3: "NAK", 4: "RESET", 5: "RESET_ACK", 6: "CTRL"}
VC_NAMES = {0: "P", 1: "NP", 2: "R"}

# What each corpus file must show, as pcap/README.md documents it. The bridge captures are
# not bit-reproducible (real time), so only these minimums are checked, never exact counts.
# Expert infos by id, minimum count:
FILE_EXPECT = {
    "basic.pcap": {"htoe.expert.reset": 2, "htoe.expert.credit_req": 1},
    "lossy.pcap": {"htoe.expert.retransmission": 1, "htoe.expert.nak": 1},
    "reset.pcap": {"htoe.expert.reset": 4, "htoe.expert.retransmission": 1},
    "partition.pcap": {"htoe.expert.retransmission": 1, "htoe.expert.reset": 4},
    "restart.pcap": {"htoe.expert.reset": 3},
    "nodes4.pcap": {"htoe.expert.reset": 6},
    "errors.pcap": {"ht.expert.error_response": 1},
    "lease.pcap": {"htoe.expert.lease": 6},
    "synthetic.pcap": {"htoe.expert.retransmission": 1, "ht.expert.error_response": 4,
                       "htoe.expert.lease": 6, "htoe.expert.lease_status": 3},
    "macsec-integrity.pcap": {"htoe.expert.reset": 2},
}
# Frame kinds (labels as in NEED_FRAMES), HT command kinds (as in NEED_HT) and lease
# message types that must appear in a file, and the least number of distinct nodes.
FILE_FRAMES = {
    "basic.pcap": {"DATA P", "DATA NP", "DATA R", "ACK", "ACK CREDIT_REQ", "RESET cold",
                   "RESET_ACK cold"},
    "lossy.pcap": {"NAK"},
    "reset.pcap": {"RESET warm", "RESET_ACK warm"},
    "partition.pcap": {"RESET warm", "RESET_ACK warm"},
    "nodes4.pcap": {"802.1Q", "DATA P", "DATA NP", "DATA R"},
    "lease.pcap": {"CTRL"},
    "macsec-integrity.pcap": {"MACsec", "DATA P", "DATA NP", "DATA R"},
}
FILE_HT = {
    "errors.pcap": {"RdResponse master abort", "RdResponse ok"},
    "basic.pcap": {"RdSized dword", "RdSized byte", "WrSized P dword", "WrSized P byte",
                   "WrSized NP dword", "WrSized NP byte", "Atomic fetchadd", "Atomic cas",
                   "Flush", "RdResponse ok", "TgtDone ok"},
}
LEASE_TYPES = ["REQUEST", "GRANT", "REFUSE", "RENEW", "RENEW_ACK", "RELEASE", "RELEASE_ACK"]
FILE_LEASE = {
    "lease.pcap": {"REQUEST", "GRANT", "RENEW", "RENEW_ACK", "RELEASE", "RELEASE_ACK"},
    "synthetic.pcap": set(LEASE_TYPES),
}
FILE_NODES = {"nodes4.pcap": 4}

# Corpus coverage: frame kinds and HT command variants (all pcaps but malformed.pcap).
NEED_FRAMES = {"DATA P", "DATA NP", "DATA R", "ACK", "ACK CREDIT_REQ", "NAK", "RESET cold",
               "RESET warm", "RESET_ACK cold", "RESET_ACK warm", "CTRL", "802.1Q", "MACsec"}
NEED_HT = {"RdSized dword", "RdSized byte", "WrSized P dword", "WrSized P byte",
           "WrSized NP dword", "WrSized NP byte", "Atomic fetchadd", "Atomic cas", "Flush",
           "RdResponse ok", "RdResponse data error", "RdResponse target abort",
           "RdResponse master abort", "TgtDone ok", "TgtDone master abort", "addrext"}
# Coverage the real runs must produce (every file but the hand-built ones). A bridge
# answers poisoned requests locally, so error responses cross the wire only as a target's
# master abort (errors.pcap); data error and target abort are in synthetic.pcap only.
NEED_FRAMES_SIM = {"DATA P", "DATA NP", "DATA R", "ACK", "ACK CREDIT_REQ", "NAK",
                   "RESET cold", "RESET_ACK cold", "RESET warm", "RESET_ACK warm", "CTRL",
                   "802.1Q", "MACsec"}
NEED_HT_SIM = {"RdSized dword", "RdSized byte", "WrSized P dword", "WrSized P byte",
               "WrSized NP dword", "WrSized NP byte", "Atomic fetchadd", "Atomic cas", "Flush",
               "RdResponse ok", "TgtDone ok", "RdResponse master abort"}

# The worked examples of docs/wire-format.md (synthetic.pcap frames 1 and 2).
KNOWN = {
    1: {"vlan.priority": 5, "vlan.dei": 0, "vlan.id": 100, "htoe.version": 1, "htoe.type": 1,
        "htoe.flags": 0, "htoe.flags.vc": 0, "htoe.npkts": 2, "htoe.epoch": 3, "htoe.src": 1,
        "htoe.dst": 2, "htoe.seq": 7, "htoe.ack": 5, "htoe.credit.p_cmd": 0x40,
        "htoe.credit.p_data": 0x40, "htoe.credit.np_cmd": 0x20, "htoe.credit.np_data": 0x20,
        "htoe.credit.r_cmd": 0x80, "htoe.credit.r_data": 0x80, "htoe.payload_len": 32,
        "htoe.reserved": 0, "htoe.crc": 0x0FE96B34, "htoe.crc.status": 1,
        "ht#0": {"ht.cmd": 0x2C, "ht.name": "WrSized", "ht.vc": "P", "ht.len": 16,
                 "ht.unitid": 1, "ht.count": 0, "ht.addr": 0x0000_0100_0000_1000,
                 "ht.addrext": 1, "ht.data": "44332211"},
        "ht#1": {"ht.cmd": 0x2C, "ht.count": 1, "ht.addr": 0x1004, "ht.addrext": 0,
                 "ht.data": "efbeadde0df0feca"}},
    2: {"htoe.version": 1, "htoe.type": 2, "htoe.flags": 0, "htoe.npkts": 0, "htoe.epoch": 3,
        "htoe.src": 2, "htoe.dst": 1, "htoe.seq": 0, "htoe.ack": 8, "htoe.credit.p_cmd": 0x40,
        "htoe.credit.r_data": 0x80, "htoe.payload_len": 0, "htoe.crc": 0x82B29D1B,
        "htoe.crc.status": 1},
}

# ------------------------------------------------------------------ CRC32C

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# ------------------------------------------------------------------- pcap


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        e = ">"
    else:
        raise ValueError(path + ": not a libpcap file")
    linktype = struct.unpack(e + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError(path + ": link type %d, expected Ethernet" % linktype)
    off, frames = 24, []
    while off + 16 <= len(data):
        incl = struct.unpack(e + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + incl])
        off += 16 + incl
    return frames


def locate_htoe(f):
    """(offset of the HToE header, end of the bytes that belong to it, tags) or None.
    Walks 802.1Q tags and an integrity-only MACsec SecTAG (ICV and padding excluded)."""
    off, end, tags = 12, len(f), set()
    while off + 2 <= end:
        et = struct.unpack(">H", f[off:off + 2])[0]
        if et == 0x88B5:
            return off + 2, end, tags
        if et == 0x8100:
            tags.add("802.1Q")
            off += 4
        elif et == 0x88E5:
            tags.add("MACsec")
            tci = f[off + 2]
            if tci & 0x0C:                    # E or C set: encrypted, not ours to read
                return None
            tag = 16 if tci & 0x20 else 8
            start = off + tag                 # the inner EtherType
            if end - 16 < start + 2:          # no room for the ICV: MACSEC_SHORT
                return None
            end = end - 16                    # the ICV (padding never follows an HToE frame)
            off = start
        else:
            return None
    return None


def macsec_short(f):
    """A MACsec frame too short for its ICV: what Wireshark's MACsec dissector hands on
    (nothing, or the bytes without an ICV) is its own business; either is accepted."""
    return len(f) >= 14 and f[12:14] == b"\x88\xe5" and locate_htoe(f) is None


def peek_len(b):
    """HT packet length from Cmd and Count (docs/ht-model.md), or None if it cannot be
    known (fewer than 4 bytes, a prefix not followed by RdSized/WrSized/Broadcast/Atomic,
    a reserved command)."""
    if len(b) < 4:
        return None
    pfx = 0
    if b[0] & 0x3F == 0x3E:
        nxt = b[4] & 0x3F if len(b) >= 8 else None
        if b[0] >> 6 or nxt is None or not ((nxt & 0x18) == 0x08 or (nxt & 0x30) == 0x10 or
                                            nxt in (0x3A, 0x3D)):
            return None                       # bad prefix: the packet ends nowhere
        pfx = 4
    cmd = b[pfx] & 0x3F
    d0 = struct.unpack("<I", b[pfx:pfx + 4])[0]
    count = d0 >> 22 & 0xF
    if cmd in (0x00, 0x02, 0x3C, 0x3F, 0x33):
        return pfx + 4
    if cmd == 0x30:
        return pfx + 4 + 4 * (count + 1)
    if cmd == 0x37:
        return pfx + (8 if d0 >> 6 & 1 else 4)
    if (cmd & 0x18) == 0x08 or cmd == 0x3D:           # WrSized, Atomic
        return pfx + 8 + 4 * (count + 1)
    if (cmd & 0x30) == 0x10 or cmd == 0x3A:           # RdSized, Broadcast
        return pfx + 8
    return None


def split_payload(p):
    """[bytes] of whole packets, plus the undecodable rest (if any) as the last item."""
    out, off = [], 0
    while off < len(p):
        n = peek_len(p[off:])
        if n is None or off + n > len(p):
            out.append(p[off:])
            break
        out.append(p[off:off + n])
        off += n
    return out


# ------------------------------------------------------------ tshark JSON


def pairs(obj):
    """Keep duplicate keys: every JSON object becomes a list of (key, value)."""
    return obj


def jload(text):
    return json.loads(text, object_pairs_hook=pairs)


def get(obj, key):
    for k, v in obj:
        if k == key:
            return v
    return None


def get_all(obj, key):
    return [v for k, v in obj if k == key]


def find_all(obj, key, out):
    """Every value of `key` anywhere below obj (depth first, in order)."""
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, tuple) and len(item) == 2:
                k, v = item
                if k == key:
                    out.append(v)
                find_all(v, key, out)
            else:
                find_all(item, key, out)
    return out


def has_key_prefix(obj, prefixes):
    if isinstance(obj, list):
        for item in obj:
            if isinstance(item, tuple) and len(item) == 2:
                if item[0].startswith(prefixes):
                    return item[0]
                r = has_key_prefix(item[1], prefixes)
                if r:
                    return r
            else:
                r = has_key_prefix(item, prefixes)
                if r:
                    return r
    return None


def experts(obj):
    """[(expert id, severity, message)] anywhere below obj."""
    res = []
    for e in find_all(obj, "_ws.expert", []):
        eid = next((k for k, _ in e if not k.startswith("_ws.expert")), "?")
        sev = int(get(e, "_ws.expert.severity") or 0)
        res.append((eid, sev, get(e, "_ws.expert.message") or ""))
    return res


def flat_fields(obj, out=None):
    """{field: [values]} of every leaf field below obj (trees flattened)."""
    if out is None:
        out = {}
    for k, v in obj:
        if isinstance(v, list):
            flat_fields(v, out)
            if not k.endswith("_tree"):
                out.setdefault(k, []).append(v)
        else:
            out.setdefault(k, []).append(v)
    return out


def to_int(v):
    return int(v, 0)


# ------------------------------------------------------------------- tshark


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    err = "\n".join(line for line in p.stderr.decode(errors="replace").splitlines()
                    if "dangerous" not in line)
    return p.returncode, p.stdout.decode(errors="replace"), err


class TShark:
    def __init__(self, exe, lua, env):
        self.exe, self.env = exe, env
        self.x = ["-X", "lua_script:" + lua] if lua else []

    def __call__(self, *args):
        args = list(args)
        if args and args[0] == "-G":          # -G must come first
            return run([self.exe] + args[:2] + self.x + args[2:], self.env)
        return run([self.exe] + self.x + args, self.env)


# ----------------------------------------------------------------- checks


def check_fields(tshark):
    rc, out, err = tshark("-G", "fields")
    check(rc == 0, "tshark -G fields failed: %s" % err)
    check("lua" not in err.lower(), "Lua error while loading the dissector: %s" % err)
    listed = {}
    for line in out.splitlines():
        cols = line.split("\t")
        if len(cols) >= 4 and cols[0] == "F":
            listed[cols[2]] = cols[3]
    for f in HTOE_FIELDS + sorted(HT_KEYS):
        check(f in listed, "field %s is not registered (tshark -G fields)" % f)
    check(listed.get("ht.addr") == "FT_UINT64", "ht.addr is not a 64-bit field")


def header_expect(h, tags):
    """Header field values computed from the raw header bytes."""
    b0, flags, npkts, epoch = h[0], h[1], h[2], h[3]
    src, dst, seq, ack = struct.unpack(">HHHH", h[4:12])
    cred = struct.unpack(">6H", h[12:24])
    plen, rsvd, crc = struct.unpack(">HHI", h[24:32])
    ftype = b0 & 0xF
    e = {"htoe.version": b0 >> 4, "htoe.type": ftype, "htoe.flags": flags,
         "htoe.flags.vc": flags & 3, "htoe.flags.reserved": flags >> 5,
         "htoe.flags.sack": (flags >> 4) & 1,
         "htoe.flags.cold": (flags >> 2) & 1, "htoe.flags.credit_req": (flags >> 3) & 1,
         "htoe.npkts": npkts, "htoe.epoch": epoch, "htoe.src": src, "htoe.dst": dst,
         "htoe.ack": ack, "htoe.payload_len": plen, "htoe.reserved": rsvd, "htoe.crc": crc}
    if ftype in (4, 5):
        e["htoe.nonce"] = seq
    else:
        e["htoe.seq"] = seq
    for name, v in zip(["p_cmd", "p_data", "np_cmd", "np_data", "r_cmd", "r_data"], cred):
        e["htoe.credit." + name] = v
    return e


def compare_ht(where, ht_obj, exp):
    """ht_obj: the dissector's ht subtree; exp: htoe-ht's decode output (a dict)."""
    if "error" in exp and "line" in exp:
        inv = get(ht_obj, "ht.invalid")
        return check(inv == exp["error"], "%s: htoe-ht says '%s', dissector ht.invalid=%r"
                     % (where, exp["error"], inv))
    got = [(k, v) for k, v in ht_obj if k in HT_KEYS]
    want = [("ht." + k, v) for k, v in exp.items() if v is not None]
    problems = []
    if [k for k, _ in got] != [k for k, _ in want]:
        problems.append("fields %s, htoe-ht has %s" % ([k[3:] for k, _ in got],
                                                       [k[3:] for k, _ in want]))
    gd = dict(got)
    for k, v in want:
        if k not in gd:
            continue
        g = gd[k]
        if isinstance(v, bool) or isinstance(v, int):
            try:
                same = to_int(g) == int(v)
            except (ValueError, TypeError):
                same = False
        elif k == "ht.data":
            same = g.replace(":", "").lower() == v
        else:
            same = g == v
        if not same:
            problems.append("%s=%r, htoe-ht %r" % (k, g, v))
    if get(ht_obj, "ht.invalid") is not None:
        problems.append("ht.invalid=%r on a packet htoe-ht decodes" % get(ht_obj, "ht.invalid"))
    return check(not problems, "%s: %s" % (where, "; ".join(problems)))


def ht_kinds(exp):
    """Coverage labels of one decoded packet."""
    n = exp.get("name")
    k = set()
    if n == "RdSized":
        k.add("RdSized " + ("dword" if exp["dword"] else "byte"))
    elif n == "WrSized":
        k.add("WrSized %s %s" % ("P" if exp["posted"] else "NP",
                                 "dword" if exp["dword"] else "byte"))
    elif n == "Atomic":
        k.add("Atomic " + str(exp.get("op")))
    elif n in ("RdResponse", "TgtDone"):
        k.add(n + " " + exp["error"])
    elif n:
        k.add(n)
    if exp.get("addrext"):
        k.add("addrext")
    return k


def compare_lease(where, flat, exp, exs, length):
    """flat: the dissector's fields of one frame; exp: lease_decode's output (a dict);
    exs: the frame's expert infos; length: the message's bytes."""
    eids = {eid for eid, _, _ in exs}
    if "error" in exp:
        # the library rejects it: the dissector must flag it (truncated if short)
        want = {"htoe.expert.lease_truncated"} if length < 48 else set()
        return check(eids & LEASE_ERRORS and want <= eids, "%s: lib/htoe rejects the lease "
                     "message (%s, %d bytes), the dissector's experts are %s"
                     % (where, exp["error"], length, sorted(eids)))
    problems = []
    for k in LEASE_FIELDS:
        g = flat.get("htoe.lease." + k)
        if not g or len(g) != 1:
            problems.append("htoe.lease.%s missing" % k)
            continue
        try:
            same = to_int(g[0]) == exp[k]
        except ValueError:
            same = False
        if not same:
            problems.append("htoe.lease.%s=%s, lib/htoe %s" % (k, g[0], exp[k]))
    tn = flat.get("htoe.lease.type_name", [""])[0]
    if tn.lower() != exp["type_name"]:
        problems.append("htoe.lease.type_name=%r, lib/htoe %r" % (tn, exp["type_name"]))
    bad = eids & LEASE_ERRORS
    if bad:
        problems.append("lease expert errors %s on a message lib/htoe accepts" % sorted(bad))
    return check(not problems, "%s: lease: %s" % (where, "; ".join(problems)))


def check_pcap(path, tshark, htoe_ht, synth, cover, fuzz=False, lease_decode=None):
    """fuzz: damaged frames; every check but the expert-info ones (except Lua errors)."""
    base = os.path.basename(path)
    seen = {"frames": set(), "ht": set(), "lease": set(), "nodes": set()}
    malformed = base == "malformed.pcap" or fuzz
    frames = read_pcap(path)
    rc, out, err = tshark("-r", path, "-T", "json")
    if not check(rc == 0 and not err.strip(), "%s: tshark failed (%d): %s" % (base, rc, err)):
        return
    pkts = jload(out)
    if not check(len(pkts) == len(frames), "%s: tshark shows %d frames, the file has %d"
                 % (base, len(pkts), len(frames))):
        return
    expect_by_frame = {}
    if synth and base in ("synthetic.pcap", "malformed.pcap"):
        lst = synth.synthetic() if base == "synthetic.pcap" else synth.malformed()
        if check(len(lst) == len(frames), "%s: %d frames, scripts/synth_pcaps.py makes %d"
                 % (base, len(frames), len(lst))):
            for i, (desc, fb, ex) in enumerate(lst):
                check(fb == frames[i], "%s frame %d (%s): bytes differ from synth_pcaps.py: "
                      "regenerate the corpus (scripts/gen-pcaps.sh)" % (base, i + 1, desc))
                expect_by_frame[i + 1] = (desc, ex)

    # HT packets of every DATA frame, decoded in one htoe-ht run
    jobs = []          # (frame no, index in frame, bytes)
    ljobs = []         # (frame no, lease message bytes)
    per_frame = {}
    counts = {}
    for i, f in enumerate(frames):
        num = i + 1
        layers = get(get(pkts[i], "_source"), "layers")
        htoe = find_all(layers, "htoe", [])
        loc = locate_htoe(f)
        where = "%s frame %d" % (base, num)
        if loc is None:
            check(not htoe or macsec_short(f),
                  where + ": dissected as HToE but is not an HToE frame")
            continue
        hoff, hend, tags = loc
        if base.startswith("macsec"):
            check("MACsec" in tags, where + ": not a MACsec frame")
        if not check(len(htoe) == 1, where + ": no htoe tree (or %d)" % len(htoe)):
            continue
        htoe = htoe[0]
        flat = flat_fields(htoe)
        per_frame[num] = (htoe, flat, layers)
        hdr = f[hoff:hoff + 32]
        if len(hdr) < 32 or hend - hoff < 32:
            continue
        # (b) every header field against the raw bytes
        exp_hdr = header_expect(hdr, tags)
        plen = exp_hdr["htoe.payload_len"]
        avail = min(plen, hend - hoff - 32)
        bad = []
        for k, v in exp_hdr.items():
            g = flat.get(k)
            if g is None or len(g) != 1:
                bad.append("%s missing" % k)
                continue
            try:
                gv = to_int(g[0])
            except ValueError:
                gv = g[0]
            if k in ("htoe.flags.cold", "htoe.flags.credit_req", "htoe.flags.sack"):
                gv = 1 if g[0] in ("1", "True", "true") else 0
            if gv != v:
                bad.append("%s=%s, bytes say %s" % (k, g[0], v))
        if plen <= hend - hoff - 32:
            good = crc32c(hdr[:28] + f[hoff + 32:hoff + 32 + plen]) == exp_hdr["htoe.crc"]
            st = flat.get("htoe.crc.status", ["?"])[0]
            if st != ("1" if good else "0"):
                bad.append("htoe.crc.status=%s, CRC is %s" % (st, "good" if good else "bad"))
        check(not bad, where + ": header: " + "; ".join(bad))
        ftype = exp_hdr["htoe.type"]
        if not malformed and ftype in TYPE_NAMES:
            label = TYPE_NAMES[ftype]
            if ftype == 1:
                label += " " + VC_NAMES.get(exp_hdr["htoe.flags.vc"], "?")
            if ftype in (4, 5):
                label += " cold" if exp_hdr["htoe.flags.cold"] else " warm"
            labels = {label} | tags
            if ftype == 2 and exp_hdr["htoe.flags.credit_req"]:
                labels.add("ACK CREDIT_REQ")
            cover["frames"] |= labels
            seen["frames"] |= labels
            seen["nodes"].add(exp_hdr["htoe.src"])
            if base not in ("synthetic.pcap",):
                cover["frames_sim"] |= labels
        if ftype == 6 and avail > 0 and f[hoff + 32] == 0x4C:
            ljobs.append((num, f[hoff + 32:hoff + 32 + avail]))
        if ftype == 1:
            parts = split_payload(f[hoff + 32:hoff + 32 + avail])
            for j, p in enumerate(parts):
                jobs.append((num, j, p))
            counts[num] = len(parts)

    # (b) HT packets against htoe-ht decode
    if jobs:
        inp = "".join(p.hex() + "\n" for _, _, p in jobs)
        pr = subprocess.run([htoe_ht, "decode"], input=inp.encode(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        lines = pr.stdout.decode().splitlines()
        if check(len(lines) == len(jobs), "%s: htoe-ht decode gave %d lines for %d packets"
                 % (base, len(lines), len(jobs))):
            decoded = {}
            for (num, j, _), line in zip(jobs, lines):
                decoded.setdefault(num, []).append(jload(line))
            for num, exps in decoded.items():
                if num not in per_frame:
                    continue
                hts = find_all(per_frame[num][0], "ht", [])
                where = "%s frame %d" % (base, num)
                if not check(len(hts) == len(exps), "%s: %d HT subtrees, the payload splits "
                             "into %d packets" % (where, len(hts), len(exps))):
                    continue
                for j, (h, e) in enumerate(zip(hts, exps)):
                    e = dict(e)
                    compare_ht("%s HT packet %d" % (where, j + 1), h, e)
                    if not malformed and "line" not in e:
                        cover["ht"] |= ht_kinds(e)
                        seen["ht"] |= ht_kinds(e)
                        if base != "synthetic.pcap":
                            cover["ht_sim"] |= ht_kinds(e)

    # (b) lease messages against lib/htoe's decoder
    if ljobs and lease_decode:
        inp = "".join(p.hex() + "\n" for _, p in ljobs)
        pr = subprocess.run([lease_decode], input=inp.encode(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
        lines = pr.stdout.decode().splitlines()
        if check(pr.returncode == 0 and len(lines) == len(ljobs), "%s: lease_decode gave %d "
                 "lines for %d messages" % (base, len(lines), len(ljobs))):
            for (num, msg), line in zip(ljobs, lines):
                if num not in per_frame:
                    continue
                e = json.loads(line)
                layers = per_frame[num][2]
                compare_lease("%s frame %d" % (base, num), per_frame[num][1], e,
                              experts(layers), len(msg))
                if "error" not in e and not malformed:
                    seen["lease"].add(e["type_name"].upper())
                    cover["lease"].add(e["type_name"].upper())
                    if base != "synthetic.pcap":
                        cover["lease_sim"].add(e["type_name"].upper())
    elif ljobs and not fuzz:
        fail("%s: lease messages but no lease_decode to check them" % base)

    # (c) expert infos
    totals = {}
    for i in range(len(frames)):
        num = i + 1
        layers = get(get(pkts[i], "_source"), "layers")
        exs = experts(layers)
        for eid, sev, _ in exs:
            totals[eid] = totals.get(eid, 0) + 1
        errors = {eid for eid, sev, _ in exs if sev >= SEV_ERROR}
        marker = has_key_prefix(layers, ("_ws.malformed", "_ws.lua.error", "_ws.unreassembled"))
        where = "%s frame %d" % (base, num)
        if fuzz:
            lua = [m for eid, _, m in exs if eid == "_ws.lua.error"]
            check(not lua, "%s: %s" % (where, lua))
        elif num in expect_by_frame:
            desc, ex = expect_by_frame[num]
            check(errors == ex["errors"], "%s (%s): error experts %s, expected %s"
                  % (where, desc, sorted(errors), sorted(ex["errors"])))
            have = {eid for eid, _, _ in exs}
            check(ex["notes"] <= have, "%s (%s): missing expert infos %s"
                  % (where, desc, sorted(ex["notes"] - have)))
            if marker and not ex["errors"]:
                fail("%s (%s): %s" % (where, desc, marker))
        else:
            check(not errors and not marker, "%s: unexpected %s %s"
                  % (where, sorted(errors), marker or ""))
    for eid, n in FILE_EXPECT.get(base, {}).items():
        check(totals.get(eid, 0) >= n, "%s: %d x %s, expected at least %d"
              % (base, totals.get(eid, 0), eid, n))
    for what, table, key in (("frame kinds", FILE_FRAMES, "frames"),
                             ("HT commands", FILE_HT, "ht"),
                             ("lease messages", FILE_LEASE, "lease")):
        missing = table.get(base, set()) - seen[key]
        check(not missing, "%s lacks %s: %s (pcap/README.md)" % (base, what, sorted(missing)))
    if base in FILE_NODES:
        check(len(seen["nodes"]) >= FILE_NODES[base], "%s: frames from %d nodes, expected %d"
              % (base, len(seen["nodes"]), FILE_NODES[base]))

    # (d) worked examples
    if base == "synthetic.pcap":
        for num, fields in KNOWN.items():
            if num not in per_frame:
                fail("synthetic.pcap frame %d: not dissected" % num)
                continue
            htoe, flat, layers = per_frame[num]
            lflat = flat_fields(layers)
            hts = find_all(htoe, "ht", [])
            for k, v in fields.items():
                if k.startswith("ht#"):
                    idx = int(k[3:])
                    if not check(idx < len(hts), "worked example %d: no HT packet %d"
                                 % (num, idx)):
                        continue
                    hf = flat_fields(hts[idx])
                    for hk, hv in v.items():
                        g = hf.get(hk, [None])[0]
                        if isinstance(hv, int):
                            same = g is not None and to_int(g) == hv
                        elif hk == "ht.data":
                            same = g is not None and g.replace(":", "") == hv
                        else:
                            same = g == hv
                        check(same, "worked example %d HT packet %d: %s=%r, doc says %r"
                              % (num, idx + 1, hk, g, hv))
                    continue
                g = lflat.get(k, [None])[0]
                check(g is not None and to_int(g) == v,
                      "worked example %d: %s=%r, doc says %r" % (num, k, g, v))

    # (d) one pass and two passes agree (retransmission table keyed by frame number)
    cols = ["-T", "fields", "-e", "frame.number", "-e", "htoe.retransmission", "-e",
            "_ws.col.Info"]
    r1 = tshark("-r", path, *cols)
    r2 = tshark("-r", path, "-2", *cols)
    check(r1[0] == 0 and r1[1] == r2[1], "%s: one-pass and two-pass dissection differ" % base)


def make_fuzz(pcaps, synth, path, n, seed=6):
    """n damaged frames: random bytes after the EtherType, or frames of the corpus with
    1-4 bit flips after the Ethernet header, sometimes cut (not MACsec frames), mostly with the CRC32C fixed
    up so that the HT payload walk is reached. Deterministic (fixed seed)."""
    import random
    r = random.Random(seed)
    base = []
    for p in pcaps:
        base += read_pcap(p)[:300]
    out = []
    for _ in range(n):
        f = bytearray(r.choice(base))
        loc = locate_htoe(bytes(f))
        if r.random() < 0.25 or not loc:
            f = f[:14] + bytearray(r.getrandbits(8) for _ in range(r.randint(0, 120)))
            f[12:14] = b"\x88\xb5"
        else:
            h = loc[0]
            for _ in range(r.randint(1, 4)):
                j = r.randrange(h, len(f))
                f[j] ^= 1 << r.randrange(8)
            # MACsec frames are not cut: where the ICV of a cut frame is, is ambiguous, and
            # tshark's first pass (no tree) lacks macsec.etype, so one- and two-pass runs
            # would legitimately differ on it
            if r.random() < 0.3 and "MACsec" not in loc[2]:
                f = f[:r.randint(h, len(f))]
            if r.random() < 0.7 and len(f) >= h + 32:
                plen = struct.unpack(">H", f[h + 24:h + 26])[0]
                # never over a MACsec ICV: a payload length running into it stays wrong
                # whether or not the ICV is recognised (see above)
                end = min(h + 32 + plen, loc[1] if "MACsec" in loc[2] else len(f))
                f[h + 28:h + 32] = struct.pack(">I", crc32c(bytes(f[h:h + 28]) +
                                                           bytes(f[h + 32:end])))
        out.append(("", bytes(f), {}))
    synth.write_pcap(path, out)


def load_synth(path):
    spec = importlib.util.spec_from_file_location("synth_pcaps", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tshark", default="tshark")
    ap.add_argument("--lua", default="", help="htoe.lua to load with -X lua_script "
                    "(empty: the installed plugin)")
    ap.add_argument("--htoe-ht", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--lease-decode", required=True,
                    help="tests/lease_decode: lib/htoe's lease-message decoder")
    ap.add_argument("--fuzz", type=int, default=3000,
                    help="damaged frames to dissect as well (0: none)")
    ap.add_argument("--tmpdir", default=None)
    ap.add_argument("pcaps", nargs="+")
    a = ap.parse_args()

    env = dict(os.environ)
    tshark = TShark(a.tshark, a.lua, env)
    synth = load_synth(a.synth)

    check_fields(tshark)
    cover = {"frames": set(), "ht": set(), "frames_sim": set(), "ht_sim": set(),
             "lease": set(), "lease_sim": set()}
    names = [os.path.basename(p) for p in a.pcaps]
    for need in list(FILE_EXPECT) + ["malformed.pcap"]:
        check(need in names, "corpus file pcap/%s is missing" % need)
    for p in a.pcaps:
        check_pcap(p, tshark, a.htoe_ht, synth, cover, lease_decode=a.lease_decode)
    if a.fuzz:
        import tempfile
        with tempfile.TemporaryDirectory(dir=a.tmpdir) as d:
            fz = os.path.join(d, "fuzz.pcap")
            make_fuzz(a.pcaps, synth, fz, a.fuzz)
            check_pcap(fz, tshark, a.htoe_ht, synth, cover, fuzz=True,
                       lease_decode=a.lease_decode)
    for what, need, key in (("frame kinds", NEED_FRAMES, "frames"),
                            ("HT commands", NEED_HT, "ht"),
                            ("frame kinds from real runs", NEED_FRAMES_SIM, "frames_sim"),
                            ("HT commands from real runs", NEED_HT_SIM, "ht_sim"),
                            ("lease messages", set(LEASE_TYPES), "lease"),
                            ("lease messages from real runs", FILE_LEASE["lease.pcap"],
                             "lease_sim")):
        missing = need - cover[key]
        check(not missing, "corpus lacks %s: %s" % (what, sorted(missing)))
    print("dissector: %d passed, %d failed" % (PASS, FAIL))
    return 1 if FAIL else 0


if __name__ == "__main__":
    sys.exit(main())
