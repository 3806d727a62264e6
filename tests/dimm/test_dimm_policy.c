/* SPDX-License-Identifier: BSD-3-Clause
 * The pager's policy (lib/dimm/dimm_policy.c) without userfaultfd: known
 * answers for the budget (fixed, a percentage of the pages in use, the
 * floor and the cap), the span and the batch size; CLOCK's second chance
 * and its victims; the clean and dirty batches that go with a victim; the
 * readahead window; what a fault asks for in each page state; which
 * failures are sent again; the external mode's fresh pages; the
 * bookkeeping of installed and dropped pages (fresh pages stay fresh); a
 * run of faults against a budget, driven as the pager drives it, that
 * never holds more pages than the budget, writes back exactly the dirty
 * pages it evicts and loses no write; and a sync (lib/dimm/dimm_sync.c):
 * the pages it writes back, when its flush goes, what it cleans and drops,
 * its resends after a VL reset and its failures; the write-backs in flight
 * (lib/dimm/dimm_evict.c): slots and claim order, what a fetch that needs
 * room waits for, a batch's completions, resends, and what becomes of each
 * page at the end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dimm_evict.h"
#include "dimm_policy.h"
#include "dimm_sync.h"

#define DIMM_TEST_RETRIES 32u

static void test_budget(void **state)
{
	struct dimm_policy pol;

	(void)state;
	/* fixed: 0 or more than the mapping is the mapping */
	assert_int_equal(dimm_policy_init(&pol, 1000, 0, 0), 0);
	assert_int_equal(pol.budget, 1000);
	dimm_policy_fini(&pol);
	assert_int_equal(dimm_policy_init(&pol, 1000, 5000, 0), 0);
	assert_int_equal(pol.budget, 1000);
	dimm_policy_fini(&pol);
	assert_int_equal(dimm_policy_init(&pol, 1000, 100, 0), 0);
	assert_int_equal(pol.budget, 100);
	pol.in_use = 1000; /* no budget_pct: the pages in use do not matter */
	assert_int_equal(dimm_policy_budget_update(&pol), 100);
	dimm_policy_fini(&pol);

	/* 25 % of the pages in use, rounded up, at least the floor */
	assert_int_equal(dimm_policy_init(&pol, 10000, 0, 25), 0);
	pol.in_use = 0;
	assert_int_equal(dimm_policy_budget_update(&pol), DIMM_POLICY_MIN_BUDGET);
	pol.in_use = 1001;
	assert_int_equal(dimm_policy_budget_update(&pol), 251);
	pol.in_use = 10000;
	assert_int_equal(dimm_policy_budget_update(&pol), 2500);
	dimm_policy_fini(&pol);
	/* ... and at most the fixed budget */
	assert_int_equal(dimm_policy_init(&pol, 10000, 1000, 25), 0);
	pol.in_use = 8000;
	assert_int_equal(dimm_policy_budget_update(&pol), 1000);
	dimm_policy_fini(&pol);
}

static void test_span_and_batch(void **state)
{
	struct dimm_policy pol;

	(void)state;
	/* DIMM_EVICT_SCAN resident pages: 16 pages times mapping/budget, 16..256 */
	assert_int_equal(dimm_policy_init(&pol, 1024, 0, 0), 0);
	assert_int_equal(pol.evict_span, 16);
	assert_int_equal(dimm_policy_batch_max(&pol), DIMM_EVICT_BATCH);
	/* near the end of the mapping the span stops there */
	assert_int_equal(dimm_policy_span(&pol, 1020), 4);
	assert_int_equal(dimm_policy_span(&pol, 0), 16);
	dimm_policy_fini(&pol);
	assert_int_equal(dimm_policy_init(&pol, 1024, 256, 0), 0);
	assert_int_equal(pol.evict_span, 64);
	dimm_policy_fini(&pol);
	assert_int_equal(dimm_policy_init(&pol, 1024, 16, 0), 0);
	assert_int_equal(pol.evict_span, DIMM_EVICT_SPAN_MAX);
	/* an eighth of the budget: 2 of 16 */
	assert_int_equal(dimm_policy_batch_max(&pol), 2);
	dimm_policy_fini(&pol);
	/* at least the victim */
	assert_int_equal(dimm_policy_init(&pol, 1024, 3, 0), 0);
	assert_int_equal(dimm_policy_batch_max(&pol), 1);
	dimm_policy_fini(&pol);
}

static void test_install_drop(void **state)
{
	struct dimm_policy pol;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 16, 4, 0), 0);
	assert_false(dimm_policy_full(&pol));
	dimm_policy_installed(&pol, 1, false);
	dimm_policy_installed(&pol, 2, true);
	dimm_policy_installed(&pol, 3, false);
	assert_int_equal(pol.state[1], DIMM_PG_CLEAN);
	assert_int_equal(pol.state[2], DIMM_PG_DIRTY);
	assert_int_equal(pol.ref[2], 1);
	assert_int_equal(pol.mapped, 3);
	assert_false(dimm_policy_full(&pol));
	pol.reserved++; /* a fetch took the last slot */
	assert_true(dimm_policy_full(&pol));
	/* dropped: absent, unreferenced, only FRESH kept */
	pol.pflags[2] = DIMM_PF_FRESH | DIMM_PF_WASHED | DIMM_PF_SEEN;
	dimm_policy_dropped(&pol, 2);
	assert_int_equal(pol.state[2], DIMM_PG_ABSENT);
	assert_int_equal(pol.ref[2], 0);
	assert_int_equal(pol.pflags[2], DIMM_PF_FRESH);
	assert_int_equal(pol.mapped, 2);
	assert_false(dimm_policy_full(&pol));
	dimm_policy_fini(&pol);
}

static bool odd_only(void *arg, uint32_t pg)
{
	const struct dimm_policy *pol = arg;

	return (pg & 1) && pol->state[pg] != DIMM_PG_ABSENT;
}

