/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_retry: Go-Back-N retry of one virtual link (VL), sans-I/O.
 *
 * One `struct htoe_retry` holds both directions of one VL:
 *   - the TX side numbers the DATA frames we send and decides what must be
 *     (re)transmitted;
 *   - the RX side checks the sequence numbers of the DATA frames we receive
 *     and decides when an ACK or a NAK is owed to the peer.
 *
 * Sequence numbers are 16 bits, one per DATA frame (all VCs of the VL share
 * the space), starting at 0 and wrapping 65535 -> 0. They are compared with
 * serial arithmetic (htoe_seq_lt / htoe_seq_diff), which is exact as long as
 * the two numbers are less than 32768 apart; the window (<= 4096) keeps every
 * number the protocol handles within that distance.
 *
 * Acks are cumulative and carry the NEXT expected sequence number: ack(a)
 * acknowledges every frame with seq < a. Every frame (DATA, ACK, NAK) carries
 * one; a NAK(a) additionally asks the sender to go back to a. ACK and NAK
 * frames are not sequenced: only DATA frames go through htoe_retry_rx_frame().
 *
 * The module stores no frames. The caller keeps a copy of every frame with
 * seq in [una, next_seq) (htoe_retry_tx_una() .. htoe_retry_tx_next_seq())
 * and frees the oldest ones when htoe_retry_tx_ack()/_nak() report them
 * acknowledged. A ring of `window` frame descriptors indexed by
 * seq % window (window a power of two) or seq & mask is enough.
 *
 * Time is the caller's `now` in nanoseconds (monotonic, never decreasing).
 * No I/O, no clock, no allocation.
 *
 * Typical driver loop for one VL:
 *   on DATA frame (header CRC ok, right VL/epoch):
 *       htoe_retry_tx_ack(r, hdr.ack, now);           // piggybacked ack
 *       v = htoe_retry_rx_frame(r, hdr.seq, now);     // deliver iff ACCEPT
 *   on ACK frame:  htoe_retry_tx_ack(r, hdr.ack, now);
 *   on NAK frame:  htoe_retry_tx_nak(r, hdr.ack, now);
 *   output:
 *       while (htoe_retry_tx_retransmit_next(r, &seq)) resend frame seq
 *                                   (refresh its ack field to rx_ack_value)
 *       while (have new frame && htoe_retry_tx_can_send(r))
 *           htoe_retry_tx_send(r, now, &seq); send it with seq
 *       every frame sent carries ack = htoe_retry_rx_ack_value(r); after it,
 *           htoe_retry_rx_ack_sent(r, now)
 *       if (htoe_retry_rx_nak_due(r, now)) send NAK; htoe_retry_rx_nak_sent()
 *       else if (htoe_retry_rx_ack_due(r, now)) send ACK; htoe_retry_rx_ack_sent()
 *   timers: if (now >= htoe_retry_next_deadline(r))
 *       htoe_retry_tx_timer(r, now) -> HTOE_RETRY_LIMIT: reset the VL.
 */
#ifndef HTOE_RETRY_H
#define HTOE_RETRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htoe/htoe.h"
#include "htoe/htoe_wire.h"

#define HTOE_RETRY_WINDOW_MAX 4096u
#define HTOE_RETRY_NEVER      UINT64_MAX   /* "no deadline" */

