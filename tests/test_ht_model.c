/* SPDX-License-Identifier: BSD-3-Clause
 * cmocka tests for the HT endpoint model: requester, memory target,
 * workload, and the back-to-back harness (requester + link + target).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "htmodel/ht_b2b.h"
#include "htmodel/ht_link.h"
#include "htmodel/ht_packet.h"
#include "htmodel/ht_rand.h"
#include "htmodel/ht_requester.h"
#include "htmodel/ht_target.h"
#include "htmodel/ht_workload.h"

#define MEM_BASE 0x10000ull
#define MEM_SIZE 4096u

/* ---- helpers ---- */

static struct ht_op op_read(uint64_t addr, uint32_t len, uint64_t cookie)
{
	struct ht_op o;
	memset(&o, 0, sizeof(o));
	o.type = HT_OP_READ;
	o.addr = addr;
	o.len = len;
	o.cookie = cookie;
	return o;
}

static struct ht_op op_write(bool posted, uint64_t addr, uint32_t len, uint8_t seed,
			     uint64_t cookie)
{
	struct ht_op o;
	memset(&o, 0, sizeof(o));
	o.type = posted ? HT_OP_WRITE_P : HT_OP_WRITE_NP;
	o.addr = addr;
	o.len = len;
	o.cookie = cookie;
	for (uint32_t i = 0; i < len; i++)
		o.data[i] = (uint8_t)(seed + 17 * i + 1);
	return o;
}

static struct ht_op op_atomic(bool cas, uint64_t addr, uint64_t a, uint64_t b, uint64_t cookie)
{
	struct ht_op o;
	memset(&o, 0, sizeof(o));
	o.type = cas ? HT_OP_CAS : HT_OP_FETCH_ADD;
	o.addr = addr;
	o.operand[0] = a;
	o.operand[1] = b;
	o.cookie = cookie;
	return o;
}

static struct ht_op op_simple(enum ht_op_type t, uint64_t cookie)
{
	struct ht_op o;
	memset(&o, 0, sizeof(o));
	o.type = (uint8_t)t;
	o.cookie = cookie;
	return o;
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void init_req(struct ht_requester *r, unsigned n, const uint8_t *ids)
{
	struct ht_req_cfg c;
	memset(&c, 0, sizeof(c));
	c.n_unitids = n;
	memcpy(c.unitids, ids, n);
	assert_int_equal(ht_req_init(r, &c), 0);
}

static void init_tgt(struct ht_target *t, uint8_t *mem, uint64_t base, uint64_t size)
{
	struct ht_target_cfg c;
	memset(&c, 0, sizeof(c));
	c.base = base;
	c.size = size;
	c.mem = mem;
	assert_int_equal(ht_tgt_init(t, &c), 0);
}

/* Issue an op and run it straight through the target (no link), passing
 * every packet through encode/decode. Returns the completion status, or -1
 * for a posted op (no completion). */
static int direct(struct ht_requester *r, struct ht_target *t, const struct ht_op *op,
		  struct ht_completion *c)
{
	struct ht_pkt req, dec, rsp, rdec;
	uint8_t buf[HT_MAX_PKT_LEN];
	assert_int_equal(ht_req_issue(r, op, &req), 0);
	int n = ht_encode(&req, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(ht_decode(buf, (size_t)n, &dec), n);
	int rc = ht_tgt_handle(t, &dec, &rsp);
	assert_true(rc >= 0);
	if (rc == 0)
		return -1;
	n = ht_encode(&rsp, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(ht_decode(buf, (size_t)n, &rdec), n);
	assert_int_equal(ht_req_rx(r, &rdec, c), 1);
	assert_int_equal(c->cookie, op->cookie);
	return c->status;
}

/* b2b helpers */
static struct ht_b2b *new_b2b(unsigned credits, unsigned latency, uint8_t *mem, uint64_t base,
			      uint64_t size)
{
	struct ht_b2b *b = calloc(1, sizeof(*b));
	struct ht_b2b_cfg c;
	assert_non_null(b);
	ht_b2b_cfg_default(&c, credits, base, size, mem);
	c.latency = latency;
	assert_int_equal(ht_b2b_init(b, &c), 0);
	return b;
}

/* Submit (stepping while the link pushes back), then run until idle;
 * completions are appended to out[]. Returns how many. */
static unsigned b2b_run(struct ht_b2b *b, const struct ht_op *ops, unsigned nops,
			struct ht_completion *out, unsigned max)
{
	unsigned got = 0, i = 0, guard = 0;
	while (i < nops || ht_b2b_busy(b) || ht_req_outstanding(&b->req)) {
		while (i < nops) {
			int rc = ht_b2b_submit(b, &ops[i]);
			if (rc == -EAGAIN)
				break;
			assert_int_equal(rc, 0);
			i++;
		}
		struct ht_completion c;
		if (ht_b2b_step(b, &c) == 1) {
			assert_true(got < max);
			out[got++] = c;
		}
		assert_true(++guard < 1000000);
	}
	return got;
}

static const struct ht_completion *find_cookie(const struct ht_completion *c, unsigned n,
					       uint64_t cookie)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].cookie == cookie)
			return &c[i];
	return NULL;
}

/* ---- op validation and packet building ---- */

static void test_op_check(void **state)
{
	(void)state;
	struct ht_op o;
	o = op_read(0x1000, 64, 0);
	assert_int_equal(ht_op_check(&o), 0);
	o = op_read(0x1004, 64, 0);           /* crosses 64 B */
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_read(0x1003, 1, 0);
	assert_int_equal(ht_op_check(&o), 0);
	o = op_read(0x1003, 2, 0);            /* crosses a dword */
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_read(0x1000, 0, 0);
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_read(0x1000, 68, 0);
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_write(true, 0x1001, 31, 0, 0); /* inside one 32-byte window */
	assert_int_equal(ht_op_check(&o), 0);
	o = op_write(true, 0x1001, 32, 0, 0); /* crosses it */
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_write(false, 0x1020, 64, 0, 0);/* dword, crosses 64 B */
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_write(false, 0x1000, 64, 0, 0);
	assert_int_equal(ht_op_check(&o), 0);
	o = op_atomic(false, 0x1004, 1, 0, 0);
	assert_int_equal(ht_op_check(&o), -EINVAL);
	o = op_atomic(true, 0x1008, 1, 0, 0);
	assert_int_equal(ht_op_check(&o), 0);
	o = op_simple(HT_OP__COUNT, 0);
	assert_int_equal(ht_op_check(&o), -EINVAL);
	assert_int_equal(ht_op_vc(&(struct ht_op){ .type = HT_OP_WRITE_P }), HT_VC_P);
	assert_int_equal(ht_op_vc(&(struct ht_op){ .type = HT_OP_FENCE }), HT_VC_P);
	assert_int_equal(ht_op_vc(&(struct ht_op){ .type = HT_OP_FLUSH }), HT_VC_NP);

	/* the requester rejects what does not fit one packet */
	struct ht_requester r;
	struct ht_pkt p;
	init_req(&r, 1, (const uint8_t[]){ 3 });
	o = op_read(0x1004, 64, 0);
	assert_int_equal(ht_req_issue(&r, &o, &p), -EINVAL);
	assert_int_equal(ht_req_outstanding(&r), 0);
	assert_int_equal(ht_req_stats(&r)->invalid, 1);
}

static void test_request_packets(void **state)
{
	(void)state;
	struct ht_requester r;
	struct ht_pkt p;
	struct ht_op o;
	init_req(&r, 1, (const uint8_t[]){ 5 });

	o = op_read(0x1040, 64, 1);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.kind, HT_K_RDSIZED);
	assert_int_equal(p.dword, 1);
	assert_int_equal(p.count, 15);
	assert_int_equal(p.coherent, 1);
	assert_int_equal(p.unitid, 5);
	assert_int_equal(p.addr, 0x1040);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);

	o = op_read(0x1042, 2, 2);            /* byte read, bytes 2..3 */
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.dword, 0);
	assert_int_equal(p.mask, 0xC);
	assert_int_equal(p.count, 0xC);
	assert_int_equal(p.addr, 0x1040);

	o = op_write(true, 0x1000, 8, 0, 3);  /* posted dword write: no tag */
	unsigned before = ht_req_outstanding(&r);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(ht_req_outstanding(&r), before);
	assert_int_equal(p.posted, 1);
	assert_int_equal(p.count, 1);
	assert_int_equal(p.coherent, 1);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);

	o = op_write(false, 0x1006, 5, 0, 4); /* byte write: dwords 1..2 of the window */
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.dword, 0);
	assert_int_equal(p.posted, 0);
	assert_int_equal(p.addr, 0x1004);
	assert_int_equal(p.count, 2);         /* mask dword + 2 data dwords - 1 */
	assert_int_equal(p.data_len, 8);
	assert_int_equal(p.mask, 0x000007C0); /* bytes 6..10 of the window */
	assert_int_equal(p.data[2], o.data[0]);
	assert_int_equal(p.data[6], o.data[4]);

	o = op_atomic(true, 0x1008, 0x1111, 0x2222, 5);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.kind, HT_K_ATOMIC);
	assert_int_equal(p.count, 3);
	assert_int_equal(le64(p.data), 0x1111);     /* compare first */
	assert_int_equal(le64(p.data + 8), 0x2222); /* then swap */

	o = op_simple(HT_OP_FENCE, 6);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.kind, HT_K_FENCE);
	o = op_simple(HT_OP_FLUSH, 7);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	assert_int_equal(p.kind, HT_K_FLUSH);
	assert_int_equal(p.passpw, 0);

	/* 64-bit address: the codec emits the 0x3E prefix */
	uint8_t buf[HT_MAX_PKT_LEN];
	o = op_read(0x123456789A00ull, 4, 8);
	assert_int_equal(ht_req_issue(&r, &o, &p), 0);
	int n = ht_encode(&p, buf, sizeof(buf));
	assert_int_equal(n, 12);
	assert_int_equal(buf[0] & 0x3F, HT_CMD_ADDREXT);

	/* 2 reads, NP write, CAS, flush, 64-bit read hold tags */
	assert_int_equal(ht_req_outstanding(&r), 6);
}

static void test_op_split(void **state)
{
	(void)state;
	struct ht_op ops[32];
	uint8_t data[300];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	for (uint64_t a = 0x1000; a < 0x1000 + 70; a += 3) {
		for (uint32_t len = 1; len <= 300; len += 37) {
			for (int t = 0; t < 2; t++) {
				enum ht_op_type ty = t ? HT_OP_WRITE_NP : HT_OP_READ;
				int n = ht_op_split(ty, a, len, data, 9, ops, 32);
				assert_true(n > 0);
				uint64_t next = a;
				for (int i = 0; i < n; i++) {
					assert_int_equal(ht_op_check(&ops[i]), 0);
					assert_int_equal(ops[i].addr, next);
					assert_int_equal(ops[i].cookie, 9);
					if (ty != HT_OP_READ)
						assert_memory_equal(ops[i].data, data + (next - a), ops[i].len);
					next += ops[i].len;
				}
				assert_int_equal(next, a + len);
			}
		}
	}
	assert_int_equal(ht_op_split(HT_OP_READ, 0x1000, 300, NULL, 0, ops, 2), -ENOSPC);
	assert_int_equal(ht_op_split(HT_OP_CAS, 0x1000, 8, NULL, 0, ops, 2), -EINVAL);
	assert_int_equal(ht_op_split(HT_OP_READ, 0x1000, 0, NULL, 0, ops, 2), -EINVAL);
}

/* ---- end to end through the links ---- */

