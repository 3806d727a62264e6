#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates the pcap corpus (pcap/*.pcap, described in pcap/README.md) from the built tools.
#
#   scripts/gen-pcaps.sh [BUILD_DIR [OUT_DIR]]     defaults: build, pcap
#
# Most files are captures of real runs: htoe-bridge --capture (DPDK, two nodes over an
# in-process net_ring crossover pair, two processes over memif, or four nodes over
# af_packet on veth pairs joined by a Linux bridge) and htoe-dimm --capture (lease CTRL
# messages). Each run's per-port TX
# captures are merged in time order into one file. Real runs are NOT bit-reproducible
# (wall-clock timing decides batching, retransmissions, resets), so every file is checked
# here for what pcap/README.md says it holds, and a run is repeated (up to 3 times) until it
# does. restart.pcap comes from htoe-sim (deterministic), synthetic.pcap and malformed.pcap
# from scripts/synth_pcaps.py (deterministic).
#
# Needs root (DPDK without hugepages still wants it; the four-node run creates veth pairs
# and a bridge named gp<PID>*, removed at the end), python3. Takes about 15 s; every file
# stays below 1 MB.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
build=${1:-$src/build}
out=${2:-$src/pcap}
bridge=$build/app/htoe-bridge
dimm=$build/app/htoe-dimm
sim=$build/app/htoe-sim
pcaptool=$build/app/htoe-pcap
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)

for t in "$bridge" "$dimm" "$sim"; do
	if [ ! -x "$t" ]; then
		echo "gen-pcaps.sh: $t not found: build first (meson setup $build && ninja -C $build)" >&2
		exit 1
	fi
done
mkdir -p "$out"
tmp=$(mktemp -d /tmp/gen-pcaps.XXXXXX)
tag=gp$$
cap=          # the capture directory of the current run (set by capture)
links=()
cleanup() {
	for l in "${links[@]}"; do ip link del "$l" 2>/dev/null || true; done
	rm -rf "$tmp" /var/run/dpdk/"$tag"-*
}
trap cleanup EXIT

eal() { echo "-l 0-1 --no-huge -m 512 --no-pci --no-shconf --log-level=warning --file-prefix $tag-$1"; }

