/* SPDX-License-Identifier: BSD-3-Clause
 * HToE wire format (lib/htoe/htoe_wire.[ch], docs/wire-format.md):
 * known-answer frames of every type with and without an 802.1Q tag, CRC32C,
 * every drop reason the wire layer detects, padding, the retransmission
 * helpers, the packet iterator and a round trip over random headers.
 *
 * The known-answer frames below were built independently of the C code, by
 * a few lines of Python from the header table in docs/wire-format.md, with
 * the CRC from python3-crc32c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "htoe/htoe_wire.h"
#include "htoe/htoe_digest.h"
#include "htoe/htoe_lease.h"
#include "htmodel/ht_packet.h"
#include "htmodel/ht_rand.h"

/* data: CRC32C 0x6BB1D261, 78 bytes */
static const uint8_t kat_data[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x11, 0x00,
	0x02, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x07, 0x00, 0x05, 0x00, 0x10, 0x00, 0x20, 0x00, 0x30,
	0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x20, 0x00, 0x00, 0x6b, 0xb1, 0xd2, 0x61, 0x3e, 0x01,
	0x00, 0x00, 0x2c, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11, 0x2c, 0x01,
	0x40, 0x04, 0x10, 0x00, 0x00, 0x00, 0xef, 0xbe, 0xad, 0xde, 0x0d, 0xf0, 0xfe, 0xca,
};
/* data_vlan: CRC32C 0x6BB1D261, 82 bytes */
static const uint8_t kat_data_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x11, 0x00, 0x02, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x07, 0x00, 0x05, 0x00, 0x10,
	0x00, 0x20, 0x00, 0x30, 0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x20, 0x00, 0x00, 0x6b, 0xb1,
	0xd2, 0x61, 0x3e, 0x01, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x44, 0x33,
	0x22, 0x11, 0x2c, 0x01, 0x40, 0x04, 0x10, 0x00, 0x00, 0x00, 0xef, 0xbe, 0xad, 0xde, 0x0d, 0xf0,
	0xfe, 0xca,
};
/* ack: CRC32C 0x9258F7E9, 60 bytes */
static const uint8_t kat_ack[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x12, 0x00,
	0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x12, 0x34, 0x00, 0x10, 0x00, 0x20, 0x00, 0x30,
	0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x92, 0x58, 0xf7, 0xe9, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* ack_vlan: CRC32C 0x9258F7E9, 60 bytes */
static const uint8_t kat_ack_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x12, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x12, 0x34, 0x00, 0x10,
	0x00, 0x20, 0x00, 0x30, 0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x92, 0x58,
	0xf7, 0xe9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* nak: CRC32C 0x230C289D, 60 bytes */
static const uint8_t kat_nak[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x13, 0x00,
	0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x01, 0x02, 0x00, 0x10, 0x00, 0x20, 0x00, 0x30,
	0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x23, 0x0c, 0x28, 0x9d, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* nak_vlan: CRC32C 0x230C289D, 60 bytes */
static const uint8_t kat_nak_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x13, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x01, 0x02, 0x00, 0x10,
	0x00, 0x20, 0x00, 0x30, 0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x00, 0x00, 0x00, 0x23, 0x0c,
	0x28, 0x9d, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* reset: CRC32C 0x390B3966, 60 bytes */
static const uint8_t kat_reset[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x14, 0x04,
	0x00, 0x09, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x39, 0x0b, 0x39, 0x66, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* reset_vlan: CRC32C 0x390B3966, 60 bytes */
static const uint8_t kat_reset_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x14, 0x04, 0x00, 0x09, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x39, 0x0b,
	0x39, 0x66, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* reset_ack: CRC32C 0xCF668AE8, 60 bytes */
static const uint8_t kat_reset_ack[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x15, 0x00,
	0x00, 0x09, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x10, 0x00, 0x08,
	0x00, 0x10, 0x00, 0x08, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0xcf, 0x66, 0x8a, 0xe8, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* reset_ack_vlan: CRC32C 0xCF668AE8, 60 bytes */
static const uint8_t kat_reset_ack_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x15, 0x00, 0x00, 0x09, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
	0x00, 0x10, 0x00, 0x08, 0x00, 0x10, 0x00, 0x08, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0xcf, 0x66,
	0x8a, 0xe8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* ctrl: CRC32C 0xA0B7CABB, 60 bytes */
static const uint8_t kat_ctrl[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x88, 0xb5, 0x16, 0x00,
	0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0xff, 0xff, 0x00, 0x10, 0x00, 0x20, 0x00, 0x30,
	0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x08, 0x00, 0x00, 0xa0, 0xb7, 0xca, 0xbb, 0x48, 0x54,
	0x4f, 0x45, 0x43, 0x54, 0x52, 0x4c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};
/* ctrl_vlan: CRC32C 0xA0B7CABB, 60 bytes */
static const uint8_t kat_ctrl_vlan[] = {
	0x02, 0x48, 0x54, 0x00, 0x00, 0x02, 0x02, 0x48, 0x54, 0x00, 0x00, 0x01, 0x81, 0x00, 0xa0, 0x64,
	0x88, 0xb5, 0x16, 0x00, 0x00, 0x03, 0x00, 0x01, 0x00, 0x02, 0x00, 0x00, 0xff, 0xff, 0x00, 0x10,
	0x00, 0x20, 0x00, 0x30, 0x00, 0x40, 0x00, 0x50, 0x00, 0x60, 0x00, 0x08, 0x00, 0x00, 0xa0, 0xb7,
	0xca, 0xbb, 0x48, 0x54, 0x4f, 0x45, 0x43, 0x54, 0x52, 0x4c, 0x00, 0x00,
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const uint8_t MAC_DST[6] = { 0x02, 0x48, 0x54, 0x00, 0x00, 0x02 };
static const uint8_t MAC_SRC[6] = { 0x02, 0x48, 0x54, 0x00, 0x00, 0x01 };
static const uint16_t CR[6] = { 0x10, 0x20, 0x30, 0x40, 0x50, 0x60 };

/* The two HT packets of the DATA frames: a posted WrSized with a 64-bit
 * address (prefix 0000013E, 0000012C 00000010, data 11223344: reference
 * §12.2), then a posted WrSized of 2 dwords at 0x1004. */
static const uint8_t P1[16] = { 0x3e, 0x01, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00,
				0x10, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11 };
static const uint8_t P2[16] = { 0x2c, 0x01, 0x40, 0x04, 0x10, 0x00, 0x00, 0x00,
				0xef, 0xbe, 0xad, 0xde, 0x0d, 0xf0, 0xfe, 0xca };

struct kat {
	const char *name;
	const uint8_t *frame;
	size_t len;
	struct htoe_hdr h;       /* expected decode (payload_len, crc included) */
	const uint8_t *payload;  /* NULL: none; else payload_len bytes */
};

static uint8_t data_payload[32];
static const uint8_t ctrl_payload[8] = { 'H', 'T', 'O', 'E', 'C', 'T', 'R', 'L' };

static struct kat kats[12];
static size_t nkats;

static void add_kat(const char *name, const uint8_t *frame, size_t len, bool vlan,
		    uint8_t ftype, uint8_t vc, bool cold, uint8_t npkts, uint8_t epoch,
		    uint16_t seq, uint16_t ack, const uint16_t *cr, const uint8_t *payload,
		    uint16_t plen, uint32_t crc)
{
	struct kat *k = &kats[nkats++];

	memset(k, 0, sizeof(*k));
	k->name = name;
	k->frame = frame;
	k->len = len;
	memcpy(k->h.dst, MAC_DST, 6);
	memcpy(k->h.src, MAC_SRC, 6);
	k->h.has_vlan = vlan;
	if (vlan) {
		k->h.pcp = 5;
		k->h.dei = 0;
		k->h.vid = 100;
	}
	k->h.version = 1;
	k->h.ftype = ftype;
	k->h.vc = vc;
	k->h.cold = cold;
	k->h.npkts = npkts;
	k->h.epoch = epoch;
	k->h.src_node = 1;
	k->h.dst_node = 2;
	k->h.seq = seq;
	k->h.ack = ack;
	if (cr)
		memcpy(k->h.credit, cr, sizeof(k->h.credit));
	k->h.payload_len = plen;
	k->h.crc = crc;
	k->payload = payload;
}

static int setup_kats(void **state)
{
	static const uint16_t cr_ra[6] = { 8, 16, 8, 16, 8, 16 };

	(void)state;
	memcpy(data_payload, P1, 16);
	memcpy(data_payload + 16, P2, 16);
	nkats = 0;
	for (int v = 0; v < 2; v++) {
		add_kat(v ? "data_vlan" : "data", v ? kat_data_vlan : kat_data,
			v ? sizeof(kat_data_vlan) : sizeof(kat_data), v,
			HTOE_FT_DATA, 0, false, 2, 3, 7, 5, CR, data_payload, 32, 0x6BB1D261);
		add_kat(v ? "ack_vlan" : "ack", v ? kat_ack_vlan : kat_ack,
			v ? sizeof(kat_ack_vlan) : sizeof(kat_ack), v,
			HTOE_FT_ACK, 0, false, 0, 3, 0, 0x1234, CR, NULL, 0, 0x9258F7E9);
		add_kat(v ? "nak_vlan" : "nak", v ? kat_nak_vlan : kat_nak,
			v ? sizeof(kat_nak_vlan) : sizeof(kat_nak), v,
			HTOE_FT_NAK, 0, false, 0, 3, 0, 0x0102, CR, NULL, 0, 0x230C289D);
		add_kat(v ? "reset_vlan" : "reset", v ? kat_reset_vlan : kat_reset,
			v ? sizeof(kat_reset_vlan) : sizeof(kat_reset), v,
			HTOE_FT_RESET, 0, true, 0, 9, 0, 0, NULL, NULL, 0, 0x390B3966);
		add_kat(v ? "reset_ack_vlan" : "reset_ack", v ? kat_reset_ack_vlan : kat_reset_ack,
			v ? sizeof(kat_reset_ack_vlan) : sizeof(kat_reset_ack), v,
			HTOE_FT_RESET_ACK, 0, false, 0, 9, 0, 0, cr_ra, NULL, 0, 0xCF668AE8);
		add_kat(v ? "ctrl_vlan" : "ctrl", v ? kat_ctrl_vlan : kat_ctrl,
			v ? sizeof(kat_ctrl_vlan) : sizeof(kat_ctrl), v,
			HTOE_FT_CTRL, 0, false, 0, 3, 0, 0xffff, CR, ctrl_payload, 8, 0xA0B7CABB);
	}
	return 0;
}

static void assert_hdr_eq(const struct htoe_hdr *a, const struct htoe_hdr *b)
{
	assert_memory_equal(a->dst, b->dst, 6);
	assert_memory_equal(a->src, b->src, 6);
	assert_int_equal(a->has_vlan, b->has_vlan);
	if (a->has_vlan) {
		assert_int_equal(a->pcp, b->pcp);
		assert_int_equal(a->dei, b->dei);
		assert_int_equal(a->vid, b->vid);
	}
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->ftype, b->ftype);
	assert_int_equal(a->vc, b->vc);
	assert_int_equal(a->cold, b->cold);
	assert_int_equal(a->npkts, b->npkts);
	assert_int_equal(a->epoch, b->epoch);
	assert_int_equal(a->src_node, b->src_node);
	assert_int_equal(a->dst_node, b->dst_node);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->ack, b->ack);
	for (int i = 0; i < HTOE_CR__COUNT; i++)
		assert_int_equal(a->credit[i], b->credit[i]);
	assert_int_equal(a->payload_len, b->payload_len);
	assert_int_equal(a->crc, b->crc);
}

/* Build a frame from h and a payload with the public builder API. */
static int build(const struct htoe_hdr *h, const uint8_t *payload, size_t plen,
		 uint8_t *buf, size_t cap)
{
	struct htoe_hdr w = *h;

	w.payload_len = 0; /* htoe_frame_seal() fills it */
	int off = htoe_hdr_write(&w, buf, cap);

	if (off < 0)
		return off;
	if (plen)
		memcpy(buf + off, payload, plen);
	return htoe_frame_seal(buf, cap, htoe_l2_len(h), plen);
}

/* ------------------------------------------------------------- CRC32C */

static void test_crc32c_check_value(void **state)
{
	(void)state;
	assert_int_equal(htoe_crc32c("123456789", 9), 0xE3069283u);
	assert_int_equal(htoe_crc32c("", 0), 0);
	/* RFC 3720 B.4: 32 bytes of zeros, of ones, incrementing */
	uint8_t b[32];

	memset(b, 0, 32);
	assert_int_equal(htoe_crc32c(b, 32), 0x8A9136AAu);
	memset(b, 0xff, 32);
	assert_int_equal(htoe_crc32c(b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	assert_int_equal(htoe_crc32c(b, 32), 0x46DD794Eu);
	/* chaining */
	assert_int_equal(htoe_crc32c_update(htoe_crc32c("1234", 4), "56789", 5), 0xE3069283u);
}

/* Bit-serial reflected CRC32C, the textbook definition. */
static uint32_t crc32c_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0);
	}
	return ~c;
}

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

/* XINUSE (XGETBV with ECX=1): which XSAVE components are not in their
 * initial state. Bit 2: upper halves of ymm0-15; bit 6: upper halves of
 * zmm0-15. */
static uint64_t xinuse(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
	return (uint64_t)hi << 32 | lo;
}
#endif

/* htoe_crc32c leaves no dirty upper vector state behind (ISA-L's AVX-512 CRC
 * returns without VZEROUPPER; left dirty, SSE/AVX transitions made the
 * bridge's 8..28-byte posted writes about twice as slow). */
static void test_crc32c_clean_upper_state(void **state)
{
	(void)state;
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	uint8_t buf[1500];

	if (!__get_cpuid_count(0xD, 1, &a, &b, &c, &d) || !(a & (1u << 2))) {
		skip(); /* no XGETBV with ECX=1 */
		return;
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	/* every length class ISA-L dispatches on, up to a full frame */
	static const size_t lens[] = { 1, 16, 63, 64, 255, 256, 1024, 1500 };

	for (size_t i = 0; i < ARRAY_SIZE(lens); i++) {
		uint32_t crc = htoe_crc32c(buf, lens[i]);
		uint64_t in_use = xinuse();

		assert_int_equal(crc, crc32c_bitwise(buf, lens[i]));
		assert_int_equal(in_use & ((1u << 2) | (1u << 6)), 0);
	}
#else
	skip();
#endif
}


static void test_crc32c_random_bitwise(void **state)
{
	struct ht_rand r;
	static uint8_t buf[4096];

	(void)state;
	ht_rand_seed(&r, 0xC0FFEE);
	for (int it = 0; it < 300; it++) {
		size_t n = (size_t)ht_rand_below(&r, sizeof(buf) + 1);
		size_t off = (size_t)ht_rand_below(&r, 8); /* unaligned starts */

		if (n + off > sizeof(buf))
			n = sizeof(buf) - off;
		for (size_t i = 0; i < n; i++)
			buf[off + i] = (uint8_t)ht_rand_u64(&r);
		assert_int_equal(htoe_crc32c(buf + off, n), crc32c_bitwise(buf + off, n));
		size_t cut = n ? (size_t)ht_rand_below(&r, n) : 0;

		assert_int_equal(htoe_crc32c_update(htoe_crc32c(buf + off, cut), buf + off + cut,
						    n - cut),
				 crc32c_bitwise(buf + off, n));
	}
}

/* The frame CRC (short payloads by the CRC32 instruction, longer ones by
 * ISA-L) is CRC32C(header bytes 0..27 || payload) for every payload length
 * around the switch between the two, in untagged and tagged frames, and
 * leaves no dirty upper vector state behind either way. */
static void test_frame_crc_lengths(void **state)
{
	static uint8_t f[HTOE_L2_MAX + HTOE_HDR_LEN + 300], ref[HTOE_CRC_COVER_HDR + 300];
	struct ht_rand r;

	(void)state;
	ht_rand_seed(&r, 0xF4A3E);
	for (size_t l2 = HTOE_ETH_HLEN; l2 <= HTOE_L2_MAX; l2 += HTOE_VLAN_HLEN) {
		for (size_t plen = 0; plen <= 300; plen++) {
			for (size_t i = 0; i < sizeof(f); i++)
				f[i] = (uint8_t)ht_rand_u64(&r);
			int n = htoe_frame_seal_data(f, sizeof(f), l2, plen);
			const uint8_t *x = f + l2;

			assert_true(n >= (int)(l2 + HTOE_HDR_LEN + plen));
			memcpy(ref, x, HTOE_CRC_COVER_HDR);
			memcpy(ref + HTOE_CRC_COVER_HDR, x + HTOE_HDR_LEN, plen);
			assert_int_equal(htoe_get_be32(x + HTOE_OFF_CRC),
					 crc32c_bitwise(ref, HTOE_CRC_COVER_HDR + plen));
			assert_int_equal(htoe_get_be16(x + HTOE_OFF_PLEN), plen);
#if defined(__x86_64__) || defined(__i386__)
			unsigned a, b, c, d;

			if (__get_cpuid_count(0xD, 1, &a, &b, &c, &d) && (a & (1u << 2)))
				assert_int_equal(xinuse() & ((1u << 2) | (1u << 6)), 0);
#endif
		}
	}
}

/* Against python3-crc32c: random buffers written as hex lines to a file,
 * one CRC per line read back. Skipped if the module is missing. */
static void test_crc32c_random_python(void **state)
{
	(void)state;
	if (system("/usr/bin/python3 -c 'import crc32c' >/dev/null 2>&1") != 0) {
		print_message("python3-crc32c not installed: skipped\n");
		skip();
	}
	char path[] = "/tmp/htoe_crc32c_XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");

	assert_non_null(f);
	struct ht_rand r;
	enum { N = 200 };
	static uint8_t bufs[N][1024];
	static size_t lens[N];

	ht_rand_seed(&r, 42);
	for (int i = 0; i < N; i++) {
		lens[i] = (size_t)ht_rand_below(&r, 1025);
		for (size_t j = 0; j < lens[i]; j++) {
			bufs[i][j] = (uint8_t)ht_rand_u64(&r);
			fprintf(f, "%02x", bufs[i][j]);
		}
		fputc('\n', f);
	}
	fclose(f);

	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import sys, crc32c\n"
		 "for l in open(sys.argv[1]): print(crc32c.crc32c(bytes.fromhex(l.strip())))' %s",
		 path);
	FILE *p = popen(cmd, "r");

	assert_non_null(p);
	for (int i = 0; i < N; i++) {
		unsigned long v;

		assert_int_equal(fscanf(p, "%lu", &v), 1);
		assert_int_equal((uint32_t)v, htoe_crc32c(bufs[i], lens[i]));
	}
	assert_int_equal(pclose(p), 0);
	unlink(path);
}

/* ------------------------------------------------------------- fixtures */

static void test_fixture_packets_decode(void **state)
{
	struct ht_pkt p;

	(void)state;
	assert_int_equal(ht_decode(P1, sizeof(P1), &p), 16);
	assert_int_equal(p.kind, HT_K_WRSIZED);
	assert_int_equal(p.posted, 1);
	assert_int_equal(p.addr, 0x10000001000ull);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
	assert_int_equal(ht_decode(P2, sizeof(P2), &p), 16);
	assert_int_equal(p.addr, 0x1004);
	assert_int_equal(p.data_len, 8);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
}

/* ------------------------------------------------------------- KAT */

static void test_kat_encode(void **state)
{
	uint8_t buf[128];

	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];

		print_message("encode %s\n", k->name);
		memset(buf, 0xAA, sizeof(buf)); /* padding must be written */
		int n = build(&k->h, k->payload, k->h.payload_len, buf, sizeof(buf));

		assert_int_equal(n, (int)k->len);
		assert_memory_equal(buf, k->frame, k->len);
		assert_int_equal(htoe_l2_len(&k->h), k->h.has_vlan ? 18 : 14);
	}
}

