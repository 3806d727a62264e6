/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: the HToE frame decoder (htoe_frame_parse), including the
 * split of a DATA payload into HT packets (htoe_payload_check, ht_decode,
 * htoe_pkt_iter), on arbitrary bytes. Invariants checked (abort on failure):
 *  - the result is 0 or a valid negative enum htoe_drop;
 *  - an accepted frame is a fixed point: rebuilt from the decoded header and
 *    payload with htoe_hdr_write/htoe_frame_seal it is byte-identical up to
 *    the end of the payload, and parses to the same header;
 *  - an accepted DATA frame walks into exactly npkts packets of its VC that
 *    decode and whose lengths add up to the payload length;
 *  - the MTU check is exact;
 *  - the payload walker and the iterator never read out of bounds on
 *    arbitrary bytes.
 *  - htoe_frame_parse_desc gives the same verdict, and for a DATA frame one
 *    descriptor per packet, the same as ht_desc_parse of that packet.
 * Each input is checked as is, and again with its CRC recomputed
 * (htoe_frame_reseal) so that mutations reach the checks after the CRC.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe/htoe_wire.h"
#include "htmodel/ht_packet.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
		__FILE__, __LINE__, #x); abort(); } } while (0)

static void check_same_hdr(const struct htoe_hdr *a, const struct htoe_hdr *b)
{
	CHECK(!memcmp(a->dst, b->dst, 6) && !memcmp(a->src, b->src, 6));
	CHECK(a->has_vlan == b->has_vlan && a->pcp == b->pcp && a->dei == b->dei &&
	      a->vid == b->vid);
	CHECK(a->version == b->version && a->ftype == b->ftype && a->vc == b->vc &&
	      a->cold == b->cold && a->npkts == b->npkts && a->epoch == b->epoch);
	CHECK(a->src_node == b->src_node && a->dst_node == b->dst_node &&
	      a->seq == b->seq && a->ack == b->ack);
	CHECK(!memcmp(a->credit, b->credit, sizeof(a->credit)));
	CHECK(a->payload_len == b->payload_len && a->crc == b->crc);
}

/* Walk arbitrary bytes as a payload: must not crash or overrun. */
static void walk_raw(const uint8_t *data, size_t size)
{
	struct htoe_pkt_iter it;
	const uint8_t *pkt;
	size_t n, total = 0;
	int r;

	htoe_pkt_iter_init(&it, data, size);
	while ((r = htoe_pkt_iter_next(&it, &pkt, &n)) > 0) {
		CHECK(pkt >= data && n >= 4 && pkt + n <= data + size);
		total += n;
	}
	CHECK(r == 0 || r == -HTOE_DROP_LENGTH || r == -HTOE_DROP_HT_MALFORMED);
	CHECK(r != 0 || total == size);
	unsigned npkts = size ? data[0] : 0;

	r = htoe_payload_check(data, size, npkts, size % 3);
	CHECK(r == 0 || r == -HTOE_DROP_LENGTH || r == -HTOE_DROP_HT_MALFORMED ||
	      r == -HTOE_DROP_VC || r == -HTOE_DROP_COUNT);
}