static void test_clock(void **state)
{
	struct dimm_policy pol;
	uint64_t left;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 8, 0, 0), 0);
	/* nothing resident: two sweeps and no victim */
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), -1);
	assert_int_equal(left, 0);
	assert_int_equal(pol.hand, 17 % 8); /* the hand went round twice and one more */
	pol.hand = 0;
	for (uint32_t pg = 0; pg < 8; pg++)
		if (pg != 3)
			dimm_policy_installed(&pol, pg, pg == 5);
	pol.state[6] = DIMM_PG_POISONED;
	pol.state[7] = DIMM_PG_FETCHING;
	/* every page referenced: the first sweep takes the bits, the second
	 * finds page 0 */
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), 0);
	assert_int_equal(left, 2 * 8 + 1 - 9);
	for (uint32_t pg = 0; pg < 6; pg++)
		assert_int_equal(pol.ref[pg], 0);
	assert_int_equal(pol.ref[6], 1); /* not a candidate: its bit is not CLOCK's */
	/* the hand moved on: a page referenced since gets a second chance */
	pol.ref[1] = 1;
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), 2);
	assert_int_equal(pol.ref[1], 0);
	/* absent, poisoned and fetching pages are never victims; dirty ones are */
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), 4);
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), 5);
	assert_int_equal(pol.state[5], DIMM_PG_DIRTY);
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), 0);
	/* the caller says what a candidate is */
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, odd_only, &pol), 1);
	left = 2 * 8 + 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, odd_only, &pol), 5);
	/* the steps given are a bound */
	pol.hand = 0;
	left = 1;
	assert_int_equal(dimm_policy_clock(&pol, &left, odd_only, &pol), -1);
	dimm_policy_fini(&pol);
}

/* The cleaner's look ahead names the victims CLOCK then takes, in order:
 * random states and reference bits, the victims each dropped when taken. */
static void test_next_victims(void **state)
{
	struct dimm_policy pol;
	uint32_t ahead[64];
	uint64_t x = 0x243f6a8885a308d3ull, looked;

	(void)state;
	for (unsigned round = 0; round < 50; round++) {
		assert_int_equal(dimm_policy_init(&pol, 40, 0, 0), 0);
		for (uint32_t pg = 0; pg < 40; pg++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (x % 5 == 0)
				continue; /* absent */
			dimm_policy_installed(&pol, pg, x % 3 == 0);
			pol.ref[pg] = (x >> 8) % 2;
			if ((x >> 9) % 7 == 0)
				pol.state[pg] = DIMM_PG_FETCHING;
		}
		pol.hand = (uint32_t)(x >> 20) % 40;
		unsigned max = 1 + (unsigned)(x >> 30) % 40;
		unsigned n = dimm_policy_next_victims(&pol, max, NULL, NULL, ahead, &looked);

		assert_true(n <= max);
		assert_true(looked <= 2 * 40);
		for (unsigned k = 0; k < n; k++) {
			uint64_t left = 2 * 40 + 1;

			assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), ahead[k]);
			dimm_policy_dropped(&pol, ahead[k]);
		}
		if (n < max) { /* it found every candidate: none is left */
			uint64_t left = 2 * 40 + 1;

			assert_int_equal(dimm_policy_clock(&pol, &left, NULL, NULL), -1);
		}
		dimm_policy_fini(&pol);
	}
}

static void test_clean_want(void **state)
{
	struct dimm_policy pol;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 1000, 100, 0), 0);
	pol.mapped = 80;
	assert_int_equal(dimm_policy_clean_want(&pol, 16), 0); /* 20 free */
	pol.mapped = 84;
	assert_int_equal(dimm_policy_clean_want(&pol, 16), 0); /* 16 free */
	pol.reserved = 6;
	assert_int_equal(dimm_policy_clean_want(&pol, 16), 6); /* 10 free */
	pol.mapped = 100;
	assert_int_equal(dimm_policy_clean_want(&pol, 16), 16); /* none free */
	dimm_policy_fini(&pol);
}

static void test_clean_batch(void **state)
{
	struct dimm_policy pol;
	uint32_t v[DIMM_EVICT_BATCH];
	unsigned n;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 64, 0, 0), 0); /* span 16, batch 8 */
	for (uint32_t pg = 0; pg < 24; pg++) {
		dimm_policy_installed(&pol, pg, pg == 2);
		pol.ref[pg] = 0;
	}
	pol.ref[3] = 1;
	/* the victim, then the next clean unreferenced pages: not 2 (dirty),
	 * not 3 (referenced) */
	n = dimm_policy_clean_batch(&pol, 0, 64, v);
	assert_int_equal(n, 8);
	static const uint32_t want[] = { 0, 1, 4, 5, 6, 7, 8, 9 };

	assert_memory_equal(v, want, sizeof(want));
	/* only what the scan saw (known) */
	n = dimm_policy_clean_batch(&pol, 0, 5, v);
	assert_int_equal(n, 3);
	assert_int_equal(v[2], 4);
	/* only within the span: from 20, pages 20..35, of them 20..23 resident */
	n = dimm_policy_clean_batch(&pol, 20, 64, v);
	assert_int_equal(n, 4);
	assert_int_equal(v[3], 23);
	/* the victim beyond `known` goes alone */
	n = dimm_policy_clean_batch(&pol, 10, 10, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0], 10);
	dimm_policy_fini(&pol);
	/* a budget of 16: an eighth, two pages at once */
	assert_int_equal(dimm_policy_init(&pol, 64, 16, 0), 0);
	for (uint32_t pg = 0; pg < 8; pg++) {
		dimm_policy_installed(&pol, pg, false);
		pol.ref[pg] = 0;
	}
	assert_int_equal(dimm_policy_clean_batch(&pol, 0, 64, v), 2);
	dimm_policy_fini(&pol);
}

static void test_dirty_batch(void **state)
{
	struct dimm_policy pol;
	uint32_t v[DIMM_EVICT_BATCH];
	unsigned n;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 64, 0, 0), 0);
	for (uint32_t pg = 0; pg < 24; pg++) {
		dimm_policy_installed(&pol, pg, pg != 4);
		pol.ref[pg] = 0;
	}
	pol.ref[2] = 1;
	pol.pflags[3] = DIMM_PF_WASHED;
	/* not the victim itself, not 2 (referenced), not 4 (clean); 7 at most */
	n = dimm_policy_dirty_batch(&pol, 0, 64, false, v);
	assert_int_equal(n, DIMM_EVICT_BATCH - 1);
	static const uint32_t want[] = { 1, 3, 5, 6, 7, 8, 9 };

	assert_memory_equal(v, want, sizeof(want));
	/* wp-async: a page the cleaner washed waits for its second chance */
	n = dimm_policy_dirty_batch(&pol, 0, 64, true, v);
	assert_int_equal(n, DIMM_EVICT_BATCH - 1);
	assert_int_equal(v[1], 5);
	/* nothing beyond `known` */
	assert_int_equal(dimm_policy_dirty_batch(&pol, 0, 2, false, v), 1);
	assert_int_equal(dimm_policy_dirty_batch(&pol, 0, 1, false, v), 0);
	dimm_policy_fini(&pol);
}

