/* SPDX-License-Identifier: BSD-3-Clause
 * HT packet codec tests: hand-derived known answers for every packet class,
 * the §12.2 packets, random round trips, every error code, ht_peek_len.
 *
 * The byte arrays below were worked out by hand from the bit tables of
 * ../shared/reference/hypertransport.md (§3, §3.1, §5, §10.1, §10.2); each
 * field has a distinct non-zero value so that a field moved by one bit
 * changes the bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "htmodel/ht_packet.h"

static struct ht_pkt mk(enum ht_kind k)
{
	struct ht_pkt p;

	memset(&p, 0, sizeof(p));
	p.kind = (uint8_t)k;
	return p;
}

/* Member-by-member comparison (struct padding is not compared). */
#define EQ(m) do { if (a->m != b->m) fail_msg("field %s: %llu != %llu", #m, \
	(unsigned long long)a->m, (unsigned long long)b->m); } while (0)

static void assert_pkt_equal(const struct ht_pkt *a, const struct ht_pkt *b)
{
	EQ(cmd); EQ(kind); EQ(unitid); EQ(srctag); EQ(seqid); EQ(passpw);
	EQ(count); EQ(compat); EQ(isoc); EQ(coherent); EQ(dword); EQ(posted);
	EQ(responsepasspw); EQ(chain); EQ(dataerror); EQ(bridge); EQ(error0);
	EQ(error1); EQ(rquid); EQ(rspvcset); EQ(addrext); EQ(addr); EQ(mask);
	EQ(postcmd); EQ(postdata); EQ(resp); EQ(respdata); EQ(npcmd); EQ(npdata);
	EQ(discon); EQ(diag); EQ(ack); EQ(extfc_long); EQ(vcset); EQ(vcsetrsv);
	EQ(vcsetfree[0]); EQ(vcsetfree[1]); EQ(vcsetfree[2]); EQ(vcsetfree[3]);
	EQ(data_len);
	assert_memory_equal(a->data, b->data, sizeof(a->data));
}

/* Fill data with base, base+1, ... */
static void fill(struct ht_pkt *p, unsigned n, uint8_t base)
{
	for (unsigned i = 0; i < n; i++)
		p->data[i] = (uint8_t)(base + i);
	p->data_len = (uint16_t)n;
}

/* "name name ..." of the fields ht_pkt_fields() lists. */
static void field_list(const struct ht_pkt *p, char *out, size_t cap)
{
	uint8_t ids[HT_F__COUNT];
	int n = ht_pkt_fields(p, ids);
	size_t o = 0;

	out[0] = 0;
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "",
				      ht_field_name(ids[i]));
}

/* Value width of each field where it belongs (test's own table). */
static unsigned field_width(enum ht_field_id f, const struct ht_pkt *p)
{
	switch (f) {
	case HT_F_SEQID: case HT_F_COUNT: case HT_F_VCSETRSV: return 4;
	case HT_F_UNITID: case HT_F_SRCTAG: return 5;
	case HT_F_RQUID: case HT_F_POSTCMD: case HT_F_POSTDATA: case HT_F_RESP:
	case HT_F_RESPDATA: case HT_F_NPCMD: case HT_F_NPDATA: return 2;
	case HT_F_RSPVCSET: case HT_F_VCSET: return 3;
	case HT_F_ACK: case HT_F_VCSETFREE0: return 8;
	case HT_F_VCSETFREE1: case HT_F_VCSETFREE2: case HT_F_VCSETFREE3:
		return p->extfc_long ? 8 : 0;
	case HT_F_MASK: return p->kind == HT_K_RDSIZED ? 4 : 32;
	case HT_F_ADDR: return 64;
	default: return 1;
	}
}

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ' ') && (s[n] == ' ' || s[n] == 0))
			return true;
	return false;
}

/*
 * The full check of one known answer: encode gives exactly `exp`, decode of
 * `exp` gives back p, lengths, truncation at every length, the field list,
 * and that encode rejects every field out of range or not in the list.
 */
static void check_kat(const struct ht_pkt *p, const uint8_t *exp, size_t n,
		      const char *fields)
{
	uint8_t buf[HT_MAX_PKT_LEN + 8];
	struct ht_pkt d, q;
	char list[512];
	size_t ctl = ht_pkt_ctl_len(p);

	assert_int_equal(ht_encode(p, buf, sizeof(buf)), (int)n);
	assert_memory_equal(buf, exp, n);
	assert_int_equal(ht_decode(exp, n, &d), (int)n);
	assert_pkt_equal(&d, p);
	assert_int_equal(ht_peek_len(exp, n), (int)n);
	assert_int_equal(ht_pkt_len(p), n);
	assert_true(ctl == 4 || ctl == 8 || ctl == 12);
	assert_true(ctl <= n);

	/* bytes after the packet are not consumed */
	memcpy(buf, exp, n);
	memset(buf + n, 0, 8);
	assert_int_equal(ht_decode(buf, n + 8, &d), (int)n);

	/* every truncation */
	for (size_t len = 0; len < n; len++) {
		assert_int_equal(ht_decode(exp, len, &d), HT_E_TRUNCATED);
		if (len < 4 || (len < 8 && exp[0] == HT_CMD_ADDREXT))
			assert_int_equal(ht_peek_len(exp, len), HT_E_TRUNCATED);
		else
			assert_int_equal(ht_peek_len(exp, len), (int)n);
	}
	/* output buffer too small */
	for (size_t cap = 0; cap < n; cap++)
		assert_int_equal(ht_encode(p, buf, cap), HT_E_NOSPACE);

	field_list(p, list, sizeof(list));
	assert_string_equal(list, fields);

	for (int f = 0; f < HT_F__COUNT; f++) {
		const char *name = ht_field_name((enum ht_field_id)f);
		unsigned w = field_width((enum ht_field_id)f, p);

		q = *p;
		if (!in_list(fields, name)) {
			/* a field that does not belong to the packet */
			assert_int_equal(ht_pkt_set(&q, (enum ht_field_id)f, 1), 0);
			assert_int_equal(ht_encode(&q, buf, sizeof(buf)), HT_E_BAD_FIELD);
		} else if (w < 8) {
			/* one above the field's range */
			assert_int_equal(ht_pkt_set(&q, (enum ht_field_id)f, 1ull << w), 0);
			assert_int_equal(ht_encode(&q, buf, sizeof(buf)), HT_E_BAD_FIELD);
		}
	}
	/* kind must agree with cmd */
	q = *p;
	q.kind = (uint8_t)((p->kind + 1) % HT_K__COUNT);
	assert_int_equal(ht_encode(&q, buf, sizeof(buf)), HT_E_BAD_FIELD);
	/* data bytes past data_len must be zero */
	if (p->data_len < HT_MAX_DATA) {
		q = *p;
		q.data[HT_MAX_DATA - 1] = 1;
		assert_int_equal(ht_encode(&q, buf, sizeof(buf)), HT_E_BAD_FIELD);
	}
}

/* ---- known answers, one per class ---- */

static void test_kat_nop(void **state)
{
	struct ht_pkt p = mk(HT_K_NOP);
	/* 0xA56E7940: discon b6, postcmd 1 @9:8, postdata 2 @11:10, resp 3
	 * @13:12, respdata 1 @15:14, npcmd 2 @17:16, npdata 3 @19:18, isoc b21,
	 * diag b22, ack 0xA5 @31:24 */
	static const uint8_t exp[] = { 0x40, 0x79, 0x6E, 0xA5 };

	(void)state;
	p.cmd = HT_CMD_NOP;
	p.discon = 1;
	p.postcmd = 1;
	p.postdata = 2;
	p.resp = 3;
	p.respdata = 1;
	p.npcmd = 2;
	p.npdata = 3;
	p.isoc = 1;
	p.diag = 1;
	p.ack = 0xA5;
	check_kat(&p, exp, sizeof(exp),
		  "postcmd postdata resp respdata npcmd npdata isoc discon diag ack");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NONE);
	assert_null(ht_vc_name(ht_pkt_vc(&p)));
}

