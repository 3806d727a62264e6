/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_evict: the pager's write-backs of dirty pages in flight (evictions
 * and the cleaner's), sans-I/O.
 *
 * DIMM_N_EVICT slots, each one page's write-back: a posted write and the
 * flush that confirms it (one flush for a batch: the slot of its first
 * page leads it). This module owns the slots and decides: which slot a
 * claim takes and in what order claims came; what a fetch that needs room
 * waits for (a batch's write-back nobody waits for, else the oldest copied
 * one); when a write-back is over (its write and its flush answered);
 * whether a failed one is sent again; and what becomes of its page when it
 * is over (dropped, kept clean, dirty again, restored from its copy...),
 * and whether the fetch waiting for it has its slot. The shell
 * (dimm_pager.c) write-protects, copies, submits, scans and drops as it
 * is told and feeds the completions back. No system call, no clock;
 * tests/dimm/test_dimm_policy.c drives it.
 */
#ifndef DIMM_EVICT_H
#define DIMM_EVICT_H

#include <stdbool.h>
#include <stdint.h>

#include "dimm_policy.h"

#define DIMM_N_EVICT 16u /* write-backs in flight */

_Static_assert(DIMM_EVICT_BATCH <= DIMM_N_EVICT, "a batch's write-backs fit the slots");

struct dimm_evict {
	bool     used;
	bool     keep;        /* the cleaner's: the page stays resident, clean */
	bool     copied;      /* the page was copied to buf and dropped at once
				 (DIMM_PG_WRITING): written back from buf, its slot
				 free already */
	uint8_t *buf;         /* DIMM_PAGE bytes of the shell's: the copy */
	uint8_t  left;        /* completions outstanding (write, flush) */
	uint8_t  lead;        /* the slot whose flush confirms this write (its own,
				 or the first of its batch) */
	bool     flushing;    /* waiting for that flush */
	int      status;
	uint8_t  ht_err;
	int      waiter;      /* fetch waiting for this page's slot (-1 none) */
	uint8_t  retries;     /* sent again after a VL reset */
	bool     quiet;       /* run to completion: scanned (wp-async) while the
				 application was stopped, `resumed` then = res0 */
	unsigned res0;
	uint32_t page;
	uint64_t seq;         /* claim order (the oldest is waited for first) */
};

struct dimm_evicts {
	struct dimm_evict slot[DIMM_N_EVICT];
	uint64_t seq; /* claims so far */
};

/* Every slot free, no waiter. */
void dimm_evicts_init(struct dimm_evicts *t);
/* The index of a free slot (the first), or -1. */
int dimm_evict_free_slot(const struct dimm_evicts *t);
/* Claim free slot i for page pg (keep: the cleaner's): the next in claim
 * order; the page is EVICTING, its flags cleared. */
struct dimm_evict *dimm_evict_claim(struct dimm_evicts *t, unsigned i, struct dimm_policy *pol,
				    uint32_t pg, bool keep);
/* Slots in use (keep_only: the cleaner's only). */
unsigned dimm_evict_in_flight(const struct dimm_evicts *t, bool keep_only);
/* The cleaner's write-back of pg in flight, or NULL. */
struct dimm_evict *dimm_evict_cleaning(struct dimm_evicts *t, uint32_t pg);
/* Fetch `waiter` waits for no slot any more. */
void dimm_evict_unwait(struct dimm_evicts *t, int waiter);

/* A fetch needs room and none is free: the slot to wait for, or -1 (none:
 * evict a victim). A write-back of a batch nobody waits for (its slot
 * frees when the batch's flush confirms it, sooner than a new
 * write-back's); copy (dirty victims may be copied and dropped at once):
 * when no slot is free, the oldest copied write-back nobody waits for (the
 * link is the limit). The cleaner's are not waited for here. */
int dimm_evict_to_wait_for(const struct dimm_evicts *t, bool copy);

/* es[0..n) are about to be submitted: each page's write, then one flush,
 * es[0]'s, for them all. */
void dimm_evict_submitting(struct dimm_evicts *t, struct dimm_evict *const *es, unsigned n);
/* e's write could not be submitted (err). */
void dimm_evict_write_unsent(struct dimm_evict *e, int err);
/* The flush of es[0..n) could not be submitted (err). */
void dimm_evict_flush_unsent(struct dimm_evict *const *es, unsigned n, int err);
/* e's write is answered: true when e is over (every completion in). */
bool dimm_evict_write_done(struct dimm_evict *e, int status, uint8_t ht_err);
/* The flush slot `lead` leads is answered: it counts for each of its
 * write-backs; those over go into done[DIMM_N_EVICT]; returns how many. */
unsigned dimm_evict_flush_done(struct dimm_evicts *t, unsigned lead, int status, uint8_t ht_err,
			       struct dimm_evict **done);
/* e, over, failed: send it again (alone, with a flush of its own)?
 * dimm_policy_may_retry with its resends so far; true: counted. */
bool dimm_evict_retry(struct dimm_evict *e, bool reset, unsigned max, bool gone);

/* Of the write-backs es[0..n), over: did every one that succeeded have its
 * page scanned while the application was stopped, and no thread resumed
 * since (resumed: the count now)? Then none can have been written. */
bool dimm_evict_quiet(struct dimm_evict *const *es, unsigned n, unsigned resumed);

/* e is over and not sent again: its slot is free. */
void dimm_evict_over(struct dimm_evict *e);

/* What becomes of a write-back's page when it is over (dimm_evict_end). */
enum dimm_evict_end {
	DIMM_EV_ABSENT,  /* copied, confirmed: absent from now on */
	DIMM_EV_RESTORE, /* copied, failed: its data back from the copy (the error state) */
	DIMM_EV_DIRTY,   /* written during the write-back (or not known): stays, dirty */
	DIMM_EV_WASHED,  /* the cleaner's: resident and clean (still write-protected) */
	DIMM_EV_KEPT,    /* confirmed but may not be dropped now: resident and clean, not
			    evicted after all */
	DIMM_EV_DROP,    /* confirmed: give its memory back */
	DIMM_EV_FAILED,  /* failed: its data stays here, dirty, writable again (the error
			    state) */
};

/* e is over (dimm_evict_over): its page's state follows. err: the pager
 * is in its error state (asked for each one: a failure before it may have
 * put the pager there); may_drop: nothing writes the page until it is
 * dropped; wp_async: a scan tells a write during the write-back
 * (DIMM_PF_WRITTEN), scan_failed: it could not tell. */
enum dimm_evict_end dimm_evict_end(const struct dimm_evict *e, struct dimm_policy *pol, bool err,
				   bool may_drop, bool wp_async, bool scan_failed);
/* After the ends of a batch (its drops done): does the fetch waiting for
 * e (e->waiter >= 0) have its slot now (reserved here), or must it make
 * room again? */
bool dimm_evict_room_for_waiter(const struct dimm_evict *e, struct dimm_policy *pol);

#endif
