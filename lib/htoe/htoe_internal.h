/* SPDX-License-Identifier: BSD-3-Clause
 * Internal state of the bridge: the structs shared by its modules. Each
 * module declares its own functions in its header; the dependencies run one
 * way, lower first:
 *   htoe_deliver.c  the queue towards the local HT side (htoe_deliver.h)
 *   htoe_encap.c    encapsulation, decapsulation, acks (htoe_encap.h)
 *   htoe_reset.c    selective reset and poisoning of a VL (htoe_reset.h)
 *   htoe.c          the public API and the glue between them (htoe.h)
 * over the leaf layers htoe_map, htoe_credit, htoe_retry, htoe_tagremap,
 * htoe_outstanding, htoe_poison and htoe_wire. Not installed.
 */
#ifndef HTOE_INTERNAL_H
#define HTOE_INTERNAL_H

#include <string.h>

#include "htmodel/ht_link.h"
#include "htoe/htoe.h"
#include "htoe/htoe_credit.h"
#include "htoe/htoe_retry.h"
#include "htoe/htoe_outstanding.h"
#include "htoe/htoe_poison.h"
#include "htoe/htoe_tagremap.h"

/* One HT packet queued on a VL, waiting to be framed or framed and not yet
 * acknowledged (it is the retransmission copy). */
struct htoe_slot {
	uint64_t enq_ns;     /* when it was queued (flush bound) */
	uint32_t stamp;      /* NP/R: posted packets queued on this VL before it */
	uint8_t  len;
	uint8_t  has_data;
	uint8_t  passpw;
	uint8_t  vc;
	uint8_t  bytes[HT_MAX_PKT_LEN];
};

/* Per-VL per-VC ring: [head, framed) framed and unacknowledged,
 * [framed, tail) waiting. Indices run freely; mask is size-1. */
struct htoe_vcq {
	struct htoe_slot *s;
	uint32_t mask;
	uint32_t head, framed, tail;
};

static inline uint32_t vcq_len(const struct htoe_vcq *q) { return q->tail - q->head; }
static inline uint32_t vcq_waiting(const struct htoe_vcq *q) { return q->tail - q->framed; }
static inline uint32_t vcq_room(const struct htoe_vcq *q) { return q->mask + 1 - vcq_len(q); }
static inline struct htoe_slot *vcq_at(const struct htoe_vcq *q, uint32_t i) { return &q->s[i & q->mask]; }

/* What a sent DATA frame carried, by sequence number (for retransmission). */
struct htoe_fdesc {
	uint32_t first;      /* index of its first slot in q[vc] */
	uint16_t payload_len;
	uint8_t  vc;
	uint8_t  npkts;
};

enum htoe_vl_state { HTOE_VL_RESETTING = 0, HTOE_VL_UP = 1 };

/* A control message queued for sending, or received. */
struct htoe_ctrl_msg {
	uint16_t node;
	uint16_t len;
	uint8_t  data[HTOE_CTRL_MAX];
};

struct htoe_ctrlq {
	struct htoe_ctrl_msg m[HTOE_CTRL_QUEUE];
	uint32_t head, tail;
};

struct htoe_vl {
	uint16_t node;
	uint8_t  mac[6];
	uint8_t  pcp;
	struct htoe_hdr_tmpl tmpl;  /* the start of every frame to this peer (set-up) */
	uint8_t  state;          /* enum htoe_vl_state */
	uint8_t  epoch;          /* current epoch (UP) or proposed (RESETTING) */
	uint8_t  reset_cold;     /* our pending RESET is cold */
	uint64_t nonce;          /* nonce of our pending/last RESET (0: none yet) */
	uint64_t peer_nonce;     /* nonce of the last RESET we received */
	uint64_t reset_next_ns;  /* when to (re)send our RESET */
	uint64_t reset_rto_ns;
	bool     ack_reset;      /* a RESET_ACK is owed */
	uint8_t  ack_epoch, ack_cold;
	uint64_t ack_nonce;
	/* the peer's incarnation, and the ones it had before (their late
	 * frames must not bring them back) */
	bool     peer_inc_known;
	bool     restart_pending; /* up_ns not yet recorded after a new incarnation */
	uint32_t peer_inc;
	uint32_t peer_inc_old[4];
	uint8_t  peer_inc_old_n;
	uint64_t claim_ns;       /* a new incarnation claimed it: our cold reset began */
	bool     ack_sack;       /* the RESET_ACK owed offers selective retry */
	bool     peer_left;      /* a LEAVE came, and no DATA or RESET since */