static void test_kat_decode(void **state)
{
	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];
		struct htoe_hdr h;
		const uint8_t *pl = NULL;

		print_message("decode %s\n", k->name);
		assert_int_equal(htoe_frame_parse(k->frame, k->len, HTOE_MTU_DEFAULT, &h, &pl), 0);
		assert_hdr_eq(&h, &k->h);
		assert_ptr_equal(pl, k->frame + htoe_l2_len(&k->h) + HTOE_HDR_LEN);
		if (k->payload)
			assert_memory_equal(pl, k->payload, k->h.payload_len);
		if (h.ftype == HTOE_FT_DATA) { /* ndata: packets with a data packet */
			unsigned nd = 0;

			for (size_t o = 0; o < h.payload_len;) {
				struct ht_pkt p;
				int m = ht_decode(pl + o, h.payload_len - o, &p);

				assert_true(m > 0);
				nd += p.data_len > 0;
				o += (size_t)m;
			}
			assert_int_equal(h.ndata, nd);
		}
		/* the stored CRC is CRC32C(header 0..27 || payload), big-endian */
		const uint8_t *x = k->frame + htoe_l2_len(&k->h);

		assert_int_equal(htoe_crc32c_update(htoe_crc32c(x, 28), pl, h.payload_len), h.crc);
		assert_int_equal(htoe_get_be32(x + 28), h.crc);
	}
}

