#!/usr/bin/env bash
# htoe-pcap and key files (meson test htoe_pcap_keys, suite macsec;
# docs/macsec.md sections 6 and 8):
#  - the key file of docs/macsec.md section 8 (htoe-bridge's key_file
#    format: "keyN = HEX", a salt line) works with --key-file for
#    macsec-encrypt (the key of --an) and macsec-decrypt;
#  - macsec-encrypt then macsec-decrypt gives back every frame of the input,
#    bytes and time stamps; the file header differs only in the snap length;
#  - macsec-keys writes a node's pairwise SAKs (mode 0600) equal to the
#    802.1X-2010 KDF computed by Python's cryptography package;
#  - pairwise: frames node 1 protected for node 2 decrypt with node 2's key
#    file or the master key; node 3's key file cannot read them
#    (NoPairwiseKey); node 3's SAK under node 1's SCI is InPktsNotValid.
#   test_htoe_pcap_keys.sh HTOE_PCAP SRCDIR
set -euo pipefail
P=$1 SRC=$2
py=/usr/bin/python3
TMP=$(mktemp -d /tmp/htoe-pcap-keys.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }
"$py" -c 'import cryptography, scapy' 2>/dev/null || { echo "SKIP: $py lacks cryptography/scapy"; exit 77; }
MASTER=000102030405060708090a0b0c0d0e0f

# the key file of docs/macsec.md section 8
cat >"$TMP/cluster.keys" <<'K'
# /etc/htoe/cluster.keys  (chmod 600): "NAME = HEX" or a bare HEX per line; '#' or ';' starts a comment
key0 = 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
key1 = 1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100
salt = 0102030405060708090a0b0c      # XPN suites only
K
chmod 600 "$TMP/cluster.keys"
"$P" macsec-encrypt --in "$SRC/pcap/reset.pcap" --out "$TMP/e1.pcap" --key-file "$TMP/cluster.keys" \
  --sci 024854000001:0001 --an 1 --pn 1 >/dev/null
# AN 1 used key1: the single key1 decrypts everything
"$P" macsec-decrypt --in "$TMP/e1.pcap" --out "$TMP/d1.pcap" \
  --key 1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100 >/dev/null ||
  fail "macsec-encrypt --an 1 did not use key1"
"$P" macsec-decrypt --in "$TMP/e1.pcap" --out "$TMP/d2.pcap" --key-file "$TMP/cluster.keys" >"$TMP/d2.txt" ||
  { cat "$TMP/d2.txt"; fail "the key file of docs/macsec.md section 8 is refused"; }
ok "docs/macsec.md section 8 key file: $(cat "$TMP/d2.txt")"

# round trip: frames and time stamps identical, header: snap length only
"$py" - "$SRC/pcap/reset.pcap" "$TMP/d2.pcap" <<'PY' || fail "round trip differs"
import struct, sys
def rd(p):
    b = open(p, "rb").read()
    pk, o = [], 24
    while o < len(b):
        t1, t2, cl, ol = struct.unpack("<IIII", b[o:o + 16])
        pk.append((t1, t2, cl, ol, b[o + 16:o + 16 + cl]))
        o += 16 + cl
    return b[:24], pk
(h1, a), (h2, b) = rd(sys.argv[1]), rd(sys.argv[2])
assert len(a) == len(b) and a == b, "frames differ"
assert h1[:16] == h2[:16] and h1[20:] == h2[20:], "header differs beyond the snap length"
print("ok: macsec-encrypt + macsec-decrypt: %d frames, bytes and time stamps identical; snap length %d -> %d"
      % (len(a), struct.unpack("<I", h1[16:20])[0], struct.unpack("<I", h2[16:20])[0]))
PY

# macsec-keys = the KDF in Python
for n in 1 2 3; do
  "$P" macsec-keys --master-key $MASTER --node $n --peers 1,2,3 --out "$TMP/n$n.keys" >/dev/null
  [ "$(stat -c %a "$TMP/n$n.keys")" = 600 ] || fail "n$n.keys is not mode 0600"
done
"$py" - "$TMP/n1.keys" $MASTER <<'PY' || fail "macsec-keys differs from the Python KDF"
import sys
from cryptography.hazmat.primitives.cmac import CMAC
from cryptography.hazmat.primitives.ciphers.algorithms import AES
def kdf(key, label, ctx, n):
    out, i = b"", 1
    while len(out) < n:
        c = CMAC(AES(key)); c.update(bytes([i]) + label + b"\x00" + ctx + (8 * n).to_bytes(2, "big"))
        out += c.finalize(); i += 1
    return out[:n]
