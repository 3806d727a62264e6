/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: MACsec glue (see macsec.h): from a node's configuration
 * (macsec_cfg.c), the per-node SecY with its TX SC and one RX SC per peer,
 * in-place protection and validation of mbufs, the counters (published for the readers: the
 * summary and JSON here, telemetry.c's /htoe/macsec) and the PN exhaustion
 * event line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "htoe/htoe_wire.h"
#include "macsec.h"
#include "snapshot.h"

#define RD(x) htoe_snap_get(&(x))

_Static_assert(RTE_PKTMBUF_HEADROOM >= HTOE_MACSEC_SECTAG_SCI, "SecTAG goes into the headroom");

/* ------------------------------------------------------------ runtime */

struct br_macsec {
	struct htoe_macsec *m;           /* the SecY: the RX SCs (and the TX SC, shared keys) */
	const struct br_macsec_cfg *cfg;
	uint64_t peer_sci[BR_MACSEC_MAX_PEERS];
	/* TX SecYs: shared keys: one, m; pairwise: one per peer (TX SC only) */
	unsigned n_tx;
	struct htoe_macsec *tx[BR_MACSEC_MAX_PEERS];
	uint64_t since[BR_MACSEC_MAX_PEERS]; /* frames on the encoding SA since it became one */
	uint8_t *tx_of_node;             /* pairwise: node id -> TX SecY index + 1 */
	struct br_macsec_pub c;          /* the owner's counters (events, rekeys, failures) */
	enum htoe_macsec_backend backend;
	struct br_macsec_pub pub;
	struct br_macsec_peer_pub peers[BR_MACSEC_MAX_PEERS];
	uint16_t id;                     /* the node's (messages) */
	const char *prog;
};

static void sa_cfg(const struct br_macsec_cfg *c, const uint8_t *key, uint64_t pn, uint32_t ssci,
		   struct htoe_macsec_sa_cfg *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->key = key;
	sa->key_len = c->key_len;
	sa->pn = pn;
	sa->ssci = ssci;
	memcpy(sa->salt, c->salt, sizeof(sa->salt));
	sa->backend = c->backend;
}

/* The TX SAs of one TX SecY: keys[an] for every configured AN; the first
 * becomes the encoding SA, the others follow in AN order (the library
 * changes over to the next one on PN exhaustion). */
static int tx_sas(const struct br_macsec_cfg *c, struct htoe_macsec *m,
		  const uint8_t (*keys)[HTOE_MACSEC_KEY_MAX], const char *to, char *err,
		  size_t errlen)
{
	struct htoe_macsec_sa_cfg sa;

	for (unsigned k = 0; k < HTOE_MACSEC_AN_COUNT; k++) {
		unsigned an = (c->an + k) % HTOE_MACSEC_AN_COUNT;
		int e;

		if (!c->has_key[an])
			continue;
		sa_cfg(c, keys[an], k ? 1 : c->pn, c->node_id, &sa);
		e = htoe_macsec_tx_sa_add(m, an, &sa);
		if (e) {
			snprintf(err, errlen, "%s: TX SA on AN %u%s: %s", c->where, an, to,
				 strerror(-e));
			return -1;
		}
	}
	return 0;
}

int br_macsec_setup(struct br_macsec **out, uint16_t id, const char *prog,
		    const struct br_macsec_cfg *c, char *err, size_t errlen)
{
	struct htoe_macsec_cfg mcfg;
	struct htoe_macsec_sa_cfg sa;
	struct htoe_macsec_sa_state st;
	struct br_macsec *ms;
	int e = 0;

	if (!c->enabled)
		return 0;
	ms = calloc(1, sizeof(*ms));
	if (!ms || (c->pairwise && !(ms->tx_of_node = calloc(UINT16_MAX + 1, 1)))) {
		free(ms);
		snprintf(err, errlen, "%s: out of memory", c->where);
		return -1;
	}
	*out = ms;
	ms->id = id;
	ms->prog = prog;
	ms->cfg = c;
	memset(&mcfg, 0, sizeof(mcfg));
	mcfg.cipher = c->cipher;
	mcfg.integrity_only = c->integrity_only;
	mcfg.tx_sci_mode = c->include_sci ? HTOE_MACSEC_TX_SCI_EXPLICIT : HTOE_MACSEC_TX_SCI_ES;
	mcfg.sci = htoe_macsec_sci(c->mac, c->sci_port);
	mcfg.validate = HTOE_MACSEC_VALIDATE_STRICT;
	mcfg.replay_window = c->replay_window;
	mcfg.max_rx_sc = c->n_peers ? c->n_peers : 1;
	/* every installed AN stays valid for receive: rekey_after cycles
	 * through the configured keys, each TX SA keeping its PN */
	mcfg.rx_keep_old_sa = true;
	mcfg.backend = c->backend;
	ms->m = htoe_macsec_new(&mcfg, &e);
	if (!ms->m) {
		snprintf(err, errlen, "%s: cannot create the SecY: %s", c->where, strerror(-e));
		return -1;
	}
	if (!c->pairwise) {
		ms->n_tx = 1;
		ms->tx[0] = ms->m;
		if (tx_sas(c, ms->m, c->key, "", err, errlen))
			return -1;
	}
	/* pairwise: a TX-only SecY per peer, with this node's SAKs to it */
	mcfg.max_rx_sc = 1;
	for (unsigned i = 0; c->pairwise && i < c->n_peers; i++) {
		char to[32];

		snprintf(to, sizeof(to), " to node %u", c->peer_id[i]);
		ms->tx[i] = htoe_macsec_new(&mcfg, &e);
		if (!ms->tx[i]) {
			snprintf(err, errlen, "%s: cannot create the SecY%s: %s", c->where, to,
				 strerror(-e));
			return -1;
		}
		ms->n_tx = i + 1;
		ms->tx_of_node[c->peer_id[i]] = (uint8_t)(i + 1);
		if (tx_sas(c, ms->tx[i], c->pw_tx[i], to, err, errlen))
			return -1;
	}
	/* an RX SC per peer, with the SAKs that peer sends with, bound to the
	 * peer's node id (a valid frame claiming another node is dropped) */
	for (unsigned i = 0; i < c->n_peers; i++) {
		uint64_t sci = htoe_macsec_sci(c->peer_mac[i], c->sci_port);

		ms->peer_sci[i] = sci;
		e = htoe_macsec_rx_sc_add(ms->m, sci);
		if (!e)
			e = htoe_macsec_rx_sc_bind(ms->m, sci, c->peer_id[i]);
		for (unsigned an = 0; !e && an < HTOE_MACSEC_AN_COUNT; an++)
			if (c->has_key[an]) {
				sa_cfg(c, c->pairwise ? c->pw_rx[i][an] : c->key[an], 1,
				       c->peer_id[i], &sa);
				e = htoe_macsec_rx_sa_add(ms->m, sci, an, &sa);
			}
		if (e) {
			snprintf(err, errlen, "%s: RX SC of node %u: %s", c->where, c->peer_id[i],
				 strerror(-e));
			return -1;
		}
	}
	if (ms->n_tx) {
		htoe_macsec_tx_sa_state(ms->tx[0], c->an, &st);
		ms->backend = st.backend;
	} else {
		ms->backend = htoe_macsec_cfg(ms->m)->backend == HTOE_MACSEC_BACKEND_AUTO
			      ? htoe_macsec_backend_auto() : htoe_macsec_cfg(ms->m)->backend;
	}
	/* the SecYs hold their own copies of the keys now: wipe the
	 * configuration's (app-owned, const only in this view) */
	br_macsec_cfg_wipe((struct br_macsec_cfg *)c);
	return 0;
}

void br_macsec_teardown(struct br_macsec *ms)
{
	/* the snapshot stays for the telemetry thread; the keys go */
	if (ms) {
		for (unsigned i = 0; i < ms->n_tx; i++)
			if (ms->tx[i] != ms->m)
				htoe_macsec_free(ms->tx[i]);
		ms->n_tx = 0;
		htoe_macsec_free(ms->m);
		ms->m = NULL;
		free(ms->tx_of_node);
		ms->tx_of_node = NULL;
	}
}

void br_macsec_free(struct br_macsec *ms)
{
	br_macsec_teardown(ms);
	free(ms);
}

static void rekey(struct br_macsec *ms, unsigned t)
{
	struct htoe_macsec *m = ms->tx[t];
	int cur = htoe_macsec_tx_encoding_an(m);

	ms->since[t] = 0;
	for (unsigned k = 1; cur >= 0 && k < HTOE_MACSEC_AN_COUNT; k++) {
		unsigned an = ((unsigned)cur + k) % HTOE_MACSEC_AN_COUNT;
		struct htoe_macsec_sa_state st;

		if (htoe_macsec_tx_sa_state(m, an, &st) || !st.installed || st.exhausted)
			continue;
		if (!htoe_macsec_tx_sa_activate(m, an))
			ms->c.rekeys++;
		return;
	}
}

/* Pairwise: the TX SecY of the frame's destination node (HToE header,
 * after at most one 802.1Q tag; the frame comes from htoe_frame_output).
 * HToE has no multicast or broadcast frames: every frame names one node.
 * -1: no pairwise key for it. */
static int tx_index(const struct br_macsec *ms, const uint8_t *f, size_t len)
{
	size_t o = HTOE_ETH_HLEN - 2;

	if (len >= o + 2 && htoe_get_be16(f + o) == HTOE_TPID_8021Q)
		o += HTOE_VLAN_HLEN;
	if (len < o + 2 + 8 || htoe_get_be16(f + o) != HTOE_ETHERTYPE)
		return -1;
	return (int)ms->tx_of_node[htoe_get_be16(f + o + 2 + 6)] - 1;
}

int br_macsec_tx(struct br_macsec *ms, struct rte_mbuf *m)
{
	size_t off = m->data_off, len = m->data_len;
	enum htoe_macsec_tx_status st;
	int t = ms->cfg->pairwise ? tx_index(ms, rte_pktmbuf_mtod(m, uint8_t *), len) : 0;

	if (t < 0) {
		ms->c.tx_no_pair++;
		ms->c.tx_failed++;
		return -1;
	}
	st = htoe_macsec_protect_inplace(ms->tx[t], m->buf_addr, m->buf_len, &off, &len, NULL);
	if (!htoe_macsec_tx_sent(st)) {
		ms->c.tx_failed++;
		return -1;
	}
	m->data_off = (uint16_t)off;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	if (ms->cfg->rekey_after && ++ms->since[t] >= ms->cfg->rekey_after)
		rekey(ms, (unsigned)t);
	return 0;
}

const uint8_t *br_macsec_rx(struct br_macsec *ms, struct rte_mbuf *m, const uint8_t *d,
			    uint32_t *len, uint8_t *linbuf, size_t linlen)
{
	size_t off = 0, plen = 0;
	enum htoe_macsec_rx_status st;

	if (d != linbuf && rte_mbuf_refcnt_read(m) > 1) {
		/* shared (a duplicate still to be delivered): out of place */
		st = htoe_macsec_validate(ms->m, d, *len, linbuf, linlen, &plen, NULL);
		d = linbuf;
	} else {
		/* a copy in linbuf, or the mbuf's own contiguous data */
		uint8_t *w = d == linbuf ? linbuf : rte_pktmbuf_mtod(m, uint8_t *);

		st = htoe_macsec_validate_inplace(ms->m, w, *len, &off, &plen, NULL);
		d = w;
	}
	/* Strict: only validated frames reach the bridge */
	if (st != HTOE_MACSEC_RX_OK)
		return NULL;
	*len = (uint32_t)plen;
	return d + off;
}

static void events(struct br_macsec *ms, struct htoe_macsec *m, const char *to)
{
	struct htoe_macsec_event ev;
	bool after_exhaustion = false;

	while (htoe_macsec_event_next(m, &ev)) {
		switch (ev.type) {
		case HTOE_MACSEC_EV_TX_PN_THRESHOLD:
			ms->c.pn_threshold++;
			fprintf(stderr, "%s: node %u: MACsec event: TX SA AN %u%s passed PN "
				"%#" PRIx64 ": its PN space is running out (install a new key)\n",
				ms->prog, ms->id, ev.an, to, ev.pn);
			break;
		case HTOE_MACSEC_EV_TX_PN_EXHAUSTED:
			ms->c.pn_exhausted++;
			after_exhaustion = true;
			fprintf(stderr, "%s: node %u: MACsec event: PN EXHAUSTED: TX SA AN "
				"%u%s used its last PN %#" PRIx64 " and is stopped for good (a PN "
				"never wraps)\n", ms->prog, ms->id, ev.an, to, ev.pn);
			break;
		case HTOE_MACSEC_EV_TX_SA_CHANGEOVER:
			ms->c.changeovers++;
			if (after_exhaustion)
				fprintf(stderr, "%s: node %u: MACsec event: TX%s changed "
					"over from AN %u to AN %u (PN %#" PRIx64 ")\n", ms->prog, ms->id, to,
					ev.prev_an, ev.an, ev.pn);
			after_exhaustion = false;
			break;
		case HTOE_MACSEC_EV_RX_PN_EXHAUSTED:
			ms->c.rx_pn_exhausted++;
			fprintf(stderr, "%s: node %u: MACsec event: RX SA AN %u of SCI "
				"%016" PRIx64 " accepted its last PN %#" PRIx64 "\n", ms->prog, ms->id, ev.an,
				ev.sci, ev.pn);
			break;
		default:
			break;
		}
	}
}

void br_macsec_publish(struct br_macsec *ms)
{
	struct br_macsec_pub p;

	if (!ms || !ms->m)
		return;
	events(ms, ms->m, "");
	p = ms->c;
	memset(p.rx_an_ok, 0, sizeof(p.rx_an_ok));
	memset(p.tx_an, 0, sizeof(p.tx_an));
	htoe_macsec_stats(ms->m, &p.s);
	p.events_lost = htoe_macsec_events_lost(ms->m);
	for (unsigned t = 0; t < ms->n_tx; t++) {
		struct htoe_macsec *m = ms->tx[t];

		if (m != ms->m) {  /* pairwise: the TX SecY to peer t */
			struct htoe_macsec_stats ts;
			char to[32];

			snprintf(to, sizeof(to), " to node %u", ms->cfg->peer_id[t]);
			events(ms, m, to);
			htoe_macsec_stats(m, &ts);
			p.s.tx.OutPktsProtected += ts.tx.OutPktsProtected;
			p.s.tx.OutPktsEncrypted += ts.tx.OutPktsEncrypted;
			p.s.tx.OutOctetsProtected += ts.tx.OutOctetsProtected;
			p.s.tx.OutOctetsEncrypted += ts.tx.OutOctetsEncrypted;
			p.s.secy.OutPktsUntagged += ts.secy.OutPktsUntagged;
			p.s.secy.OutPktsTooLong += ts.secy.OutPktsTooLong;
			p.s.secy.OutPktsNoSA += ts.secy.OutPktsNoSA;
			p.s.secy.OutPktsPNExhausted += ts.secy.OutPktsPNExhausted;
			p.events_lost += htoe_macsec_events_lost(m);
		}
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
			struct htoe_macsec_tx_sa_stats ts;

			if (!htoe_macsec_tx_sa_stats(m, an, &ts))
				p.tx_an[an] += ts.OutPktsProtected + ts.OutPktsEncrypted;
		}
	}
	for (unsigned i = 0; i < ms->cfg->n_peers; i++) {
		struct br_macsec_peer_pub pp;

		memset(&pp, 0, sizeof(pp));
		htoe_macsec_rx_sc_stats(ms->m, ms->peer_sci[i], &pp.s);
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
			struct htoe_macsec_rx_sa_stats rs;

			if (!htoe_macsec_rx_sa_stats(ms->m, ms->peer_sci[i], an, &rs))
				pp.an_ok[an] = rs.InPktsOK;
			p.rx_an_ok[an] += pp.an_ok[an];
		}
		htoe_snap_put(&ms->peers[i], &pp, sizeof(pp));
	}
	/* pairwise: the TX SecY to the first peer */
	int an = ms->n_tx ? htoe_macsec_tx_encoding_an(ms->tx[0]) : -1;

	p.encoding_an = an < 0 ? UINT64_MAX : (uint64_t)an;
	htoe_snap_put(&ms->pub, &p, sizeof(p));
}

