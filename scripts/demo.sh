#!/usr/bin/env bash
# The README's main command: installs what is needed, builds, and runs the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build
exec ./build/app/htoe-ht demo "$@"
