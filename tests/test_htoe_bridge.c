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
#include "htoe/htoe_retry.h"   /* HTOE_SACK_MAX_LEN: a forged SACK block */

#define MEM_BASE 0x100000ull
#define MEM_SIZE 0x100000ull
#define MAXN 40
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

/* Incarnation of the next bridge mk_node() makes (0: none; else it grows
 * by one per bridge made, so that a remade node has a new one). */
static uint32_t next_inc;

/* Ranges mk_node() adds to every node's map besides gaddr(k, *). */
static struct {
	uint64_t gaddr, size, raddr;
	uint16_t node;
} xr[2];
static unsigned n_xr;

static void mk_node(uint16_t id, unsigned n, cfg_fn tweak)
{
	char err[256];

	{
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
		for (unsigned k = 0; k < n_xr; k++)
			assert_int_equal(htoe_map_add_range(&t->map, xr[k].gaddr, xr[k].size,
							    xr[k].node, xr[k].raddr, "extra",
							    err, sizeof(err)),
					 0);
		assert_int_equal(htoe_map_finalize(&t->map, err, sizeof(err)), 0);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = &t->map;
		if (next_inc) {
			c.incarnation = next_inc++;
			for (unsigned k = 0; k < sizeof(c.nonce_key); k++)
				c.nonce_key[k] = (uint8_t)(c.incarnation * 31u + k);
		}
		if (tweak)
			tweak(&c);
		t->b = htoe_new(&c, err, sizeof(err));
		if (!t->b)
			fail_msg("htoe_new: %s", err);
	}
}

static void mk_nodes(unsigned n, cfg_fn tweak)
{
	n_nodes = n;
	for (uint16_t id = 1; id <= n; id++)
		mk_node(id, n, tweak);
}

static void free_nodes(void)
{
	for (unsigned id = 1; id <= n_nodes; id++)
		htoe_free(N[id].b);
	n_nodes = 0;
	next_inc = 0;
}

/* A frame filter: return false to drop the frame. */
typedef bool (*filter_fn)(uint16_t from, const uint8_t *f, size_t len, void *arg);

static unsigned node_of(const uint8_t *f)
{
	return (unsigned)f[4] << 8 | f[5];
}

static uint64_t lap_unchecked(void *arg, const struct htoe_hdr *h, uint64_t prev[2])
{
	(void)arg;
	(void)h;
	(void)prev;
	return HTOE_LAP_UNCHECKED;
}

/* Parse a frame a bridge sent: every check but the CRC, which covers the
 * sequence laps that only its receiver knows (that one checks it). */
static int parse_sent(const uint8_t *f, size_t len, struct htoe_hdr *h)
{
	return htoe_frame_parse_lap(f, len, 9000, h, NULL, NULL, lap_unchecked, NULL);
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
				assert_int_equal(parse_sent(fbuf, (size_t)len, &h), 0);
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
	/* held by a call without HTOE_TX_FLUSH, a partial frame leaves at the
	 * next call with it, before its flush time (its VL is not set aside
	 * until then) */
	mk_write(&p, gaddr(2, 64), true, 1, 1);
	assert_int_equal(local_in(1, &p, 200 * US), 0);
	pump(200 * US + 10, 0, count_data, c);
	assert_int_equal(c[0], 1);
	pump(200 * US + 20, HTOE_TX_FLUSH, count_data, c);
	assert_int_equal(c[0], 2);
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

/* The address translation may change whether a request needs the 0x3E
 * address-extension prefix (addresses of 40 bits and more): both ways, the
 * request reaches node 2's memory at the translated address with its data,
 * and the answer comes back to the requester with its own tags. */
static void test_address_prefix(void **state)
{
	const uint64_t g_short = 0x7000000000ull;          /* < 2^40: no prefix */
	const uint64_t g_long = 0x30000000000ull;          /* >= 2^40: prefix */
	const uint64_t r_long = 0x1230000000000ull, r_short = 0x80000ull;
	struct ht_pkt p, q, r;

	(void)state;
	n_xr = 2;
	xr[0].gaddr = g_short; xr[0].size = 0x10000; xr[0].node = 2; xr[0].raddr = r_long;
	xr[1].gaddr = g_long; xr[1].size = 0x10000; xr[1].node = 2; xr[1].raddr = r_short;
	mk_nodes(2, NULL);
	n_xr = 0;
	bring_up();
	mk_read(&p, g_short + 0x40, 3, 7);
	assert_int_equal(local_in(1, &p, 0), 0);
	mk_write(&p, g_long + 0x80, true, 3, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &q, 0)); /* the posted write first */
	assert_int_equal(q.kind, HT_K_WRSIZED);
	assert_int_equal(q.addr, r_short + 0x80);
	assert_int_equal(q.data_len, 64);
	assert_int_equal(q.data[1], (uint8_t)(g_long + 0x80 + 1));
	assert_true(local_out(2, &q, 0));
	assert_int_equal(q.kind, HT_K_RDSIZED);
	assert_int_equal(q.addr, r_long + 0x40);
	assert_int_equal(q.count, 15);
	mk_answer(&q, &r);
	assert_int_equal(local_in(2, &r, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &r, 0));
	assert_int_equal(r.kind, HT_K_RDRESPONSE);
	assert_int_equal(r.unitid, 3);
	assert_int_equal(r.srctag, 7);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
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

/* A VL whose queue fills at time 0 (local traffic before the VL is up, as
 * in the simulator, whose clock starts at 0) pushes back; it has not been
 * stalled for the stall timeout (it was refused: 0 - 1 wrapped). */
static void test_full_at_time_zero_pushes_back(void **state)
{
	struct ht_pkt p;

	(void)state;
	mk_nodes(2, small_queues);
	for (unsigned i = 0; i < 4; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	mk_write(&p, gaddr(2, 0x400), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), -EAGAIN);
	assert_int_equal(local_in(1, &p, 0), -EAGAIN);
	assert_int_equal(local_in(1, &p, 999 * US), -EAGAIN);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->posted_refused, 0);
	/* up: the queue drains and the write is taken */
	bring_up();
	pump(1000 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(local_in(1, &p, 1000 * US), 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->posted_refused, 0);
	free_nodes();
}

static void mk_flush(struct ht_pkt *p, uint8_t unitid, uint8_t tag)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(ht_pkt_set_cmd(p, HT_K_FLUSH), 0);
	p->unitid = unitid;
	p->srctag = tag;
}

/* A Flush issued while posted writes wait on a VL that is not up (before
 * its handshake, or during a reset) goes behind them and is answered only
 * once node 2's side has them; a VL whose NP queue stays full holds a Flush
 * back only for the stall timeout, then it is answered with an error. */
static void test_flush_behind_unsent_and_stalled(void **state)
{
	struct ht_pkt p, q, r;
	bool wrote = false, flushed = false;

	(void)state;
	mk_nodes(2, small_queues);
	mk_write(&p, gaddr(2, 0x40), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	mk_flush(&p, 1, 5);
	assert_int_equal(local_in(1, &p, 0), 0);
	assert_false(local_out(1, &r, 0)); /* not answered while the write waits */
	bring_up();
	while (local_out(2, &q, 0)) {
		if (q.kind == HT_K_WRSIZED) {
			assert_false(flushed); /* the write comes first */
			wrote = true;
		} else {
			assert_int_equal(q.kind, HT_K_FLUSH);
			flushed = true;
			mk_answer(&q, &r);
			assert_int_equal(local_in(2, &r, 0), 0);
		}
	}
	assert_true(wrote && flushed);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &r, 0));
	assert_int_equal(r.kind, HT_K_TGTDONE);
	assert_int_equal(r.srctag, 5);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
	free_nodes();

	/* not up, a posted write, and the NP queue full (4 reads) */
	mk_nodes(2, small_queues);
	mk_write(&p, gaddr(2, 0x40), true, 1, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	for (uint8_t t = 0; t < 4; t++) {
		mk_read(&p, gaddr(2, 64u * t), 1, t);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	mk_flush(&p, 1, 6);
	assert_int_equal(local_in(1, &p, 10 * US), -EAGAIN);
	assert_int_equal(local_in(1, &p, 1009 * US), -EAGAIN);
	assert_false(local_out(1, &r, 1009 * US));
	assert_int_equal(local_in(1, &p, 1011 * US), 0);
	assert_true(local_out(1, &r, 1011 * US));
	assert_int_equal(r.kind, HT_K_TGTDONE);
	assert_int_equal(r.srctag, 6);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_TARGET_ABORT);
	free_nodes();
}

/* a pool with a reserve for many peers */
static void many_peers(struct htoe_config *c)
{
	c->reserve = 4;
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		c->rx_bufs[vc][0] = c->rx_bufs[vc][1] = 4 * MAXN + 64;
}

/* A Flush after posted writes to more peers than one UnitID has SrcTags
 * (32) is forwarded to every one of them (a second UnitID carries the rest)
 * and answered once all have answered; it was refused for ever before. */
static void test_flush_many_peers(void **state)
{
	struct ht_pkt p, q, r;
	unsigned writes = 0, flushes = 0;

	(void)state;
	mk_nodes(MAXN, many_peers);
	bring_up();
	for (uint16_t k = 2; k <= MAXN; k++) {
		mk_write(&p, gaddr(k, 0x40), true, 1, 0);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	mk_flush(&p, 1, 7);
	assert_int_equal(local_in(1, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	for (uint16_t k = 2; k <= MAXN; k++) {
		while (local_out(k, &q, 0)) {
			if (q.kind == HT_K_WRSIZED) {
				writes++;
				continue;
			}
			assert_int_equal(q.kind, HT_K_FLUSH);
			flushes++;
			mk_answer(&q, &r);
			assert_int_equal(local_in(k, &r, 0), 0);
		}
	}
	assert_int_equal(writes, MAXN - 1);
	assert_int_equal(flushes, MAXN - 1);
	assert_false(local_out(1, &r, 0)); /* no answer before the peers answered */
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &r, 0));
	assert_int_equal(r.kind, HT_K_TGTDONE);
	assert_int_equal(r.srctag, 7);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
	assert_false(local_out(1, &r, 0));
	free_nodes();
}

static bool drop_to_2(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	(void)from;
	(void)len;
	(void)arg;
	return node_of(f) != 2;
}

/* Counts the loss events (htoe_set_loss_cb) in *ctx. */
static void count_loss(void *ctx, const struct htoe_loss *l)
{
	(void)l;
	(*(unsigned *)ctx)++;
}

/* A VL without room pushes back on its own traffic only; past the stall
 * timeout its traffic is refused with an error, never held forever. */
static void test_per_vl_backpressure_and_stall(void **state)
{
	struct ht_pkt p, r;
	unsigned lost = 0;
	int rc;

	(void)state;
	mk_nodes(3, small_queues);
	bring_up();
	htoe_set_loss_cb(N[1].b, count_loss, &lost);
	/* node 2 goes silent: nothing reaches it, so nothing is acked */
	for (unsigned i = 0; i < 4; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 0), 0);
	}
	pump(0, HTOE_TX_FLUSH, drop_to_2, NULL);
	mk_write(&p, gaddr(2, 0x400), true, 1, 0);
	assert_int_equal(local_in(1, &p, 10 * US), -EAGAIN);
	/* node 3 is not affected */
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
	/* and each of the five writes lost was reported: the four the reset
	 * dropped, the one refused (taken, so its requester must be told) */
	assert_int_equal(lost, 5);
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

/* Requests queued while their VL is being reset wait for the handshake; one
 * that times out meanwhile is answered with an error and must then never be
 * sent: each non-posted request gets exactly one outcome (an error, and
 * the peer never sees it; or the peer's answer), and a posted write queued
 * meanwhile that nobody reported lost reaches the peer exactly once. */
static void test_queued_while_resetting_one_outcome(void **state)
{
	struct ht_pkt p, q, r;
	unsigned answers[3] = { 0, 0, 0 }, errors[3] = { 0, 0, 0 }, seen[3] = { 0, 0, 0 };
	unsigned posted_seen = 0, lost = 0;

	(void)state;
	mk_nodes(2, short_timeout);
	bring_up();
	htoe_set_loss_cb(N[1].b, count_loss, &lost);
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, drop_all, NULL); /* the first RESET is lost */
	assert_false(htoe_vl_is_up(N[1].b, 2));
	mk_read(&p, gaddr(2, 0), 1, 1);
	assert_int_equal(local_in(1, &p, 2 * US), 0);
	mk_write(&p, gaddr(2, 64), false, 1, 2);
	assert_int_equal(local_in(1, &p, 2 * US), 0);
	mk_write(&p, gaddr(2, 128), true, 1, 0);
	assert_int_equal(local_in(1, &p, 2 * US), 0);
	/* np_timeout passes with the VL still down: both requests poisoned */
	pump(60 * US, HTOE_TX_FLUSH, drop_all, NULL);
	assert_false(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->np_timeouts, 2);
	/* the RESET goes again and the VL comes up; node 2 answers what it got */
	pump(1100 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	while (local_out(2, &q, 1100 * US)) {
		if (q.kind == HT_K_WRSIZED && q.posted) {
			posted_seen++;
			continue;
		}
		/* (node 2 sees its own tags: the request by its address) */
		assert_true(q.addr == MEM_BASE || q.addr == MEM_BASE + 64);
		seen[1 + (q.addr - MEM_BASE) / 64]++;
		mk_answer(&q, &r);
		assert_int_equal(local_in(2, &r, 1100 * US), 0);
	}
	pump(1100 * US, HTOE_TX_FLUSH, NULL, NULL);
	while (local_out(1, &r, 1100 * US)) {
		assert_true(r.srctag >= 1 && r.srctag <= 2);
		if (ht_pkt_rsp_err(&r) == HT_RSP_OK)
			answers[r.srctag]++;
		else
			errors[r.srctag]++;
	}
	for (unsigned t = 1; t <= 2; t++) {
		assert_int_equal(answers[t] + errors[t], 1);      /* answered once */
		assert_int_equal(seen[t], answers[t]);            /* executed only if answered OK */
	}
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->late_responses, 0);
	assert_int_equal(posted_seen + lost, 1);
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

