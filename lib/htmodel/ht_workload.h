/* SPDX-License-Identifier: BSD-3-Clause
 * Seeded HT workload generator with a shadow copy of memory.
 *
 * Produces struct ht_op (reads, posted and non-posted writes, fetch-add,
 * compare-swap, flush, fence) inside a window [base, base+size), and checks
 * every completion against the shadow. Independent of the link: it produces
 * ops and consumes completions, so it can drive a local target or, later,
 * remote memory through the HToE bridge.
 *
 * Correct under out-of-order completion:
 *  - no op is issued on a 64-byte block that has a non-posted op in flight
 *    (every generated op stays inside one 64-byte block);
 *  - posted writes update the shadow at issue: HT ordering (NP/R with
 *    PassPW=0 do not pass earlier posted writes) makes later reads see them;
 *  - NP writes and atomics update the shadow at completion (their block is
 *    reserved meanwhile), and only when the completion status is ok.
 *
 * Issue protocol (deterministic whatever the backpressure):
 *   ht_wl_peek(w, &op)   -> 1: op is the next op (the same op until committed)
 *   ... try to issue it (requester + link) ...
 *   ht_wl_commit(w)      -> only if it was issued
 *   ht_wl_complete(w, &completion, &result) for every completion
 *
 * Optional final read-back sweep: after the random ops, 64-byte reads of the
 * whole window verify the posted writes too.
 */
#ifndef HT_WORKLOAD_H
#define HT_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ht_rand.h"
#include "ht_requester.h"

#define HT_WL_MAX_INFLIGHT 256u

struct ht_wl_cfg {
	uint64_t seed;
	uint64_t base;        /* window start, 64-byte aligned */
	uint64_t size;        /* window bytes, multiple of 64, > 0 */
	uint64_t n_ops;       /* random ops to generate (sweep reads come on top) */
	uint8_t *shadow;      /* size bytes, caller-initialised to the target's content */
	uint8_t *busy;        /* size/64 bytes of scratch (block reservation counts) */
	uint64_t *taint;      /* size/64 words of scratch: the bytes of each block
	                       * whose value is unknown (one bit per byte) */
	unsigned weight[HT_OP__COUNT]; /* mix; all zero = defaults */
	unsigned byte_pct;    /* % of reads/writes using the byte forms, 0..100 */
	unsigned max_inflight;/* 1..HT_WL_MAX_INFLIGHT non-posted ops in flight (0 = max) */
	bool     sweep;       /* read back the whole window at the end */
	uint32_t fixed_len;   /* 0: random sizes; else every read and write moves
	                       * this many bytes (dword form, 4..64, multiple of 4)
	                       * at the start of its block (benchmarks) */
};

/* Defaults: mix rd 35, wrp 25, wrn 10, fadd 10, cas 10, flush 5, fence 5;
 * byte_pct 30; max_inflight HT_WL_MAX_INFLIGHT; sweep on. The caller then
 * sets seed, base, size, n_ops, shadow, busy and taint. */
void ht_wl_cfg_default(struct ht_wl_cfg *cfg);

struct ht_wl_stats {
	uint64_t issued[HT_OP__COUNT];
	uint64_t issued_total;
	uint64_t sweep_issued;    /* read-back reads (also counted in issued[rd]) */
	uint64_t completed;       /* completions consumed (non-posted ops) */
	uint64_t verified;        /* completions whose data/status matched the shadow */
	uint64_t mismatches;      /* read data or atomic old value differed */
	uint64_t errors;          /* completion status not ok */
	uint64_t unexpected;      /* completion with an unknown cookie */
	uint64_t cas_swapped;
	uint64_t blocked;         /* peek found the op's block reserved */
	uint64_t lost_reset;      /* posted writes reported lost to a reset (ht_wl_taint) */
	uint64_t lost_restart;    /* ranges reported lost to a restart of their node */
	uint64_t lost_bytes;      /* bytes of the window those reports tainted */
	uint64_t tainted_reads;   /* completions that read tainted bytes: accepted,
	                           * and the shadow seeded from them */
	uint64_t poisoned_lost;   /* error completions (poisoned, timed out) of ops on
	                           * bytes reported lost: counted here, not as errors */
};

/* Result of one completion (for printing). */
struct ht_wl_result {
	uint64_t seq;        /* op number, from 0 in issue order */
	uint64_t addr;
	uint32_t len;
	uint8_t  type;       /* enum ht_op_type */
	uint8_t  status;     /* enum ht_rsp_err */
	bool     verified;
	bool     sweep;
	bool     cas_swapped;
	uint64_t issued_at;  /* `now` given to ht_wl_commit_at() (0: ht_wl_commit) */
};

struct ht_wl_slot {
	uint64_t seq;
	uint64_t addr;
	uint64_t operand[2];
	uint32_t len;
	uint8_t  type;
	uint8_t  used;
	uint8_t  sweep;
	uint8_t  lost;       /* its bytes were reported lost while in flight */
	uint64_t issued_at;
	uint8_t  data[HT_MAX_DATA]; /* NP write data */
};

/* Error completions not (yet) explained by a reported loss: a reset poisons
 * the requests in flight before the restart it came from is proved. */
#define HT_WL_ERR_KEEP 512u
struct ht_wl_err {
	uint64_t addr, len;
};