static void test_kat_data_layout(void **state)
{
	(void)state;
	/* spot checks straight from the header table */
	assert_int_equal(kat_data[12], 0x88);
	assert_int_equal(kat_data[13], 0xB5);
	assert_int_equal(kat_data[14], 0x11); /* version 1, DATA */
	assert_int_equal(kat_data[16], 2);    /* npkts */
	assert_int_equal(kat_data_vlan[12], 0x81);
	assert_int_equal(kat_data_vlan[14], 0xA0); /* PCP 5, DEI 0, VID 100 */
	assert_int_equal(kat_data_vlan[15], 0x64);
	assert_int_equal(kat_reset[15], HTOE_FLAG_COLD);
}

/* ------------------------------------------------------------- drops */

#define PARSE(f, n) htoe_frame_parse((f), (n), HTOE_MTU_DEFAULT, &h, NULL)

static void test_truncation_every_length(void **state)
{
	struct htoe_hdr h;

	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];
		size_t l2 = htoe_l2_len(&k->h);
		size_t need = l2 + HTOE_HDR_LEN + k->h.payload_len;

		for (size_t n = 0; n < k->len; n++) {
			int rc = PARSE(k->frame, n);
			int want;

			if (n < 14 || n < l2 + HTOE_HDR_LEN)
				want = -HTOE_DROP_RUNT;
			else if (n < need)
				want = -HTOE_DROP_LENGTH;
			else
				want = 0; /* only padding cut */
			if (rc != want)
				print_message("%s len %zu: %s\n", k->name, n, htoe_drop_name(rc));
			assert_int_equal(rc, want);
		}
		/* extra bytes after the frame are padding */
		uint8_t big[256];

		memset(big, 0x5A, sizeof(big));
		memcpy(big, k->frame, k->len);
		assert_int_equal(PARSE(big, sizeof(big)), 0);
	}
}

static void test_ethertype(void **state)
{
	uint8_t f[128];
	struct htoe_hdr h;

	(void)state;
	memcpy(f, kat_ack, sizeof(kat_ack));
	f[12] = 0x08;
	f[13] = 0x00;
	assert_int_equal(PARSE(f, sizeof(kat_ack)), -HTOE_DROP_ETHERTYPE);
	f[12] = 0x88;
	f[13] = 0xB6;
	assert_int_equal(PARSE(f, sizeof(kat_ack)), -HTOE_DROP_ETHERTYPE);
	/* 802.1ad S-tag outside */
	memcpy(f, kat_ack_vlan, sizeof(kat_ack_vlan));
	f[12] = 0x88;
	f[13] = 0xA8;
	assert_int_equal(PARSE(f, sizeof(kat_ack_vlan)), -HTOE_DROP_ETHERTYPE);
	/* tagged, inner EtherType wrong */
	memcpy(f, kat_ack_vlan, sizeof(kat_ack_vlan));
	f[16] = 0x08;
	f[17] = 0x00;
	assert_int_equal(PARSE(f, sizeof(kat_ack_vlan)), -HTOE_DROP_ETHERTYPE);

	/* double tags: 8100 8100 and 8100 88A8, then a valid HToE frame */
	for (int t = 0; t < 2; t++) {
		memcpy(f, kat_ack_vlan, 16);
		f[16] = t ? 0x88 : 0x81;
		f[17] = t ? 0xA8 : 0x00;
		f[18] = 0x00;
		f[19] = 0x07;
		memcpy(f + 20, kat_ack_vlan + 16, sizeof(kat_ack_vlan) - 16);
		assert_int_equal(PARSE(f, sizeof(kat_ack_vlan) + 4), -HTOE_DROP_ETHERTYPE);
	}
}

