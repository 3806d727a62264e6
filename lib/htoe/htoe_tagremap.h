/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_tagremap: the bridge's two tag tables, and poisoned responses.
 * Sans-I/O: fixed-size tables inside the structs, no allocation, no clock.
 *
 * (a) Pending-request table, struct htoe_tagremap (target side, HToE paper
 *     §4.3). A non-posted request that arrives from a remote node on VL v
 *     with (UnitID u, SrcTag t) cannot be issued on the local HT link with
 *     its own tags: requests from different nodes may carry the same pair.
 *     The bridge ALWAYS remaps: it takes a free local (UnitID, SrcTag) from
 *     its own tag space, n_unitids x 32 tags starting at UnitID unitid_base
 *     (n_unitids > 1 is UnitID clumping: more tags), stores the original
 *     tags and what is needed to answer, and issues the request with the
 *     local tags. The local response is looked up by its (UnitID, SrcTag),
 *     the entry is freed and the original tags restored.
 *     Free tags are handed out FIFO (least recently freed first), so a tag
 *     is reused as late as possible: deterministic, O(1) alloc and free.
 *     A full table is backpressure (-EAGAIN): the caller keeps the request
 *     queued and offers it again; it never drops it.
 *     VL reset: the local HT target still owes a response for every local
 *     tag in use, and an HT tag must not be reused before its response has
 *     arrived. htoe_tagremap_drop_vl() therefore marks the entries of the VL
 *     as orphaned instead of freeing them; the local response later frees
 *     the tag and is reported as -ESTALE (the caller discards it).
 *
 * (b) Outstanding table, struct htoe_outstanding (requester side). Every
 *     non-posted request the local requester sends to a remote node is
 *     recorded by its own (UnitID, SrcTag), 32 x 32 entries, with a deadline
 *     now + np_timeout. The remote response removes it. If no response comes
 *     (timeout), or the VL is reset, the bridge answers the local requester
 *     itself with an error response (htoe_poison_response), so that no
 *     request waits forever. Deadlines are kept in a binary min-heap
 *     (ties: the earlier added first): add/complete O(log n), next deadline
 *     O(1), expiry O(log n) per expired entry.
 *
 * Errors are negative errno values.
 */
#ifndef HTOE_TAGREMAP_H
#define HTOE_TAGREMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_packet.h"

#define HTOE_TAG_UNITIDS   32u                 /* UnitIDs in HT (5 bits) */
#define HTOE_TAG_SRCTAGS   32u                 /* SrcTags per UnitID */
#define HTOE_TAG_MAX       (HTOE_TAG_UNITIDS * HTOE_TAG_SRCTAGS) /* 1024 */
#define HTOE_TAG_NEVER     UINT64_MAX

/* ---- what is needed to answer a non-posted request ---------------------- */

struct htoe_np_info {
	uint8_t kind;        /* enum ht_kind of the request: HT_K_RDSIZED,
	                      * HT_K_ATOMIC, HT_K_WRSIZED (non-posted), HT_K_FLUSH */
	uint8_t rsp_count;   /* Count field of the response: RdResponse data
	                      * dwords - 1; 0 for TgtDone */
	uint8_t rsp_passpw;  /* PassPW of the response */
};

/*
 * Derive the response parameters from a non-posted request:
 *   RdSized dword: RdResponse, Count = the request's Count
 *   RdSized byte:  RdResponse, Count = 0 (one dword)
 *   Atomic:        RdResponse, Count = 1 (the old qword)
 *   WrSized NP, Flush: TgtDone, Count = 0
 * rsp_passpw = the request's ResponsePassPW for RdSized, 0 otherwise (a
 * response with PassPW=0 never passes posted writes: always allowed).
 * Returns 0, or -EINVAL if req is not a non-posted request.
 */
int htoe_np_info_from_req(const struct ht_pkt *req, struct htoe_np_info *np);

/* The response kind for np->kind: HT_K_RDRESPONSE or HT_K_TGTDONE. */
enum ht_kind htoe_np_rsp_kind(const struct htoe_np_info *np);

/* ---- (a) pending-request table ------------------------------------------ */

