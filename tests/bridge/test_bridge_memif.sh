#!/usr/bin/env bash
# Two htoe-bridge processes over memif, the VM case (suite 'bridge'):
# config/memif-a.ini (node 1, memif server) and config/memif-b.ini (node 2,
# client), each on its own lcore and with its own file prefix (memif needs
# DPDK's shared configuration: no --no-shconf). Both inject 1 % loss and
# 1 % reordering on every frame they send, and both run a verified workload
# on the other's memory. When both are done they are stopped with SIGINT:
# exit 0, every completion verified, no mismatch or error, each workload's
# shadow equal to the other process's memory, retransmissions seen.
#   test_bridge_memif.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"

SOCK="$TMP/memif.sock"
dev() { echo "port 0.dev=net_memif0,role=$1,id=0,socket=$SOCK,socket-abstract=no"; }
start_bridge a "$BRIDGE" $(eal_proc a 0 shconf) -- --config "$SRC/config/memif-a.ini" \
  --set "$(dev server)" --transactions "$N" --json
# the client connects to a socket that exists (it would retry anyway)
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { cat "$TMP/a.out"; fail "the memif server did not open $SOCK"; }
start_bridge b "$BRIDGE" $(eal_proc b 1 shconf) -- --config "$SRC/config/memif-b.ini" \
  --set "$(dev client)" --transactions "$N" --json
stop_when_done 240
check_bridges a b
grep -q "port 0 up: net_memif0" "$TMP/a.out" || fail "memif port not up"
ok "two processes over memif with loss and reordering: all verified, memory images identical"
