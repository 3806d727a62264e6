#!/bin/bash
# htoe-dimm end to end (suite 'dimm'): test_dimm_app.sh HTOE_DIMM SRC MODE
#   budgets      in one process, budgets 100/50/25 % of the working set: every
#                run verified, the smaller budgets evict and write back, JSON+PNG;
#                the baselines (userfaultfd round trip, TCP pager) and the runs'
#                ratios to them are in the JSON with positive values
#   lossy        2 % of the frames lost in both directions: still verified
#   outage       both ports drop every frame for 0.5 s mid-workload, with short
#                timers so that the VL is reset: the pager sends the fetches and
#                write-backs the reset hit again, every run is verified
#   remote-lost  the exporter stops answering mid-run: a clear error, exit 1,
#                and no result taken from memory that did not come from it
#   lease-lost   the exporter stops answering lease messages while its memory
#                still answers (--drop-renewals-after): the lease expires at the
#                borrower, a clear error, exit 1, and the summary counts the
#                renewals made before the loss
#   interrupt    SIGINT mid-run (^C, timeout -s INT): the exporter in the same
#                process serves until the run is over, the lease is released,
#                nothing is lost
#   no-uffd      userfaultfd unavailable (simulated): a clear message, the
#                explicit API still runs and is verified
#   macsec       MACsec on (the [macsec] keys of htoe-bridge) with 1 % loss and
#                --capture: verified; every captured frame is MACsec (0x88E5,
#                tshark), none is plain HToE, and the MACsec counters say so
#   memif        two processes over memif (--config config/dimm-memif.ini)
#   netns        two processes in two network namespaces, af_packet over veth
#   poll-thread  --poll-thread (the loop does the work, the application blocks)
#                with --no-wp-async (write-protect faults): verified; the
#                default modes (run to completion, wp-async where the kernel
#                has it) are checked by 'budgets'
# No timing assertions: only exit codes, verification flags and messages.
set -euo pipefail
DIMM=$1
SRC=$2
MODE=$3
# shellcheck source=tests/dimm/lib.sh
. "$SRC/tests/dimm/lib.sh"
dimm_test_init dimm TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

EAL="-l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix $PREFIX --log-level=warning"
SMALL="--wss 512K --updates 4096 --kv-ops 4096 --ntimes 1"

# py EXPR: evaluate a Python expression over the results (r = the JSON)
py() {
  python3 -c "import json,sys; r=json.load(open('$TMP/r.json')); sys.exit(0 if ($1) else 1)"
}

py_get() {
  python3 -c "import json; r=json.load(open('$TMP/r.json')); print($1)"
}

run() {
  set +e
  timeout 500 "$DIMM" $EAL -- $SMALL --json "$TMP/r.json" --plot "$TMP/r.png" "$@" \
    >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  cat "$TMP/out" "$TMP/err"
}

