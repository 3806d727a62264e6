/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_outstanding: the requester side's outstanding table. See
 * htoe_outstanding.h.
 */
#include "htoe/htoe_outstanding.h"

#include <errno.h>
#include <string.h>

/* ---- min-heap on (deadline, order) --------------- */

int htoe_outstanding_init(struct htoe_outstanding *t, uint64_t np_timeout_ns)
{
	if (!t || np_timeout_ns == 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->np_timeout_ns = np_timeout_ns;
	for (unsigned i = 0; i < HTOE_TAG_MAX; i++)
		t->pos[i] = -1;
	return 0;
}

static inline bool before(const struct htoe_outstanding *t, uint16_t a, uint16_t b)
{
	if (t->e[a].deadline != t->e[b].deadline)
		return t->e[a].deadline < t->e[b].deadline;
	return t->order[a] < t->order[b];
}

static inline void heap_set(struct htoe_outstanding *t, unsigned p, uint16_t idx)
{
	t->heap[p] = idx;
	t->pos[idx] = (int16_t)p;
}

static void sift_up(struct htoe_outstanding *t, unsigned p)
{
	uint16_t idx = t->heap[p];

	while (p > 0) {
		unsigned parent = (p - 1) / 2;
		if (!before(t, idx, t->heap[parent]))
			break;
		heap_set(t, p, t->heap[parent]);
		p = parent;
	}
	heap_set(t, p, idx);
}

static void sift_down(struct htoe_outstanding *t, unsigned p)
{
	uint16_t idx = t->heap[p];

	for (;;) {
		unsigned c = 2 * p + 1;
		if (c >= t->n)
			break;
		if (c + 1 < t->n && before(t, t->heap[c + 1], t->heap[c]))
			c++;
		if (!before(t, t->heap[c], idx))
			break;
		heap_set(t, p, t->heap[c]);
		p = c;
	}
	heap_set(t, p, idx);
}

/* Remove entry idx (in use) from the heap and the busy masks. */
static void entry_remove(struct htoe_outstanding *t, uint16_t idx)
{
	unsigned p = (unsigned)t->pos[idx];
	uint16_t last = t->heap[--t->n];

	t->pos[idx] = -1;
	t->busy[idx / HTOE_TAG_SRCTAGS] &= ~(1u << (idx % HTOE_TAG_SRCTAGS));
	if (p == t->n)
		return;
	heap_set(t, p, last);
	if (p > 0 && before(t, last, t->heap[(p - 1) / 2]))
		sift_up(t, p);
	else
		sift_down(t, p);
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void entry_insert(struct htoe_outstanding *t, uint16_t idx,
			 const struct htoe_outstanding_entry *e)
{
	t->e[idx] = *e;
	t->order[idx] = t->add_seq++;
	t->busy[idx / HTOE_TAG_SRCTAGS] |= 1u << (idx % HTOE_TAG_SRCTAGS);
	heap_set(t, t->n, idx);
	t->n++;
	sift_up(t, t->n - 1u);
	if (t->n > t->hwm)
		t->hwm = t->n;
	t->stats.added++;
}

static inline int key(uint8_t unitid, uint8_t srctag)
{
	if (unitid >= HTOE_TAG_UNITIDS || srctag >= HTOE_TAG_SRCTAGS)
		return -1;
	return (int)(unitid * HTOE_TAG_SRCTAGS + srctag);
}

int htoe_outstanding_add(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			 uint16_t vl, uint8_t epoch, const struct htoe_np_info *np,
			 uint64_t now)
{
	int idx = key(unitid, srctag);

	if (idx < 0 || !np)
		return -EINVAL;
	if (t->pos[idx] >= 0) {
		t->stats.dup_add++;
		return -EEXIST;
	}
	struct htoe_outstanding_entry e = {
		.unitid = unitid,
		.srctag = srctag,
		.vl = vl,
		.epoch = epoch,
		.np = *np,
		.deadline = add_sat(now, t->np_timeout_ns),
	};
	entry_insert(t, (uint16_t)idx, &e);
	return 0;
}

unsigned htoe_outstanding_free_tags(const struct htoe_outstanding *t, uint8_t unitid)
{
	if (unitid >= HTOE_TAG_UNITIDS)
		return 0;
	return HTOE_TAG_SRCTAGS - (unsigned)__builtin_popcount(t->busy[unitid]);
}

bool htoe_outstanding_busy(const struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag)
{
	int idx = key(unitid, srctag);

	return idx >= 0 && t->pos[idx] >= 0;
}

const struct htoe_outstanding_entry *htoe_outstanding_find(const struct htoe_outstanding *t,
							   uint8_t unitid, uint8_t srctag)
{
	int idx = key(unitid, srctag);

	return idx < 0 || t->pos[idx] < 0 ? NULL : &t->e[idx];
}

int htoe_outstanding_complete(struct htoe_outstanding *t, uint16_t vl, uint8_t unitid,
			      uint8_t srctag, struct htoe_outstanding_entry *out)
{
	int idx = key(unitid, srctag);

	if (idx < 0 || t->pos[idx] < 0) {
		t->stats.unknown++;
		return -ENOENT;
	}
	if (t->e[idx].vl != vl) {
		t->stats.unknown++;
		t->stats.wrong_vl++;
		return -ENOENT;
	}
	if (out)
		*out = t->e[idx];
	entry_remove(t, (uint16_t)idx);
	t->stats.completed++;
	return 0;
}

int htoe_outstanding_remove(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			    struct htoe_outstanding_entry *out)
{
	int idx = key(unitid, srctag);

	if (idx < 0 || t->pos[idx] < 0) {
		t->stats.unknown++;
		return -ENOENT;
	}
	if (out)
		*out = t->e[idx];
	entry_remove(t, (uint16_t)idx);
	t->stats.completed++;
	return 0;
}

unsigned htoe_outstanding_expire(struct htoe_outstanding *t, uint64_t now,
				 htoe_outstanding_cb cb, void *ctx)
{
	unsigned n = 0;

	while (t->n > 0 && t->e[t->heap[0]].deadline <= now) {
		uint16_t idx = t->heap[0];
		struct htoe_outstanding_entry copy = t->e[idx];
		entry_remove(t, idx);
		t->stats.expired++;
		n++;
		if (cb)
			cb(ctx, &copy);
	}
	return n;
}

unsigned htoe_outstanding_drop_vl(struct htoe_outstanding *t, uint16_t vl,
				  htoe_outstanding_cb cb, void *ctx)
{
	unsigned n = 0;

	for (unsigned i = 0; i < HTOE_TAG_MAX && t->n > 0; i++) {
		if (t->pos[i] < 0 || t->e[i].vl != vl)
			continue;
		struct htoe_outstanding_entry copy = t->e[i];
		entry_remove(t, (uint16_t)i);
		t->stats.dropped++;
		n++;
		if (cb)
			cb(ctx, &copy);
	}
	return n;
}

uint64_t htoe_outstanding_next_deadline(const struct htoe_outstanding *t)
{
	return t->n ? t->e[t->heap[0]].deadline : HTOE_TAG_NEVER;
}

unsigned htoe_outstanding_count(const struct htoe_outstanding *t) { return t->n; }
unsigned htoe_outstanding_hwm(const struct htoe_outstanding *t) { return t->hwm; }