/* Modify byte `off` of the HToE header of a copy of kat k, re-seal. */
static int parse_modified(const struct kat *k, size_t off, uint8_t and_mask,
			  uint8_t or_mask, bool reseal)
{
	uint8_t f[128];
	struct htoe_hdr h;
	size_t l2 = htoe_l2_len(&k->h);

	memcpy(f, k->frame, k->len);
	f[l2 + off] = (uint8_t)((f[l2 + off] & and_mask) | or_mask);
	if (reseal)
		assert_int_equal(htoe_frame_reseal(f, k->len), 0);
	return htoe_frame_parse(f, k->len, HTOE_MTU_DEFAULT, &h, NULL);
}

static void test_version_and_type(void **state)
{
	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];

		for (unsigned v = 0; v < 16; v++) {
			if (v == 1)
				continue;
			assert_int_equal(parse_modified(k, 0, 0x0F, (uint8_t)(v << 4), true),
					 -HTOE_DROP_VERSION);
		}
		for (unsigned t = 0; t < 16; t++) {
			if (t >= 1 && t <= 6)
				continue;
			assert_int_equal(parse_modified(k, 0, 0xF0, (uint8_t)t, true),
					 -HTOE_DROP_TYPE);
			/* the type check comes before the CRC */
			assert_int_equal(parse_modified(k, 0, 0xF0, (uint8_t)t, false),
					 -HTOE_DROP_TYPE);
		}
	}
}

static void test_reserved_bits(void **state)
{
	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];

		for (int b = 5; b < 8; b++) /* bit 3 CREDIT_REQ, bit 4 SACK: below */
			assert_int_equal(parse_modified(k, 1, 0xFF, (uint8_t)(1u << b), true),
					 -HTOE_DROP_RESERVED);
		for (int b = 0; b < 16; b++)
			assert_int_equal(parse_modified(k, 26 + (size_t)b / 8, 0xFF,
							(uint8_t)(1u << (b % 8)), true),
					 -HTOE_DROP_RESERVED);
		/* VC 3 never valid; VC != 0 only in DATA */
		assert_int_equal(parse_modified(k, 1, 0xFC, 3, true), -HTOE_DROP_RESERVED);
		if (k->h.ftype != HTOE_FT_DATA) {
			assert_int_equal(parse_modified(k, 1, 0xFC, 1, true), -HTOE_DROP_RESERVED);
			assert_int_equal(parse_modified(k, 1, 0xFC, 2, true), -HTOE_DROP_RESERVED);
		}
		/* seq only in DATA, and as the nonce of RESET and RESET_ACK */
		if (!htoe_ftype_has_seq(k->h.ftype)) {
			assert_int_equal(parse_modified(k, 9, 0xFF, 1, true), -HTOE_DROP_RESERVED);
			assert_int_equal(parse_modified(k, 8, 0xFF, 0x80, true), -HTOE_DROP_RESERVED);
		} else if (k->h.ftype != HTOE_FT_DATA) {
			assert_int_equal(parse_modified(k, 9, 0xFF, 1, true), 0);
		}
		/* COLD only in RESET and RESET_ACK */
		int want = (k->h.ftype == HTOE_FT_RESET || k->h.ftype == HTOE_FT_RESET_ACK)
				   ? 0 : -HTOE_DROP_RESERVED;

		assert_int_equal(parse_modified(k, 1, 0xFF, HTOE_FLAG_COLD, true), want);
		/* CREDIT_REQ only in ACK */
		want = k->h.ftype == HTOE_FT_ACK ? 0 : -HTOE_DROP_RESERVED;
		assert_int_equal(parse_modified(k, 1, 0xFF, HTOE_FLAG_CREDIT_REQ, true), want);
		/* SACK: a capability in RESET and RESET_ACK; in ACK and NAK it
		 * announces a SACK block, so one without a payload is too short;
		 * never in DATA or CTRL */
		switch (k->h.ftype) {
		case HTOE_FT_RESET: case HTOE_FT_RESET_ACK: want = 0; break;
		case HTOE_FT_ACK: case HTOE_FT_NAK: want = -HTOE_DROP_LENGTH; break;
		default: want = -HTOE_DROP_RESERVED; break;
		}
		assert_int_equal(parse_modified(k, 1, 0xFF, HTOE_FLAG_SACK, true), want);
	}
}

static void test_crc_every_bit(void **state)
{
	uint8_t f[128];
	struct htoe_hdr h;

	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];
		size_t l2 = htoe_l2_len(&k->h);
		size_t end = l2 + HTOE_HDR_LEN + k->h.payload_len;

		for (size_t bit = 0; bit < k->len * 8; bit++) {
			size_t byte = bit / 8;

			memcpy(f, k->frame, k->len);
			f[byte] ^= (uint8_t)(1u << (bit % 8));
			int rc = PARSE(f, k->len);

			if (byte < 12 || byte >= end) {
				/* MACs and padding are not covered (and not checked) */
				assert_int_equal(rc, 0);
			} else if (k->h.has_vlan && (byte == 14 || byte == 15)) {
				assert_int_equal(rc, 0); /* TCI: any value is fine */
			} else if (byte < l2) {
				assert_int_equal(rc, -HTOE_DROP_ETHERTYPE);
			} else if (byte == l2 || byte == l2 + HTOE_OFF_PLEN ||
				   byte == l2 + HTOE_OFF_PLEN + 1) {
				/* version/type and payload length are checked first */
				assert_true(rc == -HTOE_DROP_VERSION || rc == -HTOE_DROP_TYPE ||
					    rc == -HTOE_DROP_LENGTH || rc == -HTOE_DROP_CRC);
			} else {
				if (rc != -HTOE_DROP_CRC)
					print_message("%s bit %zu: %s\n", k->name, bit,
						      htoe_drop_name(rc));
				assert_int_equal(rc, -HTOE_DROP_CRC);
			}
		}
		/* the VLAN TCI is not covered either */
		if (k->h.has_vlan) {
			memcpy(f, k->frame, k->len);
			f[14] ^= 0xFF;
			f[15] ^= 0xFF;
			assert_int_equal(PARSE(f, k->len), 0);
			assert_int_equal(h.pcp, 2);
			assert_int_equal(h.dei, 1);
			assert_int_equal(h.vid, 0xF9B);
		}
	}
}

/* Build a DATA frame from raw payload bytes with the given npkts/vc,
 * bypassing nothing: the builder accepts any payload. */
static int data_frame(uint8_t *f, size_t cap, const uint8_t *pl, size_t plen,
		      unsigned npkts, unsigned vc)
{
	struct htoe_hdr h = kats[0].h;

	h.npkts = (uint8_t)npkts;
	h.vc = (uint8_t)vc;
	return build(&h, pl, plen, f, cap);
}

static void test_payload_length(void **state)
{
	uint8_t f[2048], pl[64];
	struct htoe_hdr h;
	int n;

	(void)state;
	/* payload length shorter than the HT packets: last packet runs off */
	n = data_frame(f, sizeof(f), data_payload, 28, 2, 0);
	assert_true(n > 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_LENGTH);
	/* 2 stray bytes after the packets */
	memcpy(pl, data_payload, 32);
	pl[32] = pl[33] = 0;
	n = data_frame(f, sizeof(f), pl, 34, 2, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_LENGTH);
	/* 3 bytes: less than one dword */
	n = data_frame(f, sizeof(f), pl, 3, 1, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_LENGTH);
	/* DATA with no payload */
	n = data_frame(f, sizeof(f), pl, 0, 1, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_LENGTH);
	/* payload length larger than the frame */
	n = data_frame(f, sizeof(f), data_payload, 32, 2, 0);
	assert_int_equal(PARSE(f, (size_t)n - 1), -HTOE_DROP_LENGTH);
	f[14 + HTOE_OFF_PLEN + 1] = 0x24; /* 36 > 32 present */
	assert_int_equal(htoe_frame_reseal(f, sizeof(f)), 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_LENGTH);

	/* a payload on a type that has none: rewrite an ACK by hand */
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];

		if (htoe_ftype_has_payload(k->h.ftype))
			continue;
		size_t l2 = htoe_l2_len(&k->h);

		memcpy(f, k->frame, k->len);
		htoe_put_be16(f + l2 + HTOE_OFF_PLEN, 4);
		assert_int_equal(htoe_frame_reseal(f, k->len), 0);
		assert_int_equal(PARSE(f, k->len), -HTOE_DROP_LENGTH);
	}
}