static void test_e2e_credits_one_per_class(void **state)
{
	(void)state;
	uint8_t *mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	for (unsigned lat = 0; lat <= 3; lat += 3) {
		memset(mem, 0, MEM_SIZE);
		struct ht_b2b *b = new_b2b(1, lat, mem, MEM_BASE, MEM_SIZE);
		struct ht_op ops[10];
		struct ht_completion c[16];
		unsigned k = 0;
		ops[k++] = op_write(true, MEM_BASE + 0x40, 64, 1, 100);
		ops[k++] = op_write(false, MEM_BASE + 0x103, 9, 2, 101);
		ops[k++] = op_read(MEM_BASE + 0x40, 64, 102);
		ops[k++] = op_read(MEM_BASE + 0x105, 3, 103);
		ops[k++] = op_atomic(false, MEM_BASE + 0x200, 5, 0, 104);
		ops[k++] = op_atomic(false, MEM_BASE + 0x200, 7, 0, 105);
		ops[k++] = op_atomic(true, MEM_BASE + 0x200, 12, 99, 106);
		ops[k++] = op_simple(HT_OP_FENCE, 107);
		ops[k++] = op_simple(HT_OP_FLUSH, 108);
		ops[k++] = op_read(MEM_BASE + 0x200, 8, 109);
		unsigned n = b2b_run(b, ops, k, c, 16);
		assert_int_equal(n, 8); /* everything but the posted write and the fence */
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(c[i].status, HT_RSP_OK);
		const struct ht_completion *x = find_cookie(c, n, 102);
		assert_non_null(x);
		assert_int_equal(x->len, 64);
		assert_memory_equal(x->data, ops[0].data, 64);
		x = find_cookie(c, n, 103);
		assert_int_equal(x->len, 3);
		assert_memory_equal(x->data, ops[1].data + 2, 3);
		assert_int_equal(ht_completion_u64(find_cookie(c, n, 104)), 0);
		assert_int_equal(ht_completion_u64(find_cookie(c, n, 105)), 5);
		assert_int_equal(ht_completion_u64(find_cookie(c, n, 106)), 12);
		x = find_cookie(c, n, 109);
		assert_int_equal(le64(x->data), 99);
		assert_int_equal(le64(mem + 0x200), 99);
		/* links: never an overrun, credits were the limit */
		for (int e = 0; e < 2; e++) {
			const struct ht_link_stats *s = ht_link_stats(e ? &b->b : &b->a);
			assert_int_equal(s->errors[HT_LINK_ERR_OVERRUN], 0);
		}
		assert_int_equal(b->st.crc_bad, 0);
		if (lat) /* with wire latency a single credit must stall the requester */
			assert_true(ht_link_stats(&b->a)->credit_stalls[HT_VC_NP] > 0);
		assert_int_equal(ht_tgt_stats(&b->tgt)->fence, 1);
		free(b);
	}
	free(mem);
}

static void test_out_of_order_responses_matched(void **state)
{
	(void)state;
	uint8_t mem[256];
	for (unsigned i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	struct ht_requester r;
	struct ht_target t;
	init_req(&r, 2, (const uint8_t[]){ 4, 9 });
	init_tgt(&t, mem, 0x8000, sizeof(mem));
	struct ht_pkt req[8], rsp[8];
	for (unsigned i = 0; i < 8; i++) {
		struct ht_op o = op_read(0x8000 + 16 * i, 4 + 4 * (i % 3), 1000 + i);
		assert_int_equal(ht_req_issue(&r, &o, &req[i]), 0);
		assert_int_equal(ht_tgt_handle(&t, &req[i], &rsp[i]), 1);
	}
	/* both UnitIDs were used (round-robin) */
	assert_int_not_equal(req[0].unitid, req[1].unitid);
	/* deliver in a scrambled order */
	const unsigned order[8] = { 7, 2, 5, 0, 3, 6, 1, 4 };
	for (unsigned k = 0; k < 8; k++) {
		unsigned i = order[k];
		struct ht_completion c;
		assert_int_equal(ht_req_rx(&r, &rsp[i], &c), 1);
		assert_int_equal(c.cookie, 1000 + i);
		assert_int_equal(c.addr, 0x8000 + 16 * i);
		assert_int_equal(c.len, 4 + 4 * (i % 3));
		assert_memory_equal(c.data, mem + 16 * i, c.len);
		assert_int_equal(c.unitid, req[i].unitid);
		assert_int_equal(c.srctag, req[i].srctag);
	}
	assert_int_equal(ht_req_outstanding(&r), 0);
	/* a second delivery of the same response is unexpected: rejected, counted */
	struct ht_completion c;
	assert_int_equal(ht_req_rx(&r, &rsp[3], &c), -ENOENT);
	assert_int_equal(ht_req_stats(&r)->unexpected, 1);
	/* a response for a UnitID we do not own is unexpected too */
	rsp[3].unitid = 17;
	assert_int_equal(ht_req_rx(&r, &rsp[3], &c), -ENOENT);
	assert_int_equal(ht_req_stats(&r)->unexpected, 2);
	/* a request packet is not a response */
	assert_int_equal(ht_req_rx(&r, &req[0], &c), -EINVAL);
}

static void test_malformed_response_completes_with_error(void **state)
{
	(void)state;
	uint8_t mem[64] = { 0 };
	struct ht_requester r;
	struct ht_target t;
	struct ht_pkt req, rsp;
	struct ht_completion c;
	init_req(&r, 1, (const uint8_t[]){ 1 });
	init_tgt(&t, mem, 0, sizeof(mem));
	struct ht_op o = op_read(0, 16, 77);
	assert_int_equal(ht_req_issue(&r, &o, &req), 0);
	/* answer the read with a TgtDone */
	memset(&rsp, 0, sizeof(rsp));
	rsp.unitid = req.unitid;
	rsp.srctag = req.srctag;
	rsp.bridge = 1;
	assert_int_equal(ht_pkt_set_cmd(&rsp, HT_K_TGTDONE), 0);
	assert_int_equal(ht_req_rx(&r, &rsp, &c), 1);
	assert_int_equal(c.cookie, 77);
	assert_int_equal(c.status, HT_RSP_DATA_ERROR);
	assert_int_equal(ht_req_stats(&r)->malformed, 1);
	assert_int_equal(ht_req_outstanding(&r), 0);
}

/* A tag is the first free one at or after the one after the last handed
 * out, wrapping past 31 (the requester's search order). */
static void test_tag_order_wraps(void **state)
{
	(void)state;
	struct ht_requester r;
	struct ht_pkt p;
	struct ht_op o = op_read(0, 4, 1);
	static const uint8_t frees[][2] = { { 7, 2 }, { 30, 1 } };
	static const uint8_t want[][2] = { { 2, 7 }, { 30, 1 } };

	init_req(&r, 1, (const uint8_t[]){ 4 });
	for (unsigned i = 0; i < 32; i++) {
		assert_int_equal(ht_req_issue(&r, &o, &p), 0);
		assert_int_equal(p.srctag, i);
	}
	for (unsigned k = 0; k < 2; k++) {
		assert_int_equal(ht_req_unissue_tag(&r, 4, frees[k][0]), 0);
		assert_int_equal(ht_req_unissue_tag(&r, 4, frees[k][1]), 0);
		for (unsigned j = 0; j < 2; j++) {
			assert_int_equal(ht_req_issue(&r, &o, &p), 0);
			assert_int_equal(p.srctag, want[k][j]);
		}
		assert_int_equal(ht_req_issue(&r, &o, &p), -EAGAIN);
	}
	/* a response for a UnitID the requester does not own is refused */
	struct ht_completion c;
	p.unitid = 5;
	p.kind = HT_K_TGTDONE;
	assert_int_equal(ht_req_rx(&r, &p, &c), -ENOENT);
	p.unitid = 200;
	assert_int_equal(ht_req_rx(&r, &p, &c), -ENOENT);
}

static void test_tag_exhaustion_and_reuse(void **state)
{
	(void)state;
	uint8_t mem[64] = { 0 };
	struct ht_requester r;
	struct ht_target t;
	struct ht_pkt req[64], rsp, p;
	struct ht_completion c;
	init_tgt(&t, mem, 0, sizeof(mem));
	init_req(&r, 1, (const uint8_t[]){ 2 });
	uint32_t seen = 0;
	for (unsigned i = 0; i < 32; i++) {
		struct ht_op o = op_read(0, 4, i);
		assert_int_equal(ht_req_issue(&r, &o, &req[i]), 0);
		assert_int_equal(req[i].unitid, 2);
		seen |= 1u << req[i].srctag;
	}
	assert_int_equal(seen, 0xFFFFFFFFu); /* 32 distinct tags */
	struct ht_op o33 = op_read(0, 4, 33);
	assert_int_equal(ht_req_issue(&r, &o33, &p), -EAGAIN);
	assert_int_equal(ht_req_stats(&r)->no_tag, 1);
	/* posted ops need no tag */
	struct ht_op pw = op_write(true, 0, 4, 0, 0);
	assert_int_equal(ht_req_issue(&r, &pw, &p), 0);
	/* complete #13: its tag is reused */
	assert_int_equal(ht_tgt_handle(&t, &req[13], &rsp), 1);
	assert_int_equal(ht_req_rx(&r, &rsp, &c), 1);
	assert_int_equal(c.cookie, 13);
	assert_int_equal(ht_req_issue(&r, &o33, &p), 0);
	assert_int_equal(p.srctag, req[13].srctag);
	assert_int_equal(ht_req_issue(&r, &o33, &p), -EAGAIN);

	/* a second UnitID widens the tag space to 64 */
	init_req(&r, 2, (const uint8_t[]){ 2, 3 });
	unsigned per[32] = { 0 };
	for (unsigned i = 0; i < 64; i++) {
		struct ht_op o = op_read(0, 4, i);
		assert_int_equal(ht_req_issue(&r, &o, &req[i]), 0);
		per[req[i].unitid]++;
	}
	assert_int_equal(per[2], 32);
	assert_int_equal(per[3], 32);
	assert_int_equal(ht_req_free_tags(&r), 0);
	assert_int_equal(ht_req_issue(&r, &o33, &p), -EAGAIN);
	/* unissue a request that was never sent: its tag is free again */
	assert_int_equal(ht_req_unissue(&r, &req[40]), 0);
	assert_int_equal(ht_req_outstanding(&r), 63);
	assert_int_equal(ht_req_issue(&r, &o33, &p), 0);
	assert_int_equal(p.unitid, req[40].unitid);
	assert_int_equal(p.srctag, req[40].srctag);
	assert_int_equal(ht_req_unissue(&r, &p), 0);
	assert_int_equal(ht_req_unissue(&r, &p), -ENOENT); /* already free */

	/* bad configs */
	struct ht_req_cfg bad;
	memset(&bad, 0, sizeof(bad));
	assert_int_equal(ht_req_init(&r, &bad), -EINVAL);
	bad.n_unitids = 2;
	bad.unitids[0] = 4;
	bad.unitids[1] = 4;
	assert_int_equal(ht_req_init(&r, &bad), -EINVAL);
	bad.unitids[1] = 32;
	assert_int_equal(ht_req_init(&r, &bad), -EINVAL);
}

/* ---- target semantics ---- */

static void test_target_response_fields(void **state)
{
	(void)state;
	uint8_t mem[128] = { 0 };
	struct ht_requester r;
	struct ht_target t;
	struct ht_pkt req, rsp;
	init_req(&r, 1, (const uint8_t[]){ 6 });
	init_tgt(&t, mem, 0x4000, sizeof(mem));
	struct ht_op o = op_read(0x4000, 8, 1);
	o.rsp_passpw = 1;
	assert_int_equal(ht_req_issue(&r, &o, &req), 0);
	assert_int_equal(req.responsepasspw, 1);
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(rsp.kind, HT_K_RDRESPONSE);
	assert_int_equal(rsp.bridge, 1);
	assert_int_equal(rsp.unitid, 6);
	assert_int_equal(rsp.srctag, req.srctag);
	assert_int_equal(rsp.rquid, 0);
	assert_int_equal(rsp.passpw, 1);
	assert_int_equal(rsp.count, 1);
	assert_int_equal(rsp.data_len, 8);
	o.rsp_passpw = 0;
	assert_int_equal(ht_req_issue(&r, &o, &req), 0);
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(rsp.passpw, 0);
	o = op_write(false, 0x4000, 4, 0, 2);
	assert_int_equal(ht_req_issue(&r, &o, &req), 0);
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(rsp.kind, HT_K_TGTDONE);
	assert_int_equal(rsp.bridge, 1);
	assert_int_equal(rsp.srctag, req.srctag);
	assert_int_equal(ht_pkt_rsp_err(&rsp), HT_RSP_OK);
	uint8_t buf[HT_MAX_PKT_LEN];
	assert_true(ht_encode(&rsp, buf, sizeof(buf)) > 0);
	/* a response handed to the target is not a request */
	assert_int_equal(ht_tgt_handle(&t, &rsp, &req), -EINVAL);
	assert_int_equal(ht_tgt_stats(&t)->not_request, 1);
}

static void test_master_abort_out_of_region(void **state)
{
	(void)state;
	/* region [0x1000, 0x10F8): its end is not 64-byte aligned, so legal
	 * single-packet accesses can straddle it */
	uint8_t mem[0xF8], copy[0xF8];
	for (unsigned i = 0; i < sizeof(mem); i++)
		mem[i] = (uint8_t)i;
	memcpy(copy, mem, sizeof(mem));
	struct ht_requester r;
	struct ht_target t;
	struct ht_completion c;
	struct ht_pkt req, rsp;
	init_req(&r, 1, (const uint8_t[]){ 1 });
	init_tgt(&t, mem, 0x1000, sizeof(mem));

	struct ht_op o = op_read(0x0F00, 16, 1); /* below */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_read(0x10F8, 4, 2);               /* just past the end */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_read(0x10F0, 16, 3);              /* partly outside */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_read(0x10F0, 8, 4);               /* the last 8 bytes: fine */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	assert_memory_equal(c.data, mem + 0xF0, 8);
	o = op_read(0x10F7, 1, 5);               /* the last byte: fine */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	assert_int_equal(c.data[0], mem[0xF7]);
	o = op_read(0x0FFF, 1, 5);               /* the byte before: abort */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);

	/* the error RdResponse carries Count+1 dwords of all-ones */
	o = op_read(0x10C0, 64, 6);
	assert_int_equal(ht_req_issue(&r, &o, &req), 0);
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(rsp.error0, 1);
	assert_int_equal(rsp.error1, 1);
	assert_int_equal(rsp.count, 15);
	assert_int_equal(rsp.data_len, 64);
	for (unsigned i = 0; i < 64; i++)
		assert_int_equal(rsp.data[i], 0xFF);
	assert_int_equal(ht_req_rx(&r, &rsp, &c), 1);
	assert_int_equal(c.status, HT_RSP_MASTER_ABORT);

	/* partly-outside writes and atomics: master abort, no partial effect */
	o = op_write(false, 0x10F0, 16, 9, 7);   /* dword write, 8 bytes outside */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_write(false, 0x10F5, 5, 9, 8);    /* byte write, 2 bytes outside */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_atomic(false, 0x10F8, 1, 0, 9);
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	assert_int_equal(c.len, 8);
	assert_int_equal(ht_completion_u64(&c), UINT64_MAX);
	o = op_write(true, 0x10F4, 8, 9, 10);    /* posted: dropped silently */
	assert_int_equal(direct(&r, &t, &o, &c), -1);
	assert_int_equal(ht_tgt_stats(&t)->posted_dropped, 1);
	assert_memory_equal(mem, copy, sizeof(mem));
	assert_int_equal(ht_tgt_stats(&t)->master_abort_range, 9);
	assert_int_equal(ht_tgt_stats(&t)->bytes_written, 0);
}