static void test_kat_flush(void **state)
{
	struct ht_pkt p = mk(HT_K_FLUSH);
	/* 0x003CF582: cmd 02, SeqID 0xB (10 @7:6, 11 @14:13), UnitID 0x15,
	 * PassPW, SrcTag 0x1C, Isoc b21 */
	static const uint8_t exp[] = { 0x82, 0xF5, 0x3C, 0x00 };

	(void)state;
	p.cmd = HT_CMD_FLUSH;
	p.seqid = 0xB;
	p.unitid = 0x15;
	p.passpw = 1;
	p.srctag = 0x1C;
	p.isoc = 1;
	check_kat(&p, exp, sizeof(exp), "seqid unitid passpw srctag isoc");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);
}

static void test_kat_fence(void **state)
{
	struct ht_pkt p = mk(HT_K_FENCE);
	/* 0x0020CA7C: cmd 3C, SeqID 6 (01 @7:6, 10 @14:13), UnitID 0x0A,
	 * PassPW, Isoc b21 */
	static const uint8_t exp[] = { 0x7C, 0xCA, 0x20, 0x00 };

	(void)state;
	p.cmd = HT_CMD_FENCE;
	p.seqid = 6;
	p.unitid = 0x0A;
	p.passpw = 1;
	p.isoc = 1;
	check_kat(&p, exp, sizeof(exp), "seqid unitid passpw isoc");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
}

static void test_kat_rdsized_dword(void **state)
{
	struct ht_pkt p = mk(HT_K_RDSIZED);
	/* cmd 0x1F (RPP, dword, isoc, coherent); SeqID 9 (10, 01); UnitID 0x13;
	 * PassPW; SrcTag 0x0D; Compat; Count 5; Addr 0x9ABCDEF124:
	 * dword0 0x256DB39F, dword1 0x9ABCDEF1 */
	static const uint8_t exp[] = { 0x9F, 0xB3, 0x6D, 0x25, 0xF1, 0xDE, 0xBC, 0x9A };

	(void)state;
	p.responsepasspw = 1;
	p.dword = 1;
	p.isoc = 1;
	p.coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_RDSIZED), 0);
	assert_int_equal(p.cmd, 0x1F);
	p.seqid = 9;
	p.unitid = 0x13;
	p.passpw = 1;
	p.srctag = 0x0D;
	p.compat = 1;
	p.count = 5;
	p.addr = 0x9ABCDEF124ull;
	check_kat(&p, exp, sizeof(exp),
		  "seqid unitid passpw srctag posted dword isoc coherent compat "
		  "responsepasspw count addr addrext");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);
}

static void test_kat_rdsized_byte(void **state)
{
	struct ht_pkt p = mk(HT_K_RDSIZED);
	/* cmd 0x12 (byte, isoc); SeqID 3 (00, 11); UnitID 0x1F; SrcTag 0x11;
	 * Compat; Mask 0xA in Count; Addr 0x0012345678:
	 * dword0 0x7AB17F12, dword1 0x00123456 */
	static const uint8_t exp[] = { 0x12, 0x7F, 0xB1, 0x7A, 0x56, 0x34, 0x12, 0x00 };

	(void)state;
	p.cmd = 0x12;
	p.seqid = 3;
	p.unitid = 0x1F;
	p.srctag = 0x11;
	p.isoc = 1;
	p.compat = 1;
	p.count = 0xA;
	p.mask = 0xA;
	p.addr = 0x0012345678ull;
	check_kat(&p, exp, sizeof(exp),
		  "seqid unitid passpw srctag posted dword isoc coherent compat "
		  "responsepasspw count mask addr addrext");
}

static void test_kat_wrsized_np_prefix(void **state)
{
	struct ht_pkt p = mk(HT_K_WRSIZED);
	/* prefix 0xABCDEF3E (Addr[63:40] = 0xABCDEF); cmd 0x0D (NP, dword,
	 * coherent); SeqID 0xC (11, 00); UnitID 2; PassPW; SrcTag 0x1E; Count 1;
	 * Addr[39:2] from 0x1234567808: dword0 0x085E82CD, dword1 0x12345678 */
	static const uint8_t exp[] = {
		0x3E, 0xEF, 0xCD, 0xAB, 0xCD, 0x82, 0x5E, 0x08, 0x78, 0x56, 0x34, 0x12,
		1, 2, 3, 4, 5, 6, 7, 8,
	};

	(void)state;
	p.dword = 1;
	p.coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_WRSIZED), 0);
	assert_int_equal(p.cmd, 0x0D);
	p.seqid = 0xC;
	p.unitid = 2;
	p.passpw = 1;
	p.srctag = 0x1E;
	p.count = 1;
	p.addr = 0xABCDEF1234567808ull;
	p.addrext = 1;
	fill(&p, 8, 1);
	check_kat(&p, exp, sizeof(exp),
		  "seqid unitid passpw srctag posted dword isoc coherent compat "
		  "count addr addrext");
	assert_int_equal(ht_pkt_ctl_len(&p), 12);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);
}

static void test_kat_wrsized_posted(void **state)
{
	struct ht_pkt p = mk(HT_K_WRSIZED);
	/* cmd 0x2E (posted, dword, isoc); SeqID 5 (01, 01); UnitID 0x0C; PassPW;
	 * Chain b19; DataError b20; Compat; Count 0; Addr 0x00FEDCBA98:
	 * dword0 0x9838AC6E, dword1 0x00FEDCBA, data DEADBEEF */
	static const uint8_t exp[] = {
		0x6E, 0xAC, 0x38, 0x98, 0xBA, 0xDC, 0xFE, 0x00, 0xDE, 0xAD, 0xBE, 0xEF,
	};

	(void)state;
	p.posted = 1;
	p.dword = 1;
	p.isoc = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_WRSIZED), 0);
	assert_int_equal(p.cmd, 0x2E);
	p.seqid = 5;
	p.unitid = 0x0C;
	p.passpw = 1;
	p.chain = 1;
	p.dataerror = 1;
	p.compat = 1;
	p.addr = 0x00FEDCBA98ull;
	memcpy(p.data, "\xDE\xAD\xBE\xEF", 4);
	p.data_len = 4;
	check_kat(&p, exp, sizeof(exp),
		  "seqid unitid passpw posted dword isoc coherent compat chain "
		  "dataerror count addr addrext");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
}

static void test_kat_wrsized_byte(void **state)
{
	struct ht_pkt p = mk(HT_K_WRSIZED);
	/* cmd 0x29 (posted, byte, coherent); SeqID 0xE (11, 10); UnitID 7;
	 * DataError; Count 3; Addr 0x4433221128 (window dwords 2..4);
	 * dword0 0x28D047E9, dword1 0x44332211, mask 0x000F3A00, 3 data dwords */
	static const uint8_t exp[] = {
		0xE9, 0x47, 0xD0, 0x28, 0x11, 0x22, 0x33, 0x44, 0x00, 0x3A, 0x0F, 0x00,
		0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xAB,
	};

	(void)state;
	p.cmd = 0x29;
	p.posted = 1;
	p.coherent = 1;
	p.seqid = 0xE;
	p.unitid = 7;
	p.dataerror = 1;
	p.count = 3;
	p.mask = 0x000F3A00;
	p.addr = 0x4433221128ull;
	fill(&p, 12, 0xA0);
	check_kat(&p, exp, sizeof(exp),
		  "seqid unitid passpw posted dword isoc coherent compat chain "
		  "dataerror count mask addr addrext");
}

static void test_kat_broadcast(void **state)
{
	struct ht_pkt p = mk(HT_K_BROADCAST);
	/* cmd 3A; SeqID 7 (01, 11); UnitID 0x1B; PassPW; Compat; Addr
	 * 0xFDF80000FC: dword0 0xFC20FB7A, dword1 0xFDF80000 */
	static const uint8_t exp[] = { 0x7A, 0xFB, 0x20, 0xFC, 0x00, 0x00, 0xF8, 0xFD };

	(void)state;
	p.cmd = HT_CMD_BROADCAST;
	p.seqid = 7;
	p.unitid = 0x1B;
	p.passpw = 1;
	p.compat = 1;
	p.addr = 0xFDF80000FCull;
	check_kat(&p, exp, sizeof(exp), "seqid unitid passpw compat addr addrext");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
}

