/* SPDX-License-Identifier: BSD-3-Clause
 * htnode: drives the local HT side of one HToE node. See node.h.
 * (Factored out of the simulator, app/sim/sim.c, so that htoe-sim and the
 * DPDK application htoe-bridge drive a node with the same code.)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "node.h"

static bool unitid_in(uint8_t u, uint8_t base, unsigned n)
{
	return u >= base && u < base + n;
}

int htnode_random_incarnation(struct htoe_config *c, char *err, size_t errlen)
{
	uint8_t r[4 + sizeof(c->nonce_key)];
	size_t got = 0;

	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "getrandom: %s (the bridge's incarnation and nonce "
				 "key must be unpredictable)", n < 0 ? strerror(errno) : "no bytes");
			return -1;
		}
		got += (size_t)n;
	}
	c->incarnation = (uint32_t)r[0] << 24 | (uint32_t)r[1] << 16 | (uint32_t)r[2] << 8 | r[3];
	if (c->incarnation == 0)
		c->incarnation = 1;
	memcpy(c->nonce_key, r + 4, sizeof(c->nonce_key));
	return 0;
}

int htnode_reset_requester(struct htnode *nd, unsigned n_unitids, uint8_t first_unitid)
{
	struct ht_req_cfg rc;

	if (n_unitids < 1 || n_unitids > HT_REQ_MAX_UNITIDS)
		return -EINVAL;
	memset(&rc, 0, sizeof(rc));
	rc.n_unitids = n_unitids;
	for (unsigned i = 0; i < n_unitids; i++) {
		uint8_t u = (uint8_t)(first_unitid + i);

		/* the bridge also uses ubase + units for the Flushes it sends */
		if (unitid_in(u, nd->bridge_ubase, nd->bridge_units + 1u))
			return -EINVAL;
		rc.unitids[i] = u;
	}
	nd->rsp_head = nd->rsp_n = 0;
	return ht_req_init(&nd->req, &rc);
}

static void sink_deliver(void *ctx, const struct ht_desc *d, uint64_t now);
static void on_loss(void *ctx, const struct htoe_loss *l);
static int sink_serve(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap, uint64_t now);

int htnode_init(struct htnode *nd, struct htoe *b, uint8_t bridge_ubase, uint8_t bridge_units,
		unsigned n_unitids, uint8_t first_unitid, struct ht_workload **wl, unsigned n_wl)
{
	if (n_wl > HTNODE_MAX_WL || (n_wl && !wl))
		return -EINVAL;
	nd->b = b;
	if (b) {
		struct htoe_local_sink sk = { sink_deliver, sink_serve, nd };

		htoe_set_local_sink(b, &sk);
		htoe_set_loss_cb(b, on_loss, nd);
	}
	nd->bridge_ubase = bridge_ubase;
	nd->bridge_units = bridge_units;
	nd->wl = wl;
	nd->n_wl = n_wl;
	/* behind a bridge the workloads' memory belongs to a peer, which may
	 * hold what an earlier life of this node wrote: each byte is owned
	 * (written, or read once to seed the shadow) before it is verified */
	for (unsigned i = 0; b && i < n_wl; i++)
		if (wl[i])
			ht_wl_unown(wl[i]);
	nd->hold = false;
	nd->rr = 0;
	memset(&nd->st, 0, sizeof(nd->st));
	memset(&nd->rd_lat, 0, sizeof(nd->rd_lat));
	return htnode_reset_requester(nd, n_unitids, first_unitid);
}

/* The bridge reports what a reset or a restart of a peer lost: the
 * workloads taint it (its value is unknown, not wrong), and a restart is
 * told in one line per range (by the hook of a driver that has hooks). */
static void on_loss(void *ctx, const struct htoe_loss *l)
{
	struct htnode *nd = ctx;
	bool restart = l->kind == HTOE_LOSS_RESTART;

	for (unsigned i = 0; i < nd->n_wl; i++)
		if (nd->wl[i])
			ht_wl_taint(nd->wl[i], l->addr, l->len, restart);
	if (restart)
		nd->st.lost_restart++;
	else
		nd->st.lost_reset++;
	if (nd->hooks && nd->hooks->lost)
		nd->hooks->lost(nd, l);
	else if (restart && !nd->hooks)
		fprintf(stderr, "htnode: peer node %u restarted (incarnation 0x%08" PRIx32
			" -> 0x%08" PRIx32 "): its memory [0x%" PRIx64 ", 0x%" PRIx64
			") is lost (%" PRIu64 " bytes); the workloads re-read it before they "
			"verify it\n", l->node, l->old_inc, l->new_inc, l->addr,
			l->addr + l->len, l->len);
}

