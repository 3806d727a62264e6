/* SPDX-License-Identifier: BSD-3-Clause
 * lat_hist: a fixed-size log-linear latency histogram (nanoseconds), header
 * only, no clock, no allocation. Values below 32 ns are exact; above, each
 * power of two is split into 32 buckets (at most 3.1 % relative error), up
 * to 2^41 ns (~37 minutes; larger values land in the last bucket). Exact
 * count, sum, min and max are kept besides. The one histogram of the
 * project: lib/dimm's pager (fault service times), app/node (read round trips
 * of the bridge's workload), htoe-bench (TCP ping-pong) and htoe-dimm; in
 * lib/ so that the libraries may use it. Tested by tests/test_lat_hist.c.
 */
#ifndef LAT_HIST_H
#define LAT_HIST_H

#include <stdint.h>
#include <stdio.h>

#define LAT_SUB_BITS 5u
#define LAT_SUB      (1u << LAT_SUB_BITS)
#define LAT_MAX_EXP  40u
#define LAT_BUCKETS  (LAT_SUB * (LAT_MAX_EXP - LAT_SUB_BITS + 2u))

struct lat_hist {
	uint64_t count, sum_ns, min_ns, max_ns;
	uint64_t bucket[LAT_BUCKETS];
};

static inline unsigned lat_index(uint64_t v)
{
	if (v < LAT_SUB)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);

	if (e > LAT_MAX_EXP)
		return LAT_BUCKETS - 1u;
	return LAT_SUB * (e - LAT_SUB_BITS + 1u) + (unsigned)(v >> (e - LAT_SUB_BITS)) - LAT_SUB;
}

/* Lowest value of bucket i, and its width. */
static inline uint64_t lat_bucket_low(unsigned i)
{
	if (i < LAT_SUB)
		return i;
	unsigned oct = i / LAT_SUB - 1u, sub = i % LAT_SUB;

	return (uint64_t)(LAT_SUB + sub) << oct;
}

static inline uint64_t lat_bucket_width(unsigned i)
{
	return i < LAT_SUB ? 1 : 1ull << (i / LAT_SUB - 1u);
}

static inline void lat_add(struct lat_hist *h, uint64_t ns)
{
	if (!h->count || ns < h->min_ns)
		h->min_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->count++;
	h->sum_ns += ns;
	h->bucket[lat_index(ns)]++;
}

/* Add b's samples to a (the histograms of several runs as one). */
static inline void lat_merge(struct lat_hist *a, const struct lat_hist *b)
{
	if (!b->count)
		return;
	if (!a->count || b->min_ns < a->min_ns)
		a->min_ns = b->min_ns;
	if (b->max_ns > a->max_ns)
		a->max_ns = b->max_ns;
	a->count += b->count;
	a->sum_ns += b->sum_ns;
	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		a->bucket[i] += b->bucket[i];
}

/* The q-quantile (0..1): the middle of the bucket holding it, clamped to
 * [min, max]. 0 when empty. */
static inline double lat_quantile(const struct lat_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count), seen = 0;

	if (rank >= h->count)
		rank = h->count - 1;
	for (unsigned i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen > rank) {
			double v = (double)lat_bucket_low(i) + (double)(lat_bucket_width(i) - 1) / 2;

			if (v < (double)h->min_ns)
				v = (double)h->min_ns;
			if (v > (double)h->max_ns)
				v = (double)h->max_ns;
			return v;
		}
	}
	return (double)h->max_ns;
}

/* JSON object: count, min, mean, p50, p99, p999, max (ns) and "hist":
 * [[low_ns, count], ...] of the non-empty buckets (for CDF plots). */
static inline void lat_json(const struct lat_hist *h, FILE *f)
{
	fprintf(f, "{\"count\":%llu,\"min_ns\":%llu,\"mean_ns\":%.1f,\"p50_ns\":%.1f,"
		"\"p99_ns\":%.1f,\"p999_ns\":%.1f,\"max_ns\":%llu,\"hist\":[",
		(unsigned long long)h->count, (unsigned long long)h->min_ns,
		h->count ? (double)h->sum_ns / (double)h->count : 0.0, lat_quantile(h, 0.5),
		lat_quantile(h, 0.99), lat_quantile(h, 0.999), (unsigned long long)h->max_ns);
	const char *sep = "";

	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		if (h->bucket[i]) {
			fprintf(f, "%s[%llu,%llu]", sep, (unsigned long long)lat_bucket_low(i),
				(unsigned long long)h->bucket[i]);
			sep = ",";
		}
	fputs("]}", f);
}

#endif