static void test_kat_atomic(void **state)
{
	struct ht_pkt p = mk(HT_K_ATOMIC);
	/* fetch-add: cmd 3D; SeqID 0xD (11, 01); UnitID 9; SrcTag 0x17; Compat;
	 * Count 1; Addr 0x1122334458: dword0 0x587729FD, dword1 0x11223344 */
	static const uint8_t fa[] = {
		0xFD, 0x29, 0x77, 0x58, 0x44, 0x33, 0x22, 0x11,
		1, 2, 3, 4, 5, 6, 7, 8,
	};
	/* compare-and-swap: SeqID 5 (01, 01); UnitID 1; SrcTag 1; Count 3;
	 * Addr 0x10: dword0 0x10C1217D, dword1 0 */
	static const uint8_t cas[] = {
		0x7D, 0x21, 0xC1, 0x10, 0, 0, 0, 0,
		0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
		0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F,
	};
	const char *f = "seqid unitid passpw srctag compat count addr addrext";

	(void)state;
	p.cmd = HT_CMD_ATOMIC;
	p.seqid = 0xD;
	p.unitid = 9;
	p.srctag = 0x17;
	p.compat = 1;
	p.count = HT_ATOMIC_FETCHADD_COUNT;
	p.addr = 0x1122334458ull;
	fill(&p, 8, 1);
	check_kat(&p, fa, sizeof(fa), f);
	assert_string_equal(ht_atomic_op_name(&p), "fetchadd");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);

	p = mk(HT_K_ATOMIC);
	p.cmd = HT_CMD_ATOMIC;
	p.seqid = 5;
	p.unitid = 1;
	p.srctag = 1;
	p.count = HT_ATOMIC_CAS_COUNT;
	p.addr = 0x10;
	fill(&p, 16, 0x10);
	check_kat(&p, cas, sizeof(cas), f);
	assert_string_equal(ht_atomic_op_name(&p), "cas");
}

static void test_kat_rdresponse(void **state)
{
	struct ht_pkt p = mk(HT_K_RDRESPONSE);
	/* cmd 30; Isoc b7; UnitID 0x0E; Bridge b14; PassPW; SrcTag 0x15;
	 * Error0; Count 2; RspVCSet 5 @28:26; RqUID 2 @31:30: 0x94B5CEB0 */
	static const uint8_t exp[] = {
		0xB0, 0xCE, 0xB5, 0x94,
		0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB,
	};

	(void)state;
	p.cmd = HT_CMD_RDRESP;
	p.isoc = 1;
	p.unitid = 0x0E;
	p.bridge = 1;
	p.passpw = 1;
	p.srctag = 0x15;
	ht_pkt_set_rsp_err(&p, HT_RSP_TARGET_ABORT);
	assert_int_equal(p.error0, 1);
	assert_int_equal(p.error1, 0);
	p.count = 2;
	p.rspvcset = 5;
	p.rquid = 2;
	fill(&p, 12, 0xC0);
	check_kat(&p, exp, sizeof(exp),
		  "unitid srctag passpw isoc bridge error0 error1 rquid rspvcset count");
	assert_int_equal(ht_pkt_vc(&p), HT_VC_R);
	assert_string_equal(ht_rsp_err_name(ht_pkt_rsp_err(&p)), "target abort");
}

static void test_kat_tgtdone(void **state)
{
	struct ht_pkt p = mk(HT_K_TGTDONE);
	/* cmd 33; UnitID 3; SrcTag 0x0A; Error0 b21 + Error1 b29 (master
	 * abort); RspVCSet 3; RqUID 1: 0x6C2A0333 */
	static const uint8_t exp[] = { 0x33, 0x03, 0x2A, 0x6C };

	(void)state;
	p.cmd = HT_CMD_TGTDONE;
	p.unitid = 3;
	p.srctag = 0x0A;
	ht_pkt_set_rsp_err(&p, HT_RSP_MASTER_ABORT);
	p.rspvcset = 3;
	p.rquid = 1;
	check_kat(&p, exp, sizeof(exp),
		  "unitid srctag passpw isoc bridge error0 error1 rquid rspvcset count");
	assert_int_equal(ht_pkt_rsp_err(&p), HT_RSP_MASTER_ABORT);
	assert_string_equal(ht_rsp_err_name(HT_RSP_MASTER_ABORT), "master abort");
	p.error0 = 0;
	assert_string_equal(ht_rsp_err_name(ht_pkt_rsp_err(&p)), "data error");
	p.error1 = 0;
	assert_string_equal(ht_rsp_err_name(ht_pkt_rsp_err(&p)), "ok");
}

static void test_kat_extfc(void **state)
{
	struct ht_pkt p = mk(HT_K_EXTFC);
	/* 4-byte form: VCSet 5 @10:8, VCSetRsv 0xC @15:12, VCSetFree0 0x5A
	 * @23:16, ack 0x81 @31:24: 0x815AC537 */
	static const uint8_t s[] = { 0x37, 0xC5, 0x5A, 0x81 };
	/* 8-byte form: bit 6, VCSet 3, VCSetRsv 9, free 0x11 0x22 0x33 0x44 at
	 * 23:16 31:24 39:32 47:40, ack 0x7E @63:56: 0x22119377 0x7E004433 */
	static const uint8_t l[] = { 0x77, 0x93, 0x11, 0x22, 0x33, 0x44, 0x00, 0x7E };
	const char *f = "long vcset vcsetrsv vcsetfree0 vcsetfree1 vcsetfree2 vcsetfree3 ack";

	(void)state;
	p.cmd = HT_CMD_EXTFC;
	p.vcset = 5;
	p.vcsetrsv = 0xC;
	p.vcsetfree[0] = 0x5A;
	p.ack = 0x81;
	check_kat(&p, s, sizeof(s), f);

	p = mk(HT_K_EXTFC);
	p.cmd = HT_CMD_EXTFC;
	p.extfc_long = 1;
	p.vcset = 3;
	p.vcsetrsv = 9;
	p.vcsetfree[0] = 0x11;
	p.vcsetfree[1] = 0x22;
	p.vcsetfree[2] = 0x33;
	p.vcsetfree[3] = 0x44;
	p.ack = 0x7E;
	check_kat(&p, l, sizeof(l), f);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NONE);
}

static void test_kat_sync(void **state)
{
	struct ht_pkt p = mk(HT_K_SYNC);
	static const uint8_t exp[] = { 0xFF, 0xFF, 0xFF, 0xFF };

	(void)state;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_SYNC), 0);
	assert_int_equal(p.cmd, HT_CMD_SYNC);
	check_kat(&p, exp, sizeof(exp), "");
}

/* ---- the packets of §12.2 ---- */

