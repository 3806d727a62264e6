/* SPDX-License-Identifier: BSD-3-Clause
 * The data path of a port (port_io.h): a burst received, a frame into the
 * TX buffer, a flush; the CTRL frames the port refused, kept to be offered
 * again; a hub's switching; and the guard of a port whose rings live in
 * memory a peer owns. Set-up is port.c's.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "port_io.h"

/* The RX ring of the member whose node is m's destination, or NULL. */
static struct rte_ring *hub_member_ring(const struct br_port *h, const struct rte_mbuf *m)
{
	const struct rte_ether_addr *dst = rte_pktmbuf_mtod(m, const struct rte_ether_addr *);

	for (unsigned k = 0; k < h->n_members; k++)
		if (rte_is_same_ether_addr(dst, &h->members[k].mac))
			return h->members[k].ring;
	return NULL;
}

/* m into member ring r (the hub's lcore is its only producer); when there
 * is none or it is full, m is freed and counted as refused by the hub. */
static void hub_forward(struct br_port *h, struct rte_ring *r, struct rte_mbuf *m)
{
	if (!r || rte_ring_sp_enqueue(r, m)) {
		rte_pktmbuf_free(m);
		h->tx_refused++;
	}
}

/* What a hub sent, into the RX ring of the port whose node is the
 * destination. */
static void hub_switch(struct br_port *h)
{
	void *objs[BR_MAX_BURST];
	unsigned n;

	while ((n = rte_ring_sc_dequeue_burst(h->hub_tx, objs, BR_MAX_BURST, NULL)) > 0)
		for (unsigned i = 0; i < n; i++)
			hub_forward(h, hub_member_ring(h, objs[i]), objs[i]);
}

uint16_t br_hub_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t nb, uint16_t max,
		   void *arg)
{
	struct br_port *h = arg;
	uint16_t keep = 0;

	(void)port, (void)queue, (void)max;
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_ring *r = hub_member_ring(h, pkts[i]);

		if (r)
			hub_forward(h, r, pkts[i]);
		else
			pkts[keep++] = pkts[i];
	}
	return keep;
}


/* ------------------------------------------------ frames not taken */

uint64_t br_port_ctrl_flag;

int br_port_txb_init(struct br_port *p, uint16_t burst, int socket)
{
	static const struct rte_mbuf_dynflag ctrl = { .name = "htoe_dynflag_ctrl_frame" };
	int bit = rte_mbuf_dynflag_register(&ctrl);

	if (bit < 0)
		return -1;
	br_port_ctrl_flag = 1ull << bit;
	p->txb = rte_zmalloc_socket("htoe_txb", RTE_ETH_TX_BUFFER_SIZE(BR_MAX_BURST), 0, socket);
	if (!p->txb)
		return -1;
	rte_eth_tx_buffer_init(p->txb, burst);
	rte_eth_tx_buffer_set_err_callback(p->txb, br_port_tx_unsent, p);
	return 0;
}

void br_port_tx_unsent(struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct br_port *p = arg;

	for (uint16_t i = 0; i < n; i++) {
		if ((pkts[i]->ol_flags & br_port_ctrl_flag) && p->n_kept < BR_TX_KEEP) {
			p->kept[p->n_kept++] = pkts[i];
			p->ctrl_kept++;
			continue;
		}
		rte_pktmbuf_free(pkts[i]);
		p->tx_refused++;
	}
}

unsigned br_port_offer_kept(struct br_port *p)
{
	struct rte_mbuf *m[BR_TX_KEEP];
	unsigned n = p->n_kept;

	/* (a refusal during the flush keeps them again, in order) */
	memcpy(m, p->kept, n * sizeof(m[0]));
	p->n_kept = 0;
	for (unsigned i = 0; i < n; i++)
		br_port_tx(p, m[i]);
	br_port_flush(p);
	return p->n_kept;
}

void br_port_drop_kept(struct br_port *p)
{
	if (p->n_kept)
		rte_pktmbuf_free_bulk(p->kept, p->n_kept);
	p->n_kept = 0;
}

/* ------------------------------------------- memory a peer owns (memif) */

/* A memif port's rings and buffers are in shared memory the client
 * created. When the client dies, the EAL interrupt thread tears the
 * connection down and unmaps that memory, and a burst running at that
 * moment on an lcore (memif checks "connected" only when it starts)
 * faults; a client may also truncate its memory file (SIGBUS). A burst
 * on such a port therefore runs armed: the fault ends the burst (its
 * frames are lost, and counted) instead of the process. A fault anywhere
 * else goes to the handler that was there before (the default, or a
 * sanitizer's). */
static __thread sigjmp_buf guard_jmp;
static __thread volatile sig_atomic_t guard_armed;
static struct sigaction guard_old[2]; /* SIGSEGV, SIGBUS */

static void guard_fault(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *old = &guard_old[sig == SIGBUS];

	if (guard_armed) {
		guard_armed = 0;
		siglongjmp(guard_jmp, 1);
	}
	if (old->sa_flags & SA_SIGINFO) {
		old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
	} else {
		/* the default action, once the faulting access runs again */
		signal(sig, SIG_DFL);
	}
}

int br_port_guard_install(void)
{
	static bool done;
	struct sigaction sa;

	if (done)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_fault;
	/* SA_NODEFER: the jump out leaves the signal unblocked */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &guard_old[0]) || sigaction(SIGBUS, &sa, &guard_old[1]))
		return -1;
	done = true;
	return 0;
}

static void guard_tripped(struct br_port *p, const char *what)
{
	if (p->peer_mem_faults++ == 0)
		fprintf(stderr, "htoe-bridge: %s (%s): the peer's shared memory went away during "
			"a %s burst (the peer died or truncated it); its frames are lost and the "
			"port waits for the peer to connect again\n", p->cfg->where, p->name, what);
}

uint16_t br_port_rx_guarded(struct br_port *p, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t nb;

	if (sigsetjmp(guard_jmp, 0)) {
		guard_tripped(p, "receive");
		return 0; /* the mbufs of that burst are lost with it */
	}
	guard_armed = 1;
	nb = rte_eth_rx_burst(p->port_id, 0, pkts, n);
	guard_armed = 0;
	return nb;
}

/* After a fault inside a TX burst the buffer's frames are neither sent
 * nor safely freeable (the PMD may have freed some): they are dropped
 * from the buffer and counted. */
static void guard_tx_lost(struct br_port *p)
{
	guard_tripped(p, "transmit");
	p->tx_refused += p->txb->length;
	p->txb->length = 0;
}

void br_port_tx(struct br_port *p, struct rte_mbuf *m)
{
	if (!p->peer_mem) {
		rte_eth_tx_buffer(p->port_id, 0, p->txb, m);
		return;
	}
	if (sigsetjmp(guard_jmp, 0)) {
		guard_tx_lost(p);
		return;
	}
	guard_armed = 1;
	rte_eth_tx_buffer(p->port_id, 0, p->txb, m);
	guard_armed = 0;
}

void br_port_flush(struct br_port *p)
{
	if (!p->peer_mem) {
		rte_eth_tx_buffer_flush(p->port_id, 0, p->txb);
	} else if (sigsetjmp(guard_jmp, 0)) {
		guard_tx_lost(p);
	} else {
		guard_armed = 1;
		rte_eth_tx_buffer_flush(p->port_id, 0, p->txb);
		guard_armed = 0;
	}
	if (p->hub_tx)
		hub_switch(p);
}
