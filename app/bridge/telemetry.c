/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge telemetry commands (DPDK telemetry socket, e.g.
 * `dpdk-telemetry.py -f PREFIX`):
 *   /htoe/stats[,NODE]        totals over the nodes of this process (or one)
 *   /htoe/vl[,NODE[,PEER]]    per-VL counters of a node (default: the first):
 *                             all VLs in brief, or one in full
 *   /htoe/map[,NODE[,FIRST]]  the address map and peer table of a node,
 *                             100 ranges per reply from FIRST
 *   /htoe/macsec[,NODE]       the MACsec counters of a node (macsec.c's
 *                             snapshot, br_macsec_view)
 * Bad parameters (junk, a node not in this process, no VL to that peer) are
 * answered with {"error": "..."} saying which (br_tel_error).
 * The callbacks run in the telemetry thread and read only the published
 * snapshots (relaxed atomic loads; the per-VL counters through br_vl_fields,
 * which the Prometheus metrics read too) and the configuration, which live until
 * the process exits. Replies stay under the 16 KiB limit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "bridge.h"
#include "metrics.h"

#define RD(x) br_rd(&(x))
#define VL_BRIEF_MAX   32u
#define MAP_PAGE       100u

static const char *const phase_names[] = { "run", "finish", "quit" };

/* params "A[,B]" -> up to two numbers; returns how many, -1 on junk */
static int parse_params(const char *params, long v[2])
{
	char *end;
	int n = 0;

	if (!params || !*params)
		return 0;
	while (n < 2) {
		errno = 0;
		v[n] = strtol(params, &end, 0);
		if (errno || end == params || v[n] < 0)
			return -1;
		n++;
		if (!*end)
			return n;
		if (*end != ',')
			return -1;
		params = end + 1;
	}
	return -1;
}

static const struct br_node *find_node(long id)
{
	for (unsigned i = 0; i < br_app->n_nodes; i++)
		if (br_app->nodes[i].id == id)
			return &br_app->nodes[i];
	return NULL;
}

int br_tel_error(struct rte_tel_data *d, const char *fmt, ...)
{
	char msg[RTE_TEL_MAX_STRING_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "error", msg);
	return 0;
}

/* "1, 2": the node ids of this process, for the error messages */
static const char *node_list(char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < br_app->n_nodes && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? ", " : "", br_app->nodes[i].id);
	return buf;
}

/* The node of params[0] (default: the first), or NULL with an error reply. */
static const struct br_node *param_node(struct rte_tel_data *d, const char *params, int np,
					long id, const char *usage)
{
	const struct br_node *n;
	char ids[128];

	if (np < 0) {
		br_tel_error(d, "bad parameters '%s': expected %s (numbers)", params, usage);
		return NULL;
	}
	n = np ? find_node(id) : &br_app->nodes[0];
	if (!n)
		br_tel_error(d, "no node %ld in this process (nodes: %s)", id,
			     node_list(ids, sizeof(ids)));
	return n;
}

static int cb_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct br_app *a = br_app;
	struct br_totals t;
	long v[2] = { 0, 0 };
	int np = parse_params(params, v);

	(void)cmd;
	if (np > 1)
		np = -1;
	if (!param_node(d, params, np, v[0], "[NODE]"))
		return 0;
	br_totals(a, np ? (int)v[0] : -1, &t);
	rte_tel_data_start_dict(d);
