/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of lib/htoe/htoe_tagremap: pending-request table (target side),
 * outstanding table (requester side) and poisoned responses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "htmodel/ht_rand.h"
#include "htoe/htoe_outstanding.h"
#include "htoe/htoe_poison.h"
#include "htoe/htoe_tagremap.h"

static struct htoe_tagremap g_tr;      /* large: static */
static struct htoe_outstanding g_out;

static struct htoe_pending_entry pend(uint8_t u, uint8_t t, uint16_t vl)
{
	struct htoe_pending_entry p;
	memset(&p, 0, sizeof(p));
	p.orig_unitid = u;
	p.orig_srctag = t;
	p.vl = vl;
	p.epoch = (uint8_t)(vl + 100);
	p.np.kind = HT_K_RDSIZED;
	p.np.rsp_count = 7;
	p.np.rsp_passpw = 1;
	p.deadline = 12345;
	return p;
}

static void tr_init(uint8_t base, uint8_t n)
{
	assert_int_equal(htoe_tagremap_init(&g_tr, base, n), 0);
}

/* ---- (a) pending-request table -------------------------------------------- */

static void test_tr_init_invalid(void **state)
{
	(void)state;
	assert_int_equal(htoe_tagremap_init(&g_tr, 8, 0), -EINVAL);
	assert_int_equal(htoe_tagremap_init(&g_tr, 8, 25), -EINVAL); /* 8 + 25 > 32 */
	assert_int_equal(htoe_tagremap_init(&g_tr, 8, 24), 0);
	assert_int_equal(htoe_tagremap_capacity(&g_tr), 24 * 32);
	assert_int_equal(htoe_tagremap_init(&g_tr, 0, 32), 0);
	assert_int_equal(htoe_tagremap_capacity(&g_tr), HTOE_TAG_MAX);
	assert_int_equal(htoe_tagremap_init(NULL, 1, 1), -EINVAL);
}

static void test_tr_alloc_until_full(void **state)
{
	(void)state;
	tr_init(8, 1);
	assert_int_equal(htoe_tagremap_capacity(&g_tr), 32);
	/* many remote requesters use the same (UnitID, SrcTag): all remapped */
	for (int i = 0; i < 32; i++) {
		struct htoe_pending_entry p = pend(3, 5, (uint16_t)i);
		uint8_t u = 0xFF, t = 0xFF;
		assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
		assert_int_equal(u, 8);
		assert_int_equal(t, i); /* deterministic order */
	}
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 32);
	struct htoe_pending_entry p = pend(1, 1, 99);
	uint8_t u, t;
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), -EAGAIN);
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), -EAGAIN);
	assert_int_equal(g_tr.stats.full, 2);
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 32);

	/* the response for local tag (8, 17) restores VL 17's request */
	struct htoe_pending_entry out;
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 17, &out), 0);
	assert_int_equal(out.orig_unitid, 3);
	assert_int_equal(out.orig_srctag, 5);
	assert_int_equal(out.vl, 17);
	assert_int_equal(out.epoch, 117);
	assert_int_equal(out.local_unitid, 8);
	assert_int_equal(out.local_srctag, 17);
	assert_int_equal(out.np.kind, HT_K_RDSIZED);
	assert_int_equal(out.np.rsp_count, 7);
	assert_int_equal(out.np.rsp_passpw, 1);
	assert_int_equal(out.deadline, 12345);
	assert_int_equal(out.orphaned, 0);
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 31);
	/* the freed tag is reused */
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	assert_int_equal(u, 8);
	assert_int_equal(t, 17);
	assert_int_equal(htoe_tagremap_hwm(&g_tr), 32);
}

static void test_tr_fifo_reuse(void **state)
{
	(void)state;
	tr_init(1, 1);
	uint8_t u, t;
	struct htoe_pending_entry p = pend(0, 0, 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	/* free 2 then 0: the never-used tags 4.. come first, then 2, then 0 */
	assert_int_equal(htoe_tagremap_complete(&g_tr, 1, 2, NULL), 0);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 1, 0, NULL), 0);
	for (int i = 4; i < 32; i++) {
		assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
		assert_int_equal(t, i);
	}
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	assert_int_equal(t, 2);
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, NULL, &t), 0);
	assert_int_equal(t, 0);
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), -EAGAIN);
}

