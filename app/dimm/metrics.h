/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm's Prometheus metrics ([global] metrics, as htoe-bridge): per
 * node its frames and VLs (app/bridge/metrics.c's families), its leases,
 * and for the borrower its pager's faults and fault service time, written
 * by the table writer of app/common/metrics_http from the snapshots below.
 * Each node's own thread publishes its snapshot every 10 ms (relaxed atomic
 * stores, app/dimm/runtime.c); the HTTP thread reads only the snapshots.
 */
#ifndef HTOE_DIMM_METRICS_H
#define HTOE_DIMM_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "bridge/driver.h"
#include "htoe/htoe_lease.h"

struct br_config;

#define DM_PUBLISH_NS 10000000ull

/* The snapshot of one node (u64 words: snapshot.h). */
struct dm_pub {
	uint16_t id;
	int      borrower;
	uint64_t next_ns;                /* owner only: its next publication */
	struct br_counters c;
	struct htoe_lease_stats ls;
	uint64_t lease_active, lease_bytes, lease_renewals;
	uint64_t faults[2];              /* missing, wp */
	uint64_t fetches, readaheads, evictions, writebacks;
	uint64_t bytes_in, bytes_out, poisoned;
	uint64_t lat_ns[3];              /* fault service time: p50, p99, max */
	unsigned n_vl;
	uint16_t *vl_node;
	struct htoe_vl_stats *vl;
	uint64_t *vl_up;
};

/* The endpoint of c->metrics, if set: before rte_eal_init. 0 or -1 with err. */
int dm_metrics_start(const struct br_config *c, char *err, size_t errlen);
/* With the endpoint running: n zeroed snapshots in *pubs, node i's with room for n_vl[i] VLs;
 * 0, or -1 with err (no memory). Without: 0 and *pubs NULL. */
int dm_metrics_nodes(unsigned n, const unsigned *n_vl, struct dm_pub **pubs, char *err,
		     size_t errlen);
/* The snapshots are filled in (ids, roles, VLs): scrapes report them from now on. */
void dm_metrics_ready(void);
/* Stops the endpoint and frees the snapshots (nothing if not started). */
void dm_metrics_stop(void);

#endif