unsigned htnode_peer_gone(struct htnode *nd, uint16_t node, uint64_t addr, uint64_t len)
{
	unsigned stopped = 0;

	(void)node;
	for (unsigned i = 0; i < nd->n_wl; i++)
		if (nd->wl[i] && ht_wl_taint(nd->wl[i], addr, len, true)) {
			ht_wl_stop(nd->wl[i]);
			stopped++;
		}
	/* a range is lost only if a workload used it: a peer that went while
	 * this node's workloads worked elsewhere changes none of their counts */
	if (len)
		nd->st.lost_restart++;
	nd->st.peers_gone++;
	return stopped;
}

/* A completion from the requester, for its workload (inlined: once per
 * completion). */
static inline __attribute__((always_inline)) void complete(struct htnode *nd,
							   struct ht_completion *c, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	struct ht_wl_result res;
	unsigned idx = (unsigned)(c->cookie >> HTNODE_COOKIE_SHIFT);

	if (idx >= nd->n_wl || !nd->wl[idx]) {
		nd->st.bad_cookie++;
		return;
	}
	c->cookie &= (1ull << HTNODE_COOKIE_SHIFT) - 1;
	nd->st.completions++;
	int rc = ht_wl_complete(nd->wl[idx], c, &res);

	if (rc >= 0 && res.type == HT_OP_READ && !res.sweep && now >= res.issued_at)
		lat_add(&nd->rd_lat, now - res.issued_at);

	if (h && h->completed)
		h->completed(nd, idx, c, rc, &res);
}

static void unexpected(struct htnode *nd, const struct ht_pkt *p, int r)
{
	nd->st.unexpected++;
	if (nd->hooks && nd->hooks->unexpected)
		nd->hooks->unexpected(nd, p, r);
}

/* A response for the requester, parsed once (d points into its bytes). */
static void to_requester(struct htnode *nd, const struct ht_desc *d, uint64_t now)
{
	struct ht_completion c;
	int r = ht_req_rx_desc(&nd->req, d, &c);

	if (r == 1) {
		complete(nd, &c, now);
	} else if (nd->hooks && nd->hooks->unexpected) {
		struct ht_pkt p;

		if (ht_desc_decode(d, &p) > 0)
			unexpected(nd, &p, r);
	} else {
		nd->st.unexpected++;
	}
}

/* Offer queued target responses (already encoded) to the bridge. */
static unsigned drain_rspq(struct htnode *nd, uint64_t now)
{
	unsigned moved = 0;

	while (nd->rsp_n) {
		unsigned i = nd->rsp_head;

		if (htoe_local_input(nd->b, nd->rspq[i], nd->rsp_len[i], now) == -EAGAIN)
			break;
		nd->rsp_head = (nd->rsp_head + 1) % HTNODE_RSPQ;
		nd->rsp_n--;
		moved++;
	}
	return moved;
}

/* The next free slot of the response queue (room was checked), and
 * queueing the n-byte response written there. */
static uint8_t *rspq_slot(struct htnode *nd)
{
	return nd->rspq[(nd->rsp_head + nd->rsp_n) % HTNODE_RSPQ];
}

static void rspq_commit(struct htnode *nd, int n)
{
	nd->rsp_len[(nd->rsp_head + nd->rsp_n) % HTNODE_RSPQ] = (uint8_t)n;
	nd->rsp_n++;
	nd->st.rsp_to_bridge++;
}

/* A target response: to the bridge (its UnitIDs) or to our requester. */
static void target_response(struct htnode *nd, const uint8_t *rsp, int n, uint64_t now)
{
	struct ht_desc rd;

	if (unitid_in(rsp[1] & 0x1f, nd->bridge_ubase, nd->bridge_units)) {
		memcpy(rspq_slot(nd), rsp, (size_t)n);
		rspq_commit(nd, n);
	} else if (ht_desc_parse(rsp, (size_t)n, &rd) == n)
		to_requester(nd, &rd, now);
}

/* The shapes served from their bytes (ht_tgt_serve's and ht_req_rx_desc's
 * fast paths, ht_desc_parse's fast parse): RdSized, WrSized dword,
 * RdResponse, TgtDone, without the 0x3E prefix. */
static bool byte_path(const struct ht_desc *d)
{
	uint8_t cmd = d->cmd;

	return d->ctl == 0 && ((cmd & 0x30) == 0x10 || (cmd & 0x1c) == 0x0c ||
			       cmd == HT_CMD_RDRESP || cmd == HT_CMD_TGTDONE);
}

/* One packet from the bridge, parsed once: a response for the requester,
 * or a request for the memory target, whose response is encoded straight
 * into the response queue (bridge UnitIDs) or handed to the requester. */
