/* SPDX-License-Identifier: BSD-3-Clause
 * dimm: the explicit remote-memory API, client and engine. See dimm.h.
 */
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dimm.h"
#include "htoe/htoe.h"

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

/* ------------------------------------------------------------ SPSC ring */

struct dimm_spsc {
	_Alignas(64) _Atomic unsigned head;   /* consumer */
	_Alignas(64) _Atomic unsigned tail;   /* producer */
	_Alignas(64) unsigned mask;
	void *slot[];
};

struct dimm_spsc *dimm_spsc_new(unsigned count)
{
	struct dimm_spsc *r;

	if (count < 2 || (count & (count - 1)))
		return NULL;
	r = aligned_alloc(64, (sizeof(*r) + count * sizeof(void *) + 63) & ~(size_t)63);
	if (!r)
		return NULL;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	r->mask = count - 1;
	return r;
}

void dimm_spsc_free(struct dimm_spsc *r)
{
	free(r);
}

static unsigned spsc_enqueue(void *ring, void *const *objs, unsigned n)
{
	struct dimm_spsc *r = ring;
	unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	unsigned h = atomic_load_explicit(&r->head, memory_order_acquire);
	unsigned room = r->mask - (t - h);

	if (n > room)
		n = room;
	for (unsigned i = 0; i < n; i++)
		r->slot[(t + i) & r->mask] = objs[i];
	atomic_store_explicit(&r->tail, t + n, memory_order_release);
	return n;
}

static unsigned spsc_dequeue(void *ring, void **objs, unsigned n)
{
	struct dimm_spsc *r = ring;
	unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned t = atomic_load_explicit(&r->tail, memory_order_acquire);

	if (n > t - h)
		n = t - h;
	for (unsigned i = 0; i < n; i++)
		objs[i] = r->slot[(h + i) & r->mask];
	atomic_store_explicit(&r->head, h + n, memory_order_release);
	return n;
}

const struct dimm_ring_ops dimm_spsc_ops = { spsc_enqueue, spsc_dequeue };

/* ------------------------------------------------------------ link: htoe */

static int htoe_in(void *ctx, const uint8_t *pkt, size_t len, uint64_t now)
{
	return htoe_local_input(ctx, pkt, len, now);
}

static int htoe_in_desc(void *ctx, const struct ht_desc *d, uint64_t now)
{
	return htoe_local_input_desc(ctx, d, now);
}

static unsigned htoe_in_run(void *ctx, const struct ht_desc *d, const uint8_t *data, unsigned n,
			    uint64_t now)
{
	return htoe_local_input_run(ctx, d, data, n, now);
}

static unsigned htoe_in_reads(void *ctx, const struct ht_desc *d, const uint8_t (*tags)[2],
			      unsigned n, uint64_t now)
{
	return htoe_local_input_reads(ctx, d, tags, n, now);
}

static int htoe_out(void *ctx, uint8_t *buf, size_t cap, uint64_t now)
{
	return htoe_local_output(ctx, buf, cap, now);
}

#define LINK_BURST 32u

static unsigned htoe_out_burst(void *ctx, const uint8_t **pkt, unsigned *len, unsigned n,
			       uint64_t now)
{
	struct htoe_pkt_ref r[LINK_BURST];
	unsigned k = htoe_local_output_burst(ctx, r, n < LINK_BURST ? n : LINK_BURST, now);

	for (unsigned i = 0; i < k; i++) {
		pkt[i] = r[i].pkt;
		len[i] = r[i].len;
	}
	return k;
}

static void htoe_out_done(void *ctx)
{
	htoe_local_output_done(ctx);
}

static uint64_t htoe_gen(void *ctx, uint16_t node)
{
	const struct htoe_vl_stats *s = htoe_get_vl_stats(ctx, node);

	return s ? s->posted_lost_reset + s->posted_refused : 0;
}

static void engine_deliver(void *ctx, const struct ht_desc *d, uint64_t now);
static int engine_serve(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap,
			uint64_t now);

static void htoe_attach(void *ctx, struct dimm_engine *e)
{
	struct htoe_local_sink s = { engine_deliver, engine_serve, e };

	htoe_set_local_sink(ctx, e ? &s : NULL);
}

void dimm_link_htoe(struct dimm_link *l, struct htoe *b)
{
	l->attach = htoe_attach;
	l->input = htoe_in;
	l->input_desc = htoe_in_desc;
	l->input_run = htoe_in_run;
	l->input_reads = htoe_in_reads;
	l->output = htoe_out;
	l->output_burst = htoe_out_burst;
	l->output_done = htoe_out_done;
	l->loss_gen = htoe_gen;
	l->ctx = b;
}

/* ------------------------------------------------------------ descriptors */

enum { D_FREE = 0, D_INFLIGHT, D_DONE };

