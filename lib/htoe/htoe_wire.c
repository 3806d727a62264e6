/* SPDX-License-Identifier: BSD-3-Clause
 * HToE wire format: see htoe_wire.h and docs/wire-format.md.
 */
#include "htoe/htoe_wire.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <isa-l/crc.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "htmodel/ht_packet.h"

/* The external definitions of the header's inline queries: libhtoe exports
 * them, for programs that call them without inlining (or were built
 * against a header that declared them as plain functions). */
extern inline bool htoe_ftype_valid(unsigned ftype);
extern inline bool htoe_ftype_has_payload(unsigned ftype);
extern inline bool htoe_ftype_has_seq(unsigned ftype);
extern inline int32_t htoe_seq_diff(uint16_t a, uint16_t b);

/* ------------------------------------------------------------------ names */

static const char *const ftype_names[] = {
	[HTOE_FT_DATA] = "DATA",
	[HTOE_FT_ACK] = "ACK",
	[HTOE_FT_NAK] = "NAK",
	[HTOE_FT_RESET] = "RESET",
	[HTOE_FT_RESET_ACK] = "RESET_ACK",
	[HTOE_FT_CTRL] = "CTRL",
};

const char *htoe_ftype_name(unsigned ftype)
{
	return htoe_ftype_valid(ftype) ? ftype_names[ftype] : "?";
}

static const char *const drop_names[HTOE_DROP__COUNT] = {
	[HTOE_DROP_NONE] = "none",
	[HTOE_DROP_RUNT] = "runt",
	[HTOE_DROP_ETHERTYPE] = "ethertype",
	[HTOE_DROP_VERSION] = "version",
	[HTOE_DROP_TYPE] = "type",
	[HTOE_DROP_RESERVED] = "reserved",
	[HTOE_DROP_LENGTH] = "length",
	[HTOE_DROP_CRC] = "crc",
	[HTOE_DROP_HT_MALFORMED] = "ht_malformed",
	[HTOE_DROP_COUNT] = "count",
	[HTOE_DROP_VC] = "vc",
	[HTOE_DROP_NOT_FOR_US] = "not_for_us",
	[HTOE_DROP_UNKNOWN_PEER] = "unknown_peer",
	[HTOE_DROP_EPOCH] = "epoch",
	[HTOE_DROP_DUP] = "dup",
	[HTOE_DROP_OUT_OF_ORDER] = "out_of_order",
	[HTOE_DROP_NO_CREDIT] = "no_credit",
	[HTOE_DROP_SRC_MAC] = "src_mac",
	[HTOE_DROP_NONCE] = "nonce",
	[HTOE_DROP_INCARNATION] = "incarnation",
	[HTOE_DROP_STALE_LAP] = "stale_lap",
};

const char *htoe_drop_name(int reason)
{
	if (reason < 0)
		reason = reason == INT_MIN ? HTOE_DROP__COUNT : -reason;
	if (reason >= HTOE_DROP__COUNT || !drop_names[reason])
		return "?";
	return drop_names[reason];
}

/* ------------------------------------------------------------------ CRC32C */

#if defined(__x86_64__) || defined(__i386__)
/* ISA-L's AVX-512 CRC (crc32_iscsi_by16_10, picked at run time on CPUs with
 * VPCLMULQDQ) uses zmm0-15 and returns without VZEROUPPER. With the upper
 * register state left dirty, every later mix of legacy-SSE code (ours, -O2)
 * and VEX code (glibc's 16..31-byte memcpy) pays a state-transition penalty:
 * it made 8..28-byte posted writes through htoe-bridge about twice as slow as
 * 4- or 32-byte ones. Clear the upper state after each CRC. */
__attribute__((target("avx"))) static void crc_zeroupper_avx(void)
{
	_mm256_zeroupper();
}

static void crc_zeroupper(void)
{
	if (__builtin_cpu_supports("avx"))
		crc_zeroupper_avx();
}
#else
static void crc_zeroupper(void)
{
}
#endif

/* ISA-L's crc32_iscsi() takes and returns the raw (reflected) shift
 * register: no initial or final inversion. The standard CRC32C is
 * ~crc32_iscsi(buf, len, 0xFFFFFFFF), so continuing a standard value means
 * feeding its complement back in. len <= INT_MAX. The caller clears the
 * upper AVX state (crc_zeroupper) after its last call. */
