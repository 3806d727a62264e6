/* SPDX-License-Identifier: BSD-3-Clause
 * One end of a HyperTransport link: the transmitter and receiver of a device.
 *
 * Sans-I/O and deterministic: the caller hands packets in (ht_link_send,
 * ht_link_rx) and pulls encoded bytes out (ht_link_poll_tx). No allocation,
 * no clock, no global state: a struct ht_link holds everything, including the
 * transmit queues (HT_LINK_TXQ_MAX entries per VC, embedded).
 *
 * Credits (reference §11): three VCs (P, NP, R) with separate command and data
 * buffers, i.e. six buffer classes. A request or response consumes one command
 * credit of its VC, plus one data credit if it carries data. Credits come back
 * in NOPs, 0..3 per class per NOP. At init every local receive buffer counts as
 * freed-but-unreported, so the first NOPs this end sends advertise its pool.
 *
 * Ordering (reference §13), see docs/ht-endpoint-model.md:
 *  - strict FIFO within each VC;
 *  - posted requests are never held back by NP or R traffic;
 *  - an NP request or a response with PassPW=0 leaves only after every posted
 *    request queued before it on this end has left (posted epoch);
 *  - when both are eligible, R goes before NP (responses never wait behind
 *    new requests); P goes first of all.
 */
#ifndef HT_LINK_H
#define HT_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ht_packet.h"

#define HT_LINK_TXQ_MAX     64u  /* max transmit queue depth per VC */
#define HT_LINK_TXQ_DEFAULT 16u
#define HT_LINK_NCLASS      6u   /* P cmd, P data, NP cmd, NP data, R cmd, R data */
#define HT_LINK_NOP_MAX     3u   /* credits per class per NOP */

/* Buffer class index: 2*vc + (data ? 1 : 0). */
static inline unsigned ht_link_class(enum ht_vc vc, bool data)
{
	return 2u * (unsigned)vc + (data ? 1u : 0u);
}

/* True for the packets that are followed by a data packet (WrSized, Atomic,
 * RdResponse) and so need a data buffer / data credit. */
bool ht_link_pkt_has_data(const struct ht_pkt *p);

struct ht_link_cfg {
	/* this end's receive buffers, advertised to the peer: [vc][0=cmd, 1=data] */
	uint16_t rx_bufs[HT_VC_COUNT][2];
	/* per-VC transmit queue depth, 1..HT_LINK_TXQ_MAX (0 = HT_LINK_TXQ_DEFAULT) */
	uint16_t txq_depth[HT_VC_COUNT];
};

/* Fill cfg with `bufs` receive buffers in every class and default queues. */
void ht_link_cfg_default(struct ht_link_cfg *cfg, unsigned bufs);

/* Receive-side error reasons (ht_link_stats.errors[]). */
enum ht_link_err {
	HT_LINK_ERR_DECODE = 0,  /* ht_decode() failed (see decode_errors[]) */
	HT_LINK_ERR_TRAILING,    /* bytes left after the packet: rx takes one packet */
	HT_LINK_ERR_OVERRUN,     /* packet arrived with no free buffer (sender had no credit) */
	HT_LINK_ERR_RELEASE,     /* ht_link_release() with no occupied buffer in that class */
	HT_LINK_ERR__COUNT
};

struct ht_link_stats {
	uint64_t tx_pkts[HT_VC_COUNT], tx_bytes[HT_VC_COUNT];
	uint64_t rx_pkts[HT_VC_COUNT], rx_bytes[HT_VC_COUNT];
	uint64_t tx_nops, rx_nops;              /* NOP packets (4 bytes each) */
	uint64_t credits_returned[HT_LINK_NCLASS]; /* sent in our NOPs */
	uint64_t credits_received[HT_LINK_NCLASS]; /* got from the peer's NOPs */
	uint64_t credit_stalls[HT_VC_COUNT];    /* episodes: head ready but no credit */
	uint64_t order_waits[HT_VC_COUNT];      /* episodes: head waits for earlier posted */
	uint64_t txq_full[HT_VC_COUNT];         /* ht_link_send() returned -EAGAIN */
	uint64_t tx_sync, rx_sync;              /* Sync/Error packets */
	uint64_t rx_extfc;                      /* Extended Flow Control, consumed */
	uint64_t rx_isoc;                       /* Isoc=1 requests/responses (not modelled) */
	uint64_t rx_isoc_nop;                   /* NOPs with Isoc=1: credits ignored */
	uint64_t errors[HT_LINK_ERR__COUNT];
	uint64_t decode_errors[16];             /* by -enum ht_err */
	uint64_t overrun[HT_LINK_NCLASS];       /* overruns by class */
};

