/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_tagremap: pending-request table, outstanding table, poisoned
 * responses. See htoe_tagremap.h.
 */
#include "htoe/htoe_tagremap.h"

#include <errno.h>
#include <string.h>

#define NIL 0xFFFFu

/* ---- NP request info ---------------------------------------------------- */

int htoe_np_info_from_req(const struct ht_pkt *req, struct htoe_np_info *np)
{
	if (!req || !np)
		return -EINVAL;
	memset(np, 0, sizeof(*np));
	switch (req->kind) {
	case HT_K_RDSIZED:
		np->kind = HT_K_RDSIZED;
		np->rsp_count = req->dword ? (uint8_t)(req->count & 0xF) : 0;
		np->rsp_passpw = req->responsepasspw ? 1 : 0;
		return 0;
	case HT_K_ATOMIC:
		np->kind = HT_K_ATOMIC;
		np->rsp_count = 1; /* one qword: the old value */
		return 0;
	case HT_K_WRSIZED:
		if (req->posted)
			return -EINVAL;
		np->kind = HT_K_WRSIZED;
		return 0;
	case HT_K_FLUSH:
		np->kind = HT_K_FLUSH;
		return 0;
	default:
		return -EINVAL;
	}
}

enum ht_kind htoe_np_rsp_kind(const struct htoe_np_info *np)
{
	return (np->kind == HT_K_RDSIZED || np->kind == HT_K_ATOMIC)
		? HT_K_RDRESPONSE : HT_K_TGTDONE;
}

/* ---- (a) pending-request table ------------------------------------------ */

int htoe_tagremap_init(struct htoe_tagremap *t, uint8_t unitid_base, uint8_t n_unitids)
{
	if (!t || n_unitids == 0 || (unsigned)unitid_base + n_unitids > HTOE_TAG_UNITIDS)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->unitid_base = unitid_base;
	t->n_unitids = n_unitids;
	t->size = (uint16_t)(n_unitids * HTOE_TAG_SRCTAGS);
	for (unsigned i = 0; i < t->size; i++)
		t->next[i] = (uint16_t)(i + 1 < t->size ? i + 1 : NIL);
	t->free_head = 0;
	t->free_tail = (uint16_t)(t->size - 1);
	return 0;
}

/* local tag -> index, or -1 */
static int tag_index(const struct htoe_tagremap *t, uint8_t unitid, uint8_t srctag)
{
	if (unitid < t->unitid_base || unitid >= t->unitid_base + t->n_unitids ||
	    srctag >= HTOE_TAG_SRCTAGS)
		return -1;
	return (int)((unitid - t->unitid_base) * HTOE_TAG_SRCTAGS + srctag);
}

int htoe_tagremap_alloc(struct htoe_tagremap *t, const struct htoe_pending_entry *in,
			uint8_t *unitid, uint8_t *srctag)
{
	if (t->free_head == NIL) {
		t->stats.full++;
		return -EAGAIN;
	}
	uint16_t i = t->free_head;
	t->free_head = t->next[i];
	if (t->free_head == NIL)
		t->free_tail = NIL;
	t->next[i] = NIL;
	t->used[i] = 1;
	t->e[i] = *in;
	t->e[i].orphaned = 0;
	t->e[i].local_unitid = (uint8_t)(t->unitid_base + i / HTOE_TAG_SRCTAGS);
	t->e[i].local_srctag = (uint8_t)(i % HTOE_TAG_SRCTAGS);
	t->in_use++;
	if (t->in_use > t->hwm)
		t->hwm = t->in_use;
	t->stats.allocs++;
	if (unitid)
		*unitid = t->e[i].local_unitid;
	if (srctag)
		*srctag = t->e[i].local_srctag;
	return 0;
}

static void tag_free(struct htoe_tagremap *t, uint16_t i)
{
	t->used[i] = 0;
	t->next[i] = NIL;
	if (t->free_tail == NIL)
		t->free_head = i;
	else
		t->next[t->free_tail] = i;
	t->free_tail = i;
	t->in_use--;
}

