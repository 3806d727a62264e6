/* SPDX-License-Identifier: BSD-3-Clause
 * Selective reset of one virtual link, and poisoned responses (HToE paper
 * §3.4, §4.5).
 *
 * Reset handshake: the initiator proposes epoch e+1 in RESET frames (with a
 * 16-bit nonce in the seq field) until it sees RESET_ACK(e+1, nonce), or any
 * ACK/NAK/DATA frame of epoch e+1 (the peer adopted it and its RESET_ACK was
 * lost). The receiver of a RESET(e', n'):
 *  - resetting itself with proposal e: adopts e' unless e is after e'
 *    (both reset at once: the later epoch wins; equal epochs both go up);
 *  - up with epoch e' already: a copy of the RESET that set it up, answers
 *    RESET_ACK again without cleaning up;
 *  - n' equal to the last nonce seen from the peer: a late copy, dropped;
 *  - e' after e: a new reset: cleans up, adopts e', answers RESET_ACK;
 *  - e' before e with a new nonce: the peer restarted and does not know our
 *    epoch: we reset to e+1 ourselves, which the peer adopts.
 *
 * Clean-up of a VL, on either side: every local NP request outstanding on
 * that VL is answered to the local requester with target abort; queued NP
 * requests and responses for the peer are dropped; posted writes framed but
 * not acknowledged are dropped and counted as posted_lost_reset (the peer may
 * or may not have applied them); posted writes not yet framed are kept for
 * the new epoch on a warm reset and refused (posted_refused) on a cold one;
 * sequence numbers restart at 0 and credits at the reserve. Requests the peer
 * sent us before the reset that are still queued for the local target are not
 * executed; answers to those already executed are dropped (their requester
 * was poisoned by its own bridge). Every other VL is untouched.
 */
#include <errno.h>
#include <string.h>

#include "htoe_internal.h"

static void vl_cleanup(struct htoe *b, struct htoe_vl *v, bool cold)
{
	htoe_poison_vl(b, v);
	htoe_vl_drop_queues(b, v, !cold);
	htoe_retry_reset(&v->rt);
	htoe_credit_tx_reset(&v->ctx);
	htoe_lq_unpool_vl(b, v);
	htoe_encap_drop_held(b, v);
	htoe_credit_rx_reset(&b->pool, &v->crx);
	htoe_credit_rx_regrant(&b->pool, &v->crx);
	v->credit_dirty = true;
	v->stall_since = 0;
	v->st.selective = 0; /* until the handshake agrees again */
	v->st.resets++;
}

void htoe_reset_begin(struct htoe *b, struct htoe_vl *v, bool cold, uint64_t now)
{
	vl_cleanup(b, v, cold);
	v->state = HTOE_VL_RESETTING;
	v->epoch++;
	/* Nonces differ between incarnations of a node (they start from its
	 * boot epoch) and between successive resets. */
	v->nonce = (uint16_t)(v->nonce ? v->nonce + 1u
				       : ((unsigned)b->cfg.epoch << 8 | (b->cfg.node_id & 0xffu)) + 1u);
	v->reset_cold = cold;
	v->reset_rto_ns = b->cfg.rto_init_ns;
	v->reset_next_ns = now;
	v->reset_tx = 0;
}

/* The handshake's outcome for selective retry: used when both ends offer it
 * (our configuration, the flag in the peer's RESET or RESET_ACK). */
static void set_retry_mode(struct htoe_vl *v, bool peer_offers)
{
	bool sel = v->sb && peer_offers;

	htoe_retry_set_mode(&v->rt, sel ? HTOE_RETRY_SELECTIVE : HTOE_RETRY_GBN);
	v->st.selective = htoe_retry_mode(&v->rt) == HTOE_RETRY_SELECTIVE;
}

void htoe_reset_up(struct htoe *b, struct htoe_vl *v, uint64_t now)
{
	(void)b;
	(void)now;
	v->state = HTOE_VL_UP;
	v->credit_dirty = true;
}