static void test_reference_packets(void **state)
{
	struct ht_pkt p;
	static const uint8_t nop[] = { 0x00, 0x25, 0x03, 0x05 };
	static const uint8_t flush[] = { 0x02, 0x01, 0x04, 0x00 };
	static const uint8_t rd[] = { 0x15, 0x01, 0xC3, 0x43, 0x56, 0x34, 0x12, 0x00 };
	static const uint8_t wr[] = { 0x2C, 0x01, 0, 0, 0x10, 0, 0, 0, 0xEF, 0xBE, 0xAD, 0xDE };
	static const uint8_t xwr[] = { 0x3E, 0x01, 0, 0, 0x2C, 0x01, 0, 0, 0x10, 0, 0, 0,
				       0x44, 0x33, 0x22, 0x11 };
	static const uint8_t rsp[] = { 0x30, 0x40, 0xC3, 0x03 };

	(void)state;
	assert_int_equal(ht_decode(nop, 4, &p), 4);
	assert_int_equal(p.kind, HT_K_NOP);
	assert_int_equal(p.postcmd, 1);
	assert_int_equal(p.postdata, 1);
	assert_int_equal(p.resp, 2);
	assert_int_equal(p.respdata, 0);
	assert_int_equal(p.npcmd, 3);
	assert_int_equal(p.npdata, 0);
	assert_int_equal(p.ack, 5);

	assert_int_equal(ht_decode(flush, 4, &p), 4);
	assert_int_equal(p.kind, HT_K_FLUSH);
	assert_int_equal(p.unitid, 1);
	assert_int_equal(p.srctag, 4);
	assert_int_equal(p.seqid, 0);

	assert_int_equal(ht_decode(rd, 8, &p), 8);
	assert_int_equal(p.kind, HT_K_RDSIZED);
	assert_int_equal(p.cmd, 0x15);
	assert_int_equal(p.dword, 1);
	assert_int_equal(p.coherent, 1);
	assert_int_equal(p.responsepasspw, 0);
	assert_int_equal(p.unitid, 1);
	assert_int_equal(p.srctag, 3);
	assert_int_equal(p.count, 15);
	assert_true(p.addr == 0x0012345640ull);

	assert_int_equal(ht_decode(wr, 12, &p), 12);
	assert_int_equal(p.kind, HT_K_WRSIZED);
	assert_int_equal(p.posted, 1);
	assert_int_equal(p.dword, 1);
	assert_int_equal(p.unitid, 1);
	assert_int_equal(p.count, 0);
	assert_true(p.addr == 0x1000);
	assert_int_equal(p.addrext, 0);
	assert_int_equal(p.data_len, 4);
	assert_memory_equal(p.data, "\xEF\xBE\xAD\xDE", 4);

	assert_int_equal(ht_decode(xwr, 16, &p), 16);
	assert_true(p.addr == (1ull << 40 | 0x1000));
	assert_int_equal(p.addrext, 1);
	assert_int_equal(ht_pkt_ctl_len(&p), 12);
	assert_memory_equal(p.data, "\x44\x33\x22\x11", 4);

	/* control dword only: Count 15 announces 64 data bytes */
	assert_int_equal(ht_peek_len(rsp, 4), 4 + 64);
	assert_int_equal(ht_decode(rsp, 4, &p), HT_E_TRUNCATED);
	{
		uint8_t full[68] = { 0 };

		memcpy(full, rsp, 4);
		assert_int_equal(ht_decode(full, 68, &p), 68);
		assert_int_equal(p.kind, HT_K_RDRESPONSE);
		assert_int_equal(p.bridge, 1);
		assert_int_equal(p.srctag, 3);
		assert_int_equal(p.count, 15);
		assert_int_equal(p.data_len, 64);
	}
}

/* ---- random round trips ---- */

static uint64_t rs;

