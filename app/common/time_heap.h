/* SPDX-License-Identifier: BSD-3-Clause
 * time_heap: the one binary min-heap of items due at a time, for the frames
 * that wait (htoe-bridge's impairment hold queue, htoe-sim's frames in
 * flight on its switch). Items due at the same time come out in the order
 * they went in, so a run does not depend on the heap's shape. A fixed
 * capacity (refuses when full) or one that doubles as needed; no clock,
 * no I/O; the item pointers are the caller's.
 */
#ifndef HTOE_TIME_HEAP_H
#define HTOE_TIME_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct time_heap_ent {
	uint64_t at, seq;
	void    *item;
};

struct time_heap {
	struct time_heap_ent *v;
	size_t   n, cap;
	uint64_t seq;
	bool     grow;   /* double the capacity when full, else refuse */
};

/* Room for cap items (cap > 0). 0, or -ENOMEM. */
int time_heap_init(struct time_heap *h, size_t cap, bool grow);
/* Frees the array; the items still in it are not touched. */
void time_heap_fini(struct time_heap *h);
/* 0, -ENOSPC (full, fixed capacity) or -ENOMEM (cannot grow). */
int time_heap_push(struct time_heap *h, void *item, uint64_t at);
/* The earliest item (NULL when empty). */
void *time_heap_pop(struct time_heap *h);

/* The earliest item if it is due at now (at <= now), else NULL. */
static inline void *time_heap_pop_due(struct time_heap *h, uint64_t now)
{
	return h->n && h->v[0].at <= now ? time_heap_pop(h) : NULL;
}

/* The time of the earliest item, UINT64_MAX when empty. */
static inline uint64_t time_heap_next(const struct time_heap *h)
{
	return h->n ? h->v[0].at : UINT64_MAX;
}

#endif
