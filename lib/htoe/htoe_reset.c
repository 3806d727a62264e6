/* SPDX-License-Identifier: BSD-3-Clause
 * Selective reset of one virtual link, and poisoned responses (HToE paper
 * §3.4, §4.5).
 *
 * Reset handshake: the initiator proposes epoch e+1 in RESET frames (with a
 * 64-bit nonce in the payload, its low 16 bits in the seq field) until it
 * sees RESET_ACK(e+1, nonce). Nothing else brings a resetting VL up: the
 * nonce is made with a keyed PRF (new_nonce), so only a peer that saw our
 * RESET can answer it. If the RESET_ACK is lost, the RESET is sent again and
 * the peer, up with that epoch, answers it again.
 *
 * Incarnations: RESET, RESET_ACK and CTRL carry the sender's incarnation
 * (htoe_config.incarnation, random at every start). A frame with a new one
 * from a peer we knew claims a restart, but without MACsec anyone can send
 * it with the peer's MAC: it costs one cold reset of the VL (our RESET,
 * with an epoch after the claimant's) and retires nothing. The new
 * incarnation replaces the known one only when a RESET_ACK from it echoes
 * the nonce of that RESET; a forged claim is answered by the real peer's
 * RESET_ACK under its known incarnation instead, and the VL is up again
 * after one round trip. A retired incarnation's late frames are dropped
 * (epoch, or a retired incarnation).
 *
 * The receiver of a RESET(e', n') from the incarnation it knows:
 *  - resetting itself with proposal e: adopts e' unless e is after e'
 *    (both reset at once: the later epoch wins; equal epochs both go up);
 *  - up with epoch e' already: a copy of the RESET that set it up, answers
 *    RESET_ACK again without cleaning up;
 *  - n' equal to the last nonce seen from the peer: a late copy, dropped;
 *  - e' after e: a new reset: resets itself, proposing e' (a RESET does not
 *    bring a VL up in a new epoch: it may be forged); the peer, resetting
 *    with e', adopts it and answers;
 *  - e' before e with a new nonce: the peer restarted and does not know our
 *    epoch: we reset to e+1 ourselves, which the peer adopts.

 * Clean-up of a VL, on either side: every local NP request outstanding on
 * that VL is reported lost (the loss event: the peer may have executed it)
 * and answered to the local requester with target abort; queued NP
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

#include "htoe_deliver.h"
#include "htoe_encap.h"
#include "htoe_reset.h"

static void vl_cleanup(struct htoe *b, struct htoe_vl *v, bool cold)
{
	htoe_poison_vl(b, v);
	htoe_vl_drop_queues(b, v, !cold);
	htoe_retry_reset(&v->rt);
	v->ack_wait = false; /* an ack of the old epoch */
	v->sent_wait = false; /* (a frame of the old epoch) */
	htoe_credit_tx_reset(&v->ctx);
	htoe_lq_unpool_vl(b, v);
	htoe_encap_drop_held(b, v);
	htoe_credit_rx_reset(&b->pool, &v->crx);
	htoe_credit_rx_regrant(&b->pool, &v->crx);
	v->credit_dirty = true;
	v->stall_since = 0;
	v->st.selective = 0; /* until the handshake agrees again */
	v->st.resets++;
	b->st.vl_resets++;
}

/* ------------------------------------------------------------- nonces */

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

#define SIPROUND(v0, v1, v2, v3) do { \
		v0 += v1; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32); \
		v2 += v3; v3 = rotl64(v3, 16); v3 ^= v2; \
		v0 += v3; v3 = rotl64(v3, 21); v3 ^= v0; \
		v2 += v1; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32); \
	} while (0)