struct dimm_desc {
	/* set by the application before submission */
	uint8_t  op, flags;
	uint32_t len;
	uint64_t off;
	uint64_t operand[2];
	void    *buf;
	uint64_t user;
	struct dimm_client *c;
	/* engine */
	uint32_t cursor;        /* bytes issued */
	uint32_t pending;       /* HT requests in flight */
	uint64_t gen0;          /* flush: loss_gen at the first posted write */
	struct dimm_desc *enext;/* engine: CQ overflow list */
	/* results, written by the engine before the CQ enqueue */
	int32_t  status;
	uint8_t  ht_err;
	uint64_t value;
	/* application side only */
	uint8_t  state;
	int      dprev, dnext;  /* done list */
};

struct dimm_client {
	struct dimm_client_cfg cfg;
	struct dimm_spsc *own_sq, *own_cq;
	struct dimm_desc *d;
	unsigned depth;

	/* application thread */
	unsigned *free_stack;
	unsigned n_free;
	int done_head, done_tail;
	unsigned inflight;
	struct dimm_client_stats st;

	/* engine thread */
	_Alignas(64) struct dimm_desc *cur;
	struct dimm_desc *cq_over, *cq_over_tail;
	bool pw_have;
	uint64_t pw_gen;

	_Alignas(64) _Atomic int lost;
	_Atomic int why;
};

bool dimm_reset_retryable(int status, uint8_t ht_err)
{
	return status == -EPIPE || (status == -EIO && ht_err == HT_RSP_TARGET_ABORT);
}

const char *dimm_strerror(int status, uint8_t ht_err)
{
	switch (status) {
	case 0:
		return "ok";
	case -EIO:
		switch (ht_err) {
		case HT_RSP_DATA_ERROR:
			return "remote memory error: data error (poisoned data)";
		case HT_RSP_TARGET_ABORT:
			return "remote memory error: target abort (the virtual link was reset: node "
			       "unreachable or restarted)";
		case HT_RSP_MASTER_ABORT:
			return "remote memory error: master abort (no answer in time: node "
			       "unreachable, or address not mapped)";
		default:
			return "remote memory error";
		}
	case -EPIPE:
		return "posted writes may have been lost (virtual link reset before the flush)";
	case -ENOLINK:
		return "lease lost: the remote memory is no longer ours";
	case -ERANGE:
		return "outside the leased region";
	case -EINVAL:
		return "invalid length or alignment";
	case -EAGAIN:
		return "too many operations in flight";
	default:
		return strerror(-status);
	}
}

struct dimm_client *dimm_client_new(const struct dimm_client_cfg *cfg, char *err, size_t errlen)
{
	struct dimm_client *c;
	unsigned depth = cfg->depth ? cfg->depth : 256;

	if (cfg->size == 0 || cfg->gaddr + cfg->size < cfg->gaddr) {
		ERR("dimm client: region 0x%llx+0x%llx empty or wrapping",
		    (unsigned long long)cfg->gaddr, (unsigned long long)cfg->size);
		return NULL;
	}
	if (depth > 65536) {
		ERR("dimm client: depth %u above 65536", depth);
		return NULL;
	}
	if ((cfg->sq.ops == NULL) != (cfg->cq.ops == NULL)) {
		ERR("dimm client: give both rings or none");
		return NULL;
	}
	c = aligned_alloc(64, (sizeof(*c) + 63) & ~(size_t)63);
	if (!c) {
		ERR("dimm client: out of memory");
		return NULL;
	}
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->depth = depth;
	atomic_init(&c->lost, 0);
	atomic_init(&c->why, 0);
	c->d = calloc(depth, sizeof(*c->d));
	c->free_stack = calloc(depth, sizeof(unsigned));
	if (!c->d || !c->free_stack)
		goto nomem;
	if (!cfg->sq.ops) {
		unsigned n = 2;

		while (n < 2 * depth)
			n <<= 1;
		c->own_sq = dimm_spsc_new(n);
		c->own_cq = dimm_spsc_new(n);
		if (!c->own_sq || !c->own_cq)
			goto nomem;
		c->cfg.sq.ops = c->cfg.cq.ops = &dimm_spsc_ops;
		c->cfg.sq.ring = c->own_sq;
		c->cfg.cq.ring = c->own_cq;
	}
	for (unsigned i = 0; i < depth; i++) {
		c->d[i].c = c;
		c->free_stack[i] = depth - 1 - i;
	}
	c->n_free = depth;
	c->done_head = c->done_tail = -1;
	return c;
nomem:
	ERR("dimm client: out of memory");
	dimm_client_free(c);
	return NULL;
}

void dimm_client_free(struct dimm_client *c)
{
	if (!c)
		return;
	dimm_spsc_free(c->own_sq);
	dimm_spsc_free(c->own_cq);
	free(c->d);
	free(c->free_stack);
	free(c);
}

uint64_t dimm_client_size(const struct dimm_client *c)
{
	return c->cfg.size;
}

