#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Command-line mistakes are refused with a message naming what is wrong, and
# what a newcomer tries first works: --version on every program; htoe-sim
# with any node count; no negative number taken for a huge unsigned one; an
# output file that cannot be written is an error before anything runs; a
# second DPDK process on a --file-prefix in use is told so.
#   usage: test_cli_errors.sh BUILD-APP-DIR BRIDGE(yes|no) VERSION
set -u

APP=${1:?usage: $0 BUILD-APP-DIR BRIDGE VERSION}
BRIDGE=${2:?}
VERSION=${3:?}

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-abort_on_error=1:halt_on_error=1:print_stacktrace=1}"

T=$(mktemp -d)
PREFIX="htoe-test-cli-$$"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do [ -z "$p" ] || kill -KILL "$p" 2>/dev/null; done
	for p in "${PIDS[@]:-}"; do [ -z "$p" ] || wait "$p" 2>/dev/null; done
	rm -rf "$T" /var/run/dpdk/"$PREFIX"* "${XDG_RUNTIME_DIR:-/nonexistent}"/dpdk/"$PREFIX"* \
		/tmp/dpdk/"$PREFIX"* 2>/dev/null
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

# expect NAME RC REGEX CMD...: CMD exits RC and its stderr+stdout matches REGEX
expect() {
	local name=$1 want=$2 re=$3 rc=0
	shift 3
	"$@" >"$T/out" 2>&1 || rc=$?
	if [ "$rc" -ge 128 ]; then
		bad "$name: crashed (exit $rc)"; cat "$T/out"
	elif [ "$rc" -ne "$want" ]; then
		bad "$name: exit $rc, expected $want"; cat "$T/out"
	elif ! grep -Eq -- "$re" "$T/out"; then
		bad "$name: output does not match /$re/"; cat "$T/out"
	else
		ok "$name"
	fi
}

progs="htoe-sim htoe-pcap htoe-ht"
[ "$BRIDGE" = yes ] && progs="$progs htoe-bridge htoe-dimm htoe-bench"
for p in $progs; do
	expect "$p --version" 0 "^$p $VERSION\$" "$APP/$p" --version
done

# htoe-sim: any node count with the default memory
for n in 3 5 6 7; do
	expect "htoe-sim --nodes $n (default --mem)" 0 '"violations":0' \
		"$APP/htoe-sim" --nodes "$n" --transactions 500 --quiet
done
expect "htoe-sim --mem not a multiple of 64*nodes names that condition" 2 \
	'memory per node 65536 is not a non-zero multiple of 64 \* nodes = 192.*65664' \
	"$APP/htoe-sim" --nodes 3 --mem 65536
expect "htoe-sim --nodes 65 names --nodes" 2 "bad value '65' for --nodes" "$APP/htoe-sim" --nodes 65
# negative numbers are not 2^64-1
expect "htoe-sim --seed -1" 2 "bad value '-1' for --seed" "$APP/htoe-sim" --seed -1
expect "htoe-sim --transactions ' 5'" 2 "bad value ' 5' for --transactions" \
	"$APP/htoe-sim" --transactions ' 5'
expect "htoe-sim --reset 1:-2:5" 2 "bad value '1:-2:5' for --reset" "$APP/htoe-sim" --reset 1:-2:5
expect "htoe-sim --mix rd=-1" 2 "bad value 'rd=-1' for --mix" "$APP/htoe-sim" --mix rd=-1
expect "htoe-sim --incast refuses --mix" 2 "--mix cannot be used with --incast" \
	"$APP/htoe-sim" --incast --mix wrp=1
expect "htoe-sim --egress-buf smaller than a frame" 2 "bad value '100' for --egress-buf" \
	"$APP/htoe-sim" --egress-buf 100
expect "htoe-sim --incast: JSON with the incast figures" 0 '"incast":\{"senders":2,' \
	"$APP/htoe-sim" --incast --nodes 3 --transactions 500 --quiet
expect "htoe-ht demo --ops -1" 2 "ops" "$APP/htoe-ht" demo --ops -1
expect "htoe-pcap --an -1" 2 "--an: '-1' is not a number" \
	"$APP/htoe-pcap" macsec-encrypt --in x --out y --key 00112233445566778899aabbccddeeff \
	--sci 0000000000000001 --an -1 --pn 1
# output files: an error at once
expect "htoe-sim --pcap into a missing directory" 2 "cannot write pcap $T/no/x.pcap" \
	"$APP/htoe-sim" --pcap "$T/no/x.pcap"

# bounded input: a line without end, NaN, a capture that cannot be written,
# a key file without a pair
# a memory limit makes a program without the cap fail instead of eating the machine's
# memory; AddressSanitizer reserves terabytes of address space and cannot run under one
vlimit=500000
ldd "$APP/htoe-ht" 2>/dev/null | grep -q libasan && vlimit=unlimited
expect "htoe-ht decode /dev/zero (no newline)" 2 "/dev/zero:1: a line longer than 1048576 bytes" \
	bash -c 'ulimit -v "$1"; exec timeout 60 "$0" decode /dev/zero' "$APP/htoe-ht" "$vlimit"
{ echo 00000000; head -c 1100000 /dev/zero | tr '\0' 0; echo; } > "$T/long.txt"
expect "htoe-ht decode: an over-long second line" 2 "long.txt:2: a line longer than" \
	"$APP/htoe-ht" decode "$T/long.txt"
for o in loss burst-loss; do
	expect "htoe-sim --$o nan" 2 "bad value 'nan' for --$o" "$APP/htoe-sim" --$o nan
