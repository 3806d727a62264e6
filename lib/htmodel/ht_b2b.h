/* SPDX-License-Identifier: BSD-3-Clause
 * Two HT endpoints connected back to back, for the demo, the tests and the
 * simulator: node A = requester + link end A, node B = memory target + link
 * end B. ht_b2b_step() moves encoded packets between the two link ends,
 * one per direction per step, checking the HT3 per-packet CRC of each
 * (sender computes it, receiver checks it; a bad or stomped packet is
 * counted and dropped: retry is not modelled here).
 *
 * Node B keeps the requests it received in arrival order and serves the head
 * as soon as the response it needs fits in B's R queue; each request keeps
 * its receive buffer until served, so credits back-pressure node A.
 *
 * Sans-I/O and deterministic: a 64-bit FNV-1a hash of every byte moved (with
 * its direction and CRC) identifies the run.
 */
#ifndef HT_B2B_H
#define HT_B2B_H

#include <stdbool.h>
#include <stdint.h>

#include "ht_link.h"
#include "ht_requester.h"
#include "ht_target.h"

#define HT_B2B_RXQ 256u /* node B's received-request FIFO (>= its NP+P cmd buffers) */
#define HT_B2B_MAX_LATENCY 64u

struct ht_b2b_cfg {
	struct ht_link_cfg link_a, link_b;
	struct ht_req_cfg req;
	struct ht_target_cfg tgt;
	/* steps a packet spends on the wire (0: delivered in the step it is
	 * sent). With latency L a credit needs about 2L steps to come back, so
	 * fewer than ~2L credits per class throttle the link. */
	unsigned latency;
};

/* A packet on the wire. */
struct ht_b2b_wire {
	uint64_t due;     /* step at which it arrives */
	uint32_t crc;     /* the HT3 CRC sent after it (~crc register) */
	uint8_t  len;
	uint8_t  bytes[HT_MAX_PKT_LEN];
};

struct ht_b2b_stats {
	uint64_t pkts[2], bytes[2];  /* [0] A->B, [1] B->A */
	uint64_t crc_bad, crc_stomped;
	uint64_t link_errors;        /* ht_link_rx() < 0 */
	uint64_t unexpected;         /* response the requester rejected */
	uint64_t steps, idle_steps;
};

struct ht_b2b {
	struct ht_link a, b;
	struct ht_requester req;
	struct ht_target tgt;
	uint64_t hash;
	/* test hooks: corrupt (flip a bit of) the next N packets in a direction */
	unsigned corrupt[2];
	unsigned latency;
	uint16_t wire_head[2], wire_n[2];
	struct ht_b2b_wire wire[2][HT_B2B_MAX_LATENCY + 1];
	uint16_t rxq_head, rxq_n;
	struct ht_pkt rxq[HT_B2B_RXQ];
	struct ht_b2b_stats st;
};

/* 0 or -EINVAL (from the component inits, or too many B receive buffers). */
int ht_b2b_init(struct ht_b2b *s, const struct ht_b2b_cfg *cfg);

/* Fill cfg: every class `credits` buffers on both ends, one UnitID (1), the
 * target region [base, base+size) in mem. */
void ht_b2b_cfg_default(struct ht_b2b_cfg *cfg, unsigned credits, uint64_t base, uint64_t size,
			uint8_t *mem);

/* Issue op from node A: 0, -EAGAIN (no tag, or A's queue for its VC is
 * full: retry after stepping), -EINVAL (op does not fit one packet). */
int ht_b2b_submit(struct ht_b2b *s, const struct ht_op *op);

/* One step: each link end puts at most one packet on its wire, at most one
 * packet arrives per direction (after `latency` steps), node B serves its
 * received requests. Returns 1 with *out filled when a completion arrived at
 * node A, 0 otherwise. */
int ht_b2b_step(struct ht_b2b *s, struct ht_completion *out);

/* Anything left to move or serve (queued packets, credits to return,
 * packets on the wire, requests at B). Outstanding tags are not included:
 * see ht_req_outstanding(). */
bool ht_b2b_busy(const struct ht_b2b *s);

#endif