/* One queued packet, already encoded (validated at ht_link_send). */
struct ht_link_txe {
	uint64_t epoch;     /* posted requests queued before it (NP/R) */
	uint8_t  len;
	uint8_t  has_data;
	uint8_t  passpw;
	uint8_t  bytes[HT_MAX_PKT_LEN];
};

struct ht_link_txq {
	uint16_t head, n, depth;
	uint8_t  credit_stalled, order_waiting; /* episode flags for the stats */
	struct ht_link_txe e[HT_LINK_TXQ_MAX];
};

struct ht_link {
	struct ht_link_cfg cfg;
	struct ht_link_txq q[HT_VC_COUNT];
	/* transmit side: credits the peer granted us */
	uint32_t tx_credits[HT_LINK_NCLASS];
	/* receive side: in_use + unreported + granted == rx_bufs, per class */
	uint32_t rx_granted[HT_LINK_NCLASS];    /* reported to the peer, not yet filled */
	uint32_t rx_in_use[HT_LINK_NCLASS];     /* holding a received packet */
	uint32_t rx_unreported[HT_LINK_NCLASS]; /* freed, not yet returned in a NOP */
	uint64_t p_enq, p_txd;                  /* posted epoch: queued / transmitted */
	bool     sync_pending;                  /* ht_link_send_sync() called */
	bool     fatal;                         /* a Sync/Error packet was received */
	struct ht_link_stats st;
};

/* 0, or -EINVAL for a bad config (queue depth > HT_LINK_TXQ_MAX). */
int ht_link_init(struct ht_link *l, const struct ht_link_cfg *cfg);

/*
 * Queue a request or response for transmission. The packet is encoded (and
 * so fully validated) now; the caller's struct may be reused at once.
 * Returns 0; -EAGAIN when that VC's queue is full (backpressure, nothing
 * queued); -EINVAL for an info packet (NOP/Sync/ExtFC are generated by the
 * link itself) or a packet ht_encode() rejects.
 */
int ht_link_send(struct ht_link *l, const struct ht_pkt *p);

/*
 * Next packet to put on the wire, encoded in link order into buf[0..cap).
 * Returns its length in bytes; 0 when nothing is eligible (queues empty, no
 * credit, or ordering); -ENOSPC when cap is smaller than the packet (nothing
 * is consumed). Priority: Sync (if requested), NOP (if credits to return),
 * then the heads of P, R, NP in that order, each only if ordering and
 * credits allow.
 */
int ht_link_poll_tx(struct ht_link *l, uint8_t *buf, size_t cap);

/*
 * One received packet, buf[0..len) exactly. Returns
 *   1  request/response delivered in *out; it occupies a receive buffer
 *      until ht_link_release(l, vc, has_data);
 *   0  info packet consumed: NOP (credits applied), Sync (counted, the link
 *      is flagged fatal, see ht_link_fatal), ExtFC (counted);
 *  -EBADMSG  decode error or trailing bytes (counted by reason);
 *  -ENOBUFS  no buffer was free for it: a protocol violation by the peer,
 *            counted, the packet is dropped;
 *  -EINVAL   bad arguments.
 * *out is written in every case (decoded packet, or zeroes on decode error).
 */
int ht_link_rx(struct ht_link *l, const uint8_t *buf, size_t len, struct ht_pkt *out);

/* The consumer is done with a received packet of this VC: frees its command
 * buffer and, if has_data, its data buffer. The freed buffers are returned to
 * the peer in the next NOPs. -EINVAL (counted) if none was occupied. */
int ht_link_release(struct ht_link *l, enum ht_vc vc, bool has_data);
/* Same, from the delivered packet. */
int ht_link_release_pkt(struct ht_link *l, const struct ht_pkt *p);

/* Ask the link to emit one Sync/Error packet (sync flood) next. */
void ht_link_send_sync(struct ht_link *l);

/* Free entries in the VC's transmit queue (0 = ht_link_send would -EAGAIN). */
unsigned ht_link_txq_space(const struct ht_link *l, enum ht_vc vc);
unsigned ht_link_txq_len(const struct ht_link *l, enum ht_vc vc);
/* Credits the peer has granted us for a class. */
uint32_t ht_link_tx_credits(const struct ht_link *l, enum ht_vc vc, bool data);
/* Freed receive buffers not yet returned to the peer. */
uint32_t ht_link_rx_unreported(const struct ht_link *l, enum ht_vc vc, bool data);
uint32_t ht_link_rx_in_use(const struct ht_link *l, enum ht_vc vc, bool data);
/* True if poll_tx could have something to send now or later: queued packets,
 * credits to return, or a pending Sync. */
bool ht_link_tx_pending(const struct ht_link *l);
/* True once a Sync/Error packet was received. */
bool ht_link_fatal(const struct ht_link *l);
const struct ht_link_stats *ht_link_stats(const struct ht_link *l);

#endif