/* ------------------------------------------------------------ readers */

uint64_t br_macsec_counter(const struct br_macsec_pub *p, size_t i)
{
	return RD(*(const uint64_t *)((const uint8_t *)&p->s + htoe_macsec_counters[i].offset));
}

const char *br_macsec_mode_name(const struct br_macsec_cfg *c)
{
	return c->integrity_only ? "integrity" : "encrypt";
}

const char *br_macsec_keys_name(const struct br_macsec_cfg *c)
{
	return c->pairwise ? "pairwise" : "shared";
}

bool br_macsec_view(const struct br_macsec *ms, struct br_macsec_view *v)
{

	if (!ms)
		return false;
	v->cfg = ms->cfg;
	v->backend = ms->backend;
	v->pub = &ms->pub;
	return true;
}

void br_macsec_print(FILE *f, const struct br_macsec *ms)
{
	const struct br_macsec_pub *p;
	bool any = false;

	if (!ms)
		return;
	p = &ms->pub;
	fprintf(f, "          macsec %s %s, %s keys (%s), TX AN %" PRIu64 ", rekeys %" PRIu64 ":",
		htoe_macsec_cipher_name(ms->cfg->cipher), br_macsec_mode_name(ms->cfg), br_macsec_keys_name(ms->cfg),
		htoe_macsec_backend_name(ms->backend), RD(p->encoding_an), RD(p->rekeys));
	/* the non-zero counters, in 802.1AE order */
	for (size_t i = 0; i < htoe_macsec_counters_count; i++) {
		uint64_t v = br_macsec_counter(p, i);

		if (v && strstr(htoe_macsec_counters[i].name, "Octets") == NULL) {
			fprintf(f, "%s %s %" PRIu64, any ? "," : "", htoe_macsec_counters[i].name, v);
			any = true;
		}
	}
	if (!any)
		fprintf(f, " no frames");
	fprintf(f, "; InPktsOK by AN");
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		fprintf(f, " %" PRIu64, RD(p->rx_an_ok[an]));
	if (RD(p->pn_exhausted) || RD(p->tx_failed))
		fprintf(f, "; PN EXHAUSTED %" PRIu64 " times, %" PRIu64 " frames not sent",
			RD(p->pn_exhausted), RD(p->tx_failed));
	if (RD(p->tx_no_pair))
		fprintf(f, " (%" PRIu64 " to a node without a pairwise key)", RD(p->tx_no_pair));
	fputc('\n', f);
}