static void from_bridge(struct htnode *nd, const struct ht_desc *d, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;

	if (d->vc == HT_VC_R) {
		to_requester(nd, d, now);
		return;
	}
	if (h && h->posted_write && d->kind == HT_K_WRSIZED && d->vc == HT_VC_P) {
		struct ht_pkt p;

		if (ht_desc_decode(d, &p) > 0)
			h->posted_write(nd, &p);
	}
	nd->st.to_target++;
	if (unitid_in(d->unitid, nd->bridge_ubase, nd->bridge_units)) {
		int n = ht_tgt_serve(&nd->tgt, d, rspq_slot(nd), HT_MAX_PKT_LEN);

		if (n > 0)
			rspq_commit(nd, n);
	} else {
		uint8_t rsp[HT_MAX_PKT_LEN];
		int n = ht_tgt_serve(&nd->tgt, d, rsp, sizeof(rsp));

		if (n > 0)
			target_response(nd, rsp, n, now);
	}
}

/* The other shapes (byte writes, atomics, Flush, Fence, Broadcast, the 0x3E
 * prefix): decoded once, served by the struct ht_pkt API. */
static void from_bridge_decoded(struct htnode *nd, const struct ht_pkt *p, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	struct ht_pkt rsp;
	uint8_t b[HT_MAX_PKT_LEN];
	int n;

	if (ht_pkt_vc(p) == HT_VC_R) {
		struct ht_completion c;
		int r = ht_req_rx(&nd->req, p, &c);

		if (r == 1)
			complete(nd, &c, now);
		else
			unexpected(nd, p, r);
		return;
	}
	if (p->kind == HT_K_WRSIZED && p->posted && h && h->posted_write)
		h->posted_write(nd, p);
	nd->st.to_target++;
	if (ht_tgt_handle(&nd->tgt, p, &rsp) != 1 || (n = ht_encode(&rsp, b, sizeof(b))) <= 0)
		return;
	target_response(nd, b, n, now);
}

/* A packet of a rare shape (parsed), decoded once and served by the
 * struct ht_pkt API. */
static void from_bridge_rare(struct htnode *nd, const struct ht_desc *d, uint64_t now)
{
	struct ht_pkt p;

	if (ht_desc_decode(d, &p) <= 0)
		nd->st.undecodable++;
	else
		from_bridge_decoded(nd, &p, now);
}

/* One parsed packet from the bridge, on the byte path or the decoded one. */
static void from_bridge_any(struct htnode *nd, const struct ht_desc *d, uint64_t now)
{
	if (byte_path(d))
		from_bridge(nd, d, now);
	else
		from_bridge_rare(nd, d, now);
}

/* The bridge's sink (htoe_set_local_sink), straight from the frame, the
 * packet parsed once by the bridge: a posted write applied to the memory
 * target, or a response handed to the requester. Nothing here calls into
 * the bridge. */
static void sink_deliver(void *ctx, const struct ht_desc *d, uint64_t now)
{
	if (d->vc == HT_VC_R) /* a response: on the byte path (never prefixed) */
		to_requester(ctx, d, now);
	else
		from_bridge_any(ctx, d, now);
}

/* The bridge's sink for a remote non-posted request: served by the memory
 * target, its response encoded straight into the bridge's transmit slot.
 * Not while target responses wait in our queue (they go first). */
static int sink_serve(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap, uint64_t now)
{
	struct htnode *nd = ctx;
	int n;

	(void)now;
	if (nd->rsp_n)
		return 0;
	n = ht_tgt_serve(&nd->tgt, d, rsp, cap);
	if (n > 0) {
		nd->st.to_target++;
		nd->st.rsp_to_bridge++;
	}
	return n;
}

static unsigned local_output(struct htnode *nd, uint64_t now)
{
	struct htoe_pkt_ref in[HTNODE_BURST];
	struct ht_desc d[HTNODE_BURST];
	unsigned moved = 0;

	for (;;) {
		/* do not take more requests than the response queue can hold;
		 * posted writes and responses are always taken (HT: a full
		 * response queue must not hold them up, else two nodes whose
		 * responses wait on each other's credits deadlock) */
		unsigned room = HTNODE_RSPQ - nd->rsp_n, taken, k = 0;

		/* read in place from the bridge's queue, parsed once */
		taken = htoe_local_output_burst_np(nd->b, in, HTNODE_BURST, room, now);
		for (unsigned i = 0; i < taken; i++) {
			if (ht_desc_parse(in[i].pkt, in[i].len, &d[k]) != (int)in[i].len) {
				nd->st.undecodable++;
				continue;
			}
			if (!byte_path(&d[k])) {
				/* a rare shape: served at once, in order with the burst */
				for (unsigned j = 0; j < k; j++)
					from_bridge(nd, &d[j], now);
				from_bridge_rare(nd, &d[k], now);
				k = 0;
				continue;
			}
			k++;
		}
		for (unsigned i = 0; i < k; i++)
			from_bridge(nd, &d[i], now);
		htoe_local_output_done(nd->b);
		if (nd->rsp_n)
			drain_rspq(nd, now);
		moved += taken;
		if (taken < HTNODE_BURST)
			return moved;
	}
}