struct htoe_pending_entry {
	uint8_t  orig_unitid;   /* the remote requester's UnitID */
	uint8_t  orig_srctag;   /* the remote requester's SrcTag */
	uint8_t  local_unitid;  /* the local tag (set by the table) */
	uint8_t  local_srctag;
	uint16_t vl;            /* VL the request came from */
	uint8_t  epoch;         /* that VL's epoch when it came */
	uint8_t  orphaned;      /* set by htoe_tagremap_drop_vl() */
	struct htoe_np_info np; /* to build the (error) response */
	uint64_t deadline;      /* caller-defined; stored, not interpreted */
};

struct htoe_tagremap_stats {
	uint64_t allocs;
	uint64_t completes;     /* responses matched to a live entry */
	uint64_t full;          /* -EAGAIN returns (table full) */
	uint64_t unknown;       /* -ENOENT completions */
	uint64_t orphaned;      /* entries orphaned by drop_vl */
	uint64_t stale;         /* -ESTALE completions (orphans freed) */
};

/* private: use the functions */
struct htoe_tagremap {
	uint8_t  unitid_base;
	uint8_t  n_unitids;
	uint16_t size;                 /* n_unitids * 32 */
	uint16_t free_head, free_tail; /* FIFO free list through next[] */
	uint16_t in_use;               /* live + orphaned */
	uint16_t orphans;
	uint16_t hwm;                  /* high-water mark of in_use */
	uint16_t next[HTOE_TAG_MAX];
	uint8_t  used[HTOE_TAG_MAX];   /* 0 free, 1 in use */
	struct htoe_pending_entry e[HTOE_TAG_MAX];
	struct htoe_tagremap_stats stats;
};

/*
 * Local tag space: UnitIDs unitid_base .. unitid_base + n_unitids - 1, 32
 * SrcTags each. Requires n_unitids >= 1 and unitid_base + n_unitids <= 32
 * (UnitID 0 is the host bridge: a device bridge normally uses base >= 1).
 * Every tag starts free; the first allocations return (base, 0), (base, 1),
 * ..., (base, 31), (base + 1, 0), ... Returns 0 or -EINVAL.
 */
int htoe_tagremap_init(struct htoe_tagremap *t, uint8_t unitid_base, uint8_t n_unitids);

/*
 * Allocate a local tag for the remote request described by *in (copied;
 * local_unitid/local_srctag/orphaned are set by the table). Returns 0 with
 * the local tag in *unitid, *srctag (either may be NULL); -EAGAIN if every
 * tag is in use (counted in stats.full; keep the request queued and offer it
 * again after a response frees a tag).
 */
int htoe_tagremap_alloc(struct htoe_tagremap *t, const struct htoe_pending_entry *in,
			uint8_t *unitid, uint8_t *srctag);

/*
 * The entry of local tag (unitid, srctag), without freeing it: NULL if the
 * tag is free or outside the tag space. An orphaned entry (e->orphaned, see
 * htoe_tagremap_drop_vl) is returned too: its response must be discarded,
 * and htoe_tagremap_complete() must still be called to free the tag. The
 * pointer is valid until the tag is completed.
 */
const struct htoe_pending_entry *htoe_tagremap_peek(const struct htoe_tagremap *t,
						    uint8_t unitid, uint8_t srctag);

/*
 * The local response for local tag (unitid, srctag) arrived: frees the tag
 * and copies the entry to *out (if out != NULL). Returns
 *   0        live entry: forward the response with out->orig_unitid/srctag
 *            on VL out->vl (if its epoch still equals out->epoch);
 *   -ESTALE  the entry was orphaned by htoe_tagremap_drop_vl(): the tag is
 *            free again; discard the response;
 *   -ENOENT  no such tag in use (outside the tag space, or free): counted
 *            in stats.unknown; discard the response.
 */
int htoe_tagremap_complete(struct htoe_tagremap *t, uint8_t unitid, uint8_t srctag,
			   struct htoe_pending_entry *out);

typedef void (*htoe_tagremap_cb)(void *ctx, uint8_t unitid, uint8_t srctag,
				 const struct htoe_pending_entry *e);

