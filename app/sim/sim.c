/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-sim core. See sim.h and docs/simulator.md.
 *
 * Each node i (node id i+1) exports mem_per_node bytes at local HT address
 * SIM_MEM_BASE. Global address of node i's memory: (i+1) << 32. The memory
 * of every node is cut into `nodes` slices: slice (s, d) of node d belongs to
 * source node s, and only s's workload for d touches it. So every byte has
 * one writer, and a per-slice shadow is an exact oracle (ht_workload).
 *
 * Oracle:
 *  - posted writes: a FIFO per slice of (offset, mask, data) hashes in issue
 *    order; the target must apply exactly that sequence (lost, duplicated,
 *    misordered otherwise);
 *  - non-posted: every request answered exactly once (requester tag table);
 *  - read and atomic results, and at the end the memory image, equal the
 *    shadow;
 *  - error responses only on slices where a VL reset or a request timeout
 *    happened. A reset reports what it loses (the bridge's loss events:
 *    posted writes and requests in flight, by address): the slice's
 *    workload taints exactly those bytes, and every other result and byte
 *    is still judged; its posted writes may then be missing from the FIFO,
 *    but none may be applied twice or out of order. A request timeout (or
 *    a restart) makes the slice "tainted": its later results are not
 *    judged, since a poisoned write may or may not have been applied;
 *  - credits conserved (htoe_check_invariants) after every step;
 *  - progress: some transaction completes within stall_bound_ns of
 *    virtual time while work remains (0: a bound that follows the timers
 *    in use, progress_bound());
 *  - liveness (cfg.liveness_ns): every NP request answered without error
 *    within liveness_ns, no VL reset.
 * Impairment "node not polled" (cfg.stall_prob): see node_turn().
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>

#include "htmodel/ht_rand.h"
#include "htmodel/ht_target.h"
#include "htmodel/ht_workload.h"
#include "impair_model.h"
#include "time_heap.h"
#include "node/node.h"
#include "sim.h"

#define SIM_MEM_BASE     0x100000ull
#define SIM_REQ_UNITIDS  2          /* requester UnitIDs 1, 2: 64 tags */
#define SIM_BRIDGE_UBASE 8
#define SIM_BRIDGE_UNITS 4          /* pending table: 128 tags */
#define SIM_FRAME_CAP    (HTOE_FRAME_MAX)
#define SIM_RX_BURST     32         /* frames taken from an RX ring per poll */
#define SIM_RX_RING      1024       /* default RX ring (a NIC's descriptors) */

uint64_t sim_mem_default(unsigned nodes)
{
	uint64_t unit = 64ull * (nodes ? nodes : 1);

	return (64 * 1024 + unit - 1) / unit * unit;
}

void sim_cfg_default(struct sim_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->nodes = 2;
	c->retry_mode = -1;
	c->seed = 1;
	c->transactions = 10000;
	c->mem_per_node = sim_mem_default(c->nodes);
	c->burst_len = 4;
	c->reorder_ns = 50000;
	c->delay_ns = 1000;
	c->link_bps = 10000000000ull;
	c->restart_node = -1;
	c->reset_node = -1;
	c->rx_ring = SIM_RX_RING;
	c->progress_every = 100000;
}

/* ------------------------------------------------------------ frames */

/* A frame in flight to node dst, in one allocation; the switch's frames in
 * flight wait in a time_heap by their arrival time. */
struct fev {
	unsigned dst;
	uint16_t len;
	uint8_t data[];
};

/* ----------------------------------------------------------------- state */

struct slice {
	struct ht_workload wl;
	uint8_t *shadow, *busy;
	uint64_t *taint;
	uint64_t gbase;        /* global address */
	uint64_t lbase;        /* address at the destination node */
	uint64_t *fifo;        /* posted-write hashes, issue order */
	uint32_t fifo_mask, fifo_head, fifo_tail;
	bool tainted;
	bool reset;            /* its VL was reset: posted writes may be missing */
	bool active;           /* a workload exists (false after its node restarted until rebuilt) */
};

struct node {
	unsigned idx;
	uint16_t id;
	struct htoe_map map;
	struct htnode core;    /* bridge, requester, target, response queue (app/node) */
	uint8_t *mem;
	struct slice *sl;      /* [dst] */
	struct ht_workload **wlp; /* [dst]: &sl[dst].wl once active */
	uint64_t port_busy;
	/* the switch's output port towards this node (cfg.egress_buf): FIFO
	 * of the frames it holds, by the time each has left, and their bytes */
	struct { uint64_t done; uint32_t len; } *egq;
	unsigned egq_head, egq_n, egq_cap;
	uint64_t egq_bytes, egress_busy;
	unsigned incarnation;
	struct impair_link link[64]; /* impairment state of the link to each node */
	uint64_t seen_resets[64];   /* VL reset counter snapshot, by peer index */
	uint64_t seen_vl_resets;    /* the bridge's total of them at the last look */
	uint64_t issued_at[HT_REQ_MAX_UNITIDS + 1][HT_REQ_TAGS]; /* NP request issue time */
	uint64_t stall_until;       /* not polled before this (stall impairment) */
	struct fev **rxq;           /* RX ring: frames that arrived while stalled */
	unsigned rxq_head, rxq_n;
	uint64_t wake_at;           /* its next deadline (or the end of its stall) */
	unsigned hpos;              /* its place in the deadline heap */
};

struct sim {
	const struct sim_cfg *cfg;
	struct sim_result *res;
	struct ht_rand rng;
	struct impair_model impair;  /* the switch's impairments (cfg) */
	struct node *n;
	struct time_heap heap;       /* frames in flight, by arrival time */
	/* the driver visits only nodes with work: `due` holds the nodes to
	 * poll at this time (a frame arrived, a scenario event), the node heap
	 * orders all nodes by their next deadline */
	uint64_t due;
	unsigned nheap[64];
	unsigned done_from;         /* all_done(): where the last scan stopped */
	uint64_t now, last_progress;
	uint64_t progress_bound;  /* no progress for longer: a deadlock */
	uint64_t slice_size;
	uint64_t completed_at_progress;
	pcap_t *pcap;
	pcap_dumper_t *dump;
	uint8_t buf[SIM_FRAME_CAP];
};

/* The nodes by wake_at, smallest first (index order among equals, so that
 * the run does not depend on the heap's shape): a node whose deadline or
 * stall end changed is moved to its place. */
static bool node_before(const struct sim *s, unsigned a, unsigned b)
{
	return s->n[a].wake_at < s->n[b].wake_at ||
	       (s->n[a].wake_at == s->n[b].wake_at && a < b);
}

static void nheap_set(struct sim *s, unsigned pos, unsigned node)
{
	s->nheap[pos] = node;
	s->n[node].hpos = pos;
}