/* Every page state against a read, a write-protect fault and the error
 * state: the action, and the state after it. */
static void test_fault(void **state)
{
	static const struct {
		uint8_t st, pf;
		bool wp, failed;
		enum dimm_fault_action want;
		uint8_t after;
	} cases[] = {
		{ DIMM_PG_ABSENT, 0, false, false, DIMM_FA_FETCH, DIMM_PG_ABSENT },
		{ DIMM_PG_ABSENT, 0, true, false, DIMM_FA_FETCH, DIMM_PG_ABSENT },
		{ DIMM_PG_ABSENT, DIMM_PF_FRESH, false, false, DIMM_FA_ZERO, DIMM_PG_ABSENT },
		{ DIMM_PG_ABSENT, 0, false, true, DIMM_FA_POISON, DIMM_PG_ABSENT },
		{ DIMM_PG_ABSENT, DIMM_PF_FRESH, false, true, DIMM_FA_POISON, DIMM_PG_ABSENT },
		{ DIMM_PG_FETCHING, 0, false, false, DIMM_FA_JOIN, DIMM_PG_FETCHING },
		{ DIMM_PG_FETCHING, 0, false, true, DIMM_FA_JOIN, DIMM_PG_FETCHING },
		{ DIMM_PG_CLEAN, 0, true, false, DIMM_FA_FIRST_WRITE, DIMM_PG_DIRTY },
		{ DIMM_PG_CLEAN, 0, false, false, DIMM_FA_SPURIOUS, DIMM_PG_CLEAN },
		{ DIMM_PG_DIRTY, 0, true, false, DIMM_FA_REWRITE, DIMM_PG_DIRTY },
		{ DIMM_PG_DIRTY, 0, false, false, DIMM_FA_SPURIOUS, DIMM_PG_DIRTY },
		{ DIMM_PG_EVICTING, 0, true, false, DIMM_FA_WAIT, DIMM_PG_EVICTING },
		{ DIMM_PG_EVICTING, 0, false, true, DIMM_FA_WAIT, DIMM_PG_EVICTING },
		{ DIMM_PG_WRITING, 0, false, false, DIMM_FA_WAIT, DIMM_PG_WRITING },
		{ DIMM_PG_POISONED, 0, false, false, DIMM_FA_SPURIOUS, DIMM_PG_POISONED },
		{ DIMM_PG_POISONED, 0, false, true, DIMM_FA_SPURIOUS, DIMM_PG_POISONED },
	};
	struct dimm_policy pol;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 4, 0, 0), 0);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pol.state[2] = cases[i].st;
		pol.pflags[2] = cases[i].pf;
		pol.ref[2] = 0;
		assert_int_equal(dimm_policy_fault(&pol, 2, cases[i].wp, cases[i].failed),
				 cases[i].want);
		assert_int_equal(pol.state[2], cases[i].after);
		/* a first write references the page: CLOCK passes it once */
		assert_int_equal(pol.ref[2], cases[i].want == DIMM_FA_FIRST_WRITE);
		assert_int_equal(pol.state[1], DIMM_PG_ABSENT); /* nothing else moved */
	}
	dimm_policy_fini(&pol);
}

/* External mode (htoe-dimm --run, lib/dimm_preload): every page starts
 * fresh, its first fault installs zeros and puts it in use, the budget
 * follows the pages in use (budget_pct), and a page the process gives back
 * is fresh again, dropped if it was resident. */
static void test_external(void **state)
{
	struct dimm_policy pol;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 1000, 0, 50), 0);
	dimm_policy_all_fresh(&pol);
	assert_int_equal(dimm_policy_budget_update(&pol), DIMM_POLICY_MIN_BUDGET);
	assert_int_equal(dimm_policy_fault(&pol, 7, false, false), DIMM_FA_ZERO);
	for (uint32_t pg = 0; pg < 300; pg++) {
		dimm_policy_installed(&pol, pg, true);
		assert_true(dimm_policy_in_use(&pol, pg));
		assert_false(dimm_policy_in_use(&pol, pg)); /* once */
	}
	assert_int_equal(pol.in_use, 300);
	assert_int_equal(pol.budget, 150);
	assert_int_equal(dimm_policy_fault(&pol, 7, false, false), DIMM_FA_SPURIOUS);
	/* a resident page given back: dropped, fresh */
	assert_int_equal(dimm_policy_given_back(&pol, 7), 2);
	assert_int_equal(pol.state[7], DIMM_PG_ABSENT);
	assert_int_equal(pol.pflags[7], DIMM_PF_FRESH);
	assert_int_equal(pol.mapped, 299);
	assert_int_equal(dimm_policy_fault(&pol, 7, true, false), DIMM_FA_ZERO);
	/* again: nothing changes */
	assert_int_equal(dimm_policy_given_back(&pol, 7), 0);
	assert_int_equal(pol.in_use, 299);
	/* a page evicted before (absent, not fresh: its data is remote) */
	dimm_policy_dropped(&pol, 8);
	assert_int_equal(dimm_policy_fault(&pol, 8, false, false), DIMM_FA_FETCH);
	assert_int_equal(dimm_policy_given_back(&pol, 8), 1);
	assert_int_equal(dimm_policy_fault(&pol, 8, false, false), DIMM_FA_ZERO);
	assert_int_equal(pol.mapped, 298);
	/* a page being written back keeps its state: the write-back finishes */
	pol.state[9] = DIMM_PG_EVICTING;
	assert_int_equal(dimm_policy_given_back(&pol, 9), 1);
	assert_int_equal(pol.state[9], DIMM_PG_EVICTING);
	assert_int_equal(pol.in_use, 297);
	/* the budget follows: half of 297, rounded up */
	assert_int_equal(dimm_policy_budget_update(&pol), 149);
	for (uint32_t pg = 10; pg < 300; pg++)
		dimm_policy_given_back(&pol, pg);
	assert_int_equal(dimm_policy_budget_update(&pol), DIMM_POLICY_MIN_BUDGET);
	dimm_policy_fini(&pol);
}

/* A failure a warm VL reset causes is sent again, max times in a row at
 * most; never another failure, never once the lease is gone. */
