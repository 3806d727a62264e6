# SPDX-License-Identifier: BSD-3-Clause
"""Frames built by hand for the bridge tests (issue 13): a RESET or RESET_ACK
with its 12-byte payload (incarnation, 64-bit nonce), in the format of
docs/wire-format.md. Imported by test_bridge_forged.sh and
test_bridge_replay.sh (their python is run with this directory on sys.path)."""
import struct


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
