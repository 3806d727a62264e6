#!/usr/bin/env bash
# htoe-bench --quick (suite 'bridge'): every scenario runs and the JSON holds
# every figure as a number, consistent with the numbers it was derived from.
# No assertion on any value against a target or on speed: the machine is shared.
#   test_bench_smoke.sh HTOE_BENCH
BENCH=$1
. "$(dirname "$0")/lib.sh"

BRIDGE="$(dirname "$BENCH")/htoe-bridge"

# The bridge features the bench relies on: [workload] sizes (fixed HT payload
# size) and the read round-trip histogram and per-node counters in --json.
cat >"$TMP/wl.ini" <<INI
[global]
stats_interval = 0
[port 0]
crossover = 1
[port 1]
crossover = 0
[node 1]
port = 0
[node 2]
port = 1
[map]
range1 = 0x100000000 64K 1
range2 = 0x200000000 64K 2
[workload]
mix = wrp=100
sizes = 64
ops = 1000
[workload 1]
target = 2
INI
rc=0
timeout -k 10 240 "$BRIDGE" $(eal) -- --config "$TMP/wl.ini" --set workload.sizes=6 \
  >"$TMP/bad.out" 2>&1 || rc=$?
[ "$rc" -eq 2 ] || { cat "$TMP/bad.out"; fail "sizes = 6: exit status $rc, not 2"; }
grep -q "\[workload.*sizes.*'6'.*multiple of 4" "$TMP/bad.out" ||
  { cat "$TMP/bad.out"; fail "sizes = 6: no message naming section, key and value"; }
ok "[workload] sizes = 6 refused: $(grep sizes "$TMP/bad.out" | head -1)"
for run in "wrp=100 64 on" "rd=100 8 off"; do
  set -- $run
  rc=0
  timeout -k 10 240 "$BRIDGE" $(eal) -- --config "$TMP/wl.ini" --set "workload.mix=$1" \
    --set "workload.sizes=$2" --set "workload.sweep=$3" --set workload.window=1 --json \
    >"$TMP/wl.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$TMP/wl.out"; fail "workload $run: exit status $rc"; }
  grep '^{' "$TMP/wl.out" | tail -1 | python3 -c '
import json, sys
mix, size, sweep = sys.argv[1:4]
d = json.load(sys.stdin)
n = {x["id"]: x for x in d["per_node"]}
rtt = n[1]["read_rtt"]
if mix == "wrp=100":
    # 1000 posted writes, then the sweep reads all 1024 blocks: the target
    # served exactly 2024 requests; only the sweep reads completed (they are
    # not in the round-trip histogram)
    assert d["ops"] == 2024 and d["completions"] == 1024 == d["verified"], d
    assert n[2]["to_target"] == 2024 and rtt["count"] == 0, (n[2], rtt)
else:
    # 1000 closed-loop reads, each in the histogram
    assert d["ops"] == d["completions"] == d["verified"] == 1000, d
    assert n[2]["to_target"] == 1000 and rtt["count"] == 1000, (n[2], rtt)
    assert sum(c for _, c in rtt["hist"]) == 1000, rtt
    assert 0 < rtt["min_ns"] <= rtt["p50_ns"] <= rtt["p99_ns"] <= rtt["max_ns"], rtt
' $run || { cat "$TMP/wl.out"; fail "workload $run: wrong counters in --json"; }
  ok "workload mix $1 sizes $2: counters and histogram as expected"
done

# [workload] mode = inject (write64_bridge): 3000 pre-built writes wrap the
# 1024 blocks of node 2's memory twice and end in the middle of the third
# pass; node 2 applied exactly those, and its memory is the expected image
rc=0
timeout -k 10 240 "$BRIDGE" $(eal) -- --config "$TMP/wl.ini" --set workload.mode=inject \
  --set workload.ops=3000 --json >"$TMP/inj.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$TMP/inj.out"; fail "mode = inject: exit status $rc"; }
