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

#include "metrics.h"
#include "runtime.h"
#include "snapshot.h"

uint64_t dr_now(const struct dapp *d)
{
	return br_now_ns(d->br, rte_rdtsc());
}

/* ------------------------------------------------------------ ports */

int dr_ports_assign(struct dapp *d, char *err, size_t errlen)
{
	const struct br_config *c = &d->br->cfg;

	for (unsigned i = 0; i < d->n_nodes; i++) {
		struct dnode *x = &d->nodes[i];

		x->drv.port = &d->br->ports[x->cfg->port];
		if (br_capture_open_drv(c, &x->drv, d->br->realtime0_ns, err, errlen))
			return -1;
	}
	return 0;
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

/* On x's own thread: its counters into its metrics snapshot, every DM_PUBLISH_NS of `now`
 * (p: the borrower's pager, or NULL). */
static void publish(struct dnode *x, const struct dimm_pager *p, uint64_t now)
{
	struct dm_pub *m = x->pub;

	if (!m || now < m->next_ns)
		return;
	m->next_ns = now + DM_PUBLISH_NS;
	br_drv_count(&x->drv);
	htoe_snap_put(&m->c, &x->c, sizeof(m->c));
	htoe_snap_put(&m->ls, htoe_lease_stats(x->lease), sizeof(m->ls));
	for (unsigned k = 0; k < m->n_vl; k++) {
		uint64_t up = htoe_vl_is_up(x->b, m->vl_node[k]);

		htoe_snap_put(&m->vl[k], htoe_get_vl_stats(x->b, m->vl_node[k]), sizeof(m->vl[k]));
		htoe_snap_put(&m->vl_up[k], &up, sizeof(up));
	}
	if (x->borrower) {
		struct htoe_lease_info li;

		if (htoe_lease_get(x->lease, x->app->lease_h, &li) == 0) {
			uint64_t l[3] = { li.state == HTOE_LS_ACTIVE,
					  li.state == HTOE_LS_ACTIVE ? li.size : 0, li.renewals };

			_Static_assert(offsetof(struct dm_pub, lease_renewals) -
				       offsetof(struct dm_pub, lease_active) == sizeof(l) - 8,
				       "the lease's words of struct dm_pub, in order");
			htoe_snap_put(&m->lease_active, l, sizeof(l));
		}
	}
	if (p) {
		const struct dimm_pager_stats *s = dimm_pager_stats(p);
		uint64_t v[] = { s->faults, s->wp_faults, s->fetches, s->readaheads, s->evictions,
				 s->writebacks, s->bytes_in, s->bytes_out, s->poisoned,
				 (uint64_t)lat_quantile(&s->hist, 0.5),
				 (uint64_t)lat_quantile(&s->hist, 0.99),
				 (uint64_t)lat_quantile(&s->hist, 1.0) };

		_Static_assert(offsetof(struct dm_pub, lat_ns[3]) - offsetof(struct dm_pub, faults) ==
			       sizeof(v), "the pager's words of struct dm_pub, in order");
		htoe_snap_put(m->faults, v, sizeof(v));
	}
}

int dr_metrics_nodes(struct dapp *d, char *err, size_t errlen)
{
	struct dm_pub *pubs;
	unsigned *n_vl = calloc(d->n_nodes ? d->n_nodes : 1, sizeof(*n_vl));
	int rc;

	if (!n_vl) {
		snprintf(err, errlen, "metrics: out of memory");
		return -1;
	}
	for (unsigned i = 0; i < d->n_nodes; i++)
		n_vl[i] = htoe_n_vls(d->nodes[i].b);
	rc = dm_metrics_nodes(d->n_nodes, n_vl, &pubs, err, errlen);
	free(n_vl);
	if (rc || !pubs)
		return rc;
	for (unsigned i = 0; i < d->n_nodes; i++) {
		struct dnode *x = &d->nodes[i];

		pubs[i].id = x->id;
		pubs[i].borrower = x->borrower;
		for (unsigned k = 0; k < pubs[i].n_vl; k++)
			pubs[i].vl_node[k] = htoe_vl_node(x->b, k);
		x->pub = &pubs[i];
	}
	dm_metrics_ready();
	return 0;
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
		uint32_t incarnation;

		if (br_node_bridge(d->br, nc, &x->drv, &x->c, &incarnation, err, errlen))
			return -1;
		x->b = x->drv.b;
		htoe_lease_cfg_defaults(&lc);
		lc.node_id = nc->id;
		lc.session = incarnation; /* random, non-zero */
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
			if ((nc->mem_base | nc->mem_size) % DIMM_PAGE) {
				snprintf(err, errlen, "%s: mem_base %#" PRIx64 " and mem_size %#" PRIx64
					 " must be multiples of 4 KiB to be leased", nc->where,
					 nc->mem_base, nc->mem_size);
				return -1;
			}
			/* zeroed: a borrower finds nothing of the exporter's */
			x->mem = br_node_memory(nc, DIMM_PAGE, false, &x->hn.tgt, err, errlen);
			if (!x->mem)
				return -1;
			if (htnode_init(&x->hn, x->b, nc->bc.unitid_base, nc->bc.n_unitids, 1, 1, NULL,
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

		dimm_engine_free(x->eng);
		htoe_lease_free(x->lease);
		br_macsec_free(x->drv.ms);
		x->drv.ms = NULL;
		br_dumper_free(x->drv.cap[0], "htoe-dimm");
		br_dumper_free(x->drv.cap[1], "htoe-dimm");
		br_node_close(&x->drv);
		x->b = NULL;
		free(x->mem);
	}
	dimm_client_free(d->app_c);
	dimm_client_free(d->pager_c);
	dimm_client_free(d->fetch_c);
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
	uint16_t port = x->drv.port->port_id;

	br_idle_init(&x->idle, d->br->poll, &port, 1, d->br->tsc_hz);
	/* one TSC read per iteration: br_idle_after's, which starts the next */
	uint64_t tsc = rte_rdtsc();
	struct br_stall *st = br_stall_register("exporter node %u", x->id);

	while (!atomic_load_explicit(&d->quit_b, memory_order_relaxed)) {
		uint64_t now = br_now_ns(d->br, tsc);
		unsigned work;

		br_stall_enter(st, tsc);
		x->c.polls++;
		work = br_drv_rx(&x->drv, now);
		if (__atomic_load_n(&x->drv.deaf, __ATOMIC_RELAXED)) {
			/* crashed: it answers nothing, keeps no time */
			tsc = br_idle_after(&x->idle, work, now, UINT64_MAX, 0);
			continue;
		}
		br_drv_expire(&x->drv, now);
		while (htnode_poll(&x->hn, now))
			work++;
		if (d->drop_renewals_after && !x->dn.lease_deaf &&
		    htoe_lease_stats(x->lease)->tx[HTOE_LEASE_T_RENEW_ACK] >= d->drop_renewals_after) {
			x->dn.lease_deaf = true;
			fprintf(stderr, "htoe-dimm: --drop-renewals-after: node %u ignores lease "
				"messages after answering %" PRIu64 " renewals\n", x->id,
				d->drop_renewals_after);
		}
		work += dimm_node_poll(&x->dn, now);
		work += br_drv_tx(&x->drv, now);
		x->drv.deadline = dimm_node_next_deadline(&x->dn);
		br_drv_watch(&x->drv, now);
		publish(x, NULL, now);
		tsc = br_idle_after(&x->idle, work || htoe_busy(x->b), now, br_drv_next_wake(&x->drv),
				    0);
	}
	br_stall_unregister(st);
	br_idle_fini(&x->idle);
	return 0; /* the driver's mbufs go back in br_drv_fini (dr_nodes_teardown) */
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
	work = br_drv_rx(&x->drv, now);
	br_drv_expire(&x->drv, now);
	if (p)
		work += dimm_pager_poll(p);
	work += dimm_node_poll(&x->dn, now);
	if (p)
		work += dimm_pager_poll(p);
	work += br_drv_tx(&x->drv, now);
	x->drv.deadline = dimm_node_next_deadline(&x->dn);
	br_drv_watch(&x->drv, now);
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
	/* the pager's fetches: their reads pass the write-backs queued before
	 * them (dimm_pager_cfg.fetch_client) */
	cc.passpw_reads = true;
	d->fetch_c = dimm_client_new(&cc, msg, sizeof(msg));
	if (!d->app_c || !d->pager_c || !d->fetch_c || dimm_engine_attach(x->eng, d->app_c) ||
	    dimm_engine_attach(x->eng, d->pager_c) || dimm_engine_attach(x->eng, d->fetch_c) ||
	    dimm_node_bind(&x->dn, h, d->app_c) || dimm_node_bind(&x->dn, h, d->pager_c) ||
	    dimm_node_bind(&x->dn, h, d->fetch_c)) {
		snprintf(err, errlen, "dimm clients: %s", msg);
		return -1;
	}
	return 0;
}

/* Run to completion: who polls the borrower's node. */
enum { DR_OWN_FREE = 0, DR_OWN_LOOP, DR_OWN_APP };

static bool dr_own(struct dapp *d, int who)
{
	int f = DR_OWN_FREE;

	return atomic_compare_exchange_strong_explicit(&d->owner, &f, who, memory_order_acquire,
						       memory_order_relaxed);
}

static void dr_disown(struct dapp *d)
{
	atomic_store_explicit(&d->owner, DR_OWN_FREE, memory_order_release);
}

/* The loop leaves the node to the application while it polled within this. */
#define DR_APP_DRIVE_NS 100000ull
/* ... and naps meanwhile for at most this (bounded by the node's deadline). */
#define DR_NAP_MAX_NS 1000000ull

static bool dr_app_driving(struct dapp *d, uint64_t now)
{
	uint64_t t = atomic_load_explicit(&d->app_drove, memory_order_relaxed);

	return t && now - t < DR_APP_DRIVE_NS;
}

void dr_kick(void *arg)
{
	struct dapp *d = arg;

	atomic_fetch_add(&d->kicks, 1);
	/* a napping loop (run to completion) is woken only when the
	 * application no longer polls: while it does, its next wait sends what
	 * was submitted, and a wake per request would cost a context switch on
	 * the CPU they share */
	if (atomic_load(&d->a_sleeping) ||
	    (atomic_load(&d->a_napping) && !dr_app_driving(d, dr_now(d)))) {
		uint64_t one = 1;

		if (write(d->efd, &one, sizeof(one)) < 0) {
			/* the counter is full: the loop is awake anyway */
		}
	}
}

/* When the loop must look at the node again if the application stops
 * polling it: the node's next deadline, at once while the pager has work in
 * flight (its write-backs and readaheads finish without the application). */
static uint64_t rtc_wake(struct dapp *d, struct dimm_pager *p, uint64_t now)
{
	if (p && dimm_pager_busy(p))
		return now;
	return br_drv_next_wake(&d->borrower->drv);
}

/* The application thread waits (a blocking call of the explicit API, a
 * sync, a pager withdrawal). Run to completion: one iteration of the
 * borrower's node here, on this thread, if the loop is not in one. The
 * caller calls again until what it waits for is done, so this never
 * blocks; the loop naps meanwhile (dr_borrower_loop). */
static bool dr_idle_rtc(struct dapp *d)
{
	uint64_t now = dr_now(d);

	atomic_store_explicit(&d->app_drove, now, memory_order_relaxed);
	if (!dr_own(d, DR_OWN_APP))
		return false;
	struct dimm_pager *p = atomic_load(&d->pager);

	borrower_iter(d, d->borrower, now, p);
	atomic_store_explicit(&d->rtc_wake, rtc_wake(d, p, now), memory_order_relaxed);
	dr_disown(d);
	return true;
}

/* The application thread waits for the borrower's loop: block on app_efd
 * (the loop writes it after an iteration that did work), at most 200 us. */
void dr_idle(void *arg)
{
	struct dapp *d = arg;
	struct pollfd pfd = { .fd = d->app_efd, .events = POLLIN };
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200000 };
	uint64_t v;

	if (d->rtc && dr_idle_rtc(d))
		return;

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
	/* the counter is written by whichever thread serves a fault */
	if (!d->kill_after_faults || d->killed || !p ||
	    __atomic_load_n(&dimm_pager_stats(p)->faults, __ATOMIC_RELAXED) <
		    d->kill_after_faults)
		return;
	d->killed = true;
	for (unsigned i = 0; i < d->n_nodes; i++)
		if (!d->nodes[i].borrower) {
			__atomic_store_n(&d->nodes[i].drv.deaf, 1, __ATOMIC_RELAXED);
			fprintf(stderr, "htoe-dimm: --kill-after-faults: node %u stops answering "
				"(a crashed node) after %" PRIu64 " page faults\n", d->nodes[i].id,
				dimm_pager_stats(p)->faults);
		}
}

/*
 * Run to completion, the loop's side: poll the node only when the
 * application does not (it polls while it waits). While it did recently,
 * nap until the node's next deadline (at most 1 ms) — woken at once by a
 * page fault (the faulting thread is stopped in the kernel and polls
 * nothing) or by a kick made after the application stopped polling.
 * Returns true when the loop holds the node for one iteration.
 */
static bool dr_loop_turn(struct dapp *d, struct dimm_pager *p, uint64_t now)
{
	if (!dr_app_driving(d, now) && dr_own(d, DR_OWN_LOOP))
		return true;
	struct pollfd pfd[2] = { { .fd = d->efd, .events = POLLIN },
				 { .fd = p ? dimm_pager_fd(p) : -1, .events = POLLIN } };
	/* until the node's deadline, but not before the application's turn
	 * ends (DR_APP_DRIVE_NS after its last poll), and at most 1 ms: a
	 * 100 us nap cost the application a context switch 10 000 times a
	 * second, which set the p99 of its blocking reads (docs/dimm.md) */
	uint64_t wake = atomic_load_explicit(&d->rtc_wake, memory_order_relaxed);
	uint64_t turn = atomic_load_explicit(&d->app_drove, memory_order_relaxed) +
			DR_APP_DRIVE_NS;
	uint64_t until = wake > turn ? wake : turn;
	/* both past: the application holds the node longer than its turn (it
	 * was descheduled in the middle of a poll, most likely by this loop on
	 * the CPU they share): give it the CPU */
	uint64_t tmo = until > now ? until - now : DR_APP_DRIVE_NS;
	uint64_t k0 = atomic_load(&d->kicks);

	if (tmo > DR_NAP_MAX_NS)
		tmo = DR_NAP_MAX_NS;
	struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)tmo };

	atomic_store(&d->a_napping, 1);
	if (atomic_load(&d->kicks) == k0)
		ppoll(pfd, 2, &ts, NULL);
	atomic_store(&d->a_napping, 0);
	if (pfd[0].revents & POLLIN) {
		uint64_t v;

		if (read(d->efd, &v, sizeof(v)) < 0) {
			/* drained by the sleep path already */
		}
	}
	if (pfd[1].revents & POLLIN) /* a fault: the application is stopped */
		atomic_store_explicit(&d->app_drove, 0, memory_order_relaxed);
	d->borrower->lc.sleeps++;
	return false;
}