unsigned dimm_client_depth(const struct dimm_client *c)
{
	return c->depth;
}

uint64_t dimm_client_gaddr(const struct dimm_client *c)
{
	return c->cfg.gaddr;
}

const struct dimm_client_stats *dimm_client_stats(const struct dimm_client *c)
{
	return &c->st;
}

void dimm_client_set_lost(struct dimm_client *c, int why)
{
	atomic_store_explicit(&c->why, why, memory_order_relaxed);
	atomic_store_explicit(&c->lost, 1, memory_order_release);
}

bool dimm_client_lost(const struct dimm_client *c)
{
	return atomic_load_explicit(&((struct dimm_client *)c)->lost, memory_order_acquire) != 0;
}

int dimm_client_lost_why(const struct dimm_client *c)
{
	return atomic_load_explicit(&((struct dimm_client *)c)->why, memory_order_relaxed);
}

unsigned dimm_inflight(const struct dimm_client *c)
{
	return c->inflight;
}

/* ------------------------------------------------------- application side */

static void done_push(struct dimm_client *c, int h)
{
	struct dimm_desc *d = &c->d[h];

	d->dnext = -1;
	d->dprev = c->done_tail;
	if (c->done_tail >= 0)
		c->d[c->done_tail].dnext = h;
	else
		c->done_head = h;
	c->done_tail = h;
}

static void done_unlink(struct dimm_client *c, int h)
{
	struct dimm_desc *d = &c->d[h];

	if (d->dprev >= 0)
		c->d[d->dprev].dnext = d->dnext;
	else
		c->done_head = d->dnext;
	if (d->dnext >= 0)
		c->d[d->dnext].dprev = d->dprev;
	else
		c->done_tail = d->dprev;
}

/* Move completions from the CQ to the done list. */
static unsigned harvest(struct dimm_client *c)
{
	void *objs[32];
	unsigned n, total = 0;

	while ((n = c->cfg.cq.ops->dequeue(c->cfg.cq.ring, objs, 32)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			struct dimm_desc *d = objs[i];
			int h = (int)(d - c->d);

			d->state = D_DONE;
			c->st.completed++;
			if (d->status)
				c->st.errors++;
			done_push(c, h);
		}
		total += n;
	}
	return total;
}

static void consume(struct dimm_client *c, int h, struct dimm_result *res)
{
	struct dimm_desc *d = &c->d[h];

	done_unlink(c, h);
	if (res) {
		res->handle = h;
		res->status = d->status;
		res->ht_err = d->ht_err;
		res->op = d->op;
		res->value = d->value;
		res->user = d->user;
	}
	d->state = D_FREE;
	c->free_stack[c->n_free++] = (unsigned)h;
	c->inflight--;
}

static void idle(struct dimm_client *c, unsigned *spins)
{
	c->st.idle_calls++;
	if (c->cfg.idle) {
		c->cfg.idle(c->cfg.arg);
		return;
	}
	if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
		return;
	}
	sched_yield();
}

static int submit(struct dimm_client *c, uint8_t op, uint8_t flags, uint64_t off, void *buf,
		  uint32_t len, uint64_t a0, uint64_t a1, uint64_t user)
{
	struct dimm_desc *d;
	unsigned h;

	if (dimm_client_lost(c))
		return -ENOLINK;
	switch (op) {
	case DIMM_OP_READ:
	case DIMM_OP_WRITE:
		if (len == 0 || !buf)
			return -EINVAL;
		if (off > c->cfg.size || len > c->cfg.size - off)
			return -ERANGE;
		break;
	case DIMM_OP_FADD:
	case DIMM_OP_CAS:
		if (off & 7)
			return -EINVAL;
		if (off > c->cfg.size || 8 > c->cfg.size - off)
			return -ERANGE;
		len = 8;
		break;
	case DIMM_OP_FLUSH:
		len = 0;
		break;
	default:
		return -EINVAL;
	}
	if (c->n_free == 0) {
		harvest(c);
		c->st.busy++;
		return -EAGAIN;
	}
	h = c->free_stack[--c->n_free];
	d = &c->d[h];
	d->op = op;
	d->flags = flags;
	d->len = len;
	d->off = off;
	d->operand[0] = a0;
	d->operand[1] = a1;
	d->buf = buf;
	d->user = user;
	d->cursor = 0;
	d->pending = 0;
	d->gen0 = 0;
	d->enext = NULL;
	d->status = 0;
	d->ht_err = 0;
	d->value = 0;
	d->state = D_INFLIGHT;
	void *obj = d;

	/* the SQ holds at least depth entries: it cannot be full */
	while (c->cfg.sq.ops->enqueue(c->cfg.sq.ring, &obj, 1) != 1) {
		unsigned spins = 0;

		idle(c, &spins);
	}
	c->inflight++;
	c->st.submitted[op]++;
	if (op == DIMM_OP_READ)
		c->st.bytes_read += len;
	else if (op == DIMM_OP_WRITE)
		c->st.bytes_written += len;
	if (c->cfg.kick)
		c->cfg.kick(c->cfg.arg);
	return (int)h;
}