grep -q "memory image identical" "$TMP/inj.out" ||
  { cat "$TMP/inj.out"; fail "mode = inject: memory image not checked or differs"; }
grep '^{' "$TMP/inj.out" | tail -1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
n = {x["id"]: x for x in d["per_node"]}
assert n[2]["to_target"] == 3000 and d["completions"] == 0, (d, n[2])
assert n[1]["wl_size"] == n[2]["mem_size"] and n[1]["shadow_crc32c"] == n[2]["mem_crc32c"], n
' || { cat "$TMP/inj.out"; fail "mode = inject: wrong counters or image in --json"; }
ok "mode = inject: 3000 writes applied, memory image as expected"

rc=0
# plots asked for only where /usr/bin/python3 has matplotlib (without it --plots is an error)
plots=()
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && plots=(--plots "$TMP/plots")
timeout -k 10 600 "$BENCH" --quick --json "$TMP/bench.json" "${plots[@]}" \
  >"$TMP/bench.out" 2>"$TMP/bench.err" || rc=$?
cat "$TMP/bench.out"
[ "$rc" -eq 0 ] || { cat "$TMP/bench.err" >&2; fail "htoe-bench --quick: exit status $rc"; }
grep -q "^figure (targets: docs/benchmarks.md)" "$TMP/bench.out" || fail "no table of targets"

python3 - "$TMP/bench.json" <<'PY' || fail "the JSON is incomplete or inconsistent"
import json, math, sys

d = json.load(open(sys.argv[1]))
f = d["figures"]
bad = []

def need(cond, what):
    if not cond:
        bad.append(what)

def isnum(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

def close(a, b, what):
    need(isnum(a) and isnum(b) and abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b)), what)

need(d["errors"] == [], "errors: %s" % d["errors"])

# 2. throughput at every HT payload size, with its baseline and ratios
sizes = [w["size"] for w in f["write_sizes"]]
need(sizes == [4, 8, 16, 32, 64], "write sizes %s" % sizes)
for w in f["write_sizes"]:
    for k in ("ht_pps", "mbps", "frames_per_s", "avg_frame", "wire_eff_l2", "wire_eff_phy",
              "ratio_frames", "ratio_bytes", "baseline_fps"):
        need(isnum(w.get(k)) and w[k] > 0, "write %d B: %s = %s" % (w["size"], k, w.get(k)))
    close(w["mbps"] * 1e6, w["ht_pps"] * w["size"], "write %d B: MB/s = pps x size" % w["size"])
    # efficiency: payload over frame + FCS (+ preamble and IFG): < 1, L1 < L2
    need(0 < w["wire_eff_phy"] < w["wire_eff_l2"] < 1, "write %d B: efficiencies" % w["size"])
    close(w["wire_eff_ht_l2"] / w["wire_eff_l2"], (w["size"] + 8) / w["size"],
          "write %d B: HT-packet efficiency = payload efficiency x (size+8)/size" % w["size"])
    close(w["wire_eff_l2"] / w["wire_eff_phy"], (w["avg_frame"] + 24) / (w["avg_frame"] + 4),
          "write %d B: L2/L1 efficiency ratio = (frame+24)/(frame+4)" % w["size"])
    fl = max(60, int(w["avg_frame"] + 0.5))
    # two sizes may give the same mean frame length: each run has its own baseline
    b = next((b for b in f["baseline_fwd"] if b["frame_len"] == fl and isnum(b.get("fps"))
              and abs(b["fps"] - w["baseline_fps"]) <= 1e-9 * b["fps"]), None)
    need(b is not None, "no baseline at the %d-byte frames of the %d B run" % (fl, w["size"]))
    if b is not None:
        need(isnum(b["fps"]) and b["fps"] > 0 and b["frames"] > 0, "baseline %d B" % fl)
        close(b["gbps"], b["fps"] * fl * 8 / 1e9, "baseline %d B: Gbit/s" % fl)
        close(w["ratio_frames"], w["frames_per_s"] / b["fps"], "ratio_frames %d" % w["size"])
        close(w["ratio_bytes"], w["mbps"] * 1e6 / (b["fps"] * fl), "ratio_bytes %d" % w["size"])