/*
 * Two retry modes, chosen per VL at each reset handshake (htoe_retry_set_mode):
 *  - HTOE_RETRY_GBN: the paper's Go-Back-N (above): the receiver drops a
 *    frame after a gap, the sender resends everything from the gap.
 *  - HTOE_RETRY_SELECTIVE: the receiver holds frames that arrive after a gap
 *    (up to `sack_size` sequence numbers ahead of the expected one; the caller
 *    stores their HT packets, e.g. in a struct htoe_rob) and reports them in
 *    a SACK block carried by its ACK/NAK frames (docs/wire-format.md); it
 *    still delivers strictly in sequence. The sender keeps a scoreboard per
 *    outstanding frame (SACKed, lost, when and in which order it was last
 *    sent) and resends only the frames it deems lost:
 *      RACK-like: a frame not SACKed that was sent before a frame the peer
 *      has since received (SACKed or cumulatively acked) is lost once
 *      `reo_wnd` has passed beyond the RTT of that later frame (a
 *      reordering timer otherwise). reo_wnd = k (SRTT/4 + RTTVAR); k
 *      starts at 1, grows by one (up to 64) whenever a retransmitted frame
 *      is acknowledged sooner than half the smallest RTT after the copy
 *      left (so the original was only late: a spurious retransmission), and
 *      shrinks by one after 16 losses without such a sign (never above
 *      2 SRTT: the SRTT is timed to a frame's first SACK, so the window
 *      must also cover an ack that was lost and the late one after it); a
 *      SACK block with the DUP flag (the receiver got a frame twice) counts
 *      as such a sign too, unless it comes within 2 SRTT + ack_delay of a
 *      probe or go-back, or is the first since one (then it answers
 *      that: an ack was lost, or the peer was not polled for a while). A
 *      retransmission acknowledged sooner than the smallest RTT says
 *      nothing of the frames sent before it (RFC 8985 step 2), unless a
 *      probe or the RTO sent it (it left after a silence of the peer,
 *      which reports it after every frame sent before it). A lost
 *      retransmission is found the same way, so burst loss is repaired
 *      within about one RTT without the RTO.
 *      A NAK without a SACK block (the peer could not hold the frame):
 *      every frame not SACKed from the NAK's ack on is lost (Go-Back-N that
 *      skips SACKed frames).
 *      Tail loss probe: when nothing has been acknowledged for
 *      2 SRTT + ack_delay after the last transmission, new or repeated
 *      (and that is before the RTO), the last frame not SACKed is resent:
 *      its SACK or ack exposes lost frames before it through the RACK rule,
 *      so a lost tail costs about a round trip instead of an RTO. The
 *      probes follow each other at that delay, answered or not, with an
 *      RTO between them, until HTOE_RETRY_TLP_SILENT probes and timeouts
 *      since the last progress (a burst that swallowed the probe, or the
 *      peer's answers, is crossed by further frames, not by waiting).
 *      After two RTOs with nothing at all from the peer no probe is sent
 *      until something arrives from it (a peer that is not polled would
 *      get every copy as a duplicate); after HTOE_RETRY_TLP_SILENT, only
 *      after something arrived, each probe or timeout since the last
 *      progress doubling the next probe's delay; progress (an ack or a
 *      new SACK) brings it back.
      RTO (or an ack for una from a peer that lost our go-back, as in
 *      GBN): the oldest frame is resent (even if SACKed), at the k-th
 *      timeout in a row the 2^(k-1) oldest frames not SACKed: the
 *      peer's answer exposes the rest through the RACK rule, and a
 *      descheduled peer gets a copy or two per timeout, not the window.
 *      The RTO has the backoff of GBN; a new SACK, like an ack, collapses
 *      it. An RTT sample whose ack ended a silence of the peer longer
 *      than 4 SRTT + ack_delay measured a poller that was not run, not
 *      the path: it is left out (stats.rtt_stalled), unless four in a
 *      row are (the path's round trip grew).
 *
 * In both modes the RTO's backoff is capped (HTOE_RETRY_RTO_SHIFT_MAX),
 * and the peer is given up (HTOE_RETRY_LIMIT) for its silence, not for a
 * count of retransmissions: only when retry_limit + 1 timeouts in a row
 * passed without any frame from it (any ack value, valid or repeated, is
 * one: every frame of the peer carries one) and at least as long since its
 * last frame as the uncapped backoff from the adaptive RTO would take:
 * sum over k = 0..retry_limit of min(rto 2^k, rto_max).
 * A lossy path whose peer answers costs retransmissions, never a reset.
 *  Selective mode needs per-sequence-number memory that the caller
 *  allocates once (htoe_retry_attach); the module still allocates nothing.
 *  The mode's enum (enum htoe_retry_mode) is in htoe.h, the public API.
 */

/* One entry per sequence number modulo the scoreboard size (private). */
struct htoe_retry_sb {
	uint64_t xmit_ns;   /* TX: time of the last transmission */
	uint32_t txn;       /* TX: transmission order of the last transmission */
	uint8_t  flags;     /* TX: SACKED, LOST; RX: HELD */
};
#define HTOE_RETRY_SB_HELD 0x04u /* flags, RX: we hold it */

/* SACK block (payload of an ACK/NAK frame with the SACK flag):
 *   byte 0: format (1: bitmap); byte 1: number of 32-bit bitmap words, 1..128;
 *   byte 2: flags, bit 0 DUP: a frame arrived twice since the last block
 *   (a retransmission was needless, or the network duplicated it); bits 7:1
 *   and byte 3: 0; then the bitmap: bit i (byte 4 + i/8, mask 0x80 >> i%8)
 *   set = the receiver holds the frame with seq (frame's ack + i). */
#define HTOE_SACK_FMT_BITMAP 1u
#define HTOE_SACK_F_DUP      0x01u
#define HTOE_SACK_HDR_LEN    4u
#define HTOE_SACK_WORDS_MAX  128u
#define HTOE_SACK_MAX_LEN    (HTOE_SACK_HDR_LEN + 4u * HTOE_SACK_WORDS_MAX)

/* ---- serial arithmetic on 16-bit sequence numbers ---------------------- */

/* htoe_seq_diff(a, b), a - b as a signed distance: htoe_wire.h. */

/* a is before b (serially). */
static inline bool htoe_seq_lt(uint16_t a, uint16_t b)
{
	return htoe_seq_diff(a, b) < 0;
}

/* a is before or equal to b (serially). */
static inline bool htoe_seq_le(uint16_t a, uint16_t b)
{
	return htoe_seq_diff(a, b) <= 0;
}

/* ---- configuration ------------------------------------------------------ */

struct htoe_retry_cfg {
	uint16_t window;        /* max unacknowledged DATA frames, 1..4096 */
	uint16_t ack_every;     /* standalone ACK after this many accepted frames
	                         * not yet acked (>= 1) */
	uint32_t retry_limit;   /* consecutive timeouts with nothing from the
	                         * peer that are still retried; one more (and
	                         * dead_ns of silence) gives HTOE_RETRY_LIMIT */
	uint64_t rto_init_ns;   /* first retransmission timeout (> 0); also the
	                         * NAK re-arm interval of the RX side */
	uint64_t rto_max_ns;    /* backoff cap (>= rto_init_ns) */
	uint64_t rto_min_ns;    /* floor of the adaptive RTO (<= rto_max_ns);
	                         * 0: rto_init_ns (the RTO adapts upwards only) */
	uint64_t ack_delay_ns;  /* standalone ACK at the latest this long after
	                         * the first accepted frame not yet acked */
};

