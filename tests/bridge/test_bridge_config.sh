#!/usr/bin/env bash
# htoe-bridge configuration errors (suite 'bridge'): every kind of bad
# configuration must be refused with exit status 2 and a message that names
# the file (or --set), the [section], the key and the value, before any port
# is started.   test_bridge_config.sh BRIDGE SRCDIR
BRIDGE=$1 SRC=$2
. "$(dirname "$0")/lib.sh"
LCORES=0

base=$TMP/base.ini
cp "$SRC/config/two-node-demo.ini" "$base"
npass=0

# check NAME EXPECTED... -- ARGS...: exit 2, every EXPECTED substring, no port up
check() {
  local name=$1; shift
  local exp=()
  while [ "$1" != "--" ]; do exp+=("$1"); shift; done
  shift
  local rc=0
  timeout -k 5 240 "$BRIDGE" $(eal) -- "$@" >"$TMP/out" 2>&1 || rc=$?
  if [ "$rc" -ne 2 ]; then
    cat "$TMP/out" >&2
    fail "$name: exit status $rc, expected 2"
  fi
  local e
  for e in "${exp[@]}"; do
    grep -qF -- "$e" "$TMP/out" || { cat "$TMP/out" >&2; fail "$name: message lacks '$e'"; }
  done
  if grep -qE "port [0-9]+ up|RESULT" "$TMP/out"; then
    cat "$TMP/out" >&2
    fail "$name: something started"
  fi
  echo "ok: $name: $(grep 'htoe-bridge:' "$TMP/out" | head -1)"
  npass=$((npass + 1))
}

# a file: NAME CONTENT -> path
file() { printf '%b' "$2" >"$TMP/$1"; echo "$TMP/$1"; }

# --- the file itself
check "missing file" "nope.ini" "cannot open" -- --config "$TMP/nope.ini"
f=$(file syn1.ini '[global]\nstats_interval = 1s\nthis line has no equals sign\n')
check "line without =" "syn1.ini:3" "neither a [section] nor a key = value" -- --config "$f"
f=$(file syn2.ini 'duration = 1s\n[global]\n')
check "key before section" "syn2.ini:1" "key 'duration' before the first [section]" -- --config "$f"
f=$(file syn3.ini '[global]\n# duration = 1s\n')
check "hash comment" "syn3.ini:2" "[global] '# duration'" "use ';'" -- --config "$f"
f=$(file syn4.ini '[global]\nduration =   ; nothing\n')
check "empty value" "syn4.ini:2" "[global] duration: no value" -- --config "$f"
f=$(file syn5.ini '[global]\nduration = 1s\nduration = 2s\n')
check "duplicate key" "syn5.ini:3" "[global] duration: key given twice" -- --config "$f"
f=$(file syn6.ini '[global]\n[map]\n[global]\n')
check "duplicate section" "syn6.ini:3" "section [global] appears twice" -- --config "$f"
f=$(file syn7.ini '[global\nduration = 1s\n')
check "unclosed bracket" "syn7.ini:1" "'[' without ']'" -- --config "$f"
f=$(file syn8.ini "[global]\ncapture = $(printf 'x%.0s' $(seq 300))\n")
check "line too long" "syn8.ini:2" "longer than" -- --config "$f"
check "not a regular file" "/dev/zero: a character device" "not a configuration file" -- --config /dev/zero --check
f=$(file nul.ini '[global]\nduration = 1s\n\0\n')
check "NUL byte" "nul.ini:3: a NUL byte" -- --config "$f" --check
f=$(file dead.ini '[global]\npeer_dead_timeout = 10ms\n')
check "peer_dead_timeout too short" "dead.ini:2" "[global] peer_dead_timeout = '10ms': out of range 100ms..3600s" -- --config "$f"
head -c 1100000 /dev/zero | tr '\0' ';' >"$TMP/big.ini"
check "file too large" "big.ini: 1100000 bytes" "at most 1048576" -- --config "$TMP/big.ini"