static void check_frame(const uint8_t *data, size_t size)
{
	static uint8_t buf[HTOE_FRAME_MAX + 64];
	struct htoe_hdr h, h2;
	const uint8_t *pl = NULL;
	static struct ht_desc pk[HTOE_FRAME_MAX_PKTS];
	const uint8_t *pl2 = NULL;
	int rc = htoe_frame_parse(data, size, HTOE_MTU_MAX, &h, &pl);

	/* the parse that keeps the packets' descriptors gives the same verdict */
	CHECK(htoe_frame_parse_desc(data, size, HTOE_MTU_MAX, &h2, &pl2, pk) == rc);
	CHECK(rc || pl2 == pl);
	CHECK(rc <= 0 && rc > -HTOE_DROP__COUNT);
	CHECK(rc == 0 || rc >= -HTOE_DROP_VC); /* the wire layer's reasons only */
	CHECK(strcmp(htoe_drop_name(rc), "?") != 0);
	if (rc)
		return;

	size_t l2 = htoe_l2_len(&h);
	size_t end = l2 + HTOE_HDR_LEN + h.payload_len;

	CHECK(h.version == HTOE_VERSION && htoe_ftype_valid(h.ftype));
	CHECK(end <= size && pl == data + l2 + HTOE_HDR_LEN);
	CHECK(HTOE_HDR_LEN + h.payload_len <= HTOE_MTU_MAX);

	/* the MTU check is exact */
	unsigned need = HTOE_HDR_LEN + h.payload_len;

	CHECK(htoe_frame_parse(data, size, need < HTOE_MTU_MIN ? HTOE_MTU_MIN : need,
			       &h2, NULL) == 0);
	if (need > HTOE_MTU_MIN)
		CHECK(htoe_frame_parse(data, size, need - 1, &h2, NULL) == -HTOE_DROP_LENGTH);
	/* the padding is not part of the frame */
	CHECK(htoe_frame_parse(data, end, HTOE_MTU_MAX, &h2, NULL) == 0);
	if (end > 0)
		CHECK(htoe_frame_parse(data, end - 1, HTOE_MTU_MAX, &h2, NULL) < 0);

	/* DATA: the packets */
	if (h.ftype == HTOE_FT_DATA) {
		struct htoe_pkt_iter it;
		const uint8_t *pkt;
		size_t n, total = 0;
		unsigned count = 0;
		int r;

		htoe_pkt_iter_init(&it, pl, h.payload_len);
		while ((r = htoe_pkt_iter_next(&it, &pkt, &n)) > 0) {
			struct ht_pkt p;

			CHECK(pkt == pl + total);
			CHECK(ht_decode(pkt, n, &p) == (int)n);
			/* its descriptor from the frame parse is a parse of it */
			struct ht_desc d;

			CHECK(ht_desc_parse(pkt, n, &d) == (int)n);
			CHECK(pk[count].pkt == pkt && pk[count].len == d.len &&
			      pk[count].cmd == d.cmd && pk[count].kind == d.kind &&
			      pk[count].vc == d.vc && pk[count].unitid == d.unitid &&
			      pk[count].srctag == d.srctag && pk[count].passpw == d.passpw &&
			      pk[count].count == d.count && pk[count].rsp_err == d.rsp_err &&
			      pk[count].addr == d.addr && pk[count].data_off == d.data_off &&
			      pk[count].data_len == d.data_len && pk[count].ctl == d.ctl);
			CHECK(ht_pkt_len(&p) == n);
			CHECK(ht_pkt_vc(&p) != HT_VC_NONE && (unsigned)ht_pkt_vc(&p) == h.vc);
			total += n;
			count++;
		}
		CHECK(r == 0);
		CHECK(count == h.npkts && count >= 1);
		CHECK(total == h.payload_len);
	} else {
		CHECK(h.npkts == 0 && h.vc == 0);
		CHECK(h.seq == 0 || htoe_ftype_has_seq(h.ftype)); /* RESET nonce */
		/* payload: CTRL, RESET/RESET_ACK (incarnation, nonce), ACK/NAK
		 * with the SACK flag (a SACK block) */
		CHECK(h.payload_len == 0 || htoe_ftype_has_payload(h.ftype) ||
		      (h.sack && (h.ftype == HTOE_FT_ACK || h.ftype == HTOE_FT_NAK)));
	}
	CHECK(!h.sack || h.ftype == HTOE_FT_ACK || h.ftype == HTOE_FT_NAK ||
	      h.ftype == HTOE_FT_RESET || h.ftype == HTOE_FT_RESET_ACK);
	CHECK(!h.cold || h.ftype == HTOE_FT_RESET || h.ftype == HTOE_FT_RESET_ACK);
	CHECK(!h.credit_req || h.ftype == HTOE_FT_ACK);

	/* rebuild: byte-identical up to the end of the payload */
	struct htoe_hdr w = h;

	w.payload_len = 0;
	int off = htoe_hdr_write(&w, buf, sizeof(buf));

	CHECK(off == (int)(l2 + HTOE_HDR_LEN));
	memcpy(buf + off, pl, h.payload_len);
	int flen = htoe_frame_seal(buf, sizeof(buf), l2, h.payload_len);

	CHECK(flen == (int)(end < HTOE_MIN_FRAME ? HTOE_MIN_FRAME : end));
	CHECK(!memcmp(buf, data, end));
	for (size_t i = end; i < (size_t)flen; i++)
		CHECK(buf[i] == 0);
	CHECK(htoe_frame_parse(buf, (size_t)flen, HTOE_MTU_MAX, &h2, NULL) == 0);
	check_same_hdr(&h, &h2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t fixed[HTOE_FRAME_MAX + 64];

	if (size > sizeof(fixed))
		return 0;
	walk_raw(data, size);
	check_frame(data, size);
	/* the same bytes with a correct CRC, so that mutations get past the
	 * CRC check into the field and payload checks */
	memcpy(fixed, data, size);
	if (htoe_frame_reseal(fixed, size) == 0)
		check_frame(fixed, size);
	return 0;
}
