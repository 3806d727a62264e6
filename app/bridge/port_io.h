/* SPDX-License-Identifier: BSD-3-Clause
 * A port of a bridge process on the data path (port_io.c): the ethdev of
 * one node, its TX buffer, its impairment stages, and, for a hub, the
 * ports joined to it. Created and started by port.c; used by the driver
 * on the lcore of the port's node.
 */
#ifndef HTOE_BRIDGE_PORT_IO_H
#define HTOE_BRIDGE_PORT_IO_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "config.h"

/* The largest RX burst ([global] burst), and the size of the bulk arrays
 * of mbufs of the driver and of a hub's switching. */
#define BR_MAX_BURST   64u
/* The CTRL frames a port refused that it keeps to offer again (per port). */
#define BR_TX_KEEP     8u

struct impair;

struct br_port {
	const struct br_port_cfg *cfg;
	uint16_t port_id;
	bool     probed, started, configured;
	char     name[RTE_ETH_NAME_MAX_LEN];
	struct rte_ring *rx_ring;           /* crossover/hub: the ring this port receives from */
	struct rte_ring *hub_tx;            /* hub: what it sent, for br_port_flush to switch */
	struct br_hub_member *members;      /* hub: the ports joined to it, by their node's MAC */
	unsigned n_members;
	const struct rte_eth_rxtx_callback *hub_cb; /* hub: switches member-to-member frames */
	struct rte_eth_dev_tx_buffer *txb;
	uint64_t tx_refused;                /* by the tx buffer callback: freed */
	/* CTRL frames (marked br_port_ctrl_flag) the port refused, offered
	 * again ahead of anything else (br_port_offer_kept): nothing else
	 * resends them, and a lost RESET_ACK costs a reset timeout */
	struct rte_mbuf *kept[BR_TX_KEEP];
	unsigned n_kept;
	uint64_t ctrl_kept;                 /* CTRL frames refused and kept */
	bool     peer_mem;                  /* memif: its rings live in memory a peer owns */
	uint64_t peer_mem_faults;           /* bursts cut short: that memory went away */
	struct impair *imp_tx, *imp_rx;
	int      cap_idx;                   /* index of its dumpers, -1: not captured */
};

/* A port joined to a hub: the MAC of the node that uses it, its RX ring. */
struct br_hub_member {
	struct rte_ether_addr mac;
	struct rte_ring *ring;
};

/* The mbuf flag (a dynamic flag) of a CTRL frame; 0 before br_port_txb_init. */
extern uint64_t br_port_ctrl_flag;
/* p's TX buffer of `burst` frames: frames the port does not take are freed
 * and counted (tx_refused), but for CTRL frames, which are kept (up to
 * BR_TX_KEEP; more are freed and counted). 0, or -1 (no memory, or the
 * mbuf flag could not be registered). */
int br_port_txb_init(struct br_port *p, uint16_t burst, int socket);
/* The tx buffer's callback for the frames the port did not take (arg: p). */
void br_port_tx_unsent(struct rte_mbuf **pkts, uint16_t n, void *arg);
/* Offers the kept CTRL frames again, first (p's TX buffer is empty), and
 * flushes them: the number still kept (the port refused them again). */
unsigned br_port_offer_kept(struct br_port *p);
/* Frees the kept frames (the port is closed). */
void br_port_drop_kept(struct br_port *p);
/* Sends what p's TX buffer holds; a hub then switches it to its members. */
void br_port_flush(struct br_port *p);
/* Receives up to n frames from p; m into p's TX buffer. A port whose rings
 * are in a peer's shared memory (memif) survives that memory vanishing
 * under a burst (the peer died): the burst ends, its frames are lost and
 * counted (peer_mem_faults, tx_refused). */
uint16_t br_port_rx_guarded(struct br_port *p, struct rte_mbuf **pkts, uint16_t n);
/* (inline: an idle lcore does little else than this, and the guarded
 * variant's sigsetjmp makes a costly frame of any function holding it) */
static inline uint16_t br_port_rx(struct br_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	if (likely(!p->peer_mem))
		return rte_eth_rx_burst(p->port_id, 0, pkts, n);
	return br_port_rx_guarded(p, pkts, n);
}
void br_port_tx(struct br_port *p, struct rte_mbuf *m);

/* The RX callback of a hub (rte_eth_add_rx_callback, arg: the hub's port): a frame one
 * member sent to another goes on to it (the hub is a switch for them too); the rest is the
 * hub's node's. */
uint16_t br_hub_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, uint16_t max,
		   void *arg);
/* The SIGSEGV/SIGBUS handlers that end a burst on a port whose memory a peer owns (once per
 * process): 0, or -1 (sigaction failed). */
int br_port_guard_install(void);

#endif
