/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the bridge glue (lib/htoe/htoe.c, htoe_encap.c, htoe_reset.c):
 * small networks of bridges wired by hand, the test acting as every node's
 * local HT side and as the switch.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "htmodel/ht_packet.h"
#include "htmodel/ht_rand.h"
#include "htoe/htoe.h"
#include "htoe/htoe_lease.h"

#define MEM_BASE 0x100000ull
#define MEM_SIZE 0x100000ull
#define MAXN 4
#define US 1000ull

struct tnode {
	uint16_t id;
	struct htoe_map map;
	struct htoe *b;
};

static struct tnode N[MAXN + 1]; /* by node id 1..MAXN */
static unsigned n_nodes;
static uint8_t fbuf[HTOE_FRAME_MAX];

static uint64_t gaddr(uint16_t node, uint64_t off)
{
	return ((uint64_t)node << 32) + off;
}

typedef void (*cfg_fn)(struct htoe_config *c);

static void mk_nodes(unsigned n, cfg_fn tweak)
{
	char err[256];

	n_nodes = n;
	for (uint16_t id = 1; id <= n; id++) {
		struct tnode *t = &N[id];
		struct htoe_config c;

		t->id = id;
		htoe_map_init(&t->map, id);
		for (uint16_t k = 1; k <= n; k++) {
			if (k != id)
				assert_int_equal(htoe_map_add_peer(&t->map, k, NULL, "peer", err,
								   sizeof(err)), 0);
			assert_int_equal(htoe_map_add_range(&t->map, gaddr(k, 0), MEM_SIZE, k,
							    MEM_BASE, "range", err, sizeof(err)),
					 0);
		}
		assert_int_equal(htoe_map_finalize(&t->map, err, sizeof(err)), 0);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = &t->map;
		if (tweak)
			tweak(&c);
		t->b = htoe_new(&c, err, sizeof(err));
		if (!t->b)
			fail_msg("htoe_new: %s", err);
	}
}

static void free_nodes(void)
{
	for (unsigned id = 1; id <= n_nodes; id++)
		htoe_free(N[id].b);
	n_nodes = 0;
}

/* A frame filter: return false to drop the frame. */
typedef bool (*filter_fn)(uint16_t from, const uint8_t *f, size_t len, void *arg);

static unsigned node_of(const uint8_t *f)
{
	return (unsigned)f[4] << 8 | f[5];
}

/* Move every frame every node wants to send (at time now) to its
 * destination, repeatedly until the network is quiet. Returns frames moved. */
static unsigned pump(uint64_t now, unsigned flags, filter_fn filt, void *arg)
{
	unsigned total = 0, moved;

	do {
		moved = 0;
		for (uint16_t id = 1; id <= n_nodes; id++) {
			int len;

			htoe_handle_expiry(N[id].b, now);
			while ((len = htoe_frame_output(N[id].b, fbuf, sizeof(fbuf), now, flags)) > 0) {
				unsigned dst = node_of(fbuf);
				struct htoe_hdr h;

				/* every frame the bridge sends is valid on the wire */
				assert_int_equal(htoe_frame_parse(fbuf, (size_t)len, 9000, &h, NULL), 0);
				moved++;
				if (filt && !filt(id, fbuf, (size_t)len, arg))
					continue;
				assert_true(dst >= 1 && dst <= n_nodes);
				htoe_frame_input(N[dst].b, fbuf, (size_t)len, now);
			}
		}
		total += moved;
	} while (moved);
	return total;
}

/* Bring every VL up (the reset handshake at start). */
static void bring_up(void)
{
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	for (uint16_t a = 1; a <= n_nodes; a++)
		for (uint16_t b = 1; b <= n_nodes; b++)
			if (a != b)
				assert_true(htoe_vl_is_up(N[a].b, b));
}

/* main() runs every test twice: packets offered as bytes
 * (htoe_local_input), then decoded (htoe_local_input_pkt, as app/node does):
 * the two entry points must behave the same. */
static bool use_pkt;

static int local_in(uint16_t id, const struct ht_pkt *p, uint64_t now)
{
	uint8_t b[HT_MAX_PKT_LEN];
	int n = ht_encode(p, b, sizeof(b));

	assert_true(n > 0);
	if (use_pkt)
		return htoe_local_input_pkt(N[id].b, p, now);
	return htoe_local_input(N[id].b, b, (size_t)n, now);
}

static bool local_out(uint16_t id, struct ht_pkt *p, uint64_t now)
{
	uint8_t b[HT_MAX_PKT_LEN];
	int n = htoe_local_output(N[id].b, b, sizeof(b), now);

	assert_true(n >= 0);
	if (n == 0)
		return false;
	assert_int_equal(ht_decode(b, (size_t)n, p), n);
	return true;
}

static void mk_read(struct ht_pkt *p, uint64_t addr, uint8_t unitid, uint8_t tag)
{
	memset(p, 0, sizeof(*p));
	p->dword = 1;
	p->coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(p, HT_K_RDSIZED), 0);
	p->unitid = unitid;
	p->srctag = tag;
	p->count = 15; /* 64 bytes */
	p->addr = addr;
}

static void mk_write(struct ht_pkt *p, uint64_t addr, bool posted, uint8_t unitid, uint8_t tag)
{
	memset(p, 0, sizeof(*p));
	p->dword = 1;
	p->posted = posted;
	p->coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(p, HT_K_WRSIZED), 0);
	p->unitid = unitid;
	p->srctag = posted ? 0 : tag;
	p->count = 15;
	p->addr = addr;
	p->data_len = 64;
	for (unsigned i = 0; i < 64; i++)
		p->data[i] = (uint8_t)(addr + i);
}

/* The local memory target's answer to request q (a plain RdResponse or
 * TgtDone carrying q's UnitID and SrcTag, as the host bridge would). */