/* Posted WrSized dword, 32-bit address, ndw data dwords, UnitID 1. */
static size_t mk_wr_posted(uint8_t *b, uint32_t addr, unsigned ndw)
{
	uint32_t d0 = 0x2C | 1u << 8 | (ndw - 1) << 22 | ((addr >> 2) & 0x3F) << 26;

	b[0] = (uint8_t)d0;
	b[1] = (uint8_t)(d0 >> 8);
	b[2] = (uint8_t)(d0 >> 16);
	b[3] = (uint8_t)(d0 >> 24);
	b[4] = (uint8_t)(addr >> 8);
	b[5] = (uint8_t)(addr >> 16);
	b[6] = (uint8_t)(addr >> 24);
	b[7] = 0;
	for (unsigned i = 0; i < 4 * ndw; i++)
		b[8 + i] = (uint8_t)(i * 7 + addr);
	return 8 + 4 * ndw;
}

/* RdSized dword (NP), UnitID 1, SrcTag tag, ndw dwords. */
static size_t mk_rd(uint8_t *b, uint32_t addr, unsigned ndw, unsigned tag)
{
	uint32_t d0 = 0x14 | 1u << 8 | tag << 16 | (ndw - 1) << 22 | ((addr >> 2) & 0x3F) << 26;

	b[0] = (uint8_t)d0;
	b[1] = (uint8_t)(d0 >> 8);
	b[2] = (uint8_t)(d0 >> 16);
	b[3] = (uint8_t)(d0 >> 24);
	b[4] = (uint8_t)(addr >> 8);
	b[5] = (uint8_t)(addr >> 16);
	b[6] = (uint8_t)(addr >> 24);
	b[7] = 0;
	return 8;
}

/* TgtDone (R), UnitID 1, SrcTag tag. */
static size_t mk_tgtdone(uint8_t *b, unsigned tag)
{
	b[0] = 0x33;
	b[1] = 0x01;
	b[2] = (uint8_t)tag;
	b[3] = 0;
	return 4;
}

/* RdResponse (R) with ndw data dwords. */
static size_t mk_rdresp(uint8_t *b, unsigned tag, unsigned ndw)
{
	uint32_t d0 = 0x30 | 1u << 8 | tag << 16 | (ndw - 1) << 22;

	b[0] = (uint8_t)d0;
	b[1] = (uint8_t)(d0 >> 8);
	b[2] = (uint8_t)(d0 >> 16);
	b[3] = (uint8_t)(d0 >> 24);
	for (unsigned i = 0; i < 4 * ndw; i++)
		b[4 + i] = (uint8_t)(0xA0 + i);
	return 4 + 4 * ndw;
}

static void test_builders_decode(void **state)
{
	uint8_t b[128];
	struct ht_pkt p;
	size_t n;

	(void)state;
	n = mk_wr_posted(b, 0x2000, 16);
	assert_int_equal(ht_decode(b, n, &p), (int)n);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_P);
	n = mk_rd(b, 0x3040, 4, 9);
	assert_int_equal(ht_decode(b, n, &p), (int)n);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_NP);
	n = mk_tgtdone(b, 9);
	assert_int_equal(ht_decode(b, n, &p), (int)n);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_R);
	n = mk_rdresp(b, 9, 4);
	assert_int_equal(ht_decode(b, n, &p), (int)n);
	assert_int_equal(ht_pkt_vc(&p), HT_VC_R);
}

static void test_count_mismatch(void **state)
{
	uint8_t f[256];
	struct htoe_hdr h;
	int n;

	(void)state;
	n = data_frame(f, sizeof(f), data_payload, 32, 1, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_COUNT);
	n = data_frame(f, sizeof(f), data_payload, 32, 3, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_COUNT);
	n = data_frame(f, sizeof(f), data_payload, 32, 255, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_COUNT);
	n = data_frame(f, sizeof(f), data_payload, 32, 2, 0);
	assert_int_equal(PARSE(f, (size_t)n), 0);
	/* npkts 0 in a DATA frame */
	assert_int_equal(htoe_frame_set_npkts(f, (size_t)n, 0), 0);
	assert_int_equal(htoe_frame_reseal(f, (size_t)n), 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_COUNT);
	/* npkts != 0 in the other types */
	for (size_t i = 0; i < nkats; i++)
		if (kats[i].h.ftype != HTOE_FT_DATA)
			assert_int_equal(parse_modified(&kats[i], 2, 0, 1, true),
					 -HTOE_DROP_COUNT);
}

static void test_vc_mismatch(void **state)
{
	uint8_t f[256], pl[128];
	struct htoe_hdr h;
	size_t o;
	int n;

	(void)state;
	/* P packets announced as NP and as R */
	for (unsigned vc = 1; vc <= 2; vc++) {
		n = data_frame(f, sizeof(f), data_payload, 32, 2, vc);
		assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_VC);
	}
	/* a P packet followed by an R packet */
	o = mk_wr_posted(pl, 0x100, 1);
	o += mk_tgtdone(pl + o, 3);
	n = data_frame(f, sizeof(f), pl, o, 2, 0);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_VC);
	n = data_frame(f, sizeof(f), pl, o, 2, 2);
	assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_VC);
	/* NP and R frames that are fine */
	o = mk_rd(pl, 0x3040, 4, 1);
	o += mk_rd(pl + o, 0x3080, 16, 2);
	n = data_frame(f, sizeof(f), pl, o, 2, 1);
	assert_int_equal(PARSE(f, (size_t)n), 0);
	assert_int_equal(h.vc, 1);
	o = mk_tgtdone(pl, 1);
	o += mk_rdresp(pl + o, 2, 16);
	n = data_frame(f, sizeof(f), pl, o, 2, 2);
	assert_int_equal(PARSE(f, (size_t)n), 0);
	assert_int_equal(h.vc, 2);
}

static void test_info_packets_inside(void **state)
{
	static const uint8_t nop[4] = { 0x00, 0x00, 0x00, 0x00 };
	static const uint8_t nop_cr[4] = { 0x00, 0x25, 0x03, 0x05 };
	static const uint8_t sync[4] = { 0xff, 0xff, 0xff, 0xff };
	static const uint8_t extfc[4] = { 0x37, 0x00, 0x00, 0x00 };
	const uint8_t *info[] = { nop, nop_cr, sync, extfc };
	uint8_t f[256], pl[64];
	struct htoe_hdr h;
	struct ht_pkt p;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(info); i++) {
		assert_int_equal(ht_decode(info[i], 4, &p), 4);
		assert_int_equal(ht_pkt_vc(&p), HT_VC_NONE);
		/* between, first, last */
		for (int pos = 0; pos < 3; pos++) {
			size_t o = 0;

			if (pos == 1) {
				memcpy(pl, info[i], 4);
				o = 4;
			}
			memcpy(pl + o, P1, 16);
			o += 16;
			if (pos == 0) {
				memcpy(pl + o, info[i], 4);
				o += 4;
			}
			memcpy(pl + o, P2, 16);
			o += 16;
			if (pos == 2) {
				memcpy(pl + o, info[i], 4);
				o += 4;
			}
			int n = data_frame(f, sizeof(f), pl, o, 3, 0);

			assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_VC);
		}
	}
}

static void test_ht_malformed(void **state)
{
	/* reserved command 0x01; prefix with extension type 01; prefix before
	 * a non-request (TgtDone); Sync with a zero bit; TgtDone with Count 1 */
	static const uint8_t bad[][8] = {
		{ 0x01, 0x00, 0x00, 0x00 },
		{ 0x7e, 0x01, 0x00, 0x00, 0x2c, 0x01, 0x00, 0x00 },
		{ 0x3e, 0x01, 0x00, 0x00, 0x33, 0x01, 0x00, 0x00 },
		{ 0x3f, 0xff, 0xff, 0xfe },
		{ 0x33, 0x01, 0x40, 0x00 },
	};
	static const size_t blen[] = { 4, 8, 8, 4, 4 };
	uint8_t f[256], pl[64];
	struct htoe_hdr h;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memcpy(pl, P1, 16);
		memcpy(pl + 16, bad[i], blen[i]);
		int n = data_frame(f, sizeof(f), pl, 16 + blen[i], 2, 0);

		print_message("malformed %zu\n", i);
		assert_int_equal(PARSE(f, (size_t)n), -HTOE_DROP_HT_MALFORMED);
		/* the same through htoe_payload_check() */
		assert_int_equal(htoe_payload_check(pl, 16 + blen[i], 2, 0),
				 -HTOE_DROP_HT_MALFORMED);
	}
}