static uint64_t r64(void)
{
	/* splitmix64 */
	uint64_t z = (rs += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned rb(unsigned bits)
{
	return (unsigned)(r64() & ((1ull << bits) - 1));
}

static void rand_data(struct ht_pkt *p, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p->data[i] = (uint8_t)r64();
	p->data_len = (uint16_t)n;
}

/* Random address, dword aligned; a third with the prefix (a fifth of those
 * with Addr[63:40] = 0). */
static void rand_addr(struct ht_pkt *p)
{
	p->addrext = rb(2) == 0;
	p->addr = r64() & (p->addrext ? (rb(3) ? ~0ull : HT_ADDR_MAX_40) : HT_ADDR_MAX_40);
	p->addr &= ~3ull;
}

enum cls {
	C_NOP, C_SYNC, C_FLUSH, C_FENCE, C_BCAST, C_ATOMIC, C_RDRESP, C_TGTDONE,
	C_EXTFC, C_RD, C_WR, C__COUNT
};

static void rand_req(struct ht_pkt *p)
{
	p->seqid = (uint8_t)rb(4);
	p->unitid = (uint8_t)rb(5);
	p->passpw = (uint8_t)rb(1);
}

static struct ht_pkt rand_pkt(enum cls c)
{
	struct ht_pkt p;
	unsigned first;

	switch (c) {
	case C_NOP:
		p = mk(HT_K_NOP);
		p.postcmd = (uint8_t)rb(2);
		p.postdata = (uint8_t)rb(2);
		p.resp = (uint8_t)rb(2);
		p.respdata = (uint8_t)rb(2);
		p.npcmd = (uint8_t)rb(2);
		p.npdata = (uint8_t)rb(2);
		p.isoc = (uint8_t)rb(1);
		p.discon = (uint8_t)rb(1);
		p.diag = (uint8_t)rb(1);
		p.ack = (uint8_t)rb(8);
		break;
	case C_SYNC:
		p = mk(HT_K_SYNC);
		break;
	case C_FLUSH:
	case C_FENCE:
		p = mk(c == C_FLUSH ? HT_K_FLUSH : HT_K_FENCE);
		rand_req(&p);
		if (c == C_FLUSH)
			p.srctag = (uint8_t)rb(5);
		p.isoc = (uint8_t)rb(1);
		break;
	case C_BCAST:
		p = mk(HT_K_BROADCAST);
		rand_req(&p);
		p.compat = (uint8_t)rb(1);
		rand_addr(&p);
		break;
	case C_ATOMIC:
		p = mk(HT_K_ATOMIC);
		rand_req(&p);
		p.srctag = (uint8_t)rb(5);
		p.compat = (uint8_t)rb(1);
		p.count = rb(1) ? HT_ATOMIC_CAS_COUNT : HT_ATOMIC_FETCHADD_COUNT;
		rand_addr(&p);
		p.addr &= ~7ull;
		rand_data(&p, 4u * (p.count + 1u));
		break;
	case C_RDRESP:
	case C_TGTDONE:
		p = mk(c == C_RDRESP ? HT_K_RDRESPONSE : HT_K_TGTDONE);
		p.unitid = (uint8_t)rb(5);
		p.srctag = (uint8_t)rb(5);
		p.passpw = (uint8_t)rb(1);
		p.isoc = (uint8_t)rb(1);
		p.bridge = (uint8_t)rb(1);
		p.error0 = (uint8_t)rb(1);
		p.error1 = (uint8_t)rb(1);
		p.rquid = (uint8_t)rb(2);
		p.rspvcset = (uint8_t)rb(3);
		if (c == C_RDRESP) {
			p.count = (uint8_t)rb(4);
			rand_data(&p, 4u * (p.count + 1u));
		}
		break;
	case C_EXTFC:
		p = mk(HT_K_EXTFC);
		p.extfc_long = (uint8_t)rb(1);
		p.vcset = (uint8_t)rb(3);
		p.vcsetrsv = (uint8_t)rb(4);
		for (unsigned i = 0; i < (p.extfc_long ? 4u : 1u); i++)
			p.vcsetfree[i] = (uint8_t)rb(8);
		p.ack = (uint8_t)rb(8);
		break;
	default: /* C_RD, C_WR: dword or byte, posted or not */
		p = mk(c == C_RD ? HT_K_RDSIZED : HT_K_WRSIZED);
		rand_req(&p);
		p.dword = (uint8_t)rb(1);
		p.isoc = (uint8_t)rb(1);
		p.coherent = (uint8_t)rb(1);
		p.compat = (uint8_t)rb(1);
		if (c == C_RD)
			p.responsepasspw = (uint8_t)rb(1);
		else
			p.posted = (uint8_t)rb(1);
		if (c == C_RD || !p.posted)
			p.srctag = (uint8_t)rb(5);
		else {
			p.chain = (uint8_t)rb(1);
			p.dataerror = (uint8_t)rb(1);
		}
		rand_addr(&p);
		p.addr &= ~63ull;
		if (p.dword) {
			p.count = (uint8_t)rb(4);
			p.addr |= 4 * (r64() % (16u - p.count));
			if (c == C_WR)
				rand_data(&p, 4u * (p.count + 1u));
		} else if (c == C_RD) {
			p.count = (uint8_t)rb(4);
			p.mask = p.count;
			p.addr |= 4 * rb(4);
		} else {
			p.count = (uint8_t)(1 + r64() % 8);
			first = (unsigned)(r64() % (9u - p.count));
			p.addr |= 4 * first + 32 * rb(1);
			p.mask = (uint32_t)r64() &
				 (uint32_t)(((1ull << (4 * p.count)) - 1) << (4 * first));
			rand_data(&p, 4u * p.count);
		}
		break;
	}
	assert_int_equal(ht_pkt_set_cmd(&p, (enum ht_kind)p.kind), 0);
	return p;
}

static void test_random_round_trips(void **state)
{
	uint8_t a[HT_MAX_PKT_LEN], b[HT_MAX_PKT_LEN];
	unsigned seen[HT_K__COUNT] = { 0 };

	(void)state;
	rs = 20240611;
	for (unsigned c = 0; c < C__COUNT; c++) {
		for (unsigned it = 0; it < 10000; it++) {
			struct ht_pkt p = rand_pkt((enum cls)c), d;
			int n = ht_encode(&p, a, sizeof(a)), m;

			if (n < 0)
				fail_msg("class %u iteration %u: encode: %s", c, it,
					 ht_strerror(n));
			assert_int_equal((size_t)n, ht_pkt_len(&p));
			assert_int_equal(ht_peek_len(a, (size_t)n), n);
			assert_int_equal(ht_decode(a, (size_t)n, &d), n);
			if (p.addr > HT_ADDR_MAX_40)
				assert_int_equal(d.addrext, 1);
			assert_pkt_equal(&d, &p);
			m = ht_encode(&d, b, sizeof(b));
			assert_int_equal(m, n);
			assert_memory_equal(a, b, (size_t)n);
			if (it % 50 == 0)
				for (int len = 0; len < n; len++)
					assert_int_equal(ht_decode(a, (size_t)len, &d),
							 HT_E_TRUNCATED);
			seen[p.kind]++;
		}
	}
	for (unsigned k = 0; k < HT_K__COUNT; k++)
		assert_true(seen[k] >= 10000);
}

/* The fast paths (ht_encode, ht_decode, ht_validate) against the
 * table-driven reference: bit-exact encodings, identical decode results and
 * identical verdicts on random valid packets, random damaged packet structs,
 * damaged and truncated encodings and random bytes. */
static void cmp_decode(const uint8_t *a, size_t len)
{
	struct ht_pkt d1, d2;
	int r1, r2;

	memset(&d1, 0xA5, sizeof(d1));
	memset(&d2, 0xA5, sizeof(d2));
	r1 = ht_decode(a, len, &d1);
	r2 = ht_decode_table(a, len, &d2);
	assert_int_equal(r1, r2);
	assert_memory_equal(&d1, &d2, sizeof(d1));
	assert_int_equal(ht_validate(a, len), r2);
	if (r2 > 0 && !d2.addrext)
		assert_int_equal(ht_cmd_vc(d2.cmd), ht_pkt_vc(&d2));
	/* the length peeks: the fast path equals the table; ht_peek_valid
	 * answers only for a valid packet, with its length */
	int pl = ht_peek_len_table(a, len), pv = ht_peek_valid(a, len);

	assert_int_equal(ht_peek_len(a, len), pl);
	assert_true(pv >= 0);
	if (pv > 0) {
		assert_int_equal(pv, pl);
		assert_int_equal(ht_validate(a, (size_t)pv), pv);
	}
	/* the descriptor: the same verdict, and the fields of the full decode */
	struct ht_desc ds;

	memset(&ds, 0xA5, sizeof(ds));
	assert_int_equal(ht_desc_parse(a, len, &ds), r2);
	if (r2 > 0) {
		assert_ptr_equal(ds.pkt, a);
		assert_int_equal(ds.len, r2);
		assert_int_equal(ds.ctl, d2.addrext ? 4 : 0);
		assert_int_equal(ds.cmd, d2.cmd);
		assert_int_equal(ds.kind, d2.kind);
		assert_int_equal(ds.vc, ht_pkt_vc(&d2));
		assert_int_equal(ds.unitid, d2.unitid);
		assert_int_equal(ds.srctag, d2.srctag);
		assert_int_equal(ds.passpw, d2.passpw);
		assert_int_equal(ds.count, d2.count);
		assert_int_equal(ds.rsp_err, ht_pkt_rsp_err(&d2));
		assert_true(ds.addr == d2.addr);
		assert_int_equal(ds.data_len, d2.data_len);
		if (ds.data_len) {
			assert_true(ds.data_off + ds.data_len == ds.len);
			assert_memory_equal(a + ds.data_off, d2.data, ds.data_len);
		} else {
			assert_int_equal(ds.data_off, 0);
		}
	}
	if (r2 > 0 && (size_t)r2 == len && !d2.addrext &&
	    (d2.kind == HT_K_NOP || d2.kind == HT_K_RDSIZED || d2.kind == HT_K_RDRESPONSE ||
	     d2.kind == HT_K_TGTDONE || (d2.kind == HT_K_WRSIZED && d2.dword)))
		assert_int_equal(pv, r2); /* a valid common packet is always seen */
	/* the packet that follows it in a frame (ht_desc_parse_after): the
	 * same bytes but bits 31:30 and 12:8, with and without bits 20:16,
	 * and the second dword on (a sized request's Addr[7:6], UnitID,
	 * SrcTag, Addr[39:8] and data, a response's UnitID, SrcTag and data;
	 * anything for other kinds),
	 * whole and one byte short: the same verdict and fields as alone */
	if (r2 > 0 && len <= HT_MAX_PKT_LEN + 8 && len >= 4) {
		uint8_t b[HT_MAX_PKT_LEN + 8];
		struct ht_desc x1, x2;

		for (unsigned v = 0; v < 2; v++)
		for (size_t l = len; l + 1 >= len && l > 0; l--) {
			memcpy(b, a, len);
			b[3] ^= 0xc0;
			b[2] ^= v ? 0x1f : 0; /* SrcTag (a posted write's must be 0) */
			b[1] ^= 0x1f;         /* UnitID */
			for (size_t i = 4; i < len; i++)
				b[i] ^= (uint8_t)(i * 37u + 11u);
			int q1 = ht_desc_parse_after(b, l, &ds, &x1), q2 = ht_desc_parse(b, l, &x2);

			assert_int_equal(q1, q2);
			if (q2 <= 0)
				continue;
			assert_ptr_equal(x1.pkt, b);
			assert_int_equal(x1.len, x2.len);
			assert_int_equal(x1.ctl, x2.ctl);
			assert_int_equal(x1.cmd, x2.cmd);
			assert_int_equal(x1.kind, x2.kind);
			assert_int_equal(x1.vc, x2.vc);
			assert_int_equal(x1.unitid, x2.unitid);
			assert_int_equal(x1.srctag, x2.srctag);
			assert_int_equal(x1.passpw, x2.passpw);
			assert_int_equal(x1.count, x2.count);
			assert_int_equal(x1.rsp_err, x2.rsp_err);
			assert_true(x1.addr == x2.addr);
			assert_int_equal(x1.data_off, x2.data_off);
			assert_int_equal(x1.data_len, x2.data_len);
		}
	}
}

static void cmp_encode(const struct ht_pkt *p, size_t cap)
{
	uint8_t a[HT_MAX_PKT_LEN + 8], b[HT_MAX_PKT_LEN + 8];
	int n1, n2;

	memset(a, 0x5A, sizeof(a));
	memset(b, 0x5A, sizeof(b));
	n1 = ht_encode(p, a, cap);
	n2 = ht_encode_table(p, b, cap);
	assert_int_equal(n1, n2);
	if (n2 > 0)
		assert_memory_equal(a, b, sizeof(a));
}

static void test_fast_paths_vs_table(void **state)
{
	uint8_t a[HT_MAX_PKT_LEN + 8];
	unsigned fast_ok = 0;

	(void)state;
	rs = 424242;
	for (unsigned c = 0; c < C__COUNT; c++) {
		for (unsigned it = 0; it < 20000; it++) {
			struct ht_pkt p = rand_pkt((enum cls)c), q;
			int n;

			/* mostly the fast layouts: no prefix, dword sized */
			if (it % 4 && p.kind != HT_K_ATOMIC && p.kind != HT_K_BROADCAST) {
				p.addrext = 0;
				p.addr &= HT_ADDR_MAX_40;
			}
			cmp_encode(&p, HT_MAX_PKT_LEN);
			n = ht_encode_table(&p, a, sizeof(a));
			assert_true(n > 0);
			fast_ok += !p.addrext && (p.kind == HT_K_NOP || p.kind == HT_K_RDSIZED ||
						  p.kind == HT_K_RDRESPONSE || p.kind == HT_K_TGTDONE ||
						  (p.kind == HT_K_WRSIZED && p.dword));
			cmp_decode(a, (size_t)n);
			cmp_encode(&p, (size_t)(r64() % (size_t)(n + 1))); /* short buffer */

			/* a damaged struct: one random byte of the fields or data */
			q = p;
			((uint8_t *)&q)[r64() % offsetof(struct ht_pkt, data_len)] = (uint8_t)r64();
			cmp_encode(&q, HT_MAX_PKT_LEN);
			q = p;
			q.data[r64() % HT_MAX_DATA] ^= (uint8_t)(1 + rb(7));
			cmp_encode(&q, HT_MAX_PKT_LEN);
			q = p;
			q.data_len = (uint16_t)(r64() % 80);
			cmp_encode(&q, HT_MAX_PKT_LEN);

			/* damaged encodings: bit flips, truncation, random bytes */
			for (unsigned k = 0; k < 4; k++) {
				uint8_t d[HT_MAX_PKT_LEN + 8];

				memcpy(d, a, sizeof(d));
				d[r64() % (size_t)n] ^= (uint8_t)(1u << rb(3));
				if (k & 1)
					d[r64() % 8] ^= (uint8_t)(1u << rb(3));
				cmp_decode(d, (size_t)n);
				cmp_decode(d, (size_t)(r64() % (size_t)(n + 1)));
			}
			for (size_t i = 0; i < sizeof(a); i++)
				a[i] = (uint8_t)r64();
			cmp_decode(a, (size_t)(r64() % sizeof(a)));
		}
	}
	/* the fast layouts were exercised on valid input */
	assert_true(fast_ok > 50000);
}

/* addrext 0 with a 64-bit address: the prefix is emitted anyway and the
 * decoder reports it. */
static void test_prefix_normalisation(void **state)
{
	struct ht_pkt p = mk(HT_K_BROADCAST), d;
	uint8_t b[16];

	(void)state;
	p.cmd = HT_CMD_BROADCAST;
	p.addr = HT_ADDR_MAX_40 + 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 12);
	assert_int_equal(b[0], HT_CMD_ADDREXT);
	assert_int_equal(b[1], 1);
	assert_int_equal(ht_decode(b, 12, &d), 12);
	assert_int_equal(d.addrext, 1);
	/* addrext 1 with a 40-bit address: a prefix of zeros */
	p.addr = HT_ADDR_MAX_40 & ~3ull;
	p.addrext = 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 12);
	assert_memory_equal(b, "\x3E\0\0\0", 4);
	assert_int_equal(ht_decode(b, 12, &d), 12);
	assert_pkt_equal(&d, &p);
}

