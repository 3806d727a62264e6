# SPDX-License-Identifier: BSD-3-Clause
"""Frames built by hand: a RESET or RESET_ACK with its 12-byte payload
(incarnation, 64-bit nonce), a CTRL frame, a DATA frame resealed with another
sequence number and payload or built from HT packets (a posted write), in the
format of docs/wire-format.md; what a sniffer learns of a VL (VlView). Imported by
the bridge tests (with scripts/ on sys.path), and a command:

  /usr/bin/python3 scripts/htoe_forge.py with-reset IN.pcap OUT.pcap

writes IN with a cold RESET from node 1 to node 2 put first, in the epoch of
node 1's first frame (docs/deploy-replay.md: a capture replayed into a new
bridge needs it to bring the VL up)."""
import struct
import sys


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def reset_frame(ftype, src, dst, epoch, nonce, inc, credits, dst_mac, src_mac, cold=True):
    """An untagged RESET (ftype 4) or RESET_ACK (5) from node src to node dst;
    credits: the 12 bytes of credit limits; MACs as bytes. Padded to 60."""
    hdr = bytearray(32)
    hdr[0], hdr[1], hdr[3] = 0x10 | ftype, 0x04 if cold else 0, epoch
    hdr[4:10] = struct.pack(">HHH", src, dst, nonce & 0xFFFF)
    hdr[12:24] = credits
    hdr[24:26] = struct.pack(">H", 12)
    pl = struct.pack(">IQ", inc, nonce)
    hdr[28:32] = struct.pack(">I", crc32c(bytes(hdr[:28]) + pl))
    return dst_mac + src_mac + b"\x88\xb5" + bytes(hdr) + pl + bytes(2)


def ctrl_frame(src, dst, epoch, msg, inc, dst_mac, src_mac, credits=bytes(12)):
    """An untagged CTRL frame (type 6) from node src to node dst carrying msg,
    then the sender's incarnation inc; ack 0 (laps 0). Padded to 60."""
    hdr = bytearray(32)
    hdr[0], hdr[3] = 0x16, epoch
    hdr[4:8] = struct.pack(">HH", src, dst)
    hdr[12:24] = credits
    pl = msg + struct.pack(">I", inc)
    hdr[24:26] = struct.pack(">H", len(pl))
    hdr[28:32] = struct.pack(">I", crc32c(bytes(hdr[:28]) + pl))
    f = dst_mac + src_mac + b"\x88\xb5" + bytes(hdr) + pl
    return f + bytes(max(0, 60 - len(f)))


def data_frame(template, seq, ack, credits, payload, seq_lap=0, ack_lap=0):
    """A DATA frame like `template` (an untagged DATA frame as captured: its
    MACs, type, VC, npkts, epoch, nodes) with sequence number seq, ack,
    credits (12 bytes) and payload, sealed with the laps of seq and ack
    (docs/wire-format.md "Sequence laps"). Padded to 60."""
    hdr = bytearray(template[14:46])
    hdr[8:12] = struct.pack(">HH", seq & 0xFFFF, ack & 0xFFFF)
    hdr[12:24] = credits
    hdr[24:26] = struct.pack(">H", len(payload))
    laps = struct.pack(">II", seq_lap, ack_lap) if seq_lap or ack_lap else b""
    hdr[28:32] = struct.pack(">I", crc32c(bytes(hdr[:28]) + payload + laps))
    f = template[:14] + bytes(hdr) + payload
    return f + bytes(max(0, 60 - len(f)))


def listen(tmp, watch, iface="htoe0", filt=None):
    """An attacker's ears (the bridge tests): watch(packet) for every frame
    on iface (that passes the kernel filter filt, in pcap-filter syntax, if
    given), TMP/listening once listening, until TMP/stop exists and the
    frames captured so far are all watched (none for 1 s: on a loaded machine
    the sniffer's thread lags behind the wire; at most 60 s more)."""
    import os
    import time
    from scapy.all import AsyncSniffer
    last = [time.monotonic()]

    def seen(p):
        last[0] = time.monotonic()
        watch(p)
    sn = AsyncSniffer(iface=iface, prn=seen, store=False, filter=filt)
    sn.start()
    time.sleep(1)
    open(os.path.join(tmp, "listening"), "w").close()
    while not os.path.exists(os.path.join(tmp, "stop")):
        time.sleep(0.1)
    end = time.monotonic() + 60
    while time.monotonic() - last[0] < 1 and time.monotonic() < end:
        time.sleep(0.1)
    sn.stop()