/*
 * Hand one op to the bridge: reads and dword writes encoded here, straight
 * from the op (ht_req_issue_fast), and given as bytes with their parsed
 * descriptor (htoe_local_input_desc: no second parse); the other ops (byte
 * writes, atomics, Flush, Fence, prefixed addresses) built as a struct
 * ht_pkt that the bridge encodes once (htoe_local_input_pkt), rather than
 * encoded here by the table and decoded again there. Returns what
 * htoe_local_input gives, or 1 when the requester has no tag; the decoded
 * request is in *p when want_pkt (the issued hook).
 */
static int issue_one(struct htnode *nd, const struct ht_op *op, uint64_t cookie, uint64_t now,
		     bool want_pkt, struct ht_pkt *p)
{
	uint8_t b[HT_MAX_PKT_LEN];
	struct ht_desc d;
	int r, n = ht_req_issue_fast(&nd->req, op, cookie, b, sizeof(b), &d);

	if (n != -ENOTSUP) {
		if (n <= 0)
			return 1;
		r = htoe_local_input_desc(nd->b, &d, now); /* encoded and parsed once */
		if (r != 0)
			ht_req_unissue_bytes(&nd->req, b, (size_t)n);
		else if (want_pkt)
			(void)ht_decode(b, (size_t)n, p); /* our own encoding: decodes */
		return r;
	}
	struct ht_op o = *op;

	o.cookie = cookie;
	if (ht_req_issue(&nd->req, &o, p) != 0)
		return 1;
	r = htoe_local_input_pkt(nd->b, p, now);
	if (r != 0)
		ht_req_unissue(&nd->req, p);
	return r;
}

static unsigned issue_ops(struct htnode *nd, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	bool want_pkt = h && h->issued;
	unsigned moved = 0, idle = 0, n_wl = nd->n_wl;

	if (nd->hold)
		return 0;
	while (idle < n_wl && moved < HTNODE_ISSUE_BURST) {
		unsigned idx = nd->rr;
		struct ht_workload *w = nd->wl[idx];
		const struct ht_op *op;
		struct ht_pkt p;

		nd->rr = idx + 1 < n_wl ? idx + 1 : 0; /* no division */
		if (!w || ht_wl_waiting(w) || ht_wl_peek_ref(w, &op) != 1) {
			idle++;
			continue;
		}
		int r = issue_one(nd, op, op->cookie | (uint64_t)idx << HTNODE_COOKIE_SHIFT, now,
				  want_pkt, &p);
		if (r == 1) {
			nd->st.no_tag++;
			break; /* no tag: wait for completions */
		}
		if (r != 0) {
			if (r != -EAGAIN) {
				nd->st.rejected++;
				if (h && h->rejected)
					h->rejected(nd, idx, r);
				return moved;
			}
			nd->st.backpressure++;
			idle++;
			continue;
		}
		ht_wl_commit_at(w, now);
		/* a workload that can issue nothing before a completion is not
		 * asked again in this poll: its next op is drawn in a later one,
		 * after the frame this poll fills has left */
		idle = ht_wl_full(w) ? 1 : 0;
		moved++;
		nd->st.issued++;
		if (want_pkt)
			h->issued(nd, idx, &p);
	}
	return moved;
}

/* Visits only what has work: an idle node's poll is the time a frame that
 * arrives meanwhile waits to be seen (half of it on average, per hop of a
 * round trip). */
unsigned htnode_poll(struct htnode *nd, uint64_t now)
{
	unsigned moved = nd->rsp_n ? drain_rspq(nd, now) : 0;

	if (htoe_local_pending(nd->b))
		moved += local_output(nd, now);
	/* one workload waiting for a completion (a read round trip between
	 * its request and its response): nothing to issue, no walk */
	if (nd->n_wl && !nd->hold && !(nd->n_wl == 1 && (!nd->wl[0] || ht_wl_waiting(nd->wl[0]))))
		moved += issue_ops(nd, now);
	return moved;
}

bool htnode_busy(const struct htnode *nd)
{
	return htoe_busy(nd->b) || nd->rsp_n || ht_req_outstanding(&nd->req);
}
