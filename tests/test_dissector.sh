#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Wireshark dissector test (meson suite 'wireshark'):
#
#   tests/test_dissector.sh BUILD_DIR SOURCE_DIR
#
# Runs tshark with tools/wireshark/htoe.lua on every pcap of pcap/ and checks it with
# tests/dissector_check.py: the fields are registered, every header field matches the
# bytes, every HT packet matches `htoe-ht decode` field by field, every lease message
# matches lib/htoe's decoder (tests/lease_decode), no expert error except
# the expected ones in pcap/malformed.pcap, the worked examples of docs/wire-format.md,
# corpus coverage. Prints `dissector: N passed, M failed`; exits non-zero on a failure.
# tshark is required (scripts/setup.sh installs it): without it the test fails.
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD_DIR SOURCE_DIR" >&2
	exit 2
fi
build=$1
src=$2
lua=$src/tools/wireshark/htoe.lua
htoe_ht=$build/app/htoe-ht
lease_decode=$build/tests/lease_decode

fail() {
	echo "test_dissector: $*" >&2
	echo "dissector: 0 passed, 1 failed"
	exit 1
}

tshark=$(command -v tshark || true)
[ -n "$tshark" ] || fail "tshark not found: install it (scripts/setup.sh installs Debian's tshark)"
[ -x "$htoe_ht" ] || fail "$htoe_ht not built"
[ -x "$lease_decode" ] || fail "$lease_decode not built"
[ -f "$lua" ] || fail "$lua missing"
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
[ -n "$py" ] || fail "python3 not found"
shopt -s nullglob
pcaps=("$src"/pcap/*.pcap)
[ ${#pcaps[@]} -gt 0 ] || fail "no pcap files in $src/pcap (scripts/gen-pcaps.sh makes them)"

# A clean Wireshark profile: no personal preferences or personal plugins.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp
unset XDG_CONFIG_HOME WIRESHARK_CONFIG_DIR || true

# tshark loads installed plugins before -X lua_script, and two copies of the dissector
# cannot both register "htoe". An installed copy identical to the source is used as is.
lua_arg=$lua
installed=$("$tshark" -G plugins 2>/dev/null | awk -F'\t' '$1 == "htoe.lua" { print $NF }' | head -1)
if [ -n "$installed" ]; then
	if cmp -s "$installed" "$lua"; then
		lua_arg=
	else
		fail "an older htoe.lua is installed at $installed; reinstall it" \
			"(meson install -C $build --tags wireshark) or remove it"
	fi
fi

exec "$py" "$src/tests/dissector_check.py" --tshark "$tshark" --lua "$lua_arg" \
	--htoe-ht "$htoe_ht" --lease-decode "$lease_decode" --synth "$src/scripts/synth_pcaps.py" "${pcaps[@]}"
