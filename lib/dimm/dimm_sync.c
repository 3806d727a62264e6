/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_sync: a pager sync's state machine, sans-I/O (dimm_sync.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dimm_sync.h"

int dimm_sync_init(struct dimm_sync *s, uint32_t npages)
{
	memset(s, 0, sizeof(*s));
	s->npages = npages;
	s->mark = calloc(npages ? npages : 1, 1);
	return s->mark ? 0 : -ENOMEM;
}

void dimm_sync_fini(struct dimm_sync *s)
{
	free(s->mark);
	s->mark = NULL;
}

bool dimm_sync_begin(struct dimm_sync *s, int err, bool wp_async, bool evicting)
{
	if (s->phase != DIMM_SYNC_IDLE || (wp_async && evicting))
		return false;
	s->phase = DIMM_SYNC_WRITING;
	s->cursor = 0;
	s->wb = 0;
	s->st = err;
	s->ht_err = 0;
	s->retries = 0;
	return true;
}

void dimm_sync_fail(struct dimm_sync *s, int err)
{
	if (!s->st)
		s->st = err;
}

enum dimm_sync_do dimm_sync_next(struct dimm_sync *s, const struct dimm_policy *pol,
				 unsigned max, bool evicting, uint32_t *pg)
{
	if (s->phase == DIMM_SYNC_WRITING) {
		while (!s->st && s->cursor < s->npages && s->wb < max) {
			if (pol->state[s->cursor] == DIMM_PG_DIRTY) {
				*pg = s->cursor;
				return DIMM_SYNC_WRITE;
			}
			s->cursor++;
		}
		/* every write-back in: the flush (after the evictions' own
		 * flushes); a failed sync sends none */
		if ((s->cursor == s->npages || s->st) && s->wb == 0 && !evicting) {
			if (!s->st)
				return DIMM_SYNC_FLUSH;
			s->phase = DIMM_SYNC_FLUSHING;
		}
	}
	if (s->phase == DIMM_SYNC_FLUSHING && s->wb == 0)
		return DIMM_SYNC_END;
	return DIMM_SYNC_WAIT;
}

void dimm_sync_sent(struct dimm_sync *s, struct dimm_policy *pol, uint32_t pg)
{
	s->mark[pg] = 1;
	pol->pflags[pg] = 0;
	s->wb++;
	s->cursor = pg + 1;
}

void dimm_sync_unsent(struct dimm_sync *s, int err)
{
	if (err != -EAGAIN)
		dimm_sync_fail(s, err);
}

void dimm_sync_flush_sent(struct dimm_sync *s)
{
	s->phase = DIMM_SYNC_FLUSHING;
	s->wb = 1;
}

void dimm_sync_done(struct dimm_sync *s, int status, uint8_t ht_err)
{
	if (status && !s->st) {
		s->st = status;
		s->ht_err = ht_err;
	}
	if (s->wb)
		s->wb--;
}

bool dimm_sync_retry(struct dimm_sync *s, bool reset, unsigned max, bool gone)
{
	if (!s->st || !dimm_policy_may_retry(reset, s->retries, max, gone))
		return false;
	s->retries++;
	s->st = 0;
	s->ht_err = 0;
	s->phase = DIMM_SYNC_WRITING;
	s->cursor = 0;
	return true;
}

enum dimm_sync_page_do dimm_sync_page(struct dimm_sync *s, struct dimm_policy *pol, uint32_t pg,
				      bool wp, bool drop)
{
	enum dimm_sync_page_do r = DIMM_SYNC_PG_KEEP;

	if (s->mark[pg] && pol->state[pg] == DIMM_PG_DIRTY) {
		if (s->st) {
			if (wp)
				r = DIMM_SYNC_PG_UNPROTECT;
		} else if (wp) {
			pol->state[pg] = DIMM_PG_CLEAN;
		}
	}
	s->mark[pg] = 0;
	if (drop && !s->st &&
	    (pol->state[pg] == DIMM_PG_CLEAN || (pol->state[pg] == DIMM_PG_DIRTY && !wp)))
		r = DIMM_SYNC_PG_DROP;
	return r;
}

int dimm_sync_finish(struct dimm_sync *s)
{
	s->phase = DIMM_SYNC_IDLE;
	return s->st;
}
