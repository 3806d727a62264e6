#!/usr/bin/env bash
# A peer gone for good (suite 'bridge'): the memif deployment of
# docs/deploy-memif.md (the shipped config/memif-a.ini, node 1, the server,
# and config/memif-b.ini, node 2, the client, both with their verified
# workloads), the client run with --duration 8. The server is killed with
# SIGKILL 3 s after the client's workload started and never comes back.
#
# The client stops waiting for it: at the end of its duration the drain sees
# node 1 silent while requests to it wait, says that the peer is gone, counts
# its memory as lost, resets the VL (the requests to it are poisoned: lost,
# not errors) and exits by itself with RESULT: PASS for what it verified and
# exit status 0 (nothing differed from what it knew; the loss is counted).
# The time from the end of --duration to the exit is printed (a figure, not an
# assertion; a watchdog only catches a hang).
#   test_bridge_restart_gone.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2 DUR=8
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"

SOCK="$TMP/memif.sock"
dev() { echo "port 0.dev=net_memif0,role=$1,id=0,socket=$SOCK,socket-abstract=no"; }
RUN=(--transactions 1000000000 --json)

"$BRIDGE" $(eal_proc a 0 shconf) -- --config "$SRC/config/memif-a.ini" --set "$(dev server)" \
  "${RUN[@]}" > "$TMP/a.out" 2>&1 &
A=$!
trap 'kill -KILL $A 2>/dev/null || true; cleanup' EXIT
for _ in $(seq 1200); do [ -S "$SOCK" ] || ! kill -0 $A 2>/dev/null && break; sleep 0.1; done
[ -S "$SOCK" ] || { cat "$TMP/a.out"; fail "the memif server did not open $SOCK"; }
start_bridge b "$BRIDGE" $(eal_proc b 1 shconf) -- --config "$SRC/config/memif-b.ini" \
  --set "$(dev client)" "${RUN[@]}" --duration "$DUR"
wait_for_line b '^\[ *[0-9.]* s\] ops [1-9]' 60 || { cat "$TMP/b.out"; fail "node 2's workload did not start"; }
sleep 2
kill -9 $A
wait $A 2>/dev/null || true
# the client ends by itself; the watchdog only catches a hang
rc=0
for _ in $(seq 600); do kill -0 "${BR_PIDS[0]}" 2>/dev/null || break; sleep 0.1; done
kill -0 "${BR_PIDS[0]}" 2>/dev/null && { cat "$TMP/b.out"; fail "node 2 did not exit 60 s after its peer died"; }
wait "${BR_PIDS[0]}" || rc=$?
BR_PIDS=()
cat "$TMP/b.out"
[ "$rc" = 0 ] || fail "node 2: exit status $rc"
grep -q "^htoe-bridge: node 2: peer node 1 is gone (nothing from it for [0-9.]* s while the node waited on it): its memory \[0x100000000, 0x100010000) is lost" "$TMP/b.out" ||
  fail "node 2 does not say that node 1 is gone, with the range lost"
grep -q "^htoe-bridge: RESULT: PASS: all [0-9]* completions verified, 0 mismatches, 0 errors; .*node 2: peer node 1 gone, its memory lost$" "$TMP/b.out" ||
  fail "node 2's RESULT does not say PASS and name the gone peer"
grep -q "not quiescent after drain_timeout" "$TMP/b.out" && fail "node 2 waited for drain_timeout"
(cd "$TMP" && python3 - "$HERE" "$DUR" <<'PY') || fail "node 2's summary does not check out"
import sys
sys.path.insert(0, sys.argv[1])
from summary_check import last_json, check, done
b = last_json("b")
check(b["verified"] > 0 and b["mismatches"] == 0 and b["errors"] == 0 and b["unexpected"] == 0
      and not b["incomplete"], f"{b['verified']} verified, {b['mismatches']} mismatches, "
      f"{b['errors']} errors, incomplete {b['incomplete']}")
check(b["verified"] + b["lost_poisoned"] == b["completions"],
      f"{b['verified']} verified + {b['lost_poisoned']} poisoned by a loss = {b['completions']}")
check(b["peers_gone"] == 1 and b["lost_restart"] == 1,
      f"{b['peers_gone']} peer gone, {b['lost_restart']} range lost")
# a figure, not an assertion
print(f"info: exit {b['run_s'] - float(sys.argv[2]):.3f} s after --duration {sys.argv[2]}")
done()
PY
ok "a node whose peer is gone for good ends after its duration: PASS for what it verified, the loss counted"
