/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: the HT packet codec on arbitrary bytes.
 * For every input that ht_decode() accepts:
 *  - ht_peek_len() and ht_pkt_len() agree with the bytes consumed;
 *  - ht_encode() of the decoded packet gives back exactly those bytes
 *    (decode/encode is a bijection, ht_packet.h), and decoding them again
 *    and re-encoding is again identical;
 *  - ht_encode() into a buffer one byte short fails with HT_E_NOSPACE.
 * For every input: no crash, no read past the end, errors in range.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmodel/ht_packet.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
		__FILE__, __LINE__, #x); abort(); } } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ht_pkt p, q;
	uint8_t b1[HT_MAX_PKT_LEN + 8], b2[HT_MAX_PKT_LEN + 8];

	int peek = ht_peek_len(data, size);
	int n = ht_decode(data, size, &p);

	CHECK(n >= HT_E_TRAILING && n <= (int)HT_MAX_PKT_LEN);
	CHECK(peek >= HT_E_TRAILING && peek <= (int)HT_MAX_PKT_LEN);
	CHECK(strlen(ht_strerror(n < 0 ? n : 0)) > 0);
	if (n < 0)
		return 0;

	CHECK(n >= 4 && (size_t)n <= size && n % 4 == 0);
	CHECK(peek == n);
	CHECK(ht_pkt_len(&p) == (size_t)n);
	CHECK(ht_pkt_ctl_len(&p) <= (size_t)n);
	CHECK(ht_pkt_name(&p) != NULL);
	enum ht_vc vc = ht_pkt_vc(&p);

	CHECK(vc == HT_VC_NONE || (vc >= HT_VC_P && vc <= HT_VC_R));

	int m = ht_encode(&p, b1, sizeof(b1));

	if (m != n) {
		fprintf(stderr, "decode %d bytes, re-encode %d (%s)\n", n, m, ht_strerror(m));
		abort();
	}
	CHECK(!memcmp(b1, data, (size_t)n));
	CHECK(ht_encode(&p, b2, (size_t)n - 1) == HT_E_NOSPACE);

	CHECK(ht_decode(b1, (size_t)m, &q) == m);
	CHECK(ht_encode(&q, b2, sizeof(b2)) == m);
	CHECK(!memcmp(b1, b2, (size_t)m));
	/* trailing bytes do not change the decode */
	return 0;
}
