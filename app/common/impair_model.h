/* SPDX-License-Identifier: BSD-3-Clause
 * impair_model: the one network impairment model of htoe-bridge's
 * impairment stage (app/bridge/impair.c) and htoe-sim's switch, sans-I/O.
 *
 * For every frame on a link, impair_model_decide() says what happens to it,
 * from the link's state, a seeded RNG and the caller's time in nanoseconds:
 *  - dropped: independent loss; a loss burst of a mean number of frames
 *    (burst_len, geometric: a burst ends with probability 1/burst_len per
 *    frame, that frame passing) or, with burst_ns, of a time (every frame of
 *    the link dropped until burst_ns after the burst began);
 *  - corrupted: one random bit flipped (impair_flip());
 *  - delayed: delay_ns + uniform 0..jitter_ns;
 *  - reordered: held back a further reorder_ns + uniform 0..reorder_ns, the
 *    longer path a frame takes through a switch fabric or a bonded link, so
 *    that the frames behind it overtake it;
 *  - duplicated: a second copy delivered at the same time, after the first.
 * No clock, no I/O, no allocation: the same seed and the same sequence of
 * calls give the same decisions. The probability parser below is the one
 * syntax of the bridge's [impair] keys and htoe-sim's options.
 */
#ifndef HTOE_IMPAIR_MODEL_H
#define HTOE_IMPAIR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_rand.h"

struct impair_params {
	double   loss;        /* independent loss probability, 0..1 */
	double   burst_loss;  /* probability that a loss burst starts, 0..1 */
	double   burst_len;   /* mean burst length in frames (>= 1, geometric) */
	uint64_t burst_ns;    /* > 0: a burst lasts this long instead */
	double   reorder;     /* probability a frame is held back, 0..1 */
	uint64_t reorder_ns;  /* held back reorder_ns + 0..reorder_ns */
	double   dup;         /* probability a frame is delivered twice, 0..1 */
	double   corrupt;     /* probability one random bit is flipped, 0..1 */
	uint64_t delay_ns;    /* added to every frame */
	uint64_t jitter_ns;   /* uniform extra delay 0..jitter_ns */
};

/* The model of one set of parameters: probabilities as thresholds on a
 * uniform 64-bit draw. Read-only once built; shared by every link. */
struct impair_model {
	struct impair_params p;
	uint64_t thr_loss, thr_burst, thr_burst_end, thr_reorder, thr_dup, thr_corrupt;
};

/* The state of one link (one direction). Zero it to start. */
struct impair_link {
	bool     in_burst;
	uint64_t burst_until;  /* a burst in time ends then */
};

enum impair_fate { IMPAIR_PASS, IMPAIR_LOSS, IMPAIR_BURST_START, IMPAIR_BURST };

struct impair_verdict {
	enum impair_fate fate; /* PASS: copies > 0 */
	unsigned copies;       /* 0 drop, 1, or 2 (duplicate) */
	bool     corrupt;      /* flip bit `bit` of the frame (before copying) */
	bool     reordered;
	uint64_t bit;
	uint64_t at[2];        /* release time of each copy; <= now: at once */
};

/* 0, or -EINVAL with a message naming the field in err: a probability
 * outside 0..1 (or NaN), burst_len < 1. Then m is set. */
int impair_model_init(struct impair_model *m, const struct impair_params *p,
		      char *err, size_t errlen);

/* Decide the fate of one frame of len bytes on link l at time now. */
void impair_model_decide(const struct impair_model *m, struct impair_link *l,
			 struct ht_rand *rng, size_t len, uint64_t now,
			 struct impair_verdict *v);

/* Flip bit `bit` (0 = bit 0 of byte 0) of buf[0..len). */
static inline void impair_flip(uint8_t *buf, size_t len, uint64_t bit)
{
	if (bit / 8 < len)
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
}

/* A probability written `0.1` or `10%` into *out. Refused (-1, *out
 * unchanged, the reason in why): an empty string, a sign, NaN, an infinity,
 * trailing characters, more than 1 (100%), and a bare `1`, more often a
 * mistaken `1%` than every frame (write `100%`). */
int htoe_parse_prob(const char *s, double *out, char *why, size_t whylen);

#endif
