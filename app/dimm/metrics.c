/* SPDX-License-Identifier: BSD-3-Clause
 * See metrics.h.
 */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/config.h"
#include "bridge/metrics.h"

static struct htoe_metrics *server;
static struct dm_pub *pubs;
static unsigned n_pubs;
static int ready;

#define BORROWER 1u /* a row's flag: the node pages (its pager's families) */

static const char *fault_kind(unsigned k)
{
	static const char *const kind[2] = { "missing", "wp" };

	return kind[k];
}

static const char *lat_stat(unsigned k)
{
	static const char *const q[3] = { "p50", "p99", "max" };

	return q[k];
}

#define COL(name, gauge, only, help, f) \
	{ NULL, name, help, offsetof(struct dm_pub, f), 0, gauge, only, 0, NULL, NULL }
static const struct htoe_prom_col node_fields[] = {
	COL("htoe_node_tx_frames_total", 0, 0, "frames handed to the port", c.tx_frames),
	COL("htoe_node_rx_frames_total", 0, 0, "frames received from the port", c.rx_frames),
	COL("htoe_node_tx_bytes_total", 0, 0, "bytes handed to the port", c.tx_bytes),
	COL("htoe_node_rx_bytes_total", 0, 0, "bytes received from the port", c.rx_bytes),
	COL("htoe_node_rx_refused_frames_total", 0, 0,
	    "received frames refused by the bridge (any reason)", c.rx_bad),
	COL("htoe_dimm_leases_granted_total", 0, 0, "leases this node granted (lessor)",
	    ls.granted),
	COL("htoe_dimm_leases_expired_total", 0, 0,
	    "leases of this node that expired unrenewed (lessor)", ls.expired),
	COL("htoe_dimm_leases_released_total", 0, 0, "leases given back to this node (lessor)",
	    ls.released),
	COL("htoe_dimm_leases_refused_total", 0, 0, "lease requests this node refused (lessor)",
	    ls.refused),
	COL("htoe_dimm_leases_revoked_total", 0, 0,
	    "leases dropped because their lessee restarted (lessor)", ls.revoked),
	COL("htoe_dimm_leases_lost_total", 0, 0, "leases this node held and lost (lessee)",
	    ls.lost),
	COL("htoe_dimm_lease_active", 1, BORROWER, "1 while the borrower's lease is active",
	    lease_active),
	COL("htoe_dimm_lease_bytes", 1, BORROWER, "bytes of the borrower's active lease",
	    lease_bytes),
	COL("htoe_dimm_lease_renewals_total", 0, BORROWER, "renewals of the borrower's lease",
	    lease_renewals),
	{ NULL, "htoe_dimm_faults_total", "page faults served by the pager: missing (a fetch) or "
	  "wp (first write to a clean page)", offsetof(struct dm_pub, faults), 0, 0, BORROWER, 2,
	  "kind", fault_kind },
	COL("htoe_dimm_fetches_total", 0, BORROWER, "pages fetched from the lessor", fetches),
	COL("htoe_dimm_readaheads_total", 0, BORROWER, "pages fetched ahead of a fault",
	    readaheads),
	COL("htoe_dimm_evictions_total", 0, BORROWER, "pages dropped to make room", evictions),
	COL("htoe_dimm_writebacks_total", 0, BORROWER, "pages written back to the lessor",
	    writebacks),
	COL("htoe_dimm_fetched_bytes_total", 0, BORROWER, "bytes fetched", bytes_in),
	COL("htoe_dimm_written_back_bytes_total", 0, BORROWER, "bytes written back", bytes_out),
	COL("htoe_dimm_poisoned_pages_total", 0, BORROWER, "pages poisoned after an error",
	    poisoned),
	{ NULL, "htoe_dimm_fault_latency_seconds", "fault service time (message read to page "
	  "installed) over the run: stat p50, p99 (quantiles), max (the longest)",
	  offsetof(struct dm_pub, lat_ns), 1, 1, BORROWER, 3, "stat", lat_stat },
};
#undef COL

static void render(struct htoe_prom *p, void *arg)
{
	struct htoe_prom_row *rows;
	struct br_metrics_vl *vls;
	char (*lab)[16];
	unsigned nvl = 0;

	(void)arg;
	br_metrics_build_info(p, "htoe-dimm");
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	for (unsigned i = 0; i < n_pubs; i++)
		nvl += pubs[i].n_vl;
	rows = malloc(sizeof(*rows) * (n_pubs ? n_pubs : 1));
	lab = malloc(sizeof(*lab) * (n_pubs ? n_pubs : 1));
	vls = malloc(sizeof(*vls) * (nvl ? nvl : 1));
	if (!rows || !lab || !vls) {
		p->oom = true;
		goto out;
	}
	nvl = 0;
	for (unsigned i = 0; i < n_pubs; i++) {
		snprintf(lab[i], sizeof(lab[i]), "node=\"%u\"", pubs[i].id);
		rows[i] = (struct htoe_prom_row){ lab[i], &pubs[i],
						  pubs[i].borrower ? BORROWER : 0 };
		for (unsigned k = 0; k < pubs[i].n_vl; k++)
			vls[nvl++] = (struct br_metrics_vl){ pubs[i].id, pubs[i].vl_node[k],
							     &pubs[i].vl[k], &pubs[i].vl_up[k] };
	}
	htoe_prom_table(p, node_fields, sizeof(node_fields) / sizeof(node_fields[0]), rows,
			n_pubs);
	br_metrics_vls(p, vls, nvl);
out:
	free(rows);
	free(lab);
	free(vls);
}

int dm_metrics_start(const struct br_config *c, char *err, size_t errlen)
{
	if (!c->metrics[0])
		return 0;
	server = htoe_metrics_start(c->metrics, c->metrics_where, render, NULL, err, errlen);
	return server ? 0 : -1;
}

int dm_metrics_nodes(unsigned n, const unsigned *n_vl, struct dm_pub **out, char *err,
		     size_t errlen)
{
	*out = NULL;
	if (!server)
		return 0;
	pubs = calloc(n ? n : 1, sizeof(*pubs));
	if (!pubs)
		goto oom;
	n_pubs = n;
	for (unsigned i = 0; i < n; i++) {
		struct dm_pub *m = &pubs[i];
		unsigned k = n_vl[i] ? n_vl[i] : 1;

		m->n_vl = n_vl[i];
		m->vl_node = calloc(k, sizeof(*m->vl_node));
		m->vl = calloc(k, sizeof(*m->vl));
		m->vl_up = calloc(k, sizeof(*m->vl_up));
		if (!m->vl_node || !m->vl || !m->vl_up)
			goto oom;
	}
	*out = pubs;
	return 0;
oom:
	snprintf(err, errlen, "metrics: out of memory");
	return -1;
}

void dm_metrics_ready(void)
{
	if (pubs)
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

void dm_metrics_stop(void)
{
	__atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
	htoe_metrics_stop(server);
	server = NULL;
	for (unsigned i = 0; i < n_pubs; i++) {
		free(pubs[i].vl_node);
		free(pubs[i].vl);
		free(pubs[i].vl_up);
	}
	free(pubs);
	pubs = NULL;
	n_pubs = 0;
}
