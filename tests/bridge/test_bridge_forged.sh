#!/usr/bin/env bash
# Forged RESETs on the segment change nothing (suite 'bridge'):
# the two-namespace run of test_bridge_netns.sh (config/netns-a.ini node 1,
# config/netns-b.ini node 2, veth, af_packet, 1 % loss and reordering), and
# while both workloads run, a host that is no member injects from node 1's
# side of the veth (scapy, /usr/bin/python3) 20 cold RESETs and 20
# RESET_ACKs to node 2 claiming to be node 1 (valid CRC32C, a new
# incarnation, fresh nonces), from MAC 02:66:66:66:66:66. Checked: node 2
# dropped all 40 as 'src_mac' and reset no VL, and both workloads verify
# every completion with identical memory images. Skipped (77) without
# namespaces or without scapy.
#   test_bridge_forged.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import scapy.all" 2>/dev/null || { echo "SKIP: $PY has no scapy (python3-scapy)"; exit 77; }

NA="htoe-f-a-$$" NB="htoe-f-b-$$"
add_netns "$NA"
add_netns "$NB"
veth "$NA" "$NB"
start_bridge a ip netns exec "$NA" "$BRIDGE" $(eal_proc a 0) -- \
  --config "$SRC/config/netns-a.ini" --transactions "$N" --json
start_bridge b ip netns exec "$NB" "$BRIDGE" $(eal_proc b 1) -- \
  --config "$SRC/config/netns-b.ini" --transactions "$N" --json
# inject once node 2's VL is in use (its first stats line); a watchdog, not an assertion
for _ in $(seq 600); do grep -q "ops [1-9]" "$TMP/b.out" 2>/dev/null && break; sleep 0.1; done
ip netns exec "$NA" "$PY" - "$SRC/scripts" <<'PY' || fail "the injection failed"
import os, sys
sys.path.insert(0, sys.argv[1])
from scapy.all import Raw, sendp
from htoe_forge import reset_frame
frames = []
for i in range(40):
    nonce = int.from_bytes(os.urandom(8), "big") | 1
    # RESET, RESET_ACK; epochs 1..8; a "new incarnation"; generous credit limits
    frames.append(Raw(reset_frame(4 if i % 2 == 0 else 5, 1, 2, 1 + i % 8, nonce,
                                  int.from_bytes(os.urandom(4), "big"), b"\xff\xf0" * 6,
                                  bytes.fromhex("024854000002"),
                                  bytes.fromhex("026666666666"))))
sendp(frames, iface="htoe0", verbose=False)
PY
stop_when_done 240
check_bridges a b
(cd "$TMP" && "$PY" - <<'PY') || fail "node 2 did not drop the forged frames as it should"
import json
b = json.loads([l for l in open("b.out") if l.startswith("{")][-1])
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(b["drops"]["src_mac"] == 40, f"node 2: {b['drops']['src_mac']} frames dropped as src_mac (40 forged)")
check(b["resets"] == 0 and b["peer_restarts"] == 0,
      f"node 2: {b['resets']} VL resets, {b['peer_restarts']} new incarnations")
exit(0 if ok else 1)
PY
ok "40 forged RESET/RESET_ACK frames from a non-member MAC: dropped and counted, no reset, all verified"
