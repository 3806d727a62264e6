/* SPDX-License-Identifier: BSD-3-Clause
 * See metrics.h.
 */
#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/metrics.h"
#include "runtime.h"

#define DM_PUBLISH_NS 10000000ull

/* The snapshot of one node (u64 words, relaxed atomics). */
struct dm_pub {
	uint16_t id;
	int      borrower;
	uint64_t next_ns;                /* owner only */
	struct br_counters c;
	struct htoe_lease_stats ls;
	uint64_t lease_active, lease_bytes, lease_renewals;
	uint64_t faults, wp_faults, fetches, readaheads, evictions, writebacks;
	uint64_t bytes_in, bytes_out, poisoned;
	uint64_t lat_p50_ns, lat_p99_ns, lat_max_ns;
	unsigned n_vl;
	uint16_t *vl_node;
	struct htoe_vl_stats *vl;
	uint64_t *vl_up;
};

static struct htoe_metrics *server;
static struct dm_pub *pubs;
static unsigned n_pubs;
static int ready;

static void put(uint64_t *dst, uint64_t v)
{
	__atomic_store_n(dst, v, __ATOMIC_RELAXED);
}

static void put_words(void *dst, const void *src, size_t len)
{
	for (size_t i = 0; i < len / 8; i++)
		put((uint64_t *)dst + i, ((const uint64_t *)src)[i]);
}

void dm_publish(struct dnode *x, const struct dimm_pager *p, uint64_t now)
{
	struct dm_pub *m = x->pub;

	if (!m || now < m->next_ns)
		return;
	m->next_ns = now + DM_PUBLISH_NS;
	br_drv_count(&x->drv);
	put_words(&m->c, &x->c, sizeof(m->c));
	put_words(&m->ls, htoe_lease_stats(x->lease), sizeof(m->ls));
	for (unsigned k = 0; k < m->n_vl; k++) {
		put_words(&m->vl[k], htoe_get_vl_stats(x->b, m->vl_node[k]), sizeof(m->vl[k]));
		put(&m->vl_up[k], htoe_vl_is_up(x->b, m->vl_node[k]));
	}
	if (x->borrower) {
		struct htoe_lease_info li;

		if (htoe_lease_get(x->lease, x->app->lease_h, &li) == 0) {
			put(&m->lease_active, li.state == HTOE_LS_ACTIVE);
			put(&m->lease_bytes, li.state == HTOE_LS_ACTIVE ? li.size : 0);
			put(&m->lease_renewals, li.renewals);
		}
	}
	if (p) {
		const struct dimm_pager_stats *s = dimm_pager_stats(p);

		put(&m->faults, s->faults);
		put(&m->wp_faults, s->wp_faults);
		put(&m->fetches, s->fetches);
		put(&m->readaheads, s->readaheads);
		put(&m->evictions, s->evictions);
		put(&m->writebacks, s->writebacks);
		put(&m->bytes_in, s->bytes_in);
		put(&m->bytes_out, s->bytes_out);
		put(&m->poisoned, s->poisoned);
		put(&m->lat_p50_ns, (uint64_t)lat_quantile(&s->hist, 0.5));
		put(&m->lat_p99_ns, (uint64_t)lat_quantile(&s->hist, 0.99));
		put(&m->lat_max_ns, (uint64_t)lat_quantile(&s->hist, 1.0));
	}
}

static uint64_t rd(const uint64_t *x)
{
	return __atomic_load_n(x, __ATOMIC_RELAXED);
}

/* One family: a counter or gauge of every node (borrower_only: the borrower's) */
static void node_family(struct htoe_prom *p, const char *name, const char *type, const char *help,
			size_t off, int borrower_only)
{
	char lab[48];

	htoe_prom_family(p, name, type, help);
	for (unsigned i = 0; i < n_pubs; i++) {
		if (borrower_only && !pubs[i].borrower)
			continue;
		snprintf(lab, sizeof(lab), "node=\"%u\"", pubs[i].id);
		htoe_prom_u64(p, name, lab, rd((const uint64_t *)((const char *)&pubs[i] + off)));
	}
}

#define NODE(name, type, help, field, b) \
	node_family(p, name, type, help, offsetof(struct dm_pub, field), b)

