/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_policy: the pager's page bookkeeping and eviction choices, sans-I/O.
 *
 * The pager (dimm_pager.c) is a shell around it: it reads faults from
 * userfaultfd, copies pages in and out, write-protects, scans and drops
 * memory, and asks this module what each page is and which pages to give
 * back. This module makes no system call, reads no clock, starts no thread
 * and never blocks: it is driven by calls ("page P was installed, dirty",
 * "P was dropped", "the pages in use are now N", "which page is the next
 * victim?", "which pages go with it?", "how far to read ahead?") and
 * answers with page numbers. tests/dimm/test_dimm_policy.c drives it
 * without userfaultfd.
 *
 * What it owns:
 *  - per page: the state (DIMM_PG_*), the CLOCK reference bit and flags
 *    (DIMM_PF_*); the count of pages that use memory (mapped) and of
 *    fetches that have their slot (reserved): mapped + reserved <= budget;
 *  - the pages in use (external mode: touched, not given back);
 *  - the budget: fixed, or a percentage of the pages in use (budget_pct),
 *    at least DIMM_POLICY_MIN_BUDGET, at most the fixed one or the mapping;
 *  - CLOCK: the hand, second chances, the victim, and the next victims
 *    (what the cleaner writes back ahead of eviction);
 *  - batches: the next clean (or dirty) unreferenced pages that go with a
 *    victim, within the span one scan covers and an eighth of the budget;
 *  - what a fault asks for, from the page's state (fetch, zeros, wait...),
 *    and whether a failed operation is sent again;
 *  - the readahead window: doubled by a sequential fault, halved by others.
 */
#ifndef DIMM_POLICY_H
#define DIMM_POLICY_H

#include <stdbool.h>
#include <stdint.h>

/* Page states. EVICTING: resident, its write-back in flight (from the
 * mapping); WRITING: dropped already, its write-back in flight from a copy
 * (the page is fetched again only once that is confirmed). */
enum {
	DIMM_PG_ABSENT = 0,
	DIMM_PG_FETCHING,
	DIMM_PG_CLEAN,
	DIMM_PG_DIRTY,
	DIMM_PG_EVICTING,
	DIMM_PG_POISONED,
	DIMM_PG_WRITING,
};

/* Page flags. */
#define DIMM_PF_WASHED  0x01u /* clean because the cleaner wrote it back (clean_hits) */
#define DIMM_PF_WRITTEN 0x02u /* wp-async: a scan found it written while it was sent */
#define DIMM_PF_SEEN    0x04u /* wp-async: the cleaner scanned it since it was installed */
#define DIMM_PF_FRESH   0x08u /* external: never written by the process (or given back): its
				 fault installs zeros, a fetch of it is discarded */

/* Eviction in batches: a victim takes with it up to DIMM_EVICT_BATCH - 1
 * more of the next unreferenced pages of its kind (an eighth of the budget
 * at most in all), found among the evict_span pages from it on: about
 * DIMM_EVICT_SCAN resident ones at any budget (DIMM_EVICT_SCAN times
 * mapping/budget pages), at most DIMM_EVICT_SPAN_MAX. */
/* budget_pct: the budget is never below this many pages */
#define DIMM_POLICY_MIN_BUDGET 64u

#define DIMM_EVICT_BATCH    8u
#define DIMM_EVICT_SCAN     16u
#define DIMM_EVICT_SPAN_MAX 256u

struct dimm_policy {
	uint32_t npages;
	uint8_t *state;      /* DIMM_PG_*, per page */
	uint8_t *ref;        /* CLOCK's reference bit, per page */
	uint8_t *pflags;     /* DIMM_PF_*, per page */
	uint32_t mapped;     /* CLEAN + DIRTY + EVICTING: pages that use memory */
	uint32_t reserved;   /* fetches that have their slot */
	uint32_t hand;       /* CLOCK */
	uint32_t in_use;     /* pages in use (external: not FRESH), for budget_pct */
	uint32_t evict_span; /* pages a victim's batch is taken from */
	unsigned budget;     /* resident pages at most, now */
	unsigned budget_cap; /* the fixed budget, or the mapping */
	unsigned budget_pct; /* 0, or 1..100: the budget follows in_use */
	unsigned ra_win;     /* readahead window */
	uint32_t ra_lo, ra_hi; /* the last fault and the pages read after it */
};

/* npages pages, all absent; budget 0: the mapping. 0, or -ENOMEM. */
int dimm_policy_init(struct dimm_policy *pol, uint32_t npages, unsigned budget,
		     unsigned budget_pct);
void dimm_policy_fini(struct dimm_policy *pol);

/* The budget again from in_use (budget_pct) and the cap; returns it. */
unsigned dimm_policy_budget_update(struct dimm_policy *pol);
/* No free slot: every one is used by a resident page or reserved. */
bool dimm_policy_full(const struct dimm_policy *pol);
/* The most pages one eviction gives back: DIMM_EVICT_BATCH, at most an
 * eighth of the budget, at least 1. */
unsigned dimm_policy_batch_max(const struct dimm_policy *pol);
/* The pages from pg on that a victim's batch is taken from (within the
 * mapping). */
uint32_t dimm_policy_span(const struct dimm_policy *pol, uint32_t pg);

/* Page pg is resident now (dirty or clean), referenced. */
void dimm_policy_installed(struct dimm_policy *pol, uint32_t pg, bool dirty);
/* Page pg's memory was given back: absent, unreferenced, only FRESH kept. */
void dimm_policy_dropped(struct dimm_policy *pol, uint32_t pg);

/* External mode (another process's memory): every page starts fresh
 * (DIMM_PF_FRESH: never written by the process, its fault installs zeros),
 * none in use. */
void dimm_policy_all_fresh(struct dimm_policy *pol);
/* Page pg, installed, is in use: true if it was fresh (it counts in in_use
 * from now on, and the budget follows). */
bool dimm_policy_in_use(struct dimm_policy *pol, uint32_t pg);
/* The process gave page pg back (MADV_REMOVE): fresh again, not in use.
 * 0: it was fresh already (nothing changed); 1: it was not resident; 2: it
 * was resident (CLEAN or DIRTY) and is dropped from the bookkeeping (its
 * memory went with the process's call). Call dimm_policy_budget_update
 * after a range. */
int dimm_policy_given_back(struct dimm_policy *pol, uint32_t pg);

/*
 * CLOCK: the next victim, moving the hand at most *left steps (decremented
 * per page passed; two sweeps of the mapping find an unreferenced page if
 * there is one). A page is a candidate when cand(arg, pg) says so (NULL:
 * CLEAN or DIRTY); a referenced candidate loses its reference bit and is
 * passed (its second chance). -1 when *left ran out.
 */
int64_t dimm_policy_clock(struct dimm_policy *pol, uint64_t *left,
			  bool (*cand)(void *arg, uint32_t pg), void *arg);

/*
 * The next victims, in the order CLOCK takes them if nothing changes
 * meanwhile (the unreferenced candidates from the hand on, then the
 * referenced ones, which lose their bit on the first sweep), without
 * moving the hand or clearing a bit: up to max into out. *looked: how many
 * pages from the hand on were looked at (two sweeps at most).
 */
unsigned dimm_policy_next_victims(const struct dimm_policy *pol, unsigned max,
				  bool (*cand)(void *arg, uint32_t pg), void *arg, uint32_t *out,
				  uint64_t *looked);
/* Write-back ahead of eviction: how many of the next victims must be found
 * (to be clean, or written back) so that free slots plus those make `low`;
 * 0 when at least `low` slots are free. */
unsigned dimm_policy_clean_want(const struct dimm_policy *pol, unsigned low);

/* The clean victim pg and the next clean unreferenced pages after it,
 * below `known` and within the span, batch_max in all at most, into
 * out[DIMM_EVICT_BATCH]; returns how many (at least 1: pg). */
unsigned dimm_policy_clean_batch(const struct dimm_policy *pol, uint32_t pg, uint32_t known,
				 uint32_t *out);
/* The next dirty unreferenced pages after the dirty victim pg (not pg
 * itself), below `known` and within the span, batch_max - 1 at most, into
 * out[DIMM_EVICT_BATCH]; skip_washed: not those the cleaner washed (they
 * wait for their second chance). */
unsigned dimm_policy_dirty_batch(const struct dimm_policy *pol, uint32_t pg, uint32_t known,
				 bool skip_washed, uint32_t *out);

/* May an operation (a fetch, a write-back) that failed, already sent again
 * `tries` times, be sent again? reset: it failed the way a warm VL reset
 * fails operations (dimm_reset_retryable: reads and whole-page writes are
 * idempotent); gone: the lease is lost or the pager is in its error state
 * (the memory may be someone else's). At most max times in a row. */
bool dimm_policy_may_retry(bool reset, unsigned tries, unsigned max, bool gone);

/* What a fault on a page asks of the shell (dimm_policy_fault). */
enum dimm_fault_action {
	DIMM_FA_POISON,      /* absent, the pager in its error state: poison the page */
	DIMM_FA_FETCH,       /* absent: fetch it (then readahead) */
	DIMM_FA_ZERO,        /* absent and fresh (external): install zeros, no fetch */
	DIMM_FA_JOIN,        /* being fetched: wait for that fetch (a readahead hit) */
	DIMM_FA_FIRST_WRITE, /* clean, written (WP fault): now DIRTY and referenced; lift the
				protection */
	DIMM_FA_REWRITE,     /* dirty, written while a sync protected it: lift it again */
	DIMM_FA_WAIT,        /* being written back: keep the fault until that is over */
	DIMM_FA_SPURIOUS,    /* handled already (or poisoned): wake the thread, it retries */
};

/* A fault on pg (wp: a write-protect fault; failed: the pager is in its
 * error state): what to do. FIRST_WRITE changes the page's state here. */
enum dimm_fault_action dimm_policy_fault(struct dimm_policy *pol, uint32_t pg, bool wp,
					 bool failed);

/* A fault at pg: the readahead window now, at most max and a quarter of
 * the budget (0: none, and nothing changes when max is 0). A fault
 * within or just after the previous window doubles it (from 1 for the page
 * after the previous fault), any other halves it. The caller reads pages
 * pg + 1 ... pg + window and sets ra_hi to the last it looked at. */
unsigned dimm_policy_readahead(struct dimm_policy *pol, uint32_t pg, unsigned max);

#endif
