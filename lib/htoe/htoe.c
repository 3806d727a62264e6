/* SPDX-License-Identifier: BSD-3-Clause
 * The bridge (HTEA): public sans-I/O API, the local HT side, and the glue
 * between the layers (mapping -> VL -> encapsulation -> retry; decapsulation
 * -> tag remapping -> local side). See htoe.h and docs/architecture.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe_acl.h"
#include "htoe_deliver.h"
#include "htoe_encap.h"
#include "htoe_reset.h"

/* ------------------------------------------------------------------ config */

void htoe_config_defaults(struct htoe_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mtu = HTOE_MTU_DEFAULT;
	cfg->unitid_base = 8;
	cfg->n_unitids = 1;
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		cfg->rx_bufs[vc][0] = 256;
		cfg->rx_bufs[vc][1] = 256;
	}
	cfg->reserve = 16;
	cfg->max_per_vl = 128;
	cfg->txq_pkts = 1024;
	cfg->window = 256;
	cfg->ack_every = 8;
	cfg->retry_limit = 8;
	cfg->retry_mode = HTOE_RETRY_SELECTIVE;
	cfg->flush_ns = 2000;
	cfg->ack_delay_ns = 20000;
	cfg->rto_init_ns = 200000;
	cfg->rto_max_ns = 20000000;
	cfg->rto_min_ns = 50000;
	cfg->np_timeout_ns = 100000000;
	cfg->stall_timeout_ns = 50000000;
}

unsigned htoe_rx_bufs_needed(const struct htoe_config *cfg, unsigned n_vls)
{
	unsigned busy = cfg->max_per_vl > cfg->reserve ? cfg->max_per_vl - cfg->reserve : 0;

	return cfg->reserve * n_vls + (busy > 64 ? busy : 64);
}

static unsigned pow2_at_least(unsigned n)
{
	unsigned p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

#define CFG_ERR(f, ...) do { \
		if (field) \
			*field = (f); \
		snprintf(err, errlen, __VA_ARGS__); \
		return -1; \
	} while (0)
#define F(x) offsetof(struct htoe_config, x)

int htoe_config_check(const struct htoe_config *c, size_t *field, char *err, size_t errlen)
{
	unsigned n_vl;

	if (c->mtu < HTOE_MTU_MIN || c->mtu > HTOE_MTU_MAX)
		CFG_ERR(F(mtu), "mtu %u out of range %u..%u", c->mtu, HTOE_MTU_MIN, HTOE_MTU_MAX);
	if (c->mtu < HTOE_HDR_LEN + HT_MAX_PKT_LEN)
		CFG_ERR(F(mtu), "mtu %u cannot carry a %u-byte HT packet", c->mtu, HT_MAX_PKT_LEN);
	if (!c->map)
		CFG_ERR(SIZE_MAX, "no address map");
	n_vl = htoe_map_peer_count(c->map);
	if (c->n_unitids < 1 || c->unitid_base + c->n_unitids + htoe_flush_units(n_vl) > HT_UNITIDS)
		CFG_ERR(F(unitid_base), "unitid_base %u + n_unitids %u (+%u for Flush with %u peers) "
			"exceeds UnitID 31", c->unitid_base, c->n_unitids, htoe_flush_units(n_vl),
			n_vl);
	if (n_vl > HTOE_MAX_PEERS)
		CFG_ERR(SIZE_MAX, "%u peers, at most %u", n_vl, HTOE_MAX_PEERS);
	if (c->map->local_node != c->node_id)
		CFG_ERR(SIZE_MAX, "the address map is for node %u, the bridge is node %u",
			c->map->local_node, c->node_id);
	if (c->window < 2 || c->window > HTOE_RETRY_WINDOW_MAX)
		CFG_ERR(F(window), "window %u out of range 2..%u", c->window, HTOE_RETRY_WINDOW_MAX);
	if (c->retry_mode != HTOE_RETRY_GBN && c->retry_mode != HTOE_RETRY_SELECTIVE)
		CFG_ERR(F(retry_mode), "retry_mode %d: 0 (gbn) or 1 (selective)", (int)c->retry_mode);
	if (c->txq_pkts < 2)
		CFG_ERR(F(txq_pkts), "txq_pkts %u: at least 2", c->txq_pkts);
	if (c->rto_init_ns == 0)
		CFG_ERR(F(rto_init_ns), "rto_init_ns must be > 0");
	if (c->rto_max_ns < c->rto_init_ns)
		CFG_ERR(F(rto_max_ns), "rto_init_ns %" PRIu64 " ns is above rto_max_ns %" PRIu64 " ns",
			c->rto_init_ns, c->rto_max_ns);
	if (c->rto_min_ns > c->rto_max_ns)
		CFG_ERR(F(rto_max_ns), "rto_min_ns %" PRIu64 " ns is above rto_max_ns %" PRIu64 " ns",
			c->rto_min_ns, c->rto_max_ns);
	if (c->reserve == 0 || c->max_per_vl < c->reserve)
		CFG_ERR(F(reserve), "receive pool: reserve %u must be 1..max_per_vl (%u)", c->reserve,
			c->max_per_vl);
	for (unsigned v = 0; v < HT_VC_COUNT; v++)
		for (unsigned d = 0; d < 2; d++)
			if (c->rx_bufs[v][d] > HTOE_CREDIT_POOL_MAX ||
			    (uint32_t)c->rx_bufs[v][d] < (uint32_t)(n_vl ? n_vl : 1) * c->reserve)
				CFG_ERR(F(rx_bufs[v][d]), "receive pool: %u %s buffers of VC %u: at "
					"least reserve %u x %u peers and at most %u", c->rx_bufs[v][d],
					d ? "data" : "command", v, c->reserve, n_vl ? n_vl : 1,
					HTOE_CREDIT_POOL_MAX);
	/* Translation must keep HT's 64-byte rules (a dword access never
	 * crosses a 64-byte boundary, an atomic stays 8-byte aligned): the
	 * bridge rewrites addresses in place and relies on it. */
	for (unsigned i = 0; i < c->map->nranges; i++) {
		const struct htoe_map_range *r = &c->map->ranges[i];

		if ((r->base | r->size | r->remote_base) % HT_ALIGN)
			CFG_ERR(SIZE_MAX, "%s: base 0x%" PRIx64 ", size 0x%" PRIx64 " and remote base 0x%"
				PRIx64 " must be multiples of 64 bytes", r->label, r->base, r->size,
				r->remote_base);
	}
	if (c->map->mask_mode && (c->map->shift < 6 /* 2^6 = HT_ALIGN */ ||
				  c->map->mask_remote_base % HT_ALIGN))
		CFG_ERR(SIZE_MAX, "%s: the node bits must start at bit 6 or above and the remote base "
			"be a multiple of 64 bytes", c->map->mask_label);
	if (c->default_pcp > 7)
		CFG_ERR(F(default_pcp), "default pcp %u > 7", c->default_pcp);
	for (unsigned i = 0; i < c->n_pcp; i++)
		if (c->pcp[i].pcp > 7)
			CFG_ERR(F(pcp), "node %u: pcp %u > 7", c->pcp[i].node, c->pcp[i].pcp);
	return 0;
}
#undef F
#undef CFG_ERR

