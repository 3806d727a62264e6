/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm's Prometheus metrics ([global] metrics, as htoe-bridge): per
 * node its frames and VLs (app/bridge/metrics.c's families), its leases,
 * and for the borrower its pager's faults and fault service time. Each
 * node's own thread publishes a snapshot every 10 ms (relaxed atomic
 * stores, dm_publish); the HTTP thread reads only the snapshots.
 */
#ifndef HTOE_DIMM_METRICS_H
#define HTOE_DIMM_METRICS_H

#include <stddef.h>
#include <stdint.h>

struct dapp;
struct dnode;
struct dimm_pager;

/* The endpoint of d->br->cfg.metrics, if set: before rte_eal_init. 0 or -1 with err. */
int dm_metrics_start(struct dapp *d, char *err, size_t errlen);
/* The nodes exist (dr_nodes_setup): their snapshots, reported from now on. */
int dm_metrics_nodes(struct dapp *d, char *err, size_t errlen);
/* On x's own thread: publish its counters if 10 ms have passed (p: the borrower's pager,
 * or NULL). */
void dm_publish(struct dnode *x, const struct dimm_pager *p, uint64_t now);
/* Stops the endpoint and frees the snapshots (nothing if not started). */
void dm_metrics_stop(void);

#endif