/*
 * VL reset: every live entry of VL vl becomes orphaned (its tag stays in use
 * until the local response frees it, see the top of this file). cb (may be
 * NULL) is called for each, in local-tag order, with the local tag and the
 * entry; it must not call into this table. Returns the number orphaned.
 * (A caller that instead compares each entry's epoch with its VL's current
 * epoch when the response comes does not need this; both are safe because
 * the tag is only freed by the local response.)
 */
unsigned htoe_tagremap_drop_vl(struct htoe_tagremap *t, uint16_t vl,
			       htoe_tagremap_cb cb, void *ctx);

/* Tags in use (live + orphaned), orphaned only, capacity, high-water mark. */
unsigned htoe_tagremap_in_use(const struct htoe_tagremap *t);
unsigned htoe_tagremap_orphans(const struct htoe_tagremap *t);
unsigned htoe_tagremap_capacity(const struct htoe_tagremap *t);
unsigned htoe_tagremap_hwm(const struct htoe_tagremap *t);

/* ---- (b) outstanding table ---------------------------------------------- */

struct htoe_outstanding_entry {
	uint8_t  unitid;        /* the local requester's UnitID (key, < 32) */
	uint8_t  srctag;        /* the local requester's SrcTag (key, < 32) */
	uint16_t vl;            /* VL the request was sent on */
	uint8_t  epoch;         /* that VL's epoch when it was sent */
	struct htoe_np_info np; /* kind, response Count, response PassPW */
	uint64_t deadline;      /* now + np_timeout_ns when added */
};

struct htoe_outstanding_stats {
	uint64_t added;
	uint64_t completed;     /* complete() and remove() successes */
	uint64_t expired;
	uint64_t dropped;       /* by drop_vl */
	uint64_t unknown;       /* -ENOENT from complete()/remove(): late
	                         * (after a timeout or reset), never requested,
	                         * or wrong VL */
	uint64_t wrong_vl;      /* of which: the tag is outstanding on another VL */
	uint64_t dup_add;       /* -EEXIST adds (requester reused a live tag) */
};

/* private: use the functions */
struct htoe_outstanding {
	uint64_t np_timeout_ns;
	uint64_t add_seq;                     /* insertion counter (tie-break) */
	uint16_t n;                           /* entries in use (heap size) */
	uint16_t hwm;
	uint32_t busy[HTOE_TAG_UNITIDS];      /* per UnitID: bit srctag in use */
	uint16_t heap[HTOE_TAG_MAX];          /* entry indices, min-heap */
	int16_t  pos[HTOE_TAG_MAX];           /* heap position, -1 = free */
	uint64_t order[HTOE_TAG_MAX];         /* add_seq of the entry */
	struct htoe_outstanding_entry e[HTOE_TAG_MAX]; /* index unitid*32+srctag */
	struct htoe_outstanding_stats stats;
};

/* Empty table; every request times out np_timeout_ns after it is added
 * (> 0). Returns 0 or -EINVAL. */
int htoe_outstanding_init(struct htoe_outstanding *t, uint64_t np_timeout_ns);

/*
 * Record a non-posted request sent on VL vl (epoch) by the local requester
 * with (unitid, srctag) (both < 32). deadline = now + np_timeout_ns.
 * Returns 0, -EEXIST if that tag is already outstanding (counted; nothing
 * changes), -EINVAL for an out-of-range tag or a NULL np.
 */
int htoe_outstanding_add(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			 uint16_t vl, uint8_t epoch, const struct htoe_np_info *np,
			 uint64_t now);

/*
 * A response for (unitid, srctag) arrived from VL vl: removes the entry and
 * copies it to *out (if out != NULL). Returns 0, or -ENOENT (counted) if the
 * tag is not outstanding, or is outstanding on another VL (then the entry is
 * kept: the right response may still come). The caller drops a -ENOENT
 * response (a late response after a timeout or a reset).
 */
int htoe_outstanding_complete(struct htoe_outstanding *t, uint16_t vl, uint8_t unitid,
			      uint8_t srctag, struct htoe_outstanding_entry *out);