struct ht_workload {
	struct ht_wl_cfg cfg;
	struct ht_rand rng;
	uint64_t wsum;           /* sum of cfg.weight (set up once for the draws) */
	int      only_type;      /* the one op type with a weight, else -1 (no draw) */
	bool     gen_np;         /* every op it generates is non-posted, drawn from the
	                          * generator alone (no posted write, Fence or CAS, whose
	                          * compare value is read from the shadow) */
	uint64_t generated;      /* random ops generated (incl. the pending one) */
	uint64_t sweep_next;     /* next sweep block */
	uint64_t seq;            /* ops committed */
	bool     have_pending;
	bool     pending_sweep;
	struct ht_op pending;
	unsigned inflight;
	uint16_t free_top;
	uint16_t free_list[HT_WL_MAX_INFLIGHT];
	struct ht_wl_slot slot[HT_WL_MAX_INFLIGHT];
	unsigned n_err;          /* unexplained errors kept (beyond: errors for good) */
	struct ht_wl_err err[HT_WL_ERR_KEEP];
	struct ht_wl_stats st;
};

/* 0, or -EINVAL for a bad config. */
int ht_wl_init(struct ht_workload *w, const struct ht_wl_cfg *cfg);

/* Fill buf with a deterministic pattern from seed (use it for both the
 * target memory and the shadow). */
void ht_wl_fill(uint64_t seed, uint8_t *buf, size_t len);

/*
 * The next op to issue, in *op (its cookie identifies it to ht_wl_complete).
 * Returns 1 (the same op until ht_wl_commit), 0 when it cannot be issued now
 * (its block or the in-flight table is busy: deliver completions first), or
 * -ENODATA when every op has been generated and committed.
 */
int ht_wl_peek(struct ht_workload *w, struct ht_op *op);

/* ht_wl_peek() without the copy: *op points at the workload's pending op
 * (valid until the next ht_wl_peek_ref/ht_wl_peek/ht_wl_commit call). The
 * driver issues it straight from there (ht_req_issue_enc). */
int ht_wl_peek_ref(struct ht_workload *w, const struct ht_op **op);

/* ht_wl_peek_ref would change nothing and return 0 or -ENODATA: the
 * pending op is non-posted and max_inflight ops are in flight, or no op is
 * pending and none is left to draw. A driver's idle poll tests this
 * instead of calling it. */
static inline bool ht_wl_waiting(const struct ht_workload *w)
{
	if (w->have_pending)
		return w->inflight >= w->cfg.max_inflight &&
		       ht_op_nonposted((enum ht_op_type)w->pending.type);
	return w->generated >= w->cfg.n_ops &&
	       (!w->cfg.sweep || w->sweep_next >= w->cfg.size / 64);
}

/* No op can be issued before a completion: max_inflight ops are in flight
 * and the next op, drawn or not, is non-posted. The draw of an op not drawn
 * yet can wait: a driver may leave it to a later (idle) poll, the op is the
 * same (gen_np). */
static inline bool ht_wl_full(const struct ht_workload *w)
{
	return w->inflight >= w->cfg.max_inflight &&
	       (w->have_pending ? ht_op_nonposted((enum ht_op_type)w->pending.type) : w->gen_np);
}

/* The op from the last successful ht_wl_peek was issued. Returns its seq. */
uint64_t ht_wl_commit(struct ht_workload *w);
/* The same, remembering the driver's time of issue `now` for the op's
 * completion (ht_wl_result.issued_at): latency measurements. */
uint64_t ht_wl_commit_at(struct ht_workload *w, uint64_t now);

/*
 * Consume a completion: verify it against the shadow and release its block.
 * Returns 0 verified, 1 mismatch or error status (counted), -ENOENT for an
 * unknown cookie. *res (optional) describes the op.
 */
int ht_wl_complete(struct ht_workload *w, const struct ht_completion *c, struct ht_wl_result *res);

/*
 * [addr, addr+len) was reported lost (a posted write dropped by a reset, or
 * the memory of a node that restarted): its value is unknown. Every 64-byte
 * block of the window it touches is tainted: a later read or atomic there
 * accepts the value it finds and seeds the shadow from it; a write, or a read
 * of the whole block, owns the block again. Reads of tainted bytes are counted
 * (tainted_reads), never as mismatches; bytes not reported lost are verified
 * as before. Returns 1 if it overlapped the window (and was counted as
 * lost_restart or lost_reset), else 0.
 */
int ht_wl_taint(struct ht_workload *w, uint64_t addr, uint64_t len, bool restart);
/* The whole window is not owned yet (its memory may hold what an earlier
 * life of this node wrote): every block is tainted as above, not counted as
 * a loss. Each block is verified from its first write or whole-block read on. */
void ht_wl_unown(struct ht_workload *w);

/* Generate no more ops, not even the read-back sweep (the target is gone for
 * good); the ops in flight still complete. */
void ht_wl_stop(struct ht_workload *w);

/* Every op generated, committed and completed. */
bool ht_wl_done(const struct ht_workload *w);
/* The 64-byte block at window offset off holds bytes reported lost, or
 * never owned since ht_wl_unown, and not owned again: some of its value is
 * unknown (its CRC cannot be compared). */
bool ht_wl_tainted(const struct ht_workload *w, uint64_t off);
/* Bytes where mem (size bytes, the window) differs from the shadow, in the
 * blocks not tainted (a tainted block holds any value). */
uint64_t ht_wl_check_image(const struct ht_workload *w, const uint8_t *mem);
const struct ht_wl_stats *ht_wl_stats(const struct ht_workload *w);

#endif
