/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge counters: sums of the per-node snapshots (relaxed loads), the
 * periodic one-line summary, the final summary and its JSON form.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bridge.h"

#define RD(x) br_rd(&(x))

void br_totals(struct br_app *a, int node, struct br_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];
		const struct br_pub *p = &n->pub;

		if (node >= 0 && (int)n->id != node)
			continue;
		t->nodes++;
		t->wl_nodes += n->cfg->wl.enabled;
		t->done_nodes += RD(p->c.done) != 0;
		t->ops += RD(p->ws.issued_total);
		t->sweep += RD(p->ws.sweep_issued);
		t->completed += RD(p->ws.completed);
		t->verified += RD(p->ws.verified);
		t->mismatches += RD(p->ws.mismatches);
		t->errors += RD(p->ws.errors);
		t->lost_reset += RD(p->ns.lost_reset);
		t->lost_restart += RD(p->ns.lost_restart);
		t->lost_poisoned += RD(p->ws.poisoned_lost);
		t->peers_gone += RD(p->ns.peers_gone);
		t->unexpected += RD(p->ws.unexpected) + RD(p->ns.unexpected) + RD(p->ns.bad_cookie);
		t->tx_frames += RD(p->c.tx_frames);
		t->rx_frames += RD(p->c.rx_frames);
		t->tx_bytes += RD(p->c.tx_bytes);
		t->rx_bytes += RD(p->c.rx_bytes);
		t->rx_bad += RD(p->c.rx_bad);
		t->tx_refused += RD(p->c.tx_refused);
		t->alloc_fail += RD(p->c.alloc_fail);
		t->imp_dropped += RD(p->c.imp_tx_dropped) + RD(p->c.imp_rx_dropped);
		t->imp_dup += RD(p->c.imp_dup);
		t->imp_corrupt += RD(p->c.imp_corrupt);
		t->imp_reorder += RD(p->c.imp_reorder);
		t->cap_frames += RD(p->c.cap_frames);
		t->cap_dropped += RD(p->c.cap_dropped);
		t->local_in += RD(p->hs.local_in);
		t->local_out += RD(p->hs.local_out);
		t->backpressure += RD(p->hs.backpressure);
		t->master_aborts += RD(p->hs.master_aborts);
		t->unexpected_responses += RD(p->hs.unexpected_responses);
		t->poll_max_ns = RTE_MAX(t->poll_max_ns, RD(p->c.poll_max_ns));
		t->gap_max_ns = RTE_MAX(t->gap_max_ns, RD(p->c.gap_max_ns));
		for (unsigned r = 1; r < HTOE_DROP__COUNT; r++)
			t->drops[r] += RD(p->hs.drops[r]);
		for (unsigned k = 0; k < n->n_vl; k++) {
			const struct htoe_vl_stats *v = &p->vl[k];

			t->retransmits += RD(v->retransmits);
			t->naks += RD(v->naks_sent);
			t->timeouts += RD(v->timeouts);
			t->resets += RD(v->resets);
			t->poisoned += RD(v->poisoned);
			t->np_timeouts += RD(v->np_timeouts);
			t->late_responses += RD(v->late_responses);
			t->peer_restarts += RD(v->peer_restarts);
			for (unsigned r = 1; r < HTOE_DROP__COUNT; r++)
				t->drops[r] += RD(v->drops[r]);
		}
	}
}

static double rate(uint64_t now, uint64_t prev, double dt)
{
	return dt > 0 && now >= prev ? (double)(now - prev) / dt : 0;
}