need(f["write64"]["size"] == 64, "write64")

# 3, 4. latency summaries: ordered percentiles, histograms that add up
def lat(st, what):
    for k in ("count", "min_ns", "mean_ns", "p50_ns", "p99_ns", "p999_ns", "max_ns"):
        need(isnum(st.get(k)), "%s: %s" % (what, k))
    need(st["count"] > 0, "%s: no samples" % what)
    need(st["min_ns"] <= st["p50_ns"] <= st["p99_ns"] <= st["p999_ns"] <= st["max_ns"],
         "%s: percentiles out of order" % what)
    need(st["min_ns"] <= st["mean_ns"] <= st["max_ns"], "%s: mean" % what)
    need(sum(c for _, c in st["hist"]) == st["count"], "%s: histogram sum" % what)
    lows = [lo for lo, _ in st["hist"]]
    need(lows == sorted(lows) and lows[0] <= st["min_ns"], "%s: histogram order" % what)

for size in ("8", "64"):
    lat(f["read_rtt_ring"][size], "net_ring read %s B" % size)
    lat(f["read_rtt_memif"][size], "memif read %s B" % size)
    lat(f["tcp_rtt"][size], "TCP ping-pong %s B" % size)
    for p in ("50", "99"):
        close(f["memif_vs_tcp"][size]["p" + p],
              f["read_rtt_memif"][size]["p%s_ns" % p] / f["tcp_rtt"][size]["p%s_ns" % p],
              "memif/TCP p%s %s B" % (p, size))

