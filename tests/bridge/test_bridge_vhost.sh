#!/usr/bin/env bash
# Two htoe-bridge processes over vhost-user, the VM case (suite 'bridge'):
# config/vhost-host.ini (node 1, net_vhost: the host side of a VM's NIC) and
# config/vhost-guest.ini (node 2, net_virtio_user: the virtio driver of that
# NIC), each on its own lcore with its own file prefix, run as
# docs/deploy-vm.md runs them (with --no-huge: the EAL's memfd is what the
# vhost side maps). Both inject 1 % loss and 1 % reordering on every frame
# they send and both run a verified workload on the other's memory. When
# both are done they are stopped with SIGINT (the guest side first): exit 0,
# every completion verified, no mismatch or error, each workload's shadow
# equal to the other process's memory, retransmissions seen.
#   test_bridge_vhost.sh BRIDGE SRCDIR [TRANSACTIONS]
BRIDGE=$1 SRC=$2 N=${3:-20000}
. "$(dirname "$0")/lib.sh"

SOCK="$TMP/vhost.sock"
start_bridge host "$BRIDGE" $(eal_proc host 0) -- --config "$SRC/config/vhost-host.ini" \
  --set "port 0.dev=net_vhost0,iface=$SOCK,queues=1" --transactions "$N" --json
# virtio-user connects once, at start-up: to a socket that exists
for _ in $(seq 200); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || { cat "$TMP/host.out"; fail "the vhost side did not open $SOCK"; }
start_bridge guest "$BRIDGE" $(eal_proc guest 1) -- --config "$SRC/config/vhost-guest.ini" \
  --set "port 0.dev=net_virtio_user0,path=$SOCK,queues=1" --transactions "$N" --json
stop_when_done 240
check_bridges host guest
grep -q "port 0 up: net_vhost0" "$TMP/host.out" || fail "vhost port not up"
grep -q "port 0 up: net_virtio_user0" "$TMP/guest.out" || fail "virtio-user port not up"
ok "vhost-user and virtio-user with loss and reordering: all verified, memory images identical"