case "$MODE" in
budgets)
  run --budgets 100,50,25
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 12" || fail "not 12 verified runs"
  py "all(x['verified'] for x in r['runs'])" || fail "a run is not verified"
  py "r['explicit']['verified']" || fail "explicit API not verified"
  # a budget below the working set evicts, writes back, and re-fetches
  py "all(x['pager']['evictions'] > 0 and x['pager']['faults'] > x['pages'] for x in r['runs'] if x['budget_pct'] == 25)" \
    || fail "25 % budget did not evict and re-fetch"
  py "all(x['pager']['writebacks'] > 0 for x in r['runs'] if x['budget_pct'] < 100)" \
    || fail "no write-back below 100 %"
  py "all(x['budget_pages'] < x['pages'] for x in r['runs'] if x['budget_pct'] < 100)" \
    || fail "budget not below the working set"
  py "all(x['slowdown'] > 0 and x['fault_p99_us'] >= x['fault_p50_us'] > 0 for x in r['runs'])" \
    || fail "missing slowdown or latency"
  py "r['lease']['size'] >= 512*1024" || fail "lease"
  for k in uffd_p50_us uffd_p99_us tcp_fault_p50_us tcp_fault_p99_us; do
    py "r['baselines']['$k'] > 0" || fail "baselines.$k missing or not positive"
  done
  for k in p50_vs_uffd p99_vs_uffd p50_vs_tcp p99_vs_tcp; do
    py "all(x['vs_baselines']['$k'] > 0 for x in r['runs'])" || fail "runs[].vs_baselines.$k"
  done
  grep -q "remote fault vs baselines" "$TMP/out" || fail "no ratios in the text"
  grep -q "all results verified" "$TMP/out" || fail "no final verdict"
  grep -q "lease .* released" "$TMP/out" || fail "the lease was not released"
  py "r['setup']['wait'] == 'run-to-completion'" || fail "not run to completion by default"
  grep -q "^htoe-dimm: pager mode $(py_get "r['setup']['pager_mode']")" "$TMP/out" \
    || fail "the pager mode is not printed"
  # its lines, the shared port code's included, carry its own name
  grep -q "^htoe-dimm: port 0 up" "$TMP/out" || fail "no 'htoe-dimm: port 0 up' line"
  if grep -q "^htoe-bridge:" "$TMP/out"; then fail "htoe-dimm prints lines as htoe-bridge:"; fi
  # where and when it ran, and the tables docs/dimm.md's results are made with
  py "r['machine']['date'].endswith('Z') and r['machine']['cpu_model'] and r['machine']['git']" \
    || fail "machine: no date, CPU model or commit"
  python3 "$SRC/scripts/bench_table.py" "$TMP/r.json" | grep -q '^| workload | budget ' \
    || fail "scripts/bench_table.py made no table from the JSON"
  if python3 -c 'import matplotlib' 2>/dev/null; then
    [ -s "$TMP/r.png" ] || fail "no PNG"
    head -c 8 "$TMP/r.png" | od -An -c | grep -q 'P   N   G' || fail "not a PNG"
  fi
  ok "budgets 100/50/25: 12 runs verified"
  ;;
poll-thread)
  run --budgets 50 --workloads kv,sort --poll-thread --no-wp-async
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 2 and all(x['verified'] for x in r['runs'])" \
    || fail "not verified"
  py "r['explicit']['verified']" || fail "explicit API not verified"
  py "r['setup']['wait'] == 'poll-thread'" || fail "wait mode not recorded"
  py "r['setup']['pager_mode'].startswith('wp,')" || fail "--no-wp-async ignored"
  py "all(x['pager']['wp_faults'] > 0 and x['pager']['wp_scans'] == 0 for x in r['runs'])" \
    || fail "dirty pages not found by write-protect faults"
  ok "--poll-thread --no-wp-async: verified"
  ;;
lossy)
  run --budgets 50 --workloads stream,kv --set impair.loss=0.02 --set impair.seed=7 \
    --no-baselines
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "'baselines' not in r and all('vs_baselines' not in x for x in r['runs'])" \
    || fail "--no-baselines still measured them"
  py "r['ok'] and all(x['verified'] for x in r['runs']) and len(r['runs']) == 2" \
    || fail "not verified under loss"
  py "r['vl']['retransmits'] > 0" || fail "no retransmission: was the loss applied?"
  py "'impaired' in r['setup']['transport']" || fail "transport not marked impaired"
  ok "2 % loss: verified, $(python3 -c "import json; print(json.load(open('$TMP/r.json'))['vl']['retransmits'])") retransmits"
  ;;
