/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the impairment stage of htoe-bridge (app/bridge/impair.c):
 * configuration checks, determinism, loss and burst statistics, delay,
 * jitter and reordering bounds, duplication, corruption, and the hold
 * queue (order, ties, capacity, drain). Plain malloc buffers, no DPDK.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "impair.h"

static struct impair *mk(const struct impair_cfg *c)
{
	struct impair *im = impair_new(c);

	assert_non_null(im);
	return im;
}

static void test_cfg_check(void **state)
{
	struct impair_cfg c;
	char err[128];

	(void)state;
	impair_cfg_default(&c);
	assert_int_equal(impair_cfg_check(&c, err, sizeof(err)), 0);
	assert_false(impair_cfg_active(&c));
	c.loss = 1.5;
	assert_int_equal(impair_cfg_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "loss"));
	assert_null(impair_new(&c));
	impair_cfg_default(&c);
	c.dup = -0.1;
	assert_int_equal(impair_cfg_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "dup"));
	impair_cfg_default(&c);
	c.burst_len = 0.5;
	assert_int_equal(impair_cfg_check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "burst_len"));
	impair_cfg_default(&c);
	c.delay_ns = 1;
	assert_true(impair_cfg_active(&c));
}

/* Nothing configured: every frame passes at once, untouched. */
static void test_passthrough(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;

	(void)state;
	impair_cfg_default(&c);
	im = mk(&c);
	for (uint64_t i = 0; i < 10000; i++) {
		impair_decide(im, 100, i * 10, &v);
		assert_int_equal(v.copies, 1);
		assert_false(v.corrupt);
		assert_true(v.at[0] == i * 10);
	}
	assert_int_equal(impair_stats(im)->frames, 10000);
	assert_int_equal(impair_stats(im)->dropped + impair_stats(im)->delayed, 0);
	impair_free(im);
}

static void full_cfg(struct impair_cfg *c, uint64_t seed)
{
	impair_cfg_default(c);
	c->seed = seed;
	c->loss = 0.05;
	c->burst_loss = 0.01;
	c->reorder = 0.05;
	c->dup = 0.02;
	c->corrupt = 0.01;
	c->delay_ns = 1000;
	c->jitter_ns = 500;
}

/* Same seed, same decisions; another seed, other decisions. */
static void test_determinism(void **state)
{
	struct impair_cfg c;
	struct impair *a, *b, *d;
	unsigned differ = 0;

	(void)state;
	full_cfg(&c, 42);
	a = mk(&c);
	b = mk(&c);
	c.seed = 43;
	d = mk(&c);
	for (unsigned i = 0; i < 20000; i++) {
		struct impair_verdict va, vb, vd;

		impair_decide(a, 60 + i % 1400, i * 100ull, &va);
		impair_decide(b, 60 + i % 1400, i * 100ull, &vb);
		impair_decide(d, 60 + i % 1400, i * 100ull, &vd);
		assert_memory_equal(&va, &vb, sizeof(va));
		differ += memcmp(&va, &vd, sizeof(va)) != 0;
	}
	assert_true(differ > 1000);
	assert_memory_equal(impair_stats(a), impair_stats(b), sizeof(struct impair_stats));
	impair_free(a);
	impair_free(b);
	impair_free(d);
}

static void test_loss_rate(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;
	const unsigned n = 200000;
	unsigned lost = 0;

	(void)state;
	impair_cfg_default(&c);
	c.loss = 0.1;
	im = mk(&c);
	for (unsigned i = 0; i < n; i++) {
		impair_decide(im, 64, i, &v);
		lost += v.copies == 0;
	}
	/* 10 % +- 0.5 % (about 7 standard deviations) */
	assert_in_range(lost, n / 10 - n / 200, n / 10 + n / 200);
	assert_int_equal(impair_stats(im)->dropped, lost);
	impair_free(im);

	c.loss = 1;
	im = mk(&c);
	for (unsigned i = 0; i < 1000; i++) {
		impair_decide(im, 64, i, &v);
		assert_int_equal(v.copies, 0);
	}
	impair_free(im);
}

/* Bursts: burst_len frames lost on average, in runs. */
static void test_burst_loss(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;
	const unsigned n = 400000;
	unsigned runs = 0, lost = 0;
	bool prev = false;

	(void)state;
	impair_cfg_default(&c);
	c.burst_loss = 0.005;
	c.burst_len = 5;
	im = mk(&c);
	for (unsigned i = 0; i < n; i++) {
		impair_decide(im, 64, i, &v);
		bool l = v.copies == 0;

		lost += l;
		runs += l && !prev;
		prev = l;
	}
	const struct impair_stats *s = impair_stats(im);

	assert_int_equal(s->burst_dropped, lost);
	assert_true(s->bursts > 1000);
	/* mean burst length 5 +- 0.5 */
	assert_true(lost * 10 >= s->bursts * 45 && lost * 10 <= s->bursts * 55);
	/* back-to-back bursts merge into one run, rarely */
	assert_true(runs <= s->bursts && runs * 100 >= s->bursts * 95);
	impair_free(im);
}

