#!/usr/bin/env bash
# htoe-bridge with MACsec (suite 'bridge'; docs/macsec.md "Using MACsec in
# htoe-bridge").   test_bridge_macsec.sh BRIDGE SRCDIR MODE [HTOE_PCAP]
# MODE: openssl | ipsec-mb | xpn | integrity
#                 the two-node demo protected (gcm-aes-128 encrypt with that
#                 backend; gcm-aes-xpn-256; gcm-aes-256 integrity-only), with
#                 loss and corruption: everything verified, corrupted frames
#                 rejected by MACsec (not by the HToE CRC), Go-Back-N recovers
#       wrongkey  node 2 has another key ([macsec 2] override), no workload,
#                 integrity-only (the HT writes are readable under the SecTAG):
#                 node 1's frames are InPktsNotValid there, nothing reaches
#                 node 2's HT endpoint or memory
#       unknownsci node 2 sends and expects SCI port 7: InPktsNoSCI, nothing
#                 reaches node 2's HT endpoint
#       rollover  rekey_after: frames accepted on several ANs, nothing lost;
#                 a TX SA started near the end of its PN space runs out
#                 (PN exhaustion event line) and changes over to the next AN
#       keyfile   key_file with mode 0644 refused (exit 2, names the file and
#                 the mode), 0600 accepted; config errors name file/section/key
#       capture   --capture of an encrypted run: frames on the wire are MACsec;
#                 htoe-pcap macsec-decrypt, then tshark with the project
#                 dissector decodes every frame down to the HT packets;
#                 integrity-only frames are dissected without the key
#       telemetry /htoe/macsec answers with the counters of a running bridge
#       pairwise  keys = pairwise: the demo with loss, corruption and rollover
#                 on SAKs derived from master_key, and again with the SAKs in
#                 a key file written by Python (cryptography's AES-CMAC, the
#                 802.1X-2010 KDF): verified PASS
#       impersonate node 2 alone (net_pcap) with peers 1 and 3 receives
#                 frames scapy protected: node 3 claiming HToE source 1
#                 under its own SCI (dropped: InPktsSCIMismatch, shared and
#                 pairwise keys), node 3 forging node 1's SCI (pairwise:
#                 InPktsNotValid; shared SAK: accepted, the limit of a
#                 shared key), nothing of them reaches node 2; node 1's own
#                 frames are accepted
BRIDGE=$1 SRC=$2 MODE=$3 HTOE_PCAP=${4:-}
. "$(dirname "$0")/lib.sh"

K128=00112233445566778899aabbccddeeff
K128B=ffeeddccbbaa99887766554433221100
K128C=0f1e2d3c4b5a69788796a5b4c3d2e1f0
K256=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f

py=/usr/bin/python3
[ -x "$py" ] || py=python3
MASTER=000102030405060708090a0b0c0d0e0f

# the 802.1X-2010 KDF and htoe's pairwise SAKs (docs/macsec.md), in Python
# on cryptography's AES-CMAC, independent of the C code
PYKDF='
from cryptography.hazmat.primitives.cmac import CMAC
from cryptography.hazmat.primitives.ciphers.algorithms import AES
def kdf(key, label, ctx, n):
    out, i = b"", 1
    while len(out) < n:
        c = CMAC(AES(key))
        c.update(bytes([i]) + label + b"\x00" + ctx + (8 * n).to_bytes(2, "big"))
        out += c.finalize()
        i += 1
    return out[:n]
def sak(master, a, b, an, n=16):
    return kdf(master, b"HToE pairwise SAK", a.to_bytes(2, "big") + b.to_bytes(2, "big") + bytes([an]), n)
'

# mjson FILE EXPR: evaluate EXPR on the last JSON line (j = the object, m =
# its "macsec" part, node(N) = its per_node entry)
mjson() {
  grep '^{' "$1" | tail -1 | "$py" -c "
import json, sys
j = json.load(sys.stdin)
m = j.get('macsec', {})
def node(i): return [p for p in j['per_node'] if p['id'] == i][0]
print($2)"
}

run() { # run NAME ARGS...: htoe-bridge, output in $TMP/NAME.out/.err, status in $rc
  local name=$1; shift
  rc=0
  timeout -k 10 240 "$BRIDGE" $(eal) -- --json "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
}

show() { cat "$TMP/$1.out" "$TMP/$1.err" >&2; }