/* ---- errors ---- */

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}

static void test_reserved_commands(void **state)
{
	static const uint8_t rsv[] = {
		0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25,
		0x26, 0x27, 0x31, 0x32, 0x34, 0x35, 0x36, 0x38, 0x39, 0x3B,
	};
	uint8_t b[HT_MAX_PKT_LEN] = { 0 };
	struct ht_pkt p;
	unsigned nres = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(rsv); i++) {
		b[0] = rsv[i];
		assert_int_equal(ht_cmd_kind(rsv[i]), HT_E_RESERVED_CMD);
		assert_int_equal(ht_decode(b, sizeof(b), &p), HT_E_RESERVED_CMD);
		assert_int_equal(ht_peek_len(b, sizeof(b)), HT_E_RESERVED_CMD);
		p = mk(HT_K_NOP);
		p.cmd = rsv[i];
		assert_int_equal(ht_encode(&p, b + 8, 16), HT_E_RESERVED_CMD);
	}
	/* and nothing else is reserved */
	for (unsigned c = 0; c < 64; c++)
		nres += ht_cmd_kind((uint8_t)c) == HT_E_RESERVED_CMD;
	assert_int_equal(nres, sizeof(rsv));
	assert_int_equal(ht_cmd_kind(HT_CMD_ADDREXT), HT_E_BAD_PREFIX);
	assert_int_equal(ht_cmd_kind(0x40), HT_E_BAD_FIELD);
	/* every sized code classifies as expected */
	for (unsigned c = 0x08; c <= 0x0F; c++)
		assert_int_equal(ht_cmd_kind((uint8_t)c), HT_K_WRSIZED);
	for (unsigned c = 0x28; c <= 0x2F; c++)
		assert_int_equal(ht_cmd_kind((uint8_t)c), HT_K_WRSIZED);
	for (unsigned c = 0x10; c <= 0x1F; c++)
		assert_int_equal(ht_cmd_kind((uint8_t)c), HT_K_RDSIZED);
}

/* Set one bit in a valid packet and expect `err` from ht_decode. */
static void expect_bit_error(const uint8_t *pkt, size_t n, unsigned bit, int err)
{
	uint8_t b[HT_MAX_PKT_LEN];
	struct ht_pkt p;

	memcpy(b, pkt, n);
	b[bit / 8] |= (uint8_t)(1u << (bit % 8));
	if (ht_decode(b, n, &p) != err)
		fail_msg("bit %u: got %s, expected %s", bit, ht_strerror(ht_decode(b, n, &p)),
			 ht_strerror(err));
}

static void test_reserved_bits(void **state)
{
	static const uint8_t wrp[] = { 0x2C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t nop[] = { 0, 0, 0, 0 };
	static const uint8_t rdr[] = { 0x30, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t tgt[] = { 0x33, 0, 0, 0 };
	static const uint8_t flush[] = { 0x02, 0, 0, 0 };
	static const uint8_t fence[] = { 0x3C, 0, 0, 0 };
	static const uint8_t bc[] = { 0x3A, 0, 0, 0, 0, 0, 0, 0 };
	static const uint8_t xs[] = { 0x37, 0, 0, 0 };
	static const uint8_t xl[] = { 0x77, 0, 0, 0, 0, 0, 0, 0 };
	unsigned bit;

	(void)state;
	for (bit = 16; bit <= 18; bit++)
		expect_bit_error(wrp, sizeof(wrp), bit, HT_E_RESERVED_BIT);
	expect_bit_error(nop, 4, 7, HT_E_RESERVED_BIT);
	expect_bit_error(nop, 4, 20, HT_E_RESERVED_BIT);
	expect_bit_error(nop, 4, 23, HT_E_RESERVED_BIT);
	expect_bit_error(rdr, sizeof(rdr), 6, HT_E_RESERVED_BIT);
	expect_bit_error(rdr, sizeof(rdr), 13, HT_E_RESERVED_BIT);
	expect_bit_error(tgt, 4, 6, HT_E_RESERVED_BIT);
	expect_bit_error(tgt, 4, 13, HT_E_RESERVED_BIT);
	for (bit = 22; bit <= 31; bit++) {
		expect_bit_error(flush, 4, bit, HT_E_RESERVED_BIT);
		expect_bit_error(fence, 4, bit, HT_E_RESERVED_BIT);
	}
	for (bit = 16; bit <= 20; bit++) {
		expect_bit_error(fence, 4, bit, HT_E_RESERVED_BIT);
		expect_bit_error(bc, 8, bit, HT_E_RESERVED_BIT);
	}
	for (bit = 22; bit <= 25; bit++)
		expect_bit_error(bc, 8, bit, HT_E_RESERVED_BIT);
	expect_bit_error(xs, 4, 7, HT_E_RESERVED_BIT);
	expect_bit_error(xs, 4, 11, HT_E_RESERVED_BIT);
	expect_bit_error(xl, 8, 7, HT_E_RESERVED_BIT);
	expect_bit_error(xl, 8, 11, HT_E_RESERVED_BIT);
	for (bit = 48; bit <= 55; bit++)
		expect_bit_error(xl, 8, bit, HT_E_RESERVED_BIT);
	/* ...and every other bit of these packets is a field (or Cmd/Count/ExtFC
	 * form, which change the packet) */
	for (bit = 6; bit < 32; bit++) {
		uint8_t b[4];
		struct ht_pkt p;
		int r;

		memcpy(b, nop, 4);
		b[bit / 8] |= (uint8_t)(1u << (bit % 8));
		r = ht_decode(b, 4, &p);
		assert_int_equal(r, bit == 7 || bit == 20 || bit == 23 ? HT_E_RESERVED_BIT : 4);
	}
}

static void test_tgtdone_count(void **state)
{
	uint8_t b[4];
	struct ht_pkt p = mk(HT_K_TGTDONE);

	(void)state;
	for (unsigned c = 1; c < 16; c++) {
		put32(b, 0x33u | c << 22);
		assert_int_equal(ht_peek_len(b, 4), 4);
		assert_int_equal(ht_decode(b, 4, &p), HT_E_BAD_COUNT);
	}
	p = mk(HT_K_TGTDONE);
	p.cmd = HT_CMD_TGTDONE;
	p.count = 1;
	assert_int_equal(ht_encode(&p, b, 4), HT_E_BAD_COUNT);
}

static void test_atomic_errors(void **state)
{
	uint8_t b[HT_MAX_PKT_LEN] = { 0 };
	struct ht_pkt p;

	(void)state;
	for (unsigned c = 0; c < 16; c++) {
		if (c == 1 || c == 3)
			continue;
		put32(b, 0x3Du | c << 22);
		assert_int_equal(ht_peek_len(b, sizeof(b)), 8 + 4 * ((int)c + 1));
		assert_int_equal(ht_decode(b, sizeof(b), &p), HT_E_BAD_COUNT);
		p = mk(HT_K_ATOMIC);
		p.cmd = HT_CMD_ATOMIC;
		p.count = (uint8_t)c;
		fill(&p, 4 * (c + 1), 0);
		assert_int_equal(ht_encode(&p, b + 16, 64), HT_E_BAD_COUNT);
	}
	/* Addr[2] = bit 26 must be 0 */
	put32(b, 0x3Du | 1u << 22 | 1u << 26);
	assert_int_equal(ht_decode(b, sizeof(b), &p), HT_E_BAD_ADDR);
	p = mk(HT_K_ATOMIC);
	p.cmd = HT_CMD_ATOMIC;
	p.count = 1;
	p.addr = 0x1004;
	fill(&p, 8, 0);
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_ADDR);
	p.addr = 0x1000;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 16);
}