static int lq_init(struct htoe_lq *q, unsigned n)
{
	unsigned size = pow2_at_least(n);

	q->e = calloc(size, sizeof(*q->e));
	q->mask = size - 1;
	q->head = q->tail = q->hold = 0;
	return q->e ? 0 : -ENOMEM;
}

static uint8_t pcp_of(const struct htoe_config *c, uint16_t node)
{
	for (unsigned i = 0; i < c->n_pcp; i++)
		if (c->pcp[i].node == node)
			return c->pcp[i].pcp;
	return c->default_pcp;
}

static int vl_init(struct htoe *b, struct htoe_vl *v, const struct htoe_map_peer *pc)
{
	const struct htoe_config *c = &b->cfg;
	struct htoe_retry_cfg rc = {
		.window = c->window,
		.rto_init_ns = c->rto_init_ns,
		.rto_max_ns = c->rto_max_ns,
		.rto_min_ns = c->rto_min_ns,
		.retry_limit = c->retry_limit,
		.ack_every = c->ack_every,
		.ack_delay_ns = c->ack_delay_ns,
	};
	unsigned qsize = pow2_at_least(c->txq_pkts);
	unsigned fsize = pow2_at_least(c->window);

	memset(v, 0, sizeof(*v));
	v->active = &b->active;
	v->active_bit = 1ull << (v - b->vl);
	v->touched = &b->touched;
	v->node = pc->node;
	memcpy(v->mac, pc->mac, 6);
	v->pcp = pcp_of(c, pc->node);
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		v->q[vc].s = calloc(qsize, sizeof(struct htoe_slot));
		if (!v->q[vc].s)
			return -ENOMEM;
		v->q[vc].mask = qsize - 1;
	}
	v->fd = calloc(fsize, sizeof(*v->fd));
	if (!v->fd)
		return -ENOMEM;
	v->fd_mask = fsize - 1;
	if (htoe_retry_init(&v->rt, &rc) != 0)
		return -EINVAL;
	if (c->retry_mode == HTOE_RETRY_SELECTIVE) {
		/* selective retry: a scoreboard entry per sequence number of
		 * the window, and reorder slots for every packet the peer's
		 * credits let it send (3 VCs x the per-VL cap) */
		unsigned npkt = htoe_rob_pooled_slots(c) + htoe_rob_unpooled_slots(c);
		struct htoe_rob_frame *fr = calloc(fsize, sizeof(*fr));
		struct htoe_rob_pkt *pk = calloc(npkt, sizeof(*pk));

		v->sb = calloc(fsize, sizeof(*v->sb));
		if (!fr || !pk || !v->sb || htoe_rob_init(&v->rob, fr, fsize, pk, npkt,
							  htoe_rob_unpooled_slots(c)) != 0 ||
		    htoe_retry_attach(&v->rt, v->sb, fsize) != 0) {
			free(fr);
			free(pk);
			v->rob.fr = NULL;
			v->rob.pkt = NULL;
			return -ENOMEM;
		}
	}
	htoe_credit_tx_init(&v->ctx);
	if (htoe_credit_rx_init(&b->pool, &v->crx) != 0)
		return -EINVAL;
	htoe_credit_rx_regrant(&b->pool, &v->crx);
	/* what every frame to this peer starts with, written once */
	struct htoe_hdr h = { .has_vlan = c->vlan, .pcp = v->pcp, .vid = c->vid,
			      .src_node = c->node_id, .dst_node = v->node };

	memcpy(h.dst, v->mac, 6);
	memcpy(h.src, c->mac, 6);
	if (htoe_hdr_template(&h, &v->tmpl) != 0)
		return -EINVAL;
	return 0;
}

struct htoe *htoe_new(const struct htoe_config *cfg, char *err, size_t errlen)
{
	struct htoe *b;

	if (htoe_config_check(cfg, NULL, err, errlen) != 0)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->cfg = *cfg;
	b->parked_min = UINT64_MAX;
	b->map = cfg->map;
	b->n_vl = htoe_map_peer_count(cfg->map);
	b->flush_unitid = (uint8_t)(cfg->unitid_base + cfg->n_unitids);
	b->flush_subs = (uint8_t)(32 * htoe_flush_units(b->n_vl));

	if (htoe_rxpool_init(&b->pool, cfg->rx_bufs, cfg->reserve, cfg->max_per_vl,
			     b->n_vl ? b->n_vl : 1) != 0) {
		snprintf(err, errlen,
			 "receive pool: every class needs 1 <= reserve (%u) <= max_per_vl (%u), "
			 "and at least reserve x %u peers and at most %u buffers",
			 cfg->reserve, cfg->max_per_vl, b->n_vl, HTOE_CREDIT_POOL_MAX);
		goto fail;
	}
	if (htoe_tagremap_init(&b->tags, cfg->unitid_base, cfg->n_unitids) != 0 ||
	    htoe_outstanding_init(&b->out, cfg->np_timeout_ns) != 0) {
		snprintf(err, errlen, "bad tag space or np_timeout");
		goto fail;
	}
	memset(b->flush_sub, -1, sizeof(b->flush_sub));

	b->vl = calloc(b->n_vl ? b->n_vl : 1, sizeof(*b->vl));
	if (!b->vl)
		goto nomem;
	for (unsigned i = 0; i < b->n_vl; i++) {
		const struct htoe_map_peer *pc = htoe_map_peer(cfg->map, i);

		if (vl_init(b, &b->vl[i], pc) != 0)
			goto nomem;
		b->vl_of_node[pc->node] = (uint8_t)(i + 1);
		/* A VL starts with a reset handshake: it agrees on the epoch
		 * and sequence numbers with the peer, and tells a peer that
		 * knew an earlier incarnation of this node that it restarted. */
		b->vl[i].epoch = cfg->epoch;
		htoe_reset_begin(b, &b->vl[i], true, 0);
		b->vl[i].st.resets = 0; /* the first handshake is not a reset */
	}
	b->st.vl_resets = 0;
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		/* room for every pooled buffer, plus locally generated packets:
		 * loopback and error responses (at most one per outstanding tag),
		 * and the packets of unpooled held frames on top (htoe_encap.h) */
		unsigned n = htoe_lq_pooled_room(cfg, (enum ht_vc)vc) + htoe_rob_unpooled_slots(cfg);

		if (lq_init(&b->lq[vc], n) != 0)
			goto nomem;
	}
	return b;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	htoe_free(b);
	return NULL;
}

void htoe_free(struct htoe *b)
{
	if (!b)
		return;
	if (b->vl) {
		for (unsigned i = 0; i < b->n_vl; i++) {
			for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
				free(b->vl[i].q[vc].s);
			free(b->vl[i].fd);
			free(b->vl[i].sb);
			free(b->vl[i].rob.fr);
			free(b->vl[i].rob.pkt);
		}
		free(b->vl);
	}
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		free(b->lq[vc].e);
	free(b);
}