void br_print_line(struct br_app *a, FILE *f, double t_s, const struct br_totals *t,
		   const struct br_totals *prev, double dt_s)
{
	fprintf(f,
		"[%7.1f s] ops %" PRIu64 " (%.3f Mops/s) verified %" PRIu64 " mismatches %" PRIu64
		" errors %" PRIu64 " | frames tx %" PRIu64 " rx %" PRIu64 " (%.0f k/s) | rtx %" PRIu64
		" resets %" PRIu64 " poisoned %" PRIu64,
		t_s, t->ops, rate(t->ops, prev->ops, dt_s) / 1e6, t->verified, t->mismatches,
		t->errors, t->tx_frames, t->rx_frames, rate(t->tx_frames, prev->tx_frames, dt_s) / 1e3,
		t->retransmits, t->resets, t->poisoned);
	if (t->imp_dropped || t->imp_dup || t->imp_corrupt || t->imp_reorder)
		fprintf(f, " | impaired: drop %" PRIu64 " dup %" PRIu64 " corrupt %" PRIu64
			" reorder %" PRIu64, t->imp_dropped, t->imp_dup, t->imp_corrupt,
			t->imp_reorder);
	if (a->capture)
		fprintf(f, " | captured %" PRIu64 " lost %" PRIu64, t->cap_frames, t->cap_dropped);
	/* each polling lcore's busy share since the previous line: the time in
	 * iterations that moved something (adaptive: and the time asleep) */
	fprintf(f, " | busy");
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct br_lcore *lc = &a->lcores[l];
		uint64_t b = RD(lc->pub_busy), tot = RD(lc->pub_total);

		if (!lc->n_nodes)
			continue;
		fprintf(f, " lc%u %.0f%%", l, tot > lc->line_total ?
			100.0 * (double)(b - lc->line_busy) / (double)(tot - lc->line_total) : 0.0);
		lc->line_busy = b;
		lc->line_total = tot;
	}
	/* a serving process does not quit by itself: say when its work is done */
	if (!a->cfg.exit_when_done && t->wl_nodes)
		fprintf(f, " | done %u/%u", t->done_nodes, t->nodes);
	fputc('\n', f);
	fflush(f);
}

/* Seconds the workloads took: until the last one finished, else the run. */
static double elapsed_s(struct br_app *a)
{
	uint64_t end = 0;
	bool all = true;

	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];
		uint64_t fin = RD(n->pub.c.wl_finish_ns);

		if (!n->cfg->wl.enabled)
			continue;
		if (!fin)
			all = false;
		if (fin > end)
			end = fin;
	}
	if (!all || !end)
		end = a->run_ns;
	return (double)end / 1e9;
}

static const struct br_node *local_node(const struct br_app *a, uint16_t id)
{
	for (unsigned i = 0; i < a->n_nodes; i++)
		if (a->nodes[i].id == id)
			return &a->nodes[i];
	return NULL;
}

/* After the lcores stopped: compare each workload's shadow with the target
 * memory when the target is a node of this process. Returns differing
 * bytes (0 also when it cannot be checked); *checked tells. */
static uint64_t image_check(const struct br_app *a, const struct br_node *n, bool *checked)
{
	const struct br_node *tg = local_node(a, n->cfg->wl.target);

	*checked = false;
	if (!n->wl || !tg || !tg->mem || a->incomplete)
		return 0;
	*checked = true;
	return ht_wl_check_image(n->wl, tg->mem + n->cfg->wl.fill_offset);
}

static const char *const pc_state_name[] = {
	[PC_IDLE] = "none", [PC_ASKING] = "unanswered", [PC_CONFIRMED] = "confirmed",
	[PC_DIFFERS] = "differs", [PC_GONE] = "gone",
};

static const char *const pc_final_name[] = {
	[PC_FINAL_NONE] = "none", [PC_FINAL_ASKING] = "unanswered", [PC_FINAL_DONE] = "answered",
	[PC_FINAL_SILENT] = "silent",
};

/* A range this node answered a peer's digest request for holds something
 * else now (its CRC32C in *now), and that peer has not restarted since (a
 * restarted peer owns nothing here any more: its view was lost and reported). */
