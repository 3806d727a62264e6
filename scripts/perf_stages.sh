#!/usr/bin/env bash
# The per-stage cost of the bridge's 64-byte posted writes (issue 11: "ns per
# HT packet per stage"), from a perf profile of htoe-bench's write64 run:
# two nodes in one htoe-bridge on a net_ring pair, node 1 (lcore 0) posting
# 64-byte writes to node 2 (lcore 1). perf records both lcores for SECONDS in
# the middle of the run (cpu-clock samples: only while a thread is on a CPU);
# every sampled symbol is put into a stage, and each stage's CPU time is
# divided by the HT packets node 2's memory target applied in that window
# (the run's mean rate x SECONDS). Needs perf and permission to profile.
#   scripts/perf_stages.sh [BUILD_DIR [SECONDS]]     (docs/benchmarks.md)
set -euo pipefail
BUILD=${1:-build} SECS=${2:-4}
BRIDGE=$BUILD/app/htoe-bridge
command -v perf >/dev/null || { echo "perf_stages: perf not found (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$BRIDGE" ] || { echo "perf_stages: $BRIDGE not built" >&2; exit 2; }
TMP=$(mktemp -d /tmp/perf_stages.XXXXXX)
PREFIX=perf-stages-$$
trap 'kill -KILL ${PID:-} 2>/dev/null || true; rm -rf "$TMP" /var/run/dpdk/$PREFIX "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX"' EXIT

# the INI htoe-bench writes for its write64 run, with a longer duration
cat >"$TMP/w64.ini" <<INI
[global]
stats_interval = 0
[bridge]
mem_base = 0x100000
mem_size = 64K
[node 1]
port = 0
lcore = 0
[node 2]
port = 1
lcore = 1
[port 0]
crossover = 1
[port 1]
crossover = 0
[workload 1]
target = 2
mix = wrp=100
sizes = 64
window = 1
sweep = off
duration = $((SECS * 1000 + 6000))ms
[map]
range1 = 0x100000000 64K 1
range2 = 0x200000000 64K 2
INI
"$BRIDGE" -l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix "$PREFIX" \
  --log-level=warning -- --config "$TMP/w64.ini" --json >"$TMP/run.out" 2>&1 &
PID=$!
for _ in $(seq 300); do grep -q "^htoe-bridge: node 2" "$TMP/run.out" && break; sleep 0.1; done
sleep 2  # past the start of the workload
perf record -q -F 4999 -p "$PID" -o "$TMP/perf.data" -- sleep "$SECS" 2>"$TMP/perf.err" ||
  { cat "$TMP/perf.err" >&2; exit 1; }
wait "$PID" || { cat "$TMP/run.out" >&2; echo "perf_stages: htoe-bridge failed" >&2; exit 1; }
PID=
perf report -i "$TMP/perf.data" --no-children --sort comm,dso,sym --stdio -g none \
  --percent-limit 0 -F overhead,sample,comm,dso,sym 2>/dev/null | grep -v '^#' >"$TMP/report.txt"
/usr/bin/python3 - "$TMP/report.txt" "$TMP/run.out" "$SECS" <<'PY'
import json, re, sys

report, run, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
summary = json.loads([l for l in open(run) if l.startswith("{")][-1])
nodes = {n["id"]: n for n in summary["per_node"]}
iv = nodes[1]["wl_finish_s"] - nodes[1]["wl_start_s"]
pps = nodes[2]["to_target"] / iv
packets = pps * secs
HZ = 4999.0

# symbol -> stage (the bridge's data path, in the order a write takes)
STAGES = [
    ("workload (requester model: generate, issue)", r"^(ht_wl_|ht_req_|ht_op_|htnode_poll$|ht_pkt_set|enc_sized|build_data)"),
    ("HT in (local input: node 1's HT packets into the bridge)", r"^(htoe_local_input|local_input)"),
    ("remap (address map)", r"^htoe_map_"),
    ("encap (frame build: HT encode, header, CRC32C)", r"^(htoe_encap_|ht_encode|crc32_)"),
    ("Ethernet out and in (net_ring PMD, rte_ring, mbufs)", r"^(eth_ring_|rte_|common_ring|0x)|librte_"),
    ("decap (parse, checks, HT decode)", r"^(htoe_frame_input|htoe_decap_|htoe_hdr_|ht_decode|ht_validate|htoe_parse)"),
    ("HT out and target (local output, memory target model)", r"^(htoe_local_output|local_output|ht_tgt_|htoe_lq_|ht_cmd_kind|ht_pkt_vc)"),
    ("retry, credits, timers (Go-Back-N, acks)", r"^(htoe_retry_|htoe_credit_|htoe_outstanding_|htoe_next_deadline|htoe_rxpool)"),
    ("poll loop (br_lcore_loop: inlined rx/tx glue and idle polling)", r"^(br_|wire_tx|tx_frame|rx_frame|deliver|node_poll)"),
    ("libc copies", r"^(__mem|mem)"),
    ("kernel (interrupts, scheduler)", r"^\[k\]"),
]
cost = {}  # (stage, thread) -> samples
tot = {}
for line in open(report):
    m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+)\s+(\S+)\s+\[(.)\]\s+(.*\S)", line)
    if not m:
        continue
    _, n, comm, dso, kind, sym = m.groups()
    n = int(n)
    thread = "lcore 1 (node 2)" if comm.startswith("rte-worker") else "lcore 0 (node 1)"
    key = ("[k]" if kind == "k" else sym)
    stage = "other"
    for name, rx in STAGES:
        if re.search(rx, key) or re.search(rx, dso):
            stage = name
            break
    cost[(stage, thread)] = cost.get((stage, thread), 0) + n
    tot[thread] = tot.get(thread, 0) + n
th = ["lcore 0 (node 1)", "lcore 1 (node 2)"]
print("perf_stages: %.3f M HT packets/s (64-byte posted writes, net_ring), %.0f in the %.0f s "
      "profiled; CPU time sampled: %s" % (pps / 1e6, packets, secs,
      ", ".join("%s %.2f s" % (t, tot.get(t, 0) / HZ) for t in th)))
print("| stage | lcore 0, node 1 (sends) | lcore 1, node 2 (receives) | both |")
print("|---|---|---|---|")
for name in [s for s, _ in STAGES] + ["other"]:
    v = [cost.get((name, t), 0) / HZ / packets * 1e9 for t in th]
    if sum(v) > 0:
        print("| %s | %.0f ns | %.0f ns | %.0f ns |" % (name, v[0], v[1], v[0] + v[1]))
v = [tot.get(t, 0) / HZ / packets * 1e9 for t in th]
print("| **all** | %.0f ns | %.0f ns | %.0f ns |" % (v[0], v[1], v[0] + v[1]))
PY
