/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the one impairment model (app/common/impair_model.c), the
 * model of htoe-bridge's impairment stage and htoe-sim's switch: rates within
 * statistical bounds over a fixed seed, bursts in frames and in time, delay
 * and reordering bounds, links independent of each other, determinism given
 * the seed, and the one probability syntax (0.1 or 10%); and the one heap
 * of frames that wait (app/common/time_heap.c).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "impair_model.h"
#include "time_heap.h"

#define N 200000

static void mk(struct impair_model *m, const struct impair_params *p)
{
	char err[128];

	assert_int_equal(impair_model_init(m, p, err, sizeof(err)), 0);
}

/* one link of a model, its RNG seeded */
struct fx {
	struct impair_model m;
	struct impair_link l;
	struct ht_rand r;
	struct impair_verdict v;
};

static void fx_init(struct fx *f, const struct impair_params *p, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	mk(&f->m, p);
	ht_rand_seed(&f->r, seed);
}

static void fx_decide(struct fx *f, uint64_t now)
{
	impair_model_decide(&f->m, &f->l, &f->r, 64, now, &f->v);
}

/* |count - n p| within 5 standard deviations of a binomial(n, p) */
static void assert_rate(uint64_t count, uint64_t n, double p)
{
	double sd = sqrt(n * p * (1 - p));

	assert_true(fabs((double)count - n * p) <= 5 * sd + 1);
}

static void test_init_refuses(void **state)
{
	struct impair_params p = { .burst_len = 4 };
	struct impair_model m;
	char err[128];

	(void)state;
	assert_int_equal(impair_model_init(&m, &p, err, sizeof(err)), 0);
	p.loss = NAN;
	assert_int_not_equal(impair_model_init(&m, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "loss"));
	p.loss = 0;
	p.corrupt = 1.01;
	assert_int_not_equal(impair_model_init(&m, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "corrupt"));
	p.corrupt = 0;
	p.burst_len = 0.5;
	assert_int_not_equal(impair_model_init(&m, &p, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "burst_len"));
}

/* Every rate of the model over one fixed seed. */
static void test_rates(void **state)
{
	struct impair_params p = { .loss = 0.1, .burst_len = 1, .reorder = 0.05,
				   .reorder_ns = 1000, .dup = 0.02, .corrupt = 0.01,
				   .delay_ns = 500, .jitter_ns = 100 };
	uint64_t lost = 0, reord = 0, dup = 0, corr = 0, passed = 0;
	struct fx f;
	const struct impair_verdict *vp = &f.v;

	(void)state;
	fx_init(&f, &p, 42);
	for (uint64_t i = 0; i < N; i++) {
		uint64_t now = i * 10;
		struct impair_verdict v;

		fx_decide(&f, now);
		v = *vp;
		if (!v.copies) {
			assert_int_equal(v.fate, IMPAIR_LOSS);
			lost++;
			continue;
		}
		passed++;
		reord += v.reordered;
		dup += v.copies == 2;
		if (v.corrupt) {
			assert_true(v.bit < 64 * 8);
			corr++;
		}
		/* delay + 0..jitter, and reorder_ns + 0..reorder_ns more if held back */
		assert_true(v.at[0] >= now + 500);
		if (v.reordered)
			assert_true(v.at[0] >= now + 1500 && v.at[0] <= now + 2600);
		else
			assert_true(v.at[0] <= now + 600);
		if (v.copies == 2)
			assert_true(v.at[1] == v.at[0]);
	}
	assert_rate(lost, N, 0.1);
	assert_rate(reord, passed, 0.05);
	assert_rate(dup, passed, 0.02);
	assert_rate(corr, passed, 0.01);
}

/* Bursts in frames: burst_loss * N bursts, burst_len frames each on average. */
static void test_burst_frames(void **state)
{
	struct impair_params p = { .burst_loss = 0.01, .burst_len = 8 };
	uint64_t bursts = 0, dropped = 0;
	struct fx f;

	(void)state;
	fx_init(&f, &p, 7);
	for (uint64_t i = 0; i < N; i++) {
		fx_decide(&f, i);
		bursts += f.v.fate == IMPAIR_BURST_START;
		dropped += !f.v.copies;
	}
	assert_true(bursts > 100);
	/* mean burst length 8 (geometric): within 15 % over this many bursts */
	assert_true(fabs((double)dropped / (double)bursts - 8.0) < 8.0 * 0.15);
}

/* A burst in time drops every frame in its window and nothing after it. */
static void test_burst_time(void **state)
{
	struct impair_params p = { .burst_loss = 1, .burst_len = 1, .burst_ns = 5000 };
	struct fx f;

	(void)state;
	fx_init(&f, &p, 3);
	fx_decide(&f, 1000);
	assert_int_equal(f.v.fate, IMPAIR_BURST_START);
	for (uint64_t t = 1000; t < 6000; t += 7) {
		fx_decide(&f, t);
		assert_int_equal(f.v.copies, 0);
		assert_int_equal(f.v.fate, IMPAIR_BURST);
	}
	/* the window is over: this frame passes (and a new burst may start
	 * only with the next draw; burst_loss 0 from here on shows nothing
	 * after the window is dropped) */
	p.burst_loss = 0;
	mk(&f.m, &p);
	for (uint64_t t = 6000; t < 20000; t += 7) {
		fx_decide(&f, t);
		assert_int_equal(f.v.copies, 1);
		assert_int_equal(f.v.at[0], t);
	}
}