# a verified run: exit 0, PASS, nothing lost, MACsec counted
check_pass() {
  local name=$1
  [ "$rc" -eq 0 ] || { show "$name"; fail "$name: exit status $rc"; }
  grep -q "RESULT: PASS: all .* completions verified" "$TMP/$name.out" || { show "$name"; fail "$name: no PASS"; }
  grep -q "memory images identical" "$TMP/$name.out" || fail "$name: memory images not checked"
  [ "$(json_get "$TMP/$name.out" mismatches)" -eq 0 ] || fail "$name: mismatches"
  [ "$(json_get "$TMP/$name.out" errors)" -eq 0 ] || fail "$name: errors"
  [ "$(json_get "$TMP/$name.out" poisoned)" -eq 0 ] || fail "$name: poisoned"
  for n in 1 2; do
    [ "$(mjson "$TMP/$name.out" "m['$n']['InPktsOK']")" -gt 0 ] || fail "$name: node $n InPktsOK = 0"
  done
  grep -q "macsec .*InPktsOK" "$TMP/$name.out" || fail "$name: no MACsec line in the summary"
}

# loss and corruption: retransmissions, and every corrupted frame dropped by
# MACsec validation (the HToE CRC never sees one)
check_impaired() {
  local name=$1
  local rtx corrupt macdrop crc
  rtx=$(json_get "$TMP/$name.out" retransmits)
  corrupt=$(json_get "$TMP/$name.out" impair_corrupted)
  macdrop=$(mjson "$TMP/$name.out" "sum(v[k] for v in m.values() for k in ('InPktsNotValid','InPktsBadTag','InPktsNoSCI','InPktsNoTag','InPktsNotUsingSA','InPktsLate'))")
  crc=$(mjson "$TMP/$name.out" "j['drops']['crc']")
  [ "$rtx" -gt 0 ] || fail "$name: no retransmission"
  [ "$corrupt" -gt 0 ] || fail "$name: nothing corrupted"
  [ "$macdrop" -ge "$corrupt" ] || fail "$name: $corrupt frames corrupted but MACsec dropped only $macdrop"
  [ "$crc" -eq 0 ] || fail "$name: $crc corrupted frames got past MACsec to the HToE CRC check"
  ok "$name: verified; retransmits $rtx, corrupted $corrupt, dropped by MACsec $macdrop"
}

IMPAIR=(--set impair.loss=1% --set impair.corrupt=1% --set impair.seed=7)
ON=(--set macsec.enable=on)

# a config with node 2 as a victim: no workload, node 1 writes into it
victim_cfg() {
  sed -e '/^\[workload 2\]/,$d' "$SRC/config/two-node-demo.ini" >"$TMP/victim.ini"
  cat >>"$TMP/victim.ini" <<EOF
[global]
duration = 1s
drain_timeout = 1s
exit_when_done = off
EOF
  # the demo has its own [global]: merge by dropping the first one
  "$py" - "$TMP/victim.ini" <<'EOF'
import sys, re
p = sys.argv[1]
s = open(p).read()
s = re.sub(r'\[global\]\n(?:[^\[]*\n)', '', s, count=1)
open(p, 'w').write(s)
EOF
}

check_victim() {
  local name=$1 counter=$2
  [ "$rc" -ne 2 ] || { show "$name"; fail "$name: configuration refused"; }
  local bad ok2 lo tt ok1
  bad=$(mjson "$TMP/$name.out" "m['2']['$counter']")
  ok2=$(mjson "$TMP/$name.out" "m['2']['InPktsOK']")
  lo=$(mjson "$TMP/$name.out" "m['2']['local_out']")
  tt=$(mjson "$TMP/$name.out" "node(2)['to_target']")
  ok1=$(mjson "$TMP/$name.out" "m['1']['InPktsOK']")
  [ "$bad" -gt 0 ] || { show "$name"; fail "$name: node 2 $counter = 0"; }
  [ "$ok2" -eq 0 ] || fail "$name: node 2 accepted $ok2 frames"
  [ "$ok1" -eq 0 ] || fail "$name: node 1 accepted $ok1 frames"
  [ "$lo" -eq 0 ] || fail "$name: $lo HT packets reached node 2's HT endpoint"
  [ "$tt" -eq 0 ] || fail "$name: $tt requests reached node 2's memory"
  [ "$(json_get "$TMP/$name.out" verified)" -eq 0 ] || fail "$name: completions verified?"
  grep -q "$counter" "$TMP/$name.out" || fail "$name: $counter not in the summary"
  ok "$name: node 2 dropped $bad frames ($counter), nothing reached its endpoint"
}

