#!/usr/bin/env bash
# pcap replay validation (suite 'bridge'): captures of pcap/ are fed through
# net_pcap (rx_pcap=CAPTURE, tx_pcap=ANSWERS) into one htoe-bridge that is
# node 2 of the capture, with node 1 as its only peer. What it must answer
# and refuse is derived from the capture itself with tshark and the
# project's dissector (tools/wireshark/htoe.lua), never hard-coded, so the
# test holds when the corpus is regenerated (scripts/gen-pcaps.sh):
#  - lossy.pcap (loss, reordering, duplication: retransmissions in it):
#    node 1's DATA frames, run through a Go-Back-N receiver model, give the
#    frames node 2 accepts, its last ack, and its 'dup' and 'out_of_order'
#    drops; node 2 answers every non-posted request of the accepted frames
#    once (in its first transmissions: RdResponse for RdSized and Atomic,
#    TgtDone for the others); frames to other nodes are 'not_for_us';
#  - malformed.pcap (one defect per frame): every frame refused (its CTRL
#    frames whose defect is only in the lease message are valid HToE frames,
#    but no handshake brings the VL up for them); truncated headers as
#    'runt' and bad CRC32Cs as 'crc', as many as the capture has;
#  - lossy.pcap gets a cold RESET of node 1 put first (with_reset), what
#    node 1 sends a restarted node 2: the capture's RESET_ACKs echo the
#    captured node 2's nonce and are rightly refused;
#  - nodes4.pcap (4 nodes): frames from nodes 3 and 4, unknown to this
#    bridge, refused as 'unknown_peer'; its answers go to node 1 only.
# The drops by reason come from the bridge's --json summary.
#   test_bridge_replay.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2
. "$(dirname "$0")/lib.sh"
LCORES=0
command -v tshark >/dev/null || { echo "SKIP: tshark is not installed"; exit 77; }
LUA="$SRC/tools/wireshark/htoe.lua"

# fields PCAP FIELD...: tshark -T fields with the HToE dissector, tab-separated
fields() {
  local pcap=$1 f=() x
  shift
  for x in "$@"; do f+=(-e "$x"); done
  tshark -r "$pcap" -X lua_script:"$LUA" -T fields -E occurrence=a -E 'aggregator=|' "${f[@]}" \
    2>/dev/null
}

# replay NAME PCAP: node 2 answers PCAP; answers in $TMP/NAME-tx.pcap,
# output in $TMP/NAME.out
replay() {
  pcap_node2_ini "$TMP/$1.ini" "$2" "$TMP/$1-tx.pcap"
  local rc=0
  timeout -k 10 120 "$BRIDGE" $(eal) -- --config "$TMP/$1.ini" --duration 1 --stats 0 --json \
    >"$TMP/$1.out" 2>&1 || rc=$?
  cat "$TMP/$1.out"
  [ "$rc" -eq 0 ] || fail "$1: exit status $rc"
  grep -q "port 0 up: net_pcap0" "$TMP/$1.out" || fail "$1: port not up"
  local n rx
  n=$(fields "$2" frame.number | wc -l)
  rx=$(json_get "$TMP/$1.out" frames_rx)
  [ "$rx" -eq "$n" ] || fail "$1: the bridge received $rx frames, $2 has $n"
  ok "$1: $rx frames of $(basename "$2") received"
}