static void render(struct htoe_prom *p, void *arg)
{
	struct br_metrics_vl *vls;
	unsigned nvl = 0;
	char lab[64];

	(void)arg;
	br_metrics_build_info(p, "htoe-dimm");
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	NODE("htoe_node_tx_frames_total", "counter", "frames handed to the port", c.tx_frames, 0);
	NODE("htoe_node_rx_frames_total", "counter", "frames received from the port", c.rx_frames,
	     0);
	NODE("htoe_node_tx_bytes_total", "counter", "bytes handed to the port", c.tx_bytes, 0);
	NODE("htoe_node_rx_bytes_total", "counter", "bytes received from the port", c.rx_bytes, 0);
	NODE("htoe_node_rx_refused_frames_total", "counter",
	     "received frames refused by the bridge (any reason)", c.rx_bad, 0);
	NODE("htoe_dimm_leases_granted_total", "counter", "leases this node granted (lessor)",
	     ls.granted, 0);
	NODE("htoe_dimm_leases_expired_total", "counter",
	     "leases of this node that expired unrenewed (lessor)", ls.expired, 0);
	NODE("htoe_dimm_leases_released_total", "counter", "leases given back to this node "
	     "(lessor)", ls.released, 0);
	NODE("htoe_dimm_leases_refused_total", "counter", "lease requests this node refused "
	     "(lessor)", ls.refused, 0);
	NODE("htoe_dimm_leases_revoked_total", "counter", "leases dropped because their lessee "
	     "restarted (lessor)", ls.revoked, 0);
	NODE("htoe_dimm_leases_lost_total", "counter", "leases this node held and lost (lessee)",
	     ls.lost, 0);
	NODE("htoe_dimm_lease_active", "gauge", "1 while the borrower's lease is active",
	     lease_active, 1);
	NODE("htoe_dimm_lease_bytes", "gauge", "bytes of the borrower's active lease", lease_bytes,
	     1);
	NODE("htoe_dimm_lease_renewals_total", "counter", "renewals of the borrower's lease",
	     lease_renewals, 1);
	htoe_prom_family(p, "htoe_dimm_faults_total", "counter",
			 "page faults served by the pager: missing (a fetch) or wp (first write "
			 "to a clean page)");
	for (unsigned i = 0; i < n_pubs; i++) {
		if (!pubs[i].borrower)
			continue;
		snprintf(lab, sizeof(lab), "node=\"%u\",kind=\"missing\"", pubs[i].id);
		htoe_prom_u64(p, "htoe_dimm_faults_total", lab, rd(&pubs[i].faults));
		snprintf(lab, sizeof(lab), "node=\"%u\",kind=\"wp\"", pubs[i].id);
		htoe_prom_u64(p, "htoe_dimm_faults_total", lab, rd(&pubs[i].wp_faults));
	}
	NODE("htoe_dimm_fetches_total", "counter", "pages fetched from the lessor", fetches, 1);
	NODE("htoe_dimm_readaheads_total", "counter", "pages fetched ahead of a fault", readaheads,
	     1);
	NODE("htoe_dimm_evictions_total", "counter", "pages dropped to make room", evictions, 1);
	NODE("htoe_dimm_writebacks_total", "counter", "pages written back to the lessor",
	     writebacks, 1);
	NODE("htoe_dimm_fetched_bytes_total", "counter", "bytes fetched", bytes_in, 1);
	NODE("htoe_dimm_written_back_bytes_total", "counter", "bytes written back", bytes_out, 1);
	NODE("htoe_dimm_poisoned_pages_total", "counter", "pages poisoned after an error", poisoned,
	     1);
	htoe_prom_family(p, "htoe_dimm_fault_latency_seconds", "gauge",
			 "fault service time (message read to page installed) over "
			 "the run: stat p50, p99 (quantiles), max (the longest)");
	for (unsigned i = 0; i < n_pubs; i++) {
		static const char *const q[3] = { "p50", "p99", "max" };
		const uint64_t *v[3] = { &pubs[i].lat_p50_ns, &pubs[i].lat_p99_ns,
					 &pubs[i].lat_max_ns };

		if (!pubs[i].borrower)
			continue;
		for (unsigned k = 0; k < 3; k++) {
			snprintf(lab, sizeof(lab), "node=\"%u\",stat=\"%s\"", pubs[i].id, q[k]);
			htoe_prom_f64(p, "htoe_dimm_fault_latency_seconds", lab,
				      (double)rd(v[k]) / 1e9);
		}
	}
	for (unsigned i = 0; i < n_pubs; i++)
		nvl += pubs[i].n_vl;
	vls = malloc(sizeof(*vls) * (nvl ? nvl : 1));
	if (!vls) {
		p->oom = true;
		return;
	}
	nvl = 0;
	for (unsigned i = 0; i < n_pubs; i++)
		for (unsigned k = 0; k < pubs[i].n_vl; k++)
			vls[nvl++] = (struct br_metrics_vl){ pubs[i].id, pubs[i].vl_node[k],
							     &pubs[i].vl[k], &pubs[i].vl_up[k] };
	br_metrics_vls(p, vls, nvl);
	free(vls);
}
#undef NODE

int dm_metrics_start(struct dapp *d, char *err, size_t errlen)
{
	const struct br_config *c = &d->br->cfg;

	if (!c->metrics[0])
		return 0;
	server = htoe_metrics_start(c->metrics, c->metrics_where, render, NULL, err, errlen);
	return server ? 0 : -1;
}

int dm_metrics_nodes(struct dapp *d, char *err, size_t errlen)
{
	if (!server)
		return 0;
	pubs = calloc(d->n_nodes, sizeof(*pubs));
	if (!pubs)
		goto oom;
	n_pubs = d->n_nodes;
	for (unsigned i = 0; i < d->n_nodes; i++) {
		struct dnode *x = &d->nodes[i];
		struct dm_pub *m = &pubs[i];

		m->id = x->id;
		m->borrower = x->borrower;
		m->n_vl = htoe_n_vls(x->b);
		m->vl_node = calloc(m->n_vl ? m->n_vl : 1, sizeof(*m->vl_node));
		m->vl = calloc(m->n_vl ? m->n_vl : 1, sizeof(*m->vl));
		m->vl_up = calloc(m->n_vl ? m->n_vl : 1, sizeof(*m->vl_up));
		if (!m->vl_node || !m->vl || !m->vl_up)
			goto oom;
		for (unsigned k = 0; k < m->n_vl; k++)
			m->vl_node[k] = htoe_vl_node(x->b, k);
		x->pub = m;
	}
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	return 0;
oom:
	snprintf(err, errlen, "metrics: out of memory");
	return -1;
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