outage)
  # short timers (a reset after ~0.25 s of silence) and an outage that starts
  # 150 ms after the first frame (the lease is granted by then, the first
  # run is paging) and lasts 0.5 s: a warm VL reset mid-workload. GUPS runs
  # for about a second (more under load) so that the outage falls inside it
  # (with 16 000 updates it took 0.14 s once the fetches got faster, and one
  # run in 17 had its outage between the two workloads: nothing to resend)
  run --budgets 50 --workloads gups,kv --updates 100000 --no-explicit --no-baselines \
    --set bridge.rto_max=20ms --set bridge.retry_limit=12 \
    --set impair.outage_start=150ms --set impair.outage_len=500ms
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 2 and all(x['verified'] for x in r['runs'])" \
    || fail "not every run verified after the reset"
  py "r['vl']['resets'] > 0" || fail "the outage did not reset the VL"
  # (the pager's, or htoe-dimm's own copies of the initial data and the check)
  py "sum(x['pager']['fetch_retries'] + x['pager']['writeback_retries'] for x in r['runs']) + r['copy_retries'] > 0" \
    || fail "no fetch, write-back or copy was sent again: did the reset hit the workload?"
  if py "sum(x['pager']['fetch_retries'] + x['pager']['writeback_retries'] for x in r['runs']) > 0"; then
    grep -q "retried after a VL reset" "$TMP/out" || fail "the retries are not in the text"
  fi
  ok "VL reset mid-workload: $(python3 -c "import json; r=json.load(open('$TMP/r.json')); print(r['vl']['resets'], 'resets,', sum(x['pager']['fetch_retries'] for x in r['runs']), 'fetches and', sum(x['pager']['writeback_retries'] for x in r['runs']), 'write-backs sent again')"), every run verified"
  ;;
remote-lost)
  run --budgets 50 --workloads gups --no-explicit --no-baselines --kill-after-faults 30
  [ "$RC" = 1 ] || fail "exit status $RC, expected 1"
  grep -q "remote memory lost" "$TMP/err" || fail "no 'remote memory lost' message"
  grep -q "no value that did not come from node 2 was used" "$TMP/err" || fail "no data statement"
  grep -q "MISMATCH" "$TMP/out" && fail "a wrong result was reported"
  py "not r['ok'] and 'remote memory lost' in r['error']" || fail "JSON does not say so"
  ok "remote node lost: clear error, exit 1"
  ;;
lease-lost)
  # renewed every 667 ms, each round retried for 1.3 s: the first renewal
  # gets through on a loaded machine; after 3 the lease runs out mid-run
  run --budgets 50 --workloads gups --updates 2000000 --no-explicit --no-baselines \
    --lease-ms 2000 --drop-renewals-after 3
  [ "$RC" = 1 ] || fail "exit status $RC, expected 1"
  grep -q "node 2 ignores lease messages after answering 3 renewals" "$TMP/err" \
    || fail "the exporter did not stop answering lease messages"
  grep -q "lease .* from node 2 lost: no answer" "$TMP/err" || fail "no 'lease lost' message"
  grep -q "lease lost: the remote memory is no longer ours" "$TMP/err" || fail "no clear error"
  grep -q "MISMATCH" "$TMP/out" && fail "a wrong result was reported"
  py "not r['ok'] and 'lease lost' in r['error']" || fail "JSON does not say so"
  # the renewals made before the loss, counted in the summary and the JSON
  n=$(py_get "r['lease']['renewals']")
  [ "$n" -ge 1 ] || fail "lease renewed $n times: the renewals before the loss are not counted"
  grep -q "lease renewed $n times" "$TMP/out" || fail "the summary does not say 'lease renewed $n times'"
  ok "lease lost mid-run: clear error, exit 1, $n renewals counted"
  ;;