/* Every class: bufs receive buffers, per_vl of them for each VL (reserve
 * and cap). */
static void pool_sized(struct htoe_config *c, unsigned bufs, unsigned per_vl)
{
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		c->rx_bufs[vc][0] = (uint16_t)bufs;
		c->rx_bufs[vc][1] = (uint16_t)bufs;
	}
	c->reserve = per_vl;
	c->max_per_vl = per_vl;
}

static void tiny_pool(struct htoe_config *c)
{
	pool_sized(c, 8, 4);
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
	assert_int_equal(htoe_get_stats(N[1].b)->ctrl_refused, 1);
	/* and on the VL whose queue was full, not on another */
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->ctrl_refused, 1);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 3)->ctrl_refused, 0);
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

/* The type of the next frame node `id` sends at `now` (0: none), which is
 * delivered. */
static unsigned next_ftype(uint16_t id, uint64_t now, unsigned flags)
{
	struct htoe_hdr h;
	int len = htoe_frame_output(N[id].b, fbuf, sizeof(fbuf), now, flags);

	if (len <= 0)
		return 0;
	assert_int_equal(parse_sent(fbuf, (size_t)len, &h), 0);
	htoe_frame_input(N[node_of(fbuf)].b, fbuf, (size_t)len, now);
	return h.ftype;
}

/* Data never starves a control message: with a whole window of frames to
 * resend (go-back after a timeout), a CTRL message queued now is the next
 * frame, so a driver with room for one frame sends it; HTOE_TX_CTRL_ONLY
 * (a driver's control slice of a burst) gives it and then no data. */
static void test_ctrl_ahead_of_data(void **state)
{
	const uint8_t msg[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	struct ht_pkt p;
	uint64_t now = 0;

	(void)state;
	mk_nodes(2, gbn_mode);
	bring_up();
	/* eight frames of posted writes that node 2 never gets */
	for (unsigned i = 0; i < 8; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, now), 0);
		assert_int_equal(pump(now, HTOE_TX_FLUSH, drop_all, NULL), 1);
	}
	/* the retransmission timer: all eight are to be sent again */
	now = 1000 * 1000 * US;
	htoe_handle_expiry(N[1].b, now);
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, sizeof(msg)), 0);
	assert_int_equal(next_ftype(1, now, HTOE_TX_FLUSH), HTOE_FT_CTRL);
	assert_int_equal(next_ftype(1, now, HTOE_TX_FLUSH), HTOE_FT_DATA);
	/* the control slice: the message, then nothing though data waits */
	assert_int_equal(htoe_ctrl_send(N[1].b, 2, msg, sizeof(msg)), 0);
	assert_int_equal(next_ftype(1, now, HTOE_TX_FLUSH | HTOE_TX_CTRL_ONLY), HTOE_FT_CTRL);
	assert_int_equal(next_ftype(1, now, HTOE_TX_FLUSH | HTOE_TX_CTRL_ONLY), 0);
	assert_int_equal(next_ftype(1, now, HTOE_TX_FLUSH), HTOE_FT_DATA);
	/* the rest goes through: node 2 gets both messages and every write */
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(htoe_get_stats(N[2].b)->ctrl_rcvd, 2);
	assert_int_equal(htoe_get_stats(N[1].b)->ctrl_sent, 2);
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

/* Node 1's frames at time now, in order, into fr (not delivered). */
static unsigned grab_frames(uint8_t (*fr)[HTOE_FRAME_MAX], size_t *len, unsigned max,
			    uint64_t now)
{
	unsigned n = 0;
	int l;

	while (n < max && (l = htoe_frame_output(N[1].b, fr[n], HTOE_FRAME_MAX, now,
						 HTOE_TX_FLUSH)) > 0)
		len[n++] = (size_t)l;
	return n;
}

/* Node 1's frames at time now are fa[0..na), byte for byte: delivered to
 * node 2, then what follows its acknowledgement (the first frames are those
 * of the credits node 2 gave at start). */
static void frames_match_deliver(uint8_t (*fa)[HTOE_FRAME_MAX], const size_t *la, unsigned na,
				 uint64_t now)
{
	static uint8_t fb[8][HTOE_FRAME_MAX];
	size_t lb[8];
	unsigned nb = grab_frames(fb, lb, 8, now);

	assert_true(na >= 1);
	assert_int_equal(na, nb);
	for (unsigned i = 0; i < na; i++) {
		assert_int_equal(la[i], lb[i]);
		assert_memory_equal(fa[i], fb[i], la[i]);
	}
	for (unsigned i = 0; i < nb; i++)
		assert_int_equal(htoe_frame_input(N[2].b, fb[i], lb[i], now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
}

/* The descriptor of a posted 64-byte write to addr with data buf (parsed
 * from its encoding in raw). */
static void run_desc(struct ht_desc *d, uint8_t *raw, uint64_t addr, const uint8_t *buf)
{
	struct ht_pkt p;
	int n;

	mk_write(&p, addr, true, 2, 0);
	memcpy(p.data, buf, 64);
	n = ht_encode(&p, raw, HT_MAX_PKT_LEN);
	assert_true(n > 0);
	assert_int_equal(ht_desc_parse(raw, (size_t)n, d), n);
}

/* A run of posted writes (htoe_local_input_run) queues exactly what the
 * same writes offered one by one queue: the frames node 1 sends are the
 * same bytes, and node 2's local side gets every write with its address
 * and data. Runs this path does not take return 0 and change nothing. */
static void test_local_input_run(void **state)
{
	enum { RUN = 24 };
	static uint8_t fa[8][HTOE_FRAME_MAX];
	size_t la[8];
	uint8_t buf[RUN * 64], raw[HT_MAX_PKT_LEN];
	unsigned na;
	struct ht_desc d;
	struct ht_pkt q;

	(void)state;
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	/* one by one */
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned k = 0; k < RUN; k++) {
		run_desc(&d, raw, gaddr(2, 0x1000 + 64u * k), buf + 64 * k);
		assert_int_equal(htoe_local_input_desc(N[1].b, &d, 10 * US), 0);
	}
	na = grab_frames(fa, la, 8, 10 * US);
	free_nodes();
	/* as a run, the template's own data not used */
	mk_nodes(2, NULL);
	bring_up();
	run_desc(&d, raw, gaddr(2, 0x1000), buf + 64);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, RUN, 10 * US), RUN);
	assert_int_equal(htoe_get_stats(N[1].b)->local_in, RUN);
	frames_match_deliver(fa, la, na, 10 * US);
	for (unsigned k = 0; k < RUN; k++) {
		assert_true(local_out(2, &q, 10 * US));
		assert_int_equal(q.kind, HT_K_WRSIZED);
		assert_true(q.posted);
		assert_int_equal(q.addr, MEM_BASE + 0x1000 + 64u * k);
		assert_memory_equal(q.data, buf + 64 * k, 64);
	}
	assert_false(local_out(2, &q, 10 * US));
	/* not taken: a non-posted write, node 1's own memory (loopback), a
	 * range past the end of node 2's, an unmapped address */
	run_desc(&d, raw, gaddr(2, 0x2000), buf);
	mk_write(&q, gaddr(2, 0x2000), false, 2, 1);
	assert_true(ht_encode(&q, raw, sizeof(raw)) > 0);
	struct ht_desc np;

	assert_true(ht_desc_parse(raw, 72, &np) == 72);
	assert_int_equal(htoe_local_input_run(N[1].b, &np, buf, 2, 0), 0);
	run_desc(&d, raw, gaddr(1, 0x2000), buf);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 2, 0), 0);
	run_desc(&d, raw, gaddr(2, MEM_SIZE - 64), buf);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 2, 0), 0);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 1, 0), 1);
	run_desc(&d, raw, gaddr(3, 0), buf);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 1, 0), 0);
	assert_int_equal(htoe_get_stats(N[1].b)->local_in, RUN + 1);
	free_nodes();
	/* a full queue takes what fits, then nothing */
	mk_nodes(2, small_queues);
	bring_up();
	run_desc(&d, raw, gaddr(2, 0), buf);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 6, 0), 4);
	assert_int_equal(htoe_local_input_run(N[1].b, &d, buf, 6, 0), 0);
	assert_int_equal(htoe_local_input_desc(N[1].b, &d, 0), -EAGAIN); /* it decides */
	free_nodes();
}

/* A run of reads (htoe_local_input_reads) queues exactly what the same
 * reads offered one by one with the same tags queue: the same frame
 * bytes, each read outstanding; node 2's local side gets them with their
 * addresses, and its answers complete them at node 1. A tag already
 * outstanding ends the run there. */