static inline uint32_t crc_raw(uint32_t reg, const void *buf, size_t len)
{
	/* crc32_iscsi's prototype lacks const; it does not write. */
	return len ? crc32_iscsi((unsigned char *)(uintptr_t)buf, (int)len, reg) : reg;
}

uint32_t htoe_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t reg = ~crc;

	while (len) {
		size_t chunk = len > (size_t)INT_MAX ? (size_t)INT_MAX : len;

		reg = crc_raw(reg, p, chunk);
		p += chunk;
		len -= chunk;
	}
	crc_zeroupper();
	return ~reg;
}

int htoe_ctrl_hdr_check(const uint8_t *msg, size_t len, uint8_t proto, uint8_t version)
{
	if (len < 1 || msg[0] != proto)
		return -EPROTO;
	if (len < 2 || msg[1] != version)
		return -EPROTONOSUPPORT;
	return 0;
}

uint32_t htoe_crc32c(const void *buf, size_t len)
{
	return htoe_crc32c_update(0, buf, len);
}

/* Payloads up to this length are CRCed with the SSE4.2 CRC32 instruction
 * (the same CRC32C shift register as ISA-L's): a frame's 28 header bytes
 * and a short payload take a few instructions, where a call of ISA-L's
 * dispatcher costs about 60 for any length. Longer payloads go to ISA-L
 * (folding, faster per byte). */
#define CRC_HW_MAX 64u

#if defined(__x86_64__)
__attribute__((target("sse4.2"), always_inline)) static inline uint32_t
crc_hw(uint32_t reg, const uint8_t *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		reg = (uint32_t)_mm_crc32_u64(reg, w);
	}
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		reg = _mm_crc32_u32(reg, w);
		p += 4;
		len -= 4;
	}
	while (len--)
		reg = _mm_crc32_u8(reg, *p++);
	return reg;
}

/* The raw register after the header's 28 bytes (unrolled) and plen bytes
 * of payload. */
__attribute__((target("sse4.2"))) static uint32_t crc_hw_frame(const uint8_t *hdr,
								const uint8_t *payload,
								size_t plen)
{
	return crc_hw(crc_hw(~0u, hdr, HTOE_CRC_COVER_HDR), payload, plen);
}