/* ---- counters (cumulative; htoe_retry_reset() keeps them) -------------- */

struct htoe_retry_stats {
	uint64_t frames_sent;     /* first transmissions (htoe_retry_tx_send) */
	uint64_t retransmitted;   /* retransmissions handed out */
	uint64_t gobacks;         /* go-backs started (NAK or timeout) */
	uint64_t timeouts;        /* RTO expiries */
	uint64_t naks_sent;
	uint64_t naks_received;   /* valid NAKs (incl. those ignored as repeats) */
	uint64_t naks_ignored;    /* NAKs for a go-back already in progress */
	uint64_t acks_sent;       /* pending acks cleared by htoe_retry_rx_ack_sent()
	                           * (piggybacked or standalone) */
	uint64_t frames_accepted; /* RX: in-order frames */
	uint64_t dups;            /* RX: seq before the expected one */
	uint64_t out_of_order;    /* RX: seq after the expected one (gap) */
	uint64_t invalid_acks;    /* ack/NAK beyond next_seq (ignored) */
	uint64_t resets;          /* htoe_retry_reset() calls */
	uint64_t rtt_samples;     /* RTT samples taken (Karn: first transmissions only) */
	/* selective mode */
	uint64_t held;            /* RX: frames held after a gap */
	uint64_t held_dups;       /* RX: copies of a frame already held */
	uint64_t sacks_sent;      /* SACK blocks written */
	uint64_t sacks_received;  /* SACK blocks processed */
	uint64_t sack_invalid;    /* SACK blocks refused (format) or naming frames
	                           * never sent (those bits ignored) */
	uint64_t rack_lost;       /* frames marked lost by SACK/ack evidence */
	uint64_t tail_probes;     /* tail loss probes (selective) */
	uint64_t spurious;        /* retransmissions found needless (the
	                           * original was acked sooner than the RTT
	                           * allows after the copy): widen reo_wnd */
	uint64_t rtt_stalled;     /* RTT samples left out: they measured a
	                           * poller that was not run (selective) */
	uint64_t silent_timeouts; /* RTO expiries with nothing heard from the
	                           * peer since the previous one (the evidence
	                           * of a dead peer; the others are loss) */
};

/* ---- state (fields are private: use the functions) ---------------------- */

/* The tail loss probe's backoff: at most 2^6 times its base delay, which
 * is beyond the RTO wherever the RTO is the 1 ms floor and SRTT above 8 us
 * (then no probe is sent, as before the probe existed). */
#define HTOE_RETRY_TLP_SHIFT_MAX 6
/* Probes and timeouts since the last progress with probes at the base
 * delay whether or not the peer answered (tlp_arm in htoe_retry.c): a burst
 * counted in frames, each lost while the burst goes on, is crossed only by
 * sending (12 would leave one window-long burst in five at 1 % burst loss
 * to the RTO backoff); few enough that a peer that is not polled gets a
 * few dozen duplicates, not a stream. */
#define HTOE_RETRY_TLP_SILENT 64
/* The RTO's backoff: at most 2^4 times the adaptive RTO (and rto_max). A
 * datacentre path that lost a retransmission needs another try within
 * milliseconds, not seconds; whether the peer is dead is decided from
 * silence (dead_ns), not from how long the backoff has grown. */
#define HTOE_RETRY_RTO_SHIFT_MAX 4

struct htoe_retry {
	struct htoe_retry_cfg cfg;

	/* TX */
	uint16_t una;           /* oldest unacknowledged seq */
	uint16_t next_seq;      /* seq of the next new frame */
	uint32_t tx_lap;        /* next_seq's lap: the full sequence number is
	                         * tx_lap << 16 | next_seq (htoe_retry_tx_lap) */
	uint16_t gb_next;       /* go-back: next seq to retransmit */
	uint16_t gb_from;       /* go-back: where the current one started */
	bool     gb_active;     /* a go-back is in progress (gb_next < next_seq) */
	uint64_t gb_at;         /* when the last go-back started */
	bool     failed;        /* retry limit reached; waiting for a reset */
	uint32_t retries;       /* consecutive timeouts without progress */
	uint64_t rto_ns;        /* current timeout (rto_min .. rto_max) */
	uint64_t rto_base_ns;   /* the RTO without backoff: rto_init until the
	                         * first RTT sample, then SRTT + 4 RTTVAR clamped */
	uint64_t srtt_ns, rttvar_ns; /* RFC 6298 estimators (valid if have_rtt) */
	bool     have_rtt;
	bool     rtt_timing;    /* a frame is being timed: rtt_seq sent at rtt_sent */
	uint16_t rtt_seq;
	uint64_t rtt_sent;
	uint64_t rto_deadline;  /* HTOE_RETRY_NEVER when not armed */
	uint64_t heard_ns;      /* last frame from the peer, or when we began
	                         * to wait for one (frames outstanding) */
	uint32_t silent_rtos;   /* timeouts since heard_ns */

	/* RX */
	uint16_t expected;      /* next expected seq (the ack value) */
	uint32_t rx_lap;        /* expected's lap (rx_lap << 16 | expected) */
	uint16_t unacked;       /* accepted frames since the last ack sent */
	bool     ack_pending;
	bool     nak_sent;      /* a NAK for `expected` was sent */
	uint64_t ack_at;        /* ACK due at (HTOE_RETRY_NEVER: none) */
	uint64_t nak_at;        /* NAK due at (HTOE_RETRY_NEVER: none) */
	uint64_t nak_rearm_at;  /* earliest repeat of the NAK for `expected` */

