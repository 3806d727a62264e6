/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_retry: Go-Back-N retry of one virtual link. See htoe_retry.h.
 */
#include "htoe/htoe_retry.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "htmodel/ht_packet.h"
#include "htoe/htoe_wire.h"

/* The external definitions of the header's inline queries: libhtoe exports
 * them, for programs that call them without inlining (or were built
 * against a header that declared them as plain functions). */
extern inline uint16_t htoe_retry_tx_una(const struct htoe_retry *r);
extern inline uint16_t htoe_retry_tx_next_seq(const struct htoe_retry *r);
extern inline uint16_t htoe_retry_tx_outstanding(const struct htoe_retry *r);
extern inline bool htoe_retry_tx_in_goback(const struct htoe_retry *r);
extern inline bool htoe_retry_tx_can_send(const struct htoe_retry *r);
extern inline uint16_t htoe_retry_tx_take(struct htoe_retry *r);
extern inline bool htoe_retry_rx_is_held(const struct htoe_retry *r, uint16_t seq);
extern inline uint16_t htoe_retry_rx_held(const struct htoe_retry *r);
extern inline uint16_t htoe_retry_rx_ack_value(const struct htoe_retry *r);
extern inline bool htoe_retry_rx_ack_due(const struct htoe_retry *r, uint64_t now);
extern inline bool htoe_retry_rx_nak_due(const struct htoe_retry *r, uint64_t now);
extern inline void htoe_retry_rx_ack_sent(struct htoe_retry *r, uint64_t now);
extern inline uint64_t htoe_retry_next_deadline(const struct htoe_retry *r);

_Static_assert(HTOE_ROB_PKT_MAX == HT_MAX_PKT_LEN, "reorder slot = largest HT packet");

/* scoreboard flags */
#define SB_SACKED 0x01u   /* TX: the peer holds it */
#define SB_LOST   0x02u   /* TX: to be resent */
#define SB_RTX    0x08u   /* TX: sent more than once */
#define SB_BLIND  0x10u   /* TX: lost (or resent) on a timer's word, without
                           * evidence: by a probe or the RTO */
#define SB_TX     (SB_SACKED | SB_LOST | SB_RTX | SB_BLIND)
#define SB_HELD   HTOE_RETRY_SB_HELD /* RX: we hold it */

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
	r->tx_lap = 0;
	r->rx_lap = 0;
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

	r->sel = false;
	r->lost_n = 0;
	r->rtx_from = 0;
	r->rack_valid = false;
	r->rack_deadline = HTOE_RETRY_NEVER;
	r->rx_held = 0;
	r->sb_txf = 0;
	r->rx_dup = false;
	r->tlp_deadline = HTOE_RETRY_NEVER;
	r->tlp_n = 0;
	r->silent_rtos = 0;
	if (!r->reo_mult)
		r->reo_mult = 1; /* the reordering seen on the path survives resets */
	/* (and so does tlp_shift: how late the path's acks come) */
	if (r->sb)
		memset(r->sb, 0, ((size_t)r->sb_mask + 1) * sizeof(*r->sb));
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

int htoe_retry_attach(struct htoe_retry *r, struct htoe_retry_sb *sb, unsigned n)
{
	if (!sb || n < r->cfg.window || n > HTOE_RETRY_WINDOW_MAX || (n & (n - 1)))
		return -EINVAL;
	r->sb = sb;
	r->sb_mask = (uint16_t)(n - 1);
	r->sb_txf = 0;
	memset(sb, 0, (size_t)n * sizeof(*sb));
	return 0;
}

int htoe_retry_set_mode(struct htoe_retry *r, enum htoe_retry_mode mode)
{
	if (mode == HTOE_RETRY_SELECTIVE && !r->sb)
		return -EINVAL;
	if (r->una != r->next_seq || r->rx_held)
		return -EINVAL;
	r->sel = mode == HTOE_RETRY_SELECTIVE;
	return 0;
}

enum htoe_retry_mode htoe_retry_mode(const struct htoe_retry *r)
{
	return r->sel ? HTOE_RETRY_SELECTIVE : HTOE_RETRY_GBN;
}

static inline struct htoe_retry_sb *sb_at(const struct htoe_retry *r, uint16_t seq)
{
	return &r->sb[seq & r->sb_mask];
}

/* Set an entry's flags, keeping the count of entries with TX flags. */
static inline void sb_set(struct htoe_retry *r, struct htoe_retry_sb *e, unsigned flags)
{
	r->sb_txf = (uint16_t)(r->sb_txf + !!(flags & SB_TX) - !!(e->flags & SB_TX));
	e->flags = (uint8_t)flags;
}

static int sb_counts(const struct htoe_retry *r, unsigned lost, unsigned held, char *err,
		     size_t errlen)
{
	if (lost != r->lost_n || held != r->rx_held) {
		snprintf(err, errlen, "retry: %u lost frames counted %u, %u held counted %u", lost,
			 r->lost_n, held, r->rx_held);
		return -EINVAL;
	}
	if (!r->sel && (lost || held)) {
		snprintf(err, errlen, "retry: selective state in Go-Back-N mode");
		return -EINVAL;
	}
	return 0;
}

