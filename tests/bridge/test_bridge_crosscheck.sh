#!/usr/bin/env bash
# A posted write forged on the LAN is reported by the end-of-run memory
# cross-check (suite 'bridge'). The two-namespace deployment of
# docs/deploy-two-hosts.md (config/netns-a.ini node 1, config/netns-b.ini
# node 2, veth, af_packet, 1 % loss and reordering, both verified workloads),
# each process ending with the digest exchange of docs/bridge.md "Memory
# cross-check". The attacker (/usr/bin/python3, AF_PACKET sockets on both ends
# of the veth, scripts/htoe_forge.py) follows the VL from its first frame:
# epoch, both ends' sequence numbers, acks and credit limits in full numbers.
# Once both workloads are done (node 1's digest of node 2's memory confirmed,
# the link idle), it builds a DATA frame as node 1 (its MAC, node id, epoch,
# ack and credit limits) holding one posted write of 64 random bytes into
# node 2's memory, numbered with the sequence number node 2 expects (from
# node 2's acks) and sealed with the laps, and sends it until node 2's ack
# shows it accepted (a frame sent again is a duplicate: dropped, acked), a
# bounded number of times. Checked: the write landed (node 2's memory crc32c
# in its --json differs from node 1's shadow crc32c in node 1's), node 2's
# run FAILS (exit 1) naming the range node 1 confirmed with both CRCs and the
# forged bytes' offset inside it, and node 2 reports no PASS; a second
# posted write in the same frame, just past the end of node 2's memory, is
# dropped by node 2's target, counted in
# node 2's summary ("refused:" line) and --json. Node 1, stopped
# first as an operator would, asks node 2 once more at the end of its run:
# its run FAILS too, naming the same range and both CRCs (docs/bridge.md).
# Skipped (77) without namespaces or scapy.
#   test_bridge_crosscheck.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-5000}
. "$(dirname "$0")/lib.sh"
export PYTHONPATH="$(cd "$(dirname "$0")" && pwd)"

forger_netns cw
# the attacker: ears on both ends of the veth (af_packet sends bypass the
# sender's own namespace's packet sockets: node 1's frames are heard on node
# 2's end and node 2's on node 1's), its mouth on node 1's end; it forges
# when $TMP/go exists, and writes what it did to $TMP/forged.json
ip netns exec "$NA" "$PY" - "$SRC/scripts" "$TMP" "$NA" "$NB" >"$TMP/ears.out" 2>&1 <<'PY' &
import json, os, select, sys, time
sys.path.insert(0, sys.argv[1])
from htoe_forge import VlView, new_data_frame, packet_socket, posted_write
tmp, na, nb = sys.argv[2:5]
MAC1, MAC2 = bytes.fromhex("024854000001"), bytes.fromhex("024854000002")
SIZE2 = 0x10000                        # node 2's memory (mem_size), as node 1 addresses it
vl = VlView(1, 2, MAC1, MAC2)
hear1 = packet_socket("htoe0", nb)     # node 1's frames, as node 2 receives them
hear2 = packet_socket("htoe0", na)     # node 2's frames, as node 1 receives them
mouth = packet_socket("htoe0", na)
open(os.path.join(tmp, "listening"), "w").close()

def listen(secs):
    end = time.monotonic() + secs
    while (left := end - time.monotonic()) > 0:
        for s in select.select([hear1, hear2], [], [], left)[0]:
            while True:
                try:
                    vl.watch(s.recv(65536))
                except BlockingIOError:
                    break

deadline = time.monotonic() + 600      # a watchdog: the test's own bounds come first
while not os.path.exists(os.path.join(tmp, "go")):
    listen(0.1)
    if time.monotonic() > deadline:
        sys.exit("never told to forge")
listen(0.5)                            # the last acks of the idle link
if None in (vl.epoch, vl.ack["a"], vl.credits["a"], vl.ack["b"], vl.posted_addr["a"]):
    sys.exit(f"the VL was not followed: epoch {vl.epoch}, seq {vl.seq}, ack {vl.ack}, "
             f"a posted write {vl.posted_addr}")
off = int.from_bytes(os.urandom(2), "big") & ~63
data = os.urandom(64)
pkt = posted_write((vl.posted_addr["a"] & ~(SIZE2 - 1)) + off, data, vl.unitid["a"])
# in the same frame, one posted write just past the end of node 2's exported
# memory: node 2's target drops it (master abort), and its summary counts it
outside = (vl.posted_addr["a"] & ~(SIZE2 - 1)) + SIZE2
pkts = [pkt, posted_write(outside, os.urandom(64), vl.unitid["a"])]

def send(seq):
    """the write as node 1's frame seq; what node 2 answered (its ack; None: nothing heard)"""
    heard = vl.frames["b"]
    mouth.send(new_data_frame(MAC2, MAC1, 1, 2, vl.epoch, 0, pkts, seq, vl.ack["a"],
                              vl.credits["a"]))
    listen(0.2)
    return vl.ack["b"] if vl.frames["b"] > heard else None

# node 2's expected number, from the ACK it sends at once for a duplicate (a
# number before the last one it acked: on the idle link its only answer);
# then the write with that number, sent again until node 2 answers with the
# next one (a frame it took: sent again, a duplicate, acked)
sends, seq = 0, None
while sends < 100:
    sends += 1
    if seq is None:
        seq = send(vl.ack["b"] - 1)
        continue
    ack = send(seq)
    if ack == seq + 1:
        break
    if ack is not None and ack != seq:   # node 2 expects another number: learn it again
        seq = None