int dimm_read_async(struct dimm_client *c, uint64_t off, void *buf, uint32_t len, uint64_t user)
{
	return submit(c, DIMM_OP_READ, 0, off, buf, len, 0, 0, user);
}

int dimm_write_async(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len,
		     unsigned flags, uint64_t user)
{
	return submit(c, DIMM_OP_WRITE, (uint8_t)(flags & DIMM_F_SYNC), off, (void *)buf, len, 0,
		      0, user);
}

int dimm_fadd_async(struct dimm_client *c, uint64_t off, uint64_t add, uint64_t user)
{
	return submit(c, DIMM_OP_FADD, 0, off, NULL, 8, add, 0, user);
}

int dimm_cas_async(struct dimm_client *c, uint64_t off, uint64_t expect, uint64_t swap,
		   uint64_t user)
{
	return submit(c, DIMM_OP_CAS, 0, off, NULL, 8, expect, swap, user);
}

int dimm_flush_async(struct dimm_client *c, uint64_t user)
{
	return submit(c, DIMM_OP_FLUSH, 0, 0, NULL, 0, 0, 0, user);
}

int dimm_test(struct dimm_client *c, int h, struct dimm_result *res)
{
	if (h < 0 || (unsigned)h >= c->depth || c->d[h].state == D_FREE)
		return -EINVAL;
	if (c->d[h].state != D_DONE)
		harvest(c);
	if (c->d[h].state != D_DONE)
		return 0;
	consume(c, h, res);
	return 1;
}

int dimm_wait(struct dimm_client *c, int h, struct dimm_result *res)
{
	struct dimm_result r;
	unsigned spins = 0;
	int t;

	while ((t = dimm_test(c, h, &r)) == 0)
		idle(c, &spins);
	if (t < 0)
		return t;
	if (res)
		*res = r;
	return r.status;
}

unsigned dimm_reap(struct dimm_client *c, struct dimm_result *res, unsigned max)
{
	unsigned n = 0;

	harvest(c);
	while (n < max && c->done_head >= 0)
		consume(c, c->done_head, &res[n++]);
	return n;
}

int dimm_wait_all(struct dimm_client *c)
{
	struct dimm_result r[32];
	unsigned spins = 0;
	int first = 0;

	for (;;) {
		unsigned n = dimm_reap(c, r, 32);

		for (unsigned i = 0; i < n; i++)
			if (!first && r[i].status)
				first = r[i].status;
		if (c->inflight == 0)
			return first;
		if (n == 0)
			idle(c, &spins);
	}
}

static int blocking(struct dimm_client *c, int h, uint64_t *value)
{
	struct dimm_result r;
	int s;

	if (h < 0)
		return h;
	s = dimm_wait(c, h, &r);
	if (value)
		*value = r.value;
	return s;
}

/* Blocking calls wait for a free descriptor rather than fail with -EAGAIN. */
#define RETRY_BUSY(c, call)                                       \
	({                                                        \
		int _h;                                           \
		unsigned _spins = 0;                              \
		while ((_h = (call)) == -EAGAIN)                  \
			idle(c, &_spins);                         \
		_h;                                               \
	})

int dimm_read(struct dimm_client *c, uint64_t off, void *buf, uint32_t len)
{
	return blocking(c, RETRY_BUSY(c, dimm_read_async(c, off, buf, len, 0)), NULL);
}

int dimm_write(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len)
{
	return blocking(c, RETRY_BUSY(c, dimm_write_async(c, off, buf, len, 0, 0)), NULL);
}

int dimm_write_sync(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len)
{
	return blocking(c, RETRY_BUSY(c, dimm_write_async(c, off, buf, len, DIMM_F_SYNC, 0)),
			NULL);
}

int dimm_fadd(struct dimm_client *c, uint64_t off, uint64_t add, uint64_t *old)
{
	return blocking(c, RETRY_BUSY(c, dimm_fadd_async(c, off, add, 0)), old);
}

int dimm_cas(struct dimm_client *c, uint64_t off, uint64_t expect, uint64_t swap, uint64_t *old)
{
	return blocking(c, RETRY_BUSY(c, dimm_cas_async(c, off, expect, swap, 0)), old);
}

int dimm_flush(struct dimm_client *c)
{
	return blocking(c, RETRY_BUSY(c, dimm_flush_async(c, 0)), NULL);
}

/* ------------------------------------------------------------ engine */

#define RSPQ 64u

/* HT packets (and operations taken) one poll issues at most: half a 4 KiB
 * page. The node sends a frame after each poll, so the first 32 reads of a
 * page fault leave, and the remote target starts serving them, while the
 * next 32 are encoded: a fault's p50 in htoe-dimm was 2-8 us lower than
 * with all 64 issued first (three alternated series, every workload). */
