#!/usr/bin/env bash
# A peer that is only descheduled is not given up (suite 'bridge'): the memif
# deployment of docs/deploy-memif.md (config/memif-a.ini, node 1, the server,
# and config/memif-b.ini, node 2, the client, both with their verified
# workloads), the client run with --duration. Shortly before the client's
# duration ends the server is stopped (SIGSTOP) for 3 s, as a poller
# descheduled by a busy host is, then continued: the client's drain waits on
# it (its read-back sweep reads node 1's memory).
#   pause  [global] peer_dead_timeout at its default (5 s): the client waits,
#          node 1 answers again and the client ends with RESULT: PASS, no peer
#          gone, nothing lost;
#   dead   the same with --set global.peer_dead_timeout=1s: the client gives
#          node 1 up during the pause (peer gone, its memory lost), as it
#          would a dead peer, and ends with RESULT: PASS for what it verified.
# The sleeps place the pause; the waits are watchdogs only.
#   test_bridge_peer_pause.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2 DUR=6 PAUSE=3
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

SOCK="$TMP/memif.sock"
dev() { echo "port 0.dev=net_memif0,role=$1,id=0,socket=$SOCK,socket-abstract=no"; }
RUN=(--transactions 1000000000 --json)

# run CASE [client options...]: one client run against a server paused once
run() {
  local case=$1 rc=0
  shift
  rm -f "$SOCK"
  start_bridge "a-$case" "$BRIDGE" $(eal_proc "a-$case" 0 shconf) -- \
    --config "$SRC/config/memif-a.ini" --set "$(dev server)" "${RUN[@]}"
  for _ in $(seq 1200); do [ -S "$SOCK" ] || ! kill -0 "${BR_PIDS[0]}" 2>/dev/null && break; sleep 0.1; done
  [ -S "$SOCK" ] || { cat "$TMP/a-$case.out"; fail "$case: the memif server did not open $SOCK"; }
  start_bridge "b-$case" "$BRIDGE" $(eal_proc "b-$case" 1 shconf) -- \
    --config "$SRC/config/memif-b.ini" --set "$(dev client)" "${RUN[@]}" --duration "$DUR" "$@"
  wait_for_line "b-$case" '^\[ *[0-9.]* s\] ops [1-9]' 60 ||
    { cat "$TMP/b-$case.out"; fail "$case: node 2's workload did not start"; }
  # the first stats line comes 1-2 s into the run: the pause starts 0-1 s
  # before the end of the client's duration and lasts into its drain
  sleep $((DUR - 2))
  kill -STOP "${BR_PIDS[0]}"
  sleep "$PAUSE"
  kill -CONT "${BR_PIDS[0]}"
  for _ in $(seq 600); do kill -0 "${BR_PIDS[1]}" 2>/dev/null || break; sleep 0.1; done
  kill -0 "${BR_PIDS[1]}" 2>/dev/null && { cat "$TMP/b-$case.out"; fail "$case: node 2 did not exit"; }
  wait "${BR_PIDS[1]}" || rc=$?
  # the server serves on (exit_when_done = off): SIGINT, then its summary
  kill -INT "${BR_PIDS[0]}" 2>/dev/null || true
  wait "${BR_PIDS[0]}" || true
  BR_PIDS=()
  BR_NAMES=()
  cat "$TMP/b-$case.out"
  [ "$rc" = 0 ] || fail "$case: node 2: exit status $rc"
}

run pause
grep -q "is gone" "$TMP/b-pause.out" && fail "pause: node 2 gave up node 1, paused for $PAUSE s only"
grep -q "^htoe-bridge: RESULT: PASS: all [0-9]* completions verified, 0 mismatches, 0 errors" \
  "$TMP/b-pause.out" || fail "pause: node 2's RESULT is not PASS"
(cd "$TMP" && python3 - "$HERE" <<'PY') || fail "pause: node 2's summary does not check out"
import sys
sys.path.insert(0, sys.argv[1])
from summary_check import last_json, check, done
b = last_json("b-pause")
check(b["peers_gone"] == 0 and b["lost_restart"] == 0 and b["lost_poisoned"] == 0,
      f"{b['peers_gone']} peers gone, {b['lost_restart']} ranges lost, "
      f"{b['lost_poisoned']} poisoned by a loss")
check(b["verified"] == b["completions"] and b["verified"] > 0 and b["mismatches"] == 0
      and b["errors"] == 0 and not b["incomplete"],
      f"{b['verified']} of {b['completions']} verified, {b['mismatches']} mismatches, "
      f"{b['errors']} errors, incomplete {b['incomplete']}")
done()
PY

run dead --set global.peer_dead_timeout=1s
grep -q "^htoe-bridge: node 2: peer node 1 is gone (nothing from it for [0-9.]* s while the node waited on it): its memory \[0x100000000, 0x100010000) is lost" \
  "$TMP/b-dead.out" || fail "dead: node 2 did not give up node 1 after 1 s of silence"
grep -q "^htoe-bridge: RESULT: PASS: .*node 2: peer node 1 gone, its memory lost$" "$TMP/b-dead.out" ||
  fail "dead: node 2's RESULT does not say PASS and name the gone peer"
[ "$(json_get "$TMP/b-dead.out" peers_gone)" = 1 ] || fail "dead: peers_gone is not 1"
ok "a peer paused for $PAUSE s is waited for (peer_dead_timeout 5 s) and given up with peer_dead_timeout 1 s"
