/* SPDX-License-Identifier: BSD-3-Clause
 * Encapsulation layer (HToE paper §4.5): HT packets of one VC and one
 * destination are packed into one frame while credits and the MTU allow; a
 * frame leaves when it is full, when the local side is idle (HTOE_TX_FLUSH),
 * or when its oldest packet has waited flush_ns. Frames are written straight
 * into the caller's buffer: each HT packet is copied once, from its VL queue
 * slot into the frame. The slot stays until the frame is acknowledged, so a
 * retransmission rebuilds the frame from the same slots.
 *
 * Decapsulation: a DATA frame that passed the wire checks is accepted only
 * if it is the next in sequence and fits the credits granted; its HT packets
 * then go to the local-side queues.
 */
#include <errno.h>
#include <string.h>

#include "htoe_acl.h"
#include "htoe_deliver.h"
#include "htoe_encap.h"

/* Ethernet + HToE header for a frame on VL v. */
static int write_hdr(const struct htoe *b, const struct htoe_vl *v, enum htoe_ftype type,
		     enum ht_vc vc, uint16_t seq, uint8_t epoch, bool cold, bool credit_req,
		     bool sack, uint8_t *buf, size_t cap)
{
	struct htoe_hdr h;

	memset(&h, 0, sizeof(h));
	memcpy(h.dst, v->mac, 6);
	memcpy(h.src, b->cfg.mac, 6);
	h.has_vlan = b->cfg.vlan;
	h.pcp = v->pcp;
	h.vid = b->cfg.vid;
	h.ftype = (uint8_t)type;
	h.vc = type == HTOE_FT_DATA ? (uint8_t)vc : 0;
	h.cold = cold;
	h.credit_req = credit_req;
	h.sack = sack;
	h.epoch = epoch;
	h.src_node = b->cfg.node_id;
	h.dst_node = v->node;
	h.seq = seq;
	h.ack = htoe_retry_rx_ack_value(&v->rt);
	htoe_credit_rx_limits(&v->crx, h.credit);
	return htoe_hdr_write(&h, buf, cap);
}

/* Room for a packet in q, a queue of v: what the ack v holds back releases
 * counts too. */
static inline bool vl_room(struct htoe_vl *v, const struct htoe_vcq *q)
{
	if (vcq_room(q))
		return true;
	htoe_encap_ack_settle(v);
	return vcq_room(q) > 0;
}

bool htoe_encap_room(struct htoe_vl *v, enum ht_vc vc)
{
	return vl_room(v, &v->q[vc]);
}

/* The packet written into slot s (the tail of its VC's queue) is queued. */
static struct htoe_slot *slot_commit(struct htoe_vl *v, enum ht_vc vc, struct htoe_slot *s,
				     size_t len, bool has_data, bool passpw, uint64_t now)
{
	struct htoe_vcq *q = &v->q[vc];

	s->len = (uint8_t)len;
	s->has_data = has_data;
	s->passpw = passpw;
	s->vc = (uint8_t)vc;
	s->enq_ns = now;
	if (vc == HT_VC_P) {
		s->stamp = 0;
		v->p_enq++;
		/* a Flush from now on goes behind this write (local_flush),
		 * framed or still waiting for credits */
		v->posted_dirty = true;
	} else {
		s->stamp = v->p_enq;
	}
	q->tail++;
	htoe_vl_wake(v);
	return s;
}

struct htoe_slot *htoe_encap_enqueue(struct htoe_vl *v, const struct ht_desc *d, uint64_t now)
{
	enum ht_vc vc = (enum ht_vc)d->vc;
	struct htoe_vcq *q = &v->q[vc];
	struct htoe_slot *s;

	if (d->len > sizeof(s->bytes) || !vl_room(v, q))
		return NULL;
	s = vcq_at(q, q->tail);
	ht_data_copy(s->bytes, d->pkt, d->len);
	return slot_commit(v, vc, s, d->len, ht_cmd_has_data(d->cmd), d->passpw, now);
}

struct htoe_slot *htoe_encap_enqueue_like(struct htoe_vl *v, const struct ht_desc *d,
					  const uint8_t *data, uint64_t addr, uint64_t now)
{
	enum ht_vc vc = (enum ht_vc)d->vc;
	struct htoe_vcq *q = &v->q[vc];
	struct htoe_slot *s;

	if (!vl_room(v, q))
		return NULL;
	s = vcq_at(q, q->tail);
	/* the control packet of the template, this packet's data and
	 * address: the bytes the requester's encoder gives for it */
	memcpy(s->bytes, d->pkt, HTOE_SIZED_CTL_LEN);
	if (d->data_len)
		ht_data_copy(s->bytes + HTOE_SIZED_CTL_LEN, data, d->data_len);
	ht_bytes_set_addr(s->bytes, d->len, addr);
	return slot_commit(v, vc, s, d->len, d->data_len != 0, d->passpw, now);
}