# --- names
f=$(file sect.ini "$(cat "$base")\n[nodes 3]\nport = 0\n")
l=$(grep -n '^\[nodes 3\]' "$f" | cut -d: -f1)
check "unknown section" "sect.ini:$l: [nodes 3]" "unknown section" "did you mean [node 3]?" -- --config "$f"
check "unknown section (--set)" "--set: [nodes 1]" "unknown section" -- --set "nodes 1.port=0"
sed 's/^\[global\].*/&\ndurration = 1s/' "$base" >"$TMP/names.ini"; f=$TMP/names.ini
l=$(grep -n '^durration' "$f" | cut -d: -f1)
check "unknown key" "names.ini:$l: [global] durration = '1s'" "unknown key" "did you mean 'duration'?" -- --config "$f"
check "unknown key (--set)" "--set: [node 1] speed = 'fast'" "unknown key" -- --set "node 1.speed=fast"
check "removed key" "--set: [bridge] flush = '2us'" "key flush was removed in 0.2" -- --set bridge.flush=2us
sed "s/^\\[bridge\\].*/&\\nflush = 2us/" "$base" >"$TMP/rm.ini"; f=$TMP/rm.ini
check "removed key (file)" "rm.ini:" "[bridge] flush = '2us': key flush was removed in 0.2" -- --config "$f"

# --- values
check "not a number" "--set: [node 1] mtu = 'big'" "not a number" -- --set "node 1.mtu=big"
check "out of range" "--set: [node 1] mtu = '40'" "out of range" -- --set "node 1.mtu=40"
check "out of range (fallback section)" "--set: [bridge] vid = '5000'" "out of range 0..4095" -- --set bridge.vid=5000
check "duration unit" "--set: [bridge] rto = '200'" "needs a unit" -- --set bridge.rto=200
check "retry mode" "--set: [bridge] retry = 'sack'" "gbn or selective" -- --set bridge.retry=sack
check "bad duration" "--set: [global] duration = '5 minutes'" "not a duration" -- --set "global.duration=5 minutes"
check "bad boolean" "--set: [global] exit_when_done = 'maybe'" "not a boolean" -- --set global.exit_when_done=maybe
check "bad size" "--set: [bridge] mem_size = '64X'" "not a size" -- --set bridge.mem_size=64X
check "size not multiple of 64" "--set: [bridge] mem_size = '1000'" "multiple of 64" -- --set bridge.mem_size=1000
check "bad MAC" "--set: [node 1] mac = '02:48:54:00:00'" "not a MAC" -- --set "node 1.mac=02:48:54:00:00"
check "multicast MAC" "--set: [node 2] mac = '01:00:5e:00:00:01'" "not a unicast" -- --set "node 2.mac=01:00:5e:00:00:01"
check "duplicate MAC" "--set: [node 2] mac = '02:48:54:00:00:01'" "same MAC" -- --set "node 2.mac=02:48:54:00:00:01"
check "bad probability" "--set: [impair] loss = '150%'" "not a probability" -- --set impair.loss=150%
check "probability 1" "--set: [impair 0] dup = '1'" "a bare 1 would mean 100%" "write 100%" -- --set "impair 0.dup=1"
check "negative" "--set: [port 0] rxd = '-1'" "negative, but only 32..16384" -- --set "port 0.rxd=-1"
check "macsec key without enable" "--set: [macsec] key" "MACsec is not enabled" -- --set macsec.key=00112233445566778899aabbccddeeff
check "macsec N without enable" "--set: [macsec 2] an = '1'" "MACsec is not enabled for this node" -- --config "$SRC/config/two-node-macsec.ini" --set "macsec 2.an=1" --set "macsec 2.enable=off"
check "bad direction" "--set: [impair 0] direction = 'sideways'" "tx, rx or both" -- --set "impair 0.direction=sideways"
check "bad burst_len" "--set: [impair] burst_len = '0.5'" "burst length" -- --set impair.burst_len=0.5
check "impair without port" "--set: [impair 7]" "no [port 7]" -- --set "impair 7.loss=1%"
check "rto above rto_max" "--set: [bridge] rto_max = '100us'" "above rto_max" -- --set bridge.rto_max=100us
check "unitid overflow" "--set: [bridge] unitid_base = '28'" "exceeds UnitID 31" -- --set bridge.unitid_base=28
check "requester unitids" "--set: [node 1] requester_unitids = '8'" "overlap the bridge's UnitIDs" -- --set "node 1.requester_unitids=8"
check "bad bufs" "--set: [bridge] bufs_posted = '0/16'" "out of range 1..4096" -- --set bridge.bufs_posted=0/16
check "bad --set" "--set 'impairloss'" "SECTION.KEY=VALUE" -- --set impairloss

