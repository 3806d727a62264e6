#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# End-to-end test of the htoe-ht tool against the independent Python
# reference (tests/ht_ref.py).
#   usage: test_htoe_ht_cli.sh <path-to-htoe-ht> <tests-source-dir>
set -u

HT=${1:?usage: $0 <htoe-ht> <tests-source-dir>}
SRC=${2:?usage: $0 <htoe-ht> <tests-source-dir>}
PY=/usr/bin/python3
REF="$SRC/ht_ref.py"
SEED=${HT_CLI_SEED:-4242}
PER_CLASS=${HT_CLI_PER_CLASS:-300}   # x 17 classes
MUTANTS=${HT_CLI_MUTANTS:-20000}

# under -Db_sanitize, make any sanitizer report a crash (exit >= 128)
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-abort_on_error=1:halt_on_error=1:print_stacktrace=1}"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   - $*"; }
bad() { fail=$((fail + 1)); echo "FAIL - $*"; }

# check_rc NAME RC WANT: a crash (rc >= 128) always fails
check_rc() {
	if [ "$2" -ge 128 ]; then
		bad "$1: crashed (exit $2)"
	elif [ "$2" -ne "$3" ]; then
		bad "$1: exit $2, expected $3"
	else
		ok "$1: exit $2"
	fi
}

# same_file NAME EXPECTED ACTUAL
same_file() {
	if cmp -s "$2" "$3"; then
		ok "$1 ($(wc -l <"$2") lines)"
	else
		bad "$1"
		diff "$2" "$3" | head -5
	fi
}

"$PY" "$REF" gen "$SEED" "$PER_CLASS" "$T/g" || { bad "ht_ref.py gen"; exit 1; }
npk=$(wc -l <"$T/g.hex")

# ---- (1) decode: every field against the reference ----
"$HT" decode "$T/g.spaced.hex" >"$T/dec.out"
check_rc "decode of $npk random packets" $? 0
if "$PY" "$REF" compare "$T/g.jsonl" "$T/dec.out"; then
	ok "decode: all fields of $npk packets match ht_ref.py"
else
	bad "decode differs from ht_ref.py (first mismatch above)"
fi
# default input is stdin
"$HT" decode <"$T/g.hex" >"$T/dec2.out"
check_rc "decode from stdin" $? 0
same_file "decode from stdin = decode of a file" "$T/dec.out" "$T/dec2.out"

# ---- (2) encode: back to the same bytes ----
"$HT" encode "$T/g.jsonl" >"$T/enc.out"
check_rc "encode of $npk packets" $? 0
same_file "encode(expected JSON) = reference bytes" "$T/g.hex" "$T/enc.out"
"$HT" encode "$T/dec.out" >"$T/enc2.out"
check_rc "encode of decode output" $? 0
same_file "encode(decode(x)) = x" "$T/g.hex" "$T/enc2.out"

# minimal JSON: missing fields are 0, cmd derived from the modifier fields
cat >"$T/min.jsonl" <<'EOF'
{"name":"NOP"}
{"name":"Flush","unitid":1,"srctag":4}
{"name":"RdSized","dword":1,"coherent":1,"unitid":1,"srctag":3,"count":15,"addr":305419840}
{"name":"WrSized","cmd":44,"posted":1,"dword":1,"unitid":1,"addr":4096,"data":"efbeadde"}
{"name":"WrSized","posted":1,"dword":1,"unitid":1,"addr":1099511631872,"data":"44332211"}
{"name":"Sync"}
{"name":"Atomic","count":1,"addr":18446744073709551608,"data":"0100000000000000"}
EOF
cat >"$T/min.expect" <<'EOF'
00000000
02010400
1501c34356341200
2c01000010000000efbeadde
3e0100002c0100001000000044332211
ffffffff
3effffff3d0040f8ffffffff0100000000000000
EOF
"$HT" encode "$T/min.jsonl" >"$T/min.out"
check_rc "encode of minimal JSON" $? 0
same_file "encode of minimal JSON" "$T/min.expect" "$T/min.out"

