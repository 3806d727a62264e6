#!/usr/bin/env bash
# Installs everything htoe needs to build, test and run on Debian 12 (bookworm), as root.
# Idempotent: packages already present are skipped by apt; safe to run again.
set -euo pipefail

PKGS=(
  # build (help2man: the man pages are generated from the programs' --help)
  build-essential meson ninja-build pkg-config clang libclang-rt-14-dev llvm help2man
  # DPDK 22.11 and the PMDs/libraries the bridge loads
  dpdk dpdk-dev libdpdk-dev
  # libraries
  libpcap-dev libssl-dev libcmocka-dev libipsec-mb-dev libjansson-dev libisal-dev python3-crc32c
  # the Prometheus endpoint ([global] metrics)
  libmicrohttpd-dev
  # tests, tools and plots
  tshark python3-scapy python3-cryptography python3-matplotlib iproute2 jq
  # the metrics test (promtool checks the scrapes) and the unit check
  prometheus curl systemd
)

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: must run as root (it installs Debian packages)" >&2
  exit 1
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer for it.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup.sh: all packages present"
fi