	/* selective mode (sb == NULL: GBN only) */
	struct htoe_retry_sb *sb; /* by seq & sb_mask, caller's memory */
	uint16_t sb_mask;
	bool     sel;           /* selective mode in force */
	uint16_t lost_n;        /* TX: frames marked lost, not yet resent */
	uint16_t rtx_from;      /* TX: no lost frame before this one (>= una) */
	uint32_t txn;           /* TX: transmissions so far (order numbers) */
	bool     rack_valid;    /* TX: rack_* describe a delivered frame */
	uint32_t rack_txn;      /* TX: latest-sent frame known delivered */
	uint64_t rack_rtt_ns;   /*     and its RTT */
	uint64_t rack_deadline; /* TX: reordering timer */
	uint16_t rx_held;       /* RX: frames held */
	uint16_t sb_txf;        /* TX: scoreboard entries with TX flags (kept at
	                         * every write, so htoe_retry_check() walks only
	                         * the outstanding ones) */
	bool     rx_dup;        /* RX: a duplicate arrived since the last block */
	uint64_t tlp_deadline;  /* TX: tail loss probe due (HTOE_RETRY_NEVER: none) */
	uint8_t  tlp_n;         /* TX: probes and timeouts since the last progress
	                         * (each doubles the next probe's delay) */
	uint8_t  rtt_skips;     /* TX: RTT samples left out in a row */
	uint64_t quiet_ns;      /* TX: the silence the peer's last frame ended */
	bool     tlp_heard;     /* TX: a frame from the peer since the last
	                         * probe or timeout (none: no further probe) */
	uint64_t blind_at;      /* TX: last retransmission by a probe or the RTO */
	bool     blind_dup;     /* TX: no DUP report since that retransmission */
	uint64_t min_rtt_ns;    /* TX: smallest RTT sample (0: none) */
	uint8_t  reo_mult;      /* TX: reordering window multiplier, 1..64 */
	uint8_t  reo_calm;      /* TX: losses since the last spurious one */
	uint8_t  tlp_shift;     /* TX: the probe waits (2 SRTT + ack_delay) << this,
	                         * 0..HTOE_RETRY_TLP_SHIFT_MAX: one more per needless
	                         * retransmission, back to 0 at a loss found */

	struct htoe_retry_stats stats;
};

/*
 * Initialize r with cfg (copied). Both sides start at seq 0, nothing
 * outstanding, no timer armed, counters zero.
 * Returns 0, or -EINVAL if cfg is out of range (window 0 or > 4096,
 * ack_every 0, rto_init_ns 0, rto_max_ns < rto_init_ns, rto_max_ns <
 * rto_min_ns).
 */
int htoe_retry_init(struct htoe_retry *r, const struct htoe_retry_cfg *cfg);

/*
 * VL reset: both sides back to seq 0 (TX: nothing outstanding, no go-back,
 * RTO back to rto_init and disarmed, retries 0, not failed; RX: expected 0,
 * no ACK/NAK owed). The configuration and the counters are kept (stats.resets
 * is incremented). The caller drops its retransmission copies.
 */
void htoe_retry_reset(struct htoe_retry *r);

/*
 * Give r the memory selective mode needs: sb[n], n a power of two with
 * window <= n <= 4096 (the receiver holds frames up to n - 1 ahead of the
 * expected one, and the sender's window must fit). The memory is the
 * caller's; it is cleared here and must outlive r. Returns 0 or -EINVAL.
 */
int htoe_retry_attach(struct htoe_retry *r, struct htoe_retry_sb *sb, unsigned n);

/*
 * Choose the mode for the current epoch; call right after init or
 * htoe_retry_reset() (the reset handshake negotiated it). Nothing may be
 * outstanding or held. Returns 0, or -EINVAL (selective without attached
 * memory, or state outstanding). htoe_retry_reset() returns to GBN.
 */
int htoe_retry_set_mode(struct htoe_retry *r, enum htoe_retry_mode mode);
enum htoe_retry_mode htoe_retry_mode(const struct htoe_retry *r);

/* Internal consistency of the selective state (scoreboard flags only on
 * outstanding frames, counters match): 0 or -EINVAL with a message.
 * Costs what is outstanding and held: the entries [una, next_seq) and the
 * held ones; flags left outside them are seen through the count of
 * flagged entries, which every write of a flag keeps (a flag written
 * behind its back shows when the entry is next written). */
int htoe_retry_check(const struct htoe_retry *r, char *err, size_t errlen);
/* The same, and more, by a walk of the whole scoreboard: flags outside the
 * outstanding frames however they got there (for tests and debugging). */
int htoe_retry_check_full(const struct htoe_retry *r, char *err, size_t errlen);

/* ---- TX side ------------------------------------------------------------ */

/* ---- laps: the 16-bit sequence numbers extended to 48 bits ------------
 * Each side counts how often its 16-bit numbers wrapped (a lap) since the
 * VL's reset; a frame's CRC32C covers the laps of its seq and ack, which are
 * not sent (docs/wire-format.md, "Sequence laps"). A number on the wire is
 * taken in the lap that puts it nearest to the full number its receiver
 * expects (as QUIC decodes packet numbers): the sender's window (< 2^15) is
 * always within half a lap of it. */