static void json_counters(FILE *f, const struct br_macsec_pub *p)
{
	for (size_t i = 0; i < htoe_macsec_counters_count; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", htoe_macsec_counters[i].name,
			br_macsec_counter(p, i));
}

static void json_an(FILE *f, const char *name, const uint64_t *v)
{
	fprintf(f, ",\"%s\":[", name);
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		fprintf(f, "%s%" PRIu64, an ? "," : "", RD(v[an]));
	fputc(']', f);
}

bool br_macsec_json(FILE *f, const struct br_macsec *ms, uint64_t local_in, uint64_t local_out,
		    bool first)
{
	const struct br_macsec_pub *p;

	if (!ms)
		return first;
	p = &ms->pub;
	fprintf(f, "%s\"%u\":{\"cipher\":\"%s\",\"mode\":\"%s\",\"keys\":\"%s\","
		"\"backend\":\"%s\",", first ? ",\"macsec\":{" : ",", ms->id,
		htoe_macsec_cipher_name(ms->cfg->cipher), br_macsec_mode_name(ms->cfg),
		br_macsec_keys_name(ms->cfg), htoe_macsec_backend_name(ms->backend));
	json_counters(f, p);
	json_an(f, "tx_an_protected", p->tx_an);
	json_an(f, "rx_an_ok", p->rx_an_ok);
	fprintf(f, ",\"encoding_an\":%" PRIu64 ",\"rekeys\":%" PRIu64 ",\"pn_exhausted\":%" PRIu64
		",\"tx_failed\":%" PRIu64 ",\"tx_no_pair\":%" PRIu64 ",\"local_in\":%" PRIu64
		",\"local_out\":%" PRIu64 ",\"peers\":{", RD(p->encoding_an), RD(p->rekeys),
		RD(p->pn_exhausted), RD(p->tx_failed), RD(p->tx_no_pair), local_in, local_out);
	for (unsigned k = 0; k < ms->cfg->n_peers; k++) {
		const struct br_macsec_peer_pub *pp = &ms->peers[k];

		fprintf(f, "%s\"%u\":{\"sci\":\"%016" PRIx64 "\",\"InPktsOK\":%" PRIu64
			",\"InPktsNotValid\":%" PRIu64 ",\"InPktsInvalid\":%" PRIu64
			",\"InPktsLate\":%" PRIu64 ",\"InPktsNotUsingSA\":%" PRIu64
			",\"InPktsSCIMismatch\":%" PRIu64, k ? "," : "", ms->cfg->peer_id[k],
			ms->peer_sci[k], RD(pp->s.InPktsOK), RD(pp->s.InPktsNotValid),
			RD(pp->s.InPktsInvalid), RD(pp->s.InPktsLate), RD(pp->s.InPktsNotUsingSA),
			RD(pp->s.InPktsSCIMismatch));
		json_an(f, "an_ok", pp->an_ok);
		fputc('}', f);
	}
	fputs("}}", f);
	return false;
}