	struct htoe_vcq q[HT_VC_COUNT];
	uint32_t p_enq, p_framed;    /* posted packets queued / framed (ordering) */
	bool     posted_dirty;       /* posted writes queued since the last Flush */

	struct htoe_fdesc *fd;       /* by seq & fd_mask */
	uint32_t fd_mask;
	struct htoe_retry rt;
	struct htoe_retry_sb *sb;    /* selective retry: scoreboard (NULL: GBN only) */
	struct htoe_rob rob;         /* selective retry: packets of held frames */
	struct htoe_credit_tx ctx;
	struct htoe_credit_rx crx;
	/* The ack and credit limits of the peer's last DATA frame, held back
	 * until the frame they would delay has left (htoe_frame_input): applied
	 * by htoe_encap_ack_settle before anything they can change is decided. */
	bool     ack_wait;
	uint64_t ack_wait_ns;        /* when that frame arrived */
	struct htoe_hdr ack_hdr;
	/* The last new DATA frame's retry bookkeeping (htoe_retry_tx_sent),
	 * held back until the frame has left: done by htoe_encap_sent_settle
	 * before anything else reaches v->rt. */
	bool     sent_wait;
	uint16_t sent_seq;
	uint64_t sent_ns;            /* when that frame was framed */
	bool     credit_dirty;       /* our grant changed since the peer last heard it */
	bool     regrant_due;        /* buffers released since the last regrant: grant
	                              * them again before the next frame (once per
	                              * frame, not once per packet) */
	uint64_t stall_since;        /* local input refused since (0: not stalled) */
	uint64_t probe_next_ns;      /* credit-starved: next CREDIT_REQ probe */

	struct htoe_ctrlq ctrl_tx;

	uint64_t *active;            /* the bridge's set of VLs with work (htoe.active) */
	uint64_t active_bit;         /* this VL's bit in it */
	uint64_t *touched;           /* VLs changed since the last check (htoe.touched) */

	struct htoe_vl_stats st;
};

/* Something happened to VL v (input for it, a frame from its peer, a
 * buffer released, a reset): it may have work, visit it in the next polls.
 * A VL leaves the set only when it has nothing to send and no deadline
 * (htoe_encap_output), so an idle VL costs nothing per poll. */
static inline void htoe_vl_wake(struct htoe_vl *v)
{
	*v->active |= v->active_bit;
	*v->touched |= v->active_bit;
}

/* VL v has nothing to send at now (htoe_encap_output): it leaves the active
 * set, parked until its next timer if it has one and may_park (framed with
 * HTOE_TX_FLUSH; htoe.c). */
void htoe_vl_idle(struct htoe *b, struct htoe_vl *v, uint64_t now, bool may_park);

/* An HT packet on its way to the local HT side. */
struct htoe_lent {
	uint32_t stamp;          /* NP/R: posted entries queued before it */
	uint16_t vl;             /* VL it came from (HTOE_NO_VL: generated locally) */
	uint8_t  epoch;          /* that VL's epoch when it arrived */
	uint8_t  pooled;         /* holds a receive-pool buffer */
	uint8_t  has_data;
	uint8_t  passpw;
	uint8_t  len;
	uint8_t  bytes[HT_MAX_PKT_LEN];
};

/* [hold, head) taken by the local side but lent out (htoe_local_output_burst:
 * the caller reads them in place until htoe_local_output_done), [head, tail)
 * queued. A lent slot is not reused. */
struct htoe_lq {
	struct htoe_lent *e;
	uint32_t mask, hold, head, tail;
};

#define HTOE_NO_VL 0xFFFFu
#define HTOE_FLUSH_MAX 32u   /* local Flushes fanned out to several VLs at once */
/* A Flush forwarded to VL i waits on its own (UnitID, SrcTag): a node with
 * more than 32 peers needs a second UnitID for them (32 SrcTags each). */
