#!/usr/bin/env bash
# A restarted node is seen at once (suite 'bridge'): two htoe-bridge
# processes over memif (config/memif-a.ini node 1, the survivor, with its own
# verified workload on node 2 as the guide runs it; config/memif-b.ini node 2). Node 2's first process starts before
# its memif server (it tries again until the server accepts: [port 0]
# connect_timeout is a hang guard here, for as long as the server takes to
# start on a loaded host, not the default 10 s), runs a verified
# workload on the first half of node 1's memory and is killed with SIGKILL;
# a new process of node 2 (a new incarnation from getrandom) runs a verified
# workload on the second half. Checked from the survivor's --json (numbers
# the bridge itself records, no wall clock in the shell): its VL to node 2
# saw exactly one new incarnation and was reset exactly once for it (how long
# the VL took to come up again, restart_up_ns, is printed: a figure, not an
# assertion); the restarted node's workload verified every completion. The
# survivor's lcore may be inside a memif burst when the dead client's shared
# memory is unmapped: it must survive that (run under load to see it).
#   test_bridge_restart.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-3000}
. "$(dirname "$0")/lib.sh"

SOCK="$TMP/memif.sock"
dev() { echo "port 0.dev=net_memif0,role=$1,id=0,socket=$SOCK,socket-abstract=no"; }
# the survivor runs its verified workload on node 2's memory, as the guide
# does (its default transactions; it then serves its memory until stopped)
cp "$SRC/config/memif-a.ini" "$TMP/a.ini"

# node 2, first life, started before its server: the client tries again
# until the server's socket accepts (the first half of node 1's memory,
# then killed)
"$BRIDGE" $(eal_proc b1 1 shconf) -- --config "$SRC/config/memif-b.ini" --set "$(dev client)" \
  --set "workload 2.size=32K" --set "port 0.connect_timeout=600s" --transactions "$N" \
  > "$TMP/b1.out" 2>&1 &
B1=$!
trap 'kill -KILL $B1 2>/dev/null || true; cleanup' EXIT
# pstate PID: where a process that a hang guard gave up on stands
pstate() { ps -o pid,stat,psr,time,etime,wchan:24 -p "$1" || true; }
# the waits below catch hangs only: 240 s each of wall clock (a loaded host
# has descheduled the pollers for 45-58 s at a time)
deadline=$((SECONDS + 240))
until grep -qs "does not accept the connection" "$TMP/b1.out" || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.1; done
grep -q "does not accept the connection" "$TMP/b1.out" || {
  cat "$TMP/b1.out"; pstate $B1; fail "node 2 did not say that it waits for its memif server"; }
start_bridge a "$BRIDGE" $(eal_proc a 0 shconf) -- --config "$TMP/a.ini" \
  --set "$(dev server)" --json
deadline=$((SECONDS + 240))
until [ -S "$SOCK" ] || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.1; done
[ -S "$SOCK" ] || { cat "$TMP/a.out"; pstate "${BR_PIDS[0]}"; fail "the memif server did not open $SOCK"; }

deadline=$((SECONDS + 240))
while [ "$SECONDS" -lt "$deadline" ]; do
  grep -Eq '\| done ([0-9]+)/\1$' "$TMP/b1.out" && break
  kill -0 $B1 2>/dev/null || { cat "$TMP/b1.out"; fail "node 2 (first life) exited"; }
  sleep 0.1
done
grep -Eq '\| done ([0-9]+)/\1$' "$TMP/b1.out" || {
  cat "$TMP/b1.out"; echo "== a"; cat "$TMP/a.out"; pstate "${BR_PIDS[0]}"; pstate $B1
  fail "node 2's first workload not done"; }
kill -9 $B1
wait $B1 2>/dev/null || true

# node 2, second life: a new process, a new incarnation
start_bridge b2 "$BRIDGE" $(eal_proc b2 1 shconf) -- --config "$SRC/config/memif-b.ini" \
  --set "$(dev client)" --set "workload 2.base=0x100008000" --set "workload 2.size=32K" \
  --transactions "$N" --json
