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
BRIDGE=$1 SRC=$2 MODE=$3 HTOE_PCAP=${4:-}
. "$(dirname "$0")/lib.sh"

K128=00112233445566778899aabbccddeeff
K128B=ffeeddccbbaa99887766554433221100
K128C=0f1e2d3c4b5a69788796a5b4c3d2e1f0
K256=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f

py=/usr/bin/python3
[ -x "$py" ] || py=python3

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
    (trap 'kill $sp 2>/dev/null; exit 0' TERM; sleep 120 & sp=$!; wait $sp; kill -KILL "$pid") \
      >/dev/null 2>&1 &
    wd=$!
    trap 'kill -KILL $pid $wd 2>/dev/null; wait $pid 2>/dev/null; cleanup' EXIT
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
    for i in $(seq 50); do
      okc=$(tq /htoe/macsec "r['InPktsOK']")
      [ "$okc" -gt 0 ] && break
      sleep 0.2
    done
    [ "$okc" -gt 0 ] || fail "/htoe/macsec: InPktsOK = $okc"
    [ "$(tq /htoe/macsec "r['cipher']")" = gcm-aes-128 ] || fail "/htoe/macsec: cipher"
    [ "$(tq /htoe/macsec "r['node']")" -eq 1 ] || fail "/htoe/macsec: not node 1"
    [ "$(tq /htoe/macsec,9 "r['error']")" = "no node 9 with MACsec in this process" ] ||
      fail "/htoe/macsec,9 should answer an error"
    kill -INT $pid; sleep 0.5; kill -INT $pid 2>/dev/null || true
    wait $pid || true
    ok "/htoe/macsec: InPktsOK $okc on node 1, per node, an error for an unknown node"
    ;;
  *) fail "unknown mode $MODE" ;;
esac
