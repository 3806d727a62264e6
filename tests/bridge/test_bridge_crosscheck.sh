#!/usr/bin/env bash
# The end of a run compares memory across processes (suite 'bridge'): the
# two-namespace deployment of docs/deploy-two-hosts.md (config/netns-a.ini
# node 1, config/netns-b.ini node 2, veth, af_packet, 1 % loss and
# reordering, both verified workloads), each process ending with the digest
# exchange of docs/bridge.md "Memory cross-check". An attacker (scapy,
# /usr/bin/python3) listens on node 2's end of the veth and, once both
# workloads are done (node 1's last read of node 2's memory is behind it, and
# its digest confirmed it), sends node 2 from node 1's MAC posted writes
# resealed with the next sequence numbers (what a forger on the LAN can do
# without MACsec): a captured single-write frame with its last data byte
# changed. They land in node 2's memory (its CRC no longer equals node 1's
# shadow's, in the --json), and node 2's run FAILS naming the range node 1
# confirmed and both CRCs; node 1's run stays PASS. (A peer's memory that
# differs when asked: tests/test_peercheck.c.) Skipped (77) without
# namespaces or scapy.
#   test_bridge_crosscheck.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-5000}
. "$(dirname "$0")/lib.sh"
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)"

forger_netns x
# the attacker's ears on node 2's end: node 1's frames to node 2 (af_packet
# sends bypass the sender's own packet sockets, so this is node 1's side):
# the highest sequence number (in laps), the last ack and credits, and the
# last DATA frame of one posted dword write (a template)
ip netns exec "$NB" "$PY" - "$TMP" "$SRC/scripts" >"$TMP/ears.out" 2>&1 <<'PY' &
import json, os, sys
sys.path.insert(0, sys.argv[2])
from htoe_forge import listen
tmp = sys.argv[1]
MAC1 = bytes.fromhex("024854000001")
st = {"epoch": None, "seq": None, "ack": None, "credits": None, "template": None}

def near(last, v):
    """v (16 bits) as the full number nearest to last (docs/wire-format.md)"""
    if last is None:
        return v
    d = (v - last) & 0xFFFF
    return last + (d - 0x10000 if d >= 0x8000 else d)

def watch(p):
    f = bytes(p)
    if len(f) < 46 or f[12:14] != b"\x88\xb5" or f[6:12] != MAC1 or f[18:22] != b"\x00\x01\x00\x02":
        return
    ftype, epoch = f[14] & 0x0F, f[17]
    if ftype == 4 or (ftype == 1 and epoch != st["epoch"]):   # laps count from 0 per reset
        st.update(seq=None, ack=None, template=None)
    st["ack"] = near(st["ack"], int.from_bytes(f[24:26], "big"))
    st["credits"] = f[26:38].hex()
    if ftype != 1:
        return
    st["epoch"] = epoch
    full = near(st["seq"], int.from_bytes(f[22:24], "big"))
    st["seq"] = full if st["seq"] is None else max(st["seq"], full)
    plen = int.from_bytes(f[38:40], "big")
    pl = f[46:46 + plen]
    # VC P, one packet: a posted WrSized in the dword form (Cmd 0x2C..0x2F)
    if f[15] & 3 == 0 and f[16] == 1 and plen >= 12 and 0x2C <= pl[0] & 0x3F <= 0x2F:
        st["template"] = f[:46 + plen].hex()

listen(tmp, watch)
json.dump(st, open(os.path.join(tmp, "seen.json"), "w"))
PY
EARS=$!
start_netns_bridges "$N"
# both done: node 1's workload has read node 2's memory for the last time
# and (with the cross-check) had it confirmed; a watchdog, not a timing
for _ in $(seq 1200); do
  grep -q "done 1/1$" "$TMP/a.out" && grep -q "done 1/1$" "$TMP/b.out" && break
  sleep 0.2
done
grep -q "done 1/1$" "$TMP/a.out" && grep -q "done 1/1$" "$TMP/b.out" || {
  tail -3 "$TMP/a.out" "$TMP/b.out"; fail "workloads not done"; }
touch "$TMP/stop"
wait "$EARS" || { cat "$TMP/ears.out"; fail "the sniffer failed"; }
rx_seen() { grep -o "rx [0-9]* (" "$TMP/b.out" | tail -1 | tr -dc 0-9; }
RX0=$(rx_seen)
# the attacker's mouth on node 1's end: the template with its last data
# byte changed, as the next 8 frames (those the sniffer saw sent already are
# duplicates: dropped), sealed with the laps of seq and ack
ip netns exec "$NA" "$PY" - "$SRC/scripts" "$TMP" >"$TMP/attacker.out" 2>&1 <<'PY' ||
import json, os, sys
sys.path.insert(0, sys.argv[1])
from scapy.all import Raw, sendp
from htoe_forge import data_frame
st = json.load(open(os.path.join(sys.argv[2], "seen.json")))
if not st["template"] or st["seq"] is None:
    sys.exit(f"nothing to forge from: {st}")
t = bytes.fromhex(st["template"])
pl = bytearray(t[46:])
pl[-1] ^= 0xFF
for k in range(1, 9):
    seq, ack = st["seq"] + k, st["ack"]
    f = data_frame(t, seq, ack, bytes.fromhex(st["credits"]), bytes(pl), seq >> 16, ack >> 16)
    sendp(Raw(f), iface="htoe0", verbose=False)
print(f"sent: 8 posted writes as node 1, seq {st['seq'] + 1}..{st['seq'] + 8}, epoch {st['epoch']}")
PY
  { cat "$TMP/attacker.out"; fail "the attack failed"; }
cat "$TMP/attacker.out"
# node 2 received them (its stats line counts frames); a watchdog, not a timing
for _ in $(seq 300); do [ "$(rx_seen)" -ge $((RX0 + 8)) ] && break; sleep 0.2; done
sleep 1
stop_when_done 60
cat "$TMP/a.out" "$TMP/b.out"
(cd "$TMP" && python3 - <<'PY') || fail "the injected writes were not reported"
import re
from summary_check import last_json, check, done
a, b = last_json("a"), last_json("b")
n1, n2 = a["per_node"][0], b["per_node"][0]
aout, bout = open("a.out").read(), open("b.out").read()
check(n1["shadow_crc32c"] != n2["mem_crc32c"],
      f"the forged writes landed: node 2's memory crc32c {n2['mem_crc32c']:#010x}, node 1's "
      f"shadow {n1['shadow_crc32c']:#010x}")
check(n1.get("peer_check", {}).get("state") == "confirmed",
      f"node 1's digest was confirmed before: {n1.get('peer_check')}")
check(re.search(r"RESULT: PASS", aout) and open("a.rc").read().strip() == "0",
      "node 1: PASS (what it verified held when it verified it)")
m = re.search(r"memory \[\+0, \+0x10000\) that node 1 confirmed \(crc32c (0x[0-9a-f]+)\) "
              r"CHANGED afterwards \(crc32c (0x[0-9a-f]+) now\)", bout)
check(m and int(m.group(1), 16) == n1["shadow_crc32c"] and int(m.group(2), 16) == n2["mem_crc32c"],
      "node 2 names the range node 1 confirmed, and both CRCs")
check(n2.get("digests", {}).get("changed") == 1, f"node 2's digests: {n2.get('digests')}")
check(re.search(r"RESULT: FAIL", bout) and open("b.rc").read().strip() == "1",
      "node 2: RESULT: FAIL, exit status 1")
done()
PY
ok "posted writes forged after the peer's last read: the run FAILS naming the range"