static void mk_answer(const struct ht_pkt *q, struct ht_pkt *r)
{
	memset(r, 0, sizeof(*r));
	if (q->kind == HT_K_RDSIZED) {
		assert_int_equal(ht_pkt_set_cmd(r, HT_K_RDRESPONSE), 0);
		r->count = q->count;
		r->data_len = (uint16_t)(4u * (q->count + 1u));
		memset(r->data, 0x5a, r->data_len);
	} else {
		assert_int_equal(ht_pkt_set_cmd(r, HT_K_TGTDONE), 0);
	}
	r->bridge = 1;
	r->unitid = q->unitid;
	r->srctag = q->srctag;
}

/* ------------------------------------------------------------------ tests */

static bool count_data(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct htoe_hdr h;
	unsigned *c = arg;

	(void)from;
	assert_int_equal(htoe_frame_parse(f, len, 9000, &h, NULL), 0);
	if (h.ftype == HTOE_FT_DATA) {
		c[0]++;
		c[1] += h.npkts;
		if (h.npkts > c[2])
			c[2] = h.npkts;
		assert_true(HTOE_HDR_LEN + h.payload_len <= 1500);
	}
	return true;
}

/* 100 posted 64-byte writes become few frames, each within the MTU. */
static void test_packing_and_mtu(void **state)
{
	unsigned c[3] = { 0, 0, 0 };
	struct ht_pkt p;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned i = 0; i < 100; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 10 * US), 0);
	}
	pump(10 * US, HTOE_TX_FLUSH, count_data, c);
	assert_int_equal(c[1], 100);
	/* 72-byte packets: at most 20 fit in 1468 bytes of payload; the
	 * first frame is cut by the initial reserve of credits (16), the rest
	 * come once the receiver grants its share of the pool */
	assert_true(c[0] >= 5 && c[0] <= 7);
	assert_true(c[2] == 20);
	/* node 2's local side gets them in order, at the translated address */
	for (unsigned i = 0; i < 100; i++) {
		assert_true(local_out(2, &p, 10 * US));
		assert_int_equal(p.kind, HT_K_WRSIZED);
		assert_int_equal(p.addr, MEM_BASE + 64u * i);
		assert_int_equal(p.data[0], (uint8_t)(gaddr(2, 64u * i)));
	}
	assert_false(local_out(2, &p, 10 * US));
	free_nodes();
}

/* A partial frame waits for more packets up to flush_ns unless flushed. */
static void test_flush_bound(void **state)
{
	unsigned c[3] = { 0, 0, 0 };
	struct ht_pkt p;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 100 * US), 0);
	assert_int_equal(htoe_next_deadline(N[1].b), 100 * US + 2000);
	pump(100 * US + 1999, 0, count_data, c);
	assert_int_equal(c[0], 0);
	pump(100 * US + 2000, 0, count_data, c);
	assert_int_equal(c[0], 1);
	free_nodes();
}

static void test_unmapped_master_abort(void **state)
{
	struct ht_pkt p, r;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	mk_read(&p, gaddr(9, 0), 1, 7); /* node 9 does not exist */
	assert_int_equal(local_in(1, &p, 0), 0);
	assert_true(local_out(1, &r, 0));
	assert_int_equal(r.kind, HT_K_RDRESPONSE);
	assert_int_equal(r.srctag, 7);
	assert_int_equal(r.unitid, 1);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_MASTER_ABORT);
	assert_int_equal(r.count, 15);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(r.data[i], 0xff);
	/* a posted write to nowhere is counted, nothing comes out */
	mk_write(&p, gaddr(9, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	assert_false(local_out(1, &r, 0));
	assert_int_equal(htoe_get_stats(N[1].b)->master_aborts, 2);
	free_nodes();
}

static void test_local_loopback(void **state)
{
	struct ht_pkt p, q;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	mk_read(&p, gaddr(1, 0x40), 2, 9);
	assert_int_equal(local_in(1, &p, 0), 0);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_RDSIZED);
	assert_int_equal(q.addr, MEM_BASE + 0x40);
	assert_int_equal(q.unitid, 2);
	assert_int_equal(q.srctag, 9);
	assert_int_equal(pump(0, HTOE_TX_FLUSH, NULL, NULL), 0);
	assert_int_equal(htoe_get_stats(N[1].b)->local_loopback, 1);
	free_nodes();
}

/* Two requesters use the same (UnitID, SrcTag) towards node 3: node 3 gives
 * them distinct local tags, and each response returns to its own node with
 * its original tag. */
