/* SPDX-License-Identifier: BSD-3-Clause
 * HT3 retry-mode per-packet CRC (reference §12.1, docs/ht-model.md).
 *
 * Each dword feeds 34 bits into an MSB-first CRC-32 register (poly
 * 0x04C11DB7), first bit first: dword[0..15], LCTL, dword[16..31], HCTL.
 * The 16-bit halves are fed four bits at a time through a nibble table;
 * tests/test_ht_crc.c checks this against a plain bit-serial version.
 */
#include "htmodel/ht_crc.h"
#include "htmodel/ht_packet.h"

#define HT_CRC_POLY 0x04C11DB7u

/* nib[i]: the register change from shifting 4 bits whose XOR with the
 * register's top nibble is i (i's MSB shifted first). */
static const uint32_t nib[16] = {
	0x00000000u, 0x04C11DB7u, 0x09823B6Eu, 0x0D4326D9u,
	0x130476DCu, 0x17C56B6Bu, 0x1A864DB2u, 0x1E475005u,
	0x2608EDB8u, 0x22C9F00Fu, 0x2F8AD6D6u, 0x2B4BCB61u,
	0x350C9B64u, 0x31CD86D3u, 0x3C8EA00Au, 0x384FBDBDu,
};

static uint32_t bit_step(uint32_t crc, unsigned bit)
{
	uint32_t fb = (crc >> 31) ^ bit;

	return (crc << 1) ^ (fb ? HT_CRC_POLY : 0);
}

/* Feed v[0], v[1], ..., v[15] (LSB first). */
static uint32_t half_step(uint32_t crc, uint32_t v)
{
	uint32_t r = 0;

	for (unsigned i = 0; i < 16; i++)   /* reverse: v[0] becomes the MSB */
		r |= ((v >> i) & 1u) << (15 - i);
	for (int s = 12; s >= 0; s -= 4)
		crc = (crc << 4) ^ nib[(crc >> 28) ^ ((r >> s) & 0xf)];
	return crc;
}

uint32_t ht_crc_register(const uint8_t *pkt, size_t len, size_t ctl_len)
{
	uint32_t crc = 0xffffffffu;

	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t dw = (uint32_t)pkt[i] | (uint32_t)pkt[i + 1] << 8 |
			      (uint32_t)pkt[i + 2] << 16 | (uint32_t)pkt[i + 3] << 24;
		unsigned ctl = i < ctl_len;

		crc = half_step(crc, dw & 0xffff);
		crc = bit_step(crc, ctl);      /* LCTL */
		crc = half_step(crc, dw >> 16);
		crc = bit_step(crc, ctl);      /* HCTL */
	}
	return crc;
}

uint32_t ht_crc_tx(const uint8_t *pkt, size_t len, size_t ctl_len)
{
	return ~ht_crc_register(pkt, len, ctl_len);
}

enum ht_crc_verdict ht_crc_check(const uint8_t *pkt, size_t len, size_t ctl_len, uint32_t rx)
{
	uint32_t crc = ht_crc_register(pkt, len, ctl_len);

	if (rx == ~crc)
		return HT_CRC_GOOD;
	return rx == crc ? HT_CRC_STOMPED : HT_CRC_BAD;
}

int ht_crc_of_packet(const uint8_t *pkt, size_t len, uint32_t *tx_crc)
{
	struct ht_pkt p;
	int r = ht_decode(pkt, len, &p);

	if (r < 0)
		return r;
	if ((size_t)r != len)
		return HT_E_TRAILING;
	*tx_crc = ht_crc_tx(pkt, len, ht_pkt_ctl_len(&p));
	return 0;
}
