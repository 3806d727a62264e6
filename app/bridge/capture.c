/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge capture: every frame a port sends or receives is copied on
 * the fast path into an mbuf of a separate pool (a small header + the frame
 * bytes) and put on the lcore's SP/SC ring; the main lcore drains the rings
 * into nanosecond pcap files DIR/port<N>-tx.pcap and DIR/port<N>-rx.pcap
 * with libpcap. A full ring or an empty pool loses the copy (counted as
 * cap_dropped), never blocks the data path.
 *
 * TX is captured as handed to the port (after the TX impairment: dropped
 * frames do not appear, duplicates twice); RX as received from the port
 * (before the RX impairment).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include <rte_lcore.h>

#include "bridge.h"
#include "dumper.h"

int br_capture_mkdir(const struct br_config *c, char *err, size_t errlen)
{
	struct stat st;

	if (stat(c->capture_dir, &st) != 0 && mkdir(c->capture_dir, 0755) != 0) {
		snprintf(err, errlen, "%s: cannot create the directory: %s", c->capture_where,
			 strerror(errno));
		return -1;
	}
	if (stat(c->capture_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", c->capture_where);
		return -1;
	}
	return 0;
}

int br_capture_open(struct br_app *a, char *err, size_t errlen)
{
	const struct br_config *c = &a->cfg;
	unsigned n = 0, k = 0, size;

	if (!c->capture_dir[0])
		return 0;
	if (br_capture_mkdir(c, err, errlen))
		return -1;
	for (unsigned i = 0; i < a->n_ports; i++)
		n += a->ports[i].probed && a->ports[i].cfg->capture;
	if (!n)
		return 0;
	a->dumpers = calloc(2 * n, sizeof(*a->dumpers));
	if (!a->dumpers) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];

		if (!p->probed || !p->cfg->capture)
			continue;
		p->cap_idx = (int)k;
		for (int d = 0; d < 2; d++) {
			a->n_dumpers = 2 * k + (unsigned)d + 1;
			if (br_dumper_open(&a->dumpers[2 * k + (unsigned)d], c->capture_dir,
					p->cfg->index, d, c->capture_where, err, errlen))
				return -1;
		}
		k++;
	}
	/* a ring per lcore that polls nodes, and one pool for the copies */
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct br_lcore *lc = &a->lcores[l];
		char name[RTE_RING_NAMESIZE];

		if (!lc->n_nodes)
			continue;
		snprintf(name, sizeof(name), "htoe_cap%u", l);
		lc->cap_ring = rte_ring_create(name, c->capture_ring, (int)rte_socket_id(),
					       RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
		if (!lc->cap_ring) {
			snprintf(err, errlen, "%s: cannot create the capture ring: %s",
				 c->capture_where, rte_strerror(rte_errno));
			return -1;
		}
	}
	for (size = 1; size < c->capture_ring * a->n_lcores + 1024; size <<= 1)
		;
	a->cap_pool = rte_pktmbuf_pool_create("htoe_cap", size - 1, 256, 0,
					      (uint16_t)(RTE_PKTMBUF_HEADROOM +
							 RTE_MAX(c->max_frame + 16u,
								 2048u)),
					      (int)rte_socket_id());
	if (!a->cap_pool) {
		snprintf(err, errlen, "%s: cannot create the capture mbuf pool: %s",
			 c->capture_where, rte_strerror(rte_errno));
		return -1;
	}
	/* the nodes of a captured port send their copies to their lcore's ring */
	for (unsigned i = 0; i < a->n_nodes; i++) {
		struct br_node *nd = &a->nodes[i];

		if (nd->drv.port && nd->drv.port->cap_idx >= 0) {
			nd->drv.cap_ring = nd->lc->cap_ring;
			nd->drv.cap_pool = a->cap_pool;
		}
	}
	a->capture = true;
	return 0;
}

int br_capture_open_drv(const struct br_config *c, struct br_drv *d, uint64_t t0_ns, char *err,
			size_t errlen)
{
	if (!c->capture_dir[0] || !d->port->cfg->capture)
		return 0;
	d->cap_t0_ns = t0_ns;
	if (br_capture_mkdir(c, err, errlen))
		return -1;
	for (int k = 0; k < 2; k++)
		if (!(d->cap[k] = br_dumper_new(c->capture_dir, d->port->cfg->index, k,
						c->capture_where, err, errlen)))
			return -1;
	return 0;
}

unsigned br_capture_drain(struct br_app *a, unsigned max)
{
	unsigned done = 0;

	if (!a->capture)
		return 0;
	for (unsigned l = 0; l < RTE_MAX_LCORE && done < max; l++) {
		struct rte_ring *r = a->lcores[l].cap_ring;
		void *objs[64];
		unsigned nb;

		if (!r)
			continue;
		while (done < max && (nb = rte_ring_sc_dequeue_burst(r, objs, 64, NULL)) > 0) {
			for (unsigned i = 0; i < nb; i++) {
				struct rte_mbuf *c = objs[i];
				const uint8_t *d = rte_pktmbuf_mtod(c, const uint8_t *);
				struct br_cap_hdr h;

				memcpy(&h, d, sizeof(h));
				if (h.dumper < a->n_dumpers)
					br_dumper_write(&a->dumpers[h.dumper], d + sizeof(h),
						     (uint32_t)(c->data_len - sizeof(h)), h.len,
						     a->realtime0_ns + h.ns);
				rte_pktmbuf_free(c);
			}
			done += nb;
		}
	}
	return done;
}

void br_capture_flush(struct br_app *a)
{
	for (unsigned i = 0; i < a->n_dumpers; i++)
		if (a->dumpers[i].dump)
			pcap_dump_flush(a->dumpers[i].dump);
}

void br_capture_close(struct br_app *a)
{
	if (a->capture)
		while (br_capture_drain(a, UINT32_MAX))
			;
	for (unsigned i = 0; i < a->n_dumpers; i++)
		br_dumper_close(&a->dumpers[i], a->capture ? "htoe-bridge" : NULL);
	free(a->dumpers);
	a->dumpers = NULL;
	a->n_dumpers = 0;
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		rte_ring_free(a->lcores[l].cap_ring);
		a->lcores[l].cap_ring = NULL;
	}
	if (a->cap_pool)
		rte_mempool_free(a->cap_pool);
	a->cap_pool = NULL;
	a->capture = false;
}
