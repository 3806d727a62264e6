/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm runtime: exporter and borrower nodes on DPDK ports. See
 * runtime.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_ring.h>

#include "runtime.h"

uint64_t dr_now(const struct dapp *d)
{
	return br_now_ns(d->br, rte_rdtsc());
}

/* ------------------------------------------------------------ capture */

int dr_capture_open(struct dapp *d, char *err, size_t errlen)
{
	const struct br_config *c = &d->br->cfg;
	struct timespec ts;

	if (!c->capture_dir[0])
		return 0;
	if (br_capture_mkdir(c, err, errlen))
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	d->br->realtime0_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - dr_now(d);
	for (unsigned i = 0; i < d->n_nodes; i++) {
		struct dnode *x = &d->nodes[i];

		if (!x->port->cfg->capture)
			continue;
		for (int k = 0; k < 2; k++)
			if (!(x->cap[k] = br_dumper_new(c->capture_dir, x->port->cfg->index, k,
							c->capture_where, err, errlen)))
				return -1;
	}
	return 0;
}

static void cap_frame(struct dnode *x, int tx, const struct rte_mbuf *m, uint64_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t cl = len < sizeof(x->linbuf) ? len : (uint32_t)sizeof(x->linbuf);
	const uint8_t *p = rte_pktmbuf_read(m, 0, cl, x->linbuf);

	if (p)
		br_dumper_write(x->cap[tx], p, cl, len, x->app->br->realtime0_ns + now);
}

/* ------------------------------------------------------------ frames */

static void deliver(struct dnode *x, struct rte_mbuf *m, uint64_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint8_t *p = NULL;

	if (len <= sizeof(x->linbuf))
		p = rte_pktmbuf_read(m, 0, len, x->linbuf);
	if (!p || htoe_frame_input(x->b, p, len, now) < 0)
		x->c.rx_bad++;
	rte_pktmbuf_free(m);
}

static void hold_rx(struct dnode *x, struct rte_mbuf *m, uint64_t at, uint64_t now)
{
	if (at <= now || impair_hold(x->port->imp_rx, m, at) != 0)
		deliver(x, m, now);
}

static unsigned rx(struct dapp *d, struct dnode *x, uint64_t now)
{
	struct br_port *p = x->port;
	struct rte_mbuf *pkts[BR_MAX_BURST], *m;
	uint16_t nb = rte_eth_rx_burst(p->port_id, 0, pkts, (uint16_t)d->br->cfg.burst);
	unsigned moved = nb;

	for (uint16_t i = 0; i < nb; i++) {
		struct impair_verdict v;

		m = pkts[i];
		x->c.rx_frames++;
		if (x->cap[0])
			cap_frame(x, 0, m, now);
		if (atomic_load_explicit(&x->dead, memory_order_relaxed)) {
			rte_pktmbuf_free(m); /* a crashed node hears nothing */
			continue;
		}
		if (!p->imp_rx) {
			deliver(x, m, now);
			continue;
		}
		impair_decide(p->imp_rx, rte_pktmbuf_pkt_len(m), now, &v);
		if (!v.copies) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (v.corrupt)
			impair_flip(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), v.bit);
		if (v.copies == 2)
			rte_mbuf_refcnt_update(m, 1);
		hold_rx(x, m, v.at[0], now);
		if (v.copies == 2)
			hold_rx(x, m, v.at[1], now);
	}
	if (p->imp_rx)
		while ((m = impair_release(p->imp_rx, now)) != NULL) {
			deliver(x, m, now);
			moved++;
		}
	return moved;
}

static void wire_tx(struct dnode *x, struct rte_mbuf *m)
{
	x->c.tx_frames++;
	if (x->cap[1])
		cap_frame(x, 1, m, dr_now(x->app));
	rte_eth_tx_buffer(x->port->port_id, 0, x->port->txb, m);
}