# ---- (3) crc: reference bit-serial CRC and the §12.2 vectors ----
"$HT" crc "$T/g.hex" >"$T/crc.out"
check_rc "crc of $npk packets" $? 0
same_file "crc = ht_ref.py bit-serial CRC" "$T/g.crc" "$T/crc.out"
"$PY" "$REF" vectors "$T/v" || bad "ht_ref.py vectors"
"$HT" crc --raw "$T/v.raw" >"$T/v.out"
check_rc "crc --raw of the 8 reference vectors" $? 0
same_file "crc --raw = §12.2 transmitted CRCs" "$T/v.expect" "$T/v.out"
# the complete packets among them also through the checked path
grep -v '^3040c303' "$T/v.raw" | tr -d '/' >"$T/v7.hex"
grep -v '^27700d92' "$T/v.expect" >"$T/v7.expect"
"$HT" crc "$T/v7.hex" >"$T/v7.out"
check_rc "crc of the 7 complete reference packets" $? 0
same_file "crc of the reference packets" "$T/v7.expect" "$T/v7.out"

# ---- damaged packets: the same verdict as the reference decoder ----
"$PY" "$REF" mutate "$SEED" "$MUTANTS" "$T/g.hex" >"$T/m.hex"
"$HT" decode "$T/m.hex" >"$T/m.out"
check_rc "decode of $MUTANTS damaged packets" $? 1
"$PY" "$REF" decode "$T/m.hex" >"$T/m.expect"
if "$PY" "$REF" compare "$T/m.expect" "$T/m.out"; then
	ok "damaged packets: same result or error as ht_ref.py"
else
	bad "damaged packets differ from ht_ref.py"
fi
"$HT" crc "$T/m.hex" >"$T/mc.out"
check_rc "crc of damaged packets" $? 1
"$PY" "$REF" crc "$T/m.hex" >"$T/mc.expect"
same_file "crc of damaged packets = ht_ref.py" "$T/mc.expect" "$T/mc.out"

# ---- (4) bad input ----
# expected error <TAB> input line (line numbers count every line)
cat >"$T/bad.tab" <<'EOF'
truncated packet	2c01000010000000
truncated packet	2c010000
truncated packet	3e000000
truncated packet	000000
truncated packet	3001c343
malformed input	2c0100001000000
malformed input	zz
malformed input	0x00000000
malformed input	hello world
reserved command	01000000
reserved command	3b000000 00000000
bad address-extension prefix	3e00000000000000
bad address-extension prefix	3e000000 02000000
bad address-extension prefix	7e000000 14000000 00000000
bad sync packet	3f000000
reserved bit set	80000000
illegal count	3d000000 00000000 00000000
bad byte-write mask	28 00 c0 18 00000000 ffffffff 00000000 00000000 00000000
bad address	14 00 c0 2b 00000000
trailing bytes after the packet	0000000000000000
EOF
for c in 01 03 04 05 06 07 20 21 22 23 24 25 26 27 31 32 34 35 36 38 39 3b; do
	printf 'reserved command\t%s000000\n' "$c" >>"$T/bad.tab"
done
cut -f2 "$T/bad.tab" >"$T/bad.hex"
printf '\n# comment lines and empty lines are skipped but counted\n\n' >>"$T/bad.hex"
n=$(wc -l <"$T/bad.tab")
cut -f1 "$T/bad.tab" | awk '{ printf "{\"line\":%d,\"error\":\"%s\"}\n", NR, $0 }' >"$T/bad.expect"
# a 100 kB line of zeros (a NOP and then 49996 bytes), then 100 kB of garbage
head -c 100000 /dev/zero | tr '\0' '0' >>"$T/bad.hex"; echo >>"$T/bad.hex"
head -c 100000 /dev/zero | tr '\0' 'z' >>"$T/bad.hex"; echo >>"$T/bad.hex"
printf '{"line":%d,"error":"trailing bytes after the packet"}\n' $((n + 4)) >>"$T/bad.expect"
printf '{"line":%d,"error":"malformed input"}\n' $((n + 5)) >>"$T/bad.expect"
"$HT" decode "$T/bad.hex" >"$T/bad.out"
check_rc "decode of bad input" $? 1
same_file "decode errors (line numbers and texts)" "$T/bad.expect" "$T/bad.out"
"$HT" crc "$T/bad.hex" >"$T/badc.out"
check_rc "crc of bad input" $? 1
same_file "crc errors" "$T/bad.expect" "$T/badc.out"
# a good line after bad ones still decodes, and the exit status is 1
printf 'zz\n00000000\n' | "$HT" decode >"$T/mix.out"
check_rc "decode: bad then good line" $? 1
if [ "$(sed -n 2p "$T/mix.out")" = '{"cmd":0,"name":"NOP","vc":null,"len":4,"postcmd":0,"postdata":0,"resp":0,"respdata":0,"npcmd":0,"npdata":0,"isoc":0,"discon":0,"diag":0,"ack":0}' ]; then
	ok "decode continues after an error"