#define ISSUE_BURST 32u

struct dimm_engine {
	struct dimm_engine_cfg cfg;
	struct ht_requester req;
	struct dimm_client *cl[DIMM_MAX_CLIENTS];
	_Atomic unsigned n_cl;
	unsigned rr;
	unsigned taken;            /* descriptors taken, not completed */
	/* target responses waiting for the link, encoded */
	uint8_t  rspq[RSPQ][HT_MAX_PKT_LEN];
	uint8_t  rsp_len[RSPQ];
	unsigned rsp_head, rsp_n;
	struct dimm_engine_stats st;
};

struct dimm_engine *dimm_engine_new(const struct dimm_engine_cfg *cfg, char *err, size_t errlen)
{
	struct dimm_engine *e;
	struct ht_req_cfg rc;
	unsigned n = cfg->n_unitids ? cfg->n_unitids : 4;
	uint8_t first = cfg->first_unitid ? cfg->first_unitid : 1;

	if (!cfg->link.input || !cfg->link.output) {
		ERR("dimm engine: no link");
		return NULL;
	}
	if (n > HT_REQ_MAX_UNITIDS || first + n > 32) {
		ERR("dimm engine: UnitIDs %u..%u out of range", first, first + n - 1);
		return NULL;
	}
	memset(&rc, 0, sizeof(rc));
	rc.n_unitids = n;
	for (unsigned i = 0; i < n; i++) {
		uint8_t u = (uint8_t)(first + i);

		/* the bridge also uses ubase + units for the Flushes it sends */
		if (cfg->bridge_units && u >= cfg->bridge_ubase &&
		    u <= cfg->bridge_ubase + cfg->bridge_units) {
			ERR("dimm engine: UnitID %u overlaps the bridge's %u..%u", u,
			    cfg->bridge_ubase, cfg->bridge_ubase + cfg->bridge_units);
			return NULL;
		}
		rc.unitids[i] = u;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		ERR("dimm engine: out of memory");
		return NULL;
	}
	e->cfg = *cfg;
	if (ht_req_init(&e->req, &rc) != 0) {
		ERR("dimm engine: requester configuration refused");
		free(e);
		return NULL;
	}
	atomic_init(&e->n_cl, 0);
	if (cfg->link.attach)
		cfg->link.attach(cfg->link.ctx, e);
	return e;
}

void dimm_engine_free(struct dimm_engine *e)
{
	if (e && e->cfg.link.attach)
		e->cfg.link.attach(e->cfg.link.ctx, NULL);
	free(e);
}

const struct dimm_engine_stats *dimm_engine_stats(const struct dimm_engine *e)
{
	return &e->st;
}

int dimm_engine_attach(struct dimm_engine *e, struct dimm_client *c)
{
	unsigned n = atomic_load_explicit(&e->n_cl, memory_order_relaxed);

	if (n == DIMM_MAX_CLIENTS)
		return -ENOSPC;
	e->cl[n] = c;
	atomic_store_explicit(&e->n_cl, n + 1, memory_order_release);
	return 0;
}

bool dimm_engine_busy(const struct dimm_engine *e)
{
	return e->taken || ht_req_outstanding(&e->req) || e->rsp_n;
}

/* Hand d's completion to its client (the CQ, or the overflow list when a
 * user ring is smaller than depth). */
static void cq_push(struct dimm_client *c, struct dimm_desc *d)
{
	void *obj = d;

	if (c->cq_over || c->cfg.cq.ops->enqueue(c->cfg.cq.ring, &obj, 1) != 1) {
		/* a user ring smaller than depth: keep it for later */
		d->enext = NULL;
		if (c->cq_over_tail)
			c->cq_over_tail->enext = d;
		else
			c->cq_over = d;
		c->cq_over_tail = d;
	}
}

static void complete(struct dimm_engine *e, struct dimm_desc *d)
{
	e->taken--;
	cq_push(d->c, d);
}

static unsigned flush_cq_over(struct dimm_client *c)
{
	unsigned n = 0;

	while (c->cq_over) {
		void *obj = c->cq_over;

		if (c->cfg.cq.ops->enqueue(c->cfg.cq.ring, &obj, 1) != 1)
			break;
		c->cq_over = c->cq_over->enext;
		if (!c->cq_over)
			c->cq_over_tail = NULL;
		n++;
	}
	return n;
}

int dimm_op_take(struct dimm_client *c, struct dimm_op *op)
{
	struct dimm_desc *d;
	void *obj;

	flush_cq_over(c);
	if (c->cfg.sq.ops->dequeue(c->cfg.sq.ring, &obj, 1) != 1)
		return 0;
	d = obj;
	op->op = d->op;
	op->flags = d->flags;
	op->len = d->len;
	op->off = d->off;
	op->buf = d->buf;
	op->operand[0] = d->operand[0];
	op->operand[1] = d->operand[1];
	op->token = d;
	return 1;
}

