#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Independent reference encoder/decoder for HT 3.1 packets (htoe-ht tests).

Written directly from ../shared/reference/hypertransport.md (§2-§12) and the
decisions in docs/ht-model.md, not from the C codec. Standard library only.

  ht_ref.py gen SEED N PREFIX     N random valid packets of every class:
                                  PREFIX.hex (canonical), PREFIX.spaced.hex
                                  (same packets, odd spacing/case, comments),
                                  PREFIX.jsonl (expected decode output),
                                  PREFIX.crc (bit-serial transmitted CRC)
  ht_ref.py mutate SEED N FILE    N damaged variants of the packets in FILE
  ht_ref.py decode FILE           decode like `htoe-ht decode` (exit 1 on errors)
  ht_ref.py crc FILE              transmitted CRC per packet like `htoe-ht crc`
  ht_ref.py vectors PREFIX        §12.2 vectors: PREFIX.raw (`crc --raw` input)
                                  and PREFIX.expect (transmitted CRCs)
  ht_ref.py compare EXPECT ACTUAL compare two JSON-lines outputs field by field
"""
import json
import random
import sys

# --------------------------------------------------------------------------
# Bit tables: (field, lsb, width) over the control packet (dword 0 = bits
# 31:0, dword 1 = bits 63:32). "name[hi:lo]" stores value bits hi..lo.
# "rsv" entries are reserved bits. Every table covers its bits exactly once
# (checked by self_check()).

CMD = ("cmd", 0, 6)
REQ = [CMD, ("seqid[3:2]", 6, 2), ("unitid", 8, 5), ("seqid[1:0]", 13, 2),
       ("passpw", 15, 1)]
ADDR = [("addr[7:2]", 26, 6), ("addr[39:8]", 32, 32)]
SIZED_CMD = [("coherent", 0, 1), ("isoc", 1, 1), ("dword", 2, 1)]  # inside Cmd

TABLES = {
    "NOP": [CMD, ("discon", 6, 1), ("rsv", 7, 1), ("postcmd", 8, 2),
            ("postdata", 10, 2), ("resp", 12, 2), ("respdata", 14, 2),
            ("npcmd", 16, 2), ("npdata", 18, 2), ("rsv", 20, 1), ("isoc", 21, 1),
            ("diag", 22, 1), ("rsv", 23, 1), ("ack", 24, 8)],
    "Flush": REQ + [("srctag", 16, 5), ("isoc", 21, 1), ("rsv", 22, 10)],
    "Fence": REQ + [("rsv", 16, 5), ("isoc", 21, 1), ("rsv", 22, 10)],
    "Broadcast": REQ + [("rsv", 16, 5), ("compat", 21, 1), ("rsv", 22, 4)] + ADDR,
    "Atomic": REQ + [("srctag", 16, 5), ("compat", 21, 1), ("count", 22, 4)] + ADDR,
    "RdSized": REQ + [("srctag", 16, 5), ("compat", 21, 1), ("count", 22, 4)] + ADDR,
    "WrSizedNP": REQ + [("srctag", 16, 5), ("compat", 21, 1), ("count", 22, 4)] + ADDR,
    "WrSizedP": REQ + [("rsv", 16, 3), ("chain", 19, 1), ("dataerror", 20, 1),
                       ("compat", 21, 1), ("count", 22, 4)] + ADDR,
    "Response": [CMD, ("rsv", 6, 1), ("isoc", 7, 1), ("unitid", 8, 5), ("rsv", 13, 1),
                 ("bridge", 14, 1), ("passpw", 15, 1), ("srctag", 16, 5),
                 ("error0", 21, 1), ("count", 22, 4), ("rspvcset", 26, 3),
                 ("error1", 29, 1), ("rquid", 30, 2)],
    "ExtFCShort": [CMD, ("long", 6, 1), ("rsv", 7, 1), ("vcset", 8, 3), ("rsv", 11, 1),
                   ("vcsetrsv", 12, 4), ("vcsetfree0", 16, 8), ("ack", 24, 8)],
    "ExtFCLong": [CMD, ("long", 6, 1), ("rsv", 7, 1), ("vcset", 8, 3), ("rsv", 11, 1),
                  ("vcsetrsv", 12, 4), ("vcsetfree0", 16, 8), ("vcsetfree1", 24, 8),
                  ("vcsetfree2", 32, 8), ("vcsetfree3", 40, 8), ("rsv", 48, 8),
                  ("ack", 56, 8)],
}
CTL_BYTES = {"NOP": 4, "Flush": 4, "Fence": 4, "Broadcast": 8, "Atomic": 8,
             "RdSized": 8, "WrSizedNP": 8, "WrSizedP": 8, "Response": 4,
             "ExtFCShort": 4, "ExtFCLong": 8}
PREFIXABLE = {"RdSized", "WrSized", "Broadcast", "Atomic"}

# Output key order of `htoe-ht decode` per kind (after cmd, name, vc, len).
HDR = ["seqid", "unitid", "passpw"]
SIZED = ["posted", "dword", "isoc", "coherent", "compat"]
ORDER = {
    "NOP": ["postcmd", "postdata", "resp", "respdata", "npcmd", "npdata", "isoc",
            "discon", "diag", "ack"],
    "Flush": HDR + ["srctag", "isoc"],
    "Fence": HDR + ["isoc"],
    "Broadcast": HDR + ["compat", "addr", "addrext"],
    "Atomic": HDR + ["srctag", "compat", "count", "addr", "addrext", "op", "data"],
    "RdSized": HDR + ["srctag"] + SIZED + ["responsepasspw", "count", "mask", "addr",
                                          "addrext"],
    "WrSizedNP": HDR + ["srctag"] + SIZED + ["count", "mask", "addr", "addrext", "data"],
    "WrSizedP": HDR + SIZED + ["chain", "dataerror", "count", "mask", "addr", "addrext",
                               "data"],
    "Response": ["unitid", "srctag", "passpw", "isoc", "bridge", "error0", "error1",
                 "rquid", "rspvcset", "count", "error", "data"],
    "ExtFCShort": ["long", "vcset", "vcsetrsv", "vcsetfree0", "vcsetfree1",
                   "vcsetfree2", "vcsetfree3", "ack"],
    "ExtFCLong": ["long", "vcset", "vcsetrsv", "vcsetfree0", "vcsetfree1",
                  "vcsetfree2", "vcsetfree3", "ack"],
    "Sync": [],
}

RESERVED_CMDS = [0x01, 0x03, 0x04, 0x05, 0x06, 0x07] + list(range(0x20, 0x28)) + \
    [0x31, 0x32, 0x34, 0x35, 0x36, 0x38, 0x39, 0x3B]

E_TRUNC = "truncated packet"
E_RCMD = "reserved command"
E_RBIT = "reserved bit set"
E_COUNT = "illegal count"
E_MASK = "bad byte-write mask"
E_PREFIX = "bad address-extension prefix"
E_ADDR = "bad address"
E_SYNC = "bad sync packet"
E_TRAIL = "trailing bytes after the packet"
E_INPUT = "malformed input"
RSP_ERR = ["ok", "data error", "target abort", "master abort"]  # by E0*2+E1


def split_name(entry):
    """("seqid[3:2]", 6, 2) -> ("seqid", 2): field name and value bit lo."""
    name = entry[0]
    if "[" not in name:
        return name, 0
    base, rng = name[:-1].split("[")
    hi, lo = (int(x) for x in rng.split(":"))
    assert hi - lo + 1 == entry[2], entry
    return base, lo


def classify(cmd):
    """Cmd[5:0] -> (kind name, table name) per §2, or None if reserved."""
    if cmd == 0x00:
        return "NOP", "NOP"
    if cmd == 0x3F:
        return "Sync", None
    if cmd in (0x30, 0x33):
        return ("RdResponse" if cmd == 0x30 else "TgtDone"), "Response"
    if cmd >> 3 == 0b001:
        return "WrSized", "WrSizedNP"
    if cmd >> 3 == 0b101:
        return "WrSized", "WrSizedP"
    if cmd >> 4 == 0b01:
        return "RdSized", "RdSized"
    return {0x02: ("Flush", "Flush"), 0x37: ("ExtFC", None), 0x3A: ("Broadcast", "Broadcast"),
            0x3C: ("Fence", "Fence"), 0x3D: ("Atomic", "Atomic")}.get(cmd)


def vc_of(kind, cmd):
    if kind in ("NOP", "Sync", "ExtFC"):
        return None
    if kind in ("RdResponse", "TgtDone"):
        return "R"
    if kind in ("Broadcast", "Fence") or (kind == "WrSized" and cmd & 0x20):
        return "P"
    return "NP"


def le_dwords(b):
    return [int.from_bytes(b[i:i + 4], "little") for i in range(0, len(b) - len(b) % 4, 4)]


def ctl_int(b):
    return int.from_bytes(b, "little")


# --------------------------------------------------------------------------
# Decoder (checks in the order documented in docs/ht-model.md)

class DecodeError(Exception):
    pass


def decode(b):
    """bytes -> (ordered dict, length) or raise DecodeError(text)."""
    if len(b) < 4:
        raise DecodeError(E_TRUNC)
    pfx = 0
    if b[0] & 0x3F == 0x3E:
        if b[0] >> 6:
            raise DecodeError(E_PREFIX)
        if len(b) < 8:
            raise DecodeError(E_TRUNC)
        pfx = 4
        c = classify(b[4] & 0x3F)
        if c is None or c[0] not in PREFIXABLE:
            raise DecodeError(E_PREFIX)
    cmd = b[pfx] & 0x3F
    c = classify(cmd)
    if c is None:
        raise DecodeError(E_RCMD)
    kind, table = c
    d0 = int.from_bytes(b[pfx:pfx + 4], "little")
    if kind == "ExtFC":
        table = "ExtFCLong" if d0 >> 6 & 1 else "ExtFCShort"
    count = d0 >> 22 & 0xF
    ctl = 4 if kind == "Sync" else CTL_BYTES[table]
    ndata = 4 * (count + 1) if kind in ("WrSized", "RdResponse", "Atomic") else 0
    total = pfx + ctl + ndata
    if len(b) < total:
        raise DecodeError(E_TRUNC)
    out = {"cmd": cmd, "name": kind, "vc": vc_of(kind, cmd), "len": total}
    if kind == "Sync":
        if d0 != 0xFFFFFFFF:
            raise DecodeError(E_SYNC)
        return out, total

    word = ctl_int(b[pfx:pfx + ctl])
    f = {}
    for entry in TABLES[table]:
        name, lo = split_name(entry)
        v = word >> entry[1] & ((1 << entry[2]) - 1)
        if name == "rsv":
            if v:
                raise DecodeError(E_RBIT)
            continue
        f[name] = f.get(name, 0) | v << lo
    data = b[pfx + ctl:total]

    if "addr[7:2]" in [e[0] for e in TABLES[table]]:
        hi = int.from_bytes(b[1:4], "little") if pfx else 0
        f["addr"] |= hi << 40
        f["addrext"] = 1 if pfx else 0
    if kind in ("RdSized", "WrSized"):
        f["posted"] = cmd >> 5 & 1
        f["responsepasspw"] = cmd >> 3 & 1 if kind == "RdSized" else 0
        for name, bit, _ in SIZED_CMD:
            f[name] = cmd >> bit & 1
        if not f["dword"]:
            if kind == "RdSized":
                f["mask"] = f["count"]
            else:
                f["mask"] = int.from_bytes(data[:4], "little")
                data = data[4:]
    if table == "ExtFCShort":
        f.update(vcsetfree1=0, vcsetfree2=0, vcsetfree3=0)

    check_rules(kind, f)

    if kind == "Atomic":
        f["op"] = {1: "fetchadd", 3: "cas"}[f["count"]]
    if kind in ("RdResponse", "TgtDone"):
        f["error"] = RSP_ERR[f["error0"] * 2 + f["error1"]]
    f["data"] = data.hex()
    for key in ORDER[table]:
        if key in f and (key != "data" or kind != "TgtDone"):
            out[key] = f[key]
    return out, total


def check_rules(kind, f):
    """Decisions 2 and 3 of docs/ht-model.md."""
    if kind == "Atomic":
        if f["count"] not in (1, 3):
            raise DecodeError(E_COUNT)
        if f["addr"] & 4:
            raise DecodeError(E_ADDR)
    elif kind == "TgtDone":
        if f["count"]:
            raise DecodeError(E_COUNT)
    elif kind in ("RdSized", "WrSized") and f["dword"]:
        if (f["addr"] % 64) // 4 + f["count"] + 1 > 16:
            raise DecodeError(E_ADDR)
    elif kind == "WrSized":
        n = f["count"]
        if n < 1 or n > 8:
            raise DecodeError(E_COUNT)
        first = f["addr"] >> 2 & 7
        if first + n > 8:
            raise DecodeError(E_MASK)
        for k in range(8):
            if f["mask"] >> 4 * k & 0xF and not first <= k < first + n:
                raise DecodeError(E_MASK)


# --------------------------------------------------------------------------
# Encoder

def encode(kind, f):
    """Ordered field dict (as decode() returns, minus cmd/name/vc/len) -> bytes."""
    if kind == "Sync":
        return b"\xff\xff\xff\xff"
    if kind == "WrSized":
        table = "WrSizedP" if f["posted"] else "WrSizedNP"
        cmd = (0x28 if f["posted"] else 0x08) | f["dword"] << 2 | f["isoc"] << 1 | f["coherent"]
    elif kind == "RdSized":
        table = "RdSized"
        cmd = 0x10 | f["responsepasspw"] << 3 | f["dword"] << 2 | f["isoc"] << 1 | f["coherent"]
    elif kind == "ExtFC":
        table = "ExtFCLong" if f["long"] else "ExtFCShort"
        cmd = 0x37
    elif kind in ("RdResponse", "TgtDone"):
        table = "Response"
        cmd = 0x30 if kind == "RdResponse" else 0x33
    else:
        table = kind
        cmd = {"NOP": 0x00, "Flush": 0x02, "Broadcast": 0x3A, "Fence": 0x3C,
               "Atomic": 0x3D}[kind]
    word = 0
    for entry in TABLES[table]:
        name, lo = split_name(entry)
        if name == "rsv":
            continue
        v = cmd if name == "cmd" else f[name] >> lo
        word |= (v & ((1 << entry[2]) - 1)) << entry[1]
    out = word.to_bytes(CTL_BYTES[table], "little")
    if "addr" in f and (f["addrext"] or f["addr"] >> 40):
        out = bytes([0x3E]) + (f["addr"] >> 40).to_bytes(3, "little") + out
    if kind == "WrSized" and not f["dword"]:
        out += f["mask"].to_bytes(4, "little")
    return out + bytes.fromhex(f.get("data", ""))


# --------------------------------------------------------------------------
# CRC, bit-serial, §12.1

def crc_register(b, ctl_len):
    crc = 0xFFFFFFFF
    for i, dw in enumerate(le_dwords(b)):
        ctl = 1 if 4 * i < ctl_len else 0
        bits = [dw >> k & 1 for k in range(16)] + [ctl] + \
               [dw >> k & 1 for k in range(16, 32)] + [ctl]
        for d in bits:
            fb = (crc >> 31) ^ d
            crc = (crc << 1) & 0xFFFFFFFF
            if fb:
                crc ^= 0x04C11DB7
    return crc


def ctl_len_of(b):
    """Prefix + control bytes of a valid packet."""
    pfx = 4 if b[0] & 0x3F == 0x3E else 0
    kind, table = classify(b[pfx] & 0x3F)
    if kind == "ExtFC":
        table = "ExtFCLong" if b[pfx] >> 6 & 1 else "ExtFCShort"
    return pfx + (4 if kind == "Sync" else CTL_BYTES[table])


def crc_tx(b):
    return ~crc_register(b, ctl_len_of(b)) & 0xFFFFFFFF


# §12.2: (dwords, control dwords, crc register, transmitted)
VECTORS = [
    ([0x00000000], 1, 0x1620178C, 0xE9DFE873),
    ([0x05032500], 1, 0x3E2D7111, 0xC1D28EEE),
    ([0xFFFFFFFF], 1, 0x0D4326D9, 0xF2BCD926),
    ([0x00040102], 1, 0xA2713494, 0x5D8ECB6B),
    ([0x43C30115, 0x00123456], 2, 0xA893B777, 0x576C4888),
    ([0x0000012C, 0x00000010, 0xDEADBEEF], 2, 0x9FA3C38E, 0x605C3C71),
    ([0x03C34030], 1, 0xD88FF26D, 0x27700D92),
    ([0x0000013E, 0x0000012C, 0x00000010, 0x11223344], 3, 0x98E4DBB0, 0x671B244F),
]


# --------------------------------------------------------------------------
# Random valid packets

def rand_addr(rng, lo_bits, align=4):
    """Random address; with the prefix one time in three (sometimes with
    Addr[63:40] = 0)."""
    ext = rng.random() < 1 / 3
    if ext:
        hi = 0 if rng.random() < 0.2 else rng.getrandbits(24)
    else:
        hi = 0
    a = hi << 40 | rng.getrandbits(40)
    a &= ~(align - 1)
    a = a & ~((1 << lo_bits) - 1) if lo_bits else a
    return a, int(ext)


def gen_fields(rng, cls):
    """One random valid packet of a class: (kind, fields in ORDER order)."""
    r = rng.getrandbits
    f = {}
    if cls == "NOP":
        kind = "NOP"
        f = dict(postcmd=r(2), postdata=r(2), resp=r(2), respdata=r(2), npcmd=r(2),
                 npdata=r(2), isoc=r(1), discon=r(1), diag=r(1), ack=r(8))
    elif cls == "Sync":
        kind = "Sync"
    elif cls in ("Flush", "Fence"):
        kind = cls
        f = dict(seqid=r(4), unitid=r(5), passpw=r(1), srctag=r(5), isoc=r(1))
        if cls == "Fence":
            del f["srctag"]
    elif cls == "Broadcast":
        kind = cls
        a, ext = rand_addr(rng, 0)
        f = dict(seqid=r(4), unitid=r(5), passpw=r(1), compat=r(1), addr=a, addrext=ext)
    elif cls.startswith("Atomic"):
        kind = "Atomic"
        count = 1 if cls == "AtomicFA" else 3
        a, ext = rand_addr(rng, 3)
        f = dict(seqid=r(4), unitid=r(5), passpw=r(1), srctag=r(5), compat=r(1),
                 count=count, addr=a, addrext=ext, data=rng.randbytes(4 * (count + 1)).hex())
    elif cls in ("RdResponse", "TgtDone"):
        kind = cls
        count = r(4) if cls == "RdResponse" else 0
        f = dict(unitid=r(5), srctag=r(5), passpw=r(1), isoc=r(1), bridge=r(1),
                 error0=r(1), error1=r(1), rquid=r(2), rspvcset=r(3), count=count)
        if cls == "RdResponse":
            f["data"] = rng.randbytes(4 * (count + 1)).hex()
    elif cls.startswith("ExtFC"):
        kind = "ExtFC"
        lng = int(cls == "ExtFCLong")
        f = dict(long=lng, vcset=r(3), vcsetrsv=r(4), vcsetfree0=r(8),
                 vcsetfree1=r(8) * lng, vcsetfree2=r(8) * lng, vcsetfree3=r(8) * lng,
                 ack=r(8))
    else:  # RdDw, RdByte, WrNPDw, WrNPByte, WrPDw, WrPByte
        kind = "RdSized" if cls.startswith("Rd") else "WrSized"
        dword = int(cls.endswith("Dw"))
        f = dict(seqid=r(4), unitid=r(5), passpw=r(1))
        posted = int(cls.startswith("WrP"))
        if not posted:
            f["srctag"] = r(5)
        f.update(posted=posted, dword=dword, isoc=r(1), coherent=r(1), compat=r(1))
        if kind == "RdSized":
            f["responsepasspw"] = r(1)
        if posted:
            f.update(chain=r(1), dataerror=r(1))
        a, ext = rand_addr(rng, 6)
        if dword:
            count = r(4)
            a |= 4 * rng.randrange(0, 16 - count)
            ndata = count + 1
        elif kind == "RdSized":
            count = r(4)
            a |= 4 * r(4)
            ndata = 0
        else:
            count = rng.randint(1, 8)
            first = rng.randrange(0, 9 - count)
            a |= 4 * first | 32 * r(1)
            ndata = count
        f["count"] = count
        if not dword:
            if kind == "RdSized":
                f["mask"] = count
            else:
                nib = ((1 << 4 * count) - 1) << 4 * first
                f["mask"] = rng.getrandbits(32) & nib
        f.update(addr=a, addrext=ext)
        if kind == "WrSized":
            f["data"] = rng.randbytes(4 * ndata).hex()
    return kind, f


CLASSES = ["NOP", "Sync", "Flush", "Fence", "Broadcast", "AtomicFA", "AtomicCAS",
           "RdResponse", "TgtDone", "ExtFCShort", "ExtFCLong", "RdDw", "RdByte",
           "WrNPDw", "WrNPByte", "WrPDw", "WrPByte"]


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))


def spaced(rng, hexstr):
    """The same bytes with random case and whitespace between digits."""
    out = []
    for ch in hexstr:
        out.append(ch.upper() if rng.random() < 0.3 else ch)
        if rng.random() < 0.15:
            out.append(rng.choice([" ", "  ", "\t"]))
    return rng.choice(["", " ", "\t"]) + "".join(out) + rng.choice(["", " ", "\r"])


def cmd_gen(seed, n, prefix):
    rng = random.Random(seed)
    pkts = []
    for _ in range(n):
        for cls in CLASSES:
            kind, f = gen_fields(rng, cls)
            b = encode(kind, f)
            got, length = decode(b)
            if length != len(b) or {k: v for k, v in got.items()
                                    if k not in ("cmd", "name", "vc", "len", "op",
                                                 "error")} != f:
                sys.exit("ht_ref: self-check failed for %s: %s vs %s" % (cls, f, got))
            pkts.append((b, got))
    rng.shuffle(pkts)
    with open(prefix + ".hex", "w") as h, open(prefix + ".jsonl", "w") as j, \
            open(prefix + ".crc", "w") as c, open(prefix + ".spaced.hex", "w") as s:
        for b, got in pkts:
            h.write(b.hex() + "\n")
            j.write(dumps(got) + "\n")
            c.write("%08x\n" % crc_tx(b))
            if rng.random() < 0.05:
                s.write(rng.choice(["", "# comment", "   ", "#00000000"]) + "\n")
            s.write(spaced(rng, b.hex()) + "\n")
    print("ht_ref: %d packets (%d classes)" % (len(pkts), len(CLASSES)))


WS = " \t\n\v\f\r"  # C isspace()


def read_lines(path):
    with open(path, "rb") as fh:
        return fh.read().decode("latin-1").split("\n")[:-1] if path != "-" else []


def decode_line(line):
    s = "".join(ch for ch in line if ch not in WS)
    try:
        b = bytes.fromhex(s)
        if not all(ch in "0123456789abcdefABCDEF" for ch in s):
            raise ValueError
    except ValueError:
        raise DecodeError(E_INPUT)
    out, length = decode(b)
    if length != len(b):
        raise DecodeError(E_TRAIL)
    return out, b


def each_packet_line(path):
    for no, line in enumerate(read_lines(path), 1):
        s = line.strip(WS)
        if not s or s.startswith("#"):
            continue
        yield no, line


def cmd_decode(path):
    bad = 0
    for no, line in each_packet_line(path):
        try:
            print(dumps(decode_line(line)[0]))
        except DecodeError as e:
            bad += 1
            print(dumps({"line": no, "error": str(e)}))
    return 1 if bad else 0


def cmd_crc(path):
    bad = 0
    for no, line in each_packet_line(path):
        try:
            print("%08x" % crc_tx(decode_line(line)[1]))
        except DecodeError as e:
            bad += 1
            print(dumps({"line": no, "error": str(e)}))
    return 1 if bad else 0


def cmd_mutate(seed, n, path):
    """Damaged packets: bit flips, cuts, extensions, random bytes, spliced
    reserved commands and prefixes."""
    rng = random.Random(seed)
    pkts = [bytes.fromhex(line) for _, line in each_packet_line(path)]
    for _ in range(n):
        b = bytearray(rng.choice(pkts))
        how = rng.randrange(7)
        if how == 0:
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(b) * 8)
                b[i // 8] ^= 1 << i % 8
        elif how == 1:
            b = b[:rng.randrange(len(b))]
        elif how == 2:
            b += rng.randbytes(rng.choice([1, 4, 8]))
        elif how == 3:
            b = bytearray(rng.randbytes(rng.randrange(0, 90)))
        elif how == 4:
            b[0] = b[0] & 0xC0 | rng.choice(RESERVED_CMDS + [0x3E])
        elif how == 5:
            b = bytearray([0x3E | rng.getrandbits(2) << 6]) + rng.randbytes(3) + b
        else:
            i = rng.randrange(min(len(b), 8))
            b[i] ^= 1 << rng.randrange(8)
        print(b.hex())


def cmd_vectors(prefix):
    with open(prefix + ".raw", "w") as r, open(prefix + ".expect", "w") as e:
        for dws, nctl, reg, tx in VECTORS:
            b = b"".join(d.to_bytes(4, "little") for d in dws)
            if crc_register(b, 4 * nctl) != reg or ~reg & 0xFFFFFFFF != tx:
                sys.exit("ht_ref: bit-serial CRC disagrees with §12.2 for %s" % dws)
            r.write("%s / %s\n" % (b[:4 * nctl].hex(), b[4 * nctl:].hex()))
            e.write("%08x\n" % tx)


def pairs(line):
    return json.loads(line, object_pairs_hook=lambda p: p)


def cmd_compare(expect_path, actual_path):
    exp = read_lines(expect_path)
    act = read_lines(actual_path)
    for i, (e, a) in enumerate(zip(exp, act), 1):
        try:
            pa = pairs(a)
        except ValueError:
            print("output line %d: not JSON: %r" % (i, a[:200]))
            return 1
        pe = pairs(e)
        for k, ((ke, ve), (ka, va)) in enumerate(zip(pe, pa)):
            if ke != ka or ve != va:
                print("output line %d: key #%d: expected %s=%r, got %s=%r\n  expected %s\n  got      %s"
                      % (i, k + 1, ke, ve, ka, va, e, a))
                return 1
        if len(pe) != len(pa):
            print("output line %d: expected %d keys, got %d\n  expected %s\n  got      %s"
                  % (i, len(pe), len(pa), e, a))
            return 1
    if len(exp) != len(act):
        print("expected %d lines, got %d" % (len(exp), len(act)))
        return 1
    print("compared %d lines: all equal" % len(exp))
    return 0


def self_check():
    """Every table covers each of its bits exactly once."""
    for name, table in TABLES.items():
        seen = 0
        for entry in table:
            m = ((1 << entry[2]) - 1) << entry[1]
            assert not seen & m, (name, entry)
            seen |= m
        assert seen == (1 << 8 * CTL_BYTES[name]) - 1, name


def main(argv):
    self_check()
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "gen" and len(args) == 3:
        cmd_gen(int(args[0]), int(args[1]), args[2])
        return 0
    if cmd == "mutate" and len(args) == 3:
        cmd_mutate(int(args[0]), int(args[1]), args[2])
        return 0
    if cmd == "decode" and len(args) == 1:
        return cmd_decode(args[0])
    if cmd == "crc" and len(args) == 1:
        return cmd_crc(args[0])
    if cmd == "vectors" and len(args) == 1:
        cmd_vectors(args[0])
        return 0
    if cmd == "compare" and len(args) == 2:
        return cmd_compare(args[0], args[1])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
