/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm workloads. See workloads.h.
 */
#include <string.h>
#include <time.h>

#include "htmodel/ht_rand.h"
#include "workloads.h"

static const char *const names[WL__N] = { "stream", "gups", "kv", "sort" };
static const char *const units[WL__N] = { "MB/s", "MUPS", "Mops/s", "Melem/s" };

const char *wl_name(int k)
{
	return k >= 0 && k < WL__N ? names[k] : "?";
}

const char *wl_unit(int k)
{
	return k >= 0 && k < WL__N ? units[k] : "?";
}

int wl_by_name(const char *s)
{
	for (int k = 0; k < WL__N; k++)
		if (!strcmp(s, names[k]))
			return k;
	return -1;
}

void wl_params_default(struct wl_params *p)
{
	p->seed = 1;
	p->stream_ntimes = 2;
	p->gups_updates = 65536;
	p->kv_ops = 65536;
}

double wl_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t pow2_floor(uint64_t v)
{
	uint64_t p = 1;

	while (p * 2 <= v)
		p *= 2;
	return p;
}

/* ------------------------------------------------------------- stream */

static void stream_init(uint8_t *buf, size_t size)
{
	size_t n = size / 24;
	double *a = (double *)buf, *b = a + n, *c = b + n;

	memset(buf, 0, size);
	for (size_t i = 0; i < n; i++) {
		a[i] = 1.0 + (double)(i % 1000) * 1e-3;
		b[i] = 2.0;
		c[i] = 0.0;
	}
}

static void stream_run(const struct wl_params *p, uint8_t *mem, size_t size, struct wl_out *o)
{
	size_t n = size / 24;
	double *a = (double *)mem, *b = a + n, *c = b + n;
	const double s = 3.0;

	for (unsigned k = 0; k < p->stream_ntimes; k++) {
		double t0 = wl_seconds();

		for (size_t i = 0; i < n; i++)
			c[i] = a[i];
		double t1 = wl_seconds();

		for (size_t i = 0; i < n; i++)
			b[i] = s * c[i];
		double t2 = wl_seconds();

		for (size_t i = 0; i < n; i++)
			c[i] = a[i] + b[i];
		double t3 = wl_seconds();

		for (size_t i = 0; i < n; i++)
			a[i] = b[i] + s * c[i];
		double t4 = wl_seconds();

		o->kernel_s[0] += t1 - t0;
		o->kernel_s[1] += t2 - t1;
		o->kernel_s[2] += t3 - t2;
		o->kernel_s[3] += t4 - t3;
	}
	/* STREAM's count: copy and scale move 16 bytes per element, add and
	 * triad 24 */
	o->units = (double)p->stream_ntimes * (double)n * (16 + 16 + 24 + 24);
	uint64_t d = 0;

	for (size_t i = 0; i < n; i += 97) {
		uint64_t x;

		memcpy(&x, &a[i], 8);
		d = d * 31 + x;
	}
	o->digest = d;
}

/* ------------------------------------------------------------- gups */

#define GUPS_POLY 0x0000000000000007ull

static void gups_init(uint8_t *buf, size_t size)
{
	uint64_t n = pow2_floor(size / 8), *t = (uint64_t *)buf;

	memset(buf, 0, size);
	for (uint64_t i = 0; i < n; i++)
		t[i] = i;
}

static void gups_run(const struct wl_params *p, uint8_t *mem, size_t size, struct wl_out *o)
{
	uint64_t n = pow2_floor(size / 8), *t = (uint64_t *)mem;
	uint64_t ran = p->seed | 1;

	for (uint64_t i = 0; i < p->gups_updates; i++) {
		ran = (ran << 1) ^ ((int64_t)ran < 0 ? GUPS_POLY : 0);
		t[ran & (n - 1)] ^= ran;
	}
	o->units = (double)p->gups_updates;
	o->digest = ran;
}

/* ------------------------------------------------------------- kv */

struct kv_slot {
	uint64_t key;    /* 0: empty */
	uint64_t value;
};

static uint64_t kv_hash(uint64_t k, unsigned bits)
{
	return (k * 0x9E3779B97F4A7C15ull) >> (64 - bits);
}

static struct kv_slot *kv_find(struct kv_slot *t, uint64_t n, unsigned bits, uint64_t key)
{
	uint64_t i = kv_hash(key, bits);

	for (;;) {
		if (t[i].key == key || t[i].key == 0)
			return &t[i];
		i = (i + 1) & (n - 1);
	}
}

