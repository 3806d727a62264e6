/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge's Prometheus families. The HTTP thread reads what the
 * telemetry commands read: the per-node snapshots the lcores publish every
 * millisecond (relaxed atomic loads), summed per node by br_totals(), and
 * the per-VL snapshot through br_vl_fields. Labels: node="ID" (a node of
 * this process), peer="ID" (the other end of a VL), reason, vc.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "htoe_version.h"
#include "metrics.h"

#define VF(k, p, h, f, n, g) \
	{ .key = k, .prom = p, .help = h, .off = offsetof(struct htoe_vl_stats, f), .ns = n, .gauge = g }
const struct htoe_prom_col br_vl_fields[] = {
	VF("tx_frames", "htoe_vl_tx_frames_total", "HToE frames sent on the VL", tx_frames, 0, 0),
	VF("rx_frames", "htoe_vl_rx_frames_total", "HToE frames received on the VL and accepted",
	   rx_frames, 0, 0),
	VF("tx_bytes", "htoe_vl_tx_bytes_total", "bytes of the frames sent on the VL", tx_bytes,
	   0, 0),
	VF("rx_bytes", "htoe_vl_rx_bytes_total", "bytes of the frames received on the VL",
	   rx_bytes, 0, 0),
	VF("retransmits", "htoe_vl_retransmissions_total", "DATA frames sent again (retry)",
	   retransmits, 0, 0),
	VF("naks_sent", "htoe_vl_naks_sent_total", "NAKs sent (a gap in the sequence)", naks_sent,
	   0, 0),
	VF("naks_rcvd", "htoe_vl_naks_received_total", "NAKs received", naks_rcvd, 0, 0),
	VF("timeouts", "htoe_vl_retransmission_timeouts_total",
	   "retransmission timer expiries", timeouts, 0, 0),
	VF("acks_sent", "htoe_vl_acks_sent_total", "standalone ACK frames sent", acks_sent, 0, 0),
	VF("credit_starved_ns", "htoe_vl_credit_starved_seconds_total",
	   "time the VL had packets to send and no credit for them", credit_starved_ns, 1, 0),
	VF("credit_probes", "htoe_vl_credit_probes_total",
	   "CREDIT_REQ probes sent while starved of credit", credit_probes, 0, 0),
	VF("resets", "htoe_vl_resets_total", "VL resets (selective reset)", resets, 0, 0),
	VF("poisoned", "htoe_vl_poisoned_total",
	   "requests answered with an error response (poisoned) after a reset", poisoned, 0, 0),
	VF("posted_refused", "htoe_vl_posted_refused_total",
	   "posted writes refused while the VL was down", posted_refused, 0, 0),
	VF("posted_lost_reset", "htoe_vl_posted_lost_reset_total",
	   "posted writes in flight lost to a reset", posted_lost_reset, 0, 0),
	VF("late_responses", "htoe_vl_late_responses_total",
	   "responses after their request timed out or was reset", late_responses, 0, 0),
	VF("np_timeouts", "htoe_vl_np_timeouts_total",
	   "local requests poisoned after np_timeout", np_timeouts, 0, 0),
	VF("peer_restarts", "htoe_vl_peer_restarts_total",
	   "new incarnations of the peer seen (each a cold reset)", peer_restarts, 0, 0),
	VF("peer_restart_ns", NULL, NULL, peer_restart_ns, 1, 1),
	VF("up_ns", NULL, NULL, up_ns, 1, 1),
	VF("restart_up_ns", NULL, NULL, restart_up_ns, 1, 1),
	VF("srtt_ns", "htoe_vl_rtt_seconds", "smoothed round-trip time (0: no sample yet)",
	   srtt_ns, 1, 1),
	VF("rttvar_ns", "htoe_vl_rtt_variation_seconds", "variation of the round-trip time",
	   rttvar_ns, 1, 1),
	VF("rto_ns", "htoe_vl_rto_seconds", "current retransmission timeout", rto_ns, 1, 1),
	VF("forced_releases", "htoe_vl_forced_releases_total",
	   "receive buffers a VL reset found counted as held by no packet and gave back (0 "
	   "unless the accounting is at fault)", forced_releases, 0, 0),
	VF("ctrl_refused", "htoe_vl_ctrl_refused_total",
	   "control messages (leases, digests) refused because the VL's CTRL queue was full",
	   ctrl_refused, 0, 0),
};
#undef VF
const unsigned br_n_vl_fields = sizeof(br_vl_fields) / sizeof(br_vl_fields[0]);