uint64_t htoe_siphash24(const uint8_t key[16], const void *msg, size_t len)
{
	const uint8_t *in = msg;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	uint64_t m, last = (uint64_t)len << 56;
	size_t i, full = len & ~(size_t)7;

	for (i = 0; i < full; i += 8) {
		m = le64(in + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (size_t j = 0; j < (len & 7); j++)
		last |= (uint64_t)in[full + j] << (8 * j);
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	for (i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* A fresh nonce for a RESET of v: SipHash-2-4 under the caller's key of
 * (our incarnation, our node, the peer, a counter that never repeats in
 * this incarnation). Never 0 (0 means "no RESET yet"). */
static uint64_t new_nonce(struct htoe *b, const struct htoe_vl *v)
{
	uint8_t m[16];
	uint64_t n;

	htoe_put_be32(m, b->cfg.incarnation);
	htoe_put_be16(m + 4, b->cfg.node_id);
	htoe_put_be16(m + 6, v->node);
	htoe_put_be32(m + 8, (uint32_t)(b->nonce_ctr >> 32));
	htoe_put_be32(m + 12, (uint32_t)b->nonce_ctr);
	b->nonce_ctr++;
	n = htoe_siphash24(b->cfg.nonce_key, m, sizeof(m));
	return n ? n : 1;
}

/* ------------------------------------------------------------- handshake */

void htoe_reset_begin(struct htoe *b, struct htoe_vl *v, bool cold, uint64_t now)
{
	vl_cleanup(b, v, cold);
	v->state = HTOE_VL_RESETTING;
	v->epoch++;
	v->nonce = new_nonce(b, v);
	v->reset_cold = cold;
	v->reset_rto_ns = b->cfg.rto_init_ns;
	v->reset_next_ns = now;
	b->ctl_due |= v->active_bit;
	htoe_vl_wake(v);
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
	v->state = HTOE_VL_UP;
	v->credit_dirty = true;
	v->st.up_ns = now;
	if (v->restart_pending) {
		v->restart_pending = false;
		v->st.restart_up_ns = now - v->st.peer_restart_ns;
	}
}

static bool epoch_after(uint8_t a, uint8_t b)
{
	return (int8_t)(a - b) > 0;
}

/* Where the incarnation `inc` of a frame that passed the source check
 * stands: 0 the peer's (or the first one seen: learnt), 1 a new one not yet
 * proven, -HTOE_DROP_INCARNATION one the peer had before (a late frame). */
static int inc_class(struct htoe_vl *v, uint32_t inc)
{
	if (!v->peer_inc_known) {
		v->peer_inc_known = true;
		v->peer_inc = inc;
		return 0;
	}
	if (inc == v->peer_inc)
		return 0;
	for (unsigned i = 0; i < v->peer_inc_old_n; i++)
		if (v->peer_inc_old[i] == inc)
			return -HTOE_DROP_INCARNATION;
	return 1;
}

/* The peer proved the new incarnation `inc` (a RESET_ACK from it echoed
 * the nonce of our RESET): it replaces the known one, which is retired. */
static void inc_commit(struct htoe *b, struct htoe_vl *v, uint32_t inc)
{
	if (v->peer_inc_old_n < 4)
		v->peer_inc_old_n++;
	memmove(v->peer_inc_old + 1, v->peer_inc_old, sizeof(v->peer_inc_old) - sizeof(uint32_t));
	v->peer_inc_old[0] = v->peer_inc;
	v->peer_inc = inc;
	htoe_report_restart(b, v, v->peer_inc_old[0], inc);
	v->st.peer_restarts++;
	b->st.peer_restarts++;
	v->st.peer_restart_ns = v->claim_ns;
	v->restart_pending = true;
}

/* A frame claims a new incarnation: the peer may have restarted, or anyone
 * may have sent it with the peer's MAC. Either way it costs one cold reset
 * and retires nothing: only the handshake (a RESET_ACK echoing our nonce)
 * says which incarnation is the peer. Cold: nothing queued for the old
 * incarnation goes to a new one. Claims while that cold reset is pending
 * cost nothing more: our RESET goes out at once. */
static void inc_claim(struct htoe *b, struct htoe_vl *v, uint64_t now)
{
	if (v->state == HTOE_VL_RESETTING && v->reset_cold) {
		v->reset_next_ns = now;
		return;
	}
	v->claim_ns = now;
	v->ack_reset = false;
	htoe_reset_begin(b, v, true, now);
}

/* The peer's incarnation `inc` in a CTRL frame of the current epoch: 0 if
 * it is the known one; else -HTOE_DROP_INCARNATION (a retired one, or a new
 * one, which cost a cold reset). */
int htoe_peer_incarnation(struct htoe *b, struct htoe_vl *v, uint32_t inc, uint64_t now)
{
	int r = inc_class(v, inc);

	if (r == 0)
		return 0;
	if (r > 0)
		inc_claim(b, v, now);
	return -HTOE_DROP_INCARNATION;
}

int htoe_reset_input(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		     const uint8_t *payload, uint64_t now)
{
	uint32_t inc = htoe_get_be32(payload);
	uint64_t nonce = (uint64_t)htoe_get_be32(payload + 4) << 32 | htoe_get_be32(payload + 8);
	int r;

	if ((uint16_t)nonce != h->seq || nonce == 0)
		return -HTOE_DROP_NONCE; /* not a nonce we or a peer could have made */
	if (h->ftype == HTOE_FT_RESET_ACK) {
		/* only an answer to our pending RESET counts: its nonce cannot
		 * be guessed (new_nonce), so it proves the peer saw the RESET */
		if (v->state != HTOE_VL_RESETTING || h->epoch != v->epoch)
			return -HTOE_DROP_EPOCH; /* stale or duplicate RESET_ACK */
		if (nonce != v->nonce)
			return -HTOE_DROP_NONCE; /* forged, or for an older RESET */
		r = inc_class(v, inc);
		if (r < 0)
			return r;
		if (r > 0) {
			/* the peer restarted: proven by the nonce */
			if (!v->reset_cold)
				v->claim_ns = now;
			inc_commit(b, v, inc);
			if (!v->reset_cold) {
				/* a warm reset kept posted writes for the
				 * old incarnation: start again, cold */
				htoe_reset_begin(b, v, true, now);
				return -HTOE_DROP_INCARNATION;
			}
		}
		htoe_reset_up(b, v, now);
		set_retry_mode(v, h->sack);
		htoe_credit_tx_update(&v->ctx, h->credit, now);
		return 0;
	}

	/* RESET(e', n') */
	r = inc_class(v, inc);
	if (r < 0)
		return r;
	if (r > 0) {
		/* A new incarnation never brings the VL up by its RESET: our
		 * cold RESET, with an epoch after its proposal (which a
		 * restarted peer adopts), must be answered first. */
		inc_claim(b, v, now);
		if (!epoch_after(v->epoch, h->epoch))
			v->epoch = (uint8_t)(h->epoch + 1);
		v->peer_nonce = nonce;
		return 0;
	}

	bool copy = nonce == v->peer_nonce;

	v->peer_nonce = nonce;
	if (v->state == HTOE_VL_RESETTING) {
		if (epoch_after(v->epoch, h->epoch)) {
			/* both reset; ours wins. The peer is reachable now:
			 * our RESET goes out at once instead of after its
			 * backed-off RTO (at most one per RESET of the peer) */
			v->reset_next_ns = now;
			return -HTOE_DROP_EPOCH;
		}
		v->epoch = h->epoch;     /* theirs wins, or the same epoch */
		htoe_reset_up(b, v, now);
		set_retry_mode(v, h->sack);
	} else if (h->epoch == v->epoch) {
		/* a copy of the RESET that set up this epoch: answer again */
	} else if (copy) {
		return -HTOE_DROP_EPOCH; /* a late copy of an older RESET */
	} else {
		/* A new reset (a later epoch), or an older epoch with a new
		 * nonce (an incarnation 0 peer that restarted, or one whose
		 * epoch wrapped). Anyone can send a RESET with the peer's
		 * MAC, so it does not bring the VL up in a new epoch: we
		 * reset ourselves, to its epoch if later (the peer, resetting
		 * to it, goes up on our RESET and answers it), else to one
		 * after ours. A forged RESET thus costs one reset, answered
		 * by the real peer at once. */
		if (epoch_after(h->epoch, v->epoch))
			v->epoch = (uint8_t)(h->epoch - 1);
		htoe_reset_begin(b, v, h->cold, now);
		return 0;
	}
	htoe_credit_tx_update(&v->ctx, h->credit, now);
	v->ack_reset = true;
	b->ctl_due |= v->active_bit;
	v->ack_epoch = h->epoch;
	v->ack_nonce = nonce;
	v->ack_cold = h->cold;
	v->ack_sack = htoe_retry_mode(&v->rt) == HTOE_RETRY_SELECTIVE;
	return 0;
}

/* ---------------------------------------------------------------- poison */

void htoe_poison_entry(struct htoe *b, const struct htoe_outstanding_entry *e,
		       enum htoe_poison_reason why)
{
	struct ht_pkt r;

	if (htoe_flush_sub_of(b, e->unitid, e->srctag) >= 0) {
		htoe_flush_complete(b, (uint8_t)htoe_flush_sub_of(b, e->unitid, e->srctag),
				    htoe_poison_err(why));
		return;
	}
	if (htoe_poison_response(e, why, &r) != 0)
		return;
	b->vl[e->vl].st.poisoned++;
	htoe_lq_push_pkt(b, &r);
}

/* A request the reset of its VL poisons: the peer may have executed it (a
 * write, an atomic) and its answer is lost, so its bytes are reported lost
 * (htoe_set_loss_cb) before the requester gets its error. */
static void poison_cb(void *arg, const struct htoe_outstanding_entry *e)
{
	struct htoe *b = arg;

	if (b->loss_fn && e->len) {
		struct htoe_loss l = { .kind = HTOE_LOSS_RESET, .node = b->vl[e->vl].node,
				       .addr = e->addr, .len = e->len };

		b->loss_fn(b->loss_ctx, &l);
	}
	htoe_poison_entry(b, e, HTOE_POISON_VL_RESET);
}

/* A request not answered by its deadline is answered with an error. If it
 * still waits unframed in its VL's queue (the VL down or starved of
 * credits since), it is taken out first: a request answered with an error
 * is never sent afterwards (the peer would execute it, and answer it a
 * second time). */
static void expire_cb(void *arg, const struct htoe_outstanding_entry *e)
{
	struct htoe *b = arg;

	htoe_encap_unqueue_np(&b->vl[e->vl], e->unitid, e->srctag);
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
