/* SPDX-License-Identifier: BSD-3-Clause
 * htinject: pre-built posted writes for the bridge; see inject.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htmodel/ht_workload.h"
#include "node/inject.h"

#define CMD_WR_POSTED_DWORD (HT_CMD_WR_P | HT_CMD_BIT_DWORD | 0x01u) /* coherent */

int htinject_init(struct htinject *in, struct htoe *b, uint64_t base, uint64_t size,
		  uint8_t unitid, uint32_t seed)
{
	memset(in, 0, sizeof(*in));
	in->b = b;
	if (!size || size % HTINJECT_LEN || base % HTINJECT_LEN || size / HTINJECT_LEN > 1u << 24)
		return -1;
	in->n = (unsigned)(size / HTINJECT_LEN);
	in->pat[0] = malloc(size);
	in->pat[1] = malloc(size);
	in->enc = malloc(2 * (size_t)in->n * HT_MAX_PKT_LEN);
	in->desc = calloc(2 * (size_t)in->n, sizeof(*in->desc));
	if (!in->pat[0] || !in->pat[1] || !in->enc || !in->desc)
		return -1;
	for (unsigned q = 0; q < 2; q++) {
		ht_wl_fill(seed + q, in->pat[q], size);
		for (unsigned i = 0; i < in->n; i++) {
			size_t k = (size_t)q * in->n + i;

			if (ht_enc_sized_desc(in->enc + k * HT_MAX_PKT_LEN, HT_MAX_PKT_LEN,
					      CMD_WR_POSTED_DWORD, unitid, 0, 0,
					      HTINJECT_LEN / 4 - 1, base + (uint64_t)i * HTINJECT_LEN,
					      in->pat[q] + (size_t)i * HTINJECT_LEN,
					      &in->desc[k]) <= 0)
				return -1;
		}
	}
	return 0;
}

void htinject_fini(struct htinject *in)
{
	free(in->pat[0]);
	free(in->pat[1]);
	free(in->enc);
	free(in->desc);
	memset(in, 0, sizeof(*in));
}

unsigned htinject_poll(struct htinject *in, uint64_t max, uint64_t now)
{
	unsigned moved = 0, lim = max < HTINJECT_BURST ? (unsigned)max : HTINJECT_BURST;

	while (moved < lim) {
		unsigned i = (unsigned)(in->taken % in->n), q = (unsigned)(in->taken / in->n % 2);
		unsigned want = in->n - i, k;
		const struct ht_desc *d = &in->desc[(size_t)q * in->n + i];

		if (want > lim - moved)
			want = lim - moved;
		/* a run of consecutive slots: one map lookup, one reservation */
		k = htoe_local_input_run(in->b, d, in->pat[q] + (size_t)i * HTINJECT_LEN, want, now);
		if (!k) {
			int r = htoe_local_input_desc(in->b, d, now);

			if (r == -EAGAIN) {
				in->backpressure++;
				break;
			}
			if (r != 0) {
				in->refused++;
				in->last_err = r;
				break;
			}
			k = 1;
		}
		in->taken += k;
		moved += k;
	}
	return moved;
}

void htinject_expect(const struct htinject *in, uint8_t *img)
{
	uint64_t passes = in->taken / in->n, rest = in->taken % in->n;

	for (unsigned i = 0; i < in->n; i++) {
		uint64_t c = passes + (i < rest); /* times slot i was written */

		if (c)
			memcpy(img + (size_t)i * HTINJECT_LEN,
			       in->pat[(c - 1) % 2] + (size_t)i * HTINJECT_LEN, HTINJECT_LEN);
	}
}