/* Give a remote NP request a local tag (always remap): rewrite its UnitID
 * and SrcTag in place. -EAGAIN when the pending table is full. */
static int remap_request(struct htoe *b, struct htoe_lent *e)
{
	struct htoe_vl *v = &b->vl[e->vl];
	struct ht_desc d;
	struct htoe_pending_entry pe;
	uint8_t uid, tag;

	if (ht_desc_parse(e->bytes, e->len, &d) < 0)
		return -EINVAL;
	memset(&pe, 0, sizeof(pe));
	pe.orig_unitid = d.unitid;
	pe.orig_srctag = d.srctag;
	pe.vl = e->vl;
	pe.epoch = v->epoch;
	htoe_np_info_from_desc(&d, &pe.np);
	if (htoe_tagremap_alloc(&b->tags, &pe, &uid, &tag) != 0)
		return -EAGAIN;
	ht_bytes_set_tag(e->bytes, e->len, uid, tag);
	return 0;
}

/* Remote request e refused by the access table: a posted write is dropped,
 * a non-posted request answered with Target Abort on its VL. 0: e is done
 * with; -EAGAIN: no room for the answer yet (e stays queued). */
static int acl_refuse(struct htoe *b, const struct ht_desc *p, struct htoe_lent *e,
		      enum ht_vc vc, uint64_t now)
{
	struct htoe_vl *v = &b->vl[e->vl];
	struct htoe_np_info np;
	struct ht_pkt r;

	if (vc == HT_VC_NP) {
		if (!htoe_encap_room(v, HT_VC_R))
			return -EAGAIN;
		if (htoe_np_info_from_desc(p, &np) == 0 &&
		    htoe_poison_build(p->unitid, p->srctag, &np, HT_RSP_TARGET_ABORT, &r) == 0)
			htoe_encap_enqueue_pkt(v, &r, now);
	}
	b->st.acl_denied++;
	return 0;
}

/* Receive buffers of entries taken but not yet released: consecutive
 * entries of one VL and VC, released at once (lq_rel_flush). */
struct lq_rel {
	uint16_t vl;
	enum ht_vc vc;
	unsigned n, ndata;
};

static void lq_rel_flush(struct htoe *b, struct lq_rel *r)
{
	if (r->n)
		htoe_lq_release_n(b, r->vc, r->vl, r->n, r->ndata);
	r->n = r->ndata = 0;
}

/* Take the next entry due for the local side off its queue (its receive
 * buffer released, or added to *rel when rel is not NULL): NULL when none
 * is due (*rc 0) or when it is longer than cap (*rc -ENOSPC, the entry
 * stays). The entry's slot is not reused before htoe_local_output_done()
 * (lq_hold). */
static inline __attribute__((always_inline)) const struct htoe_lent *
lq_take(struct htoe *b, size_t cap, int *rc, uint64_t now, struct lq_rel *rel, bool np_ok,
	enum ht_vc *vc_out)
{
	static const enum ht_vc order[] = { HT_VC_P, HT_VC_R, HT_VC_NP };

	*rc = 0;
	for (unsigned k = 0; k < 3; k++) {
		enum ht_vc vc = order[k];
		struct htoe_lq *q = &b->lq[vc];
		struct htoe_lent *e;

		if (q->head == q->tail || (vc == HT_VC_NP && !np_ok))
			continue;
		e = &q->e[q->head & q->mask];
		if (vc != HT_VC_P && !htoe_lq_ordered(b, e))
			continue;
		if (e->len > cap) {
			*rc = -ENOSPC;
			return NULL;
		}
		if (vc == HT_VC_NP && e->vl != HTOE_NO_VL) {
			if (e->epoch != b->vl[e->vl].epoch) {
				/* the VL was reset since: the requester was
				 * poisoned, do not execute the request */
				htoe_lq_release(b, vc, e);
				q->head++;
				k--; /* look at NP again */
				continue;
			}
		}
		if (b->acl_size && vc != HT_VC_R && e->vl != HTOE_NO_VL) {
			struct ht_desc p;

			if (ht_desc_parse(e->bytes, e->len, &p) > 0 &&
			    !htoe_acl_allows(b, &p, b->vl[e->vl].node)) {
				if (acl_refuse(b, &p, e, vc, now) != 0)
					continue;
				htoe_lq_release(b, vc, e);
				if (vc == HT_VC_P)
					b->lq_p_out++;
				q->head++;
				k--; /* look at this VC again */
				continue;
			}
		}
		if (vc == HT_VC_NP && e->vl != HTOE_NO_VL && remap_request(b, e) != 0) {
			b->st.tag_full++;
			continue;
		}
		if (rel && e->pooled) {
			if (rel->n && (rel->vl != e->vl || rel->vc != vc))
				lq_rel_flush(b, rel);
			rel->vl = e->vl;
			rel->vc = vc;
			rel->n++;
			rel->ndata += e->has_data;
		} else {
			htoe_lq_release(b, vc, e);
		}
		if (vc == HT_VC_P)
			b->lq_p_out++;
		q->head++;
		b->st.local_out++;
		*vc_out = vc;
		return e;
	}
	return NULL;
}

void htoe_set_loss_cb(struct htoe *b, htoe_loss_fn fn, void *ctx)
{
	b->loss_fn = fn;
	b->loss_ctx = fn ? ctx : NULL;
}

void htoe_set_local_sink(struct htoe *b, const struct htoe_local_sink *s)
{
	if (s)
		b->sink = *s;
	else
		memset(&b->sink, 0, sizeof(b->sink));
}

int htoe_local_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now)
{
	int rc;
	enum ht_vc vc;
	const struct htoe_lent *e = lq_take(b, cap, &rc, now, NULL, true, &vc);

	if (!e)
		return rc;
	ht_data_copy(buf, e->bytes, e->len);
	if (!b->lq_lent)
		htoe_local_output_done(b);
	return e->len;
}

unsigned htoe_local_output_burst(struct htoe *b, struct htoe_pkt_ref *out, unsigned n,
				 uint64_t now)
{
	return htoe_local_output_burst_np(b, out, n, n, now);
}

unsigned htoe_local_output_burst_np(struct htoe *b, struct htoe_pkt_ref *out, unsigned n,
				    unsigned np_max, uint64_t now)
{
	struct lq_rel rel = { .n = 0, .ndata = 0 };
	unsigned k = 0, np = 0;
	enum ht_vc vc;
	int rc;

	if (b->lq[HT_VC_P].head == b->lq[HT_VC_P].tail && b->lq[HT_VC_NP].head == b->lq[HT_VC_NP].tail &&
	    b->lq[HT_VC_R].head == b->lq[HT_VC_R].tail)
		return 0; /* the common case of a poll */
	for (; k < n; k++) {
		const struct htoe_lent *e = lq_take(b, HT_MAX_PKT_LEN, &rc, now, &rel, np < np_max,
						    &vc);

		if (!e)
			break;
		np += vc == HT_VC_NP;
		out[k].pkt = e->bytes;
		out[k].len = e->len;
	}
	lq_rel_flush(b, &rel);
	b->lq_lent |= k != 0;
	return k;
}

