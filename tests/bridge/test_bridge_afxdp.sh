#!/usr/bin/env bash
# Two htoe-bridge processes in two network namespaces joined by a veth pair,
# DPDK's af_xdp PMD on each end (suite 'bridge'; docs/deploy-af-xdp.md).
# config/afxdp-a.ini (node 1) and config/afxdp-b.ini (node 2), each on its
# own lcore, each injecting 1 % loss and 1 % reordering on every frame it
# sends and running a verified workload on the other's memory. When both are
# done they are stopped with SIGINT: exit 0, every completion verified, no
# mismatch or error, each workload's shadow equal to the other process's
# memory, retransmissions seen, and the frames went through AF_XDP sockets
# (the XDP program was attached to both veth ends while the bridges ran and
# is detached after). The namespaces (and with them the veth pair) are
# deleted on exit, also on failure. Skipped (77) without permission to create
# namespaces, or when the af_xdp PMD cannot start (no librte-net-af-xdp, a
# kernel without CONFIG_XDP_SOCKETS).
#   test_bridge_afxdp.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"

NA="htoe-t-xa-$$" NB="htoe-t-xb-$$"
add_netns "$NA"
add_netns "$NB"
# one queue per end: the PMD's socket is on queue 0 (start_queue=0)
VETH_QUEUES=1 veth "$NA" "$NB"

start_bridge a ip netns exec "$NA" "$BRIDGE" $(eal_proc a 0) -- \
  --config "$SRC/config/afxdp-a.ini" --transactions "$N" --json
rc=0
wait_for_line a "port 0 up: net_af_xdp0" 60 || rc=$?
if [ "$rc" = 1 ] && grep -q "net_af_xdp0.*probing it as devargs failed" "$TMP/a.out"; then
  cat "$TMP/a.out"
  echo "SKIP: the af_xdp PMD does not start here: $(grep -m1 'devargs failed' "$TMP/a.out")" \
    "(needs librte-net-af-xdp23 and a kernel with CONFIG_XDP_SOCKETS)"
  exit 77
fi
[ "$rc" = 0 ] || { cat "$TMP/a.out"; fail "node 1's af_xdp port did not come up"; }
# while node 1 runs, its end of the veth has an XDP program (native on veth:
# "xdp", generic: "xdpgeneric")
ip -n "$NA" link show htoe0 | grep -Eq "xdp(generic|offload)? |prog/xdp" ||
  { ip -n "$NA" -d link show htoe0; fail "no XDP program on node 1's htoe0 while it runs"; }
mode=$(ip -n "$NA" link show htoe0 | grep -Eo "xdp(generic|offload)?" | head -1)
start_bridge b ip netns exec "$NB" "$BRIDGE" $(eal_proc b 1) -- \
  --config "$SRC/config/afxdp-b.ini" --transactions "$N" --json
stop_when_done 240
check_bridges a b
grep -q "port 0 up: net_af_xdp0" "$TMP/b.out" || fail "node 2's af_xdp port not up"
for ns in "$NA" "$NB"; do
  ! ip -n "$ns" link show htoe0 | grep -q "prog/xdp" ||
    fail "the XDP program is still attached to htoe0 in $ns after the bridge stopped"
done
ok "two namespaces over veth (af_xdp, XDP mode '$mode') with loss and reordering:" \
  "all verified, memory images identical, XDP program detached"