case "$MODE" in
  openssl|ipsec-mb)
    if [ "$MODE" = ipsec-mb ]; then
      run probe "${ON[@]}" --set macsec.key=$K128 --set macsec.backend=ipsec-mb --transactions 10
      if [ "$rc" -eq 2 ] && grep -q "no ipsec-mb backend" "$TMP/probe.out" "$TMP/probe.err"; then
        echo "SKIP: this build has no ipsec-mb backend"; exit 77
      fi
    fi
    # exactly the minimal form of docs/macsec.md, as --set
    run demo --transactions 20000 "${IMPAIR[@]}" "${ON[@]}" --set macsec.cipher=gcm-aes-128 \
      --set macsec.mode=encrypt --set macsec.backend=$MODE --set macsec.key=$K128
    check_pass demo
    [ "$(mjson "$TMP/demo.out" "m['1']['backend']")" = "$MODE" ] || fail "backend is not $MODE"
    [ "$(mjson "$TMP/demo.out" "m['1']['OutPktsEncrypted']")" -gt 0 ] || fail "nothing encrypted"
    check_impaired demo
    ;;
  xpn)
    run demo --transactions 20000 "${IMPAIR[@]}" "${ON[@]}" --set macsec.cipher=gcm-aes-xpn-256 \
      --set macsec.key=$K256 --set macsec.salt=0102030405060708090a0b0c \
      --set macsec.pn=0xfffffff0
    check_pass demo
    [ "$(mjson "$TMP/demo.out" "m['1']['cipher']")" = gcm-aes-xpn-256 ] || fail "not XPN"
    check_impaired demo
    ;;
  integrity)
    run demo --transactions 20000 "${IMPAIR[@]}" "${ON[@]}" --set macsec.cipher=gcm-aes-256 \
      --set macsec.mode=integrity --set macsec.key=$K256 --set macsec.include_sci=off
    check_pass demo
    [ "$(mjson "$TMP/demo.out" "m['1']['OutPktsProtected']")" -gt 0 ] || fail "nothing protected"
    [ "$(mjson "$TMP/demo.out" "m['1']['OutPktsEncrypted']")" -eq 0 ] || fail "integrity mode encrypted"
    check_impaired demo
    ;;
  wrongkey)
    victim_cfg
    # integrity only: the forged frames carry readable HT writes under the
    # SecTAG, so only the ICV check keeps them from node 2's memory
    run wrongkey --config "$TMP/victim.ini" "${ON[@]}" --set macsec.key=$K128 \
      --set "macsec 2.key=$K128B" --set macsec.mode=integrity
    check_victim wrongkey InPktsNotValid
    # the control: the same run with one key moves data
    run samekey --config "$TMP/victim.ini" "${ON[@]}" --set macsec.key=$K128 --set macsec.mode=integrity
    [ "$(mjson "$TMP/samekey.out" "m['2']['InPktsOK']")" -gt 0 ] || { show samekey; fail "control: nothing accepted"; }
    [ "$(mjson "$TMP/samekey.out" "node(2)['to_target']")" -gt 0 ] || fail "control: nothing reached node 2's memory"
    ok "control with the same key: node 2 served $(mjson "$TMP/samekey.out" "node(2)['to_target']") requests"
    ;;
  unknownsci)
    victim_cfg
    run unknownsci --config "$TMP/victim.ini" "${ON[@]}" --set macsec.key=$K128 \
      --set "macsec 2.sci_port=7"
    check_victim unknownsci InPktsNoSCI
    ;;
  rollover)
    run roll --transactions 20000 --set impair.loss=1% "${ON[@]}" --set macsec.key0=$K128 \
      --set macsec.key1=$K128B --set macsec.key2=$K128C --set macsec.rekey_after=150
    check_pass roll
    for n in 1 2; do
      ans=$(mjson "$TMP/roll.out" "sum(1 for v in m['$n']['rx_an_ok'] if v > 0)")
      rk=$(mjson "$TMP/roll.out" "m['$n']['rekeys']")
      [ "$ans" -ge 2 ] || fail "rollover: node $n accepted frames on $ans AN(s)"
      [ "$rk" -ge 2 ] || fail "rollover: node $n rekeyed $rk times"
    done
    ok "rollover: frames accepted on $(mjson "$TMP/roll.out" "m['1']['rx_an_ok']") (node 1), nothing lost"
    # PN exhaustion: AN 0 starts 80 PNs before its end, AN 1 takes over (a run of
    # 5000 transactions sends a few hundred frames per node)
    run pnx --transactions 5000 "${ON[@]}" --set macsec.key0=$K128 --set macsec.key1=$K128B \
      --set macsec.pn=0xffffffb0
    check_pass pnx
    grep -q "node 1: MACsec event: PN EXHAUSTED: TX SA AN 0 used its last PN 0xffffffff" "$TMP/pnx.err" ||
      { show pnx; fail "no PN exhaustion event line"; }
    grep -q "node 1: MACsec event: TX changed over from AN 0 to AN 1" "$TMP/pnx.err" ||
      fail "no changeover line"
    [ "$(mjson "$TMP/pnx.out" "m['1']['encoding_an']")" -eq 1 ] || fail "node 1 does not send on AN 1"
    [ "$(mjson "$TMP/pnx.out" "m['2']['rx_an_ok'][1]")" -gt 0 ] || fail "nothing accepted on AN 1"
    ok "PN exhaustion: event line, changeover to AN 1, nothing lost"
    ;;
  keyfile)
    kf=$TMP/keys
    printf '# the SAKs\nkey0 = %s\nkey1 = %s ; next\n%s  # bare: AN 2\n' $K128 $K128B $K128C >"$kf"
    chmod 644 "$kf"
    run open "${ON[@]}" --set macsec.key_file="$kf" --transactions 1000
    [ "$rc" -eq 2 ] || { show open; fail "0644 key file: exit status $rc, expected 2"; }
    grep -qF -- "--set: [macsec] key_file = '$kf': $kf has mode 0644" "$TMP/open.err" ||
      { show open; fail "0644 key file: message does not name the file and its mode"; }
    grep -qE "port [0-9]+ up" "$TMP/open.err" "$TMP/open.out" && fail "0644 key file: a port started"
    ok "key file with mode 0644 refused: $(head -1 "$TMP/open.err")"
    chmod 600 "$kf"
    run private "${ON[@]}" --set macsec.key_file="$kf" --set macsec.rekey_after=40 --transactions 3000
    check_pass private
    [ "$(mjson "$TMP/private.out" "m['2']['rx_an_ok'][2]")" -gt 0 ] || fail "the bare key is not AN 2"
    ok "key file with mode 0600 accepted, its keys on AN 0, 1, 2 used"
    # configuration errors: exit 2, file/section/key named, keys never echoed
    cerr() { # cerr NAME EXPECTED ARGS...
      local name=$1 exp=$2; shift 2
      run "$name" --transactions 100 "$@"
      [ "$rc" -eq 2 ] || { show "$name"; fail "$name: exit status $rc, expected 2"; }
      grep -qF -- "$exp" "$TMP/$name.err" || { show "$name"; fail "$name: message lacks '$exp'"; }
      ! grep -q "$K128B" "$TMP/$name.err" || fail "$name: the message shows a key"
      ok "$name: $(grep -F -- "$exp" "$TMP/$name.err" | head -1)"
    }
    cerr nokey "--set: [macsec] key: MACsec is on but no key" "${ON[@]}"
    cerr cipher "[macsec] cipher = 'gcm-aes-512': unknown cipher suite" "${ON[@]}" \
      --set macsec.key=$K128 --set macsec.cipher=gcm-aes-512
    cerr keylen "[macsec 2] key: gcm-aes-256 needs a 32-octet key" "${ON[@]}" \
      --set macsec.cipher=gcm-aes-256 --set macsec.key=$K256 --set "macsec 2.key=$K128B"
    cerr both "[macsec] key: give the keys inline or in key_file" "${ON[@]}" \
      --set macsec.key=$K128 --set macsec.key_file="$kf"
    cerr rekey "[macsec] rekey_after = '10': rolling over needs keys for at least two ANs" \
      "${ON[@]}" --set macsec.key=$K128 --set macsec.rekey_after=10
    cerr an "[macsec] an = '2': no key for AN 2" "${ON[@]}" --set macsec.key=$K128 --set macsec.an=2
    cerr nonode "[macsec 9]: there is no [node 9]" "${ON[@]}" --set macsec.key=$K128 \
      --set "macsec 9.enable=on"
    cerr mtu "[bridge] mtu = '120': too small with MACsec on" "${ON[@]}" --set macsec.key=$K128 \
      --set bridge.mtu=120
    cerr unknown "[macsec] colour = 'blue': unknown key" --set macsec.colour=blue
    ;;
  capture)
    command -v tshark >/dev/null || { echo "SKIP: no tshark"; exit 77; }
    [ -x "$HTOE_PCAP" ] || fail "htoe-pcap not given"
    run cap --transactions 2000 --set impair.loss=1% "${ON[@]}" --set macsec.key=$K128 \
      --capture "$TMP/cap"
    check_pass cap
    export HOME=$TMP   # a clean Wireshark profile
    lua=$SRC/tools/wireshark/htoe.lua
    # an installed copy of the dissector (identical to the source) is used as is
    installed=$(tshark -G plugins 2>/dev/null | awk -F'\t' '$1 == "htoe.lua" { print $NF }' | head -1)
    X=(-X "lua_script:$lua")
    [ -n "$installed" ] && X=()
    for f in port0-tx port1-rx; do
      pc=$TMP/cap/$f.pcap
      n=$(tshark -r "$pc" 2>/dev/null | wc -l)
      ms=$(tshark -r "$pc" -Y 'eth.type == 0x88e5' 2>/dev/null | wc -l)
      [ "$n" -gt 0 ] && [ "$ms" -eq "$n" ] || fail "$f: $ms of $n frames are MACsec on the wire"
      clear=$(tshark "${X[@]}" -r "$pc" -Y htoe 2>/dev/null | wc -l)
      [ "$clear" -eq 0 ] || fail "$f: $clear HToE frames readable without decryption"
      "$HTOE_PCAP" macsec-decrypt --in "$pc" --out "$TMP/$f-plain.pcap" --key $K128 \
        >"$TMP/$f.dec" 2>&1 || { cat "$TMP/$f.dec" >&2; fail "$f: macsec-decrypt failed"; }
      h=$(tshark "${X[@]}" -r "$TMP/$f-plain.pcap" -Y htoe 2>/dev/null | wc -l)
      ht=$(tshark "${X[@]}" -r "$TMP/$f-plain.pcap" -Y ht -T fields -e frame.number 2>/dev/null | wc -l)
      bad=$(tshark "${X[@]}" -r "$TMP/$f-plain.pcap" -Y '_ws.expert.severity >= 0x00800000 || _ws.malformed' 2>/dev/null | wc -l)
      [ "$h" -eq "$n" ] || fail "$f: $h of $n decrypted frames decode as HToE"
      [ "$ht" -gt 0 ] || fail "$f: no HT packet decoded"
      [ "$bad" -eq 0 ] || fail "$f: $bad frames with dissector errors"
      ok "$f: $n MACsec frames, decrypted: $h HToE frames, $ht with HT packets, no error"
    done
    # integrity-only: Wireshark dissects the HToE frames under the SecTAG, no key needed
    run capi --transactions 2000 "${ON[@]}" --set macsec.key=$K128 --set macsec.mode=integrity \
      --capture "$TMP/capi"
    check_pass capi
    pc=$TMP/capi/port0-tx.pcap
    n=$(tshark -r "$pc" 2>/dev/null | wc -l)
    ms=$(tshark -r "$pc" -Y 'eth.type == 0x88e5' 2>/dev/null | wc -l)
    h=$(tshark "${X[@]}" -r "$pc" -Y 'macsec && htoe' 2>/dev/null | wc -l)
    ht=$(tshark "${X[@]}" -r "$pc" -Y ht -T fields -e frame.number 2>/dev/null | wc -l)
    [ "$n" -gt 0 ] && [ "$ms" -eq "$n" ] || fail "integrity: $ms of $n frames are MACsec"
    [ "$h" -eq "$n" ] && [ "$ht" -gt 0 ] || fail "integrity: $h of $n frames dissected as HToE, $ht with HT"
    ok "integrity-only capture: $n MACsec frames dissected as HToE without a key, $ht with HT packets"
    ;;
  telemetry)
    [ -x /usr/bin/dpdk-telemetry.py ] || { echo "SKIP: no dpdk-telemetry.py"; exit 77; }
    # in the background without timeout(1); a watchdog bounds it
    "$BRIDGE" $(eal) -- --set workload.ops=1000000000 "${ON[@]}" --set macsec.key=$K128 \
      >"$TMP/tel.out" 2>"$TMP/tel.err" &
    pid=$!
    BR_PIDS+=("$pid")
    watchdog "$pid" 240
    tq() { # tq CMD EXPR: EXPR on the reply dict r (a few tries while it starts)
      local j i
      for i in $(seq 50); do
        j=$(printf '%s\n' "$1" | /usr/bin/python3 /usr/bin/dpdk-telemetry.py -f "$PREFIX" 2>/dev/null |
            grep '^{' | head -1) || true
        if [ -n "$j" ] && "$py" -c "import json,sys; r=json.loads(sys.argv[1])['${1%%,*}']; print($2)" "$j" 2>/dev/null; then
          return 0
        fi
        sleep 0.2
      done
      fail "telemetry: no answer to $1 for $2 (last: $j)"
    }
    [ "$(tq /htoe/macsec,2 "r['node']")" -eq 2 ] || fail "/htoe/macsec,2: not node 2"
    # until node 1 has validated a frame: a starved host may take most of the watchdog's
    # time to bring the link up (the watchdog catches a hang)
    while kill -0 "$pid" 2>/dev/null; do
      okc=$(tq /htoe/macsec "r['InPktsOK']")
      [ "$okc" -gt 0 ] && break
      sleep 0.2
    done
    [ "$okc" -gt 0 ] || fail "/htoe/macsec: InPktsOK = $okc"
    [ "$(tq /htoe/macsec "r['cipher']")" = gcm-aes-128 ] || fail "/htoe/macsec: cipher"
    [ "$(tq /htoe/macsec "r['keys']")" = shared ] || fail "/htoe/macsec: keys"
    [ "$(tq /htoe/macsec "r['InPktsSCIMismatch']")" -eq 0 ] || fail "/htoe/macsec: InPktsSCIMismatch"
    [ "$(tq /htoe/macsec "r['node']")" -eq 1 ] || fail "/htoe/macsec: not node 1"
    [ "$(tq /htoe/macsec,9 "r['error']")" = "no node 9 with MACsec in this process" ] ||
      fail "/htoe/macsec,9 should answer an error"
    kill -INT $pid; sleep 0.5; kill -INT $pid 2>/dev/null || true
    wait $pid || true
    BR_PIDS=()
    stop_watchdogs
    ok "/htoe/macsec: InPktsOK $okc on node 1, per node, an error for an unknown node"
    ;;
  pairwise)
    run pw --transactions 20000 "${IMPAIR[@]}" "${ON[@]}" --set macsec.keys=pairwise \
      --set macsec.master_key=$MASTER --set macsec.rekey_after=400
    check_pass pw
    check_impaired pw
    for n in 1 2; do
      [ "$(mjson "$TMP/pw.out" "m['$n']['keys']")" = pairwise ] || fail "pairwise: node $n keys"
      ans=$(mjson "$TMP/pw.out" "sum(1 for v in m['$n']['rx_an_ok'] if v > 0)")
      [ "$ans" -ge 2 ] || fail "pairwise: node $n accepted frames on $ans AN(s)"
      [ "$(mjson "$TMP/pw.out" "m['$n']['InPktsSCIMismatch']")" -eq 0 ] || fail "pairwise: mismatches"
    done
    grep -q "macsec gcm-aes-128 encrypt, pairwise keys" "$TMP/pw.out" || fail "pairwise: summary line"
    ok "pairwise keys from master_key: verified, frames on $(mjson "$TMP/pw.out" "m['1']['rx_an_ok']") by AN"
    # the same SAKs listed in a key file, computed by Python
    kf=$TMP/pairwise.keys
    "$py" -c "$PYKDF"'