/* A byte write: cmd 0x28 (posted, byte), Count c, Addr[4:2] = first. */
static int byte_write(unsigned count, unsigned first, uint32_t mask, bool encode)
{
	uint8_t b[HT_MAX_PKT_LEN] = { 0 };
	struct ht_pkt p = mk(HT_K_WRSIZED);

	if (encode) {
		p.cmd = HT_CMD_WR_P;
		p.posted = 1;
		p.count = (uint8_t)count;
		p.addr = 0x1000 + 4 * first;
		p.mask = mask;
		fill(&p, 4 * count, 0x55);
		return ht_encode(&p, b, sizeof(b));
	}
	put32(b, HT_CMD_WR_P | count << 22 | first << 26);
	put32(b + 4, 0x10);
	put32(b + 8, mask);
	return ht_decode(b, 8 + 4 * (count + 1), &p);
}

static void test_byte_write_rules(void **state)
{
	(void)state;
	for (int enc = 0; enc < 2; enc++) {
		/* Count 0 (mask only) and Count > 8 */
		assert_int_equal(byte_write(0, 0, 0, enc), HT_E_BAD_COUNT);
		assert_int_equal(byte_write(9, 0, 0, enc), HT_E_BAD_COUNT);
		assert_int_equal(byte_write(15, 0, 0, enc), HT_E_BAD_COUNT);
		/* the full window, and every legal (first, count) */
		assert_int_equal(byte_write(8, 0, 0xFFFFFFFF, enc), 8 + 36);
		for (unsigned c = 1; c <= 8; c++)
			for (unsigned f = 0; f < 8; f++) {
				uint32_t ok = (uint32_t)(((1ull << (4 * c)) - 1) << (4 * f));

				if (f + c > 8) {
					/* crosses the 32-byte window */
					assert_int_equal(byte_write(c, f, 0, enc), HT_E_BAD_MASK);
					continue;
				}
				assert_int_equal(byte_write(c, f, ok, enc), 8 + 4 * ((int)c + 1));
				assert_int_equal(byte_write(c, f, 0, enc), 8 + 4 * ((int)c + 1));
				/* a stray mask bit outside the written dwords */
				for (unsigned bit = 0; bit < 32; bit++)
					if (!(ok >> bit & 1))
						assert_int_equal(byte_write(c, f, 1u << bit, enc),
								 HT_E_BAD_MASK);
			}
	}
}

static void test_byte_read(void **state)
{
	uint8_t b[8];
	struct ht_pkt p = mk(HT_K_RDSIZED), d;

	(void)state;
	p.cmd = HT_CMD_RD;
	p.addr = 0x2000;
	/* Mask 0 is accepted */
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 8);
	assert_int_equal(ht_decode(b, 8, &d), 8);
	assert_int_equal(d.mask, 0);
	/* mask must equal count */
	p.count = 5;
	p.mask = 4;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	p.mask = 5;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 8);
	assert_int_equal(ht_decode(b, 8, &d), 8);
	assert_int_equal(d.mask, 5);
	assert_int_equal(d.count, 5);
	/* no data packet, no 64-byte rule (one dword) */
	p.count = p.mask = 15;
	p.addr = 0x203C;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 8);
}

static void test_64byte_rule(void **state)
{
	uint8_t b[HT_MAX_PKT_LEN] = { 0 };
	struct ht_pkt p;

	(void)state;
	for (unsigned idx = 0; idx < 16; idx++)
		for (unsigned c = 0; c < 16; c++) {
			int want_rd = idx + c <= 15 ? 8 : HT_E_BAD_ADDR;
			int want_wr = idx + c <= 15 ? 8 + 4 * ((int)c + 1) : HT_E_BAD_ADDR;

			/* RdSized dword: cmd 0x14, Addr[5:2] = idx */
			put32(b, 0x14u | c << 22 | idx << 26);
			assert_int_equal(ht_decode(b, 8, &p), want_rd);
			/* non-posted WrSized dword: cmd 0x0C */
			put32(b, 0x0Cu | c << 22 | idx << 26);
			assert_int_equal(ht_decode(b, sizeof(b), &p), want_wr);
			p = mk(HT_K_RDSIZED);
			p.cmd = 0x14;
			p.dword = 1;
			p.count = (uint8_t)c;
			p.addr = 0x4000 + 4 * idx;
			assert_int_equal(ht_encode(&p, b + 16, 16), want_rd);
		}
}

static void test_prefix_errors(void **state)
{
	uint8_t b[HT_MAX_PKT_LEN] = { 0 };
	struct ht_pkt p;

	(void)state;
	/* extension types 01, 10, 11 */
	for (unsigned t = 1; t < 4; t++) {
		put32(b, HT_CMD_ADDREXT | t << 6);
		put32(b + 4, 0x14); /* RdSized */
		assert_int_equal(ht_decode(b, 12, &p), HT_E_BAD_PREFIX);
		assert_int_equal(ht_peek_len(b, 12), HT_E_BAD_PREFIX);
		assert_int_equal(ht_decode(b, 3, &p), HT_E_TRUNCATED);
	}
	/* before anything but RdSized, WrSized, Broadcast, Atomic */
	for (unsigned c = 0; c < 64; c++) {
		int k = ht_cmd_kind((uint8_t)c);
		bool ok = k == HT_K_RDSIZED || k == HT_K_WRSIZED || k == HT_K_BROADCAST ||
			  k == HT_K_ATOMIC;

		memset(b, 0, sizeof(b));
		put32(b, HT_CMD_ADDREXT);
		put32(b + 4, c == HT_CMD_SYNC ? 0xFFFFFFFFu : c | (k == HT_K_ATOMIC ? 1u << 22 : 0));
		if (k == HT_K_WRSIZED && !(c & 4))
			put32(b + 4, c | 1u << 22);  /* byte write: Count 1 */
		if (ok) {
			assert_true(ht_decode(b, sizeof(b), &p) > 0);
			assert_int_equal(p.addrext, 1);
		} else {
			assert_int_equal(ht_decode(b, sizeof(b), &p), HT_E_BAD_PREFIX);
			assert_int_equal(ht_peek_len(b, sizeof(b)), HT_E_BAD_PREFIX);
		}
	}
	/* prefix alone */
	put32(b, HT_CMD_ADDREXT);
	assert_int_equal(ht_decode(b, 4, &p), HT_E_TRUNCATED);
	assert_int_equal(ht_peek_len(b, 4), HT_E_TRUNCATED);
	/* encode: addrext on a kind without an address, misaligned address */
	p = mk(HT_K_FLUSH);
	p.cmd = HT_CMD_FLUSH;
	p.addrext = 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	p = mk(HT_K_BROADCAST);
	p.cmd = HT_CMD_BROADCAST;
	for (unsigned low = 1; low < 4; low++) {
		p.addr = 0x1000 | low;
		assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_ADDR);
	}
}

