/* SPDX-License-Identifier: BSD-3-Clause
 * The end-of-run cross-check between processes (peercheck.h).
 */
#include <errno.h>
#include <string.h>

#include "htoe/htoe_wire.h"

#include "peercheck.h"

static uint64_t wl_lost(const struct ht_workload *w)
{
	const struct ht_wl_stats *s = ht_wl_stats(w);

	return s->lost_reset + s->lost_restart + s->lost_bytes;
}

void pc_ask_start(struct pc_asker *k, uint16_t peer, uint32_t session, uint64_t woff,
		  const struct ht_workload *w, uint64_t now)
{
	uint64_t size = w->cfg.size, id = k->id + 1; /* never an id asked before */

	memset(k, 0, sizeof(*k));
	k->woff = woff;
	k->peer = peer;
	k->session = session;
	k->id = (uint32_t)id;
	k->lost = wl_lost(w);
	for (uint64_t off = 0; off < size; off += 64) {
		if (ht_wl_tainted(w, off)) {
			k->excluded += 64;
			continue;
		}
		struct pc_run *r = k->n_run ? &k->run[k->n_run - 1] : NULL;

		if (r && r->off + r->len == woff + off)
			r->len += 64;
		else if (k->n_run < PC_MAX_RUNS)
			k->run[k->n_run++] = (struct pc_run){ .off = woff + off, .len = 64 };
		else
			k->uncompared += 64;
	}
	for (unsigned i = 0; i < k->n_run; i++)
		k->run[i].here = htoe_crc32c(w->cfg.shadow + (k->run[i].off - woff), k->run[i].len);
	k->state = k->n_run ? PC_ASKING : PC_CONFIRMED;
	k->next_tx_ns = now;
	k->backoff_ns = PC_RETRY_NS;
}

bool pc_ask_again(struct pc_asker *k, uint64_t now)
{
	if (k->final != PC_FINAL_NONE || !k->n_run ||
	    (k->state != PC_CONFIRMED && k->state != PC_DIFFERS))
		return false;
	k->final = PC_FINAL_ASKING;
	k->state = PC_ASKING;
	k->cur = 0;
	k->id++;
	k->next_tx_ns = now;
	k->backoff_ns = PC_RETRY_NS;
	return true;
}

void pc_ask_silent(struct pc_asker *k)
{
	if (k->final != PC_FINAL_ASKING)
		return;
	k->final = PC_FINAL_SILENT;
	k->cur = k->n_run; /* every run was answered once */
	k->state = k->differ ? PC_DIFFERS : PC_CONFIRMED;
}

void pc_ask_gone(struct pc_asker *k)
{
	k->state = PC_GONE;
}

/* 1 if the bridge took it; a message it cannot take now is lost like any
 * CTRL frame: the asker retransmits */
static unsigned send_msg(struct htoe *b, uint16_t node, const struct htoe_digest_msg *m)
{
	uint8_t buf[HTOE_DIGEST_MSG_LEN];

	return htoe_digest_encode(m, buf, sizeof(buf)) > 0 &&
	       htoe_ctrl_send(b, node, buf, sizeof(buf)) == 0;
}

/* The record of what was answered to node for [off, +len) (found: *known),
 * NULL when the table is full. */
static struct pc_record *record(struct pc_answerer *s, uint16_t node, uint64_t off, uint64_t len,
				bool *known)
{
	*known = true;
	for (unsigned i = 0; i < s->n; i++)
		if (s->rec[i].node == node && s->rec[i].off == off && s->rec[i].len == len)
			return &s->rec[i];
	*known = false;
	return s->n < PC_MAX_RECORDS ? &s->rec[s->n++] : NULL;
}