static void test_master_abort_reserved_range(void **state)
{
	(void)state;
	/* a region that straddles the reserved range start and reaches into it */
	const uint64_t base = 0xFCFFFFF000ull;
	uint8_t *mem = calloc(1, 8192);
	assert_non_null(mem);
	struct ht_requester r;
	struct ht_target t;
	struct ht_completion c;
	init_req(&r, 1, (const uint8_t[]){ 1 });
	init_tgt(&t, mem, base, 8192);

	struct ht_op o = op_read(0xFCFFFFFFC0ull, 64, 1); /* below the range: ok */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	o = op_read(0xFD00000000ull, 4, 2);                /* first reserved byte */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_write(false, 0xFD00000010ull, 8, 3, 3);
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	o = op_atomic(true, 0xFD00000008ull, 0, 1, 4);
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_MASTER_ABORT);
	for (unsigned i = 4096; i < 8192; i++)
		assert_int_equal(mem[i], 0);
	assert_int_equal(ht_tgt_stats(&t)->master_abort_reserved, 3);

	/* the helper: the whole 0xFD..0xFF range with Addr[63:40] = 0 */
	assert_false(ht_addr_reserved(0xFCFFFFFFFFull, 1));
	assert_true(ht_addr_reserved(0xFCFFFFFFFFull, 2));
	assert_true(ht_addr_reserved(0xFDF8000000ull, 4));
	assert_true(ht_addr_reserved(0xFE00000000ull, 4));
	assert_true(ht_addr_reserved(0xFFFFFFFFFCull, 4));
	assert_false(ht_addr_reserved(0x10000000000ull, 4));
	assert_false(ht_addr_reserved(0x1FD00000000ull, 4)); /* Addr[63:40] != 0 */
	free(mem);
}

static void test_64bit_target_through_links(void **state)
{
	(void)state;
	uint8_t mem[256] = { 0 };
	const uint64_t base = 0x00ABCDEF00000000ull; /* needs the 0x3E prefix */
	struct ht_b2b *b = new_b2b(2, 1, mem, base, sizeof(mem));
	struct ht_op ops[2] = { op_write(false, base + 0x40, 16, 5, 1), op_read(base + 0x40, 16, 2) };
	struct ht_completion c[4];
	assert_int_equal(b2b_run(b, ops, 2, c, 4), 2);
	const struct ht_completion *x = find_cookie(c, 2, 2);
	assert_int_equal(x->status, HT_RSP_OK);
	assert_memory_equal(x->data, ops[0].data, 16);
	assert_memory_equal(mem + 0x40, ops[0].data, 16);
	free(b);
}

static void test_fault_injection_reported(void **state)
{
	(void)state;
	uint8_t *mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	struct ht_b2b *b = new_b2b(2, 2, mem, MEM_BASE, MEM_SIZE);
	assert_int_equal(ht_tgt_set_fault(&b->tgt, 0, MEM_BASE + 0x100, 0x40, HT_RSP_TARGET_ABORT), 0);
	assert_int_equal(ht_tgt_set_fault(&b->tgt, 1, MEM_BASE + 0x200, 0x40, HT_RSP_DATA_ERROR), 0);
	struct ht_op ops[7] = {
		op_read(MEM_BASE + 0x100, 4, 1),
		op_write(false, MEM_BASE + 0x13C, 4, 1, 2),
		op_atomic(false, MEM_BASE + 0x108, 1, 0, 3),
		op_read(MEM_BASE + 0x200, 64, 4),
		op_write(false, MEM_BASE + 0x220, 8, 2, 5),
		op_read(MEM_BASE + 0x0C0, 64, 6),        /* next to the fault: fine */
		op_write(true, MEM_BASE + 0x110, 4, 3, 7), /* posted: no completion, no effect */
	};
	struct ht_completion c[8];
	assert_int_equal(b2b_run(b, ops, 7, c, 8), 6);
	assert_int_equal(find_cookie(c, 6, 1)->status, HT_RSP_TARGET_ABORT);
	assert_int_equal(find_cookie(c, 6, 2)->status, HT_RSP_TARGET_ABORT);
	assert_int_equal(find_cookie(c, 6, 3)->status, HT_RSP_TARGET_ABORT);
	assert_int_equal(find_cookie(c, 6, 4)->status, HT_RSP_DATA_ERROR);
	assert_int_equal(find_cookie(c, 6, 5)->status, HT_RSP_DATA_ERROR);
	assert_int_equal(find_cookie(c, 6, 6)->status, HT_RSP_OK);
	for (unsigned i = 0; i < MEM_SIZE; i++)
		assert_int_equal(mem[i], 0); /* faulted requests have no effect */
	assert_int_equal(ht_req_stats(&b->req)->status[HT_RSP_TARGET_ABORT], 3);
	assert_int_equal(ht_req_stats(&b->req)->status[HT_RSP_DATA_ERROR], 2);
	/* clearing the fault restores service */
	assert_int_equal(ht_tgt_set_fault(&b->tgt, 0, 0, 0, HT_RSP_OK), 0);
	struct ht_op again = op_read(MEM_BASE + 0x100, 4, 8);
	assert_int_equal(b2b_run(b, &again, 1, c, 8), 1);
	assert_int_equal(c[0].status, HT_RSP_OK);
	free(b);
	free(mem);
}

static void test_byte_masks_every_offset(void **state)
{
	(void)state;
	uint8_t mem[128], model[128];
	struct ht_requester r;
	struct ht_target t;
	struct ht_completion c;
	init_req(&r, 1, (const uint8_t[]){ 1 });
	init_tgt(&t, mem, 0x2000, sizeof(mem));
	for (unsigned i = 0; i < sizeof(mem); i++)
		model[i] = mem[i] = (uint8_t)(0xA0 ^ i);
	unsigned cookie = 0, writes = 0, reads = 0;

	/* byte reads: every offset of a 64-byte block, every length in the dword */
	for (unsigned off = 0; off < 64; off++) {
		for (unsigned len = 1; len <= 4 - (off & 3); len++) {
			struct ht_op o = op_read(0x2040 + off, len, ++cookie);
			assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
			assert_int_equal(c.len, len);
			assert_memory_equal(c.data, mem + 0x40 + off, len);
			reads++;
		}
	}
	/* byte writes: every offset, every length inside the 32-byte window,
	 * posted and non-posted; only the addressed bytes change */
	for (unsigned off = 0; off < 64; off++) {
		for (unsigned len = 1; len <= 32 - (off & 31); len++) {
			bool posted = (off + len) & 1;
			struct ht_op o = op_write(posted, 0x2040 + off, len, (uint8_t)(off * 3 + len), ++cookie);
			int st = direct(&r, &t, &o, &c);
			assert_int_equal(st, posted ? -1 : HT_RSP_OK);
			memcpy(model + 0x40 + off, o.data, len);
			assert_memory_equal(mem, model, sizeof(mem));
			writes++;
		}
	}
	assert_int_equal(reads, 64 + 48 + 32 + 16);
	assert_true(writes > 1000);
	/* dword reads at every aligned offset and length of the block */
	for (unsigned off = 0; off < 64; off += 4)
		for (unsigned len = 4; off + len <= 64; len += 4) {
			struct ht_op o = op_read(0x2040 + off, len, ++cookie);
			assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
			assert_memory_equal(c.data, mem + 0x40 + off, len);
		}
}

static void test_byte_write_mask_nibble_mapping(void **state)
{
	(void)state;
	/* handcrafted byte write: Addr[4:2] = 2, two data dwords, a sparse mask;
	 * data dword j uses mask nibble 2+j */
	uint8_t mem[64];
	memset(mem, 0xEE, sizeof(mem));
	struct ht_target t;
	struct ht_pkt req, rsp;
	init_tgt(&t, mem, 0, sizeof(mem));
	memset(&req, 0, sizeof(req));
	req.posted = 0;
	req.dword = 0;
	req.coherent = 1;
	req.unitid = 1;
	req.srctag = 3;
	req.addr = 0x28;            /* window 0x20, dword index 2 */
	req.count = 2;
	req.mask = 0x00009500;      /* nibble 2 = 0101 (bytes 0, 2), nibble 3 = 1001 (bytes 0, 3) */
	req.data_len = 8;
	for (unsigned i = 0; i < 8; i++)
		req.data[i] = (uint8_t)(0x10 + i);
	assert_int_equal(ht_pkt_set_cmd(&req, HT_K_WRSIZED), 0);
	uint8_t buf[HT_MAX_PKT_LEN];
	assert_true(ht_encode(&req, buf, sizeof(buf)) > 0); /* a legal packet */
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(ht_pkt_rsp_err(&rsp), HT_RSP_OK);
	uint8_t want[64];
	memset(want, 0xEE, sizeof(want));
	want[0x28] = 0x10;
	want[0x2A] = 0x12;
	want[0x2C] = 0x14;
	want[0x2F] = 0x17;
	assert_memory_equal(mem, want, sizeof(want));

	/* byte read with a sparse mask: only enabled bytes, others returned 0 */
	memset(&req, 0, sizeof(req));
	req.coherent = 1;
	req.unitid = 1;
	req.addr = 0x28;
	req.mask = req.count = 0x9;
	assert_int_equal(ht_pkt_set_cmd(&req, HT_K_RDSIZED), 0);
	assert_int_equal(ht_tgt_handle(&t, &req, &rsp), 1);
	assert_int_equal(rsp.count, 0);
	assert_int_equal(rsp.data_len, 4);
	assert_int_equal(rsp.data[0], 0x10);
	assert_int_equal(rsp.data[1], 0);
	assert_int_equal(rsp.data[2], 0);
	assert_int_equal(rsp.data[3], 0xEE);
}

