/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_outstanding: the requester side's outstanding table. See
 * htoe_outstanding.h.
 */
#include "htoe/htoe_outstanding.h"

#include <errno.h>
#include <string.h>

/* ---- a list sorted by (deadline, order added) ---- */

int htoe_outstanding_init(struct htoe_outstanding *t, uint64_t np_timeout_ns)
{
	if (!t || np_timeout_ns == 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->np_timeout_ns = np_timeout_ns;
	t->head = t->tail = -1;
	return 0;
}

static inline bool in_use(const struct htoe_outstanding *t, unsigned idx)
{
	return t->busy[idx / HTOE_TAG_SRCTAGS] & (1u << (idx % HTOE_TAG_SRCTAGS));
}

/* Remove entry idx (in use) from the list and the busy masks. */
static inline void entry_remove(struct htoe_outstanding *t, uint16_t idx)
{
	int16_t p = t->prev[idx], q = t->next[idx];

	if (p >= 0)
		t->next[p] = q;
	else
		t->head = q;
	if (q >= 0)
		t->prev[q] = p;
	else
		t->tail = p;
	t->n--;
	t->busy[idx / HTOE_TAG_SRCTAGS] &= ~(1u << (idx % HTOE_TAG_SRCTAGS));
}

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Link entry idx, its fields written, into the list and the busy masks. */
static inline void entry_insert(struct htoe_outstanding *t, uint16_t idx)
{
	const struct htoe_outstanding_entry *e = &t->e[idx];
	int16_t p = t->tail;

	t->busy[idx / HTOE_TAG_SRCTAGS] |= 1u << (idx % HTOE_TAG_SRCTAGS);
	/* after every entry with a deadline <= its own: the tail, unless the
	 * caller's clock went back */
	while (p >= 0 && t->e[p].deadline > e->deadline)
		p = t->prev[p];
	t->prev[idx] = p;
	t->next[idx] = p >= 0 ? t->next[p] : t->head;
	if (t->next[idx] >= 0)
		t->prev[t->next[idx]] = (int16_t)idx;
	else
		t->tail = (int16_t)idx;
	if (p >= 0)
		t->next[p] = (int16_t)idx;
	else
		t->head = (int16_t)idx;
	t->n++;
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
	return htoe_outstanding_add_span(t, unitid, srctag, vl, epoch, np, 0, 0, now);
}

int htoe_outstanding_add_span(struct htoe_outstanding *t, uint8_t unitid, uint8_t srctag,
			      uint16_t vl, uint8_t epoch, const struct htoe_np_info *np,
			      uint64_t addr, uint32_t len, uint64_t now)
{
	struct htoe_outstanding_entry *e;
	uint16_t idx;

	if (unitid >= HTOE_TAG_UNITIDS || srctag >= HTOE_TAG_SRCTAGS || !np)
		return -EINVAL;
	if (htoe_outstanding_busy(t, unitid, srctag)) {
		t->stats.dup_add++;
		return -EEXIST;
	}
	idx = (uint16_t)(unitid * HTOE_TAG_SRCTAGS + srctag);
	e = &t->e[idx];
	e->unitid = unitid;
	e->srctag = srctag;
	e->vl = vl;
	e->epoch = epoch;
	e->np = *np;
	e->deadline = add_sat(now, t->np_timeout_ns);
	e->addr = addr;
	e->len = len;
	entry_insert(t, idx);
	return 0;
}

unsigned htoe_outstanding_free_tags(const struct htoe_outstanding *t, uint8_t unitid)
{
	if (unitid >= HTOE_TAG_UNITIDS)
		return 0;
	return HTOE_TAG_SRCTAGS - (unsigned)__builtin_popcount(t->busy[unitid]);
}

const struct htoe_outstanding_entry *htoe_outstanding_find(const struct htoe_outstanding *t,
							   uint8_t unitid, uint8_t srctag)
{
	int idx = key(unitid, srctag);

	return idx < 0 || !in_use(t, (unsigned)idx) ? NULL : &t->e[idx];
}

int htoe_outstanding_complete(struct htoe_outstanding *t, uint16_t vl, uint8_t unitid,
			      uint8_t srctag, struct htoe_outstanding_entry *out)
{
	int idx = key(unitid, srctag);

	if (idx < 0 || !in_use(t, (unsigned)idx)) {
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

	if (idx < 0 || !in_use(t, (unsigned)idx)) {
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

	while (t->head >= 0 && t->e[t->head].deadline <= now) {
		uint16_t idx = (uint16_t)t->head;
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
		if (!in_use(t, i) || t->e[i].vl != vl)
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
	return t->head >= 0 ? t->e[t->head].deadline : HTOE_TAG_NEVER;
}

unsigned htoe_outstanding_count(const struct htoe_outstanding *t) { return t->n; }
unsigned htoe_outstanding_hwm(const struct htoe_outstanding *t) { return t->hwm; }