unsigned htoe_encap_enqueue_run(struct htoe_vl *v, const struct ht_desc *d,
				const uint8_t *data, uint64_t addr, unsigned n, uint64_t now)
{
	unsigned k;

	for (k = 0; k < n; k++)
		if (!htoe_encap_enqueue_like(v, d, data + (size_t)k * d->data_len,
					     addr + (uint64_t)k * d->data_len, now))
			break;
	return k;
}

int htoe_encap_enqueue_pkt(struct htoe_vl *v, const struct ht_pkt *p, uint64_t now)
{
	uint8_t raw[HT_MAX_PKT_LEN];
	struct ht_desc d;
	int n = ht_encode(p, raw, sizeof(raw));

	if (n < 0 || ht_desc_parse(raw, (size_t)n, &d) != n)
		return -EINVAL;
	return htoe_encap_enqueue(v, &d, now) ? 0 : -EAGAIN;
}

/* May the slot leave now as far as HT ordering goes (§13: NP and R with
 * PassPW=0 do not pass earlier posted requests of this VL)? */
static bool slot_ordered(const struct htoe_vl *v, const struct htoe_slot *s)
{
	if (s->vc == HT_VC_P || s->passpw)
		return true;
	return (int32_t)(v->p_framed - s->stamp) >= 0;
}

/* Copy slots [first, first+npkts) of q into buf. */
static size_t copy_slots(const struct htoe_vcq *q, uint32_t first, unsigned npkts,
			 uint8_t *buf)
{
	size_t off = 0;

	for (unsigned i = 0; i < npkts; i++) {
		const struct htoe_slot *s = vcq_at(q, first + i);

		ht_data_copy(buf + off, s->bytes, s->len);
		off += s->len;
	}
	return off;
}

static inline __attribute__((always_inline)) int
build_data(struct htoe_vl *v, uint16_t seq, const struct htoe_fdesc *fd, uint8_t *buf, size_t cap)
{
	uint16_t credit[HTOE_CR__COUNT];
	int off;
	size_t plen;

	htoe_credit_rx_limits(&v->crx, credit);
	off = htoe_hdr_data(&v->tmpl, buf, cap, fd->vc, fd->npkts, v->epoch, seq,
			    htoe_retry_rx_ack_value(&v->rt), credit);
	if (off < 0)
		return off;
	if ((size_t)off + fd->payload_len > cap)
		return -ENOSPC;
	plen = copy_slots(&v->q[fd->vc], fd->first, fd->npkts, buf + off);
	return htoe_frame_seal_data_lap(buf, cap, v->tmpl.l2, plen,
					(uint64_t)htoe_retry_tx_lap(&v->rt, seq) << 32 |
					htoe_retry_rx_ack_lap(&v->rt));
}

/* Retransmission of the next frame of a go-back in progress. */
static int try_retransmit(struct htoe_vl *v, uint8_t *buf, size_t cap, uint64_t now)
{
	uint16_t seq;
	int n;

	if (!htoe_retry_tx_retransmit_peek(&v->rt, &seq))
		return 0;
	n = build_data(v, seq, &v->fd[seq & v->fd_mask], buf, cap);
	if (n <= 0)
		return n;
	htoe_retry_tx_retransmit_at(&v->rt, now, &seq);
	v->st.tx_bytes += (uint64_t)n;
	htoe_vl_on_frame_sent(v, now);
	return n;
}

/* Pack a new DATA frame of VC vc, which has packets waiting, if one is
 * due. */
static int try_new_frame(struct htoe *b, struct htoe_vl *v, enum ht_vc vc, uint8_t *buf,
			 size_t cap, uint64_t now, unsigned flags)
{
	struct htoe_vcq *q = &v->q[vc];
	size_t max_payload = HTOE_MAX_PAYLOAD(b->cfg.mtu), plen = 0;
	unsigned need_cmd = 0, need_data = 0, avail_cmd, avail_data;
	unsigned npkts = 0;
	bool full = false;
	uint32_t i;

	avail_cmd = htoe_credit_tx_avail(&v->ctx, vc, false);
	avail_data = htoe_credit_tx_avail(&v->ctx, vc, true);
	for (i = q->framed; i != q->tail; i++) {
		const struct htoe_slot *s = vcq_at(q, i);

		if (npkts == HTOE_FRAME_MAX_PKTS || plen + s->len > max_payload) {
			full = true;
			break;
		}
		if (!slot_ordered(v, s))
			break;
		if (need_cmd + 1 > avail_cmd || need_data + s->has_data > avail_data) {
			if (npkts == 0) {
				if (!v->ctx.blocked[vc])
					v->probe_next_ns = now + b->cfg.rto_init_ns;
				htoe_credit_tx_blocked(&v->ctx, vc, s->has_data, now);
			}
			break;
		}
		need_cmd++;
		need_data += s->has_data;
		plen += s->len;
		npkts++;
	}
	if (npkts == 0)
		return 0;
	if (v->ctx.blocked[vc]) /* (the common case: it was not) */
		htoe_credit_tx_unblocked(&v->ctx, vc, now);
	/* A partial frame waits for more packets unless the local side is
	 * idle, the latency bound expired, or nothing more could join it. */
	if (!full && i == q->tail && !(flags & HTOE_TX_FLUSH) &&
	    now - vcq_at(q, q->framed)->enq_ns < b->cfg.flush_ns)
		return 0;

	uint16_t seq = htoe_retry_tx_next_seq(&v->rt);
	struct htoe_fdesc *fd = &v->fd[seq & v->fd_mask];

	fd->first = q->framed;
	fd->npkts = (uint8_t)npkts;
	fd->vc = (uint8_t)vc;
	fd->payload_len = (uint16_t)plen;
	int n = build_data(v, seq, fd, buf, cap);
	if (n <= 0)
		return n;

	/* the retry's bookkeeping of the frame once it has left (the next
	 * call on v settles it): on a read's round trip it was in the path at
	 * both ends */
	v->sent_seq = htoe_retry_tx_take(&v->rt);
	v->sent_ns = now;
	v->sent_wait = true;
	htoe_credit_tx_take_n(&v->ctx, vc, npkts, need_data); /* counted within avail above */
	q->framed += npkts;
	if (vc == HT_VC_P)
		v->p_framed += npkts;
	v->st.tx_pkts[vc] += npkts;
	v->st.tx_bytes += (uint64_t)n;
	htoe_vl_on_frame_sent(v, now);
	return n;
}

