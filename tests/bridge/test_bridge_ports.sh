#!/usr/bin/env bash
# htoe-bridge on other ethdevs (suite 'bridge'): the data path does not care
# what a port is.
#  - net_null (config/null-port.ini, hot-plugged from devargs): every frame
#    it fabricates is refused by the bridge and counted; exit 0.
#  - net_pcap: node 2 alone, fed with the frames node 1 sent in a demo run
#    (rx_pcap), answers them: its responses land in tx_pcap, addressed to
#    node 1, EtherType 0x88B5.
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
