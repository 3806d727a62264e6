/* SPDX-License-Identifier: BSD-3-Clause
 * cmocka tests for lib/htmodel/ht_link: credits, NOPs, ordering, receive
 * buffers and error accounting.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "htmodel/ht_link.h"
#include "htmodel/ht_packet.h"
#include "htmodel/ht_rand.h"

/* ---- packet builders ---- */

static struct ht_pkt mk_posted_write(uint64_t addr, uint8_t fill)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.posted = 1;
	p.dword = 1;
	p.coherent = 1;
	p.unitid = 1;
	p.addr = addr;
	p.count = 0;
	p.data_len = 4;
	memset(p.data, fill, 4);
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_WRSIZED), 0);
	return p;
}

static struct ht_pkt mk_fence(void)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.unitid = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_FENCE), 0);
	return p;
}

static struct ht_pkt mk_read(uint64_t addr, uint8_t tag, uint8_t passpw)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.dword = 1;
	p.coherent = 1;
	p.unitid = 1;
	p.srctag = tag;
	p.passpw = passpw;
	p.addr = addr;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_RDSIZED), 0);
	return p;
}

static struct ht_pkt mk_atomic(uint64_t addr, uint8_t tag)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.unitid = 1;
	p.srctag = tag;
	p.addr = addr;
	p.count = HT_ATOMIC_FETCHADD_COUNT;
	p.data_len = 8;
	p.data[0] = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_ATOMIC), 0);
	return p;
}

static struct ht_pkt mk_tgtdone(uint8_t tag, uint8_t passpw)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.unitid = 1;
	p.srctag = tag;
	p.bridge = 1;
	p.passpw = passpw;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_TGTDONE), 0);
	return p;
}

static struct ht_pkt mk_rdresp(uint8_t tag)
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.unitid = 1;
	p.srctag = tag;
	p.bridge = 1;
	p.count = 0;
	p.data_len = 4;
	p.data[0] = 0xAB;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_RDRESPONSE), 0);
	return p;
}

/* Encoded NOP carrying the given credits (order: P cmd, P data, NP cmd,
 * NP data, R cmd, R data, i.e. the link's class order). */
static int mk_nop_bytes(uint8_t *buf, const uint8_t cr[HT_LINK_NCLASS])
{
	struct ht_pkt p;
	memset(&p, 0, sizeof(p));
	p.postcmd = cr[0];
	p.postdata = cr[1];
	p.npcmd = cr[2];
	p.npdata = cr[3];
	p.resp = cr[4];
	p.respdata = cr[5];
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_NOP), 0);
	int n = ht_encode(&p, buf, HT_MAX_PKT_LEN);
	assert_int_equal(n, 4);
	return n;
}

/* Give the link credits as if the peer had sent a NOP. */
static void give_credits(struct ht_link *l, unsigned pc, unsigned pd, unsigned nc, unsigned nd,
			 unsigned rc, unsigned rd)
{
	uint8_t buf[HT_MAX_PKT_LEN];
	const uint8_t cr[HT_LINK_NCLASS] = { (uint8_t)pc, (uint8_t)pd, (uint8_t)nc,
					     (uint8_t)nd, (uint8_t)rc, (uint8_t)rd };
	struct ht_pkt out;
	int n = mk_nop_bytes(buf, cr);
	assert_int_equal(ht_link_rx(l, buf, (size_t)n, &out), 0);
}

/* A link with no receive buffers (so it never emits NOPs of its own). */
static void init_quiet(struct ht_link *l, unsigned depth)
{
	struct ht_link_cfg cfg;
	ht_link_cfg_default(&cfg, 0);
	for (int vc = 0; vc < HT_VC_COUNT; vc++)
		cfg.txq_depth[vc] = (uint16_t)depth;
	assert_int_equal(ht_link_init(l, &cfg), 0);
}

/* Poll one packet and decode it; returns its kind or -1 if nothing was sent. */
static int poll_kind(struct ht_link *l, struct ht_pkt *out)
{
	uint8_t buf[HT_MAX_PKT_LEN];
	int n = ht_link_poll_tx(l, buf, sizeof(buf));
	assert_true(n >= 0);
	if (n == 0)
		return -1;
	assert_int_equal(ht_decode(buf, (size_t)n, out), n);
	return out->kind;
}

/* ---- credits and NOPs ---- */