int htoe_retry_check(const struct htoe_retry *r, char *err, size_t errlen)
{
	unsigned lost = 0, held = 0, txf = 0, out = htoe_seq_diff(r->next_seq, r->una);

	if (!r->sb)
		return 0;
	if (out > (unsigned)r->sb_mask + 1)
		out = (unsigned)r->sb_mask + 1;
	for (unsigned i = 0; i < out; i++) {
		const struct htoe_retry_sb *e = sb_at(r, (uint16_t)(r->una + i));

		if ((e->flags & (SB_SACKED | SB_LOST)) == (SB_SACKED | SB_LOST)) {
			snprintf(err, errlen, "retry: seq %u both SACKed and lost",
				 (unsigned)(uint16_t)(r->una + i));
			return -EINVAL;
		}
		txf += !!(e->flags & SB_TX);
		lost += !!(e->flags & SB_LOST);
	}
	if (txf != r->sb_txf) {
		snprintf(err, errlen, "retry: scoreboard flags on %u entries, %u of them outstanding "
			 "(seq %u..%u)", r->sb_txf, txf, r->una, r->next_seq);
		return -EINVAL;
	}
	/* held frames lie within sb_mask after the expected one */
	for (unsigned i = 1; held < r->rx_held && i <= r->sb_mask; i++)
		held += !!(sb_at(r, (uint16_t)(r->expected + i))->flags & SB_HELD);
	return sb_counts(r, lost, held, err, errlen);
}

int htoe_retry_check_full(const struct htoe_retry *r, char *err, size_t errlen)
{
	unsigned n, lost = 0, held = 0, txf = 0, out = htoe_seq_diff(r->next_seq, r->una);

	if (!r->sb)
		return 0;
	n = (unsigned)r->sb_mask + 1;
	for (unsigned i = 0; i < n; i++) {
		const struct htoe_retry_sb *e = sb_at(r, (uint16_t)(r->una + i));

		if ((e->flags & SB_TX) && i >= out) {
			snprintf(err, errlen, "retry: scoreboard flags on seq %u, not outstanding",
				 (unsigned)(uint16_t)(r->una + i));
			return -EINVAL;
		}
		txf += !!(e->flags & SB_TX);
		lost += !!(e->flags & SB_LOST);
		held += !!(e->flags & SB_HELD);
	}
	if (txf != r->sb_txf) {
		snprintf(err, errlen, "retry: scoreboard flags on %u entries, counted %u", txf,
			 r->sb_txf);
		return -EINVAL;
	}
	return htoe_retry_check(r, err, errlen) ? -EINVAL : sb_counts(r, lost, held, err, errlen);
}

/* ---- TX ----------------------------------------------------------------- */

bool htoe_retry_tx_failed(const struct htoe_retry *r) { return r->failed; }
uint64_t htoe_retry_tx_rto(const struct htoe_retry *r) { return r->rto_ns; }
uint64_t htoe_retry_srtt(const struct htoe_retry *r) { return r->srtt_ns; }
uint64_t htoe_retry_rttvar(const struct htoe_retry *r) { return r->rttvar_ns; }

/* One RTT sample (RFC 6298 §2): update SRTT, RTTVAR and the base RTO. */
static void rtt_sample(struct htoe_retry *r, uint64_t rtt)
{
	uint64_t rto;

	/* Selective mode: a sample taken from a frame that ended a silence
	 * longer than the path explains (4 SRTT + ack_delay) measured a
	 * poller that was not run (the peer's, or ours), not the path. A
	 * stall costs one copy per timeout in this mode, so the RTO follows
	 * the path: stalls measured into it would make every loss the RTO
	 * must repair wait as long as the longest stall. Four such samples in
	 * a row are the path itself (its round trip grew). */
	if (r->sel && r->have_rtt &&
	    r->quiet_ns > add_sat(4 * r->srtt_ns, r->cfg.ack_delay_ns) && r->rtt_skips < 4) {
		r->rtt_skips++;
		r->stats.rtt_stalled++;
		return;
	}
	r->rtt_skips = 0;
	if (!r->have_rtt) {
		r->srtt_ns = rtt;
		r->rttvar_ns = rtt / 2;
		r->have_rtt = true;
	} else {
		uint64_t diff = r->srtt_ns > rtt ? r->srtt_ns - rtt : rtt - r->srtt_ns;

		r->rttvar_ns = (3 * r->rttvar_ns + diff) / 4;
		r->srtt_ns = (7 * r->srtt_ns + rtt) / 8;
	}
	if (!r->min_rtt_ns || rtt < r->min_rtt_ns)
		r->min_rtt_ns = rtt ? rtt : 1;
	rto = add_sat(r->srtt_ns, 4 * r->rttvar_ns);
	if (rto < r->cfg.rto_min_ns)
		rto = r->cfg.rto_min_ns;
	if (rto > r->cfg.rto_max_ns)
		rto = r->cfg.rto_max_ns;
	r->rto_base_ns = rto;
	r->stats.rtt_samples++;
}

/* ---- selective mode: scoreboard and RACK-like loss detection ------------ */

/* One transmission of seq (first or again) at now. */
static void sb_sent(struct htoe_retry *r, uint16_t seq, uint64_t now, bool rtx)
{
	struct htoe_retry_sb *e = sb_at(r, seq);

	sb_set(r, e, (e->flags & ~SB_TX) | (rtx ? SB_RTX | (e->flags & SB_BLIND) : 0));
	if (e->flags & SB_BLIND) {
		r->blind_at = now;
		r->blind_dup = true;
	}
	e->xmit_ns = now;
	e->txn = ++r->txn;
}