static bool vl_starved(const struct htoe_vl *v)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		if (v->ctx.blocked[vc])
			return true;
	return false;
}

int htoe_write_ctl_frame(struct htoe *b, struct htoe_vl *v, enum htoe_ftype type,
			 uint8_t *buf, size_t cap)
{
	uint64_t nonce = 0;
	uint8_t epoch = v->epoch;
	bool cold = false, sack = false;
	size_t plen = 0;
	int off;

	if (type == HTOE_FT_RESET) {
		nonce = v->nonce;
		cold = v->reset_cold;
		sack = v->sb; /* offer selective retry (when configured) */
	} else if (type == HTOE_FT_RESET_ACK) {
		nonce = v->ack_nonce;
		epoch = v->ack_epoch;
		cold = v->ack_cold;
		sack = v->ack_sack;
	} else if (type == HTOE_FT_ACK || type == HTOE_FT_NAK) {
		sack = htoe_retry_rx_sack_due(&v->rt);
	}
	off = write_hdr(b, v, type, HT_VC_P, (uint16_t)nonce, epoch, cold,
			type == HTOE_FT_ACK && vl_starved(v), sack, buf, cap);
	if (off < 0)
		return off;
	if (type == HTOE_FT_RESET || type == HTOE_FT_RESET_ACK) {
		/* incarnation, nonce (docs/wire-format.md) */
		if ((size_t)off + HTOE_RESET_PAYLOAD_LEN > cap)
			return -ENOSPC;
		htoe_put_be32(buf + off, b->cfg.incarnation);
		htoe_put_be32(buf + off + 4, (uint32_t)(nonce >> 32));
		htoe_put_be32(buf + off + 8, (uint32_t)nonce);
		plen = HTOE_RESET_PAYLOAD_LEN;
	} else if (sack) {
		/* ACK/NAK with a SACK block */
		size_t room = cap - (size_t)off, max = HTOE_MAX_PAYLOAD(b->cfg.mtu);
		int n = htoe_retry_rx_sack(&v->rt, buf + off, room < max ? room : max);

		if (n <= 0)
			return -ENOSPC;
		plen = (size_t)n;
	}
	/* the ack's lap (docs/wire-format.md, "Sequence laps"); none in a
	 * RESET or RESET_ACK, whose seq is a nonce */
	return htoe_frame_seal_lap(buf, cap, (size_t)off - HTOE_HDR_LEN, plen,
				   type == HTOE_FT_RESET || type == HTOE_FT_RESET_ACK ? 0 :
				   htoe_retry_rx_ack_lap(&v->rt));
}

/* The oldest queued control message of v as a CTRL frame: the message, then
 * our incarnation. */
int htoe_write_ctrl_msg(struct htoe *b, struct htoe_vl *v, uint8_t *buf, size_t cap)
{
	struct htoe_ctrlq *q = &v->ctrl_tx;
	const struct htoe_ctrl_msg *m = &q->m[q->head % HTOE_CTRL_QUEUE];
	int off = write_hdr(b, v, HTOE_FT_CTRL, HT_VC_P, 0, v->epoch, false, false, false, buf,
			    cap);

	if (off < 0)
		return off;
	if ((size_t)off + m->len + HTOE_CTRL_TRAILER_LEN > cap)
		return -ENOSPC;
	memcpy(buf + off, m->data, m->len);
	htoe_put_be32(buf + off + m->len, b->cfg.incarnation);
	q->head++;
	b->st.ctrl_sent++;
	return htoe_frame_seal_lap(buf, cap, (size_t)off - HTOE_HDR_LEN,
				   m->len + HTOE_CTRL_TRAILER_LEN, htoe_retry_rx_ack_lap(&v->rt));
}