static void test_tr_clumping(void **state)
{
	(void)state;
	tr_init(4, 3);
	assert_int_equal(htoe_tagremap_capacity(&g_tr), 96);
	unsigned seen[3] = { 0 };
	for (int i = 0; i < 96; i++) {
		struct htoe_pending_entry p = pend(9, 9, 1);
		uint8_t u, t;
		assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
		assert_true(u >= 4 && u <= 6);
		assert_true(t < 32);
		assert_int_equal(u, 4 + i / 32);
		assert_int_equal(t, i % 32);
		seen[u - 4]++;
	}
	assert_int_equal(seen[0], 32);
	assert_int_equal(seen[1], 32);
	assert_int_equal(seen[2], 32);
	struct htoe_pending_entry p = pend(9, 9, 1);
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, NULL, NULL), -EAGAIN);
	/* a response to the last UnitID of the clump is found */
	struct htoe_pending_entry out;
	const struct htoe_pending_entry *pe = htoe_tagremap_peek(&g_tr, 6, 31);
	assert_non_null(pe);
	assert_int_equal(pe->local_unitid, 6);
	assert_int_equal(pe->local_srctag, 31);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 6, 31, &out), 0);
	assert_null(htoe_tagremap_peek(&g_tr, 6, 31));
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 95);
}

static void test_tr_unknown(void **state)
{
	(void)state;
	tr_init(8, 2);
	struct htoe_pending_entry p = pend(1, 2, 3), out;
	uint8_t u, t;
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	/* outside the tag space */
	assert_int_equal(htoe_tagremap_complete(&g_tr, 7, 0, &out), -ENOENT);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 10, 0, &out), -ENOENT);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 32, &out), -ENOENT);
	/* inside but free */
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 1, &out), -ENOENT);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 9, 0, &out), -ENOENT);
	assert_null(htoe_tagremap_peek(&g_tr, 9, 0));
	assert_null(htoe_tagremap_peek(&g_tr, 7, 0));
	assert_null(htoe_tagremap_peek(&g_tr, 8, 40));
	assert_int_equal(g_tr.stats.unknown, 5);
	/* the real one, then again (duplicate response) */
	assert_int_equal(htoe_tagremap_complete(&g_tr, u, t, &out), 0);
	assert_int_equal(htoe_tagremap_complete(&g_tr, u, t, &out), -ENOENT);
	assert_int_equal(g_tr.stats.unknown, 6);
	assert_int_equal(g_tr.stats.completes, 1);
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 0);
}

struct drop_ctx {
	unsigned n;
	uint8_t tags[64];
	uint16_t vl;
};

static void drop_cb(void *ctx, uint8_t unitid, uint8_t srctag,
		    const struct htoe_pending_entry *e)
{
	struct drop_ctx *d = ctx;
	assert_int_equal(e->vl, d->vl);
	assert_int_equal(unitid, 8);
	assert_int_equal(e->local_unitid, unitid);
	assert_int_equal(e->local_srctag, srctag);
	assert_int_equal(e->orphaned, 1);
	d->tags[d->n++] = srctag;
}

static void test_tr_drop_vl(void **state)
{
	(void)state;
	tr_init(8, 1);
	uint8_t u, t;
	/* tags 0..9: VL i % 3 */
	for (int i = 0; i < 10; i++) {
		struct htoe_pending_entry p = pend((uint8_t)i, (uint8_t)i, (uint16_t)(i % 3));
		assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	}
	struct drop_ctx d = { .vl = 1 };
	assert_int_equal(htoe_tagremap_drop_vl(&g_tr, 1, drop_cb, &d), 3);
	assert_int_equal(d.n, 3);
	assert_int_equal(d.tags[0], 1);
	assert_int_equal(d.tags[1], 4);
	assert_int_equal(d.tags[2], 7);
	assert_int_equal(htoe_tagremap_orphans(&g_tr), 3);
	/* orphaned tags stay in use until the local response */
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 10);
	struct htoe_pending_entry out;
	const struct htoe_pending_entry *pe = htoe_tagremap_peek(&g_tr, 8, 4);
	assert_non_null(pe); /* visible, marked: the response must be discarded */
	assert_int_equal(pe->orphaned, 1);
	assert_int_equal(pe->vl, 1);
	/* dropping again finds nothing live */
	assert_int_equal(htoe_tagremap_drop_vl(&g_tr, 1, NULL, NULL), 0);
	/* the local response of an orphan frees it and says: discard */
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 4, &out), -ESTALE);
	assert_int_equal(out.orig_unitid, 4);
	assert_int_equal(htoe_tagremap_orphans(&g_tr), 2);
	assert_int_equal(htoe_tagremap_in_use(&g_tr), 9);
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 4, &out), -ENOENT);
	/* other VLs untouched */
	assert_int_equal(htoe_tagremap_complete(&g_tr, 8, 3, &out), 0);
	assert_int_equal(out.vl, 0);
	pe = htoe_tagremap_peek(&g_tr, 8, 5);
	assert_non_null(pe);
	assert_int_equal(pe->vl, 2);
	assert_int_equal(pe->orphaned, 0);
	/* a new request of VL 1 (new epoch) is live */
	struct htoe_pending_entry p = pend(1, 1, 1);
	assert_int_equal(htoe_tagremap_alloc(&g_tr, &p, &u, &t), 0);
	assert_int_equal(htoe_tagremap_complete(&g_tr, u, t, &out), 0);
	assert_int_equal(g_tr.stats.orphaned, 3);
	assert_int_equal(g_tr.stats.stale, 1);
}