static void test_initial_advertisement_10_needs_4_nops(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_link_cfg cfg;
	ht_link_cfg_default(&cfg, 10);
	assert_int_equal(ht_link_init(&l, &cfg), 0);
	for (int vc = 0; vc < HT_VC_COUNT; vc++) {
		assert_int_equal(ht_link_rx_unreported(&l, (enum ht_vc)vc, false), 10);
		assert_int_equal(ht_link_rx_unreported(&l, (enum ht_vc)vc, true), 10);
	}
	unsigned nops = 0, sum[6] = { 0 };
	const uint8_t want[4] = { 3, 3, 3, 1 };
	struct ht_pkt p;
	while (poll_kind(&l, &p) == HT_K_NOP) {
		assert_true(nops < 4);
		uint8_t f[6] = { p.postcmd, p.postdata, p.npcmd, p.npdata, p.resp, p.respdata };
		for (int c = 0; c < 6; c++) {
			assert_true(f[c] <= 3);
			assert_int_equal(f[c], want[nops]);
			sum[c] += f[c];
		}
		nops++;
	}
	assert_int_equal(nops, 4);
	for (int c = 0; c < 6; c++)
		assert_int_equal(sum[c], 10);
	assert_int_equal(ht_link_stats(&l)->tx_nops, 4);
	assert_false(ht_link_tx_pending(&l));
}

static void test_uneven_classes_advertised(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_link_cfg cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.rx_bufs[HT_VC_P][0] = 7;
	cfg.rx_bufs[HT_VC_NP][1] = 2;
	cfg.rx_bufs[HT_VC_R][0] = 1;
	assert_int_equal(ht_link_init(&l, &cfg), 0);
	unsigned sum[6] = { 0 }, nops = 0;
	struct ht_pkt p;
	while (poll_kind(&l, &p) == HT_K_NOP) {
		uint8_t f[6] = { p.postcmd, p.postdata, p.npcmd, p.npdata, p.resp, p.respdata };
		for (int c = 0; c < 6; c++) {
			assert_true(f[c] <= 3);
			sum[c] += f[c];
		}
		nops++;
	}
	assert_int_equal(nops, 3); /* ceil(7/3) */
	assert_int_equal(sum[0], 7);
	assert_int_equal(sum[1], 0);
	assert_int_equal(sum[2], 0);
	assert_int_equal(sum[3], 2);
	assert_int_equal(sum[4], 1);
	assert_int_equal(sum[5], 0);
}

static void test_never_sends_without_credit(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	p = mk_posted_write(0x100, 1);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_posted_write(0x104, 2);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x200, 0, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);

	/* no credits at all: nothing goes out, however often we poll */
	for (int i = 0; i < 10; i++)
		assert_int_equal(poll_kind(&l, &out), -1);
	assert_int_equal(ht_link_stats(&l)->credit_stalls[HT_VC_P], 1); /* one episode */

	/* a P command credit alone is not enough for a write (needs data) */
	give_credits(&l, 1, 0, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), -1);
	/* the data credit completes it: exactly one write goes */
	give_credits(&l, 0, 1, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_WRSIZED);
	assert_int_equal(out.addr, 0x100);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, false), 0);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, true), 0);
	/* exhausted again */
	assert_int_equal(poll_kind(&l, &out), -1);
	assert_int_equal(ht_link_stats(&l)->credit_stalls[HT_VC_P], 2);

	/* NOP returns restore them */
	give_credits(&l, 3, 3, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_WRSIZED);
	assert_int_equal(out.addr, 0x104);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, false), 2);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, true), 2);
	/* the read needs an NP command credit, and no data credit */
	assert_int_equal(poll_kind(&l, &out), -1);
	give_credits(&l, 0, 0, 1, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_NP, false), 0);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_NP, true), 0);
	assert_int_equal(ht_link_stats(&l)->tx_pkts[HT_VC_P], 2);
	assert_int_equal(ht_link_stats(&l)->tx_pkts[HT_VC_NP], 1);
}

static void test_data_credit_consumed_only_with_data(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	give_credits(&l, 3, 3, 3, 3, 3, 3);
	p = mk_atomic(0x1000, 1);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x1000, 2, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_fence();
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_tgtdone(3, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_rdresp(4);
	assert_int_equal(ht_link_send(&l, &p), 0);
	for (int i = 0; i < 5; i++)
		assert_true(poll_kind(&l, &out) >= 0);
	assert_int_equal(poll_kind(&l, &out), -1);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_NP, false), 1); /* atomic + read */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_NP, true), 2);  /* atomic only */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, false), 2);  /* fence */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, true), 3);   /* fence has no data */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_R, false), 1);  /* tgtdone + rdresp */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_R, true), 2);   /* rdresp only */
}

