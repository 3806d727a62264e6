/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_acl: the access table (which remote node may read or write which
 * part of the protected region: htoe_acl_* in htoe.h, kept in step with the
 * leases by htoe_lease_acl_sync) and the size of a request's access, which
 * the mapping layer uses too. A leaf of the bridge: calls nothing of it.
 */
#include <errno.h>

#include "htoe_acl.h"

/* Bytes of memory a request touches (for the mapping layer and the access
 * table): sized reads Count+1 dwords (a byte read one dword), writes their
 * data, an atomic one qword. */
uint64_t htoe_access_len(const struct ht_desc *d)
{
	switch (d->kind) {
	case HT_K_RDSIZED:
		return (d->cmd & HT_CMD_BIT_DWORD) ? 4u * (d->count + 1u) : 4u;
	case HT_K_WRSIZED:
		return d->data_len ? d->data_len : 4u;
	case HT_K_ATOMIC:
		return 8;
	default:
		return 4;
	}
}

int htoe_acl_protect(struct htoe *b, uint64_t base, uint64_t size)
{
	if (size && base > UINT64_MAX - (size - 1))
		return -EINVAL;
	b->acl_base = base;
	b->acl_size = size;
	return 0;
}

static int acl_find(const struct htoe *b, uint16_t node, uint64_t base, uint64_t size)
{
	for (unsigned i = 0; i < b->acl_n; i++)
		if (b->acl[i].node == node && b->acl[i].base == base && b->acl[i].size == size)
			return (int)i;
	return -1;
}

int htoe_acl_set(struct htoe *b, uint16_t src_node, uint64_t base, uint64_t size,
		 unsigned flags)
{
	int i;

	if (!size || base > UINT64_MAX - (size - 1) || !(flags & (HTOE_ACL_READ | HTOE_ACL_WRITE)) ||
	    (flags & ~(HTOE_ACL_READ | HTOE_ACL_WRITE)))
		return -EINVAL;
	i = acl_find(b, src_node, base, size);
	if (i < 0) {
		if (b->acl_n == HTOE_ACL_MAX)
			return -ENOSPC;
		i = (int)b->acl_n++;
	}
	b->acl[i] = (struct htoe_acl_entry){ .node = src_node, .flags = (uint8_t)flags,
					     .base = base, .size = size };
	return 0;
}

int htoe_acl_clear(struct htoe *b, uint16_t src_node, uint64_t base, uint64_t size)
{
	int i = acl_find(b, src_node, base, size);

	if (i < 0)
		return -ENOENT;
	b->acl[i] = b->acl[--b->acl_n];
	return 0;
}

void htoe_acl_clear_all(struct htoe *b)
{
	b->acl_n = 0;
}

/* May remote request p from `node` run on the local side? */
bool htoe_acl_allows(const struct htoe *b, const struct ht_desc *p, uint16_t node)
{
	unsigned need;
	uint64_t last;

	if (!b->acl_size)
		return true;
	switch (p->kind) {
	case HT_K_RDSIZED: need = HTOE_ACL_READ; break;
	case HT_K_WRSIZED: need = HTOE_ACL_WRITE; break;
	case HT_K_ATOMIC: need = HTOE_ACL_READ | HTOE_ACL_WRITE; break;
	default: return true; /* no address (Flush, Fence, ...) */
	}
	last = p->addr + (htoe_access_len(p) - 1);
	if (last < p->addr)
		last = UINT64_MAX;
	if (last < b->acl_base || p->addr > b->acl_base + (b->acl_size - 1))
		return true; /* outside the protected region */
	for (unsigned i = 0; i < b->acl_n; i++) {
		const struct htoe_acl_entry *a = &b->acl[i];

		if (a->node == node && (a->flags & need) == need && p->addr >= a->base &&
		    last <= a->base + (a->size - 1))
			return true;
	}
	return false;
}