static void hold_tx(struct dnode *x, struct rte_mbuf *m, uint64_t at, uint64_t now)
{
	if (at <= now || impair_hold(x->port->imp_tx, m, at) != 0)
		wire_tx(x, m);
}

static unsigned tx(struct dapp *d, struct dnode *x, uint64_t now)
{
	struct br_port *p = x->port;
	struct rte_mbuf *m;
	unsigned sent = 0;

	for (;;) {
		struct impair_verdict v;
		int len;

		m = x->spare;
		if (!m && !(m = rte_pktmbuf_alloc(d->br->pool))) {
			x->c.alloc_fail++;
			break;
		}
		x->spare = NULL;
		uint32_t cap = rte_pktmbuf_tailroom(m);

		len = htoe_frame_output(x->b, rte_pktmbuf_mtod(m, uint8_t *),
					cap > HTOE_FRAME_MAX ? HTOE_FRAME_MAX : cap, now, HTOE_TX_FLUSH);
		if (len <= 0) {
			x->spare = m;
			break;
		}
		m->data_len = (uint16_t)len;
		m->pkt_len = (uint32_t)len;
		sent++;
		if (!p->imp_tx) {
			wire_tx(x, m);
			continue;
		}
		impair_decide(p->imp_tx, (uint32_t)len, now, &v);
		if (!v.copies) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (v.corrupt)
			impair_flip(rte_pktmbuf_mtod(m, uint8_t *), (uint32_t)len, v.bit);
		if (v.copies == 2) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m, d->br->pool, 0, UINT32_MAX);

			hold_tx(x, m, v.at[0], now);
			if (c)
				hold_tx(x, c, v.at[1], now);
		} else {
			hold_tx(x, m, v.at[0], now);
		}
	}
	if (p->imp_tx)
		while ((m = impair_release(p->imp_tx, now)) != NULL) {
			wire_tx(x, m);
			sent++;
		}
	if (sent)
		rte_eth_tx_buffer_flush(p->port_id, 0, p->txb);
	x->c.tx_refused = p->tx_refused;
	return sent;
}

/* ------------------------------------------------------------ nodes */

static void on_lease_event(void *arg, const struct htoe_lease_event *ev)
{
	struct dnode *x = arg;

	switch (ev->type) {
	case HTOE_LEV_EXPORT_GRANTED:
		printf("htoe-dimm: node %u: lease %#x to node %u: %" PRIu64 " KiB at offset %#" PRIx64
		       "\n", x->id, ev->lease_id, ev->node, ev->size / 1024, ev->offset);
		break;
	case HTOE_LEV_EXPORT_EXPIRED:
	case HTOE_LEV_EXPORT_RELEASED:
		printf("htoe-dimm: node %u: lease %#x of node %u %s; its memory is zeroed and free\n",
		       x->id, ev->lease_id, ev->node,
		       ev->type == HTOE_LEV_EXPORT_EXPIRED ? "expired (not renewed)" : "released");
		/* no data of one borrower is ever seen by the next */
		if (x->mem && ev->offset + ev->size <= x->cfg->mem_size)
			memset(x->mem + ev->offset, 0, ev->size);
		break;
	case HTOE_LEV_LOST:
		fprintf(stderr, "htoe-dimm: node %u: lease %#x from node %u lost: %s\n", x->id,
			ev->lease_id, ev->node, htoe_lease_status_name(ev->status));
		break;
	default:
		break;
	}
}