static void test_atomics_semantics(void **state)
{
	(void)state;
	uint8_t mem[64] = { 0 };
	struct ht_requester r;
	struct ht_target t;
	struct ht_completion c;
	init_req(&r, 1, (const uint8_t[]){ 1 });
	init_tgt(&t, mem, 0x100, sizeof(mem));
	put64(mem + 8, 0xFFFFFFFFFFFFFFF0ull);
	put64(mem + 16, 0x1122334455667788ull);

	struct ht_op o = op_atomic(false, 0x108, 0x20, 0, 1);   /* wraps mod 2^64 */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	assert_int_equal(ht_completion_u64(&c), 0xFFFFFFFFFFFFFFF0ull);
	assert_int_equal(le64(mem + 8), 0x10);
	/* little-endian in memory */
	assert_int_equal(mem[8], 0x10);
	assert_int_equal(mem[9], 0);

	o = op_atomic(true, 0x110, 0x1122334455667788ull, 0xCAFEull, 2); /* success */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	assert_int_equal(ht_completion_u64(&c), 0x1122334455667788ull);
	assert_int_equal(le64(mem + 16), 0xCAFE);
	o = op_atomic(true, 0x110, 0x1122334455667788ull, 0xBEEFull, 3); /* failure */
	assert_int_equal(direct(&r, &t, &o, &c), HT_RSP_OK);
	assert_int_equal(ht_completion_u64(&c), 0xCAFE);
	assert_int_equal(le64(mem + 16), 0xCAFE);
	/* neighbours untouched */
	assert_int_equal(le64(mem + 0), 0);
	assert_int_equal(le64(mem + 24), 0);
	const struct ht_tgt_stats *s = ht_tgt_stats(&t);
	assert_int_equal(s->fetchadd, 1);
	assert_int_equal(s->cas, 2);
	assert_int_equal(s->cas_swapped, 1);
	/* misaligned atomics are rejected by the requester */
	struct ht_pkt p;
	o = op_atomic(false, 0x104, 1, 0, 4);
	assert_int_equal(ht_req_issue(&r, &o, &p), -EINVAL);
}

static void test_flush_after_posted_writes(void **state)
{
	(void)state;
	uint8_t *mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	/* B has a single posted buffer and plenty of NP buffers: the posted
	 * writes trickle, the Flush (NP, PassPW=0) must still arrive after them */
	struct ht_b2b *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	struct ht_b2b_cfg cfg;
	ht_b2b_cfg_default(&cfg, 8, MEM_BASE, MEM_SIZE, mem);
	cfg.link_b.rx_bufs[HT_VC_P][0] = 1;
	cfg.link_b.rx_bufs[HT_VC_P][1] = 1;
	cfg.latency = 2;
	assert_int_equal(ht_b2b_init(b, &cfg), 0);
	struct ht_op ops[13];
	for (unsigned i = 0; i < 12; i++)
		ops[i] = op_write(true, MEM_BASE + 64 * i, 64, (uint8_t)i, i);
	ops[12] = op_simple(HT_OP_FLUSH, 99);
	for (unsigned i = 0; i < 13; i++)
		assert_int_equal(ht_b2b_submit(b, &ops[i]), 0);
	unsigned guard = 0;
	for (;;) {
		struct ht_completion c;
		if (ht_b2b_step(b, &c) == 1) {
			assert_int_equal(c.cookie, 99);
			assert_int_equal(c.type, HT_OP_FLUSH);
			assert_int_equal(c.status, HT_RSP_OK);
			/* at TgtDone time every earlier posted write is visible */
			for (unsigned i = 0; i < 12; i++)
				assert_memory_equal(mem + 64 * i, ops[i].data, 64);
			break;
		}
		assert_true(++guard < 10000);
	}
	assert_true(ht_link_stats(&b->a)->order_waits[HT_VC_NP] > 0);
	assert_int_equal(ht_tgt_stats(&b->tgt)->flush, 1);
	free(b);
	free(mem);
}

static void test_read_sees_earlier_posted_write(void **state)
{
	(void)state;
	uint8_t *mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	struct ht_b2b *b = new_b2b(1, 4, mem, MEM_BASE, MEM_SIZE);
	struct ht_op ops[40];
	unsigned k = 0;
	for (unsigned i = 0; i < 20; i++) {
		ops[k++] = op_write(true, MEM_BASE + 8 * i, 8, (uint8_t)(i + 1), 1000 + i);
		ops[k++] = op_read(MEM_BASE + 8 * i, 8, i);
	}
	struct ht_completion c[40];
	unsigned n = b2b_run(b, ops, k, c, 40);
	assert_int_equal(n, 20);
	for (unsigned i = 0; i < 20; i++) {
		const struct ht_completion *x = find_cookie(c, n, i);
		assert_non_null(x);
		assert_memory_equal(x->data, ops[2 * i].data, 8);
	}
	free(b);
	free(mem);
}

static void test_b2b_crc_corruption_counted(void **state)
{
	(void)state;
	uint8_t *mem = calloc(1, MEM_SIZE);
	assert_non_null(mem);
	struct ht_b2b *b = new_b2b(4, 0, mem, MEM_BASE, MEM_SIZE);
	/* let the initial NOPs through, then corrupt the next A->B packet */
	struct ht_completion c;
	for (int i = 0; i < 10; i++)
		(void)ht_b2b_step(b, &c);
	assert_int_equal(b->st.crc_bad, 0);
	b->corrupt[0] = 1;
	struct ht_op o = op_write(true, MEM_BASE, 8, 1, 1);
	assert_int_equal(ht_b2b_submit(b, &o), 0);
	for (int i = 0; i < 10; i++)
		(void)ht_b2b_step(b, &c);
	assert_int_equal(b->st.crc_bad, 1);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(mem[i], 0); /* dropped, not applied */
	free(b);
	free(mem);
}

/* ---- workload ---- */

struct wl_run {
	uint64_t hash;
	struct ht_wl_stats ws;
	uint64_t image_diff;
	uint64_t stalls;
};

static struct wl_run run_workload(uint64_t seed, uint64_t n_ops, unsigned credits, unsigned latency,
				  uint64_t size, bool corrupt_mem)
{
	uint8_t *mem = malloc(size), *shadow = malloc(size), *busy = malloc(size / 64);
	uint64_t *taint = malloc(size / 64 * sizeof(*taint));
	struct ht_b2b *b = calloc(1, sizeof(*b));
	struct ht_workload *w = calloc(1, sizeof(*w));
	assert_true(mem && shadow && busy && taint && b && w);
	ht_wl_fill(seed, mem, size);
	memcpy(shadow, mem, size);
	struct ht_b2b_cfg bc;
	ht_b2b_cfg_default(&bc, credits, MEM_BASE, size, mem);
	bc.latency = latency;
	bc.req.n_unitids = 2;
	bc.req.unitids[1] = 2;
	assert_int_equal(ht_b2b_init(b, &bc), 0);
	struct ht_wl_cfg wc;
	ht_wl_cfg_default(&wc);
	wc.seed = seed;
	wc.base = MEM_BASE;
	wc.size = size;
	wc.n_ops = n_ops;
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = taint;
	assert_int_equal(ht_wl_init(w, &wc), 0);
	uint64_t guard = 0;
	bool corrupted = false;
	while (!ht_wl_done(w) || ht_b2b_busy(b)) {
		struct ht_op op;
		while (ht_wl_peek(w, &op) == 1) {
			int rc = ht_b2b_submit(b, &op);
			if (rc == -EAGAIN)
				break;
			assert_int_equal(rc, 0);
			(void)ht_wl_commit(w);
		}
		if (corrupt_mem && !corrupted && w->seq > n_ops / 2) {
			for (uint64_t i = 0; i < size; i += 8)
				mem[i] ^= 0x5A; /* behind the workload's back */
			corrupted = true;
		}
		struct ht_completion c;
		if (ht_b2b_step(b, &c) == 1)
			assert_true(ht_wl_complete(w, &c, NULL) >= 0);
		assert_true(++guard < 100000000ull);
	}
	struct wl_run res;
	res.hash = b->hash;
	res.ws = *ht_wl_stats(w);
	res.image_diff = ht_wl_check_image(w, mem);
	res.stalls = ht_link_stats(&b->a)->credit_stalls[HT_VC_NP] +
		     ht_link_stats(&b->a)->credit_stalls[HT_VC_P];
	assert_int_equal(b->st.crc_bad + b->st.link_errors + b->st.unexpected, 0);
	free(mem);
	free(shadow);
	free(busy);
	free(taint);
	free(b);
	free(w);
	return res;
}

static void test_workload_10000_ops_verified(void **state)
{
	(void)state;
	struct wl_run r = run_workload(12345, 10000, 2, 3, 8192, false);
	uint64_t np = 0;
	for (int t = 0; t < HT_OP__COUNT; t++) {
		if (ht_op_nonposted((enum ht_op_type)t))
			np += r.ws.issued[t];
		assert_true(r.ws.issued[t] > 0); /* every op type was exercised */
	}
	assert_int_equal(r.ws.issued_total, 10000 + 8192 / 64);
	assert_int_equal(r.ws.completed, np);
	assert_int_equal(r.ws.verified, np);
	assert_int_equal(r.ws.mismatches, 0);
	assert_int_equal(r.ws.errors, 0);
	assert_int_equal(r.ws.unexpected, 0);
	assert_int_equal(r.image_diff, 0);
	assert_true(r.ws.cas_swapped > 0);
	assert_true(r.stalls > 0); /* credits really limited the run */
}

static void test_workload_detects_corruption(void **state)
{
	(void)state;
	struct wl_run r = run_workload(7, 2000, 4, 1, 4096, true);
	assert_true(r.ws.mismatches > 0);
	assert_true(r.image_diff > 0);
}

static void test_workload_small_window_hotspot(void **state)
{
	(void)state;
	/* two blocks only: lots of blocking on in-flight ops, still all verified */
	struct wl_run r = run_workload(99, 3000, 3, 2, 128, false);
	assert_int_equal(r.ws.mismatches, 0);
	assert_int_equal(r.ws.errors, 0);
	assert_int_equal(r.ws.verified, r.ws.completed);
	assert_true(r.ws.blocked > 0);
	assert_int_equal(r.image_diff, 0);
}

static void test_determinism(void **state)
{
	(void)state;
	struct wl_run a = run_workload(2024, 3000, 3, 2, 4096, false);
	struct wl_run b = run_workload(2024, 3000, 3, 2, 4096, false);
	struct wl_run c = run_workload(2025, 3000, 3, 2, 4096, false);
	assert_int_equal(a.hash, b.hash);
	assert_memory_equal(&a.ws, &b.ws, sizeof(a.ws));
	assert_int_not_equal(a.hash, c.hash);
	/* the credit configuration changes the byte stream too */
	struct wl_run d = run_workload(2024, 3000, 8, 2, 4096, false);
	assert_int_not_equal(a.hash, d.hash);
}

/* The taint scratch of the tests' workloads of up to 4 KiB, one at a time. */
static uint64_t wl_taint[4096 / 64];

/* A workload of one op type only, no read-back sweep. */
static void wl_cfg_single_op(struct ht_wl_cfg *wc, uint64_t seed, uint64_t base, uint64_t size,
			     uint64_t n_ops, uint8_t *shadow, uint8_t *busy, enum ht_op_type type)
{
	ht_wl_cfg_default(wc);
	wc->seed = seed;
	wc->base = base;
	wc->size = size;
	wc->n_ops = n_ops;
	wc->shadow = shadow;
	wc->busy = busy;
	assert_true(size <= sizeof(wl_taint) / sizeof(wl_taint[0]) * 64);
	wc->taint = wl_taint;
	wc->sweep = false;
	memset(wc->weight, 0, sizeof(wc->weight));
	wc->weight[type] = 1;
}