static void test_info_packets_use_no_credits(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt out;
	uint8_t buf[HT_MAX_PKT_LEN];
	init_quiet(&l, 8);
	/* Sync goes out with zero credits */
	ht_link_send_sync(&l);
	assert_int_equal(poll_kind(&l, &out), HT_K_SYNC);
	assert_int_equal(ht_link_stats(&l)->tx_sync, 1);
	for (int c = 0; c < 6; c++)
		assert_int_equal(l.tx_credits[c], 0);
	/* NOP/Sync/ExtFC cannot be queued as traffic */
	memset(&out, 0, sizeof(out));
	assert_int_equal(ht_pkt_set_cmd(&out, HT_K_NOP), 0);
	assert_int_equal(ht_link_send(&l, &out), -EINVAL);
	memset(&out, 0, sizeof(out));
	assert_int_equal(ht_pkt_set_cmd(&out, HT_K_SYNC), 0);
	assert_int_equal(ht_link_send(&l, &out), -EINVAL);

	/* receiving them needs no buffer; Sync is flagged fatal */
	memset(buf, 0xFF, 4);
	assert_false(ht_link_fatal(&l));
	assert_int_equal(ht_link_rx(&l, buf, 4, &out), 0);
	assert_true(ht_link_fatal(&l));
	assert_int_equal(ht_link_stats(&l)->rx_sync, 1);
	/* ExtFC (short form) is counted and consumed */
	memset(&out, 0, sizeof(out));
	assert_int_equal(ht_pkt_set_cmd(&out, HT_K_EXTFC), 0);
	int n = ht_encode(&out, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_int_equal(ht_link_rx(&l, buf, (size_t)n, &out), 0);
	assert_int_equal(ht_link_stats(&l)->rx_extfc, 1);
	for (int e = 0; e < HT_LINK_ERR__COUNT; e++)
		assert_int_equal(ht_link_stats(&l)->errors[e], 0);
}

static void test_isoc_nop_credits_ignored(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p;
	uint8_t buf[HT_MAX_PKT_LEN];
	init_quiet(&l, 8);
	memset(&p, 0, sizeof(p));
	p.postcmd = 3;
	p.isoc = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_NOP), 0);
	int n = ht_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_int_equal(ht_link_rx(&l, buf, (size_t)n, &p), 0);
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, false), 0);
	assert_int_equal(ht_link_stats(&l)->rx_isoc_nop, 1);
}

/* ---- receive buffers ---- */

static void test_rx_without_buffer_is_counted_error(void **state)
{
	(void)state;
	struct ht_link tx, rx;
	struct ht_link_cfg cfg;
	struct ht_pkt p, out;
	uint8_t buf[HT_MAX_PKT_LEN];
	init_quiet(&tx, 8);
	ht_link_cfg_default(&cfg, 0);
	cfg.rx_bufs[HT_VC_P][0] = 1;
	cfg.rx_bufs[HT_VC_P][1] = 1;
	assert_int_equal(ht_link_init(&rx, &cfg), 0);

	/* before rx advertised anything, any request is an overrun */
	p = mk_posted_write(0x40, 7);
	int n = ht_encode(&p, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), -ENOBUFS);
	assert_int_equal(ht_link_stats(&rx)->errors[HT_LINK_ERR_OVERRUN], 1);
	assert_int_equal(ht_link_stats(&rx)->overrun[ht_link_class(HT_VC_P, false)], 1);

	/* advertise: one NOP, then one packet fits */
	assert_int_equal(poll_kind(&rx, &out), HT_K_NOP);
	assert_int_equal(out.postcmd, 1);
	assert_int_equal(out.postdata, 1);
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), 1);
	assert_int_equal(out.kind, HT_K_WRSIZED);
	assert_int_equal(ht_link_rx_in_use(&rx, HT_VC_P, false), 1);
	assert_int_equal(ht_link_rx_in_use(&rx, HT_VC_P, true), 1);
	/* the buffer is still held: the next one overruns, no crash */
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), -ENOBUFS);
	assert_int_equal(ht_link_stats(&rx)->errors[HT_LINK_ERR_OVERRUN], 2);
	/* an NP packet: no NP buffers at all */
	p = mk_read(0x40, 1, 0);
	n = ht_encode(&p, buf, sizeof(buf));
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), -ENOBUFS);
	assert_int_equal(ht_link_stats(&rx)->overrun[ht_link_class(HT_VC_NP, false)], 1);
	assert_int_equal(ht_link_stats(&rx)->rx_pkts[HT_VC_P], 1);

	/* release -> the credit goes back in the next NOP */
	assert_int_equal(ht_link_release(&rx, HT_VC_P, true), 0);
	assert_int_equal(ht_link_rx_unreported(&rx, HT_VC_P, false), 1);
	assert_int_equal(poll_kind(&rx, &out), HT_K_NOP);
	assert_int_equal(out.postcmd, 1);
	assert_int_equal(out.postdata, 1);
	/* releasing what is not held is an error, counted */
	assert_int_equal(ht_link_release(&rx, HT_VC_P, false), -EINVAL);
	assert_int_equal(ht_link_stats(&rx)->errors[HT_LINK_ERR_RELEASE], 1);
}

