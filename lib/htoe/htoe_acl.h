/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_acl: the access table's check and a request's access size. The
 * table itself is set through htoe.h (htoe_acl_*). Internal (not installed).
 */
#ifndef HTOE_ACL_H
#define HTOE_ACL_H

#include "htoe_internal.h"

/* Bytes of memory request d touches (for the mapping layer and the access
 * table): sized reads Count+1 dwords (a byte read one dword), writes their
 * data, an atomic one qword. */
uint64_t htoe_access_len(const struct ht_desc *d);

/* May remote request p from `node` run on the local side? (True when the
 * table is off or p touches nothing protected.) */
bool htoe_acl_allows(const struct htoe *b, const struct ht_desc *p, uint16_t node);

#endif
