/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_encap: a VL's queues, packing HT packets into DATA frames, control
 * frames (ACK/NAK, CREDIT, CTRL), the retransmission copies and their
 * release on acknowledgement, and decapsulation of received DATA frames into
 * the local queue (htoe_deliver.h). Uses htoe_credit and htoe_retry.
 * Internal (not installed).
 */
#ifndef HTOE_ENCAP_H
#define HTOE_ENCAP_H

#include "htoe_internal.h"

/* Queue the parsed HT packet d on VL v (its VC's queue), a copy of its
 * bytes: the slot, which the caller may patch in place (address or tags, same
 * length), or NULL when the queue is full. */
struct htoe_slot *htoe_encap_enqueue(struct htoe_vl *v, const struct ht_desc *d, uint64_t now);
/* The same for a packet the bridge builds itself (Flush, error responses):
 * encoded first. 0, -EAGAIN (full) or -EINVAL. */
int  htoe_encap_enqueue_pkt(struct htoe_vl *v, const struct ht_pkt *p, uint64_t now);
/* The control packet of a sized dword request without a 0x3E prefix. */
#define HTOE_SIZED_CTL_LEN 8u

/* A packet shaped like d (a sized dword request without a 0x3E prefix:
 * its HTOE_SIZED_CTL_LEN control bytes, then its data, if any) with
 * address addr and the data at data: its slot (the caller may still
 * rewrite its tags), or NULL when the VC's queue is full. */
struct htoe_slot *htoe_encap_enqueue_like(struct htoe_vl *v, const struct ht_desc *d,
					  const uint8_t *data, uint64_t addr, uint64_t now);
/* Up to n posted dword writes shaped like d, packet k with address
 * addr + k * d->data_len and the data at data + k * d->data_len: as many
 * as the posted queue has room for. Returns how many were queued. */
unsigned htoe_encap_enqueue_run(struct htoe_vl *v, const struct ht_desc *d,
				const uint8_t *data, uint64_t addr, unsigned n, uint64_t now);
/* Room for one more packet in v's queue of VC vc (after the ack v holds
 * back, if it had none without it). */
bool htoe_encap_room(struct htoe_vl *v, enum ht_vc vc);

/* Selective retry's reorder buffer of a VL: packet slots for what the
 * credits let the peer hold (3 VCs x the per-VL cap), and as many again for
 * held frames whose receive buffers were given back (htoe_rob_unpool). */
static inline unsigned htoe_rob_pooled_slots(const struct htoe_config *c)
{
	return 3u * (c->max_per_vl > c->reserve ? c->max_per_vl : c->reserve);
}
static inline unsigned htoe_rob_unpooled_slots(const struct htoe_config *c)
{
	return htoe_rob_pooled_slots(c);
}
/* The local queue of VC vc keeps room for every pooled buffer and the
 * locally made packets (loopback, error responses: one per outstanding
 * tag, Flush answers); the packets of unpooled held frames come on top,
 * at most one VL's unpooled slots. */
static inline unsigned htoe_lq_pooled_room(const struct htoe_config *c, enum ht_vc vc)
{
	return c->rx_bufs[vc][0] + HTOE_TAG_MAX + HTOE_FLUSH_MAX;
}
int  htoe_encap_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now,
		       unsigned flags);
/* A DATA frame that passed htoe_frame_parse_desc: h, its payload and its
 * packets parsed into pk[0..h->npkts). */
int  htoe_decap_input(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		      const uint8_t *payload, const struct ht_desc *pk, uint64_t now);
int  htoe_write_ctl_frame(struct htoe *b, struct htoe_vl *v, enum htoe_ftype type,
			  uint8_t *buf, size_t cap);
int  htoe_write_ctrl_msg(struct htoe *b, struct htoe_vl *v, uint8_t *buf, size_t cap);
/* After any frame on v: the ack and the grant it carried are known to the
 * peer once it arrives. */
static inline void htoe_vl_on_frame_sent(struct htoe_vl *v, uint64_t now)
{
	htoe_retry_rx_ack_sent(&v->rt, now);
	v->credit_dirty = false;
	v->st.tx_frames++;
}
void htoe_encap_on_ack(struct htoe_vl *v, const struct htoe_hdr *h, const uint8_t *payload,
		       uint64_t now);
/* The ack of a DATA frame from v's peer (h), held back: applied by
 * htoe_encap_ack_settle, at the latest when v next has nothing to send, a
 * timer of the bridge is handled or the peer's next frame arrives. */
static inline void htoe_encap_ack_hold(struct htoe_vl *v, const struct htoe_hdr *h, uint64_t now)
{
	v->ack_hdr = *h;
	v->ack_wait_ns = now;
	v->ack_wait = true;
}
/* The retry bookkeeping of the last new DATA frame of v, held back while
 * the frame leaves (try_new_frame): done before the next call reaches v's
 * retry state — the next frame of v, an ack, a timer. */
static inline void htoe_encap_sent_settle(struct htoe_vl *v)
{
	if (v->sent_wait) {
		v->sent_wait = false;
		htoe_retry_tx_sent(&v->rt, v->sent_seq, v->sent_ns);
	}
}
void htoe_encap_ack_settle_slow(struct htoe_vl *v);
/* (the frame sent before the ack first: the ack may name it) */
static inline void htoe_encap_ack_settle(struct htoe_vl *v)
{
	htoe_encap_sent_settle(v);
	if (v->ack_wait)
		htoe_encap_ack_settle_slow(v);
}
void htoe_encap_drop_held(struct htoe *b, struct htoe_vl *v);
uint64_t htoe_encap_deadline(const struct htoe *b, const struct htoe_vl *v);
void htoe_vl_drop_queues(struct htoe *b, struct htoe_vl *v, bool keep_unsent_posted);
/* A posted write to global address gaddr (len bytes) on the VL to `node`
 * lost: the loss event (htoe_set_loss_cb), if one is set. */
void htoe_report_lost(struct htoe *b, uint16_t node, uint64_t gaddr, uint64_t len);
/* The local request (unitid, srctag) taken out of v's NP queue if it waits
 * there unframed (the peer has not seen it): true if it did. */
bool htoe_encap_unqueue_np(struct htoe_vl *v, uint8_t unitid, uint8_t srctag);
/* Tell the local side that v's peer restarted (htoe_set_loss_cb): its whole
 * mapped memory is lost. */
void htoe_report_restart(struct htoe *b, const struct htoe_vl *v, uint32_t old_inc,
			 uint32_t new_inc);

#endif