static void test_workload_peek_commit_protocol(void **state)
{
	(void)state;
	uint8_t shadow[64], busy[1];
	struct ht_workload w;
	struct ht_wl_cfg wc;
	memset(shadow, 0, sizeof(shadow));
	wl_cfg_single_op(&wc, 1, 0x40, 64, 50, shadow, busy, HT_OP_READ);
	assert_int_equal(ht_wl_init(&w, &wc), 0);
	struct ht_op a, b;
	assert_int_equal(ht_wl_peek(&w, &a), 1);
	assert_int_equal(ht_wl_peek(&w, &b), 1);
	assert_memory_equal(&a, &b, sizeof(a)); /* same op until committed */
	assert_int_equal(ht_wl_commit(&w), 0);
	/* one block, one read in flight: the next op must wait */
	assert_int_equal(ht_wl_peek(&w, &b), 0);
	/* complete it with the right data */
	struct ht_completion c;
	memset(&c, 0, sizeof(c));
	c.cookie = a.cookie;
	c.type = HT_OP_READ;
	c.len = (uint16_t)a.len;
	struct ht_wl_result res;
	assert_int_equal(ht_wl_complete(&w, &c, &res), 0);
	assert_true(res.verified);
	assert_int_equal(res.seq, 0);
	/* an unknown cookie is rejected */
	assert_int_equal(ht_wl_complete(&w, &c, &res), -ENOENT);
	assert_int_equal(ht_wl_stats(&w)->unexpected, 1);
	/* wrong data is a mismatch */
	assert_int_equal(ht_wl_peek(&w, &a), 1);
	(void)ht_wl_commit(&w);
	c.cookie = a.cookie;
	c.len = (uint16_t)a.len;
	c.data[0] = 1;
	assert_int_equal(ht_wl_complete(&w, &c, &res), 1);
	assert_false(res.verified);
	assert_int_equal(ht_wl_stats(&w)->mismatches, 1);
	/* bad configs */
	wc.size = 65;
	assert_int_equal(ht_wl_init(&w, &wc), -EINVAL);
	wc.size = 64;
	wc.base = 0x41;
	assert_int_equal(ht_wl_init(&w, &wc), -EINVAL);
}

/* Complete the next read of workload w (window at 0x40) with what the
 * image mem holds there: its result. */
static int wl_read_image(struct ht_workload *w, const uint8_t *mem, uint64_t *addr)
{
	struct ht_op op;
	struct ht_completion c;

	assert_int_equal(ht_wl_peek(w, &op), 1);
	(void)ht_wl_commit(w);
	memset(&c, 0, sizeof(c));
	c.cookie = op.cookie;
	c.type = HT_OP_READ;
	c.len = (uint16_t)op.len;
	memcpy(c.data, mem + (op.addr - 0x40), op.len);
	*addr = op.addr;
	return ht_wl_complete(w, &c, NULL);
}

/* Complete the next read of workload w (a window of two blocks at 0x40)
 * with every byte = v: its result. */
static int wl_read_with(struct ht_workload *w, uint8_t v, uint64_t *addr)
{
	uint8_t mem[128];

	memset(mem, v, sizeof(mem));
	return wl_read_image(w, mem, addr);
}

/* A read-only workload of whole-block reads over two blocks at 0x40,
 * shadow all zero. */
static void wl_two_blocks(struct ht_workload *w, uint64_t seed, uint8_t shadow[128],
			  uint8_t busy[2])
{
	struct ht_wl_cfg wc;

	memset(shadow, 0, 128);
	wl_cfg_single_op(&wc, seed, 0x40, 128, 200, shadow, busy, HT_OP_READ);
	wc.fixed_len = 64;
	assert_int_equal(ht_wl_init(w, &wc), 0);
}

/* The memory image is compared with the shadow where no loss was reported:
 * a block tainted (a posted write in it lost to a reset, never read back
 * whole since) may hold anything; a byte of another block may not. */
static void test_workload_image_taint(void **state)
{
	(void)state;
	uint8_t shadow[128], busy[2], mem[128];
	struct ht_workload w;

	wl_two_blocks(&w, 7, shadow, busy);
	memset(mem, 0, sizeof(mem));
	mem[0x05] = 0xAA; /* block 0 */
	assert_int_equal(ht_wl_check_image(&w, mem), 1);
	assert_int_equal(ht_wl_taint(&w, 0x44, 4, false), 1);
	assert_int_equal(ht_wl_check_image(&w, mem), 0);
	mem[0x45] = 0xAA; /* block 1 */
	assert_int_equal(ht_wl_check_image(&w, mem), 1);
}

/* Bytes reported lost (ht_wl_taint) read back with any value: accepted once
 * and the shadow seeded from it (the read owns them again, so a second,
 * different value is a mismatch); the bytes of the same block that were
 * not reported lost, and those of other blocks, still fail on a wrong
 * value. */
static void test_workload_taint(void **state)
{
	(void)state;
	uint8_t shadow[128], busy[2], mem[128];
	struct ht_workload w;
	unsigned seen[2] = { 0, 0 };
	uint64_t addr;

	wl_two_blocks(&w, 7, shadow, busy);
	/* outside the window: not this workload's loss */
	assert_int_equal(ht_wl_taint(&w, 0x0, 0x40, false), 0);
	assert_int_equal(ht_wl_taint(&w, 0xC0, 0x1000, true), 0);
	/* a posted write of 4 bytes in block 0 was lost */
	assert_int_equal(ht_wl_taint(&w, 0x44, 4, false), 1);
	assert_int_equal(ht_wl_stats(&w)->lost_reset, 1);
	assert_int_equal(ht_wl_stats(&w)->lost_bytes, 4);
	memset(mem, 0, sizeof(mem));
	memset(mem + 4, 0xAA, 4); /* it may have been applied after all */
	mem[64 + 1] = 0xAA;       /* no loss reported in block 1 */
	while (seen[0] < 2 || seen[1] < 1) {
		int rc = wl_read_image(&w, mem, &addr);
		unsigned blk = (unsigned)((addr - 0x40) / 64);

		if (blk == 0)
			assert_int_equal(rc, 0); /* tainted, then seeded with 0xAA */
		else
			assert_int_equal(rc, 1); /* 0xAA where the shadow says 0 */
		seen[blk]++;
	}
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 1);
	assert_int_equal(ht_wl_stats(&w)->verified, seen[0]);
	assert_int_equal(ht_wl_stats(&w)->mismatches, seen[1]);
	/* block 0 is owned again: another value there is a mismatch */
	mem[4] = 0xBB;
	do {
		int rc = wl_read_image(&w, mem, &addr);

		assert_int_equal(rc, 1); /* block 1 still differs too */
	} while (addr != 0x40);
	/* a byte of block 0 the loss did not cover was never accepted */
	assert_int_equal(ht_wl_taint(&w, 0x44, 4, false), 1);
	mem[4] = 0xAA;
	mem[9] = 0x11;
	do {
		int rc = wl_read_image(&w, mem, &addr);

		assert_int_equal(rc, 1);
	} while (addr != 0x40);
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 2);
	/* the image is compared outside the bytes still tainted only */
	assert_int_equal(ht_wl_taint(&w, 0x49, 1, false), 1);
	mem[64 + 1] = 0;
	assert_int_equal(ht_wl_check_image(&w, mem), 0);
	mem[10] = 0x22;
	assert_int_equal(ht_wl_check_image(&w, mem), 1);
	/* the node restarted: the whole window is lost, any value accepted once */
	assert_int_equal(ht_wl_taint(&w, 0, 0x10000, true), 1);
	assert_int_equal(ht_wl_stats(&w)->lost_restart, 1);
	assert_int_equal(ht_wl_stats(&w)->lost_bytes, 4 + 4 + 1 + 128);
	uint64_t mm = ht_wl_stats(&w)->mismatches;

	seen[0] = seen[1] = 0;
	while (!seen[0] || !seen[1]) {
		assert_int_equal(wl_read_with(&w, 0xCC, &addr), 0);
		seen[(addr - 0x40) / 64]++;
	}
	assert_int_equal(ht_wl_stats(&w)->mismatches, mm);
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 4);
}

/* Issue the next read of workload w: its op (cookie, address). */
static void wl_issue_read(struct ht_workload *w, struct ht_op *op)
{
	assert_int_equal(ht_wl_peek(w, op), 1);
	(void)ht_wl_commit(w);
}

/* Complete read op with status st (data all v when ok): the result. */
static int wl_complete_read(struct ht_workload *w, const struct ht_op *op, uint8_t st, uint8_t v)
{
	struct ht_completion c;

	memset(&c, 0, sizeof(c));
	c.cookie = op->cookie;
	c.type = HT_OP_READ;
	c.status = st;
	c.len = st == HT_RSP_OK ? (uint16_t)op->len : 0;
	memset(c.data, v, op->len);
	return ht_wl_complete(w, &c, NULL);
}

/* An error completion (a request poisoned by a reset, or timed out) is
 * explained by a loss report that covers its bytes, whether the report comes
 * after the error (a reset poisons first, the restart is proved a round trip
 * later) or while the op is in flight: counted as poisoned_lost, not as an
 * error. An error on bytes no report covers stays an error, and a mismatch
 * (wrong data with an ok status) is never explained away. */
static void test_workload_poisoned_lost(void **state)
{
	(void)state;
	uint8_t shadow[128], busy[2];
	struct ht_workload w;
	struct ht_op op;
	const struct ht_wl_stats *st;

	wl_two_blocks(&w, 11, shadow, busy);
	st = ht_wl_stats(&w);
	/* poisoned first, the loss reported afterwards */
	wl_issue_read(&w, &op);
	assert_int_equal(wl_complete_read(&w, &op, HT_RSP_TARGET_ABORT, 0), 1);
	assert_int_equal(st->errors, 1);
	assert_int_equal(ht_wl_taint(&w, op.addr & ~63ull, 64, true), 1);
	assert_int_equal(st->errors, 0);
	assert_int_equal(st->poisoned_lost, 1);
	/* in flight when the loss is reported, poisoned (or timed out) after */
	wl_issue_read(&w, &op);
	assert_int_equal(ht_wl_taint(&w, op.addr, 1, false), 1);
	assert_int_equal(wl_complete_read(&w, &op, HT_RSP_MASTER_ABORT, 0), 1);
	assert_int_equal(st->errors, 0);
	assert_int_equal(st->poisoned_lost, 2);
	/* an error the report does not cover stays an error */
	wl_issue_read(&w, &op);
	uint64_t other = (op.addr & ~63ull) == 0x40 ? 0x80 : 0x40;

	assert_int_equal(wl_complete_read(&w, &op, HT_RSP_TARGET_ABORT, 0), 1);
	assert_int_equal(ht_wl_taint(&w, other, 64, true), 1);
	assert_int_equal(st->errors, 1);
	assert_int_equal(st->poisoned_lost, 2);
	/* a wrong value on owned bytes stays a mismatch, report or not */
	for (uint8_t v = 0x70; st->mismatches == 0; v++) {
		wl_issue_read(&w, &op);
		(void)wl_complete_read(&w, &op, HT_RSP_OK, v); /* seeds tainted blocks */
	}
	assert_int_equal(ht_wl_taint(&w, op.addr & ~63ull, 64, true), 1);
	assert_int_equal(st->mismatches, 1);
	/* the target is gone for good: no more ops, not even the sweep */
	wl_issue_read(&w, &op);
	ht_wl_stop(&w);
	assert_int_equal(ht_wl_peek(&w, &op), -ENODATA);
	assert_false(ht_wl_done(&w)); /* one still in flight */
}

/* A window not owned yet (ht_wl_unown: memory an earlier life may have
 * written): the first whole-block read of each block seeds the shadow, not
 * counted as a loss; from then on a different value is a mismatch. */
static void test_workload_unown(void **state)
{
	(void)state;
	uint8_t shadow[128], busy[2];
	struct ht_workload w;
	unsigned seen[2] = { 0, 0 };
	uint64_t addr;

	wl_two_blocks(&w, 9, shadow, busy);
	ht_wl_unown(&w);
	while (!seen[0] || !seen[1]) {
		assert_int_equal(wl_read_with(&w, 0x5A, &addr), 0);
		seen[(addr - 0x40) / 64]++;
	}
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 2);
	assert_int_equal(ht_wl_stats(&w)->lost_reset + ht_wl_stats(&w)->lost_restart, 0);
	assert_int_equal(wl_read_with(&w, 0x5B, &addr), 1);
	assert_int_equal(ht_wl_stats(&w)->mismatches, 1);
}