static void test_tag_remap(void **state)
{
	struct ht_pkt p, q[2], r;

	(void)state;
	mk_nodes(3, NULL);
	bring_up();
	mk_read(&p, gaddr(3, 0x000), 1, 5);
	assert_int_equal(local_in(1, &p, 0), 0);
	mk_read(&p, gaddr(3, 0x100), 1, 5);
	assert_int_equal(local_in(2, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(3, &q[0], 0));
	assert_true(local_out(3, &q[1], 0));
	assert_false(local_out(3, &r, 0));
	for (unsigned i = 0; i < 2; i++)
		assert_true(q[i].unitid >= 8 && q[i].unitid < 9); /* bridge UnitID */
	assert_true(q[0].unitid != q[1].unitid || q[0].srctag != q[1].srctag);
	/* answer in the opposite order */
	for (int i = 1; i >= 0; i--) {
		mk_answer(&q[i], &r);
		r.data[0] = (uint8_t)(q[i].addr >> 8); /* 0x10 or 0x11 */
		assert_int_equal(local_in(3, &r, 0), 0);
	}
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	for (uint16_t id = 1; id <= 2; id++) {
		assert_true(local_out(id, &r, 0));
		assert_int_equal(r.kind, HT_K_RDRESPONSE);
		assert_int_equal(r.unitid, 1);
		assert_int_equal(r.srctag, 5);
		assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
		/* node 1 read offset 0x000, node 2 offset 0x100 */
		assert_int_equal(r.data[0], (uint8_t)((MEM_BASE + (id - 1u) * 0x100u) >> 8));
	}
	free_nodes();
}

static void one_unitid(struct htoe_config *c)
{
	c->n_unitids = 1;
}

/* A full pending table holds requests back (never drops them). */
static void test_pending_table_backpressure(void **state)
{
	struct ht_pkt p, q[40], r;
	unsigned got = 0;

	(void)state;
	mk_nodes(2, one_unitid);
	bring_up();
	for (unsigned i = 0; i < 40; i++) {
		mk_read(&p, gaddr(2, 64u * i), 1 + i / 32, (uint8_t)(i % 32));
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	/* the local side takes what it can; credits flow back as it does */
	for (unsigned more = 1; more;) {
		pump(0, HTOE_TX_FLUSH, NULL, NULL);
		for (more = 0; local_out(2, &q[got], 0); more++)
			got++;
	}
	assert_int_equal(got, 32);
	assert_true(htoe_get_stats(N[2].b)->tag_full > 0);
	/* each answer frees a tag for one more request */
	for (unsigned i = 0; i < 8; i++) {
		mk_answer(&q[i], &r);
		assert_int_equal(local_in(2, &r, 0), 0);
		assert_true(local_out(2, &q[got], 0));
		got++;
	}
	assert_false(local_out(2, &r, 0));
	assert_int_equal(got, 40);
	free_nodes();
}

static void small_queues(struct htoe_config *c)
{
	c->txq_pkts = 4;
	c->stall_timeout_ns = 1000 * US;
	c->np_timeout_ns = 3000 * US;
}

static bool drop_to_2(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	(void)from;
	(void)len;
	(void)arg;
	return node_of(f) != 2;
}

/* A VL without room pushes back on its own traffic only; past the stall
 * timeout its traffic is refused with an error, never held forever. */
static void test_per_vl_backpressure_and_stall(void **state)
{
	struct ht_pkt p, r;
	int rc;

	(void)state;
	mk_nodes(3, small_queues);
	bring_up();
	/* node 2 goes silent: nothing reaches it, so nothing is acked */
	for (unsigned i = 0; i < 4; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	pump(0, HTOE_TX_FLUSH, drop_to_2, NULL);
	mk_write(&p, gaddr(2, 0x400), true, 1, 0);
	assert_int_equal(local_in(1, &p, 10 * US), -EAGAIN);
	assert_false(htoe_local_ready(N[1].b, gaddr(2, 0), HT_VC_P));
	/* node 3 is not affected */
	assert_true(htoe_local_ready(N[1].b, gaddr(3, 0), HT_VC_P));
	mk_write(&p, gaddr(3, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 10 * US), 0);
	/* still refused with backpressure before the stall timeout */
	mk_write(&p, gaddr(2, 0x400), true, 1, 0);
	assert_int_equal(local_in(1, &p, 999 * US), -EAGAIN);
	/* after it: posted is sunk and counted, NP is answered with an error */
	assert_int_equal(local_in(1, &p, 1011 * US), 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->posted_refused, 1);
	/* the stalled VL was reset: its queue drained, it takes traffic
	 * again (for after the reset), and an NP request that cannot be
	 * answered is poisoned at its deadline */
	assert_false(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->resets, 1);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->posted_lost_reset, 4);
	mk_read(&p, gaddr(2, 0), 1, 3);
	rc = local_in(1, &p, 1012 * US);
	assert_int_equal(rc, 0);
	pump(2000 * US, HTOE_TX_FLUSH, drop_to_2, NULL);
	assert_false(local_out(1, &r, 2000 * US));
	pump(4012 * US, HTOE_TX_FLUSH, drop_to_2, NULL);
	assert_true(local_out(1, &r, 4012 * US));
	assert_int_equal(r.srctag, 3);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_MASTER_ABORT);
	free_nodes();
}

/* A reset of VL 1-2 under load poisons exactly the requests on that VL. */
static void test_reset_poisons_only_that_vl(void **state)
{
	struct ht_pkt p, r;
	unsigned poisoned = 0, ok = 0;

	(void)state;
	mk_nodes(3, NULL);
	bring_up();
	for (uint8_t t = 0; t < 4; t++) {
		mk_read(&p, gaddr(2, 64u * t), 1, t);          /* tags 0..3 to node 2 */
		assert_int_equal(local_in(1, &p, 0), 0);
		mk_read(&p, gaddr(3, 64u * t), 1, (uint8_t)(8 + t)); /* tags 8..11 to node 3 */
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 5 * US), 0);
	/* nodes 2 and 3 answer what they got */
	for (uint16_t id = 2; id <= 3; id++) {
		struct ht_pkt q;

		while (local_out(id, &q, 5 * US)) {
			mk_answer(&q, &r);
			assert_int_equal(local_in(id, &r, 5 * US), 0);
		}
	}
	pump(5 * US, HTOE_TX_FLUSH, NULL, NULL);
	while (local_out(1, &r, 5 * US)) {
		if (ht_pkt_rsp_err(&r) == HT_RSP_OK) {
			assert_true(r.srctag >= 8);
			ok++;
		} else {
			assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_TARGET_ABORT);
			assert_true(r.srctag < 4);
			poisoned++;
		}
	}
	assert_int_equal(poisoned, 4);
	assert_int_equal(ok, 4);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->poisoned, 4);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 3)->poisoned, 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 3)->resets, 0);
	/* both ends agree on the new epoch and the VL works again */
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_vl_epoch(N[1].b, 2), htoe_vl_epoch(N[2].b, 1));
	mk_read(&p, gaddr(2, 0), 1, 0);
	assert_int_equal(local_in(1, &p, 6 * US), 0);
	pump(6 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &p, 6 * US));
	free_nodes();
}

static bool drop_all(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	(void)from;
	(void)f;
	(void)len;
	(void)arg;
	return false;
}

static void short_timeout(struct htoe_config *c)
{
	c->np_timeout_ns = 50 * US;
	c->rto_init_ns = 1000 * US; /* no retry activity in this test */
	c->rto_max_ns = 1000 * US;
}

/* An unanswered request is poisoned (master abort) at its deadline; a late
 * answer is dropped. */