/* Up without our RESET_ACK: a frame of the epoch we proposed shows that the
 * peer adopted one of our RESETs. If every copy we sent offered selective
 * retry, the peer (which parsed the flag, so it knows it) chose by its own
 * configuration; an ACK/NAK with a SACK block says it chose selective. */
void htoe_reset_up_implied(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
			   uint64_t now)
{
	htoe_reset_up(b, v, now);
	set_retry_mode(v, (h->sack && h->ftype != HTOE_FT_CTRL) ||
			  v->reset_tx <= HTOE_RESET_SACK_COPIES);
}

static bool epoch_after(uint8_t a, uint8_t b)
{
	return (int8_t)(a - b) > 0;
}

int htoe_reset_input(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		     uint64_t now)
{
	if (h->ftype == HTOE_FT_RESET_ACK) {
		if (v->state == HTOE_VL_RESETTING && h->epoch == v->epoch &&
		    h->seq == v->nonce) {
			htoe_reset_up(b, v, now);
			set_retry_mode(v, h->sack);
			htoe_credit_tx_update(&v->ctx, h->credit, now);
			return 0;
		}
		return -HTOE_DROP_EPOCH; /* stale or duplicate RESET_ACK */
	}

	/* RESET(e', n') */
	bool copy = h->seq == v->peer_nonce;

	v->peer_nonce = h->seq;
	if (v->state == HTOE_VL_RESETTING) {
		if (epoch_after(v->epoch, h->epoch))
			return -HTOE_DROP_EPOCH; /* both reset; ours wins */
		v->epoch = h->epoch;     /* theirs wins, or the same epoch */
		htoe_reset_up(b, v, now);
		set_retry_mode(v, h->sack);
	} else if (h->epoch == v->epoch) {
		/* a copy of the RESET that set up this epoch: answer again */
	} else if (copy) {
		return -HTOE_DROP_EPOCH; /* a late copy of an older RESET */
	} else if (epoch_after(h->epoch, v->epoch)) {
		vl_cleanup(b, v, h->cold);
		v->epoch = h->epoch;
		set_retry_mode(v, h->sack);
	} else {
		/* An older epoch with a new nonce: the peer restarted and does
		 * not know our epoch. Reset to an epoch after ours; the peer,
		 * still resetting, adopts it. */
		htoe_reset_begin(b, v, h->cold, now);
		return 0;
	}
	htoe_credit_tx_update(&v->ctx, h->credit, now);
	v->ack_reset = true;
	v->ack_epoch = h->epoch;
	v->ack_nonce = h->seq;
	v->ack_cold = h->cold;
	v->ack_sack = htoe_retry_mode(&v->rt) == HTOE_RETRY_SELECTIVE;
	return 0;
}

/* ---------------------------------------------------------------- poison */

void htoe_poison_entry(struct htoe *b, const struct htoe_outstanding_entry *e,
		       enum htoe_poison_reason why)
{
	struct ht_pkt r;

	if (e->unitid == b->flush_unitid) {
		htoe_flush_complete(b, e->srctag, htoe_poison_err(why));
		return;
	}
	if (htoe_poison_response(e, why, &r) != 0)
		return;
	b->vl[e->vl].st.poisoned++;
	htoe_lq_push_pkt(b, &r);
}

static void poison_cb(void *arg, const struct htoe_outstanding_entry *e)
{
	struct htoe *b = arg;

	htoe_poison_entry(b, e, HTOE_POISON_VL_RESET);
}

static void expire_cb(void *arg, const struct htoe_outstanding_entry *e)
{
	struct htoe *b = arg;

	b->vl[e->vl].st.np_timeouts++;
	htoe_poison_entry(b, e, HTOE_POISON_TIMEOUT);
}

void htoe_poison_vl(struct htoe *b, struct htoe_vl *v)
{
	htoe_outstanding_drop_vl(&b->out, htoe_vl_index(b, v), poison_cb, b);
}

void htoe_poison_expired(struct htoe *b, uint64_t now)
{
	htoe_outstanding_expire(&b->out, now, expire_cb, b);
}