void dimm_op_complete(struct dimm_client *c, const struct dimm_op *op, int status,
		      uint8_t ht_err, uint64_t value)
{
	struct dimm_desc *d = op->token;

	d->status = status;
	d->ht_err = ht_err;
	d->value = value;
	cq_push(c, d);
}

static void fail(struct dimm_desc *d, int status, uint8_t ht_err)
{
	if (d->status == 0) {
		d->status = status;
		d->ht_err = ht_err;
	} else if (d->status == status && ht_err > d->ht_err) {
		d->ht_err = ht_err;
	}
}

static uint64_t loss_gen(struct dimm_engine *e, const struct dimm_client *c)
{
	return e->cfg.link.loss_gen ? e->cfg.link.loss_gen(e->cfg.link.ctx, c->cfg.node) : 0;
}

/* The next HT op of descriptor d (from its cursor). */
static void next_op(const struct dimm_desc *d, struct ht_op *op)
{
	const struct dimm_client *c = d->c;
	uint64_t a = c->cfg.gaddr + d->off + d->cursor;
	uint32_t rem = d->len - d->cursor, n;

	memset(op, 0, offsetof(struct ht_op, data));
	op->addr = a;
	op->cookie = (uint64_t)(uintptr_t)d;
	switch (d->op) {
	case DIMM_OP_READ:
	case DIMM_OP_WRITE:
		if (!(a & 3) && rem >= 4) {
			n = rem & ~3u;
			if (n > 64 - (uint32_t)(a & 63))
				n = 64 - (uint32_t)(a & 63);
		} else if (d->op == DIMM_OP_READ) {
			n = 4 - (uint32_t)(a & 3);
			if (n > rem)
				n = rem;
		} else {
			n = 32 - (uint32_t)(a & 31);
			if (n > rem)
				n = rem;
		}
		op->len = n;
		if (d->op == DIMM_OP_READ) {
			op->type = HT_OP_READ;
			op->passpw = c->cfg.passpw_reads; /* may pass posted writes */
		} else {
			op->type = (d->flags & DIMM_F_SYNC) ? HT_OP_WRITE_NP : HT_OP_WRITE_P;
			memcpy(op->data, (const uint8_t *)d->buf + d->cursor, n);
		}
		break;
	case DIMM_OP_FADD:
		op->type = HT_OP_FETCH_ADD;
		op->len = 8;
		op->operand[0] = d->operand[0];
		break;
	case DIMM_OP_CAS:
		op->type = HT_OP_CAS;
		op->len = 8;
		op->operand[0] = d->operand[0];
		op->operand[1] = d->operand[1];
		break;
	default:
		op->type = HT_OP_FLUSH;
		op->addr = 0;
		op->len = 0;
		break;
	}
}

/* After a 64-byte posted write or read of d (its op, and the descriptor
 * pd its encoding gave): the following whole 64-byte pieces of d, up to
 * the poll's burst, as one run the link queues at once (one map lookup;
 * a write's data copied once, from the application's buffer into the
 * queue; a read's tags taken at once, those the link did not take given
 * back: the next issue sends them the usual way). */
static void issue_following(struct dimm_engine *e, struct dimm_desc *d, const struct ht_op *op,
			    struct ht_desc *pd, uint64_t now, unsigned *moved)
{
	const struct dimm_link *l = &e->cfg.link;
	unsigned n = (d->len - d->cursor) / HT_MAX_DATA, k;

	if (n > ISSUE_BURST - *moved)
		n = ISSUE_BURST - *moved;
	if (!n)
		return;
	pd->addr += HT_MAX_DATA;
	if (op->type == HT_OP_WRITE_P) {
		k = l->input_run(l->ctx, pd, (const uint8_t *)d->buf + d->cursor, n, now);
		ht_req_issued_posted(&e->req, k);
	} else {
		uint8_t tags[ISSUE_BURST][2];
		unsigned t = ht_req_issue_reads(&e->req, op, op->cookie, n, tags);

		k = t ? l->input_reads(l->ctx, pd, (const uint8_t(*)[2])tags, t, now) : 0;
		for (unsigned i = k; i < t; i++)
			ht_req_unissue_tag(&e->req, tags[i][0], tags[i][1]);
		d->pending += k;
	}
	e->st.pkts_issued += k;
	*moved += k;
	d->cursor += k * HT_MAX_DATA;
}

/* Issue HT requests for d from its cursor. Returns true if d is fully
 * issued (or failed), false if it is blocked (no tag, backpressure, the
 * poll's burst); *p_full is set when what blocked it was the bridge refusing
 * a posted write (its posted queue is full: other clients' reads may still
 * go). */
