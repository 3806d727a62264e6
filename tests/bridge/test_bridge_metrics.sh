#!/usr/bin/env bash
# htoe-bridge's Prometheus endpoint (suite 'bridge'): while the demo runs
# with [global] metrics, /metrics is scraped twice; both scrapes pass
# `promtool check metrics`, carry every family with HELP and TYPE, per node
# (node="N") and per VL (node="N",peer="M"), and the counters move between
# them (none goes back). Other paths are 404. Addresses that cannot be
# served (junk, a port out of range, a port in use, an address not of this
# host) are refused with exit status 2 and the reason, in a file (with its
# line) and with --set. SIGINT then ends the run with PASS.
# With DIMM, htoe-dimm's endpoint the same way during a paging run: its
# lease, page faults (moving between two scrapes), fault service time and
# VLs; a port in use refused; the run still verifies everything.
#   test_bridge_metrics.sh BRIDGE SRCDIR [DIMM]
BRIDGE=$1 SRC=$2 DIMM=${3:-}
. "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || { echo "SKIP: no promtool (Debian package prometheus)"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }

# a port free now (the kernel's choice)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT/metrics"

"$BRIDGE" $(eal) -- --stats 1 --set workload.ops=1000000000 \
  --set "global.metrics=127.0.0.1:$PORT" >"$TMP/out" 2>"$TMP/err" &
pid=$!
BR_PIDS+=("$pid")
watchdog "$pid" 170

# scrape FILE [URL]: /metrics into FILE, checked by promtool
scrape() {
  curl -sf --max-time 10 "${2:-$URL}" >"$1" || return 1
  promtool check metrics <"$1" >"$1.lint" 2>&1 || { cat "$1.lint"; fail "promtool: $1"; }
}
# vl_tx FILE: frames node 1 sent to node 2
vl_tx() { sed -n 's/^htoe_vl_tx_frames_total{node="1",peer="2"} //p' "$1"; }

# until the VL carries frames (a watchdog: the run starts within seconds)
for _ in $(seq 300); do
  scrape "$TMP/s1" 2>/dev/null && [ "$(vl_tx "$TMP/s1")" -gt 0 ] 2>/dev/null && break
  kill -0 "$pid" || { cat "$TMP/out" "$TMP/err"; fail "htoe-bridge exited"; }
  sleep 0.2
done
[ "$(vl_tx "$TMP/s1")" -gt 0 ] 2>/dev/null || { cat "$TMP/err"; fail "no frames in $URL"; }
ok "first scrape: promtool check metrics passes, $(vl_tx "$TMP/s1") frames from node 1 to 2"
# vl_rtt FILE: node 1's smoothed RTT to node 2 (0 until the first sample)
vl_rtt() { sed -n 's/^htoe_vl_rtt_seconds{node="1",peer="2"} //p' "$1"; }
# until the counters moved and an RTT was sampled (a watchdog)
for _ in $(seq 300); do
  scrape "$TMP/s2"
  [ "$(vl_tx "$TMP/s2")" -gt "$(vl_tx "$TMP/s1")" ] && [ "$(vl_rtt "$TMP/s2")" != 0 ] && break
  sleep 0.2
done
ok "second scrape: promtool check metrics passes"

python3 - "$TMP/s1" "$TMP/s2" <<'PY' || fail "the scrapes do not check out"
import re, sys
def load(path):
    fam, typ, val = {}, {}, {}
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"# (HELP|TYPE) (\S+) (.*)", line)
        if m:
            (fam if m[1] == "HELP" else typ)[m[2]] = m[3]
            continue
        m = re.match(r"([a-z_]+)(\{[^}]*\})? (\S+)$", line)
        assert m, "bad line: " + line
        val[m[1] + (m[2] or "")] = float(m[3])
    return fam, typ, val
h1, t1, v1 = load(sys.argv[1])
h2, t2, v2 = load(sys.argv[2])
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(set(h1) == set(t1) == set(h2), f"{len(h1)} families, each with HELP and TYPE")
counters = [f for f, t in t1.items() if t == "counter"]
check(all(f.endswith("_total") for f in counters), "every counter ends in _total")
for f in ["htoe_node_tx_frames_total", "htoe_node_rx_bytes_total",
          "htoe_node_retransmissions_total", "htoe_node_resets_total",
          "htoe_node_poisoned_total", "htoe_node_drops_total"]:
    check(any(k.startswith(f + '{node="1"') for k in v1) and
          any(k.startswith(f + '{node="2"') for k in v1), f"{f} for nodes 1 and 2")