static void test_rx_data_buffer_missing_is_overrun(void **state)
{
	(void)state;
	struct ht_link rx;
	struct ht_link_cfg cfg;
	struct ht_pkt p, out;
	uint8_t buf[HT_MAX_PKT_LEN];
	ht_link_cfg_default(&cfg, 0);
	cfg.rx_bufs[HT_VC_NP][0] = 2; /* commands, but no data buffer */
	assert_int_equal(ht_link_init(&rx, &cfg), 0);
	assert_int_equal(poll_kind(&rx, &out), HT_K_NOP);
	p = mk_atomic(0x80, 3);
	int n = ht_encode(&p, buf, sizeof(buf));
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), -ENOBUFS);
	assert_int_equal(ht_link_stats(&rx)->overrun[ht_link_class(HT_VC_NP, true)], 1);
	/* nothing was consumed by the rejected packet */
	assert_int_equal(ht_link_rx_in_use(&rx, HT_VC_NP, false), 0);
	p = mk_read(0x80, 4, 0);
	n = ht_encode(&p, buf, sizeof(buf));
	assert_int_equal(ht_link_rx(&rx, buf, (size_t)n, &out), 1);
}

static void test_rx_decode_errors_counted(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt out;
	uint8_t buf[16];
	init_quiet(&l, 8);
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x01; /* reserved command */
	assert_int_equal(ht_link_rx(&l, buf, 4, &out), -EBADMSG);
	buf[0] = 0x00; /* NOP followed by 4 stray bytes */
	assert_int_equal(ht_link_rx(&l, buf, 8, &out), -EBADMSG);
	assert_int_equal(ht_link_rx(&l, buf, 2, &out), -EBADMSG); /* truncated */
	const struct ht_link_stats *s = ht_link_stats(&l);
	assert_int_equal(s->errors[HT_LINK_ERR_DECODE], 2);
	assert_int_equal(s->errors[HT_LINK_ERR_TRAILING], 1);
	assert_int_equal(s->decode_errors[-HT_E_RESERVED_CMD], 1);
	assert_int_equal(s->decode_errors[-HT_E_TRUNCATED], 1);
}