#define ADD(k, x) rte_tel_data_add_dict_u64(d, k, x)
	if (np)
		ADD("node", (uint64_t)v[0]);
	rte_tel_data_add_dict_string(d, "phase",
				     phase_names[__atomic_load_n(&a->phase, __ATOMIC_RELAXED) % 3]);
	ADD("nodes", t.nodes);
	ADD("workloads", t.wl_nodes);
	ADD("done", t.done_nodes);
	ADD("ops", t.ops);
	ADD("sweep_ops", t.sweep);
	ADD("completions", t.completed);
	ADD("verified", t.verified);
	ADD("mismatches", t.mismatches);
	ADD("errors", t.errors);
	ADD("unexpected", t.unexpected);
	ADD("frames_tx", t.tx_frames);
	ADD("frames_rx", t.rx_frames);
	ADD("bytes_tx", t.tx_bytes);
	ADD("bytes_rx", t.rx_bytes);
	ADD("frames_rx_refused", t.rx_bad);
	ADD("eth_tx_refused", t.tx_refused);
	ADD("mbuf_alloc_fail", t.alloc_fail);
	ADD("retransmits", t.retransmits);
	ADD("naks_sent", t.naks);
	ADD("timeouts", t.timeouts);
	ADD("resets", t.resets);
	ADD("poisoned", t.poisoned);
	ADD("np_timeouts", t.np_timeouts);
	ADD("local_in", t.local_in);
	ADD("local_out", t.local_out);
	ADD("backpressure", t.backpressure);
	ADD("master_aborts", t.master_aborts);
	ADD("impair_dropped", t.imp_dropped);
	ADD("impair_duplicated", t.imp_dup);
	ADD("impair_corrupted", t.imp_corrupt);
	ADD("impair_reordered", t.imp_reorder);
	ADD("captured", t.cap_frames);
	ADD("capture_lost", t.cap_dropped);
	ADD("poll_max_ns", t.poll_max_ns);
	ADD("gap_max_ns", t.gap_max_ns);
	for (unsigned r = 1; r < HTOE_DROP__COUNT; r++) {
		char key[64];

		snprintf(key, sizeof(key), "drop_%s", htoe_drop_name((int)r));
		ADD(key, t.drops[r]);
	}
#undef ADD
	return 0;
}

static void key_of(const char *name, char *buf, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		buf[i] = (char)((name[i] >= 'a' && name[i] <= 'z') ||
				(name[i] >= 'A' && name[i] <= 'Z') ||
				(name[i] >= '0' && name[i] <= '9') ? name[i] : '_');
	buf[i] = 0;
}

static void vl_full(struct rte_tel_data *d, const struct br_node *n, unsigned k)
{
	const struct htoe_vl_stats *v = &n->pub.vl[k];
	static const char *const vc[HT_VC_COUNT] = { "P", "NP", "R" };
	char key[64];

#define ADD(kname, x) rte_tel_data_add_dict_u64(d, kname, RD(x))
	rte_tel_data_add_dict_u64(d, "node", n->id);
	rte_tel_data_add_dict_u64(d, "peer", n->vl_node[k]);
	ADD("up", n->pub.vl_up[k]);
	ADD("epoch", n->pub.vl_epoch[k]);
	for (unsigned f = 0; f < br_n_vl_fields; f++)
		rte_tel_data_add_dict_u64(d, br_vl_fields[f].key,
					  br_rd((const uint64_t *)((const char *)v +
								   br_vl_fields[f].off)));
	for (unsigned c = 0; c < HT_VC_COUNT; c++) {
		snprintf(key, sizeof(key), "tx_pkts_%s", vc[c]);
		ADD(key, v->tx_pkts[c]);
		snprintf(key, sizeof(key), "rx_pkts_%s", vc[c]);
		ADD(key, v->rx_pkts[c]);
	}
	for (unsigned r = 1; r < HTOE_DROP__COUNT; r++) {
		char name[48];

		key_of(htoe_drop_name((int)r), name, sizeof(name));
		snprintf(key, sizeof(key), "drop_%s", name);
		ADD(key, v->drops[r]);
	}
#undef ADD
}

