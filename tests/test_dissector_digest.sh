#!/usr/bin/env bash
# The Wireshark dissector on digest messages (suite 'docs', like the other
# dissector tests): CTRL frames of protocol 0x44 built by hand
# (scripts/htoe_forge.py ctrl_frame) -- the REQUEST and ANSWER of
# docs/wire-format.md's example, an ANSWER refusing a range, and three a
# receiver drops (31 bytes, version 2, a REQUEST with a CRC) -- written to a
# pcap and read by tshark with tools/wireshark/htoe.lua: every field as built,
# the frames' CRC32C good, the drops flagged htoe.expert.digest_invalid and
# nothing else. Then LEAVE, the CTRL message of a node that stops cleanly
# (protocol 0x42): one as the bridge sends it, and two a receiver drops (3
# bytes, version 2).
#   test_dissector_digest.sh SRCDIR
set -euo pipefail
SRC=$1
command -v tshark >/dev/null || { echo "FAIL: tshark not found (scripts/setup.sh installs it)"; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
/usr/bin/python3 - "$SRC/scripts" "$TMP/digest.pcap" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
from htoe_forge import ctrl_frame
MAC1, MAC2 = bytes.fromhex("024854000001"), bytes.fromhex("024854000002")
def msg(t, status, session, rid, crc, off, ln, version=1, size=32):
    m = struct.pack(">BBBBIIIQQ", 0x44, version, t, status, session, rid, crc, off, ln)
    return m[:size]
frames = [
    (1, 2, msg(1, 0, 0x65, 1, 0, 0, 0x10000)),                 # the example's REQUEST
    (2, 1, msg(2, 0, 0x65, 1, 0xC084D4D7, 0, 0x10000)),        # ... and ANSWER
    (2, 1, msg(2, 1, 0x65, 2, 0, 0xFFC0, 0x80)),               # refused: range
    (1, 2, msg(1, 0, 0x65, 3, 0, 0, 64, size=31)),             # dropped: 31 bytes
    (1, 2, msg(1, 0, 0x65, 4, 0, 0, 64, version=2)),           # dropped: version
    (1, 2, msg(1, 0, 0x65, 5, 0x1234, 0, 64)),                 # dropped: REQUEST with a CRC
    (2, 1, bytes([0x42, 1])),                                  # LEAVE
    (2, 1, bytes([0x42, 1, 0])),                               # dropped: 3 bytes
    (2, 1, bytes([0x42, 2])),                                  # dropped: version 2
]
with open(sys.argv[2], "wb") as o:
    o.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, (s, d, m) in enumerate(frames):
        f = ctrl_frame(s, d, 1, m, 0x65 if s == 1 else 0x66, MAC2 if d == 2 else MAC1,
                       MAC1 if s == 1 else MAC2)
        o.write(struct.pack("<IIII", i, 0, len(f), len(f)) + f)
PY
tshark -r "$TMP/digest.pcap" -X lua_script:"$SRC/tools/wireshark/htoe.lua" -T fields \
  -E separator='|' -e htoe.crc.status -e htoe.ctrl.proto -e htoe.digest.type_name \
  -e htoe.digest.status -e htoe.digest.session -e htoe.digest.req_id -e htoe.digest.crc \
  -e htoe.digest.offset -e htoe.digest.len -e _ws.expert.message -e _ws.col.Info 2>"$TMP/err" >"$TMP/got" || {
  cat "$TMP/err"; echo "FAIL: tshark"; exit 1; }
cat "$TMP/got"
/usr/bin/python3 - "$TMP/got" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(len(rows) == 9, f"{len(rows)} frames, 9 built")
check(all(r[0] == "1" and r[1] == ("0x44" if i < 6 else "0x42") for i, r in enumerate(rows)),
      "every CRC32C good, CTRL protocols 0x44 (digest), then 0x42 (LEAVE)")
want = [("REQUEST", "0", "0x00000065", "1", "0x00000000", "0x0000000000000000", "65536"),
        ("ANSWER", "0", "0x00000065", "1", "0xc084d4d7", "0x0000000000000000", "65536"),
        ("ANSWER", "1", "0x00000065", "2", "0x00000000", "0x000000000000ffc0", "128")]
for i, w in enumerate(want):
    check(tuple(rows[i][2:9]) == w and "invalid" not in rows[i][9],
          f"frame {i + 1}: {rows[i][2:9]} as built, no error")
for i, what in ((3, "31 bytes"), (4, "version 2"), (5, "a REQUEST with a CRC")):
    check("dropped by the receiver" in rows[i][9], f"frame {i + 1} ({what}): {rows[i][9]}")
check("LEAVE (the sender stops)" in rows[6][10] and "dropped" not in rows[6][9],
      f"frame 7: {rows[6][10]!r}, no error")
for i, what in ((7, "LEAVE of 3 bytes"), (8, "LEAVE version 2")):
    check("LEAVE [invalid]" in rows[i][10] and "dropped by the receiver" in rows[i][9],
          f"frame {i + 1} ({what}): {rows[i][9]}")
sys.exit(0 if ok else 1)
PY
echo "ok: the dissector shows digest and LEAVE messages as built and flags the ones a receiver drops"