import sys
m = bytes.fromhex(sys.argv[1])
print("# pairwise SAKs: keyN A>B = the SAK node A sends to node B with on AN N")
for an in (0, 1):
    for a, b in ((1, 2), (2, 1)):
        print("key%d %d>%d = %s" % (an, a, b, sak(m, a, b, an).hex()))
' $MASTER >"$kf"
    chmod 600 "$kf"
    run pwfile --transactions 5000 "${ON[@]}" --set macsec.keys=pairwise \
      --set macsec.key_file="$kf" --set macsec.rekey_after=100
    check_pass pwfile
    [ "$(mjson "$TMP/pwfile.out" "m['2']['rx_an_ok'][1]")" -gt 0 ] || fail "pairwise key file: nothing on AN 1"
    ok "pairwise key file (SAKs from Python's KDF): verified, AN 0 and 1 used"
    # a node whose file lacks a key of its pairs is refused, naming the pair
    grep -v "key1 2>1" "$kf" >"$TMP/short.keys"; chmod 600 "$TMP/short.keys"
    run short --transactions 100 "${ON[@]}" --set macsec.keys=pairwise \
      --set macsec.key_file="$TMP/short.keys"
    [ "$rc" -eq 2 ] && grep -qF "AN 1: no key1 2>1" "$TMP/short.err" ||
      { show short; fail "incomplete pairwise key file not refused"; }
    ok "incomplete pairwise key file refused: $(head -1 "$TMP/short.err")"
    # configuration errors of the pairwise keys: exit 2, key named, no key value shown
    perr() { # perr NAME EXPECTED ARGS...
      local name=$1 exp=$2; shift 2
      run "$name" --transactions 100 "${ON[@]}" "$@"
      [ "$rc" -eq 2 ] && grep -qF -- "$exp" "$TMP/$name.err" || { show "$name"; fail "$name: expected '$exp'"; }
      ! grep -q "$MASTER" "$TMP/$name.err" || fail "$name: the message shows a key"
      ok "$name: $(grep -F -- "$exp" "$TMP/$name.err" | head -1)"
    }
    perr pw-inline "[macsec] key: keys = pairwise: the SAKs come from master_key" \
      --set macsec.keys=pairwise --set macsec.key=$MASTER
    perr pw-shared "[macsec] master_key: a master_key needs keys = pairwise" --set macsec.master_key=$MASTER
    perr pw-len "[macsec] master_key: a master_key is 32 or 64 hex digits" \
      --set macsec.keys=pairwise --set macsec.master_key=0011
    perr pw-none "[macsec] master_key: MACsec is on but no key is given (master_key = HEX" \
      --set macsec.keys=pairwise
    perr pw-mode "[macsec] keys = 'triple': expected shared" --set macsec.keys=triple --set macsec.key=$MASTER
    ;;
  impersonate)
    command -v tshark >/dev/null || true
    # node 2 alone on net_pcap, peers 1 and 3 (MACs 02:48:54:00:00:01/03)
    # frames node 1 sent to node 2 in pcap/basic.pcap, protected by scapy:
    #  good.pcap    node 1's SCI and node 1's SAK (accepted)
    #  forged.pcap  node 1's SCI, node 3's SAK to node 2 (or the shared SAK)
    #  own.pcap     node 3's MAC and SCI, node 3's SAK, HToE source still 1
    mk() { # mk DIR shared|pairwise
      mkdir -p "$1"
      "$py" -c "$PYKDF"'
import sys
from scapy.all import rdpcap, wrpcap, Ether
from scapy.contrib.macsec import MACsecSA
src, out, mode, master = sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])
sys.path.insert(0, sys.argv[5] + "/scripts")
from htoe_forge import reset_frame
plain = [bytes(p) for p in rdpcap(src)]
# the DATA, ACK and NAK frames of node 1 to node 2 (its RESETs and CTRL frames
# carry the incarnation of the captured run, which the fresh node 2 would take
# for a restart), after a RESET of our own with the epoch of node 1
plain = [f for f in plain if f[12:14] == b"\x88\xb5" and f[18:20] == b"\x00\x01" and
         f[20:22] == b"\x00\x02" and f[14] & 0x0F in (1, 2, 3)]