# 3a. the raw ping-pong floors, shaped like read_rtt_*, and read RTT / raw: the
# median of the read slices over the median of the raw slices taken in turns
def median(v):
    v = sorted(v)
    return (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2

# the memif echo side stops before the ping side leaves (else it crashes)
need(f["raw_rtt_echo_unclean"] == 0,
     "raw ping-pong: %s echo sides did not exit 0" % f.get("raw_rtt_echo_unclean"))
for link in ("ring", "memif"):
    for size in ("8", "64"):
        raw = f["raw_rtt_" + link][size]
        lat(raw, "raw ping-pong %s %s B" % (link, size))
        need(raw["frame_len"] == 14 + 32 + 8 + int(size) and isnum(raw["lost"]),
             "raw ping-pong %s %s B: frame_len %s" % (link, size, raw.get("frame_len")))
        vr = f["read_vs_raw"][link][size]
        for p in ("50", "99"):
            rd, rw = vr["read_p%s_slices" % p], vr["raw_p%s_slices" % p]
            need(len(rd) >= 1 and len(rw) >= 1 and all(isnum(x) and x > 0 for x in rd + rw),
                 "read/raw %s p%s %s B: slices" % (link, p, size))
            close(vr["p" + p], median(rd) / median(rw), "read/raw %s p%s %s B" % (link, p, size))

# 8. the two-namespace path: skipped with a reason, or every figure
ns = f["netns"]
ns_skip = None
if not ns["available"]:
    need(ns["reason"].startswith("unavailable"), "netns: no reason")
    ns_skip = ns["reason"]
else:
    for pmd in ("af_packet", "af_xdp"):
        p = ns[pmd]
        need(p["vdev"] == "net_%s0,iface=htoe0" % pmd, "netns %s: vdev %s" % (pmd, p["vdev"]))
        if not p["available"]:
            need(pmd == "af_xdp" and p["reason"].startswith("unavailable"),
                 "netns %s: unavailable without a reason" % pmd)
            continue
        for r in (p["raw_fwd_64"], p["raw_fwd"]):
            need(isnum(r["fps"]) and r["fps"] > 0 and r["frames"] > 0, "netns %s raw" % pmd)
            close(r["gbps"], r["fps"] * r["frame_len"] * 8 / 1e9, "netns %s raw Gbit/s" % pmd)
        need(p["raw_fwd_64"]["frame_len"] == 64, "netns %s: raw 64 B" % pmd)
        w = p["write64"]
        need(w["size"] == 64 and isnum(w["ht_pps"]) and w["ht_pps"] > 0, "netns %s write" % pmd)
        need(p["raw_fwd"]["frame_len"] == max(60, int(w["avg_frame"] + 0.5)),
             "netns %s: raw at the bridge's mean frame" % pmd)
        close(w["ratio_frames"], w["frames_per_s"] / p["raw_fwd"]["fps"],
              "netns %s: bridge/raw frames" % pmd)
        lat(p["read_rtt"]["8"], "netns %s read 8 B" % pmd)
        lat(p["raw_rtt"]["8"], "netns %s raw ping-pong" % pmd)
        close(p["read_vs_raw"]["8"]["p50"],
              p["read_rtt"]["8"]["p50_ns"] / p["raw_rtt"]["8"]["p50_ns"],
              "netns %s read/raw" % pmd)
    if ns["af_xdp"]["available"]:
        close(ns["af_xdp_vs_af_packet"]["write64_ht_pps"],
              ns["af_xdp"]["write64"]["ht_pps"] / ns["af_packet"]["write64"]["ht_pps"],
              "netns af_xdp / af_packet")
    else:
        ns_skip = ns["af_xdp"]["reason"]

# polling: an idle serve-only node's CPU share and the read round trip, busy and adaptive
for mode in ("busy", "adaptive"):
    pm = f["poll"][mode]
    need(isnum(pm["idle_cpu_share"]) and 0 <= pm["idle_cpu_share"] <= 2,
         "poll %s: idle_cpu_share %s" % (mode, pm.get("idle_cpu_share")))
    lat(pm["read_rtt"], "poll %s: read 8 B" % mode)

# 5. loss: goodput against the reference run, frames really dropped
lo = f["loss"]
close(lo["goodput_frac"], lo["mbps"] / f["write64_reference"]["mbps"], "goodput fraction")
need(lo["impair_dropped"] > 0, "no frame dropped by [impair] loss = 0.01")
# the loss sweep: both retry modes, every profile, frames dropped, fractions consistent
# the chance that a frame starts a loss in each row (app/bench/loss.c): a row must show drops
# only when it sent enough frames for that to be all but certain (a short run on a loaded
# machine may send too few: a few hundred frames at 0.1 % can lose none)
starts = {"0.1%": 0.001, "1%": 0.01, "5%": 0.05, "10%": 0.1, "1% burst": 0.00125,
          "burst 100us": 0.001}
for mode in ("gbn", "selective"):
    sw = f["loss_sweep"][mode]
    need(isnum(sw.get("reference_mbps")) and sw["reference_mbps"] > 0,
         "sweep %s: reference_mbps" % mode)
    for name in ("0.1%", "1%", "5%", "10%", "1% burst", "burst 100us"):
        r = sw[name]
        # each row: the median of its lossy runs against the median of its references
        for k, sl in (("mbps", "mbps_slices"), ("reference_mbps", "reference_slices")):
            v = sorted(r[sl])
            need(v and all(isnum(x) and x > 0 for x in v), "sweep %s %s: %s" % (mode, name, sl))
            close(r[k], (v[len(v) // 2] + v[(len(v) - 1) // 2]) / 2,
                  "sweep %s %s: %s is the median" % (mode, name, k))
        close(r["goodput_frac"], r["mbps"] / r["reference_mbps"], "sweep %s %s" % (mode, name))
        need(isnum(r.get("frames")) and r["frames"] > 0, "sweep %s %s: frames" % (mode, name))
        if r["frames"] * starts[name] >= 40:
            need(r["dropped"] > 0, "sweep %s %s: nothing dropped of %d frames"
                 % (mode, name, r["frames"]))

# incast: 1 (the reference), 2, 4, 8 senders through a hub; every sender made
# progress, Jain's index in (0, 1], ratios consistent with the goodputs
inc = f["incast"]
need(sorted(inc) == ["1", "2", "4", "8"], "incast: runs %s" % sorted(inc))
for n, r in inc.items():
    what = "incast %s -> 1" % n
    need(r["senders"] == int(n) and len(r["per_sender"]) == len(r["starved_share"]) == int(n),
         "%s: one goodput and one starved share per sender" % what)
    need(all(isnum(x) and x > 0 for x in r["per_sender"]), "%s: a sender made no progress" % what)
    close(r["writes_per_s"], sum(r["per_sender"]), "%s: aggregate = sum of senders" % what)
    s = r["per_sender"]
    close(r["jain"], sum(s) ** 2 / (len(s) * sum(x * x for x in s)), "%s: Jain's index" % what)
    need(0 < r["jain"] <= 1 + 1e-9, "%s: Jain %s" % (what, r["jain"]))
    # starved: a share of the run, which the workload's interval lies within
    need(all(isnum(x) and 0 <= x <= 1 + 1e-6 for x in r["starved_share"]),
         "%s: starved shares %s" % (what, r["starved_share"]))
    close(r["vs_single"], r["writes_per_s"] / inc["1"]["writes_per_s"], "%s: vs single" % what)
need(inc["1"]["jain"] == 1 and inc["1"]["vs_single"] == 1, "incast 1 -> 1 is the reference")

# write64_bridge: injected writes, node 2's memory as expected, the ratio to
# raw forwarding recomputed from its parts
wb = f["write64_bridge"]
need(wb["image_ok"] is True, "write64_bridge: memory image")
need(isnum(wb["ht_pps"]) and wb["ht_pps"] > 0 and isnum(wb["baseline_fps"]),
     "write64_bridge: figures")
close(wb["ratio_frames"], wb["frames_per_s"] / wb["baseline_fps"], "write64_bridge: ratio")
close(wb["ratio_ht"], wb["ht_pps"] / wb["baseline_fps"], "write64_bridge: HT ratio")
close(f["write64"]["ratio_ht_injected_raw"], f["write64"]["ht_pps"] / wb["baseline_fps"],
      "write64 beside write64_bridge: HT ratio")
tb = [t for t in d["targets"] if t["figure"].startswith("64-byte writes injected")]
need(len(tb) == 1 and tb[0]["value"] == wb["ratio_ht"],
     "write64_bridge: the target is writes/s over raw frames/s: %s" % tb)

# peers_scale: 1 (the reference), 8, 63 configured peers; writes got through,
# each the median of its rounds, ratios recomputed from the writes/s
ps = f["peers_scale"]
need(sorted(ps, key=int) == ["1", "8", "63"], "peers_scale: runs %s" % sorted(ps))
for p, r in ps.items():
    what = "peers_scale %s" % p
    need(r["peers"] == int(p), "%s: peers %s" % (what, r["peers"]))
    need(isnum(r["writes_per_s"]) and r["writes_per_s"] > 0, "%s: no writes" % what)
    need(isnum(r["idle_frames_per_s"]) and r["idle_frames_per_s"] >= 0, "%s: idle frames" % what)
    close(r["vs_one"], r["writes_per_s"] / ps["1"]["writes_per_s"], "%s: vs one peer" % what)
    rw = sorted(r["writes_per_s_rounds"])
    need(r["rounds"] >= 3 and len(rw) == r["rounds"], "%s: %s rounds" % (what, len(rw)))
    close(r["writes_per_s"], rw[(len(rw) - 1) // 2], "%s: the median round" % what)
need(ps["1"]["vs_one"] == 1 and ps["1"]["idle_frames_per_s"] == 0,
     "peers_scale 1 is the reference, with no idle peer")

# 6. MACsec: on/off when the bridge has [macsec], else a reason; crypto rows
m = f["macsec"]
if m["available"]:
    close(m["on_off_frac"], m["on"]["mbps"] / f["write64_reference"]["mbps"], "MACsec on/off")
else:
    need(m["reason"].startswith("unavailable"), "MACsec: no reason")
need(len(f["crypto"]) >= 3, "crypto rows")
for r in f["crypto"]:
    need(isnum(r["path_ns"]) and isnum(r["raw_ns"]) and r["path_ns"] > 0 and r["raw_ns"] > 0,
         "crypto %s %d" % (r["backend"], r["frame_len"]))
    close(r["ratio"], r["raw_ns"] / r["path_ns"], "crypto ratio")

# 7. every target: a number and a verdict (MACsec on/off only if available,
# the namespace ones only if namespaces and af_xdp are there)
names = [t["figure"] for t in d["targets"]]
need(len(names) == 32 and len(set(names)) == 32, "targets: %s" % names)
for t in d["targets"]:
    if t["value"] is None:
        need((t["figure"].startswith("MACsec on / off") and not m["available"]) or
             (t["figure"].startswith("netns") and ns_skip is not None and
              t["unavailable"] in (ns_skip, ns.get("reason"))),
             "target without a value: %s (%s)" % (t["figure"], t.get("unavailable")))
        continue
    need(isnum(t["value"]) and isinstance(t["met"], bool), "target %s" % t["figure"])
    need(t["met"] == (t["value"] <= t["target"] if t["cmp"] == "<=" else
                      t["value"] >= t["target"]), "verdict of %s" % t["figure"])

if bad:
    print("\n".join("bad: " + b for b in bad), file=sys.stderr)
    sys.exit(1)
print("ok: %d targets, %d write sizes, %d baselines, %d crypto rows" %
      (len(d["targets"]), len(sizes), len(f["baseline_fwd"]), len(f["crypto"])))
PY
ok "JSON complete and consistent"

# where and when it ran, and the tables scripts/bench_table.py makes from it
# (docs/benchmarks.md's results are made the same way from a full run)
SRC=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$TMP/bench.json" <<'PY' ||
import json, sys
m = json.load(open(sys.argv[1]))["machine"]
assert m["date"].endswith("Z") and m["cpu_model"] and m["cpus"] >= 1, m
assert m["git"] and m["version"] and "loadavg1" in m, m
# the cache line's round trip between the lcores' CPUs, at the start and the end
assert len(m["line_rtt_ns"]) == 2 and all(x > 0 for x in m["line_rtt_ns"]), m
PY
  fail "machine: no date, CPU model, CPU count, commit or line round trips"
python3 "$SRC/scripts/bench_table.py" "$TMP/bench.json" >"$TMP/table.md" ||
  fail "scripts/bench_table.py failed on the JSON"
grep -q '^Measured .* commit ' "$TMP/table.md" || fail "bench_table.py: no 'Measured' line"
grep -q "^A cache line's round trip between CPUs 0 and 1 took " "$TMP/table.md" ||
  fail "bench_table.py: no line round trip"
grep -Eq "^A cache line's round trip .*(The CPUs were (far apart|close together) throughout|The host moved them during the run)" \
  "$TMP/table.md" || fail "bench_table.py: no word on where the CPUs were"
grep -q '^| figure | measured | target | met |' "$TMP/table.md" ||
  fail "bench_table.py: no table of targets"
ok "machine recorded; bench_table.py makes the tables"

# the plots, where /usr/bin/python3 has matplotlib
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  for p in throughput latency loss; do
    [ -s "$TMP/plots/bench-$p.png" ] || fail "no bench-$p.png"
    head -c 8 "$TMP/plots/bench-$p.png" | od -An -tx1 | grep -q "89 50 4e 47" ||
      fail "bench-$p.png is not a PNG"
  done
  ok "plots written"
else
  ok "no matplotlib: no plots asked for"
fi
ok "htoe-bench --quick"