void htoe_local_output_done(struct htoe *b)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		b->lq[vc].hold = b->lq[vc].head;
	b->lq_lent = false;
}

/* ------------------------------------------------------- local-side input */

/* VL v has no room for a packet of the local side: backpressure (-EAGAIN)
 * until it has refused for stall_timeout_ns, then 0: stalled too long, never
 * block the local side without bound. The VL is reset once (its queues
 * drain) and the caller refuses the packet with an error. */
static int vl_stalled(struct htoe *b, struct htoe_vl *v, uint64_t now)
{
	if (!v->stall_since)
		v->stall_since = now ? now : 1;
	/* (stall_since is 1 for a stall that began at now == 0: a VL full at
	 * time 0 has not been stalled for 2^64 - 1 ns) */
	if (now <= v->stall_since || now - v->stall_since < b->cfg.stall_timeout_ns) {
		b->st.backpressure++;
		return -EAGAIN;
	}
	if (v->state == HTOE_VL_UP)
		htoe_reset_begin(b, v, false, now);
	return 0;
}

/* Flush (NP, no address): answered once every VL that was given posted
 * writes since its last Flush (framed, or still queued for credits) has
 * applied them — a Flush goes to each such VL behind those writes; with
 * none, the bridge answers at once. */
static int local_flush(struct htoe *b, const struct ht_pkt *req, uint64_t now)
{
	unsigned need = 0, slot, free_subs = 0;

	/* a VL being reset counts too: the posted writes it keeps unsent go
	 * out after the handshake, and the Flush queued behind them waits for
	 * it (a second reset drops the Flush, which then answers with an
	 * error: the writes may be lost) */
	for (unsigned i = 0; i < b->n_vl; i++)
		need += b->vl[i].posted_dirty;
	if (need == 0)
		return htoe_answer_local(b, req, HT_RSP_OK) == 0 ? 0 : -EAGAIN;
	for (slot = 0; slot < HTOE_FLUSH_MAX; slot++)
		if (!b->flush[slot].used)
			break;
	for (unsigned i = 0; i < b->flush_subs; i++)
		free_subs += b->flush_sub[i] < 0;
	if (slot == HTOE_FLUSH_MAX || free_subs < need)
		return -EAGAIN;
	/* a VL whose NP queue stays full (a peer that does not answer, before
	 * or during a reset) holds the Flush back only for the stall timeout:
	 * then it is answered with an error (its writes are not confirmed) */
	for (unsigned i = 0; i < b->n_vl; i++) {
		if (!b->vl[i].posted_dirty || htoe_encap_room(&b->vl[i], HT_VC_NP))
			continue;
		if (vl_stalled(b, &b->vl[i], now) != 0)
			return -EAGAIN;
		return htoe_answer_local(b, req, HT_RSP_TARGET_ABORT) == 0 ? 0 : -EAGAIN;
	}

	struct htoe_flush *f = &b->flush[slot];
	f->used = 1;
	f->unitid = req->unitid;
	f->srctag = req->srctag;
	f->remaining = (uint8_t)need;
	f->err = HT_RSP_OK;
	for (unsigned i = 0; i < b->n_vl; i++) {
		struct htoe_vl *v = &b->vl[i];
		struct htoe_np_info np;
		struct ht_pkt fl = *req;
		uint8_t sub = 0;

		if (!v->posted_dirty)
			continue;
		while (b->flush_sub[sub] >= 0)
			sub++;
		b->flush_sub[sub] = (int8_t)slot;
		fl.unitid = (uint8_t)(b->flush_unitid + sub / 32);
		fl.srctag = sub % 32;
		htoe_np_info_from_req(&fl, &np);
		htoe_outstanding_add(&b->out, fl.unitid, fl.srctag, (uint16_t)i, v->epoch, &np,
				     now);
		fl.passpw = 0;
		htoe_encap_enqueue_pkt(v, &fl, now);
		v->posted_dirty = false;
		v->stall_since = 0;
	}
	return 0;
}

/* A packet from the local HT side, parsed once where it enters (d); decoded
 * in full only on the rare paths that need a struct ht_pkt (loopback, Flush,
 * error answers, an address that needs the 0x3E prefix). */
struct lin {
	struct ht_desc d;
	struct ht_pkt p;
	bool decoded;
};

static struct ht_pkt *lin_pkt(struct lin *x)
{
	if (!x->decoded) {
		ht_desc_decode(&x->d, &x->p);
		x->decoded = true;
	}
	return &x->p;
}

/* Queue x on v with its address translated to `addr`: the bytes are copied
 * once into the VL's slot and the address patched there. */
static int enqueue_request(struct htoe_vl *v, struct lin *x, uint64_t addr, uint64_t now)
{
	struct htoe_slot *s;

	if (!x->d.ctl && addr > HT_ADDR_MAX_40) {
		/* the address needs the 0x3E prefix: encode it again */
		lin_pkt(x)->addr = addr;
		return htoe_encap_enqueue_pkt(v, &x->p, now);
	}
	s = htoe_encap_enqueue(v, &x->d, now);
	if (!s)
		return -EAGAIN;
	ht_bytes_set_addr(s->bytes, s->len, addr);
	return 0;
}

/* A request from the local requester. */
static int local_request(struct htoe *b, struct lin *x, uint64_t now)
{
	const struct ht_desc *d = &x->d;
	enum ht_vc vc = (enum ht_vc)d->vc;
	struct htoe_map_result m;
	struct htoe_vl *v;
	uint64_t len;

	switch (d->kind) {
	case HT_K_FLUSH:
		return local_flush(b, lin_pkt(x), now);
	case HT_K_FENCE:
	case HT_K_BROADCAST:
		/* consumed: not forwarded across Ethernet (docs/ht-model.md) */
		b->st.consumed++;
		return 0;
	default:
		break;
	}

	len = htoe_access_len(d);
	switch (htoe_map_lookup_hint(b->map, d->addr, len, &m, &b->map_hint)) {
	case HTOE_MAP_LOCAL:
		if (!htoe_lq_room(b, vc))
			return -EAGAIN;
		lin_pkt(x)->addr = m.addr;
		b->st.local_loopback++;
		return htoe_lq_push_pkt(b, &x->p);
	case HTOE_MAP_REMOTE:
		v = htoe_vl_by_node(b, m.node);
		if (v)
			break;
		/* a node without a VL is unreachable */
		__attribute__((fallthrough));
	default:
		b->st.master_aborts++;
		if (vc == HT_VC_P)
			return 0; /* posted: nobody to tell; counted */
		return htoe_answer_local(b, lin_pkt(x), HT_RSP_MASTER_ABORT) == 0 ? 0 : -EAGAIN;
	}

	if (!htoe_encap_room(v, vc) ||
	    (vc == HT_VC_NP && htoe_outstanding_busy(&b->out, d->unitid, d->srctag))) {
		if (vl_stalled(b, v, now) != 0)
			return -EAGAIN;
		if (vc == HT_VC_P) {
			/* taken and dropped: its requester must hear of it */
			v->st.posted_refused++;
			htoe_report_lost(b, v->node, d->addr, len);
			return 0;
		}
		v->st.poisoned++;
		return htoe_answer_local(b, lin_pkt(x), HT_RSP_TARGET_ABORT) == 0 ? 0 : -EAGAIN;
	}
	v->stall_since = 0;

	if (vc == HT_VC_NP) {
		struct htoe_np_info np;

		if (htoe_np_info_from_desc(d, &np) != 0 ||
		    htoe_outstanding_add_span(&b->out, d->unitid, d->srctag, htoe_vl_index(b, v),
					      v->epoch, &np, d->addr, (uint32_t)len, now) != 0)
			return -EINVAL;
	}
	if (enqueue_request(v, x, m.addr, now) != 0) {
		if (vc == HT_VC_NP)
			htoe_outstanding_complete(&b->out, htoe_vl_index(b, v), d->unitid,
						  d->srctag, NULL);
		return -EINVAL;
	}
	return 0;
}

