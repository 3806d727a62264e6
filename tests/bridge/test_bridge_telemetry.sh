#!/usr/bin/env bash
# htoe-bridge telemetry and shutdown (suite 'bridge'): while the demo runs,
# /htoe/stats, /htoe/vl and /htoe/map answer through dpdk-telemetry.py with
# live counters; SIGINT then finishes the operations in flight and the
# program prints its final summary and exits 0.
#   test_bridge_telemetry.sh BRIDGE
BRIDGE=$1
. "$(dirname "$0")/lib.sh"
TELE=(/usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$PREFIX")
[ -x /usr/bin/dpdk-telemetry.py ] || { echo "SKIP: no dpdk-telemetry.py"; exit 77; }

# in the background without timeout(1) (which would put it in another
# process group); a watchdog bounds it instead
"$BRIDGE" $(eal) -- --stats 1 --set workload.ops=1000000000 >"$TMP/out" 2>"$TMP/err" &
pid=$!
BR_PIDS+=("$pid")
watchdog "$pid" 280

# query CMD: the reply line. DPDK's telemetry serves at most 10 clients and
# closes a new connection at once while 10 are counted; a client's slot is
# freed by its handler thread, which shares a CPU with the busy-polling
# lcores and on a loaded host runs seconds after the client left: a few
# quick queries in a row then find no slot. So it tries again until a reply
# comes, bounded against a hang (120 s) and by the bridge being alive.
query() {
  local r deadline=$((SECONDS + 120))
  while :; do
    r=$(printf '%s\n' "$1" | "${TELE[@]}" 2>&1 | grep '^{' | head -1) || true
    [ -n "$r" ] && { echo "$r"; return 0; }
    kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.2
  done
  echo "telemetry: no reply to $1" >&2
  return 1
}
# field CMD EXPR: a value of a reply (python expression on the reply dict r)
field() {
  local j
  j=$(query "$1") || return 1
  python3 -c "import json,sys; r=json.loads(sys.argv[1])['${1%%,*}']; print($2)" "$j" ||
    { echo "telemetry: cannot read $2 from $j" >&2; return 1; }
}

sock=""
for _ in $(seq 300); do
  for d in $(runtime_dirs); do [ -S "$d/dpdk_telemetry.v2" ] && sock="$d/dpdk_telemetry.v2"; done
  [ -n "$sock" ] && grep -q "node 2 " "$TMP/out" 2>/dev/null && break
  kill -0 "$pid" 2>/dev/null || { cat "$TMP/out" "$TMP/err"; fail "the bridge exited early"; }
  sleep 0.1
done
[ -n "$sock" ] || fail "no telemetry socket"

ops1=0
for _ in $(seq 100); do
  ops1=$(field /htoe/stats "r['ops']" || echo 0)
  [ "$ops1" -gt 0 ] && break
  sleep 0.1
done
[ "$ops1" -gt 0 ] || fail "/htoe/stats: no ops"
ok "/htoe/stats: ops $ops1"
[ "$(field /htoe/stats "r['phase']")" = run ] || fail "/htoe/stats: phase"
[ "$(field /htoe/stats "r['nodes']")" -eq 2 ] || fail "/htoe/stats: nodes"
[ "$(field /htoe/stats "r['mismatches']")" -eq 0 ] || fail "/htoe/stats: mismatches"
[ "$(field /htoe/stats,2 "r['node']")" -eq 2 ] || fail "/htoe/stats,2"
[ "$(field /htoe/stats,2 "r['nodes']")" -eq 1 ] || fail "/htoe/stats,2: one node"
# bad parameters: an error object saying what is wrong, not null
[ "$(field /htoe/stats,9 "r['error']")" = "no node 9 in this process (nodes: 1, 2)" ] ||
  fail "/htoe/stats,9: $(query /htoe/stats,9)"
[ "$(field /htoe/vl,2,9 "r['error']")" = "node 2 has no VL to node 9" ] ||
  fail "/htoe/vl,2,9: $(query /htoe/vl,2,9)"
field /htoe/map,x "r['error']" | grep -q "^bad parameters 'x'" || fail "/htoe/map,x: $(query /htoe/map,x)"
field /htoe/macsec "r['error']" | grep -q "no node with MACsec" || fail "/htoe/macsec: $(query /htoe/macsec)"
ok "bad parameters answer {\"error\": ...}"
[ "$(field /htoe/vl,1 "r['vl_2']['up']")" -eq 1 ] || fail "/htoe/vl,1: VL to node 2 not up"
[ "$(field /htoe/vl,2 "r['vls']")" -eq 1 ] || fail "/htoe/vl,2: vls"
[ "$(field /htoe/vl,2,1 "r['peer']")" -eq 1 ] || fail "/htoe/vl,2,1: peer"
field /htoe/vl,2,1 "r['drop_crc']" >/dev/null || fail "/htoe/vl,2,1: no drop_crc"
[ "$(field /htoe/vl,2,1 "r['ctrl_refused']")" -eq 0 ] || fail "/htoe/vl,2,1: ctrl_refused"
[ "$(field /htoe/vl,2,1 "r['tx_frames'] > 0")" = True ] || fail "/htoe/vl,2,1: tx_frames"
[ "$(field /htoe/map,2 "r['mode']")" = ranges ] || fail "/htoe/map,2: mode"
field /htoe/map,2 "r['ranges'][0]" | grep -q "range1" || fail "/htoe/map,2: range labels"
field /htoe/map "r['peers'][0]" | grep -q "node 2 mac 02:48:54:00:00:02" || fail "/htoe/map: peers"
query /help,/htoe/vl | grep -q "Per-VL counters" || fail "/help,/htoe/vl"
ok "/htoe/vl, /htoe/map, /help answer"

sleep 1.2
ops2=$(field /htoe/stats "r['ops']")
[ "$ops2" -gt "$ops1" ] || fail "/htoe/stats: ops do not grow ($ops1 -> $ops2)"
ok "/htoe/stats live: ops $ops1 -> $ops2"

kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
BR_PIDS=()
stop_watchdogs
cat "$TMP/out"
[ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "exit status $rc after SIGINT"; }
grep -q "signal: finishing" "$TMP/err" || fail "no signal message"
grep -q "RESULT: PASS" "$TMP/out" || fail "no PASS after SIGINT"
ok "SIGINT: clean shutdown with a verified summary"
