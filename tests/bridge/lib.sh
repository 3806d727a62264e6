# Shared by the htoe-bridge tests (suite 'bridge'). Source it after setting
# BRIDGE (the htoe-bridge binary). Every test uses its own EAL --file-prefix
# and removes its DPDK runtime directory on exit.
set -euo pipefail

PREFIX="htoe-test-$(basename "$0" .sh)-$$"
TMP=$(mktemp -d "/tmp/${PREFIX}.XXXXXX")

runtime_dirs() {
  echo "/var/run/dpdk/$PREFIX"
  [ -n "${XDG_RUNTIME_DIR:-}" ] && echo "$XDG_RUNTIME_DIR/dpdk/$PREFIX"
  echo "/tmp/dpdk/$PREFIX"
}

WDS=()
# watchdog PID SECS: SIGKILL to PID after SECS, the bound of a process run in
# the background without timeout(1) (which would put it in another process
# group, out of reach of a signal to the test's). Stopped by stop_watchdogs
# and by cleanup (SIGTERM: it takes its sleep with it).
watchdog() {
  (trap 'kill $sp 2>/dev/null; exit 0' TERM; sleep "$2" & sp=$!; wait $sp; kill -KILL "$1") \
    >/dev/null 2>&1 &
  WDS+=($!)
}

# stop_watchdogs: the watched processes have ended (a watchdog left running
# would kill whatever process has that pid later)
stop_watchdogs() {
  local w
  for w in "${WDS[@]:-}"; do [ -z "$w" ] || kill "$w" 2>/dev/null || true; done
  for w in "${WDS[@]:-}"; do [ -z "$w" ] || wait "$w" 2>/dev/null || true; done
  WDS=()
}

