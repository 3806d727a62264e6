/* SPDX-License-Identifier: BSD-3-Clause
 * The set-up and teardown every program on the shared driver does alike
 * (htoe-bridge and htoe-dimm): the TSC clock, the mbuf pool, one node's
 * bridge with its port driver and MACsec, the memory it exports, and
 * htoe-bridge's own nodes (requester, workload, injector) on top of them.
 * See bridge.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bridge.h"

/* ------------------------------------------------------------- clock */

void br_clock_init(struct br_app *a)
{
	a->tsc_hz = rte_get_tsc_hz();
	a->ns_mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / a->tsc_hz);
}

void br_clock_start(struct br_app *a)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	a->realtime0_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	a->tsc0 = rte_rdtsc();
}

/* ---------------------------------------------------------- mbuf pool */

int br_pool_create(struct br_app *a, const char *name, unsigned base, char *err,
		   size_t errlen)
{
	const struct br_config *c = &a->cfg;
	unsigned need = base, n;
	uint32_t room = RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM, (uint32_t)c->max_frame);

	for (unsigned i = 0; i < c->n_ports; i++) {
		const struct br_port_cfg *p = &c->ports[i];

		if (!p->used)
			continue;
		need += p->rxd + p->txd + 2 * c->burst + (p->crossover >= 0 ? p->ring_size : 0);
		if (p->imp_tx || p->imp_rx)
			need += p->imp.queue;
	}
	if (c->mbufs)
		need = c->mbufs;
	for (n = 8192; n < need + 1; n <<= 1)
		;
	a->pool = rte_pktmbuf_pool_create(name, n - 1, 256, 0,
					  (uint16_t)(RTE_PKTMBUF_HEADROOM + room),
					  (int)rte_socket_id());
	if (!a->pool) {
		snprintf(err, errlen, "cannot create the mbuf pool (%u mbufs of %u bytes): %s "
			 "(more memory: EAL -m)", n - 1, RTE_PKTMBUF_HEADROOM + room,
			 rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------- one node's bridge */

int br_node_bridge(struct br_app *a, const struct br_node_cfg *nc, struct br_drv *drv,
		   struct br_counters *c, uint32_t *incarnation, char *err, size_t errlen)
{
	struct htoe_config bc = nc->bc;
	char msg[256];

	/* every start is a new incarnation, with a fresh nonce key, so
	 * that peers tell a restart from a replayed RESET */
	if (htnode_random_incarnation(&bc, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "%s: %s", nc->where, msg);
		return -1;
	}
	drv->b = htoe_new(&bc, msg, sizeof(msg));
	if (!drv->b) {
		snprintf(err, errlen, "%s: bridge: %s", nc->where, msg);
		return -1;
	}
	if (incarnation)
		*incarnation = bc.incarnation;
	if (br_drv_init(drv, drv->b, NULL, a->pool, (uint16_t)a->cfg.burst, nc->id, br_prog(), c,
			err, errlen))
		return -1;
	return br_macsec_setup(&drv->ms, drv->id, drv->prog, &nc->macsec, err, errlen);
}

void br_node_close(struct br_drv *drv)
{
	struct htoe *b = drv->b;

	br_drv_fini(drv);
	htoe_free(b);
	drv->b = NULL;
}

uint8_t *br_node_memory(const struct br_node_cfg *nc, size_t align, bool fill,
			struct ht_target *tgt, char *err, size_t errlen)
{
	struct ht_target_cfg tc;
	uint8_t *mem = align ? aligned_alloc(align, nc->mem_size) : malloc(nc->mem_size);

	if (!mem) {
		snprintf(err, errlen, "%s: cannot allocate mem_size %" PRIu64 " bytes", nc->where,
			 nc->mem_size);
		return NULL;
	}
	if (fill)
		ht_wl_fill(nc->mem_seed, mem, nc->mem_size);
	else
		memset(mem, 0, nc->mem_size);
	memset(&tc, 0, sizeof(tc));
	tc.base = nc->mem_base;
	tc.size = nc->mem_size;
	tc.mem = mem;
	if (ht_tgt_init(tgt, &tc)) {
		snprintf(err, errlen, "%s: memory target: bad region", nc->where);
		free(mem);
		return NULL;
	}
	return mem;
}

/* ------------------------------------------------ htoe-bridge's nodes */

/* [workload] mode = inject: pre-built writes instead of the model's ops.
 * The workload object stays (its start, stop and done logic, its shadow
 * for the image check) but issues nothing: the node holds the model. */
static int inject_setup(struct br_node *n, const struct br_wl_cfg *w, char *err, size_t errlen)
{
	n->inj = calloc(1, sizeof(*n->inj));
	if (!n->inj || htinject_init(n->inj, n->b, w->base, w->size, 1, (uint32_t)w->seed)) {
		snprintf(err, errlen, "%s: mode = inject: cannot set up the writes (memory, or a "
			 "window that is not whole 64-byte blocks)", w->where);
		return -1;
	}
	n->hn.hold = true;
	return 0;
}

int br_node_setup(struct br_app *a, struct br_node *n, const struct br_node_cfg *nc,
		  char *err, size_t errlen)
{
	n->cfg = nc;
	n->id = nc->id;
	if (br_node_bridge(a, nc, &n->drv, &n->c, &n->pc.ask.session, err, errlen))
		return -1;
	n->b = n->drv.b;
	n->mem = br_node_memory(nc, 0, true, &n->hn.tgt, err, errlen);
	if (!n->mem)
		return -1;
	if (nc->wl.enabled) {
		const struct br_wl_cfg *w = &nc->wl;
		struct ht_wl_cfg wc;

		n->shadow = malloc(w->fill_offset + w->size);
		n->busy = calloc(w->size / 64, 1);
		n->wl = calloc(1, sizeof(*n->wl));
		n->taint = calloc(w->size / 64, sizeof(*n->taint));
		if (!n->shadow || !n->busy || !n->taint || !n->wl) {
			snprintf(err, errlen, "%s: cannot allocate the workload", w->where);
			return -1;
		}
		/* the target's memory starts as ht_wl_fill(mem_seed) */
		ht_wl_fill(w->fill_seed, n->shadow, w->fill_offset + w->size);
		memmove(n->shadow, n->shadow + w->fill_offset, w->size);
		ht_wl_cfg_default(&wc);
		memcpy(wc.weight, w->weight, sizeof(wc.weight));
		wc.byte_pct = w->byte_pct;
		wc.max_inflight = w->window;
		wc.seed = w->seed;
		wc.base = w->base;
		wc.size = w->size;
		wc.n_ops = w->ops;
		wc.shadow = n->shadow;
		wc.busy = n->busy;
		wc.taint = n->taint;
		wc.sweep = w->sweep && !w->mode;
		wc.fixed_len = w->fixed_len;
		if (ht_wl_init(n->wl, &wc)) {
			snprintf(err, errlen, "%s: the workload refuses this configuration",
				 w->where);
			return -1;
		}
		n->wlp[0] = n->wl;
	}
	if (htnode_init(&n->hn, n->b, nc->bc.unitid_base, nc->bc.n_unitids, nc->req_unitids, 1,
			n->wl ? n->wlp : NULL, n->wl ? 1 : 0)) {
		snprintf(err, errlen, "%s: requester UnitIDs", nc->where);
		return -1;
	}
	if (n->wl && nc->wl.mode && inject_setup(n, &nc->wl, err, errlen))
		return -1;
	n->n_vl = htoe_n_vls(n->b);
	n->vl_node = calloc(n->n_vl ? n->n_vl : 1, sizeof(*n->vl_node));
	n->pub.vl = calloc(n->n_vl ? n->n_vl : 1, sizeof(*n->pub.vl));
	n->pub.vl_up = calloc(n->n_vl ? n->n_vl : 1, sizeof(uint64_t));
	n->pub.vl_epoch = calloc(n->n_vl ? n->n_vl : 1, sizeof(uint64_t));
	if (!n->vl_node || !n->pub.vl || !n->pub.vl_up || !n->pub.vl_epoch) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < n->n_vl; i++)
		n->vl_node[i] = htoe_vl_node(n->b, i);
	return 0;
}

/* Frees what other threads never read; the published snapshot, the VL
 * table and the config stay for the telemetry thread (see htoe-bridge.c). */
void br_node_teardown(struct br_node *n)
{
	br_node_close(&n->drv);
	n->b = NULL;
	free(n->mem);
	free(n->shadow);
	free(n->busy);
	free(n->taint);
	free(n->wl);
	if (n->inj)
		htinject_fini(n->inj);
	free(n->inj);
	n->inj = NULL;
	n->mem = n->shadow = n->busy = NULL;
	n->taint = NULL;
	n->wl = NULL;
}
