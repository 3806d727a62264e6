/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_credit: end-to-end credits of the virtual links (VLs) and the
 * receive-buffer pool of a bridge. Sans-I/O: no clock, no allocation.
 *
 * Classes. Six buffer classes: VC (P, NP, R) x (command, data). Every HT
 * packet takes one command credit of its VC, plus one data credit of the
 * same VC if it has a data packet (any size 4..64 bytes). Arrays are indexed
 * [vc][d] (vc = enum ht_vc, d = 0 command / 1 data); the flat form used by
 * the wire header (credit[6], class = 2*vc + d, enum htoe_credit_class) is
 * the same memory order.
 *
 * Cumulative limits. For each class the receiver of a VL advertises, in
 * every frame header it sends, `granted`: the total number of buffers it has
 * ever granted to this sender on this VL, mod 2^16. The sender keeps
 * `consumed`, the total it has used, and may send while consumed < limit
 * (serial arithmetic). A lost or duplicated update is harmless because the
 * next header repeats the total; a reordered (older) header is recognised
 * because its limit is serially behind and is ignored. Grants can never be
 * revoked. Because pool totals are capped at 32767 per class, limit -
 * consumed stays within the serial range.
 *
 * Sender side: struct htoe_credit_tx, one per VL.
 * Receiver side: struct htoe_rxpool, one per bridge (shared by all VLs), and
 * struct htoe_credit_rx, one per VL, attached to the pool.
 *
 * ---- Receive-pool policy ------------------------------------------------
 * Per class c, with T = total[c] buffers, R = reserve, M = max_per_vl and
 * N = n_vls (the most VLs that can attach):
 *
 *   outstanding(v)  o_v = granted_v - released_v : buffers VL v can occupy
 *                   (granted, not yet released: in flight, held by the
 *                   sender as unused credit, or queued in the bridge)
 *   excess(v)       e_v = max(0, o_v - R)
 *   shared          S   = T - N*R
 *   busy VLs        B   = attached VLs active in the class (rule 3)
 *
 *  1. Reserve. Every VL can always be brought up to o_v = R: the first
 *     regrant of a VL (and of a VL after a reset) grants R, and after
 *     releases the VL is topped up to R again. init fails unless T >= N*R,
 *     and R >= 1 so that every sender can always make progress (a new
 *     sender can start without waiting for anybody).
 *  2. Shared remainder, fair share. Beyond R, a busy VL takes buffers from
 *     the shared remainder, up to its fair share F = max(1, floor(S / B)):
 *     regrant raises o_v to
 *         R + min(F, M - R, e_v + (S - sum_u e_u))
 *     i.e. up to its share and the cap M, as far as the shared part has
 *     free buffers. A VL above its share (B grew since it was granted) gets
 *     no new shared buffers until its releases bring it below; the buffers
 *     it releases go to the VLs below their share. So with B senders
 *     competing, each holds R + F after a round trip of releases, whatever
 *     the order in which they started (with a first come, first served
 *     rule the first busy VLs would take the shared part: 8 senders to one
 *     node measured Jain's index 0.43).
 *  3. Demand gate. Only a VL that has received at least one packet of the
 *     class since init/reset ("active") gets shared buffers, and only
 *     active VLs count in B (from their first regrant after becoming
 *     active until their reset). A VL whose sender never sends (a peer in
 *     the table but idle) therefore holds R, never takes from the shared
 *     remainder and does not shrink the others' share. A VL that stops
 *     sending stays busy until a reset (there is no clock here): it keeps
 *     the share it was granted, as rule 4 says (counting it out would free
 *     nothing: its unused grants stay with it until its sender uses them).
 *  4. Cap. Cumulative grants cannot be revoked, so a VL that goes idle
 *     keeps its unused credits until it uses them. The cap M bounds what
 *     an idle VL can sit on: at most M buffers per class per VL.
 *     With the fair share, M only matters while S / B > M - R.
 *  5. No over-commitment. Credits are granted only for free buffers:
 *         sum_v e_v <= S   and therefore   sum_v o_v <= N*R + S = T
 *     at all times; htoe_credit_check() verifies this and the per-VL
 *     ordering released <= received <= granted.
 * Isolation: a VL that stops releasing (its local traffic is stuck) can
 * occupy at most M buffers; every other VL keeps at least R.
 *
 * VL reset. The caller first releases (htoe_credit_rx_release) every buffer
 * the VL still holds (packets dropped from its queues), then calls
 * htoe_credit_rx_reset(): the unused grants return to the pool and the
 * counters restart at zero; frames of the old epoch still in flight must be
 * dropped by the caller without calling htoe_credit_rx_receive(). The peer
 * resets its sender side with htoe_credit_tx_reset() (limits and consumed
 * 0); it may send again when the first header of the new epoch arrives.
 */
#ifndef HTOE_CREDIT_H
#define HTOE_CREDIT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_packet.h"
#include "htoe/htoe_wire.h"

#define HTOE_CREDIT_NCLASS   6       /* 2 * HT_VC_COUNT, wire order */
#define HTOE_CREDIT_POOL_MAX 32767u  /* max buffers per class in a pool */

/* Flat class index as in the wire header: 2*vc + has_data. */
static inline unsigned htoe_credit_class(enum ht_vc vc, bool data)
{
	return 2u * (unsigned)vc + (data ? 1u : 0u);
}

/* Whether vc is one of the three VCs. (The 16-bit counters are compared
 * with htoe_seq_diff, htoe_wire.h: they wrap.) */
static inline bool htoe_credit_vc_ok(enum ht_vc vc)
{
	return vc == HT_VC_P || vc == HT_VC_NP || vc == HT_VC_R;
}

/* ---- sender side -------------------------------------------------------- */

struct htoe_credit_tx {
	uint16_t limit[HT_VC_COUNT][2];    /* last cumulative limit heard */
	uint16_t consumed[HT_VC_COUNT][2]; /* total credits used */
	/* starvation accounting per VC */
	bool     blocked[HT_VC_COUNT];     /* an interval is open */
	bool     blocked_data[HT_VC_COUNT];/* the blocked packet has data */
	uint64_t blocked_since[HT_VC_COUNT];
	uint64_t starved_ns[HT_VC_COUNT];  /* closed intervals, cumulative */
	uint64_t starved_events[HT_VC_COUNT];
	uint64_t updates;                  /* classes advanced by updates */
	uint64_t stale_updates;            /* classes whose limit went backwards */
};

/* All limits and consumed counts 0 (nothing may be sent until the peer's
 * first header arrives), counters 0. */
void htoe_credit_tx_init(struct htoe_credit_tx *tx);

/* VL reset: limits and consumed back to 0; an open starvation interval is
 * dropped (not accounted); cumulative counters are kept. */
void htoe_credit_tx_reset(struct htoe_credit_tx *tx);

/* Credits available in one class: limit - consumed (0 if negative, which
 * only a bogus peer can cause). vc must be HT_VC_P/NP/R. */
static inline uint16_t htoe_credit_tx_avail(const struct htoe_credit_tx *tx, enum ht_vc vc,
					    bool data)
{
	if (!htoe_credit_vc_ok(vc))
		return 0;
	int32_t a = htoe_seq_diff(tx->limit[vc][data], tx->consumed[vc][data]);
	return a > 0 ? (uint16_t)a : 0;
}

/* Can a packet of vc (with a data packet if has_data) be sent: at least one
 * command credit of vc and, if has_data, one data credit of vc. False for
 * an invalid vc. */
static inline bool htoe_credit_tx_can_send(const struct htoe_credit_tx *tx, enum ht_vc vc,
					   bool has_data)
{
	if (!htoe_credit_vc_ok(vc))
		return false;
	if (htoe_credit_tx_avail(tx, vc, false) == 0)
		return false;
	return !has_data || htoe_credit_tx_avail(tx, vc, true) > 0;
}

/*
 * Take the credits of one packet, when it is first put in a frame
 * (retransmissions never take again). Returns 0, -EAGAIN if a credit is
 * missing (nothing is taken), -EINVAL for an invalid vc.
 */
int htoe_credit_tx_take(struct htoe_credit_tx *tx, enum ht_vc vc, bool has_data);
/* The same for the npkts packets of one frame, ndata of them with data: all
 * or nothing (once per frame instead of once per packet; inline: the frame
 * was packed by what htoe_credit_tx_avail() said, and the compiler sees it). */
static inline int htoe_credit_tx_take_n(struct htoe_credit_tx *tx, enum ht_vc vc,
					unsigned npkts, unsigned ndata)
{
	if (!htoe_credit_vc_ok(vc) || ndata > npkts)
		return -EINVAL;
	if (htoe_credit_tx_avail(tx, vc, false) < npkts ||
	    (ndata && htoe_credit_tx_avail(tx, vc, true) < ndata))
		return -EAGAIN;
	tx->consumed[vc][0] = (uint16_t)(tx->consumed[vc][0] + npkts);
	tx->consumed[vc][1] = (uint16_t)(tx->consumed[vc][1] + ndata);
	return 0;
}

/*
 * The cumulative limits credit[6] (wire order) of a received header. For each
 * class: a limit serially after the current one replaces it; an equal one
 * changes nothing; one serially before it (an older frame overtaken by a
 * newer one) is ignored and counted in stale_updates. If a VC was marked
 * blocked and its packet can now be sent, its starvation interval ends at
 * now. Returns the bit mask of the classes that advanced (bit = class).
 */
unsigned htoe_credit_tx_update(struct htoe_credit_tx *tx,
			       const uint16_t credit[HTOE_CREDIT_NCLASS],
			       uint64_t now);

/*
 * Starvation accounting. The caller has a packet of (vc, has_data) ready for
 * this VL but htoe_credit_tx_can_send() is false: call _blocked(). The first
 * call opens an interval at now (later calls while it is open change
 * nothing, except that has_data is updated). The interval closes at the
 * htoe_credit_tx_update() that makes the packet sendable, or at
 * _unblocked() (the caller's queue emptied for another reason).
 * _starved_ns() = closed intervals + the open one up to now.
 */
void htoe_credit_tx_blocked(struct htoe_credit_tx *tx, enum ht_vc vc,
			    bool has_data, uint64_t now);
void htoe_credit_tx_unblocked(struct htoe_credit_tx *tx, enum ht_vc vc,
			      uint64_t now);
uint64_t htoe_credit_tx_starved_ns(const struct htoe_credit_tx *tx,
				   enum ht_vc vc, uint64_t now);

/* ---- receive pool (one per bridge) ------------------------------------ */

/* VLs htoe_credit_check_changed() checks incrementally (more: all, always) */
#define HTOE_CREDIT_CHECK_VLS 64

struct htoe_rxpool {
	uint16_t total[HT_VC_COUNT][2];
	uint16_t reserve;                   /* R, every class */
	uint16_t max_per_vl;                /* M, every class */
	uint16_t n_vls;                     /* N: VLs that may attach */
	uint16_t n_attached;
	uint32_t shared[HT_VC_COUNT][2];    /* S = total - N*R */
	uint32_t committed[HT_VC_COUNT][2]; /* sum of o_v over attached VLs */
	uint32_t excess[HT_VC_COUNT][2];    /* sum of e_v */
	uint32_t committed_hwm[HT_VC_COUNT][2];
	uint16_t n_busy[HT_VC_COUNT][2];    /* B: attached VLs active in the class */
	/* S / B (at least 1), kept as B changes: a regrant, once per frame,
	 * does not divide (a division is tens of cycles on the round trip) */
	uint32_t share[HT_VC_COUNT][2];
	/* Bumped whenever a VL's grant may have grown by what another VL did:
	 * a reset (n_busy and excess fell), or a release above the reserve
	 * (excess fell) in a class whose grant the shared part's room limited
	 * at a regrant since the last bump (room_limited, bit = class). */
	uint64_t gen;
	uint8_t  room_limited;
	/* htoe_credit_check_changed(): what each VL held at its last check
	 * (o and busy per class, by position) and their sums */
	bool     chk_valid;
	uint16_t chk_n;
	uint16_t chk_o[HTOE_CREDIT_CHECK_VLS][HT_VC_COUNT][2];
	bool     chk_busy[HTOE_CREDIT_CHECK_VLS][HT_VC_COUNT][2];
	uint32_t chk_sum_o[HT_VC_COUNT][2], chk_sum_e[HT_VC_COUNT][2];
	uint32_t chk_sum_busy[HT_VC_COUNT][2];
};

/*
 * total[vc][d]: buffers of each class. reserve R >= 1, max_per_vl M >= R,
 * n_vls N >= 1, total[c] <= 32767 and total[c] >= N*R for every class.
 * Returns 0 or -EINVAL.
 */
int htoe_rxpool_init(struct htoe_rxpool *p, const uint16_t total[HT_VC_COUNT][2],
		     uint16_t reserve, uint16_t max_per_vl, uint16_t n_vls);

/* Free buffers of a class (total - committed). */
uint32_t htoe_rxpool_free(const struct htoe_rxpool *p, enum ht_vc vc, bool data);

/* ---- receiver side, one per VL ---------------------------------------- */

struct htoe_credit_rx {
	uint16_t granted[HT_VC_COUNT][2];   /* cumulative limit advertised */
	uint16_t received[HT_VC_COUNT][2];  /* packets received (accepted) */
	uint16_t released[HT_VC_COUNT][2];  /* buffers freed by the local side */
	bool     active[HT_VC_COUNT][2];    /* received something since reset */
	bool     busy[HT_VC_COUNT][2];      /* counted in the pool's n_busy */
	uint64_t overruns;                  /* received beyond granted */
	uint64_t regrants;                  /* regrants that changed a limit */
	uint64_t forced_releases;           /* buffers still held at a reset, given back */
	/* Classes whose grant may have changed since this VL's last regrant
	 * (bit = class): a release (o fell), a class newly active, init and
	 * reset. pool_gen is the pool's gen at that regrant; when it differs,
	 * every class is recomputed (another VL freed shared buffers or went
	 * idle). A class neither dirty nor behind the pool cannot have a
	 * target above what it holds: regrant skips it. */
	uint8_t  dirty;
	uint64_t pool_gen;
	/* An active class's target at its last regrant, when the room did not
	 * limit it (else 0): with this VL alone in the pool it holds until
	 * the VL's reset (htoe_credit_rx_release_regrant_n). */
	uint16_t tgt[HT_VC_COUNT][2];
};

/*
 * Attach a VL to the pool: counters 0, nothing granted yet (call
 * htoe_credit_rx_regrant() to grant the reserve and advertise it).
 * Returns 0, or -ENOSPC if n_vls VLs are already attached.
 */
int htoe_credit_rx_init(struct htoe_rxpool *p, struct htoe_credit_rx *rx);

/*
 * An HT packet of (vc, has_data) arrived on this VL (in an accepted frame).
 * Checks received < granted for the command class and, if has_data, for the
 * data class. Returns 0 (counted as received: the packet now holds its
 * buffers until htoe_credit_rx_release()), -ENOSPC for an overrun (nothing
 * counted except rx->overruns: the caller drops the packet and counts
 * HTOE_DROP_NO_CREDIT), -EINVAL for an invalid vc.
 */
int htoe_credit_rx_receive(struct htoe_credit_rx *rx, enum ht_vc vc, bool has_data);
/* The same for the npkts packets of one accepted frame, ndata of them with
 * data: all counted or none (an overrun counts once). Inline: once per
 * frame, after the caller checked the frame against htoe_credit_rx_unused(). */
static inline int htoe_credit_rx_receive_n(struct htoe_credit_rx *rx, enum ht_vc vc,
					   unsigned npkts, unsigned ndata)
{
	if (!htoe_credit_vc_ok(vc) || ndata > npkts)
		return -EINVAL;
	if (htoe_seq_diff(rx->granted[vc][0], rx->received[vc][0]) < (int)npkts ||
	    (ndata && htoe_seq_diff(rx->granted[vc][1], rx->received[vc][1]) < (int)ndata)) {
		rx->overruns++;
		return -ENOSPC;
	}
	rx->received[vc][0] = (uint16_t)(rx->received[vc][0] + npkts);
	rx->received[vc][1] = (uint16_t)(rx->received[vc][1] + ndata);
	/* receiving leaves o unchanged: only a class newly active may grow */
	if (npkts && !rx->active[vc][0]) {
		rx->active[vc][0] = true;
		rx->dirty |= (uint8_t)(1u << (2 * vc));
	}
	if (ndata && !rx->active[vc][1]) {
		rx->active[vc][1] = true;
		rx->dirty |= (uint8_t)(2u << (2 * vc));
	}
	return 0;
}

/*
 * The buffers of one received packet of (vc, has_data) are free again (the
 * local HT link consumed it, or it was dropped). Returns 0, or -EINVAL if
 * that would release more than was received (caller bug; nothing changes).
 */
int htoe_credit_rx_release(struct htoe_rxpool *p, struct htoe_credit_rx *rx,
			   enum ht_vc vc, bool has_data);
/* The same for npkts packets of vc, ndata of them with data (once per
 * frame instead of once per packet): all released, or -EINVAL and none. */
int htoe_credit_rx_release_n(struct htoe_rxpool *p, struct htoe_credit_rx *rx, enum ht_vc vc,
			     unsigned npkts, unsigned ndata);

/* The same, each class of the packets granted its buffers again at once
 * when that is exactly what htoe_credit_rx_regrant() before the VL's next
 * frame would do (a pool with this VL alone: nothing else can change the
 * class's grant meanwhile). 1 if a limit changed (advertise it), 0 (a
 * regrant will decide: htoe_credit_rx_regrant_due), or -EINVAL as
 * htoe_credit_rx_release_n(). */
int htoe_credit_rx_release_regrant_n(struct htoe_rxpool *p, struct htoe_credit_rx *rx,
				     enum ht_vc vc, unsigned npkts, unsigned ndata);

/*
 * Recompute the grant of every class of this VL by the pool policy (top up
 * to the reserve; active classes up to the cap from the shared remainder);
 * only the classes whose grant may have changed are visited (dirty,
 * pool_gen), with the result of visiting all six.
 * Returns true if any cumulative limit changed: the caller must advertise
 * the new limits (piggybacked on the next frame, or in an ACK frame if no
 * frame is going to the peer soon; see htoe_credit_rx_unused()).
 */
bool htoe_credit_rx_regrant(struct htoe_rxpool *p, struct htoe_credit_rx *rx);
/* Could a regrant change anything: a class dirty, or the pool changed
 * since the last one (pool_gen)? Else it would find nothing to grant. */
static inline bool htoe_credit_rx_regrant_due(const struct htoe_rxpool *p,
					      const struct htoe_credit_rx *rx)
{
	return rx->dirty || rx->pool_gen != p->gen;
}

/* The cumulative limits to put in a header (wire order). */
static inline void htoe_credit_rx_limits(const struct htoe_credit_rx *rx,
					 uint16_t credit[HTOE_CREDIT_NCLASS])
{
	for (int v = 0; v < HT_VC_COUNT; v++)
		for (int d = 0; d < 2; d++)
			credit[2 * v + d] = rx->granted[v][d];
}

/* Granted but not yet received (credits the sender may still use), and
 * received but not yet released (buffers held). A caller can use unused ==
 * 0 after a regrant as "the sender is stalled: send the update now". */
static inline uint16_t htoe_credit_rx_unused(const struct htoe_credit_rx *rx, enum ht_vc vc,
					      bool data)
{
	if (!htoe_credit_vc_ok(vc))
		return 0;
	return (uint16_t)(rx->granted[vc][data] - rx->received[vc][data]);
}

static inline uint16_t htoe_credit_rx_held(const struct htoe_credit_rx *rx, enum ht_vc vc,
					    bool data)
{
	if (!htoe_credit_vc_ok(vc))
		return 0;
	return (uint16_t)(rx->received[vc][data] - rx->released[vc][data]);
}

/*
 * VL reset of the receiver side. Returns the VL's grants to the pool,
 * buffers still held included (they belong to the old epoch: a late release
 * of one is refused, as is any release beyond what was received), zeroes
 * granted/received/released and the active flags. The VL stays attached;
 * the next regrant grants the reserve again, which a peer whose sender side
 * restarted at zero can use. Returns how many buffers were still held
 * (counted in forced_releases); the caller should have released them.
 */
int htoe_credit_rx_reset(struct htoe_rxpool *p, struct htoe_credit_rx *rx);

/*
 * Invariant check ("credits conserved") over the pool and all its attached
 * VLs: the VL i is at (const char *)first + i * stride (stride =
 * sizeof(struct htoe_credit_rx) for a plain array, or the size of a larger
 * per-VL struct when first points at its htoe_credit_rx member). n must be
 * the number of attached VLs. Checks, per class:
 *   released <= received <= granted (serially) for every VL;
 *   o_v <= max(R, M) for every VL;
 *   sum o_v == pool committed, sum e_v == pool excess;
 *   the VLs marked busy number the pool's n_busy;
 *   excess <= shared, committed <= total.
 * Returns 0, or -EINVAL with a message in err (if err != NULL).
 */
int htoe_credit_check(const struct htoe_rxpool *p, const struct htoe_credit_rx *first,
		      size_t n, size_t stride, char *err, size_t errlen);

/*
 * The same invariants at the cost of the VLs that changed: bit i of
 * changed set for every VL (position i) whose receive credits changed since
 * the previous call. The sums are kept from each VL's state at its last
 * check: a VL whose change moved the pool's counters but was not named
 * shows as a sum that differs from the pool's; a VL's own bounds are
 * checked when it is named. The first call (and any after a failure, or
 * with another n) checks every VL. Returns 0, or -EINVAL with a message.
 */
int htoe_credit_check_changed(struct htoe_rxpool *p, const struct htoe_credit_rx *first,
			      size_t n, size_t stride, uint64_t changed, char *err,
			      size_t errlen);

/*
 * Check one direction of a VL end to end (sender tx, receiver rx, both in
 * the same epoch): consumed <= limit, limit <= granted, received <=
 * consumed, serially, for every class. Returns 0 or -EINVAL with a message.
 */
int htoe_credit_check_pair(const struct htoe_credit_tx *tx,
			   const struct htoe_credit_rx *rx, char *err, size_t errlen);

#endif