static void test_sync_errors(void **state)
{
	uint8_t b[4];
	struct ht_pkt p;

	(void)state;
	for (unsigned bit = 6; bit < 32; bit++) {
		put32(b, 0xFFFFFFFFu & ~(1u << bit));
		assert_int_equal(ht_peek_len(b, 4), 4);
		assert_int_equal(ht_decode(b, 4, &p), HT_E_BAD_SYNC);
	}
	put32(b, 0x3F);
	assert_int_equal(ht_decode(b, 4, &p), HT_E_BAD_SYNC);
	put32(b, 0xFFFFFFFF);
	assert_int_equal(ht_decode(b, 4, &p), 4);
	assert_int_equal(p.kind, HT_K_SYNC);
}

static void test_encode_field_errors(void **state)
{
	uint8_t b[HT_MAX_PKT_LEN];
	struct ht_pkt p;

	(void)state;
	/* cmd modifiers must agree with the modifier fields */
	p = mk(HT_K_WRSIZED);
	p.cmd = 0x2C;           /* posted dword */
	p.posted = 1;
	fill(&p, 4, 0);
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);  /* dword=0 */
	p.dword = 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), 12);
	p.isoc = 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	p.isoc = 0;
	p.posted = 0;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	/* data_len must match Count */
	p.posted = 1;
	p.data_len = 8;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	p.data_len = 0;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	/* cmd out of range, 0x3E is not a packet */
	p = mk(HT_K_NOP);
	p.cmd = 0x40;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	p.cmd = HT_CMD_ADDREXT;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	/* RdSized has no posted bit */
	p = mk(HT_K_RDSIZED);
	p.cmd = 0x14;
	p.dword = 1;
	p.posted = 1;
	assert_int_equal(ht_encode(&p, b, sizeof(b)), HT_E_BAD_FIELD);
	/* ht_pkt_set_cmd */
	p = mk(HT_K_NOP);
	p.posted = 1;
	p.dword = 0;
	p.isoc = 1;
	p.coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_WRSIZED), 0);
	assert_int_equal(p.cmd, 0x2B);
	assert_int_equal(p.kind, HT_K_WRSIZED);
	p.responsepasspw = 1;
	p.posted = 0;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_RDSIZED), 0);
	assert_int_equal(p.cmd, 0x1B);
	p.dword = 2;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_RDSIZED), HT_E_BAD_FIELD);
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K__COUNT), HT_E_BAD_FIELD);
	for (int k = 0; k < HT_K__COUNT; k++) {
		p = mk(HT_K_NOP);
		assert_int_equal(ht_pkt_set_cmd(&p, (enum ht_kind)k), 0);
		assert_int_equal(ht_cmd_kind(p.cmd), k);
	}
	/* ht_pkt_set refuses values that do not fit the member */
	p = mk(HT_K_NOP);
	assert_int_equal(ht_pkt_set(&p, HT_F_UNITID, 256), HT_E_BAD_FIELD);
	assert_int_equal(ht_pkt_set(&p, HT_F_MASK, 1ull << 32), HT_E_BAD_FIELD);
	assert_int_equal(ht_pkt_set(&p, HT_F_ADDR, ~0ull), 0);
	assert_true(ht_pkt_get(&p, HT_F_ADDR) == ~0ull);
}

static void test_peek_len(void **state)
{
	struct {
		uint32_t d0;
		int len;
	} t[] = {
		{ 0x00000000, 4 },                 /* NOP */
		{ 0xFFFFFFFF, 4 },                 /* Sync */
		{ 0x00000002, 4 },                 /* Flush */
		{ 0x0000003C, 4 },                 /* Fence */
		{ 0x00000033, 4 },                 /* TgtDone */
		{ 0x00000037, 4 },                 /* ExtFC short */
		{ 0x00000077, 8 },                 /* ExtFC long */
		{ 0x0000003A, 8 },                 /* Broadcast */
		{ 0x03C00014, 8 },                 /* RdSized dword, Count 15 */
		{ 0x03C00010, 8 },                 /* RdSized byte, Mask 15 */
		{ 0x00000030, 8 },                 /* RdResponse Count 0 */
		{ 0x03C00030, 68 },                /* RdResponse Count 15 */
		{ 0x0000000C, 12 },                /* WrSized NP dword Count 0 */
		{ 0x03C0002C, 72 },                /* WrSized P dword Count 15 */
		{ 0x00C00028, 24 },                /* WrSized P byte Count 3: mask+3 */
		{ 0x0040003D, 16 },                /* Atomic Count 1 */
		{ 0x00C0003D, 24 },                /* Atomic Count 3 */
	};
	uint8_t b[16] = { 0 };

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		put32(b, t[i].d0);
		assert_int_equal(ht_peek_len(b, 4), t[i].len);
		/* with a prefix (peek needs only the prefix and control dword 0) */
		put32(b + 4, t[i].d0);
		put32(b, HT_CMD_ADDREXT);
		if (t[i].len >= 8 && (t[i].d0 & 0x3F) != 0x30 && (t[i].d0 & 0x3F) != 0x37)
			assert_int_equal(ht_peek_len(b, 8), t[i].len + 4);
		else
			assert_int_equal(ht_peek_len(b, 8), HT_E_BAD_PREFIX);
	}
	assert_int_equal(ht_peek_len(b, 0), HT_E_TRUNCATED);
	assert_int_equal(ht_peek_len(b, 3), HT_E_TRUNCATED);
}

static void test_names(void **state)
{
	static const char *const kinds[] = {
		"NOP", "Flush", "WrSized", "RdSized", "RdResponse", "TgtDone", "ExtFC",
		"Broadcast", "Fence", "Atomic", "Sync",
	};
	const char *seen[16];

	(void)state;
	for (int k = 0; k < HT_K__COUNT; k++)
		assert_string_equal(ht_kind_name((enum ht_kind)k), kinds[k]);
	assert_null(ht_kind_name(HT_K__COUNT));
	for (int e = 0; e >= HT_E_BAD_INPUT; e--) {
		seen[-e] = ht_strerror(e);
		assert_string_not_equal(seen[-e], "unknown error");
		for (int o = 0; o > e; o--)
			assert_string_not_equal(seen[-o], seen[-e]);
	}
	assert_string_equal(ht_strerror(-99), "unknown error");
	assert_string_equal(ht_vc_name(HT_VC_P), "P");
	assert_string_equal(ht_vc_name(HT_VC_NP), "NP");
	assert_string_equal(ht_vc_name(HT_VC_R), "R");
	for (int f = 0; f < HT_F__COUNT; f++)
		assert_int_equal(ht_field_by_name(ht_field_name((enum ht_field_id)f)), f);
	assert_int_equal(ht_field_by_name("nosuch"), -1);
	assert_int_equal(ht_field_by_name("long"), HT_F_LONG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kat_nop),
		cmocka_unit_test(test_kat_flush),
		cmocka_unit_test(test_kat_fence),
		cmocka_unit_test(test_kat_rdsized_dword),
		cmocka_unit_test(test_kat_rdsized_byte),
		cmocka_unit_test(test_kat_wrsized_np_prefix),
		cmocka_unit_test(test_kat_wrsized_posted),
		cmocka_unit_test(test_kat_wrsized_byte),
		cmocka_unit_test(test_kat_broadcast),
		cmocka_unit_test(test_kat_atomic),
		cmocka_unit_test(test_kat_rdresponse),
		cmocka_unit_test(test_kat_tgtdone),
		cmocka_unit_test(test_kat_extfc),
		cmocka_unit_test(test_kat_sync),
		cmocka_unit_test(test_reference_packets),
		cmocka_unit_test(test_random_round_trips),
		cmocka_unit_test(test_fast_paths_vs_table),
		cmocka_unit_test(test_prefix_normalisation),
		cmocka_unit_test(test_reserved_commands),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_tgtdone_count),
		cmocka_unit_test(test_atomic_errors),
		cmocka_unit_test(test_byte_write_rules),
		cmocka_unit_test(test_byte_read),
		cmocka_unit_test(test_64byte_rule),
		cmocka_unit_test(test_prefix_errors),
		cmocka_unit_test(test_sync_errors),
		cmocka_unit_test(test_encode_field_errors),
		cmocka_unit_test(test_peek_len),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
