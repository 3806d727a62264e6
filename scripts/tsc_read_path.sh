#!/usr/bin/env bash
# The time of each stage of a read round trip's path at full speed, per end
# (docs/benchmarks.md, "Profiling"): htoe-bridge built with the meson option
# tsc_path (in BUILD_DIR, default build-tscpath, made here), node 1 reading 8
# bytes from node 2 with one read outstanding for SECONDS, twice: node 2 on
# its own lcore (lcore 1, as htoe-bench measures the round trip), then both
# nodes on lcore 0 (no cache line crosses between cores: the difference in
# "input" and "wire" is what the transfers between the cores cost). Each
# lcore prints the mean TSC time of each stage from the RX burst that
# brings a frame to the flush of the first frame it lets leave
# (app/bridge/path_probe.h): input (htoe_frame_input, with the delivery to
# the model: a read's target is served there), model (htnode_poll: the
# requester issues the next read), framing (htoe_frame_output), wire (the
# TX burst up to the flush) and glue; then the read's round trip of that
# run (its median, with the probe's marks on the path).
#   scripts/tsc_read_path.sh [BUILD_DIR [SECONDS]]
set -euo pipefail
BUILD=${1:-build-tscpath} SECS=${2:-3}
. "$(dirname "$0")/bench_ini.sh"
probe_bridge tsc_read_path "$BUILD" tsc_path
TMP=$(mktemp -d /tmp/tsc_read_path.XXXXXX)
PREFIX=tsc-read-path-$$
trap 'rm -rf "$TMP" /var/run/dpdk/$PREFIX' EXIT
for lc in 1 0; do
  bench_ini "$TMP/read.ini" rd=100 8 verify $((SECS * 1000)) $lc
  if [ $lc = 1 ]; then echo "node 1 on lcore 0, node 2 on lcore 1:"; L=0,1
  else echo "both nodes on lcore 0:"; L=0; fi
  "$BUILD/app/htoe-bridge" -l $L --no-huge -m 512 --no-pci --no-shconf --file-prefix "$PREFIX" \
    --log-level=warning -- --config "$TMP/read.ini" --json >"$TMP/run.out" 2>"$TMP/err" ||
    { cat "$TMP/run.out" "$TMP/err" >&2; echo "tsc_read_path: htoe-bridge failed" >&2; exit 1; }
  grep '^path (tsc_path)' "$TMP/err" | sed 's/^path (tsc_path): /  /'
  /usr/bin/python3 - "$TMP/run.out" <<'PY'
import json, sys
s = json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1])
r = {n["id"]: n for n in s["per_node"]}[1]["read_rtt"]
print(f"  {r['count']} reads; round trip p50 {r['p50_ns']:.0f} ns")
PY
done