/* n posted writes filling exactly `bytes` of payload (bytes % 4 == 0,
 * bytes >= 12); returns the packet count. */
static unsigned fill_posted(uint8_t *pl, size_t bytes)
{
	size_t o = 0;
	unsigned n = 0;
	uint32_t addr = 0x10000;

	while (bytes - o > 0) {
		size_t rem = bytes - o;
		unsigned ndw;

		if (rem >= 72 + 12 || rem == 72)
			ndw = 16;
		else if (rem > 72)
			ndw = (unsigned)(rem - 8 - 12) / 4; /* leave 12 for a last one */
		else
			ndw = (unsigned)(rem - 8) / 4;
		o += mk_wr_posted(pl + o, addr, ndw);
		addr += 64;
		n++;
	}
	assert_int_equal(o, bytes);
	return n;
}

static void test_mtu(void **state)
{
	static uint8_t f[HTOE_FRAME_MAX], pl[HTOE_MTU_MAX];
	struct htoe_hdr h;

	(void)state;
	/* exactly MTU 1500: payload 1468 */
	unsigned np = fill_posted(pl, 1500 - 32);
	int n = data_frame(f, sizeof(f), pl, 1500 - 32, np, 0);

	assert_int_equal(n, 14 + 1500);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 1500, &h, NULL), 0);
	assert_int_equal(h.npkts, np);
	assert_int_equal(h.ndata, np); /* posted writes: each has data */
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 1499, &h, NULL), -HTOE_DROP_LENGTH);
	/* one dword over */
	np = fill_posted(pl, 1500 - 32 + 12);
	n = data_frame(f, sizeof(f), pl, 1500 - 32 + 12, np, 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 1500, &h, NULL), -HTOE_DROP_LENGTH);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 9000, &h, NULL), 0);
	/* jumbo: MTU 9000 exactly; the MTU argument is clamped to 9000 */
	np = fill_posted(pl, 9000 - 32);
	assert_true(np <= 255);
	n = data_frame(f, sizeof(f), pl, 9000 - 32, np, 0);
	assert_int_equal(n, 14 + 9000);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 9000, &h, NULL), 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 100000, &h, NULL), 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 8999, &h, NULL), -HTOE_DROP_LENGTH);
	/* small MTU: 64 allows 32 bytes of payload; the argument is clamped up */
	n = data_frame(f, sizeof(f), data_payload, 32, 2, 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 64, &h, NULL), 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 10, &h, NULL), 0);
	/* CTRL obeys the MTU too */
	struct htoe_hdr c = kats[5].h;

	n = build(&c, pl, 33, f, sizeof(f));
	assert_true(n > 0);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 64, &h, NULL), -HTOE_DROP_LENGTH);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 10, &h, NULL), -HTOE_DROP_LENGTH);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 0, &h, NULL), -HTOE_DROP_LENGTH);
	assert_int_equal(htoe_frame_parse(f, (size_t)n, 65, &h, NULL), 0);
	/* the builder refuses more than HTOE_MTU_MAX */
	assert_int_equal(data_frame(f, sizeof(f), pl, 9000 - 32 + 4, 1, 0), -EMSGSIZE);
}

/* ------------------------------------------------------------- builder */

static void test_padding(void **state)
{
	uint8_t f[128];
	struct htoe_hdr h = kats[1].h; /* ACK */

	(void)state;
	for (int v = 0; v < 2; v++) {
		h.has_vlan = v;
		memset(f, 0xEE, sizeof(f));
		int n = build(&h, NULL, 0, f, sizeof(f));

		assert_int_equal(n, HTOE_MIN_FRAME);
		for (size_t i = htoe_l2_len(&h) + HTOE_HDR_LEN; i < 60; i++)
			assert_int_equal(f[i], 0);
		assert_int_equal(f[60], 0xEE); /* nothing written past the frame */
		/* cap must hold the padding */
		assert_int_equal(build(&h, NULL, 0, f, 59), -ENOSPC);
		assert_int_equal(build(&h, NULL, 0, f, 60), 60);
	}
	/* a CTRL frame with 13 bytes of payload: 14+32+13 = 59 -> 60 */
	struct htoe_hdr c = kats[5].h;

	memset(f, 0xEE, sizeof(f));
	assert_int_equal(build(&c, (const uint8_t *)"0123456789abc", 13, f, sizeof(f)), 60);
	assert_int_equal(f[59], 0);
	assert_int_equal(build(&c, (const uint8_t *)"0123456789abcd", 14, f, sizeof(f)), 60);
	assert_int_equal(f[59], 'd');
	assert_int_equal(build(&c, (const uint8_t *)"0123456789abcde", 15, f, sizeof(f)), 61);
	/* every padding length, 14 bytes down to 1: zeros, and nothing past */
	for (size_t plen = 0; plen < 14; plen++) {
		static const uint8_t pl[14] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

		memset(f, 0xEE, sizeof(f));
		assert_int_equal(build(&c, pl, plen, f, sizeof(f)), 60);
		assert_memory_equal(f + 46, pl, plen);
		for (size_t i = 46 + plen; i < 60; i++)
			assert_int_equal(f[i], 0);
		assert_int_equal(f[60], 0xEE);
	}
}

static void test_builder_errors(void **state)
{
	uint8_t f[128];
	struct htoe_hdr h;

	(void)state;
	h = kats[1].h; /* ACK */
	assert_int_equal(htoe_hdr_write(&h, f, 45), -ENOSPC);
	assert_int_equal(htoe_hdr_write(&h, f, 46), 46);
	h.has_vlan = true;
	assert_int_equal(htoe_hdr_write(&h, f, 49), -ENOSPC);
	assert_int_equal(htoe_hdr_write(&h, f, 50), 50);
	h.vid = 4096;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[1].h;
	h.ftype = 0;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h.ftype = 7;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[1].h;
	h.vc = 1;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[1].h;
	h.seq = 1;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[1].h;
	h.npkts = 1;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[1].h;
	h.cold = true;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	h = kats[0].h;
	h.vc = 3;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), -EINVAL);
	/* payload on an ACK */
	h = kats[1].h;
	h.payload_len = 0;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), 46);
	assert_int_equal(htoe_frame_seal(f, sizeof(f), 14, 4), -EINVAL);
	/* wrong l2 length */
	assert_int_equal(htoe_frame_seal(f, sizeof(f), 18, 0), -EINVAL);
	assert_int_equal(htoe_frame_seal(f, sizeof(f), 16, 0), -EINVAL);
	/* not an HToE frame */
	f[13] = 0;
	assert_int_equal(htoe_frame_seal(f, sizeof(f), 14, 0), -EINVAL);
	assert_int_equal(htoe_frame_reseal(f, sizeof(f)), -EINVAL);
	/* payload does not fit */
	h = kats[0].h;
	h.payload_len = 0;
	assert_int_equal(htoe_hdr_write(&h, f, sizeof(f)), 46);
	assert_int_equal(htoe_frame_seal(f, 78, 14, 32), 78);
	assert_int_equal(htoe_frame_seal(f, 77, 14, 32), -ENOSPC);
	/* reseal with a payload length beyond the buffer */
	assert_int_equal(htoe_frame_reseal(f, 77), -EINVAL);
	assert_int_equal(htoe_frame_set_npkts(f, 78, 256), -EINVAL);
}

/* A sealed frame whose ack and credit fields were edited in place gets
 * the CRC of a frame built with those values (htoe_frame_reseal). */