static bool pc_changed(const struct br_node *n, const struct pc_record *r, uint32_t *now)
{
	const struct htoe_vl_stats *v = htoe_get_vl_stats(n->b, r->node);

	*now = n->mem ? htoe_crc32c(n->mem + r->off, r->len) : r->crc;
	return *now != r->crc && !(v && v->peer_restarts != r->restarts);
}

/* The cross-check's asking side (node/peercheck.h), after the node's line:
 * what was compared with the peer's memory, what was left out and why, each
 * run that differs with both CRCs. Returns the runs that differ or were not
 * answered (0 when there was nothing to ask: target in this process). */
static unsigned print_peercheck(FILE *f, const struct br_node *n)
{
	const struct pc_asker *k = &n->pc.ask;
	uint64_t bytes = 0;
	unsigned bad = 0;

	if (!n->wl || (k->state == PC_IDLE && !k->n_run))
		return 0;
	for (unsigned i = 0; i < k->n_run; i++)
		bytes += k->run[i].len;
	fprintf(f, "          memory of node %u (window [+%#" PRIx64 ", +%#" PRIx64 ")) against the "
		"shadow, over the wire: %s", k->peer, n->cfg->wl.fill_offset, n->cfg->wl.size,
		k->state == PC_DIFFERS ? "DIFFERS" : pc_state_name[k->state]);
	if (k->state == PC_GONE)
		fprintf(f, " (the peer is gone: its memory is lost, reported; nothing compared)");
	else if (!k->n_run)
		fprintf(f, " (nothing the workload owns to compare)");
	else
		fprintf(f, " (%u of %u ranges answered, %" PRIu64 " bytes compared)", k->cur,
			k->n_run, bytes);
	if (k->final == PC_FINAL_DONE)
		fprintf(f, ", again at the end of the run: %s", k->changed ? "CHANGED" : "unchanged");
	else if (k->final == PC_FINAL_SILENT)
		fprintf(f, ", not again at the end of the run (node %u silent for "
			"peer_dead_timeout: stopped before)", k->peer);
	if (k->excluded || k->uncompared)
		fprintf(f, "; left out: %" PRIu64 " bytes the workload does not own (blocks with "
			"a byte reported lost, or never written or read), %" PRIu64 " bytes beyond %u ranges",
			k->excluded, k->uncompared, PC_MAX_RUNS);
	fputc('\n', f);
	for (unsigned i = 0; i < k->n_run; i++) {
		const struct pc_run *r = &k->run[i];

		if (!r->answered || (r->status == HTOE_DIGEST_OK && r->there == r->here))
			continue;
		bad++;
		if (r->changed)
			fprintf(f, "          node %u's memory [+%#" PRIx64 ", +%#" PRIx64 ") CHANGED "
				"after confirmation: crc32c %#010" PRIx32 " there now, %#010" PRIx32
				" here (node %u's shadow, confirmed before): written after node %u's "
				"last access\n", k->peer, r->off, r->len, r->there, r->here, n->id,
				n->id);
		else if (r->status != HTOE_DIGEST_OK)
			fprintf(f, "          node %u refused the digest of [+%#" PRIx64 ", +%#" PRIx64
				") of its memory: %s\n", k->peer, r->off, r->len,
				htoe_digest_status_name(r->status));
		else
			fprintf(f, "          node %u's memory [+%#" PRIx64 ", +%#" PRIx64 ") DIFFERS "
				"from node %u's shadow: crc32c %#010" PRIx32 " there, %#010" PRIx32
				" here\n", k->peer, r->off, r->len, n->id, r->there, r->here);
	}
	if (k->state == PC_ASKING || (k->state == PC_IDLE && k->n_run))
		bad += k->n_run - k->cur;
	return bad;
}

/* The cross-check's answering side: ranges of this node's memory a peer
 * confirmed (the CRC32C answered) that hold something else now: written after
 * that peer's last access. Returns the changed ranges. */