/* A response from the local target to a remote request (bridge UnitID):
 * back to the VL it came from, with the remote requester's tags. */
static int local_response(struct htoe *b, const struct ht_desc *d, uint64_t now)
{
	const struct htoe_pending_entry *pe = htoe_tagremap_peek(&b->tags, d->unitid, d->srctag);
	struct htoe_vl *v;

	if (!pe) {
		b->st.unexpected_responses++;
		return -EINVAL;
	}
	v = &b->vl[pe->vl];
	if (pe->epoch == v->epoch && v->state == HTOE_VL_UP) {
		struct htoe_slot *s = htoe_encap_enqueue(v, d, now);

		if (!s)
			return -EAGAIN; /* the tag stays pending until it fits */
		ht_bytes_set_tag(s->bytes, s->len, pe->orig_unitid, pe->orig_srctag);
	} else {
		/* the VL was reset since: the remote requester was poisoned */
		v->st.late_responses++;
	}
	htoe_tagremap_complete(&b->tags, d->unitid, d->srctag, NULL);
	return 0;
}

static bool bridge_unitid(const struct htoe *b, uint8_t unitid)
{
	return unitid >= b->cfg.unitid_base &&
	       unitid < b->cfg.unitid_base + b->cfg.n_unitids;
}

static int local_input(struct htoe *b, struct lin *x, uint64_t now)
{
	int n;

	switch (x->d.kind) {
	case HT_K_NOP:
	case HT_K_EXTFC:
		b->st.consumed++;
		return 0;
	case HT_K_SYNC:
		b->st.local_sync++;
		return 0;
	case HT_K_RDRESPONSE:
	case HT_K_TGTDONE:
		if (!bridge_unitid(b, x->d.unitid)) {
			b->st.unexpected_responses++;
			return -EINVAL;
		}
		n = local_response(b, &x->d, now);
		break;
	default:
		n = local_request(b, x, now);
		break;
	}
	if (n == 0)
		b->st.local_in++;
	return n;
}

int htoe_local_input(struct htoe *b, const uint8_t *pkt, size_t len, uint64_t now)
{
	struct lin x;
	int n = ht_desc_parse(pkt, len, &x.d);

	if (n < 0 || (size_t)n != len) {
		b->st.local_malformed++;
		return -EINVAL;
	}
	x.decoded = false;
	return local_input(b, &x, now);
}

int htoe_local_input_desc(struct htoe *b, const struct ht_desc *d, uint64_t now)
{
	struct lin x;

	x.d = *d;
	x.decoded = false;
	return local_input(b, &x, now);
}

unsigned htoe_local_input_run(struct htoe *b, const struct ht_desc *d, const uint8_t *data,
			      unsigned n, uint64_t now)
{
	struct htoe_map_result m;
	struct htoe_vl *v;
	unsigned k;

	/* posted dword WrSized with a 40-bit address, its data right after
	 * the control packet: anything else goes the way of one packet */
	if (!n || d->kind != HT_K_WRSIZED || d->vc != HT_VC_P || d->ctl ||
	    !(d->cmd & HT_CMD_BIT_DWORD) || !d->data_len || d->data_off != HTOE_SIZED_CTL_LEN ||
	    d->data_off + d->data_len != d->len || n > UINT32_MAX / d->data_len)
		return 0;
	if (htoe_map_lookup_hint(b->map, d->addr, (uint64_t)n * d->data_len, &m, &b->map_hint) !=
		    HTOE_MAP_REMOTE ||
	    !(v = htoe_vl_by_node(b, m.node)) ||
	    m.addr + (uint64_t)n * d->data_len - 1 > HT_ADDR_MAX_40)
		return 0;
	k = htoe_encap_enqueue_run(v, d, data, m.addr, n, now);
	if (k) {
		v->stall_since = 0;
		b->st.local_in += k;
	}
	return k;
}

unsigned htoe_local_input_reads(struct htoe *b, const struct ht_desc *d,
				const uint8_t (*tags)[2], unsigned n, uint64_t now)
{
	uint64_t len = htoe_access_len(d);
	struct htoe_map_result m;
	struct htoe_np_info np;
	struct htoe_vl *v;
	unsigned k;

	/* dword RdSized with a 40-bit address: anything else goes the way
	 * of one packet */
	if (!n || d->kind != HT_K_RDSIZED || d->ctl || !(d->cmd & HT_CMD_BIT_DWORD) || !len ||
	    d->len != HTOE_SIZED_CTL_LEN ||
	    n > UINT32_MAX / len || htoe_np_info_from_desc(d, &np) != 0)
		return 0;
	if (htoe_map_lookup_hint(b->map, d->addr, n * len, &m, &b->map_hint) != HTOE_MAP_REMOTE ||
	    !(v = htoe_vl_by_node(b, m.node)) || m.addr + n * len - 1 > HT_ADDR_MAX_40)
		return 0;
	for (k = 0; k < n; k++) {
		uint8_t unitid = tags[k][0], srctag = tags[k][1];
		struct htoe_slot *s;

		/* a tag already outstanding, or no room: the one-packet path
		 * decides (it poisons a duplicate, pushes back a full queue) */
		if (!htoe_encap_room(v, HT_VC_NP) || htoe_outstanding_busy(&b->out, unitid, srctag) ||
		    htoe_outstanding_add_span(&b->out, unitid, srctag, htoe_vl_index(b, v), v->epoch,
					      &np, d->addr + k * len, (uint32_t)len, now) != 0)
			break;
		s = htoe_encap_enqueue_like(v, d, NULL, m.addr + k * len, now);
		ht_bytes_set_tag(s->bytes, s->len, unitid, srctag);
	}
	if (k) {
		v->stall_since = 0;
		b->st.local_in += k;
	}
	return k;
}