interrupt)
  set +e
  "$DIMM" $EAL -- $SMALL --json "$TMP/r.json" --no-plot --budgets 50,25 --workloads gups \
    --updates 400000 --no-explicit --no-baselines >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  PIDS+=($pid)
  # mid-run: once the pager serves the first workload (bounded wait)
  for _ in $(seq 3000); do grep -q "^htoe-dimm: pager mode" "$TMP/out" && break; sleep 0.1; done
  kill -INT "$pid"
  # bounded: a process still there after 300 s is a hang
  for _ in $(seq 3000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && fail "still running 300 s after SIGINT"
  wait "$pid"
  RC=$?
  PIDS=()
  set -e
  cat "$TMP/out" "$TMP/err"
  grep -q "^htoe-dimm: pager mode" "$TMP/out" || fail "the run never started"
  grep -q "interrupted: stopping after the current run" "$TMP/err" || fail "SIGINT not acknowledged"
  grep -q "lost" "$TMP/err" && fail "the interrupt cut the borrower's remote memory off"
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) >= 1 and all(x['verified'] for x in r['runs'])" \
    || fail "the run in progress was not finished and verified"
  grep -q "lease .* released" "$TMP/out" || fail "the lease was not released"
  ok "SIGINT mid-run: the run finished and verified, the lease released"
  ;;
no-uffd)
  run --no-uffd
  [ "$RC" = 0 ] || fail "exit status $RC"
  grep -q "userfaultfd unavailable" "$TMP/err" || fail "no clear message"
  grep -q "explicit API (dimm.h) still works" "$TMP/err" || fail "message does not name the fallback"
  py "r['explicit']['verified'] and r['runs'] == [] and not r['setup']['transparent']" \
    || fail "explicit API results missing"
  # the same through the environment
  HTOE_DIMM_NO_UFFD=1 run --workloads gups
  [ "$RC" = 0 ] || fail "exit status $RC (HTOE_DIMM_NO_UFFD)"
  grep -q "HTOE_DIMM_NO_UFFD" "$TMP/err" || fail "no message naming HTOE_DIMM_NO_UFFD"
  ok "userfaultfd unavailable: explicit API verified"
  ;;
macsec)
  command -v tshark >/dev/null || { echo "skip: no tshark"; exit 77; }
  run --budgets 50 --workloads stream,gups --capture "$TMP/cap" \
    --set macsec.enable=on --set macsec.key0=00112233445566778899aabbccddeeff \
    --set impair.loss=0.01 --set impair.seed=3
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 2 and all(x['verified'] for x in r['runs'])" \
    || fail "not verified with MACsec"
  py "r['explicit']['verified']" || fail "explicit API not verified with MACsec"
  grep -q "macsec gcm-aes-128 encrypt, shared keys .*OutPktsEncrypted [1-9].*InPktsOK [1-9]" "$TMP/out" \
    || fail "no MACsec counters (frames protected and validated)"
  for f in port0-tx port0-rx port1-tx port1-rx; do
    [ -s "$TMP/cap/$f.pcap" ] || fail "no capture $f.pcap"
    all=$(tshark -r "$TMP/cap/$f.pcap" 2>/dev/null | wc -l)
    sec=$(tshark -r "$TMP/cap/$f.pcap" -Y 'eth.type == 0x88e5' 2>/dev/null | wc -l)
    plain=$(tshark -r "$TMP/cap/$f.pcap" -Y 'eth.type == 0x88b5' 2>/dev/null | wc -l)
    [ "$all" -gt 100 ] || fail "$f: only $all frames captured"
    [ "$sec" = "$all" ] || fail "$f: $sec of $all frames are MACsec"
    [ "$plain" = 0 ] || fail "$f: $plain plain HToE frames on the wire"
  done
  ok "MACsec: verified, $(tshark -r "$TMP/cap/port0-tx.pcap" 2>/dev/null | wc -l) protected frames captured on port 0"
  ;;
