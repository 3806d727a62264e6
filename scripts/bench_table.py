#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The results tables of docs/benchmarks.md and docs/dimm.md, made from one JSON.

    scripts/bench_table.py JSON                 print the tables (Markdown)
    scripts/bench_table.py JSON --write DOC     put them between DOC's markers
    scripts/bench_table.py JSON --check DOC     exit 1 if DOC's tables differ

JSON is what `htoe-bench --json` or `htoe-dimm --json` wrote (docs/bench-results.json,
docs/dimm-results.json). The tables sit between the lines

    <!-- results: begin (made by scripts/bench_table.py from FILE; do not edit) -->
    <!-- results: end -->

so a doc's figures are the ones of the JSON beside it (the docs test runs --check).
Every figure of the JSON appears: the known ones in their own tables, any other one
(a scenario added to the benchmark later) in "Other figures".
"""
import json
import math
import os
import sys

BEGIN = "<!-- results: begin"
END = "<!-- results: end -->"


def loss_order(label):
    """Loss-sweep rows in order: random loss by rate, then bursts in frames, then bursts in time
    ('0.1%', '1%', '1% burst', 'burst 100us')."""
    head = label.split("%")[0]
    try:
        rate = float(head)
    except ValueError:
        return (2, label)
    return (1 if " burst" in label else 0, rate)


def num(v, digits=3):
    """A number with `digits` significant digits, thousands unseparated."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if not isinstance(v, (int, float)):
        return str(v)
    if v == 0:
        return "0"
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    mag = int(math.floor(math.log10(abs(v))))
    dec = max(0, digits - 1 - mag)
    return f"{v:.{dec}f}"


def pct(v):
    return "—" if v is None else num(100 * v) + " %"


def mega(v):
    return "—" if v is None else num(v / 1e6) + " M"


def us(ns):
    return "—" if ns is None else num(ns / 1e3)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out + [""]


def flatten(prefix, v, out):
    """Numeric and text leaves of v as (path, value); histograms are skipped."""
    if isinstance(v, dict):
        for k in sorted(v):
            if k != "hist":
                flatten(f"{prefix}.{k}" if prefix else k, v[k], out)
    elif isinstance(v, list):
        if all(isinstance(x, (int, float)) for x in v) and len(v) <= 16:
            out.append((prefix, ", ".join(num(x) for x in v)))
        else:
            for i, x in enumerate(v):
                flatten(f"{prefix}[{i}]", x, out)
    else:
        out.append((prefix, num(v)))


def other(items):
    """Figures this script has no table for, so that none is left out."""
    rows = []
    for key, v in items:
        flatten(key, v, rows)
    if not rows:
        return []
    return ["Other figures (each leaf of the JSON):", ""] + table(["figure", "value"], rows)


def measured_on(m, extra=""):
    load = m.get("loadavg1")
    return [f"Measured {m.get('date', '?')} on {m.get('cpu_model', '?')}, "
            f"{m.get('cpus', '?')} CPUs, load average {num(load)} at the start, "
            f"commit {m.get('git', '?')} (version {m.get('version', '?')}){extra}.", ""]


# ----------------------------------------------------------------- htoe-bench

UNIT_SCALE = {"M/s": 1e-6, "%": 100.0, "us": 1e-3}  # "us" figures are in ns


def target_rows(targets):
    rows = []
    for t in targets:
        s = UNIT_SCALE.get(t["unit"], 1.0)
        u = (" " + t["unit"]) if t["unit"] else ""
        if t.get("unavailable") or t.get("value") is None:
            meas, met = "not measured: " + str(t.get("unavailable")), "—"
        else:
            meas, met = num(t["value"] * s) + u, "yes" if t["met"] else "**no**"
        rows.append([t["figure"], meas, f"{t['cmp']} {num(t['target'] * s)}{u}", met])
    return table(["figure", "measured", "target", "met"], rows)


def lat_row(name, size, h):
    if not h:
        return None
    return [name, f"{size} B", us(h.get("p50_ns")), us(h.get("p99_ns")), us(h.get("p999_ns")),
            us(h.get("mean_ns")), us(h.get("min_ns")), h.get("count", "—")]


LINE_RTT_FAR_NS = 350