static void test_local_input_reads(void **state)
{
	enum { RUN = 20 };
	static uint8_t fa[8][HTOE_FRAME_MAX];
	size_t la[8];
	uint8_t raw[HT_MAX_PKT_LEN], tags[RUN][2];
	unsigned na;
	struct ht_desc d;
	struct ht_pkt p, q, r;
	int n;

	(void)state;
	for (unsigned k = 0; k < RUN; k++) {
		tags[k][0] = (uint8_t)(1 + k % 3);
		tags[k][1] = (uint8_t)(k / 3);
	}
	/* one by one */
	mk_nodes(2, NULL);
	bring_up();
	for (unsigned k = 0; k < RUN; k++) {
		mk_read(&p, gaddr(2, 0x3000 + 64u * k), tags[k][0], tags[k][1]);
		n = ht_encode(&p, raw, sizeof(raw));
		assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
		assert_int_equal(htoe_local_input_desc(N[1].b, &d, 10 * US), 0);
	}
	na = grab_frames(fa, la, 8, 10 * US);
	free_nodes();
	/* as a run; the template's own tags not used */
	mk_nodes(2, NULL);
	bring_up();
	mk_read(&p, gaddr(2, 0x3000), 7, 31);
	n = ht_encode(&p, raw, sizeof(raw));
	assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
	assert_int_equal(htoe_local_input_reads(N[1].b, &d, (const uint8_t(*)[2])tags, RUN,
						10 * US),
			 RUN);
	frames_match_deliver(fa, la, na, 10 * US);
	for (unsigned k = 0; k < RUN; k++) {
		assert_true(local_out(2, &q, 10 * US));
		assert_int_equal(q.kind, HT_K_RDSIZED);
		assert_int_equal(q.addr, MEM_BASE + 0x3000 + 64u * k);
		mk_answer(&q, &r);
		r.data[0] = (uint8_t)k;
		assert_int_equal(local_in(2, &r, 10 * US), 0);
	}
	pump(10 * US, HTOE_TX_FLUSH, NULL, NULL);
	for (unsigned k = 0; k < RUN; k++) {
		assert_true(local_out(1, &r, 10 * US));
		assert_int_equal(r.kind, HT_K_RDRESPONSE);
		assert_int_equal(r.unitid, tags[r.data[0]][0]);
		assert_int_equal(r.srctag, tags[r.data[0]][1]);
		assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
	}
	assert_false(local_out(1, &r, 10 * US));
	/* a tag in use ends the run before it; the one-by-one path poisons it */
	mk_read(&p, gaddr(2, 0x4000), 1, 0);
	assert_int_equal(local_in(1, &p, 20 * US), 0);
	mk_read(&p, gaddr(2, 0x4040), 7, 31);
	n = ht_encode(&p, raw, sizeof(raw));
	assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
	const uint8_t clash[3][2] = { { 2, 0 }, { 1, 0 }, { 2, 1 } };

	assert_int_equal(htoe_local_input_reads(N[1].b, &d, clash, 3, 20 * US), 1);
	/* not taken: a posted write's shape, node 1's own memory */
	mk_write(&p, gaddr(2, 0x5000), true, 2, 0);
	n = ht_encode(&p, raw, sizeof(raw));
	assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
	assert_int_equal(htoe_local_input_reads(N[1].b, &d, clash, 1, 20 * US), 0);
	mk_read(&p, gaddr(1, 0x5000), 7, 31);
	n = ht_encode(&p, raw, sizeof(raw));
	assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
	assert_int_equal(htoe_local_input_reads(N[1].b, &d, clash + 2, 1, 20 * US), 0);
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

static struct htoe_lease_ep *mk_lep(uint16_t id, uint32_t session)
{
	struct htoe_lease_cfg lc;
	char err[256];
	struct htoe_lease_ep *ep;

	htoe_lease_cfg_defaults(&lc);
	lc.node_id = id;
	lc.session = session;
	lc.map = &N[id].map;
	if (id == 2) {
		lc.export_addr = MEM_BASE;
		lc.export_size = 0x10000;
		lc.acl = true;
	}
	ep = htoe_lease_new(&lc, err, sizeof(err));
	if (!ep)
		fail_msg("htoe_lease_new: %s", err);
	return ep;
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
	for (uint16_t id = 1; id <= 3; id++)
		LEP[id] = mk_lep(id, id);
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


/* Leases under attack: the export is closed from the first frame (acl_sync at set-up,
 * before any lease message); a restart of the lessor loses the borrower's
 * lease at once, loudly; a restart of the borrower frees its lease at the
 * lessor at once (and closes the range again). */
static void test_lease_restarts(void **state)
{
	struct htoe_lease_info info;
	struct htoe_lease_event ev;
	uint64_t now = 0, ga;
	bool lost = false, revoked = false;
	int h;

	(void)state;
	next_inc = 300;
	mk_nodes(3, NULL);
	for (uint16_t id = 1; id <= 3; id++) {
		LEP[id] = mk_lep(id, id);
		htoe_lease_acl_sync(LEP[id], N[id].b); /* set-up, no traffic yet */
	}
	pump(now, HTOE_TX_FLUSH, NULL, NULL); /* the VL handshakes only */
	assert_false(acl_read(1, gaddr(2, 0x40), 3, now));
	assert_false(acl_write(3, gaddr(2, 0x80), now));

	h = htoe_lease_request(LEP[1], 2, 4096, 0, now);
	lease_rounds(5, &now);
	assert_int_equal(htoe_lease_get(LEP[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	ga = gaddr(2, info.offset);
	assert_true(acl_read(1, ga, 4, now));

	/* the lessor restarts: new bridge (incarnation), new lease endpoint */
	htoe_lease_free(LEP[2]);
	htoe_free(N[2].b);
	mk_node(2, 3, NULL);
	LEP[2] = mk_lep(2, 2000);
	htoe_lease_acl_sync(LEP[2], N[2].b);
	lease_rounds(2, &now);
	assert_int_equal(htoe_lease_get(LEP[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_LOST);
	assert_int_equal(info.status, HTOE_LEASE_E_PEER_RESTARTED);
	while (htoe_lease_event(LEP[1], &ev))
		lost |= ev.type == HTOE_LEV_LOST && ev.status == HTOE_LEASE_E_PEER_RESTARTED;
	assert_true(lost);
	assert_false(acl_read(1, ga, 5, now));

	/* a new lease, then the borrower restarts: freed at once */
	assert_int_equal(htoe_lease_forget(LEP[1], h), 0);
	h = htoe_lease_request(LEP[1], 2, 4096, 0, now);
	lease_rounds(5, &now);
	assert_int_equal(htoe_lease_get(LEP[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(htoe_lease_export_count(LEP[2]), 1);
	htoe_lease_free(LEP[1]);
	htoe_free(N[1].b);
	mk_node(1, 3, NULL);
	LEP[1] = mk_lep(1, 1000);
	lease_rounds(2, &now);
	assert_int_equal(htoe_lease_export_count(LEP[2]), 0);
	assert_int_equal(htoe_lease_stats(LEP[2])->revoked, 1);
	while (htoe_lease_event(LEP[2], &ev))
		revoked |= ev.type == HTOE_LEV_EXPORT_REVOKED && ev.node == 1;
	assert_true(revoked);
	assert_false(acl_read(1, ga, 6, now));
	for (uint16_t id = 1; id <= 3; id++)
		htoe_lease_free(LEP[id]);
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

/* htoe_config_check: what htoe_new refuses, without allocating, and the
 * field it blames (so that a configuration reader can name the key) */
static void test_config_check_field(void **state)
{
	struct htoe_config c;
	struct htoe_map m;
	char err[256];
	size_t field = 0;

	(void)state;
	htoe_map_init(&m, 1);
	assert_int_equal(htoe_map_add_range(&m, 0, 4096, 1, 0, "r", err, sizeof(err)), 0);
	assert_int_equal(htoe_map_finalize(&m, err, sizeof(err)), 0);
	htoe_config_defaults(&c);
	c.node_id = 1;
	c.map = &m;
	assert_int_equal(htoe_config_check(&c, &field, err, sizeof(err)), 0);
	c.rto_max_ns = c.rto_init_ns - 1;
	assert_int_equal(htoe_config_check(&c, &field, err, sizeof(err)), -1);
	assert_int_equal(field, offsetof(struct htoe_config, rto_max_ns));
	assert_non_null(strstr(err, "is above rto_max_ns"));
	htoe_config_defaults(&c);
	c.node_id = 1;
	c.map = &m;
	c.window = 1;
	assert_int_equal(htoe_config_check(&c, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "window 1"));
	c.window = 256;
	c.reserve = 200; /* above max_per_vl */
	assert_int_equal(htoe_config_check(&c, &field, err, sizeof(err)), -1);
	assert_int_equal(field, offsetof(struct htoe_config, reserve));
	c.reserve = 16;
	c.rx_bufs[HT_VC_R][1] = 8; /* below reserve x peers */
	assert_int_equal(htoe_config_check(&c, &field, err, sizeof(err)), -1);
	assert_int_equal(field, offsetof(struct htoe_config, rx_bufs[HT_VC_R][1]));
	assert_non_null(strstr(err, "8 data buffers"));
	assert_null(htoe_new(&c, err, sizeof(err)));      /* the same verdict */
	assert_non_null(strstr(err, "8 data buffers"));
	c.rx_bufs[HT_VC_R][1] = 256;
	c.map = &m;
	c.node_id = 2;
	assert_int_equal(htoe_config_check(&c, &field, err, sizeof(err)), -1);
	assert_int_equal(field, SIZE_MAX);                /* the map */
}

/* ------------------------------------------------------ attackers (forged RESETs) */

/* Build a frame as an attacker would: any header fields, any source MAC,
 * a valid CRC. Returns its length. */
static size_t forge(uint8_t *f, enum htoe_ftype type, uint16_t src_node, uint16_t dst_node,
		    const uint8_t src_mac[6], uint8_t epoch, uint16_t seq, bool cold,
		    bool credit_req, const uint8_t *payload, size_t plen, unsigned npkts,
		    unsigned vc)
{
	struct htoe_hdr h;
	int off, n;

	memset(&h, 0, sizeof(h));
	htoe_map_node_mac(dst_node, h.dst);
	memcpy(h.src, src_mac, 6);
	h.ftype = (uint8_t)type;
	h.src_node = src_node;
	h.dst_node = dst_node;
	h.epoch = epoch;
	h.seq = seq;
	h.cold = cold;
	h.credit_req = credit_req;
	h.npkts = (uint8_t)npkts;
	h.vc = (uint8_t)vc;
	for (unsigned c = 0; c < HTOE_CR__COUNT; c++)
		h.credit[c] = 0xFFF0; /* generous credits: would change the peer's sender */
	off = htoe_hdr_write(&h, f, HTOE_FRAME_MAX);
	assert_true(off > 0);
	if (plen)
		memcpy(f + off, payload, plen);
	n = htoe_frame_seal(f, HTOE_FRAME_MAX, (size_t)off - HTOE_HDR_LEN, plen);
	assert_true(n > 0);
	return (size_t)n;
}

static void reset_payload(uint8_t *p, uint32_t inc, uint64_t nonce)
{
	htoe_put_be32(p, inc);
	htoe_put_be32(p + 4, (uint32_t)(nonce >> 32));
	htoe_put_be32(p + 8, (uint32_t)nonce);
}

static void test_siphash_vectors(void **state)
{
	uint8_t key[16], msg[64];

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	/* the reference implementation's vectors (key 00..0f, message
	 * 00..len-1) for lengths 0, 1, 7, 8, 15 and 63 */
	assert_true(htoe_siphash24(key, msg, 0) == 0x726fdb47dd0e0e31ull);
	assert_true(htoe_siphash24(key, msg, 1) == 0x74f839c593dc67fdull);
	assert_true(htoe_siphash24(key, msg, 7) == 0xab0200f58b01d137ull);
	assert_true(htoe_siphash24(key, msg, 8) == 0x93f5f5799a932462ull);
	assert_true(htoe_siphash24(key, msg, 15) == 0xa129ca6149be45e5ull);
	assert_true(htoe_siphash24(key, msg, 63) == 0x958a324ceb064572ull);
}

/* Source binding: a frame of any type that claims node 1 but comes from
 * another MAC (a non-member's, or member 3's own) changes nothing at node
 * 2 and is counted under src_mac. */
static void test_src_mac_binding(void **state)
{
	static const uint8_t outsider[6] = { 0x02, 0x66, 0x66, 0x66, 0x66, 0x66 };
	uint8_t mac3[6], f[HTOE_FRAME_MAX], pl[HT_MAX_PKT_LEN];
	struct htoe_vl_stats before;
	struct ht_pkt p;
	uint64_t drops0;
	uint8_t ep;
	int n;

	(void)state;
	next_inc = 100;
	mk_nodes(3, NULL);
	bring_up();
	htoe_map_node_mac(3, mac3);
	ep = htoe_vl_epoch(N[2].b, 1);
	before = *htoe_get_vl_stats(N[2].b, 1);
	drops0 = htoe_get_stats(N[2].b)->drops[HTOE_DROP_SRC_MAC];
	mk_write(&p, MEM_BASE, true, 1, 0);
	n = ht_encode(&p, pl, sizeof(pl));
	assert_true(n > 0);
	for (unsigned who = 0; who < 2; who++) {
		const uint8_t *mac = who ? mac3 : outsider;
		uint8_t rp[HTOE_RESET_PAYLOAD_LEN], cp[8] = { 0x4c, 1, 0, 0, 0, 0, 0, 7 };
		size_t len[7];
		uint8_t fr[7][HTOE_FRAME_MAX];

		reset_payload(rp, 12345, 0x1234);
		len[0] = forge(fr[0], HTOE_FT_DATA, 1, 2, mac, ep, 0, false, false, pl,
			       (size_t)n, 1, HT_VC_P);
		len[1] = forge(fr[1], HTOE_FT_ACK, 1, 2, mac, ep, 0, false, false, NULL, 0, 0, 0);
		len[2] = forge(fr[2], HTOE_FT_ACK, 1, 2, mac, ep, 0, false, true, NULL, 0, 0, 0);
		len[3] = forge(fr[3], HTOE_FT_NAK, 1, 2, mac, ep, 0, false, false, NULL, 0, 0, 0);
		len[4] = forge(fr[4], HTOE_FT_CTRL, 1, 2, mac, ep, 0, false, false, cp, sizeof(cp),
			       0, 0);
		len[5] = forge(fr[5], HTOE_FT_RESET, 1, 2, mac, (uint8_t)(ep + 1), 0x1234, true,
			       false, rp, sizeof(rp), 0, 0);
		len[6] = forge(fr[6], HTOE_FT_RESET_ACK, 1, 2, mac, ep, 0x1234, true, false, rp,
			       sizeof(rp), 0, 0);
		for (unsigned k = 0; k < 7; k++)
			assert_int_equal(htoe_frame_input(N[2].b, fr[k], len[k], 1 * US),
					 -HTOE_DROP_SRC_MAC);
	}
	assert_int_equal(htoe_get_stats(N[2].b)->drops[HTOE_DROP_SRC_MAC], drops0 + 14);
	/* nothing changed: not the VL's counters, its epoch, its state, its
	 * queues (no RESET_ACK or NAK owed), nothing for the local side */
	assert_memory_equal(htoe_get_vl_stats(N[2].b, 1), &before, sizeof(before));
	assert_int_equal(htoe_vl_epoch(N[2].b, 1), ep);
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_false(local_out(2, &p, 1 * US));
	assert_int_equal(htoe_frame_output(N[2].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH), 0);
	assert_int_equal(htoe_ctrl_recv(N[2].b, &(uint16_t){ 0 }, f, sizeof(f)), 0);
	free_nodes();
}

/* Every frame from node 2 to node 1 but the ones of type *(uint8_t *)arg
 * (0: none) is lost. */
static bool drop_2_to_1_but(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct htoe_hdr h;

	assert_int_equal(htoe_frame_parse(f, len, 9000, &h, NULL), 0);
	return from != 2 || h.dst_node != 1 || h.ftype == *(const uint8_t *)arg;
}

static uint64_t vl_timeouts(uint16_t at, uint16_t peer)
{
	return htoe_get_vl_stats(N[at].b, peer)->timeouts;
}

/* A clean stop (htoe_leave): node 2 received node 1's last frame but every
 * ACK of it was lost, and it stops. Its LEAVE carries the ack: node 1
 * retires the frame and stops resending to a node that is gone on purpose,
 * and knows it left. Played as an attacker too: a LEAVE from a stranger's
 * MAC, from member 3's own MAC, of a retired incarnation or malformed
 * changes nothing; one forged with everything right (a MAC forger without
 * MACsec) marks the peer as leaving only until the real peer's next frame
 * of data: it never locks it out. */
static void test_leave(void **state)
{
	static const uint8_t outsider[6] = { 0x02, 0x66, 0x66, 0x66, 0x66, 0x66 };
	uint8_t none = 0, ctrl = HTOE_FT_CTRL, mac1[6], mac3[6], f[HTOE_FRAME_MAX];
	uint8_t leave[HTOE_LEAVE_LEN + 4] = { HTOE_LEAVE_PROTO, HTOE_LEAVE_VERSION };
	uint8_t bad[HTOE_LEAVE_LEN + 5] = { HTOE_LEAVE_PROTO, HTOE_LEAVE_VERSION, 0 };
	struct ht_pkt p;
	uint64_t t = 0, to;
	uint32_t inc;
	size_t n;

	(void)state;
	next_inc = 500;
	mk_nodes(3, NULL);
	bring_up();
	/* node 1 writes to node 2; node 2 gets it, node 1 no ack of it */
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, t), 0);
	for (; t < 20000 * US; t += 100 * US)
		pump(t, HTOE_TX_FLUSH, drop_2_to_1_but, &none);
	assert_true(local_out(2, &p, t));
	assert_true(vl_timeouts(1, 2) > 0); /* node 1 resends it: no ack came */
	assert_false(htoe_vl_peer_left(N[1].b, 2));

	/* node 2 stops: its LEAVE (and only it) reaches node 1 */
	assert_int_equal(htoe_leave(N[2].b, 3), 3 * 2);
	assert_int_equal(htoe_ctrl_queued(N[2].b), 3 * 2);
	pump(t, HTOE_TX_FLUSH, drop_2_to_1_but, &ctrl);
	assert_int_equal(htoe_ctrl_queued(N[2].b), 0);
	assert_true(htoe_vl_peer_left(N[1].b, 2));
	assert_true(htoe_vl_peer_left(N[3].b, 2));
	assert_false(htoe_vl_peer_left(N[2].b, 1));
	/* nothing reaches the protocols above (it is the bridge's message) */
	assert_int_equal(htoe_ctrl_recv(N[1].b, &(uint16_t){ 0 }, f, sizeof(f)), 0);
	to = vl_timeouts(1, 2);
	for (uint64_t end = t + 1000000 * US; t < end; t += 1000 * US)
		pump(t, HTOE_TX_FLUSH, drop_2_to_1_but, &none);
	assert_int_equal(vl_timeouts(1, 2), to); /* retired: nothing resent */
	assert_int_equal(htoe_busy(N[1].b), 0);

	/* it works again (its data comes): no longer leaving */
	mk_write(&p, gaddr(1, 0), true, 1, 0);
	assert_int_equal(local_in(2, &p, t), 0);
	pump(t, HTOE_TX_FLUSH, NULL, NULL);
	assert_false(htoe_vl_peer_left(N[1].b, 2));

	/* forgers: a LEAVE "from node 1" to node 2 */
	htoe_map_node_mac(1, mac1);
	htoe_map_node_mac(3, mac3);
	assert_true(htoe_vl_peer_incarnation(N[2].b, 1, &inc));
	uint8_t ep = htoe_vl_epoch(N[2].b, 1);

	htoe_put_be32(leave + HTOE_LEAVE_LEN, inc);
	n = forge(f, HTOE_FT_CTRL, 1, 2, outsider, ep, 0, false, false, leave, sizeof(leave), 0, 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, n, t), -HTOE_DROP_SRC_MAC);
	n = forge(f, HTOE_FT_CTRL, 1, 2, mac3, ep, 0, false, false, leave, sizeof(leave), 0, 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, n, t), -HTOE_DROP_SRC_MAC);
	htoe_put_be32(bad + HTOE_LEAVE_LEN + 1, inc);
	n = forge(f, HTOE_FT_CTRL, 1, 2, mac1, ep, 0, false, false, bad, sizeof(bad), 0, 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, n, t), -HTOE_DROP_LENGTH);
	assert_false(htoe_vl_peer_left(N[2].b, 1));
	/* node 1 restarts: a LEAVE of its first life is refused */
	htoe_free(N[1].b);
	mk_node(1, 3, NULL);
	for (int k = 0; k < 40; k++, t += 1000 * US)
		pump(t, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[2].b, 1));
	ep = htoe_vl_epoch(N[2].b, 1);
	n = forge(f, HTOE_FT_CTRL, 1, 2, mac1, ep, 0, false, false, leave, sizeof(leave), 0, 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, n, t), -HTOE_DROP_INCARNATION);
	assert_false(htoe_vl_peer_left(N[2].b, 1));
	/* one forged with the live incarnation is taken, until node 1's data */
	assert_true(htoe_vl_peer_incarnation(N[2].b, 1, &inc));
	htoe_put_be32(leave + HTOE_LEAVE_LEN, inc);
	n = forge(f, HTOE_FT_CTRL, 1, 2, mac1, ep, 0, false, false, leave, sizeof(leave), 0, 0);
	assert_int_equal(htoe_frame_input(N[2].b, f, n, t), 0);
	assert_true(htoe_vl_peer_left(N[2].b, 1));
	mk_write(&p, gaddr(2, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, t), 0);
	pump(t, HTOE_TX_FLUSH, NULL, NULL);
	assert_false(htoe_vl_peer_left(N[2].b, 1));
	assert_true(local_out(2, &p, t));
	free_nodes();
}

/* Record the last frame of a given type sent by a given node. */
struct capture {
	uint16_t from, to;     /* to 0: any */
	uint8_t type;
	size_t len;
	uint8_t f[HTOE_FRAME_MAX];
	bool drop;             /* and drop it */
};

static bool capture_frame(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct capture *c = arg;
	struct htoe_hdr h;

	assert_int_equal(htoe_frame_parse(f, len, 9000, &h, NULL), 0);
	if (from != c->from || h.ftype != c->type || (c->to && h.dst_node != c->to))
		return true;
	memcpy(c->f, f, len);
	c->len = len;
	return !c->drop;
}

/* A RESET_ACK must echo the 64-bit nonce of our pending RESET: one that
 * guesses the old predictable nonce, or only its low 16 bits (the seq
 * field), is dropped even from the right MAC; the real one works. Nonces
 * differ between resets and between keys. */
static void test_reset_ack_nonce(void **state)
{
	struct capture rst = { .from = 1, .type = HTOE_FT_RESET, .drop = true };
	uint8_t mac2[6], f[HTOE_FRAME_MAX], rp[HTOE_RESET_PAYLOAD_LEN];
	uint64_t nonce, nonce2;
	uint8_t ep;
	size_t len;

	(void)state;
	next_inc = 7;
	mk_nodes(2, NULL);
	bring_up();
	htoe_map_node_mac(2, mac2);
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, capture_frame, &rst);
	assert_true(rst.len > 0);
	nonce = (uint64_t)htoe_get_be32(rst.f + 14 + 32 + 4) << 32 |
		htoe_get_be32(rst.f + 14 + 32 + 8);
	assert_int_equal((uint16_t)nonce, htoe_get_be16(rst.f + 14 + 8));
	ep = htoe_vl_epoch(N[1].b, 2);
	/* the pre-issue-13 nonce ((epoch << 8 | id) + 1 and successors) */
	for (uint16_t guess = 1; guess < 8; guess++) {
		reset_payload(rp, 8, guess);
		len = forge(f, HTOE_FT_RESET_ACK, 2, 1, mac2, ep, guess, false, false, rp,
			    sizeof(rp), 0, 0);
		assert_int_equal(htoe_frame_input(N[1].b, f, len, 2 * US), -HTOE_DROP_NONCE);
	}
	/* the right low 16 bits, wrong high bits */
	reset_payload(rp, 8, nonce ^ (1ull << 40));
	len = forge(f, HTOE_FT_RESET_ACK, 2, 1, mac2, ep, (uint16_t)nonce, false, false, rp,
		    sizeof(rp), 0, 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 2 * US), -HTOE_DROP_NONCE);
	assert_false(htoe_vl_is_up(N[1].b, 2));
	/* DATA/ACK of the proposed epoch do not bring it up either */
	len = forge(f, HTOE_FT_ACK, 2, 1, mac2, ep, 0, false, false, NULL, 0, 0, 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 2 * US), -HTOE_DROP_EPOCH);
	assert_false(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->drops[HTOE_DROP_NONCE], 8);
	/* the real peer answers the retransmitted RESET */
	rst.drop = false;
	pump(1000 * US, HTOE_TX_FLUSH, capture_frame, &rst);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	/* the next reset has an unrelated nonce */
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 2000 * US), 0);
	pump(2000 * US, HTOE_TX_FLUSH, capture_frame, &rst);
	nonce2 = (uint64_t)htoe_get_be32(rst.f + 14 + 32 + 4) << 32 |
		 htoe_get_be32(rst.f + 14 + 32 + 8);
	assert_true(nonce2 != nonce && nonce2 != nonce + 1 && (nonce2 >> 32) != (nonce >> 32));
	free_nodes();
}