/* A window not owned yet, read 8 bytes at a time (the read round trip's
 * benchmark): the first read of each block seeds those 8 bytes only; from
 * then on a different value is a mismatch, and the memory image is compared
 * on the bytes read (the other 56 of each block are still unknown). */
static void test_workload_unown_partial(void **state)
{
	(void)state;
	uint8_t shadow[128], busy[2], mem[128];
	struct ht_workload w;
	struct ht_wl_cfg wc;
	unsigned seen[2] = { 0, 0 };
	uint64_t addr;

	memset(shadow, 0, sizeof(shadow));
	wl_cfg_single_op(&wc, 9, 0x40, 128, 200, shadow, busy, HT_OP_READ);
	wc.fixed_len = 8;
	assert_int_equal(ht_wl_init(&w, &wc), 0);
	ht_wl_unown(&w);
	while (!seen[0] || !seen[1]) {
		assert_int_equal(wl_read_with(&w, 0x5A, &addr), 0);
		seen[(addr - 0x40) / 64]++;
	}
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 2);
	assert_int_equal(wl_read_with(&w, 0x5A, &addr), 0);
	assert_int_equal(ht_wl_stats(&w)->tainted_reads, 2);
	assert_int_equal(wl_read_with(&w, 0x5B, &addr), 1);
	assert_int_equal(ht_wl_stats(&w)->mismatches, 1);
	assert_true(ht_wl_tainted(&w, 0)); /* bytes 8 to 63 still unknown */
	memset(mem, 0x77, sizeof(mem));
	memset(mem, 0x5A, 8);
	memset(mem + 64, 0x5A, 8);
	assert_int_equal(ht_wl_check_image(&w, mem), 0);
	mem[64 + 3] = 0;
	assert_int_equal(ht_wl_check_image(&w, mem), 1);
}

/* ht_rand_below: n <= 1 gives 0; every draw is below n, also for n near
 * 2^64 where the rejection step matters; for small n each value comes up
 * about equally often: 700 000 draws of n = 7 give 100 000 +- 1 500 each
 * (+-5 standard deviations, about 316; a fixed seed, so the same counts
 * every run), and n = 100 (the percent coin) gives 7 000 +- 420 each. */
static void test_rand_below_uniform(void **state)
{
	(void)state;
	struct ht_rand r;
	unsigned c7[7] = { 0 }, c100[100] = { 0 };
	const uint64_t big[] = { 3ull << 62, UINT64_MAX, (1ull << 63) + 1, 1000000007ull };

	ht_rand_seed(&r, 12345);
	assert_int_equal(ht_rand_below(&r, 0), 0);
	assert_int_equal(ht_rand_below(&r, 1), 0);
	for (unsigned i = 0; i < 700000; i++) {
		c7[ht_rand_below(&r, 7)]++;
		c100[ht_rand_below(&r, 100)]++;
	}
	for (unsigned v = 0; v < 7; v++) {
		assert_true(c7[v] > 100000 - 1500);
		assert_true(c7[v] < 100000 + 1500);
	}
	for (unsigned v = 0; v < 100; v++) {
		assert_true(c100[v] > 7000 - 420);
		assert_true(c100[v] < 7000 + 420);
	}
	for (unsigned k = 0; k < sizeof(big) / sizeof(big[0]); k++)
		for (unsigned i = 0; i < 100000; i++)
			assert_true(ht_rand_below(&r, big[k]) < big[k]);
	for (unsigned i = 0; i < 1000; i++) {
		uint64_t v = ht_rand_range(&r, 5, 9);

		assert_true(v >= 5 && v <= 9);
	}
}

/* `sizes = N` (fixed_len): every op moves N bytes at the start of a random
 * block, so every posted write takes the dword form (8-byte control packet +
 * N data bytes; never the byte form with its mask dword and 32-byte window).
 * Known answers: addresses and data follow the seeded generator's draws in
 * order: the block (no op-type draw with one type, no byte-form coin with a
 * fixed length), then one u64 x for the data, which is x, x + G, x + 2G, ...
 * (G the golden-ratio constant) little-endian, cut at len. */
static void test_workload_fixed_len_posted_writes(void **state)
{
	(void)state;
	static uint8_t shadow[4096], busy[4096 / 64];
	struct ht_requester r;
	init_req(&r, 1, (const uint8_t[]){ 3 });

	for (uint32_t len = 4; len <= 64; len += 4) {
		struct ht_workload w;
		struct ht_wl_cfg wc;
		struct ht_rand ref;

		wl_cfg_single_op(&wc, 77 + len, 0x100000, sizeof(shadow), 40, shadow, busy,
				 HT_OP_WRITE_P);
		wc.fixed_len = len;
		assert_int_equal(ht_wl_init(&w, &wc), 0);
		ht_rand_seed(&ref, wc.seed);
		for (unsigned k = 0; k < wc.n_ops; k++) {
			struct ht_op op;
			struct ht_pkt p;
			uint8_t want[64], enc[HT_MAX_PKT_LEN];

			uint64_t addr = wc.base + 64 * ht_rand_below(&ref, wc.size / 64);
			uint64_t x = ht_rand_u64(&ref);
			for (uint32_t i = 0; i < len; i += 8) {
				uint64_t v = x + (i / 8) * 0x9E3779B97F4A7C15ull;
				for (uint32_t b = 0; b < 8 && i + b < len; b++)
					want[i + b] = (uint8_t)(v >> (8 * b));
			}
			assert_int_equal(ht_wl_peek(&w, &op), 1);
			assert_int_equal(op.type, HT_OP_WRITE_P);
			assert_int_equal(op.len, len);
			assert_int_equal(op.addr, addr);
			assert_memory_equal(op.data, want, len);
			assert_int_equal(ht_req_issue(&r, &op, &p), 0);
			assert_int_equal(p.kind, HT_K_WRSIZED);
			assert_int_equal(p.dword, 1);
			assert_int_equal(p.count, len / 4 - 1);
			assert_int_equal(p.data_len, len);
			assert_int_equal(ht_encode(&p, enc, sizeof(enc)), 8 + (int)len);
			(void)ht_wl_commit(&w);
			/* the posted write is in the shadow at once */
			assert_memory_equal(shadow + (addr - wc.base), want, len);
		}
		assert_true(ht_wl_done(&w));
		assert_int_equal(ht_wl_stats(&w)->issued[HT_OP_WRITE_P], wc.n_ops);
	}
	/* not a multiple of 4, or above 64: refused */
	struct ht_workload w;
	struct ht_wl_cfg wc;
	ht_wl_cfg_default(&wc);
	wc.base = 0x100000;
	wc.size = sizeof(shadow);
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = wl_taint;
	wc.fixed_len = 6;
	assert_int_equal(ht_wl_init(&w, &wc), -EINVAL);
	wc.fixed_len = 68;
	assert_int_equal(ht_wl_init(&w, &wc), -EINVAL);
	wc.fixed_len = 64;
	assert_int_equal(ht_wl_init(&w, &wc), 0);
}

/* ---- the byte-level endpoint path against the decoded one ---- */

/* A random op that fits one packet (every type, dword and byte forms, some
 * addresses outside the target, in the reserved range or above 2^40). */
static struct ht_op random_op(struct ht_rand *r)
{
	struct ht_op o;
	uint64_t base;

	memset(&o, 0, sizeof(o));
	o.type = (uint8_t)ht_rand_below(r, HT_OP__COUNT);
	switch (ht_rand_below(r, 8)) {
	case 0:
		base = 0x12345600000ull; /* needs the 0x3E prefix */
		break;
	case 1:
		base = HT_RSV_BASE;
		break;
	case 2:
		base = MEM_BASE - 64;
		break;
	default:
		base = MEM_BASE;
		break;
	}
	o.addr = base + ht_rand_below(r, MEM_SIZE + 64);
	o.passpw = (uint8_t)ht_rand_below(r, 2);
	o.rsp_passpw = (uint8_t)ht_rand_below(r, 2);
	o.cookie = ht_rand_u64(r) >> 1;
	o.operand[0] = ht_rand_u64(r);
	o.operand[1] = ht_rand_u64(r);
	if (o.type == HT_OP_FETCH_ADD || o.type == HT_OP_CAS) {
		o.addr &= ~7ull;
	} else if (o.type <= HT_OP_WRITE_NP) {
		if (ht_rand_pct(r, 50)) { /* dword form */
			o.addr &= ~3ull;
			o.len = 4 * (uint32_t)ht_rand_range(r, 1, 16 - ((o.addr & 63) >> 2));
		} else if (o.type == HT_OP_READ) {
			o.len = (uint32_t)ht_rand_range(r, 1, 4 - (o.addr & 3));
		} else {
			o.len = (uint32_t)ht_rand_range(r, 1, 32 - (o.addr & 31));
		}
		for (uint32_t i = 0; i < o.len; i++)
			o.data[i] = (uint8_t)ht_rand_u64(r);
	}
	assert_int_equal(ht_op_check(&o), 0);
	return o;
}

/* Every field of two descriptors of the same bytes. */
static void assert_desc_equal(const struct ht_desc *a, const struct ht_desc *b)
{
	assert_ptr_equal(a->pkt, b->pkt);
	assert_int_equal(a->len, b->len);
	assert_int_equal(a->data_off, b->data_off);
	assert_int_equal(a->data_len, b->data_len);
	assert_int_equal(a->ctl, b->ctl);
	assert_int_equal(a->cmd, b->cmd);
	assert_int_equal(a->kind, b->kind);
	assert_int_equal(a->vc, b->vc);
	assert_int_equal(a->unitid, b->unitid);
	assert_int_equal(a->srctag, b->srctag);
	assert_int_equal(a->passpw, b->passpw);
	assert_int_equal(a->count, b->count);
	assert_int_equal(a->rsp_err, b->rsp_err);
	assert_true(a->addr == b->addr);
}