def bench_tables(j):
    f = dict(j.get("figures", {}))
    m = j.get("machine", {})
    share = j.get("min_cpu_share")
    starved = [r["run"] for r in j.get("runs", []) if r.get("cpu_share", 1) < 0.5]
    extra = (f"; {num(j.get('run_seconds'))} s in all, {num(j['durations']['throughput_s'])} s "
             f"per throughput run" if "durations" in j else "")
    out = measured_on(m, extra)
    lr = m.get("line_rtt_ns")
    if lr and len(lr) == 2:
        at = [f"{num(x)} ns" if x else "not measured" for x in lr]
        # (about 150 ns with the vCPUs close together, 550-700 ns far apart)
        far = [x >= LINE_RTT_FAR_NS for x in lr if x]
        where = ("" if len(far) != 2 else
                 " The CPUs were far apart throughout: every figure that crosses between "
                 "the lcores (round trips, frame rates) is slower than with them close, and "
                 "a ratio against the raw ping-pong smaller." if all(far) else
                 " The CPUs were close together throughout." if not any(far) else
                 " The host moved them during the run: compare only figures taken in turns.")
        out[-1:-1] = [f"A cache line's round trip between CPUs 0 and 1 took {at[0]} at the "
                      f"start, {at[1]} at the end (`machine.line_rtt_ns`).{where}"]
    if share is not None:
        out += [f"The scenario with the least CPU got {pct(share)} of its two lcores"
                + (f"; under 50 %: {', '.join(starved)}" if starved else "")
                + " (`runs[].cpu_share` in the JSON).", ""]
    if j.get("errors"):
        out += ["Scenarios that failed: " + "; ".join(
            f"{e['scenario']}: {e['error']}" for e in j["errors"]), ""]
    out += ["**Targets**", ""] + target_rows(j.get("targets", []))

    ws = f.pop("write_sizes", None)
    w64 = f.pop("write64", None) or {}  # the 64-byte row of write_sizes, with its baseline
    base = f.pop("baseline_fwd", None)
    if ws:
        rows = [[f"{w['size']} B", mega(w["ht_pps"]), num(w["mbps"]), mega(w["frames_per_s"]),
                 f"{num(w['avg_frame'])} B", num(w["ht_per_frame"]),
                 f"{pct(w['wire_eff_l2'])} / {pct(w['wire_eff_phy'])}",
                 pct(w["wire_eff_ht_l2"]),
                 mega(w.get("baseline_fps")) if w.get("baseline_fps") else "—"]
                for w in ws]
        out += ["**Posted writes** (net_ring, node 1 on lcore 0 to node 2 on lcore 1; HT "
                "payload MB/s; raw: frames of the same length forwarded without the bridge)",
                ""]
        out += table(["HT payload", "HT packets/s", "MB/s", "frames/s", "mean frame",
                      "HT per frame", "payload ÷ L2 / L1", "HT packets ÷ L2", "raw frames/s"],
                     rows)
    if base:
        out += ["Raw forwarding (net_ring): " + "; ".join(
            f"{b['frame_len']} B {mega(b['fps'])}frames/s" for b in base) + ".", ""]

    rows = []
    for key, name in (("raw_rtt_ring", "raw ping-pong, net_ring"),
                      ("raw_rtt_memif", "raw ping-pong, memif"),
                      ("read_rtt_ring", "read, net_ring"), ("read_rtt_memif", "read, memif"),
                      ("tcp_rtt", "TCP loopback ping-pong")):
        d = f.pop(key, None) or {}
        for size in sorted(d, key=int):
            rows.append(lat_row(name, size, d[size]))
    ns = f.pop("netns", None)
    if ns and ns.get("available"):
        for pmd in ("af_packet", "af_xdp"):
            p = ns.get(pmd) or {}
            for key, name in (("raw_rtt", "raw ping-pong"), ("read_rtt", "read")):
                for size in sorted(p.get(key) or {}, key=int):
                    rows.append(lat_row(f"{name}, {pmd} (two namespaces)", size,
                                        p[key][size]))
    rows = [r for r in rows if r]
    f.pop("read_vs_raw", None)  # in the targets
    f.pop("memif_vs_tcp", None)
    unclean = f.pop("raw_rtt_echo_unclean", None)
    if rows:
        out += ["**Round trips** (closed loop, one outstanding; µs)"
                + (f"; memif echo sides that did not exit cleanly: {unclean}"
                   if unclean is not None else ""), ""]
        out += table(["path", "size", "p50", "p99", "p99.9", "mean", "min", "count"], rows)

    poll = f.pop("poll", None)
    if poll:
        rows = [[mode, pct(p.get("idle_cpu_share")),
                 us((p.get("read_rtt") or {}).get("p50_ns")),
                 us((p.get("read_rtt") or {}).get("p99_ns"))] for mode, p in poll.items()]
        out += ["**Polling** (an idle serve-only node on memif; read 8 B, µs)", ""]
        out += table(["poll mode", "CPU of the idle node", "read p50", "read p99"], rows)

    ref, loss, ms = f.pop("write64_reference", None), f.pop("loss", None), f.pop("macsec", None)
    if ref:
        rows = [["lossless, MACsec off (reference)", num(ref["mbps"]), "100 %", "—"]]
        if loss:
            rows.append(["1 % frame loss ([impair] loss = 0.01)", num(loss["mbps"]),
                         pct(loss.get("goodput_frac")), num(loss.get("retransmits"))])
        if ms and ms.get("available"):
            rows.append(["MACsec GCM-AES-128, encrypt", num(ms["on"]["mbps"]),
                         pct(ms.get("on_off_frac")), num(ms["on"].get("retransmits"))])
        elif ms:
            rows.append(["MACsec", "not measured: " + str(ms.get("reason")), "—", "—"])
        out += ["**64-byte posted writes under loss and MACsec**", ""]
        out += table(["run", "MB/s", "of reference", "retransmits"], rows)

    sweep = f.pop("loss_sweep", None)
    if sweep:
        rows = []
        for mode, runs in sweep.items():
            rows.append([mode, "none (the reference)", num(runs.get("reference_mbps")),
                         "100 %", "—", "—"])
            for loss_s, r in sorted(((k, v) for k, v in runs.items() if isinstance(v, dict)),
                                    key=lambda kv: loss_order(kv[0])):
                rows.append([mode, loss_s, num(r.get("mbps")), pct(r.get("goodput_frac")),
                             num(r.get("dropped")), num(r.get("resent_per_lost"))])
        out += ["**Goodput against loss** (64-byte posted writes; the median of the lossy "
                "runs ÷ the median of as many lossless runs of the same mode, taken in turns; "
                "the reference row: the median of all references)", ""]
        out += table(["retry mode", "loss", "MB/s", "of lossless", "frames dropped",
                      "resent per lost"], rows)

    def series(key, title, heads, row):
        """A series keyed by a count (incast, peers_scale): one row per run, by count."""
        runs = f.pop(key, None)
        if not runs:
            return []
        rows = [row(n, r) for n, r in sorted(runs.items(), key=lambda kv: int(kv[0]))]
        return [title, ""] + table(heads, rows)

    out += series("incast", "**Incast** (N senders on lcore 0, one receiver on lcore 1; "
                  "64-byte writes)",
                  ["senders", "writes/s", "of one sender's", "Jain's index", "CPU of 2 lcores"],
                  lambda n, r: [f"{n} → 1", mega(r["writes_per_s"]), pct(r.get("vs_single")),
                                num(r.get("jain"), 4), pct(r.get("cpu_share"))])

    wb = f.pop("write64_bridge", None)
    if wb:
        rows = [[name, mega(w.get("ht_pps")), mega(w.get("frames_per_s")),
                 num(w.get("avg_frame")), pct(w.get("ratio_frames")),
                 pct(w.get("ratio_ht", w.get("ratio_ht_injected_raw")))]
                for name, w in (("with the model (write64)", w64),
                                ("injected, no model (write64_bridge)", wb))]
        out += ["**The bridge alone** (64-byte posted writes; raw = net_ring forwarding at the "
                "injected run's mean frame length, run right after it; the model's frames/s "
                "against its own baseline)", ""]
        out += table(["writes", "writes/s", "frames/s", "mean frame B", "frames ÷ raw frames",
                      "writes ÷ raw frames (target ≥ 60 %)"], rows)

    out += series("peers_scale", "**Configured peers** (64-byte writes node 1 → node 2; the "
                  "other peers configured, idle)",
                  ["peers", "writes/s", "of 1 peer's", "frames/s to idle peers",
                   "CPU of 2 lcores"],
                  lambda n, r: [n, mega(r["writes_per_s"]), pct(r.get("vs_one")),
                                num(r.get("idle_frames_per_s")), pct(r.get("cpu_share"))])

    cr = f.pop("crypto", None)
    if cr:
        rows = [[c["backend"], f"{c['frame_len']} B", num(c["path_ns"]), num(c["raw_ns"]),
                 pct(c["ratio"]), pct(c.get("oop_ratio"))] for c in cr]
        out += ["**MACsec crypto path** (ns per frame, protect + validate in place against "
                "the backend's encrypt + decrypt; ratio = raw ÷ path)", ""]
        out += table(["backend", "frame", "path ns", "raw ns", "raw ÷ path",
                      "out of place"], rows)

    if ns:
        if not ns.get("available"):
            out += ["Two namespaces: not measured: " + str(ns.get("reason")), ""]
        else:
            rows = []
            for pmd in ("af_packet", "af_xdp"):
                p = ns.get(pmd) or {}
                if not p.get("available"):
                    rows.append([pmd, "not measured: " + str(p.get("reason")), "", "", ""])
                    continue
                w = p.get("write64") or {}
                rows.append([pmd, mega((p.get("raw_fwd_64") or {}).get("fps")),
                             mega(w.get("ht_pps")), num(w.get("mbps")),
                             pct(w.get("ratio_frames"))])
            out += ["**Two namespaces over a veth pair** (64-byte posted writes)", ""]
            out += table(["PMD", "raw 64 B frames/s", "HT packets/s", "MB/s",
                          "bridge ÷ raw frames"], rows)
    return out + other(sorted(f.items()))