static void test_tr_randomized(void **state)
{
	(void)state;
	/* against a reference model: every live tag unique, count exact */
	struct ht_rand rng;
	ht_rand_seed(&rng, 42);
	tr_init(2, 4);
	static int8_t ref_vl[128]; /* -1 free, else vl */
	memset(ref_vl, -1, sizeof(ref_vl));
	unsigned live = 0;
	for (int step = 0; step < 100000; step++) {
		if (ht_rand_pct(&rng, 55)) {
			uint16_t vl = (uint16_t)ht_rand_below(&rng, 5);
			struct htoe_pending_entry p = pend(1, 1, vl);
			uint8_t u, t;
			int rc = htoe_tagremap_alloc(&g_tr, &p, &u, &t);
			if (live == 128) {
				assert_int_equal(rc, -EAGAIN);
				continue;
			}
			assert_int_equal(rc, 0);
			unsigned i = (unsigned)(u - 2) * 32 + t;
			assert_true(i < 128);
			assert_int_equal(ref_vl[i], -1);
			ref_vl[i] = (int8_t)vl;
			live++;
		} else {
			unsigned i = (unsigned)ht_rand_below(&rng, 128);
			struct htoe_pending_entry out;
			int rc = htoe_tagremap_complete(&g_tr, (uint8_t)(2 + i / 32),
							(uint8_t)(i % 32), &out);
			if (ref_vl[i] < 0) {
				assert_int_equal(rc, -ENOENT);
			} else {
				assert_int_equal(rc, 0);
				assert_int_equal(out.vl, ref_vl[i]);
				ref_vl[i] = -1;
				live--;
			}
		}
		assert_int_equal(htoe_tagremap_in_use(&g_tr), live);
	}
	assert_int_equal(htoe_tagremap_hwm(&g_tr), 128);
}

/* ---- (b) outstanding table ------------------------------------------------ */

#define T_NP 50u /* np_timeout of the outstanding tests */

static struct htoe_np_info np_read15(void)
{
	struct htoe_np_info np = { .kind = HT_K_RDSIZED, .rsp_count = 15, .rsp_passpw = 0 };
	return np;
}

/* add with a deadline of exactly dl (>= T_NP) */
static int add_dl(uint8_t u, uint8_t t, uint16_t vl, uint64_t dl)
{
	struct htoe_np_info np = np_read15();
	return htoe_outstanding_add(&g_out, u, t, vl, 7, &np, dl - T_NP);
}

static void out_init(void)
{
	assert_int_equal(htoe_outstanding_init(&g_out, T_NP), 0);
}

struct rec {
	unsigned n;
	struct htoe_outstanding_entry e[HTOE_TAG_MAX];
};

static void rec_cb(void *ctx, const struct htoe_outstanding_entry *e)
{
	struct rec *r = ctx;
	r->e[r->n++] = *e;
}