/* Remove (unitid, srctag) whatever its VL (e.g. to undo an add whose
 * request could not be queued), copying it to *out if out != NULL.
 * Returns 0 or -ENOENT (counted as unknown). */
int htoe_outstanding_remove(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			    struct htoe_outstanding_entry *out);

/* The entry of an outstanding tag, or NULL. Valid until it is removed. */
const struct htoe_outstanding_entry *htoe_outstanding_find(const struct htoe_outstanding *t,
							   uint8_t unitid, uint8_t srctag);

/* Is (unitid, srctag) outstanding?  Free SrcTags of a UnitID (0..32; 0 for
 * unitid >= 32). Both O(1). */
bool htoe_outstanding_busy(const struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag);
unsigned htoe_outstanding_free_tags(const struct htoe_outstanding *t, uint8_t unitid);

typedef void (*htoe_outstanding_cb)(void *ctx, const struct htoe_outstanding_entry *e);

/*
 * Remove every entry whose deadline <= now, earliest deadline first (equal
 * deadlines: in the order they were added), calling cb (may be NULL) with
 * each after it has been removed (the callback may add new entries).
 * Returns the number expired. Typical cb: build htoe_poison_response(e,
 * HTOE_POISON_TIMEOUT) and queue it for the local requester.
 */
unsigned htoe_outstanding_expire(struct htoe_outstanding *t, uint64_t now,
				 htoe_outstanding_cb cb, void *ctx);

/*
 * Remove every entry of VL vl (VL reset), in (unitid, srctag) order, calling
 * cb (may be NULL) with each after removal; cb must not add entries for vl.
 * Returns the number removed.
 */
unsigned htoe_outstanding_drop_vl(struct htoe_outstanding *t, uint16_t vl,
				  htoe_outstanding_cb cb, void *ctx);

/* Earliest deadline of all entries, HTOE_TAG_NEVER if empty. O(1). */
uint64_t htoe_outstanding_next_deadline(const struct htoe_outstanding *t);

/* Entries in use; high-water mark. */
unsigned htoe_outstanding_count(const struct htoe_outstanding *t);
unsigned htoe_outstanding_hwm(const struct htoe_outstanding *t);

/* ---- poisoned responses ------------------------------------------------- */

enum htoe_poison_reason {
	HTOE_POISON_TIMEOUT = 0,     /* no response within np_timeout */
	HTOE_POISON_UNREACHABLE,     /* unmapped / no VL to the node */
	HTOE_POISON_VL_RESET,        /* the VL was reset while pending */
	HTOE_POISON_REMOTE_RESET,    /* the remote node was reset */
};

/* Error encoding for a reason (HT reference §5): timeout and unreachable ->
 * HT_RSP_MASTER_ABORT (Error0=1, Error1=1); VL reset and remote reset ->
 * HT_RSP_TARGET_ABORT (Error0=1, Error1=0). */
enum ht_rsp_err htoe_poison_err(enum htoe_poison_reason why);

/*
 * Build the error response to a non-posted request with tags (unitid,
 * srctag): *out is zeroed, then
 *   RdSized, Atomic: RdResponse (Cmd 0x30), Count = np->rsp_count, and
 *                    Count+1 data dwords of all-ones (0xFF bytes);
 *   WrSized NP, Flush: TgtDone (Cmd 0x33), Count 0, no data;
 *   UnitID = unitid, SrcTag = srctag, Bridge = 1, PassPW = np->rsp_passpw,
 *   Error0/Error1 from err, Isoc 0, RqUID 0, RspVCSet 0.
 * Returns 0, or -EINVAL (unknown kind, Count > 15, tags >= 32).
 */
int htoe_poison_build(uint8_t unitid, uint8_t srctag, const struct htoe_np_info *np,
		      enum ht_rsp_err err, struct ht_pkt *out);

/* htoe_poison_build() for an outstanding entry (its own UnitID/SrcTag) with
 * the error of `why`. */
int htoe_poison_response(const struct htoe_outstanding_entry *e,
			 enum htoe_poison_reason why, struct ht_pkt *out);

#endif