# ----------------------------------------------------------------- htoe-dimm

def dimm_tables(j):
    j = dict(j)
    m = j.pop("machine", {})
    st = j.pop("setup", {})
    out = measured_on(m)
    out += [f"Setup: {st.get('transport')}, working set {num(st.get('wss_bytes', 0) / 2**20)} "
            f"MiB ({st.get('pages')} pages), pager mode `{st.get('pager_mode')}`, "
            f"{st.get('wait')}, readahead {st.get('readahead')}, clean_low "
            f"{st.get('clean_low')}.", ""]
    runs = j.pop("runs", [])
    if runs:
        rows = [[r["workload"], f"{r['budget_pct']} %", num(r["time_s"]),
                 f"{num(r['throughput'])} {r['unit']}", num(r["slowdown"]),
                 (r.get("pager") or {}).get("faults", "—"),
                 f"{num(r['fault_p50_us'])} / {num(r['fault_p99_us'])}",
                 (r.get("pager") or {}).get("writebacks", "—"),
                 "yes" if r.get("verified") else "**no**"] for r in runs]
        out += ["**Transparent mapping** (slowdown = time ÷ the same workload on local memory)",
                ""]
        out += table(["workload", "budget", "s", "throughput", "slowdown", "faults",
                      "fault p50 / p99 µs", "write-backs", "verified"], rows)
    loc = j.pop("local", None)
    if loc:
        out += ["Local memory: " + "; ".join(
            f"{k} {num(v['throughput'])} {v['unit']}" for k, v in loc.items()) + ".", ""]
    b = j.pop("baselines", None)
    if b:
        rows = [["userfaultfd round trip, local page copy",
                 f"{num(b.get('uffd_p50_us'))} / {num(b.get('uffd_p99_us'))}"],
                ["the same pager over TCP to a page server (fault)",
                 f"{num(b.get('tcp_fault_p50_us'))} / {num(b.get('tcp_fault_p99_us'))}"]]
        out += ["**Baselines** (per page fault, µs)", ""]
        out += table(["baseline", "p50 / p99"], rows)
    ex = j.pop("explicit", None)
    if ex:
        out += ["**Explicit API**", ""]
        out += table(["64 B read p50 / p99 µs", "read MB/s", "write MB/s",
                      "remote fetch-add M/s", "verified"],
                     [[f"{num(ex['read64_p50_us'])} / {num(ex['read64_p99_us'])}",
                       num(ex["read_MBps"]), num(ex["write_MBps"]),
                       num(ex["fetch_add_mups"]), "yes" if ex["verified"] else "**no**"]])
    vl = j.pop("vl", None)
    if vl:
        out += ["VL counters of the whole run: " + ", ".join(
            f"{k} {v}" for k, v in vl.items()) + ".", ""]
    for k in ("tool", "lease", "ok", "error", "copy_retries"):
        j.pop(k, None)
    return out + other(sorted(j.items()))