int dr_nodes_setup(struct dapp *d, uint16_t borrower, char *err, size_t errlen)
{
	const struct br_config *cfg = &d->br->cfg;
	char msg[256];

	d->n_nodes = cfg->n_nodes;
	d->nodes = calloc(d->n_nodes, sizeof(*d->nodes));
	if (!d->nodes) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < d->n_nodes; i++) {
		const struct br_node_cfg *nc = &cfg->nodes[i];
		struct dnode *x = &d->nodes[i];
		struct htoe_lease_cfg lc;
		struct dimm_node_cfg dc;

		x->app = d;
		x->cfg = nc;
		x->id = nc->id;
		x->borrower = nc->id == borrower;
		atomic_init(&x->dead, 0);
		struct htoe_config bc = nc->bc;

		/* every start is a new incarnation, with a fresh nonce key */
		if (htnode_random_incarnation(&bc, msg, sizeof(msg)) != 0) {
			snprintf(err, errlen, "%s: %s", nc->where, msg);
			return -1;
		}
		x->b = htoe_new(&bc, msg, sizeof(msg));
		if (!x->b) {
			snprintf(err, errlen, "%s: bridge: %s", nc->where, msg);
			return -1;
		}
		htoe_lease_cfg_defaults(&lc);
		lc.node_id = nc->id;
		lc.session = bc.incarnation; /* random, non-zero */
		lc.map = nc->bc.map;
		lc.default_duration_ns = d->lease_ns;
		if (lc.max_duration_ns < d->lease_ns)
			lc.max_duration_ns = d->lease_ns;
		if (x->borrower) {
			struct dimm_engine_cfg ec;

			memset(&ec, 0, sizeof(ec));
			dimm_link_htoe(&ec.link, x->b);
			ec.n_unitids = nc->req_unitids;
			ec.first_unitid = 1;
			ec.bridge_ubase = nc->bc.unitid_base;
			ec.bridge_units = nc->bc.n_unitids;
			x->eng = dimm_engine_new(&ec, msg, sizeof(msg));
			if (!x->eng) {
				snprintf(err, errlen, "%s: %s", nc->where, msg);
				return -1;
			}
			d->borrower = x;
		} else {
			struct ht_target_cfg tc;

			if ((nc->mem_base | nc->mem_size) % DIMM_PAGE) {
				snprintf(err, errlen, "%s: mem_base %#" PRIx64 " and mem_size %#" PRIx64
					 " must be multiples of 4 KiB to be leased", nc->where,
					 nc->mem_base, nc->mem_size);
				return -1;
			}
			x->mem = aligned_alloc(DIMM_PAGE, nc->mem_size);
			if (!x->mem) {
				snprintf(err, errlen, "%s: cannot allocate %" PRIu64 " bytes", nc->where,
					 nc->mem_size);
				return -1;
			}
			memset(x->mem, 0, nc->mem_size);
			memset(&tc, 0, sizeof(tc));
			tc.base = nc->mem_base;
			tc.size = nc->mem_size;
			tc.mem = x->mem;
			if (ht_tgt_init(&x->hn.tgt, &tc) ||
			    htnode_init(&x->hn, x->b, nc->bc.unitid_base, nc->bc.n_unitids, 1, 1, NULL,
					0)) {
				snprintf(err, errlen, "%s: memory target", nc->where);
				return -1;
			}
			lc.export_addr = nc->mem_base;
			lc.export_size = nc->mem_size;
			lc.acl = true; /* only the lease holder reaches its range */
			lc.quota_slots = d->quota_slots;
			lc.quota_bytes = d->quota_bytes;
			/* a lost lessee's requests still in flight are answered (or
			 * poisoned by its own bridge) before the memory is lent again */
			if (lc.grace_ns < nc->bc.np_timeout_ns)
				lc.grace_ns = nc->bc.np_timeout_ns;
		}
		x->lease = htoe_lease_new(&lc, msg, sizeof(msg));
		if (!x->lease) {
			snprintf(err, errlen, "%s: %s", nc->where, msg);
			return -1;
		}
		memset(&dc, 0, sizeof(dc));
		dc.b = x->b;
		dc.lease = x->lease;
		dc.engine = x->eng;
		dc.on_event = on_lease_event;
		dc.arg = x;
		dimm_node_init(&x->dn, &dc);
	}
	d->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	d->app_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->efd < 0 || d->app_efd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