/* Node 2 restarts (new bridge, new incarnation) while node 1 has requests
 * outstanding to it and posted writes unacknowledged: node 1 cold-resets
 * that VL once, at the first frame of the new incarnation, poisons the
 * requests, and traffic resumes; node 3's VL is untouched. Frames of the
 * old incarnation replayed afterwards change nothing. */
static void test_peer_restart(void **state)
{
	struct capture old_data = { .from = 2, .type = HTOE_FT_DATA };
	struct capture old_reset = { .from = 2, .to = 1, .type = HTOE_FT_RESET };
	struct ht_pkt p, q, r;
	unsigned poisoned = 0;
	uint8_t ep_old;
	uint32_t inc_old, inc;
	size_t old_reset_len;
	uint8_t old_reset_f[HTOE_FRAME_MAX];

	(void)state;
	next_inc = 1000;
	mk_nodes(3, NULL);
	bring_up();
	assert_int_equal(htoe_vl_reset(N[2].b, 1, false, 0), 0);
	pump(0, HTOE_TX_FLUSH, capture_frame, &old_reset);
	assert_true(old_reset.len > 0);
	memcpy(old_reset_f, old_reset.f, old_reset.len);
	old_reset_len = old_reset.len;
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc_old));
	/* node 2 sends node 1 a write (a DATA frame to replay later) */
	mk_write(&p, gaddr(1, 0), true, 1, 0);
	assert_int_equal(local_in(2, &p, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, capture_frame, &old_data);
	assert_true(old_data.len > 0);
	assert_int_equal(node_of(old_data.f), 1);
	assert_true(local_out(1, &q, 1 * US));
	/* node 1: three reads to node 2 in flight, never answered */
	for (uint8_t t = 0; t < 3; t++) {
		mk_read(&p, gaddr(2, 64u * t), 1, t);
		assert_int_equal(local_in(1, &p, 2 * US), 0);
	}
	mk_read(&p, gaddr(3, 0), 1, 9);
	assert_int_equal(local_in(1, &p, 2 * US), 0);
	pump(2 * US, HTOE_TX_FLUSH, drop_all, NULL);
	ep_old = htoe_vl_epoch(N[1].b, 2);
	const struct htoe_vl_stats *st = htoe_get_vl_stats(N[1].b, 2);
	uint64_t resets0 = st->resets;

	/* kill -9 and restart of node 2: same config, new incarnation */
	htoe_free(N[2].b);
	mk_node(2, 3, NULL);
	pump(10 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(st->peer_restarts, 1);
	assert_int_equal(st->resets, resets0 + 1);
	assert_int_equal(st->peer_restart_ns, 10 * US);
	assert_int_equal(st->restart_up_ns, 0); /* same `now`: within 0 ns */
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_true(inc != inc_old);
	assert_true((int8_t)(htoe_vl_epoch(N[1].b, 2) - ep_old) > 0);
	assert_int_equal(htoe_vl_epoch(N[1].b, 2), htoe_vl_epoch(N[2].b, 1));
	/* the three reads were poisoned at once, not after np_timeout */
	while (local_out(1, &r, 10 * US)) {
		assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_TARGET_ABORT);
		assert_true(r.srctag < 3);
		poisoned++;
	}
	assert_int_equal(poisoned, 3);
	/* node 3's VL untouched */
	assert_int_equal(htoe_get_vl_stats(N[1].b, 3)->resets, 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 3)->peer_restarts, 0);

	/* the old incarnation's frames: a DATA frame of the old epoch, its
	 * first RESET (retired incarnation) */
	assert_int_equal(htoe_frame_input(N[1].b, old_data.f, old_data.len, 20 * US),
			 -HTOE_DROP_EPOCH);
	assert_int_equal(htoe_frame_input(N[1].b, old_reset_f, old_reset_len, 20 * US),
			 -HTOE_DROP_INCARNATION);
	assert_int_equal(st->resets, resets0 + 1);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	/* a duplicate RESET of the new incarnation stays a duplicate */
	{
		struct capture cur = { .from = 2, .to = 1, .type = HTOE_FT_RESET };

		htoe_free(N[2].b);
		next_inc = 5000;
		mk_node(2, 3, NULL);
		pump(30 * US, HTOE_TX_FLUSH, capture_frame, &cur);
		assert_int_equal(st->peer_restarts, 2);
		assert_int_equal(st->resets, resets0 + 2);
		assert_true(cur.len > 0);
		/* its epoch lost to node 1's proposal: a late copy, dropped */
		assert_int_equal(htoe_frame_input(N[1].b, cur.f, cur.len, 40 * US),
				 -HTOE_DROP_EPOCH);
		assert_true(htoe_vl_is_up(N[1].b, 2));
		pump(40 * US, HTOE_TX_FLUSH, NULL, NULL);
		assert_int_equal(st->resets, resets0 + 2);
		assert_int_equal(st->peer_restarts, 2);
	}
	/* traffic resumes: a read answered OK */
	mk_read(&p, gaddr(2, 0), 1, 20);
	assert_int_equal(local_in(1, &p, 50 * US), 0);
	pump(50 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &q, 50 * US));
	mk_answer(&q, &r);
	assert_int_equal(local_in(2, &r, 50 * US), 0);
	pump(50 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &r, 50 * US));
	assert_int_equal(r.srctag, 20);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
	for (uint16_t id = 1; id <= 3; id++) {
		char err[256];

		assert_int_equal(htoe_check_invariants(N[id].b, err, sizeof(err)), 0);
	}
	free_nodes();
}