static void test_np_timeout_and_late_response(void **state)
{
	struct ht_pkt p, q, r;

	(void)state;
	mk_nodes(2, short_timeout);
	bring_up();
	mk_read(&p, gaddr(2, 0), 1, 4);
	assert_int_equal(local_in(1, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &q, 0));
	assert_false(local_out(1, &r, 49 * US));
	htoe_handle_expiry(N[1].b, 50 * US);
	assert_true(local_out(1, &r, 50 * US));
	assert_int_equal(r.srctag, 4);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_MASTER_ABORT);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->np_timeouts, 1);
	/* node 2 answers late: dropped at node 1, nothing for its requester */
	mk_answer(&q, &r);
	assert_int_equal(local_in(2, &r, 60 * US), 0);
	pump(60 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_false(local_out(1, &r, 60 * US));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->late_responses, 1);
	(void)drop_all;
	free_nodes();
}

static void gbn_mode(struct htoe_config *c)
{
	c->retry_mode = HTOE_RETRY_GBN;
}

/* Frames that must be dropped, each for its reason. */
static void test_drops(void **state)
{
	struct ht_pkt p;
	uint8_t f[HTOE_FRAME_MAX];
	int len;
	struct htoe_hdr h;

	(void)state;
	mk_nodes(3, gbn_mode); /* the paper's Go-Back-N: a gap drops the frame */
	bring_up();
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	len = htoe_frame_output(N[1].b, f, sizeof(f), 0, HTOE_TX_FLUSH);
	assert_true(len > 0);
	assert_int_equal(node_of(f), 2);
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 0), 0);
	/* the same frame again: duplicate */
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 0), -HTOE_DROP_DUP);
	/* to the wrong node */
	assert_int_equal(htoe_frame_input(N[3].b, f, (size_t)len, 0), -HTOE_DROP_NOT_FOR_US);
	/* a bit flipped in the payload */
	f[len - 10] ^= 1;
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 0), -HTOE_DROP_CRC);
	assert_int_equal(htoe_get_stats(N[2].b)->drops[HTOE_DROP_CRC], 1);
	/* a gap: frame seq 2 before seq 1 -> out of order, and a NAK goes out */
	mk_write(&p, gaddr(2, 64), true, 1, 0);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	len = htoe_frame_output(N[1].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH); /* seq 1: lost */
	assert_true(len > 0);
	mk_write(&p, gaddr(2, 128), true, 1, 0);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	len = htoe_frame_output(N[1].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH); /* seq 2 */
	assert_true(len > 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 1 * US),
			 -HTOE_DROP_OUT_OF_ORDER);
	len = htoe_frame_output(N[2].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH);
	assert_true(len > 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)len, 1500, &h, NULL), 0);
	assert_int_equal(h.ftype, HTOE_FT_NAK);
	assert_int_equal(h.ack, 1);
	/* the NAK makes node 1 go back: both writes arrive, in order */
	assert_int_equal(htoe_frame_input(N[1].b, f, (size_t)len, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, NULL, NULL);
	for (unsigned i = 0; i < 3; i++) {
		assert_true(local_out(2, &p, 1 * US));
		assert_int_equal(p.addr, MEM_BASE + 64u * i);
	}
	assert_true(htoe_get_vl_stats(N[1].b, 2)->retransmits >= 1);
	/* a stale epoch */
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 2 * US), 0);
	len = htoe_frame_output(N[1].b, f, sizeof(f), 2 * US, HTOE_TX_FLUSH);
	assert_true(len > 0);
	f[14 + 3]++; /* epoch */
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 2 * US), -HTOE_DROP_CRC);
	assert_int_equal(htoe_frame_parse(f, (size_t)len, 1500, &h, NULL), -HTOE_DROP_CRC);
	/* re-seal so only the epoch is wrong */
	assert_int_equal(htoe_frame_reseal(f, (size_t)len), 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 2 * US), -HTOE_DROP_EPOCH);
	/* an unknown sender */
	f[14 + 3]--;
	f[14 + 4] = 0;
	f[14 + 5] = 77; /* src node 77 */
	assert_int_equal(htoe_frame_reseal(f, (size_t)len), 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 2 * US),
			 -HTOE_DROP_UNKNOWN_PEER);
	free_nodes();
}

static void tiny_pool(struct htoe_config *c)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		c->rx_bufs[vc][0] = 8;
		c->rx_bufs[vc][1] = 8;
	}
	c->reserve = 4;
	c->max_per_vl = 4;
}

/* A sender that ignores the credits it was granted is caught. */
static void test_credit_overrun(void **state)
{
	struct ht_pkt p;
	struct htoe_hdr h;
	uint8_t f[HTOE_FRAME_MAX];
	int off, len;

	(void)state;
	mk_nodes(2, tiny_pool);
	bring_up();
	/* node 2 grants node 1 four P buffers; forge an ACK "from node 2"
	 * granting 100, so that node 1 sends more than node 2 has */
	memset(&h, 0, sizeof(h));
	htoe_map_node_mac(1, h.dst);
	htoe_map_node_mac(2, h.src);
	h.ftype = HTOE_FT_ACK;
	h.epoch = htoe_vl_epoch(N[1].b, 2);
	h.src_node = 2;
	h.dst_node = 1;
	for (unsigned c = 0; c < HTOE_CR__COUNT; c++)
		h.credit[c] = 100;
	off = htoe_hdr_write(&h, f, sizeof(f));
	assert_true(off > 0);
	len = htoe_frame_seal(f, sizeof(f), (size_t)off - HTOE_HDR_LEN, 0);
	assert_true(len > 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, (size_t)len, 0), 0);
	for (unsigned i = 0; i < 10; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	len = htoe_frame_output(N[1].b, f, sizeof(f), 0, HTOE_TX_FLUSH);
	assert_true(len > 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 0), -HTOE_DROP_NO_CREDIT);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->drops[HTOE_DROP_NO_CREDIT], 1);
	free_nodes();
}

/* Credits return even when the ACK carrying them is lost and nothing else
 * flows back: the starved sender probes (CREDIT_REQ) until it hears them. */