static bool crc_hw_ok(void)
{
	return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2"))) static uint32_t crc_hw8(uint32_t reg, const uint8_t *b)
{
	return crc_hw(reg, b, 8);
}
#else
static uint32_t crc_hw_frame(const uint8_t *hdr, const uint8_t *payload, size_t plen)
{
	return crc_raw(crc_raw(~0u, hdr, HTOE_CRC_COVER_HDR), payload, plen);
}

static bool crc_hw_ok(void)
{
	return false;
}
#endif

/* CRC of a frame's HToE header (bytes 0..27) and payload (at most 64 KiB:
 * a 16-bit length): one register through both. */
static inline __attribute__((always_inline)) uint32_t frame_crc(const uint8_t *hdr,
								  const uint8_t *payload,
								  size_t plen)
{
	uint32_t reg;

	if (crc_hw_ok()) {
		if (plen <= CRC_HW_MAX)
			return ~crc_hw_frame(hdr, payload, plen);
		reg = crc_hw_frame(hdr, payload, 0);
	} else {
		reg = crc_raw(~0u, hdr, HTOE_CRC_COVER_HDR);
	}
	reg = crc_raw(reg, payload, plen);
	crc_zeroupper();
	return ~reg;
}

/* crc (a final CRC32C) continued over the 8 bytes of lap, big-endian, when
 * lap is not 0 (docs/wire-format.md, "Sequence laps"). */
static inline __attribute__((always_inline)) uint32_t crc_lap(uint32_t crc, uint64_t lap)
{
	uint8_t b[8];

	if (!lap)
		return crc;
	htoe_put_be32(b, (uint32_t)(lap >> 32));
	htoe_put_be32(b + 4, (uint32_t)lap);
#if defined(__x86_64__)
	if (crc_hw_ok())
		return ~crc_hw8(~crc, b);
#endif
	return htoe_crc32c_update(crc, b, 8);
}

/* ------------------------------------------------------------------ build */

size_t htoe_l2_len(const struct htoe_hdr *h)
{
	return h->has_vlan ? HTOE_ETH_HLEN + HTOE_VLAN_HLEN : HTOE_ETH_HLEN;
}

/* Types that may carry the SACK flag, and those whose payload it allows. */
static bool sack_type(unsigned ftype)
{
	return ftype >= HTOE_FT_ACK && ftype <= HTOE_FT_RESET_ACK;
}

static bool sack_payload(unsigned ftype, bool sack)
{
	return sack && (ftype == HTOE_FT_ACK || ftype == HTOE_FT_NAK);
}

int htoe_hdr_check(const struct htoe_hdr *h)
{
	if (!htoe_ftype_valid(h->ftype))
		return -EINVAL;
	if (h->has_vlan && (h->pcp > 7 || h->dei > 1 || h->vid > 0xFFF))
		return -EINVAL;
	if (h->vc > 2)
		return -EINVAL;
	if (h->ftype != HTOE_FT_DATA && (h->vc || h->npkts))
		return -EINVAL;
	if (h->seq && !htoe_ftype_has_seq(h->ftype))
		return -EINVAL;
	if (h->cold && h->ftype != HTOE_FT_RESET && h->ftype != HTOE_FT_RESET_ACK)
		return -EINVAL;
	if (h->credit_req && h->ftype != HTOE_FT_ACK)
		return -EINVAL;
	if (h->sack && !sack_type(h->ftype))
		return -EINVAL;
	if (h->payload_len && !htoe_ftype_has_payload(h->ftype) && !sack_payload(h->ftype, h->sack))
		return -EINVAL;
	if (h->payload_len > HTOE_MAX_PAYLOAD(HTOE_MTU_MAX))
		return -EINVAL;
	return 0;
}

int htoe_hdr_write(const struct htoe_hdr *h, uint8_t *buf, size_t cap)
{
	size_t l2 = htoe_l2_len(h);
	int rc = htoe_hdr_check(h);

	if (rc)
		return rc;
	if (cap < l2 + HTOE_HDR_LEN)
		return -ENOSPC;

	memcpy(buf, h->dst, 6);
	memcpy(buf + 6, h->src, 6);
	if (h->has_vlan) {
		htoe_put_be16(buf + 12, HTOE_TPID_8021Q);
		htoe_put_be16(buf + 14, (uint16_t)((unsigned)h->pcp << 13 |
						   (unsigned)h->dei << 12 | h->vid));
	}
	htoe_put_be16(buf + l2 - 2, HTOE_ETHERTYPE);

	uint8_t *x = buf + l2;

	x[HTOE_OFF_VER_TYPE] = (uint8_t)(HTOE_VERSION << 4 | h->ftype);
	x[HTOE_OFF_FLAGS] = (uint8_t)(h->vc | (h->cold ? HTOE_FLAG_COLD : 0) |
				      (h->credit_req ? HTOE_FLAG_CREDIT_REQ : 0) |
				      (h->sack ? HTOE_FLAG_SACK : 0));
	x[HTOE_OFF_NPKTS] = h->npkts;
	x[HTOE_OFF_EPOCH] = h->epoch;
	htoe_put_be16(x + HTOE_OFF_SRC_NODE, h->src_node);
	htoe_put_be16(x + HTOE_OFF_DST_NODE, h->dst_node);
	htoe_put_be16(x + HTOE_OFF_SEQ, h->seq);
	htoe_put_be16(x + HTOE_OFF_ACK, h->ack);
	for (unsigned i = 0; i < HTOE_CR__COUNT; i++)
		htoe_put_be16(x + HTOE_OFF_CREDIT + 2 * i, h->credit[i]);
	htoe_put_be16(x + HTOE_OFF_PLEN, h->payload_len);
	htoe_put_be16(x + HTOE_OFF_RSVD, 0);
	htoe_put_be32(x + HTOE_OFF_CRC, 0);
	return (int)(l2 + HTOE_HDR_LEN);
}

int htoe_hdr_template(const struct htoe_hdr *h, struct htoe_hdr_tmpl *t)
{
	struct htoe_hdr c;
	int n;

	/* the VL's constant fields, written (and checked) as any header */
	memset(&c, 0, sizeof(c));
	memcpy(c.dst, h->dst, 6);
	memcpy(c.src, h->src, 6);
	c.has_vlan = h->has_vlan;
	c.pcp = h->pcp;
	c.dei = h->dei;
	c.vid = h->vid;
	c.ftype = HTOE_FT_DATA;
	c.src_node = h->src_node;
	c.dst_node = h->dst_node;
	memset(t, 0, sizeof(*t));
	n = htoe_hdr_write(&c, t->b, sizeof(t->b));
	if (n < 0)
		return n;
	t->l2 = (uint8_t)(n - HTOE_HDR_LEN);
	return 0;
}

/* The fields of a DATA frame's header (x) that are not the template's:
 * version and type DATA, payload length, reserved and CRC are (zero until
 * htoe_frame_seal_data). */
static inline __attribute__((always_inline)) void
hdr_data_fields(uint8_t *x, unsigned vc, unsigned npkts, uint8_t epoch, uint16_t seq,
		uint16_t ack, const uint16_t credit[HTOE_CR__COUNT])
{
	x[HTOE_OFF_FLAGS] = (uint8_t)(vc & HTOE_FLAG_VC_MASK);
	x[HTOE_OFF_NPKTS] = (uint8_t)npkts;
	x[HTOE_OFF_EPOCH] = epoch;
	htoe_put_be16(x + HTOE_OFF_SEQ, seq);
	htoe_put_be16(x + HTOE_OFF_ACK, ack);
#pragma GCC unroll 6 /* per DATA frame sent */
	for (unsigned i = 0; i < HTOE_CR__COUNT; i++)
		htoe_put_be16(x + HTOE_OFF_CREDIT + 2 * i, credit[i]);
}

/* htoe_hdr_data() into a buffer too short for the whole template: its n
 * bytes copied by a call (kept out of the common path, which then calls
 * nothing). */
static __attribute__((noinline)) int hdr_data_short(const struct htoe_hdr_tmpl *t, uint8_t *buf,
						    size_t n, unsigned vc, unsigned npkts,
						    uint8_t epoch, uint16_t seq, uint16_t ack,
						    const uint16_t credit[HTOE_CR__COUNT])
{
	memcpy(buf, t->b, n);
	hdr_data_fields(buf + t->l2, vc, npkts, epoch, seq, ack, credit);
	return (int)n;
}

int htoe_hdr_data(const struct htoe_hdr_tmpl *t, uint8_t *buf, size_t cap, unsigned vc,
		  unsigned npkts, uint8_t epoch, uint16_t seq, uint16_t ack,
		  const uint16_t credit[HTOE_CR__COUNT])
{
	size_t n = (size_t)t->l2 + HTOE_HDR_LEN;

	if (cap < n)
		return -ENOSPC;
	if (cap < sizeof(t->b))
		return hdr_data_short(t, buf, n, vc, npkts, epoch, seq, ack, credit);
	/* the whole template (a copy of a known size, done in place of a
	 * call): what follows n is the payload's place */
	memcpy(buf, t->b, sizeof(t->b));
	hdr_data_fields(buf + t->l2, vc, npkts, epoch, seq, ack, credit);
	return (int)n;
}

/* Ethernet header length of a frame this layer built: 14 or 18, or -EINVAL
 * if the frame is not (untagged or single-tagged) HToE. */
static int frame_l2_len(const uint8_t *frame, size_t len)
{
	if (len < HTOE_ETH_HLEN + HTOE_HDR_LEN)
		return -EINVAL;
	uint16_t et = htoe_get_be16(frame + 12);

	if (et == HTOE_ETHERTYPE)
		return HTOE_ETH_HLEN;
	if (et == HTOE_TPID_8021Q && len >= HTOE_L2_MAX + HTOE_HDR_LEN &&
	    htoe_get_be16(frame + 16) == HTOE_ETHERTYPE)
		return HTOE_L2_MAX;
	return -EINVAL;
}

int htoe_frame_seal(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len)
{
	return htoe_frame_seal_lap(frame, cap, l2_len, payload_len, 0);
}

int htoe_frame_seal_lap(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len,
			uint64_t lap)
{
	if (l2_len != HTOE_ETH_HLEN && l2_len != HTOE_L2_MAX)
		return -EINVAL;
	if (frame_l2_len(frame, cap) != (int)l2_len)
		return -EINVAL;
	if (payload_len > HTOE_MAX_PAYLOAD(HTOE_MTU_MAX))
		return -EMSGSIZE;

	uint8_t *x = frame + l2_len;

	if (payload_len && !htoe_ftype_has_payload(x[HTOE_OFF_VER_TYPE] & 0x0F) &&
	    !sack_payload(x[HTOE_OFF_VER_TYPE] & 0x0F, x[HTOE_OFF_FLAGS] & HTOE_FLAG_SACK))
		return -EINVAL;
	return htoe_frame_seal_data_lap(frame, cap, l2_len, payload_len, lap);
}

int htoe_frame_seal_data(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len)
{
	return htoe_frame_seal_data_lap(frame, cap, l2_len, payload_len, 0);
}

/* n bytes of padding zeroed (1 to HTOE_MIN_FRAME - 46 = 14): two stores
 * of a known size that may overlap, not a call to memset on every short
 * frame; nothing past them. */
static inline void zero_pad(uint8_t *p, size_t n)
{
	static const uint8_t z[8];

	if (n > 16) {
		memset(p, 0, n);
	} else if (n >= 8) {
		memcpy(p, z, 8);
		memcpy(p + n - 8, z, 8);
	} else if (n >= 4) {
		memcpy(p, z, 4);
		memcpy(p + n - 4, z, 4);
	} else if (n >= 2) {
		memcpy(p, z, 2);
		memcpy(p + n - 2, z, 2);
	} else if (n) {
		p[0] = 0;
	}
}

int htoe_frame_seal_data_lap(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len,
			     uint64_t lap)
{
	uint8_t *x = frame + l2_len;

	if (payload_len > HTOE_MAX_PAYLOAD(HTOE_MTU_MAX))
		return -EMSGSIZE;

	size_t end = l2_len + HTOE_HDR_LEN + payload_len;
	size_t flen = end < HTOE_MIN_FRAME ? HTOE_MIN_FRAME : end;

	if (cap < flen)
		return -ENOSPC;

	htoe_put_be16(x + HTOE_OFF_PLEN, (uint16_t)payload_len);
	htoe_put_be32(x + HTOE_OFF_CRC, crc_lap(frame_crc(x, x + HTOE_HDR_LEN, payload_len), lap));
	if (flen > end)
		zero_pad(frame + end, flen - end);
	return (int)flen;
}

int htoe_frame_set_npkts(uint8_t *frame, size_t len, unsigned npkts)
{
	int l2 = frame_l2_len(frame, len);

	if (l2 < 0 || npkts > HTOE_FRAME_MAX_PKTS)
		return -EINVAL;
	frame[l2 + HTOE_OFF_NPKTS] = (uint8_t)npkts;
	return 0;
}

/* The header of a sealed frame and its payload length, or NULL. */
static uint8_t *sealed_hdr(uint8_t *frame, size_t len, size_t *plen)
{
	int l2 = frame_l2_len(frame, len);

	if (l2 < 0)
		return NULL;
	uint8_t *x = frame + l2;

	*plen = htoe_get_be16(x + HTOE_OFF_PLEN);
	if ((size_t)l2 + HTOE_HDR_LEN + *plen > len)
		return NULL;
	return x;
}

int htoe_frame_reseal(uint8_t *frame, size_t len)
{
	size_t plen;
	uint8_t *x = sealed_hdr(frame, len, &plen);

	if (!x)
		return -EINVAL;
	htoe_put_be32(x + HTOE_OFF_CRC, frame_crc(x, x + HTOE_HDR_LEN, plen));
	return 0;
}

/* ------------------------------------------------------------------ parse */

/* htoe_payload_check(), counting the packets that carry data (*ndata),
 * and, when pk is not NULL, each packet parsed into pk[0..npkts): the one
 * parse of an HT packet that arrives from the wire (the decapsulation and
 * what follows use these descriptors; they point into p). */
static inline __attribute__((always_inline)) int payload_check(const uint8_t *p, size_t len,
								unsigned npkts, unsigned vc,
								unsigned *ndata,
								struct ht_desc *pk)
{
	size_t off = 0;
	unsigned n = 0, nd = 0;
	struct ht_desc tmp; /* a packet past npkts (the frame is dropped) */
	const struct ht_desc *prev = NULL;

	while (off < len) {
		size_t rem = len - off;
		struct ht_desc *d = pk && n < npkts ? &pk[n] : &tmp;
		/* common and valid: one pass (with pk the parse is that pass; a
		 * run of writes, each like the one before, is read from its
		 * address alone) */
		int plen = pk ? ht_desc_parse_after(p + off, rem, prev, d) : ht_peek_valid(p + off, rem);
		uint8_t cmd;

		if (plen <= 0) {
			plen = ht_peek_len(p + off, rem);
			if (plen == HT_E_TRUNCATED)
				return -HTOE_DROP_LENGTH;
			if (plen <= 0)
				return -HTOE_DROP_HT_MALFORMED;
			if ((size_t)plen > rem)
				return -HTOE_DROP_LENGTH;
			/* the full decoder's verdict without decoding into a struct */
			if (ht_validate(p + off, (size_t)plen) != plen)
				return -HTOE_DROP_HT_MALFORMED;
			/* valid after all (ht_desc_parse is as strict as ht_decode:
			 * not reached) */
			if (pk && ht_desc_parse(p + off, (size_t)plen, d) != plen)
				return -HTOE_DROP_HT_MALFORMED;
		}
		cmd = pk ? d->cmd : ht_bytes_cmd(p + off, (size_t)plen);
		enum ht_vc pvc = pk ? (enum ht_vc)d->vc : ht_cmd_vc(cmd);

		if (pvc == HT_VC_NONE || (unsigned)pvc != vc)
			return -HTOE_DROP_VC;
		if (++n > npkts)
			return -HTOE_DROP_COUNT;
		nd += ht_cmd_has_data(cmd);
		off += (size_t)plen;
		prev = d;
	}
	if (n != npkts)
		return -HTOE_DROP_COUNT;
	*ndata = nd;
	return 0;
}

int htoe_payload_check(const uint8_t *p, size_t len, unsigned npkts, unsigned vc)
{
	unsigned ndata;

	return payload_check(p, len, npkts, vc, &ndata, NULL);
}

void htoe_pkt_iter_init(struct htoe_pkt_iter *it, const uint8_t *payload, size_t len)
{
	it->p = payload;
	it->len = len;
	it->off = 0;
	it->idx = 0;
}

int htoe_pkt_iter_next(struct htoe_pkt_iter *it, const uint8_t **pkt, size_t *pkt_len)
{
	if (it->off >= it->len)
		return 0;
	size_t rem = it->len - it->off;
	int n = ht_peek_len(it->p + it->off, rem);

	if (n == HT_E_TRUNCATED || (n > 0 && (size_t)n > rem))
		return -HTOE_DROP_LENGTH;
	if (n <= 0)
		return -HTOE_DROP_HT_MALFORMED;
	*pkt = it->p + it->off;
	*pkt_len = (size_t)n;
	it->off += (size_t)n;
	it->idx++;
	return 1;
}

int htoe_frame_parse(const uint8_t *frame, size_t len, unsigned mtu,
		     struct htoe_hdr *h, const uint8_t **payload)
{
	return htoe_frame_parse_desc(frame, len, mtu, h, payload, NULL);
}

int htoe_frame_parse_desc(const uint8_t *frame, size_t len, unsigned mtu,
			  struct htoe_hdr *h, const uint8_t **payload, struct ht_desc *pk)
{
	return htoe_frame_parse_lap(frame, len, mtu, h, payload, pk, NULL, NULL);
}

/* The header's 16-bit fields from src_node to payload_len (wire bytes 4..25)
 * lie in struct htoe_hdr in the same order, without a gap: they are read
 * three 64-bit words at a time, each word's halves swapped to the host's
 * order (the last word's two bytes past payload_len, the reserved field,
 * land in the padding before crc). */
_Static_assert(offsetof(struct htoe_hdr, dst_node) == offsetof(struct htoe_hdr, src_node) + 2 &&
		       offsetof(struct htoe_hdr, seq) == offsetof(struct htoe_hdr, src_node) + 4 &&
		       offsetof(struct htoe_hdr, ack) == offsetof(struct htoe_hdr, src_node) + 6 &&
		       offsetof(struct htoe_hdr, credit) == offsetof(struct htoe_hdr, src_node) + 8 &&
		       offsetof(struct htoe_hdr, payload_len) ==
			       offsetof(struct htoe_hdr, src_node) + 20 &&
		       offsetof(struct htoe_hdr, crc) >= offsetof(struct htoe_hdr, src_node) + 24 &&
		       HTOE_OFF_DST_NODE == HTOE_OFF_SRC_NODE + 2 &&
		       HTOE_OFF_SEQ == HTOE_OFF_SRC_NODE + 4 && HTOE_OFF_ACK == HTOE_OFF_SRC_NODE + 6 &&
		       HTOE_OFF_CREDIT == HTOE_OFF_SRC_NODE + 8 && HTOE_CR__COUNT == 6 &&
		       HTOE_OFF_PLEN == HTOE_OFF_SRC_NODE + 20 && HTOE_OFF_CRC >= HTOE_OFF_SRC_NODE + 24,
	       "htoe_hdr's 16-bit fields follow the wire's");

static inline __attribute__((always_inline)) void hdr_words(struct htoe_hdr *h, const uint8_t *x)
{
	uint8_t *to = (uint8_t *)h + offsetof(struct htoe_hdr, src_node);

#pragma GCC unroll 3 /* per frame received */
	for (unsigned i = 0; i < 3; i++) {
		uint64_t w;

		memcpy(&w, x + HTOE_OFF_SRC_NODE + 8 * i, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		w = (w >> 8 & 0x00FF00FF00FF00FFull) | (w & 0x00FF00FF00FF00FFull) << 8;
#endif
		memcpy(to + 8 * i, &w, 8);
	}
}

/* Steps 8-10 of the parse, one by one: the fields a type does not use are 0,
 * the payload length and the packet count fit the type. */
static int hdr_type_check(const struct htoe_hdr *h, uint8_t flags, const uint8_t *x)
{
	/* 8. reserved bits and fields the type does not use */
	if ((flags & HTOE_FLAG_RSVD_MASK) || htoe_get_be16(x + HTOE_OFF_RSVD))
		return -HTOE_DROP_RESERVED;
	if (h->vc == 3)
		return -HTOE_DROP_RESERVED;
	if ((h->ftype != HTOE_FT_DATA && h->vc) || (h->seq && !htoe_ftype_has_seq(h->ftype)))
		return -HTOE_DROP_RESERVED;
	if (h->cold && h->ftype != HTOE_FT_RESET && h->ftype != HTOE_FT_RESET_ACK)
		return -HTOE_DROP_RESERVED;
	if (h->credit_req && h->ftype != HTOE_FT_ACK)
		return -HTOE_DROP_RESERVED;
	if (h->sack && !sack_type(h->ftype))
		return -HTOE_DROP_RESERVED;

	/* 9. payload length against the type */
	if (sack_payload(h->ftype, h->sack)) {
		if (h->payload_len < HTOE_SACK_LEN_MIN || h->payload_len > HTOE_SACK_LEN_MAX ||
		    h->payload_len % 4)
			return -HTOE_DROP_LENGTH;
	} else if (h->payload_len && !htoe_ftype_has_payload(h->ftype)) {
		return -HTOE_DROP_LENGTH;
	}
	if (h->ftype == HTOE_FT_DATA && h->payload_len == 0)
		return -HTOE_DROP_LENGTH;

	/* 10. packet count against the type */
	if ((h->ftype == HTOE_FT_DATA) != (h->npkts != 0))
		return -HTOE_DROP_COUNT;
	return 0;
}

int htoe_frame_parse_lap(const uint8_t *frame, size_t len, unsigned mtu, struct htoe_hdr *h,
			 const uint8_t **payload, struct ht_desc *pk, htoe_lap_fn lap_fn,
			 void *arg)
{
	if (mtu < HTOE_MTU_MIN)
		mtu = HTOE_MTU_MIN;
	if (mtu > HTOE_MTU_MAX)
		mtu = HTOE_MTU_MAX;
	memset(h, 0, sizeof(*h));

	/* 1. Ethernet header */
	if (len < HTOE_ETH_HLEN)
		return -HTOE_DROP_RUNT;
	memcpy(h->dst, frame, 6);
	memcpy(h->src, frame + 6, 6);

	size_t l2 = HTOE_ETH_HLEN;
	uint16_t et = htoe_get_be16(frame + 12);

	/* 2. EtherType, with at most one 802.1Q tag */
	if (et == HTOE_TPID_8021Q) {
		if (len < HTOE_L2_MAX)
			return -HTOE_DROP_RUNT;
		uint16_t tci = htoe_get_be16(frame + 14);

		h->has_vlan = true;
		h->pcp = (uint8_t)(tci >> 13);
		h->dei = (uint8_t)(tci >> 12 & 1);
		h->vid = tci & 0x0FFF;
		l2 = HTOE_L2_MAX;
		et = htoe_get_be16(frame + 16);
	}
	if (et != HTOE_ETHERTYPE)
		return -HTOE_DROP_ETHERTYPE; /* incl. a second tag 8100/88A8 */

	/* 3. room for the HToE header */
	if (len < l2 + HTOE_HDR_LEN)
		return -HTOE_DROP_RUNT;

	const uint8_t *x = frame + l2;

	/* 4, 5. version and type */
	h->version = x[HTOE_OFF_VER_TYPE] >> 4;
	h->ftype = x[HTOE_OFF_VER_TYPE] & 0x0F;
	if (h->version != HTOE_VERSION)
		return -HTOE_DROP_VERSION;
	if (!htoe_ftype_valid(h->ftype))
		return -HTOE_DROP_TYPE;

	uint8_t flags = x[HTOE_OFF_FLAGS];

	h->vc = flags & HTOE_FLAG_VC_MASK;
	if (flags & ~HTOE_FLAG_VC_MASK) { /* none of them on a DATA frame */
		h->cold = (flags & HTOE_FLAG_COLD) != 0;
		h->credit_req = (flags & HTOE_FLAG_CREDIT_REQ) != 0;
		h->sack = (flags & HTOE_FLAG_SACK) != 0;
	}
	h->npkts = x[HTOE_OFF_NPKTS];
	h->epoch = x[HTOE_OFF_EPOCH];
	hdr_words(h, x);
	h->crc = htoe_get_be32(x + HTOE_OFF_CRC);

	/* 6. payload length against the MTU and the frame */
	if (h->payload_len > HTOE_MAX_PAYLOAD(mtu))
		return -HTOE_DROP_LENGTH;
	if (l2 + HTOE_HDR_LEN + h->payload_len > len)
		return -HTOE_DROP_LENGTH;

	const uint8_t *pl = x + HTOE_HDR_LEN;

	/* 7. CRC32C over header bytes 0..27, the payload and the laps */
	uint32_t crc = frame_crc(x, pl, h->payload_len);

	if (lap_fn) {
		uint64_t prev[2], lap = lap_fn(arg, h, NULL);

		if (lap != HTOE_LAP_UNCHECKED && crc_lap(crc, lap) != h->crc) {
			lap_fn(arg, h, prev);
			for (unsigned i = 0; i < 2; i++)
				if (prev[i] != lap && crc_lap(crc, prev[i]) == h->crc)
					return -HTOE_DROP_STALE_LAP;
			return -HTOE_DROP_CRC;
		}
	} else if (crc != h->crc) {
		return -HTOE_DROP_CRC;
	}

	/* 8-10: a DATA frame with no flag but its VC, payload and packets
	 * passes them all; any other frame takes them one by one */
	if (h->ftype != HTOE_FT_DATA || (flags & ~HTOE_FLAG_VC_MASK) || h->vc == 3 ||
	    !h->payload_len || !h->npkts || htoe_get_be16(x + HTOE_OFF_RSVD)) {
		int rc = hdr_type_check(h, flags, x);

		if (rc)
			return rc;
	}

	/* 11. the HT packets of a DATA frame */
	if (h->ftype == HTOE_FT_DATA) {
		unsigned ndata;
		int rc = 0;

		/* one packet, valid and of the frame's VC: its parse is the
		 * check (anything else is checked packet by packet) */
		if (pk && h->npkts == 1 &&
		    ht_desc_parse(pl, h->payload_len, pk) == (int)h->payload_len &&
		    pk->vc == (int8_t)h->vc)
			ndata = ht_cmd_has_data(pk->cmd);
		else if (pk) /* two copies of the check: with descriptors (the bridge) or not */
			rc = payload_check(pl, h->payload_len, h->npkts, h->vc, &ndata, pk);
		else
			rc = payload_check(pl, h->payload_len, h->npkts, h->vc, &ndata, NULL);
		if (rc)
			return rc;
		h->ndata = (uint8_t)ndata;
	}
	if (payload)
		*payload = pl;
	return 0;
}