def posted_write(addr, data, unitid=1):
    """One HT 3.1 posted WrSized in the dword form (Cmd 0x2C) of data (4..64
    bytes, whole dwords) at addr (dword-aligned), with the 0x3E prefix when
    addr needs more than 40 bits (docs/wire-format.md "Payload")."""
    assert len(data) % 4 == 0 and 4 <= len(data) <= 64 and addr % 4 == 0
    ctl0 = 0x2C | (unitid & 0x1F) << 8 | (len(data) // 4 - 1) << 22 | (addr >> 2 & 0x3F) << 26
    pkt = struct.pack("<II", ctl0, addr >> 8 & 0xFFFFFFFF) + data
    return (struct.pack("<I", 0x3E | (addr >> 40) << 8) + pkt) if addr >> 40 else pkt


def new_data_frame(dst_mac, src_mac, src, dst, epoch, vc, packets, seq, ack, credits):
    """An untagged DATA frame from node src to node dst of the HT packets
    `packets` (a list, all of VC vc), sealed with the laps of the full
    (48-bit) seq and ack."""
    hdr = bytearray(32)
    hdr[0], hdr[1], hdr[2], hdr[3] = 0x11, vc, len(packets), epoch
    hdr[4:8] = struct.pack(">HH", src, dst)
    return data_frame(dst_mac + src_mac + b"\x88\xb5" + bytes(hdr), seq, ack, credits,
                      b"".join(packets), seq >> 16, ack >> 16)


def near(last, v):
    """the 16-bit v as the full number nearest to last (None: lap 0), as a
    receiver takes seq and ack (docs/wire-format.md "Sequence laps")"""
    if last is None:
        return v
    d = (v - last) & 0xFFFF
    return last + (d - 0x10000 if d >= 0x8000 else d)


class VlView:
    """What a sniffer learns of one VL between nodes a and b (MACs mac_a,
    mac_b) from the untagged frames it sees either way: the epoch, each
    side's last DATA sequence number, ack and credit limits, in full numbers
    (laps counted from 0 at every RESET or RESET_ACK, as the ends count), and
    the frames heard from each side, the UnitID and address of the last
    posted write each side sent."""

    def __init__(self, a, b, mac_a, mac_b):
        self.ends = {(mac_a, a, b): "a", (mac_b, b, a): "b"}
        self.epoch = None
        self.unitid = {"a": None, "b": None}
        self.posted_addr = {"a": None, "b": None}   # of the last posted write seen
        self.frames = {"a": 0, "b": 0}
        self.restart()

    def restart(self):
        self.seq = {"a": None, "b": None}
        self.ack = {"a": None, "b": None}
        self.credits = {"a": None, "b": None}

    def watch(self, f):
        """one frame as captured; returns the end that sent it, or None"""
        if len(f) < 46 or f[12:14] != b"\x88\xb5" or f[14] >> 4 != 1:
            return None
        end = self.ends.get((bytes(f[6:12]),) + struct.unpack(">HH", f[18:22]))
        if end is None:
            return None
        self.frames[end] += 1
        ftype, seq, ack = f[14] & 0x0F, *struct.unpack(">HH", f[22:26])
        if ftype in (4, 5):                    # a reset: numbers restart from 0
            self.restart()
            self.epoch = f[17]
            return end
        if ftype == 1:
            if f[17] != self.epoch:
                self.restart()
                self.epoch = f[17]
            full = near(self.seq[end], seq)
            self.seq[end] = full if self.seq[end] is None else max(self.seq[end], full)
            pl = f[46:]
            if f[15] & 3 == 0 and len(pl) >= 8:  # a posted request: UnitID, address
                ext = pl[0] & 0x3F == 0x3E
                c0, c1 = struct.unpack("<II", pl[4:12] if ext else pl[0:8])
                self.unitid[end] = c0 >> 8 & 0x1F
                self.posted_addr[end] = ((struct.unpack("<I", pl[0:4])[0] >> 8 << 40 if ext
                                          else 0) | c1 << 8 | (c0 >> 26) << 2)
        self.ack[end] = near(self.ack[end], ack)
        self.credits[end] = bytes(f[26:38])
        return end


def packet_socket(iface, netns=None):
    """A raw AF_PACKET socket on iface (every protocol), opened in the
    network namespace netns (a name in /run/netns; None: this one), with a
    large receive buffer; the process stays in its own namespace."""
    import ctypes
    import os
    import socket
    libc = ctypes.CDLL(None, use_errno=True)
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        if netns:
            fd = os.open("/run/netns/" + netns, os.O_RDONLY)
            if libc.setns(fd, 0x40000000) != 0:          # CLONE_NEWNET
                raise OSError(ctypes.get_errno(), "setns " + netns)
            os.close(fd)
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
        s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)     # SO_RCVBUFFORCE
        s.bind((iface, 0))
    finally:
        if netns and libc.setns(home, 0x40000000) != 0:
            raise OSError(ctypes.get_errno(), "setns back")
        os.close(home)
    s.setblocking(False)
    return s


def with_reset(src, dst, node=1, peer=2):
    """Copy the pcap src to dst with a RESET from node to peer put first, in
    the epoch and with the credit limits of node's first frame to peer."""
    d = open(src, "rb").read()
    off, first = 24, None
    while off + 16 <= len(d):
        incl = struct.unpack("<I", d[off + 8:off + 12])[0]
        f = d[off + 16:off + 16 + incl]
        if (f[12:14] == b"\x88\xb5" and f[14] & 0xF0 == 0x10 and
                struct.unpack(">HH", f[18:22]) == (node, peer)):
            first = (d[off:off + 8], f)
            break
        off += 16 + incl
    if first is None:
        raise SystemExit("%s: no untagged HToE frame from node %d to node %d" % (src, node, peer))
    ts, f = first
    # a nonce and an incarnation of its own: what node would send to a restarted peer
    frame = reset_frame(4, node, peer, f[17], 0x5EC0000000000001, 0x5EC00001, f[26:38],
                        f[0:6], f[6:12])
    rec = ts + struct.pack("<II", len(frame), len(frame)) + frame
    open(dst, "wb").write(d[:24] + rec + d[24:])


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "with-reset":
        sys.exit("usage: htoe_forge.py with-reset IN.pcap OUT.pcap")
    with_reset(sys.argv[2], sys.argv[3])