/* What resets and restarts lose, as the loss callback reports it. */
static struct htoe_loss lost[16];
static unsigned n_lost;

static void record_loss(void *ctx, const struct htoe_loss *l)
{
	(void)ctx;
	assert_true(n_lost < 16);
	lost[n_lost++] = *l;
}

/* A reset of VL 1-2 with posted writes framed and unacknowledged reports
 * exactly those (global address, length), not the writes still unsent that
 * the warm reset keeps, nor node 3's; a restart of node 2 reports the writes
 * in flight, then node 2's whole mapped memory with both incarnations. */
static void test_loss_events(void **state)
{
	struct ht_pkt p;
	uint32_t inc_old, inc;

	(void)state;
	next_inc = 1000;
	mk_nodes(3, NULL);
	bring_up();
	n_lost = 0;
	htoe_set_loss_cb(N[1].b, record_loss, NULL);
	for (unsigned i = 0; i < 4; i++) {
		mk_write(&p, gaddr(2, 0x1000 + 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 1 * US), 0);
	}
	mk_write(&p, gaddr(3, 0), true, 1, 0);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, drop_to_2, NULL);
	/* two more, not yet framed */
	for (unsigned i = 0; i < 2; i++) {
		mk_write(&p, gaddr(2, 0x2000 + 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 2 * US), 0);
	}
	assert_int_equal(n_lost, 0);
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 3 * US), 0);
	assert_int_equal(n_lost, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(lost[i].kind, HTOE_LOSS_RESET);
		assert_int_equal(lost[i].node, 2);
		assert_int_equal(lost[i].addr, gaddr(2, 0x1000 + 64u * i));
		assert_int_equal(lost[i].len, 64);
	}
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->posted_lost_reset, 4);
	pump(4 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(n_lost, 4);

	/* one write in flight, then node 2 restarts */
	n_lost = 0;
	mk_write(&p, gaddr(2, 0x3000), true, 1, 0);
	assert_int_equal(local_in(1, &p, 5 * US), 0);
	pump(5 * US, HTOE_TX_FLUSH, drop_to_2, NULL);
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc_old));
	htoe_free(N[2].b);
	mk_node(2, 3, NULL);
	pump(10 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_true(inc != inc_old);
	assert_int_equal(n_lost, 2);
	assert_int_equal(lost[0].kind, HTOE_LOSS_RESET);
	assert_int_equal(lost[0].addr, gaddr(2, 0x3000));
	assert_int_equal(lost[0].len, 64);
	assert_int_equal(lost[1].kind, HTOE_LOSS_RESTART);
	assert_int_equal(lost[1].node, 2);
	assert_int_equal(lost[1].old_inc, inc_old);
	assert_int_equal(lost[1].new_inc, inc);
	assert_int_equal(lost[1].addr, gaddr(2, 0));
	assert_int_equal(lost[1].len, MEM_SIZE);
	/* node 2 saw node 1 for the first time: nothing lost there */
	htoe_set_loss_cb(N[1].b, NULL, NULL);
	free_nodes();
}

/* A reset reports the requests in flight on the VL it poisons, each with its
 * global address and length: the peer may have executed a non-posted write
 * whose answer the reset lost, so the requester cannot trust what it knew of
 * those bytes. Here node 2 applied the write and answered; node 1 resets
 * before the answer arrives. Node 3's request, on another VL, is not
 * reported, and reads issued as a run (htoe_local_input_reads) are. */
static void test_loss_events_requests(void **state)
{
	uint8_t raw[HT_MAX_PKT_LEN], tags[2][2] = { { 2, 0 }, { 2, 1 } };
	struct ht_pkt p, q, r;
	struct ht_desc d;
	int n;

	(void)state;
	mk_nodes(3, NULL);
	bring_up();
	n_lost = 0;
	htoe_set_loss_cb(N[1].b, record_loss, NULL);
	mk_write(&p, gaddr(2, 0x4000), false, 1, 5);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	mk_read(&p, gaddr(3, 0x4000), 1, 6);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	mk_read(&p, gaddr(2, 0x6000), 1, 7);
	n = ht_encode(&p, raw, sizeof(raw));
	assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
	assert_int_equal(htoe_local_input_reads(N[1].b, &d, (const uint8_t(*)[2])tags, 2, 1 * US),
			 2);
	pump(1 * US, HTOE_TX_FLUSH, NULL, NULL);
	/* node 2 applies the write and answers: the answer is not yet there */
	assert_true(local_out(2, &q, 2 * US));
	assert_int_equal(q.kind, HT_K_WRSIZED);
	mk_answer(&q, &r);
	assert_int_equal(local_in(2, &r, 2 * US), 0);
	assert_int_equal(n_lost, 0);
	assert_int_equal(htoe_vl_reset(N[1].b, 2, false, 3 * US), 0);
	assert_int_equal(n_lost, 3);
	for (unsigned i = 0; i < n_lost; i++) {
		assert_int_equal(lost[i].kind, HTOE_LOSS_RESET);
		assert_int_equal(lost[i].node, 2);
		assert_int_equal(lost[i].len, 64);
	}
	/* in (UnitID, SrcTag) order: the write (1, 5), the reads (2, 0), (2, 1) */
	assert_int_equal(lost[0].addr, gaddr(2, 0x4000));
	assert_int_equal(lost[1].addr, gaddr(2, 0x6000));
	assert_int_equal(lost[2].addr, gaddr(2, 0x6040));
	/* the late answer changes nothing; the requester gets errors */
	pump(4 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(n_lost, 3);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->poisoned, 3);
	htoe_set_loss_cb(N[1].b, NULL, NULL);
	free_nodes();
}

/* A CTRL frame carrying a new incarnation (a restart whose RESET was lost
 * and whose epoch happens to match, or a forger) also cold-resets the VL,
 * but only the handshake says who the peer is: here the real peer answers
 * under its known incarnation, which stays. */
static void test_ctrl_new_incarnation(void **state)
{
	uint8_t mac2[6], f[HTOE_FRAME_MAX], cp[8] = { 0x4c, 1, 2, 3, 0, 0, 0, 0 };
	size_t len;

	(void)state;
	next_inc = 40;
	mk_nodes(2, NULL);
	bring_up();
	htoe_map_node_mac(2, mac2);
	htoe_put_be32(cp + 4, 99999);
	len = forge(f, HTOE_FT_CTRL, 2, 1, mac2, htoe_vl_epoch(N[1].b, 2), 0, false, false, cp,
		    sizeof(cp), 0, 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 1 * US), -HTOE_DROP_INCARNATION);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->resets, 1);
	assert_false(htoe_vl_is_up(N[1].b, 2));
	/* no message delivered */
	assert_int_equal(htoe_ctrl_recv(N[1].b, &(uint16_t){ 0 }, f, sizeof(f)), 0);
	pump(2 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 0);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->resets, 1);
	/* bad lengths: RESET without its payload, CTRL without the trailer */
	len = forge(f, HTOE_FT_RESET, 2, 1, mac2, 9, 0, false, false, NULL, 0, 0, 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 1 * US), -HTOE_DROP_LENGTH);
	len = forge(f, HTOE_FT_CTRL, 2, 1, mac2, 9, 0, false, false, cp, 3, 0, 0);
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 1 * US), -HTOE_DROP_LENGTH);
	free_nodes();
}

/* ------------------------------------------- forged resets (no MACsec) */

/* One read from node 1 to node 2 and one posted write back, answered:
 * the VL carries traffic both ways. */
static void traffic_ok(uint64_t now, uint8_t tag)
{
	struct ht_pkt p, q, r;

	mk_read(&p, gaddr(2, 0), 1, tag);
	assert_int_equal(local_in(1, &p, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &q, now));
	mk_answer(&q, &r);
	assert_int_equal(local_in(2, &r, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &r, now));
	assert_int_equal(r.srctag, tag);
	assert_int_equal(ht_pkt_rsp_err(&r), HT_RSP_OK);
	mk_write(&p, gaddr(1, 64), true, 1, 0);
	assert_int_equal(local_in(2, &p, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(1, &q, now));
}

/* Both ends up in the same epoch, under the incarnations they started
 * with, no restart counted, and the invariants hold. */
static void same_link(uint32_t inc1, uint32_t inc2)
{
	uint32_t inc;

	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_int_equal(htoe_vl_epoch(N[1].b, 2), htoe_vl_epoch(N[2].b, 1));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_int_equal(inc, inc2);
	assert_true(htoe_vl_peer_incarnation(N[2].b, 1, &inc));
	assert_int_equal(inc, inc1);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->peer_restarts, 0);
	for (uint16_t id = 1; id <= 2; id++) {
		char err[256];

		assert_int_equal(htoe_check_invariants(N[id].b, err, sizeof(err)), 0);
	}
}

/* An attacker sends node 1 one RESET with node 2's MAC: a new random
 * incarnation with any epoch, or node 2's own incarnation with the next
 * epoch, or an older one. Each costs at most one reset on each side,
 * answered at once by the real peer (no timer has to run out: the time
 * does not move), locks nobody out, and traffic resumes; the real peer's
 * own resets work afterwards. */
static void test_forged_reset(void **state)
{
	uint8_t mac2[6], f[HTOE_FRAME_MAX], rp[HTOE_RESET_PAYLOAD_LEN];
	uint32_t inc1, inc2;
	size_t len;
	uint64_t now = 10 * US;
	uint8_t tag = 0;

	(void)state;
	next_inc = 300;
	mk_nodes(2, NULL);
	bring_up();
	htoe_map_node_mac(2, mac2);
	assert_true(htoe_vl_peer_incarnation(N[2].b, 1, &inc1));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc2));
	traffic_ok(now, tag++);
	for (unsigned k = 0; k < 8; k++) {
		uint8_t ep = htoe_vl_epoch(N[1].b, 2);
		uint64_t r1 = htoe_get_vl_stats(N[1].b, 2)->resets;
		uint64_t r2 = htoe_get_vl_stats(N[2].b, 1)->resets;
		/* new incarnations with the next, a far, the same and an older
		 * epoch; then node 2's incarnation with the same four */
		static const int8_t dep[4] = { 1, 100, 0, -3 };
		uint32_t inc = k < 4 ? 0xbad00000u + k : inc2;
		uint64_t nonce = 0x0123456789abcdefull * (k + 1);

		reset_payload(rp, inc, nonce);
		len = forge(f, HTOE_FT_RESET, 2, 1, mac2, (uint8_t)(ep + dep[k % 4]),
			    (uint16_t)nonce, k & 1, false, rp, sizeof(rp), 0, 0);
		assert_int_equal(htoe_frame_input(N[1].b, f, len, now), 0);
		pump(now, HTOE_TX_FLUSH, NULL, NULL);
		same_link(inc1, inc2);
		assert_true(htoe_get_vl_stats(N[1].b, 2)->resets <= r1 + 1);
		assert_true(htoe_get_vl_stats(N[2].b, 1)->resets <= r2 + 1);
		traffic_ok(now, tag++);
		now += 10 * US;
	}
	/* the real peer is not locked out: its own reset works */
	assert_int_equal(htoe_vl_reset(N[2].b, 1, false, now), 0);
	pump(now, HTOE_TX_FLUSH, NULL, NULL);
	same_link(inc1, inc2);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->drops[HTOE_DROP_INCARNATION], 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->drops[HTOE_DROP_INCARNATION], 0);
	traffic_ok(now, tag++);
	free_nodes();
}