static void test_reseal(void **state)
{
	uint8_t f[128], g[128];
	struct htoe_hdr h;
	static const uint16_t cr2[6] = { 1, 2, 3, 4, 5, 0xFFFF };

	(void)state;
	for (size_t i = 0; i < nkats; i++) {
		const struct kat *k = &kats[i];
		uint8_t *x;

		memcpy(f, k->frame, k->len);
		x = f + htoe_l2_len(&k->h);
		htoe_put_be16(x + HTOE_OFF_ACK, 0xBEEF);
		for (int c = 0; c < 6; c++)
			htoe_put_be16(x + HTOE_OFF_CREDIT + 2 * c, cr2[c]);
		assert_int_not_equal(PARSE(f, k->len), 0); /* the old CRC */
		assert_int_equal(htoe_frame_reseal(f, k->len), 0);
		assert_int_equal(PARSE(f, k->len), 0);
		assert_int_equal(h.ack, 0xBEEF);
		for (int c = 0; c < 6; c++)
			assert_int_equal(h.credit[c], cr2[c]);
		/* identical to a frame built with those values */
		struct htoe_hdr e = k->h;

		e.ack = 0xBEEF;
		memcpy(e.credit, cr2, sizeof(cr2));
		assert_int_equal(build(&e, k->payload, k->h.payload_len, g, sizeof(g)), (int)k->len);
		assert_memory_equal(f, g, k->len);
	}
}

static void test_iterator(void **state)
{
	struct htoe_hdr h;
	const uint8_t *pl = NULL, *pkt;
	size_t n;
	struct htoe_pkt_iter it;

	(void)state;
	assert_int_equal(htoe_frame_parse(kat_data_vlan, sizeof(kat_data_vlan), 1500, &h, &pl), 0);
	htoe_pkt_iter_init(&it, pl, h.payload_len);
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), 1);
	assert_ptr_equal(pkt, pl);
	assert_int_equal(n, 16);
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), 1);
	assert_ptr_equal(pkt, pl + 16);
	assert_int_equal(n, 16);
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), 0);
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), 0);
	assert_int_equal(it.idx, 2);
	/* unchecked garbage: errors, not overruns */
	static const uint8_t cut[] = { 0x2c, 0x01, 0x40, 0x04, 0x10, 0x00, 0x00, 0x00, 0xef };
	static const uint8_t rsv[] = { 0x01, 0x00, 0x00, 0x00 };

	htoe_pkt_iter_init(&it, cut, sizeof(cut));
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), -HTOE_DROP_LENGTH);
	htoe_pkt_iter_init(&it, rsv, sizeof(rsv));
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), -HTOE_DROP_HT_MALFORMED);
	htoe_pkt_iter_init(&it, rsv, 2);
	assert_int_equal(htoe_pkt_iter_next(&it, &pkt, &n), -HTOE_DROP_LENGTH);
}

static void test_drop_names(void **state)
{
	(void)state;
	for (int i = 0; i < HTOE_DROP__COUNT; i++) {
		const char *a = htoe_drop_name(i);

		assert_string_not_equal(a, "?");
		assert_string_equal(a, htoe_drop_name(-i));
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a, htoe_drop_name(j));
	}
	assert_string_equal(htoe_drop_name(HTOE_DROP__COUNT), "?");
	assert_string_equal(htoe_drop_name(-1000), "?");
	assert_string_equal(htoe_drop_name(-HTOE_DROP_CRC), "crc");
	assert_string_equal(htoe_ftype_name(HTOE_FT_RESET_ACK), "RESET_ACK");
	assert_string_equal(htoe_ftype_name(0), "?");
	assert_string_equal(htoe_ftype_name(7), "?");
}

/* ------------------------------------------------------------- random */

static size_t random_payload(struct ht_rand *r, unsigned vc, uint8_t *pl, size_t cap,
			     unsigned *npkts)
{
	size_t o = 0;
	unsigned want = 1 + (unsigned)ht_rand_below(r, 12);

	*npkts = 0;
	while (*npkts < want && cap - o >= 80) {
		unsigned ndw = 1 + (unsigned)ht_rand_below(r, 16);
		uint32_t addr = (uint32_t)ht_rand_below(r, 1u << 20) & ~63u;

		switch (vc) {
		case 0:
			o += mk_wr_posted(pl + o, addr, ndw);
			break;
		case 1:
			o += mk_rd(pl + o, addr, ndw, (unsigned)ht_rand_below(r, 32));
			break;
		default:
			if (ht_rand_below(r, 2))
				o += mk_tgtdone(pl + o, (unsigned)ht_rand_below(r, 32));
			else
				o += mk_rdresp(pl + o, (unsigned)ht_rand_below(r, 32), ndw);
		}
		(*npkts)++;
	}
	return o;
}

static void test_random_round_trip(void **state)
{
	struct ht_rand r;
	static uint8_t f[HTOE_FRAME_MAX], pl[1500];

	(void)state;
	ht_rand_seed(&r, 0x48544F45);
	for (int it = 0; it < 20000; it++) {
		struct htoe_hdr h, d;

		memset(&h, 0, sizeof(h));
		for (int i = 0; i < 6; i++) {
			h.dst[i] = (uint8_t)ht_rand_u64(&r);
			h.src[i] = (uint8_t)ht_rand_u64(&r);
		}
		h.has_vlan = ht_rand_below(&r, 2);
		if (h.has_vlan) {
			h.pcp = (uint8_t)ht_rand_below(&r, 8);
			h.dei = (uint8_t)ht_rand_below(&r, 2);
			h.vid = (uint16_t)ht_rand_below(&r, 4096);
		}
		h.version = 1;
		h.ftype = (uint8_t)ht_rand_range(&r, HTOE_FT_MIN, HTOE_FT_MAX);
		h.epoch = (uint8_t)ht_rand_u64(&r);
		h.src_node = (uint16_t)ht_rand_u64(&r);
		h.dst_node = (uint16_t)ht_rand_u64(&r);
		h.ack = (uint16_t)ht_rand_u64(&r);
		for (int i = 0; i < 6; i++)
			h.credit[i] = (uint16_t)ht_rand_u64(&r);
		if (h.ftype == HTOE_FT_RESET || h.ftype == HTOE_FT_RESET_ACK)
			h.cold = ht_rand_below(&r, 2);
		size_t plen = 0;

		if (h.ftype == HTOE_FT_DATA) {
			unsigned np;

			h.vc = (uint8_t)ht_rand_below(&r, 3);
			h.seq = (uint16_t)ht_rand_u64(&r);
			plen = random_payload(&r, h.vc, pl, sizeof(pl) - 32, &np);
			h.npkts = (uint8_t)np;
		} else if (h.ftype == HTOE_FT_CTRL) {
			plen = (size_t)ht_rand_below(&r, 200);
			for (size_t i = 0; i < plen; i++)
				pl[i] = (uint8_t)ht_rand_u64(&r);
		}
		int n = build(&h, pl, plen, f, sizeof(f));

		assert_true(n >= 60);
		assert_int_equal((size_t)n, plen + htoe_l2_len(&h) + 32 < 60
				 ? 60 : plen + htoe_l2_len(&h) + 32);
		const uint8_t *p = NULL;
		int rc = htoe_frame_parse(f, (size_t)n, HTOE_MTU_DEFAULT, &d, &p);

		if (rc)
			print_message("iteration %d: %s\n", it, htoe_drop_name(rc));
		assert_int_equal(rc, 0);
		h.payload_len = (uint16_t)plen;
		h.crc = d.crc;
		assert_hdr_eq(&d, &h);
		assert_int_equal(d.crc, htoe_crc32c_update(htoe_crc32c(f + htoe_l2_len(&h), 28),
							    pl, plen));
		if (plen)
			assert_memory_equal(p, pl, plen);
		if (h.ftype == HTOE_FT_DATA) {
			/* the bridge's DATA path: the VL's template, the frame's
			 * fields over a copy of it, the seal without re-reading:
			 * the same bytes (dei is not part of a template: 0) */
			static uint8_t g[HTOE_FRAME_MAX];
			struct htoe_hdr_tmpl t;
			struct htoe_hdr z = h;
			int off, m;

			z.dei = 0;
			n = build(&z, pl, plen, f, sizeof(f));
			memset(&t, 0xee, sizeof(t));
			assert_int_equal(htoe_hdr_template(&z, &t), 0);
			memset(g, 0xa5, sizeof(g));
			off = htoe_hdr_data(&t, g, sizeof(g), z.vc, z.npkts, z.epoch, z.seq, z.ack,
					    z.credit);
			assert_int_equal(off, (int)htoe_l2_len(&z) + 32);
			memcpy(g + off, pl, plen);
			m = htoe_frame_seal_data(g, sizeof(g), t.l2, plen);
			assert_int_equal(m, n);
			assert_memory_equal(g, f, (size_t)n);
			assert_int_equal(htoe_hdr_data(&t, g, (size_t)off - 1, z.vc, z.npkts, z.epoch,
						       z.seq, z.ack, z.credit), -ENOSPC);
			/* room for the header only (less than the template):
			 * the same header as the frame's before its seal (no
			 * payload length, no CRC), nothing written past it */
			static uint8_t g2[HTOE_FRAME_MAX], e[HTOE_FRAME_MAX];

			memcpy(e, f, (size_t)off);
			memset(e + t.l2 + HTOE_OFF_PLEN, 0, 2);
			memset(e + t.l2 + HTOE_OFF_CRC, 0, 4);
			memset(g2, 0xa5, sizeof(g2));
			assert_int_equal(htoe_hdr_data(&t, g2, (size_t)off, z.vc, z.npkts, z.epoch,
						       z.seq, z.ack, z.credit), off);
			assert_memory_equal(g2, e, (size_t)off);
			assert_int_equal(g2[off], 0xa5);
		}
	}
	/* a template refuses what a header would */
	struct htoe_hdr bad = { .has_vlan = true, .pcp = 8 };
	struct htoe_hdr_tmpl t;

	assert_int_equal(htoe_hdr_template(&bad, &t), -EINVAL);
}

