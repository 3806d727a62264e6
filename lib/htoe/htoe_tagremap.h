/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_tagremap: the pending-request table (target side) and what a bridge
 * keeps of a non-posted request to answer it (struct htoe_np_info).
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

/* The same from a parsed packet (d from ht_desc_parse). */
int htoe_np_info_from_desc(const struct ht_desc *d, struct htoe_np_info *np);

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

#endif
