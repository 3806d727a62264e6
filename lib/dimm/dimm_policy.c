/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_policy: the pager's page bookkeeping and eviction choices, sans-I/O
 * (dimm_policy.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dimm_policy.h"

/* Pages a victim's batch is taken from: DIMM_EVICT_SCAN resident pages are
 * spread over npages/budget times as many. One PAGEMAP_SCAN costs about the
 * same for 16 pages or 256 (its TLB flush dominates), so a small budget
 * must not mean a scan for every two or three evictions. */
static uint32_t evict_span(uint32_t npages, unsigned budget)
{
	uint64_t s = (uint64_t)DIMM_EVICT_SCAN * npages / (budget ? budget : 1);

	return s < DIMM_EVICT_SCAN ? DIMM_EVICT_SCAN : s > DIMM_EVICT_SPAN_MAX ? DIMM_EVICT_SPAN_MAX
										 : (uint32_t)s;
}

int dimm_policy_init(struct dimm_policy *pol, uint32_t npages, unsigned budget,
		     unsigned budget_pct)
{
	memset(pol, 0, sizeof(*pol));
	pol->npages = npages;
	pol->budget_cap = budget && budget < npages ? budget : npages;
	pol->budget_pct = budget_pct;
	pol->state = calloc(npages ? npages : 1, 1);
	pol->ref = calloc(npages ? npages : 1, 1);
	pol->pflags = calloc(npages ? npages : 1, 1);
	if (!pol->state || !pol->ref || !pol->pflags) {
		dimm_policy_fini(pol);
		return -ENOMEM;
	}
	pol->budget = pol->budget_cap;
	pol->evict_span = evict_span(npages, pol->budget);
	return 0;
}

void dimm_policy_fini(struct dimm_policy *pol)
{
	free(pol->state);
	free(pol->ref);
	free(pol->pflags);
	pol->state = pol->ref = pol->pflags = NULL;
}

unsigned dimm_policy_budget_update(struct dimm_policy *pol)
{
	uint64_t b = pol->budget_cap;

	if (pol->budget_pct) {
		b = ((uint64_t)pol->in_use * pol->budget_pct + 99) / 100;
		if (b < DIMM_POLICY_MIN_BUDGET)
			b = DIMM_POLICY_MIN_BUDGET;
		if (b > pol->budget_cap)
			b = pol->budget_cap;
	}
	if (b != pol->budget) {
		pol->budget = (unsigned)b;
		pol->evict_span = evict_span(pol->npages, pol->budget);
	}
	return pol->budget;
}

bool dimm_policy_full(const struct dimm_policy *pol)
{
	return pol->mapped + pol->reserved >= pol->budget;
}

/* An eighth of the budget at most: a small resident set is not emptied
 * ahead of the faults that need it. */
unsigned dimm_policy_batch_max(const struct dimm_policy *pol)
{
	unsigned max = pol->budget / 8u;

	return max > DIMM_EVICT_BATCH ? DIMM_EVICT_BATCH : max < 1 ? 1 : max;
}

uint32_t dimm_policy_span(const struct dimm_policy *pol, uint32_t pg)
{
	return pol->npages - pg < pol->evict_span ? pol->npages - pg : pol->evict_span;
}

void dimm_policy_installed(struct dimm_policy *pol, uint32_t pg, bool dirty)
{
	pol->state[pg] = dirty ? DIMM_PG_DIRTY : DIMM_PG_CLEAN;
	pol->ref[pg] = 1;
	pol->mapped++;
}

void dimm_policy_dropped(struct dimm_policy *pol, uint32_t pg)
{
	pol->state[pg] = DIMM_PG_ABSENT;
	pol->ref[pg] = 0;
	pol->pflags[pg] &= DIMM_PF_FRESH;
	pol->mapped--;
}

void dimm_policy_all_fresh(struct dimm_policy *pol)
{
	memset(pol->pflags, DIMM_PF_FRESH, pol->npages);
	pol->in_use = 0;
}

bool dimm_policy_in_use(struct dimm_policy *pol, uint32_t pg)
{
	if (!(pol->pflags[pg] & DIMM_PF_FRESH))
		return false;
	pol->pflags[pg] &= (uint8_t)~DIMM_PF_FRESH;
	pol->in_use++;
	dimm_policy_budget_update(pol);
	return true;
}

int dimm_policy_given_back(struct dimm_policy *pol, uint32_t pg)
{
	int r = 1;

	if (pol->pflags[pg] & DIMM_PF_FRESH)
		return 0;
	if (pol->state[pg] == DIMM_PG_CLEAN || pol->state[pg] == DIMM_PG_DIRTY) {
		dimm_policy_dropped(pol, pg);
		r = 2;
	}
	pol->pflags[pg] |= DIMM_PF_FRESH;
	pol->in_use--;
	return r;
}

static bool resident(void *arg, uint32_t pg)
{
	const struct dimm_policy *pol = arg;

	return pol->state[pg] == DIMM_PG_CLEAN || pol->state[pg] == DIMM_PG_DIRTY;
}

int64_t dimm_policy_clock(struct dimm_policy *pol, uint64_t *left,
			  bool (*cand)(void *arg, uint32_t pg), void *arg)
{
	if (!cand) {
		cand = resident;
		arg = pol;
	}
	while (*left && pol->npages) {
		uint32_t pg = pol->hand;

		(*left)--;
		pol->hand = pol->hand + 1 == pol->npages ? 0 : pol->hand + 1;
		if (!cand(arg, pg))
			continue;
		if (pol->ref[pg]) {
			pol->ref[pg] = 0;
			continue;
		}
		return pg;
	}
	return -1;
}

unsigned dimm_policy_next_victims(const struct dimm_policy *pol, unsigned max,
				  bool (*cand)(void *arg, uint32_t pg), void *arg, uint32_t *out,
				  uint64_t *looked)
{
	unsigned nc = 0;
	uint64_t n;

	if (!cand) {
		cand = resident;
		arg = (void *)(uintptr_t)pol;
	}
	for (n = 0; n < 2ull * pol->npages && nc < max; n++) {
		uint32_t pg = (uint32_t)((pol->hand + n) % pol->npages);

		if (cand(arg, pg) && (n < pol->npages) == !pol->ref[pg])
			out[nc++] = pg;
	}
	*looked = n;
	return nc;
}

unsigned dimm_policy_clean_want(const struct dimm_policy *pol, unsigned low)
{
	uint32_t used = pol->mapped + pol->reserved;

	if (used + low <= pol->budget)
		return 0;
	return low - (used < pol->budget ? pol->budget - used : 0);
}

/* The end of what a victim at pg may take with it: its span, and `known`. */
static uint32_t batch_end(const struct dimm_policy *pol, uint32_t pg, uint32_t known)
{
	uint64_t end = (uint64_t)pg + pol->evict_span;

	return end > known ? known : (uint32_t)end;
}

unsigned dimm_policy_clean_batch(const struct dimm_policy *pol, uint32_t pg, uint32_t known,
				 uint32_t *out)
{
	uint32_t end = batch_end(pol, pg, known);
	unsigned n = 0, max = dimm_policy_batch_max(pol);

	for (uint32_t q = pg; q < end && n < max; q++) {
		if (q != pg && (pol->state[q] != DIMM_PG_CLEAN || pol->ref[q]))
			continue;
		out[n++] = q;
	}
	if (!n) /* pg beyond `known` */
		out[n++] = pg;
	return n;
}

unsigned dimm_policy_dirty_batch(const struct dimm_policy *pol, uint32_t pg, uint32_t known,
				 bool skip_washed, uint32_t *out)
{
	uint32_t end = batch_end(pol, pg, known);
	unsigned n = 0, max = dimm_policy_batch_max(pol);

	for (uint32_t q = pg + 1; q < end && n + 1 < max; q++) {
		if (pol->state[q] != DIMM_PG_DIRTY || pol->ref[q] ||
		    (skip_washed && (pol->pflags[q] & DIMM_PF_WASHED)))
			continue;
		out[n++] = q;
	}
	return n;
}

bool dimm_policy_may_retry(bool reset, unsigned tries, unsigned max, bool gone)
{
	return reset && !gone && tries < max;
}

enum dimm_fault_action dimm_policy_fault(struct dimm_policy *pol, uint32_t pg, bool wp,
					 bool failed)
{
	switch (pol->state[pg]) {
	case DIMM_PG_ABSENT:
		if (failed)
			return DIMM_FA_POISON;
		return pol->pflags[pg] & DIMM_PF_FRESH ? DIMM_FA_ZERO : DIMM_FA_FETCH;
	case DIMM_PG_FETCHING:
		return DIMM_FA_JOIN;
	case DIMM_PG_CLEAN:
		if (!wp)
			break;
		pol->state[pg] = DIMM_PG_DIRTY; /* first write: dirty from now on */
		pol->ref[pg] = 1;
		return DIMM_FA_FIRST_WRITE;
	case DIMM_PG_DIRTY:
		if (wp)
			return DIMM_FA_REWRITE;
		break;
	case DIMM_PG_EVICTING:
	case DIMM_PG_WRITING:
		return DIMM_FA_WAIT; /* after the write-back: then it is absent */
	default:
		break;
	}
	return DIMM_FA_SPURIOUS;
}

unsigned dimm_policy_readahead(struct dimm_policy *pol, uint32_t pg, unsigned max)
{
	unsigned w;

	if (!max)
		return 0;
	if (max > pol->budget / 4)
		max = pol->budget / 4 ? pol->budget / 4 : 1;
	if (pol->ra_win && pg >= pol->ra_lo && pg <= pol->ra_hi + 1)
		w = 2 * pol->ra_win;
	else if (pg == pol->ra_lo + 1)
		w = 1;
	else
		w = pol->ra_win / 2;
	pol->ra_win = w < max ? w : max;
	pol->ra_lo = pol->ra_hi = pg;
	return pol->ra_win;
}
