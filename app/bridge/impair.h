/* SPDX-License-Identifier: BSD-3-Clause
 * impair: a seeded network impairment stage, sans-I/O.
 *
 * For every frame that passes a point (a port's TX or RX), impair_decide()
 * says what happens to it, by the one impairment model (app/common/
 * impair_model.h: loss, bursts in frames or in time, corruption, delay,
 * reordering, duplication), or drops it because it falls in the outage
 * window (every frame from outage_start_ns to outage_start_ns +
 * outage_len_ns after the first frame the stage decides: a link that goes
 * dark, long enough for VL resets and request timeouts). The same seed and
 * the same sequence of calls give the same decisions.
 *
 * Frames that must wait are kept in a hold queue ordered by release time
 * (app/common/time_heap.h):
 * the caller passes an opaque item (an mbuf in htoe-bridge) to impair_hold()
 * and gets it back from impair_release() once due. Nothing here touches
 * packet memory except impair_flip(), nor reads a clock: time is the
 * caller's nanoseconds. The queue is allocated by impair_new(), never on the
 * per-frame path.
 */
#ifndef HTOE_IMPAIR_H
#define HTOE_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_rand.h"
#include "impair_model.h"
#include "time_heap.h"

struct impair_cfg {
	uint64_t seed;
	double   loss;        /* independent loss probability, 0..1 */
	double   burst_loss;  /* probability that a loss burst starts, 0..1 */
	double   burst_len;   /* mean burst length in frames (>= 1, geometric) */
	uint64_t burst_us;    /* > 0: a burst lasts this many microseconds
	                       * instead, dropping every frame meanwhile */
	double   reorder;     /* probability a frame is held back, 0..1 */
	uint64_t reorder_ns;  /* a held-back frame waits reorder_ns + 0..reorder_ns */
	double   dup;         /* probability a frame is delivered twice, 0..1 */
	double   corrupt;     /* probability one random bit is flipped, 0..1 */
	uint64_t delay_ns;    /* added to every frame */
	uint64_t jitter_ns;   /* uniform extra delay 0..jitter_ns */
	unsigned queue;       /* hold queue capacity in frames (0: 4096) */
	uint64_t outage_start_ns; /* outage window start, after the first frame decided */
	uint64_t outage_len_ns;   /* outage window length (0: no outage) */
};

/* Defaults: nothing impaired; burst_len 4, reorder_ns 50 us, seed 1. */
void impair_cfg_default(struct impair_cfg *c);
/* True if c changes anything (a probability > 0, a delay or an outage). */
bool impair_cfg_active(const struct impair_cfg *c);
/* 0, or -EINVAL with a message naming the field: probability outside
 * 0..1, burst_len < 1. */
int impair_cfg_check(const struct impair_cfg *c, char *err, size_t errlen);

struct impair_stats {
	uint64_t frames;       /* frames decided */
	uint64_t dropped;      /* independent losses, and outage drops */
	uint64_t burst_dropped;/* losses in bursts (incl. the first of a burst) */
	uint64_t bursts;       /* bursts started */
	uint64_t corrupted;
	uint64_t delayed;      /* frames given a release time in the future */
	uint64_t reordered;
	uint64_t duplicated;
	uint64_t held;         /* items put in the hold queue */
	uint64_t released;     /* items given back by impair_release() */
	uint64_t overflow;     /* impair_hold() refused: queue full */
	uint64_t outage_dropped; /* of `dropped`: in the outage window */
};

struct impair {
	struct impair_cfg cfg;
	struct ht_rand rng;
	struct impair_model model;
	struct impair_link link;
	bool     started;      /* t0 is set (first impair_decide) */
	uint64_t t0;           /* time of the first frame decided */
	struct time_heap hold;  /* fixed capacity cfg.queue */
	struct impair_stats st;
};

/* Allocate and initialise; NULL on a bad config or no memory. */
struct impair *impair_new(const struct impair_cfg *cfg);
/* Frees the queue; items still held are not touched (drain them first). */
void impair_free(struct impair *im);

/* Decide the fate of one frame of `len` bytes at time `now`. */
void impair_decide(struct impair *im, size_t len, uint64_t now, struct impair_verdict *v);

/* Keep `item` until time `at`. 0, or -ENOSPC when the queue is full (the
 * caller then sends it at once or drops it). Items due at the same time
 * come back in the order they were held. */
int impair_hold(struct impair *im, void *item, uint64_t at);
/* The next held item due at `now` (at <= now), or NULL. */
void *impair_release(struct impair *im, uint64_t now);
/* Any held item regardless of time (shutdown), or NULL when empty. */
void *impair_drain(struct impair *im);
/* Release time of the next held item, UINT64_MAX if none. */
uint64_t impair_next(const struct impair *im);
static inline unsigned impair_held(const struct impair *im) { return (unsigned)im->hold.n; }
static inline const struct impair_stats *impair_stats(const struct impair *im)
{
	return &im->st;
}

#endif