static void test_send_backpressure_and_invalid(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p;
	init_quiet(&l, 2);
	p = mk_posted_write(0, 1);
	assert_int_equal(ht_link_txq_space(&l, HT_VC_P), 2);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(ht_link_txq_space(&l, HT_VC_P), 0);
	assert_int_equal(ht_link_send(&l, &p), -EAGAIN);
	assert_int_equal(ht_link_stats(&l)->txq_full[HT_VC_P], 1);
	/* other VCs are independent */
	p = mk_read(0, 0, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	/* an invalid packet (bad field) is rejected */
	p = mk_read(0, 0, 0);
	p.srctag = 40;
	assert_int_equal(ht_link_send(&l, &p), -EINVAL);
	assert_int_equal(ht_link_txq_len(&l, HT_VC_NP), 1);
	/* too much queue depth in the config */
	struct ht_link_cfg cfg;
	ht_link_cfg_default(&cfg, 1);
	cfg.txq_depth[HT_VC_R] = HT_LINK_TXQ_MAX + 1;
	assert_int_equal(ht_link_init(&l, &cfg), -EINVAL);
}

static void test_poll_small_buffer(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p;
	uint8_t buf[HT_MAX_PKT_LEN];
	init_quiet(&l, 4);
	give_credits(&l, 1, 1, 0, 0, 0, 0);
	p = mk_posted_write(0x10, 9);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(ht_link_poll_tx(&l, buf, 8), -ENOSPC);
	assert_int_equal(ht_link_txq_len(&l, HT_VC_P), 1);              /* not consumed */
	assert_int_equal(ht_link_tx_credits(&l, HT_VC_P, false), 1);
	assert_int_equal(ht_link_poll_tx(&l, buf, sizeof(buf)), 12);
}

/* ---- ordering ---- */

static void test_np_does_not_pass_posted(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	p = mk_posted_write(0x100, 1);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x100, 5, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_tgtdone(6, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	/* NP and R have credits, P has none: nothing may go */
	give_credits(&l, 0, 0, 3, 3, 3, 3);
	for (int i = 0; i < 5; i++)
		assert_int_equal(poll_kind(&l, &out), -1);
	assert_int_equal(ht_link_stats(&l)->order_waits[HT_VC_NP], 1);
	assert_int_equal(ht_link_stats(&l)->order_waits[HT_VC_R], 1);
	/* once the posted write can go, it goes first, then R, then NP */
	give_credits(&l, 1, 1, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_WRSIZED);
	assert_int_equal(poll_kind(&l, &out), HT_K_TGTDONE);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(poll_kind(&l, &out), -1);
}

static void test_np_queued_before_posted_is_not_held(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	give_credits(&l, 0, 0, 1, 0, 0, 0);
	p = mk_read(0x100, 1, 0);   /* queued before the write: epoch 0 */
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_posted_write(0x100, 2);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(poll_kind(&l, &out), -1); /* the write has no credit */
}

static void test_posted_passes_credit_starved_np(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	p = mk_read(0x200, 1, 0);   /* NP first, and NP has no credit */
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_tgtdone(2, 0);       /* R has no credit either */
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_posted_write(0x300, 3);
	assert_int_equal(ht_link_send(&l, &p), 0);
	give_credits(&l, 1, 1, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_WRSIZED);
	assert_int_equal(out.addr, 0x300);
	assert_int_equal(poll_kind(&l, &out), -1);
	assert_int_equal(ht_link_stats(&l)->credit_stalls[HT_VC_NP], 1);
	assert_int_equal(ht_link_stats(&l)->credit_stalls[HT_VC_R], 1);
}

static void test_passpw_may_pass_posted(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	p = mk_posted_write(0x100, 1);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x100, 1, 1);   /* PassPW=1 */
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_tgtdone(2, 1);       /* PassPW=1 */
	assert_int_equal(ht_link_send(&l, &p), 0);
	give_credits(&l, 0, 0, 1, 0, 1, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_TGTDONE);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(poll_kind(&l, &out), -1);
}

static void test_fifo_within_vc(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	p = mk_posted_write(0x100, 1);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x100, 1, 0);   /* waits for the write */
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_read(0x200, 2, 1);   /* PassPW=1, but stays behind tag 1 (FIFO) */
	assert_int_equal(ht_link_send(&l, &p), 0);
	give_credits(&l, 0, 0, 3, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), -1);
	give_credits(&l, 1, 1, 0, 0, 0, 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_WRSIZED);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(out.srctag, 1);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	assert_int_equal(out.srctag, 2);
}

