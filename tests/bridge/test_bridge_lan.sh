#!/usr/bin/env bash
# Four htoe-bridge processes, each in its own network namespace, joined by
# veth pairs to a Linux bridge (the switch) in a fifth namespace (suite
# 'bridge'). config/lan-cluster.ini, one node per process (--node N),
# alternating on lcores 0 and 1 (four busy pollers share the two CPUs);
# workloads in a ring 1 -> 2 -> 3 -> 4 -> 1 with 1 % loss and 1 % reordering
# on every frame sent. When all are done they are stopped with SIGINT: exit
# 0, every completion verified, each workload's shadow equal to its target's
# memory, retransmissions seen. Namespaces deleted on exit; skipped (77)
# without permission to create them.
#   test_bridge_lan.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 NODES=4 N=${3:-5000}
. "$(dirname "$0")/lib.sh"

SW="htoe-t-sw-$$"
add_netns "$SW"
ip -n "$SW" link add br0 type bridge
ip -n "$SW" link set br0 up
names=()
for i in $(seq "$NODES"); do
  ns="htoe-t-n$i-$$"
  add_netns "$ns"
  veth "$ns" "$SW" htoe0 "p$i"
  ip -n "$SW" link set "p$i" master br0
  start_bridge "n$i" ip netns exec "$ns" "$BRIDGE" $(eal_proc "n$i" $(((i - 1) % 2))) -- \
    --config "$SRC/config/lan-cluster.ini" --node "$i" --stats 1 \
    --transactions "$N" --set "impair.seed=$((30 + i))" --json
  names+=("n$i")
done
stop_when_done 240
check_bridges "${names[@]}"
ok "$NODES nodes through a Linux bridge in namespaces, ring workload with loss: all verified"
