#!/usr/bin/env bash
# The poll watchdog (HTOE_POLL_WATCHDOG, docs/bridge.md "Stalled pollers"),
# suite 'bridge': the demo with every lcore iteration paused for up to
# 400 ms (the lcore_pause test hook: a sleep inside the iteration) and a
# 50 ms limit. Each lcore's long iterations are reported once with the
# share of CPU the thread had (none: it slept, "off CPU") and its stack,
# taken by the thread itself (the hook's rte_delay_us_sleep is on it); the
# pinned lcore is allowed on every CPU until it begins an iteration, then
# pinned again; that is reported too; the run still verifies. Unset, the watchdog
# only does that (at 0.5 s) and reports nothing; 0: it is not there. A value
# that is not seconds is refused before anything starts (exit 2).
#   test_bridge_watchdog.sh BRIDGE
BRIDGE=$1
. "$(dirname "$0")/lib.sh"

rc=0
HTOE_POLL_WATCHDOG=2x timeout -k 10 60 "$BRIDGE" $(eal) -- --transactions 10 \
  >"$TMP/bad.out" 2>"$TMP/bad.err" || rc=$?
[ "$rc" -eq 2 ] || { cat "$TMP/bad.err" >&2; fail "HTOE_POLL_WATCHDOG=2x: exit $rc, want 2"; }
grep -q "HTOE_POLL_WATCHDOG='2x': not seconds" "$TMP/bad.err" ||
  { cat "$TMP/bad.err" >&2; fail "HTOE_POLL_WATCHDOG=2x: no message naming the variable"; }

rc=0
HTOE_POLL_WATCHDOG=0.05 timeout -k 10 240 "$BRIDGE" $(eal) -- --transactions 100 --stats 0 \
  --set global.lcore_pause=100% --set global.lcore_pause_max=400ms \
  >"$TMP/out" 2>"$TMP/err" || rc=$?
cat "$TMP/out"
[ "$rc" -eq 0 ] || { cat "$TMP/err" >&2; fail "exit status $rc"; }
grep -q "RESULT: PASS" "$TMP/out" || fail "no PASS line"
e=$TMP/err
grep -q "poll watchdog on: a poller that begins no iteration for 0.050 s" "$e" ||
  { cat "$e" >&2; fail "the watchdog did not say it is on"; }
grep -Eq "poll watchdog: lcore [01] \(node [12]\) has begun no iteration of its poll loop for [0-9.]+ s \(limit 0.050 s\); it ran on a CPU [0-9]+ % of the last [0-9.]+ s: off CPU" "$e" ||
  { cat "$e" >&2; fail "no report of a long iteration, off CPU"; }
stacks=$(grep -A8 "its stack" "$e")
grep -q "rte_delay_us_sleep" <<<"$stacks" ||
  { cat "$e" >&2; fail "the reported stack does not show the sleep"; }
grep -Eq "poll watchdog: lcore [01] \(node [12]\): it began an iteration again" "$e" ||
  { cat "$e" >&2; fail "the end of a reported iteration was not said"; }
# each lcore is pinned to one CPU (-l 0-1): off CPU, it is let onto every CPU
# until the iteration ends, then pinned again
if [ "$(nproc)" -ge 2 ]; then
  grep -Eq "poll watchdog: lcore [01] \(node [12]\): not run on its CPU for [0-9.]+ s: allowed on every CPU until it begins an iteration" "$e" ||
    { cat "$e" >&2; fail "a pinned lcore off CPU was not allowed on every CPU"; }
  grep -Eq "poll watchdog: lcore [01] \(node [12]\): it began an iteration again, after [0-9.]+ s at most; pinned again" "$e" ||
    { cat "$e" >&2; fail "a widened lcore was not pinned again"; }
fi
n_rep=$(grep -c 'has begun no iteration' "$e")

# By default (no HTOE_POLL_WATCHDOG) the watchdog only acts, at 0.5 s: a
# pinned lcore that slept longer is allowed on every CPU, then pinned again;
# nothing else is said. HTOE_POLL_WATCHDOG=0: no watchdog, nothing said.
for mode in default off; do
  rc=0
  if [ $mode = default ]; then env=(env -u HTOE_POLL_WATCHDOG); else env=(env HTOE_POLL_WATCHDOG=0); fi
  "${env[@]}" timeout -k 10 240 "$BRIDGE" $(eal) -- --transactions 20 --stats 0 \
    --set global.lcore_pause=100% --set global.lcore_pause_max=1500ms \
    >"$TMP/$mode.out" 2>"$TMP/$mode.err" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$TMP/$mode.out" "$TMP/$mode.err" >&2; fail "$mode: exit status $rc"; }
  grep -q "RESULT: PASS" "$TMP/$mode.out" || { cat "$TMP/$mode.out" >&2; fail "$mode: no PASS line"; }
  grep -Eq "has begun no iteration|its stack|poll watchdog on" "$TMP/$mode.err" &&
    { cat "$TMP/$mode.err" >&2; fail "$mode: a report without HTOE_POLL_WATCHDOG=SECONDS"; }
  if [ $mode = off ] || [ "$(nproc)" -lt 2 ]; then
    grep -q "poll watchdog" "$TMP/$mode.err" && { cat "$TMP/$mode.err" >&2; fail "$mode: the watchdog acted"; }
  else
    grep -Eq "poll watchdog: lcore [01] \(node [12]\): not run on its CPU for [0-9.]+ s: allowed on every CPU" "$TMP/$mode.err" ||
      { cat "$TMP/$mode.err" >&2; fail "default: a pinned lcore off CPU for 0.5 s was not allowed on every CPU"; }
    grep -Eq "it began an iteration again, after [0-9.]+ s at most; pinned again" "$TMP/$mode.err" ||
      { cat "$TMP/$mode.err" >&2; fail "default: a widened lcore was not pinned again"; }
  fi
done
ok "$n_rep long iterations reported with their stacks; by default a pinned lcore off CPU for 0.5 s is let onto every CPU, with HTOE_POLL_WATCHDOG=0 not"