/* A forged claim of a new incarnation, then the real peer restarts: the
 * claim did not make the restart look like a retired incarnation (the
 * restarted peer's own RESET_ACK proves it) and the old incarnation is
 * retired only then. */
static void test_forged_claim_then_restart(void **state)
{
	uint8_t mac2[6], f[HTOE_FRAME_MAX], rp[HTOE_RESET_PAYLOAD_LEN];
	uint32_t inc_old, inc;
	size_t len;

	(void)state;
	next_inc = 400;
	mk_nodes(2, NULL);
	bring_up();
	htoe_map_node_mac(2, mac2);
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc_old));
	reset_payload(rp, 0x5eed, 0x77);
	len = forge(f, HTOE_FT_RESET, 2, 1, mac2, (uint8_t)(htoe_vl_epoch(N[1].b, 2) + 1), 0x77,
		    true, false, rp, sizeof(rp), 0, 0);
	/* the claim, unanswered (the network loses node 1's RESET) */
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 1 * US), 0);
	pump(1 * US, HTOE_TX_FLUSH, drop_all, NULL);
	assert_false(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_int_equal(inc, inc_old);
	/* node 2 restarts */
	htoe_free(N[2].b);
	mk_node(2, 2, NULL);
	pump(5000 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_true(inc != inc_old && inc != 0x5eed);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 1);
	/* the forger's incarnation is nobody's: its RESET is a new claim
	 * again (one reset), the real peer answers again */
	assert_int_equal(htoe_frame_input(N[1].b, f, len, 6000 * US), 0);
	pump(6000 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_true(htoe_vl_peer_incarnation(N[1].b, 2, &inc));
	assert_true(inc != inc_old && inc != 0x5eed);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 1);
	free_nodes();
}

/* ------------------------------------------------ sequence laps (no replay) */

/* Keep a copy of node 2's DATA frames with one of two sequence numbers. */
struct lapcap {
	uint16_t seq[2];
	size_t len[2];
	uint8_t f[2][HTOE_FRAME_MAX];
};

static bool cap_data(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct lapcap *c = arg;
	struct htoe_hdr h;

	assert_int_equal(parse_sent(f, len, &h), 0);
	for (unsigned i = 0; i < 2; i++)
		if (from == 2 && h.ftype == HTOE_FT_DATA && h.seq == c->seq[i] && !c->len[i]) {
			memcpy(c->f[i], f, len);
			c->len[i] = len;
		}
	return true;
}

/* Loses about one frame in `loss` both ways (deterministic). */
struct lossy {
	uint64_t x;
	unsigned loss;
};

static bool lose_some(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct lossy *l = arg;

	(void)from;
	(void)f;
	(void)len;
	l->x = l->x * 6364136223846793005ull + 1442695040888963407ull;
	return l->loss == 0 || (l->x >> 33) % l->loss != 0;
}

/* n posted writes from node 2 to node 1 (at 1 µs steps from *now, or to the
 * next deadline when nothing moves), every one delivered once and in order,
 * through filt. one: the next write only once the last is delivered, so
 * that each goes in a frame of its own (frame k has seq k mod 2^16). */
static void writes_21(uint32_t n, bool one, uint64_t *now, filter_fn filt, void *arg)
{
	struct ht_pkt p, q;
	uint32_t sent = 0, got = 0;

	while (got < n) {
		unsigned moved;

		if (sent < n && (!one || sent == got) && htoe_vl_is_up(N[2].b, 1)) {
			mk_write(&p, gaddr(1, 64u * (sent % 1024)), true, 1, 0);
			if (local_in(2, &p, *now) == 0)
				sent++;
		}
		moved = pump(*now, HTOE_TX_FLUSH, filt, arg);
		while (local_out(1, &q, *now)) {
			assert_true(q.addr == MEM_BASE + 64u * (got % 1024));
			got++;
		}
		if (!moved && (one ? sent != got : sent == n)) {
			uint64_t d = htoe_next_deadline(N[1].b), d2 = htoe_next_deadline(N[2].b);

			d = d < d2 ? d : d2;
			*now = d > *now && d != UINT64_MAX ? d : *now + 1 * US;
		} else {
			*now += 1 * US;
		}
		assert_true(*now < 100000000 * US); /* a watchdog */
	}
	assert_false(local_out(1, &q, *now));
}

/* An attacker replays node 2's frame of seq 0 when node 1 expects seq 0
 * again, one lap (65 536 frames) later, and frames of the previous lap just
 * behind and ahead of the expected one: each is dropped as stale_lap,
 * nothing reaches node 1's memory, and the link goes on. (Counted with the
 * bridge's drops: the CRC check comes before the frame is the VL's.) */
static void test_replay_previous_lap(void **state)
{
	struct lapcap c = { .seq = { 0, 65000 } };
	struct ht_pkt q;
	uint64_t now = 1 * US;
	uint64_t d0;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	writes_21(65000 + 1, true, &now, cap_data, &c);
	assert_true(c.len[0] > 0 && c.len[1] > 0);
	/* delayed duplicates of the previous lap on a real network: node 1
	 * expects seq 50 of lap 1; seq 0 of lap 0 is 50 behind */
	writes_21(65536 + 50 - 65001, true, &now, NULL, NULL);
	d0 = htoe_get_stats(N[1].b)->drops[HTOE_DROP_STALE_LAP];
	assert_int_equal(htoe_frame_input(N[1].b, c.f[0], c.len[0], now), -HTOE_DROP_STALE_LAP);
	assert_false(local_out(1, &q, now));
	/* node 1 expects seq 64990 of lap 1: seq 65000 of lap 0 is 10 ahead */
	writes_21(64990 - 50, true, &now, NULL, NULL);
	assert_int_equal(htoe_frame_input(N[1].b, c.f[1], c.len[1], now), -HTOE_DROP_STALE_LAP);
	assert_false(local_out(1, &q, now));
	/* exactly the expected sequence number, one lap later */
	writes_21(10, true, &now, NULL, NULL);
	assert_int_equal(htoe_frame_input(N[1].b, c.f[1], c.len[1], now), -HTOE_DROP_STALE_LAP);
	assert_false(local_out(1, &q, now));
	assert_int_equal(htoe_get_stats(N[1].b)->drops[HTOE_DROP_STALE_LAP], d0 + 3);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->resets, 0);
	/* a corrupted frame is a CRC error, not a stale lap */
	c.f[1][14 + 32 + 3] ^= 1;
	assert_int_equal(htoe_frame_input(N[1].b, c.f[1], c.len[1], now), -HTOE_DROP_CRC);
	/* the link goes on: the next write is delivered */
	writes_21(10, true, &now, NULL, NULL);
	free_nodes();
}

/* Several laps with loss (ack and data frames lost, Go-Back-N or selective
 * retransmissions across the wraps): every write is delivered once and in
 * order, no frame is taken for a stale lap, no reset. */
static void test_laps_with_loss(void **state)
{
	struct lossy l = { .x = 42, .loss = 50 };
	uint64_t now = 1 * US;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	writes_21(3 * 65536 + 1000, false, &now, lose_some, &l);
	for (uint16_t id = 1; id <= 2; id++) {
		assert_int_equal(htoe_get_stats(N[id].b)->drops[HTOE_DROP_STALE_LAP], 0);
		assert_int_equal(htoe_get_stats(N[id].b)->drops[HTOE_DROP_CRC], 0);
	}
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->resets, 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->resets, 0);
	assert_true(htoe_get_vl_stats(N[2].b, 1)->retransmits > 0);
	free_nodes();
}

/* ---------------------------------------------------- selective retry */

static void inv_ok(void)
{
	char err[256];

	for (uint16_t id = 1; id <= n_nodes; id++)
		if (htoe_check_invariants(N[id].b, err, sizeof(err)) != 0)
			fail_msg("node %u: %s", id, err);
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

static void pool_of_8(struct htoe_config *c)
{
	pool_sized(c, 16, 8);
}

/* Held frames give their receive buffers back: with 8 credits, a lost
 * frame of one write and 7 held behind it, the sender is granted 7 more
 * and keeps sending during the repair instead of waiting for it with every
 * credit held behind the hole. Every write still arrives once, in order. */
static void test_sel_held_frees_credits(void **state)
{
	struct ht_pkt p;
	uint8_t f[HTOE_FRAME_MAX];
	struct htoe_hdr h;
	unsigned got = 0, fresh = 0;
	int len;

	(void)state;
	mk_nodes(2, pool_of_8);
	bring_up();
	for (unsigned i = 0; i < 8; i++) { /* seq 0 is lost, 1..7 held */
		len = frame_write(i, f);
		if (i)
			assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 1 * US), 0);
	}
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->rx_held, 7);
	inv_ok();
	/* node 1 has used its 8 credits: a new write waits */
	mk_write(&p, gaddr(2, 64u * 8), true, 1, 0);
	assert_int_equal(local_in(1, &p, 1 * US), 0);
	assert_int_equal(htoe_frame_output(N[1].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH), 0);
	/* node 2's SACK carries the buffers of the held frames again */
	while ((len = htoe_frame_output(N[2].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH)) > 0)
		assert_int_equal(htoe_frame_input(N[1].b, f, (size_t)len, 1 * US), 0);
	for (unsigned i = 9; i < 16; i++) {
		mk_write(&p, gaddr(2, 64u * i), true, 1, 0);
		assert_int_equal(local_in(1, &p, 1 * US), 0);
	}
	/* before the reordering window ends, only new writes go (seq 8 on):
	 * 7 of the 8 queued */
	while ((len = htoe_frame_output(N[1].b, f, sizeof(f), 1 * US, HTOE_TX_FLUSH)) > 0) {
		assert_int_equal(parse_sent(f, (size_t)len, &h), 0);
		if (h.ftype != HTOE_FT_DATA)
			continue;
		assert_true(h.seq >= 8);
		fresh += h.npkts;
		assert_int_equal(htoe_frame_input(N[2].b, f, (size_t)len, 1 * US), 0);
	}
	assert_int_equal(fresh, 7);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->retransmits, 0);
	assert_false(local_out(2, &p, 1 * US)); /* all held behind seq 0 */
	inv_ok();
	/* the repair: every write once, in order */
	for (uint64_t t = 100 * US; t < 2000 * US && got < 16; t += 100 * US) {
		pump(t, HTOE_TX_FLUSH, NULL, NULL);
		while (local_out(2, &p, t)) {
			assert_int_equal(p.addr, MEM_BASE + 64u * got);
			got++;
		}
		inv_ok();
	}
	assert_int_equal(got, 16);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->retransmits, 1);
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

/* Responses that come in frames held behind a lost one, in the reorder
 * buffer's unpooled slots (their receive buffers given back at once), are
 * queued for the local side without a buffer: taking them in one burst
 * releases exactly what is held, and the peer's restart then finds no
 * buffer still counted (forced_releases 0). */
static void test_sel_held_responses_released(void **state)
{
	struct htoe_pkt_ref ref[8];
	struct ht_pkt p, q, r;
	uint8_t f[HTOE_FRAME_MAX];
	struct htoe_hdr h;
	unsigned got = 0, k, data = 0;
	int len;

	(void)state;
	next_inc = 100;
	mk_nodes(2, NULL);
	bring_up();
	for (uint8_t t = 0; t < 4; t++) {
		mk_read(&p, gaddr(2, 64u * t), 1, t);
		assert_int_equal(local_in(1, &p, 1 * US), 0);
	}
	pump(1 * US, HTOE_TX_FLUSH, NULL, NULL);
	/* node 2 answers each read in a frame of its own; the first is lost */
	for (unsigned i = 0; i < 4; i++) {
		assert_true(local_out(2, &q, 2 * US));
		mk_answer(&q, &r);
		assert_int_equal(local_in(2, &r, 2 * US), 0);
		while ((len = htoe_frame_output(N[2].b, f, sizeof(f), 2 * US, HTOE_TX_FLUSH)) > 0) {
			assert_int_equal(parse_sent(f, (size_t)len, &h), 0);
			data += h.ftype == HTOE_FT_DATA;
			if (h.ftype != HTOE_FT_DATA || i > 0)
				htoe_frame_input(N[1].b, f, (size_t)len, 2 * US);
		}
	}
	assert_int_equal(data, 4);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->rx_held, 3);
	inv_ok();
	/* the repair: the lost response again, then the three held ones, all
	 * taken in one burst */
	for (uint64_t t = 100 * US; t < 5000 * US && !htoe_local_pending(N[1].b); t += 100 * US) {
		pump(t, HTOE_TX_FLUSH, NULL, NULL);
		inv_ok();
	}
	assert_int_equal(htoe_local_pending(N[1].b), 4);
	k = htoe_local_output_burst(N[1].b, ref, 8, 5000 * US);
	assert_int_equal(k, 4);
	for (unsigned i = 0; i < k; i++) {
		assert_int_equal(ht_decode(ref[i].pkt, ref[i].len, &r), (int)ref[i].len);
		assert_int_equal(r.kind, HT_K_RDRESPONSE);
		assert_int_equal(r.srctag, got);
		got++;
	}
	htoe_local_output_done(N[1].b);
	inv_ok();
	/* node 2 restarts: node 1's reset of the VL finds nothing held */
	htoe_free(N[2].b);
	mk_node(2, 2, NULL);
	pump(6000 * US, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(htoe_vl_is_up(N[1].b, 2));
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->peer_restarts, 1);
	assert_int_equal(htoe_get_vl_stats(N[1].b, 2)->forced_releases, 0);
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