static void nheap_fix(struct sim *s, unsigned node)
{
	unsigned n = s->cfg->nodes, i = s->n[node].hpos;

	while (i > 0 && node_before(s, node, s->nheap[(i - 1) / 2])) {
		nheap_set(s, i, s->nheap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = node;

		if (l < n && node_before(s, s->nheap[l], m))
			m = s->nheap[l];
		if (r < n && node_before(s, s->nheap[r], m))
			m = s->nheap[r];
		if (m == node)
			break;
		unsigned mi = s->n[m].hpos;
		nheap_set(s, i, m);
		i = mi;
	}
	nheap_set(s, i, node);
}

static void violation(struct sim *s, const char *what, unsigned src, unsigned dst)
{
	s->res->violations++;
	if (!s->res->first_violation[0])
		snprintf(s->res->first_violation, sizeof(s->res->first_violation),
			 "%.160s: slice src %u dst %u at t=%" PRIu64 " ns", what, src + 1,
			 dst + 1, s->now);
}

static uint64_t hash_write(uint64_t off, uint32_t mask, const uint8_t *data, size_t len)
{
	uint64_t h = 1469598103934665603ull;

	h = (h ^ off) * 1099511628211ull;
	h = (h ^ mask) * 1099511628211ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	return h;
}

static struct slice *slice_of(struct sim *s, unsigned src, unsigned dst)
{
	return &s->n[src].sl[dst];
}

/* ----------------------------------------------------------------- setup */

static const struct htnode_hooks sim_hooks;

static uint64_t slice_ops(const struct sim *s, unsigned src, unsigned dst)
{
	unsigned k_in = s->cfg->incast;

	if (k_in) /* senders 2..k_in+1 share the transactions, to node 1 only */
		return dst != 0 || src < 1 || src > k_in ? 0 :
		       s->cfg->transactions / k_in + (src - 1 < s->cfg->transactions % k_in);
	uint64_t n = (uint64_t)s->cfg->nodes * s->cfg->nodes;
	uint64_t k = (uint64_t)src * s->cfg->nodes + dst;

	return s->cfg->transactions / n + (k < s->cfg->transactions % n);
}

static int slice_init_wl(struct sim *s, unsigned src, unsigned dst, uint64_t ops,
			 uint64_t seed)
{
	struct slice *sl = slice_of(s, src, dst);
	struct ht_wl_cfg wc;

	ht_wl_cfg_default(&wc);
	for (unsigned i = 0; i < HT_OP__COUNT; i++)
		if (s->cfg->weight[i]) {
			memcpy(wc.weight, s->cfg->weight, sizeof(wc.weight));
			break;
		}
	if (s->cfg->max_inflight)
		wc.max_inflight = s->cfg->max_inflight;
	wc.seed = seed;
	wc.base = sl->gbase;
	wc.size = s->slice_size;
	wc.n_ops = ops;
	wc.shadow = sl->shadow;
	wc.busy = sl->busy;
	wc.taint = sl->taint;
	wc.sweep = ops > 0 && !s->cfg->incast;
	if (s->cfg->incast) { /* posted 64-byte writes only */
		memset(wc.weight, 0, sizeof(wc.weight));
		wc.weight[HT_OP_WRITE_P] = 1;
		wc.fixed_len = 64;
	}
	memset(sl->busy, 0, s->slice_size / 64);
	sl->active = true;
	s->n[src].wlp[dst] = &sl->wl;
	return ht_wl_init(&sl->wl, &wc);
}

/* The longest a run may legitimately complete nothing while work remains,
 * with these timers: a request is answered (with an error) after
 * np_timeout, a VL refusing input is reset after stall_timeout, a silent
 * peer is given up after at most retry_limit + 1 RTOs of rto_max. Twice
 * the largest, so that reaching it means a deadlock, not slow timers. */
static uint64_t progress_bound(const struct htoe_config *c)
{
	uint64_t b = c->np_timeout_ns, dead = c->rto_max_ns * ((uint64_t)c->retry_limit + 1);

	if (c->stall_timeout_ns > b)
		b = c->stall_timeout_ns;
	if (dead / ((uint64_t)c->retry_limit + 1) == c->rto_max_ns && dead > b)
		b = dead;
	return b > UINT64_MAX / 2 ? UINT64_MAX : 2 * b;
}

static int bridge_new(struct sim *s, struct node *nd, char *err, size_t errlen)
{
	struct htoe_config c;

	htoe_config_defaults(&c);
	c.node_id = nd->id;
	htoe_map_node_mac(nd->id, c.mac);
	/* every start a new incarnation and nonce key, as getrandom would give
	 * (the epoch stays 0: a restart is found by the incarnation alone);
	 * seeded, so that runs are reproducible */
	{
		struct ht_rand r;

		ht_rand_seed(&r, s->cfg->seed * 0x9E3779B97F4A7C15ull + nd->id * 65537u +
					 nd->incarnation * 7919u + 1);
		c.incarnation = (uint32_t)ht_rand_u64(&r) | 1u;
		for (unsigned k = 0; k < sizeof(c.nonce_key); k++)
			c.nonce_key[k] = (uint8_t)ht_rand_u64(&r);
	}
	c.unitid_base = SIM_BRIDGE_UBASE;
	c.n_unitids = SIM_BRIDGE_UNITS;
	c.map = &nd->map;
	if (s->cfg->rto_init_ns)
		c.rto_init_ns = s->cfg->rto_init_ns;
	if (s->cfg->rto_max_ns)
		c.rto_max_ns = s->cfg->rto_max_ns;
	else if (c.rto_max_ns < c.rto_init_ns)
		c.rto_max_ns = c.rto_init_ns * 64;
	if (s->cfg->rto_min_ns)
		c.rto_min_ns = s->cfg->rto_min_ns;
	if (s->cfg->stall_timeout_ns)
		c.stall_timeout_ns = s->cfg->stall_timeout_ns;
	if (s->cfg->np_timeout_ns)
		c.np_timeout_ns = s->cfg->np_timeout_ns;
	if (s->cfg->retry_limit)
		c.retry_limit = s->cfg->retry_limit;
	if (s->cfg->mtu)
		c.mtu = s->cfg->mtu;
	if (s->cfg->retry_mode >= 0)
		c.retry_mode = (enum htoe_retry_mode)s->cfg->retry_mode;
	s->res->retry_mode = (int)c.retry_mode;
	/* every peer can start and a busy VL reach its cap: the pool covers
	 * the reserve of all VLs and a busy VL's share */
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		for (unsigned d = 0; d < 2; d++)
			if (c.rx_bufs[vc][d] < htoe_rx_bufs_needed(&c, s->cfg->nodes))
				c.rx_bufs[vc][d] = (uint16_t)htoe_rx_bufs_needed(&c, s->cfg->nodes);
	nd->core.b = htoe_new(&c, err, errlen);
	memset(nd->seen_resets, 0, sizeof(nd->seen_resets));
	if (progress_bound(&c) > s->progress_bound)
		s->progress_bound = progress_bound(&c);
	nd->seen_vl_resets = 0;
	return nd->core.b ? 0 : -1;
}

static int requester_new(struct node *nd)
{
	return htnode_reset_requester(&nd->core, SIM_REQ_UNITIDS, 1);
}

static int node_init(struct sim *s, unsigned i, char *err, size_t errlen)
{
	const struct sim_cfg *c = s->cfg;
	struct node *nd = &s->n[i];
	struct ht_target_cfg tc;

	nd->idx = i;
	nd->id = (uint16_t)(i + 1);
	nd->mem = malloc(c->mem_per_node);
	nd->sl = calloc(c->nodes, sizeof(*nd->sl));
	nd->wlp = calloc(c->nodes, sizeof(*nd->wlp));
	nd->rxq = c->stall_prob > 0 ? calloc(c->rx_ring, sizeof(*nd->rxq)) : NULL;
	/* the smallest frame is 60 bytes: that many fit in the output buffer */
	nd->egq_cap = c->egress_buf ? (unsigned)(c->egress_buf / 60 + 1) : 0;
	nd->egq = nd->egq_cap ? calloc(nd->egq_cap, sizeof(*nd->egq)) : NULL;
	if (!nd->mem || !nd->sl || !nd->wlp || (c->stall_prob > 0 && !nd->rxq) ||
	    (nd->egq_cap && !nd->egq))
		return -1;
	ht_wl_fill(c->seed * 1000003u + i, nd->mem, c->mem_per_node);
	memset(&tc, 0, sizeof(tc));
	tc.base = SIM_MEM_BASE;
	tc.size = c->mem_per_node;
	tc.mem = nd->mem;
	if (ht_tgt_init(&nd->core.tgt, &tc) != 0)
		return -1;

	htoe_map_init(&nd->map, nd->id);
	for (unsigned k = 0; k < c->nodes; k++) {
		char label[32];

		snprintf(label, sizeof(label), "sim node %u", k + 1);
		if (k != i && htoe_map_add_peer(&nd->map, (uint16_t)(k + 1), NULL, label, err,
						errlen) != 0)
			return -1;
		if (htoe_map_add_range(&nd->map, (uint64_t)(k + 1) << 32, c->mem_per_node,
				       (uint16_t)(k + 1), SIM_MEM_BASE, label, err, errlen) != 0)
			return -1;
	}
	if (htoe_map_finalize(&nd->map, err, errlen) != 0)
		return -1;
	if (bridge_new(s, nd, err, errlen) != 0 ||
	    htnode_init(&nd->core, nd->core.b, SIM_BRIDGE_UBASE, SIM_BRIDGE_UNITS,
			SIM_REQ_UNITIDS, 1, nd->wlp, c->nodes) != 0)
		return -1;
	nd->core.hooks = &sim_hooks;
	nd->core.user = s;
	return 0;
}

static int slices_init(struct sim *s)
{
	const struct sim_cfg *c = s->cfg;

	for (unsigned src = 0; src < c->nodes; src++)
		for (unsigned dst = 0; dst < c->nodes; dst++) {
			struct slice *sl = slice_of(s, src, dst);
			uint64_t off = (uint64_t)src * s->slice_size;
			uint32_t cap = 1;

			while (cap < slice_ops(s, src, dst) + 1)
				cap <<= 1;
			sl->gbase = ((uint64_t)(dst + 1) << 32) + off;
			sl->lbase = SIM_MEM_BASE + off;
			sl->shadow = malloc(s->slice_size);
			sl->busy = malloc(s->slice_size / 64);
			sl->taint = malloc(s->slice_size / 64 * sizeof(*sl->taint));
			sl->fifo = malloc(cap * sizeof(uint64_t));
			sl->fifo_mask = cap - 1;
			if (!sl->shadow || !sl->busy || !sl->taint || !sl->fifo)
				return -1;
			memcpy(sl->shadow, s->n[dst].mem + off, s->slice_size);
			if (slice_init_wl(s, src, dst, slice_ops(s, src, dst),
					  c->seed * 7919u + src * 131u + dst) != 0)
				return -1;
		}
	return 0;
}

/* ---------------------------------------------------------------- switch */

static unsigned node_of_mac(const uint8_t *mac)
{
	return (unsigned)mac[4] << 8 | mac[5];
}

static double urand(struct sim *s)
{
	return (double)(ht_rand_u64(&s->rng) >> 11) * (1.0 / 9007199254740992.0);
}

static void schedule(struct sim *s, unsigned dst, const uint8_t *f, size_t len, uint64_t t)
{
	struct fev *e = malloc(sizeof(*e) + len);

	if (!e)
		return;
	e->dst = dst;
	e->len = (uint16_t)len;
	memcpy(e->data, f, len);
	if (time_heap_push(&s->heap, e, t) != 0)
		free(e);
}

static bool partitioned(const struct sim *s, unsigned a, unsigned b)
{
	const struct sim_cfg *c = s->cfg;
	unsigned half = c->nodes / 2;

	if (!c->partition_ns || s->now < c->partition_at_ns ||
	    s->now >= c->partition_at_ns + c->partition_ns)
		return false;
	return (a < half) != (b < half);
}

static uint64_t frame_time(const struct sim_cfg *c, size_t len)
{
	/* preamble + IFG + FCS included */
	return c->link_bps ? ((uint64_t)len + 24) * 8 * 1000000000ull / c->link_bps : 0;
}

/* A frame reaches the switch's output port towards nd at time t: it waits
 * behind the frames the port holds and is serialized after them. Returns
 * the time it has left the port, or UINT64_MAX when the port's buffer
 * cannot take it (tail drop). Frames join in the order they are sent. */
static uint64_t egress(struct sim *s, struct node *nd, size_t len, uint64_t t)
{
	while (nd->egq_n && nd->egq[nd->egq_head].done <= t) {
		nd->egq_bytes -= nd->egq[nd->egq_head].len;
		nd->egq_head = (nd->egq_head + 1) % nd->egq_cap;
		nd->egq_n--;
	}
	if (nd->egq_bytes + len > s->cfg->egress_buf || nd->egq_n == nd->egq_cap)
		return UINT64_MAX;
	nd->egress_busy = (t > nd->egress_busy ? t : nd->egress_busy) + frame_time(s->cfg, len);
	nd->egq[(nd->egq_head + nd->egq_n++) % nd->egq_cap].done = nd->egress_busy;
	nd->egq[(nd->egq_head + nd->egq_n - 1) % nd->egq_cap].len = (uint32_t)len;
	nd->egq_bytes += len;
	return nd->egress_busy;
}

static void switch_send(struct sim *s, struct node *src, uint8_t *f, size_t len)
{
	const struct sim_cfg *c = s->cfg;
	unsigned dst_id = node_of_mac(f);
	struct impair_verdict v;
	unsigned dst;
	uint64_t t;

	s->res->frames++;
	if (s->dump) {
		struct pcap_pkthdr ph = { .caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len };

		/* nanosecond pcap: tv_usec holds nanoseconds */
		ph.ts.tv_sec = (time_t)(s->now / 1000000000ull);
		ph.ts.tv_usec = (suseconds_t)(s->now % 1000000000ull);
		pcap_dump((u_char *)s->dump, &ph, f);
	}
	if (dst_id < 1 || dst_id > c->nodes) {
		s->res->frames_dropped++;
		return;
	}
	dst = dst_id - 1;
	/* serialization on the sender's port */
	t = (s->now > src->port_busy ? s->now : src->port_busy) + frame_time(c, len);
	src->port_busy = t;

	if (partitioned(s, src->idx, dst)) {
		s->res->frames_dropped++;
		return;
	}
	impair_model_decide(&s->impair, &src->link[dst], &s->rng, len, s->now, &v);
	if (!v.copies) {
		s->res->frames_dropped++;
		return;
	}
	if (v.corrupt) {
		impair_flip(f, len, v.bit);
		s->res->frames_corrupted++;
	}
	if (c->egress_buf) {
		t = egress(s, &s->n[dst], len, t);
		if (t == UINT64_MAX) {
			s->res->egress_drops++;
			s->res->frames_dropped++;
			return;
		}
	}
	/* the model's delay (propagation, jitter, reordering) after the
	 * frame has left the switch */
	t += v.at[0] - s->now;
	s->res->frames_reordered += v.reordered;
	schedule(s, dst, f, len, t);
	if (v.copies == 2) {
		s->res->frames_duplicated++;
		schedule(s, dst, f, len, t);
	}
}

/* ------------------------------------------------------------ local side */

/* Did a request on node nd's VL to dst time out (so that an answer the
 * bridge made up may hide a write the peer applied later)? */
static bool timed_out(struct node *nd, unsigned dst)
{
	const struct htoe_vl_stats *vs = htoe_get_vl_stats(nd->core.b, (uint16_t)(dst + 1));

	return vs && vs->np_timeouts;
}

/* An error response is legitimate only after a reset or a request timeout
 * on the VL it used; a Flush goes to every VL with posted writes, so any
 * VL of the node explains it. */
static bool poison_explained(struct sim *s, struct node *nd, unsigned dst, bool any_vl)
{
	for (unsigned k = 0; k < s->cfg->nodes; k++) {
		const struct htoe_vl_stats *vs;

		if (k == nd->idx || (!any_vl && k != dst))
			continue;
		vs = htoe_get_vl_stats(nd->core.b, (uint16_t)(k + 1));
		if (vs && (vs->resets || vs->np_timeouts))
			return true;
	}
	return false;
}

static struct node *node_of(struct htnode *core)
{
	return (struct node *)((char *)core - offsetof(struct node, core));
}

/* htnode hook: a completion, already checked by the slice's workload. */
static void on_completed(struct htnode *core, unsigned dst, const struct ht_completion *c,
			 int wl_rc, const struct ht_wl_result *r)
{
	struct sim *s = core->user;
	struct node *nd = node_of(core);
	struct slice *sl = &nd->sl[dst];

	(void)r;
	s->res->np_responses++;
	s->res->completed++;
	s->last_progress = s->now;
	if (c->unitid <= HT_REQ_MAX_UNITIDS && c->srctag < HT_REQ_TAGS) {
		uint64_t lat = s->now - nd->issued_at[c->unitid][c->srctag];

		if (lat > s->res->max_np_latency_ns)
			s->res->max_np_latency_ns = lat;
		if (s->cfg->liveness_ns && (lat > s->cfg->liveness_ns || c->status != HT_RSP_OK)) {
			char what[128];

			s->res->liveness_failures++;
			snprintf(what, sizeof(what),
				 "liveness: request answered after %" PRIu64 " ns%s", lat,
				 c->status != HT_RSP_OK ? " with an error" : "");
			violation(s, what, nd->idx, dst);
		}
	}
	if (c->status != HT_RSP_OK) {
		s->res->poisoned++;
		if (!poison_explained(s, nd, dst, c->type == HT_OP_FLUSH) && !sl->tainted) {
			s->res->unexplained_poison++;
			violation(s, "poisoned response without a reset or timeout", nd->idx, dst);
		}
		/* a write or atomic poisoned by a timeout may or may not have
		 * been applied; one a reset poisoned was reported lost */
		if (c->type != HT_OP_FLUSH && timed_out(nd, dst))
			sl->tainted = true;
	}
	if (wl_rc == 1 && c->status == HT_RSP_OK && !sl->tainted) {
		s->res->wrong_data++;
		violation(s, "read or atomic result differs from the oracle", nd->idx, dst);
	}
}

/* htnode hook: a response for no outstanding tag: answered twice. */
static void on_unexpected(struct htnode *core, const struct ht_pkt *p, int rc)
{
	struct sim *s = core->user;
	struct node *nd = node_of(core);

	(void)p;
	(void)rc;
	s->res->duplicated++;
	violation(s, "response for a request not outstanding", nd->idx, nd->idx);
}

/* Credit-starved time so far of sender i's VL to node 1. */
static uint64_t incast_starved(struct sim *s, unsigned i)
{
	const struct htoe_vl_stats *vs = htoe_get_vl_stats(s->n[i].core.b, 1);

	return vs ? vs->credit_starved_ns : 0;
}

/* Incast window (struct sim_incast): opened by the first write node 1
 * applies, closed when a sender has had all its writes applied. */
static void incast_window(struct sim *s, bool close)
{
	struct sim_incast *in = &s->res->incast;

	for (unsigned i = 1; i <= s->cfg->incast; i++) {
		if (!close) {
			in->starved_at_open[i] = incast_starved(s, i);
			continue;
		}
		uint64_t st = incast_starved(s, i);

		in->starved_ns[i] = st > in->starved_at_open[i] ? st - in->starved_at_open[i] : 0;
		/* (the counter is as of the sender's last poll: at most the window) */
		if (in->starved_ns[i] > s->now - in->opened_at)
			in->starved_ns[i] = s->now - in->opened_at;
	}
	if (close) {
		in->window_ns = s->now - in->opened_at;
		in->closed = true;
	} else {
		in->opened_at = s->now;
		in->open = true;
	}
}

static void incast_applied(struct sim *s, unsigned src, unsigned len)
{
	struct sim_incast *in = &s->res->incast;

	if (src < 1 || src > s->cfg->incast)
		return;
	if (!in->open)
		incast_window(s, false);
	in->total_writes[src]++;
	if (in->closed)
		return;
	in->writes[src]++;
	in->bytes[src] += len;
	if (in->total_writes[src] >= slice_ops(s, src, 0))
		incast_window(s, true);
}

/* htnode hook: the target applies a posted write: check it against the
 * issue order. */
static void on_posted_write(struct htnode *core, const struct ht_pkt *p)
{
	struct sim *s = core->user;
	struct node *nd = node_of(core);
	uint64_t off = p->addr - SIM_MEM_BASE;
	unsigned src = (unsigned)(off / s->slice_size);
	struct slice *sl;

	if (src >= s->cfg->nodes)
		return;
	sl = slice_of(s, src, nd->idx);
	uint64_t h = hash_write(p->addr - sl->lbase, p->dword ? 0 : p->mask, p->data, p->data_len);

	s->res->posted_applied++;
	s->res->completed++;
	s->last_progress = s->now;
	if (s->cfg->incast && nd->idx == 0)
		incast_applied(s, src, p->data_len);
	if (sl->fifo_head != sl->fifo_tail && sl->fifo[sl->fifo_head & sl->fifo_mask] == h) {
		sl->fifo_head++;
		return;
	}
	if (sl->tainted || sl->reset) {
		/* after a reset posted writes in flight may be lost: skip them */
		for (uint32_t i = sl->fifo_head; i != sl->fifo_tail; i++)
			if (sl->fifo[i & sl->fifo_mask] == h) {
				sl->fifo_head = i + 1;
				return;
			}
		if (sl->tainted)
			return;
	}
	for (uint32_t i = sl->fifo_head; i != sl->fifo_tail; i++)
		if (sl->fifo[i & sl->fifo_mask] == h) {
			s->res->misordered++;
			violation(s, "posted write applied out of order", src, nd->idx);
			sl->fifo_head = i + 1;
			return;
		}
	s->res->duplicated++;
	violation(s, "posted write applied twice (or never issued)", src, nd->idx);
}

/* htnode hook: an op was taken by the bridge. */
static void on_issued(struct htnode *core, unsigned dst, const struct ht_pkt *p)
{
	struct sim *s = core->user;
	struct slice *sl = &node_of(core)->sl[dst];

	if (p->kind == HT_K_WRSIZED && p->posted) {
		sl->fifo[sl->fifo_tail++ & sl->fifo_mask] =
			hash_write(p->addr - sl->gbase, p->dword ? 0 : p->mask, p->data,
				   p->data_len);
		s->res->posted_issued++;
	} else if (ht_pkt_vc(p) == HT_VC_NP) {
		s->res->np_requests++;
		if (p->unitid <= HT_REQ_MAX_UNITIDS && p->srctag < HT_REQ_TAGS)
			node_of(core)->issued_at[p->unitid][p->srctag] = s->now;
	} else {
		s->res->completed++; /* Fence: done when taken */
	}
}

static void on_rejected(struct htnode *core, unsigned dst, int err)
{
	(void)err;
	violation(core->user, "bridge rejected a request", node_of(core)->idx, dst);
}

static const struct htnode_hooks sim_hooks = {
	.issued = on_issued,
	.rejected = on_rejected,
	.completed = on_completed,
	.unexpected = on_unexpected,
	.posted_write = on_posted_write,
};

/* A reset of a VL makes that slice pair's results uncertain. */
static void note_resets(struct sim *s, struct node *nd)
{
	/* the VLs are looked at only when the bridge counted a reset */
	if (htoe_get_stats(nd->core.b)->vl_resets == nd->seen_vl_resets)
		return;
	nd->seen_vl_resets = htoe_get_stats(nd->core.b)->vl_resets;
	for (unsigned k = 0; k < s->cfg->nodes; k++) {
		const struct htoe_vl_stats *vs;

		if (k == nd->idx)
			continue;
		vs = htoe_get_vl_stats(nd->core.b, (uint16_t)(k + 1));
		if (vs && vs->resets != nd->seen_resets[k]) {
			nd->seen_resets[k] = vs->resets;
			if (s->cfg->liveness_ns) {
				s->res->liveness_failures++;
				violation(s, "liveness: VL reset", nd->idx, k);
			}
			slice_of(s, nd->idx, k)->reset = true;
			slice_of(s, k, nd->idx)->reset = true;
		}
	}
}

static void node_step(struct sim *s, struct node *nd)
{
	unsigned moved;
	int n;

	htoe_handle_expiry(nd->core.b, s->now);
	do {
		moved = htnode_poll(&nd->core, s->now);
		while ((n = htoe_frame_output(nd->core.b, s->buf, sizeof(s->buf), s->now,
					      HTOE_TX_FLUSH)) > 0) {
			switch_send(s, nd, s->buf, (size_t)n);
			moved++;
		}
	} while (moved);
	note_resets(s, nd);

	char err[256];
	if (htoe_check_invariants_changed(nd->core.b, err, sizeof(err)) != 0) {
		s->res->credit_errors++;
		violation(s, err, nd->idx, nd->idx);
	}
}

/* ------------------------------------------------------- stalls, RX ring */

static bool stalled(const struct sim *s, const struct node *nd)
{
	return s->now < nd->stall_until;
}

static void deliver(struct sim *s, struct node *nd, struct fev *e)
{
	int r = htoe_frame_input(nd->core.b, e->data, e->len, s->now);

	if (r < 0 && r != -HTOE_DROP_CRC)
		s->res->drops_other++;
	free(e);
}

/* A frame arrives at its node: taken at once if the node is being polled and
 * nothing waits before it, else queued in its RX ring (dropped if full). */
static void arrive(struct sim *s, struct fev *e)
{
	struct node *nd = &s->n[e->dst];

	s->due |= 1ull << e->dst;
	if (!nd->rxq || (!stalled(s, nd) && !nd->rxq_n)) {
		deliver(s, nd, e);
		return;
	}
	if (nd->rxq_n == s->cfg->rx_ring) {
		s->res->rx_ring_drops++;
		free(e);
		return;
	}
	nd->rxq[(nd->rxq_head + nd->rxq_n++) % s->cfg->rx_ring] = e;
}

/* A node that runs again takes its RX ring in bursts, each followed by a
 * poll (timers, local side, output), as a poll loop would. */
static void drain_rx_ring(struct sim *s, struct node *nd)
{
	while (nd->rxq_n) {
		for (unsigned k = 0; k < SIM_RX_BURST && nd->rxq_n; k++) {
			deliver(s, nd, nd->rxq[nd->rxq_head]);
			nd->rxq_head = (nd->rxq_head + 1) % s->cfg->rx_ring;
			nd->rxq_n--;
		}
		node_step(s, nd);
	}
}

/* One scheduling step of a node with work (a frame arrived, a deadline or
 * the end of its stall came, a scenario event): maybe it stalls, else it is
 * polled. Then its place in the deadline heap: when it next has work of its
 * own. */
static void node_turn(struct sim *s, struct node *nd)
{
	const struct sim_cfg *c = s->cfg;

	if (!stalled(s, nd)) {
		if (c->stall_prob > 0 && c->stall_max_ns && urand(s) < c->stall_prob) {
			nd->stall_until = s->now + 1 + ht_rand_below(&s->rng, c->stall_max_ns);
			s->res->stalls++;
			s->res->stalled_ns += nd->stall_until - s->now;
		} else {
			drain_rx_ring(s, nd);
			node_step(s, nd);
		}
	}
	/* a stalled node's timers wait for the end of its stall */
	nd->wake_at = stalled(s, nd) ? nd->stall_until : htoe_next_deadline(nd->core.b);
	nheap_fix(s, nd->idx);
}

/* The nodes due now: those a frame or an event woke (s->due) and those whose
 * deadline came (the heap's top part), each polled once, in index order. */
static void due_from_heap(struct sim *s, unsigned pos)
{
	if (pos >= s->cfg->nodes || s->n[s->nheap[pos]].wake_at > s->now)
		return;
	s->due |= 1ull << s->nheap[pos];
	due_from_heap(s, 2 * pos + 1);
	due_from_heap(s, 2 * pos + 2);
}

static void run_due(struct sim *s)
{
	due_from_heap(s, 0);
	uint64_t due = s->due;

	s->due = 0;
	for (; due; due &= due - 1)
		node_turn(s, &s->n[__builtin_ctzll(due)]);
}

/* ------------------------------------------------------------ scenarios */

static void restart_node(struct sim *s, unsigned i)
{
	struct node *nd = &s->n[i];
	char err[256];

	htoe_free(nd->core.b);
	nd->incarnation++;
	if (bridge_new(s, nd, err, sizeof(err)) != 0 || requester_new(nd) != 0) {
		violation(s, "restart failed", i, i);
		return;
	}
	/* Its workloads start again with what they had left, from the memory
	 * as it is now; everything it touched is uncertain. */
	for (unsigned d = 0; d < s->cfg->nodes; d++) {
		struct slice *sl = slice_of(s, i, d);
		const struct ht_wl_stats *ws = ht_wl_stats(&sl->wl);
		uint64_t left = slice_ops(s, i, d) > ws->issued_total - ws->sweep_issued ?
				slice_ops(s, i, d) - (ws->issued_total - ws->sweep_issued) : 0;

		memcpy(sl->shadow, s->n[d].mem + (sl->lbase - SIM_MEM_BASE), s->slice_size);
		sl->fifo_head = sl->fifo_tail;
		sl->tainted = true;
		slice_of(s, d, i)->tainted = true;
		slice_init_wl(s, i, d, left, s->cfg->seed * 31u + nd->incarnation * 977u + d);
	}
}

/* A frame of `type` claiming node `claim` for node `dst` (ids), from MAC
 * `mac`, handed to dst's port now. */
static void forge_one(struct sim *s, const uint8_t mac[6], uint16_t claim, uint16_t dst,
		      enum htoe_ftype type)
{
	uint8_t f[HTOE_L2_MAX + HTOE_HDR_LEN + 64], pl[16];
	struct htoe_hdr h;
	size_t plen = 0;
	int off, n;

	memset(&h, 0, sizeof(h));
	htoe_map_node_mac(dst, h.dst);
	memcpy(h.src, mac, 6);
	h.ftype = (uint8_t)type;
	h.src_node = claim;
	h.dst_node = dst;
	h.epoch = htoe_vl_epoch(s->n[dst - 1].core.b, claim);
	for (unsigned k = 0; k < HTOE_CR__COUNT; k++)
		h.credit[k] = (uint16_t)ht_rand_u64(&s->rng);
	if (type == HTOE_FT_RESET || type == HTOE_FT_RESET_ACK) {
		uint64_t nonce = ht_rand_u64(&s->rng) | 1;

		h.epoch = (uint8_t)(h.epoch + (type == HTOE_FT_RESET));
		h.cold = true;
		h.seq = (uint16_t)nonce;
		htoe_put_be32(pl, (uint32_t)ht_rand_u64(&s->rng)); /* a "new incarnation" */
		htoe_put_be32(pl + 4, (uint32_t)(nonce >> 32));
		htoe_put_be32(pl + 8, (uint32_t)nonce);
		plen = HTOE_RESET_PAYLOAD_LEN;
	} else if (type == HTOE_FT_CTRL) {
		memset(pl, 0x4c, 8);
		htoe_put_be32(pl + 8, (uint32_t)ht_rand_u64(&s->rng));
		plen = 12;
	}
	off = htoe_hdr_write(&h, f, sizeof(f));
	if (off < 0)
		return;
	memcpy(f + off, pl, plen);
	n = htoe_frame_seal(f, sizeof(f), (size_t)off - HTOE_HDR_LEN, plen);
	if (n <= 0)
		return;
	s->res->forged_sent++;
	schedule(s, dst - 1u, f, (size_t)n, s->now);
}

static void forge_reset(struct sim *s)
{
	static const uint8_t outsider[6] = { 0x02, 0x66, 0x66, 0x66, 0x66, 0x66 };

	forge_one(s, outsider, 1, 2, HTOE_FT_RESET);
	forge_one(s, outsider, 1, 2, HTOE_FT_RESET_ACK);
}

static void forge_src(struct sim *s)
{
	static const enum htoe_ftype types[] = { HTOE_FT_RESET, HTOE_FT_RESET_ACK, HTOE_FT_ACK,
						 HTOE_FT_CTRL };
	uint8_t mac3[6];

	htoe_map_node_mac(3, mac3); /* member node 3 claims to be node 1 */
	for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		forge_one(s, mac3, 1, 2, types[i]);
}

/* Is item k of the run done? Items k = i * (nodes + 1) + d: node i's slice
 * d (d < nodes), node i's bridge and requester (d == nodes). */
static bool item_done(struct sim *s, unsigned k)
{
	unsigned i = k / (s->cfg->nodes + 1), d = k % (s->cfg->nodes + 1);
	struct node *nd = &s->n[i];

	if (d == s->cfg->nodes)
		return !htnode_busy(&nd->core);
	const struct slice *sl = &nd->sl[d];

	if (sl->active && !ht_wl_done(&sl->wl))
		return false;
	/* posted writes still travelling (the sweep's reads, which follow
	 * them, are off in incast runs) */
	return sl->tainted || sl->reset || sl->fifo_head == sl->fifo_tail;
}

/* All items done? The scan starts at the item that was not done last time:
 * while it is not, the answer costs one look, not one per node and slice. */
static bool all_done(struct sim *s)
{
	unsigned n = s->cfg->nodes * (s->cfg->nodes + 1);

	for (unsigned j = 0; j < n; j++) {
		unsigned k = (s->done_from + j) % n;

		if (!item_done(s, k)) {
			s->done_from = k;
			return false;
		}
	}
	return true;
}

static void final_checks(struct sim *s)
{
	const struct sim_cfg *c = s->cfg;

	for (unsigned src = 0; src < c->nodes; src++)
		for (unsigned dst = 0; dst < c->nodes; dst++) {
			struct slice *sl = slice_of(s, src, dst);

			if (sl->tainted) {
				s->res->tainted_slices++;
				continue;
			}
			if (sl->fifo_head != sl->fifo_tail && !sl->reset) {
				s->res->lost += sl->fifo_tail - sl->fifo_head;
				violation(s, "posted writes never applied", src, dst);
			}
			if (ht_wl_check_image(&sl->wl, s->n[dst].mem + (sl->lbase - SIM_MEM_BASE))) {
				s->res->wrong_data++;
				violation(s, "memory image differs from the oracle", src, dst);
			}
		}
	if (s->res->deadlock) {
		for (unsigned i = 0; i < c->nodes; i++)
			s->res->lost += ht_req_outstanding(&s->n[i].core.req);
	}
	for (unsigned i = 0; i < c->nodes; i++) {
		struct htoe *b = s->n[i].core.b;

		for (unsigned k = 0; k < htoe_n_vls(b); k++) {
			const struct htoe_vl_stats *vs = htoe_get_vl_stats(b, htoe_vl_node(b, k));

			s->res->retransmits += vs->retransmits;
			s->res->naks += vs->naks_sent;
			s->res->timeouts += vs->timeouts;
			s->res->tail_probes += vs->tail_probes;
			s->res->resets += vs->resets;
			s->res->drops_crc += vs->drops[HTOE_DROP_CRC];
			s->res->peer_restarts += vs->peer_restarts;
			if (vs->peer_restarts && vs->restart_up_ns > s->res->restart_up_max_ns)
				s->res->restart_up_max_ns = vs->restart_up_ns;
			/* a restart is seen exactly once by each VL to the
			 * restarted node (a cold reset), by no other VL */
			bool to_restarted = c->restart_node >= 0 &&
					    htoe_vl_node(b, k) == (unsigned)c->restart_node + 1;
			if (vs->peer_restarts != (to_restarted ? 1u : 0u))
				violation(s, to_restarted ? "restart: a VL to the restarted node did "
						"not see its new incarnation exactly once"
						: "a new incarnation seen where no node restarted",
					  i, htoe_vl_node(b, k) - 1u);
			s->res->vls++;
			s->res->selective_vls += vs->selective;
			s->res->held += vs->rx_held;
			s->res->sacks += vs->sacks_sent;
			/* the oracle knows the mode: Go-Back-N bridges never hold
			 * a frame or send a SACK block */
			if (s->res->retry_mode == HTOE_RETRY_GBN &&
			    (vs->selective || vs->rx_held || vs->sacks_sent))
				violation(s, "selective retry used although Go-Back-N was configured",
					  i, i);
		}
		s->res->drops_crc += htoe_get_stats(b)->drops[HTOE_DROP_CRC];
		s->res->forged_dropped += htoe_get_stats(b)->drops[HTOE_DROP_SRC_MAC];
	}
	/* a bit flipped in a source MAC (--corrupt; the MACs are not under the
	 * HToE CRC) is also a src_mac drop */
	if (s->res->forged_dropped < s->res->forged_sent ||
	    s->res->forged_dropped > s->res->forged_sent + s->res->frames_corrupted)
		violation(s, "forged frames not all dropped as src_mac", 0, 1);
}

static uint64_t next_event(struct sim *s)
{
	const struct sim_cfg *c = s->cfg;
	uint64_t t = time_heap_next(&s->heap);

	if (s->n[s->nheap[0]].wake_at < t)
		t = s->n[s->nheap[0]].wake_at;
	uint64_t ev[] = { c->partition_ns ? c->partition_at_ns : UINT64_MAX,
			  c->partition_ns ? c->partition_at_ns + c->partition_ns : UINT64_MAX,
			  c->restart_node >= 0 ? c->restart_at_ns : UINT64_MAX,
			  c->reset_node >= 0 ? c->reset_at_ns : UINT64_MAX,
			  c->forge_reset_at_ns ? c->forge_reset_at_ns : UINT64_MAX,
			  c->forge_src_at_ns ? c->forge_src_at_ns : UINT64_MAX };
	for (unsigned i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (ev[i] > s->now && ev[i] < t)
			t = ev[i];
	return t;
}

int sim_run(const struct sim_cfg *cfg, struct sim_result *res)
{
	struct sim s;
	char err[256] = "";
	int rc = -1;
	bool restarted = false, reset_done = false, forged_reset = false, forged_src = false;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.cfg = cfg;
	s.res = res;
	res->seed = cfg->seed;
	res->nodes = cfg->nodes;
	res->transactions = cfg->transactions;
	res->incast.senders = cfg->incast;
	if (cfg->nodes < 2 || cfg->nodes > 64) {
		snprintf(res->first_violation, sizeof(res->first_violation),
			 "bad configuration: %u nodes: must be 2..64", cfg->nodes);
		return -1;
	}
	{
		struct impair_params ip = {
			.loss = cfg->loss, .burst_loss = cfg->burst_loss,
			.burst_len = cfg->burst_len, .burst_ns = cfg->burst_ns,
			.reorder = cfg->reorder, .reorder_ns = cfg->reorder_ns,
			.dup = cfg->dup, .corrupt = cfg->corrupt,
			.delay_ns = cfg->delay_ns, .jitter_ns = cfg->jitter_ns,
		};
		char why[128];

		if (impair_model_init(&s.impair, &ip, why, sizeof(why))) {
			snprintf(res->first_violation, sizeof(res->first_violation),
				 "bad configuration: %s", why);
			return -1;
		}
	}
	if (cfg->mem_per_node == 0 || cfg->mem_per_node % (64ull * cfg->nodes)) {
		snprintf(res->first_violation, sizeof(res->first_violation),
			 "bad configuration: memory per node %" PRIu64 " is not a non-zero multiple "
			 "of 64 * nodes = %" PRIu64 " (each node's memory is cut into one slice of "
			 "whole 64-byte lines per node; e.g. %" PRIu64 ")", cfg->mem_per_node,
			 (uint64_t)64 * cfg->nodes, sim_mem_default(cfg->nodes));
		return -1;
	}
	if (cfg->incast >= cfg->nodes) {
		snprintf(res->first_violation, sizeof(res->first_violation),
			 "bad configuration: %u incast senders need %u nodes or more, not %u",
			 cfg->incast, cfg->incast + 1, cfg->nodes);
		return -1;
	}
	if (cfg->stall_prob > 0 && !cfg->rx_ring) {
		snprintf(res->first_violation, sizeof(res->first_violation),
			 "bad configuration: a node stall probability needs an RX ring (rx_ring > 0)");
		return -1;
	}
	s.slice_size = cfg->mem_per_node / cfg->nodes;
	if (cfg->pcap_path) {
		s.pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							      PCAP_TSTAMP_PRECISION_NANO);
		s.dump = s.pcap ? pcap_dump_open(s.pcap, cfg->pcap_path) : NULL;
		if (!s.dump) {
			snprintf(res->first_violation, sizeof(res->first_violation),
				 "cannot write pcap %s: %s", cfg->pcap_path,
				 s.pcap ? pcap_geterr(s.pcap) : "pcap_open_dead failed");
			if (s.pcap)
				pcap_close(s.pcap);
			return -1;
		}
	}
	ht_rand_seed(&s.rng, cfg->seed);
	s.n = calloc(cfg->nodes, sizeof(*s.n));
	if (!s.n || time_heap_init(&s.heap, 1024, true) != 0)
		goto out;
	for (unsigned i = 0; i < cfg->nodes; i++)
		if (node_init(&s, i, err, sizeof(err)) != 0)
			goto cfgerr;
	if (slices_init(&s) != 0)
		goto cfgerr;
	/* every node is polled at the start; none has a deadline yet */
	const uint64_t all = cfg->nodes == 64 ? ~0ull : (1ull << cfg->nodes) - 1;
	for (unsigned i = 0; i < cfg->nodes; i++) {
		s.n[i].wake_at = UINT64_MAX;
		nheap_set(&s, i, i);
	}
	s.due = all;

	for (;;) {
		/* a scenario event: every node is polled */
		if (!restarted && cfg->restart_node >= 0 && s.now >= cfg->restart_at_ns) {
			restart_node(&s, (unsigned)cfg->restart_node);
			restarted = true;
			s.due = all;
		}
		if (!forged_reset && cfg->forge_reset_at_ns && s.now >= cfg->forge_reset_at_ns) {
			forge_reset(&s);
			forged_reset = true;
			s.due = all;
		}
		if (!forged_src && cfg->forge_src_at_ns && s.now >= cfg->forge_src_at_ns) {
			forge_src(&s);
			forged_src = true;
			s.due = all;
		}
		if (!reset_done && cfg->reset_node >= 0 && s.now >= cfg->reset_at_ns) {
			htoe_vl_reset(s.n[cfg->reset_node].core.b, (uint16_t)(cfg->reset_peer + 1),
				      false, s.now);
			reset_done = true;
			s.due = all;
		}
		run_due(&s);
		if (all_done(&s))
			break;
		if (cfg->progress && res->completed - s.completed_at_progress >= cfg->progress_every) {
			s.completed_at_progress = res->completed;
			fprintf(cfg->progress,
				"sim: t=%.3f ms completed %" PRIu64 " np %" PRIu64 "/%" PRIu64
				" posted %" PRIu64 "/%" PRIu64 " frames %" PRIu64 " dropped %" PRIu64
				" violations %" PRIu64 "\n",
				(double)s.now / 1e6, res->completed, res->np_responses,
				res->np_requests, res->posted_applied, res->posted_issued, res->frames,
				res->frames_dropped, res->violations);
		}
		uint64_t t = next_event(&s);
		if (t == UINT64_MAX ||
		    s.now - s.last_progress > (cfg->stall_bound_ns ? cfg->stall_bound_ns
								  : s.progress_bound) ||
		    (cfg->max_time_ns && s.now > cfg->max_time_ns)) {
			res->deadlock = true;
			violation(&s, "no progress (deadlock or livelock)", 0, 0);
			break;
		}
		s.now = t > s.now ? t : s.now + 1;
		for (struct fev *e; (e = time_heap_pop_due(&s.heap, s.now));)
			arrive(&s, e);
	}
	res->virtual_ns = s.now;
	if (cfg->incast && res->incast.open && !res->incast.closed)
		incast_window(&s, true); /* a sender's writes were lost: up to the end */
	final_checks(&s);
	rc = res->violations ? 1 : 0;
	goto out;
cfgerr:
	snprintf(res->first_violation, sizeof(res->first_violation), "setup: %.240s", err);
	rc = -1;
out:
	/* a capture that could not be written is a failed run, not a quiet one */
	if (s.dump && (pcap_dump_flush(s.dump) || ferror(pcap_dump_file(s.dump)))) {
		snprintf(res->first_violation, sizeof(res->first_violation),
			 "cannot write pcap %.200s: %s", cfg->pcap_path, strerror(errno));
		rc = -1;
	}
	if (s.dump)
		pcap_dump_close(s.dump);
	if (s.pcap)
		pcap_close(s.pcap);
	for (void *e; (e = time_heap_pop(&s.heap));)
		free(e);
	time_heap_fini(&s.heap);
	if (s.n) {
		for (unsigned i = 0; i < cfg->nodes; i++) {
			struct node *nd = &s.n[i];

			htoe_free(nd->core.b);
			if (nd->sl)
				for (unsigned d = 0; d < cfg->nodes; d++) {
					free(nd->sl[d].shadow);
					free(nd->sl[d].busy);
					free(nd->sl[d].taint);
					free(nd->sl[d].fifo);
				}
			free(nd->sl);
			free(nd->wlp);
			free(nd->mem);
			if (nd->rxq)
				for (unsigned k = 0; k < nd->rxq_n; k++)
					free(nd->rxq[(nd->rxq_head + k) % cfg->rx_ring]);
			free(nd->rxq);
			free(nd->egq);
		}
		free(s.n);
	}
	return rc;
}

static void json_body(const struct sim_result *r, FILE *f)
{
	fprintf(f,
		"{\"seed\":%" PRIu64 ",\"nodes\":%" PRIu64 ",\"transactions\":%" PRIu64
		",\"completed\":%" PRIu64 ",\"posted_issued\":%" PRIu64
		",\"posted_applied\":%" PRIu64 ",\"np_requests\":%" PRIu64
		",\"np_responses\":%" PRIu64 ",\"poisoned\":%" PRIu64
		",\"retry\":\"%s\",\"vls\":%" PRIu64 ",\"selective_vls\":%" PRIu64
		",\"held\":%" PRIu64 ",\"sacks\":%" PRIu64
		",\"retransmits\":%" PRIu64 ",\"naks\":%" PRIu64 ",\"timeouts\":%" PRIu64
		",\"tail_probes\":%" PRIu64 ",\"resets\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"frames_dropped\":%" PRIu64
		",\"frames_duplicated\":%" PRIu64 ",\"frames_corrupted\":%" PRIu64
		",\"frames_reordered\":%" PRIu64 ",\"drops_crc\":%" PRIu64
		",\"lost\":%" PRIu64 ",\"duplicated\":%" PRIu64 ",\"misordered\":%" PRIu64
		",\"wrong_data\":%" PRIu64 ",\"tainted_slices\":%" PRIu64
		",\"unexplained_poison\":%" PRIu64 ",\"credit_errors\":%" PRIu64
		",\"stalls\":%" PRIu64 ",\"stalled_ms\":%.3f,\"rx_ring_drops\":%" PRIu64
		",\"egress_drops\":%" PRIu64
		",\"max_np_latency_us\":%.1f,\"liveness_failures\":%" PRIu64
		",\"peer_restarts\":%" PRIu64 ",\"restart_up_max_us\":%.1f"
		",\"forged_sent\":%" PRIu64 ",\"forged_dropped\":%" PRIu64
		",\"deadlock\":%s,\"virtual_ms\":%.3f,\"violations\":%" PRIu64,
		r->seed, r->nodes, r->transactions, r->completed, r->posted_issued,
		r->posted_applied, r->np_requests, r->np_responses, r->poisoned,
		r->retry_mode == HTOE_RETRY_SELECTIVE ? "selective" : "gbn", r->vls,
		r->selective_vls, r->held, r->sacks, r->retransmits,
		r->naks, r->timeouts, r->tail_probes, r->resets, r->frames, r->frames_dropped,
		r->frames_duplicated, r->frames_corrupted, r->frames_reordered, r->drops_crc,
		r->lost, r->duplicated, r->misordered, r->wrong_data, r->tainted_slices,
		r->unexplained_poison, r->credit_errors, r->stalls, (double)r->stalled_ns / 1e6,
		r->rx_ring_drops, r->egress_drops, (double)r->max_np_latency_ns / 1e3, r->liveness_failures,
		r->peer_restarts, (double)r->restart_up_max_ns / 1e3, r->forged_sent,
		r->forged_dropped,
		r->deadlock ? "true" : "false",
		(double)r->virtual_ns / 1e6, r->violations);
	if (r->first_violation[0]) {
		fputs(",\"first_violation\":\"", f);
		for (const char *p = r->first_violation; *p; p++)
			if (*p != '"' && *p != '\\')
				fputc(*p, f);
		fputc('"', f);
	}
}

void sim_result_json(const struct sim_result *r, FILE *f)
{
	json_body(r, f);
	fputs("}\n", f);
}

static double incast_rate(const struct sim_result *r, uint64_t v)
{
	return r->incast.window_ns ? (double)v * 1e9 / (double)r->incast.window_ns : 0;
}

void sim_incast_summarize(const struct sim_result *multi, const struct sim_result *single,
			  struct sim_incast_summary *out)
{
	const struct sim_incast *in = &multi->incast;
	double sum = 0, sum2 = 0, st = 0;
	uint64_t writes = 0, bytes = 0;

	memset(out, 0, sizeof(*out));
	out->senders = in->senders;
	for (unsigned i = 1; i <= in->senders && i < 64; i++) {
		double x = incast_rate(multi, in->bytes[i]) * 8;
		double sh = in->window_ns ? (double)in->starved_ns[i] / (double)in->window_ns : 0;

		out->sender_bps[i] = x;
		out->starved_share[i] = sh;
		sum += x;
		sum2 += x * x;
		st += sh;
		if (sh > out->starved_max)
			out->starved_max = sh;
		writes += in->writes[i];
		bytes += in->bytes[i];
	}
	out->aggregate_bps = incast_rate(multi, bytes) * 8;
	out->aggregate_wps = incast_rate(multi, writes);
	out->single_bps = incast_rate(single, single->incast.bytes[1]) * 8;
	out->single_wps = incast_rate(single, single->incast.writes[1]);
	out->ratio = out->single_bps > 0 ? out->aggregate_bps / out->single_bps : 0;
	out->jain = sum2 > 0 ? sum * sum / ((double)in->senders * sum2) : 0;
	out->starved_mean = in->senders ? st / in->senders : 0;
}

void sim_incast_text(const struct sim_result *multi, const struct sim_incast_summary *m,
		     FILE *f)
{
	fprintf(f, "incast: %u senders -> node 1, window %.3f ms\n", m->senders,
		(double)multi->incast.window_ns / 1e6);
	fprintf(f, "incast: aggregate %.1f Mb/s (%.0f writes/s), one sender alone %.1f Mb/s "
		   "(%.0f writes/s): ratio %.3f\n", m->aggregate_bps / 1e6, m->aggregate_wps,
		m->single_bps / 1e6, m->single_wps, m->ratio);
	fprintf(f, "incast: Jain's fairness index %.4f; credit-starved share of the window: "
		   "max %.3f, mean %.3f; egress drops %" PRIu64 "\n", m->jain, m->starved_max,
		m->starved_mean, multi->egress_drops);
	for (unsigned i = 1; i <= m->senders && i < 64; i++)
		fprintf(f, "incast: node %u: %" PRIu64 " writes, %.1f Mb/s, credit-starved "
			   "%.3f ms (%.3f)\n", i + 1, multi->incast.writes[i],
			m->sender_bps[i] / 1e6, (double)multi->incast.starved_ns[i] / 1e6,
			m->starved_share[i]);
}

void sim_result_json_incast(const struct sim_result *multi, const struct sim_result *single,
			    const struct sim_incast_summary *m, FILE *f)
{
	struct sim_result *r = malloc(sizeof(*r));

	if (!r) {
		sim_result_json(multi, f);
		return;
	}
	*r = *multi;
	r->violations += single->violations;
	r->deadlock = r->deadlock || single->deadlock;
	if (!r->first_violation[0] && single->first_violation[0])
		snprintf(r->first_violation, sizeof(r->first_violation),
			 "single-sender reference: %.200s", single->first_violation);
	json_body(r, f);
	free(r);
	fprintf(f, ",\"incast\":{\"senders\":%u,\"window_us\":%.1f,\"aggregate_mbps\":%.1f"
		   ",\"aggregate_writes_per_s\":%.0f,\"single_mbps\":%.1f"
		   ",\"single_writes_per_s\":%.0f,\"single_window_us\":%.1f,\"ratio\":%.4f"
		   ",\"jain\":%.4f,\"starved_share_max\":%.4f,\"starved_share_mean\":%.4f"
		   ",\"single_violations\":%" PRIu64 ",\"per_sender\":[",
		m->senders, (double)multi->incast.window_ns / 1e3, m->aggregate_bps / 1e6,
		m->aggregate_wps, m->single_bps / 1e6, m->single_wps,
		(double)single->incast.window_ns / 1e3, m->ratio, m->jain, m->starved_max,
		m->starved_mean, single->violations);
	for (unsigned i = 1; i <= m->senders && i < 64; i++)
		fprintf(f, "%s{\"node\":%u,\"writes\":%" PRIu64 ",\"mbps\":%.1f"
			   ",\"starved_us\":%.1f,\"starved_share\":%.4f}", i > 1 ? "," : "", i + 1,
			multi->incast.writes[i], m->sender_bps[i] / 1e6,
			(double)multi->incast.starved_ns[i] / 1e3, m->starved_share[i]);
	fputs("]}}\n", f);
}