void dr_nodes_teardown(struct dapp *d)
{
	for (unsigned i = 0; d->nodes && i < d->n_nodes; i++) {
		struct dnode *x = &d->nodes[i];

		if (x->spare)
			rte_pktmbuf_free(x->spare);
		br_dumper_free(x->cap[0], "htoe-dimm");
		br_dumper_free(x->cap[1], "htoe-dimm");
		dimm_engine_free(x->eng);
		htoe_lease_free(x->lease);
		htoe_free(x->b);
		free(x->mem);
	}
	dimm_client_free(d->app_c);
	dimm_client_free(d->pager_c);
	rte_ring_free(d->sq);
	rte_ring_free(d->cq);
	if (d->efd >= 0)
		close(d->efd);
	if (d->app_efd >= 0)
		close(d->app_efd);
	free(d->nodes);
	d->nodes = NULL;
}

/* ------------------------------------------------------------ exporter */

int dr_exporter_loop(void *arg)
{
	struct dnode *x = arg;
	struct dapp *d = x->app;

	while (!atomic_load_explicit(&d->quit_b, memory_order_relaxed)) {
		uint64_t now = dr_now(d);

		x->c.polls++;
		rx(d, x, now);
		if (atomic_load_explicit(&x->dead, memory_order_relaxed))
			continue; /* crashed: it answers nothing, keeps no time */
		if (now >= x->deadline)
			htoe_handle_expiry(x->b, now);
		while (htnode_poll(&x->hn, now))
			;
		dimm_node_poll(&x->dn, now);
		tx(d, x, now);
		x->deadline = dimm_node_next_deadline(&x->dn);
	}
	if (x->spare) {
		rte_pktmbuf_free(x->spare);
		x->spare = NULL;
	}
	return 0;
}

/* ------------------------------------------------------------ borrower */

static void app_wake(struct dapp *d)
{
	uint64_t one = 1;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&d->app_waiting) && write(d->app_efd, &one, sizeof(one)) < 0) {
		/* the counter is full: the thread wakes anyway */
	}
}

static unsigned borrower_iter(struct dapp *d, struct dnode *x, uint64_t now,
			      struct dimm_pager *p)
{
	unsigned work;

	x->c.polls++;
	work = rx(d, x, now);
	if (now >= x->deadline)
		htoe_handle_expiry(x->b, now);
	if (p)
		work += dimm_pager_poll(p);
	work += dimm_node_poll(&x->dn, now);
	if (p)
		work += dimm_pager_poll(p);
	work += tx(d, x, now);
	x->deadline = dimm_node_next_deadline(&x->dn);
	atomic_fetch_add_explicit(&d->a_iter, 1, memory_order_release);
	return work;
}

/* The dimm ring interface on rte_ring (single producer, single consumer). */
static unsigned dr_ring_enqueue(void *ring, void *const *objs, unsigned n)
{
	return rte_ring_sp_enqueue_burst(ring, objs, n, NULL);
}

static unsigned dr_ring_dequeue(void *ring, void **objs, unsigned n)
{
	return rte_ring_sc_dequeue_burst(ring, objs, n, NULL);
}

