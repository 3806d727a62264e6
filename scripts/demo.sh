#!/usr/bin/env bash
# The README's main command: installs what is needed, builds, and runs the demo:
# htoe-bridge's embedded two-node demo (docs/bridge.md). Two HToE nodes in one
# process, each on its own lcore, joined by a DPDK net_ring crossover pair, each
# running a verified workload against the other's memory. Extra arguments go to
# htoe-bridge, e.g.:  bash scripts/demo.sh --transactions 100000
#                     bash scripts/demo.sh --set impair.loss=1% --set impair.reorder=1%
#                     bash scripts/demo.sh --macsec   (MACsec-encrypted, with loss and
#                                     corruption: config/two-node-macsec.ini, docs/macsec.md)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build
[ -x build/app/htoe-bridge ] || { echo "demo.sh: htoe-bridge was not built (libdpdk-dev missing?)" >&2; exit 1; }

prefix=htoe-demo
# the EAL's runtime directory stays behind after exit
trap 'rm -rf "/var/run/dpdk/$prefix" "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk/$prefix" "/tmp/dpdk/$prefix"' EXIT
args=()
for a in "$@"; do
  if [ "$a" = --macsec ]; then args+=(--config config/two-node-macsec.ini); else args+=("$a"); fi
done
./build/app/htoe-bridge -l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix "$prefix" \
  --log-level=warning -- ${args[@]+"${args[@]}"}