for f in ["htoe_vl_tx_frames_total", "htoe_vl_rx_bytes_total", "htoe_vl_retransmissions_total",
          "htoe_vl_resets_total", "htoe_vl_poisoned_total", "htoe_vl_drops_total",
          "htoe_vl_credit_starved_seconds_total", "htoe_vl_rtt_seconds", "htoe_vl_up",
          "htoe_vl_forced_releases_total", "htoe_vl_ctrl_refused_total"]:
    check(any(k.startswith(f + '{node="1",peer="2"') for k in v1) and
          any(k.startswith(f + '{node="2",peer="1"') for k in v1),
          f"{f} for the VLs 1-2 and 2-1")
check('htoe_node_drops_total{node="1",reason="crc"}' in v1, "drops by reason")
back = [k for k in v1 if t1.get(re.sub(r"\{.*", "", k)) == "counter" and v2.get(k, -1) < v1[k]]
check(not back and set(v1) == set(v2), "the same series in both scrapes, no counter went back")
for k in ['htoe_node_tx_frames_total{node="1"}', 'htoe_node_workload_ops_total{node="2"}',
          'htoe_vl_rx_frames_total{node="2",peer="1"}', 'htoe_vl_tx_bytes_total{node="1",peer="2"}']:
    check(v2[k] > v1[k], f"{k} moved: {v1[k]:.0f} -> {v2[k]:.0f}")
check(v2['htoe_vl_rtt_seconds{node="1",peer="2"}'] > 0, "an RTT was measured")
check(v2['htoe_vl_up{node="1",peer="2"}'] == 1, "the VL is up")
sys.exit(0 if ok else 1)
PY
# the HTTP thread runs where the process was allowed to before the EAL pinned
# its main thread to lcore 0: not on a polling lcore's CPU alone
mine=$(sed -n 's/^Cpus_allowed_list:\t*//p' /proc/$$/status)
mhd=""
for t in /proc/$pid/task/*; do
  [ "$(cat "$t/comm" 2>/dev/null)" = MHD-single ] && mhd=$(sed -n 's/^Cpus_allowed_list:\t*//p' "$t/status")
done
[ -n "$mhd" ] || fail "no libmicrohttpd thread (MHD-single) in htoe-bridge"
[ "$mhd" = "$mine" ] || fail "the HTTP thread may run on CPUs $mhd, not $mine as the process could"
ok "the HTTP thread is not pinned to an lcore: CPUs $mhd"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/other")
[ "$code" = 404 ] || fail "GET /other answered $code, not 404"
ok "other paths: 404"

# refused: EXPECTED-TEXT VALUE (with --set, then in a file: file:line in the message)
refused() {
  local rc=0 v
  v=$(printf '%s' "$2" | sed 's/[][\.*^$]/\\&/g')
  "$BRIDGE" $(eal) -- --set "global.metrics=$2" --check >"$TMP/r.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q -- "--set: \[global\] metrics = '$v': .*$1" "$TMP/r.out" ||
    { cat "$TMP/r.out"; fail "metrics = '$2': exit $rc, not 2 with '$1'"; }
  printf '[global]\nmetrics = %s\n' "$2" >"$TMP/m.ini"
  sed -n '/^\[bridge\]/,$p' "$SRC/config/two-node-demo.ini" >>"$TMP/m.ini"
  rc=0
  "$BRIDGE" $(eal) -- --config "$TMP/m.ini" --check >"$TMP/r.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -q -- "m.ini:2: \[global\] metrics = '$v': .*$1" "$TMP/r.out" ||
    { cat "$TMP/r.out"; fail "file: metrics = '$2': exit $rc, not 2 with '$1'"; }
  ok "metrics = '$2' refused: $(tail -n 1 "$TMP/r.out")"
}
refused "Address already in use" "127.0.0.1:$PORT"
refused "no port" "127.0.0.1"
refused "bad port '0'" "127.0.0.1:0"
refused "bad port '65536'" "127.0.0.1:65536"
refused "bad port '-1'" "127.0.0.1:-1"
refused "'localhost' is not an IPv4 address" "localhost:9478"
refused "'1::2::3' is not an IPv6 address" "[1::2::3]:9478"
refused "expected ADDR:PORT" "[::1"
refused "not an address of this host" "192.0.2.1:9478"

kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
BR_PIDS=()
stop_watchdogs
[ "$rc" = 0 ] && grep -q "RESULT: PASS" "$TMP/out" || { cat "$TMP/out" "$TMP/err"; fail "exit $rc"; }
curl -s --max-time 5 "$URL" >/dev/null && fail "still served after the exit"
ok "SIGINT: PASS, the endpoint is gone"