/* The lap of seq s that we send (s in [una, next_seq]). */
static inline uint32_t htoe_retry_tx_lap(const struct htoe_retry *r, uint16_t s)
{
	return (uint32_t)((((uint64_t)r->tx_lap << 16 | r->next_seq) -
			   (uint16_t)(r->next_seq - s)) >> 16);
}

/* The lap of the ack value we send (htoe_retry_rx_ack_value). */
static inline uint32_t htoe_retry_rx_ack_lap(const struct htoe_retry *r)
{
	return r->rx_lap;
}

/* The lap a received DATA frame's seq s is taken in. */
static inline uint32_t htoe_retry_rx_lap(const struct htoe_retry *r, uint16_t s)
{
	return (uint32_t)((((uint64_t)r->rx_lap << 16 | r->expected) +
			   (uint64_t)(int64_t)(int16_t)(uint16_t)(s - r->expected)) >> 16);
}

/* The lap a received ack value a is taken in (acks name our frames). */
static inline uint32_t htoe_retry_tx_ack_lap(const struct htoe_retry *r, uint16_t a)
{
	return (uint32_t)((((uint64_t)r->tx_lap << 16 | r->next_seq) +
			   (uint64_t)(int64_t)(int16_t)(uint16_t)(a - r->next_seq)) >> 16);
}

/* Oldest unacknowledged seq, and seq the next new frame will get. The
 * frames the caller must keep are [una, next_seq). */
inline uint16_t htoe_retry_tx_una(const struct htoe_retry *r)
{
	return r->una;
}

inline uint16_t htoe_retry_tx_next_seq(const struct htoe_retry *r)
{
	return r->next_seq;
}

/* Number of unacknowledged frames (next_seq - una), 0..window. */
inline uint16_t htoe_retry_tx_outstanding(const struct htoe_retry *r)
{
	return (uint16_t)(r->next_seq - r->una);
}

/* A go-back is in progress (htoe_retry_tx_retransmit_peek() would return
 * true). */
inline bool htoe_retry_tx_in_goback(const struct htoe_retry *r)
{
	return r->sel ? r->lost_n > 0 : r->gb_active;
}

/* The retry limit was reached; the VL must be reset. */
bool htoe_retry_tx_failed(const struct htoe_retry *r);
/* Current retransmission timeout in ns (rto_min .. rto_max), including any
 * backoff. */
uint64_t htoe_retry_tx_rto(const struct htoe_retry *r);
/*
 * Adaptive RTO (RFC 6298): one frame at a time is timed from its first
 * transmission (htoe_retry_tx_send) to the ack that releases it, using the
 * caller's `now`; a go-back cancels the measurement (Karn's rule: no sample
 * from a frame that was retransmitted). Each sample R updates
 *   first:  SRTT = R, RTTVAR = R/2
 *   then:   RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|,  SRTT = 7/8 SRTT + 1/8 R
 * and the base RTO = SRTT + 4 RTTVAR clamped to [rto_min, rto_max]. Until
 * the first sample the base is rto_init. A timeout doubles the RTO (backoff,
 * capped at rto_max); progress returns it to the base. The estimators
 * survive htoe_retry_reset() (the path is the same).
 * srtt/rttvar: 0 before the first sample.
 */
uint64_t htoe_retry_srtt(const struct htoe_retry *r);
uint64_t htoe_retry_rttvar(const struct htoe_retry *r);

/*
 * May a NEW frame be sent now? True iff the window has room
 * (outstanding < window), no go-back is in progress (retransmissions go
 * first: a new frame sent before them would only be discarded by the
 * receiver as out of order) and the retry limit has not been reached.
 */
inline bool htoe_retry_tx_can_send(const struct htoe_retry *r)
{
	return !r->failed && !htoe_retry_tx_in_goback(r) &&
	       htoe_retry_tx_outstanding(r) < r->cfg.window;
}

/*
 * First transmission of a new frame: assigns it *seq = next_seq and advances
 * next_seq. Arms the RTO (now + current RTO) if it is not armed, i.e. when
 * this frame is the only outstanding one.
 * Returns 0, or -EAGAIN if htoe_retry_tx_can_send() is false (nothing
 * changes).
 */
int htoe_retry_tx_send(struct htoe_retry *r, uint64_t now, uint16_t *seq);
/*
 * htoe_retry_tx_send in two halves, for a sender that lets the frame leave
 * before the bookkeeping: htoe_retry_tx_take assigns the seq (the caller has
 * checked htoe_retry_tx_can_send) and counts the frame; htoe_retry_tx_sent
 * (seq, and the `now` of the take) does the rest — the scoreboard, the RTT
 * sample, the RTO and the tail probe — before any other call on r's sending
 * side (an ack, a timer, the next frame) comes.
 */
inline uint16_t htoe_retry_tx_take(struct htoe_retry *r)
{
	uint16_t seq = r->next_seq++;

	if (r->next_seq == 0)
		r->tx_lap++;
	r->stats.frames_sent++;
	return seq;
}
void htoe_retry_tx_sent(struct htoe_retry *r, uint16_t seq, uint64_t now);