static void test_out_add_complete(void **state)
{
	(void)state;
	struct htoe_outstanding_entry out;
	struct htoe_np_info np = np_read15();

	assert_int_equal(htoe_outstanding_init(&g_out, 0), -EINVAL);
	out_init();
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), HTOE_TAG_NEVER);
	assert_int_equal(htoe_outstanding_add(&g_out, 1, 4, 2, 9, &np, 950), 0);
	assert_int_equal(htoe_outstanding_add(&g_out, 1, 4, 3, 9, &np, 960), -EEXIST);
	assert_int_equal(g_out.stats.dup_add, 1);
	assert_int_equal(htoe_outstanding_add(&g_out, 1, 32, 2, 9, &np, 950), -EINVAL);
	assert_int_equal(htoe_outstanding_add(&g_out, 32, 0, 2, 9, &np, 950), -EINVAL);
	assert_int_equal(htoe_outstanding_add(&g_out, 2, 0, 2, 9, NULL, 950), -EINVAL);
	assert_int_equal(htoe_outstanding_count(&g_out), 1);
	assert_true(htoe_outstanding_busy(&g_out, 1, 4));
	assert_false(htoe_outstanding_busy(&g_out, 1, 5));
	assert_false(htoe_outstanding_busy(&g_out, 40, 5));
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 1), 31);
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 2), 32);
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 32), 0);
	/* deadline = now + np_timeout */
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), 950 + T_NP);
	const struct htoe_outstanding_entry *fe = htoe_outstanding_find(&g_out, 1, 4);
	assert_non_null(fe);
	assert_int_equal(fe->vl, 2);
	assert_null(htoe_outstanding_find(&g_out, 1, 5));
	assert_null(htoe_outstanding_find(&g_out, 1, 40));

	/* a response from the wrong VL does not match, the entry stays */
	assert_int_equal(htoe_outstanding_complete(&g_out, 3, 1, 4, &out), -ENOENT);
	assert_int_equal(g_out.stats.wrong_vl, 1);
	assert_non_null(htoe_outstanding_find(&g_out, 1, 4));
	/* the right one */
	assert_int_equal(htoe_outstanding_complete(&g_out, 2, 1, 4, &out), 0);
	assert_int_equal(out.unitid, 1);
	assert_int_equal(out.srctag, 4);
	assert_int_equal(out.vl, 2);
	assert_int_equal(out.epoch, 9);
	assert_int_equal(out.np.kind, HT_K_RDSIZED);
	assert_int_equal(out.np.rsp_count, 15);
	assert_int_equal(out.deadline, 950 + T_NP);
	/* a late (duplicate) response */
	assert_int_equal(htoe_outstanding_complete(&g_out, 2, 1, 4, &out), -ENOENT);
	assert_int_equal(htoe_outstanding_complete(&g_out, 2, 40, 4, &out), -ENOENT);
	assert_int_equal(g_out.stats.unknown, 3);
	assert_int_equal(g_out.stats.completed, 1);
	assert_int_equal(htoe_outstanding_count(&g_out), 0);
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), HTOE_TAG_NEVER);
	assert_false(htoe_outstanding_busy(&g_out, 1, 4));
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 1), 32);

	/* remove() ignores the VL */
	assert_int_equal(add_dl(5, 5, 9, 100), 0);
	assert_int_equal(htoe_outstanding_remove(&g_out, 5, 5, &out), 0);
	assert_int_equal(out.vl, 9);
	assert_int_equal(htoe_outstanding_remove(&g_out, 5, 5, NULL), -ENOENT);
	assert_null(htoe_outstanding_find(&g_out, 5, 5));

	/* all 32 tags of a UnitID */
	for (uint8_t t = 0; t < 32; t++)
		assert_int_equal(add_dl(20, t, 1, 500), 0);
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 20), 0);
	assert_int_equal(htoe_outstanding_remove(&g_out, 20, 17, NULL), 0);
	assert_int_equal(htoe_outstanding_free_tags(&g_out, 20), 1);
	assert_int_equal(htoe_outstanding_hwm(&g_out), 32);
}

static void test_out_expire_order(void **state)
{
	(void)state;
	static struct rec r;
	out_init();
	/* added out of deadline order; two equal deadlines */
	const struct {
		uint8_t u, t;
		uint64_t dl;
	} add[] = {
		{ 1, 1, 500 }, { 1, 2, 100 }, { 2, 7, 300 }, { 3, 0, 300 }, { 0, 31, 900 },
		{ 4, 4, 200 },
	};
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(add_dl(add[i].u, add[i].t, 1, add[i].dl), 0);
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), 100);
	memset(&r, 0, sizeof(r));
	assert_int_equal(htoe_outstanding_expire(&g_out, 99, rec_cb, &r), 0);
	assert_int_equal(htoe_outstanding_expire(&g_out, 300, rec_cb, &r), 4);
	assert_int_equal(r.e[0].deadline, 100);
	assert_int_equal(r.e[1].deadline, 200);
	/* equal deadlines: in the order added */
	assert_int_equal(r.e[2].unitid, 2);
	assert_int_equal(r.e[2].srctag, 7);
	assert_int_equal(r.e[3].unitid, 3);
	assert_int_equal(r.e[3].srctag, 0);
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), 500);
	assert_false(htoe_outstanding_busy(&g_out, 1, 2));
	/* a completed entry never expires */
	assert_int_equal(htoe_outstanding_complete(&g_out, 1, 1, 1, NULL), 0);
	assert_int_equal(htoe_outstanding_next_deadline(&g_out), 900);
	assert_int_equal(htoe_outstanding_expire(&g_out, 10000, rec_cb, &r), 1);
	assert_int_equal(r.e[4].unitid, 0);
	assert_int_equal(r.e[4].srctag, 31);
	assert_int_equal(g_out.stats.expired, 5);
	assert_int_equal(htoe_outstanding_count(&g_out), 0);
	/* after expiry the tag can be used again; a late response is unknown */
	assert_int_equal(htoe_outstanding_complete(&g_out, 1, 4, 4, NULL), -ENOENT);
}