#define HTOE_FLUSH_SUBS 64u
static inline unsigned htoe_flush_units(unsigned n_vl) { return n_vl > 32 ? 2u : 1u; }

/* A local Flush forwarded to several VLs: answered when all have answered. */
struct htoe_flush {
	uint8_t used;
	uint8_t unitid, srctag;  /* the local requester's Flush */
	uint8_t remaining;
	uint8_t err;             /* worst enum ht_rsp_err seen */
};

struct htoe {
	struct htoe_config cfg;
	const struct htoe_map *map;
	unsigned map_hint;           /* range of the last local request (htoe_map_lookup_hint) */
	uint8_t  vl_of_node[65536];  /* node id -> VL index + 1 (0: none) */
	unsigned n_vl;
	struct htoe_vl *vl;
	unsigned rr;                 /* round-robin start for framing */
	uint64_t active;             /* VLs that may have work: bit i = vl[i]
	                              * (n_vl <= HTOE_MAX_PEERS = 64) */
	uint64_t touched;            /* VLs that may have changed since the last
	                              * htoe_check_invariants_changed(): woken,
	                              * framed for, or a timer fired */
	uint64_t parked;             /* VLs out of the active set whose next work
	                              * is a timer at park_at[i] (htoe_vl_idle);
	                              * a woken VL may keep its bit (it is active) */
	uint64_t parked_min;         /* <= every parked VL's park_at (UINT64_MAX: none) */
	uint64_t ctl_due;            /* VLs that may have a frame for a pass with
	                              * HTOE_TX_CTRL_ONLY (the reset handshake, a
	                              * control message): set with the work, cleared
	                              * when a visit finds none */
	uint64_t park_at[HTOE_MAX_PEERS];

	struct htoe_rxpool pool;
	struct htoe_tagremap tags;        /* pending-request table (remote -> local tags) */
	struct htoe_outstanding out;      /* local NP requests sent to remote nodes */

	struct htoe_lq lq[HT_VC_COUNT];   /* towards the local HT side */
	uint32_t lq_p_enq, lq_p_out;
	bool     lq_lent;                 /* a burst is lent out (htoe_local_output_burst) */
	struct htoe_local_sink sink;      /* local side served from the frame (or zeroed) */
	htoe_loss_fn loss_fn;             /* what a reset/restart lost (or NULL) */
	void    *loss_ctx;

	struct htoe_flush flush[HTOE_FLUSH_MAX];
	/* a forwarded Flush's (UnitID - flush_unitid) * 32 + SrcTag -> flush[] (-1 free) */
	int8_t   flush_sub[HTOE_FLUSH_SUBS];
	uint8_t  flush_unitid;            /* first UnitID of forwarded Flushes */
	uint8_t  flush_subs;              /* sub-tags in use: 32 x htoe_flush_units() */

	struct htoe_ctrlq ctrl_rx;
	uint64_t nonce_ctr;               /* input of the nonce PRF, never repeats */

	/* access table of remote requests (htoe_acl_*; acl_size 0: off) */
	uint64_t acl_base, acl_size;
	unsigned acl_n;
	struct htoe_acl_entry {
		uint16_t node;
		uint8_t  flags;
		uint64_t base, size;
	} acl[HTOE_ACL_MAX];

	/* the HT packets of the DATA frame being received, parsed once by
	 * htoe_frame_parse_desc (htoe_frame_input -> htoe_decap_input) */
	struct ht_desc rx_pk[HTOE_FRAME_MAX_PKTS];

	struct htoe_stats st;
};

/* The sub-tag of a forwarded Flush's (UnitID, SrcTag), -1: not one. */
static inline int htoe_flush_sub_of(const struct htoe *b, uint8_t unitid, uint8_t srctag)
{
	unsigned sub = (unsigned)(uint8_t)(unitid - b->flush_unitid) * 32u + srctag;

	return sub < b->flush_subs ? (int)sub : -1;
}

static inline struct htoe_vl *htoe_vl_by_node(const struct htoe *b, uint16_t node)
{
	unsigned i = b->vl_of_node[node];
	return i ? &b->vl[i - 1] : NULL;
}

static inline uint16_t htoe_vl_index(const struct htoe *b, const struct htoe_vl *v)
{
	return (uint16_t)(v - b->vl);
}

#endif