/* Local packets for the loopback tests: posted writes and reads of node
 * 1's own memory, mixed (a read waits for the writes queued before it). */
static unsigned fill_loopback(unsigned max, uint64_t now)
{
	unsigned n = 0;

	for (; n < max; n++) {
		struct ht_pkt p;

		if (n % 5 == 4)
			mk_read(&p, gaddr(1, 0x40 * n), 2, (uint8_t)(n / 5 % 32));
		else
			mk_write(&p, gaddr(1, 0x40 * n), true, 2, 0);
		if (local_in(1, &p, now) != 0)
			break;
	}
	return n;
}

/* htoe_local_output_burst hands out the same packets in the same order as
 * htoe_local_output, in place; a lent packet's slot is not reused before
 * htoe_local_output_done (input that would need it is pushed back). */
static void test_local_output_burst(void **state)
{
	uint8_t seq_copy[64][HT_MAX_PKT_LEN], lent_copy[8][HT_MAX_PKT_LEN];
	unsigned n_copy = 0, n_burst = 0, queued, k;
	struct htoe_pkt_ref ref[8];
	int n;

	(void)state;
	/* reference: the copying API */
	mk_nodes(2, NULL);
	bring_up();
	queued = fill_loopback(40, 0);
	assert_int_equal(queued, 40);
	while ((n = htoe_local_output(N[1].b, seq_copy[n_copy], HT_MAX_PKT_LEN, 0)) > 0)
		n_copy++;
	assert_int_equal(n_copy, 40);
	free_nodes();

	/* the same input, taken in bursts of 3 */
	mk_nodes(2, NULL);
	bring_up();
	assert_int_equal(fill_loopback(40, 0), 40);
	while ((k = htoe_local_output_burst(N[1].b, ref, 3, 0)) > 0) {
		for (unsigned i = 0; i < k; i++, n_burst++) {
			assert_true(n_burst < n_copy);
			assert_memory_equal(ref[i].pkt, seq_copy[n_burst], ref[i].len);
		}
		htoe_local_output_done(N[1].b);
	}
	assert_int_equal(n_burst, n_copy);

	/* fill the posted queue, lend 8 of its packets, offer more */
	queued = fill_loopback(10000, 0);
	assert_true(queued > 8 && queued < 10000);
	k = htoe_local_output_burst(N[1].b, ref, 8, 0);
	assert_int_equal(k, 8);
	for (unsigned i = 0; i < k; i++)
		memcpy(lent_copy[i], ref[i].pkt, ref[i].len);
	struct ht_pkt p;
	mk_write(&p, gaddr(1, 0x8000), true, 2, 0);
	assert_int_equal(local_in(1, &p, 0), -EAGAIN); /* the lent slots are not free */
	for (unsigned i = 0; i < k; i++)
		assert_memory_equal(ref[i].pkt, lent_copy[i], ref[i].len);
	htoe_local_output_done(N[1].b);
	assert_int_equal(local_in(1, &p, 0), 0); /* now they are */
	inv_ok();
	free_nodes();
}

/* A local side with no room for responses (htoe_local_output_burst_np with
 * np_max 0) still takes the posted writes and the responses queued for it,
 * and the non-posted requests only once it has room: HT's deadlock rule
 * (app/node takes at most its response queue's room of requests; when it
 * took nothing at all with a full queue, two nodes whose responses waited
 * on each other's receive buffers stopped for good). */