static unsigned answer(struct pc_answerer *s, struct htoe *b, uint16_t node,
		   const struct htoe_digest_msg *q, const uint8_t *mem, uint64_t mem_size)
{
	struct htoe_digest_msg a;

	htoe_digest_answer(q, mem, mem_size, &a);
	if (a.status == HTOE_DIGEST_OK) {
		bool known;
		struct pc_record *r = record(s, node, q->offset, q->len, &known);
		const struct htoe_vl_stats *v = htoe_get_vl_stats(b, node);
		uint64_t restarts = v ? v->peer_restarts : 0;

		/* asked again by the same life of the peer (its final check): the
		 * record keeps what was confirmed first, so that a change since
		 * is still found at the end of this node's run */
		if (r && !(known && r->restarts == restarts))
			*r = (struct pc_record){ .node = node, .off = q->offset, .len = q->len,
						 .crc = a.crc, .restarts = restarts };
		else if (!r)
			a.status = HTOE_DIGEST_E_FULL, a.crc = 0;
	}
	if (a.status == HTOE_DIGEST_OK)
		s->answered++;
	else
		s->refused++;
	return send_msg(b, node, &a);
}

static void take_answer(struct peercheck *pc, uint16_t node, const struct htoe_digest_msg *m)
{
	struct pc_asker *k = &pc->ask;
	struct pc_run *r = &k->run[k->cur];

	if (k->state != PC_ASKING || node != k->peer || m->session != k->session || m->id != k->id ||
	    m->offset != r->off || m->len != r->len) {
		pc->ans.stale++;
		return;
	}
	/* the final check: a run confirmed before that differs now changed
	 * since (a run that differed already keeps its first answer) */
	bool was_equal = r->answered && r->status == HTOE_DIGEST_OK && r->there == r->here;

	if (!r->answered || (was_equal && (m->status != HTOE_DIGEST_OK || m->crc != r->here))) {
		r->changed = r->answered && m->status == HTOE_DIGEST_OK;
		k->changed += r->changed;
		r->answered = true;
		r->status = m->status;
		r->there = m->crc;
		if (m->status != HTOE_DIGEST_OK || r->there != r->here)
			k->differ++;
	}
	k->id++;
	k->backoff_ns = PC_RETRY_NS;
	k->next_tx_ns = 0;
	if (++k->cur == k->n_run) {
		k->state = k->differ ? PC_DIFFERS : PC_CONFIRMED;
		if (k->final == PC_FINAL_ASKING)
			k->final = PC_FINAL_DONE;
	}
}

unsigned pc_poll(struct peercheck *pc, struct htoe *b, const struct ht_workload *w,
		 const uint8_t *mem, uint64_t mem_size, uint64_t now)
{
	struct pc_asker *k = &pc->ask;
	uint8_t buf[HTOE_CTRL_MAX];
	unsigned sent = 0;
	uint16_t node;
	int len;

	/* a request waits (in the bridge's CTRL queue) until every packet
	 * received is with the local side: an answer then covers every write
	 * of the frames the asker saw acknowledged */
	while (!htoe_local_pending(b) && (len = htoe_ctrl_recv(b, &node, buf, sizeof(buf))) != 0) {
		struct htoe_digest_msg m;

		if (len < 0 || htoe_digest_decode(buf, (size_t)len, &m) != 0) {
			pc->ans.bad++;
			if (len < 0) /* cannot happen: a CTRL message is at most HTOE_CTRL_MAX */
				break;
			continue;
		}
		if (m.type == HTOE_DIGEST_REQUEST)
			sent += answer(&pc->ans, b, node, &m, mem, mem_size);
		else
			take_answer(pc, node, &m);
	}
	if (k->state == PC_ASKING && w && wl_lost(w) != k->lost) /* a loss since: runs again */
		pc_ask_start(k, k->peer, k->session, k->woff, w, now);
	if (k->state != PC_ASKING || now < k->next_tx_ns)
		return sent;
	const struct pc_run *r = &k->run[k->cur];
	struct htoe_digest_msg q = { .type = HTOE_DIGEST_REQUEST, .session = k->session,
				     .id = k->id, .offset = r->off, .len = r->len };

	sent += send_msg(b, k->peer, &q);
	k->requests++;
	k->next_tx_ns = now + k->backoff_ns;
	if (k->backoff_ns < PC_RETRY_MAX_NS)
		k->backoff_ns *= 2;
	return sent;
}