done
expect "htoe-sim --burst-len nan" 2 "bad value 'nan' for --burst-len" "$APP/htoe-sim" --burst-len nan
expect "htoe-sim --pcap /dev/full" 2 "cannot write pcap /dev/full" \
	"$APP/htoe-sim" --pcap /dev/full --transactions 2000 --quiet
expect "htoe-pcap macsec-keys --peers ''" 2 "--peers '': names no node other than --node 0" \
	"$APP/htoe-pcap" macsec-keys --node 0 --peers '' --out "$T/k" \
	--master-key 000102030405060708090a0b0c0d0e0f
[ -e "$T/k" ] && bad "htoe-pcap left a key file behind after refusing"

if [ "$BRIDGE" = yes ]; then
	EAL="-l 0 --no-huge -m 512 --no-pci --no-shconf --file-prefix $PREFIX-x --log-level=warning"
	expect "htoe-dimm --json /nonexistent" 2 "htoe-dimm: --json: cannot write $T/no/x.json" \
		"$APP/htoe-dimm" $EAL -- --json "$T/no/x.json"
	expect "htoe-dimm --plot /nonexistent" 2 "htoe-dimm: --plot: cannot write $T/no/x.png" \
		"$APP/htoe-dimm" $EAL -- --json "$T/x.json" --plot "$T/no/x.png"
	[ -e "$T/x.json" ] && bad "htoe-dimm left $T/x.json behind after refusing to run"
	expect "htoe-dimm --capture /nonexistent/d" 2 "htoe-dimm: --capture: cannot create the directory $T/no/d" \
		"$APP/htoe-dimm" $EAL -- --capture "$T/no/d"
	expect "htoe-bridge --capture /nonexistent/d" 2 "htoe-bridge: --capture: cannot create the directory $T/no/d" \
		"$APP/htoe-bridge" $EAL -- --capture "$T/no/d"
	expect "htoe-bench --json /nonexistent" 2 "htoe-bench: --json: cannot write $T/no/x.json" \
		"$APP/htoe-bench" --json "$T/no/x.json"
	expect "htoe-bench --duration 3x" 2 "--duration '3x'" "$APP/htoe-bench" --duration 3x
	expect "htoe-bench --plots /nonexistent/d/e" 2 "htoe-bench: --plots: cannot create the directory" \
		"$APP/htoe-bench" --plots "$T/no/d"
	expect "htoe-dimm --budgets 50,-1" 2 "budgets '50,-1'" "$APP/htoe-dimm" $EAL -- --budgets 50,-1
	expect "htoe-dimm --lease-ms 0" 2 "--lease-ms '0': at least 100" \
		"$APP/htoe-dimm" $EAL -- --lease-ms 0
	expect "htoe-dimm --workloads ," 2 "--workloads ',': names no workload" \
		"$APP/htoe-dimm" $EAL -- --workloads ,
	expect "htoe-dimm --duration nan" 2 "--duration 'nan'" "$APP/htoe-dimm" $EAL -- --duration nan
	expect "htoe-bridge --duration nan" 2 "--duration 'nan': not seconds" \
		"$APP/htoe-bridge" $EAL -- --duration nan
	expect "htoe-bridge --transactions -1" 2 "--transactions '-1': not a count" \
		"$APP/htoe-bridge" $EAL -- --transactions -1

	# a second process on a --file-prefix in use (shared configuration: no --no-shconf)
	SH="-l 0 --no-huge -m 512 --no-pci --file-prefix $PREFIX-dup --log-level=warning"
	"$APP/htoe-bridge" $SH -- --duration 600 --stats 0 >"$T/first.out" 2>&1 &
	PIDS+=($!)
	first=$!
	# until it has started or died: a loaded host can take tens of seconds to start it
	# (the test's own timeout catches a hang)
	while kill -0 "$first" 2>/dev/null && ! grep -q "node 2 " "$T/first.out"; do sleep 0.1; done
	if grep -q "node 2 " "$T/first.out"; then
		expect "a second htoe-bridge on a --file-prefix in use" 3 \
			"another process \\(pid $first\\) is using --file-prefix $PREFIX-dup" \
			"$APP/htoe-bridge" $SH -- --stats 0
		grep -q "failed: Success" "$T/out" && bad "still says 'failed: Success'"
	else
		cat "$T/first.out"
		bad "the first htoe-bridge did not start"
	fi
	kill -KILL "$first" 2>/dev/null
fi

# one syntax for probabilities, the bridge's [impair] keys' and htoe-sim's:
# 0.1 or 10%; NaN, infinities, signs, more than 100% and a bare 1 refused
expect "htoe-sim --loss 10% (as the bridge's impair.loss=10%)" 0 '"violations":0' \
	"$APP/htoe-sim" --transactions 300 --loss 10% --quiet
expect "htoe-sim --dup 0.05 --reorder 5% --reorder-delay 20000" 0 '"violations":0' \
	"$APP/htoe-sim" --transactions 300 --dup 0.05 --reorder 5% --reorder-delay 20000 --quiet
for v in nan inf -inf -0.1 1.5 101% 10x 0x0.1 ''; do
	expect "htoe-sim --corrupt '$v'" 2 "bad value '$v' for --corrupt: not a probability" \
		"$APP/htoe-sim" --corrupt "$v"
done
expect "htoe-sim --loss 1 (a bare 1: did you mean 1%?)" 2 \
	"bad value '1' for --loss: a bare 1 would mean 100% \\(every frame\\): write 100%" \
	"$APP/htoe-sim" --loss 1
expect "htoe-sim --reorder-delay -1" 2 "bad value '-1' for --reorder-delay" \
	"$APP/htoe-sim" --reorder-delay -1

echo "# $pass passed, $fail failed"
[ "$fail" -eq 0 ]