static void test_local_output_burst_np(void **state)
{
	struct htoe_pkt_ref ref[8];
	struct ht_pkt p, q, r;
	unsigned k;

	(void)state;
	mk_nodes(2, NULL);
	bring_up();
	/* node 1 reads node 2; node 2's target takes it, its answer waits */
	mk_read(&p, gaddr(2, 0x40), 2, 1);
	assert_int_equal(local_in(1, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &q, 0));
	mk_answer(&q, &r);
	/* node 2 then writes node 1 (posted), reads it, and answers */
	mk_write(&p, gaddr(1, 0x80), true, 2, 0);
	assert_int_equal(local_in(2, &p, 0), 0);
	mk_read(&p, gaddr(1, 0xc0), 2, 3);
	assert_int_equal(local_in(2, &p, 0), 0);
	assert_int_equal(local_in(2, &r, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	/* no room for a response: the write and the answer, not the read */
	k = htoe_local_output_burst_np(N[1].b, ref, 8, 0, 0);
	assert_int_equal(k, 2);
	assert_int_equal(ht_decode(ref[0].pkt, ref[0].len, &p), (int)ref[0].len);
	assert_true(p.kind == HT_K_WRSIZED && p.posted);
	assert_int_equal(ht_decode(ref[1].pkt, ref[1].len, &p), (int)ref[1].len);
	assert_int_equal(p.kind, HT_K_RDRESPONSE);
	htoe_local_output_done(N[1].b);
	assert_int_equal(htoe_local_output_burst_np(N[1].b, ref, 8, 0, 0), 0);
	/* room for one: the read */
	k = htoe_local_output_burst_np(N[1].b, ref, 8, 1, 0);
	assert_int_equal(k, 1);
	assert_int_equal(ht_decode(ref[0].pkt, ref[0].len, &p), (int)ref[0].len);
	assert_int_equal(p.kind, HT_K_RDSIZED);
	htoe_local_output_done(N[1].b);
	inv_ok();
	free_nodes();
}

/* A burst of the local side that spans several VLs' packets (the receive
 * buffers of a run of one VL's packets are released at once) gives every
 * buffer back: two senders to one node with 4 credits each finish all their
 * writes, and the credit accounting holds after every burst. */
static void test_local_output_burst_release(void **state)
{
	struct htoe_pkt_ref ref[5];
	struct ht_pkt p;
	unsigned delivered = 0, from[4] = { 0 }, k;
	uint64_t now = 10 * US;

	(void)state;
	mk_nodes(3, tiny_pool);
	bring_up();
	for (unsigned i = 0; i < 12; i++)
		for (uint16_t id = 1; id <= 3; id += 2) {
			mk_write(&p, gaddr(2, 64u * (i + 16u * id)), true, 1, 0);
			assert_int_equal(local_in(id, &p, now), 0);
		}
	for (unsigned round = 0; round < 50 && delivered < 24; round++) {
		pump(now, HTOE_TX_FLUSH, NULL, NULL);
		/* bursts of 5: each crosses from node 1's packets to node 3's */
		while ((k = htoe_local_output_burst(N[2].b, ref, 5, now)) > 0) {
			for (unsigned i = 0; i < k; i++) {
				assert_int_equal(ht_decode(ref[i].pkt, ref[i].len, &p), (int)ref[i].len);
				from[(p.addr - MEM_BASE) / (64u * 16u) % 4]++;
			}
			delivered += k;
			htoe_local_output_done(N[2].b);
			inv_ok();
		}
		now += 10 * US;
	}
	assert_int_equal(delivered, 24);
	assert_int_equal(from[1], 12);
	assert_int_equal(from[3], 12);
	free_nodes();
}

/* A local-side sink (htoe_set_local_sink): what it was handed, in order,
 * per node; serve answers reads with data byte 0xAB unless told not to. */
struct sunk {
	uint8_t kind, unitid, srctag, rsp_err, data0;
	uint64_t addr;
};
static struct sunk sunk[3][64];
static unsigned n_sunk[3], n_served[3];
static bool serve_refuses;

static unsigned sink_node(void *ctx)
{
	unsigned id = (unsigned)((unsigned *)ctx - n_sunk);

	assert_true(id >= 1 && id <= 2);
	return id;
}

static void sink_deliver(void *ctx, const struct ht_desc *d, uint64_t now)
{
	unsigned id = sink_node(ctx);
	struct sunk *e = &sunk[id][n_sunk[id]];

	(void)now;
	assert_true(n_sunk[id] < 64);
	/* parsed once by the bridge: the same as a parse of its bytes */
	struct ht_desc again;
	assert_int_equal(ht_desc_parse(d->pkt, d->len, &again), (int)d->len);
	assert_int_equal(again.kind, d->kind);
	assert_true(d->vc == HT_VC_P || d->vc == HT_VC_R);
	*e = (struct sunk){ d->kind, d->unitid, d->srctag, d->rsp_err,
			    d->data_len ? d->pkt[d->data_off] : 0, d->addr };
	n_sunk[id]++;
}

static int sink_serve(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap, uint64_t now)
{
	unsigned id = sink_node(ctx);
	struct ht_pkt q, r;

	(void)now;
	if (serve_refuses)
		return 0;
	assert_true(cap >= HT_MAX_PKT_LEN);
	assert_int_equal(d->vc, HT_VC_NP);
	assert_true(ht_desc_decode(d, &q) > 0);
	mk_answer(&q, &r);
	r.data[0] = 0xAB;
	sunk[id][n_sunk[id]++] = (struct sunk){ d->kind, d->unitid, d->srctag, 0, 0, d->addr };
	n_served[id]++;
	return ht_encode(&r, rsp, cap);
}

static void set_sink(uint16_t id, bool deliver, bool serve)
{
	struct htoe_local_sink s = { deliver ? sink_deliver : NULL, serve ? sink_serve : NULL,
				     &n_sunk[id] };

	htoe_set_local_sink(N[id].b, &s);
}

/* Two nodes up, the logs empty, node 1 with a sink (serving requests or not). */
static void sink_nodes(bool serve)
{
	mk_nodes(2, NULL);
	bring_up();
	memset(n_sunk, 0, sizeof(n_sunk));
	memset(n_served, 0, sizeof(n_served));
	serve_refuses = false;
	set_sink(1, true, serve);
}

/* Node 2 reads 64 bytes at node 1's offset off with SrcTag tag; the
 * frames are exchanged. */
static void read_from_2(uint64_t off, uint8_t tag)
{
	struct ht_pkt p;

	mk_read(&p, gaddr(1, off), 2, tag);
	assert_int_equal(local_in(2, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
}

/* Node 1's local side answers request q (taken from its queue); node 2
 * gets the response, with SrcTag `tag`, from its queue. */
static void answer_queued(const struct ht_pkt *q, uint8_t tag)
{
	struct ht_pkt r;

	mk_answer(q, &r);
	assert_int_equal(local_in(1, &r, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_true(local_out(2, &r, 0));
	assert_int_equal(r.srctag, tag);
}

/* With a sink, remote posted writes are applied straight from the frame,
 * in order; while a posted write waits in the local queue (here a local
 * loopback write), later ones queue behind it (posted order); requests
 * are not affected while no serve is set. */
static void test_sink_posted(void **state)
{
	struct ht_pkt p, q;

	(void)state;
	sink_nodes(false);
	for (unsigned i = 0; i < 5; i++) {
		mk_write(&p, gaddr(1, 0x40 * i), true, 2, 0);
		assert_int_equal(local_in(2, &p, 0), 0);
	}
	mk_read(&p, gaddr(1, 0x400), 2, 3);
	assert_int_equal(local_in(2, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(n_sunk[1], 5);
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(sunk[1][i].kind, HT_K_WRSIZED);
		assert_int_equal(sunk[1][i].addr, MEM_BASE + 0x40 * i);
	}
	/* the read was queued as usual */
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_RDSIZED);
	assert_false(local_out(1, &q, 0));

	/* a loopback posted write waits in node 1's queue: remote ones queue
	 * behind it and come out in order */
	mk_write(&p, gaddr(1, 0x800), true, 2, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	for (unsigned i = 0; i < 3; i++) {
		mk_write(&p, gaddr(1, 0x1000 + 0x40 * i), true, 2, 0);
		assert_int_equal(local_in(2, &p, 0), 0);
	}
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(n_sunk[1], 5);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.addr, MEM_BASE + 0x800);
	for (unsigned i = 0; i < 3; i++) {
		assert_true(local_out(1, &q, 0));
		assert_int_equal(q.addr, MEM_BASE + 0x1000 + 0x40 * i);
	}
	/* the queue is empty again: straight from the frame */
	mk_write(&p, gaddr(1, 0x2000), true, 2, 0);
	assert_int_equal(local_in(2, &p, 0), 0);
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(n_sunk[1], 6);
	assert_int_equal(sunk[1][5].addr, MEM_BASE + 0x2000);
	inv_ok();
	free_nodes();
}

/* A filter: drops the first DATA frame, counted in *arg. */
static bool drop_first_data(uint16_t from, const uint8_t *f, size_t len, void *arg)
{
	struct htoe_hdr h;
	unsigned *n = arg;

	(void)from;
	assert_int_equal(parse_sent(f, len, &h), 0);
	if (h.ftype != HTOE_FT_DATA || *n)
		return true;
	(*n)++;
	return false;
}

/* One credit per VC and class: every read of node 2 needs the grant that
 * node 1's response carries back. */
static void one_credit(struct htoe_config *c)
{
	pool_sized(c, 4, 1);
}

/* A frame node `id` sends now (HTOE_TX_FLUSH) goes to its peer; its length
 * (0: none). */
static int send_one(uint16_t id, uint64_t now)
{
	int len = htoe_frame_output(N[id].b, fbuf, sizeof(fbuf), now, HTOE_TX_FLUSH);

	assert_true(len >= 0);
	if (len > 0)
		assert_int_equal(htoe_frame_input(N[3 - id].b, fbuf, (size_t)len, now), 0);
	return len;
}

/* Node 2 reads node 1's memory with one read in flight (the read round
 * trip); with `scarce`, one credit, so that each request needs the grant
 * that node 1's response carries back. */
static void held_ack_rounds(bool scarce)
{
	struct ht_pkt p;
	struct htoe_hdr h;
	uint64_t now = 10 * US;

	mk_nodes(2, scarce ? one_credit : NULL);
	bring_up();
	memset(n_sunk, 0, sizeof(n_sunk));
	memset(n_served, 0, sizeof(n_served));
	serve_refuses = false;
	set_sink(1, true, true);
	set_sink(2, true, false);
	for (unsigned i = 0; i < 8; i++) {
		/* the read's frame is the first thing node 2 frames: before
		 * the ack held from node 1's last response is applied (its
		 * queue slot still counted busy), or, when only the credit
		 * that ack carries lets it go, after it */
		unsigned busy = htoe_busy(N[2].b);

		assert_int_equal(busy, i ? 1 : 0);
		mk_read(&p, gaddr(1, 0x40 * i), 2, (uint8_t)i);
		assert_int_equal(local_in(2, &p, now), 0);
		int len = htoe_frame_output(N[2].b, fbuf, sizeof(fbuf), now, HTOE_TX_FLUSH);

		assert_true(len > 0);
		assert_int_equal(parse_sent(fbuf, (size_t)len, &h), 0);
		assert_int_equal(h.ftype, HTOE_FT_DATA);
		assert_int_equal(h.npkts, 1);
		assert_int_equal(htoe_frame_input(N[1].b, fbuf, (size_t)len, now), 0);
		assert_int_equal(htoe_busy(N[2].b), scarce || !i ? 2 : 3);
		assert_int_equal(send_one(2, now), 0); /* then the ack */
		assert_int_equal(htoe_busy(N[2].b), 2);
		/* node 1 served the read; its response acknowledges it */
		now += US;
		assert_int_equal(n_served[1], i + 1);
		assert_true(send_one(1, now) > 0);
		assert_int_equal(send_one(1, now), 0);
		assert_int_equal(n_sunk[2], i + 1);
		assert_int_equal(sunk[2][i].srctag, i);
		assert_int_equal(htoe_busy(N[2].b), 1); /* the ack waits */
	}
	/* a timer check applies it first: no timeout for a frame that was
	 * acknowledged */
	htoe_handle_expiry(N[2].b, now + 1000000000ull);
	assert_int_equal(htoe_busy(N[2].b), 0);
	for (int len; (len = htoe_frame_output(N[2].b, fbuf, sizeof(fbuf), now + 1000000000ull,
					       HTOE_TX_FLUSH)) > 0;) {
		assert_int_equal(parse_sent(fbuf, (size_t)len, &h), 0);
		assert_int_equal(h.ftype, HTOE_FT_ACK); /* of the last response */
	}
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->timeouts, 0);
	assert_int_equal(htoe_get_vl_stats(N[2].b, 1)->retransmits, 0);
	inv_ok();
	free_nodes();
}

/* The ack of a DATA frame is applied after the frame it lets leave (on a
 * read round trip, applying it first delays that frame at both ends),
 * unless the credits or the window it brings are needed for that frame;
 * the timers and a reset see no held ack. */
static void test_held_ack(void **state)
{
	struct ht_pkt p;
	uint64_t now = 10 * US;

	(void)state;
	held_ack_rounds(false);
	held_ack_rounds(true);
	/* A reset with an ack held: the ack belongs to the old epoch and is
	 * dropped. Node 2's first frame of the new epoch (a posted write kept
	 * over the warm reset) is lost on the way and resent. */
	sink_nodes(true);
	set_sink(2, true, false);
	mk_read(&p, gaddr(1, 0), 2, 1);
	assert_int_equal(local_in(2, &p, now), 0);
	assert_true(send_one(2, now) > 0);
	assert_true(send_one(1, now) > 0); /* the response: its ack held */
	assert_int_equal(htoe_busy(N[2].b), 1);
	assert_int_equal(htoe_vl_reset(N[2].b, 1, false, now), 0);
	/* kept for the new epoch (a warm reset): its first frame there */
	mk_write(&p, gaddr(1, 0x100), true, 2, 0);
	assert_int_equal(local_in(2, &p, now), 0);
	unsigned dropped = 0;

	pump(now, HTOE_TX_FLUSH, drop_first_data, &dropped);
	assert_int_equal(dropped, 1);
	assert_true(htoe_vl_is_up(N[2].b, 1));
	assert_true(htoe_vl_is_up(N[1].b, 2));
	for (unsigned round = 0; round < 100 && n_sunk[1] < 2; round++) {
		now += 100 * US;
		pump(now, HTOE_TX_FLUSH, NULL, NULL);
	}
	assert_int_equal(n_sunk[1], 2); /* the read, then the write */
	assert_int_equal(sunk[1][1].kind, HT_K_WRSIZED);
	assert_int_equal(sunk[1][1].addr, MEM_BASE + 0x100);
	inv_ok();
	free_nodes();
}

/* Non-posted requests served from the frame, their responses encoded into
 * the VL's transmit slot with the requester's own tags (no remapping); a
 * request that must wait (a posted write queued before it, the sink says
 * "not now", the access table refuses it) takes the queued path; responses
 * go to the requester's sink unless a posted write without PassPW waits. */
static void test_sink_serve(void **state)
{
	struct ht_pkt p, q;

	(void)state;
	sink_nodes(true);

	/* served at once: node 2 (no sink) gets the answer with its tags */
	read_from_2(0x400, 3);
	assert_int_equal(n_served[1], 1);
	assert_int_equal(sunk[1][0].unitid, 2); /* the requester's tags, not remapped */
	assert_int_equal(sunk[1][0].srctag, 3);
	assert_int_equal(sunk[1][0].addr, MEM_BASE + 0x400);
	assert_false(local_out(1, &q, 0));
	assert_int_equal(htoe_get_stats(N[1].b)->local_in, 1);
	assert_true(local_out(2, &q, 0));
	assert_int_equal(q.kind, HT_K_RDRESPONSE);
	assert_int_equal(q.unitid, 2);
	assert_int_equal(q.srctag, 3);
	assert_int_equal(q.data[0], 0xAB);
	assert_int_equal(ht_pkt_rsp_err(&q), HT_RSP_OK);

	/* "not now": queued, remapped to the bridge's UnitID as without a sink */
	serve_refuses = true;
	read_from_2(0x440, 4);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_RDSIZED);
	assert_int_equal(q.unitid, 8);
	serve_refuses = false;
	answer_queued(&q, 4);

	/* a posted write waits in node 1's queue: the read queues behind it */
	mk_write(&p, gaddr(1, 0x800), true, 2, 0);
	assert_int_equal(local_in(1, &p, 0), 0);
	read_from_2(0x480, 5);
	assert_int_equal(n_served[1], 1);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_WRSIZED);
	assert_true(local_out(1, &q, 0));
	assert_int_equal(q.kind, HT_K_RDSIZED);
	answer_queued(&q, 5);

	/* node 2 with a sink: the response goes to it from the frame... */
	set_sink(2, true, false);
	read_from_2(0x4c0, 6);
	assert_int_equal(n_served[1], 2);
	assert_int_equal(n_sunk[2], 1);
	assert_int_equal(sunk[2][0].kind, HT_K_RDRESPONSE);
	assert_int_equal(sunk[2][0].srctag, 6);
	assert_int_equal(sunk[2][0].data0, 0xAB);
	assert_false(local_out(2, &q, 0));
	/* ...but not past a posted write (no PassPW) waiting on node 2 */
	mk_write(&p, gaddr(2, 0x100), true, 1, 0);
	assert_int_equal(local_in(2, &p, 0), 0);
	read_from_2(0x500, 7);
	assert_int_equal(n_served[1], 3); /* served on node 1, queued on node 2 */
	assert_int_equal(n_sunk[2], 1);
	assert_true(local_out(2, &q, 0));
	assert_int_equal(q.kind, HT_K_WRSIZED);
	assert_true(local_out(2, &q, 0));
	assert_int_equal(q.kind, HT_K_RDRESPONSE);
	assert_int_equal(q.srctag, 7);

	/* the access table refuses node 2: not served, Target Abort */
	assert_int_equal(htoe_acl_protect(N[1].b, MEM_BASE, MEM_SIZE), 0);
	read_from_2(0x540, 8);
	assert_false(local_out(1, &q, 0)); /* refused when taken */
	pump(0, HTOE_TX_FLUSH, NULL, NULL);
	assert_int_equal(n_served[1], 3);
	assert_int_equal(n_sunk[2], 2);
	assert_int_equal(sunk[2][1].srctag, 8);
	assert_int_equal(sunk[2][1].rsp_err, HT_RSP_TARGET_ABORT);
	/* allowed: served again */
	assert_int_equal(htoe_acl_set(N[1].b, 2, MEM_BASE, 0x1000, HTOE_ACL_READ), 0);
	read_from_2(0x580, 9);
	assert_int_equal(n_served[1], 4);
	assert_int_equal(n_sunk[2], 3);
	assert_int_equal(sunk[2][2].rsp_err, HT_RSP_OK);
	assert_int_equal(htoe_get_stats(N[1].b)->acl_denied, 1);
	/* served on node 1: reads 0x400, 0x4c0, 0x500, 0x580; to node 2's sink:
	 * the responses 6, 8 (Target Abort), 9 */
	assert_int_equal(htoe_get_stats(N[1].b)->local_direct, 4);
	assert_int_equal(htoe_get_stats(N[2].b)->local_direct, 3);
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
		cmocka_unit_test(test_address_prefix),
		cmocka_unit_test(test_pending_table_backpressure),
		cmocka_unit_test(test_per_vl_backpressure_and_stall),
		cmocka_unit_test(test_flush_behind_unsent_and_stalled),
		cmocka_unit_test(test_flush_many_peers),
		cmocka_unit_test(test_reset_poisons_only_that_vl),
		cmocka_unit_test(test_np_timeout_and_late_response),
		cmocka_unit_test(test_queued_while_resetting_one_outcome),
		cmocka_unit_test(test_drops),
		cmocka_unit_test(test_credit_overrun),
		cmocka_unit_test(test_credit_probe),
		cmocka_unit_test(test_vlan_pcp),
		cmocka_unit_test(test_ctrl_messages),
		cmocka_unit_test(test_ctrl_ahead_of_data),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_check_field),
		cmocka_unit_test(test_local_input_pkt),
		cmocka_unit_test(test_local_input_run),
		cmocka_unit_test(test_local_input_reads),
		cmocka_unit_test(test_lease_acl),
		cmocka_unit_test(test_acl_api),
		cmocka_unit_test(test_lease_restarts),
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_src_mac_binding),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_reset_ack_nonce),
		cmocka_unit_test(test_peer_restart),
		cmocka_unit_test(test_loss_events),
		cmocka_unit_test(test_loss_events_requests),
		cmocka_unit_test(test_ctrl_new_incarnation),
		cmocka_unit_test(test_forged_reset),
		cmocka_unit_test(test_forged_claim_then_restart),
		cmocka_unit_test(test_replay_previous_lap),
		cmocka_unit_test(test_laps_with_loss),
		cmocka_unit_test(test_sel_negotiation),
		cmocka_unit_test(test_full_at_time_zero_pushes_back),
		cmocka_unit_test(test_sel_gap),
		cmocka_unit_test(test_sel_held_frees_credits),
		cmocka_unit_test(test_sel_reset_while_held),
		cmocka_unit_test(test_sel_held_responses_released),
		cmocka_unit_test(test_sel_forged_sacks),
		cmocka_unit_test(test_local_output_burst),
		cmocka_unit_test(test_local_output_burst_np),
		cmocka_unit_test(test_local_output_burst_release),
		cmocka_unit_test(test_sink_posted),
		cmocka_unit_test(test_sink_serve),
		cmocka_unit_test(test_held_ack),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	use_pkt = true;
	return r + cmocka_run_group_tests(tests, NULL, NULL);
}
