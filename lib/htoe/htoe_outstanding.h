/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_outstanding: the requester side's table of non-posted requests sent
 * to remote nodes. Sans-I/O: a fixed-size table inside the struct, no
 * allocation, no clock (times are passed in).
 *
 * Outstanding table, struct htoe_outstanding (requester side). Every
 * non-posted request the local requester sends to a remote node is
 * recorded by its own (UnitID, SrcTag), 32 x 32 entries, with a deadline
 * now + np_timeout. The remote response removes it. If no response comes
 * (timeout), or the VL is reset, the bridge answers the local requester
 * itself with an error response (htoe_poison_response), so that no
 * request waits forever. Entries are kept in a doubly linked list sorted by
 * deadline (ties: the earlier added first). Every deadline is now +
 * np_timeout, so with a clock that does not go back an entry joins at the
 * tail: add, complete, next deadline and expiry per entry are O(1) (an add
 * with an earlier `now` than the last one walks back from the tail).
 *
 * Errors are negative errno values.
 */
#ifndef HTOE_OUTSTANDING_H
#define HTOE_OUTSTANDING_H

#include <stdbool.h>
#include <stdint.h>

#include "htoe/htoe_tagremap.h"

struct htoe_outstanding_entry {
	uint8_t  unitid;        /* the local requester's UnitID (key, < 32) */
	uint8_t  srctag;        /* the local requester's SrcTag (key, < 32) */
	uint16_t vl;            /* VL the request was sent on */
	uint8_t  epoch;         /* that VL's epoch when it was sent */
	struct htoe_np_info np; /* kind, response Count, response PassPW */
	uint64_t deadline;      /* now + np_timeout_ns when added */
	uint64_t addr;          /* global address and bytes it reads or writes */
	uint32_t len;           /* (0: none, a Flush): what a VL reset loses */
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
	uint16_t n;                           /* entries in use */
	uint16_t hwm;
	int16_t  head, tail;                  /* earliest and latest deadline, -1: empty */
	uint32_t busy[HTOE_TAG_UNITIDS];      /* per UnitID: bit srctag in use */
	int16_t  prev[HTOE_TAG_MAX], next[HTOE_TAG_MAX]; /* the deadline list, -1: none */
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

/* The same, with the global address and length the request reads or writes
 * (the loss report of a VL reset; htoe_outstanding_add() records none). */
int htoe_outstanding_add_span(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			      uint16_t vl, uint8_t epoch, const struct htoe_np_info *np,
			      uint64_t addr, uint32_t len, uint64_t now);

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
 * unitid >= 32). Both O(1); the first is asked for every local request. */
static inline bool htoe_outstanding_busy(const struct htoe_outstanding *t, uint8_t unitid,
					 uint8_t srctag)
{
	return unitid < HTOE_TAG_UNITIDS && srctag < HTOE_TAG_SRCTAGS &&
	       (t->busy[unitid] >> srctag & 1u);
}
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

#endif