/* New data goes out in this order: posted first, responses never behind
 * requests. */
static const enum ht_vc vc_order[] = { HT_VC_P, HT_VC_R, HT_VC_NP };

/* May v frame new data now whatever the ack it holds back says: the window
 * open, the first packet waiting free to leave (HT order), and credits for
 * every packet waiting in its VC (up to a frame's worth, each counted with
 * data)? Then that frame leaves first and the ack is applied after it: the
 * ack would not change the frame, and applying it (the retry scoreboard,
 * the RTT estimate, the timers, the credits) would delay it. */
static bool data_may_go(const struct htoe_vl *v)
{
	if (htoe_retry_tx_in_goback(&v->rt) || !htoe_retry_tx_can_send(&v->rt))
		return false;
	for (unsigned i = 0; i < 3; i++) {
		const struct htoe_vcq *q = &v->q[vc_order[i]];
		uint32_t w = vcq_waiting(q);

		if (!w)
			continue;
		if (w > HTOE_FRAME_MAX_PKTS)
			w = HTOE_FRAME_MAX_PKTS;
		return slot_ordered(v, vcq_at(q, q->framed)) &&
		       htoe_credit_tx_avail(&v->ctx, vc_order[i], false) >= w &&
		       htoe_credit_tx_avail(&v->ctx, vc_order[i], true) >= w;
	}
	return false;
}

/* Frames of one VL in priority order: reset handshake, control messages,
 * retransmission, new data (P, then R, then NP: posted first, responses
 * never behind requests), then a standalone ack/nak/credit update. Control
 * messages go before retransmissions: a go-back of a whole window would
 * hold them for as long as it lasts. HTOE_TX_CTRL_ONLY: the reset handshake
 * and control messages only. */
static int vl_output(struct htoe *b, struct htoe_vl *v, uint8_t *buf, size_t cap,
		     uint64_t now, unsigned flags)
{
	int n;

	if (v->ack_reset) {
		n = htoe_write_ctl_frame(b, v, HTOE_FT_RESET_ACK, buf, cap);
		if (n > 0) {
			v->ack_reset = false;
			v->st.tx_frames++;
		}
		return n;
	}
	if (v->state != HTOE_VL_UP) {
		if (now < v->reset_next_ns)
			return 0;
		n = htoe_write_ctl_frame(b, v, HTOE_FT_RESET, buf, cap);
		if (n > 0) {
			v->reset_next_ns = now + v->reset_rto_ns;
			if (v->reset_rto_ns < b->cfg.rto_max_ns)
				v->reset_rto_ns *= 2;
			v->st.tx_frames++;
		}
		return n;
	}
	if (v->regrant_due) {
		v->regrant_due = false;
		b->touched |= v->active_bit;
		if (htoe_credit_rx_regrant_due(&b->pool, &v->crx))
			v->credit_dirty |= htoe_credit_rx_regrant(&b->pool, &v->crx);
	}
	if (v->ctrl_tx.head != v->ctrl_tx.tail) {
		n = htoe_write_ctrl_msg(b, v, buf, cap);
		if (n > 0)
			htoe_vl_on_frame_sent(v, now);
		return n;
	}
	b->ctl_due &= ~v->active_bit; /* none: the reset handshake is over, no message waits */
	if (flags & HTOE_TX_CTRL_ONLY)
		return 0; /* an ack or credit update rides on the data to come */
	htoe_encap_sent_settle(v); /* the frame before has left */
	if (v->ack_wait && !data_may_go(v))
		htoe_encap_ack_settle_slow(v);
	if (htoe_retry_tx_in_goback(&v->rt) && /* a frame to resend (see try_retransmit) */
	    (n = try_retransmit(v, buf, cap, now)) != 0)
		return n;
	if (htoe_retry_tx_can_send(&v->rt)) {
#pragma GCC unroll 3 /* every pass */
		for (unsigned i = 0; i < 3; i++) {
			if (!vcq_waiting(&v->q[vc_order[i]]))
				continue; /* the common case of the three VCs */
			n = try_new_frame(b, v, vc_order[i], buf, cap, now, flags);
			if (n)
				return n;
		}
	}
	htoe_encap_ack_settle(v); /* no (more) new data: the ack now */
	bool nak = htoe_retry_rx_nak_due(&v->rt, now);
	bool probe = now >= v->probe_next_ns && vl_starved(v);
	if (nak || probe || htoe_retry_rx_ack_due(&v->rt, now) || v->credit_dirty) {
		if (probe) {
			/* persist: a credit update may have been lost; ask
			 * for the limits again (answered by an ACK) */
			v->probe_next_ns = now + b->cfg.rto_init_ns;
			v->st.credit_probes++;
		}
		n = htoe_write_ctl_frame(b, v, nak ? HTOE_FT_NAK : HTOE_FT_ACK, buf, cap);
		if (n > 0) {
			if (nak) {
				htoe_retry_rx_nak_sent(&v->rt, now);
			} else {
				v->st.acks_sent++;
			}
			htoe_vl_on_frame_sent(v, now);
		}
		return n;
	}
	return 0;
}

