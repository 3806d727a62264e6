#!/usr/bin/env bash
# The per-stage cost of the bridge's 64-byte posted writes ("ns per HT
# packet per stage", docs/benchmarks.md), from a perf profile of htoe-bench's write64 run:
# two nodes in one htoe-bridge on a net_ring pair, node 1 (lcore 0) posting
# 64-byte writes to node 2 (lcore 1). perf records both lcores for SECONDS in
# the middle of the run (cpu-clock samples: only while a thread is on a CPU);
# every sampled symbol is put into a stage, and each stage's CPU time is
# divided by the HT packets node 2's memory target applied in that window
# (the run's mean rate x SECONDS). Symbols of more than 0.5 % of the samples
# that no stage claims are named on stderr (a renamed function: add it to
# STAGES). Needs perf and permission to profile.
# MODE inject: node 1's writes pre-built ([workload] mode = inject, no model).
# MODE read: 8-byte reads, one outstanding (the read round trip); each stage's
# CPU time per read (both lcores also spin while the read is on the wire:
# that is the poll loop's share).
#   scripts/perf_stages.sh [BUILD_DIR [SECONDS [MODE]]]     (docs/benchmarks.md)
set -euo pipefail
BUILD=${1:-build} SECS=${2:-4} MODE=${3:-verify}
BRIDGE=$BUILD/app/htoe-bridge
command -v perf >/dev/null || { echo "perf_stages: perf not found (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$BRIDGE" ] || { echo "perf_stages: $BRIDGE not built" >&2; exit 2; }
TMP=$(mktemp -d /tmp/perf_stages.XXXXXX)
PREFIX=perf-stages-$$
trap 'kill -KILL ${PID:-} 2>/dev/null || true; rm -rf "$TMP" /var/run/dpdk/$PREFIX "${XDG_RUNTIME_DIR:-/tmp}/dpdk/$PREFIX"' EXIT

# the INI htoe-bench writes for its write64 run (read: its 8-byte read round
# trip), with a longer duration
MIX=wrp=100 SIZE=64 WMODE=$MODE
[ "$MODE" = read ] && MIX=rd=100 SIZE=8 WMODE=verify
. "$(dirname "$0")/bench_ini.sh"
bench_ini "$TMP/w64.ini" "$MIX" "$SIZE" "$WMODE" $((SECS * 1000 + 6000)) 1
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
/usr/bin/python3 - "$TMP/report.txt" "$TMP/run.out" "$SECS" "$MODE" <<'PY'
import json, re, sys

report, run, secs, mode = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
summary = json.loads([l for l in open(run) if l.startswith("{")][-1])
nodes = {n["id"]: n for n in summary["per_node"]}
iv = nodes[1]["wl_finish_s"] - nodes[1]["wl_start_s"]
pps = (nodes[1]["read_rtt"]["count"] if mode == "read" else nodes[2]["to_target"]) / iv
packets = pps * secs
HZ = 4999.0