static void test_credit_probe(void **state)
{
	struct ht_pkt p;
	struct htoe_hdr h;
	unsigned delivered = 0;
	uint64_t now = 10 * US;
	int len;

	(void)state;
	mk_nodes(2, tiny_pool);
	bring_up();
	for (unsigned i = 0; i < 12; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, now), 0);
	}
	/* 4 credits: 4 writes go, are acknowledged; node 1 is starved */
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	now += 100 * US;
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	while (local_out(2, &p, now))
		delivered++;
	assert_int_equal(delivered, 4);
	/* node 2's local side freed the buffers: its credit update is lost */
	len = htoe_frame_output(N[2].b, fbuf, sizeof(fbuf), now, HTOE_TX_FLUSH);
	assert_true(len > 0);
	assert_int_equal(htoe_frame_parse(fbuf, (size_t)len, 1500, &h, NULL), 0);
	assert_int_equal(h.ftype, HTOE_FT_ACK);
	assert_int_equal(htoe_frame_output(N[2].b, fbuf, sizeof(fbuf), now, HTOE_TX_FLUSH), 0);
	/* nothing else would ever move; the probe recovers */
	for (unsigned round = 0; round < 50 && delivered < 12; round++) {
		now += 100 * US;
		pump(now, HTOE_TX_FLUSH, NULL, NULL);
		while (local_out(2, &p, now))
			delivered++;
	}
	assert_int_equal(delivered, 12);
	assert_true(htoe_get_vl_stats(N[1].b, 2)->credit_probes > 0);
	free_nodes();
}

static void vlan_on(struct htoe_config *c)
{
	c->vlan = true;
	c->vid = 100;
	c->default_pcp = 3;
	c->n_pcp = 1;
	c->pcp[0].node = 2;
	c->pcp[0].pcp = 5;
}

static bool check_pcp(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct htoe_hdr h;

	(void)arg;
	assert_int_equal(htoe_frame_parse(f, len, 9000, &h, NULL), 0);
	assert_true(h.has_vlan);
	assert_int_equal(h.vid, 100);
	assert_int_equal(h.pcp, h.dst_node == 2 ? 5 : 3);
	(void)from;
	return true;
}

static void test_vlan_pcp(void **state)
{
	struct ht_pkt p;

	(void)state;
	mk_nodes(3, vlan_on);
	assert_true(pump(0, HTOE_TX_FLUSH, check_pcp, NULL) > 0);
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	mk_write(&p, gaddr(3, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	assert_true(pump(0, HTOE_TX_FLUSH, check_pcp, NULL) > 0);
	free_nodes();
}

static void test_ctrl_messages(void **state)
{
	uint8_t msg[HTOE_CTRL_MAX + 1], got[HTOE_CTRL_MAX];
	uint16_t from = 0;
	int n;

	(void)state;
	mk_nodes(3, NULL);
	bring_up();
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7);
	assert_int_equal(htoe_ctrl_send(N[1].b, 9, msg, 10), -ENOENT);
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, 0), -EMSGSIZE);
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, HTOE_CTRL_MAX + 1), -EMSGSIZE);
	for (unsigned i = 0; i < HTOE_CTRL_QUEUE; i++)
		assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, 1 + i), 0);
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, 5), -EAGAIN);
	assert_int_equal(htoe_ctrl_send(N[3].b, 2, msg, HTOE_CTRL_MAX), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	/* node 2 got them all: node 1's in order, node 3's too */
	unsigned from1 = 0, from3 = 0;
	while ((n = htoe_ctrl_recv(N[2].b, &from, got, sizeof(got))) > 0) {
		assert_memory_equal(got, msg, (size_t)n);
		if (from == 1) {
			assert_int_equal(n, 1 + from1);
			from1++;
		} else {
			assert_int_equal(from, 3);
			assert_int_equal(n, HTOE_CTRL_MAX);
			from3++;
		}
	}
	assert_int_equal(n, 0);
	/* 17 messages for a receive queue of 16: one is dropped and counted */
	assert_int_equal(from1 + from3, HTOE_CTRL_QUEUE);
	assert_int_equal(htoe_get_stats(N[2].b)->ctrl_rcvd, HTOE_CTRL_QUEUE);
	assert_int_equal(htoe_get_stats(N[2].b)->ctrl_overflow, 1);
	/* a small buffer leaves the message queued */
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, 20), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(htoe_ctrl_recv(N[2].b, &from, got, 10), -ENOSPC);
	assert_int_equal(htoe_ctrl_recv(N[2].b, &from, got, sizeof(got)), 20);
	free_nodes();
}

/* htoe_local_input_pkt: a packet ht_encode refuses is counted as malformed
 * like undecodable bytes; a valid one is taken with its data. */
static void test_local_input_pkt(void **state)
{
	struct ht_pkt p, q;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	mk_write(&p, gaddr(1, 0x40), true, 2, 0);
	p.count = 3; /* data_len 64 disagrees with Count */
	assert_int_equal(htoe_local_input_pkt(N[1].b, &p, 0), -EINVAL);
	assert_int_equal(htoe_get_stats(N[1].b)->local_malformed, 1);
	mk_write(&p, gaddr(1, 0x80), true, 2, 0); /* node 1's own memory: loopback */
	assert_int_equal(htoe_local_input_pkt(N[1].b, &p, 0), 0);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_WRSIZED);
	assert_int_equal(q.addr, MEM_BASE + 0x80);
	assert_memory_equal(q.data, p.data, 64);
	assert_int_equal(htoe_get_stats(N[1].b)->local_loopback, 1);
	free_nodes();
}

/* Lease access check: node 2 exports [MEM_BASE, +64K) with cfg.acl. Before
 * any lease, and for a node without one, a read gets Target Abort and a
 * posted write never reaches node 2's memory (its local side); the lease
 * holder's read and write go through; after the release they no longer do. */
static struct htoe_lease_ep *LEP[4];