static unsigned print_changed(FILE *f, const struct br_node *n)
{
	const struct pc_answerer *s = &n->pc.ans;
	unsigned changed = 0;

	for (unsigned i = 0; i < s->n; i++) {
		const struct pc_record *r = &s->rec[i];
		uint32_t now;

		if (!pc_changed(n, r, &now))
			continue;
		changed++;
		fprintf(f, "          memory [+%#" PRIx64 ", +%#" PRIx64 ") that node %u confirmed "
			"(crc32c %#010" PRIx32 ") CHANGED afterwards (crc32c %#010" PRIx32 " now): "
			"written after node %u's last access\n", r->off, r->len, r->node, r->crc, now,
			r->node);
	}
	return changed;
}

/* Why the bridge refused frames, and the VLs' other trouble (non-zero only). */
static void print_drops(FILE *f, const struct br_node *n, const uint64_t *drops)
{
	uint64_t starved = 0, npto = 0, lost = 0, refused = 0;
	const struct ht_tgt_stats *tg = &n->hn.tgt.st;
	bool any = false;

	for (unsigned k = 0; k < n->n_vl; k++) {
		const struct htoe_vl_stats *v = &n->pub.vl[k];

		starved += RD(v->credit_starved_ns);
		npto += RD(v->np_timeouts);
		lost += RD(v->posted_lost_reset);
		refused += RD(v->posted_refused);
	}
	for (unsigned r = 1; r < HTOE_DROP__COUNT; r++)
		if (drops[r]) {
			fprintf(f, "%s%s %" PRIu64, any ? ", " : "          refused: ",
				htoe_drop_name((int)r), drops[r]);
			any = true;
		}
	if (npto || lost || refused) {
		fprintf(f, "%snp timeouts %" PRIu64 ", posted lost in resets %" PRIu64
			", posted refused %" PRIu64, any ? "; " : "          ", npto, lost, refused);
		any = true;
	}
	/* requests from peers the node's memory refused (read after the
	 * workers stopped): a posted write there is acked and dropped */
	if (tg->master_abort_range || tg->posted_dropped) {
		fprintf(f, "%soutside the exported memory %" PRIu64 ", posted writes dropped %"
			PRIu64, any ? "; " : "          refused: ", tg->master_abort_range,
			tg->posted_dropped);
		any = true;
	}
	if (any)
		fprintf(f, "; credit-starved %.3f ms\n", (double)starved / 1e6);
}