static void test_retry(void **state)
{
	(void)state;
	for (unsigned t = 0; t < DIMM_TEST_RETRIES; t++)
		assert_true(dimm_policy_may_retry(true, t, DIMM_TEST_RETRIES, false));
	assert_false(dimm_policy_may_retry(true, DIMM_TEST_RETRIES, DIMM_TEST_RETRIES, false));
	assert_false(dimm_policy_may_retry(true, 0, DIMM_TEST_RETRIES, true));
	assert_false(dimm_policy_may_retry(false, 0, DIMM_TEST_RETRIES, false));
	assert_false(dimm_policy_may_retry(true, 0, 0, false));
}

static void test_readahead(void **state)
{
	struct dimm_policy pol;

	(void)state;
	assert_int_equal(dimm_policy_init(&pol, 4096, 64, 0), 0); /* a quarter: 16 */
	/* off: nothing changes */
	assert_int_equal(dimm_policy_readahead(&pol, 100, 0), 0);
	assert_int_equal(pol.ra_lo, 0);
	/* a first fault reads nothing ahead; the next page starts a window of 1 */
	assert_int_equal(dimm_policy_readahead(&pol, 100, 8), 0);
	assert_int_equal(dimm_policy_readahead(&pol, 101, 8), 1);
	pol.ra_hi = 102;
	/* a sweep doubles it up to max */
	assert_int_equal(dimm_policy_readahead(&pol, 103, 8), 2);
	pol.ra_hi = 105;
	assert_int_equal(dimm_policy_readahead(&pol, 105, 8), 4);
	pol.ra_hi = 109;
	assert_int_equal(dimm_policy_readahead(&pol, 110, 8), 8);
	pol.ra_hi = 118;
	assert_int_equal(dimm_policy_readahead(&pol, 119, 8), 8);
	pol.ra_hi = 127;
	/* a random fault halves it, and again */
	assert_int_equal(dimm_policy_readahead(&pol, 3000, 8), 4);
	assert_int_equal(dimm_policy_readahead(&pol, 50, 8), 2);
	dimm_policy_fini(&pol);
	/* at most a quarter of the budget (at least one page) */
	assert_int_equal(dimm_policy_init(&pol, 4096, 3, 0), 0);
	assert_int_equal(dimm_policy_readahead(&pol, 1, 8), 1);
	pol.ra_hi = 2;
	assert_int_equal(dimm_policy_readahead(&pol, 3, 8), 1);
	dimm_policy_fini(&pol);
}

/*
 * Eviction under a budget, driven as the pager drives the policy (one
 * fault at a time, served at once): a fault on an absent page needs a
 * slot; when the budget is full, CLOCK names a victim; a clean one goes
 * with its clean batch (given back, no write-back), a dirty one with its
 * dirty batch (written back: the model's remote image takes the page's
 * content, then the pages are given back). A write makes a resident page
 * dirty. The model checks, at every step, that the resident pages never
 * exceed the budget and that every page reads what was last written to it
 * (from memory when resident, else from the remote image).
 */
#define M_PAGES  96u
#define M_BUDGET 24u

struct model {
	struct dimm_policy pol;
	uint32_t local[M_PAGES], remote[M_PAGES];
	uint64_t writebacks, drops, clean_drops, faults;
};

static void m_evict(struct model *m)
{
	uint64_t left = 2ull * M_PAGES + 1;
	int64_t v = dimm_policy_clock(&m->pol, &left, NULL, NULL);
	uint32_t b[DIMM_EVICT_BATCH];
	unsigned n;

	assert_true(v >= 0);
	if (m->pol.state[v] == DIMM_PG_CLEAN) {
		n = dimm_policy_clean_batch(&m->pol, (uint32_t)v, M_PAGES, b);
		for (unsigned k = 0; k < n; k++) {
			assert_int_equal(m->pol.state[b[k]], DIMM_PG_CLEAN);
			assert_int_equal(m->local[b[k]], m->remote[b[k]]);
		}
		m->clean_drops += n;
	} else {
		b[0] = (uint32_t)v;
		n = 1 + dimm_policy_dirty_batch(&m->pol, (uint32_t)v, M_PAGES, false, b + 1);
		for (unsigned k = 0; k < n; k++) {
			assert_int_equal(m->pol.state[b[k]], DIMM_PG_DIRTY);
			m->remote[b[k]] = m->local[b[k]]; /* the write-back */
		}
		m->writebacks += n;
	}
	assert_true(n <= dimm_policy_batch_max(&m->pol));
	for (unsigned k = 0; k < n; k++) {
		m->local[b[k]] = 0xdeadbeef; /* given back: the memory is gone */
		dimm_policy_dropped(&m->pol, b[k]);
	}
	m->drops += n;
}

static void m_access(struct model *m, uint32_t pg, bool write, uint32_t val)
{
	if (m->pol.state[pg] == DIMM_PG_ABSENT) {
		assert_int_equal(dimm_policy_fault(&m->pol, pg, false, false), DIMM_FA_FETCH);
		m->faults++;
		if (dimm_policy_full(&m->pol))
			m_evict(m);
		assert_false(dimm_policy_full(&m->pol));
		m->local[pg] = m->remote[pg]; /* the fetch */
		dimm_policy_installed(&m->pol, pg, write);
	} else {
		m->pol.ref[pg] = 1;
		if (write && m->pol.state[pg] == DIMM_PG_CLEAN) /* the write-protect fault */
			assert_int_equal(dimm_policy_fault(&m->pol, pg, true, false),
					 DIMM_FA_FIRST_WRITE);
	}
	assert_true(m->pol.mapped <= m->pol.budget);
	if (write)
		m->local[pg] = val;
}

