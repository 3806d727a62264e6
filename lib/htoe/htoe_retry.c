/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_retry: Go-Back-N retry of one virtual link. See htoe_retry.h.
 */
#include "htoe/htoe_retry.h"

#include <errno.h>
#include <string.h>

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void state_reset(struct htoe_retry *r)
{
	r->una = 0;
	r->next_seq = 0;
	r->gb_next = 0;
	r->gb_from = 0;
	r->gb_active = false;
	r->failed = false;
	r->retries = 0;
	r->rto_ns = r->rto_base_ns;
	r->rto_deadline = HTOE_RETRY_NEVER;
	r->rtt_timing = false;

	r->expected = 0;
	r->unacked = 0;
	r->ack_pending = false;
	r->nak_sent = false;
	r->ack_at = HTOE_RETRY_NEVER;
	r->nak_at = HTOE_RETRY_NEVER;
	r->nak_rearm_at = 0;
}

int htoe_retry_init(struct htoe_retry *r, const struct htoe_retry_cfg *cfg)
{
	if (!r || !cfg || cfg->window == 0 || cfg->window > HTOE_RETRY_WINDOW_MAX ||
	    cfg->ack_every == 0 || cfg->rto_init_ns == 0 ||
	    cfg->rto_max_ns < cfg->rto_init_ns || cfg->rto_max_ns < cfg->rto_min_ns)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	if (!r->cfg.rto_min_ns)
		r->cfg.rto_min_ns = cfg->rto_init_ns;
	r->rto_base_ns = cfg->rto_init_ns;
	state_reset(r);
	return 0;
}

void htoe_retry_reset(struct htoe_retry *r)
{
	state_reset(r);
	r->stats.resets++;
}

/* ---- TX ----------------------------------------------------------------- */

uint16_t htoe_retry_tx_una(const struct htoe_retry *r) { return r->una; }
uint16_t htoe_retry_tx_next_seq(const struct htoe_retry *r) { return r->next_seq; }
bool htoe_retry_tx_in_goback(const struct htoe_retry *r) { return r->gb_active; }
bool htoe_retry_tx_failed(const struct htoe_retry *r) { return r->failed; }
uint64_t htoe_retry_tx_rto(const struct htoe_retry *r) { return r->rto_ns; }
uint64_t htoe_retry_srtt(const struct htoe_retry *r) { return r->srtt_ns; }
uint64_t htoe_retry_rttvar(const struct htoe_retry *r) { return r->rttvar_ns; }

/* One RTT sample (RFC 6298 §2): update SRTT, RTTVAR and the base RTO. */
static void rtt_sample(struct htoe_retry *r, uint64_t rtt)
{
	uint64_t rto;

	if (!r->have_rtt) {
		r->srtt_ns = rtt;
		r->rttvar_ns = rtt / 2;
		r->have_rtt = true;
	} else {
		uint64_t diff = r->srtt_ns > rtt ? r->srtt_ns - rtt : rtt - r->srtt_ns;

		r->rttvar_ns = (3 * r->rttvar_ns + diff) / 4;
		r->srtt_ns = (7 * r->srtt_ns + rtt) / 8;
	}
	rto = add_sat(r->srtt_ns, 4 * r->rttvar_ns);
	if (rto < r->cfg.rto_min_ns)
		rto = r->cfg.rto_min_ns;
	if (rto > r->cfg.rto_max_ns)
		rto = r->cfg.rto_max_ns;
	r->rto_base_ns = rto;
	r->stats.rtt_samples++;
}

uint16_t htoe_retry_tx_outstanding(const struct htoe_retry *r)
{
	return (uint16_t)(r->next_seq - r->una);
}

bool htoe_retry_tx_can_send(const struct htoe_retry *r)
{
	return !r->failed && !r->gb_active &&
	       htoe_retry_tx_outstanding(r) < r->cfg.window;
}

int htoe_retry_tx_send(struct htoe_retry *r, uint64_t now, uint16_t *seq)
{
	if (!htoe_retry_tx_can_send(r))
		return -EAGAIN;
	*seq = r->next_seq++;
	if (!r->rtt_timing) {
		r->rtt_timing = true;
		r->rtt_seq = *seq;
		r->rtt_sent = now;
	}
	if (r->rto_deadline == HTOE_RETRY_NEVER)
		r->rto_deadline = add_sat(now, r->rto_ns);
	r->stats.frames_sent++;
	return 0;
}

/* Release [una, ack); ack is known to be within (una, next_seq]. */
static int release(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	int n = htoe_seq_diff(ack, r->una);

	if (r->rtt_timing && htoe_seq_lt(r->rtt_seq, ack)) {
		r->rtt_timing = false;
		rtt_sample(r, now >= r->rtt_sent ? now - r->rtt_sent : 0);
	}
	r->una = ack;
	r->retries = 0;
	r->rto_ns = r->rto_base_ns;
	if (r->una == r->next_seq) {
		r->rto_deadline = HTOE_RETRY_NEVER;
		r->gb_active = false;
	} else {
		r->rto_deadline = add_sat(now, r->rto_ns);
		if (r->gb_active && htoe_seq_lt(r->gb_next, ack))
			r->gb_next = ack;
	}
	return n;
}

/* Classify an ack value: >0 progress, 0 nothing new or stale, -EINVAL. */
static int ack_common(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	if (htoe_seq_lt(r->next_seq, ack)) {
		r->stats.invalid_acks++;
		return -EINVAL;
	}
	if (!htoe_seq_lt(r->una, ack))
		return 0; /* ack == una, or stale */
	if (r->failed) {
		/* progress after the limit: still record the release so the
		 * caller can free its copies; the VL stays failed. */
		int n = htoe_seq_diff(ack, r->una);
		r->una = ack;
		return n;
	}
	return release(r, ack, now);
}