else:
    sys.exit(f"node 2 did not take the forged frame (seq {seq}, its ack {vl.ack['b']})")
res = {"offset": off, "len": 64, "data": data.hex(), "seq": seq, "epoch": vl.epoch,
       "sends": sends, "outside": outside}
json.dump(res, open(os.path.join(tmp, "forged.json"), "w"))
print(f"forged: one posted write of 64 bytes at node 2's +{off:#x} "
      f"({(vl.posted_addr['a'] & ~(SIZE2 - 1)) + off:#x}) as node 1, seq {seq} "
      f"(lap {seq >> 16}), epoch {vl.epoch}, acked after {sends} frames sent")
PY
FORGER=$!
watchdog "$FORGER" 900
start_netns_bridges "$N"
# both done: node 1's workload has read node 2's memory for the last time
# and had it confirmed by the digest; a watchdog, not a timing
both_done() { grep -qs "done 1/1$" "$TMP/a.out" && grep -qs "done 1/1$" "$TMP/b.out"; }
for _ in $(seq 1500); do both_done && break; sleep 0.2; done
both_done || {
  tail -3 "$TMP/a.out" "$TMP/b.out"; fail "workloads not done"; }
touch "$TMP/go"
wait "$FORGER" || { cat "$TMP/ears.out"; fail "the forgery failed"; }
cat "$TMP/ears.out"
# an operator's Ctrl-C on each in turn, node 1 first: its run ends with the
# final check of node 2's memory (node 2 still answers); then node 2's, whose
# final check finds node 1 stopped (silent for peer_dead_timeout)
for i in 0 1; do
  rc=0
  kill -INT "${BR_PIDS[$i]}"
  wait "${BR_PIDS[$i]}" || rc=$?
  echo "$rc" >"$TMP/${BR_NAMES[$i]}.rc"
done
BR_PIDS=()
cat "$TMP/a.out" "$TMP/b.out"
(cd "$TMP" && "$PY" - <<'PY') || fail "the forged write was not reported"
import json, re
from summary_check import last_json, check, done
fg = json.load(open("forged.json"))
a, b = last_json("a"), last_json("b")
n1, n2 = a["per_node"][0], b["per_node"][0]
aout, bout = open("a.out").read(), open("b.out").read()
check(n1["shadow_crc32c"] != n2["mem_crc32c"],
      f"the forged write landed: node 2's memory crc32c {n2['mem_crc32c']:#010x}, node 1's "
      f"shadow {n1['shadow_crc32c']:#010x}")
m = re.search(r"memory \[\+(0x[0-9a-f]+|0), \+(0x[0-9a-f]+)\) that node 1 confirmed \(crc32c "
              r"(0x[0-9a-f]+)\) CHANGED afterwards \(crc32c (0x[0-9a-f]+) now\)", bout)
check(m and int(m.group(1), 16) <= fg["offset"] and
      fg["offset"] + fg["len"] <= int(m.group(1), 16) + int(m.group(2), 16),
      f"node 2 names the range node 1 confirmed, holding the forged +{fg['offset']:#x}")
whole = m and int(m.group(1), 16) == 0 and int(m.group(2), 16) == n2["mem_size"]
check(m and int(m.group(4), 16) == n2["mem_crc32c"] and
      (not whole or int(m.group(3), 16) == n1["shadow_crc32c"]),
      "node 2 names both CRCs: what it answered (node 1's shadow's, for the whole memory) "
      "and what it holds now (its --json)")
check(n2.get("digests", {}).get("changed") == 1, f"node 2's digests: {n2.get('digests')}")
check(n2.get("master_abort_range") == 1 and n2.get("posted_dropped") == 1 and
      re.search(r"refused: .*outside the exported memory 1, posted writes dropped 1", bout),
      f"node 2 counts the write outside its memory ({fg['outside']:#x}), acked and dropped: "
      f"master_abort_range {n2.get('master_abort_range')}, posted_dropped "
      f"{n2.get('posted_dropped')}, and says so in its summary")
check(re.search(r"RESULT: FAIL", bout) and not re.search(r"RESULT: PASS", bout) and
      "memory differs across processes" in bout and open("b.rc").read().strip() == "1",
      "node 2: RESULT: FAIL for memory that differs across processes (no PASS), exit status 1")
# node 1 confirmed node 2's memory before the forgery; its final check at
# the end of its run finds the range changed and fails its run too
pc = n1.get("peer_check", {})
check(pc.get("state") == "differs" and pc.get("final") == "answered" and pc.get("changed") == 1,
      f"node 1's final check of node 2's memory found the range changed: {pc}")
m1 = re.search(r"node 2's memory \[\+(0x[0-9a-f]+|0), \+(0x[0-9a-f]+)\) CHANGED after "
               r"confirmation: crc32c (0x[0-9a-f]+) there now, (0x[0-9a-f]+) here", aout)
check(m1 and m and m1.group(1) == m.group(1) and m1.group(2) == m.group(2),
      "node 1 names the same range as node 2")
check(m1 and int(m1.group(3), 16) == int(m.group(4), 16) and
      int(m1.group(4), 16) == int(m.group(3), 16),
      "node 1 names both CRCs: node 2's memory now (what node 2 holds) and its shadow "
      "(what node 2 answered first)")
check(re.search(r"RESULT: FAIL", aout) and not re.search(r"RESULT: PASS", aout) and
      "memory differs across processes" in aout and open("a.rc").read().strip() == "1",
      "node 1: RESULT: FAIL for memory that differs across processes (no PASS), exit status 1")
done()
PY
ok "a posted write forged after the peer's last access: both runs FAIL naming the range"