static void test_eviction_model(void **state)
{
	static struct model m;
	static uint32_t shadow[M_PAGES];
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	memset(&m, 0, sizeof(m));
	memset(shadow, 0, sizeof(shadow));
	assert_int_equal(dimm_policy_init(&m.pol, M_PAGES, M_BUDGET, 0), 0);
	/* a read-only sweep: every eviction is a clean drop */
	for (uint32_t pg = 0; pg < M_PAGES; pg++)
		m_access(&m, pg, false, 0);
	assert_int_equal(m.faults, M_PAGES);
	assert_int_equal(m.writebacks, 0);
	assert_true(m.clean_drops >= M_PAGES - M_BUDGET);
	/* a mix: a hot set of 8 pages, random others, a third of them writes */
	for (unsigned i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t pg = (uint32_t)(x % 4 ? x % 8 : (x >> 8) % M_PAGES);
		bool write = (x >> 20) % 3 == 0;

		m_access(&m, pg, write, (uint32_t)(x >> 32));
		if (write)
			shadow[pg] = (uint32_t)(x >> 32);
		uint32_t q = (uint32_t)(x >> 40) % M_PAGES; /* any page reads its last write */

		assert_int_equal(m.pol.state[q] == DIMM_PG_ABSENT ? m.remote[q] : m.local[q], shadow[q]);
	}
	assert_true(m.writebacks > 0);
	assert_true(m.clean_drops > M_PAGES - M_BUDGET);
	/* every page is what was last written to it */
	for (uint32_t pg = 0; pg < M_PAGES; pg++)
		assert_int_equal(m.pol.state[pg] == DIMM_PG_ABSENT ? m.remote[pg] : m.local[pg],
				 shadow[pg]);
	/* the hot set stayed resident (CLOCK keeps referenced pages) */
	unsigned hot = 0;

	for (uint32_t pg = 0; pg < 8; pg++)
		hot += m.pol.state[pg] != DIMM_PG_ABSENT;
	assert_true(hot >= 6);
	dimm_policy_fini(&m.pol);
}

/* ---------------------------------------------------------------- sync */

/* 10 pages: 2, 5 and 7 dirty, 3 clean, the rest absent. */
static void sync_setup(struct dimm_policy *pol, struct dimm_sync *s)
{
	assert_int_equal(dimm_policy_init(pol, 10, 0, 0), 0);
	assert_int_equal(dimm_sync_init(s, 10), 0);
	dimm_policy_installed(pol, 2, true);
	dimm_policy_installed(pol, 3, false);
	dimm_policy_installed(pol, 5, true);
	dimm_policy_installed(pol, 7, true);
}

static void sync_teardown(struct dimm_policy *pol, struct dimm_sync *s)
{
	dimm_sync_fini(s);
	dimm_policy_fini(pol);
}

/* Send every write-back the sync asks for (completing none); returns
 * how many, their pages into out. */
static unsigned sync_send_all(struct dimm_sync *s, struct dimm_policy *pol, unsigned max,
			      uint32_t *out)
{
	unsigned n = 0;
	uint32_t pg;

	while (dimm_sync_next(s, pol, max, false, &pg) == DIMM_SYNC_WRITE) {
		out[n++] = pg;
		dimm_sync_sent(s, pol, pg);
	}
	return n;
}

/* A sync writes back exactly the dirty pages, in order, at most max in
 * flight; the flush goes once every write-back is confirmed and no
 * eviction is in flight; at its end the pages it wrote back are clean
 * (dirty tracking), a page written after its write-back went is not, and
 * without dirty tracking they stay dirty. */
static void test_sync_writes_then_flushes(void **state)
{
	struct dimm_policy pol;
	struct dimm_sync s;
	uint32_t pg, sent[10];

	(void)state;
	sync_setup(&pol, &s);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WAIT); /* idle */
	assert_true(dimm_sync_begin(&s, 0, false, false));
	assert_false(dimm_sync_begin(&s, 0, false, false)); /* one at a time */
	pol.pflags[2] = DIMM_PF_WASHED;
	/* two in flight at most */
	assert_int_equal(sync_send_all(&s, &pol, 2, sent), 2);
	assert_int_equal(sent[0], 2);
	assert_int_equal(sent[1], 5);
	assert_int_equal(pol.pflags[2], 0); /* a sync's write-back is no cleaner's */
	dimm_sync_done(&s, 0, 0);
	assert_int_equal(sync_send_all(&s, &pol, 2, sent), 1);
	assert_int_equal(sent[0], 7);
	assert_int_equal(dimm_sync_next(&s, &pol, 2, false, &pg), DIMM_SYNC_WAIT);
	dimm_sync_done(&s, 0, 0);
	dimm_sync_done(&s, 0, 0);
	/* an eviction in flight is confirmed by its own flush first */
	assert_int_equal(dimm_sync_next(&s, &pol, 2, true, &pg), DIMM_SYNC_WAIT);
	assert_int_equal(dimm_sync_next(&s, &pol, 2, false, &pg), DIMM_SYNC_FLUSH);
	/* not submitted: asked again */
	assert_int_equal(dimm_sync_next(&s, &pol, 2, false, &pg), DIMM_SYNC_FLUSH);
	dimm_sync_flush_sent(&s);
	assert_int_equal(s.phase, DIMM_SYNC_FLUSHING);
	assert_int_equal(dimm_sync_next(&s, &pol, 2, false, &pg), DIMM_SYNC_WAIT);
	dimm_policy_installed(&pol, 9, true); /* written after the sync looked */
	dimm_sync_done(&s, 0, 0);
	assert_int_equal(dimm_sync_next(&s, &pol, 2, false, &pg), DIMM_SYNC_END);
	assert_false(dimm_sync_retry(&s, true, DIMM_TEST_RETRIES, false)); /* it did not fail */
	for (pg = 0; pg < 10; pg++)
		assert_int_equal(dimm_sync_page(&s, &pol, pg, true, false), DIMM_SYNC_PG_KEEP);
	assert_int_equal(dimm_sync_finish(&s), 0);
	assert_int_equal(s.phase, DIMM_SYNC_IDLE);
	assert_int_equal(pol.state[2], DIMM_PG_CLEAN);
	assert_int_equal(pol.state[3], DIMM_PG_CLEAN);
	assert_int_equal(pol.state[5], DIMM_PG_CLEAN);
	assert_int_equal(pol.state[7], DIMM_PG_CLEAN);
	assert_int_equal(pol.state[9], DIMM_PG_DIRTY);
	for (pg = 0; pg < 10; pg++)
		assert_int_equal(s.mark[pg], 0);

	/* without dirty tracking nothing says a page stays unwritten: dirty */
	assert_true(dimm_sync_begin(&s, 0, false, false));
	assert_int_equal(sync_send_all(&s, &pol, 64, sent), 1);
	assert_int_equal(sent[0], 9);
	dimm_sync_done(&s, 0, 0);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_FLUSH);
	dimm_sync_flush_sent(&s);
	dimm_sync_done(&s, 0, 0);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
	for (pg = 0; pg < 10; pg++)
		dimm_sync_page(&s, &pol, pg, false, false);
	assert_int_equal(dimm_sync_finish(&s), 0);
	assert_int_equal(pol.state[9], DIMM_PG_DIRTY);

	/* wp-async: not while an eviction is in flight (its page is scanned
	 * when it is over) */
	assert_false(dimm_sync_begin(&s, 0, true, true));
	assert_true(dimm_sync_begin(&s, 0, false, true));
	sync_teardown(&pol, &s);
}

