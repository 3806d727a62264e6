# Shared by the htoe-bridge tests (suite 'bridge'). Source it after setting
# BRIDGE (the htoe-bridge binary). Every test uses its own EAL --file-prefix
# and removes its DPDK runtime directory on exit.
set -euo pipefail

PREFIX="htoe-test-$(basename "$0" .sh)-$$"
TMP=$(mktemp -d "/tmp/${PREFIX}.XXXXXX")

runtime_dirs() {
  echo "/var/run/dpdk/$PREFIX"
  [ -n "${XDG_RUNTIME_DIR:-}" ] && echo "$XDG_RUNTIME_DIR/dpdk/$PREFIX"
  echo "/tmp/dpdk/$PREFIX"
}

cleanup() {
  local d
  for d in $(runtime_dirs); do rm -rf "$d"; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# EAL arguments for a test (LCORES defaults to 0-1).
eal() {
  echo "-l ${LCORES:-0-1} --no-huge -m 512 --no-pci --no-shconf --file-prefix $PREFIX --log-level=warning"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# json_get FILE KEY: a number from the last JSON line of FILE
json_get() {
  grep '^{' "$1" | tail -1 | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
