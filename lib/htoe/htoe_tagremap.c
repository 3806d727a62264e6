/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_tagremap: the pending-request table and NP request info. See
 * htoe_tagremap.h.
 */
#include "htoe/htoe_tagremap.h"

#include <errno.h>
#include <string.h>

#define NIL 0xFFFFu

/* ---- NP request info ---------------------------------------------------- */

/* The response parameters of a request of `kind` (the request's Count,
 * dword, ResponsePassPW and posted bits as decoded). */
static int np_info(enum ht_kind kind, bool posted, bool dword, uint8_t count,
		   bool rsp_passpw, struct htoe_np_info *np)
{
	memset(np, 0, sizeof(*np));
	switch (kind) {
	case HT_K_RDSIZED:
		np->kind = HT_K_RDSIZED;
		np->rsp_count = dword ? (uint8_t)(count & 0xF) : 0;
		np->rsp_passpw = rsp_passpw ? 1 : 0;
		return 0;
	case HT_K_ATOMIC:
		np->kind = HT_K_ATOMIC;
		np->rsp_count = 1; /* one qword: the old value */
		return 0;
	case HT_K_WRSIZED:
		if (posted)
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

int htoe_np_info_from_req(const struct ht_pkt *req, struct htoe_np_info *np)
{
	if (!req || !np)
		return -EINVAL;
	return np_info((enum ht_kind)req->kind, req->posted, req->dword, req->count,
		       req->responsepasspw, np);
}

int htoe_np_info_from_desc(const struct ht_desc *d, struct htoe_np_info *np)
{
	/* sized requests: Cmd = 0 p 1 d i c (write) or 01 r d i c (read),
	 * p = posted, d = dword, r = ResponsePassPW */
	return np_info((enum ht_kind)d->kind, (d->cmd & HT_CMD_BIT_POSTED) != 0,
		       (d->cmd & HT_CMD_BIT_DWORD) != 0, d->count, (d->cmd & HT_CMD_BIT_RSPPW) != 0,
		       np);
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