else
	bad "decode continues after an error: $(cat "$T/mix.out")"
fi

cat >"$T/badj.tab" <<'EOF'
malformed input	not json
malformed input	[1,2,3]
malformed input	{"unitid":1}
malformed input	{"name":"NOP","ack":1,"ack":2}
malformed input	{"name":"Atomic","addr":-18446744073709551608}
field out of range or not in this packet	{"name":"Bogus"}
field out of range or not in this packet	{"name":"NOP","bogus":1}
field out of range or not in this packet	{"name":"NOP","ack":256}
field out of range or not in this packet	{"name":"NOP","ack":-1}
field out of range or not in this packet	{"name":"NOP","ack":"x"}
field out of range or not in this packet	{"name":"NOP","ack":1.5}
field out of range or not in this packet	{"name":"NOP","unitid":1}
field out of range or not in this packet	{"name":"Flush","unitid":32}
field out of range or not in this packet	{"name":"Flush","cmd":60}
field out of range or not in this packet	{"name":"WrSized","cmd":44,"dword":1,"addr":4096,"data":"00000000"}
field out of range or not in this packet	{"name":"WrSized","posted":1,"dword":1,"data":"0000000000"}
field out of range or not in this packet	{"name":"NOP","vc":"P"}
field out of range or not in this packet	{"name":"NOP","len":8}
field out of range or not in this packet	{"name":"TgtDone","error":"master abort"}
field out of range or not in this packet	{"name":"Atomic","count":1,"op":"cas","data":"0000000000000000"}
field out of range or not in this packet	{"name":"Atomic","count":1,"addr":18446744073709551616,"data":"0000000000000000"}
reserved command	{"name":"NOP","cmd":1}
illegal count	{"name":"Atomic","count":2,"data":"000000000000000000000000"}
illegal count	{"name":"WrSized","count":9,"data":"000000000000000000000000000000000000000000000000000000000000000000000000"}
bad byte-write mask	{"name":"WrSized","count":1,"addr":28,"mask":1,"data":"00000000"}
bad address	{"name":"Broadcast","addr":4097}
bad address	{"name":"RdSized","dword":1,"count":15,"addr":4100}
malformed input	{"name":"WrSized","data":"zz"}
EOF
cut -f2 "$T/badj.tab" >"$T/badj.jsonl"
cut -f1 "$T/badj.tab" | awk '{ printf "{\"line\":%d,\"error\":\"%s\"}\n", NR, $0 }' >"$T/badj.expect"
nj=$(wc -l <"$T/badj.tab")
{ printf '{"name":"NOP","data":"'; head -c 100000 /dev/zero | tr '\0' '0'; printf '"}\n'; } >>"$T/badj.jsonl"
head -c 100000 /dev/zero | tr '\0' '{' >>"$T/badj.jsonl"; echo >>"$T/badj.jsonl"
printf '{"line":%d,"error":"field out of range or not in this packet"}\n' $((nj + 1)) >>"$T/badj.expect"
printf '{"line":%d,"error":"malformed input"}\n' $((nj + 2)) >>"$T/badj.expect"
"$HT" encode "$T/badj.jsonl" >"$T/badj.out"
check_rc "encode of bad input" $? 1
same_file "encode errors (line numbers and texts)" "$T/badj.expect" "$T/badj.out"

# random binary garbage, with and without newlines, through every command
"$PY" -c 'import random,sys; r=random.Random(int(sys.argv[1])); sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(300000)))' "$SEED" >"$T/junk.bin"
for cmd in decode encode crc "crc --raw"; do
	# shellcheck disable=SC2086
	"$HT" $cmd "$T/junk.bin" >/dev/null
	check_rc "$cmd of 300 kB of random bytes" $? 1
done
"$HT" decode "$T/does-not-exist" >/dev/null 2>&1
check_rc "decode of a missing file" $? 2

# ---- (5) usage ----
"$HT" --help >"$T/help.out"
check_rc "--help" $? 0
if grep -q 'usage: htoe-ht' "$T/help.out" && grep -q 'decode' "$T/help.out" &&
	grep -q 'encode' "$T/help.out" && grep -q 'crc' "$T/help.out"; then
	ok "--help lists the commands"
else
	bad "--help text"
fi
"$HT" >/dev/null 2>&1
check_rc "no arguments" $? 2
"$HT" frobnicate >/dev/null 2>"$T/unk.err"
check_rc "unknown command" $? 2
grep -q "unknown command" "$T/unk.err" && ok "unknown command message" || bad "unknown command message"

echo "htoe_ht_cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