# symbol -> stage (the bridge's data path, in the order a write takes); the
# first match wins. Names as of the data-path rewrite (lib/htoe split into
# htoe.c, htoe_encap.c, htoe_deliver.c, htoe_wire.c, htoe_outstanding.c,
# htoe_poison.c...; the node serves parsed descriptors, ht_tgt_serve*).
L0, L1 = "lcore 0 (node 1)", "lcore 1 (node 2)"
STAGES = [
    ("workload (requester model: generate, issue)",
     r"^(ht_wl_|ht_req_|ht_op_|htnode_poll$|issue_ops$|issue_one$|ht_pkt_set|ht_enc_sized$|"
     r"enc_sized$|ht_completion_|complete$|to_requester$|unissue_tag$|take_tag$|rx_core$|"
     r"htinject_|inject_poll$)"),
    ("HT in (local input: node 1's HT packets into the bridge)",
     r"^(htoe_local_input|local_input$|local_request$|local_response$|enqueue_request$|lin_pkt$|"
     r"bridge_unitid$)"),
    ("remap (address map, tags, access table)",
     r"^(htoe_map_|remap_request$|htoe_tagremap_|htoe_np_|np_info$|tag_index$|tag_free$|"
     r"htoe_acl_|acl_|check_access$)"),
    ("encap (frame build: HT encode, header, CRC32C)",
     r"^(htoe_encap_(?!on_ack|deadline)|htoe_frame_output$|vl_output$|vl_starved$|try_new_frame$|"
     r"build_data$|copy_slots$|slot_ordered$|write_hdr$|htoe_hdr_write$|htoe_frame_seal$|"
     r"htoe_frame_set_npkts$|htoe_write_ct|htoe_vl_on_frame_sent$|htoe_l2_len$|frame_l2_len$|"
     r"ht_encode|htoe_crc32c|crc_|crc32_)"),
    ("Ethernet out and in (net_ring PMD, rte_ring, mbufs)",
     r"^(eth_ring_|rte_|common_ring|0x|tx_mbuf$|stash_fill$|done_flush$)|librte_"),
    ("decap (parse, checks, HT decode)",
     r"^(htoe_frame_input$|htoe_frame_parse$|htoe_decap_|htoe_hdr_check$|payload_check$|"
     r"htoe_payload_check$|htoe_pkt_iter_|ht_peek_|ht_decode|ht_validate$|deliver_pkt$|"
     r"hold_frame$|drain_held$|sack_type$|sack_payload$|ctrl_input$|htoe_ctrl_recv$|"
     r"htoe_reset_input$|htoe_ftype_)"),
    ("HT out and target (local output, memory target model)",
     r"^(htoe_local_output$|local_output$|local_flush$|htoe_lq_|htoe_flush_complete$|"
     r"htoe_remote_response$|htoe_answer_local$|ht_tgt_|from_bridge|target_response$|"
     r"rspq_commit$|drain_rspq$|byte_path$|ht_cmd_kind$|ht_cmd_vc$|ht_pkt_vc$|ht_enc_rsp$|"
     r"ht_data_copy$|ht_addr_reserved$)"),
    ("retry, credits, timers (Go-Back-N / selective, acks)",
     r"^(htoe_retry_|htoe_credit_|htoe_outstanding_|htoe_next_deadline$|htoe_rxpool|htoe_rob_|"
     r"htoe_handle_expiry$|htoe_encap_on_ack$|htoe_encap_deadline$|release_acked$|"
     r"try_retransmit$|rack_detect$|tlp_arm$|sel_|mark_lost$|htoe_poison_|htoe_busy$|"
     r"ack_common$|expire_cb$)"),
    ("poll loop (br_lcore_loop: inlined rx/tx glue and idle polling)",
     r"^(br_|wire_tx$|rx_frame$|deliver$|node_poll$|node_check_done$|impaired$|hold$|idle_sleep$|"
     r"htnode_busy$|htnode_workloads_done$|"
     r"htoe_vl_node$|htoe_vl_is_up$|htoe_get_vl_stats$|htoe_n_vls$|clock_gettime|"
     r"__clock_gettime|__vdso_)|\[vdso\]"),
    ("libc copies", r"^(__mem|mem)"),
    ("kernel (interrupts, scheduler)", r"^\[k\]"),
]
# one parse per packet: the bridge parses node 1's requests at local input,
# the node parses what node 2's bridge hands it before the target serves it
BY_THREAD = {"ht_desc_parse": {L0: STAGES[1][0], L1: STAGES[6][0]}}
cost = {}  # (stage, thread) -> samples
tot = {}
unmapped = {}  # symbol -> samples (for the warning below)
for line in open(report):
    m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+)\s+(\S+)\s+\[(.)\]\s+(.*\S)", line)
    if not m:
        continue
    _, n, comm, dso, kind, sym = m.groups()
    n = int(n)
    thread = L1 if comm.startswith("rte-worker") else L0
    # gcc's clones of a static function (.part.0, .isra.0, .cold...) count as it
    key = "[k]" if kind == "k" else re.sub(r"\.(part|isra|constprop|cold|lto_priv)\b.*$", "", sym)
    stage = BY_THREAD.get(key, {}).get(thread, "other")
    for name, rx in ([] if stage != "other" else STAGES):
        if re.search(rx, key) or re.search(rx, dso):
            stage = name
            break
    if stage == "other":
        unmapped[key] = unmapped.get(key, 0) + n
    cost[(stage, thread)] = cost.get((stage, thread), 0) + n
    tot[thread] = tot.get(thread, 0) + n
# a renamed function shows up here: give it a stage above
big = sorted(((v, k) for k, v in unmapped.items() if v >= 0.005 * sum(tot.values())), reverse=True)
if big:
    print("perf_stages: symbols in no stage (>= 0.5 %% of the samples): %s"
          % ", ".join("%s %d" % (k, v) for v, k in big), file=sys.stderr)
th = [L0, L1]
print("perf_stages: %.3f M %s/s (net_ring), %.0f in the %.0f s profiled; CPU time sampled: %s"
      % (pps / 1e6, "8-byte reads, one outstanding" if mode == "read" else
         "HT packets (64-byte posted writes)", packets, secs,
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