/* The VLs of act (those with work), round robin from b->rr: those at rr
 * and above, then those below. */
static __attribute__((noinline)) int output_vls(struct htoe *b, uint64_t act, uint8_t *buf,
						size_t cap, uint64_t now, unsigned flags)
{
	uint64_t hi = b->rr < HTOE_MAX_PEERS ? act & (~0ull << b->rr) : 0;

	for (uint64_t m = hi ? hi : act; m; ) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		struct htoe_vl *v = &b->vl[i];
		int n = vl_output(b, v, buf, cap, now, flags);

		if (n != 0) {
			b->rr = i + 1;
			b->touched |= v->active_bit;
			return n;
		}
		if (!(flags & HTOE_TX_CTRL_ONLY)) /* (it may have data) */
			htoe_vl_idle(b, v, now, flags & HTOE_TX_FLUSH); /* nothing to send */
		m &= m - 1;
		if (!m && hi) {
			m = act & ~hi;
			hi = 0;
		}
	}
	return 0;
}

int htoe_encap_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now,
		      unsigned flags)
{
	uint64_t act = flags & HTOE_TX_CTRL_ONLY ? b->active & b->ctl_due : b->active;

	/* nothing to frame (a pass for control frames without one waiting,
	 * the pass after the last frame): the answer costs this test */
	return act ? output_vls(b, act, buf, cap, now, flags) : 0;
}

/* When does VL v next have framing work that needs no new input? Only work
 * that can happen counts: a queue waiting for credits or for the window
 * has no deadline of its own (a frame from the peer unblocks it), except
 * the credit probe of a starved VL. */
uint64_t htoe_encap_deadline(const struct htoe *b, const struct htoe_vl *v)
{
	uint64_t d;
	bool can_new;

	if (v->ack_reset)
		return 0;
	if (v->state != HTOE_VL_UP)
		return v->reset_next_ns;
	if (v->ack_wait || v->sent_wait || v->credit_dirty || v->regrant_due ||
	    htoe_retry_tx_in_goback(&v->rt) ||
	    v->ctrl_tx.head != v->ctrl_tx.tail)
		return 0;
	d = htoe_retry_next_deadline(&v->rt);
	can_new = htoe_retry_tx_can_send(&v->rt);
#pragma GCC unroll 3 /* per frame, twice */
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		const struct htoe_vcq *q = &v->q[vc];
		const struct htoe_slot *head;
		uint64_t t;

		if (!vcq_waiting(q))
			continue;
		if (v->ctx.blocked[vc]) {
			if (v->probe_next_ns < d)
				d = v->probe_next_ns;
			continue;
		}
		head = vcq_at(q, q->framed);
		if (!can_new || !slot_ordered(v, head))
			continue;
		t = head->enq_ns + b->cfg.flush_ns;
		if (t < d)
			d = t;
	}
	return d;
}

/* Release the slots of frames the peer acknowledged: every frame before
 * `first_unacked_seq` is done. The frames are released in sequence order, so
 * in every VC the acknowledged slots are at the head of the ring. */
static void release_acked(struct htoe_vl *v, uint16_t from, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const struct htoe_fdesc *fd = &v->fd[(uint16_t)(from + i) & v->fd_mask];

		v->q[fd->vc].head += fd->npkts;
	}
}

void htoe_encap_on_ack(struct htoe_vl *v, const struct htoe_hdr *h, const uint8_t *payload,
		       uint64_t now)
{
	uint16_t una = htoe_retry_tx_una(&v->rt);
	int n;

	if (h->sack && h->payload_len && htoe_retry_mode(&v->rt) == HTOE_RETRY_SELECTIVE) {
		/* ACK/NAK with a SACK block: the peer holds frames after the
		 * gap; only the missing ones are resent */
		n = htoe_retry_tx_ack(&v->rt, h->ack, now);
		if (n >= 0)
			htoe_retry_tx_sack(&v->rt, h->ack, payload, h->payload_len, now);
		v->st.sacks_rcvd++;
		if (h->ftype == HTOE_FT_NAK)
			v->st.naks_rcvd++;
	} else if (h->ftype == HTOE_FT_NAK) {
		n = htoe_retry_tx_nak(&v->rt, h->ack, now);
		v->st.naks_rcvd++;
	} else {
		n = htoe_retry_tx_ack(&v->rt, h->ack, now);
	}
	if (n > 0) {
		release_acked(v, una, (unsigned)n);
	}
	htoe_credit_tx_update(&v->ctx, h->credit, now);
	if (h->credit_req)
		v->credit_dirty = true; /* answer the probe with our limits */
}

