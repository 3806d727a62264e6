#!/usr/bin/env bash
# htoe-bridge --capture (suite 'bridge'): the demo writes DIR/port<N>-tx.pcap
# and -rx.pcap; tshark reads them, every frame is EtherType 0x88B5, and the
# counts match the bridge's own counters (what port 0 sends, port 1
# receives).   test_bridge_capture.sh BRIDGE
BRIDGE=$1
. "$(dirname "$0")/lib.sh"
command -v tshark >/dev/null || { echo "SKIP: no tshark"; exit 77; }

rc=0
timeout -k 10 240 "$BRIDGE" $(eal) -- --transactions 5000 --stats 0 --json \
  --capture "$TMP/cap" >"$TMP/out" 2>"$TMP/err" || rc=$?
cat "$TMP/out"
[ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "exit status $rc"; }

count() { tshark -r "$1" 2>/dev/null | wc -l; }
for f in port0-tx port0-rx port1-tx port1-rx; do
  [ -s "$TMP/cap/$f.pcap" ] || fail "$f.pcap missing or empty"
  n=$(count "$TMP/cap/$f.pcap")
  h=$(tshark -r "$TMP/cap/$f.pcap" -Y 'eth.type == 0x88b5' 2>/dev/null | wc -l)
  [ "$n" -gt 0 ] || fail "$f.pcap: no frame"
  [ "$n" -eq "$h" ] || fail "$f.pcap: $h of $n frames are EtherType 0x88B5"
  eval "n_${f/-/_}=$n"
  ok "$f.pcap: $n frames, all EtherType 0x88B5"
done
# nanosecond pcap (magic a1b23c4d, little-endian on disk)
magic=$(od -An -tx4 -N4 "$TMP/cap/port0-tx.pcap" | tr -d ' ')
[ "$magic" = a1b23c4d ] || fail "not a nanosecond pcap: magic $magic"
# the sender and the MACs
src=$(tshark -r "$TMP/cap/port0-tx.pcap" -T fields -e eth.src 2>/dev/null | sort -u)
[ "$src" = "02:48:54:00:00:01" ] || fail "port0-tx: source MACs '$src'"

lost=$(json_get "$TMP/out" capture_lost)
tx=$(json_get "$TMP/out" frames_tx)
captured=$(json_get "$TMP/out" captured)
if [ "$lost" -eq 0 ]; then
  [ "$n_port0_tx" -eq "$n_port1_rx" ] || fail "port 0 sent $n_port0_tx, port 1 received $n_port1_rx"
  [ "$n_port1_tx" -eq "$n_port0_rx" ] || fail "port 1 sent $n_port1_tx, port 0 received $n_port0_rx"
  [ $((n_port0_tx + n_port1_tx)) -eq "$tx" ] || fail "pcaps: $((n_port0_tx + n_port1_tx)) tx frames, bridge: $tx"
  [ $((n_port0_tx + n_port1_tx + n_port0_rx + n_port1_rx)) -eq "$captured" ] || fail "captured $captured"
  ok "pcaps match the counters: $tx frames sent"
else
  echo "note: $lost capture copies lost (ring full); counts not compared"
fi