# --- ports and nodes
check "no such port" "--set: [node 1] port = '5'" "no [port 5]" -- --set "node 1.port=5"
check "node without port" "--set: [node 3] port" "missing" -- --set "node 3.lcore=0"
check "own crossover" "--set: [port 0] crossover = '0'" "its own crossover" -- --set "port 0.crossover=0"
check "crossover not mutual" "--set: [port 0] crossover = '2'" "no such [port]" -- --set "port 0.crossover=2"
check "dev and crossover" "--set: [port 0] dev = 'net_null0'" "either a device" -- --set "port 0.dev=net_null0"
check "hub and crossover" "--set: [port 0] hub = 'on'" "neither a device" -- --set "port 0.hub=on"
hub='[port 0]\ncrossover = 9\n[port 9]\nhub = on\n[node 1]\nport = 0\n[node 9]\nport = 9\n[map]\nrange1 = 0x100000000 64K 1\nrange9 = 0x900000000 64K 9\n'
f=$(file hub.ini "$hub")
check "crossover to a non-hub" "hub.ini:2: [port 0] crossover = '9': [port 9] must say crossover = 0 (or be a hub" -- --config "$f" --set "port 9.hub=off" --set "port 9.dev=net_null9"
check "hub of another process" "hub.ini:4: [port 9] hub" "must be used by a node of this process" -- --config "$f" --node 1
check "two nodes, one port" "--set: [node 2] port = '0'" "already uses this port" -- --set "node 2.port=0"
check "unused port" "--set: [port 5]" "no [node] uses this port" -- --set "port 5.dev=net_null5"
check "unknown --node" "--node 9" "no such [node N]" -- --node 9

# --- the address map
check "map overlap" "--set:[map] range3" "overlaps" "base.ini:[map] range1" "0x100008000" -- --config "$base" --set "map.range3=0x100008000 64K 2"
check "map reserved window" "--set:[map] range3" "reserved HT window" -- --set "map.range3=0xFD00000000 64K 2"
check "map unknown node" "--set:[map] range3" "node 9" -- --set "map.range3=0x300000000 64K 9"
check "map syntax" "--set: [map] range3 = '0x300000000 64K'" "BASE SIZE NODE" -- --set "map.range3=0x300000000 64K"
check "map mask mixed with ranges" "--set:[map] mask" "<embedded>:[map] range1" -- --set "map.mask=0xFFFF00000000"
check "map bad mask" "--set:[map] mask" "f0f000000000 is not contiguous" -- --config "$SRC/config/mask-map.ini" --set "map.mask=0xF0F000000000"
f=$(file nomap.ini '[port 0]\ncrossover = 1\n[port 1]\ncrossover = 0\n[node 1]\nport = 0\n[node 2]\nport = 1\n')
check "no map" "nomap.ini: [map]" "missing" -- --config "$f"

# --- workloads
check "workload target" "--set: [workload 1] target = '7'" "neither a [node] nor a [peer]" -- --set "workload 1.target=7"
check "workload window unmapped" "--set: [workload 1] base = '0x200000040'" "not mapped" -- --set "workload 1.base=0x200000040" --set "workload 1.size=64K"
check "workload misaligned" "--set: [workload 1] base = '0x200000004'" "64-byte aligned" -- --set "workload 1.base=0x200000004"
check "workload window too large" "--set: [workload 1] size = '128K'" "not mapped" -- --set "workload 1.size=128K"
check "workload outside memory" "--set: [workload 1] size = '64K'" "outside its memory" -- --set "workload 1.size=64K" --set "node 2.mem_size=32K"
check "workload overlap" "--set: [workload 2] target = '2'" "overlaps [workload 1]" -- --set "workload 2.target=2"
check "workload without node" "--set: [workload 5]" "no [node 5]" -- --set "workload 5.target=1"
check "workload mix" "--set: [workload] mix = 'rd=1,foo=2'" "unknown operation 'foo'" -- --set "workload.mix=rd=1,foo=2"
check "workload window" "--set: [workload 2] window = '1000'" "out of range" -- --set "workload 2.window=1000"

# --- what needs the EAL (still before any port starts)
sed 's/^dev = .*/dev = net_nothing1/' "$SRC/config/null-port.ini" >"$TMP/null1.ini"
check "lcore not enabled" "--set: [node 1] lcore = '3'" "not enabled" -- --set "node 1.lcore=3"
l=$(grep -n '^dev = ' "$TMP/null1.ini" | cut -d: -f1)
check "no such device" "null1.ini:$l: [port 0] dev = 'net_nothing1'" "probing it as devargs failed" -- --config "$TMP/null1.ini"
check "no such device (--set)" "--set: [port 0] dev = 'net_nothing0'" "probing it as devargs failed" -- --config "$SRC/config/null-port.ini" --set "port 0.dev=net_nothing0"
check "capture dir" "--capture '/proc/htoe'" "cannot create" -- --capture /proc/htoe

echo "all $npass configuration error cases refused"