[ -n "$DIMM" ] || exit 0
# ---- htoe-dimm: node 1 borrows 2 MiB from node 2 and pages it through half of that, for
# long enough (many seconds, more under load) that two scrapes see it at work
"$DIMM" $(eal) -- --set "global.metrics=127.0.0.1:$PORT" --wss 2M --workloads stream \
  --budgets 50 --ntimes 600 --no-baselines --no-explicit --no-plot --json "$TMP/dimm.json" \
  >"$TMP/dimm.out" 2>&1 &
dpid=$!
BR_PIDS+=("$dpid")
faults() { sed -n 's/^htoe_dimm_faults_total{node="1",kind="missing"} //p' "$1"; }
for _ in $(seq 600); do
  scrape "$TMP/d1" 2>/dev/null && [ "$(faults "$TMP/d1")" -gt 0 ] 2>/dev/null && break
  kill -0 "$dpid" || { cat "$TMP/dimm.out"; fail "htoe-dimm exited before a scrape saw a fault"; }
  sleep 0.2
done
[ "$(faults "$TMP/d1")" -gt 0 ] 2>/dev/null || { cat "$TMP/dimm.out"; fail "no faults in $URL"; }
for _ in $(seq 600); do
  scrape "$TMP/d2" 2>/dev/null && [ "$(faults "$TMP/d2")" -gt "$(faults "$TMP/d1")" ] && break
  kill -0 "$dpid" || { cat "$TMP/dimm.out"; fail "htoe-dimm exited before the faults moved"; }
  sleep 0.2
done
ok "htoe-dimm: two scrapes pass promtool, faults $(faults "$TMP/d1") -> $(faults "$TMP/d2")"
python3 - "$TMP/d1" "$TMP/d2" <<'PY' || fail "the htoe-dimm scrapes do not check out"
import re, sys
def load(path):
    v = {}
    for line in open(path):
        m = re.match(r"([a-z_]+)(\{[^}]*\})? (\S+)$", line.rstrip("\n"))
        if m:
            v[m[1] + (m[2] or "")] = float(m[3])
    return v
a, b = load(sys.argv[1]), load(sys.argv[2])
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
check(any(k.startswith('htoe_build_info{program="htoe-dimm"') for k in b),
      "htoe_build_info of htoe-dimm")
check(b['htoe_dimm_lease_active{node="1"}'] == 1, "node 1's lease is active")
check(b['htoe_dimm_lease_bytes{node="1"}'] == 2 * 1024 * 1024, "it holds 2 MiB")
check(b['htoe_dimm_leases_granted_total{node="2"}'] == 1, "node 2 granted one lease")
check(b['htoe_dimm_fetches_total{node="1"}'] > a['htoe_dimm_fetches_total{node="1"}'],
      "fetches moved")
check(b['htoe_dimm_fault_latency_seconds{node="1",stat="p50"}'] > 0 and
      b['htoe_dimm_fault_latency_seconds{node="1",stat="max"}'] >=
      b['htoe_dimm_fault_latency_seconds{node="1",stat="p99"}'] >=
      b['htoe_dimm_fault_latency_seconds{node="1",stat="p50"}'], "fault latency p50 <= p99 <= max")
for k in ['htoe_vl_tx_frames_total{node="1",peer="2"}', 'htoe_node_rx_frames_total{node="2"}']:
    check(b[k] > a[k], f"{k} moved: {a[k]:.0f} -> {b[k]:.0f}")
check(b['htoe_vl_up{node="2",peer="1"}'] == 1, "the VL is up")
sys.exit(0 if ok else 1)
PY
# a port this test holds itself: the paging run above may end before this one starts
/usr/bin/python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
print(s.getsockname()[1], flush=True); time.sleep(300)' >"$TMP/busy.port" &
busy_pid=$!
BR_PIDS+=("$busy_pid")
for _ in $(seq 100); do [ -s "$TMP/busy.port" ] && break; sleep 0.1; done
BUSY=$(cat "$TMP/busy.port")
rc=0
"$DIMM" $(eal) -- --set "global.metrics=127.0.0.1:$BUSY" >"$TMP/r.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "metrics = '127.0.0.1:$BUSY': cannot listen there: Address already in use" \
  "$TMP/r.out" || { cat "$TMP/r.out"; fail "htoe-dimm on a port in use: exit $rc"; }
ok "htoe-dimm on a port in use: $(tail -n 1 "$TMP/r.out")"
kill "$busy_pid" 2>/dev/null || true; wait "$busy_pid" 2>/dev/null || true
rc=0
wait "$dpid" || rc=$?
BR_PIDS=()
[ "$rc" = 0 ] && grep -q "all results verified" "$TMP/dimm.out" ||
  { cat "$TMP/dimm.out"; fail "htoe-dimm: exit $rc"; }
ok "htoe-dimm: all results verified with the endpoint on"