int htoe_local_input_pkt(struct htoe *b, const struct ht_pkt *pkt, uint64_t now)
{
	uint8_t raw[HT_MAX_PKT_LEN];
	struct lin x;
	int n = ht_encode(pkt, raw, sizeof(raw));

	if (n < 0 || ht_desc_parse(raw, (size_t)n, &x.d) != n) {
		b->st.local_malformed++;
		return -EINVAL;
	}
	/* what ht_decode(raw) gives: the encoder took only a canonical packet,
	 * and emits the address prefix for a long address even without addrext */
	x.p = *pkt;
	if (x.p.addr > HT_ADDR_MAX_40)
		x.p.addrext = 1;
	x.decoded = true;
	return local_input(b, &x, now);
}

/* ------------------------------------------------------- control messages */

int htoe_ctrl_send(struct htoe *b, uint16_t node, const void *msg, size_t len)
{
	struct htoe_vl *v = htoe_vl_by_node(b, node);
	struct htoe_ctrlq *q;
	struct htoe_ctrl_msg *m;

	if (!v)
		return -ENOENT;
	if (len == 0 || len > HTOE_CTRL_MAX ||
	    len + HTOE_CTRL_TRAILER_LEN > HTOE_MAX_PAYLOAD(b->cfg.mtu))
		return -EMSGSIZE;
	q = &v->ctrl_tx;
	if (q->tail - q->head == HTOE_CTRL_QUEUE) {
		b->st.ctrl_refused++;
		v->st.ctrl_refused++;
		return -EAGAIN;
	}
	m = &q->m[q->tail % HTOE_CTRL_QUEUE];
	m->node = node;
	m->len = (uint16_t)len;
	memcpy(m->data, msg, len);
	q->tail++;
	b->ctl_due |= v->active_bit;
	htoe_vl_wake(v);
	return 0;
}

unsigned htoe_ctrl_queued(const struct htoe *b)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n_vl; i++)
		n += b->vl[i].ctrl_tx.tail - b->vl[i].ctrl_tx.head;
	return n;
}

unsigned htoe_leave(struct htoe *b, unsigned copies)
{
	static const uint8_t msg[HTOE_LEAVE_LEN] = { HTOE_LEAVE_PROTO, HTOE_LEAVE_VERSION };
	unsigned n = 0;

	for (unsigned i = 0; i < b->n_vl; i++)
		for (unsigned c = 0; b->vl[i].state == HTOE_VL_UP && c < copies; c++)
			n += htoe_ctrl_send(b, b->vl[i].node, msg, sizeof(msg)) == 0;
	return n;
}

bool htoe_vl_peer_left(const struct htoe *b, uint16_t node)
{
	const struct htoe_vl *v = htoe_vl_by_node(b, node);

	return v && v->peer_left;
}

/* A CTRL frame's payload: the message, then the sender's incarnation. A
 * LEAVE is the bridge's own (its ack was taken with the header's); any
 * other message is queued for the protocol above. */
static int ctrl_input(struct htoe *b, struct htoe_vl *v, const uint8_t *p, size_t plen)
{
	struct htoe_ctrlq *q = &b->ctrl_rx;
	struct htoe_ctrl_msg *m;
	size_t len = plen - HTOE_CTRL_TRAILER_LEN; /* the parser checked plen >= 4 */

	if (len == 0 || len > HTOE_CTRL_MAX)
		return -HTOE_DROP_LENGTH;
	if (p[0] == HTOE_LEAVE_PROTO) {
		if (len != HTOE_LEAVE_LEN || p[1] != HTOE_LEAVE_VERSION)
			return -HTOE_DROP_LENGTH;
		v->peer_left = true;
		b->st.ctrl_rcvd++;
		return 0;
	}
	if (q->tail - q->head == HTOE_CTRL_QUEUE) {
		b->st.ctrl_overflow++;
		return 0;
	}
	m = &q->m[q->tail % HTOE_CTRL_QUEUE];
	m->node = v->node;
	m->len = (uint16_t)len;
	memcpy(m->data, p, len);
	q->tail++;
	b->st.ctrl_rcvd++;
	return 0;
}

int htoe_ctrl_recv(struct htoe *b, uint16_t *node, void *buf, size_t cap)
{
	struct htoe_ctrlq *q = &b->ctrl_rx;
	const struct htoe_ctrl_msg *m;

	if (q->head == q->tail)
		return 0;
	m = &q->m[q->head % HTOE_CTRL_QUEUE];
	if (m->len > cap)
		return -ENOSPC;
	memcpy(buf, m->data, m->len);
	*node = m->node;
	q->head++;
	return m->len;
}

/* ------------------------------------------------------------ frame input */

/* The laps a frame from its VL's peer must have been sealed with (the
 * frame's header as parsed so far; docs/wire-format.md, "Sequence laps"):
 * its seq taken near the next one we expect, its ack near our next seq.
 * prev: one lap earlier for seq (with the ack's lap or one earlier), or for
 * the ack of a frame without seq. RESET/RESET_ACK, frames for no VL and
 * frames of another epoch have none (a late frame of an old epoch sent
 * after its first lap fails the CRC); frames for another node, dropped for
 * that, cannot be checked (their laps are the sender's business). */
static uint64_t frame_lap(void *arg, const struct htoe_hdr *h, uint64_t prev[2])
{
	struct htoe *b = arg;
	struct htoe_vl *v;
	uint32_t s = 0, a;
	uint64_t lap;

	if (h->ftype == HTOE_FT_RESET || h->ftype == HTOE_FT_RESET_ACK ||
	    !(v = htoe_vl_by_node(b, h->src_node)))
		lap = 0;
	else if (h->dst_node != b->cfg.node_id)
		return HTOE_LAP_UNCHECKED;
	else if (h->epoch != v->epoch)
		lap = 0;
	else {
		a = htoe_retry_tx_ack_lap(&v->rt, h->ack);
		if (h->ftype == HTOE_FT_DATA)
			s = htoe_retry_rx_lap(&v->rt, h->seq);
		lap = (uint64_t)s << 32 | a;
	}
	if (prev) {
		a = (uint32_t)lap;
		s = (uint32_t)(lap >> 32);
		prev[0] = s ? (uint64_t)(s - 1) << 32 | a : a ? lap - 1 : lap;
		prev[1] = s && a ? prev[0] - 1 : prev[0];
	}
	return lap;
}

