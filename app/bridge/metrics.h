/* SPDX-License-Identifier: BSD-3-Clause
 * The counters of a bridge process as Prometheus metrics ([global] metrics,
 * app/common/metrics_http for the HTTP side), and the table of per-VL
 * counters that both the telemetry reply (/htoe/vl,NODE,PEER) and the
 * metrics read from the published snapshot (struct br_pub).
 */
#ifndef HTOE_BR_METRICS_H
#define HTOE_BR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "metrics_http.h"

struct br_app;
struct htoe_vl_stats;

/* The u64 of struct htoe_vl_stats: key (telemetry), Prometheus family (NULL: telemetry only). */
extern const struct htoe_prom_col br_vl_fields[];
extern const unsigned br_n_vl_fields;

/* One VL of a scrape: its node, its peer, its published counters and up flag. */
struct br_metrics_vl {
	uint16_t node, peer;
	const struct htoe_vl_stats *s;
	const uint64_t *up;
};
/* The htoe_vl_* families of n VLs (htoe-bridge's and htoe-dimm's), from br_vl_fields. */
void br_metrics_vls(struct htoe_prom *p, const struct br_metrics_vl *v, unsigned n);
/* htoe_build_info{program,version} 1 */
void br_metrics_build_info(struct htoe_prom *p, const char *prog);

/* The families of every node and VL of `a` (a struct br_app *), read from the published
 * snapshots; none before br_metrics_ready. An htoe_metrics_fn. */
void br_metrics_render(struct htoe_prom *p, void *a);
/* Starts the endpoint of a->cfg.metrics, if set (before rte_eal_init): 0, or -1 with the
 * reason in err. */
int br_metrics_start(struct br_app *a, char *err, size_t errlen);
/* The nodes and their snapshots exist: scrapes report them from now on. */
void br_metrics_ready(struct br_app *a);
void br_metrics_stop(void);

#endif
