#!/usr/bin/env bash
# htoe-bridge on other ethdevs (suite 'bridge'): the data path does not care
# what a port is.
#  - net_null (config/null-port.ini, hot-plugged from devargs): every frame
#    it fabricates is refused by the bridge and counted; exit 0.
#  - net_pcap: node 2 alone, fed with the frames node 1 sent in a demo run
#    (rx_pcap), answers them: its responses land in tx_pcap, addressed to
#    node 1, EtherType 0x88B5.
#  - a hub (in-process switch, [port N] hub = on): two nodes write to the
#    hub's node and a third to one of them through it, all verified.
#   test_bridge_ports.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2
. "$(dirname "$0")/lib.sh"
LCORES=0

# net_null
rc=0
timeout -k 10 120 "$BRIDGE" $(eal) -- --config "$SRC/config/null-port.ini" --duration 1 \
  --stats 0 --json >"$TMP/null.out" 2>"$TMP/null.err" || rc=$?
cat "$TMP/null.out"
[ "$rc" -eq 0 ] || { cat "$TMP/null.err" >&2; fail "net_null: exit status $rc"; }
grep -q "port 0 up: net_null0" "$TMP/null.out" || fail "net_null: port not up"
rx=$(json_get "$TMP/null.out" frames_rx)
[ "$rx" -gt 1000 ] || fail "net_null: only $rx frames received"
grep -q "rx $rx (refused by the bridge $rx)" "$TMP/null.out" || fail "net_null: not all refused"
ok "net_null: $rx frames received and refused"

# a hub: nodes 1 and 2 on lcore 0 write to node 9 on lcore 1 through [port 9]
# hub = on, node 3 (lcore 0) to node 1 through the same hub; every completion
# verified, every memory what its writers wrote
cat >"$TMP/hub.ini" <<INI
[global]
stats_interval = 0
[port 1]
crossover = 9
[port 2]
crossover = 9
[port 3]
crossover = 9
[port 9]
hub = on
[node 1]
port = 1
lcore = 0
[node 2]
port = 2
lcore = 0
[node 3]
port = 3
lcore = 0
[node 9]
port = 9
lcore = 1
[map]
mask = 0xFFFF00000000
[workload]
target = 9
ops = 2000
size = 16K
[workload 1]
base = 0x900000000
[workload 2]
base = 0x900004000
[workload 3]
target = 1
base = 0x100000000
INI
LCORES=0-1
rc=0
timeout -k 10 240 "$BRIDGE" $(eal) -- --config "$TMP/hub.ini" --json >"$TMP/hub.out" \
  2>"$TMP/hub.err" || rc=$?
cat "$TMP/hub.out"
[ "$rc" -eq 0 ] || { cat "$TMP/hub.err" >&2; fail "hub: exit status $rc"; }
grep -q "port 9 up: htoe_hub9" "$TMP/hub.out" || fail "hub: port 9 not up"
grep '^{' "$TMP/hub.out" | tail -1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = {x["id"]: x for x in d["per_node"]}
# 2000 random ops and the read-back sweep of its 16 KiB (256 reads of 64 B) each
assert [n[i]["ops"] for i in (1, 2, 3)] == [2256] * 3, d["per_node"]
# node 9 served the reads and writes of nodes 1 and 2 (flush and fence do not
# reach it), node 1 those of node 3: member to member through the hub
assert 2 * 256 < n[9]["to_target"] <= 2 * 2256, n[9]
assert 256 < n[1]["to_target"] <= 2256, n[1]
assert sorted(v["peer"] for v in n[9]["vl"] if v["rx_pkts_posted"] > 0) == [1, 2], n[9]
assert [v["peer"] for v in n[1]["vl"] if v["rx_pkts_posted"] > 0] == [3], n[1]
# no control message was refused for a full CTRL queue (the field is there)
assert all(v["ctrl_refused"] == 0 for i in n for v in n[i]["vl"]), d["per_node"]
# every frame reached the node it was for
for i in (1, 2, 3, 9):
    assert n[i]["drops"]["not_for_us"] == 0, n[i]
for i in (1, 2, 3):
    assert n[i]["shadow_crc32c"] > 0 and n[i]["wl_size"] == 16384, n[i]
assert d["verified"] == d["completions"] > 3 * 256 and d["mismatches"] == 0, d
assert d["errors"] == 0 and d["resets"] == 0, d
# the hub switched every frame to a node: none refused, none arrived elsewhere
assert d["tx_refused"] == 0, d
' || fail "hub: not every node verified its writes"
grep -q "RESULT: PASS.*memory images identical" "$TMP/hub.out" || fail "hub: no PASS"
ok "hub: nodes 1, 2 -> 9 and 3 -> 1 through [port 9] hub = on, every completion verified"
LCORES=0

# net_pcap: record node 1's frames, replay them to node 2
command -v tshark >/dev/null || { echo "SKIP: no tshark for the net_pcap part"; exit 0; }
LCORES=0-1
timeout -k 10 240 "$BRIDGE" $(eal) -- --transactions 2000 --stats 0 --capture "$TMP/cap" \
  >"$TMP/demo.out" 2>&1 || { cat "$TMP/demo.out"; fail "recording run failed"; }
in=$(tshark -r "$TMP/cap/port0-tx.pcap" 2>/dev/null | wc -l)
pcap_node2_ini "$TMP/pcap.ini" "$TMP/cap/port0-tx.pcap" "$TMP/answers.pcap"
LCORES=0
rc=0
timeout -k 10 120 "$BRIDGE" $(eal) -- --config "$TMP/pcap.ini" --duration 1 --stats 0 --json \
  >"$TMP/pcap.out" 2>"$TMP/pcap.err" || rc=$?
cat "$TMP/pcap.out"
[ "$rc" -eq 0 ] || { cat "$TMP/pcap.err" >&2; fail "net_pcap: exit status $rc"; }
grep -q "port 0 up: net_pcap0" "$TMP/pcap.out" || fail "net_pcap: port not up"
rx=$(json_get "$TMP/pcap.out" frames_rx)
[ "$rx" -eq "$in" ] || fail "net_pcap: $rx frames received, the file has $in"
out=$(tshark -r "$TMP/answers.pcap" -Y 'eth.type == 0x88b5 && eth.dst == 02:48:54:00:00:01 && eth.src == 02:48:54:00:00:02' 2>/dev/null | wc -l)
[ "$out" -gt 0 ] || fail "net_pcap: no answer from node 2 in tx_pcap"
ok "net_pcap: node 2 read $rx frames and sent $out answers to node 1"
