#!/usr/bin/python3
# htoe-dimm: plot the slowdown against all-local memory versus the local
# memory budget, from the JSON that htoe-dimm writes; with baselines, a second
# panel: the remote fault's p50/p99 per budget next to the local userfaultfd
# round trip and the TCP pager measured in the same run.
#   dimm_plot.py RESULTS.json OUT.png
# htoe-dimm embeds this script and runs it with /usr/bin/python3 itself.
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, encoding="utf-8") as f:
        res = json.load(f)
    runs = [r for r in res.get("runs", []) if r.get("verified")]
    if not runs:
        print("dimm_plot: no verified runs to plot", file=sys.stderr)
        return 1
    bl = res.get("baselines")
    if bl:
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 4.8), dpi=110)
    else:
        fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=110)
    for wl in sorted({r["workload"] for r in runs}):
        pts = sorted(((r["budget_pct"], r["slowdown"]) for r in runs if r["workload"] == wl),
                     reverse=True)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=wl)
        for x, y in pts:
            ax.annotate("%.1fx" % y, (x, y), textcoords="offset points", xytext=(4, 4),
                        fontsize=7)
    ax.set_xlabel("local memory budget (% of the working set resident)")
    ax.set_ylabel("slowdown vs. all-local memory (x)")
    ax.set_yscale("log")
    ax.invert_xaxis()
    budgets = sorted({r["budget_pct"] for r in runs}, reverse=True)
    ax.set_xticks(budgets)
    ax.set_xticklabels(["%d%%" % b for b in budgets])
    # the paper's scenario (HToE paper 5.1): 50 % and 75 % less DRAM per blade
    for b, txt in ((50, "paper: -50% DRAM"), (25, "paper: -75% DRAM")):
        if b in budgets:
            ax.axvline(b, color="grey", linestyle=":", linewidth=0.8)
            ax.text(b, ax.get_ylim()[0], " " + txt, rotation=90, va="bottom", ha="right",
                    fontsize=7, color="grey")
    setup = res.get("setup", {})
    ax.set_title("htoe-dimm: remote memory over HToE (%s, working set %s MiB)" %
                 (setup.get("transport", "?"), "%.1f" % (setup.get("wss_bytes", 0) / 2**20)),
                 fontsize=9)
    ax.grid(True, which="both", linewidth=0.3)
    ax.legend(fontsize=8)
    if bl:
        fault_panel(bx, runs, bl, budgets)
    fig.tight_layout()
    fig.savefig(dst)
    return 0


def fault_panel(bx, runs, bl, budgets):
    """Remote fault p50 (line) and p99 (dashed) per budget, baselines as
    horizontal lines."""
    for wl in sorted({r["workload"] for r in runs}):
        pts = sorted(((r["budget_pct"], r["fault_p50_us"], r["fault_p99_us"])
                      for r in runs if r["workload"] == wl), reverse=True)
        line, = bx.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=wl + " p50")
        bx.plot([p[0] for p in pts], [p[2] for p in pts], marker=".", linestyle="--",
                color=line.get_color(), linewidth=0.8, label=wl + " p99")
    for key, txt, col in (("uffd_p50_us", "userfaultfd round trip p50", "black"),
                          ("tcp_fault_p50_us", "TCP pager fault p50", "red")):
        if bl.get(key, 0) > 0:
            bx.axhline(bl[key], color=col, linestyle=":", linewidth=1.2)
            bx.text(budgets[-1], bl[key], " %s %.1f us" % (txt, bl[key]), va="bottom",
                    ha="right", fontsize=7, color=col)
    bx.set_xlabel("local memory budget (% of the working set resident)")
    bx.set_ylabel("remote page fault (us)")
    bx.set_yscale("log")
    bx.invert_xaxis()
    bx.set_xticks(budgets)
    bx.set_xticklabels(["%d%%" % b for b in budgets])
    bx.set_title("remote fault vs. baselines measured in the same run", fontsize=9)
    bx.grid(True, which="both", linewidth=0.3)
    bx.legend(fontsize=6, ncol=2)


if __name__ == "__main__":
    sys.exit(main())