static bool issue_desc(struct dimm_engine *e, struct dimm_client *c, struct dimm_desc *d,
		       uint64_t now, unsigned *moved, bool *p_full)
{
	for (;;) {
		bool flush = d->op == DIMM_OP_FLUSH;
		struct ht_op op;
		struct ht_desc pd;
		uint8_t b[HT_MAX_PKT_LEN];
		uint64_t gen = 0;
		int n, r;

		if (dimm_client_lost(c)) {
			e->st.lost_fail++;
			fail(d, -ENOLINK, 0);
			return true;
		}
		if (!flush && d->cursor >= d->len)
			return true;
		if (*moved >= ISSUE_BURST)
			return false; /* the rest at the next poll */
		next_op(d, &op);
		/* encoded straight from the op, its descriptor filled meanwhile */
		n = ht_req_issue_desc(&e->req, &op, op.cookie, b, sizeof(b), &pd);
		if (n == -EAGAIN) {
			e->st.no_tag++;
			return false;
		}
		if (n <= 0) {
			fail(d, -EINVAL, 0);
			return true;
		}
		if (op.type == HT_OP_WRITE_P && !c->pw_have)
			gen = loss_gen(e, c); /* the first posted write since the last flush */
		r = e->cfg.link.input_desc ? e->cfg.link.input_desc(e->cfg.link.ctx, &pd, now) :
					     e->cfg.link.input(e->cfg.link.ctx, b, (size_t)n, now);
		if (r != 0) {
			ht_req_unissue_bytes(&e->req, b, (size_t)n);
			if (r == -EAGAIN) {
				e->st.backpressure++;
				*p_full = op.type == HT_OP_WRITE_P;
				return false;
			}
			fail(d, -EIO, HT_RSP_MASTER_ABORT);
			return true;
		}
		e->st.pkts_issued++;
		(*moved)++;
		if (op.type == HT_OP_WRITE_P) {
			if (!c->pw_have) {
				c->pw_have = true;
				c->pw_gen = gen;
			}
		} else {
			d->pending++;
		}
		if (flush) {
			d->gen0 = c->pw_have ? c->pw_gen : loss_gen(e, c);
			c->pw_have = false;
			return true;
		}
		d->cursor += op.len;
		if (op.len == HT_MAX_DATA &&
		    ((op.type == HT_OP_WRITE_P && e->cfg.link.input_run) ||
		     (op.type == HT_OP_READ && e->cfg.link.input_reads)))
			issue_following(e, d, &op, &pd, now, moved);
	}
}

static unsigned issue(struct dimm_engine *e, uint64_t now)
{
	unsigned n_cl = atomic_load_explicit(&e->n_cl, memory_order_acquire);
	unsigned moved = 0, idle_cl = 0;
	bool p_blocked = false; /* a client waits for room in the posted queue */

	while (idle_cl < n_cl && moved < ISSUE_BURST) {
		struct dimm_client *c = e->cl[e->rr];
		struct dimm_desc *d;

		e->rr = (e->rr + 1) % n_cl;
		flush_cq_over(c);
		if (p_blocked && !c->cfg.passpw_reads) {
			/* its reads must not pass the writes held back */
			idle_cl++;
			continue;
		}
		if (!c->cur) {
			void *obj;

			if (c->cfg.sq.ops->dequeue(c->cfg.sq.ring, &obj, 1) != 1) {
				idle_cl++;
				continue;
			}
			c->cur = obj;
			e->taken++;
			e->st.ops_taken++;
			moved++;
		}
		d = c->cur;
		bool p_full = false;

		if (!issue_desc(e, c, d, now, &moved, &p_full)) {
			/* blocked: tags, the burst or the link are the limit for
			 * every client, except a full posted queue, which holds
			 * back only posted writes: the clients whose reads may
			 * pass them (passpw_reads, the pager's fetches) go on,
			 * the others wait, as their reads must come after those
			 * writes */
			if (p_full && moved < ISSUE_BURST) {
				p_blocked = true;
				idle_cl++;
				continue;
			}
			break;
		}
		c->cur = NULL;
		d->cursor = d->len;
		if (d->pending == 0)
			complete(e, d);
		idle_cl = 0;
	}
	return moved;
}

/* A response for our requester, parsed once: read data is copied once,
 * from the packet into the operation's buffer. */
static void on_response(struct dimm_engine *e, const struct ht_desc *p)
{
	struct ht_completion cp;
	struct dimm_desc *d;

	if (ht_req_rx_desc(&e->req, p, &cp) != 1) {
		e->st.unexpected++;
		return;
	}
	e->st.responses++;
	d = (struct dimm_desc *)(uintptr_t)cp.cookie;
	if (cp.status != HT_RSP_OK) {
		e->st.err_responses++;
		fail(d, -EIO, cp.status);
	} else {
		switch (d->op) {
		case DIMM_OP_READ: {
			uint64_t at = cp.addr - (d->c->cfg.gaddr + d->off);

			if (at + cp.len <= d->len)
				memcpy((uint8_t *)d->buf + at, ht_completion_data(&cp), cp.len);
			else
				fail(d, -EIO, HT_RSP_DATA_ERROR);
			break;
		}
		case DIMM_OP_FADD:
		case DIMM_OP_CAS:
			d->value = ht_completion_u64(&cp);
			break;
		case DIMM_OP_FLUSH:
			if (loss_gen(e, d->c) != d->gen0)
				fail(d, -EPIPE, 0);
			break;
		default:
			break;
		}
	}
	if (--d->pending == 0 && d->cursor >= d->len && d->c->cur != d)
		complete(e, d);
}