static void test_fast_encoders_match_table(void **state)
{
	(void)state;
	struct ht_rand r;
	unsigned sized = 0, rsp = 0;

	ht_rand_seed(&r, 11);
	for (unsigned it = 0; it < 20000; it++) {
		struct ht_pkt p;
		uint8_t want[HT_MAX_PKT_LEN], got[HT_MAX_PKT_LEN], data[HT_MAX_DATA];
		int nw, ng;

		memset(&p, 0, sizeof(p));
		for (unsigned i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)ht_rand_u64(&r);
		p.unitid = (uint8_t)ht_rand_below(&r, 32);
		p.srctag = (uint8_t)ht_rand_below(&r, 32);
		p.passpw = (uint8_t)ht_rand_below(&r, 2);
		p.count = (uint8_t)ht_rand_below(&r, 16);
		if (ht_rand_pct(&r, 50)) {
			/* RdSized dword/byte (0x10..0x1f) or WrSized dword (0x0c.., 0x2c..) */
			static const uint8_t cmds[] = { 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
							0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
							0x0c, 0x0d, 0x0e, 0x0f, 0x2c, 0x2d, 0x2e, 0x2f };
			uint8_t cmd = cmds[ht_rand_below(&r, sizeof(cmds))];
			bool rd = (cmd & 0x30) == 0x10;

			p.cmd = cmd;
			p.kind = rd ? HT_K_RDSIZED : HT_K_WRSIZED;
			p.dword = (cmd >> 2) & 1;
			p.isoc = (cmd >> 1) & 1;
			p.coherent = cmd & 1;
			p.posted = (cmd >> 5) & 1;
			p.responsepasspw = rd ? (cmd >> 3) & 1 : 0;
			if (p.posted)
				p.srctag = 0;
			p.addr = (ht_rand_u64(&r) & HT_ADDR_MAX_40) & ~63ull;
			if (p.dword)
				p.addr += 4 * ht_rand_below(&r, 16u - p.count);
			else
				p.mask = p.count;
			if (!rd) {
				p.data_len = (uint16_t)(4 * (p.count + 1));
				memcpy(p.data, data, p.data_len);
			}
			nw = ht_encode_table(&p, want, sizeof(want));
			uint8_t tag = (uint8_t)(p.posted ? ht_rand_below(&r, 32) : p.srctag);
			ng = ht_enc_sized(got, sizeof(got), cmd, p.unitid, tag, p.passpw, p.count,
					  p.addr, data);
			/* the descriptor filled while encoding is the one a parse gives */
			uint8_t again[HT_MAX_PKT_LEN];
			struct ht_desc dg, dp;

			memset(&dg, 0xa5, sizeof(dg));
			memset(&dp, 0x5a, sizeof(dp));
			assert_int_equal(ht_enc_sized_desc(again, sizeof(again), cmd, p.unitid, tag,
							   p.passpw, p.count, p.addr, data, &dg),
					 ng);
			assert_int_equal(ht_desc_parse(again, (size_t)ng, &dp), ng);
			assert_desc_equal(&dg, &dp);
			sized++;
		} else {
			bool done = ht_rand_pct(&r, 30), ones = ht_rand_pct(&r, 20);
			enum ht_rsp_err err = (enum ht_rsp_err)ht_rand_below(&r, 4);

			p.bridge = (uint8_t)ht_rand_below(&r, 2);
			ht_pkt_set_rsp_err(&p, err);
			if (done)
				p.count = 0;
			(void)ht_pkt_set_cmd(&p, done ? HT_K_TGTDONE : HT_K_RDRESPONSE);
			if (!done) {
				p.data_len = (uint16_t)(4 * (p.count + 1));
				memset(p.data, 0xff, p.data_len);
				if (!ones)
					memcpy(p.data, data, p.data_len);
			}
			nw = ht_encode_table(&p, want, sizeof(want));
			ng = ht_enc_rsp(got, sizeof(got), p.cmd, p.unitid, p.srctag, p.passpw,
					p.bridge, err, p.count, ones ? NULL : data);
			rsp++;
		}
		assert_true(nw > 0);
		assert_int_equal(ng, nw);
		assert_memory_equal(got, want, (size_t)nw);
		/* too small a buffer is refused */
		assert_int_equal(p.kind == HT_K_RDSIZED || p.kind == HT_K_WRSIZED ?
				 ht_enc_sized(got, (size_t)nw - 1, p.cmd, p.unitid, p.srctag,
					      p.passpw, p.count, p.addr, data) :
				 ht_enc_rsp(got, (size_t)nw - 1, p.cmd, p.unitid, p.srctag, p.passpw,
					    p.bridge, ht_pkt_rsp_err(&p), p.count, data),
				 HT_E_NOSPACE);
	}
	assert_true(sized > 5000 && rsp > 5000);
	/* known answers: a 64-byte dword read at 0x1_2345_6780, UnitID 3, SrcTag 5
	 * (cmd 0x15, Count 15), and its TgtDone-shaped master abort */
	uint8_t b[HT_MAX_PKT_LEN];
	static const uint8_t rd_kat[] = { 0x15, 0x03, 0xc5, 0x83, 0x67, 0x45, 0x23, 0x01 };
	static const uint8_t td_kat[] = { 0x33, 0x43, 0x25, 0x20 };
	assert_int_equal(ht_enc_sized(b, sizeof(b), 0x15, 3, 5, 0, 15, 0x123456780ull, NULL), 8);
	assert_memory_equal(b, rd_kat, 8);
	assert_int_equal(ht_enc_rsp(b, sizeof(b), HT_CMD_TGTDONE, 3, 5, 0, 1,
				    HT_RSP_MASTER_ABORT, 0, NULL), 4);
	assert_memory_equal(b, td_kat, 4);
	/* shapes the fast encoders leave to ht_encode, and bad fields */
	assert_int_equal(ht_enc_sized(b, sizeof(b), 0x15, 3, 5, 0, 0, 1ull << 40, NULL), 0);
	assert_int_equal(ht_enc_sized(b, sizeof(b), 0x29, 3, 0, 0, 1, 0x1000, b), 0); /* byte write */
	assert_int_equal(ht_enc_sized(b, sizeof(b), 0x15, 32, 5, 0, 0, 0x1000, NULL), HT_E_BAD_FIELD);
	assert_int_equal(ht_enc_sized(b, sizeof(b), 0x15, 3, 5, 0, 2, 0x1038, NULL), HT_E_BAD_ADDR);
	assert_int_equal(ht_enc_rsp(b, sizeof(b), HT_CMD_TGTDONE, 3, 5, 0, 1, HT_RSP_OK, 1, NULL),
			 HT_E_BAD_FIELD);
}

/* Two targets over equal copies of the same memory (filled from seed). */
static void twin_targets(struct ht_target *ta, struct ht_target *tb, uint8_t *mem_a,
			 uint8_t *mem_b, uint64_t seed)
{
	struct ht_target_cfg tc;

	ht_wl_fill(seed, mem_a, MEM_SIZE);
	memcpy(mem_b, mem_a, MEM_SIZE);
	memset(&tc, 0, sizeof(tc));
	tc.base = MEM_BASE;
	tc.size = MEM_SIZE;
	tc.mem = mem_a;
	assert_int_equal(ht_tgt_init(ta, &tc), 0);
	tc.mem = mem_b;
	assert_int_equal(ht_tgt_init(tb, &tc), 0);
}

/* ht_tgt_serve (descriptor in, bytes out) against ht_tgt_handle + ht_encode
 * on random requests, including rare kinds, prefixed addresses, aborts,
 * injected faults and posted writes with DataError: the same response
 * bytes, the same memory and the same statistics. */
static void test_target_serve_matches_handle(void **state)
{
	(void)state;
	static uint8_t mem_a[MEM_SIZE], mem_b[MEM_SIZE];
	struct ht_target ta, tb;
	struct ht_requester rq;
	struct ht_req_cfg rc = { .n_unitids = 1, .unitids = { 2 } };
	struct ht_rand r;
	unsigned fast = 0, answered = 0;

	twin_targets(&ta, &tb, mem_a, mem_b, 5);
	assert_int_equal(ht_tgt_set_fault(&ta, 0, MEM_BASE + 256, 64, HT_RSP_DATA_ERROR), 0);
	assert_int_equal(ht_tgt_set_fault(&tb, 0, MEM_BASE + 256, 64, HT_RSP_DATA_ERROR), 0);
	assert_int_equal(ht_req_init(&rq, &rc), 0);
	ht_rand_seed(&r, 12);

	for (unsigned it = 0; it < 20000; it++) {
		struct ht_op o = random_op(&r);
		struct ht_pkt p, rsp;
		struct ht_desc d;
		uint8_t raw[HT_MAX_PKT_LEN], want[HT_MAX_PKT_LEN], got[HT_MAX_PKT_LEN];
		int n, nw = 0, ng, hr;

		assert_int_equal(ht_req_issue(&rq, &o, &p), 0);
		(void)ht_req_unissue(&rq, &p);
		p.unitid = (uint8_t)ht_rand_below(&r, 32);
		if (p.kind == HT_K_WRSIZED && p.posted)
			p.dataerror = ht_rand_pct(&r, 10);
		else if (ht_pkt_vc(&p) == HT_VC_NP)
			p.srctag = (uint8_t)ht_rand_below(&r, 32);
		if (ht_rand_pct(&r, 2)) { /* not a request: refused by both */
			uint8_t u = p.unitid;

			memset(&p, 0, sizeof(p));
			p.unitid = u;
			(void)ht_pkt_set_cmd(&p, HT_K_TGTDONE);
		}
		n = ht_encode(&p, raw, sizeof(raw));
		assert_true(n > 0);
		assert_int_equal(ht_desc_parse(raw, (size_t)n, &d), n);
		fast += !d.ctl && (d.kind == HT_K_RDSIZED || d.kind == HT_K_WRSIZED) && (d.cmd & 4);

		assert_int_equal(ht_decode_table(raw, (size_t)n, &p), n);
		hr = ht_tgt_handle(&tb, &p, &rsp);
		if (hr == 1)
			nw = ht_encode_table(&rsp, want, sizeof(want));
		ng = ht_tgt_serve(&ta, &d, got, sizeof(got));
		if (hr < 0) {
			assert_int_equal(ng, -EINVAL);
		} else {
			assert_int_equal(ng, hr ? nw : 0);
			if (hr)
				assert_memory_equal(got, want, (size_t)nw);
			answered += hr;
		}
		assert_memory_equal(&ta.st, &tb.st, sizeof(ta.st));
	}
	assert_memory_equal(mem_a, mem_b, sizeof(mem_a));
	assert_true(fast > 3000 && answered > 8000);
	assert_true(ta.st.posted_dropped && ta.st.faults_injected && ta.st.not_request &&
		    ta.st.master_abort_reserved && ta.st.master_abort_range);
	/* the DataError and the fault left the memory alone in both */
	uint8_t out[8];
	struct ht_desc d;
	uint8_t rd[8];
	assert_int_equal(ht_enc_sized(rd, sizeof(rd), 0x15, 1, 1, 0, 15, MEM_BASE, NULL), 8);
	assert_int_equal(ht_desc_parse(rd, sizeof(rd), &d), 8);
	assert_int_equal(ht_tgt_serve(&ta, &d, out, sizeof(out)), -ENOSPC);
}

/* A burst gives what the requests one by one give. */
static void test_target_serve_burst(void **state)
{
	(void)state;
	static uint8_t mem_a[MEM_SIZE], mem_b[MEM_SIZE];
	struct ht_target ta, tb;
	struct ht_requester rq;
	struct ht_req_cfg rc = { .n_unitids = 4, .unitids = { 2, 3, 4, 5 } };
	struct ht_rand r;
	uint8_t raw[40][HT_MAX_PKT_LEN], out[40 * HT_MAX_PKT_LEN], one[HT_MAX_PKT_LEN];
	struct ht_desc d[40];
	uint16_t len[40];
	unsigned n = 0;

	twin_targets(&ta, &tb, mem_a, mem_b, 7);
	assert_int_equal(ht_req_init(&rq, &rc), 0);
	ht_rand_seed(&r, 13);
	while (n < 40) {
		struct ht_op o = random_op(&r);
		int k = ht_req_issue_enc(&rq, &o, 0, raw[n], sizeof(raw[n]));

		assert_true(k > 0);
		assert_int_equal(ht_desc_parse(raw[n], (size_t)k, &d[n]), k);
		n++;
	}
	/* room for 3 responses in the first call: it stops early */
	unsigned done = ht_tgt_serve_burst(&ta, d, n, out, 3 * HT_MAX_PKT_LEN + 3, len);
	assert_true(done >= 3 && done < n);
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i == done) { /* the rest */
			assert_int_equal(ht_tgt_serve_burst(&ta, d + i, n - i, out, sizeof(out), len + i),
					 n - i);
			off = 0;
		}
		int k = ht_tgt_serve(&tb, &d[i], one, sizeof(one));

		assert_int_equal(len[i], k > 0 ? k : 0);
		if (k > 0) {
			assert_memory_equal(out + off, one, (size_t)k);
			off += (size_t)k;
		}
	}
	assert_memory_equal(mem_a, mem_b, sizeof(mem_a));
	assert_memory_equal(&ta.st, &tb.st, sizeof(ta.st));
}

/* ht_req_issue_fast (else ht_req_issue_desc) / ht_req_rx_desc /
 * ht_req_unissue_bytes against ht_req_issue + ht_encode / ht_req_rx /
 * ht_req_unissue: the same request
 * bytes, tags, completions and statistics, responses in random order with
 * some damaged (wrong Count, wrong kind) and some unexpected. */