void htoe_encap_ack_settle_slow(struct htoe_vl *v)
{
	v->ack_wait = false;
	/* (a reset since: the ack belongs to the old epoch) */
	if (v->state == HTOE_VL_UP && v->ack_hdr.epoch == v->epoch)
		htoe_encap_on_ack(v, &v->ack_hdr, NULL, v->ack_wait_ns);
}

/* Drop what VL v has queued towards its peer (reset). Framed but
 * unacknowledged posted writes may or may not have been applied by the peer:
 * they are counted as lost to the reset. Unsent posted writes are kept for
 * the new epoch on a warm reset, refused on a cold one. NP requests and
 * responses are dropped (their requesters are poisoned by the reset). */
/* The global address of address addr at node (htoe_map_lookup reversed):
 * the address the requester used. */
static uint64_t global_addr(const struct htoe_map *m, uint16_t node, uint64_t addr)
{
	if (m->mask_mode)
		return ((uint64_t)node << m->shift) | ((addr - m->mask_remote_base) & ~m->mask);
	for (unsigned i = 0; i < m->nranges; i++) {
		const struct htoe_map_range *r = &m->ranges[i];

		if (r->node == node && addr >= r->remote_base && addr - r->remote_base < r->size)
			return r->base + (addr - r->remote_base);
	}
	return addr;
}

/* Tell the local side that a posted write of [gaddr, +len) to node was
 * dropped. Costs nothing without a loss callback. */
void htoe_report_lost(struct htoe *b, uint16_t node, uint64_t gaddr, uint64_t len)
{
	struct htoe_loss l = { .kind = HTOE_LOSS_RESET, .node = node, .addr = gaddr,
			       .len = len };

	if (b->loss_fn)
		b->loss_fn(b->loss_ctx, &l);
}

/* The same for the posted writes of q in [from, to), dropped by a reset of v. */
static void report_posted_lost(struct htoe *b, const struct htoe_vl *v,
			       const struct htoe_vcq *q, uint32_t from, uint32_t to)
{
	struct ht_desc d;

	if (!b->loss_fn)
		return;
	for (uint32_t i = from; i != to; i++) {
		const struct htoe_slot *s = vcq_at(q, i);

		if (ht_desc_parse(s->bytes, s->len, &d) < 0 || d.kind != HT_K_WRSIZED)
			continue;
		htoe_report_lost(b, v->node, global_addr(b->map, v->node, d.addr),
				 htoe_access_len(&d));
	}
}

void htoe_report_restart(struct htoe *b, const struct htoe_vl *v, uint32_t old_inc,
			 uint32_t new_inc)
{
	const struct htoe_map *m = b->map;
	struct htoe_loss l = { .kind = HTOE_LOSS_RESTART, .node = v->node,
			       .old_inc = old_inc, .new_inc = new_inc };

	if (!b->loss_fn)
		return;
	if (m->mask_mode) {
		l.addr = (uint64_t)v->node << m->shift;
		l.len = m->shift < 64 ? 1ull << m->shift : 0;
		b->loss_fn(b->loss_ctx, &l);
		return;
	}
	for (unsigned i = 0; i < m->nranges; i++) {
		if (m->ranges[i].node != v->node)
			continue;
		l.addr = m->ranges[i].base;
		l.len = m->ranges[i].size;
		b->loss_fn(b->loss_ctx, &l);
	}
}

void htoe_vl_drop_queues(struct htoe *b, struct htoe_vl *v, bool keep_unsent_posted)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		struct htoe_vcq *q = &v->q[vc];

		if (vc == HT_VC_P) {
			report_posted_lost(b, v, q, q->head, keep_unsent_posted ? q->framed : q->tail);
			v->st.posted_lost_reset += q->framed - q->head;
			q->head = q->framed;
			if (!keep_unsent_posted) {
				v->st.posted_refused += q->tail - q->framed;
				q->head = q->framed = q->tail;
			}
		} else {
			q->head = q->framed = q->tail;
		}
	}
	/* Restart the posted epoch: nothing framed in the new epoch yet. The
	 * posted writes kept unsent go out after the reset: a Flush goes
	 * behind them. */
	v->p_enq = vcq_waiting(&v->q[HT_VC_P]);
	v->p_framed = 0;
	v->posted_dirty = v->p_enq > 0;
}

bool htoe_encap_unqueue_np(struct htoe_vl *v, uint8_t unitid, uint8_t srctag)
{
	struct htoe_vcq *q = &v->q[HT_VC_NP];

	for (uint32_t i = q->framed; i != q->tail; i++) {
		struct htoe_slot *s = vcq_at(q, i);
		uint8_t u, t;

		ht_bytes_get_tag(s->bytes, s->len, &u, &t);
		if (u != unitid || t != srctag)
			continue;
		/* the requests behind it move up one slot, in order (their
		 * stamps with them); nothing refers to an unframed slot */
		for (uint32_t j = i + 1; j != q->tail; j++)
			*vcq_at(q, j - 1) = *vcq_at(q, j);
		q->tail--;
		return true;
	}
	return false;
}