int htoe_frame_input(struct htoe *b, const uint8_t *frame, size_t len, uint64_t now)
{
	struct htoe_hdr h;
	const uint8_t *payload = NULL;
	struct htoe_vl *v;
	int r = htoe_frame_parse_lap(frame, len, b->cfg.mtu, &h, &payload, b->rx_pk, frame_lap, b);

	if (r < 0)
		goto drop_global;
	if (h.dst_node != b->cfg.node_id) {
		r = -HTOE_DROP_NOT_FOR_US;
		goto drop_global;
	}
	if (((h.ftype == HTOE_FT_RESET || h.ftype == HTOE_FT_RESET_ACK) &&
	     h.payload_len != HTOE_RESET_PAYLOAD_LEN) ||
	    (h.ftype == HTOE_FT_CTRL && h.payload_len < HTOE_CTRL_TRAILER_LEN)) {
		r = -HTOE_DROP_LENGTH;
		goto drop_global;
	}
	v = htoe_vl_by_node(b, h.src_node);
	if (!v) {
		r = -HTOE_DROP_UNKNOWN_PEER;
		goto drop_global;
	}
	/* Source binding: a frame claiming to be from node N must come from
	 * N's MAC (peer table), else it changes nothing (not even the VL's
	 * counters: it is not N's frame). */
	if (memcmp(h.src, v->mac, 6) != 0) {
		r = -HTOE_DROP_SRC_MAC;
		goto drop_global;
	}
	v->st.rx_bytes += len;
	htoe_vl_wake(v);

	if (h.ftype == HTOE_FT_RESET || h.ftype == HTOE_FT_RESET_ACK) {
		r = htoe_reset_input(b, v, &h, payload, now);
		v->peer_left &= r < 0;
	} else if (h.epoch != v->epoch) {
		r = -HTOE_DROP_EPOCH;
	} else if (v->state != HTOE_VL_UP) {
		/* Our epoch proposal, but no RESET_ACK with our nonce yet:
		 * the handshake decides (a lost RESET_ACK is answered again
		 * when the RESET is retransmitted). */
		r = -HTOE_DROP_EPOCH;
	} else if (h.ftype == HTOE_FT_CTRL &&
		   htoe_peer_incarnation(b, v, htoe_get_be32(payload + h.payload_len -
							      HTOE_CTRL_TRAILER_LEN), now) != 0) {
		/* a retired incarnation, or a new one: the VL was cold-reset */
		r = -HTOE_DROP_INCARNATION;
	} else {
		/* acks in the order of their frames */
		htoe_encap_ack_settle(v);
		/* A DATA frame's ack waits until the frame it lets leave (a
		 * read's response, the next request) has left: on a round
		 * trip, applying it first delays that frame at both ends. An
		 * ACK or NAK is applied at once (SACK blocks, the peer's word
		 * on a gap). */
		if (h.ftype == HTOE_FT_DATA)
			htoe_encap_ack_hold(v, &h, now);
		else
			htoe_encap_on_ack(v, &h, payload, now);
		switch (h.ftype) {
		case HTOE_FT_DATA:
			r = htoe_decap_input(b, v, &h, payload, b->rx_pk, now);
			v->peer_left &= r < 0; /* it works on: not leaving */
			break;
		case HTOE_FT_CTRL:
			r = ctrl_input(b, v, payload, h.payload_len);
			break;
		default:
			r = 0;
			break;
		}
	}
	if (r < 0)
		v->st.drops[-r]++;
	return r;
drop_global:
	b->st.drops[-r]++;
	return r;
}

/* ----------------------------------------------------------- frame output */

int htoe_frame_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now,
		      unsigned flags)
{
	if (cap < (size_t)b->cfg.mtu + HTOE_L2_MAX)
		return -ENOSPC;
	return htoe_encap_output(b, buf, cap, now, flags);
}

/* ------------------------------------------------------------------ timers */

/* A VL idle until a timer is parked rather than kept in the active set:
 * the polls until then visit neither it nor its memory, and the timers, the
 * next deadline and framing cost what the VLs with work cost, not what the
 * configured peers do. A credit-starved VL stays active (its starved time
 * is summed at every expiry check), and so does a VL framed without
 * HTOE_TX_FLUSH (a partial frame it holds leaves at the next call with the
 * flag, not only at its flush time). */
void htoe_vl_idle(struct htoe *b, struct htoe_vl *v, uint64_t now, bool may_park)
{
	uint64_t d = htoe_encap_deadline(b, v);

	b->parked &= ~v->active_bit; /* an earlier park_at is stale */
	if (d != UINT64_MAX && !may_park)
		return;
	if (d != UINT64_MAX && d > now) {
		for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
			if (v->ctx.blocked[vc])
				return;
	} else if (d != UINT64_MAX) {
		return; /* due now */
	}
	b->active &= ~v->active_bit;
	if (d == UINT64_MAX)
		return;
	b->parked |= v->active_bit;
	b->park_at[v - b->vl] = d;
	if (d < b->parked_min)
		b->parked_min = d;
}

/* The parked VLs whose time came (or that were woken meanwhile) back to the
 * active set; parked_min exact again. */
static void unpark_due(struct htoe *b, uint64_t now)
{
	uint64_t min = UINT64_MAX;

	for (uint64_t m = b->parked; m; m &= m - 1) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		uint64_t bit = 1ull << i;

		if (b->park_at[i] <= now || (b->active & bit)) {
			b->parked &= ~bit;
			b->active |= bit;
		} else if (b->park_at[i] < min) {
			min = b->park_at[i];
		}
	}
	b->parked_min = min;
}

void htoe_handle_expiry(struct htoe *b, uint64_t now)
{
	if (now >= b->parked_min)
		unpark_due(b, now);
	/* a VL with a timer due is in the active set */
	for (uint64_t m = b->active; m; m &= m - 1) {
		struct htoe_vl *v = &b->vl[__builtin_ctzll(m)];

		if (v->state != HTOE_VL_UP)
			continue;
		htoe_encap_ack_settle(v); /* the timers as the peer's frames left them */
		if (now >= htoe_retry_next_deadline(&v->rt))
			b->touched |= v->active_bit; /* a timer fires: the VL changes */
		if (htoe_retry_tx_timer(&v->rt, now) == HTOE_RETRY_LIMIT)
			htoe_reset_begin(b, v, false, now);
		v->st.credit_starved_ns = 0;
		for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
			v->st.credit_starved_ns +=
				htoe_credit_tx_starved_ns(&v->ctx, (enum ht_vc)vc, now);
	}
	htoe_poison_expired(b, now);
}

uint64_t htoe_next_deadline(const struct htoe *b)
{
	uint64_t d = htoe_outstanding_next_deadline(&b->out);

	for (uint64_t m = b->active; m; m &= m - 1) {
		uint64_t t = htoe_encap_deadline(b, &b->vl[__builtin_ctzll(m)]);

		if (t < d)
			d = t;
	}
	if (b->parked_min < d) /* the parked VLs not woken since */
		for (uint64_t m = b->parked & ~b->active; m; m &= m - 1) {
			uint64_t t = b->park_at[__builtin_ctzll(m)];

			if (t < d)
				d = t;
		}
	return d;
}

/* ------------------------------------------------------------------- stats */

const struct htoe_stats *htoe_get_stats(const struct htoe *b)
{
	return &b->st;
}