static void lease_rounds(unsigned n, uint64_t *now)
{
	for (unsigned i = 0; i < n; i++) {
		for (uint16_t id = 1; id <= 3; id++)
			htoe_lease_pump(LEP[id], N[id].b, *now);
		pump(*now, HTOE_TX_FLUSH, NULL, NULL);
		*now += 1000 * US;
	}
}

/* A 64-byte read from node `from` to gaddr: true if node 2's local side gets
 * it (answered there), false if `from` gets a Target Abort instead. */
static bool acl_read(uint16_t from, uint64_t ga, uint8_t tag, uint64_t now)
{
	struct ht_pkt p, q, r;
	bool reached;

	mk_read(&p, ga, 1, tag);
	assert_int_equal(local_in(from, &p, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	reached = local_out(2, &q, now);
	if (reached) {
		assert_int_equal(q.kind, HT_K_RDSIZED);
		mk_answer(&q, &r);
		assert_int_equal(local_in(2, &r, now), 0);
	}
	pump(now, HTOE_TX_FLUSH, NULL, NULL); /* the answer, or node 2's Target Abort */
	assert_true(local_out(from, &q, now));
	assert_int_equal(q.kind, HT_K_RDRESPONSE);
	assert_int_equal(q.srctag, tag);
	assert_int_equal(ht_pkt_rsp_err(&q), reached ? HT_RSP_OK : HT_RSP_TARGET_ABORT);
	return reached;
}

/* A posted write: true if it reaches node 2's local side. */
static bool acl_write(uint16_t from, uint64_t ga, uint64_t now)
{
	struct ht_pkt p, q;
	bool reached;

	mk_write(&p, ga, true, 1, 0);
	assert_int_equal(local_in(from, &p, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	reached = local_out(2, &q, now);
	if (reached) {
		assert_int_equal(q.kind, HT_K_WRSIZED);
		assert_memory_equal(q.data, p.data, 64);
	}
	assert_false(local_out(2, &q, now));
	return reached;
}

static void test_lease_acl(void **state)
{
	struct htoe_lease_info info;
	char err[256];
	uint64_t now = 0, ga;
	int h;

	(void)state;
	mk_nodes(3, NULL);
	bring_up();
	for (uint16_t id = 1; id <= 3; id++) {
		struct htoe_lease_cfg lc;

		htoe_lease_cfg_defaults(&lc);
		lc.node_id = id;
		lc.session = id;
		lc.map = &N[id].map;
		if (id == 2) {
			lc.export_addr = MEM_BASE;
			lc.export_size = 0x10000;
			lc.acl = true;
		}
		LEP[id] = htoe_lease_new(&lc, err, sizeof(err));
		assert_non_null(LEP[id]);
	}
	lease_rounds(1, &now);
	/* nobody holds a lease: the export is closed, the rest of node 2's
	 * memory is not protected */
	assert_false(acl_read(1, gaddr(2, 0x40), 3, now));
	assert_false(acl_write(1, gaddr(2, 0x40), now));
	assert_true(acl_read(1, gaddr(2, 0x10000), 3, now));
	assert_true(acl_write(3, gaddr(2, 0x10040), now));
	assert_int_equal(htoe_get_stats(N[2].b)->acl_denied, 2);

	h = htoe_lease_request(LEP[1], 2, 4096, 0, now);
	assert_true(h >= 0);
	lease_rounds(20, &now);
	assert_int_equal(htoe_lease_get(LEP[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	ga = gaddr(2, info.offset);
	assert_int_equal(info.gaddr, ga);
	/* the holder: its whole range, not a byte beyond */
	assert_true(acl_read(1, ga, 4, now));
	assert_true(acl_read(1, ga + 4096 - 64, 5, now));
	assert_true(acl_write(1, ga + 0x40, now));
	assert_false(acl_read(1, ga + 4096, 6, now));
	/* another node: refused */
	assert_false(acl_read(3, ga, 7, now));
	assert_false(acl_write(3, ga + 0x40, now));
	assert_int_equal(htoe_get_stats(N[2].b)->acl_denied, 5);

	/* released: the former holder is refused again */
	assert_int_equal(htoe_lease_release(LEP[1], h, now), 0);
	lease_rounds(20, &now);
	assert_int_equal(htoe_lease_get(LEP[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_RELEASED);
	assert_false(acl_read(1, ga, 8, now));
	assert_false(acl_write(1, ga + 0x40, now));
	assert_int_equal(htoe_get_stats(N[2].b)->acl_denied, 7);
	for (uint16_t id = 1; id <= 3; id++) {
		assert_int_equal(htoe_check_invariants(N[id].b, err, sizeof(err)), 0);
		htoe_lease_free(LEP[id]);
	}
	free_nodes();
}

/* htoe_acl_* argument checks and the table's own bookkeeping. */
static void test_acl_api(void **state)
{
	(void)state;
	mk_nodes(2, NULL);
	assert_int_equal(htoe_acl_protect(N[1].b, UINT64_MAX, 2), -EINVAL);
	assert_int_equal(htoe_acl_set(N[1].b, 2, 0, 0, HTOE_ACL_READ), -EINVAL);
	assert_int_equal(htoe_acl_set(N[1].b, 2, 0, 64, 0), -EINVAL);
	assert_int_equal(htoe_acl_set(N[1].b, 2, 0, 64, 4), -EINVAL);
	for (unsigned i = 0; i < HTOE_ACL_MAX; i++)
		assert_int_equal(htoe_acl_set(N[1].b, 2, 64ull * i, 64, HTOE_ACL_READ), 0);
	assert_int_equal(htoe_acl_set(N[1].b, 2, 0, 64, HTOE_ACL_WRITE), 0); /* replaces */
	assert_int_equal(htoe_acl_set(N[1].b, 3, 0, 64, HTOE_ACL_READ), -ENOSPC);
	assert_int_equal(htoe_acl_clear(N[1].b, 2, 0, 64), 0);
	assert_int_equal(htoe_acl_clear(N[1].b, 2, 0, 64), -ENOENT);
	assert_int_equal(htoe_acl_set(N[1].b, 3, 0, 64, HTOE_ACL_READ), 0);
	free_nodes();
}

static void test_config_errors(void **state)
{
	struct htoe_config c;
	struct htoe_map m;
	char err[256];

	(void)state;
	htoe_map_init(&m, 1);
	assert_int_equal(htoe_map_add_range(&m, 0, 4096, 1, 0, "r", err, sizeof(err)), 0);
	assert_int_equal(htoe_map_finalize(&m, err, sizeof(err)), 0);
	htoe_config_defaults(&c);
	c.node_id = 1;
	c.map = &m;
	c.mtu = 9001;
	assert_null(htoe_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "mtu 9001"));
	c.mtu = 1500;
	c.node_id = 2;
	assert_null(htoe_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "node 1"));
	c.node_id = 1;
	c.unitid_base = 30;
	c.n_unitids = 2;
	assert_null(htoe_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "unitid"));
	/* a translation that would break the 64-byte rules */
	struct htoe_map m2;

	htoe_map_init(&m2, 1);
	assert_int_equal(htoe_map_add_range(&m2, 0x1000, 4096, 1, 0x2020, "cfg:7 [map] range0",
					    err, sizeof(err)), 0);
	assert_int_equal(htoe_map_finalize(&m2, err, sizeof(err)), 0);
	c.unitid_base = 8;
	c.n_unitids = 1;
	c.map = &m2;
	assert_null(htoe_new(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "cfg:7 [map] range0"));
	assert_non_null(strstr(err, "multiples of 64"));
}

/* ---------------------------------------------------- selective retry */

static void inv_ok(void)
{
	char err[256];

	for (uint16_t id = 1; id <= n_nodes; id++)
		if (htoe_check_invariants(N[id].b, err, sizeof(err)) != 0)
			fail_msg("node %u: %s", id, err);
}

/* An old peer: its parser predates the SACK flag and drops every frame
 * that carries it as reserved. */
static bool old_peer_2(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct htoe_hdr h;

	(void)from;
	(void)arg;
	assert_int_equal(htoe_frame_parse(f, len, 9000, &h, NULL), 0);
	return !(node_of(f) == 2 && h.sack);
}

/* Replace node id's bridge by one with mode m and initial epoch e. */
static void renew_node(uint16_t id, enum htoe_retry_mode m, uint8_t e)
{
	struct htoe_config c;
	char err[128];

	htoe_free(N[id].b);
	htoe_config_defaults(&c);
	c.node_id = id;
	htoe_map_node_mac(id, c.mac);
	c.map = &N[id].map;
	c.retry_mode = m;
	c.epoch = e;
	N[id].b = htoe_new(&c, err, sizeof(err));
	assert_non_null(N[id].b);
}

/* Both offer selective retry: it is used; one GBN end: both use GBN. */
static void test_sel_negotiation(void **state)
{
	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->selective, 1);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->selective, 1);
	free_nodes();

	mk_nodes(2, NULL);
	renew_node(2, HTOE_RETRY_GBN, 0);
	bring_up();
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->selective, 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->selective, 0);
	/* a warm reset negotiates again, with the same outcome */
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 10 * US), 0);
	pump(10 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->selective, 0);
	free_nodes();
}

/* A peer that predates the flag drops our RESETs that offer selective
 * retry: the handshake still completes (a later copy without the offer)
 * and the VL uses Go-Back-N; traffic flows. */
static void test_sel_old_peer(void **state)
{
	struct ht_pkt p;
	uint64_t t = 0;

	(void)state;
	mk_nodes(2, NULL);
	/* node 1 is ahead (its RESET must be the one adopted); node 2 is the
	 * old peer (Go-Back-N, and the filter drops what it cannot parse) */
	renew_node(1, HTOE_RETRY_SELECTIVE, 100);
	renew_node(2, HTOE_RETRY_GBN, 0);
	for (int i = 0; i < 400 && !(htoe_vl_is_up(N[1].b, 2) && htoe_vl_is_up(N[2].b, 1)); i++) {
		pump(t, HTOE_TX_FLUSH, old_peer_2, NULL);
		t += 1000 * US;
	}
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_int_equal(htoe_vl_epoch(N[2].b, 1), 101);
	assert_true(htoe_get_vl_stats(N[2].b, 1)->drops[HTOE_DROP_EPOCH] > 0 ||
		    htoe_get_vl_stats(N[1].b, 2)->drops[HTOE_DROP_EPOCH] > 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->selective, 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->selective, 0);
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, t), 0);
	pump(t, HTOE_TX_FLUSH, old_peer_2, NULL);
	assert_true(local_out(2, &p, t));
	assert_int_equal(p.addr, MEM_BASE);
	inv_ok();
	free_nodes();
}