int dr_borrower_start(struct dapp *d, uint64_t size, uint64_t timeout_ns, char *err,
		      size_t errlen)
{
	struct dnode *x = d->borrower;
	uint64_t t0 = dr_now(d), now = t0;
	struct dimm_client_cfg cc;
	char name[RTE_RING_NAMESIZE], msg[256];
	int h;

	while (!htoe_vl_is_up(x->b, d->lessor)) {
		borrower_iter(d, x, now = dr_now(d), NULL);
		if (now - t0 > timeout_ns) {
			snprintf(err, errlen, "node %u does not answer (no virtual link after %.1f s): "
				 "is it running, and is the port connected?", d->lessor,
				 (double)timeout_ns / 1e9);
			return -1;
		}
	}
	h = htoe_lease_request(x->lease, d->lessor, size, d->lease_ns, now);
	if (h < 0) {
		snprintf(err, errlen, "lease request: %s", strerror(-h));
		return -1;
	}
	d->lease_h = h;
	for (;;) {
		borrower_iter(d, x, now = dr_now(d), NULL);
		htoe_lease_get(x->lease, h, &d->lease);
		if (d->lease.state != HTOE_LS_REQUESTING)
			break;
		if (now - t0 > timeout_ns) {
			snprintf(err, errlen, "node %u does not answer the lease request",
				 d->lessor);
			return -1;
		}
	}
	if (d->lease.state != HTOE_LS_ACTIVE) {
		snprintf(err, errlen, "node %u refuses to lease %" PRIu64 " bytes: %s", d->lessor,
			 size, htoe_lease_status_name(d->lease.status));
		return -1;
	}
	if (!d->lease.gaddr) {
		snprintf(err, errlen, "the address map has no global window for node %u's memory "
			 "at %#" PRIx64 " (+%#" PRIx64 ")", d->lessor, d->lease.addr,
			 d->lease.size);
		return -1;
	}
	/* the application's client: rte_rings between its thread and this lcore */
	snprintf(name, sizeof(name), "dimm_sq_%d", getpid());
	d->sq = rte_ring_create(name, 512, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "dimm_cq_%d", getpid());
	d->cq = rte_ring_create(name, 512, (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!d->sq || !d->cq) {
		snprintf(err, errlen, "rte_ring_create: %s", rte_strerror(rte_errno));
		return -1;
	}
	static const struct dimm_ring_ops rte_ops = {
		.enqueue = dr_ring_enqueue,
		.dequeue = dr_ring_dequeue,
	};

	dimm_client_cfg_from_lease(&cc, &d->lease);
	cc.depth = 256;
	cc.sq.ops = cc.cq.ops = &rte_ops;
	cc.sq.ring = d->sq;
	cc.cq.ring = d->cq;
	cc.kick = dr_kick;
	cc.idle = dr_idle;
	cc.arg = d;
	d->app_c = dimm_client_new(&cc, msg, sizeof(msg));
	/* the pager's: polled on this lcore, built-in rings */
	dimm_client_cfg_from_lease(&cc, &d->lease);
	cc.depth = 256;
	d->pager_c = dimm_client_new(&cc, msg, sizeof(msg));
	if (!d->app_c || !d->pager_c || dimm_engine_attach(x->eng, d->app_c) ||
	    dimm_engine_attach(x->eng, d->pager_c) || dimm_node_bind(&x->dn, h, d->app_c) ||
	    dimm_node_bind(&x->dn, h, d->pager_c)) {
		snprintf(err, errlen, "dimm clients: %s", msg);
		return -1;
	}
	return 0;
}

void dr_kick(void *arg)
{
	struct dapp *d = arg;

	atomic_fetch_add(&d->kicks, 1);
	if (atomic_load(&d->a_sleeping)) {
		uint64_t one = 1;

		if (write(d->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the loop is awake anyway */
		}
	}
}

/* The application thread waits for the borrower's loop: block on app_efd
 * (the loop writes it after an iteration that did work), at most 200 us. */
void dr_idle(void *arg)
{
	struct dapp *d = arg;
	struct pollfd pfd = { .fd = d->app_efd, .events = POLLIN };
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200000 };
	uint64_t v;

	dr_kick(d);
	atomic_store(&d->app_waiting, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!d->cq || rte_ring_count(d->cq) == 0)
		ppoll(&pfd, 1, &ts, NULL);
	atomic_store(&d->app_waiting, 0);
	if (read(d->app_efd, &v, sizeof(v)) < 0) {
		/* not written: the timeout, or completions were there already */
	}
}

void dr_pager_publish(struct dapp *d, struct dimm_pager *p)
{
	atomic_store(&d->pager, p);
	dr_kick(d);
}

void dr_pager_withdraw(struct dapp *d)
{
	struct dimm_pager *p = atomic_load(&d->pager);
	uint64_t it;

	/* let what is in flight (a readahead, a write-back) finish first */
	it = atomic_load(&d->a_iter);
	while (p && (!dimm_pager_idle(p) || atomic_load(&d->a_iter) < it + 2))
		dr_idle(d);
	atomic_store(&d->pager, NULL);
	it = atomic_load(&d->a_iter);
	/* two iterations: the one that may still hold the old pointer ends */
	while (atomic_load(&d->a_iter) < it + 2)
		dr_idle(d);
}

static void maybe_kill(struct dapp *d, struct dimm_pager *p)
{
	if (!d->kill_after_faults || d->killed || !p ||
	    dimm_pager_stats(p)->faults < d->kill_after_faults)
		return;
	d->killed = true;
	for (unsigned i = 0; i < d->n_nodes; i++)
		if (!d->nodes[i].borrower) {
			atomic_store(&d->nodes[i].dead, 1);
			fprintf(stderr, "htoe-dimm: --kill-after-faults: node %u stops answering "
				"(a crashed node) after %" PRIu64 " page faults\n", d->nodes[i].id,
				dimm_pager_stats(p)->faults);
		}
}

void dr_borrower_loop(struct dapp *d)
{
	struct dnode *x = d->borrower;
	uint64_t idle_since = 0, now = 0;
	struct pollfd pfd[2];

	while (!atomic_load(&d->quit_a)) {
		struct dimm_pager *p = atomic_load(&d->pager);
		unsigned work;
		bool busy;

		uint64_t prev = now;

		now = dr_now(d);
		if (prev && now - prev > 150000) {
			x->c.gaps++;
			if (now - prev > x->c.max_gap)
				x->c.max_gap = now - prev;
		}
		work = borrower_iter(d, x, now, p);
		maybe_kill(d, p);
		busy = work || dimm_engine_busy(x->eng) || (p && dimm_pager_busy(p)) ||
		       htoe_busy(x->b);
		if (work && atomic_load(&d->app_waiting))
			app_wake(d);
		if (busy) {
			/* waiting for the network: spin. The application thread is
			 * blocked meanwhile (in a page fault, or on app_efd). */
			idle_since = 0;
			if (!work)
				rte_pause();
			continue;
		}
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < d->spin_ns) {
			x->c.yields++;
			sched_yield();
			continue;
		}
		/* sleep until a fault, a kick or the next deadline (at most 1 ms) */
		uint64_t k0 = atomic_load(&d->kicks), tmo = 1000000;

		atomic_store(&d->a_sleeping, 1);
		if (atomic_load(&d->kicks) != k0) {
			atomic_store(&d->a_sleeping, 0);
			continue;
		}
		if (x->deadline <= now)
			tmo = 0;
		else if (x->deadline - now < tmo)
			tmo = x->deadline - now;
		pfd[0].fd = d->efd;
		pfd[0].events = POLLIN;
		pfd[1].fd = p ? dimm_pager_fd(p) : -1;
		pfd[1].events = POLLIN;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)tmo };

		if (tmo)
			ppoll(pfd, 2, &ts, NULL);
		atomic_store(&d->a_sleeping, 0);
		uint64_t v;

		if (read(d->efd, &v, sizeof(v)) < 0) {
			/* nothing was written: a fault or the timeout woke us */
		}
		x->c.sleeps++;
		idle_since = 0;
	}
	/* give the lease back (bounded: the lessor expires it anyway) */
	if (htoe_lease_release(x->lease, d->lease_h, now) == 0) {
		uint64_t t0 = dr_now(d);
		struct htoe_lease_info li;

		do {
			borrower_iter(d, x, now = dr_now(d), NULL);
			htoe_lease_get(x->lease, d->lease_h, &li);
		} while (li.state == HTOE_LS_RELEASING && now - t0 < 500000000ull);
		htoe_lease_get(x->lease, d->lease_h, &d->lease);
	}
}