/* The per-VL families after br_vl_fields: packets by virtual channel, drops by reason */
static const char *vc_name(unsigned k)
{
	static const char *const vc[HT_VC_COUNT] = { "P", "NP", "R" };

	return vc[k];
}

static const char *drop_name(unsigned k)
{
	return htoe_drop_name((int)k + 1);
}

#define BY(p, h, off, n, label, fn) { NULL, p, h, off, 0, 0, 0, n, label, fn }
static const struct htoe_prom_col vl_up[] = {
	{ NULL, "htoe_vl_up", "1 while the VL is up", 0, 0, 1, 0, 0, NULL, NULL },
};
static const struct htoe_prom_col vl_by[] = {
	BY("htoe_vl_tx_packets_total", "HT packets sent on the VL, by virtual channel",
	   offsetof(struct htoe_vl_stats, tx_pkts), HT_VC_COUNT, "vc", vc_name),
	BY("htoe_vl_rx_packets_total", "HT packets received on the VL, by virtual channel",
	   offsetof(struct htoe_vl_stats, rx_pkts), HT_VC_COUNT, "vc", vc_name),
	BY("htoe_vl_drops_total", "frames of the VL refused, by reason",
	   offsetof(struct htoe_vl_stats, drops[1]), HTOE_DROP__COUNT - 1, "reason", drop_name),
};

/* Per node: sums of br_totals() */
struct node_row {
	uint64_t done;
	struct br_totals t;
};
#define NF(p, h, f) { NULL, p, h, offsetof(struct node_row, t.f), 0, 0, 0, 0, NULL, NULL }
static const struct htoe_prom_col node_fields[] = {
	{ NULL, "htoe_node_workload_done", "1 when the node's workload is done and its bridge "
	  "quiescent", offsetof(struct node_row, done), 0, 1, 0, 0, NULL, NULL },
	NF("htoe_node_tx_frames_total", "frames handed to the port", tx_frames),
	NF("htoe_node_rx_frames_total", "frames received from the port", rx_frames),
	NF("htoe_node_tx_bytes_total", "bytes handed to the port", tx_bytes),
	NF("htoe_node_rx_bytes_total", "bytes received from the port", rx_bytes),
	NF("htoe_node_rx_refused_frames_total", "received frames refused by the bridge (any "
	   "reason: htoe_node_drops_total)", rx_bad),
	NF("htoe_node_eth_tx_refused_frames_total", "frames the port did not take (lost, "
	   "retransmitted)", tx_refused),
	NF("htoe_node_mbuf_alloc_failures_total", "mbuf allocation failures", alloc_fail),
	NF("htoe_node_retransmissions_total", "DATA frames sent again, all VLs", retransmits),
	NF("htoe_node_retransmission_timeouts_total", "retransmission timer expiries, all VLs",
	   timeouts),
	NF("htoe_node_resets_total", "VL resets, all VLs", resets),
	NF("htoe_node_poisoned_total", "requests answered with an error response, all VLs",
	   poisoned),
	NF("htoe_node_np_timeouts_total", "local requests poisoned after np_timeout", np_timeouts),
	NF("htoe_node_peer_restarts_total", "new incarnations of peers seen", peer_restarts),
	NF("htoe_node_local_in_total", "HT packets from the local side", local_in),
	NF("htoe_node_local_out_total", "HT packets to the local side", local_out),
	NF("htoe_node_master_aborts_total", "local requests to unmapped addresses", master_aborts),
	NF("htoe_node_workload_ops_total", "workload operations issued", ops),
	NF("htoe_node_workload_completions_total", "workload completions", completed),
	NF("htoe_node_workload_verified_total", "workload completions verified", verified),
	NF("htoe_node_workload_mismatches_total", "workload results that differ from the shadow",
	   mismatches),
	NF("htoe_node_workload_errors_total", "workload error responses", errors),
	NF("htoe_node_impair_dropped_total", "frames dropped by the impairment stage",
	   imp_dropped),
	NF("htoe_node_impair_duplicated_total", "frames duplicated by the impairment stage",
	   imp_dup),
	NF("htoe_node_impair_corrupted_total", "frames corrupted by the impairment stage",
	   imp_corrupt),
	NF("htoe_node_impair_reordered_total", "frames reordered by the impairment stage",
	   imp_reorder),
	BY("htoe_node_drops_total", "received frames refused, by reason (the node's and its VLs')",
	   offsetof(struct node_row, t.drops[1]), HTOE_DROP__COUNT - 1, "reason", drop_name),
};
#undef NF
#undef BY