/* A sync with drop gives back what it synced and the clean pages, never a
 * page written since its write-back went; a page evicted meanwhile is the
 * eviction's. */
static void test_sync_drop(void **state)
{
	struct dimm_policy pol;
	struct dimm_sync s;
	uint32_t pg, sent[10];
	unsigned dropped = 0;

	(void)state;
	for (int wp = 0; wp < 2; wp++) {
		sync_setup(&pol, &s);
		assert_true(dimm_sync_begin(&s, 0, false, false));
		assert_int_equal(sync_send_all(&s, &pol, 64, sent), 3);
		/* page 7 is evicted (its write-back of its own) before the end */
		dimm_sync_forget(&s, 7);
		pol.state[7] = DIMM_PG_EVICTING;
		for (unsigned k = 0; k < 3; k++)
			dimm_sync_done(&s, 0, 0);
		assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_FLUSH);
		dimm_sync_flush_sent(&s);
		dimm_sync_done(&s, 0, 0);
		dimm_policy_installed(&pol, 8, true); /* written meanwhile */
		assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
		dropped = 0;
		for (pg = 0; pg < 10; pg++) {
			enum dimm_sync_page_do d = dimm_sync_page(&s, &pol, pg, wp, true);

			assert_true(d == DIMM_SYNC_PG_KEEP || d == DIMM_SYNC_PG_DROP);
			if (d == DIMM_SYNC_PG_DROP) {
				dropped |= 1u << pg;
				dimm_policy_dropped(&pol, pg);
			}
		}
		assert_int_equal(dimm_sync_finish(&s), 0);
		/* wp: 2, 5 (synced) and 3 (clean); without: also 8, dirty (no
		 * dirty tracking: the process stopped writing before it synced) */
		assert_int_equal(dropped, wp ? (1u << 2 | 1u << 3 | 1u << 5)
					     : (1u << 2 | 1u << 3 | 1u << 5 | 1u << 8));
		assert_int_equal(pol.state[7], DIMM_PG_EVICTING);
		assert_int_equal(pol.state[8], wp ? DIMM_PG_DIRTY : DIMM_PG_ABSENT);
		sync_teardown(&pol, &s);
	}
}

/* A write-back a VL reset hit: the whole sync again (every page still
 * dirty sent again, then a new flush), max times in a row; then the sync
 * fails: its pages stay dirty and are made writable again, none dropped.
 * Never again once the lease is gone, nor for another failure. */
static void test_sync_failure_retry(void **state)
{
	struct dimm_policy pol;
	struct dimm_sync s;
	uint32_t pg, sent[10];
	const unsigned max = 2;

	(void)state;
	sync_setup(&pol, &s);
	assert_true(dimm_sync_begin(&s, 0, false, false));
	for (unsigned round = 0; round <= max; round++) {
		assert_int_equal(sync_send_all(&s, &pol, 64, sent), 3);
		assert_int_equal(sent[0], 2);
		dimm_sync_done(&s, 0, 0);
		dimm_sync_done(&s, -EPIPE, 0);
		/* a failed sync sends nothing more, and no flush */
		assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WAIT);
		dimm_sync_done(&s, -EIO, 7); /* the first failure is the status */
		assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
		assert_int_equal(s.st, -EPIPE);
		assert_int_equal(s.ht_err, 0);
		assert_int_equal(s.retries, round);
		if (round < max)
			assert_true(dimm_sync_retry(&s, true, max, false));
	}
	assert_false(dimm_sync_retry(&s, true, max, false));
	for (pg = 0; pg < 10; pg++)
		assert_int_equal(dimm_sync_page(&s, &pol, pg, true, true),
				 pg == 2 || pg == 5 || pg == 7 ? DIMM_SYNC_PG_UNPROTECT
								: DIMM_SYNC_PG_KEEP);
	assert_int_equal(dimm_sync_finish(&s), -EPIPE);
	assert_int_equal(pol.state[2], DIMM_PG_DIRTY);
	assert_int_equal(pol.state[3], DIMM_PG_CLEAN); /* not dropped */

	/* the lease gone, or no reset: not again */
	assert_true(dimm_sync_begin(&s, 0, false, false));
	assert_int_equal(sync_send_all(&s, &pol, 64, sent), 3);
	for (unsigned k = 0; k < 3; k++)
		dimm_sync_done(&s, -EPIPE, 0);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
	assert_false(dimm_sync_retry(&s, true, max, true));
	assert_false(dimm_sync_retry(&s, false, max, false));
	for (pg = 0; pg < 10; pg++)
		dimm_sync_page(&s, &pol, pg, false, false);
	assert_int_equal(dimm_sync_finish(&s), -EPIPE);

	/* no descriptor now: the same page is asked for again; another
	 * failure to submit fails the sync (no flush, nothing more) */
	assert_true(dimm_sync_begin(&s, 0, false, false));
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WRITE);
	assert_int_equal(pg, 2);
	dimm_sync_unsent(&s, -EAGAIN);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WRITE);
	assert_int_equal(pg, 2);
	dimm_sync_sent(&s, &pol, pg);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WRITE);
	assert_int_equal(pg, 5);
	dimm_sync_unsent(&s, -ENOLINK);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_WAIT);
	dimm_sync_done(&s, 0, 0);
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
	assert_false(dimm_sync_retry(&s, false, max, true));
	for (pg = 0; pg < 10; pg++)
		assert_int_equal(dimm_sync_page(&s, &pol, pg, true, false),
				 pg == 2 ? DIMM_SYNC_PG_UNPROTECT : DIMM_SYNC_PG_KEEP);
	assert_int_equal(dimm_sync_finish(&s), -ENOLINK);

	/* in the error state: over at once with it, nothing sent */
	assert_true(dimm_sync_begin(&s, -ENOLINK, false, false));
	assert_int_equal(dimm_sync_next(&s, &pol, 64, false, &pg), DIMM_SYNC_END);
	assert_false(dimm_sync_retry(&s, false, max, true));
	for (pg = 0; pg < 10; pg++)
		assert_int_equal(dimm_sync_page(&s, &pol, pg, true, true), DIMM_SYNC_PG_KEEP);
	assert_int_equal(dimm_sync_finish(&s), -ENOLINK);
	sync_teardown(&pol, &s);
}

