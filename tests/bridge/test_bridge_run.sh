#!/usr/bin/env bash
# htoe-bridge runs that must verify everything (suite 'bridge').
#   test_bridge_run.sh BRIDGE SRCDIR MODE
# MODE: demo        the embedded two-node demo, 20000 transactions, 2 lcores
#       lossy       the same with 1% loss and 1% reordering (--set impair.*)
#       impaired    config/two-node-impaired.ini: loss, bursts, reordering,
#                   duplication, corruption, delay, both directions
#       one-lcore   both nodes polled by one lcore (-l 0)
#       mask        config/mask-map.ini: the address map in mask/shift mode
#       duration    --duration 1 with unbounded workloads: stop, sweep, drain
#       adaptive    the demo with [global] poll = adaptive: verified, and the
#                   JSON gives both lcores' busy and CPU shares
#       dup         half the frames duplicated in both directions, more duplicates
#                   than the mbuf pool holds (8191 mbufs): the driver's bulk
#                   frees and TX stash leak none (a duplicate received shares
#                   its mbuf, refcnt 2; a duplicate sent is a copy)
#       valgrind    under valgrind memcheck (one lcore, --no-telemetry, a
#                   small run): no error, no definite leak
BRIDGE=$1 SRC=$2 MODE=$3
. "$(dirname "$0")/lib.sh"

args=(--stats 0.5 --json)
case "$MODE" in
  demo) args+=(--transactions 20000) ;;
  lossy) args+=(--transactions 20000 --set impair.loss=1% --set impair.reorder=1%) ;;
  impaired) args+=(--config "$SRC/config/two-node-impaired.ini" --transactions 20000) ;;
  one-lcore) LCORES=0; args+=(--transactions 20000) ;;
  mask) args+=(--config "$SRC/config/mask-map.ini" --transactions 20000) ;;
  duration) args+=(--duration 1 --set workload.ops=1000000000) ;;
  adaptive) args+=(--transactions 20000 --set global.poll=adaptive) ;;
  dup) args+=(--transactions 600000 --set impair.dup=50% --set impair.direction=both
       --set global.mbufs=4096) ;;
  valgrind)
    command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }
    LCORES=0
    args+=(--transactions 500 --set bridge.rto=5ms --set workload.size=4K) ;;
  *) fail "unknown mode $MODE" ;;
esac

rc=0
if [ "$MODE" = valgrind ]; then
  # DPDK's control threads leave "possibly lost" TLS blocks: only definite leaks count
  timeout -k 10 400 valgrind -q --error-exitcode=9 --leak-check=full \
    --errors-for-leak-kinds=definite "$BRIDGE" $(eal) --no-telemetry -- "${args[@]}" \
    >"$TMP/out" 2>"$TMP/err" || rc=$?
else
  timeout -k 10 240 "$BRIDGE" $(eal) -- "${args[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
fi
cat "$TMP/out"
[ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "$MODE: exit status $rc"; }
grep -q "RESULT: PASS: all .* completions verified" "$TMP/out" || fail "$MODE: no PASS line"
grep -q "memory images identical" "$TMP/out" || fail "$MODE: memory images not checked"
grep -q '^\[ *[0-9.]* s\] ops' "$TMP/out" || fail "$MODE: no periodic stats line"
ops=$(json_get "$TMP/out" ops)
verified=$(json_get "$TMP/out" verified)
completions=$(json_get "$TMP/out" completions)
[ "$(json_get "$TMP/out" mismatches)" -eq 0 ] || fail "$MODE: mismatches"
[ "$(json_get "$TMP/out" errors)" -eq 0 ] || fail "$MODE: error responses"
[ "$(json_get "$TMP/out" poisoned)" -eq 0 ] || fail "$MODE: poisoned responses"
[ "$verified" -eq "$completions" ] && [ "$verified" -gt 0 ] || fail "$MODE: verified $verified of $completions"
case "$MODE" in
  duration) [ "$ops" -gt 2048 ] || fail "duration: only $ops ops" ;;
  valgrind) [ "$ops" -ge 500 ] || fail "valgrind: $ops ops < 500" ;;
  *) [ "$ops" -ge 20000 ] || fail "$MODE: $ops ops < 20000" ;;
esac
case "$MODE" in
  adaptive)
    grep '^{' "$TMP/out" | tail -1 | python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j['poll'] == 'adaptive', j['poll']
assert sorted(l['lcore'] for l in j['lcores']) == [0, 1], j['lcores']
assert all(0 <= l['busy'] <= 1 and 0 < l['cpu'] <= 1 for l in j['lcores']), j['lcores']
" || fail "adaptive: the JSON has no per-lcore poll figures"
    grep -q "| busy lc0 [0-9]*% lc1 [0-9]*%" "$TMP/out" || fail "adaptive: no busy share in the stats line"
    ;;
  lossy|impaired)
    [ "$(json_get "$TMP/out" impair_dropped)" -gt 0 ] || fail "$MODE: nothing dropped"
    [ "$(json_get "$TMP/out" impair_reordered)" -gt 0 ] || fail "$MODE: nothing reordered"
    [ "$(json_get "$TMP/out" retransmits)" -gt 0 ] || fail "$MODE: no retransmission"
    ;;
esac
if [ "$MODE" = dup ]; then
  # global.mbufs = 4096: the pool has 8191 mbufs (the smallest the bridge makes)
  dups=$(json_get "$TMP/out" impair_duplicated)
  [ "$dups" -gt 16382 ] || fail "dup: only $dups duplicates (want more than twice the pool)"
  [ "$(json_get "$TMP/out" alloc_fail)" -eq 0 ] || fail "dup: mbuf allocation failures (a leak)"
fi
if [ "$MODE" = impaired ]; then
  [ "$(json_get "$TMP/out" impair_duplicated)" -gt 0 ] || fail "impaired: nothing duplicated"
fi
ok "$MODE: $ops ops, $verified completions verified"