void dr_borrower_loop(struct dapp *d)
{
	struct dnode *x = d->borrower;
	uint64_t idle_since = 0, now = 0;
	struct pollfd pfd[2];
	struct br_stall *st = br_stall_register("borrower node %u", x->id);

	while (!atomic_load(&d->quit_a)) {
		struct dimm_pager *p = atomic_load(&d->pager);
		unsigned work;
		bool busy;

		br_stall_enter(st, rte_rdtsc());
		uint64_t prev = now;

		now = dr_now(d);
		if (prev && now - prev > 150000) {
			x->lc.gaps++;
			if (now - prev > x->lc.max_gap)
				x->lc.max_gap = now - prev;
		}
		/* before the turn: with run to completion the application may
		 * drive the node all the time and the loop never take a turn */
		maybe_kill(d, p);
		if (d->rtc && !dr_loop_turn(d, p, now))
			continue;
		p = atomic_load(&d->pager); /* as of taking the node (dr_pager_withdraw) */
		work = borrower_iter(d, x, now, p);
		publish(x, p, now);
		busy = work || dimm_engine_busy(x->eng) || (p && dimm_pager_busy(p)) ||
		       htoe_busy(x->b);
		if (d->rtc)
			dr_disown(d);
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
			x->lc.yields++;
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
		uint64_t wake = br_drv_next_wake(&x->drv);

		if (wake <= now)
			tmo = 0;
		else if (wake - now < tmo)
			tmo = wake - now;
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
		x->lc.sleeps++;
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
	}
	/* released or lost: the slot keeps what the summary reports (its
	 * renewals), which d->lease has held only since the grant */
	htoe_lease_get(x->lease, d->lease_h, &d->lease);
	br_stall_unregister(st);
}