/*
 * A cumulative ack `ack` (the peer's next expected seq) arrived, piggybacked
 * on any frame or in an ACK frame.
 *  - una < ack <= next_seq: releases the frames [una, ack): returns their
 *    number (> 0). On this progress the retry counter and the RTO return to
 *    0 and the base RTO (see htoe_retry_srtt; rto_init before any RTT sample);
 *    the RTO is re-armed at now + that RTO if frames remain,
 *    disarmed otherwise. A go-back in progress skips the released frames
 *    (and ends if none remain).
 *  - ack == una, or ack before una (stale, reordered frame): returns 0,
 *    nothing changes; except that ack == una while frames are outstanding
 *    after a timeout (retry counter > 0), no go-back in progress and at
 *    least one base RTO since the last go-back started, starts a go-back
 *    from una at once (the peer is alive but lost the go-back, e.g. it was
 *    not polled and its RX ring overflowed: do not wait out the backed-off
 *    RTO, which would end in a VL reset after retry_limit timeouts although
 *    the peer answers). The retry counter and the RTO stay as they are.
 *  - ack after next_seq: invalid (the peer acknowledges frames never sent):
 *    counted in stats.invalid_acks, nothing changes, returns -EINVAL.
 * After a reset, until the peer has reset too, its acks are typically
 * invalid; the VL epoch check should filter those frames first.
 */
int htoe_retry_tx_ack(struct htoe_retry *r, uint16_t ack, uint64_t now);

/*
 * A NAK(ack) arrived: the peer expects `ack` and has seen a later frame.
 * It is first processed as htoe_retry_tx_ack(r, ack, now) (same return
 * value). Then, if frames remain unacknowledged from `ack` on
 * (ack == una after the release), a go-back from `ack` starts (every frame
 * from ack to next_seq - 1 is retransmitted, in order) and the RTO is
 * re-armed at now + RTO — unless a go-back from the same point `ack` is
 * already in progress, in which case the NAK is ignored (NAK storm guard;
 * stats.naks_ignored). A stale NAK (ack before una) starts nothing.
 * Returns the number of frames released, or -EINVAL as for an invalid ack.
 */
int htoe_retry_tx_nak(struct htoe_retry *r, uint16_t ack, uint64_t now);

/* Return values of htoe_retry_tx_timer(). */
enum htoe_retry_timer {
	HTOE_RETRY_IDLE = 0,   /* the RTO has not expired (or is not armed) */
	HTOE_RETRY_GOBACK = 1, /* RTO expired: go-back from una started */
	HTOE_RETRY_LIMIT = 2,  /* RTO expired retry_limit + 1 times in a row
	                        * without progress: the caller resets the VL */
};

/*
 * Run the TX timer. If the RTO is armed and now >= its deadline: counts a
 * timeout; if retry_limit + 1 timeouts in a row came without any frame
 * from the peer and it has been silent long enough (see above), the side
 * fails (timer disarmed, no go-back, htoe_retry_tx_can_send() false until
 * htoe_retry_reset()) and HTOE_RETRY_LIMIT is returned. Otherwise the RTO
 * doubles (capped at rto_max and at 2^HTOE_RETRY_RTO_SHIFT_MAX times the
 * adaptive RTO), a go-back from una starts and the timer is re-armed at
 * now + the new RTO: HTOE_RETRY_GOBACK.
 * So with no progress, successive timeouts come rto, 2*rto, 4*rto, ...
 * (capped) after each other.
 * Returns HTOE_RETRY_IDLE when nothing expired. The RX side needs no timer
 * call: its due times are checked by htoe_retry_rx_ack_due()/_nak_due().
 */
enum htoe_retry_timer htoe_retry_tx_timer(struct htoe_retry *r, uint64_t now);

/*
 * Go-back iterator. peek: if a go-back is in progress, *seq = the next frame
 * to retransmit and returns true; false otherwise. next: the same, and
 * consumes it (counts a retransmission; the go-back ends after the frame
 * next_seq - 1). Use peek when the caller may fail to send the frame.
 */
bool htoe_retry_tx_retransmit_peek(const struct htoe_retry *r, uint16_t *seq);
bool htoe_retry_tx_retransmit_next(struct htoe_retry *r, uint16_t *seq);
/* The same with the time of the retransmission, which selective mode
 * records (use this one in selective mode). In selective mode the frames
 * handed out are the lost ones, in sequence order, skipping SACKed ones. */
bool htoe_retry_tx_retransmit_at(struct htoe_retry *r, uint64_t now, uint16_t *seq);

/*
 * Selective mode: a SACK block arrived in an ACK or NAK frame whose ack
 * field is `ack` (process the ack itself first with htoe_retry_tx_ack).
 * Bits for frames before una are ignored (stale); bits for frames never
 * sent (at or after next_seq) are ignored and counted (stats.sack_invalid,
 * once per block): a forged block cannot mark anything beyond what was
 * sent. Frames newly SACKed are never resent (unless the RTO fires on the
 * oldest). Then the RACK rule marks lost frames. Returns the number of
 * frames newly SACKed, 0 in GBN mode (ignored), -EINVAL for a malformed
 * block (counted, nothing changes).
 */
int htoe_retry_tx_sack(struct htoe_retry *r, uint16_t ack, const uint8_t *blk, size_t len,
		       uint64_t now);

/* ---- RX side ------------------------------------------------------------ */

enum htoe_retry_verdict {
	HTOE_RX_ACCEPT = 0,       /* seq == expected: deliver; expected++ */
	HTOE_RX_DUP = 1,          /* seq before expected: discard; an ACK is
	                           * owed at once so the sender learns */
	HTOE_RX_OUT_OF_ORDER = 2, /* seq after expected: discard; a NAK is owed
	                           * (once per gap, see below) */
};