/* ------------------------------------------------------------- evictions */

/* 64 pages, all dirty, and an empty slot table. */
static void evict_setup(struct dimm_policy *pol, struct dimm_evicts *t)
{
	assert_int_equal(dimm_policy_init(pol, 64, 0, 0), 0);
	for (uint32_t pg = 0; pg < 64; pg++)
		dimm_policy_installed(pol, pg, true);
	memset(t, 0, sizeof(*t));
	dimm_evicts_init(t);
}

/* Slots are taken first free first, in claim order; what a fetch that
 * needs room waits for: a batch's write-back nobody waits for (never the
 * cleaner's), else, when dirty victims are copied and no slot is free, the
 * OLDEST copied one (claim order, not slot order); nothing when a slot is
 * free or without copies (a victim is evicted instead). */
static void test_evict_slots(void **state)
{
	struct dimm_policy pol;
	struct dimm_evicts t;
	struct dimm_evict *e;

	(void)state;
	evict_setup(&pol, &t);
	assert_int_equal(dimm_evict_free_slot(&t), 0);
	assert_int_equal(dimm_evict_to_wait_for(&t, true), -1);
	pol.pflags[10] = DIMM_PF_WASHED;
	e = dimm_evict_claim(&t, 0, &pol, 10, false);
	assert_ptr_equal(e, &t.slot[0]);
	assert_int_equal(e->seq, 1);
	assert_int_equal(e->waiter, -1);
	assert_int_equal(pol.state[10], DIMM_PG_EVICTING);
	assert_int_equal(pol.pflags[10], 0);
	assert_int_equal(dimm_evict_free_slot(&t), 1);
	/* a batch's write-back nobody waits for */
	assert_int_equal(dimm_evict_to_wait_for(&t, false), 0);
	t.slot[0].waiter = 3;
	assert_int_equal(dimm_evict_to_wait_for(&t, false), -1);
	dimm_evict_unwait(&t, 3);
	assert_int_equal(t.slot[0].waiter, -1);
	t.slot[0].keep = true; /* the cleaner's: the eviction takes it over itself */
	assert_int_equal(dimm_evict_to_wait_for(&t, true), -1);
	assert_ptr_equal(dimm_evict_cleaning(&t, 10), &t.slot[0]);
	assert_null(dimm_evict_cleaning(&t, 11));
	assert_int_equal(dimm_evict_in_flight(&t, true), 1);

	/* the other 15 slots: copied write-backs, claimed in an order that is
	 * not the slots' */
	for (unsigned i = DIMM_N_EVICT - 1; i >= 1; i--) {
		e = dimm_evict_claim(&t, i, &pol, 20 + i, false);
		e->copied = true;
	}
	assert_int_equal(dimm_evict_free_slot(&t), -1);
	assert_int_equal(dimm_evict_in_flight(&t, false), DIMM_N_EVICT);
	assert_int_equal(dimm_evict_in_flight(&t, true), 1);
	assert_int_equal(dimm_evict_to_wait_for(&t, true), DIMM_N_EVICT - 1); /* the oldest */
	assert_int_equal(dimm_evict_to_wait_for(&t, false), -1); /* no copies: evict */
	t.slot[DIMM_N_EVICT - 1].waiter = 0;
	assert_int_equal(dimm_evict_to_wait_for(&t, true), DIMM_N_EVICT - 2);
	/* a slot frees: take it instead of waiting */
	dimm_evict_over(&t.slot[5]);
	assert_int_equal(dimm_evict_free_slot(&t), 5);
	assert_int_equal(dimm_evict_to_wait_for(&t, true), -1);
	e = dimm_evict_claim(&t, 5, &pol, 40, false);
	assert_int_equal(e->seq, DIMM_N_EVICT + 1);
	/* a batch's (not copied) comes before any copied one */
	assert_int_equal(dimm_evict_to_wait_for(&t, true), 5);
	dimm_policy_fini(&pol);
}

/* A batch: each page's write and ONE flush, led by its first slot; a
 * write-back is over once both are answered; the first failure is its
 * status; a flush counts only for the write-backs it leads; something
 * that could not be submitted counts as answered, failed. Resends: at most
 * max in a row, none once the lease is gone or for another failure. */
static void test_evict_completions(void **state)
{
	struct dimm_policy pol;
	struct dimm_evicts t;
	struct dimm_evict *es[4], *done[DIMM_N_EVICT];

	(void)state;
	evict_setup(&pol, &t);
	for (unsigned k = 0; k < 4; k++)
		es[k] = dimm_evict_claim(&t, (unsigned)dimm_evict_free_slot(&t), &pol, 2 * k, false);
	dimm_evict_submitting(&t, es + 1, 3); /* a batch led by slot 1 */
	dimm_evict_submitting(&t, es, 1);     /* slot 0 alone */
	assert_int_equal(es[3]->lead, 1);
	assert_int_equal(es[3]->left, 2);
	assert_false(dimm_evict_write_done(es[1], 0, 0));
	assert_false(dimm_evict_write_done(es[2], 0, 0));
	/* the batch's flush: slots 1 and 2 are over, 3 waits for its write;
	 * slot 0 has its own flush */
	assert_int_equal(dimm_evict_flush_done(&t, 1, -EPIPE, 0, done), 2);
	assert_ptr_equal(done[0], es[1]);
	assert_ptr_equal(done[1], es[2]);
	assert_int_equal(es[1]->status, -EPIPE);
	assert_int_equal(es[0]->left, 2);
	assert_int_equal(es[0]->status, 0);
	assert_true(dimm_evict_write_done(es[3], -EIO, 5));
	assert_int_equal(es[3]->status, -EPIPE); /* the first failure */
	assert_int_equal(dimm_evict_flush_done(&t, 1, 0, 0, done), 0); /* nothing led any more */
	/* slot 0: its write not submitted, then its flush neither */
	dimm_evict_write_unsent(es[0], -EAGAIN);
	assert_int_equal(es[0]->left, 1);
	dimm_evict_flush_unsent(es, 1, -ENOLINK);
	assert_int_equal(es[0]->left, 0);
	assert_false(es[0]->flushing);
	assert_int_equal(es[0]->status, -EAGAIN);

	/* resends */
	for (unsigned k = 0; k < 2; k++)
		assert_true(dimm_evict_retry(es[1], true, 2, false));
	assert_int_equal(es[1]->retries, 2);
	assert_false(dimm_evict_retry(es[1], true, 2, false));
	assert_false(dimm_evict_retry(es[2], true, 2, true));
	assert_false(dimm_evict_retry(es[2], false, 2, false));
	assert_int_equal(es[2]->retries, 0);
	/* a new claim starts with no resends */
	dimm_evict_over(es[1]);
	assert_int_equal(dimm_evict_claim(&t, 1, &pol, 50, false)->retries, 0);

	/* run to completion: quiet when every one that succeeded was scanned
	 * while the application was stopped and nobody resumed since */
	es[0]->status = 0;
	es[0]->quiet = true;
	es[0]->res0 = 7;
	es[2]->status = -EIO; /* failed: its page stays, whatever was written */
	assert_true(dimm_evict_quiet(es, 1, 7));
	assert_false(dimm_evict_quiet(es, 1, 8));
	assert_true(dimm_evict_quiet(es + 2, 1, 8));
	es[2]->status = 0;
	assert_false(dimm_evict_quiet(es, 3, 7)); /* es[2] was not scanned so */
	dimm_policy_fini(&pol);
}

