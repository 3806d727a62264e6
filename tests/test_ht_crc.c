/* SPDX-License-Identifier: BSD-3-Clause
 * HT3 per-packet CRC: reference vectors (§12.2), the optimised
 * ht_crc_register() against a plain bit-serial model, stomp/bad detection.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "htmodel/ht_crc.h"
#include "htmodel/ht_packet.h"

/* The §12.1 definition, one input bit at a time. */
static uint32_t crc_bitserial(const uint8_t *pkt, size_t len, size_t ctl_len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t dw = (uint32_t)pkt[i] | (uint32_t)pkt[i + 1] << 8 |
			      (uint32_t)pkt[i + 2] << 16 | (uint32_t)pkt[i + 3] << 24;
		unsigned ctl = i < ctl_len ? 1 : 0;
		unsigned d[34];

		for (unsigned b = 0; b < 16; b++)
			d[b] = (dw >> b) & 1;
		d[16] = ctl;
		for (unsigned b = 16; b < 32; b++)
			d[b + 1] = (dw >> b) & 1;
		d[33] = ctl;
		for (unsigned b = 0; b < 34; b++) {
			unsigned fb = (crc >> 31) ^ d[b];

			crc <<= 1;
			if (fb)
				crc ^= 0x04C11DB7u;
		}
	}
	return crc;
}

/* Dwords as numbers, serialized little-endian (§1). */
static size_t put_dwords(uint8_t *out, const uint32_t *dw, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[4 * i] = (uint8_t)dw[i];
		out[4 * i + 1] = (uint8_t)(dw[i] >> 8);
		out[4 * i + 2] = (uint8_t)(dw[i] >> 16);
		out[4 * i + 3] = (uint8_t)(dw[i] >> 24);
	}
	return 4 * n;
}

struct vec {
	const char *what;
	uint32_t dw[4];
	size_t ndw, nctl;       /* dwords, of which the first nctl have CTL=1 */
	uint32_t reg, tx;
	int whole;              /* a complete packet (ht_crc_of_packet applies) */
};

/* §12.2, verbatim. */
static const struct vec vecs[] = {
	{ "NOP 00000000", { 0x00000000 }, 1, 1, 0x1620178C, 0xE9DFE873, 1 },
	{ "NOP 05032500", { 0x05032500 }, 1, 1, 0x3E2D7111, 0xC1D28EEE, 1 },
	{ "Sync", { 0xFFFFFFFF }, 1, 1, 0x0D4326D9, 0xF2BCD926, 1 },
	{ "Flush", { 0x00040102 }, 1, 1, 0xA2713494, 0x5D8ECB6B, 1 },
	{ "RdSized", { 0x43C30115, 0x00123456 }, 2, 2, 0xA893B777, 0x576C4888, 1 },
	{ "WrSized P", { 0x0000012C, 0x00000010, 0xDEADBEEF }, 3, 2, 0x9FA3C38E, 0x605C3C71, 1 },
	{ "RdResponse ctl only", { 0x03C34030 }, 1, 1, 0xD88FF26D, 0x27700D92, 0 },
	{ "prefix+WrSized", { 0x0000013E, 0x0000012C, 0x00000010, 0x11223344 }, 4, 3,
	  0x98E4DBB0, 0x671B244F, 1 },
};