static void test_out_drop_vl(void **state)
{
	(void)state;
	static struct rec r;
	out_init();
	for (int i = 0; i < 40; i++)
		assert_int_equal(add_dl((uint8_t)(i % 32), (uint8_t)(i / 32 + 3), (uint16_t)(i % 4),
				       1000 - (uint64_t)i), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(htoe_outstanding_drop_vl(&g_out, 2, rec_cb, &r), 10);
	for (unsigned k = 0; k < r.n; k++) {
		assert_int_equal(r.e[k].vl, 2);
		if (k) /* (unitid, srctag) order */
			assert_true(r.e[k - 1].unitid * 32 + r.e[k - 1].srctag <
				    r.e[k].unitid * 32 + r.e[k].srctag);
	}
	assert_int_equal(htoe_outstanding_count(&g_out), 30);
	assert_int_equal(g_out.stats.dropped, 10);
	assert_int_equal(htoe_outstanding_drop_vl(&g_out, 2, NULL, NULL), 0);
	/* the others still expire in deadline order */
	memset(&r, 0, sizeof(r));
	assert_int_equal(htoe_outstanding_expire(&g_out, UINT64_MAX, rec_cb, &r), 30);
	for (unsigned k = 0; k < r.n; k++) {
		assert_int_not_equal(r.e[k].vl, 2);
		if (k)
			assert_true(r.e[k - 1].deadline <= r.e[k].deadline);
	}
}

static void test_out_order_randomized(void **state)
{
	(void)state;
	/* against an O(n) reference: next_deadline and expiry order */
	static uint64_t ref_dl[HTOE_TAG_MAX];
	static uint64_t ref_ord[HTOE_TAG_MAX];
	static bool ref_used[HTOE_TAG_MAX];
	static struct rec r;
	struct ht_rand rng;
	uint64_t now = 0, ord = 0;
	unsigned n = 0;

	ht_rand_seed(&rng, 9);
	out_init();
	memset(ref_used, 0, sizeof(ref_used));
	for (int step = 0; step < 200000; step++) {
		unsigned op = (unsigned)ht_rand_below(&rng, 100);
		unsigned idx = (unsigned)ht_rand_below(&rng, HTOE_TAG_MAX);
		if (op < 50) {
			/* the "now" of an add may be anything: the list needs no
			 * monotonic deadlines */
			uint64_t dl = now + T_NP + ht_rand_range(&rng, 0, 20000);
			int rc = add_dl((uint8_t)(idx / 32), (uint8_t)(idx % 32),
					(uint16_t)ht_rand_below(&rng, 3), dl);
			assert_int_equal(rc, ref_used[idx] ? -EEXIST : 0);
			if (!rc) {
				ref_used[idx] = true;
				ref_dl[idx] = dl;
				ref_ord[idx] = ord++;
				n++;
			}
		} else if (op < 80) {
			int rc = htoe_outstanding_remove(&g_out, (uint8_t)(idx / 32),
							 (uint8_t)(idx % 32), NULL);
			assert_int_equal(rc, ref_used[idx] ? 0 : -ENOENT);
			if (!rc) {
				ref_used[idx] = false;
				n--;
			}
		} else if (op < 98) {
			now += ht_rand_below(&rng, 300);
			memset(&r, 0, sizeof(r));
			unsigned k = htoe_outstanding_expire(&g_out, now, rec_cb, &r);
			/* every expired entry was due, in (deadline, order) order */
			for (unsigned j = 0; j < k; j++) {
				unsigned i = r.e[j].unitid * 32u + r.e[j].srctag;
				assert_true(ref_used[i]);
				assert_true(ref_dl[i] <= now);
				if (j) {
					unsigned pi = r.e[j - 1].unitid * 32u + r.e[j - 1].srctag;
					assert_true(ref_dl[pi] < ref_dl[i] ||
						    (ref_dl[pi] == ref_dl[i] && ref_ord[pi] < ref_ord[i]));
				}
				ref_used[i] = false;
				n--;
			}
		} else {
			uint16_t vl = (uint16_t)ht_rand_below(&rng, 3);
			memset(&r, 0, sizeof(r));
			unsigned k = htoe_outstanding_drop_vl(&g_out, vl, rec_cb, &r);
			for (unsigned j = 0; j < k; j++) {
				unsigned i = r.e[j].unitid * 32u + r.e[j].srctag;
				assert_true(ref_used[i]);
				ref_used[i] = false;
				n--;
			}
		}
		/* nothing due is left behind; next deadline is the minimum */
		uint64_t min = HTOE_TAG_NEVER;
		unsigned cnt = 0;
		for (unsigned i = 0; i < HTOE_TAG_MAX; i++) {
			if (!ref_used[i])
				continue;
			cnt++;
			if (ref_dl[i] < min)
				min = ref_dl[i];
		}
		assert_int_equal(cnt, n);
		assert_int_equal(htoe_outstanding_count(&g_out), n);
		assert_int_equal(htoe_outstanding_next_deadline(&g_out), min);
	}
	assert_true(htoe_outstanding_hwm(&g_out) > 100);
}

/* ---- poisoned responses ---------------------------------------------------- */

static struct ht_pkt req(enum ht_kind k)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.kind = (uint8_t)k;
	p.unitid = 6;
	p.srctag = 29;
	return p;
}