/* A burst in time drops every frame from its start until burst_us later,
 * however many frames that is, and the next frame passes. */
static void test_burst_time(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;
	uint64_t start = UINT64_MAX;

	(void)state;
	impair_cfg_default(&c);
	c.burst_loss = 0.01;
	c.burst_us = 50;
	im = mk(&c);
	for (uint64_t t = 0; t < 10000000; t += 100) { /* a frame every 100 ns */
		impair_decide(im, 64, t, &v);
		if (start == UINT64_MAX && v.copies == 0)
			start = t;
		if (start != UINT64_MAX) {
			assert_int_equal(v.copies, t < start + 50000 ? 0 : 1);
			if (t >= start + 50000)
				break;
		}
	}
	assert_true(start != UINT64_MAX);
	assert_int_equal(impair_stats(im)->bursts, 1);
	assert_int_equal(impair_stats(im)->burst_dropped, 500);
	impair_free(im);
}

static void test_delay_jitter_reorder(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;
	unsigned reordered = 0;

	(void)state;
	impair_cfg_default(&c);
	c.delay_ns = 1000;
	c.jitter_ns = 200;
	c.reorder = 0.2;
	c.reorder_ns = 10000;
	im = mk(&c);
	for (unsigned i = 0; i < 50000; i++) {
		uint64_t now = 1000000 + i * 50ull;

		impair_decide(im, 64, now, &v);
		assert_int_equal(v.copies, 1);
		assert_true(v.at[0] >= now + 1000);
		if (v.at[0] > now + 1200) {
			/* held back: delay + jitter + reorder_ns + 0..reorder_ns */
			assert_true(v.at[0] >= now + 1000 + 10000);
			assert_true(v.at[0] <= now + 1200 + 20000);
			reordered++;
		}
	}
	assert_int_equal(impair_stats(im)->reordered, reordered);
	assert_in_range(reordered, 9000, 11000);
	assert_int_equal(impair_stats(im)->delayed, 50000);
	impair_free(im);
}

static void test_dup_and_corrupt(void **state)
{
	struct impair_cfg c;
	struct impair_verdict v;
	struct impair *im;
	uint8_t buf[100], orig[100];

	(void)state;
	impair_cfg_default(&c);
	c.dup = 1;
	c.corrupt = 1;
	im = mk(&c);
	for (unsigned i = 0; i < 1000; i++)
		buf[i % 100] = (uint8_t)(i * 7);
	for (unsigned i = 0; i < 5000; i++) {
		impair_decide(im, sizeof(buf), i, &v);
		assert_int_equal(v.copies, 2);
		assert_true(v.at[0] == i && v.at[1] == i);
		assert_true(v.corrupt);
		assert_true(v.bit < sizeof(buf) * 8);
		memcpy(orig, buf, sizeof(buf));
		impair_flip(buf, sizeof(buf), v.bit);
		unsigned diff = 0;

		for (unsigned k = 0; k < sizeof(buf); k++)
			diff += (unsigned)__builtin_popcount(buf[k] ^ orig[k]);
		assert_int_equal(diff, 1);
		impair_flip(buf, sizeof(buf), v.bit);
		assert_memory_equal(buf, orig, sizeof(buf));
	}
	/* a bit beyond the buffer is ignored */
	impair_flip(buf, sizeof(buf), sizeof(buf) * 8);
	assert_memory_equal(buf, orig, sizeof(buf));
	assert_int_equal(impair_stats(im)->duplicated, 5000);
	assert_int_equal(impair_stats(im)->corrupted, 5000);
	impair_free(im);
}

static void test_hold_queue(void **state)
{
	struct impair_cfg c;
	struct impair *im;
	int items[64];
	uint64_t last = 0;
	unsigned n = 0;

	(void)state;
	impair_cfg_default(&c);
	c.queue = 16;
	im = mk(&c);
	assert_null(impair_release(im, UINT64_MAX));
	assert_true(impair_next(im) == UINT64_MAX);
	/* times 100, 90, ..., with ties */
	for (int i = 0; i < 16; i++) {
		items[i] = i;
		assert_int_equal(impair_hold(im, &items[i], 1000 - (uint64_t)(i / 2) * 10), 0);
	}
	assert_int_equal(impair_held(im), 16);
	assert_int_equal(impair_hold(im, &items[16], 5), -ENOSPC);
	assert_int_equal(impair_stats(im)->overflow, 1);
	assert_true(impair_next(im) == 930);
	assert_null(impair_release(im, 929));
	/* released in time order; equal times in the order they were held */
	for (uint64_t t = 900; t <= 1000; t += 5) {
		int *p;

		while ((p = impair_release(im, t)) != NULL) {
			uint64_t at = 1000 - (uint64_t)(*p / 2) * 10;

			assert_true(at <= t);
			assert_true(at >= last);
			if (at == last && n)
				assert_true(*p % 2 == 1); /* the second of a pair comes second */
			last = at;
			n++;
		}
	}
	assert_int_equal(n, 16);
	assert_int_equal(impair_held(im), 0);
	/* drain gives everything back regardless of time */
	for (int i = 0; i < 10; i++)
		assert_int_equal(impair_hold(im, &items[i], UINT64_MAX - (uint64_t)i), 0);
	n = 0;
	while (impair_drain(im))
		n++;
	assert_int_equal(n, 10);
	impair_free(im);
}