cleanup() {
  local d p
  stop_watchdogs
  for p in "${BR_PIDS[@]:-}"; do [ -z "$p" ] || kill -KILL "$p" 2>/dev/null || true; done
  for p in "${BR_PIDS[@]:-}"; do [ -z "$p" ] || wait "$p" 2>/dev/null || true; done
  # the test's other background jobs (a forger's sniffer waits for a file
  # that a failed test never writes: it would outlive the test)
  for p in $(jobs -p); do { kill -KILL "$p"; wait "$p"; } 2>/dev/null || true; done
  for p in "${NETNS[@]:-}"; do [ -z "$p" ] || ip netns del "$p" 2>/dev/null || true; done
  for d in $(runtime_dirs); do rm -rf "$d" "$d"-* 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# EAL arguments for a test (LCORES defaults to 0-1).
eal() {
  echo "-l ${LCORES:-0-1} --no-huge -m 512 --no-pci --no-shconf --file-prefix $PREFIX --log-level=warning"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# json_get FILE KEY: a number from the last JSON line of FILE
json_get() {
  grep '^{' "$1" | tail -1 | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

# pcap_node2_ini FILE RX_PCAP TX_PCAP: a configuration in which node 2 alone
# (peer 1, the demo's map) answers the frames of RX_PCAP through net_pcap
pcap_node2_ini() {
  cat >"$1" <<INI
[port 0]
dev = net_pcap0,rx_pcap=$2,tx_pcap=$3
[node 2]
port = 0
[peer 1]
[map]
range1 = 0x100000000 64K 1
range2 = 0x200000000 64K 2
INI
}

# ---- several htoe-bridge processes (the deployment tests) ----
# Each process has its own [node] and exit_when_done = off (it serves the
# others after its own workload); when every one has printed "done N/N" the
# test stops them all with SIGINT and checks their --json summaries.
BR_PIDS=()
BR_NAMES=()
NETNS=()

# add_netns NAME: a network namespace, deleted on exit (with the veth ends
# and bridges in it); the test is skipped (77) where none can be created.
add_netns() {
  if ! ip netns add "$1" 2>"$TMP/netns.err"; then
    echo "SKIP: cannot create network namespace $1 ($(cat "$TMP/netns.err"));" \
      "this test needs root (CAP_SYS_ADMIN, CAP_NET_ADMIN) and iproute2"
    exit 77
  fi
  NETNS+=("$1")
}

# veth NS1 NS2 [NAME1 [NAME2]]: a veth pair between two namespaces (ends
# named htoe0 unless given), up and promiscuous; VETH_QUEUES=N gives each end
# N RX and N TX queues (the kernel's default: one per CPU)
veth() {
  local a=${3:-htoe0} b=${4:-htoe0} q=()
  [ -n "${VETH_QUEUES:-}" ] && q=(numtxqueues "$VETH_QUEUES" numrxqueues "$VETH_QUEUES")
  ip link add "$a" "${q[@]}" netns "$1" type veth peer name "$b" "${q[@]}" netns "$2"
  ip -n "$1" link set "$a" up promisc on
  ip -n "$2" link set "$b" up promisc on
}

# forger_netns TAG: the attacker tests' set-up: skipped (77) unless $PY
# (/usr/bin/python3) has scapy; namespaces NA, NB (htoe-TAG-a/b-PID) joined
# by a veth pair
PY=/usr/bin/python3
forger_netns() {
  "$PY" -c "import scapy.all" 2>/dev/null || { echo "SKIP: $PY has no scapy (python3-scapy)"; exit 77; }
  NA="htoe-$1-a-$$" NB="htoe-$1-b-$$"
  add_netns "$NA"
  add_netns "$NB"
  veth "$NA" "$NB"
}

# start_netns_bridges N [DURATION]: once the attacker's sniffer listens ($TMP/listening;
# its output in $TMP/ears.out), the two-namespace deployment's processes a
# (config/netns-a.ini in $NA) and b (netns-b.ini in $NB), N transactions (and
# workloads of DURATION when given), --json; b once a has set up its node (on
# a loaded host a process pinned to CPU 0 has taken minutes to set up its
# port, and b's requests then time out, np_timeout, against a peer that is
# not there yet: a slow start, which is not what the attacker tests are about)
start_netns_bridges() {
  local da=() db=()
  [ -n "${2:-}" ] && da=(--set "workload 1.duration=$2") && db=(--set "workload 2.duration=$2")
  for _ in $(seq 100); do [ -e "$TMP/listening" ] && break; sleep 0.1; done
  [ -e "$TMP/listening" ] || { cat "$TMP/ears.out"; fail "the attacker's sniffer did not start"; }
  start_bridge a ip netns exec "$NA" "$BRIDGE" $(eal_proc a 0) -- \
    --config "$SRC/config/netns-a.ini" --transactions "$1" "${da[@]}" --json
  wait_for_line a "htoe-bridge: node 1 (" 280 || { cat "$TMP/a.out"; fail "a did not set up its node"; }
  start_bridge b ip netns exec "$NB" "$BRIDGE" $(eal_proc b 1) -- \
    --config "$SRC/config/netns-b.ini" --transactions "$1" "${db[@]}" --json
}

# eal_proc NAME LCORE [SHCONF]: EAL arguments of one process (prefix
# $PREFIX-NAME); SHCONF "shconf" keeps the shared configuration (memif).
eal_proc() {
  local sh="--no-shconf"
  [ "${3:-}" = shconf ] && sh=""
  echo "-l $2 --no-huge -m 512 --no-pci $sh --file-prefix $PREFIX-$1 --log-level=warning"
}

# start_bridge NAME CMD...: CMD in the background, output in $TMP/NAME.out
start_bridge() {
  local name=$1
  shift
  "$@" >"$TMP/$name.out" 2>&1 &
  BR_PIDS+=($!)
  BR_NAMES+=("$name")
}

# wait_for_line NAME TEXT SECONDS: until $TMP/NAME.out has TEXT (0), the
# process NAME exited (1) or SECONDS passed (2); a watchdog, not a timing
wait_for_line() {
  local deadline=$((SECONDS + $3)) i
  for i in "${!BR_NAMES[@]}"; do [ "${BR_NAMES[$i]}" = "$1" ] && break; done
  while :; do
    grep -q "$2" "$TMP/$1.out" 2>/dev/null && return 0
    kill -0 "${BR_PIDS[$i]}" 2>/dev/null || return 1
    [ "$SECONDS" -lt "$deadline" ] || return 2
    sleep 0.2
  done
}

# stop_when_done SECONDS: wait until every bridge has said "done N/N" (a
# watchdog, not a timed assertion), SIGINT them one by one (the last started
# first) and keep their exit statuses (in $TMP/NAME.rc).
stop_when_done() {
  local deadline=$((SECONDS + $1)) i all
  while :; do
    all=1
    for i in "${!BR_NAMES[@]}"; do
      grep -Eq '\| done ([0-9]+)/\1$' "$TMP/${BR_NAMES[$i]}.out" 2>/dev/null && continue
      all=0
      kill -0 "${BR_PIDS[$i]}" 2>/dev/null || {
        cat "$TMP/${BR_NAMES[$i]}.out"; fail "${BR_NAMES[$i]} exited before its workload was done"; }
    done
    [ "$all" = 1 ] && break
    [ "$SECONDS" -lt "$deadline" ] || {
      # a hang is read from the summaries (drop reasons, VL states): ask
      # each process for its summary as the guide's SIGINT does, bounded
      for i in "${!BR_NAMES[@]}"; do kill -INT "${BR_PIDS[$i]}" 2>/dev/null || true; done
      for _ in $(seq 100); do
        all=1
        for i in "${!BR_NAMES[@]}"; do kill -0 "${BR_PIDS[$i]}" 2>/dev/null && all=0; done
        [ "$all" = 1 ] && break
        sleep 0.1
      done
      for i in "${!BR_NAMES[@]}"; do
        echo "== ${BR_NAMES[$i]}"
        grep -v '^\[ *[0-9.]* s\] ops' "$TMP/${BR_NAMES[$i]}.out" || true
        tail -n 3 "$TMP/${BR_NAMES[$i]}.out"
      done
      fail "workloads not done after $1 s"; }
    sleep 0.5
  done
  # one at a time, the last started first (a memif client before its server):
  # two memif ends closing at the same instant can race inside DPDK 22.11's
  # memif driver (a double free at exit, after the summary)
  for ((i = ${#BR_NAMES[@]} - 1; i >= 0; i--)); do
    local rc=0
    kill -INT "${BR_PIDS[$i]}" 2>/dev/null || true
    wait "${BR_PIDS[$i]}" || rc=$?
    echo "$rc" >"$TMP/${BR_NAMES[$i]}.rc"
  done
  BR_PIDS=()
}

# check_bridges NAME...: every process exited 0 with RESULT: PASS; its JSON
# says every completion verified (or, with RESET_LOSSES=1, poisoned by a
# loss a VL reset reported), no mismatch, no error, not incomplete; the
# shadow of each workload equals the memory of its target node in the
# other process (CRC32C over the whole window; with RESET_LOSSES=1 and
# writes a reset lost, the bridge's own comparison over the wire of every
# byte but those reported lost), and the injected loss made
# retransmissions (retransmits > 0 over all, frames dropped by each stage).
check_bridges() {
  local n
  for n in "$@"; do
    echo "== $n"; cat "$TMP/$n.out"
    [ "$(cat "$TMP/$n.rc")" = 0 ] || fail "$n: exit status $(cat "$TMP/$n.rc")"
    grep -q "RESULT: PASS: all [0-9]* completions verified" "$TMP/$n.out" || fail "$n: no PASS"
  done
  (cd "$TMP" && python3 - "$@" <<'PY') || fail "the summaries do not check out"
import json, os, sys
runs = {}
for name in sys.argv[1:]:
    line = [l for l in open(name + ".out") if l.startswith("{")][-1]
    runs[name] = json.loads(line)
mem = {n["id"]: n for r in runs.values() for n in r["per_node"]}
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + msg)
    ok &= bool(cond)
for name, r in runs.items():
    # RESET_LOSSES=1: a VL reset in the run may poison requests, which
    # counts only as far as the run reported their loss (lost by reset)
    lost = r["lost_poisoned"] if os.environ.get("RESET_LOSSES") == "1" else 0
    check(r["workloads"] >= 1 and r["completions"] > 0 and
          r["verified"] + lost == r["completions"] and r["lost_restart"] == 0,
          f"{name}: {r['verified']} of {r['completions']} completions verified"
          + (f", {lost} poisoned by a reported reset loss" if lost else ""))
    check(r["mismatches"] == 0 and r["errors"] == 0 and r["unexpected"] == 0
          and not r["incomplete"], f"{name}: mismatches 0, errors 0, complete")
    check(r["impair_dropped"] > 0, f"{name}: the impairment dropped {r['impair_dropped']} frames")
    for n in r["per_node"]:
        if "target" not in n:
            continue
        t = mem.get(n["target"])
        pc = n.get("peer_check", {})
        if lost and r["lost_reset"] > 0 and pc.get("excluded", 0) > 0:
            # posted writes a reset dropped (reported lost) never reached the
            # target: the shadow differs there, so the image is the bridge's
            # own check over the wire, every byte but those reported lost
            check(t is not None and n["wl_offset"] == 0 and n["wl_size"] == t["mem_size"]
                  and pc["state"] == "confirmed" and pc["differ"] == 0
                  and pc["uncompared"] == 0 and pc["final"] == "answered"
                  and pc["bytes"] + pc["excluded"] == n["wl_size"],
                  f"{name}: node {n['id']}'s view of node {n['target']}'s memory is its image "
                  f"but for {pc['excluded']} bytes reported lost ({pc})")
            continue
        check(t is not None and n["wl_offset"] == 0 and n["wl_size"] == t["mem_size"]
              and n["shadow_crc32c"] == t["mem_crc32c"],
              f"{name}: node {n['id']}'s view of node {n['target']}'s memory is its image "
              f"(crc32c {n['shadow_crc32c']:#x} vs {t['mem_crc32c'] if t else 0:#x})")
rtx = sum(r["retransmits"] for r in runs.values())
check(rtx > 0, f"{rtx} retransmissions in all")
sys.exit(0 if ok else 1)
PY
}