static void goback(struct htoe_retry *r, uint16_t from, uint64_t now)
{
	r->gb_active = true;
	r->gb_from = from;
	r->gb_next = from;
	r->gb_at = now;
	r->rto_deadline = add_sat(now, r->rto_ns);
	r->rtt_timing = false; /* Karn: the timed frame is sent again */
	r->stats.gobacks++;
}

int htoe_retry_tx_ack(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	int n = ack_common(r, ack, now);

	/* The peer answers but still expects una after a timeout: our go-back
	 * was lost. Go back now rather than after the backed-off RTO (at most
	 * once per base RTO, so acks sent before the go-back arrived do not
	 * start another one). */
	if (n == 0 && ack == r->una && r->retries && !r->failed && !r->gb_active &&
	    r->una != r->next_seq && now - r->gb_at >= r->rto_base_ns)
		goback(r, r->una, now);
	return n;
}

int htoe_retry_tx_nak(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	int n = ack_common(r, ack, now);

	if (n < 0)
		return n;
	r->stats.naks_received++;
	if (r->failed || ack != r->una || r->una == r->next_seq)
		return n; /* stale NAK, or nothing left to resend */
	if (r->gb_active && r->gb_from == ack) {
		r->stats.naks_ignored++;
		return n;
	}
	goback(r, ack, now);
	return n;
}

enum htoe_retry_timer htoe_retry_tx_timer(struct htoe_retry *r, uint64_t now)
{
	if (r->rto_deadline == HTOE_RETRY_NEVER || now < r->rto_deadline)
		return HTOE_RETRY_IDLE;
	r->stats.timeouts++;
	r->retries++;
	if (r->retries > r->cfg.retry_limit) {
		r->failed = true;
		r->gb_active = false;
		r->rto_deadline = HTOE_RETRY_NEVER;
		return HTOE_RETRY_LIMIT;
	}
	r->rto_ns = r->rto_ns > r->cfg.rto_max_ns / 2 ? r->cfg.rto_max_ns
						      : r->rto_ns * 2;
	goback(r, r->una, now);
	return HTOE_RETRY_GOBACK;
}

bool htoe_retry_tx_retransmit_peek(const struct htoe_retry *r, uint16_t *seq)
{
	if (!r->gb_active)
		return false;
	*seq = r->gb_next;
	return true;
}

bool htoe_retry_tx_retransmit_next(struct htoe_retry *r, uint16_t *seq)
{
	if (!r->gb_active)
		return false;
	*seq = r->gb_next++;
	if (r->gb_next == r->next_seq)
		r->gb_active = false;
	r->stats.retransmitted++;
	return true;
}

/* ---- RX ----------------------------------------------------------------- */

enum htoe_retry_verdict htoe_retry_rx_frame(struct htoe_retry *r, uint16_t seq,
					    uint64_t now)
{
	if (seq == r->expected) {
		r->expected++;
		r->stats.frames_accepted++;
		/* the gap (if any) is closed */
		r->nak_sent = false;
			r->nak_at = HTOE_RETRY_NEVER;
		if (!r->ack_pending) {
			r->ack_pending = true;
			r->ack_at = add_sat(now, r->cfg.ack_delay_ns);
		}
		if (r->unacked < UINT16_MAX)
			r->unacked++;
		if (r->unacked >= r->cfg.ack_every)
			r->ack_at = min_u64(r->ack_at, now);
		return HTOE_RX_ACCEPT;
	}
	if (htoe_seq_lt(seq, r->expected)) {
		r->stats.dups++;
		r->ack_pending = true;
		r->ack_at = min_u64(r->ack_at, now);
		return HTOE_RX_DUP;
	}
	r->stats.out_of_order++;
	if (!r->nak_sent) {
		r->nak_at = min_u64(r->nak_at, now);
	} else {
		/* repeat only after the re-arm interval */
		r->nak_at = min_u64(r->nak_at, r->nak_rearm_at);
	}
	return HTOE_RX_OUT_OF_ORDER;
}

uint16_t htoe_retry_rx_ack_value(const struct htoe_retry *r)
{
	return r->expected;
}

bool htoe_retry_rx_ack_pending(const struct htoe_retry *r)
{
	return r->ack_pending;
}

bool htoe_retry_rx_ack_due(const struct htoe_retry *r, uint64_t now)
{
	return r->ack_pending && now >= r->ack_at;
}

bool htoe_retry_rx_nak_due(const struct htoe_retry *r, uint64_t now)
{
	return r->nak_at != HTOE_RETRY_NEVER && now >= r->nak_at;
}

void htoe_retry_rx_ack_sent(struct htoe_retry *r, uint64_t now)
{
	(void)now;
	if (r->ack_pending)
		r->stats.acks_sent++;
	r->ack_pending = false;
	r->unacked = 0;
	r->ack_at = HTOE_RETRY_NEVER;
}

void htoe_retry_rx_nak_sent(struct htoe_retry *r, uint64_t now)
{
	r->nak_sent = true;
	r->nak_at = HTOE_RETRY_NEVER;
	r->nak_rearm_at = add_sat(now, r->cfg.rto_init_ns);
	r->stats.naks_sent++;
	/* a NAK carries the ack */
	r->ack_pending = false;
	r->unacked = 0;
	r->ack_at = HTOE_RETRY_NEVER;
}

uint64_t htoe_retry_next_deadline(const struct htoe_retry *r)
{
	uint64_t d = r->rto_deadline;

	if (r->ack_pending)
		d = min_u64(d, r->ack_at);
	return min_u64(d, r->nak_at);
}
