/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: one node's runtime and the poll-mode loop of an lcore.
 *
 * Per iteration, for every node the lcore owns:
 *   RX burst -> (capture) -> (rx impairment) -> htoe_frame_input, free
 *   htoe_handle_expiry when htoe_next_deadline has passed
 *   htnode_poll: workload -> requester -> bridge, bridge -> target/requester
 *   htoe_frame_output straight into a fresh mbuf's data area (zero copy)
 *     -> (tx impairment) -> (capture) -> rte_eth_tx_buffer
 *   TX buffer flushed when idle, and at the latest every tx_drain (TSC)
 * and every millisecond the counters are published (relaxed stores); the
 * main lcore also runs the control duties then (stats line, capture
 * writer, stop logic).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "bridge.h"

volatile sig_atomic_t br_signals;

_Static_assert(sizeof(struct br_counters) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htoe_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htoe_vl_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct ht_wl_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htnode_stats) % 8 == 0, "u64 words");

/* ------------------------------------------------------------ node setup */

int br_node_setup(struct br_app *a, struct br_node *n, const struct br_node_cfg *nc,
		  char *err, size_t errlen)
{
	struct ht_target_cfg tc;
	struct htoe_config bc = nc->bc;
	char msg[256];

	(void)a;
	n->cfg = nc;
	n->id = nc->id;
	/* every start is a new incarnation, with a fresh nonce key (issue 13) */
	if (htnode_random_incarnation(&bc, msg, sizeof(msg)) != 0) {
		snprintf(err, errlen, "%s: %s", nc->where, msg);
		return -1;
	}
	n->b = htoe_new(&bc, msg, sizeof(msg));
	if (!n->b) {
		snprintf(err, errlen, "%s: bridge: %s", nc->where, msg);
		return -1;
	}
	n->mem = malloc(nc->mem_size);
	if (!n->mem) {
		snprintf(err, errlen, "%s: cannot allocate mem_size %" PRIu64 " bytes", nc->where,
			 nc->mem_size);
		return -1;
	}
	ht_wl_fill(nc->mem_seed, n->mem, nc->mem_size);
	memset(&tc, 0, sizeof(tc));
	tc.base = nc->mem_base;
	tc.size = nc->mem_size;
	tc.mem = n->mem;
	if (ht_tgt_init(&n->hn.tgt, &tc)) {
		snprintf(err, errlen, "%s: memory target: bad region", nc->where);
		return -1;
	}
	if (nc->wl.enabled) {
		const struct br_wl_cfg *w = &nc->wl;
		struct ht_wl_cfg wc;

		n->shadow = malloc(w->fill_offset + w->size);
		n->busy = calloc(w->size / 64, 1);
		n->wl = calloc(1, sizeof(*n->wl));
		if (!n->shadow || !n->busy || !n->wl) {
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
		wc.sweep = w->sweep;
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
	n->deadline = 0;
	return br_macsec_setup(n, err, errlen);
}

/* Frees what other threads never read; the published snapshot, the VL
 * table and the config stay for the telemetry thread (see htoe-bridge.c). */
void br_node_teardown(struct br_node *n)
{
	if (n->spare)
		rte_pktmbuf_free(n->spare);
	n->spare = NULL;
	br_macsec_teardown(n);
	htoe_free(n->b);
	n->b = NULL;
	free(n->mem);
	free(n->shadow);
	free(n->busy);
	free(n->wl);
	n->mem = n->shadow = n->busy = NULL;
	n->wl = NULL;
}

/* --------------------------------------------------------------- publish */

static void pub_words(void *dst, const void *src, size_t bytes)
{
	uint64_t *d = dst;
	const uint64_t *s = src;

	for (size_t i = 0; i < bytes / 8; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

void br_node_publish(struct br_node *n)
{
	struct br_port *p = n->port;
	static const struct ht_wl_stats zero_ws;

	/* impairment counters live in the stages */
	n->c.imp_tx_dropped = n->c.imp_rx_dropped = 0;
	n->c.imp_dup = n->c.imp_corrupt = n->c.imp_reorder = n->c.imp_overflow = 0;
	for (int d = 0; d < 2; d++) {
		const struct impair *im = d ? p->imp_rx : p->imp_tx;

		if (!im)
			continue;
		const struct impair_stats *s = impair_stats(im);

		if (d)
			n->c.imp_rx_dropped = s->dropped + s->burst_dropped;
		else
			n->c.imp_tx_dropped = s->dropped + s->burst_dropped;
		n->c.imp_dup += s->duplicated;
		n->c.imp_corrupt += s->corrupted;
		n->c.imp_reorder += s->reordered;
		n->c.imp_overflow += s->overflow;
	}
	n->c.tx_refused = p->tx_refused;
	n->c.busy = (uint64_t)htoe_busy(n->b) + n->hn.rsp_n + ht_req_outstanding(&n->hn.req);
	pub_words(&n->pub.c, &n->c, sizeof(n->c));
	pub_words(&n->pub.hs, htoe_get_stats(n->b), sizeof(struct htoe_stats));
	pub_words(&n->pub.ws, n->wl ? ht_wl_stats(n->wl) : &zero_ws, sizeof(struct ht_wl_stats));
	pub_words(&n->pub.ns, &n->hn.st, sizeof(struct htnode_stats));
	br_macsec_publish(n);
	for (unsigned i = 0; i < n->n_vl; i++) {
		uint16_t node = n->vl_node[i];

		pub_words(&n->pub.vl[i], htoe_get_vl_stats(n->b, node),
			  sizeof(struct htoe_vl_stats));
		__atomic_store_n(&n->pub.vl_up[i], (uint64_t)htoe_vl_is_up(n->b, node),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&n->pub.vl_epoch[i], (uint64_t)htoe_vl_epoch(n->b, node),
				 __ATOMIC_RELAXED);
	}
}

/* ------------------------------------------------------------------- RX */

static void deliver(struct br_node *n, struct rte_mbuf *m, uint64_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint8_t *d = NULL;

	if (len <= sizeof(n->linbuf))
		d = rte_pktmbuf_read(m, 0, len, n->linbuf);
	/* MACsec: nothing unvalidated reaches the bridge (drops are counted
	 * under their 802.1AE counters, not in rx_bad) */
	if (d && n->ms && !(d = br_macsec_rx(n, m, d, &len))) {
		rte_pktmbuf_free(m);
		return;
	}
	if (!d || htoe_frame_input(n->b, d, len, now) < 0)
		n->c.rx_bad++;
	rte_pktmbuf_free(m);
}

static void hold_rx(struct br_node *n, struct rte_mbuf *m, uint64_t at, uint64_t now)
{
	if (at <= now || impair_hold(n->port->imp_rx, m, at) != 0)
		deliver(n, m, now);
}

static void rx_frame(struct br_node *n, struct rte_mbuf *m, uint64_t now)
{
	struct br_port *p = n->port;
	struct impair_verdict v;

	n->c.rx_frames++;
	n->c.rx_bytes += rte_pktmbuf_pkt_len(m);
	if (p->cap_idx >= 0)
		br_capture_copy(n, m, false, now);
	if (!p->imp_rx) {
		deliver(n, m, now);
		return;
	}
	impair_decide(p->imp_rx, rte_pktmbuf_pkt_len(m), now, &v);
	if (!v.copies) {
		rte_pktmbuf_free(m);
		return;
	}
	if (v.corrupt)
		impair_flip(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), v.bit);
	if (v.copies == 2)
		rte_mbuf_refcnt_update(m, 1); /* delivered (and freed) twice */
	hold_rx(n, m, v.at[0], now);
	if (v.copies == 2)
		hold_rx(n, m, v.at[1], now);
}

/* ------------------------------------------------------------------- TX */

static void wire_tx(struct br_node *n, struct rte_mbuf *m, uint64_t now)
{
	struct br_port *p = n->port;

	if (p->cap_idx >= 0)
		br_capture_copy(n, m, true, now);
	n->c.tx_frames++;
	n->c.tx_bytes += rte_pktmbuf_pkt_len(m);
	rte_eth_tx_buffer(p->port_id, 0, p->txb, m);
}

static void hold_tx(struct br_node *n, struct rte_mbuf *m, uint64_t at, uint64_t now)
{
	if (at <= now || impair_hold(n->port->imp_tx, m, at) != 0)
		wire_tx(n, m, now);
}

static struct rte_mbuf *copy_frame(struct br_app *a, struct br_node *n,
				   const struct rte_mbuf *m)
{
	struct rte_mbuf *d = rte_pktmbuf_alloc(a->pool);
	uint16_t len = rte_pktmbuf_data_len(m);

	if (!d) {
		n->c.alloc_fail++;
		return NULL;
	}
	memcpy(rte_pktmbuf_mtod(d, uint8_t *), rte_pktmbuf_mtod(m, const uint8_t *), len);
	d->data_len = len;
	d->pkt_len = len;
	return d;
}

static void tx_frame(struct br_app *a, struct br_node *n, struct rte_mbuf *m, uint64_t now)
{
	struct br_port *p = n->port;
	struct impair_verdict v;
	struct rte_mbuf *dup = NULL;

	if (!p->imp_tx) {
		wire_tx(n, m, now);
		return;
	}
	impair_decide(p->imp_tx, rte_pktmbuf_pkt_len(m), now, &v);
	if (!v.copies) {
		rte_pktmbuf_free(m);
		return;
	}
	if (v.corrupt)
		impair_flip(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), v.bit);
	if (v.copies == 2)
		dup = copy_frame(a, n, m);
	hold_tx(n, m, v.at[0], now);
	if (dup)
		hold_tx(n, dup, v.at[1], now);
}

/* Frames from the bridge, each written straight into a fresh mbuf; partly
 * filled frames leave too (HTOE_TX_FLUSH: see node_poll). */
static unsigned tx_frames(struct br_app *a, struct br_node *n, uint64_t now)
{
	unsigned sent = 0;

	for (;;) {
		struct rte_mbuf *m = n->spare;
		int len;

		if (!m) {
			m = rte_pktmbuf_alloc(a->pool);
			if (!m) {
				n->c.alloc_fail++;
				break;
			}
		}
		n->spare = NULL;
		uint32_t cap = rte_pktmbuf_tailroom(m);

		if (n->ms) /* room for the ICV; the SecTAG goes into the headroom */
			cap = cap > HTOE_MACSEC_ICV_LEN ? cap - HTOE_MACSEC_ICV_LEN : 0;
		len = htoe_frame_output(n->b, rte_pktmbuf_mtod(m, uint8_t *),
					cap > HTOE_FRAME_MAX ? HTOE_FRAME_MAX : cap, now,
					HTOE_TX_FLUSH);
		if (len <= 0) {
			n->spare = m; /* keep it for the next frame */
			break;
		}
		m->data_len = (uint16_t)len;
		m->pkt_len = (uint32_t)len;
		if (n->ms && br_macsec_tx(n, m)) {
			rte_pktmbuf_free(m); /* counted (no SA / PN exhausted) */
			continue;
		}
		tx_frame(a, n, m, now);
		sent++;
	}
	return sent;
}

/* -------------------------------------------------------------- polling */

static void finish_workload(struct br_node *n)
{
	if (n->wl && !n->finishing) {
		/* no more random ops: the read-back sweep follows */
		if (n->wl->cfg.n_ops > n->wl->generated)
			n->wl->cfg.n_ops = n->wl->generated;
	}
	n->finishing = true;
}

static void node_poll(struct br_app *a, struct br_node *n, uint64_t now, int phase)
{
	struct br_port *p = n->port;
	struct rte_mbuf *pkts[BR_MAX_BURST], *m;
	unsigned moved, sent;
	uint16_t nb;

	n->c.polls++;
	nb = rte_eth_rx_burst(p->port_id, 0, pkts, (uint16_t)a->cfg.burst);
	for (uint16_t i = 0; i < nb; i++)
		rx_frame(n, pkts[i], now);
	if (p->imp_rx)
		while ((m = impair_release(p->imp_rx, now)) != NULL)
			deliver(n, m, now);
	if (now >= n->deadline) {
		htoe_handle_expiry(n->b, now);
		n->c.expiries++;
	}

	if (n->wl) {
		if (!n->wl_start_ns)
			n->wl_start_ns = now ? now : 1;
		if (!n->finishing && (phase == BR_FINISH ||
				      (n->cfg->wl.duration_ns &&
				       now - n->wl_start_ns >= n->cfg->wl.duration_ns)))
			finish_workload(n);
	}
	moved = htnode_poll(&n->hn, now);
	/* htnode_poll has drained the local side (requests issued up to their
	 * window, responses offered, output taken): nothing more will join a
	 * partly filled frame in this iteration, so it leaves now instead of
	 * one poll later (that wait cost a third of an idle read round trip;
	 * under load frames fill up within the poll anyway: same throughput and
	 * wire efficiency in htoe-bench) */
	sent = tx_frames(a, n, now);
	if (p->imp_tx)
		while ((m = impair_release(p->imp_tx, now)) != NULL) {
			wire_tx(n, m, now);
			sent++;
		}
	n->deadline = htoe_next_deadline(n->b);
	if (nb || moved || sent)
		n->c.busy_polls++;
	/* The frames of one iteration leave together: holding them for the
	 * drain timer would add up to tx_drain to every round trip (and to the
	 * retransmission timer's view of it); the timer stays the bound. */
	if (sent)
		rte_eth_tx_buffer_flush(p->port_id, 0, p->txb);
}

static void node_check_done(struct br_node *n, uint64_t now)
{
	bool wl_done = !n->wl || ht_wl_done(n->wl);

	if (n->wl && wl_done && !n->c.wl_finish_ns)
		n->c.wl_finish_ns = now ? now : 1;
	/* a node without a workload only serves: it never holds up the end */
	n->c.done = !n->wl || (wl_done && !htnode_busy(&n->hn));
}

/* ----------------------------------------------------------- control */

struct br_ctl {
	uint64_t last_stats_ns, finish_ns;
	int      seen_signals;
	struct br_totals prev;
	uint64_t prev_ns;
};

static void stats_line(struct br_app *a, struct br_ctl *ctl, uint64_t now)
{
	struct br_totals t;

	br_totals(a, -1, &t);
	br_print_line(a, stdout, (double)now / 1e9, &t, &ctl->prev,
		      (double)(now - ctl->prev_ns) / 1e9);
	ctl->prev = t;
	ctl->prev_ns = now;
	ctl->last_stats_ns = now;
}

static void set_phase(struct br_app *a, int ph)
{
	__atomic_store_n(&a->phase, ph, __ATOMIC_RELAXED);
}

static void control(struct br_app *a, struct br_ctl *ctl, uint64_t now)
{
	int phase = __atomic_load_n(&a->phase, __ATOMIC_RELAXED);
	int sigs = br_signals;
	bool all_done = true, any_wl = false;

	br_capture_drain(a, 4096);
	for (unsigned i = 0; i < a->n_nodes; i++) {
		all_done &= br_rd(&a->nodes[i].pub.c.done) != 0;
		any_wl |= a->nodes[i].wl != NULL;
	}
	if (sigs != ctl->seen_signals) {
		ctl->seen_signals = sigs;
		if (sigs >= 2 || phase == BR_FINISH) {
			fprintf(stderr, "htoe-bridge: second signal: quitting now\n");
			a->incomplete = !all_done;
			set_phase(a, BR_QUIT);
			return;
		}
		fprintf(stderr, "htoe-bridge: signal: finishing the operations in flight "
			"(again to quit at once)\n");
		set_phase(a, phase = BR_FINISH);
		ctl->finish_ns = now;
	}
	if (phase == BR_RUN && a->cfg.duration_ns && now >= a->cfg.duration_ns) {
		set_phase(a, phase = BR_FINISH);
		ctl->finish_ns = now;
	}
	if (all_done && (phase == BR_FINISH || (a->cfg.exit_when_done && any_wl))) {
		set_phase(a, BR_QUIT);
		return;
	}
	if (phase == BR_FINISH && now - ctl->finish_ns > a->cfg.drain_timeout_ns) {
		fprintf(stderr, "htoe-bridge: not quiescent after drain_timeout: quitting\n");
		a->incomplete = true;
		set_phase(a, BR_QUIT);
		return;
	}
	if (a->cfg.stats_interval_ns && now - ctl->last_stats_ns >= a->cfg.stats_interval_ns) {
		stats_line(a, ctl, now);
		br_capture_flush(a);
	}
}

/* ------------------------------------------------------------ the loop */

static uint64_t ns_to_tsc(const struct br_app *a, uint64_t ns)
{
	return (uint64_t)(((unsigned __int128)ns * a->tsc_hz) / 1000000000u);
}

int br_lcore_loop(void *arg)
{
	struct br_lcore *lc = arg;
	struct br_app *a = br_app;
	const uint64_t drain_tsc = ns_to_tsc(a, a->cfg.tx_drain_ns);
	const uint64_t pub_tsc = ns_to_tsc(a, BR_PUBLISH_NS);
	uint64_t prev_drain = rte_rdtsc(), prev_pub = prev_drain;
	struct br_ctl ctl;
	struct ht_rand prng;
	/* test hook: [global] lcore_pause, a poller descheduled now and then */
	const uint64_t pause_thr = a->cfg.lcore_pause >= 1 ? UINT64_MAX :
				   (uint64_t)(a->cfg.lcore_pause * 18446744073709551616.0);

	memset(&ctl, 0, sizeof(ctl));
	ht_rand_seed(&prng, a->cfg.lcore_pause_seed + lc->lcore_id);
	for (;;) {
		int phase = __atomic_load_n(&a->phase, __ATOMIC_RELAXED);
		uint64_t tsc = rte_rdtsc(), now = br_now_ns(a, tsc);

		if (phase == BR_QUIT)
			break;
		for (unsigned i = 0; i < lc->n_nodes; i++) {
			struct br_node *n = lc->nodes[i];
			uint64_t t0 = i ? br_now_ns(a, rte_rdtsc()) : now, t1;

			if (n->last_poll_ns && t0 - n->last_poll_ns > n->c.gap_max_ns)
				n->c.gap_max_ns = t0 - n->last_poll_ns;
			node_poll(a, n, t0, phase);
			t1 = br_now_ns(a, rte_rdtsc());
			if (t1 - t0 > n->c.poll_max_ns)
				n->c.poll_max_ns = t1 - t0;
			n->last_poll_ns = t0;
		}
		if (unlikely(pause_thr) && ht_rand_u64(&prng) < pause_thr)
			rte_delay_us_sleep(1 + (unsigned)ht_rand_below(&prng, a->cfg.lcore_pause_max_ns /
									   1000));
		if (tsc - prev_drain >= drain_tsc) {
			for (unsigned i = 0; i < lc->n_nodes; i++)
				rte_eth_tx_buffer_flush(lc->nodes[i]->port->port_id, 0,
							lc->nodes[i]->port->txb);
			prev_drain = tsc;
		}
		if (tsc - prev_pub >= pub_tsc) {
			for (unsigned i = 0; i < lc->n_nodes; i++) {
				node_check_done(lc->nodes[i], now);
				br_node_publish(lc->nodes[i]);
			}
			prev_pub = tsc;
			if (lc->is_main)
				control(a, &ctl, now);
		}
		if (!lc->n_nodes)
			rte_delay_us_sleep(100);
	}
	for (unsigned i = 0; i < lc->n_nodes; i++) {
		struct br_node *n = lc->nodes[i];

		rte_eth_tx_buffer_flush(n->port->port_id, 0, n->port->txb);
		node_check_done(n, br_now_ns(a, rte_rdtsc()));
		br_node_publish(n);
	}
	if (lc->is_main) {
		a->run_ns = br_now_ns(a, rte_rdtsc());
		if (a->cfg.stats_interval_ns)
			stats_line(a, &ctl, a->run_ns); /* the last one, at the end */
	}
	return 0;
}