static void check_data_ones(const struct ht_pkt *r, unsigned dwords)
{
	assert_int_equal(r->data_len, 4 * dwords);
	for (unsigned i = 0; i < 4 * dwords; i++)
		assert_int_equal(r->data[i], 0xFF);
	for (unsigned i = 4 * dwords; i < HT_MAX_DATA; i++)
		assert_int_equal(r->data[i], 0);
}

/* The poisoned response is a valid HT packet: it encodes (4 control bytes +
 * its data) and decodes back to the same fields. */
static void check_codec(const struct ht_pkt *r)
{
	uint8_t buf[HT_MAX_PKT_LEN];
	struct ht_pkt d;
	int n = ht_encode(r, buf, sizeof(buf));
	assert_int_equal(n, 4 + r->data_len);
	assert_int_equal(ht_decode(buf, (size_t)n, &d), n);
	assert_int_equal(d.cmd, r->cmd);
	assert_int_equal(d.kind, r->kind);
	assert_int_equal(d.unitid, r->unitid);
	assert_int_equal(d.srctag, r->srctag);
	assert_int_equal(d.count, r->count);
	assert_int_equal(d.bridge, 1);
	assert_int_equal(d.passpw, r->passpw);
	assert_int_equal(d.error0, r->error0);
	assert_int_equal(d.error1, r->error1);
	assert_int_equal(d.data_len, r->data_len);
	assert_memory_equal(d.data, r->data, r->data_len);
	assert_int_equal(ht_pkt_rsp_err(&d), (r->error0 << 1) | r->error1);
}

static void check_common(const struct ht_pkt *r, uint8_t u, uint8_t t, unsigned e0,
			 unsigned e1)
{
	check_codec(r);
	assert_int_equal(r->unitid, u);
	assert_int_equal(r->srctag, t);
	assert_int_equal(r->bridge, 1);
	assert_int_equal(r->error0, e0);
	assert_int_equal(r->error1, e1);
	assert_int_equal(r->isoc, 0);
	assert_int_equal(r->rquid, 0);
	assert_int_equal(r->rspvcset, 0);
	assert_int_equal(r->addr, 0);
	assert_int_equal(r->seqid, 0);
}

/* htoe_np_info_from_req(p), checked against htoe_np_info_from_desc() of
 * p's encoding (the bridge's path for packets from the local side): same
 * verdict, same answer. */
static unsigned np_both_encoded;

static int np_both(const struct ht_pkt *p, struct htoe_np_info *np)
{
	uint8_t raw[HT_MAX_PKT_LEN];
	struct htoe_np_info nd;
	struct ht_desc d;
	struct ht_pkt q = *p;
	int rc = htoe_np_info_from_req(p, np);
	int n;

	if (q.kind == HT_K_WRSIZED && !q.data_len) {
		q.data_len = (uint16_t)(q.dword ? 4u * (q.count + 1u) : 4u * q.count);
		if (!q.dword && !q.data_len)
			q.data_len = 4;
	}
	if (q.kind == HT_K_ATOMIC && !q.data_len)
		q.data_len = q.count == HT_ATOMIC_CAS_COUNT ? 16 : 8;
	if (q.kind == HT_K_WRSIZED && q.posted)
		q.srctag = 0;
	n = ht_pkt_set_cmd(&q, (enum ht_kind)q.kind) == 0 ? ht_encode(&q, raw, sizeof(raw)) : -1;
	if (n > 0) {
		assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
		assert_int_equal(htoe_np_info_from_desc(&d, &nd), rc);
		if (rc == 0) {
			assert_int_equal(nd.kind, np->kind);
			assert_int_equal(nd.rsp_count, np->rsp_count);
			assert_int_equal(nd.rsp_passpw, np->rsp_passpw);
		}
		np_both_encoded++;
	}
	return rc;
}