def tables(j):
    lines = dimm_tables(j) if j.get("tool") == "htoe-dimm" else bench_tables(j)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def splice(doc_text, body, src):
    b = doc_text.find(BEGIN)
    e = doc_text.find(END)
    if b < 0 or e < b:
        raise ValueError(f"no '{BEGIN} ...' / '{END}' markers")
    head = doc_text[:b] + (f"{BEGIN} (made by scripts/bench_table.py from {src}; "
                           "do not edit) -->\n")
    return head + body + doc_text[e:]


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] not in ("--write", "--check")):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as fh:
        body = tables(json.load(fh))
    if len(argv) == 2:
        sys.stdout.write(body)
        return 0
    doc = argv[3]
    with open(doc) as fh:
        old = fh.read()
    src = os.path.relpath(argv[1], os.path.dirname(os.path.dirname(os.path.abspath(doc))))
    try:
        new = splice(old, body, src)
    except ValueError as e:
        print(f"bench_table.py: {doc}: {e}", file=sys.stderr)
        return 2
    if argv[2] == "--check":
        if new != old:
            print(f"bench_table.py: {doc}: its results table is not what {argv[1]} makes; "
                  f"run scripts/bench_table.py {argv[1]} --write {doc}", file=sys.stderr)
            return 1
        return 0
    with open(doc, "w") as fh:
        fh.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