static void kv_run(const struct wl_params *p, uint8_t *mem, size_t size, struct wl_out *o)
{
	uint64_t n = pow2_floor(size / sizeof(struct kv_slot));
	unsigned bits = (unsigned)__builtin_ctzll(n);
	struct kv_slot *t = (struct kv_slot *)mem;
	uint64_t ins = p->kv_ops / 2, look = p->kv_ops / 4, upd = p->kv_ops - ins - look;
	uint64_t x, d = 0, found = 0;

	if (ins > n / 2)
		ins = n / 2; /* load factor at most 1/2 */
	x = p->seed;
	for (uint64_t i = 0; i < ins; i++) {
		uint64_t k = ht_splitmix64(&x) | 1;
		struct kv_slot *s = kv_find(t, n, bits, k);

		s->key = k;
		s->value = k ^ i;
	}
	/* lookups: every other key was inserted */
	uint64_t xi = p->seed, xo = p->seed ^ 0xabcdef;

	for (uint64_t i = 0; i < look; i++) {
		uint64_t k = (i & 1) ? ht_splitmix64(&xo) | 1 : ht_splitmix64(&xi) | 1;
		struct kv_slot *s = kv_find(t, n, bits, k);

		if (s->key == k) {
			found++;
			d = d * 1000003 + s->value;
		}
	}
	/* updates of inserted keys */
	xi = p->seed;
	for (uint64_t i = 0; i < upd && ins; i++) {
		if (i % ins == 0)
			xi = p->seed;
		uint64_t k = ht_splitmix64(&xi) | 1;
		struct kv_slot *s = kv_find(t, n, bits, k);

		if (s->key == k)
			s->value += i;
	}
	o->units = (double)(ins + look + upd);
	o->digest = d ^ (found << 40);
}

/* ------------------------------------------------------------- sort */

static void sort_init(const struct wl_params *p, uint8_t *buf, size_t size)
{
	uint64_t n = size / 8, x = p->seed, *v = (uint64_t *)buf;

	memset(buf, 0, size);
	for (uint64_t i = 0; i < n; i++)
		v[i] = ht_splitmix64(&x);
}

static void swap64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* In place, so that every access is to the (remote) array itself. */
static void quicksort(uint64_t *v, int64_t lo, int64_t hi)
{
	while (hi - lo > 16) {
		int64_t mid = lo + (hi - lo) / 2;

		if (v[mid] < v[lo])
			swap64(&v[mid], &v[lo]);
		if (v[hi] < v[lo])
			swap64(&v[hi], &v[lo]);
		if (v[hi] < v[mid])
			swap64(&v[hi], &v[mid]);
		uint64_t pivot = v[mid];
		int64_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				swap64(&v[i], &v[j]);
				i++;
				j--;
			}
		}
		/* recurse into the smaller part */
		if (j - lo < hi - i) {
			quicksort(v, lo, j);
			lo = i;
		} else {
			quicksort(v, i, hi);
			hi = j;
		}
	}
	for (int64_t i = lo + 1; i <= hi; i++) {
		uint64_t x = v[i];
		int64_t j = i - 1;

		while (j >= lo && v[j] > x) {
			v[j + 1] = v[j];
			j--;
		}
		v[j + 1] = x;
	}
}

static void sort_run(uint8_t *mem, size_t size, struct wl_out *o)
{
	uint64_t n = size / 8, *v = (uint64_t *)mem, d = 0;

	if (n > 1)
		quicksort(v, 0, (int64_t)n - 1);
	for (uint64_t i = 1; i < n; i++)
		if (v[i - 1] > v[i])
			d |= 1ull << 63; /* not sorted: the digest says so */
	for (uint64_t i = 0; i < n; i += 61)
		d = d * 31 + v[i];
	o->units = (double)n;
	o->digest = d;
}

/* ------------------------------------------------------------- dispatch */

void wl_init(int k, const struct wl_params *p, uint8_t *buf, size_t size)
{
	switch (k) {
	case WL_STREAM:
		stream_init(buf, size);
		break;
	case WL_GUPS:
		gups_init(buf, size);
		break;
	case WL_KV:
		memset(buf, 0, size);
		break;
	case WL_SORT:
		sort_init(p, buf, size);
		break;
	default:
		break;
	}
}

void wl_run(int k, const struct wl_params *p, uint8_t *mem, size_t size, struct wl_out *o)
{
	memset(o, 0, sizeof(*o));
	switch (k) {
	case WL_STREAM:
		stream_run(p, mem, size, o);
		break;
	case WL_GUPS:
		gups_run(p, mem, size, o);
		break;
	case WL_KV:
		kv_run(p, mem, size, o);
		break;
	case WL_SORT:
		sort_run(mem, size, o);
		break;
	default:
		break;
	}
}