const struct htoe_pending_entry *htoe_tagremap_peek(const struct htoe_tagremap *t,
						    uint8_t unitid, uint8_t srctag)
{
	int i = tag_index(t, unitid, srctag);

	return i < 0 || !t->used[i] ? NULL : &t->e[i];
}

int htoe_tagremap_complete(struct htoe_tagremap *t, uint8_t unitid, uint8_t srctag,
			   struct htoe_pending_entry *out)
{
	int i = tag_index(t, unitid, srctag);

	if (i < 0 || !t->used[i]) {
		t->stats.unknown++;
		return -ENOENT;
	}
	if (out)
		*out = t->e[i];
	if (t->e[i].orphaned) {
		t->orphans--;
		tag_free(t, (uint16_t)i);
		t->stats.stale++;
		return -ESTALE;
	}
	tag_free(t, (uint16_t)i);
	t->stats.completes++;
	return 0;
}

unsigned htoe_tagremap_drop_vl(struct htoe_tagremap *t, uint16_t vl,
			       htoe_tagremap_cb cb, void *ctx)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->size; i++) {
		if (!t->used[i] || t->e[i].orphaned || t->e[i].vl != vl)
			continue;
		t->e[i].orphaned = 1;
		t->orphans++;
		t->stats.orphaned++;
		n++;
		if (cb)
			cb(ctx, t->e[i].local_unitid, t->e[i].local_srctag, &t->e[i]);
	}
	return n;
}

unsigned htoe_tagremap_in_use(const struct htoe_tagremap *t) { return t->in_use; }
unsigned htoe_tagremap_orphans(const struct htoe_tagremap *t) { return t->orphans; }
unsigned htoe_tagremap_capacity(const struct htoe_tagremap *t) { return t->size; }
unsigned htoe_tagremap_hwm(const struct htoe_tagremap *t) { return t->hwm; }

/* ---- (b) outstanding table: min-heap on (deadline, order) --------------- */

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

/* ---- poisoned responses ------------------------------------------------- */

enum ht_rsp_err htoe_poison_err(enum htoe_poison_reason why)
{
	switch (why) {
	case HTOE_POISON_VL_RESET:
	case HTOE_POISON_REMOTE_RESET:
		return HT_RSP_TARGET_ABORT;
	case HTOE_POISON_TIMEOUT:
	case HTOE_POISON_UNREACHABLE:
	default:
		return HT_RSP_MASTER_ABORT;
	}
}

int htoe_poison_build(uint8_t unitid, uint8_t srctag, const struct htoe_np_info *np,
		      enum ht_rsp_err err, struct ht_pkt *out)
{
	if (!np || !out || unitid >= HTOE_TAG_UNITIDS || srctag >= HTOE_TAG_SRCTAGS ||
	    np->rsp_count > 15 || (unsigned)err > HT_RSP_MASTER_ABORT)
		return -EINVAL;
	bool rd;
	switch (np->kind) {
	case HT_K_RDSIZED:
	case HT_K_ATOMIC:
		rd = true;
		break;
	case HT_K_WRSIZED:
	case HT_K_FLUSH:
		rd = false;
		break;
	default:
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->unitid = unitid;
	out->srctag = srctag;
	out->bridge = 1;
	out->passpw = np->rsp_passpw ? 1 : 0;
	out->error0 = ((unsigned)err >> 1) & 1u;
	out->error1 = (unsigned)err & 1u;
	if (rd) {
		out->cmd = HT_CMD_RDRESP;
		out->kind = HT_K_RDRESPONSE;
		out->count = np->rsp_count;
		out->data_len = (uint16_t)(4u * (np->rsp_count + 1u));
		memset(out->data, 0xFF, out->data_len);
	} else {
		out->cmd = HT_CMD_TGTDONE;
		out->kind = HT_K_TGTDONE;
	}
	return 0;
}

int htoe_poison_response(const struct htoe_outstanding_entry *e,
			 enum htoe_poison_reason why, struct ht_pkt *out)
{
	if (!e)
		return -EINVAL;
	return htoe_poison_build(e->unitid, e->srctag, &e->np, htoe_poison_err(why), out);
}
