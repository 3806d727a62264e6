/* SPDX-License-Identifier: BSD-3-Clause
 * time_heap: a binary min-heap of items by (time, insertion order). See
 * time_heap.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "time_heap.h"

int time_heap_init(struct time_heap *h, size_t cap, bool grow)
{
	h->n = 0;
	h->seq = 0;
	h->grow = grow;
	h->cap = cap ? cap : 1;
	h->v = calloc(h->cap, sizeof(*h->v));
	return h->v ? 0 : -ENOMEM;
}

void time_heap_fini(struct time_heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

static bool before(const struct time_heap_ent *a, const struct time_heap_ent *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int time_heap_push(struct time_heap *h, void *item, uint64_t at)
{
	struct time_heap_ent e = { .at = at, .item = item };
	size_t i;

	if (h->n == h->cap) {
		struct time_heap_ent *v;

		if (!h->grow)
			return -ENOSPC;
		v = realloc(h->v, 2 * h->cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap *= 2;
	}
	e.seq = h->seq++;
	i = h->n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!before(&e, &h->v[p]))
			break;
		h->v[i] = h->v[p];
		i = p;
	}
	h->v[i] = e;
	return 0;
}

void *time_heap_pop(struct time_heap *h)
{
	struct time_heap_ent top, last;
	size_t i = 0;

	if (!h->n)
		return NULL;
	top = h->v[0];
	last = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct time_heap_ent *mv = &last;

		if (l < h->n && before(&h->v[l], mv)) {
			m = l;
			mv = &h->v[l];
		}
		if (r < h->n && before(&h->v[r], mv))
			m = r;
		if (m == i)
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (h->n)
		h->v[i] = last;
	return top.item;
}
