#!/usr/bin/python3
# htoe-bench: plot throughput versus HT payload size, the read round-trip
# CDFs and goodput against loss for both retry modes from the JSON htoe-bench
# writes.
#   bench_plot.py RESULTS.json OUTDIR
# htoe-bench embeds this script and runs it with /usr/bin/python3 itself.
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def throughput(fig_data, dst):
    runs = sorted(fig_data.get("write_sizes", []), key=lambda r: r["size"])
    if not runs:
        print("bench_plot: no throughput runs to plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    xs = [r["size"] for r in runs]
    ax.plot(xs, [r["mbps"] for r in runs], marker="o", label="HT payload MB/s (htoe-bridge)")
    for r in runs:
        ax.annotate("%.2f M pkt/s" % (r["ht_pps"] / 1e6), (r["size"], r["mbps"]),
                    textcoords="offset points", xytext=(4, 6), fontsize=7)
    ax.axhline(2500, color="grey", linestyle=":", label="target: 2500 MB/s (64 B)")
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_yscale("log")
    ax.set_xlabel("HT payload per posted write (bytes)")
    ax.set_ylabel("MB/s of HT payload delivered")
    ax2 = ax.twinx()
    ax2.plot(xs, [100 * r["wire_eff_l2"] for r in runs], color="tab:green", marker="s",
             linestyle="--", label="wire efficiency, L2 (%)")
    ax2.set_ylim(0, 100)
    ax2.set_ylabel("wire efficiency (%)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper left")
    ax.set_title("htoe-bench: posted-write throughput, net_ring, one lcore per node")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst)


def cdf(hist):
    total = sum(c for _, c in hist)
    xs, ys, acc = [], [], 0
    for low, c in hist:
        acc += c
        xs.append(low / 1e3)
        ys.append(acc / total)
    return xs, ys


def latency(fig_data, dst):
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    any_curve = False
    for key, label in (("read_rtt_ring", "read, net_ring"), ("read_rtt_memif", "read, memif"),
                       ("raw_rtt_ring", "raw ping-pong, net_ring"),
                       ("raw_rtt_memif", "raw ping-pong, memif"),
                       ("tcp_rtt", "TCP ping-pong")):
        for size, st in sorted(fig_data.get(key, {}).items(), key=lambda kv: int(kv[0])):
            if not st.get("hist"):
                continue
            xs, ys = cdf(st["hist"])
            ax.step(xs, ys, where="post",
                    label="%s %s B (p50 %.1f us)" % (label, size, st["p50_ns"] / 1e3))
            any_curve = True
    if not any_curve:
        print("bench_plot: no latency histograms to plot", file=sys.stderr)
        plt.close(fig)
        return
    ax.axvline(1, color="grey", linestyle=":", label="target p50 1 us (net_ring)")
    ax.set_xscale("log")
    ax.set_xlabel("round trip (us)")
    ax.set_ylabel("fraction of requests")
    ax.set_ylim(0, 1.001)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("htoe-bench: remote read round trip (one request in flight)")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(dst)


def loss(fig_data, dst):
    sweep = fig_data.get("loss_sweep", {})
    names = ["0.1%", "1%", "5%", "10%", "1% burst"]
    if not any(sweep.get(m, {}).get(n) for m in sweep for n in names):
        print("bench_plot: no loss sweep to plot", file=sys.stderr)
        return
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2), dpi=110)
    width = 0.38
    for k, mode in enumerate(["gbn", "selective"]):
        runs = sweep.get(mode, {})
        xs = [i + (k - 0.5) * width for i in range(len(names))]
        ax.bar(xs, [100 * runs.get(n, {}).get("goodput_frac", 0) for n in names], width,
               label=mode)
        bx.bar(xs, [runs.get(n, {}).get("resent_per_lost", 0) for n in names], width,
               label=mode)
    for a, title in ((ax, "goodput, % of lossless"), (bx, "frames resent per frame lost")):
        a.set_xticks(range(len(names)))
        a.set_xticklabels(names)
        a.set_xlabel("frames lost ([impair])")
        a.set_title(title)
        a.grid(axis="y", alpha=0.3)
        a.legend()
    fig.suptitle("htoe-bridge, 64-byte posted writes over net_ring: retry modes under loss")
    fig.tight_layout()
    fig.savefig(dst)


def main():
    src, out = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        res = json.load(f)
    figs = res.get("figures", {})
    throughput(figs, out + "/bench-throughput.png")
    latency(figs, out + "/bench-latency.png")
    loss(figs, out + "/bench-loss.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
