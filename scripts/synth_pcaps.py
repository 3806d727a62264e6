#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hand-built HToE frames for the pcap corpus (standard library only).

  synth_pcaps.py OUTDIR     write OUTDIR/synthetic.pcap and OUTDIR/malformed.pcap

synthetic.pcap holds valid frames the simulator never sends: the worked examples of
docs/wire-format.md, 64-bit (0x3E prefix) addresses, every response error, CTRL,
warm RESET/RESET_ACK, NAK, CREDIT_REQ, 802.1Q tags, integrity-only MACsec, and a
retransmitted DATA frame. malformed.pcap holds one defect per frame.

Each frame carries the expert infos the dissector must raise: `errors` is the exact set
of error-severity expert ids, `notes` ids that must be present as well. The dissector
test (tests/dissector_check.py) imports this module for them, so the expectations live
next to the bytes. The output is deterministic (fixed time stamps, no randomness).
"""
import struct
import sys

ETH_HTOE = 0x88B5
ETH_VLAN = 0x8100
ETH_MACSEC = 0x88E5

DATA, ACK, NAK, RESET, RESET_ACK, CTRL = 1, 2, 3, 4, 5, 6
VC_P, VC_NP, VC_R = 0, 1, 2
F_COLD, F_CREDIT_REQ, F_SACK = 0x04, 0x08, 0x10

# ----------------------------------------------------------------- CRC32C

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data, crc=0):
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283

# ------------------------------------------------------------- HT packets
# Bit layouts: docs/ht-model.md. Every dword is little-endian on the wire.


def dw(*vals):
    return b"".join(struct.pack("<I", v & 0xFFFFFFFF) for v in vals)


def _prefix(addr, force):
    if force or addr >> 40:
        return dw(0x3E | ((addr >> 40) & 0xFFFFFF) << 8)
    return b""


def req8(cmd, addr, unitid=1, srctag=0, count=0, seqid=0, passpw=0, compat=0, bits=0,
         prefix=False):
    """8-byte request control packet (RdSized, WrSized, Broadcast, Atomic); `bits` ORs
    extra control-dword-0 bits in (chain, dataerror, reserved bits)."""
    d0 = (cmd | (seqid >> 2) << 6 | unitid << 8 | (seqid & 3) << 13 | passpw << 15 |
          srctag << 16 | compat << 21 | count << 22 | ((addr >> 2) & 0x3F) << 26 | bits)
    return _prefix(addr, prefix) + dw(d0, (addr >> 8) & 0xFFFFFFFF)


def req4(cmd, unitid=1, srctag=0, seqid=0, passpw=0, isoc=0):
    """Flush (srctag) / Fence (srctag must be 0)."""
    return dw(cmd | (seqid >> 2) << 6 | unitid << 8 | (seqid & 3) << 13 | passpw << 15 |
              srctag << 16 | isoc << 21)


def resp(cmd, srctag, count=0, unitid=0, err0=0, err1=0, passpw=0, isoc=0, bridge=0,
         rquid=0, rspvcset=0):
    return dw(cmd | isoc << 7 | unitid << 8 | bridge << 14 | passpw << 15 | srctag << 16 |
              err0 << 21 | count << 22 | rspvcset << 26 | err1 << 29 | rquid << 30)


def words(*vals):
    return dw(*vals)


RD_DW, RD_B = 0x15, 0x11            # RdSized dword/byte, coherent
WRNP_DW, WRNP_B = 0x0D, 0x09        # non-posted WrSized dword/byte, coherent
WRP_DW, WRP_B = 0x2D, 0x29          # posted WrSized dword/byte, coherent
FLUSH, FENCE, BCAST, ATOMIC = 0x02, 0x3C, 0x3A, 0x3D
RDRESP, TGTDONE, NOP, SYNC = 0x30, 0x33, 0x00, 0x3F

# --------------------------------------------------------- lease messages
# docs/wire-format.md "Lease messages": 48 bytes, big-endian, in a CTRL frame.

LEASE_PROTO = 0x4C
L_REQUEST, L_GRANT, L_REFUSE, L_RENEW, L_RENEW_ACK, L_RELEASE, L_RELEASE_ACK = range(1, 8)


def lease(ltype, session=0, req_id=0, lease_id=0, size=0, offset=0, addr=0, duration=0,
          status=0, version=1, proto=LEASE_PROTO):
    return struct.pack(">BBBBIII4Q", proto, version, ltype, status, session, req_id, lease_id,
                       size, offset, addr, duration)


# ---------------------------------------------------------------- frames


def node_mac(n):
    return bytes([0x02, 0x48, 0x54, 0x00, n >> 8 & 0xFF, n & 0xFF])


def htoe_hdr(ftype, src, dst, flags=0, npkts=0, epoch=1, seq=0, ack=0,
             credits=(0x40, 0x40, 0x20, 0x20, 0x80, 0x80), plen=None, payload=b"",
             version=1, reserved=0, crc_xor=0):
    """32-byte HToE header followed by the payload, with a correct CRC32C (then XORed
    with crc_xor to damage it). plen overrides the payload length field."""
    if plen is None:
        plen = len(payload)
    h = struct.pack(">BBBBHHHH6HHH", version << 4 | ftype, flags, npkts, epoch, src, dst,
                    seq, ack, *credits, plen, reserved)
    crc = crc32c(h + payload[:plen])
    return h + struct.pack(">I", crc ^ crc_xor) + payload


def ether(htoe, src, dst, vlan=None, pad=True):
    """Ethernet (optionally 802.1Q-tagged: vlan = (pcp, dei, vid)) + HToE, padded to 60."""
    l2 = node_mac(dst) + node_mac(src)
    if vlan:
        pcp, dei, vid = vlan
        l2 += struct.pack(">HH", ETH_VLAN, pcp << 13 | dei << 12 | vid)
    f = l2 + struct.pack(">H", ETH_HTOE) + htoe
    if pad and len(f) < 60:
        f += bytes(60 - len(f))
    return f


def macsec_integrity(htoe, src, dst, pn=1, sci=True, inner_vlan=None, clear_vlan=None):
    """Integrity-only MACsec (E=0, C=0) around an HToE frame. The 16-byte ICV is a
    fixed dummy (no key: Wireshark does not verify it); use htoe-pcap for real ones."""
    inner = b""
    if inner_vlan:
        pcp, dei, vid = inner_vlan
        inner += struct.pack(">HH", ETH_VLAN, pcp << 13 | dei << 12 | vid)
    inner += struct.pack(">H", ETH_HTOE) + htoe
    sl = len(inner) if len(inner) < 48 else 0
    tci_an = 0x20 if sci else 0x40          # SC=1 (SCI present) or ES=1; E=0 C=0 AN=0
    sectag = struct.pack(">HBBI", ETH_MACSEC, tci_an, sl, pn)
    if sci:
        sectag += node_mac(src) + struct.pack(">H", 1)
    l2 = node_mac(dst) + node_mac(src)
    if clear_vlan:
        pcp, dei, vid = clear_vlan
        l2 += struct.pack(">HH", ETH_VLAN, pcp << 13 | dei << 12 | vid)
    f = l2 + sectag + inner + bytes(range(0xA0, 0xB0))
    if len(f) < 60:
        f += bytes(60 - len(f))
    return f


def data_frame(src, dst, vc, pkts, seq=0, ack=0, epoch=1, npkts=None, vlan=None, **kw):
    payload = b"".join(pkts)
    n = len(pkts) if npkts is None else npkts
    return ether(htoe_hdr(DATA, src, dst, flags=vc | kw.pop("flags", 0), npkts=n, epoch=epoch,
                          seq=seq, ack=ack, payload=payload, **kw), src, dst, vlan=vlan)


INC1 = bytes.fromhex("c0ffee01")  # incarnations of nodes 1 and 2
INC2 = bytes.fromhex("5eed0002")


def ctl_frame(ftype, src, dst, flags=0, seq=0, ack=0, epoch=1, payload=b"", vlan=None, **kw):
    return ether(htoe_hdr(ftype, src, dst, flags=flags, seq=seq, ack=ack, epoch=epoch,
                          payload=payload, **kw), src, dst, vlan=vlan)


# The two frames of the worked example in docs/wire-format.md, byte for byte.
WORKED_DATA = bytes.fromhex(
    "024854000002024854000001810 0a064"
    "88b5110002030001000200070005004000400020002000800080 0020 0000 0fe96b34"
    "3e0100002c0100001000000044332211"
    "2c014004100000 00efbeadde0df0feca".replace(" ", ""))
WORKED_ACK = bytes.fromhex(
    "024854000001024854000002 88b5 1200 0003 0002 0001 0000 0008"
    "0040 0040 0020 0020 0080 0080 0000 0000 82b29d1b".replace(" ", "")) + bytes(14)
WORKED_PKT1 = WORKED_DATA[50:66]
WORKED_PKT2 = WORKED_DATA[66:82]

A64 = 0x0000_0100_0000_1000          # the doc's 64-bit example address
A64B = 0xFEDC_BA98_7654_3210 & ~3    # every prefix bit in use


def synthetic():
    """[(description, frame bytes, {"errors": set, "notes": set})]"""
    F = []

    def add(desc, frame, errors=(), notes=()):
        F.append((desc, frame, {"errors": set(errors), "notes": set(notes)}))

    add("worked example: tagged DATA P, 2 posted WrSized, one with a 64-bit address",
        WORKED_DATA)
    add("worked example: the ACK node 2 sends back", WORKED_ACK)
    add("DATA NP: RdSized dword/byte, WrSized NP dword/byte, Atomic fadd/cas, Flush; "
        "64-bit addresses", data_frame(1, 2, VC_NP, [
            req8(RD_DW, A64 + 0x40, srctag=1, count=3),
            req8(RD_B, A64B, srctag=2, count=0x6, seqid=5, passpw=1),
            req8(RD_DW | 0x08, 0x2000_1000, srctag=3, count=0, compat=1),
            req8(WRNP_DW, A64 + 0x80, srctag=4, count=1) + words(0x11111111, 0x22222222),
            req8(WRNP_B, A64 + 0x104, srctag=5, count=2) + words(0x00000F30, 0xAABBCC00,
                                                                   0x000000DD),
            req8(ATOMIC, A64 + 0x200, srctag=6, count=1) + words(5, 0),
            req8(ATOMIC, 0x300, srctag=7, count=3) + words(1, 0, 0xFFFFFFFF, 0xFFFFFFFF),
            req4(FLUSH, srctag=8, seqid=9, isoc=1),
        ], seq=1, ack=0))
    add("DATA P: posted WrSized dword (Chain) and byte with 64-bit addresses, Broadcast, Fence",
        data_frame(1, 2, VC_P, [
            req8(WRP_DW, A64B & ~0x3F, count=0, bits=1 << 19) + words(0xCAFEF00D),
            req8(WRP_B, A64 + 0x1C, count=1, bits=1 << 20) + words(0xF0000000, 0x44000000),
            req8(BCAST, A64 + 0x3F0, compat=0, prefix=True),
            req4(FENCE, seqid=2, isoc=0),
        ], seq=2, ack=0))
    add("DATA R: RdResponse ok/data error/target abort/master abort, TgtDone",
        data_frame(2, 1, VC_R, [
            resp(RDRESP, 1, count=3, unitid=8) + words(1, 2, 3, 4),
            resp(RDRESP, 2, count=0, unitid=8, err1=1, passpw=1) + words(0xFFFFFFFF),
            resp(RDRESP, 3, count=1, unitid=8, err0=1, isoc=1) + words(0xFFFFFFFF, 0xFFFFFFFF),
            resp(RDRESP, 6, count=1, unitid=9, err0=1, err1=1) + words(0xFFFFFFFF, 0xFFFFFFFF),
            resp(TGTDONE, 4, unitid=9, bridge=1, rquid=2, rspvcset=5),
            resp(TGTDONE, 5, unitid=9, err0=1, err1=1),
        ], seq=1, ack=3), notes={"ht.expert.error_response"})
    add("CTRL with an 8-byte opaque payload (the bridge never sends CTRL)",
        ctl_frame(CTRL, 1, 2, ack=3, payload=bytes.fromhex("0102030405060708")))
    add("CTRL, empty", ctl_frame(CTRL, 2, 1, ack=2))
    # lease messages: the worked example of docs/wire-format.md, then every other type
    add("lease REQUEST (docs/wire-format.md example): 10000 bytes, default duration",
        ctl_frame(CTRL, 1, 2, ack=3, payload=lease(L_REQUEST, 0x65, 1, size=10000)),
        notes={"htoe.expert.lease"})
    add("lease GRANT (docs/wire-format.md example): lease 0x00160001, 12288 bytes at 0x100000",
        ctl_frame(CTRL, 2, 1, ack=2, payload=lease(L_GRANT, 0x65, 1, 0x00160001, 12288, 0,
                                                   0x100000, 1_000_000_000)),
        notes={"htoe.expert.lease"})
    add("lease REFUSE, no space",
        ctl_frame(CTRL, 2, 1, ack=2, payload=lease(L_REFUSE, 0x65, 2, status=1)),
        notes={"htoe.expert.lease_status"})
    add("lease RENEW", ctl_frame(CTRL, 1, 2, ack=3, payload=lease(L_RENEW, 0x65, 3,
                                                                   0x00160001)),
        notes={"htoe.expert.lease"})
    add("lease RENEW_ACK ok, 64-bit address and offset, 250 ms",
        ctl_frame(CTRL, 2, 1, ack=2, payload=lease(L_RENEW_ACK, 0x65, 3, 0x00160001, 8192,
                                                   0x123456789A000, 0xFEDCBA9876543000,
                                                   250_000_000)),
        notes={"htoe.expert.lease"})
    add("lease RENEW_ACK unknown lease",
        ctl_frame(CTRL, 2, 1, ack=2, payload=lease(L_RENEW_ACK, 0x65, 4, 0x00160002,
                                                   status=4)),
        notes={"htoe.expert.lease_status"})
    add("lease RELEASE", ctl_frame(CTRL, 1, 2, ack=3, payload=lease(L_RELEASE, 0xFFFFFFFF,
                                                                     0xFFFFFFFE, 0x00160001)),
        notes={"htoe.expert.lease"})
    add("lease RELEASE_ACK, 4 bytes appended (a later version's fields)",
        ctl_frame(CTRL, 2, 1, ack=2, payload=lease(L_RELEASE_ACK, 0xFFFFFFFF, 0xFFFFFFFE,
                                                   0x00160001) + b"\xaa\xbb\xcc\xdd"
                               + INC2),
        notes={"htoe.expert.lease", "htoe.expert.lease_extra"})
    add("lease REFUSE, node exports no memory, tagged VL",
        ctl_frame(CTRL, 3, 1, ack=1, vlan=(5, 0, 100),
                  payload=lease(L_REFUSE, 0x1001, 7, status=5)),
        notes={"htoe.expert.lease_status"})
    add("RESET warm, epoch 2, nonce 0x1234", ctl_frame(RESET, 1, 2, seq=0x1234, epoch=2, ack=3),
        notes={"htoe.expert.reset"})
    add("RESET_ACK warm, nonce echoed", ctl_frame(RESET_ACK, 2, 1, seq=0x1234, epoch=2),
        notes={"htoe.expert.reset"})
    add("RESET cold on a tagged VL", ctl_frame(RESET, 1, 2, flags=F_COLD, seq=0xBEEF, epoch=3,
                                               vlan=(5, 1, 4094)),
        notes={"htoe.expert.reset"})
    # RESET/RESET_ACK carry the incarnation and the 64-bit nonce, CTRL ends with
    # the sender's incarnation (docs/wire-format.md "Incarnations and nonces")
    add("RESET cold with incarnation and 64-bit nonce",
        ctl_frame(RESET, 1, 2, flags=F_COLD, seq=0x5678, epoch=4,
                  payload=INC1 + bytes.fromhex("0123456789ab5678")),
        notes={"htoe.expert.reset"})
    add("RESET_ACK echoing the 64-bit nonce, with the answering node's incarnation",
        ctl_frame(RESET_ACK, 2, 1, flags=F_COLD, seq=0x5678, epoch=4,
                  payload=INC2 + bytes.fromhex("0123456789ab5678")),
        notes={"htoe.expert.reset"})
    add("lease REQUEST with the sender's incarnation after it",
        ctl_frame(CTRL, 1, 2, ack=1, epoch=4,
                  payload=lease(L_REQUEST, 0x1001, 9, size=8192) + INC1),
        notes={"htoe.expert.lease"})
    add("NAK: go back to 5", ctl_frame(NAK, 2, 1, ack=5, epoch=3), notes={"htoe.expert.nak"})
    add("ACK with CREDIT_REQ", ctl_frame(ACK, 1, 2, flags=F_CREDIT_REQ, ack=5, epoch=3),
        notes={"htoe.expert.credit_req"})
    # selective retry (docs/wire-format.md): a RESET offering it, a NAK whose SACK block
    # says frames 7 and 8 are held (ack 5: bits 2 and 3), an ACK with DUP and a 2-word bitmap
    add("RESET warm offering selective retry (SACK flag)",
        ctl_frame(RESET, 1, 2, flags=F_SACK, seq=0x1235, epoch=4), notes={"htoe.expert.reset"})
    add("NAK with a SACK block: ack 5, 7 and 8 held",
        ctl_frame(NAK, 2, 1, flags=F_SACK, ack=5, epoch=4,
                  payload=bytes([1, 1, 0, 0, 0x30, 0, 0, 0])),
        notes={"htoe.expert.nak", "htoe.expert.sack"})
    add("ACK with a SACK block: ack 100, 101 and 140 held, DUP",
        ctl_frame(ACK, 2, 1, flags=F_SACK, ack=100, epoch=4,
                  payload=bytes([1, 2, 1, 0, 0x40, 0, 0, 0, 0, 0x80, 0, 0])),
        notes={"htoe.expert.sack"})
    rt_pkts = [req8(RD_DW, 0x1000, srctag=9, count=0), req4(FLUSH, srctag=10)]
    add("DATA 3→4 seq 9", data_frame(3, 4, VC_NP, rt_pkts, seq=9, ack=1))
    add("the same DATA 3→4 seq 9 again (retransmission, ack refreshed)",
        data_frame(3, 4, VC_NP, rt_pkts, seq=9, ack=2), notes={"htoe.expert.retransmission"})
    add("the same seq 9 in a new epoch: not a retransmission",
        data_frame(3, 4, VC_NP, rt_pkts, seq=9, ack=0, epoch=2))
    add("integrity-only MACsec (SCI present) around a DATA NP frame",
        macsec_integrity(htoe_hdr(DATA, 1, 2, flags=VC_NP, npkts=2, seq=3, ack=1,
                                  payload=req8(RD_DW, A64, srctag=11, count=1) +
                                  req8(ATOMIC, 0x40, srctag=12, count=1) + words(7, 0)),
                         1, 2, pn=1))
    add("integrity-only MACsec (ES, no SCI, SL set) around an ACK",
        macsec_integrity(htoe_hdr(ACK, 2, 1, ack=4), 2, 1, pn=2, sci=False))
    add("integrity-only MACsec with the 802.1Q tag inside the secure data",
        macsec_integrity(htoe_hdr(DATA, 1, 2, flags=VC_P, npkts=1, seq=4, ack=1,
                                  payload=req8(WRP_DW, 0x80, count=0) + words(0x12345678)),
                         1, 2, pn=3, inner_vlan=(5, 0, 100)))
    add("integrity-only MACsec with a clear 802.1Q tag before the SecTAG",
        macsec_integrity(htoe_hdr(DATA, 2, 1, flags=VC_R, npkts=1, seq=2, ack=5,
                                  payload=resp(TGTDONE, 11, unitid=8)),
                         2, 1, pn=4, clear_vlan=(6, 0, 100)))
    return F


def malformed():
    """One defect per frame; `errors` is the exact set of error expert ids."""
    F = []

    def add(desc, frame, errors, notes=()):
        F.append((desc, frame, {"errors": set(errors), "notes": set(notes)}))

    two = [req8(WRP_DW, 0x1000, count=0) + words(0x11223344),
           req8(WRP_DW, 0x1004, count=1) + words(0xDEADBEEF, 0xCAFEF00D)]
    add("truncated header: 20 bytes after the EtherType",
        node_mac(2) + node_mac(1) + struct.pack(">H", ETH_HTOE) + htoe_hdr(ACK, 1, 2)[:20],
        {"htoe.expert.truncated_header"})
    add("bad CRC32C (last CRC byte flipped)",
        data_frame(1, 2, VC_P, two, seq=7, ack=5, crc_xor=0x01), {"htoe.expert.bad_crc"})
    add("payload length 200, 28 payload bytes in the frame",
        data_frame(1, 2, VC_P, two, seq=8, plen=200), {"htoe.expert.bad_length"})
    add("reserved HT command 0x01 after a valid packet",
        data_frame(1, 2, VC_P, [two[0], words(0x00000101, 0)], seq=9),
        {"ht.expert.reserved_cmd"})
    add("reserved HT command 0x34 as the only packet",
        data_frame(1, 2, VC_R, [words(0x00000134)], seq=10), {"ht.expert.reserved_cmd"})
    add("npkts 3, the payload holds 2 packets",
        data_frame(1, 2, VC_P, two, seq=11, npkts=3), {"htoe.expert.npkts_mismatch"})
    add("npkts 1, the payload holds 2 packets",
        data_frame(1, 2, VC_P, two, seq=12, npkts=1), {"htoe.expert.npkts_mismatch"})
    add("truncated HT packet: WrSized announces 4 data dwords, 2 are in the payload",
        data_frame(1, 2, VC_P, [req8(WRP_DW, 0x1000, count=3) + words(1, 2)], seq=13),
        {"ht.expert.truncated"})
    add("2 stray bytes after the last HT packet",
        data_frame(1, 2, VC_P, two + [b"\x00\x00"], seq=14, npkts=2), {"ht.expert.truncated"})
    add("reserved bit 16 set in a posted WrSized",
        data_frame(1, 2, VC_P, [req8(WRP_DW, 0x1000, count=0, bits=1 << 16) + words(1)], seq=15),
        {"ht.expert.reserved_bit"})
    add("reserved bit 13 set in a TgtDone",
        data_frame(2, 1, VC_R, [dw(TGTDONE | 3 << 16 | 1 << 13)], seq=3),
        {"ht.expert.reserved_bit"})
    add("SACK flag (bit 4) in a DATA frame",
        data_frame(1, 2, VC_P, two, seq=16, flags=F_SACK), {"htoe.expert.reserved"})
    add("reserved flag bit 5 set",
        data_frame(1, 2, VC_P, two, seq=16, flags=0x20), {"htoe.expert.reserved"})
    add("ACK with the SACK flag but no SACK block",
        ctl_frame(ACK, 1, 2, flags=F_SACK, ack=5), {"htoe.expert.bad_length"})
    add("CREDIT_REQ in a DATA frame",
        data_frame(1, 2, VC_P, two, seq=17, flags=F_CREDIT_REQ), {"htoe.expert.reserved"})
    add("COLD in a DATA frame",
        data_frame(1, 2, VC_P, two, seq=18, flags=F_COLD), {"htoe.expert.reserved"})
    add("VC 3", data_frame(1, 2, 3, two, seq=19), {"htoe.expert.reserved"})
    add("reserved bytes 26..27 = 0x0001 in an ACK",
        ctl_frame(ACK, 2, 1, ack=3, reserved=1), {"htoe.expert.reserved"})
    add("seq 5 in an ACK", ctl_frame(ACK, 2, 1, seq=5, ack=3), {"htoe.expert.reserved"})
    add("version 2", ctl_frame(ACK, 2, 1, ack=3, version=2), {"htoe.expert.bad_version"})
    add("frame type 7", ctl_frame(7, 2, 1, ack=3), {"htoe.expert.bad_type"})
    add("ACK with a 4-byte payload",
        ctl_frame(ACK, 2, 1, ack=3, payload=b"\x00\x00\x00\x00"), {"htoe.expert.bad_length"})
    add("DATA with payload length 0",
        ether(htoe_hdr(DATA, 1, 2, npkts=1, seq=20), 1, 2), {"htoe.expert.bad_length"})
    add("DATA with npkts 0",
        data_frame(1, 2, VC_P, two, seq=21, npkts=0), {"htoe.expert.npkts_mismatch"})
    add("RdSized (NP) in a VC P frame",
        data_frame(1, 2, VC_P, [two[0], req8(RD_DW, 0x1000, srctag=1)], seq=22),
        {"ht.expert.vc_mismatch"})
    add("NOP in a DATA frame", data_frame(1, 2, VC_P, [dw(0x05032500)], seq=23),
        {"ht.expert.info_packet"})
    add("Sync in a DATA frame", data_frame(1, 2, VC_P, [dw(0xFFFFFFFF)], seq=24),
        {"ht.expert.info_packet"})
    add("Atomic with Count 2",
        data_frame(1, 2, VC_NP, [req8(ATOMIC, 0x40, srctag=1, count=2) + words(1, 2, 3)], seq=25),
        {"ht.expert.invalid"})
    add("byte WrSized with mask bits for a dword it does not write",
        data_frame(1, 2, VC_NP, [req8(WRNP_B, 0x104, srctag=2, count=1) +
                                 words(0x000000F0 | 0x00000F00, 0x11223344)], seq=26),
        {"ht.expert.invalid"})
    add("address-extension prefix before a Flush",
        data_frame(1, 2, VC_NP, [dw(0x0000013E) + req4(FLUSH, srctag=3)], seq=27),
        {"ht.expert.invalid"})
    add("dword RdSized crossing a 64-byte boundary",
        data_frame(1, 2, VC_NP, [req8(RD_DW, 0x1038, srctag=4, count=3)], seq=28),
        {"ht.expert.invalid"})
    add("lease message of 40 bytes (truncated)",
        ctl_frame(CTRL, 1, 2, ack=3, payload=lease(L_REQUEST, 0x65, 1, size=4096)[:40]),
        {"htoe.expert.lease_truncated"})
    add("lease message of 2 bytes (truncated in the fixed part)",
        ctl_frame(CTRL, 1, 2, ack=3, payload=b"\x4c\x01"), {"htoe.expert.lease_truncated"})
    add("lease message version 2",
        ctl_frame(CTRL, 1, 2, ack=3, payload=lease(L_REQUEST, 0x65, 1, size=4096, version=2)),
        {"htoe.expert.lease_invalid"})
    add("lease message type 9",
        ctl_frame(CTRL, 2, 1, ack=3, payload=lease(9, 0x65, 1)), {"htoe.expert.lease_invalid"})
    add("lease message type 0, 30 bytes (invalid and truncated)",
        ctl_frame(CTRL, 2, 1, ack=3, payload=lease(0, 0x65, 1)[:30]),
        {"htoe.expert.lease_invalid", "htoe.expert.lease_truncated"})
    add("bad CRC and npkts mismatch together (CRC first, fields still shown)",
        data_frame(1, 2, VC_P, two, seq=29, npkts=3, crc_xor=0x80000000),
        {"htoe.expert.bad_crc", "htoe.expert.npkts_mismatch"})
    return F


# ------------------------------------------------------------------ pcap


def write_pcap(path, frames, t0_ns=1_000_000_000):
    """Nanosecond-resolution libpcap file (like htoe-sim --pcap), DLT_EN10MB."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        for i, (_, frame, _) in enumerate(frames):
            t = t0_ns + i * 1000
            f.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(frame),
                                len(frame)))
            f.write(frame)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    # sanity: the worked example's bytes and CRCs are those of the doc
    assert len(WORKED_DATA) == 82 and WORKED_DATA[46:50] == bytes.fromhex("0fe96b34")
    assert crc32c(WORKED_DATA[18:46] + WORKED_DATA[50:82]) == 0x0FE96B34
    assert crc32c(WORKED_ACK[14:42]) == 0x82B29D1B
    write_pcap(out + "/synthetic.pcap", synthetic())
    write_pcap(out + "/malformed.pcap", malformed())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
