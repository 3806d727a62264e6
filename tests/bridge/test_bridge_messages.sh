#!/usr/bin/env bash
# Messages that say what is wrong (suite 'bridge').
#   test_bridge_messages.sh BRIDGE SRC MODE
#   peer    a bridge whose memif socket has no other end says once that its
#           peer is not connected; when the peer starts, once that it answers;
#           it polls adaptively ([global] poll): it slept while it waited
#   device  a misspelled driver name, a missing interface, an absent PCI
#           device: exit 2 and a message naming the device and the likely
#           cause (not only "Bad address" / "Operation not permitted")
# No timed assertions: the waits below are watchdogs.
BRIDGE=$1 SRC=$2 MODE=$3
. "$(dirname "$0")/lib.sh"

# wait_for FILE PATTERN SECONDS: until PATTERN appears in FILE (watchdog)
wait_for() {
  local deadline=$((SECONDS + $3))
  until grep -q "$2" "$1" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$1"; fail "no '$2' after $3 s"; }
    sleep 0.2
  done
}

case "$MODE" in
peer)
  SOCK="$TMP/memif.sock"
  dev() { echo "port 0.dev=net_memif0,role=$1,id=0,socket=$SOCK,socket-abstract=no"; }
  # a polls adaptively: it sleeps while it waits for its peer, and still serves
  start_bridge a "$BRIDGE" $(eal_proc a 0 shconf) -- --config "$SRC/config/memif-a.ini" \
    --set "$(dev server)" --set global.poll=adaptive --transactions 2000 --json
  wait_for "$TMP/a.out" "peer node 2 not connected" 60
  grep -q "peer node 2 not connected: no frame from it in [0-9.]* s on port 0 (net_memif0)" \
    "$TMP/a.out" || fail "the message does not name the peer and the port"
  start_bridge b "$BRIDGE" $(eal_proc b 1 shconf) -- --config "$SRC/config/memif-b.ini" \
    --set "$(dev client)" --transactions 2000 --json
  wait_for "$TMP/a.out" "peer node 2 answers again" 60
  stop_when_done 240
  check_bridges a b
  [ "$(grep -c "peer node 2 not connected" "$TMP/a.out")" = 1 ] || fail "said more than once"
  [ "$(grep -c "peer node 2 answers again" "$TMP/a.out")" = 1 ] || fail "said more than once"
  grep '^{' "$TMP/a.out" | tail -1 | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['poll'] == 'adaptive' and j['lcores'][0]['sleeps'] > 0, j['lcores']
" || fail "a: adaptive polling did not sleep while it waited for its peer"
  ok "no peer: said once; the peer came: said once; then verified"
  ;;
device)
  C="$SRC/config/null-port.ini"
  # dev DEVARGS EXPECTED...: exit 2 and every EXPECTED in the message
  dev() {
    local d=$1 rc=0
    shift
    timeout 240 "$BRIDGE" $(eal) -- --config "$C" --check --set "port 0.dev=$d" \
      >"$TMP/out" 2>&1 || rc=$?
    cat "$TMP/out"
    [ "$rc" = 2 ] || fail "$d: exit status $rc, expected 2"
    grep -q "port 0\] dev = '$d'" "$TMP/out" || fail "$d: the message does not name the device"
    for e in "$@"; do grep -qF -- "$e" "$TMP/out" || fail "$d: no '$e'"; done
  }
  dev net_nul0 "no driver of this DPDK is called 'net_nul'" "did you mean net_null?" \
    "virtual-device ethdev drivers: " "net_memif" "net_ring"
  dev nosuchdrv0 "no driver of this DPDK is called 'nosuchdrv'"
  dev "net_af_packet0,iface=htoe-nosuch9" "there is no network interface 'htoe-nosuch9'"
  dev "0000:7f:1f.7" "there is no PCI device 0000:7f:1f.7 here"
  ok "device errors name the device and the likely cause"
  ;;
*)
  fail "unknown mode $MODE"
  ;;
esac
