/* SPDX-License-Identifier: BSD-3-Clause
 * Small seeded PRNG for the HT endpoint model: xoshiro256** seeded through
 * splitmix64. Header-only, no global state: every generator is a value the
 * caller owns, so two instances with the same seed produce the same stream.
 */
#ifndef HT_RAND_H
#define HT_RAND_H

#include <stdint.h>

struct ht_rand {
	uint64_t s[4];
};

/* splitmix64 step: advances *x and returns the next output. */
static inline uint64_t ht_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline void ht_rand_seed(struct ht_rand *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = ht_splitmix64(&x);
	/* splitmix64 never yields four zero words, but keep the guarantee explicit */
	if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3]))
		r->s[0] = 1;
}

static inline uint64_t ht_rotl64(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
static inline uint64_t ht_rand_u64(struct ht_rand *r)
{
	uint64_t *s = r->s;
	uint64_t result = ht_rotl64(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = ht_rotl64(s[3], 45);
	return result;
}

/* Uniform in [0, n); n == 0 returns 0. Unbiased: Lemire's multiply-and-
 * shift (the high word of x * n), drawing again only when the low word falls
 * in the 2^64 mod n values that would bias it; that bound (a division) is
 * computed only when the low word is below n, so almost never (the old
 * rejection loop divided twice per draw). */
static inline uint64_t ht_rand_below(struct ht_rand *r, uint64_t n)
{
	__extension__ typedef unsigned __int128 u128;

	if (n <= 1)
		return 0;
	u128 m = (u128)ht_rand_u64(r) * n;
	if ((uint64_t)m < n) {
		uint64_t t = (0 - n) % n; /* 2^64 mod n */

		while ((uint64_t)m < t)
			m = (u128)ht_rand_u64(r) * n;
	}
	return (uint64_t)(m >> 64);
}

/* Uniform in [lo, hi] (inclusive). */
static inline uint64_t ht_rand_range(struct ht_rand *r, uint64_t lo, uint64_t hi)
{
	return lo + ht_rand_below(r, hi - lo + 1);
}

/* True with probability pct/100. */
static inline int ht_rand_pct(struct ht_rand *r, unsigned pct)
{
	return ht_rand_below(r, 100) < pct;
}

/* Index i in [0, n) chosen with probability w[i] / sum(w); -1 if all zero. */
static inline int ht_rand_pick_sum(struct ht_rand *r, const unsigned *w, unsigned n,
				   uint64_t sum);

static inline int ht_rand_pick(struct ht_rand *r, const unsigned *w, unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += w[i];
	return ht_rand_pick_sum(r, w, n, sum);
}

/* ht_rand_pick with sum(w) computed once by the caller (the same draw). */
static inline int ht_rand_pick_sum(struct ht_rand *r, const unsigned *w, unsigned n,
				   uint64_t sum)
{
	if (!sum)
		return -1;
	uint64_t x = ht_rand_below(r, sum);
	for (unsigned i = 0; i < n; i++) {
		if (x < w[i])
			return (int)i;
		x -= w[i];
	}
	return (int)n - 1; /* not reached */
}

#endif