/*
 * Classify a received DATA frame with sequence number seq (after its CRC,
 * VL and epoch were checked). Only ACCEPT frames may be delivered.
 *  - ACCEPT: expected++; an ACK becomes pending: due after ack_every
 *    accepted frames, or ack_delay_ns after the first of them, whichever is
 *    first. Any NAK state for the old expected value is cleared.
 *  - DUP: an ACK is due now.
 *  - OUT_OF_ORDER: if no NAK was sent for the current expected value, a NAK
 *    is due now; otherwise the NAK is repeated no earlier than rto_init
 *    after the previous one (and only because out-of-order frames keep
 *    arriving: one NAK per gap per rto_init at most).
 */
enum htoe_retry_verdict htoe_retry_rx_frame(struct htoe_retry *r, uint16_t seq,
					    uint64_t now);
/* htoe_retry_rx_frame() of the expected frame when it is not held (the
 * in-order frame: the caller checked seq == htoe_retry_rx_ack_value() and
 * !htoe_retry_rx_is_held()): ACCEPT, inline. */
static inline void htoe_retry_rx_accept(struct htoe_retry *r, uint64_t now)
{
	if (++r->expected == 0)
		r->rx_lap++;
	r->stats.frames_accepted++;
	/* the gap (if any) is closed */
	r->nak_sent = false;
	r->nak_at = HTOE_RETRY_NEVER;
	if (!r->ack_pending) {
		r->ack_pending = true;
		r->ack_at = now > UINT64_MAX - r->cfg.ack_delay_ns ? UINT64_MAX :
								   now + r->cfg.ack_delay_ns;
	}
	if (r->unacked < UINT16_MAX)
		r->unacked++;
	if (r->unacked >= r->cfg.ack_every && now < r->ack_at)
		r->ack_at = now;
	/* a hole remains: SACK it */
	if (r->sel && r->rx_held && !(r->sb[r->expected & r->sb_mask].flags & HTOE_RETRY_SB_HELD) &&
	    now < r->ack_at)
		r->ack_at = now;
}
/*
 * Selective mode. A frame that rx_frame() called OUT_OF_ORDER may be held
 * (can_hold: selective, less than the scoreboard size ahead of expected,
 * not held yet). After storing its packets the caller calls rx_hold(): an
 * ACK with the SACK block becomes due (at once when the frame opens a new
 * hole, else as for accepted frames). A held frame's copy is a DUP for
 * rx_frame(). When rx_frame() ACCEPTs the expected frame, the caller
 * delivers the held frames that follow: while rx_is_held(expected), deliver
 * its packets and call rx_frame(expected) (an ACK is then due at once).
 */
bool htoe_retry_rx_can_hold(const struct htoe_retry *r, uint16_t seq);
int  htoe_retry_rx_hold(struct htoe_retry *r, uint16_t seq, uint64_t now);
inline bool htoe_retry_rx_is_held(const struct htoe_retry *r, uint16_t seq)
{
	int32_t off = htoe_seq_diff(seq, r->expected);

	return r->sel && off >= 0 && off <= r->sb_mask &&
	       (r->sb[seq & r->sb_mask].flags & HTOE_RETRY_SB_HELD);
}

inline uint16_t htoe_retry_rx_held(const struct htoe_retry *r)
{
	return r->rx_held;
}
/* A SACK block is due with the next ACK/NAK: frames are held, or a
 * duplicate arrived since the last block (selective mode only). */
bool htoe_retry_rx_sack_due(const struct htoe_retry *r);
/* Write the SACK block for the frames held into buf[0..cap) (truncated to
 * what fits) and clear the DUP report: its length, or 0 if none is due
 * (htoe_retry_rx_sack_due false, or cap < 8). Its bitmap is relative to
 * htoe_retry_rx_ack_value(). */
int  htoe_retry_rx_sack(struct htoe_retry *r, uint8_t *buf, size_t cap);

/* The ack value to put in every frame sent to the peer: the next expected
 * seq. */
inline uint16_t htoe_retry_rx_ack_value(const struct htoe_retry *r)
{
	return r->expected;
}

/* An ACK is owed and due at now (send a standalone ACK frame unless a DATA
 * frame carrying the ack goes out now anyway). */
inline bool htoe_retry_rx_ack_due(const struct htoe_retry *r, uint64_t now)
{
	return r->ack_pending && now >= r->ack_at;
}

/* An ACK is owed (due now or later). */
bool htoe_retry_rx_ack_pending(const struct htoe_retry *r);

/* A NAK frame (ack = htoe_retry_rx_ack_value()) is due at now. */
inline bool htoe_retry_rx_nak_due(const struct htoe_retry *r, uint64_t now)
{
	return r->nak_at != HTOE_RETRY_NEVER && now >= r->nak_at;
}

/*
 * A frame carrying ack = htoe_retry_rx_ack_value() was sent (a DATA frame,
 * an ACK frame, or a retransmission with a refreshed ack): clears the
 * pending ACK (counted in stats.acks_sent if one was pending). Calling it
 * after every frame sent is correct and cheap.
 */
inline void htoe_retry_rx_ack_sent(struct htoe_retry *r, uint64_t now)
{
	(void)now;
	if (r->ack_pending)
		r->stats.acks_sent++;
	r->ack_pending = false;
	r->unacked = 0;
	r->ack_at = HTOE_RETRY_NEVER;
}

