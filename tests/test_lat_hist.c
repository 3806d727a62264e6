/* SPDX-License-Identifier: BSD-3-Clause
 * The project's latency histogram (lib/common/lat_hist.h): exact small
 * values, the log-linear buckets (contiguous, 32 per power of two, at most
 * 1/32 relative width), quantiles against a sorted reference, the clamp to
 * [min, max], the last bucket, merging and the JSON form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/lat_hist.h"

static void test_buckets(void **state)
{
	(void)state;
	/* below 32 ns: one bucket per ns */
	for (uint64_t v = 0; v < 32; v++) {
		assert_int_equal(lat_index(v), v);
		assert_int_equal(lat_bucket_low((unsigned)v), v);
		assert_int_equal(lat_bucket_width((unsigned)v), 1);
	}
	/* the buckets tile the values: each starts where the last ended, and
	 * every value maps into the bucket that covers it */
	for (unsigned i = 1; i < LAT_BUCKETS; i++)
		assert_int_equal(lat_bucket_low(i), lat_bucket_low(i - 1) + lat_bucket_width(i - 1));
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		uint64_t lo = lat_bucket_low(i), w = lat_bucket_width(i);

		assert_int_equal(lat_index(lo), i);
		assert_int_equal(lat_index(lo + w - 1), i);
		if (lo >= LAT_SUB)
			assert_true(w * LAT_SUB <= lo);   /* relative width at most 1/32 */
	}
	/* known answers: 32..63 one per ns, 64..127 two per bucket, 1000 ns */
	assert_int_equal(lat_index(32), 32);
	assert_int_equal(lat_index(63), 63);
	assert_int_equal(lat_index(64), 64);
	assert_int_equal(lat_index(65), 64);
	assert_int_equal(lat_index(66), 65);
	assert_int_equal(lat_bucket_low(lat_index(1000)), 992);
	assert_int_equal(lat_bucket_width(lat_index(1000)), 16);
	/* beyond 2^41 ns: the last bucket */
	assert_int_equal(lat_index(UINT64_MAX), LAT_BUCKETS - 1);
	assert_int_equal(lat_index(1ull << 41), LAT_BUCKETS - 1);
	assert_int_equal(lat_index((1ull << 41) - 1), LAT_BUCKETS - 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_quantiles(void **state)
{
	static struct lat_hist h;
	static uint64_t v[10000];
	uint64_t x = 88172645463325252ull;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_true(lat_quantile(&h, 0.5) == 0);
	/* a spread of latencies from 10 ns to ~1 ms (xorshift, fixed seed) */
	for (unsigned i = 0; i < 10000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = 10 + (x % 1000) * (1 + (x >> 40) % 1000);
		lat_add(&h, v[i]);
	}
	qsort(v, 10000, sizeof(v[0]), cmp_u64);
	assert_int_equal(h.count, 10000);
	assert_int_equal(h.min_ns, v[0]);
	assert_int_equal(h.max_ns, v[9999]);
	static const double qs[] = { 0.01, 0.1, 0.5, 0.9, 0.99, 0.999 };

	for (unsigned k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		double want = (double)v[(unsigned)(qs[k] * 10000)], got = lat_quantile(&h, qs[k]);

		/* within the bucket: at most 1/32 of the value away */
		assert_true(got >= want - want / 32 - 1 && got <= want + want / 32 + 1);
	}
	/* one value: every quantile is it (clamped to min and max) */
	memset(&h, 0, sizeof(h));
	lat_add(&h, 1000);
	assert_true(lat_quantile(&h, 0) == 1000);
	assert_true(lat_quantile(&h, 0.5) == 1000);
	assert_true(lat_quantile(&h, 1) == 1000);
}

static void test_merge(void **state)
{
	static struct lat_hist a, b, all;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&all, 0, sizeof(all));
	lat_merge(&a, &b); /* empty into empty: still empty */
	assert_int_equal(a.count, 0);
	assert_true(lat_quantile(&a, 0.5) == 0);
	for (uint64_t v = 1; v <= 1000; v++) {
		lat_add(v % 3 ? &a : &b, v * 1000);
		lat_add(&all, v * 1000);
	}
	lat_merge(&a, &b);
	assert_memory_equal(&a, &all, sizeof(a));
	/* into an empty one: a copy, min included */
	memset(&a, 0, sizeof(a));
	lat_merge(&a, &all);
	assert_memory_equal(&a, &all, sizeof(a));
	assert_int_equal(a.min_ns, 1000);
	double p50 = lat_quantile(&a, 0.5), p99 = lat_quantile(&a, 0.99);

	assert_true(p50 > 480000 && p50 < 520000);
	assert_true(p99 > 960000 && p99 < 1020000);
}

static void test_json(void **state)
{
	static struct lat_hist h;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	(void)state;
	memset(&h, 0, sizeof(h));
	lat_add(&h, 5);
	lat_add(&h, 5);
	lat_add(&h, 65);
	lat_json(&h, f);
	fclose(f);
	assert_string_equal(buf, "{\"count\":3,\"min_ns\":5,\"mean_ns\":25.0,\"p50_ns\":5.0,"
			    "\"p99_ns\":64.5,\"p999_ns\":64.5,\"max_ns\":65,\"hist\":[[5,2],[64,1]]}");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_quantiles),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