/* What becomes of a page when its write-back is over, in each case, and
 * whether the fetch that waited for its slot has it. */
static void test_evict_end(void **state)
{
	struct dimm_policy pol;
	struct dimm_evicts t;
	struct dimm_evict *e;

	(void)state;
	evict_setup(&pol, &t);
	/* copied (dropped at once, DIMM_PG_WRITING): absent, or restored */
	for (int c = 0; c < 3; c++) {
		e = dimm_evict_claim(&t, 0, &pol, 1, false);
		e->copied = true;
		pol.state[1] = DIMM_PG_WRITING;
		e->status = c == 1 ? -ENOLINK : 0;
		dimm_evict_over(e);
		assert_int_equal(dimm_evict_end(e, &pol, c == 2, true, false, false),
				 c == 0 ? DIMM_EV_ABSENT : DIMM_EV_RESTORE);
		assert_int_equal(pol.state[1], DIMM_PG_ABSENT);
		/* its slot was free already: the waiter makes room again */
		e->waiter = 0;
		assert_false(dimm_evict_room_for_waiter(e, &pol));
	}
	/* failed, or the pager in its error state: the data stays, dirty */
	e = dimm_evict_claim(&t, 0, &pol, 2, false);
	e->status = -ENOLINK;
	dimm_evict_over(e);
	assert_int_equal(dimm_evict_end(e, &pol, false, true, false, false), DIMM_EV_FAILED);
	assert_int_equal(pol.state[2], DIMM_PG_DIRTY);
	e = dimm_evict_claim(&t, 0, &pol, 2, true);
	e->status = 0;
	assert_int_equal(dimm_evict_end(e, &pol, true, true, true, true), DIMM_EV_FAILED);
	assert_int_equal(pol.state[2], DIMM_PG_DIRTY);
	/* wp-async: written meanwhile (or the scan failed): stays, dirty and
	 * referenced, even the cleaner's */
	for (int c = 0; c < 2; c++) {
		e = dimm_evict_claim(&t, 0, &pol, 3, c == 0);
		e->status = 0;
		pol.ref[3] = 0;
		if (c == 0)
			pol.pflags[3] |= DIMM_PF_WRITTEN;
		assert_int_equal(dimm_evict_end(e, &pol, false, true, true, c == 1), DIMM_EV_DIRTY);
		assert_int_equal(pol.state[3], DIMM_PG_DIRTY);
		assert_int_equal(pol.ref[3], 1);
	}
	/* without wp-async a write flag means nothing here */
	e = dimm_evict_claim(&t, 0, &pol, 4, false);
	pol.pflags[4] = DIMM_PF_WRITTEN;
	e->status = 0;
	assert_int_equal(dimm_evict_end(e, &pol, false, true, false, true), DIMM_EV_DROP);
	/* the cleaner's: resident, clean, washed, seen */
	e = dimm_evict_claim(&t, 0, &pol, 5, true);
	e->status = 0;
	assert_int_equal(dimm_evict_end(e, &pol, false, false, true, false), DIMM_EV_WASHED);
	assert_int_equal(pol.state[5], DIMM_PG_CLEAN);
	assert_int_equal(pol.pflags[5], DIMM_PF_WASHED | DIMM_PF_SEEN);
	/* an eviction that may not drop now: clean, resident; its waiter
	 * makes room again */
	e = dimm_evict_claim(&t, 0, &pol, 6, false);
	e->status = 0;
	e->waiter = 2;
	assert_int_equal(dimm_evict_end(e, &pol, false, false, true, false), DIMM_EV_KEPT);
	assert_int_equal(pol.state[6], DIMM_PG_CLEAN);
	assert_false(dimm_evict_room_for_waiter(e, &pol));
	/* dropped: the waiter has the slot it frees */
	e = dimm_evict_claim(&t, 0, &pol, 7, false);
	e->status = 0;
	e->waiter = 2;
	assert_int_equal(dimm_evict_end(e, &pol, false, true, true, false), DIMM_EV_DROP);
	assert_int_equal(pol.state[7], DIMM_PG_EVICTING); /* until the shell drops it */
	unsigned reserved = pol.reserved;

	dimm_policy_dropped(&pol, 7);
	assert_true(dimm_evict_room_for_waiter(e, &pol));
	assert_int_equal(pol.reserved, reserved + 1);
	dimm_policy_fini(&pol);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_span_and_batch),
		cmocka_unit_test(test_install_drop),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_next_victims),
		cmocka_unit_test(test_clean_want),
		cmocka_unit_test(test_clean_batch),
		cmocka_unit_test(test_dirty_batch),
		cmocka_unit_test(test_fault),
		cmocka_unit_test(test_external),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_readahead),
		cmocka_unit_test(test_eviction_model),
		cmocka_unit_test(test_sync_writes_then_flushes),
		cmocka_unit_test(test_sync_drop),
		cmocka_unit_test(test_sync_failure_retry),
		cmocka_unit_test(test_evict_slots),
		cmocka_unit_test(test_evict_completions),
		cmocka_unit_test(test_evict_end),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