m = bytes.fromhex(sys.argv[2])
lines = [l.split("#")[0].strip() for l in open(sys.argv[1])]
lines = [l for l in lines if l]
want = set()
for an in range(4):
    for p in (2, 3):
        for a, b in ((1, p), (p, 1)):
            s = kdf(m, b"HToE pairwise SAK", a.to_bytes(2, "big") + b.to_bytes(2, "big") + bytes([an]), 16)
            want.add("key%d %d>%d = %s" % (an, a, b, s.hex()))
assert set(lines) == want, (set(lines) ^ want)
print("ok: macsec-keys: node 1's %d pairwise SAKs equal the Python KDF" % len(want))
PY

# pairwise: node 1 -> node 2 frames of basic.pcap
"$py" - "$SRC/pcap/basic.pcap" "$TMP/12.pcap" <<'PY'
import sys
from scapy.all import rdpcap, wrpcap
wrpcap(sys.argv[2], [p for p in rdpcap(sys.argv[1]) if bytes(p)[:6] == bytes.fromhex("024854000002")
                     and bytes(p)[6:12] == bytes.fromhex("024854000001")])
PY
n=$("$py" -c "from scapy.all import rdpcap; print(len(rdpcap('$TMP/12.pcap')))")
"$P" macsec-encrypt --in "$TMP/12.pcap" --out "$TMP/p12.pcap" --master-key $MASTER --pair '1>2' \
  --sci 024854000001:0001 --an 2 --pn 1 >/dev/null
for how in "--key-file $TMP/n2.keys" "--key-file $TMP/n1.keys" "--master-key $MASTER"; do
  # shellcheck disable=SC2086
  "$P" macsec-decrypt --in "$TMP/p12.pcap" --out "$TMP/x.pcap" $how --json 2>/dev/null >"$TMP/x.json" ||
    fail "pairwise decrypt with $how failed"
  [ "$("$py" -c "import json; print(json.load(open('$TMP/x.json'))['decrypted'])")" -eq "$n" ] ||
    fail "pairwise decrypt with $how: not all $n frames"
done
"$py" -c "
from scapy.all import rdpcap
import sys
a, b = rdpcap('$TMP/x.pcap'), rdpcap('$TMP/12.pcap')
sys.exit(0 if [bytes(p) for p in a] == [bytes(p) for p in b] else 1)" || fail "pairwise: plaintext differs"
ok "pairwise: $n frames 1>2 decrypt with node 2's or node 1's key file and with the master key"
rc=0
"$P" macsec-decrypt --in "$TMP/p12.pcap" --out "$TMP/x.pcap" --key-file "$TMP/n3.keys" --json \
  2>/dev/null >"$TMP/x3.json" || rc=$?
[ "$rc" -eq 3 ] && [ "$("$py" -c "import json; print(json.load(open('$TMP/x3.json'))['failed_by_reason']['NoPairwiseKey'])")" -eq "$n" ] ||
  fail "node 3's key file read node 1's frames to node 2 (rc $rc: $(cat "$TMP/x3.json"))"
ok "pairwise: node 3's key file has no key for 1>2: $n frames NoPairwiseKey"
# node 3 forges node 1's SCI with its own SAK to node 2
"$P" macsec-encrypt --in "$TMP/12.pcap" --out "$TMP/f.pcap" --key-file "$TMP/n3.keys" --pair '3>2' \
  --sci 024854000001:0001 --an 0 --pn 1 >/dev/null
rc=0
"$P" macsec-decrypt --in "$TMP/f.pcap" --out "$TMP/x.pcap" --master-key $MASTER --json 2>/dev/null >"$TMP/f.json" || rc=$?
[ "$rc" -eq 3 ] && [ "$("$py" -c "import json; print(json.load(open('$TMP/f.json'))['failed_by_reason']['InPktsNotValid'])")" -eq "$n" ] ||
  fail "a forged SCI was not InPktsNotValid (rc $rc: $(cat "$TMP/f.json"))"
ok "pairwise: node 3's SAK under node 1's SCI: $n frames InPktsNotValid"