# check NAME PCAP: the expectations derived from the capture (python below)
check() {
  local F=(frame.number frame.len eth.type htoe.type_name htoe.src htoe.dst htoe.seq htoe.ack
           htoe.crc.status ht.vc ht.name _ws.expert.message)
  fields "$2" "${F[@]}" >"$TMP/$1-in.tsv"
  fields "$TMP/$1-tx.pcap" "${F[@]}" >"$TMP/$1-tx.tsv"
  grep '^{' "$TMP/$1.out" | tail -1 >"$TMP/$1.json"
  python3 - "$1" "$TMP/$1-in.tsv" "$TMP/$1-tx.tsv" "$TMP/$1.json" <<'PY' || fail "$1: see above"
import json, sys
name, fin, ftx, fjson = sys.argv[1:]
KEYS = "num len etype type src dst seq ack crc vc ht expert".split()
def rows(path):
    out = []
    for line in open(path):
        r = dict(zip(KEYS, line.rstrip("\n").split("\t")))
        for k in ("vc", "ht", "expert"):
            r[k] = r[k].split("|") if r.get(k) else []
        out.append(r)
    return out
inp, tx, js = rows(fin), rows(ftx), json.load(open(fjson))
drops = js["drops"]
ok = True
def check(cond, msg):
    global ok
    print(("ok: " if cond else "FAIL: ") + f"{name}: {msg}")
    ok &= bool(cond)
def first_data(frames, src, dst):
    """DATA frames src -> dst, first transmission of each sequence number"""
    seen, first = set(), []
    for r in frames:
        if r.get("type") == "DATA" and r["src"] == src and r["dst"] == dst \
                and r["seq"] not in seen:
            seen.add(r["seq"])
            first.append(r)
    return first
valid = [r for r in inp if r.get("crc") == "1"]

if name == "lossy":
    # node 2's receive side is Go-Back-N: in order accepted, behind the
    # expected sequence number a duplicate, ahead of it out of order
    expect, dup, ooo, accepted = 0, 0, 0, []
    for r in valid:
        if r.get("type") != "DATA" or r["src"] != "1" or r["dst"] != "2":
            continue
        d = (int(r["seq"]) - expect) & 0xFFFF
        if d == 0:
            accepted.append(r)
            expect = (expect + 1) & 0xFFFF
        elif d < 0x8000:
            ooo += 1
        else:
            dup += 1
    check(accepted, f"node 1's DATA frames: {len(accepted)} in order, {dup} duplicates, "
          f"{ooo} out of order")
    acks = [int(r["ack"]) for r in tx if r["src"] == "2" and r["ack"]]
    check(acks and max(acks) == expect,
          f"node 2 acknowledged up to {max(acks) if acks else None}, expected {expect}")
    req = [h for r in accepted for h, v in zip(r["ht"], r["vc"]) if v == "NP"]
    d2 = first_data(tx, "2", "1")
    rsp = [h for r in d2 for h, v in zip(r["ht"], r["vc"]) if v == "R"]
    rd = sum(h in ("RdSized", "Atomic") for h in req)
    check(len(rsp) == len(req) > 0, f"{len(req)} non-posted requests, {len(rsp)} responses")
    check(rsp.count("RdResponse") == rd and rsp.count("TgtDone") == len(req) - rd,
          f"RdResponse {rsp.count('RdResponse')} (expected {rd}), "
          f"TgtDone {rsp.count('TgtDone')} (expected {len(req) - rd})")
    check(drops["dup"] == dup and drops["out_of_order"] == ooo,
          f"drops: dup {drops['dup']} (expected {dup}), out_of_order {drops['out_of_order']} "
          f"(expected {ooo})")
    other = sum(r["dst"] != "2" for r in valid)
    check(drops["not_for_us"] == other, f"not_for_us drops {drops['not_for_us']}, "
          f"frames to other nodes {other}")
elif name == "malformed":
    # CTRL frames to node 2 whose only defects are in the lease message
    # they carry are valid HToE frames: the bridge takes them (the lease
    # receiver, htoe-dimm's, would drop them) -- but only on a VL that is up,
    # and this capture holds no RESET of node 1 for a new node 2 (a replay
    # cannot complete a handshake: docs/wire-format.md "Incarnations and
    # nonces"), so here every frame is refused
    ctrl = 0
    n = len(inp)
    total = sum(drops.values())
    check(n == js["frames_rx"] and total == n - ctrl,
          f"{total} of {n} frames refused ({ctrl} CTRL frames with bad lease messages taken)")
    runt = sum(r.get("etype") == "0x88b5" and int(r["len"]) < 14 + 32 for r in inp)
    bad = sum(r.get("crc") == "0" for r in inp)
    check(runt > 0 and drops["runt"] == runt, f"runt drops {drops['runt']}, truncated headers {runt}")
    check(bad > 0 and drops["crc"] == bad, f"crc drops {drops['crc']}, bad CRC32Cs {bad}")
elif name == "nodes4":
    unknown = sum(r["dst"] == "2" and r["src"] not in ("1", "2") for r in valid)
    check(unknown > 0 and drops["unknown_peer"] == unknown,
          f"unknown_peer drops {drops['unknown_peer']}, frames from unknown nodes {unknown}")
    dsts = {r["dst"] for r in tx}
    check(tx and dsts == {"1"}, f"node 2 answered node(s) {sorted(dsts)} only")
sys.exit(0 if ok else 1)
PY
}

# with_reset IN OUT: IN with a cold RESET from node 1 to node 2 put first, in the epoch of
# node 1's first frame. Node 2 here is a new incarnation with its own nonce key: node 1's
# RESET_ACKs in a capture echo the nonce of the captured node 2 and are rightly refused
# (docs/wire-format.md "Incarnations and nonces"), so without a RESET of node 1 (which the
# capture may not hold: a node whose peer's RESET arrives first never sends its own) no
# replay could bring the VL up. The RESET is what node 1 would send to a restarted node 2.
with_reset() {
  /usr/bin/python3 "$SRC/scripts/htoe_forge.py" with-reset "$1" "$2"
}

for c in lossy malformed nodes4; do
  pcap="$SRC/pcap/$c.pcap"
  [ -s "$pcap" ] || fail "$pcap missing"
  if [ "$c" = lossy ]; then
    with_reset "$pcap" "$TMP/lossy-in.pcap"
    pcap=$TMP/lossy-in.pcap
  fi
  replay "$c" "$pcap"
  check "$c" "$pcap"
done
ok "pcap replay: answers and drops by reason as the captures say"