static void test_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(vecs) / sizeof(vecs[0]); i++) {
		const struct vec *v = &vecs[i];
		uint8_t b[16];
		size_t len = put_dwords(b, v->dw, v->ndw);
		uint32_t tx = 0;

		print_message("vector %s\n", v->what);
		assert_int_equal(crc_bitserial(b, len, 4 * v->nctl), v->reg);
		assert_int_equal(ht_crc_register(b, len, 4 * v->nctl), v->reg);
		assert_int_equal(ht_crc_tx(b, len, 4 * v->nctl), v->tx);
		if (v->whole) {
			assert_int_equal(ht_crc_of_packet(b, len, &tx), 0);
			assert_int_equal(tx, v->tx);
		} else {
			/* Count=15 announces 64 data bytes that are not there */
			assert_int_equal(ht_crc_of_packet(b, len, &tx), HT_E_TRUNCATED);
		}
	}
}

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static void test_optimised_matches_bitserial(void **state)
{
	uint8_t b[HT_MAX_PKT_LEN];

	(void)state;
	rng_state = 0x9E3779B97F4A7C15ull;
	for (unsigned it = 0; it < 20000; it++) {
		size_t len = 4 * (rnd() % (HT_MAX_PKT_LEN / 4 + 1));
		size_t ctl = 4 * (rnd() % (len / 4 + 1));

		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)rnd();
		assert_int_equal(ht_crc_register(b, len, ctl), crc_bitserial(b, len, ctl));
	}
	/* every single-bit dword, as control and as data */
	for (unsigned bit = 0; bit < 32; bit++) {
		uint32_t dw = 1u << bit;

		put_dwords(b, &dw, 1);
		assert_int_equal(ht_crc_register(b, 4, 4), crc_bitserial(b, 4, 4));
		assert_int_equal(ht_crc_register(b, 4, 0), crc_bitserial(b, 4, 0));
	}
	/* empty input leaves the initial value */
	assert_int_equal(ht_crc_register(b, 0, 0), 0xffffffffu);
}

static void test_ctl_is_covered(void **state)
{
	uint32_t dw[3] = { 0x0000012C, 0x00000010, 0xDEADBEEF };
	uint8_t b[12];

	(void)state;
	put_dwords(b, dw, 3);
	/* moving the control/data boundary changes the CRC */
	assert_int_not_equal(ht_crc_register(b, 12, 8), ht_crc_register(b, 12, 4));
	assert_int_not_equal(ht_crc_register(b, 12, 8), ht_crc_register(b, 12, 12));
}

static void test_check_verdicts(void **state)
{
	uint32_t dw[3] = { 0x0000012C, 0x00000010, 0xDEADBEEF };
	uint8_t b[12];
	uint32_t reg, tx;

	(void)state;
	put_dwords(b, dw, 3);
	reg = ht_crc_register(b, 12, 8);
	tx = ht_crc_tx(b, 12, 8);
	assert_int_equal(tx, 0x605C3C71u);
	assert_int_equal(ht_crc_check(b, 12, 8, tx), HT_CRC_GOOD);
	assert_int_equal(ht_crc_check(b, 12, 8, reg), HT_CRC_STOMPED);
	for (unsigned bit = 0; bit < 32; bit++) {
		assert_int_equal(ht_crc_check(b, 12, 8, tx ^ (1u << bit)), HT_CRC_BAD);
		assert_int_equal(ht_crc_check(b, 12, 8, reg ^ (1u << bit)), HT_CRC_BAD);
	}
	/* every single-bit error in the packet is detected */
	for (unsigned bit = 0; bit < 96; bit++) {
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(ht_crc_check(b, 12, 8, tx), HT_CRC_BAD);
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	/* a wrong CTL (data sent as control) is detected */
	assert_int_equal(ht_crc_check(b, 12, 12, tx), HT_CRC_BAD);
	assert_int_equal(ht_crc_check(b, 12, 8, tx), HT_CRC_GOOD);
}

static void test_of_packet_errors(void **state)
{
	uint32_t dw[3] = { 0x0000012C, 0x00000010, 0xDEADBEEF };
	uint8_t b[16];
	uint32_t tx = 0x12345678;

	(void)state;
	put_dwords(b, dw, 3);
	b[12] = b[13] = b[14] = b[15] = 0;
	assert_int_equal(ht_crc_of_packet(b, 16, &tx), HT_E_TRAILING);
	assert_int_equal(ht_crc_of_packet(b, 11, &tx), HT_E_TRUNCATED);
	b[0] = 0x01; /* reserved command */
	assert_int_equal(ht_crc_of_packet(b, 12, &tx), HT_E_RESERVED_CMD);
	assert_int_equal(tx, 0x12345678u); /* untouched on error */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_optimised_matches_bitserial),
		cmocka_unit_test(test_ctl_is_covered),
		cmocka_unit_test(test_check_verdicts),
		cmocka_unit_test(test_of_packet_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
