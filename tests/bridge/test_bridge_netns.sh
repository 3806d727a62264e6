#!/usr/bin/env bash
# Two htoe-bridge processes in two network namespaces joined by a veth pair,
# af_packet on each end: the two-host case (suite 'bridge').
# config/netns-a.ini (node 1) and config/netns-b.ini (node 2), each on its own
# lcore, each injecting 1 % loss and 1 % reordering on every frame it sends
# and running a verified workload on the other's memory. When both are done
# they are stopped with SIGINT: exit 0, every completion verified, no
# mismatch or error, each workload's shadow equal to the other process's
# memory, retransmissions seen. The namespaces (and with them the veth pair)
# are deleted on exit, also on failure. Skipped (77) without permission to
# create namespaces.
#   test_bridge_netns.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"

NA="htoe-t-a-$$" NB="htoe-t-b-$$"
add_netns "$NA"
add_netns "$NB"
veth "$NA" "$NB"          # htoe0 in each, as the configs expect
start_bridge a ip netns exec "$NA" "$BRIDGE" $(eal_proc a 0) -- \
  --config "$SRC/config/netns-a.ini" --transactions "$N" --json
start_bridge b ip netns exec "$NB" "$BRIDGE" $(eal_proc b 1) -- \
  --config "$SRC/config/netns-b.ini" --transactions "$N" --json
stop_when_done 240
check_bridges a b
grep -q "port 0 up: net_af_packet0" "$TMP/a.out" || fail "af_packet port not up"
ok "two namespaces over veth (af_packet) with loss and reordering: all verified, memory images identical"