/* Node 1 writes 64-byte block i at node 2 and frames it into f at 1 us. */
static int frame_write(unsigned i, uint8_t *f)
{
	struct ht_pkt p;
	int len;

	mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	len = htoe_frame_output(N[1].b, f, HTOE_FRAME_MAX, 1 * US, HTOE_TX_FLUSH);
	assert_true(len > 0);
	return len;
}

/* A gap in selective mode: the frame after it is held (not delivered, its
 * buffers in use), the peer learns it from the SACK block and resends only
 * the missing frame; both writes arrive once, in order. */
static void test_sel_gap(void **state)
{
	struct ht_pkt p;
	uint8_t f[HTOE_FRAME_MAX];
	int len;
	struct htoe_hdr h;
	const uint8_t *pl;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned i = 0; i < 2; i++)
		len = frame_write(i, f); /* seq 0 is lost, seq 1 arrives */
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 2 * US), 0);
	assert_false(local_out(2, &p, 2 * US)); /* held, not delivered */
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->rx_held, 1);
	inv_ok();
	/* a copy of the held frame is a duplicate */
	assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 2 * US), -HTOE_DROP_DUP);
	/* node 2 answers with a NAK carrying the SACK block */
	len = htoe_frame_output(N[2].b, f, sizeof(f), 2 * US, HTOE_TX_FLUSH);
	assert_true(len > 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)len, 1500, &h, &pl), 0);
	assert_int_equal(h.ftype, HTOE_FT_NAK);
	assert_true(h.sack);
	assert_int_equal(h.ack, 0);
	assert_int_equal(h.payload_len, 8);
	assert_int_equal(pl[0], 1);
	assert_int_equal(pl[1], 1);
	assert_int_equal(pl[4], 0x40); /* offset 1: seq 1 held */
	assert_int_equal(htoe_frame_input(N[1].b, f, (size_t)len, 3 * US), 0);
	/* node 1 resends seq 0 only (once the reordering window has passed) */
	unsigned n = pump(100 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(n > 0);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(local_out(2, &p, 100 * US));
		assert_int_equal(p.addr, MEM_BASE + 64u * i);
	}
	assert_false(local_out(2, &p, 100 * US));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->retransmits, 1);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->sacks_rcvd, 1);
	inv_ok();
	free_nodes();
}