/* A remote non-posted request d served at once by the sink (see
 * htoe_local_sink): its response is encoded straight into the tail slot of
 * the VL's response queue and queued there as is. True if served. */
static bool sink_serve(struct htoe *b, struct htoe_vl *v, const struct ht_desc *d, uint64_t now)
{
	struct htoe_vcq *q = &v->q[HT_VC_R];
	struct htoe_slot *s;
	int n;

	if (!vl_room(v, q))
		return false;
	s = vcq_at(q, q->tail);
	n = b->sink.serve(b->sink.ctx, d, s->bytes, sizeof(s->bytes), now);
	if (n <= 0)
		return false;
	slot_commit(v, HT_VC_R, s, (size_t)n, ht_bytes_has_data(s->bytes, (size_t)n),
		    ht_bytes_passpw(s->bytes, (size_t)n), now);
	b->st.local_in++;
	return true;
}

/* May remote packet pkt (VC vc) go to the sink now rather than into the
 * local queue? HT order: a posted write passes nothing posted that waits,
 * a request passes no request and no posted write; the access table is
 * checked first. Done (true) or not (false). */
static bool sink_take(struct htoe *b, struct htoe_vl *v, enum ht_vc vc, const struct ht_desc *d,
		      uint64_t now)
{
	bool p_waits = b->lq[HT_VC_P].head != b->lq[HT_VC_P].tail;

	if (vc == HT_VC_P ? !b->sink.deliver || p_waits :
			    !b->sink.serve || p_waits || b->lq[HT_VC_NP].head != b->lq[HT_VC_NP].tail)
		return false;
	if (!htoe_acl_allows(b, d, v->node))
		return false; /* the queued path counts or refuses it */
	if (vc == HT_VC_P) {
		/* posted order counters move together: nothing queued waits */
		b->sink.deliver(b->sink.ctx, d, now);
		b->lq_p_enq++;
		b->lq_p_out++;
	} else if (!sink_serve(b, v, d, now)) {
		return false;
	}
	b->st.local_out++;
	b->st.local_direct++;
	return true;
}

/* Receive buffers of a frame's packets that are free again at once. */
struct freed {
	unsigned pkts, data;
};

/* One HT packet of an accepted frame (its buffers counted as received)
 * goes to the local side: to the sink at once when it can, else queued.
 * A packet taken at once (or a late or bogus response) is counted in *f:
 * its buffers are released once per frame (rx_free). */
static inline __attribute__((always_inline)) void
deliver_pkt(struct htoe *b, struct htoe_vl *v, enum ht_vc vc, const struct ht_desc *d, uint64_t now,
	    struct freed *f, bool pooled)
{
	bool has_data = ht_cmd_has_data(d->cmd);

	if (vc == HT_VC_R ? htoe_remote_response(b, v, d, pooled, now) != 0 : sink_take(b, v, vc, d, now)) {
		f->pkts++;
		f->data += has_data;
		return;
	}
	if (vc != HT_VC_R)
		htoe_lq_push(b, vc, d->pkt, d->len, htoe_vl_index(b, v), v->epoch, pooled, has_data,
			     d->passpw);
}

/* The buffers of the packets of one frame (VC vc) taken at once are free
 * again: granted again before v's next frame (at once when that changes
 * nothing: htoe_credit_rx_release_regrant_n). */
static void rx_free(struct htoe *b, struct htoe_vl *v, enum ht_vc vc, const struct freed *f)
{
	if (!f->pkts)
		return;
	v->credit_dirty |= htoe_credit_rx_release_regrant_n(&b->pool, &v->crx, vc, f->pkts,
							     f->data) > 0;
	v->regrant_due = true;
}

/* Selective retry: a frame after a gap is kept until the gap is filled.
 * Its packets take their receive buffers (within the credits granted);
 * while the reorder buffer has unpooled slots they are released at once
 * (the reorder buffer holds the packets), so the sender's credits come
 * back during the repair. 0 if held, -1 if it cannot be (then it is
 * dropped as in GBN). */
static int hold_frame(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		      const uint8_t *payload, uint64_t now)
{
	enum ht_vc vc = (enum ht_vc)h->vc;
	const struct htoe_rob_frame *f;

	if (htoe_rob_put(&v->rob, h->seq, vc, payload, h->payload_len, h->npkts) != 0)
		return -1;
	f = htoe_rob_get(&v->rob, h->seq);
	if (htoe_credit_rx_unused(&v->crx, vc, false) < f->npkts ||
	    htoe_credit_rx_unused(&v->crx, vc, true) < f->ndata) {
		htoe_rob_free(&v->rob, h->seq);
		return -1;
	}
	htoe_credit_rx_receive_n(&v->crx, vc, f->npkts, f->ndata);
	if (htoe_rob_unpool(&v->rob, h->seq))
		htoe_credit_rx_release_n(&b->pool, &v->crx, vc, f->npkts, f->ndata);
	htoe_retry_rx_hold(&v->rt, h->seq, now);
	v->regrant_due = true;
	return 0;
}