/*
 * A NAK frame was sent: the NAK is no longer due; it will not be repeated
 * for the same expected value before now + rto_init. Since a NAK carries
 * the ack, it also clears the pending ACK (like htoe_retry_rx_ack_sent()).
 */
void htoe_retry_rx_nak_sent(struct htoe_retry *r, uint64_t now);

/* ---- deadlines ---------------------------------------------------------- */

/*
 * Earliest time at which a timer of this VL needs the caller: the RTO, the
 * pending ACK's due time, the NAK due time (immediate or re-arm).
 * HTOE_RETRY_NEVER (UINT64_MAX) if none. A value <= now means "due now".
 */
inline uint64_t htoe_retry_next_deadline(const struct htoe_retry *r)
{
	uint64_t d = r->rto_deadline;

	if (r->sel) {
		if (r->rack_deadline < d)
			d = r->rack_deadline;
		if (r->tlp_deadline < d)
			d = r->tlp_deadline;
	}
	if (r->ack_pending && r->ack_at < d)
		d = r->ack_at;
	return r->nak_at < d ? r->nak_at : d;
}

/* ---- reorder buffer: the HT packets of held frames ---------------------- */

/*
 * Keeps the HT packets of the frames a receiver holds in selective mode, by
 * sequence number, in slots of caller memory allocated once: nframes frame
 * entries (a power of two, the scoreboard size) and npkt packet slots.
 * Storing and freeing are O(packets); nothing is allocated.
 *
 * A held frame's packets either keep the receive buffers (credits) they
 * came with ("pooled"), or, while the slots set aside for that allow
 * (`unpooled_max`), live in the reorder buffer alone ("unpooled"): their
 * buffers are released at once and granted to the sender again, so that
 * it keeps sending while a lost frame is repaired instead of waiting a
 * round trip per loss with every credit held behind the hole. The caller
 * sizes npkt = what its credits let a peer hold (pooled) + unpooled_max,
 * so a pooled frame always finds room.
 */
#define HTOE_ROB_PKT_MAX 80u        /* HT_MAX_PKT_LEN */
#define HTOE_ROB_NONE    0xFFFFu

struct htoe_rob_pkt {
	uint16_t next;                  /* next packet of the frame, or free list */
	uint8_t  len;
	uint8_t  has_data;
	uint8_t  bytes[HTOE_ROB_PKT_MAX];
};

struct htoe_rob_frame {
	uint16_t first;                 /* HTOE_ROB_NONE: no frame */
	uint16_t seq;
	uint8_t  npkts, ndata, vc;
	uint8_t  unpooled;              /* its receive buffers were released */
};

struct htoe_rob {
	struct htoe_rob_frame *fr;
	struct htoe_rob_pkt *pkt;
	uint16_t fr_mask, npkt, free_head, nfree;
	uint16_t unpooled_max;          /* slots for unpooled packets */
	uint16_t unpooled;              /* unpooled packets stored */
	uint32_t frames;                /* frames stored */
	uint32_t pkts[3], data[3];      /* packets / data packets stored, per VC */
	uint32_t upkts[3], udata[3];    /* of which unpooled */
};

/* 0, or -EINVAL (nframes not a power of two in 1..4096, npkt 0 or > 65534,
 * unpooled_max > npkt). */
int htoe_rob_init(struct htoe_rob *rob, struct htoe_rob_frame *fr, unsigned nframes,
		  struct htoe_rob_pkt *pkt, unsigned npkt, unsigned unpooled_max);
/* Mark the stored frame seq unpooled if the slots for unpooled packets
 * allow it: true (the caller then releases its receive buffers), or false
 * (it stays pooled; also for a frame not stored or already unpooled). */
bool htoe_rob_unpool(struct htoe_rob *rob, uint16_t seq);
/* Packets (data: data packets) of VC vc stored that hold receive buffers. */
static inline uint32_t htoe_rob_pooled(const struct htoe_rob *rob, unsigned vc, bool data)
{
	return data ? rob->data[vc] - rob->udata[vc] : rob->pkts[vc] - rob->upkts[vc];
}
/* Store the npkts HT packets of payload (a DATA payload that passed
 * htoe_frame_parse, VC vc) as frame seq. 0, -EEXIST (an entry for seq & mask
 * is in use), -ENOSPC (not enough free slots; nothing stored). */
int htoe_rob_put(struct htoe_rob *rob, uint16_t seq, unsigned vc, const uint8_t *payload,
		 size_t len, unsigned npkts);
/* The stored frame seq, or NULL. Its packets: pkt[first], then .next. */
const struct htoe_rob_frame *htoe_rob_get(const struct htoe_rob *rob, uint16_t seq);
/* Free frame seq's slots (no-op if not stored). */
void htoe_rob_free(struct htoe_rob *rob, uint16_t seq);
/* Consistency: free + used slots == npkt, per-VC counts match. 0/-EINVAL.
 * Visits the stored frames only: stops when `frames` are found (a stored
 * frame beyond them holds slots neither used nor free, so the slot count
 * fails). */
int htoe_rob_check(const struct htoe_rob *rob, char *err, size_t errlen);
/* The same by a walk of every frame entry (for tests and debugging). */
int htoe_rob_check_full(const struct htoe_rob *rob, char *err, size_t errlen);

#endif