static int cb_vl(const char *cmd, const char *params, struct rte_tel_data *d)
{
	long v[2] = { 0, 0 };
	int np = parse_params(params, v);
	const struct br_node *n;

	(void)cmd;
	n = param_node(d, params, np, v[0], "[NODE[,PEER]]");
	if (!n)
		return 0;
	rte_tel_data_start_dict(d);
	if (np == 2) {
		for (unsigned k = 0; k < n->n_vl; k++)
			if (n->vl_node[k] == v[1]) {
				vl_full(d, n, k);
				return 0;
			}
		return br_tel_error(d, "node %u has no VL to node %ld", n->id, v[1]);
	}
	rte_tel_data_add_dict_u64(d, "node", n->id);
	rte_tel_data_add_dict_u64(d, "vls", n->n_vl);
	for (unsigned k = 0; k < n->n_vl && k < VL_BRIEF_MAX; k++) {
		const struct htoe_vl_stats *s = &n->pub.vl[k];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char key[32];

		if (!c)
			return -ENOMEM;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "up", RD(n->pub.vl_up[k]));
		rte_tel_data_add_dict_u64(c, "epoch", RD(n->pub.vl_epoch[k]));
		rte_tel_data_add_dict_u64(c, "tx_frames", RD(s->tx_frames));
		rte_tel_data_add_dict_u64(c, "rx_frames", RD(s->rx_frames));
		rte_tel_data_add_dict_u64(c, "retransmits", RD(s->retransmits));
		rte_tel_data_add_dict_u64(c, "naks_sent", RD(s->naks_sent));
		rte_tel_data_add_dict_u64(c, "timeouts", RD(s->timeouts));
		rte_tel_data_add_dict_u64(c, "resets", RD(s->resets));
		rte_tel_data_add_dict_u64(c, "poisoned", RD(s->poisoned));
		rte_tel_data_add_dict_u64(c, "np_timeouts", RD(s->np_timeouts));
		rte_tel_data_add_dict_u64(c, "srtt_ns", RD(s->srtt_ns));
		rte_tel_data_add_dict_u64(c, "rttvar_ns", RD(s->rttvar_ns));
		rte_tel_data_add_dict_u64(c, "rto_ns", RD(s->rto_ns));
		snprintf(key, sizeof(key), "vl_%u", n->vl_node[k]);
		if (rte_tel_data_add_dict_container(d, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
	if (n->n_vl > VL_BRIEF_MAX)
		rte_tel_data_add_dict_string(d, "more", "use /htoe/vl,NODE,PEER for the others");
	return 0;
}

static int cb_map(const char *cmd, const char *params, struct rte_tel_data *d)
{
	long v[2] = { 0, 0 };
	int np = parse_params(params, v);
	const struct br_node *n;
	const struct htoe_map *m;
	struct rte_tel_data *ranges, *peers;
	unsigned first;
	char buf[RTE_TEL_MAX_STRING_LEN];

	(void)cmd;
	n = param_node(d, params, np, v[0], "[NODE[,FIRST]]");
	if (!n)
		return 0;
	m = n->cfg->map;
	first = np == 2 ? (unsigned)v[1] : 0;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "node", n->id);
	rte_tel_data_add_dict_string(d, "mode", m->mask_mode ? "mask" : "ranges");
	if (m->mask_mode) {
		snprintf(buf, sizeof(buf), "%#" PRIx64, m->mask);
		rte_tel_data_add_dict_string(d, "mask", buf);
		rte_tel_data_add_dict_u64(d, "shift", m->shift);
		snprintf(buf, sizeof(buf), "%#" PRIx64, m->mask_remote_base);
		rte_tel_data_add_dict_string(d, "remote_base", buf);
	} else {
		ranges = rte_tel_data_alloc();
		if (!ranges)
			return -ENOMEM;
		rte_tel_data_start_array(ranges, RTE_TEL_STRING_VAL);
		for (unsigned i = first; i < m->nranges && i < first + MAP_PAGE; i++) {
			const struct htoe_map_range *r = &m->ranges[i];

			snprintf(buf, sizeof(buf), "%#" PRIx64 " +%#" PRIx64 " node %u at %#" PRIx64
				 " (%s)", r->base, r->size, r->node, r->remote_base, r->label);
			rte_tel_data_add_array_string(ranges, buf);
		}
		rte_tel_data_add_dict_u64(d, "nranges", m->nranges);
		rte_tel_data_add_dict_u64(d, "first", first);
		if (rte_tel_data_add_dict_container(d, "ranges", ranges, 0) != 0)
			rte_tel_data_free(ranges);
	}
	peers = rte_tel_data_alloc();
	if (!peers)
		return -ENOMEM;
	rte_tel_data_start_array(peers, RTE_TEL_STRING_VAL);
	for (unsigned i = 0; i < m->npeers && i < MAP_PAGE; i++) {
		const struct htoe_map_peer *p = &m->peers[i];
		char mac[24];

		br_format_mac(p->mac, mac, sizeof(mac));
		snprintf(buf, sizeof(buf), "node %u mac %s", p->node, mac);
		rte_tel_data_add_array_string(peers, buf);
	}
	if (rte_tel_data_add_dict_container(d, "peers", peers, 0) != 0)
		rte_tel_data_free(peers);
	return 0;
}

/* /htoe/macsec[,NODE]: the counters of a node (default: the first with
 * MACsec on). */
static int cb_macsec(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct br_node *n = NULL;
	struct br_macsec_view v;
	char *end;
	long id = -1;

	(void)cmd;
	if (params && *params) {
		errno = 0;
		id = strtol(params, &end, 0);
		if (errno || *end || id < 0)
			return br_tel_error(d, "bad parameter '%s': expected [NODE] (a number)",
					    params);
	}
	for (unsigned i = 0; i < br_app->n_nodes && !n; i++)
		if (br_macsec_view(br_app->nodes[i].drv.ms, &v) && (id < 0 || br_app->nodes[i].id == id))
			n = &br_app->nodes[i];
	if (!n)
		return id < 0 ? br_tel_error(d, "no node with MACsec in this process")
			      : br_tel_error(d, "no node %ld with MACsec in this process", id);
	const struct br_macsec_pub *p = v.pub;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "node", n->id);
	rte_tel_data_add_dict_string(d, "cipher", htoe_macsec_cipher_name(v.cfg->cipher));
	rte_tel_data_add_dict_string(d, "mode", br_macsec_mode_name(v.cfg));
	rte_tel_data_add_dict_string(d, "keys", br_macsec_keys_name(v.cfg));
	rte_tel_data_add_dict_string(d, "backend", htoe_macsec_backend_name(v.backend));
	for (size_t i = 0; i < htoe_macsec_counters_count; i++)
		rte_tel_data_add_dict_u64(d, htoe_macsec_counters[i].name, br_macsec_counter(p, i));
	rte_tel_data_add_dict_u64(d, "encoding_an", RD(p->encoding_an));
	rte_tel_data_add_dict_u64(d, "rekeys", RD(p->rekeys));
	rte_tel_data_add_dict_u64(d, "pn_exhausted", RD(p->pn_exhausted));
	rte_tel_data_add_dict_u64(d, "tx_failed", RD(p->tx_failed));
	rte_tel_data_add_dict_u64(d, "tx_no_pair", RD(p->tx_no_pair));
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
		char k[32];

		snprintf(k, sizeof(k), "rx_an%u_ok", an);
		rte_tel_data_add_dict_u64(d, k, RD(p->rx_an_ok[an]));
		snprintf(k, sizeof(k), "tx_an%u_protected", an);
		rte_tel_data_add_dict_u64(d, k, RD(p->tx_an[an]));
	}
	return 0;
}

static int macsec_register(void)
{
	return rte_telemetry_register_cmd("/htoe/macsec", cb_macsec,
					  "MACsec counters of a node (802.1AE names). "
					  "Parameters: [NODE]");
}

int br_telemetry_register(struct br_app *a)
{
	int r;

	(void)a;
	r = rte_telemetry_register_cmd("/htoe/stats", cb_stats,
				       "htoe-bridge totals. Parameters: [node id]");
	if (!r)
		r = rte_telemetry_register_cmd("/htoe/vl", cb_vl,
					       "Per-VL counters. Parameters: [node id[,peer id]]");
	if (!r)
		r = rte_telemetry_register_cmd("/htoe/map", cb_map,
					       "Address map and peers. Parameters: [node id[,first range]]");
	if (!r)
		r = macsec_register();
	return r;
}
