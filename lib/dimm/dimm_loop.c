/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_loop: an in-memory remote node as a dimm_link. See dimm_loop.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dimm_loop.h"
#include "htmodel/ht_target.h"

struct dimm_loop {
	struct ht_target tgt;
	bool dead;
	unsigned reset_left;  /* requests still hit by a simulated VL reset */
	uint64_t loss;
	unsigned cap, head, n;
	struct dimm_loop_stats st;
	uint8_t (*q)[HT_MAX_PKT_LEN];
	uint8_t *qlen;
};

struct dimm_loop *dimm_loop_new(const struct dimm_loop_cfg *cfg, char *err, size_t errlen)
{
	struct ht_target_cfg tc;
	struct dimm_loop *l = calloc(1, sizeof(*l));

	if (!l) {
		snprintf(err, errlen, "dimm loop: out of memory");
		return NULL;
	}
	l->cap = cfg->queue ? cfg->queue : 1024;
	l->q = calloc(l->cap, HT_MAX_PKT_LEN);
	l->qlen = calloc(l->cap, 1);
	memset(&tc, 0, sizeof(tc));
	tc.base = cfg->gbase;
	tc.size = cfg->size;
	tc.mem = cfg->mem;
	if (!l->q || !l->qlen || ht_tgt_init(&l->tgt, &tc) != 0) {
		snprintf(err, errlen, "dimm loop: bad memory region or out of memory");
		dimm_loop_free(l);
		return NULL;
	}
	return l;
}

void dimm_loop_free(struct dimm_loop *l)
{
	if (!l)
		return;
	free(l->q);
	free(l->qlen);
	free(l);
}

void dimm_loop_set_dead(struct dimm_loop *l, bool dead)
{
	l->dead = dead;
}

void dimm_loop_reset(struct dimm_loop *l, unsigned n)
{
	l->reset_left = n;
}

int dimm_loop_set_fault(struct dimm_loop *l, unsigned idx, uint64_t gaddr, uint64_t size,
			uint8_t err)
{
	return ht_tgt_set_fault(&l->tgt, idx, gaddr, size, (enum ht_rsp_err)err);
}

const struct dimm_loop_stats *dimm_loop_stats(const struct dimm_loop *l)
{
	return &l->st;
}

/* An error answer of the right kind: a master abort (unreachable node) or
 * a target abort (request poisoned by a VL reset). */
static void error_answer(const struct ht_pkt *q, struct ht_pkt *r, enum ht_rsp_err err)
{
	memset(r, 0, sizeof(*r));
	if (q->kind == HT_K_RDSIZED || q->kind == HT_K_ATOMIC) {
		ht_pkt_set_cmd(r, HT_K_RDRESPONSE);
		r->count = q->kind == HT_K_ATOMIC ? 1 : (q->dword ? q->count : 0);
		r->data_len = (uint16_t)(4u * (r->count + 1u));
		memset(r->data, 0xff, r->data_len);
	} else {
		ht_pkt_set_cmd(r, HT_K_TGTDONE);
	}
	r->bridge = 1;
	r->unitid = q->unitid;
	r->srctag = q->srctag;
	ht_pkt_set_rsp_err(r, err);
}

static int loop_input(void *ctx, const uint8_t *pkt, size_t len, uint64_t now)
{
	struct dimm_loop *l = ctx;
	struct ht_pkt q, r;
	int n;

	(void)now;
	if (ht_decode(pkt, len, &q) != (int)len)
		return -EINVAL;
	if (ht_pkt_vc(&q) == HT_VC_NP && l->n == l->cap) {
		l->st.backpressure++;
		return -EAGAIN;
	}
	l->st.requests++;
	bool reset = l->reset_left > 0;

	if (reset)
		l->reset_left--;
	if (ht_pkt_vc(&q) == HT_VC_P) {
		l->st.posted++;
		if (l->dead || reset) {
			if (reset)
				l->st.reset_dropped++;
			else
				l->st.dead_dropped++;
			l->loss++;
			return 0;
		}
	}
	if (reset && ht_pkt_vc(&q) == HT_VC_NP) {
		l->st.reset_answers++;
		error_answer(&q, &r, HT_RSP_TARGET_ABORT);
	} else if (l->dead && ht_pkt_vc(&q) == HT_VC_NP) {
		l->st.dead_answers++;
		error_answer(&q, &r, HT_RSP_MASTER_ABORT);
	} else if (ht_tgt_handle(&l->tgt, &q, &r) != 1) {
		return 0;
	}
	unsigned slot = (l->head + l->n) % l->cap;

	n = ht_encode(&r, l->q[slot], HT_MAX_PKT_LEN);
	if (n < 0)
		return -EINVAL;
	l->qlen[slot] = (uint8_t)n;
	l->n++;
	return 0;
}

static int loop_output(void *ctx, uint8_t *buf, size_t cap, uint64_t now)
{
	struct dimm_loop *l = ctx;
	unsigned n;

	(void)now;
	if (l->n == 0)
		return 0;
	n = l->qlen[l->head];
	if (n > cap)
		return -ENOSPC;
	memcpy(buf, l->q[l->head], n);
	l->head = (l->head + 1) % l->cap;
	l->n--;
	l->st.responses++;
	return (int)n;
}

static uint64_t loop_gen(void *ctx, uint16_t node)
{
	(void)node;
	return ((struct dimm_loop *)ctx)->loss;
}

void dimm_loop_link(struct dimm_loop *l, struct dimm_link *link)
{
	link->input = loop_input;
	link->output = loop_output;
	link->output_burst = NULL; /* copies: the loop is for tests */
	link->output_done = NULL;
	link->loss_gen = loop_gen;
	link->ctx = l;
}
