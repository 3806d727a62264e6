#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates the pcap corpus (pcap/*.pcap, described in pcap/README.md) from the built tools.
#
#   scripts/gen-pcaps.sh [BUILD_DIR [OUT_DIR]]     defaults: build, pcap
#
# Deterministic: htoe-sim runs in virtual time with fixed seeds and writes nanosecond time
# stamps, and scripts/synth_pcaps.py has no randomness. The same tools give the same bytes.
# Every file stays far below 2 MB (small --mem: the start-up read sweep is short).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
out=${2:-$src/pcap}
sim=$build/app/htoe-sim

if [ ! -x "$sim" ]; then
	echo "gen-pcaps.sh: $sim not found: build first (meson setup $build && ninja -C $build)" >&2
	exit 1
fi
mkdir -p "$out"

run() {
	local name=$1
	shift
	"$sim" --quiet --pcap "$out/$name" "$@" >"$out/.$name.json"
	if ! grep -q '"violations":0' "$out/.$name.json"; then
		echo "gen-pcaps.sh: $name: the simulator reports violations:" >&2
		cat "$out/.$name.json" >&2
		exit 1
	fi
	rm -f "$out/.$name.json"
	printf '%-22s %8d bytes\n' "$name" "$(stat -c %s "$out/$name")"
}

# Common: 2 KiB of memory per node (a short start-up read sweep) and the default op mix
# (reads, posted and non-posted writes, byte and dword, fetch-add, CAS, flush, fence).
small=(--mem 2048)

# Clean run: cold RESET/RESET_ACK at start-up, DATA on all three VCs, ACKs. The default
# 64 KiB sweep is kept here: its bursts exhaust the credits, so ACKs carry CREDIT_REQ.
run basic.pcap --nodes 2 --seed 1 --transactions 400
# Loss, reordering and duplication: NAKs and Go-Back-N retransmissions.
run lossy.pcap --nodes 2 --seed 2 --transactions 300 "${small[@]}" \
	--loss 0.05 --reorder 0.05 --dup 0.02
# A warm VL reset under load (node 1 resets its VL to node 2 at 4 us). The requests it
# poisons are answered locally by each bridge: error responses do not cross the wire.
run reset.pcap --nodes 2 --seed 3 --transactions 300 "${small[@]}" --reset 1:2:4000
# A partition longer than the NP timeout: retransmissions with backoff, request timeouts
# and warm VL resets at the retry limit until the partition heals (the master-abort answers
# to the timed-out requests are again local).
run partition.pcap --nodes 2 --seed 4 --transactions 200 "${small[@]}" \
	--partition 20000:500000000
# Node 2 restarts at 6 us: cold reset of its VLs, new epoch.
run restart.pcap --nodes 2 --seed 5 --transactions 300 "${small[@]}" --restart 2:6000
# Four nodes: twelve VLs through the switch.
run nodes4.pcap --nodes 4 --seed 6 --transactions 300 --mem 4096

# Integrity-only MACsec (E=0, C=0) around every frame of reset.pcap, with htoe-pcap (the
# MACsec tool). Test key 000102030405060708090a0b0c0d0e0f, GCM-AES-128, SCI
# 02:48:54:00:00:01/1, AN 0, PNs from 1: deterministic, and Wireshark dissects the HToE
# frames inside without the key. htoe-pcap macsec-decrypt with that key gives reset.pcap back.
pcaptool=$build/app/htoe-pcap
if [ -x "$pcaptool" ] && "$pcaptool" --help 2>&1 | grep -q -- --integrity-only; then
	"$pcaptool" macsec-encrypt --in "$out/reset.pcap" --out "$out/macsec-integrity.pcap" \
		--key 000102030405060708090a0b0c0d0e0f --sci 024854000001:0001 --an 0 --pn 1 \
		--integrity-only --pad >/dev/null
	printf '%-22s %8d bytes\n' macsec-integrity.pcap "$(stat -c %s "$out/macsec-integrity.pcap")"
else
	echo "gen-pcaps.sh: $pcaptool (macsec-encrypt --integrity-only) not built:" \
		"macsec-integrity.pcap not regenerated" >&2
fi

# Hand-built frames: worked examples, 64-bit addresses, CTRL, MACsec, malformed set.
/usr/bin/python3 "$here/synth_pcaps.py" "$out"
for f in synthetic.pcap malformed.pcap; do
	printf '%-22s %8d bytes\n' "$f" "$(stat -c %s "$out/$f")"
done