/* The same seed gives the same decisions; each link keeps its own state. */
static void test_deterministic_and_links(void **state)
{
	struct impair_params p = { .loss = 0.05, .burst_loss = 0.01, .burst_len = 4,
				   .reorder = 0.1, .reorder_ns = 2000, .dup = 0.05,
				   .corrupt = 0.05, .delay_ns = 100, .jitter_ns = 50 };
	struct impair_link la = { 0 }, lb = { 0 }, lc = { 0 };
	struct impair_verdict va, vb;
	struct impair_model m;
	struct ht_rand ra, rb;
	unsigned differ = 0;

	(void)state;
	mk(&m, &p);
	ht_rand_seed(&ra, 11);
	ht_rand_seed(&rb, 11);
	for (uint64_t i = 0; i < 20000; i++) {
		impair_model_decide(&m, &la, &ra, 100, i * 50, &va);
		impair_model_decide(&m, &lb, &rb, 100, i * 50, &vb);
		assert_memory_equal(&va, &vb, sizeof(va));
	}
	/* another seed, other decisions */
	ht_rand_seed(&rb, 12);
	ht_rand_seed(&ra, 11);
	memset(&la, 0, sizeof(la));
	memset(&lb, 0, sizeof(lb));
	for (uint64_t i = 0; i < 1000; i++) {
		impair_model_decide(&m, &la, &ra, 100, i * 50, &va);
		impair_model_decide(&m, &lb, &rb, 100, i * 50, &vb);
		differ += memcmp(&va, &vb, sizeof(va)) != 0;
	}
	assert_true(differ > 0);
	/* a burst on one link does not drop frames of another */
	p = (struct impair_params){ .burst_loss = 1, .burst_len = 1, .burst_ns = 1000000 };
	mk(&m, &p);
	impair_model_decide(&m, &la, &ra, 64, 0, &va);
	assert_int_equal(va.fate, IMPAIR_BURST_START);
	p.burst_loss = 0;
	mk(&m, &p);
	impair_model_decide(&m, &lc, &ra, 64, 10, &vb);
	assert_int_equal(vb.copies, 1);
	impair_model_decide(&m, &la, &ra, 64, 10, &va);
	assert_int_equal(va.copies, 0);
}

static void test_parse_prob(void **state)
{
	static const struct { const char *s; double v; } ok[] = {
		{ "0", 0 }, { "0.1", 0.1 }, { "10%", 0.1 }, { ".5", 0.5 }, { "100%", 1 },
		{ "0%", 0 }, { "0.999", 0.999 }, { "1e-3", 0.001 }, { "2.5%", 0.025 },
	};
	static const char *bad[] = {
		"", "nan", "NaN", "inf", "-inf", "-0.1", "+0.1", "1.5", "101%", "1",
		"10 %", "10%%", "0.1x", "%", "1e999", " 0.1", "0x0.1p0x", "0x0.1",
	};
	char why[200];
	double v;

	(void)state;
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = -1;
		assert_int_equal(htoe_parse_prob(ok[i].s, &v, why, sizeof(why)), 0);
		assert_true(fabs(v - ok[i].v) < 1e-12);
	}
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = -1;
		why[0] = 0;
		assert_int_equal(htoe_parse_prob(bad[i], &v, why, sizeof(why)), -1);
		assert_true(v == -1);
		assert_non_null(strstr(why, !strcmp(bad[i], "1") ? "100%" : "not a probability"));
	}
}

/* Items come out by time, ties in the order they went in; a fixed heap
 * refuses when full, a growing one doubles. */
static void test_time_heap(void **state)
{
	static int many[6400];
	struct time_heap h;
	int items[64];
	struct ht_rand r;
	uint64_t last_at = 0;
	int *prev = NULL;

	(void)state;
	assert_int_equal(time_heap_init(&h, 4, false), 0);
	assert_null(time_heap_pop(&h));
	assert_int_equal(time_heap_next(&h), UINT64_MAX);
	for (int i = 0; i < 4; i++)
		assert_int_equal(time_heap_push(&h, &items[i], 100 - (uint64_t)(i / 2) * 10), 0);
	assert_int_equal(time_heap_push(&h, &items[4], 1), -ENOSPC);
	assert_null(time_heap_pop_due(&h, 89));
	assert_ptr_equal(time_heap_pop_due(&h, 90), &items[2]); /* tie: first in first */
	assert_ptr_equal(time_heap_pop(&h), &items[3]);
	assert_ptr_equal(time_heap_pop(&h), &items[0]);
	assert_ptr_equal(time_heap_pop(&h), &items[1]);
	assert_null(time_heap_pop(&h));
	time_heap_fini(&h);

	/* random times, many ties, past the initial capacity */
	assert_int_equal(time_heap_init(&h, 2, true), 0);
	ht_rand_seed(&r, 5);
	for (int i = 0; i < 6400; i++)
		assert_int_equal(time_heap_push(&h, &many[i], ht_rand_below(&r, 16)), 0);
	assert_int_equal(h.n, 6400);
	for (size_t k = 0; k < 6400; k++) {
		uint64_t at = time_heap_next(&h);
		int *it = time_heap_pop(&h);

		assert_non_null(it);
		assert_true(at >= last_at);
		/* within one time, in the order they went in */
		if (at == last_at && prev)
			assert_true(it > prev);
		last_at = at;
		prev = it;
	}
	assert_null(time_heap_pop(&h));
	time_heap_fini(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_refuses),
		cmocka_unit_test(test_rates),
		cmocka_unit_test(test_burst_frames),
		cmocka_unit_test(test_burst_time),
		cmocka_unit_test(test_deterministic_and_links),
		cmocka_unit_test(test_parse_prob),
		cmocka_unit_test(test_time_heap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
