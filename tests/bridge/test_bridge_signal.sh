#!/usr/bin/env bash
# A first SIGINT drains, also once --duration has run out (suite 'bridge'):
# node 1 of config/memif-a.ini alone (its peer never comes, so the drain
# that --duration began cannot end by itself); the first SIGINT after the
# duration says it finishes the operations in flight, the second quits.
#   test_bridge_signal.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2
. "$(dirname "$0")/lib.sh"

start_bridge a "$BRIDGE" $(eal_proc a 0 shconf) -- --config "$SRC/config/memif-a.ini" \
  --set "port 0.dev=net_memif0,role=server,id=0,socket=$TMP/memif.sock,socket-abstract=no" \
  --duration 1 --stats 0
# "not connected" comes 2 s after the first frame: the 1 s duration is over
rc=0; wait_for_line a "peer node 2 not connected" 120 || rc=$?
[ $rc = 0 ] || { cat "$TMP/a.out"; fail "no 'not connected' message (wait_for_line: $rc)"; }
kill -INT "${BR_PIDS[0]}"
rc=0; wait_for_line a "signal: finishing the operations in flight" 60 || rc=$?
cat "$TMP/a.out"
grep -q "second signal" "$TMP/a.out" && fail "the first SIGINT after --duration was taken as a second one"
[ $rc = 0 ] || fail "the first SIGINT after --duration did not start a drain (wait_for_line: $rc)"
kill -INT "${BR_PIDS[0]}" 2>/dev/null || true
rc=0; wait "${BR_PIDS[0]}" || rc=$?
BR_PIDS=()
grep -q "second signal: quitting now" "$TMP/a.out" || grep -q "not quiescent" "$TMP/a.out" ||
  fail "the second SIGINT did not end the run"
ok "the first SIGINT after --duration drains, the second quits (exit $rc)"