# a watchdog, not an assertion: node 2's second workload done, then stop both
deadline=$((SECONDS + 240))
until grep -Eq '\| done ([0-9]+)/\1$' "$TMP/b2.out" 2>/dev/null; do
  kill -0 "${BR_PIDS[1]}" 2>/dev/null || { cat "$TMP/b2.out"; fail "node 2 (second life) exited"; }
  [ "$SECONDS" -lt "$deadline" ] || { tail "$TMP/b2.out"; fail "node 2's second workload not done"; }
  sleep 0.5
done
# the client first, then its server (see stop_when_done in lib.sh)
for i in 1 0; do
  rc=0; kill -INT "${BR_PIDS[$i]}" 2>/dev/null || true
  wait "${BR_PIDS[$i]}" || rc=$?; echo $rc > "$TMP/${BR_NAMES[$i]}.rc"
done
BR_PIDS=()
echo "== a"; cat "$TMP/a.out"; echo "== b2"; cat "$TMP/b2.out"
[ "$(cat "$TMP/b2.rc")" = 0 ] || fail "node 2 (second life): exit status $(cat "$TMP/b2.rc")"
grep -q "RESULT: PASS: all [0-9]* completions verified" "$TMP/b2.out" || fail "node 2: no PASS"
grep -q "peer restarts 1" "$TMP/a.out" || fail "the survivor's summary does not show one peer restart"
grep -q "RESULT: PASS" "$TMP/a.out" || fail "the survivor: no PASS"
# the survivor tells the restart: the peer, both incarnations, node 2's memory as mapped
grep -Eq '^htnode: peer node 2 restarted \(incarnation 0x([0-9a-f]{8}) -> 0x([0-9a-f]{8})\): its memory \[0x200000000, 0x200010000\) is lost \(65536 bytes\)' "$TMP/a.out" ||
  fail "the survivor does not print the restart of node 2 with the range lost"
[ "$(grep -c "^htnode: peer node 2 restarted" "$TMP/a.out")" = 1 ] || fail "the survivor printed the restart more than once"
(cd "$TMP" && python3 - <<'PY') || fail "the survivor's record does not check out"
import json
def last_json(name):
    return json.loads([l for l in open(name + ".out") if l.startswith("{")][-1])
a, b = last_json("a"), last_json("b2")
vl = [v for n in a["per_node"] if n["id"] == 1 for v in n["vl"] if v["peer"] == 2][0]
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(vl["peer_restarts"] == 1, f"survivor: VL to node 2 saw {vl['peer_restarts']} new incarnation(s)")
check(vl["resets"] == 1, f"survivor: VL to node 2 reset {vl['resets']} time(s)")
check(0 < vl["peer_restart_ns"] <= vl["up_ns"],
      f"survivor: detected at {vl['peer_restart_ns']} ns, up at {vl['up_ns']} ns")
# a figure, not an assertion: on a loaded machine a poll gap alone exceeds it
print(f"info: survivor: VL up {vl['restart_up_ns'] / 1e6:.3f} ms after the new "
      f"incarnation's first frame (longest gap between polls {a['gap_max_ns'] / 1e6:.3f} ms)")
check(a["peer_restarts"] == 1, f"survivor: {a['peer_restarts']} peer restarts in all")
check(a["mismatches"] == 0 and a["errors"] == 0 and a["completions"] > 0,
      f"survivor: {a['verified']} of {a['completions']} completions verified")
check(a["lost_restart"] == 1, f"survivor: {a['lost_restart']} range(s) reported lost to a restart")
check(b["verified"] == b["completions"] > 0 and b["mismatches"] == 0 and b["errors"] == 0,
      f"node 2 (second life): {b['verified']} of {b['completions']} completions verified")
exit(0 if ok else 1)
PY
ok "a node killed and restarted is one cold reset at the survivor, and its new workload verifies"