int br_print_summary(struct br_app *a, FILE *f)
{
	struct br_totals all;
	double el = elapsed_s(a);
	bool pass = !a->incomplete;
	uint64_t image_bad = 0;
	unsigned images = 0, cross_bad = 0;

	br_totals(a, -1, &all);
	fprintf(f, "htoe-bridge: summary after %.3f s%s\n", (double)a->run_ns / 1e9,
		a->incomplete ? " (stopped before quiescence)" : "");
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];
		const struct br_wl_cfg *w = &n->cfg->wl;
		struct br_totals t;
		bool checked;

		br_totals(a, n->id, &t);
		if (w->enabled) {
			uint64_t bad = image_check(a, n, &checked);
			bool done = n->wl && ht_wl_done(n->wl);

			fprintf(f,
				"  node %u: workload on node %u [%#" PRIx64 ", +%#" PRIx64 "): ops %" PRIu64
				" (%" PRIu64 " read-back), completions %" PRIu64 ", verified %" PRIu64
				", mismatches %" PRIu64 ", errors %" PRIu64,
				n->id, w->target, w->base, w->size, t.ops, t.sweep, t.completed,
				t.verified, t.mismatches, t.errors);
			/* losses the bridge reported: tainted, not mismatches */
			if (t.lost_reset || t.lost_restart || t.lost_poisoned)
				fprintf(f, ", lost by reset %" PRIu64 ", lost by restart %" PRIu64
					", poisoned by a loss %" PRIu64, t.lost_reset, t.lost_restart,
					t.lost_poisoned);
			if (t.peers_gone)
				fprintf(f, ", peers gone %" PRIu64, t.peers_gone);
			fprintf(f, "%s", done ? ", done" :
				(n->finishing ? ", stopped" : ", NOT done"));
			if (checked) {
				fprintf(f, ", memory image %s", bad ? "DIFFERS" : "identical");
				images++;
				image_bad += bad;
			}
			fputc('\n', f);
			if (t.mismatches || t.errors || t.unexpected || bad)
				pass = false;
			if (!done && !n->finishing)
				pass = false;
		} else {
			fprintf(f, "  node %u: no workload (serves its memory)\n", n->id);
		}
		fprintf(f,
			"          frames tx %" PRIu64 " rx %" PRIu64 " (refused by the bridge %" PRIu64
			"), retransmits %" PRIu64 ", naks %" PRIu64 ", timeouts %" PRIu64
			", resets %" PRIu64 ", poisoned %" PRIu64 ", late responses %" PRIu64
			", unexpected responses %" PRIu64 ", peer restarts %" PRIu64 "\n",
			t.tx_frames, t.rx_frames, t.rx_bad, t.retransmits, t.naks, t.timeouts,
			t.resets, t.poisoned, t.late_responses, t.unexpected_responses,
			t.peer_restarts);
		print_drops(f, n, t.drops);
		if (print_peercheck(f, n) + print_changed(f, n)) {
			pass = false;
			cross_bad++;
		}
		fprintf(f, "          eth tx refused %" PRIu64 ", mbuf alloc failures %" PRIu64
			", longest poll %.3f ms, longest gap between polls %.3f ms",
			t.tx_refused, t.alloc_fail, (double)RD(n->pub.c.poll_max_ns) / 1e6,
			(double)RD(n->pub.c.gap_max_ns) / 1e6);
		if (t.imp_dropped || t.imp_dup || t.imp_corrupt || t.imp_reorder)
			fprintf(f, ", impairment: dropped %" PRIu64 " duplicated %" PRIu64
				" corrupted %" PRIu64 " reordered %" PRIu64,
				t.imp_dropped, t.imp_dup, t.imp_corrupt, t.imp_reorder);
		if (a->capture || t.cap_frames)
			fprintf(f, ", captured %" PRIu64 " (lost %" PRIu64 ")", t.cap_frames,
				t.cap_dropped);
		fputc('\n', f);
		br_macsec_print(f, n->drv.ms);
	}
	fprintf(f,
		"  total: %" PRIu64 " ops in %.3f s = %.3f Mops/s; %" PRIu64 " frames (%.3f Mframes/s)"
		", retransmits %" PRIu64 ", resets %" PRIu64 ", poisoned %" PRIu64 "\n",
		all.ops, el, el > 0 ? (double)all.ops / el / 1e6 : 0, all.tx_frames,
		el > 0 ? (double)all.tx_frames / el / 1e6 : 0, all.retransmits, all.resets,
		all.poisoned);
	if (!all.wl_nodes && cross_bad)
		fprintf(f, "htoe-bridge: RESULT: FAIL: no workload ran; memory a peer confirmed "
			"changed afterwards (the ranges above)%s\n",
			a->incomplete ? ", stopped before quiescence" : "");
	else if (!all.wl_nodes)
		fprintf(f, "htoe-bridge: RESULT: %s: no workload ran\n",
			pass ? "PASS" : "FAIL (stopped before quiescence)");
	else if (pass)
		fprintf(f, "htoe-bridge: RESULT: PASS: all %" PRIu64 " completions verified, "
			"0 mismatches, 0 errors%s", all.completed - all.lost_poisoned,
			images ? ", memory images identical" : "");
	if (pass && all.wl_nodes && all.lost_poisoned)
		fprintf(f, "; %" PRIu64 " poisoned by a reported loss, not verified",
			all.lost_poisoned);
	for (unsigned i = 0; pass && all.wl_nodes && i < a->n_nodes; i++)
		for (unsigned k = 0; k < a->nodes[i].n_vl && k < HTOE_MAX_PEERS; k++)
			if (a->nodes[i].gone_lost >> k & 1)
				fprintf(f, "; node %u: peer node %u gone, its memory lost",
					a->nodes[i].id, a->nodes[i].vl_node[k]);
	if (pass && all.wl_nodes)
		fputc('\n', f);
	else if (all.wl_nodes)
		fprintf(f, "htoe-bridge: RESULT: FAIL: %" PRIu64 " mismatches, %" PRIu64
			" errors, %" PRIu64 " unexpected, %" PRIu64 " bytes of memory differ%s%s\n",
			all.mismatches, all.errors, all.unexpected, image_bad,
			cross_bad ? ", memory differs across processes (the ranges above)" : "",
			a->incomplete ? ", stopped before quiescence" : "");
	if (!pass && all.resets)
		fprintf(f, "htoe-bridge: note: %" PRIu64 " VL resets: a reset poisons the requests in "
			"flight and may lose posted writes, so later reads can differ from the shadow; "
			"resets come from peers silent for retry_limit timeouts or stall_timeout "
			"(docs/config.md)\n", all.resets);
	fflush(f);
	return pass ? 0 : 1;
}