static void test_responses_before_np_requests(void **state)
{
	(void)state;
	struct ht_link l;
	struct ht_pkt p, out;
	init_quiet(&l, 8);
	give_credits(&l, 0, 0, 3, 3, 3, 3);
	for (uint8_t t = 0; t < 3; t++) {
		p = mk_read(0x40u * t, t, 0);
		assert_int_equal(ht_link_send(&l, &p), 0);
	}
	p = mk_rdresp(9);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_RDRESPONSE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(poll_kind(&l, &out), HT_K_RDSIZED);
	/* a response is not stuck behind a credit-starved NP request */
	p = mk_read(0x400, 7, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	p = mk_tgtdone(8, 0);
	assert_int_equal(ht_link_send(&l, &p), 0);
	assert_int_equal(poll_kind(&l, &out), HT_K_TGTDONE);
}

/* ---- two ends back to back under random traffic ---- */

struct end {
	struct ht_link l;
	unsigned held[HT_VC_COUNT][2]; /* received, not yet released */
};

static void test_random_traffic_credit_invariants(void **state)
{
	(void)state;
	static struct end e[2];
	struct ht_link_cfg cfg;
	struct ht_rand r;
	ht_rand_seed(&r, 42);
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 2; i++) {
		ht_link_cfg_default(&cfg, 0);
		for (int vc = 0; vc < HT_VC_COUNT; vc++) {
			cfg.rx_bufs[vc][0] = (uint16_t)ht_rand_range(&r, 1, 7);
			cfg.rx_bufs[vc][1] = (uint16_t)ht_rand_range(&r, 1, 7);
			cfg.txq_depth[vc] = 4;
		}
		assert_int_equal(ht_link_init(&e[i].l, &cfg), 0);
	}
	uint64_t sent = 0, delivered = 0;
	for (int step = 0; step < 20000; step++) {
		int i = (int)ht_rand_below(&r, 2);
		struct end *me = &e[i], *peer = &e[!i];
		unsigned act = (unsigned)ht_rand_below(&r, 4);
		if (act == 0) {
			struct ht_pkt p;
			switch (ht_rand_below(&r, 5)) {
			case 0: p = mk_posted_write(0x40, 1); break;
			case 1: p = mk_read(0x40, (uint8_t)ht_rand_below(&r, 32), (uint8_t)ht_rand_below(&r, 2)); break;
			case 2: p = mk_atomic(0x40, 1); break;
			case 3: p = mk_rdresp(1); break;
			default: p = mk_tgtdone(1, 0); break;
			}
			if (ht_link_send(&me->l, &p) == 0)
				sent++;
		} else if (act == 1) {
			int vc = (int)ht_rand_below(&r, 3);
			int d = (int)ht_rand_below(&r, 2);
			if (me->held[vc][d] && (d == 0 || me->held[vc][1])) {
				/* release as the kind we hold: with data if a data buffer is held */
				bool data = me->held[vc][1] > 0;
				assert_int_equal(ht_link_release(&me->l, (enum ht_vc)vc, data), 0);
				me->held[vc][0]--;
				if (data)
					me->held[vc][1]--;
			}
		} else {
			uint8_t buf[HT_MAX_PKT_LEN];
			struct ht_pkt out;
			int n = ht_link_poll_tx(&me->l, buf, sizeof(buf));
			assert_true(n >= 0);
			if (n > 0) {
				int rc = ht_link_rx(&peer->l, buf, (size_t)n, &out);
				assert_true(rc == 0 || rc == 1); /* never an overrun */
				if (rc == 1) {
					enum ht_vc vc = ht_pkt_vc(&out);
					peer->held[vc][0]++;
					if (ht_link_pkt_has_data(&out))
						peer->held[vc][1]++;
					delivered++;
				}
			}
		}
		/* invariants on both ends */
		for (int k = 0; k < 2; k++) {
			struct ht_link *L = &e[k].l, *P = &e[!k].l;
			for (unsigned c = 0; c < HT_LINK_NCLASS; c++) {
				unsigned vc = c / 2, d = c % 2;
				assert_int_equal(L->rx_granted[c] + L->rx_in_use[c] + L->rx_unreported[c],
						 L->cfg.rx_bufs[vc][d]);
				/* the peer never holds more credits than we granted */
				assert_true(P->tx_credits[c] <= L->rx_granted[c]);
			}
		}
	}
	assert_true(sent > 1000);
	assert_true(delivered > 1000);
	for (int k = 0; k < 2; k++)
		assert_int_equal(ht_link_stats(&e[k].l)->errors[HT_LINK_ERR_OVERRUN], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_initial_advertisement_10_needs_4_nops),
		cmocka_unit_test(test_uneven_classes_advertised),
		cmocka_unit_test(test_never_sends_without_credit),
		cmocka_unit_test(test_data_credit_consumed_only_with_data),
		cmocka_unit_test(test_info_packets_use_no_credits),
		cmocka_unit_test(test_isoc_nop_credits_ignored),
		cmocka_unit_test(test_rx_without_buffer_is_counted_error),
		cmocka_unit_test(test_rx_data_buffer_missing_is_overrun),
		cmocka_unit_test(test_rx_decode_errors_counted),
		cmocka_unit_test(test_send_backpressure_and_invalid),
		cmocka_unit_test(test_poll_small_buffer),
		cmocka_unit_test(test_np_does_not_pass_posted),
		cmocka_unit_test(test_np_queued_before_posted_is_not_held),
		cmocka_unit_test(test_posted_passes_credit_starved_np),
		cmocka_unit_test(test_passpw_may_pass_posted),
		cmocka_unit_test(test_fifo_within_vc),
		cmocka_unit_test(test_responses_before_np_requests),
		cmocka_unit_test(test_random_traffic_credit_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