# merge OUT IN...: the frames of the IN pcaps in time-stamp order (stable), nanosecond pcap.
merge() {
	"$py" - "$@" <<'EOF'
import struct, sys
out, ins = sys.argv[1], sys.argv[2:]
recs = []
for k, path in enumerate(ins):
    d = open(path, "rb").read()
    magic = struct.unpack("<I", d[:4])[0]
    assert magic in (0xA1B23C4D, 0xA1B2C3D4), path + ": not a little-endian pcap"
    scale = 1 if magic == 0xA1B23C4D else 1000
    off = 24
    while off + 16 <= len(d):
        s, frac, incl, orig = struct.unpack("<IIII", d[off:off + 16])
        recs.append((s * 1_000_000_000 + frac * scale, k, off, d[off + 16:off + 16 + incl], orig))
        off += 16 + incl
recs.sort(key=lambda r: (r[0], r[1], r[2]))
with open(out, "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
    for t, _, _, b, orig in recs:
        f.write(struct.pack("<IIII", t // 1_000_000_000, t % 1_000_000_000, len(b), orig))
        f.write(b)
EOF
}

# need FILE KIND=MIN...: the capture holds at least MIN frames of each KIND (exit 1 if not).
# KINDs: DATA ACK NAK CTRL RESET_COLD RESET_WARM RESET_ACK_COLD RESET_ACK_WARM CREDIT_REQ
# RETRANS (a DATA seq seen before on its VL and epoch) VLAN MACSEC NODES (distinct sources)
# LEASE_<TYPE> (lease messages: REQUEST, GRANT, RENEW, RENEW_ACK, RELEASE, RELEASE_ACK)
# ERROR_RSP (RdResponse/TgtDone with Error0/Error1 set).
need() {
	"$py" - "$@" <<'EOF'
import struct, sys
path, reqs = sys.argv[1], dict((a.split("=")[0], int(a.split("=")[1])) for a in sys.argv[2:])
d = open(path, "rb").read()
off, n = 24, {}
seen, nodes = set(), set()
LT = {1: "REQUEST", 2: "GRANT", 3: "REFUSE", 4: "RENEW", 5: "RENEW_ACK", 6: "RELEASE",
      7: "RELEASE_ACK"}
def add(k):
    n[k] = n.get(k, 0) + 1
while off + 16 <= len(d):
    incl = struct.unpack("<I", d[off + 8:off + 12])[0]
    f = d[off + 16:off + 16 + incl]
    off += 16 + incl
    p, et = 12, None
    while p + 2 <= len(f):
        et = struct.unpack(">H", f[p:p + 2])[0]
        if et == 0x8100:
            add("VLAN"); p += 4
        elif et == 0x88E5:
            add("MACSEC"); p += 16 if f[p + 2] & 0x20 else 8
        else:
            break
    if et != 0x88B5 or len(f) < p + 34:
        continue
    h = f[p + 2:p + 34]
    ft, fl, src, dst, seq = h[0] & 15, h[1], *struct.unpack(">HHH", h[4:10])
    nodes.add(src)
    name = {1: "DATA", 2: "ACK", 3: "NAK", 4: "RESET", 5: "RESET_ACK", 6: "CTRL"}.get(ft)
    if name in ("RESET", "RESET_ACK"):
        name += "_COLD" if fl & 4 else "_WARM"
    add(name)
    if ft == 2 and fl & 8:
        add("CREDIT_REQ")
    pl = f[p + 34:p + 34 + struct.unpack(">H", h[24:26])[0]]
    if ft == 1:
        key = (src, dst, h[3], seq)
        if key in seen:
            add("RETRANS")
        seen.add(key)
        if fl & 3 == 2:                      # responses: walk Cmd/Count
            q = 0
            while q + 4 <= len(pl):
                d0 = struct.unpack("<I", pl[q:q + 4])[0]
                cmd = d0 & 0x3F
                if cmd not in (0x30, 0x33):
                    break
                if (d0 >> 21) & 1 or (d0 >> 29) & 1:
                    add("ERROR_RSP")
                q += 4 + (4 * ((d0 >> 22 & 15) + 1) if cmd == 0x30 else 0)
    if ft == 6 and len(pl) >= 48 and pl[0] == 0x4C:
        add("LEASE_" + LT.get(pl[2], "?"))
n["NODES"] = len(nodes)
short = ["%s %d < %d" % (k, n.get(k, 0), v) for k, v in reqs.items() if n.get(k, 0) < v]
if short:
    print("  %s lacks: %s" % (path.rsplit("/", 1)[-1], ", ".join(short)), file=sys.stderr)
    sys.exit(1)
EOF
}

report() { printf '%-22s %8d bytes\n' "$1" "$(stat -c %s "$out/$1")"; }

# capture NAME RCS CHECKS -- COMMAND...: run COMMAND (whose --capture DIR is $tmp/NAME,
# passed as $cap) up to 3 times until its exit status is one of RCS (comma list, or "any")
# and the merged TX captures satisfy CHECKS (a "need" argument list, space separated).
capture() {
	local name=$1 rcs=$2 checks=$3 try rc
	shift 4
	for try in 1 2 3; do
		rm -rf "${tmp:?}/$name"
		mkdir -p "$tmp/$name"
		rc=0
		cap=$tmp/$name "$@" >"$tmp/$name.log" 2>&1 || rc=$?
		rm -rf /var/run/dpdk/"$tag"-*
		if [ "$rcs" != any ] && [[ ",$rcs," != *",$rc,"* ]]; then
			echo "gen-pcaps.sh: $name: exit status $rc (try $try):" >&2
			tail -5 "$tmp/$name.log" >&2
			continue
		fi
		# shellcheck disable=SC2046
		merge "$out/$name" $(find "$tmp/$name" -name 'port*-tx.pcap' | sort)
		# shellcheck disable=SC2086
		if need "$out/$name" $checks; then
			report "$name"
			return 0
		fi
		echo "gen-pcaps.sh: $name: try $try does not show what it should, again" >&2
	done
	echo "gen-pcaps.sh: $name: no good capture in 3 tries (log: $tmp/$name.log)" >&2
	cp "$tmp/$name.log" "$out/.$name.log" 2>/dev/null || true
	exit 1
}

run_bridge() { # NAME ARGS...
	local name=$1
	shift
	# shellcheck disable=SC2046
	"$bridge" $(eal "$name") -- --stats 0 --capture "$cap" "$@"
}

# Clean run, full op mix (reads, posted and non-posted writes, byte and dword, fetch-add,
# CAS, flush; fences stay local), 16 KiB per node so the read-back sweep is short. Small
# receive buffers make the senders run out of credits: ACKs with CREDIT_REQ.
small_bufs=(--set bridge.bufs_posted=16 --set bridge.bufs_nonposted=16
	--set bridge.bufs_response=16 --set bridge.reserve=4 --set bridge.max_per_vl=16)
capture basic.pcap 0 "RESET_COLD=1 RESET_ACK_COLD=1 DATA=50 ACK=1 CREDIT_REQ=1" -- \
	run_bridge basic --set bridge.mem_size=16K "${small_bufs[@]}" --transactions 400

# 5 % loss, 5 % reordering, 2 % duplication on both ports' TX: NAKs, Go-Back-N
# retransmissions (and duplicates), everything still verified.
capture lossy.pcap 0 "NAK=1 RETRANS=1" -- \
	run_bridge lossy --set bridge.mem_size=4K --set workload.window=16 \
	--set impair.loss=5% --set impair.reorder=5% --set impair.dup=2% --set impair.seed=2 \
	--transactions 600

# The outage window of the impairment stage (every frame dropped from 300 us to 60 ms after
# the first one) with short timers: retransmissions with backoff, retry_limit reached, a
# warm VL reset of each VL; the requests in flight are poisoned (answered with an error by
# the requester's own bridge, so not on the wire) and their writes may be lost: the
# workloads report errors and mismatches and the bridge exits 1, as expected here.
short_timers=(--set bridge.rto=1ms --set bridge.rto_max=4ms --set bridge.retry_limit=3
	--set bridge.np_timeout=20ms --set bridge.stall_timeout=20ms)
capture reset.pcap 0,1 "RESET_WARM=1 RESET_ACK_WARM=1 RETRANS=1" -- \
	run_bridge reset --set bridge.mem_size=4K --set workload.window=4 \
	--set impair.outage_start=300us --set impair.outage_len=60ms "${short_timers[@]}" \
	--transactions 1000
# A longer outage (400 ms, from 300 us): backoff up to rto_max, warm RESETs repeated
# until the link comes back, request timeouts; then the VLs come back and traffic resumes.
capture partition.pcap 0,1 "RESET_WARM=2 RESET_ACK_WARM=1 RETRANS=1" -- \
	run_bridge partition --set bridge.mem_size=4K --set workload.window=4 \
	--set impair.outage_start=300us --set impair.outage_len=400ms "${short_timers[@]}" \
	--set bridge.rto_max=50ms --transactions 1000

# Error responses on the wire: two processes joined by memif (DPDK shared memory; no
# --no-shconf). Node 2 exports 4 KiB; node 1's process is told (--set) that node 2 has
# 8 KiB, so its workload's window is half outside node 2's memory: node 2's memory target
# answers those requests with a master abort (RdResponse/TgtDone with Error0=Error1=1)
# that crosses the wire. Node 1's workload counts them as errors and the bridge exits 1.
# (A data error or target abort needs a failing target: the memory model has none.)
err_cfg=$tmp/errors.ini
cat >"$err_cfg" <<'EOF'
[global]
exit_when_done = on
[bridge]
mem_base = 0x100000
mem_size = 4K
[port 0]
dev = net_memif0
[node 1]
port = 0
[node 2]
port = 0
[map]
range1 = 0x100000000 4K 1
range2 = 0x200000000 8K 2
[workload 1]
target = 2
ops = 300
window = 8
EOF
run_errors() {
	local sock=$cap/memif.sock rc=0 pid
	local memif="--no-huge -m 512 --no-pci --log-level=warning --vdev=net_memif0,socket=$sock"
	memif+=",socket-abstract=no,role"
	mkdir -p "$cap/b" "$cap/a"
	# shellcheck disable=SC2086
	"$bridge" -l 1 $memif=server --file-prefix "$tag-eb" -- --config "$err_cfg" --node 2 \
		--set global.exit_when_done=off --stats 0 --capture "$cap/b" &
	pid=$!
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	# shellcheck disable=SC2086
	timeout 60 "$bridge" -l 0 $memif=client --file-prefix "$tag-ea" -- --config "$err_cfg" \
		--node 1 --set 'node 2.mem_size=8K' --stats 0 --capture "$cap/a" || rc=$?
	kill -INT "$pid" 2>/dev/null || true
	wait "$pid" || true
	return $rc
}
capture errors.pcap 1 "ERROR_RSP=1 DATA=20" -- run_errors

# Four nodes, each with its own af_packet port on a veth pair joined by a Linux bridge (a
# switch), 802.1Q-tagged (VLAN 100, PCP 5): node N reads and writes node N+1's memory,
# twelve VLs come up with cold resets.
n4_cfg=$tmp/nodes4.ini
cat >"$n4_cfg" <<'EOF'
[bridge]
mem_base = 0x100000
mem_size = 2K
vlan = on
vid = 100
default_pcp = 5
[map]
mask = 0xFFFF00000000
[workload]
window = 8
[workload 1]
target = 2
[workload 2]
target = 3
[workload 3]
target = 4
[workload 4]
target = 1
EOF
br=${tag}br
if ip link add "$br" type bridge 2>/dev/null; then
	links+=("$br")
	for i in 1 2 3 4; do
		ip link add "${tag}n$i" type veth peer name "${tag}p$i"
		links+=("${tag}n$i")
		ip link set "${tag}p$i" master "$br"
		ip link set "${tag}p$i" up
		ip link set "${tag}n$i" up
		printf '[port %d]\ndev = net_af_packet%d,iface=%sn%d\n[node %d]\nport = %d\n' \
			$((i - 1)) $((i - 1)) "$tag" "$i" "$i" $((i - 1)) >>"$n4_cfg"
	done
	ip link set "$br" up
	capture nodes4.pcap 0 "NODES=4 VLAN=100 RESET_COLD=6 DATA=40" -- \
		run_bridge nodes4 --config "$n4_cfg" --transactions 400
else
	echo "gen-pcaps.sh: cannot create a Linux bridge (not root?): nodes4.pcap not regenerated" >&2
fi

# Lease CTRL messages from htoe-dimm: node 1 leases 64 KiB of node 2's memory for 60 ms
# (renewed every 20 ms: RENEW/RENEW_ACK), runs STREAM on it through the userfaultfd pager
# with a local budget of half of it (page faults and write-backs all along: the run lasts
# long enough for renewals) or, without userfaultfd, the explicit API, and gives it back
# (RELEASE/RELEASE_ACK).
run_dimm() {
	# shellcheck disable=SC2046
	"$dimm" $(eal dimm) -- --wss 64K --budgets 50 --workloads stream --ntimes 1 \
		--no-explicit --no-baselines --no-plot --json "$cap/r.json" --lease-ms 60 --capture "$cap" "$@"
}
dimm_checks="LEASE_REQUEST=1 LEASE_GRANT=1 LEASE_RENEW=1 LEASE_RENEW_ACK=1 LEASE_RELEASE=1"
dimm_checks+=" LEASE_RELEASE_ACK=1 DATA=20"
if [ -e /proc/sys/vm/unprivileged_userfaultfd ] || [ "$(id -u)" = 0 ]; then
	capture lease.pcap 0 "$dimm_checks" -- run_dimm
else
	capture lease.pcap 0 "$dimm_checks" -- run_dimm --no-uffd
fi

# Node 2 restarts at 6 us: a cold reset of its VLs with a new epoch and nonce. htoe-bridge
# cannot restart a node in the middle of a run, so this one stays a simulator capture
# (deterministic: virtual time, fixed seed).
"$sim" --quiet --pcap "$out/restart.pcap" --nodes 2 --seed 5 --transactions 300 --mem 2048 \
	--restart 2:6000 >"$tmp/restart.json"
if ! grep -q '"violations":0' "$tmp/restart.json"; then
	echo "gen-pcaps.sh: restart.pcap: the simulator reports violations:" >&2
	cat "$tmp/restart.json" >&2
	exit 1
fi
report restart.pcap

# Integrity-only MACsec (GCM-AES-128, E=0, C=0): from the bridge itself when it has
# [macsec] (probed with --check), else reset.pcap protected by htoe-pcap macsec-encrypt.
# Test key 000102030405060708090a0b0c0d0e0f. Wireshark dissects the HToE frames inside
# without the key.
key=000102030405060708090a0b0c0d0e0f
macsec=(--set macsec.enable=on --set macsec.cipher=gcm-aes-128 --set macsec.mode=integrity
	--set "macsec.key=$key")
# shellcheck disable=SC2046
if "$bridge" $(eal probe) -- "${macsec[@]}" --check >"$tmp/probe.log" 2>&1; then
	rm -rf /var/run/dpdk/"$tag"-probe
	capture macsec-integrity.pcap 0 "MACSEC=100 RESET_COLD=2 DATA=30" -- \
		run_bridge macsec --set bridge.mem_size=2K --set workload.window=8 "${macsec[@]}" \
		--transactions 200
elif [ -x "$pcaptool" ] && "$pcaptool" --help 2>&1 | grep -q -- --integrity-only; then
	rm -rf /var/run/dpdk/"$tag"-probe
	echo "gen-pcaps.sh: htoe-bridge has no [macsec] ($(tail -1 "$tmp/probe.log")):" \
		"macsec-integrity.pcap is reset.pcap through htoe-pcap macsec-encrypt" >&2
	"$pcaptool" macsec-encrypt --in "$out/reset.pcap" --out "$out/macsec-integrity.pcap" \
		--key $key --sci 024854000001:0001 --an 0 --pn 1 --integrity-only --pad >/dev/null
	report macsec-integrity.pcap
else
	echo "gen-pcaps.sh: neither htoe-bridge [macsec] nor htoe-pcap macsec-encrypt" \
		"--integrity-only: macsec-integrity.pcap not regenerated" >&2
fi

# Hand-built frames: worked examples, 64-bit addresses, error responses, lease messages of
# every type and status, MACsec variants; malformed.pcap: one defect per frame.
"$py" "$here/synth_pcaps.py" "$out"
report synthetic.pcap
report malformed.pcap
