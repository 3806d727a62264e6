#!/usr/bin/env bash
# One forged RESET costs at most one reset and locks nobody out (suite
# 'bridge'). The two-namespace deployment of docs/deploy-two-hosts.md
# (config/netns-a.ini node 1, config/netns-b.ini node 2, veth, af_packet,
# 1 % loss and reordering, both verified workloads). An attacker (scapy,
# /usr/bin/python3) listens on node 2's end of the veth from the start
# (node 1's incarnation is in its RESETs, the epoch in use in its DATA
# frames) and, while both workloads run, sends node 2 from node 1's end
# RESETs claiming to be node 1, with valid CRC32C and fresh nonces:
#   1. from node 1's own MAC, a new random incarnation, the next epoch;
#   2. from node 1's own MAC, node 1's real incarnation, the next epoch;
#   3. from node 2's own MAC (a member's, not node 1's) and from a stranger's
#      MAC, a new incarnation each.
# Checked: the link comes back after each (both workloads finish; a lock-out
# ends in the watchdog's 'not done'); node 2 dropped the two of step 3 as
# 'src_mac'; steps 1 and 2 cost node 2 at most one reset each and node 1
# at most two in all; no incarnation was taken for a restart and no frame
# of the real peer was dropped as 'incarnation'; both runs end PASS with
# every completion verified and identical memory images (what a reset
# loses is reported to the workload, not counted as a mismatch). Skipped
# (77) without namespaces or without scapy.
#   test_bridge_forged_reset.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"
forger_netns fr
# the attacker's ears on node 2's end of the veth (af_packet sends bypass
# the sender's own packet sockets): node 1's incarnation from its RESETs,
# the epoch in use from its DATA frames, kept in $TMP/seen
ip netns exec "$NB" "$PY" - "$TMP" "$SRC/scripts" >"$TMP/ears.out" 2>&1 <<'PY' &
import os, sys
sys.path.insert(0, sys.argv[2])
from htoe_forge import listen
tmp = sys.argv[1]
MAC1 = bytes.fromhex("024854000001")
seen = {"inc": None, "epoch": None}

def watch(p):
    f = bytes(p)
    # untagged HToE from node 1 to node 2
    if len(f) < 46 or f[12:14] != b"\x88\xb5" or f[18:22] != b"\x00\x01\x00\x02":
        return
    if f[6:12] != MAC1:
        return
    ftype, old = f[14] & 0x0F, dict(seen)
    if ftype == 1:
        seen["epoch"] = f[17]
    if ftype in (4, 5) and len(f) >= 58 and seen["inc"] is None:
        seen["inc"] = int.from_bytes(f[46:50], "big")
    if seen != old and None not in seen.values():
        with open(os.path.join(tmp, "seen.tmp"), "w") as o:
            o.write(f"{seen['inc']} {seen['epoch']}\n")
        os.rename(os.path.join(tmp, "seen.tmp"), os.path.join(tmp, "seen"))

listen(tmp, watch)
PY
EARS=$!
# the attacker's mouth on node 1's end: injects when $TMP/go exists
ip netns exec "$NA" "$PY" - "$SRC/scripts" "$TMP" >"$TMP/attacker.out" 2>&1 <<'PY' &
import os, sys, time
sys.path.insert(0, sys.argv[1])
from scapy.all import Raw, sendp
from htoe_forge import reset_frame
tmp = sys.argv[2]
MAC1, MAC2 = bytes.fromhex("024854000001"), bytes.fromhex("024854000002")
STRANGER = bytes.fromhex("026666666666")
while not os.path.exists(os.path.join(tmp, "go")):
    time.sleep(0.05)

def rnd(n):
    return int.from_bytes(os.urandom(n), "big")

def seen():
    """node 1's incarnation and the epoch in use, as the ears last saw them"""
    for _ in range(100):                 # a watchdog
        try:
            inc, ep = open(os.path.join(tmp, "seen")).read().split()
            return int(inc), int(ep)
        except (OSError, ValueError):
            time.sleep(0.05)
    sys.exit("node 1's RESET or DATA frames were not seen")

def send(src_mac, inc, epoch, what):
    nonce = rnd(8) | 1
    sendp(Raw(reset_frame(4, 1, 2, epoch & 0xFF, nonce, inc, b"\xff\xf0" * 6, MAC2, src_mac)),
          iface="htoe0", verbose=False)
    print(f"sent: {what}: incarnation {inc:#010x}, epoch {epoch & 0xFF}", flush=True)

send(MAC1, rnd(4) | 1, seen()[1] + 1, "node 1's MAC, a new incarnation")
time.sleep(0.5)
inc, ep = seen()
send(MAC1, inc, ep + 1, "node 1's MAC and incarnation, the next epoch")
time.sleep(0.5)
send(MAC2, rnd(4) | 1, seen()[1] + 1, "node 2's own MAC")
send(STRANGER, rnd(4) | 1, seen()[1] + 1, "a stranger's MAC")
PY
ATTACKER=$!
start_netns_bridges "$N"
# attack once node 2's VL is in use (its first stats line); a watchdog, not an assertion
for _ in $(seq 600); do grep -q "ops [1-9]" "$TMP/b.out" 2>/dev/null && break; sleep 0.1; done
touch "$TMP/go"
wait "$ATTACKER" || { cat "$TMP/attacker.out"; fail "the attack failed"; }
touch "$TMP/stop"
wait "$EARS" || true
cat "$TMP/attacker.out"
stop_when_done 240
(cd "$TMP" && "$PY" - <<'PY') || { cat "$TMP/a.out" "$TMP/b.out"; fail "the forged RESETs cost more than one reset each"; }
import json
a, b = (json.loads([l for l in open(n + ".out") if l.startswith("{")][-1]) for n in "ab")
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(b["drops"]["src_mac"] == 2, f"node 2: {b['drops']['src_mac']} frames dropped as src_mac (2 forged)")
check(1 <= b["resets"] <= 2, f"node 2: {b['resets']} VL resets for 2 forged RESETs from node 1's MAC")
check(a["resets"] <= 2, f"node 1: {a['resets']} VL resets")
check(a["peer_restarts"] == 0 and b["peer_restarts"] == 0,
      f"new incarnations taken: node 1 {a['peer_restarts']}, node 2 {b['peer_restarts']}")
check(a["drops"]["incarnation"] == 0 and b["drops"]["incarnation"] == 0,
      f"frames dropped as incarnation: node 1 {a['drops']['incarnation']}, "
      f"node 2 {b['drops']['incarnation']}")
exit(0 if ok else 1)
PY
# what the resets lost is reported, so both runs end PASS with identical images
check_bridges a b
ok "forged RESETs (new incarnation, next epoch, wrong MACs): at most one reset each, no lock-out, all verified"
