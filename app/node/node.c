/* SPDX-License-Identifier: BSD-3-Clause
 * htnode: drives the local HT side of one HToE node. See node.h.
 * (Factored out of the simulator, app/sim/sim.c, so that htoe-sim and the
 * DPDK application htoe-bridge drive a node with the same code.)
 */
#include <errno.h>
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

int htnode_init(struct htnode *nd, struct htoe *b, uint8_t bridge_ubase, uint8_t bridge_units,
		unsigned n_unitids, uint8_t first_unitid, struct ht_workload **wl, unsigned n_wl)
{
	if (n_wl > HTNODE_MAX_WL || (n_wl && !wl))
		return -EINVAL;
	nd->b = b;
	nd->bridge_ubase = bridge_ubase;
	nd->bridge_units = bridge_units;
	nd->wl = wl;
	nd->n_wl = n_wl;
	nd->hold = false;
	nd->rr = 0;
	memset(&nd->st, 0, sizeof(nd->st));
	memset(&nd->rd_lat, 0, sizeof(nd->rd_lat));
	return htnode_reset_requester(nd, n_unitids, first_unitid);
}

static void to_requester(struct htnode *nd, const struct ht_pkt *p, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	struct ht_completion c;
	struct ht_wl_result res;
	int r = ht_req_rx(&nd->req, p, &c);

	if (r != 1) {
		nd->st.unexpected++;
		if (h && h->unexpected)
			h->unexpected(nd, p, r);
		return;
	}
	unsigned idx = (unsigned)(c.cookie >> HTNODE_COOKIE_SHIFT);

	if (idx >= nd->n_wl || !nd->wl[idx]) {
		nd->st.bad_cookie++;
		return;
	}
	c.cookie &= (1ull << HTNODE_COOKIE_SHIFT) - 1;
	nd->st.completions++;
	int rc = ht_wl_complete(nd->wl[idx], &c, &res);

	if (rc >= 0 && res.type == HT_OP_READ && !res.sweep && now >= res.issued_at)
		lat_add(&nd->rd_lat, now - res.issued_at);

	if (h && h->completed)
		h->completed(nd, idx, &c, rc, &res);
}

/* Offer queued target responses to the bridge. */
static unsigned drain_rspq(struct htnode *nd, uint64_t now)
{
	unsigned moved = 0;

	while (nd->rsp_n) {
		struct ht_pkt *p = &nd->rspq[nd->rsp_head];

		/* the bridge encodes it (no encode here + decode there) */
		if (htoe_local_input_pkt(nd->b, p, now) == -EAGAIN)
			break;
		nd->rsp_head = (nd->rsp_head + 1) % HTNODE_RSPQ;
		nd->rsp_n--;
		moved++;
	}
	return moved;
}

static unsigned local_output(struct htnode *nd, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	uint8_t b[HT_MAX_PKT_LEN];
	unsigned moved = 0;
	int n;

	/* do not take more requests than the response queue can hold */
	while (nd->rsp_n < HTNODE_RSPQ &&
	       (n = htoe_local_output(nd->b, b, sizeof(b), now)) > 0) {
		struct ht_pkt p, rsp;

		moved++;
		if (ht_decode(b, (size_t)n, &p) != n) {
			nd->st.undecodable++;
			continue;
		}
		if (ht_pkt_vc(&p) == HT_VC_R) {
			to_requester(nd, &p, now);
			continue;
		}
		if (p.kind == HT_K_WRSIZED && p.posted && h && h->posted_write)
			h->posted_write(nd, &p);
		nd->st.to_target++;
		if (ht_tgt_handle(&nd->tgt, &p, &rsp) != 1)
			continue;
		if (unitid_in(rsp.unitid, nd->bridge_ubase, nd->bridge_units)) {
			nd->rspq[(nd->rsp_head + nd->rsp_n) % HTNODE_RSPQ] = rsp;
			nd->rsp_n++;
			nd->st.rsp_to_bridge++;
			drain_rspq(nd, now);
		} else {
			to_requester(nd, &rsp, now);
		}
	}
	return moved;
}

static unsigned issue_ops(struct htnode *nd, uint64_t now)
{
	const struct htnode_hooks *h = nd->hooks;
	unsigned moved = 0, idle = 0, n_wl = nd->n_wl;

	if (nd->hold)
		return 0;
	while (idle < n_wl && moved < HTNODE_ISSUE_BURST) {
		unsigned idx = nd->rr;
		struct ht_workload *w = nd->wl[idx];
		struct ht_op op;
		struct ht_pkt p;

		nd->rr = (nd->rr + 1) % n_wl;
		if (!w || ht_wl_peek(w, &op) != 1) {
			idle++;
			continue;
		}
		op.cookie |= (uint64_t)idx << HTNODE_COOKIE_SHIFT;
		if (ht_req_issue(&nd->req, &op, &p) != 0) {
			nd->st.no_tag++;
			break; /* no tag: wait for completions */
		}
		int r = htoe_local_input_pkt(nd->b, &p, now);
		if (r != 0) {
			ht_req_unissue(&nd->req, &p);
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
		idle = 0;
		ht_wl_commit_at(w, now);
		moved++;
		nd->st.issued++;
		if (h && h->issued)
			h->issued(nd, idx, &p);
	}
	return moved;
}

unsigned htnode_poll(struct htnode *nd, uint64_t now)
{
	unsigned moved = drain_rspq(nd, now);

	moved += local_output(nd, now);
	moved += issue_ops(nd, now);
	return moved;
}

bool htnode_busy(const struct htnode *nd)
{
	return htoe_busy(nd->b) || nd->rsp_n || ht_req_outstanding(&nd->req);
}

bool htnode_workloads_done(const struct htnode *nd)
{
	for (unsigned i = 0; i < nd->n_wl; i++)
		if (nd->wl[i] && !ht_wl_done(nd->wl[i]))
			return false;
	return true;
}