/* A retransmission was needless: the path reorders more than reo_wnd, or
 * (not `reordering`) a probe or go-back repeated a frame the peer had
 * because an ack was lost or late: only the probes back off then, since a
 * wider reordering window would delay every later repair. */
static void spurious(struct htoe_retry *r, bool reordering)
{
	r->stats.spurious++;
	if (reordering) {
		if (r->reo_mult < 64)
			r->reo_mult++;
		r->reo_calm = 0;
	}
	/* acks come later than 2 SRTT predicts (a peer that polls only now
	 * and then, a stalled CPU): probe later, or not before the RTO */
	if (r->tlp_shift < HTOE_RETRY_TLP_SHIFT_MAX)
		r->tlp_shift++;
}

/* Frame e is known delivered at now (acked or SACKed): remember the
 * latest-sent delivered frame and its RTT. */
static void rack_update(struct htoe_retry *r, const struct htoe_retry_sb *e, uint64_t now)
{
	/* a retransmission acknowledged sooner than any RTT allows: the
	 * original arrived, late; the path reorders more than reo_wnd */
	if ((e->flags & (SB_RTX | SB_BLIND)) == SB_RTX && r->min_rtt_ns &&
	    now - e->xmit_ns < r->min_rtt_ns / 2)
		spurious(r, true);
	/* a retransmission delivered sooner than any round trip allows: the
	 * news is of the original, sent long before; taken as the copy's, it
	 * would declare every frame sent before the copy lost (RFC 8985
	 * step 2). Not so for a probe's or a timeout's copy: it went out
	 * after nothing came from the peer for a while, so the peer reports
	 * it (or its original) after every frame sent before it, which it
	 * would report alongside had they arrived; and the copy that fills a
	 * hole is acknowledged at once, sooner than the round trips measured
	 * against the acks the receiver delays. */
	if ((e->flags & (SB_RTX | SB_BLIND)) == SB_RTX && r->min_rtt_ns &&
	    now - e->xmit_ns < r->min_rtt_ns)
		return;
	if (r->rack_valid && (int32_t)(e->txn - r->rack_txn) <= 0)
		return;
	r->rack_valid = true;
	r->rack_txn = e->txn;
	r->rack_rtt_ns = now >= e->xmit_ns ? now - e->xmit_ns : 0;
}

static void mark_lost(struct htoe_retry *r, uint16_t seq, bool blind)
{
	struct htoe_retry_sb *e = sb_at(r, seq);

	if (e->flags & SB_LOST)
		return;
	sb_set(r, e, (e->flags & ~(SB_SACKED | SB_BLIND)) | SB_LOST | (blind ? SB_BLIND : 0));
	r->lost_n++;
	if (htoe_seq_lt(seq, r->rtx_from))
		r->rtx_from = seq;
	if (r->rtt_timing && r->rtt_seq == seq)
		r->rtt_timing = false; /* Karn */
}

/* How long a frame sent before a delivered one may still be on its way:
 * a quarter of the smoothed RTT plus its variation (jitter). */
static uint64_t reo_wnd(const struct htoe_retry *r)
{
	uint64_t w = r->reo_mult *
		     (r->have_rtt ? r->srtt_ns / 4 + r->rttvar_ns : r->cfg.rto_min_ns / 4);

	/* never more than a smoothed round trip (RFC 8985): a wider window
	 * only delays the repair past what the RTO would do */
	return r->have_rtt && w > 2 * r->srtt_ns ? 2 * r->srtt_ns : w;
}

/* RACK: a frame neither SACKed nor lost, sent before the latest-sent
 * delivered frame, is lost once it is overdue by reo_wnd; the earliest
 * such frame not yet overdue arms the reordering timer. */
static void rack_detect(struct htoe_retry *r, uint64_t now)
{
	uint16_t out = htoe_retry_tx_outstanding(r);
	uint64_t extra, deadline = HTOE_RETRY_NEVER;

	r->rack_deadline = HTOE_RETRY_NEVER;
	if (!r->sel || !r->rack_valid || r->failed || !out)
		return; /* (nothing outstanding: nothing can be lost) */
	extra = add_sat(r->rack_rtt_ns, reo_wnd(r));
	for (uint16_t i = 0; i < out; i++) {
		uint16_t seq = (uint16_t)(r->una + i);
		const struct htoe_retry_sb *e = sb_at(r, seq);
		uint64_t due;

		if ((int32_t)(e->txn - r->rack_txn) >= 0) {
			/* first transmissions go in seq order: every later
			 * frame was sent after this one, none can be lost */
			if (!(e->flags & SB_RTX))
				break;
			continue;
		}
		if (e->flags & (SB_SACKED | SB_LOST))
			continue;
		due = add_sat(e->xmit_ns, extra);
		if (now >= due) {
			mark_lost(r, seq, false);
			r->stats.rack_lost++;
			r->tlp_shift = 0; /* the path loses frames: probe soon */
			if (++r->reo_calm >= 64) {
				r->reo_calm = 0;
				if (r->reo_mult > 1)
					r->reo_mult--;
			}
		} else if (due < deadline) {
			deadline = due;
		}
	}
	r->rack_deadline = deadline;
}

static void tlp_arm(struct htoe_retry *r, uint64_t now);