static void test_requester_bytes_match_pkt(void **state)
{
	(void)state;
	static uint8_t mem[MEM_SIZE];
	struct ht_requester ra, rb;
	struct ht_req_cfg rc = { .n_unitids = 2, .unitids = { 6, 9 } };
	struct ht_target t;
	struct ht_target_cfg tc;
	struct ht_rand r;
	uint8_t rsp[64][HT_MAX_PKT_LEN];
	int rsp_n[64];
	unsigned nrsp = 0, completed = 0, malformed_sent = 0;

	ht_wl_fill(6, mem, sizeof(mem));
	memset(&tc, 0, sizeof(tc));
	tc.base = MEM_BASE;
	tc.size = MEM_SIZE;
	tc.mem = mem;
	assert_int_equal(ht_tgt_init(&t, &tc), 0);
	assert_int_equal(ht_req_init(&ra, &rc), 0);
	assert_int_equal(ht_req_init(&rb, &rc), 0);
	ht_rand_seed(&r, 14);
	for (unsigned it = 0; it < 20000; it++) {
		if (nrsp < 64 && ht_rand_pct(&r, 60)) {
			struct ht_op o = random_op(&r);
			struct ht_pkt p, q;
			uint8_t want[HT_MAX_PKT_LEN], got[HT_MAX_PKT_LEN];
			int ia = ht_req_issue(&ra, &o, &p);
			struct ht_desc dd, dp;
			struct ht_req_stats st0 = *ht_req_stats(&rb);
			unsigned out0 = ht_req_outstanding(&rb);
			int ib = ht_req_issue_fast(&rb, &o, o.cookie, got, sizeof(got), &dd);

			/* the fast path takes exactly the ops ht_req_enc_fast names;
			 * for the others nothing is taken or counted */
			assert_int_equal(ib != -ENOTSUP, ht_req_enc_fast(&o));
			if (ib == -ENOTSUP) {
				assert_memory_equal(ht_req_stats(&rb), &st0, sizeof(st0));
				assert_int_equal(ht_req_outstanding(&rb), out0);
				ib = ht_req_issue_desc(&rb, &o, o.cookie, got, sizeof(got), &dd);
			}

			if (ia == -EAGAIN) {
				assert_int_equal(ib, -EAGAIN);
				continue;
			}
			assert_int_equal(ia, 0);
			int nw = ht_encode(&p, want, sizeof(want));
			assert_int_equal(ib, nw);
			assert_memory_equal(got, want, (size_t)nw);
			/* its descriptor, fast or table path, is what a parse gives */
			assert_int_equal(ht_desc_parse(got, (size_t)ib, &dp), ib);
			assert_desc_equal(&dd, &dp);
			if (ht_rand_pct(&r, 10)) { /* never sent */
				assert_int_equal(ht_req_unissue_bytes(&rb, got, (size_t)ib),
						 ht_req_unissue(&ra, &p));
				continue;
			}
			if (ht_pkt_vc(&p) != HT_VC_NP)
				continue;
			if (ht_tgt_handle(&t, &p, &q) != 1)
				fail();
			if (ht_rand_pct(&r, 5) && q.kind == HT_K_RDRESPONSE && q.count < 15) {
				q.count++; /* damaged: wrong Count for its tag */
				q.data_len += 4;
				malformed_sent++;
			}
			rsp_n[nrsp] = ht_encode(&q, rsp[nrsp], sizeof(rsp[nrsp]));
			assert_true(rsp_n[nrsp] > 0);
			nrsp++;
		} else if (nrsp) {
			unsigned i = (unsigned)ht_rand_below(&r, nrsp);
			struct ht_pkt q;
			struct ht_desc d;
			struct ht_completion ca, cb;

			if (ht_rand_pct(&r, 3)) /* unexpected: a tag nobody holds */
				rsp[i][1] = (uint8_t)((rsp[i][1] & 0xe0) | 0x11);
			assert_int_equal(ht_decode(rsp[i], (size_t)rsp_n[i], &q), rsp_n[i]);
			assert_int_equal(ht_desc_parse(rsp[i], (size_t)rsp_n[i], &d), rsp_n[i]);
			int a = ht_req_rx(&ra, &q, &ca), b = ht_req_rx_desc(&rb, &d, &cb);

			assert_int_equal(a, b);
			if (a == 1) {
				/* the same completion; the data copied by one,
				 * pointed at in the packet by the other */
				assert_memory_equal(&ca, &cb, offsetof(struct ht_completion, rdata));
				assert_null(ca.rdata);
				assert_true(!cb.len || (cb.rdata >= rsp[i] &&
							cb.rdata + cb.len <= rsp[i] + rsp_n[i]));
				if (ca.len)
					assert_memory_equal(ca.data, ht_completion_data(&cb), ca.len);
				completed++;
			}
			memcpy(rsp[i], rsp[nrsp - 1], sizeof(rsp[i]));
			rsp_n[i] = rsp_n[--nrsp];
		}
		assert_memory_equal(&ra.st, &rb.st, sizeof(ra.st));
		assert_memory_equal(ra.inuse, rb.inuse, sizeof(ra.inuse));
		assert_int_equal(ht_req_outstanding(&ra), ht_req_outstanding(&rb));
	}
	assert_true(completed > 1500 && malformed_sent > 10);
	assert_true(ra.st.unexpected && ra.st.malformed && ra.st.unissued && ra.st.no_tag);
	/* a request (not a response) is refused by both */
	uint8_t req[8];
	struct ht_desc d;
	struct ht_completion c;
	assert_int_equal(ht_enc_sized(req, sizeof(req), 0x15, 6, 1, 0, 0, MEM_BASE, NULL), 8);
	assert_int_equal(ht_desc_parse(req, sizeof(req), &d), 8);
	assert_int_equal(ht_req_rx_desc(&rb, &d, &c), -EINVAL);
}

static uint8_t twin_sh[2][4096], twin_busy[2][64];
static uint64_t twin_taint[2][64];

/* Two workloads of config c (seed, n_ops, mix and limits from the caller),
 * each with its own shadow (zero) and scratch over 4 KiB at MEM_BASE. */
static void twin_workloads(struct ht_wl_cfg *c, struct ht_workload **a, struct ht_workload **b)
{
	struct ht_workload **w[2] = { a, b };

	for (unsigned i = 0; i < 2; i++) {
		*w[i] = calloc(1, sizeof(**w[i]));
		assert_non_null(*w[i]);
		memset(twin_sh[i], 0, sizeof(twin_sh[i]));
		c->base = MEM_BASE;
		c->size = sizeof(twin_sh[i]);
		c->shadow = twin_sh[i];
		c->busy = twin_busy[i];
		c->taint = twin_taint[i];
		assert_int_equal(ht_wl_init(*w[i], c), 0);
	}
}

static void test_workload_peek_ref_is_peek(void **state)
{
	(void)state;
	struct ht_workload *a, *b;
	struct ht_wl_cfg c;

	ht_wl_cfg_default(&c);
	c.seed = 3;
	c.n_ops = 500;
	twin_workloads(&c, &a, &b);
	for (;;) {
		struct ht_op op;
		const struct ht_op *ref;
		int ra = ht_wl_peek(a, &op), rb = ht_wl_peek_ref(b, &ref);

		assert_int_equal(ra, rb);
		if (ra != 1)
			break;
		assert_memory_equal(&op, ref, sizeof(op));
		assert_int_equal(ht_wl_commit(a), ht_wl_commit(b));
		if (ht_op_nonposted((enum ht_op_type)op.type)) {
			struct ht_completion cp = { .cookie = op.cookie, .type = op.type,
						    .status = HT_RSP_TARGET_ABORT };
			assert_int_equal(ht_wl_complete(a, &cp, NULL), 1);
			assert_int_equal(ht_wl_complete(b, &cp, NULL), 1);
		}
	}
	assert_true(ht_wl_done(a) && ht_wl_done(b));
	assert_memory_equal(twin_sh[0], twin_sh[1], sizeof(twin_sh[0]));
	free(a);
	free(b);
}

/* ht_wl_full and ht_wl_waiting say what ht_wl_peek_ref would answer, and a
 * workload whose ops are all non-posted draws the same ops whether its next
 * op is drawn right after a commit or only after the completion (the node
 * leaves the draw to a later poll): the mixes with a posted write, a Fence
 * or a CAS (whose compare value is read from the shadow) are never full
 * before their next op is drawn. */
static void test_workload_full_defers_draw(void **state)
{
	(void)state;
	struct ht_workload *a, *b;
	struct ht_wl_cfg c;

	ht_wl_cfg_default(&c);
	c.seed = 11;
	c.n_ops = 300;
	c.max_inflight = 1;
	memset(c.weight, 0, sizeof(c.weight));
	c.weight[HT_OP_READ] = 5;
	c.weight[HT_OP_WRITE_NP] = 2;
	c.weight[HT_OP_FETCH_ADD] = 1;
	c.weight[HT_OP_FLUSH] = 1;
	twin_workloads(&c, &a, &b);
	for (;;) {
		const struct ht_op *pa, *pb;
		struct ht_op op;
		int ra = ht_wl_peek_ref(a, &pa), rb;

		assert_false(ht_wl_full(a));
		assert_int_equal(ht_wl_waiting(a), ra != 1); /* none left: waits */
		rb = ht_wl_peek_ref(b, &pb);
		assert_int_equal(ra, rb);
		if (ra != 1)
			break;
		assert_memory_equal(pa, pb, sizeof(*pa));
		op = *pa;
		assert_int_equal(ht_wl_commit(a), ht_wl_commit(b));
		/* a: its next op drawn now (ht_wl_peek_ref answers 0, then
		 * waits); b: not drawn before the completion */
		assert_true(ht_wl_full(a));
		bool left = !ht_wl_waiting(a); /* an op still to draw */
		assert_int_equal(ht_wl_peek_ref(a, &pa), left ? 0 : -ENODATA);
		assert_true(ht_wl_waiting(a));
		assert_true(ht_wl_full(a));
		assert_true(ht_wl_full(b));
		struct ht_completion cp = { .cookie = op.cookie, .type = op.type,
					    .status = HT_RSP_TARGET_ABORT };
		assert_int_equal(ht_wl_complete(a, &cp, NULL), 1);
		assert_int_equal(ht_wl_complete(b, &cp, NULL), 1);
	}
	assert_true(ht_wl_done(a) && ht_wl_done(b));

	/* a posted write, a Fence or a CAS in the mix: never full without a
	 * drawn op (the next one may go, or its draw reads the shadow) */
	static const enum ht_op_type other[] = { HT_OP_WRITE_P, HT_OP_FENCE, HT_OP_CAS };
	for (unsigned k = 0; k < 3; k++) {
		const struct ht_op *p;

		c.weight[other[k]] = 1;
		assert_int_equal(ht_wl_init(a, &c), 0);
		c.weight[other[k]] = 0;
		while (ht_wl_peek_ref(a, &p) == 1 && !ht_op_nonposted((enum ht_op_type)p->type))
			ht_wl_commit(a);
		assert_int_equal(ht_wl_peek_ref(a, &p), 1);
		ht_wl_commit(a);
		assert_false(ht_wl_full(a));
	}
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_check),
		cmocka_unit_test(test_request_packets),
		cmocka_unit_test(test_op_split),
		cmocka_unit_test(test_e2e_credits_one_per_class),
		cmocka_unit_test(test_out_of_order_responses_matched),
		cmocka_unit_test(test_malformed_response_completes_with_error),
		cmocka_unit_test(test_tag_exhaustion_and_reuse),
		cmocka_unit_test(test_tag_order_wraps),
		cmocka_unit_test(test_target_response_fields),
		cmocka_unit_test(test_master_abort_out_of_region),
		cmocka_unit_test(test_master_abort_reserved_range),
		cmocka_unit_test(test_64bit_target_through_links),
		cmocka_unit_test(test_fault_injection_reported),
		cmocka_unit_test(test_byte_masks_every_offset),
		cmocka_unit_test(test_byte_write_mask_nibble_mapping),
		cmocka_unit_test(test_atomics_semantics),
		cmocka_unit_test(test_flush_after_posted_writes),
		cmocka_unit_test(test_read_sees_earlier_posted_write),
		cmocka_unit_test(test_b2b_crc_corruption_counted),
		cmocka_unit_test(test_workload_10000_ops_verified),
		cmocka_unit_test(test_workload_detects_corruption),
		cmocka_unit_test(test_workload_small_window_hotspot),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_workload_peek_commit_protocol),
		cmocka_unit_test(test_workload_taint),
		cmocka_unit_test(test_workload_image_taint),
		cmocka_unit_test(test_workload_unown),
		cmocka_unit_test(test_workload_unown_partial),
		cmocka_unit_test(test_workload_poisoned_lost),
		cmocka_unit_test(test_rand_below_uniform),
		cmocka_unit_test(test_workload_fixed_len_posted_writes),
		cmocka_unit_test(test_fast_encoders_match_table),
		cmocka_unit_test(test_target_serve_matches_handle),
		cmocka_unit_test(test_target_serve_burst),
		cmocka_unit_test(test_requester_bytes_match_pkt),
		cmocka_unit_test(test_workload_peek_ref_is_peek),
		cmocka_unit_test(test_workload_full_defers_draw),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