static struct htoe_metrics *server;
static int ready;

void br_metrics_render(struct htoe_prom *p, void *arg)
{
	struct br_app *a = arg;
	struct node_row t[BR_MAX_NODES];
	struct htoe_prom_row rows[BR_MAX_NODES];
	char lab[BR_MAX_NODES][16];
	struct br_metrics_vl *vls;
	unsigned nn, nvl = 0;

	br_metrics_build_info(p, br_prog());
	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		return;
	nn = a->n_nodes < BR_MAX_NODES ? a->n_nodes : BR_MAX_NODES;
	for (unsigned i = 0; i < nn; i++) {
		br_totals(a, a->nodes[i].id, &t[i].t);
		t[i].done = t[i].t.done_nodes;
		snprintf(lab[i], sizeof(lab[i]), "node=\"%u\"", a->nodes[i].id);
		rows[i] = (struct htoe_prom_row){ lab[i], &t[i], 0 };
		nvl += a->nodes[i].n_vl;
	}
	htoe_prom_table(p, node_fields, RTE_DIM(node_fields), rows, nn);

	vls = malloc(sizeof(*vls) * (nvl ? nvl : 1));
	if (!vls) {
		p->oom = true;
		return;
	}
	nvl = 0;
	for (unsigned i = 0; i < nn; i++)
		for (unsigned k = 0; k < a->nodes[i].n_vl; k++)
			vls[nvl++] = (struct br_metrics_vl){ a->nodes[i].id, a->nodes[i].vl_node[k],
							     &a->nodes[i].pub.vl[k],
							     &a->nodes[i].pub.vl_up[k] };
	br_metrics_vls(p, vls, nvl);
	free(vls);
}

void br_metrics_vls(struct htoe_prom *p, const struct br_metrics_vl *v, unsigned n)
{
	struct htoe_prom_row *rows = malloc(sizeof(*rows) * 2 * (n ? n : 1));
	char (*lab)[32] = malloc(sizeof(*lab) * (n ? n : 1));

	if (!rows || !lab) {
		p->oom = true;
		goto out;
	}
	/* rows[0, n): the up flags; rows[n, 2n): the counters */
	for (unsigned i = 0; i < n; i++) {
		snprintf(lab[i], sizeof(lab[i]), "node=\"%u\",peer=\"%u\"", v[i].node, v[i].peer);
		rows[i] = (struct htoe_prom_row){ lab[i], v[i].up, 0 };
		rows[n + i] = (struct htoe_prom_row){ lab[i], v[i].s, 0 };
	}
	htoe_prom_table(p, vl_up, RTE_DIM(vl_up), rows, n);
	htoe_prom_table(p, br_vl_fields, br_n_vl_fields, rows + n, n);
	htoe_prom_table(p, vl_by, RTE_DIM(vl_by), rows + n, n);
out:
	free(rows);
	free(lab);
}

void br_metrics_build_info(struct htoe_prom *p, const char *prog)
{
	char lab[96];

	htoe_prom_family(p, "htoe_build_info", "gauge", "the program and its version");
	snprintf(lab, sizeof(lab), "program=\"%s\",version=\"%s\"", prog, HTOE_PROJECT_VERSION);
	htoe_prom_u64(p, "htoe_build_info", lab, 1);
}

int br_metrics_start(struct br_app *a, char *err, size_t errlen)
{
	if (!a->cfg.metrics[0])
		return 0;
	server = htoe_metrics_start(a->cfg.metrics, a->cfg.metrics_where, br_metrics_render, a,
				    err, errlen);
	return server ? 0 : -1;
}

void br_metrics_ready(struct br_app *a)
{
	(void)a;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}

void br_metrics_stop(void)
{
	__atomic_store_n(&ready, 0, __ATOMIC_RELEASE);
	htoe_metrics_stop(server);
	server = NULL;
}