/* Selective retry: deliver the held frames that are now next in sequence
 * (strictly in order). One waits while the local-side queue lacks room. */
static void drain_held(struct htoe *b, struct htoe_vl *v, uint64_t now)
{
	if (!htoe_retry_rx_held(&v->rt))
		return; /* nothing held (the common case) */
	for (;;) {
		uint16_t seq = htoe_retry_rx_ack_value(&v->rt);
		const struct htoe_rob_frame *f;

		if (!htoe_retry_rx_is_held(&v->rt, seq))
			return;
		f = htoe_rob_get(&v->rob, seq);
		/* unpooled packets queue only on top of the room kept for
		 * the pooled ones */
		if (!f || htoe_lq_room(b, (enum ht_vc)f->vc) <
			  f->npkts + (f->unpooled ? htoe_lq_pooled_room(&b->cfg, (enum ht_vc)f->vc) : 0))
			return;
		struct freed fr = { 0, 0 };

		for (uint16_t i = f->first; i != HTOE_ROB_NONE; i = v->rob.pkt[i].next) {
			const struct htoe_rob_pkt *p = &v->rob.pkt[i];
			struct ht_desc d;

			/* validated when its frame came: the parse cannot fail */
			if (ht_desc_parse(p->bytes, p->len, &d) == (int)p->len)
				deliver_pkt(b, v, (enum ht_vc)f->vc, &d, now, &fr, !f->unpooled);
		}
		if (!f->unpooled)
			rx_free(b, v, (enum ht_vc)f->vc, &fr);
		v->st.rx_frames++;
		v->st.rx_pkts[f->vc] += f->npkts;
		htoe_rob_free(&v->rob, seq);
		htoe_retry_rx_frame(&v->rt, seq, now);
	}
}

/* VL reset: the held frames are dropped and their buffers freed. */
void htoe_encap_drop_held(struct htoe *b, struct htoe_vl *v)
{
	if (!v->rob.fr)
		return;
	for (unsigned k = 0; k <= v->rob.fr_mask && v->rob.frames; k++) {
		const struct htoe_rob_frame *f = &v->rob.fr[k];

		if (f->first == HTOE_ROB_NONE)
			continue;
		for (uint16_t i = f->first; i != HTOE_ROB_NONE && !f->unpooled; i = v->rob.pkt[i].next)
			htoe_credit_rx_release(&b->pool, &v->crx, (enum ht_vc)f->vc,
					       v->rob.pkt[i].has_data);
		htoe_rob_free(&v->rob, f->seq);
	}
}

int htoe_decap_input(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		     const uint8_t *payload, const struct ht_desc *pk, uint64_t now)
{
	unsigned ndata = h->ndata, npkts = h->npkts;
	enum ht_vc vc = (enum ht_vc)h->vc;
	int verdict;

	drain_held(b, v, now); /* one may wait for room on the local side */
	if (h->seq != htoe_retry_rx_ack_value(&v->rt)) {
		verdict = htoe_retry_rx_frame(&v->rt, h->seq, now);
		if (verdict == HTOE_RX_OUT_OF_ORDER && htoe_retry_rx_can_hold(&v->rt, h->seq) &&
		    hold_frame(b, v, h, payload, now) == 0)
			return 0;
		return verdict == HTOE_RX_DUP ? -HTOE_DROP_DUP : -HTOE_DROP_OUT_OF_ORDER;
	}
	if (htoe_retry_rx_is_held(&v->rt, h->seq))
		return -HTOE_DROP_DUP; /* held already, waiting for room */

	/* Every HT packet needs a command buffer, and a data buffer if it has
	 * data (counted by htoe_frame_parse); the whole frame must fit what we
	 * granted. */
	if (htoe_credit_rx_unused(&v->crx, vc, false) < npkts ||
	    htoe_credit_rx_unused(&v->crx, vc, true) < ndata || htoe_lq_room(b, vc) < npkts)
		return -HTOE_DROP_NO_CREDIT;

	htoe_retry_rx_accept(&v->rt, now); /* in order, not held (above) */
	v->st.rx_frames++;
	v->st.rx_pkts[vc] += npkts;
	htoe_credit_rx_receive_n(&v->crx, vc, npkts, ndata); /* checked above: whole frame */

	struct freed fr = { 0, 0 };

	for (unsigned i = 0; i < npkts; i++)
		deliver_pkt(b, v, vc, &pk[i], now, &fr, true);
	rx_free(b, v, vc, &fr);
	drain_held(b, v, now);
	/* an active VL may now draw on the shared part of the pool: granted
	 * before its next frame (once per frame sent, not per frame received) */
	v->regrant_due = true;
	return 0;
}
