/* SPDX-License-Identifier: BSD-3-Clause
 * Counters one thread publishes and others read without a lock: the owner
 * copies its counters into a snapshot of u64 words with relaxed atomic
 * stores, a reader (stats line, telemetry, the metrics thread) loads each
 * word with a relaxed atomic load. A word is never torn; words of one
 * snapshot may be from two publications.
 */
#ifndef HTOE_SNAPSHOT_H
#define HTOE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

/* bytes / 8 words from src into the snapshot at dst */
static inline void htoe_snap_put(void *dst, const void *src, size_t bytes)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (size_t i = 0; i < bytes / 8; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

static inline uint64_t htoe_snap_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

#endif