memif)
  SOCK="$TMP/memif.sock"
  CFG="$SRC/config/dimm-memif.ini"
  EB="-l 1 --no-huge -m 512 --no-pci --file-prefix $PREFIX-b --log-level=warning"
  EA="-l 0 --no-huge -m 512 --no-pci --file-prefix $PREFIX-a --log-level=warning"
  timeout 500 "$DIMM" $EB --vdev="net_memif0,role=server,socket=$SOCK,socket-abstract=no" \
    -- --config "$CFG" --node 2 >"$TMP/b.out" 2>&1 &
  PIDS+=($!)
  # the memif client connects only to a server socket that exists
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
  [ -S "$SOCK" ] || { cat "$TMP/b.out"; fail "the exporter did not open $SOCK"; }
  set +e
  timeout 400 "$DIMM" $EA --vdev="net_memif0,role=client,socket=$SOCK,socket-abstract=no" \
    -- --config "$CFG" --node 1 $SMALL --budgets 100,25 --workloads stream,sort \
    --json "$TMP/r.json" --no-plot >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  cat "$TMP/out" "$TMP/err"
  kill -INT "${PIDS[0]}" 2>/dev/null || true
  wait "${PIDS[0]}" || true
  PIDS=()
  cat "$TMP/b.out"
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 4 and all(x['verified'] for x in r['runs'])" \
    || fail "not verified across processes"
  grep -q "lease .* to node 1" "$TMP/b.out" || fail "the exporter did not grant the lease"
  ok "two processes over memif: verified"
  ;;
netns)
  # two processes in two network namespaces over a veth pair (af_packet)
  NA="dimm-a-$$"; NB="dimm-b-$$"; VA="dva$$"; VB="dvb$$"
  NETNS_CLEAN="ip netns del $NA 2>/dev/null; ip netns del $NB 2>/dev/null"
  if ! ip netns add "$NA" 2>/dev/null; then echo "skip: no network namespaces"; exit 77; fi
  trap 'eval "$NETNS_CLEAN"; cleanup' EXIT
  ip netns add "$NB"
  ip link add "$VA" type veth peer name "$VB"
  ip link set "$VA" netns "$NA"
  ip link set "$VB" netns "$NB"
  ip -n "$NA" link set "$VA" up promisc on
  ip -n "$NB" link set "$VB" up promisc on
  CFG="$SRC/config/dimm-memif.ini"
  SETDEV="port 0.dev=net_af_packet0"
  ip netns exec "$NB" timeout 500 "$DIMM" -l 1 --no-huge -m 512 --no-pci --no-shconf \
    --file-prefix "$PREFIX-b" --log-level=warning --vdev="net_af_packet0,iface=$VB" \
    -- --config "$CFG" --set "$SETDEV" --node 2 >"$TMP/b.out" 2>&1 &
  PIDS+=($!)
  set +e
  ip netns exec "$NA" timeout 400 "$DIMM" -l 0 --no-huge -m 512 --no-pci --no-shconf \
    --file-prefix "$PREFIX-a" --log-level=warning --vdev="net_af_packet0,iface=$VA" \
    -- --config "$CFG" --set "$SETDEV" --node 1 $SMALL --budgets 100,25 --workloads gups,kv \
    --json "$TMP/r.json" --no-plot >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  cat "$TMP/out" "$TMP/err"
  kill -INT "${PIDS[0]}" 2>/dev/null || true
  wait "${PIDS[0]}" || true
  PIDS=()
  cat "$TMP/b.out"
  [ "$RC" = 0 ] || fail "exit status $RC"
  py "r['ok'] and len(r['runs']) == 4 and all(x['verified'] for x in r['runs'])" \
    || fail "not verified across namespaces"
  # a baseline that could not run (the namespace's loopback is down) is
  # reported as such: null in the JSON, n/a in the text, never a 0x ratio
  if py "'tcp_error' in r.get('baselines', {})"; then
    py "all(x['vs_baselines']['p50_vs_tcp'] is None for x in r['runs'])" \
      || fail "a ratio to an unmeasured TCP baseline"
    grep -q "n/a TCP" "$TMP/out" || fail "the text gives a ratio to an unmeasured baseline"
    grep -q "TCP pager not measured" "$TMP/out" || fail "the unmeasured baseline is not said"
  fi
  ok "two processes in two network namespaces (af_packet): verified"
  ;;
*)
  fail "unknown mode $MODE"
  ;;
esac
