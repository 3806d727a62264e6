#!/usr/bin/env bash
# Instructions on a read round trip's path, per read (docs/benchmarks.md,
# "Profiling"): htoe-bridge built with the meson option callgrind_path (in
# BUILD_DIR, default build-cgpath, made here without LTO so that each
# function keeps its name), both nodes on one lcore, node 1 reading 8 bytes
# with one read outstanding for SECONDS under valgrind's callgrind. Only
# the instructions between a frame's arrival (the RX burst that brings it)
# and the flush of the first frame that poll sends are counted
# (app/bridge/path_probe.h): at both ends of the round trip, what delays it.
# Prints the reads completed, the instructions on the path per read, and
# the functions with the most of them (inclusive, per read). Needs valgrind.
#   scripts/cg_read_path.sh [BUILD_DIR [SECONDS [TOP]]]
set -euo pipefail
BUILD=${1:-build-cgpath} SECS=${2:-4} TOP=${3:-30}
command -v valgrind >/dev/null ||
  { echo "cg_read_path: valgrind not found (apt-get install valgrind)" >&2; exit 2; }
[ -f /usr/include/valgrind/callgrind.h ] ||
  { echo "cg_read_path: valgrind/callgrind.h not found (apt-get install valgrind)" >&2; exit 2; }
. "$(dirname "$0")/bench_ini.sh"
probe_bridge cg_read_path "$BUILD" callgrind_path -Db_lto=false
TMP=$(mktemp -d /tmp/cg_read_path.XXXXXX)
PREFIX=cg-read-path-$$
trap 'rm -rf "$TMP" /var/run/dpdk/$PREFIX' EXIT
bench_ini "$TMP/read.ini" rd=100 8 verify $((SECS * 1000)) 0
valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$TMP/cg.out" \
  "$BUILD/app/htoe-bridge" -l 0 --no-huge -m 512 --no-pci --no-shconf --file-prefix "$PREFIX" \
  --log-level=warning -- --config "$TMP/read.ini" --json >"$TMP/run.out" 2>"$TMP/vg.err" ||
  { cat "$TMP/run.out" "$TMP/vg.err" >&2; echo "cg_read_path: htoe-bridge failed" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg.out" >"$TMP/incl.txt" 2>/dev/null
/usr/bin/python3 - "$TMP/run.out" "$TMP/incl.txt" "$TOP" <<'PY'
import json, re, sys

run, incl, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
summary = json.loads([l for l in open(run) if l.startswith("{")][-1])
reads = {n["id"]: n for n in summary["per_node"]}[1]["read_rtt"]["count"]
rows = []
for line in open(incl):
    m = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S+):(\S+) \[(.*)\]", line)
    if m:
        rows.append((int(m.group(1).replace(",", "")), m.group(2), m.group(3)))
path = next((n for n, f, fn in rows if fn == "br_lcore_loop"), 0)
print(f"cg_read_path: {reads} reads; {path / reads:.0f} instructions per read on the round "
      f"trip's path (both ends)")
shown = 0
for n, f, fn in rows:
    # the project's functions on the path (the exit's teardown is not)
    if not re.search(r"(^|/)(lib|app)/", f) or fn in ("main", "br_lcore_loop"):
        continue
    where = re.sub(r"^.*?/(lib|app)/", r"\1/", f)
    print(f"{n / reads:7.0f}  {fn}  ({where})")
    shown += 1
    if shown == top:
        break
PY