plain = [reset_frame(4, 1, 2, plain[0][17], 0x5EC0000000000001, 0x5EC00001, plain[0][26:38],
                     plain[0][0:6], plain[0][6:12])] + plain
def key(a, b):
    return master if mode == "shared" else sak(master, a, b, 0)
def sci(node):
    return bytes.fromhex("02485400%04x0001" % node)
def protect(frames, sci_node, k, mac_node):
    res = []
    for i, f in enumerate(frames):
        f = f[:6] + bytes.fromhex("02485400%04x" % mac_node) + f[12:]
        sa = MACsecSA(sci=sci(sci_node), an=0, pn=1 + i, key=k, icvlen=16, encrypt=True, send_sci=True)
        res.append(Ether(bytes(sa.encrypt(sa.encap(Ether(f))))))
    return res
wrpcap(out + "/good.pcap", protect(plain, 1, key(1, 2), 1))
wrpcap(out + "/forged.pcap", protect(plain, 1, key(3, 2), 1))
wrpcap(out + "/own.pcap", protect(plain, 3, key(3, 2), 3))
print(len(plain))
' "$SRC/pcap/basic.pcap" "$1" "$2" $MASTER "$SRC"
    }
    node2() { # node2 NAME PCAP KEYS-ARGS...: node 2 receives PCAP
      local name=$1 pcap=$2; shift 2
      pcap_node2_ini "$TMP/$name.ini" "$pcap" "$TMP/$name-tx.pcap"
      printf '[peer 3]\n[macsec]\nenable = on\n' >>"$TMP/$name.ini"
      run "$name" --config "$TMP/$name.ini" --duration 1 --stats 0 "$@"
      [ "$rc" -eq 0 ] || { show "$name"; fail "$name: exit status $rc"; }
    }
    peer() { mjson "$TMP/$1.out" "m['2']['peers']['$2']['$3']"; }
    nothing_in() { # the frames of NAME reached neither node 2's endpoint nor its memory
      local name=$1
      [ "$(mjson "$TMP/$name.out" "m['2']['local_out']")" -eq 0 ] || fail "$name: HT packets delivered"
      [ "$(mjson "$TMP/$name.out" "node(2)['to_target']")" -eq 0 ] || fail "$name: memory written"
      [ "$(mjson "$TMP/$name.out" "sum(j['drops'].values())")" -eq 0 ] ||
        fail "$name: frames reached htoe_frame_input: $(mjson "$TMP/$name.out" "j['drops']")"
    }
    for mode in pairwise shared; do
      n=$(mk "$TMP/$mode" $mode)
      [ "$n" -gt 10 ] || fail "only $n frames from node 1 to node 2 in basic.pcap"
      if [ $mode = pairwise ]; then
        K=(--set macsec.keys=pairwise --set macsec.master_key=$MASTER)
      else
        K=(--set macsec.key=$MASTER)
      fi
      # node 3 speaks under its own SCI but claims to be node 1
      node2 $mode-own "$TMP/$mode/own.pcap" "${K[@]}"
      [ "$(peer $mode-own 3 InPktsSCIMismatch)" -eq "$n" ] || { show $mode-own; fail "$mode: own SCI: $(peer $mode-own 3 InPktsSCIMismatch) of $n frames InPktsSCIMismatch"; }
      [ "$(mjson "$TMP/$mode-own.out" "m['2']['InPktsOK']")" -eq 0 ] || fail "$mode: own SCI: frames accepted"
      grep -q "InPktsSCIMismatch $n" "$TMP/$mode-own.out" || fail "$mode: InPktsSCIMismatch not in the summary"
      nothing_in $mode-own
      ok "$mode keys: node 3 claiming node 1 under its own SCI: $n of $n frames dropped (InPktsSCIMismatch), nothing delivered"
      # node 3 writes node 1's SCI
      node2 $mode-forged "$TMP/$mode/forged.pcap" "${K[@]}"
      if [ $mode = pairwise ]; then
        [ "$(peer $mode-forged 1 InPktsNotValid)" -eq "$n" ] || { show $mode-forged; fail "pairwise: forged SCI: $(peer $mode-forged 1 InPktsNotValid) of $n InPktsNotValid"; }
        [ "$(mjson "$TMP/$mode-forged.out" "m['2']['InPktsOK']")" -eq 0 ] || fail "pairwise: forged SCI accepted"
        nothing_in $mode-forged
        ok "pairwise keys: node 3 forging node 1's SCI: $n of $n frames fail the ICV (InPktsNotValid), nothing delivered"
      else
        # the limit of one shared SAK: any key holder can write any SCI
        [ "$(peer $mode-forged 1 InPktsOK)" -eq "$n" ] || { show $mode-forged; fail "shared: forged SCI: expected the documented limitation (accepted)"; }
        ok "shared SAK: node 3 forging node 1's SCI is accepted ($n frames): the limitation docs/macsec.md states"
      fi
      # control: node 1 itself
      node2 $mode-good "$TMP/$mode/good.pcap" "${K[@]}"
      [ "$(peer $mode-good 1 InPktsOK)" -eq "$n" ] || { show $mode-good; fail "$mode: node 1's frames: $(peer $mode-good 1 InPktsOK) of $n accepted"; }
      [ "$(mjson "$TMP/$mode-good.out" "m['2']['local_out']")" -gt 0 ] || fail "$mode: node 1's frames delivered nothing"
      ok "$mode keys: node 1's own $n frames accepted and delivered"
    done
    ;;
  *) fail "unknown mode $MODE" ;;
esac