/* A VL reset while frames are held frees their buffers. */
static void test_sel_reset_while_held(void **state)
{
	struct ht_pkt p;
	uint8_t f[HTOE_FRAME_MAX];
	int len = 0;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned i = 0; i < 4; i++) {
		len = frame_write(i, f);
		if (i >= 2) /* 0 and 1 lost, 2 and 3 held */
			assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 1 * US), 0);
	}
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->rx_held, 2);
	inv_ok();
	assert_int_equal(htoe_vl_reset(N[2].b, 1, false, 2 * US), 0);
	inv_ok();
	pump(2 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->selective, 1);
	assert_false(local_out(2, &p, 2 * US)); /* nothing out of order */
	inv_ok();
	free_nodes();
}

/* Forged ACK/NAK frames with random SACK blocks and acks (valid CRC, right
 * epoch: the worst the wire can do without the key) while frames are
 * outstanding: never a broken invariant, and the real traffic still
 * completes exactly once, in order. */
static void test_sel_forged_sacks(void **state)
{
	struct ht_pkt p;
	uint8_t f[HTOE_FRAME_MAX];
	struct ht_rand rng;
	struct htoe_hdr h;
	unsigned got = 0;

	(void)state;
	ht_rand_seed(&rng, 42);
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned i = 0; i < 8; i++)
		frame_write(i, f); /* 8 frames outstanding, all lost */
	for (unsigned k = 0; k < 2000; k++) {
		uint8_t blk[HTOE_SACK_MAX_LEN];
		unsigned words = 1 + ht_rand_below(&rng, 4);

		memset(&h, 0, sizeof(h));
		htoe_map_node_mac(1, h.dst);
		htoe_map_node_mac(2, h.src);
		h.ftype = ht_rand_below(&rng, 2) ? HTOE_FT_ACK : HTOE_FT_NAK;
		h.sack = true;
		h.epoch = htoe_vl_epoch(N[1].b, 2);
		h.src_node = 2;
		h.dst_node = 1;
		/* una (0) or beyond what was sent: a forged ack inside the
		 * window would acknowledge frames, which only MACsec can stop */
		h.ack = ht_rand_below(&rng, 2) ? 0 : (uint16_t)(9 + ht_rand_below(&rng, 30000));
		for (unsigned i = 0; i < 4 + 4 * words; i++)
			blk[i] = (uint8_t)ht_rand_below(&rng, 256);
		blk[0] = ht_rand_below(&rng, 8) ? 1 : blk[0];
		blk[1] = ht_rand_below(&rng, 8) ? (uint8_t)words : blk[1];
		blk[2] &= ht_rand_below(&rng, 8) ? 1 : 0xFF;
		blk[3] = ht_rand_below(&rng, 8) ? 0 : blk[3];
		int off = htoe_hdr_write(&h, f, sizeof(f));
		assert_true(off > 0);
		memcpy(f + off, blk, 4 + 4 * words);
		int len = htoe_frame_seal(f, sizeof(f), (size_t)off - HTOE_HDR_LEN, 4 + 4 * words);
		assert_true(len > 0);
		htoe_frame_input(N[1].b, f, (size_t)len, 2 * US + k);
		inv_ok();
		/* node 1 may resend: those frames go nowhere */
		while (htoe_frame_output(N[1].b, f, sizeof(f), 2 * US + k, HTOE_TX_FLUSH) > 0)
			;
		htoe_handle_expiry(N[1].b, 2 * US + k);
	}
	/* the real peer is heard from now on: everything arrives, in order */
	for (uint64_t t = 10000 * US; t < 400000 * US && got < 8; t += 1000 * US) {
		pump(t, HTOE_TX_FLUSH, NULL, NULL);
		while (local_out(2, &p, t)) {
			assert_int_equal(p.addr, MEM_BASE + 64u * got);
			got++;
		}
	}
	assert_int_equal(got, 8);
	inv_ok();
	free_nodes();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packing_and_mtu),
		cmocka_unit_test(test_flush_bound),
		cmocka_unit_test(test_unmapped_master_abort),
		cmocka_unit_test(test_local_loopback),
		cmocka_unit_test(test_tag_remap),
		cmocka_unit_test(test_pending_table_backpressure),
		cmocka_unit_test(test_per_vl_backpressure_and_stall),
		cmocka_unit_test(test_reset_poisons_only_that_vl),
		cmocka_unit_test(test_np_timeout_and_late_response),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_credit_overrun),
		cmocka_unit_test(test_credit_probe),
		cmocka_unit_test(test_vlan_pcp),
		cmocka_unit_test(test_ctrl_messages),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_local_input_pkt),
		cmocka_unit_test(test_lease_acl),
		cmocka_unit_test(test_acl_api),
		cmocka_unit_test(test_sel_negotiation),
		cmocka_unit_test(test_sel_old_peer),
		cmocka_unit_test(test_sel_gap),
		cmocka_unit_test(test_sel_reset_while_held),
		cmocka_unit_test(test_sel_forged_sacks),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	use_pkt = true;
	return r + cmocka_run_group_tests(tests, NULL, NULL);
}
