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
#include "path_probe.h"

volatile sig_atomic_t br_signals;

_Static_assert(sizeof(struct br_counters) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htoe_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htoe_vl_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct ht_wl_stats) % 8 == 0, "u64 words");
_Static_assert(sizeof(struct htnode_stats) % 8 == 0, "u64 words");

/* --------------------------------------------------------- injector */

static void finish_workload(struct br_node *n);

/* The injector's share of a poll: `ops` writes, or writes until the
 * duration (or a stop), then the expected image into the shadow, once, for
 * the end's check. */
static unsigned inject_poll(struct br_node *n, uint64_t now)
{
	uint64_t ops = n->cfg->wl.ops;

	if (!n->finishing && n->inj->taken < ops)
		return htinject_poll(n->inj, ops - n->inj->taken, now);
	if (!n->finishing)
		finish_workload(n);
	if (!n->c.wl_finish_ns)
		htinject_expect(n->inj, n->shadow);
	return 0;
}

/* --------------------------------------------------------------- publish */

void br_node_publish(struct br_node *n)
{
	static const struct ht_wl_stats zero_ws;

	br_drv_count(&n->drv);
	n->c.busy = (uint64_t)htoe_busy(n->b) + n->hn.rsp_n + ht_req_outstanding(&n->hn.req);
	htoe_snap_put(&n->pub.c, &n->c, sizeof(n->c));
	htoe_snap_put(&n->pub.hs, htoe_get_stats(n->b), sizeof(struct htoe_stats));
	htoe_snap_put(&n->pub.ws, n->wl ? ht_wl_stats(n->wl) : &zero_ws, sizeof(struct ht_wl_stats));
	htoe_snap_put(&n->pub.ns, &n->hn.st, sizeof(struct htnode_stats));
	br_macsec_publish(n->drv.ms);
	for (unsigned i = 0; i < n->n_vl; i++) {
		uint16_t node = n->vl_node[i];

		htoe_snap_put(&n->pub.vl[i], htoe_get_vl_stats(n->b, node),
			  sizeof(struct htoe_vl_stats));
		__atomic_store_n(&n->pub.vl_up[i], (uint64_t)htoe_vl_is_up(n->b, node),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&n->pub.vl_epoch[i], (uint64_t)htoe_vl_epoch(n->b, node),
				 __ATOMIC_RELAXED);
	}
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

/* One iteration for one node; true if it moved anything. */
static bool node_poll(struct br_app *a, struct br_node *n, uint64_t now, int phase)
{
	unsigned nb, moved, sent;

	n->c.polls++;
	if (unlikely(phase == BR_LEAVE) && !n->c.left) {
		htoe_leave(n->b, BR_LEAVE_COPIES);
		n->c.left = 1;
		n->drv.deadline = 0; /* this poll frames them */
	}
	nb = br_drv_rx(&n->drv, now);
	br_drv_expire(&n->drv, now);
	if (n->wl) {
		if (!n->wl_start_ns)
			n->wl_start_ns = now ? now : 1;
		if (!n->finishing && (phase >= BR_FINISH ||
				      (n->cfg->wl.duration_ns &&
				       now - n->wl_start_ns >= n->cfg->wl.duration_ns)))
			finish_workload(n);
	}
	br_path_mark(BR_PATH_GLUE);
	moved = (n->inj ? inject_poll(n, now) : 0) + htnode_poll(&n->hn, now);
	br_path_mark(BR_PATH_MODEL);
	/* htnode_poll has drained the local side (requests issued up to their
	 * window, responses offered, output taken): nothing more will join a
	 * partly filled frame in this iteration, so it leaves now instead of
	 * one poll later (that wait cost a third of an idle read round trip;
	 * under load frames fill up within the poll anyway: same throughput and
	 * wire efficiency in htoe-bench) */
	/* Nothing came in, the local side moved nothing and no deadline (the
	 * bridge's, an impairment stage's) has come: the bridge is as the
	 * last framing left it, with nothing to send then, and its deadline
	 * covers all framing that needs no new input. An idle iteration
	 * skips the walk (it was most of one, and the time an arriving frame
	 * waits to be seen). */
	if (nb || moved || now >= br_drv_next_wake(&n->drv)) {
		sent = br_drv_tx(&n->drv, now);
		n->drv.deadline = htoe_next_deadline(n->b);
	} else {
		sent = 0;
	}
	(void)a;
	if (nb || moved || sent) {
		n->c.busy_polls++;
		return true;
	}
	return false;
}

/* The run of node n ends (a signal, --duration, or the process exits when
 * its workloads are done): the cross-check asks once more (node_peercheck). */
static bool run_ends(const struct br_app *a, const struct br_node *n)
{
	return n->finishing || a->cfg.exit_when_done;
}

static void node_check_done(struct br_node *n, uint64_t now)
{
	const struct pc_asker *k = &n->pc.ask;
	bool wl_done = !n->wl || ht_wl_done(n->wl);
	/* a check answered in full is asked again at the end of the run */
	bool again = run_ends(br_app, n) && k->final == PC_FINAL_NONE && k->n_run &&
		     (k->state == PC_CONFIRMED || k->state == PC_DIFFERS);

	if (n->wl && wl_done && !n->c.wl_finish_ns)
		n->c.wl_finish_ns = now ? now : 1;
	/* a node without a workload only serves: it never holds up the end;
	 * 2: done once its run ends (its final check answered), which the
	 * drain waits for (control) */
	if (n->c.left == 1 && !htoe_ctrl_queued(n->b))
		n->c.left = 2;
	n->c.done = !n->wl || (wl_done && !htnode_busy(&n->hn) && !pc_asking(k) && !again);
	if (n->wl && n->c.done && run_ends(br_app, n))
		n->c.done = 2;
}

/* The end-of-run cross-check (node/peercheck.h): the node answers its peers'
 * digest requests; once its workload is done and quiet, it asks its target's
 * node for the digest of the window, when that node is in another process (in
 * this one the summary compares the bytes), and once more when its run ends:
 * a write applied after the first answer (a forger's) fails this run too, not
 * only the target's. A peer given up on is asked no more; one silent for
 * peer_dead_timeout during the final check (stopped before this node) leaves
 * the first verdict standing. Every publish, not per packet. */
static void node_peercheck(struct br_app *a, struct br_node *n, uint64_t now)
{
	struct pc_asker *k = &n->pc.ask;
	const struct br_wl_cfg *w = &n->cfg->wl;

	if (n->wl && k->state == PC_IDLE && ht_wl_done(n->wl) && !htnode_busy(&n->hn)) {
		bool remote = w->target != n->id;

		for (unsigned i = 0; i < a->n_nodes; i++)
			remote &= a->nodes[i].id != w->target;
		if (remote)
			pc_ask_start(k, w->target, k->session, w->fill_offset, n->wl, now);
	}
	if (n->wl && run_ends(a, n))
		pc_ask_again(k, now);
	/* (a difference found before the peer went stays a difference) */
	for (unsigned i = 0; (pc_asking(k) || (k->state == PC_CONFIRMED && !k->n_run)) &&
			     i < n->n_vl && i < HTOE_MAX_PEERS; i++) {
		if (n->vl_node[i] != k->peer)
			continue;
		if (pc_asking_again(k) && ((n->gone >> i & 1) ||
					   (n->silent[i].since &&
					    now - n->silent[i].since >= a->cfg.peer_dead_ns)))
			pc_ask_silent(k);
		else if (n->gone >> i & 1)
			pc_ask_gone(k);
	}
	if (pc_poll(&n->pc, n->b, n->wl, n->mem, n->cfg->mem_size, now))
		n->drv.deadline = 0; /* the next poll frames them */
}

/* How long each VL's peer has been silent is followed all along (from the
 * last frame of any kind that came from it: its bytes count moved; its
 * DATA frames alone would leave out the standalone acks that answer our
 * retransmissions, and the LEAVE). In the drain (after --duration
 * or a signal) a peer that was heard from and then sends nothing for
 * `dead_ns` ([global] peer_dead_timeout) while the node still waits on it
 * (its VL is down, or times out against it, or the workload uses its memory)
 * is gone for good. A live peer whose poller is descheduled is silent for as
 * long as that lasts (seconds on a shared host), so the bound is the
 * configured one, not a round trip. The node gives up
 * on a gone peer instead of waiting for drain_timeout: its memory is reported
 * lost (htnode_peer_gone stops a workload on it) and the VL is reset cold,
 * which poisons the requests to it and drops what was queued for it; the
 * node's own verification of the rest stands. */
static void drain_gone(struct br_node *n, uint64_t now, bool finishing, uint64_t dead_ns)
{
	const struct br_wl_cfg *w = &n->cfg->wl;

	for (unsigned i = 0; i < n->n_vl && i < HTOE_MAX_PEERS; i++) {
		uint16_t peer = n->vl_node[i];
		const struct htoe_vl_stats *v = htoe_get_vl_stats(n->b, peer);
		bool left = htoe_vl_peer_left(n->b, peer);
		/* (the final check bounds its own wait: node_peercheck) */
		bool uses = n->wl && w->target == peer &&
			    (!ht_wl_done(n->wl) ||
			     (pc_asking(&n->pc.ask) && !pc_asking_again(&n->pc.ask)));

		if (!n->silent[i].since || v->rx_bytes != n->silent[i].rx) {
			n->silent[i].rx = v->rx_bytes;
			n->silent[i].timeouts = v->timeouts;
			n->silent[i].since = now;
			continue;
		}
		/* a peer never heard from may still be starting: the drain waits
		 * for it (drain_timeout), as for any peer before */
		if (!finishing || n->c.done || (n->gone >> i & 1) || !v->rx_frames ||
		    (!left && now - n->silent[i].since < dead_ns) ||
		    (htoe_vl_is_up(n->b, peer) && v->timeouts == n->silent[i].timeouts && !uses))
			continue;
		n->gone |= 1ull << i;
		n->gone_lost |= (uint64_t)uses << i;
		char why[64];

		if (left)
			snprintf(why, sizeof(why), "it stopped (LEAVE)");
		else
			snprintf(why, sizeof(why), "nothing from it for %.1f s",
				 (double)(now - n->silent[i].since) / 1e9);
		if (uses)
			fprintf(stderr, "htoe-bridge: node %u: peer node %u is gone (%s while the "
				"node waited on it): its memory [0x%" PRIx64 ", 0x%" PRIx64 ") is "
				"lost, the requests to it are poisoned and the workload on it "
				"stops\n", n->id, peer, why, w->base, w->base + w->size);
		else
			fprintf(stderr, "htoe-bridge: node %u: peer node %u is gone (%s while the "
				"node waited on it): what was queued for it is dropped\n", n->id,
				peer, why);
		htnode_peer_gone(&n->hn, peer, uses ? w->base : 0, uses ? w->size : 0);
		htoe_vl_reset(n->b, peer, true, now);
	}
}

/* ----------------------------------------------------------- control */

struct br_ctl {
	uint64_t last_stats_ns, finish_ns, leave_ns;
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

/* Every node done; in the drain a node with a workload is done once it has
 * seen the end of its run (node_check_done: its final check answered). */
static bool nodes_done(const struct br_app *a, int phase)
{
	bool all = true;

	for (unsigned i = 0; i < a->n_nodes; i++) {
		uint64_t done = br_rd(&a->nodes[i].pub.c.done);

		all &= done != 0 && (phase != BR_FINISH || !a->nodes[i].wl || done == 2);
	}
	return all;
}

static void control(struct br_app *a, struct br_ctl *ctl, uint64_t now)
{
	int phase = __atomic_load_n(&a->phase, __ATOMIC_RELAXED);
	int sigs = br_signals;
	bool all_done = true, any_wl = false;

	br_capture_drain(a, 4096);
	for (unsigned i = 0; i < a->n_nodes; i++)
		any_wl |= a->nodes[i].wl != NULL;
	all_done = nodes_done(a, phase);
	if (sigs != ctl->seen_signals) {
		ctl->seen_signals = sigs;
		if (sigs >= 2) {
			fprintf(stderr, "htoe-bridge: second signal: quitting now\n");
			a->incomplete = !all_done;
			set_phase(a, BR_QUIT);
			return;
		}
		/* the first signal drains, also when --duration began the drain */
		fprintf(stderr, "htoe-bridge: signal: finishing the operations in flight "
			"(again to quit at once)\n");
		if (phase == BR_RUN) {
			set_phase(a, phase = BR_FINISH);
			ctl->finish_ns = now;
		}
	}
	if (phase == BR_LEAVE) {
		bool framed = true;

		for (unsigned i = 0; i < a->n_nodes; i++)
			framed &= br_rd(&a->nodes[i].pub.c.left) == 2;
		if (framed || now - ctl->leave_ns > BR_LEAVE_MAX_NS)
			set_phase(a, BR_QUIT);
		return;
	}
	if (phase == BR_RUN && a->cfg.duration_ns && now >= a->cfg.duration_ns) {
		set_phase(a, phase = BR_FINISH);
		ctl->finish_ns = now;
	}
	all_done = nodes_done(a, phase);
	if (all_done && (phase == BR_FINISH || (a->cfg.exit_when_done && any_wl))) {
		/* a clean stop: the peers are told, so that none of them takes
		 * this node for a dead one (drain_gone) */
		set_phase(a, BR_LEAVE);
		ctl->leave_ns = now;
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

/* idle polls between TSC reads (br_lcore_loop) */
#define BR_TSC_IDLE_POLLS 4

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

	uint16_t ports[BR_MAX_NODES];

	memset(&ctl, 0, sizeof(ctl));
	ht_rand_seed(&prng, a->cfg.lcore_pause_seed + lc->lcore_id);
	for (unsigned i = 0; i < lc->n_nodes; i++)
		ports[i] = lc->nodes[i]->drv.port->port_id;
	br_idle_init(&lc->idle, a->poll, ports, lc->n_nodes, a->tsc_hz);
	lc->stall = br_stall_register("lcore %u (node%s %u%s)", lc->lcore_id,
				      lc->n_nodes > 1 ? "s" : "", lc->n_nodes ? lc->nodes[0]->id : 0,
				      lc->n_nodes > 1 ? ", ..." : "");
	/* One TSC read per node poll that moved something, and one per
	 * BR_TSC_IDLE_POLLS idle polls: the time after a node's poll is the
	 * start of the next node's and, with the drain and publish checks that
	 * follow (tens of ns), of the next iteration's; re-read only after
	 * something that takes long (a sleep, a flush, a publish). On the VM
	 * of docs/benchmarks.md a TSC read alone takes about 11 ns and an idle
	 * iteration of one node 16 ns with one, 14 ns without (a frame that
	 * arrives waits half an iteration on average before a poll sees it);
	 * the time a poll starts with is at most that many idle polls old. */
	uint64_t tsc = rte_rdtsc();
	unsigned idle_polls = 0;

	for (;;) {
		int phase = __atomic_load_n(&a->phase, __ATOMIC_RELAXED);
		uint64_t now = br_now_ns(a, tsc), wake = UINT64_MAX, t1 = now, tend = tsc;
		bool worked = false;

		if (phase == BR_QUIT)
			break;
		br_stall_enter(lc->stall, tsc);
		for (unsigned i = 0; i < lc->n_nodes; i++) {
			struct br_node *n = lc->nodes[i];
			uint64_t t0 = t1;

			if (n->last_poll_ns && t0 - n->last_poll_ns > n->c.gap_max_ns)
				n->c.gap_max_ns = t0 - n->last_poll_ns;
			bool moved = node_poll(a, n, t0, phase);

			worked |= moved;
			wake = RTE_MIN(wake, br_drv_next_wake(&n->drv));
			if (moved || ++idle_polls >= BR_TSC_IDLE_POLLS) {
				idle_polls = 0;
				tend = rte_rdtsc();
				t1 = br_now_ns(a, tend);
			}
			if (t1 - t0 > n->c.poll_max_ns)
				n->c.poll_max_ns = t1 - t0;
			n->last_poll_ns = t0;
		}
		if (unlikely(pause_thr) && ht_rand_u64(&prng) < pause_thr) {
			rte_delay_us_sleep(1 + (unsigned)ht_rand_below(&prng, a->cfg.lcore_pause_max_ns /
									   1000));
			tend = rte_rdtsc();
		}
		if (tsc - prev_drain >= drain_tsc) {
			for (unsigned i = 0; i < lc->n_nodes; i++)
				br_port_flush(lc->nodes[i]->drv.port);
			prev_drain = tsc;
			tend = rte_rdtsc();
		}
		if (tsc - prev_pub >= pub_tsc) {
			for (unsigned i = 0; i < lc->n_nodes; i++) {
				drain_gone(lc->nodes[i], now, phase == BR_FINISH,
					   a->cfg.peer_dead_ns);
				node_peercheck(a, lc->nodes[i], now);
				node_check_done(lc->nodes[i], now);
				br_node_publish(lc->nodes[i]);
				br_drv_watch(&lc->nodes[i]->drv, now);
			}
			prev_pub = tsc;
			__atomic_store_n(&lc->pub_busy, lc->idle.busy_tsc, __ATOMIC_RELAXED);
			__atomic_store_n(&lc->pub_total, lc->idle.total_tsc, __ATOMIC_RELAXED);
			__atomic_store_n(&lc->pub_sleep, lc->idle.sleep_tsc, __ATOMIC_RELAXED);
			if (lc->is_main)
				control(a, &ctl, now);
			tend = rte_rdtsc();
		}
		if (!lc->n_nodes) {
			rte_delay_us_sleep(100);
			tsc = rte_rdtsc();
		} else { /* adaptive: sleeps when idle, until the next deadline at most */
			tsc = br_idle_after(&lc->idle, worked, now, wake, tend);
		}
	}
	br_path_report(lc->lcore_id, a->tsc_hz);
	br_stall_unregister(lc->stall);
	br_idle_fini(&lc->idle);
	for (unsigned i = 0; i < lc->n_nodes; i++) {
		struct br_node *n = lc->nodes[i];

		br_port_flush(n->drv.port);
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
