/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_deliver: the queue towards the local HT side (posted writes, requests
 * and responses that arrived from remote nodes, and the bridge's own
 * answers), the match of a remote response to the local requester's
 * outstanding request, and the fan-in of a local Flush. See htoe_deliver.h.
 */
#include <errno.h>
#include <string.h>

#include "htoe_deliver.h"

unsigned htoe_lq_room(const struct htoe *b, enum ht_vc vc)
{
	const struct htoe_lq *q = &b->lq[vc];

	return q->mask + 1 - (q->tail - q->hold);
}

int htoe_lq_push(struct htoe *b, enum ht_vc vc, const uint8_t *pkt, size_t len,
		 uint16_t vl, uint8_t epoch, bool pooled, bool has_data, bool passpw)
{
	struct htoe_lq *q = &b->lq[vc];
	struct htoe_lent *e;

	if (!htoe_lq_room(b, vc) || len > HT_MAX_PKT_LEN)
		return -EAGAIN;
	e = &q->e[q->tail & q->mask];
	ht_data_copy(e->bytes, pkt, len);
	e->len = (uint8_t)len;
	e->vl = vl;
	e->epoch = epoch;
	e->pooled = pooled;
	e->has_data = has_data;
	e->passpw = passpw;
	if (vc == HT_VC_P)
		b->lq_p_enq++;
	e->stamp = b->lq_p_enq;
	q->tail++;
	return 0;
}

int htoe_lq_push_pkt(struct htoe *b, const struct ht_pkt *p)
{
	uint8_t buf[HT_MAX_PKT_LEN];
	int n = ht_encode(p, buf, sizeof(buf));

	if (n < 0)
		return -EINVAL;
	return htoe_lq_push(b, ht_pkt_vc(p), buf, (size_t)n, HTOE_NO_VL, 0, false,
			    ht_link_pkt_has_data(p), p->passpw);
}

/* The local side consumed an entry: free its receive buffer. */
void htoe_lq_release(struct htoe *b, enum ht_vc vc, const struct htoe_lent *e)
{
	if (e->pooled)
		htoe_lq_release_n(b, vc, e->vl, 1, e->has_data);
}

void htoe_lq_release_n(struct htoe *b, enum ht_vc vc, uint16_t vl, unsigned n, unsigned ndata)
{
	struct htoe_vl *v = &b->vl[vl];

	htoe_credit_rx_release_n(&b->pool, &v->crx, vc, n, ndata);
	v->regrant_due = true; /* granted again once, before v's next frame */
	htoe_vl_wake(v);
}

/* VL reset: the packets of v still queued for the local side are released
 * from its credit accounting (which restarts at zero) and stay queued
 * outside the pool: posted writes and responses that arrived in order are
 * still delivered; NP requests are skipped (their epoch is old). */
void htoe_lq_unpool_vl(struct htoe *b, struct htoe_vl *v)
{
	uint16_t idx = htoe_vl_index(b, v);

	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		struct htoe_lq *q = &b->lq[vc];

		for (uint32_t i = q->head; i != q->tail; i++) {
			struct htoe_lent *e = &q->e[i & q->mask];

			if (e->vl == idx && e->pooled) {
				htoe_credit_rx_release(&b->pool, &v->crx, (enum ht_vc)vc,
						       e->has_data);
				e->pooled = 0;
			}
		}
	}
}

int htoe_answer_local(struct htoe *b, const struct ht_pkt *req, enum ht_rsp_err why)
{
	struct htoe_np_info np;
	struct ht_pkt r;

	if (htoe_np_info_from_req(req, &np) != 0 ||
	    htoe_poison_build(req->unitid, req->srctag, &np, why, &r) != 0)
		return -EINVAL;
	return htoe_lq_push_pkt(b, &r);
}

/* One VL answered a forwarded Flush (sub: (UnitID - flush_unitid) * 32 +
 * SrcTag of the one it was sent):
 * the local requester's Flush is answered when every VL has answered, with
 * the worst error seen. */
int htoe_flush_complete(struct htoe *b, uint8_t sub, enum ht_rsp_err err)
{
	struct htoe_flush *f;
	struct ht_pkt req;

	if (sub >= b->flush_subs || b->flush_sub[sub] < 0)
		return -ENOENT;
	f = &b->flush[b->flush_sub[sub]];
	b->flush_sub[sub] = -1;
	if (err > f->err)
		f->err = (uint8_t)err;
	if (--f->remaining)
		return 0;
	memset(&req, 0, sizeof(req));
	req.kind = HT_K_FLUSH;
	req.unitid = f->unitid;
	req.srctag = f->srctag;
	f->used = 0;
	return htoe_answer_local(b, &req, (enum ht_rsp_err)f->err);
}

/* A response from a remote node (decapsulated): match it to the local
 * requester's outstanding request, then to the sink at once (1) when no
 * response waits and, unless it has PassPW, no posted write; else queued
 * for the local side (0). -ENOENT: late (after a timeout or reset) or not
 * ours, dropped; 1 also for a Flush answer consumed here. */
int htoe_remote_response(struct htoe *b, struct htoe_vl *v, const struct ht_desc *d,
			 bool pooled, uint64_t now)
{
	if (htoe_outstanding_complete(&b->out, htoe_vl_index(b, v), d->unitid, d->srctag, NULL) !=
	    0) {
		v->st.late_responses++;
		return -ENOENT;
	}
	if (htoe_flush_sub_of(b, d->unitid, d->srctag) >= 0) {
		htoe_flush_complete(b, (uint8_t)htoe_flush_sub_of(b, d->unitid, d->srctag),
				    (enum ht_rsp_err)d->rsp_err);
		return 1; /* consumed here: free its buffer */
	}
	if (b->sink.deliver && b->lq[HT_VC_R].head == b->lq[HT_VC_R].tail &&
	    (d->passpw || b->lq[HT_VC_P].head == b->lq[HT_VC_P].tail)) {
		b->sink.deliver(b->sink.ctx, d, now);
		b->st.local_out++;
		b->st.local_direct++;
		return 1;
	}
	htoe_lq_push(b, HT_VC_R, d->pkt, d->len, htoe_vl_index(b, v), v->epoch, pooled,
		     ht_cmd_has_data(d->cmd), d->passpw);
	return 0;
}