/* ,"drops":{"runt":N,...}: frames refused by reason (every reason, also 0) */
static void json_drops(FILE *f, const uint64_t *drops)
{
	for (unsigned r = 1; r < HTOE_DROP__COUNT; r++)
		fprintf(f, "%s\"%s\":%" PRIu64, r == 1 ? ",\"drops\":{" : ",",
			htoe_drop_name((int)r), drops[r]);
	fputc('}', f);
}

/* A node's drops, and CRC32Cs of its exported memory and of its workload's
 * shadow: across processes, the shadow of node A's workload on node B must
 * equal B's memory (in one process image_check() compares them bytewise). */
static void json_node_extra(struct br_app *a, FILE *f, const struct br_node *n)
{
	struct br_totals t;

	br_totals(a, n->id, &t);
	json_drops(f, t.drops);
	fprintf(f, ",\"mem_size\":%" PRIu64 ",\"mem_crc32c\":%" PRIu32, n->cfg->mem_size,
		n->mem ? htoe_crc32c(n->mem, n->cfg->mem_size) : 0);
	fprintf(f, ",\"master_abort_range\":%" PRIu64 ",\"posted_dropped\":%" PRIu64,
		n->hn.tgt.st.master_abort_range, n->hn.tgt.st.posted_dropped);
	if (n->wl && n->shadow)
		fprintf(f, ",\"target\":%u,\"wl_offset\":%" PRIu64 ",\"wl_size\":%" PRIu64
			",\"shadow_crc32c\":%" PRIu32, n->cfg->wl.target, n->cfg->wl.fill_offset,
			n->cfg->wl.size, htoe_crc32c(n->shadow, n->cfg->wl.size));
	/* the cross-check (node/peercheck.h): asked of the target's node, and
	 * answered to peers (changed: confirmed ranges that changed since) */
	if (n->wl) {
		const struct pc_asker *k = &n->pc.ask;
		uint64_t bytes = 0;

		for (unsigned i = 0; i < k->n_run; i++)
			bytes += k->run[i].len;
		fprintf(f, ",\"peer_check\":{\"peer\":%u,\"state\":\"%s\",\"ranges\":%u"
			",\"answered\":%u,\"differ\":%u,\"bytes\":%" PRIu64 ",\"excluded\":%" PRIu64
			",\"uncompared\":%" PRIu64 ",\"requests\":%" PRIu64 ",\"final\":\"%s\""
			",\"changed\":%u}", k->peer,
			pc_state_name[k->state], k->n_run, k->cur, k->differ, bytes, k->excluded, k->uncompared,
			k->requests, pc_final_name[k->final], k->changed);
	}
	{
		const struct pc_answerer *s = &n->pc.ans;
		unsigned changed = 0;
		uint32_t now;

		for (unsigned i = 0; i < s->n; i++)
			changed += pc_changed(n, &s->rec[i], &now);
		fprintf(f, ",\"digests\":{\"answered\":%" PRIu64 ",\"refused\":%" PRIu64
			",\"bad\":%" PRIu64 ",\"stale\":%" PRIu64 ",\"ranges\":%u,\"changed\":%u}",
			s->answered, s->refused, s->bad, s->stale, s->n, changed);
	}
	/* per VL: the adaptive RTO's estimators (0: no RTT sample yet), the time
	 * it waited for credits, the posted HT packets received from the peer */
	fputs(",\"vl\":[", f);
	for (unsigned k = 0; k < n->n_vl; k++) {
		const struct htoe_vl_stats *v = &n->pub.vl[k];

		fprintf(f, "%s{\"peer\":%u,\"retransmits\":%" PRIu64 ",\"timeouts\":%" PRIu64
			",\"tail_probes\":%" PRIu64 ",\"srtt_ns\":%" PRIu64 ",\"rttvar_ns\":%" PRIu64 ",\"rto_ns\":%" PRIu64
			",\"resets\":%" PRIu64 ",\"poisoned\":%" PRIu64 ",\"late_responses\":%" PRIu64
			",\"peer_restarts\":%" PRIu64 ",\"peer_restart_ns\":%" PRIu64
			",\"up_ns\":%" PRIu64 ",\"restart_up_ns\":%" PRIu64
			",\"credit_starved_ns\":%" PRIu64 ",\"rx_pkts_posted\":%" PRIu64
			",\"forced_releases\":%" PRIu64 ",\"ctrl_refused\":%" PRIu64 "}",
			k ? "," : "", n->vl_node[k], RD(v->retransmits), RD(v->timeouts),
			RD(v->tail_probes),
			RD(v->srtt_ns), RD(v->rttvar_ns), RD(v->rto_ns), RD(v->resets),
			RD(v->poisoned), RD(v->late_responses), RD(v->peer_restarts),
			RD(v->peer_restart_ns), RD(v->up_ns), RD(v->restart_up_ns),
			RD(v->credit_starved_ns), RD(v->rx_pkts[HT_VC_P]), RD(v->forced_releases),
			RD(v->ctrl_refused));
	}
	fputc(']', f);
}

