/* SPDX-License-Identifier: BSD-3-Clause
 * Two HT endpoints back to back. See ht_b2b.h.
 */
#include "ht_b2b.h"

#include <errno.h>
#include <string.h>

#include "ht_crc.h"

#define FNV_OFFSET 0xCBF29CE484222325ull
#define FNV_PRIME  0x100000001B3ull

static void hash_bytes(uint64_t *h, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= FNV_PRIME;
	}
}

void ht_b2b_cfg_default(struct ht_b2b_cfg *cfg, unsigned credits, uint64_t base, uint64_t size,
			uint8_t *mem)
{
	memset(cfg, 0, sizeof(*cfg));
	ht_link_cfg_default(&cfg->link_a, credits);
	ht_link_cfg_default(&cfg->link_b, credits);
	cfg->req.n_unitids = 1;
	cfg->req.unitids[0] = 1;
	cfg->tgt.base = base;
	cfg->tgt.size = size;
	cfg->tgt.mem = mem;
}

int ht_b2b_init(struct ht_b2b *s, const struct ht_b2b_cfg *cfg)
{
	if (!s || !cfg)
		return -EINVAL;
	unsigned cmdbufs = 0;
	for (int vc = 0; vc < HT_VC_COUNT; vc++)
		cmdbufs += cfg->link_b.rx_bufs[vc][0];
	if (cmdbufs > HT_B2B_RXQ || cfg->latency > HT_B2B_MAX_LATENCY)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	int rc;
	if ((rc = ht_link_init(&s->a, &cfg->link_a)) < 0 ||
	    (rc = ht_link_init(&s->b, &cfg->link_b)) < 0 ||
	    (rc = ht_req_init(&s->req, &cfg->req)) < 0 ||
	    (rc = ht_tgt_init(&s->tgt, &cfg->tgt)) < 0)
		return rc;
	s->hash = FNV_OFFSET;
	s->latency = cfg->latency;
	return 0;
}

int ht_b2b_submit(struct ht_b2b *s, const struct ht_op *op)
{
	if (!s || !op)
		return -EINVAL;
	if (ht_op_check(op) < 0)
		return -EINVAL;
	enum ht_vc vc = ht_op_vc(op);
	if (!ht_link_txq_space(&s->a, vc))
		return -EAGAIN;
	struct ht_pkt p;
	int rc = ht_req_issue(&s->req, op, &p);
	if (rc < 0)
		return rc;
	rc = ht_link_send(&s->a, &p);
	if (rc < 0) {
		(void)ht_req_unissue(&s->req, &p);
		return rc;
	}
	return 0;
}

/* Link end `from` puts its next packet (if any) on wire `dir` (0: A->B,
 * 1: B->A), with the CRC the sender computes. */
static void send_one(struct ht_b2b *s, int dir, struct ht_link *from)
{
	if (s->wire_n[dir] > s->latency)
		return; /* cannot happen: one packet enters and one leaves per step */
	struct ht_b2b_wire *w = &s->wire[dir][(s->wire_head[dir] + s->wire_n[dir]) %
					       (HT_B2B_MAX_LATENCY + 1)];
	int n = ht_link_poll_tx(from, w->bytes, sizeof(w->bytes));
	if (n <= 0)
		return;
	w->len = (uint8_t)n;
	w->crc = 0;
	(void)ht_crc_of_packet(w->bytes, (size_t)n, &w->crc);
	w->due = s->st.steps + s->latency;
	if (s->corrupt[dir]) {
		s->corrupt[dir]--;
		w->bytes[n - 1] ^= 0x10; /* a bit error on the wire */
	}
	uint8_t d = (uint8_t)dir, c[4] = { (uint8_t)w->crc, (uint8_t)(w->crc >> 8),
					   (uint8_t)(w->crc >> 16), (uint8_t)(w->crc >> 24) };
	hash_bytes(&s->hash, &d, 1);
	hash_bytes(&s->hash, w->bytes, (size_t)n);
	hash_bytes(&s->hash, c, 4);
	s->st.pkts[dir]++;
	s->st.bytes[dir] += (uint64_t)n;
	s->wire_n[dir]++;
}

/*
 * The packet due on wire `dir` arrives at `to`: check its CRC (receiver
 * recomputes; good: ~crc, stomped: crc, else bad -> dropped, retry is not
 * modelled) and hand it to the link. Returns 1 with *pkt when a
 * request/response was delivered, 0 otherwise.
 */
static int deliver_one(struct ht_b2b *s, int dir, struct ht_link *to, struct ht_pkt *pkt)
{
	if (!s->wire_n[dir])
		return 0;
	struct ht_b2b_wire *w = &s->wire[dir][s->wire_head[dir]];
	if (w->due > s->st.steps)
		return 0;
	s->wire_head[dir] = (uint16_t)((s->wire_head[dir] + 1) % (HT_B2B_MAX_LATENCY + 1));
	s->wire_n[dir]--;
	uint32_t rx_tx = 0;
	int rc = ht_crc_of_packet(w->bytes, w->len, &rx_tx);
	if (rc != 0 || rx_tx != w->crc) {
		if (rc == 0 && ~rx_tx == w->crc)
			s->st.crc_stomped++;
		else
			s->st.crc_bad++;
		return 0;
	}
	rc = ht_link_rx(to, w->bytes, w->len, pkt);
	if (rc < 0) {
		s->st.link_errors++;
		return 0;
	}
	return rc;
}

/* Serve node B's received requests in arrival order while their responses fit. */
static void serve_b(struct ht_b2b *s)
{
	while (s->rxq_n) {
		struct ht_pkt *req = &s->rxq[s->rxq_head];
		if (ht_pkt_vc(req) == HT_VC_NP && !ht_link_txq_space(&s->b, HT_VC_R))
			break;
		struct ht_pkt rsp;
		int rc = ht_tgt_handle(&s->tgt, req, &rsp);
		if (rc == 1 && ht_link_send(&s->b, &rsp) < 0)
			s->st.link_errors++;
		(void)ht_link_release_pkt(&s->b, req);
		s->rxq_head = (uint16_t)((s->rxq_head + 1) % HT_B2B_RXQ);
		s->rxq_n--;
	}
}

int ht_b2b_step(struct ht_b2b *s, struct ht_completion *out)
{
	struct ht_pkt pkt;
	int got = 0;
	uint64_t before = s->st.pkts[0] + s->st.pkts[1];

	send_one(s, 0, &s->a);
	if (deliver_one(s, 0, &s->b, &pkt) == 1) {
		if (s->rxq_n < HT_B2B_RXQ) {
			s->rxq[(s->rxq_head + s->rxq_n) % HT_B2B_RXQ] = pkt;
			s->rxq_n++;
		} else {
			(void)ht_link_release_pkt(&s->b, &pkt); /* cannot happen: checked at init */
			s->st.link_errors++;
		}
	}
	serve_b(s);
	send_one(s, 1, &s->b);
	if (deliver_one(s, 1, &s->a, &pkt) == 1) {
		int rc = ht_req_rx(&s->req, &pkt, out);
		if (rc == 1)
			got = 1;
		else
			s->st.unexpected++;
		(void)ht_link_release_pkt(&s->a, &pkt);
	}
	if (s->st.pkts[0] + s->st.pkts[1] == before && !s->wire_n[0] && !s->wire_n[1])
		s->st.idle_steps++;
	s->st.steps++;
	return got;
}

bool ht_b2b_busy(const struct ht_b2b *s)
{
	return s->rxq_n || s->wire_n[0] || s->wire_n[1] || ht_link_tx_pending(&s->a) ||
	       ht_link_tx_pending(&s->b);
}