/* The bridge's parse (with descriptors, where a one-packet frame's parse is
 * its check) and the plain one agree on every frame: DATA frames of one
 * and of a few packets with each payload byte changed, and with another
 * packet count or VC (the CRC made right again each time); the descriptors
 * are ht_desc_parse()'s, packet by packet. */
static void test_parse_desc_agrees(void **state)
{
	struct ht_rand r;
	static uint8_t f[HTOE_FRAME_MAX], g[HTOE_FRAME_MAX], pl[256];
	unsigned ok = 0, refused = 0;

	(void)state;
	ht_rand_seed(&r, 0x31504B54);
	for (int it = 0; it < 200; it++) {
		struct htoe_hdr h;
		unsigned np;

		memset(&h, 0, sizeof(h));
		h.version = 1;
		h.ftype = HTOE_FT_DATA;
		h.vc = (uint8_t)ht_rand_below(&r, 3);
		h.seq = (uint16_t)ht_rand_u64(&r);
		h.src_node = 1;
		h.dst_node = 2;
		/* room for one packet, or for a few */
		size_t plen = random_payload(&r, h.vc, pl, it % 2 ? 80 : 160, &np);
		size_t l2 = htoe_l2_len(&h);

		h.npkts = (uint8_t)np;
		int n = build(&h, pl, plen, f, sizeof(f));

		assert_true(n > 0);
		for (size_t m = 0; m < 2 * plen + 8; m++) {
			struct htoe_hdr h1, h2;
			struct ht_desc pk[16];
			const uint8_t *p1 = NULL, *p2 = NULL;

			memset(pk, 0, sizeof(pk));
			memcpy(g, f, (size_t)n);
			if (m < 2 * plen)
				g[l2 + HTOE_HDR_LEN + m / 2] ^= m % 2 ? (uint8_t)(1u << (m / 2 % 8))
								      : (uint8_t)ht_rand_u64(&r);
			else if (m < 2 * plen + 4)
				g[l2 + HTOE_OFF_NPKTS] = (uint8_t)(m - 2 * plen);
			else
				g[l2 + HTOE_OFF_FLAGS] = (uint8_t)(m - 2 * plen - 4);
			assert_int_equal(htoe_frame_reseal(g, (size_t)n), 0);
			int rc1 = htoe_frame_parse(g, (size_t)n, HTOE_MTU_DEFAULT, &h1, &p1);
			int rc2 = htoe_frame_parse_desc(g, (size_t)n, HTOE_MTU_DEFAULT, &h2, &p2, pk);

			assert_int_equal(rc2, rc1);
			if (rc1) {
				refused++;
				continue;
			}
			ok++;
			assert_hdr_eq(&h2, &h1);
			assert_int_equal(h2.ndata, h1.ndata);
			assert_ptr_equal(p2, p1);
			assert_true(h2.npkts <= 16);
			for (size_t k = 0, off = 0; k < h2.npkts; k++) {
				struct ht_desc e;
				int len;

				memset(&e, 0, sizeof(e));
				len = ht_desc_parse(p2 + off, h2.payload_len - off, &e);

				assert_int_equal(len, pk[k].len);
				/* every field (the padding is 0 in both) */
				assert_memory_equal(&pk[k], &e, sizeof(e));
				off += (size_t)len;
			}
		}
	}
	/* both verdicts were reached often */
	assert_true(ok > 1000 && refused > 1000);
}

/* The CTRL message header (protocol byte, version): each refusal, and the
 * decoders of the lease and digest messages refuse alike by it. */
static void test_ctrl_hdr_check(void **state)
{
	uint8_t m[64] = { 0x4C, 1 };
	struct htoe_digest_msg dm;
	struct htoe_lease_msg lm;

	(void)state;
	assert_int_equal(htoe_ctrl_hdr_check(m, 0, 0x4C, 1), -EPROTO);      /* empty */
	assert_int_equal(htoe_ctrl_hdr_check(m, 2, 0x44, 1), -EPROTO);      /* another protocol */
	assert_int_equal(htoe_ctrl_hdr_check(m, 1, 0x4C, 1), -EPROTONOSUPPORT); /* no version */
	assert_int_equal(htoe_ctrl_hdr_check(m, 2, 0x4C, 2), -EPROTONOSUPPORT);
	assert_int_equal(htoe_ctrl_hdr_check(m, 2, 0x4C, 1), 0);
	assert_int_equal(htoe_ctrl_hdr_check(m, sizeof(m), 0x4C, 1), 0);
	/* a lease message is no digest message, and the other way round */
	assert_int_equal(htoe_digest_decode(m, HTOE_DIGEST_MSG_LEN, &dm), -EPROTO);
	m[0] = HTOE_DIGEST_PROTO;
	assert_int_equal(htoe_lease_msg_decode(m, HTOE_LEASE_MSG_LEN, &lm), -EPROTO);
	/* a version either does not know, or a header cut short */
	m[1] = 2;
	assert_int_equal(htoe_digest_decode(m, HTOE_DIGEST_MSG_LEN, &dm), -EPROTONOSUPPORT);
	m[0] = HTOE_LEASE_PROTO;
	assert_int_equal(htoe_lease_msg_decode(m, HTOE_LEASE_MSG_LEN, &lm), -EPROTONOSUPPORT);
	assert_int_equal(htoe_lease_msg_decode(m, 1, &lm), -EPROTONOSUPPORT);
	assert_int_equal(htoe_lease_msg_decode(m, 0, &lm), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c_check_value),
		cmocka_unit_test(test_crc32c_random_bitwise),
		cmocka_unit_test(test_crc32c_clean_upper_state),
		cmocka_unit_test(test_frame_crc_lengths),
		cmocka_unit_test(test_crc32c_random_python),
		cmocka_unit_test(test_fixture_packets_decode),
		cmocka_unit_test(test_builders_decode),
		cmocka_unit_test(test_kat_encode),
		cmocka_unit_test(test_kat_decode),
		cmocka_unit_test(test_kat_data_layout),
		cmocka_unit_test(test_truncation_every_length),
		cmocka_unit_test(test_ethertype),
		cmocka_unit_test(test_version_and_type),
		cmocka_unit_test(test_reserved_bits),
		cmocka_unit_test(test_crc_every_bit),
		cmocka_unit_test(test_payload_length),
		cmocka_unit_test(test_count_mismatch),
		cmocka_unit_test(test_vc_mismatch),
		cmocka_unit_test(test_info_packets_inside),
		cmocka_unit_test(test_ht_malformed),
		cmocka_unit_test(test_mtu),
		cmocka_unit_test(test_padding),
		cmocka_unit_test(test_builder_errors),
		cmocka_unit_test(test_reseal),
		cmocka_unit_test(test_iterator),
		cmocka_unit_test(test_drop_names),
		cmocka_unit_test(test_random_round_trip),
		cmocka_unit_test(test_parse_desc_agrees),
		cmocka_unit_test(test_ctrl_hdr_check),
	};

	return cmocka_run_group_tests(tests, setup_kats, NULL);
}