/* A stream through decide + hold + release: what is not dropped comes out
 * exactly once per copy, and reordering actually reorders. */
static void test_stream(void **state)
{
	struct impair_cfg c;
	struct impair *im;
	static uintptr_t seen[20001];
	unsigned out = 0, inversions = 0, expect = 0;
	uintptr_t prev = 0;

	(void)state;
	full_cfg(&c, 7);
	c.queue = 8192;
	im = mk(&c);
	memset(seen, 0, sizeof(seen));
	for (uintptr_t i = 1; i <= 20000; i++) {
		struct impair_verdict v;
		uint64_t now = i * 200;
		void *p;

		impair_decide(im, 64, now, &v);
		expect += v.copies;
		for (unsigned k = 0; k < v.copies; k++)
			assert_int_equal(impair_hold(im, (void *)i, v.at[k]), 0);
		while ((p = impair_release(im, now)) != NULL) {
			uintptr_t id = (uintptr_t)p;

			seen[id]++;
			inversions += id < prev;
			prev = id;
			out++;
		}
	}
	while (impair_drain(im))
		out++;
	assert_int_equal(out, expect);
	assert_true(inversions > 100);
	for (unsigned i = 1; i <= 20000; i++)
		assert_true(seen[i] <= 2);
	impair_free(im);
}

/* Outage window: frames from outage_start to outage_start + outage_len after
 * the first frame decided are all dropped (counted as dropped and
 * outage_dropped), frames before and after pass; the window consumes no
 * random draws, so loss decisions outside it are those of a run without it. */
static void test_outage(void **state)
{
	struct impair_cfg c, c2;
	struct impair_verdict v, v2;
	struct impair *im, *ref;
	const uint64_t t0 = 1000000000ull; /* the caller's clock does not start at 0 */
	unsigned in_window = 0;

	(void)state;
	impair_cfg_default(&c);
	c.outage_start_ns = 50000000;  /* 50 ms */
	c.outage_len_ns = 300000000;   /* 300 ms */
	assert_true(impair_cfg_active(&c));
	im = mk(&c);
	/* every 10 ms for 1 s: 0..40 ms pass, 50..340 ms dropped, 350 ms.. pass */
	for (uint64_t ms = 0; ms < 1000; ms += 10) {
		impair_decide(im, 100, t0 + ms * 1000000ull, &v);
		if (ms >= 50 && ms < 350) {
			assert_int_equal(v.copies, 0);
			in_window++;
		} else {
			assert_int_equal(v.copies, 1);
			assert_true(v.at[0] <= t0 + ms * 1000000ull);
		}
	}
	assert_int_equal(in_window, 30);
	assert_int_equal(impair_stats(im)->outage_dropped, 30);
	assert_int_equal(impair_stats(im)->dropped, 30);
	assert_int_equal(impair_stats(im)->frames, 100);
	impair_free(im);

	/* with 50 % loss: outside the window, the same decisions as without it */
	c.loss = 0.5;
	c2 = c;
	c2.outage_len_ns = 0;
	im = mk(&c);
	ref = mk(&c2);
	for (uint64_t ms = 0; ms < 1000; ms += 10) {
		impair_decide(im, 100, t0 + ms * 1000000ull, &v);
		if (ms >= 50 && ms < 350) {
			assert_int_equal(v.copies, 0);
			continue;
		}
		impair_decide(ref, 100, t0 + ms * 1000000ull, &v2);
		assert_int_equal(v.copies, v2.copies);
	}
	assert_int_equal(impair_stats(im)->outage_dropped, 30);
	assert_int_equal(impair_stats(im)->dropped, 30 + impair_stats(ref)->dropped);
	impair_free(im);
	impair_free(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfg_check),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_loss_rate),
		cmocka_unit_test(test_burst_loss),
		cmocka_unit_test(test_burst_time),
		cmocka_unit_test(test_delay_jitter_reorder),
		cmocka_unit_test(test_dup_and_corrupt),
		cmocka_unit_test(test_hold_queue),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_outage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