const struct htoe_vl_stats *htoe_get_vl_stats(const struct htoe *b, uint16_t node)
{
	struct htoe_vl *v = htoe_vl_by_node(b, node);
	const struct htoe_retry_stats *rs;

	if (!v)
		return NULL;
	/* The counters of the retry layer are its own, counted once there
	 * (htoe_retry_stats) and read here: not kept twice. */
	rs = &v->rt.stats;
	v->st.retransmits = rs->retransmitted;
	v->st.timeouts = rs->timeouts;
	v->st.tail_probes = rs->tail_probes;
	v->st.naks_sent = rs->naks_sent;
	v->st.sacks_sent = rs->sacks_sent;
	v->st.rx_held = rs->held;
	v->st.forced_releases = v->crx.forced_releases;
	v->st.srtt_ns = htoe_retry_srtt(&v->rt);
	v->st.rttvar_ns = htoe_retry_rttvar(&v->rt);
	v->st.rto_ns = htoe_retry_tx_rto(&v->rt);
	return &v->st;
}

unsigned htoe_n_vls(const struct htoe *b)
{
	return b->n_vl;
}

uint16_t htoe_vl_node(const struct htoe *b, unsigned idx)
{
	return idx < b->n_vl ? b->vl[idx].node : 0;
}

uint8_t htoe_vl_epoch(const struct htoe *b, uint16_t node)
{
	const struct htoe_vl *v = htoe_vl_by_node(b, node);

	return v ? v->epoch : 0;
}

bool htoe_vl_peer_incarnation(const struct htoe *b, uint16_t node, uint32_t *inc)
{
	const struct htoe_vl *v = htoe_vl_by_node(b, node);

	if (!v || !v->peer_inc_known)
		return false;
	*inc = v->peer_inc;
	return true;
}

bool htoe_vl_is_up(const struct htoe *b, uint16_t node)
{
	const struct htoe_vl *v = htoe_vl_by_node(b, node);

	return v && v->state == HTOE_VL_UP;
}

unsigned htoe_busy(const struct htoe *b)
{
	unsigned n = htoe_outstanding_count(&b->out) + htoe_tagremap_in_use(&b->tags) +
		     htoe_local_pending(b);

	for (unsigned i = 0; i < b->n_vl; i++)
		for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
			n += vcq_len(&b->vl[i].q[vc]);
	return n;
}

unsigned htoe_local_pending(const struct htoe *b)
{
	unsigned n = 0;

	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		n += b->lq[vc].tail - b->lq[vc].head;
	return n;
}

/* The checks of the VLs in `vls` (a set of VL bits) and of what the bridge
 * shares between them. */
static int check_vls(const struct htoe *b, uint64_t vls, char *err, size_t errlen)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		const struct htoe_lq *q = &b->lq[vc];

		if (q->head - q->hold > q->tail - q->hold || q->tail - q->hold > q->mask + 1) {
			snprintf(err, errlen, "local queue of VC %u: hold %u head %u tail %u of %u",
				 vc, q->hold, q->head, q->tail, q->mask + 1);
			return -EINVAL;
		}
	}
	if (b->n_vl == 0)
		return 0;
	/* the local queue's entries that hold a receive buffer, per VL */
	uint32_t lq_held[64][HT_VC_COUNT][2] = { { { 0 } } };

	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		for (uint32_t i = b->lq[vc].head; i != b->lq[vc].tail; i++) {
			const struct htoe_lent *e = &b->lq[vc].e[i & b->lq[vc].mask];

			if (e->pooled && e->vl < 64 && (vls >> e->vl & 1)) {
				lq_held[e->vl][vc][0]++;
				lq_held[e->vl][vc][1] += e->has_data;
			}
		}
	for (uint64_t m = vls; m; m &= m - 1) {
		const struct htoe_vl *v = &b->vl[__builtin_ctzll(m)];

		/* a VL out of the active set has nothing to do, or is parked no
		 * later than its next timer */
		uint64_t vd = htoe_encap_deadline(b, v), at = b->park_at[v - b->vl];

		if (!(b->active & v->active_bit) && vd != UINT64_MAX &&
		    (!(b->parked & v->active_bit) || at > vd || b->parked_min > at)) {
			snprintf(err, errlen, "VL %u: has work (deadline %" PRIu64 ") but is not "
				 "in the active set nor parked until then", v->node, vd);
			return -EINVAL;
		}
		if ((v->ack_reset || v->state != HTOE_VL_UP || v->ctrl_tx.head != v->ctrl_tx.tail) &&
		    !(b->ctl_due & v->active_bit)) {
			snprintf(err, errlen, "VL %u: a reset frame or control message to send, "
				 "but not marked for the control pass", v->node);
			return -EINVAL;
		}
		if (htoe_retry_check(&v->rt, err, errlen) || htoe_rob_check(&v->rob, err, errlen))
			return -EINVAL;
		if (v->rob.frames != htoe_retry_rx_held(&v->rt)) {
			snprintf(err, errlen, "VL %u: %u frames stored, %u held", v->node,
				 v->rob.frames, htoe_retry_rx_held(&v->rt));
			return -EINVAL;
		}
		/* the receive buffers in use are those of the pooled held
		 * frames and of the pooled entries queued for the local side:
		 * a buffer released twice or never shows here */
		for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
			const uint32_t *q = lq_held[v - b->vl][vc];

			if (htoe_rob_pooled(&v->rob, vc, false) + q[0] !=
				    htoe_credit_rx_held(&v->crx, (enum ht_vc)vc, false) ||
			    htoe_rob_pooled(&v->rob, vc, true) + q[1] !=
				    htoe_credit_rx_held(&v->crx, (enum ht_vc)vc, true)) {
				snprintf(err, errlen,
					 "VL %u VC %u: %u held packets (%u data) and %u (%u) queued "
					 "for the local side but %u (%u) buffers in use", v->node, vc,
					 htoe_rob_pooled(&v->rob, vc, false),
					 htoe_rob_pooled(&v->rob, vc, true), q[0], q[1],
					 htoe_credit_rx_held(&v->crx, (enum ht_vc)vc, false),
					 htoe_credit_rx_held(&v->crx, (enum ht_vc)vc, true));
				return -EINVAL;
			}
		}
	}
	return 0;
}

static uint64_t all_vls(const struct htoe *b)
{
	return b->n_vl >= 64 ? ~0ull : (1ull << b->n_vl) - 1;
}

int htoe_check_invariants(const struct htoe *b, char *err, size_t errlen)
{
	return check_vls(b, all_vls(b), err, errlen) ||
	       (b->n_vl && htoe_credit_check(&b->pool, &b->vl[0].crx, b->n_vl,
					     sizeof(struct htoe_vl), err, errlen)) ? -EINVAL : 0;
}

int htoe_check_invariants_changed(struct htoe *b, char *err, size_t errlen)
{
	uint64_t vls = b->touched & all_vls(b);

	b->touched = 0;
	return check_vls(b, vls, err, errlen) ||
	       (b->n_vl && htoe_credit_check_changed(&b->pool, &b->vl[0].crx, b->n_vl,
						     sizeof(struct htoe_vl), vls, err,
						     errlen)) ? -EINVAL : 0;
}

int htoe_vl_reset(struct htoe *b, uint16_t node, bool cold, uint64_t now)
{
	struct htoe_vl *v = htoe_vl_by_node(b, node);

	if (!v)
		return -ENOENT;
	htoe_reset_begin(b, v, cold, now);
	return 0;
}
