# The preamble of the htoe-dimm end-to-end scripts (test_dimm_app.sh,
# test_dimm_run.sh), sourced after DIMM, SRC and MODE are set:
#   dimm_test_init NAME SIGNAL
# sets PREFIX (the EAL file prefix, unique to this run), TMP (a fresh
# directory) and PIDS (the processes to stop), and on exit sends SIGNAL to
# every process in PIDS, waits for them and removes the DPDK run files and TMP.
dimm_test_init() {
  PREFIX="htoe-test-$1-$MODE-$$"
  DIMM_KILL_SIG=$2
  TMP=$(mktemp -d "/tmp/${PREFIX}.XXXXXX")
  PIDS=()
  trap cleanup EXIT
}

cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "-$DIMM_KILL_SIG" "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && wait "$p" 2>/dev/null || true; done
  rm -rf "/var/run/dpdk/$PREFIX" "/var/run/dpdk/$PREFIX-a" "/var/run/dpdk/$PREFIX-b" \
    "/tmp/dpdk/$PREFIX" "$TMP"
}
