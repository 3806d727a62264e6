/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_sync: a pager sync's state machine (dimm_pager_sync), sans-I/O.
 *
 * A sync writes back every dirty page, then sends one flush that confirms
 * them all; the pages it wrote back are clean when that flush confirms
 * them (with dirty tracking; else they stay dirty), or dropped (a sync
 * with drop). A VL reset that hit a write-back or the flush sends the
 * whole sync again. This module decides: which page is written back next,
 * when the flush goes, when the sync is over, whether it starts again,
 * and what becomes of each page at its end. The shell (dimm_pager.c)
 * performs what it asks (write-protect, dimm_write_async, dimm_flush_async,
 * drop the page) and feeds the completions back. No system call, no
 * clock; tests/dimm/test_dimm_policy.c drives it.
 *
 * The calls, in order: dimm_sync_begin; then dimm_sync_next until it says
 * WAIT (after WRITE: dimm_sync_sent or dimm_sync_unsent; after FLUSH:
 * dimm_sync_flush_sent); dimm_sync_done for each completion; at END,
 * dimm_sync_retry, or dimm_sync_page for every page and dimm_sync_finish.
 */
#ifndef DIMM_SYNC_H
#define DIMM_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "dimm_policy.h"

enum {
	DIMM_SYNC_IDLE = 0,
	DIMM_SYNC_WRITING,  /* write-backs are sent */
	DIMM_SYNC_FLUSHING, /* every write-back sent, the flush (if any) in flight */
};

struct dimm_sync {
	uint32_t npages;
	uint8_t *mark;     /* per page: written back by this sync */
	int      phase;    /* DIMM_SYNC_* */
	uint32_t cursor;   /* the next page to look at */
	unsigned wb;       /* completions outstanding (write-backs, then the flush) */
	int      st;       /* the sync's status: the first failure */
	uint8_t  ht_err;
	unsigned retries;  /* sent again after a VL reset */
};

/* What the sync asks of the shell now (dimm_sync_next). */
enum dimm_sync_do {
	DIMM_SYNC_WAIT,  /* nothing now: completions are outstanding (or no descriptor) */
	DIMM_SYNC_WRITE, /* write page *pg back (write-protected first under wp) */
	DIMM_SYNC_FLUSH, /* send the flush that confirms the write-backs */
	DIMM_SYNC_END,   /* every completion is in: dimm_sync_retry or the end */
};

/* What becomes of a page at the end of a sync (dimm_sync_page). */
enum dimm_sync_page_do {
	DIMM_SYNC_PG_KEEP,      /* nothing to do */
	DIMM_SYNC_PG_UNPROTECT, /* the sync failed: lift the write protection */
	DIMM_SYNC_PG_DROP,      /* synced, and the sync drops: give its memory back */
};

/* npages pages, none marked. 0 or -ENOMEM. */
int dimm_sync_init(struct dimm_sync *s, uint32_t npages);
void dimm_sync_fini(struct dimm_sync *s);

/* A sync is requested: true if it starts now (err: the pager's error
 * state, which the sync reports). wp-async: not while evictions are in
 * flight (their pages are scanned when they finish). */
bool dimm_sync_begin(struct dimm_sync *s, int err, bool wp_async, bool evicting);
/* The sync fails with err (the first failure is its status). */
void dimm_sync_fail(struct dimm_sync *s, int err);
/* The next thing to do, at most max write-backs in flight; evicting: an
 * eviction's write-back is in flight (it is confirmed by its own flush,
 * which the sync's flush waits for). WRITE: *pg. */
enum dimm_sync_do dimm_sync_next(struct dimm_sync *s, const struct dimm_policy *pol,
				 unsigned max, bool evicting, uint32_t *pg);
/* The write-back of pg (asked by WRITE) was submitted: the page is
 * marked, its flags cleared. */
void dimm_sync_sent(struct dimm_sync *s, struct dimm_policy *pol, uint32_t pg);
/* It could not be: err -EAGAIN (no descriptor now: asked again later, stop
 * calling dimm_sync_next for now), else the sync fails. */
void dimm_sync_unsent(struct dimm_sync *s, int err);
/* The flush (asked by FLUSH) was submitted. (Not submitted: it is asked
 * again by a later dimm_sync_next.) */
void dimm_sync_flush_sent(struct dimm_sync *s);
/* A write-back's or the flush's completion. */
void dimm_sync_done(struct dimm_sync *s, int status, uint8_t ht_err);
/* At END: send the whole sync again? Only after a failure that may be
 * (reset, gone, max: dimm_policy_may_retry). True: it starts again from
 * the first page (its pages are still dirty and marked). */
bool dimm_sync_retry(struct dimm_sync *s, bool reset, unsigned max, bool gone);
/* At END, for every page: a page the sync wrote back is clean now (wp:
 * dirty tracking; else it stays dirty), or, the sync failed, writable
 * again; drop: the synced pages (clean, or dirty without wp) are dropped. */
enum dimm_sync_page_do dimm_sync_page(struct dimm_sync *s, struct dimm_policy *pol, uint32_t pg,
				      bool wp, bool drop);
/* The sync is over: idle again; returns its status. */
int dimm_sync_finish(struct dimm_sync *s);
/* Page pg is being evicted: this sync does not count it. */
static inline void dimm_sync_forget(struct dimm_sync *s, uint32_t pg)
{
	s->mark[pg] = 0;
}

#endif