/* Something arrived from the peer (or we just began to wait for it). */
static void heard(struct htoe_retry *r, uint64_t now)
{
	r->heard_ns = now;
	r->silent_rtos = 0;
}

int htoe_retry_tx_send(struct htoe_retry *r, uint64_t now, uint16_t *seq)
{
	if (!htoe_retry_tx_can_send(r))
		return -EAGAIN;
	*seq = htoe_retry_tx_take(r);
	htoe_retry_tx_sent(r, *seq, now);
	return 0;
}

void htoe_retry_tx_sent(struct htoe_retry *r, uint16_t seq, uint64_t now)
{
	if (r->una == seq)
		heard(r, now); /* the silence that counts starts now */
	if (r->sel)
		sb_sent(r, seq, now, false);
	if (!r->rtt_timing) {
		r->rtt_timing = true;
		r->rtt_seq = seq;
		r->rtt_sent = now;
	}
	if (r->rto_deadline == HTOE_RETRY_NEVER)
		r->rto_deadline = add_sat(now, r->rto_ns);
	tlp_arm(r, now);
}

/* Selective: a tail loss probe 2 SRTT + ack_delay after the last
 * transmission, new or repeated (times 2^tlp_shift), if that is before the
 * RTO. A probe repeats the last frame not SACKed, which also recovers a
 * lost retransmission when nothing sent after it could expose the loss (the
 * receiver holds every credit behind the hole). The first
 * HTOE_RETRY_TLP_SILENT probes and timeouts since the last progress keep
 * that delay, answered or not, past the first RTO too, unless two RTOs
 * passed with nothing at all from the peer (silent_rtos: it is not polled,
 * or the link is down): a burst that swallowed the tail, the probe or the
 * peer's answers is crossed only by further frames (a burst counted in
 * frames on the path of the peer's acks, which carries nothing else while
 * we wait), and a backoff from the first unanswered probe left every such
 * burst to the RTO and its doubling, milliseconds for a few lost frames.
 * After two silent RTOs, or HTOE_RETRY_TLP_SILENT, a silent peer is probed
 * no more (it is not polled, or the link is down: every copy would reach
 * it as a duplicate when it runs again; the RTO comes next); a peer heard
 * again gets the rest of the quick probes, then after the last of them
 * one that answers without progress at twice the delay per probe or
 * timeout since the progress. */
static void tlp_arm(struct htoe_retry *r, uint64_t now)
{
	bool quick = r->tlp_n < HTOE_RETRY_TLP_SILENT && r->silent_rtos < 2;
	unsigned sh = (unsigned)r->tlp_shift + (quick ? 0 : r->tlp_n);
	uint64_t t;

	r->tlp_deadline = HTOE_RETRY_NEVER;
	if (!r->sel || !r->have_rtt || r->una == r->next_seq || r->failed)
		return;
	if (!quick && !r->tlp_heard)
		return;
	if (sh > HTOE_RETRY_TLP_SHIFT_MAX)
		sh = HTOE_RETRY_TLP_SHIFT_MAX;
	t = add_sat(2 * r->srtt_ns, r->cfg.ack_delay_ns);
	t = t > (HTOE_RETRY_NEVER >> sh) ? HTOE_RETRY_NEVER : add_sat(now, t << sh);
	if (t < r->rto_deadline)
		r->tlp_deadline = t;
}

/* The probe: the last frame not SACKed is resent. */
static void tlp_fire(struct htoe_retry *r)
{
	r->tlp_deadline = HTOE_RETRY_NEVER;
	if (r->tlp_n < UINT8_MAX)
		r->tlp_n++;
	r->tlp_heard = false;
	for (uint16_t s = (uint16_t)(r->next_seq - 1); s != (uint16_t)(r->una - 1); s--) {
		if (!(sb_at(r, s)->flags & SB_SACKED)) {
			mark_lost(r, s, true);
			r->stats.tail_probes++;
			return;
		}
	}
}

/* Selective: frames [una, ack) are delivered: clear their scoreboard
 * entries, and let the latest-sent of them drive the RACK rule. */
static void sel_release(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	for (uint16_t s = r->una; s != ack; s++) {
		struct htoe_retry_sb *e = sb_at(r, s);

		if (e->flags & SB_LOST)
			r->lost_n--;
		rack_update(r, e, now);
		sb_set(r, e, e->flags & ~SB_TX);
	}
	if (htoe_seq_lt(r->rtx_from, ack))
		r->rtx_from = ack;
}

