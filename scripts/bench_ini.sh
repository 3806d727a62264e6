# Sourced by scripts/perf_stages.sh, cg_read_path.sh and tsc_read_path.sh: the INI
# htoe-bench writes for its write64 run and its read round trip (two nodes
# in one htoe-bridge on a net_ring pair, node 1 sending to node 2).
#   bench_ini FILE MIX SIZE MODE DURATION_MS NODE2_LCORE
bench_ini() {
  cat >"$1" <<INI
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
lcore = $6
[port 0]
crossover = 1
[port 1]
crossover = 0
[workload 1]
target = 2
mix = $2
sizes = $3
window = 1
sweep = off
mode = $4
duration = $5ms
[map]
range1 = 0x100000000 64K 1
range2 = 0x200000000 64K 2
INI
}

# The htoe-bridge of a path probe (app/bridge/path_probe.h), built: BUILD
# configured with the meson option OPTION (made with it and ARGS if absent).
#   probe_bridge PROG BUILD OPTION [ARGS...]
probe_bridge() {
  local prog=$1 build=$2 opt=$3
  shift 3
  [ -d "$build" ] || meson setup "$build" "-D$opt=true" -Dtests=false "$@" >/dev/null
  [ "$(meson introspect "$build" --buildoptions | /usr/bin/python3 -c \
       "import json,sys; print([o['value'] for o in json.load(sys.stdin) if o['name'] == '$opt'][0])")" = True ] ||
    { echo "$prog: $build is not configured with -D$opt=true" >&2; exit 2; }
  ninja -C "$build" app/htoe-bridge >/dev/null
}