static void test_np_info(void **state)
{
	(void)state;
	struct htoe_np_info np;
	struct ht_pkt p = req(HT_K_RDSIZED);
	p.dword = 1;
	p.count = 15;
	p.responsepasspw = 1;
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(np.kind, HT_K_RDSIZED);
	assert_int_equal(np.rsp_count, 15);
	assert_int_equal(np.rsp_passpw, 1);
	assert_int_equal(htoe_np_rsp_kind(&np), HT_K_RDRESPONSE);
	/* byte read: the Count field is the mask; one dword comes back */
	p.dword = 0;
	p.count = 0x9;
	p.responsepasspw = 0;
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(np.rsp_count, 0);
	assert_int_equal(np.rsp_passpw, 0);
	/* atomics: one qword back, whatever the operation */
	p = req(HT_K_ATOMIC);
	p.count = HT_ATOMIC_CAS_COUNT;
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(np.kind, HT_K_ATOMIC);
	assert_int_equal(np.rsp_count, 1);
	p.count = HT_ATOMIC_FETCHADD_COUNT;
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(np.rsp_count, 1);
	/* non-posted write, flush */
	p = req(HT_K_WRSIZED);
	p.count = 7;
	p.dword = 1;
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(np.kind, HT_K_WRSIZED);
	assert_int_equal(np.rsp_count, 0);
	assert_int_equal(htoe_np_rsp_kind(&np), HT_K_TGTDONE);
	p = req(HT_K_FLUSH);
	assert_int_equal(np_both(&p, &np), 0);
	assert_int_equal(htoe_np_rsp_kind(&np), HT_K_TGTDONE);
	/* not non-posted */
	p = req(HT_K_WRSIZED);
	p.posted = 1;
	assert_int_equal(np_both(&p, &np), -EINVAL);
	p = req(HT_K_FENCE);
	assert_int_equal(np_both(&p, &np), -EINVAL);
	p = req(HT_K_RDRESPONSE);
	assert_int_equal(np_both(&p, &np), -EINVAL);
	/* the dword read, both atomics, the non-posted write and the Flush
	 * went through both forms */
	assert_true(np_both_encoded >= 5);
}

static void test_poison_read(void **state)
{
	(void)state;
	struct ht_pkt p = req(HT_K_RDSIZED), r;
	struct htoe_outstanding_entry e;
	memset(&e, 0, sizeof(e));
	p.dword = 1;
	p.count = 15;
	p.responsepasspw = 1;
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	e.unitid = p.unitid;
	e.srctag = p.srctag;

	/* timeout: master abort, 16 dwords of ones */
	memset(&r, 0x5A, sizeof(r));
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_TIMEOUT, &r), 0);
	assert_int_equal(r.cmd, 0x30);
	assert_int_equal(r.kind, HT_K_RDRESPONSE);
	assert_int_equal(r.count, 15);
	assert_int_equal(r.passpw, 1);
	check_common(&r, 6, 29, 1, 1);
	check_data_ones(&r, 16);
	/* unreachable: master abort too */
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_UNREACHABLE, &r), 0);
	check_common(&r, 6, 29, 1, 1);
	/* VL reset and remote reset: target abort */
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_VL_RESET, &r), 0);
	check_common(&r, 6, 29, 1, 0);
	check_data_ones(&r, 16);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_REMOTE_RESET, &r), 0);
	check_common(&r, 6, 29, 1, 0);
	/* byte read: Count 0, one dword */
	p.dword = 0;
	p.count = 0xF;
	p.responsepasspw = 0;
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_TIMEOUT, &r), 0);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.passpw, 0);
	check_data_ones(&r, 1);
	/* small dword read: Count 1, two dwords */
	p.dword = 1;
	p.count = 1;
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_VL_RESET, &r), 0);
	assert_int_equal(r.count, 1);
	check_data_ones(&r, 2);
}