static bool unitid_in(uint8_t u, uint8_t base, unsigned n)
{
	return u >= base && u < base + n;
}

static unsigned drain_rspq(struct dimm_engine *e, uint64_t now)
{
	unsigned moved = 0;

	while (e->rsp_n) {
		if (e->cfg.link.input(e->cfg.link.ctx, e->rspq[e->rsp_head],
				      e->rsp_len[e->rsp_head], now) == -EAGAIN)
			break;
		e->rsp_head = (e->rsp_head + 1) % RSPQ;
		e->rsp_n--;
		moved++;
	}
	return moved;
}

/* One packet from the link, parsed once: a response for our requester, or a
 * request for the memory target, served from its bytes with the response
 * encoded straight into the response queue (the bridge's UnitIDs) or handed
 * to our requester (the local target answering a local request). */
static void from_link_desc(struct dimm_engine *e, const struct ht_desc *d)
{
	int n;

	if (d->vc == HT_VC_R) {
		on_response(e, d);
		return;
	}
	if (!e->cfg.target) {
		e->st.undecodable++;
		return;
	}
	e->st.served++;
	if (unitid_in(d->unitid, e->cfg.bridge_ubase, e->cfg.bridge_units)) {
		unsigned slot = (e->rsp_head + e->rsp_n) % RSPQ;

		n = ht_tgt_serve(e->cfg.target, d, e->rspq[slot], HT_MAX_PKT_LEN);
		if (n > 0) {
			e->rsp_len[slot] = (uint8_t)n;
			e->rsp_n++;
		}
	} else {
		uint8_t rsp[HT_MAX_PKT_LEN];
		struct ht_desc rd;

		n = ht_tgt_serve(e->cfg.target, d, rsp, sizeof(rsp));
		if (n > 0 && ht_desc_parse(rsp, (size_t)n, &rd) == n)
			on_response(e, &rd);
	}
}

static void from_link(struct dimm_engine *e, const uint8_t *pkt, unsigned len)
{
	struct ht_desc d;

	if (ht_desc_parse(pkt, len, &d) != (int)len) {
		e->st.undecodable++;
		return;
	}
	from_link_desc(e, &d);
}

/* The bridge's local sink (dimm_link_htoe): a response copied once, from
 * the frame into the buffer it answers (for a page fault, the page being
 * installed), or a posted write applied from the frame. */
static void engine_deliver(void *ctx, const struct ht_desc *d, uint64_t now)
{
	struct dimm_engine *e = ctx;

	(void)now;
	e->st.from_frame++;
	from_link_desc(e, d);
}

/* A remote request for the target, its response encoded straight into the
 * bridge's transmit slot; not while responses wait in our queue. */
static int engine_serve(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap,
			uint64_t now)
{
	struct dimm_engine *e = ctx;
	int n;

	(void)now;
	if (!e->cfg.target || e->rsp_n)
		return 0;
	n = ht_tgt_serve(e->cfg.target, d, rsp, cap);
	if (n > 0) {
		e->st.served++;
		e->st.from_frame++;
	}
	return n;
}

/* Packets from the link, in bursts read in place when the link can
 * (output_burst), never more requests than the response queue can answer. */
static unsigned link_output(struct dimm_engine *e, uint64_t now)
{
	const struct dimm_link *l = &e->cfg.link;
	unsigned moved = 0;

	for (;;) {
		unsigned room = RSPQ - e->rsp_n, k;

		if (!room)
			break;
		if (l->output_burst) {
			const uint8_t *pkt[LINK_BURST];
			unsigned len[LINK_BURST];

			k = l->output_burst(l->ctx, pkt, len, room < LINK_BURST ? room : LINK_BURST, now);
			if (!k)
				break;
			for (unsigned i = 0; i < k; i++)
				from_link(e, pkt[i], len[i]);
			l->output_done(l->ctx);
		} else {
			uint8_t b[HT_MAX_PKT_LEN];
			int n = l->output(l->ctx, b, sizeof(b), now);

			if (n <= 0)
				break;
			k = 1;
			from_link(e, b, (unsigned)n);
		}
		if (e->rsp_n)
			drain_rspq(e, now);
		moved += k;
	}
	return moved;
}

unsigned dimm_engine_poll(struct dimm_engine *e, uint64_t now)
{
	unsigned moved = drain_rspq(e, now);

	moved += link_output(e, now);
	moved += issue(e, now);
	return moved;
}