/* Release [una, ack); ack is known to be within (una, next_seq]. */
static int release(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	int n = htoe_seq_diff(ack, r->una);

	if (r->sel)
		sel_release(r, ack, now);
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
	if (r->sel) {
		r->tlp_n = 0;
		tlp_arm(r, now);
		rack_detect(r, now);
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
	r->quiet_ns = now - min_u64(r->heard_ns, now); /* the silence this frame ends */
	heard(r, now); /* the peer is alive, whatever the ack says */
	r->tlp_heard = true;
	if (!htoe_seq_lt(r->una, ack))
		return 0; /* ack == una, or stale */
	if (r->failed) {
		/* progress after the limit: still record the release so the
		 * caller can free its copies; the VL stays failed. */
		int n = htoe_seq_diff(ack, r->una);
		if (r->sel)
			sel_release(r, ack, now);
		r->una = ack;
		return n;
	}
	return release(r, ack, now);
}

/* Selective counterpart of a go-back: resend the frame `from`, or with
 * `all` also every later frame the peer has not SACKed (RTO, the peer lost
 * our retransmission, a NAK without a SACK block). `from` is resent even
 * if SACKed: the oldest frame never waits for a SACK that may be false. */
static void sel_goback(struct htoe_retry *r, uint16_t from, unsigned max, uint64_t now)
{
	for (uint16_t s = from; s != r->next_seq && max; s++) {
		if (!(sb_at(r, s)->flags & SB_SACKED) || s == from) {
			mark_lost(r, s, true);
			max--;
		}
	}
	r->gb_from = from;
	r->gb_at = now;
	r->rto_deadline = add_sat(now, r->rto_ns);
	r->stats.gobacks++;
}

/* A go-back on the word of a timer (or of an ack that still names una
 * after one). Selective mode resends the oldest frame alone at the first
 * timeout since progress, and twice as many frames not SACKed at each
 * further one (as TCP's window restarts from one segment after a
 * timeout): the peer's answer exposes the other lost frames through the
 * RACK rule within a round trip, a peer that was merely not polled (a
 * descheduled poller) gets a duplicate or two instead of the whole window
 * at every timeout, and a burst that swallows every copy is still crossed
 * within a few timeouts. */
static void goback(struct htoe_retry *r, uint16_t from, uint64_t now)
{
	if (r->sel) {
		unsigned k = r->retries ? r->retries - 1 : 0;

		sel_goback(r, from, 1u << (k < 12 ? k : 12), now);
		if (r->tlp_n < UINT8_MAX)
			r->tlp_n++; /* like a probe: none follows while the peer is silent */
		r->tlp_heard = false;
		return;
	}
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
	if (n == 0 && ack == r->una && r->retries && !r->failed && !htoe_retry_tx_in_goback(r) &&
	    r->una != r->next_seq && now - r->gb_at >= r->rto_base_ns) {
		goback(r, r->una, now);
	}
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
	if (htoe_retry_tx_in_goback(r) && r->gb_from == ack) {
		r->stats.naks_ignored++;
		return n;
	}
	if (r->sel) {
		r->tlp_shift = 0; /* the peer saw a gap: the path loses frames */
		sel_goback(r, ack, UINT_MAX, now);
	} else {
		goback(r, ack, now);
	}
	return n;
}

/* How long the peer must have been silent to be dead: as long as the
 * uncapped backoff from the adaptive RTO would take to give up, the sum
 * over k = 0..retry_limit of min(rto 2^k, rto_max) (the adaptive RTO
 * grows with the peer's stalls, and so does this). */
static uint64_t dead_ns(const struct htoe_retry *r)
{
	uint64_t d = 0, t = r->rto_base_ns, max = r->cfg.rto_max_ns;
	uint32_t k = 0;

	for (; k <= r->cfg.retry_limit && t < max; k++, t *= 2)
		d = add_sat(d, t);
	if (k <= r->cfg.retry_limit) {
		uint64_t n = (uint64_t)r->cfg.retry_limit + 1 - k;

		d = max && n > UINT64_MAX / max ? UINT64_MAX : add_sat(d, n * max);
	}
	return d;
}

/* The backed-off RTO's ceiling: rto_max, and 2^HTOE_RETRY_RTO_SHIFT_MAX
 * times the adaptive RTO. */
static uint64_t rto_cap(const struct htoe_retry *r)
{
	uint64_t c = r->rto_base_ns << HTOE_RETRY_RTO_SHIFT_MAX;

	return r->rto_base_ns > (UINT64_MAX >> HTOE_RETRY_RTO_SHIFT_MAX) || c > r->cfg.rto_max_ns
		       ? r->cfg.rto_max_ns : c;
}

enum htoe_retry_timer htoe_retry_tx_timer(struct htoe_retry *r, uint64_t now)
{
	if (r->sel && now >= r->rack_deadline)
		rack_detect(r, now);
	if (r->sel && now >= r->tlp_deadline) {
		if (!r->lost_n && now < r->rto_deadline)
			tlp_fire(r);
		else
			r->tlp_deadline = HTOE_RETRY_NEVER;
	}
	if (r->rto_deadline == HTOE_RETRY_NEVER || now < r->rto_deadline)
		return HTOE_RETRY_IDLE;
	r->stats.timeouts++;
	r->retries++;
	/* the time we were not run past the deadline (a stalled poller: the
	 * peer's frames wait in our RX ring) is not the peer's silence */
	r->heard_ns = min_u64(add_sat(r->heard_ns, now - r->rto_deadline), now);
	if (r->silent_rtos++)
		r->stats.silent_timeouts++;
	/* dead: retry_limit + 1 timeouts in a row with nothing at all from the
	 * peer, over at least dead_ns. Timeouts while the peer answers (lost
	 * retransmissions, a lossy path) are not evidence. */
	if (r->silent_rtos > r->cfg.retry_limit && now - r->heard_ns >= dead_ns(r)) {
		r->failed = true;
		r->gb_active = false;
		r->rack_deadline = HTOE_RETRY_NEVER;
		r->tlp_deadline = HTOE_RETRY_NEVER;
		r->rto_deadline = HTOE_RETRY_NEVER;
		return HTOE_RETRY_LIMIT;
	}
	r->rto_ns = r->rto_ns > rto_cap(r) / 2 ? rto_cap(r) : r->rto_ns * 2;
	goback(r, r->una, now);
	return HTOE_RETRY_GOBACK;
}

/* Selective: the first lost frame (there is one when lost_n > 0). */
static bool sel_first_lost(const struct htoe_retry *r, uint16_t *seq)
{
	uint16_t s = htoe_seq_lt(r->rtx_from, r->una) ? r->una : r->rtx_from;

	if (!r->lost_n || r->failed)
		return false;
	for (; s != r->next_seq; s++) {
		if (sb_at(r, s)->flags & SB_LOST) {
			*seq = s;
			return true;
		}
	}
	return false; /* not reached: lost_n counts frames in [rtx_from, next_seq) */
}

bool htoe_retry_tx_retransmit_peek(const struct htoe_retry *r, uint16_t *seq)
{
	if (r->sel)
		return sel_first_lost(r, seq);
	if (!r->gb_active)
		return false;
	*seq = r->gb_next;
	return true;
}

bool htoe_retry_tx_retransmit_next(struct htoe_retry *r, uint16_t *seq)
{
	return htoe_retry_tx_retransmit_at(r, 0, seq);
}

bool htoe_retry_tx_retransmit_at(struct htoe_retry *r, uint64_t now, uint16_t *seq)
{
	if (r->sel) {
		if (!sel_first_lost(r, seq))
			return false;
		r->lost_n--;
		r->rtx_from = (uint16_t)(*seq + 1);
		sb_sent(r, *seq, now, true);
		if (r->rto_deadline == HTOE_RETRY_NEVER)
			r->rto_deadline = add_sat(now, r->rto_ns);
		tlp_arm(r, now);
		r->stats.retransmitted++;
		return true;
	}
	if (!r->gb_active)
		return false;
	*seq = r->gb_next++;
	if (r->gb_next == r->next_seq)
		r->gb_active = false;
	r->stats.retransmitted++;
	return true;
}

int htoe_retry_tx_sack(struct htoe_retry *r, uint16_t ack, const uint8_t *blk, size_t len,
		       uint64_t now)
{
	uint16_t out = htoe_retry_tx_outstanding(r);
	unsigned bits;
	bool beyond = false;
	int n = 0;

	if (!r->sel)
		return 0;
	if (len < HTOE_SACK_HDR_LEN + 4 || blk[0] != HTOE_SACK_FMT_BITMAP || blk[1] == 0 ||
	    blk[1] > HTOE_SACK_WORDS_MAX || (blk[2] & ~HTOE_SACK_F_DUP) || blk[3] ||
	    len != HTOE_SACK_HDR_LEN + 4u * blk[1]) {
		r->stats.sack_invalid++;
		return -EINVAL;
	}
	r->stats.sacks_received++;
	if (r->failed)
		return 0;
	/* a duplicate reported soon after a probe or a go-back, or the first
	 * one since (a peer that was not polled reports it when it runs
	 * again, however late), answers it (an ack was lost or late): the
	 * probes back off, but it is no sign of reordering */
	if (blk[2] & HTOE_SACK_F_DUP) {
		spurious(r, !r->blind_dup &&
			    now - r->blind_at > add_sat(2 * r->srtt_ns, r->cfg.ack_delay_ns));
		r->blind_dup = false;
	}
	bits = 32u * blk[1];
	for (unsigned i = 0; i < bits; i++) {
		if (!(blk[HTOE_SACK_HDR_LEN + i / 8] & (0x80u >> (i % 8))))
			continue;
		uint16_t seq = (uint16_t)(ack + i);
		int32_t off = htoe_seq_diff(seq, r->una);

		if (off < 0)
			continue; /* already acknowledged: stale */
		if (off >= out) {
			beyond = true; /* never sent: forged or corrupt */
			continue;
		}
		struct htoe_retry_sb *e = sb_at(r, seq);

		if (e->flags & SB_SACKED)
			continue;
		if (e->flags & SB_LOST)
			r->lost_n--;
		sb_set(r, e, (e->flags & ~SB_LOST) | SB_SACKED);
		rack_update(r, e, now);
		if (r->rtt_timing && r->rtt_seq == seq) {
			/* timed from its only transmission to the first sign
			 * of its arrival: its cumulative ack would add the
			 * repair of the hole before it to the sample */
			r->rtt_timing = false;
			rtt_sample(r, now >= r->rtt_sent ? now - r->rtt_sent : 0);
		}
		n++;
	}
	if (beyond)
		r->stats.sack_invalid++;
	if (n > 0) {
		/* progress, though not of una: the backoff collapses and the
		 * probes start again from their base delay */
		r->retries = 0;
		r->rto_ns = r->rto_base_ns;
		r->rto_deadline = min_u64(r->rto_deadline, add_sat(now, r->rto_ns));
		r->tlp_n = 0;
	}
	rack_detect(r, now);
	return n;
}

/* ---- RX ----------------------------------------------------------------- */

enum htoe_retry_verdict htoe_retry_rx_frame(struct htoe_retry *r, uint16_t seq,
					    uint64_t now)
{
	if (r->sel && (sb_at(r, seq)->flags & SB_HELD) && htoe_seq_diff(seq, r->expected) > 0 &&
	    htoe_seq_diff(seq, r->expected) <= r->sb_mask) {
		r->stats.held_dups++;
		r->rx_dup = true;
		r->ack_pending = true;
		r->ack_at = min_u64(r->ack_at, now);
		return HTOE_RX_DUP;
	}
	if (seq == r->expected) {
		if (r->sel && (sb_at(r, seq)->flags & SB_HELD)) {
			/* a held frame is delivered: the hole before it is
			 * repaired; tell the sender at once */
			sb_at(r, seq)->flags &= (uint8_t)~SB_HELD;
			r->rx_held--;
			r->ack_at = min_u64(r->ack_at, now);
		}
		htoe_retry_rx_accept(r, now);
		return HTOE_RX_ACCEPT;
	}
	if (htoe_seq_lt(seq, r->expected)) {
		r->stats.dups++;
		r->rx_dup = r->sel;
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

bool htoe_retry_rx_can_hold(const struct htoe_retry *r, uint16_t seq)
{
	int32_t off = htoe_seq_diff(seq, r->expected);

	return r->sel && off > 0 && off <= r->sb_mask && !(sb_at(r, seq)->flags & SB_HELD);
}

int htoe_retry_rx_hold(struct htoe_retry *r, uint16_t seq, uint64_t now)
{
	if (!htoe_retry_rx_can_hold(r, seq))
		return -EINVAL;
	sb_at(r, seq)->flags |= SB_HELD;
	r->rx_held++;
	r->stats.held++;
	if (!r->ack_pending) {
		r->ack_pending = true;
		r->ack_at = add_sat(now, r->cfg.ack_delay_ns);
	}
	if (r->unacked < UINT16_MAX)
		r->unacked++;
	/* a new hole (the frame before is neither held nor delivered), or
	 * enough frames: the sender hears of it now */
	if (r->unacked >= r->cfg.ack_every || !(sb_at(r, (uint16_t)(seq - 1))->flags & SB_HELD))
		r->ack_at = min_u64(r->ack_at, now);
	return 0;
}

bool htoe_retry_rx_sack_due(const struct htoe_retry *r)
{
	return r->sel && (r->rx_held || r->rx_dup);
}

int htoe_retry_rx_sack(struct htoe_retry *r, uint8_t *buf, size_t cap)
{
	unsigned last = 0, words, maxw;

	if (!htoe_retry_rx_sack_due(r) || cap < HTOE_SACK_HDR_LEN + 4)
		return 0;
	for (unsigned i = 0; r->rx_held && i <= r->sb_mask; i++)
		if (sb_at(r, (uint16_t)(r->expected + i))->flags & SB_HELD)
			last = i;
	words = last / 32 + 1;
	maxw = (unsigned)((cap - HTOE_SACK_HDR_LEN) / 4);
	if (maxw > HTOE_SACK_WORDS_MAX)
		maxw = HTOE_SACK_WORDS_MAX;
	if (words > maxw)
		words = maxw;
	buf[0] = HTOE_SACK_FMT_BITMAP;
	buf[1] = (uint8_t)words;
	buf[2] = r->rx_dup ? HTOE_SACK_F_DUP : 0;
	buf[3] = 0;
	r->rx_dup = false;
	memset(buf + HTOE_SACK_HDR_LEN, 0, 4u * words);
	for (unsigned i = 0; i < 32u * words; i++)
		if (sb_at(r, (uint16_t)(r->expected + i))->flags & SB_HELD)
			buf[HTOE_SACK_HDR_LEN + i / 8] |= (uint8_t)(0x80u >> (i % 8));
	r->stats.sacks_sent++;
	return (int)(HTOE_SACK_HDR_LEN + 4u * words);
}

bool htoe_retry_rx_ack_pending(const struct htoe_retry *r)
{
	return r->ack_pending;
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

/* ---- reorder buffer ------------------------------------------------------ */

int htoe_rob_init(struct htoe_rob *rob, struct htoe_rob_frame *fr, unsigned nframes,
		  struct htoe_rob_pkt *pkt, unsigned npkt, unsigned unpooled_max)
{
	if (!fr || !pkt || !nframes || nframes > HTOE_RETRY_WINDOW_MAX ||
	    (nframes & (nframes - 1)) || !npkt || npkt >= HTOE_ROB_NONE || unpooled_max > npkt)
		return -EINVAL;
	memset(rob, 0, sizeof(*rob));
	rob->fr = fr;
	rob->pkt = pkt;
	rob->fr_mask = (uint16_t)(nframes - 1);
	rob->npkt = (uint16_t)npkt;
	rob->unpooled_max = (uint16_t)unpooled_max;
	for (unsigned i = 0; i < nframes; i++)
		fr[i] = (struct htoe_rob_frame){ .first = HTOE_ROB_NONE };
	for (unsigned i = 0; i < npkt; i++)
		pkt[i].next = (uint16_t)(i + 1 < npkt ? i + 1 : HTOE_ROB_NONE);
	rob->free_head = 0;
	rob->nfree = (uint16_t)npkt;
	return 0;
}

int htoe_rob_put(struct htoe_rob *rob, uint16_t seq, unsigned vc, const uint8_t *payload,
		 size_t len, unsigned npkts)
{
	struct htoe_rob_frame *f = &rob->fr[seq & rob->fr_mask];
	struct htoe_pkt_iter it;
	const uint8_t *p;
	size_t plen;
	uint16_t *link = &f->first;
	unsigned n = 0, nd = 0;

	if (f->first != HTOE_ROB_NONE)
		return -EEXIST;
	if (!npkts || npkts > rob->nfree || vc > 2)
		return -ENOSPC;
	htoe_pkt_iter_init(&it, payload, len);
	while (n < npkts && htoe_pkt_iter_next(&it, &p, &plen) > 0 && plen <= HTOE_ROB_PKT_MAX) {
		uint16_t i = rob->free_head;
		struct htoe_rob_pkt *s = &rob->pkt[i];

		rob->free_head = s->next;
		rob->nfree--;
		memcpy(s->bytes, p, plen);
		s->len = (uint8_t)plen;
		s->has_data = ht_bytes_has_data(p, plen);
		s->next = HTOE_ROB_NONE;
		nd += s->has_data;
		*link = i;
		link = &s->next;
		n++;
	}
	f->seq = seq;
	f->unpooled = 0;
	f->npkts = (uint8_t)n;
	f->ndata = (uint8_t)nd;
	f->vc = (uint8_t)vc;
	rob->frames++;
	rob->pkts[vc] += n;
	rob->data[vc] += nd;
	if (n != npkts) { /* a payload that was not checked: give it back */
		htoe_rob_free(rob, seq);
		return -EINVAL;
	}
	return 0;
}

const struct htoe_rob_frame *htoe_rob_get(const struct htoe_rob *rob, uint16_t seq)
{
	const struct htoe_rob_frame *f = &rob->fr[seq & rob->fr_mask];

	return f->first != HTOE_ROB_NONE && f->seq == seq ? f : NULL;
}

bool htoe_rob_unpool(struct htoe_rob *rob, uint16_t seq)
{
	struct htoe_rob_frame *f = &rob->fr[seq & rob->fr_mask];

	if (f->first == HTOE_ROB_NONE || f->seq != seq || f->unpooled ||
	    rob->unpooled + f->npkts > rob->unpooled_max)
		return false;
	f->unpooled = 1;
	rob->unpooled += f->npkts;
	rob->upkts[f->vc] += f->npkts;
	rob->udata[f->vc] += f->ndata;
	return true;
}

void htoe_rob_free(struct htoe_rob *rob, uint16_t seq)
{
	struct htoe_rob_frame *f = &rob->fr[seq & rob->fr_mask];
	uint16_t i = f->first;

	if (i == HTOE_ROB_NONE || f->seq != seq)
		return;
	while (i != HTOE_ROB_NONE) {
		uint16_t next = rob->pkt[i].next;

		rob->pkt[i].next = rob->free_head;
		rob->free_head = i;
		rob->nfree++;
		i = next;
	}
	rob->frames--;
	rob->pkts[f->vc] -= f->npkts;
	rob->data[f->vc] -= f->ndata;
	if (f->unpooled) {
		rob->unpooled -= f->npkts;
		rob->upkts[f->vc] -= f->npkts;
		rob->udata[f->vc] -= f->ndata;
	}
	f->first = HTOE_ROB_NONE;
}

static int rob_check(const struct htoe_rob *rob, bool full, char *err, size_t errlen)
{
	uint32_t used = 0, frames = 0, pk[3] = { 0 }, dt[3] = { 0 }, upk[3] = { 0 }, udt[3] = { 0 };
	uint32_t unpooled = 0;

	if (!rob->fr)
		return 0;
	for (unsigned k = 0; k <= rob->fr_mask && (full || frames < rob->frames); k++) {
		const struct htoe_rob_frame *f = &rob->fr[k];
		unsigned n = 0, nd = 0;

		if (f->first == HTOE_ROB_NONE)
			continue;
		frames++;
		for (uint16_t i = f->first; i != HTOE_ROB_NONE && n <= rob->npkt; i = rob->pkt[i].next) {
			n++;
			nd += rob->pkt[i].has_data;
		}
		if (n != f->npkts || nd != f->ndata || f->vc > 2 || (f->seq & rob->fr_mask) != k) {
			snprintf(err, errlen, "reorder buffer: frame %u holds %u packets, counted %u",
				 f->seq, n, f->npkts);
			return -EINVAL;
		}
		used += n;
		pk[f->vc] += n;
		dt[f->vc] += nd;
		if (f->unpooled) {
			unpooled += n;
			upk[f->vc] += n;
			udt[f->vc] += nd;
		}
	}
	if (unpooled != rob->unpooled || unpooled > rob->unpooled_max) {
		snprintf(err, errlen, "reorder buffer: %u unpooled packets, counted %u (at most %u)",
			 unpooled, rob->unpooled, rob->unpooled_max);
		return -EINVAL;
	}
	if (used + rob->nfree != rob->npkt || frames != rob->frames) {
		snprintf(err, errlen, "reorder buffer: %u used + %u free slots != %u", used,
			 rob->nfree, rob->npkt);
		return -EINVAL;
	}
	for (unsigned vc = 0; vc < 3; vc++) {
		if (pk[vc] != rob->pkts[vc] || dt[vc] != rob->data[vc] ||
		    upk[vc] != rob->upkts[vc] || udt[vc] != rob->udata[vc]) {
			snprintf(err, errlen, "reorder buffer: VC %u packet counts differ", vc);
			return -EINVAL;
		}
	}
	return 0;
}

int htoe_rob_check(const struct htoe_rob *rob, char *err, size_t errlen)
{
	return rob_check(rob, false, err, errlen);
}

int htoe_rob_check_full(const struct htoe_rob *rob, char *err, size_t errlen)
{
	return rob_check(rob, true, err, errlen);
}