static void test_poison_atomic(void **state)
{
	(void)state;
	struct ht_pkt p = req(HT_K_ATOMIC), r;
	struct htoe_outstanding_entry e;
	memset(&e, 0, sizeof(e));
	p.count = HT_ATOMIC_CAS_COUNT;
	p.unitid = 31;
	p.srctag = 0;
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	e.unitid = 31;
	e.srctag = 0;
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_TIMEOUT, &r), 0);
	assert_int_equal(r.cmd, 0x30);
	assert_int_equal(r.kind, HT_K_RDRESPONSE);
	assert_int_equal(r.count, 1); /* one qword, as the real response */
	assert_int_equal(r.passpw, 0);
	check_common(&r, 31, 0, 1, 1);
	check_data_ones(&r, 2);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_REMOTE_RESET, &r), 0);
	check_common(&r, 31, 0, 1, 0);
	check_data_ones(&r, 2);
}

static void test_poison_write_flush(void **state)
{
	(void)state;
	struct ht_pkt p = req(HT_K_WRSIZED), r;
	struct htoe_outstanding_entry e;
	memset(&e, 0, sizeof(e));
	p.dword = 1;
	p.count = 15;
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	e.unitid = 6;
	e.srctag = 29;
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_TIMEOUT, &r), 0);
	assert_int_equal(r.cmd, 0x33);
	assert_int_equal(r.kind, HT_K_TGTDONE);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.passpw, 0);
	check_common(&r, 6, 29, 1, 1);
	check_data_ones(&r, 0);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_VL_RESET, &r), 0);
	check_common(&r, 6, 29, 1, 0);

	p = req(HT_K_FLUSH);
	assert_int_equal(htoe_np_info_from_req(&p, &e.np), 0);
	e.unitid = 2;
	e.srctag = 13;
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_UNREACHABLE, &r), 0);
	assert_int_equal(r.cmd, 0x33);
	assert_int_equal(r.kind, HT_K_TGTDONE);
	assert_int_equal(r.count, 0);
	check_common(&r, 2, 13, 1, 1);
	check_data_ones(&r, 0);
	assert_int_equal(htoe_poison_response(&e, HTOE_POISON_REMOTE_RESET, &r), 0);
	check_common(&r, 2, 13, 1, 0);
}

static void test_poison_build_errors(void **state)
{
	(void)state;
	struct htoe_np_info np = { .kind = HT_K_RDSIZED, .rsp_count = 3 };
	struct ht_pkt r;
	assert_int_equal(htoe_poison_err(HTOE_POISON_TIMEOUT), HT_RSP_MASTER_ABORT);
	assert_int_equal(htoe_poison_err(HTOE_POISON_UNREACHABLE), HT_RSP_MASTER_ABORT);
	assert_int_equal(htoe_poison_err(HTOE_POISON_VL_RESET), HT_RSP_TARGET_ABORT);
	assert_int_equal(htoe_poison_err(HTOE_POISON_REMOTE_RESET), HT_RSP_TARGET_ABORT);
	/* data error: Error0 = 0, Error1 = 1 */
	assert_int_equal(htoe_poison_build(1, 2, &np, HT_RSP_DATA_ERROR, &r), 0);
	assert_int_equal(r.error0, 0);
	assert_int_equal(r.error1, 1);
	check_data_ones(&r, 4);
	assert_int_equal(htoe_poison_build(32, 2, &np, HT_RSP_MASTER_ABORT, &r), -EINVAL);
	assert_int_equal(htoe_poison_build(1, 32, &np, HT_RSP_MASTER_ABORT, &r), -EINVAL);
	np.rsp_count = 16;
	assert_int_equal(htoe_poison_build(1, 2, &np, HT_RSP_MASTER_ABORT, &r), -EINVAL);
	np.rsp_count = 0;
	np.kind = HT_K_FENCE;
	assert_int_equal(htoe_poison_build(1, 2, &np, HT_RSP_MASTER_ABORT, &r), -EINVAL);
	assert_int_equal(htoe_poison_response(NULL, HTOE_POISON_TIMEOUT, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tr_init_invalid),
		cmocka_unit_test(test_tr_alloc_until_full),
		cmocka_unit_test(test_tr_fifo_reuse),
		cmocka_unit_test(test_tr_clumping),
		cmocka_unit_test(test_tr_unknown),
		cmocka_unit_test(test_tr_drop_vl),
		cmocka_unit_test(test_tr_randomized),
		cmocka_unit_test(test_out_add_complete),
		cmocka_unit_test(test_out_expire_order),
		cmocka_unit_test(test_out_drop_vl),
		cmocka_unit_test(test_out_order_randomized),
		cmocka_unit_test(test_np_info),
		cmocka_unit_test(test_poison_read),
		cmocka_unit_test(test_poison_atomic),
		cmocka_unit_test(test_poison_write_flush),
		cmocka_unit_test(test_poison_build_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