void br_print_json(struct br_app *a, FILE *f)
{
	struct br_totals t;
	double el = elapsed_s(a);
	bool first = true;           /* the "macsec" object is still to open */

	br_totals(a, -1, &t);
	fprintf(f,
		"{\"nodes\":%u,\"workloads\":%u,\"ops\":%" PRIu64 ",\"sweep\":%" PRIu64
		",\"completions\":%" PRIu64 ",\"verified\":%" PRIu64 ",\"mismatches\":%" PRIu64
		",\"errors\":%" PRIu64 ",\"lost_reset\":%" PRIu64 ",\"lost_restart\":%" PRIu64
		",\"lost_poisoned\":%" PRIu64 ",\"peers_gone\":%" PRIu64
		",\"unexpected\":%" PRIu64 ",\"frames_tx\":%" PRIu64
		",\"frames_rx\":%" PRIu64 ",\"bytes_tx\":%" PRIu64 ",\"retransmits\":%" PRIu64
		",\"naks\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"resets\":%" PRIu64
		",\"poisoned\":%" PRIu64 ",\"late_responses\":%" PRIu64
		",\"unexpected_responses\":%" PRIu64 ",\"peer_restarts\":%" PRIu64
		",\"tx_refused\":%" PRIu64 ",\"alloc_fail\":%" PRIu64
		",\"impair_dropped\":%" PRIu64 ",\"impair_reordered\":%" PRIu64
		",\"impair_duplicated\":%" PRIu64 ",\"impair_corrupted\":%" PRIu64
		",\"captured\":%" PRIu64 ",\"capture_lost\":%" PRIu64
		",\"poll_max_ns\":%" PRIu64 ",\"gap_max_ns\":%" PRIu64
		",\"elapsed_s\":%.6f,\"mops\":%.6f,\"incomplete\":%s",
		t.nodes, t.wl_nodes, t.ops, t.sweep, t.completed, t.verified, t.mismatches, t.errors,
		t.lost_reset, t.lost_restart, t.lost_poisoned, t.peers_gone,
		t.unexpected, t.tx_frames, t.rx_frames, t.tx_bytes, t.retransmits, t.naks,
		t.timeouts, t.resets, t.poisoned, t.late_responses, t.unexpected_responses,
		t.peer_restarts, t.tx_refused, t.alloc_fail, t.imp_dropped,
		t.imp_reorder, t.imp_dup, t.imp_corrupt, t.cap_frames, t.cap_dropped,
		t.poll_max_ns, t.gap_max_ns, el,
		el > 0 ? (double)t.ops / el / 1e6 : 0, a->incomplete ? "true" : "false");
	/* per node, read after the lcores stopped (htoe-bench uses these) */
	fprintf(f, ",\"run_s\":%.6f,\"per_node\":[", (double)a->run_ns / 1e9);
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];

		fprintf(f, "%s{\"id\":%u,\"ops\":%" PRIu64 ",\"frames_tx\":%" PRIu64
			",\"bytes_tx\":%" PRIu64 ",\"frames_rx\":%" PRIu64 ",\"bytes_rx\":%" PRIu64
			",\"to_target\":%" PRIu64 ",\"wl_start_s\":%.6f,\"wl_finish_s\":%.6f"
			",\"read_rtt\":", i ? "," : "", n->id,
			n->wl ? ht_wl_stats(n->wl)->issued_total : 0, n->c.tx_frames, n->c.tx_bytes,
			n->c.rx_frames, n->c.rx_bytes, n->hn.st.to_target,
			(double)n->wl_start_ns / 1e9, (double)n->c.wl_finish_ns / 1e9);
		lat_json(&n->hn.rd_lat, f);
		json_node_extra(a, f, n);
		fputc('}', f);
	}
	fputc(']', f);
	json_drops(f, t.drops);
	/* per polling lcore: busy share, CPU share (1 - asleep), sleeps */
	fprintf(f, ",\"poll\":\"%s\",\"lcores\":[", br_poll_mode_name(a->poll));
	for (unsigned l = 0, k = 0; l < RTE_MAX_LCORE; l++) {
		const struct br_lcore *lc = &a->lcores[l];
		double tot = (double)lc->idle.total_tsc;

		if (!lc->n_nodes)
			continue;
		fprintf(f, "%s{\"lcore\":%u,\"busy\":%.4f,\"cpu\":%.4f,\"sleeps\":%" PRIu64
			",\"rx_intr_ports\":%u,\"rx_intr_wakeups\":%" PRIu64 "}", k++ ? "," : "", l,
			tot > 0 ? (double)lc->idle.busy_tsc / tot : 0,
			tot > 0 ? 1 - (double)lc->idle.sleep_tsc / tot : 0, lc->idle.sleeps,
			lc->idle.n_intr, lc->idle.intr_wakeups);
	}
	fputc(']', f);
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];

		first = br_macsec_json(f, n->drv.ms, br_rd(&n->pub.hs.local_in),
				       br_rd(&n->pub.hs.local_out), first);
	}
	if (!first)
		fputc('}', f);
	fputs("}\n", f);
	fflush(f);
}
