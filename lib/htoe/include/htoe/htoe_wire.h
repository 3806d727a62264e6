/* SPDX-License-Identifier: BSD-3-Clause
 * HToE wire format: Ethernet / 802.1Q framing, the 32-byte HToE header,
 * the payload of back-to-back HT packets, CRC32C and padding.
 *
 * The HToE 1.0 specification is member-only; this header is the project's own
 * ("HToE-like, experimental"). docs/wire-format.md is the normative
 * description, with byte diagrams and the receiver's validation order.
 *
 * Sans-I/O: no allocation, no clock, no I/O. Every function works on buffers
 * the caller owns.
 *
 * Frame layout:
 *   dst MAC(6) src MAC(6) [8100 TCI(2)] 88B5 | HToE header(32) | payload | pad
 * Multi-byte header fields are big-endian. The frame is padded with zeros to
 * 60 bytes (FCS excluded). The CRC32C at header offset 28 covers header bytes
 * 0..27 followed by the payload.
 *
 * Return conventions:
 *  - builders (htoe_hdr_write, htoe_frame_seal, htoe_frame_set_*) return a
 *    length/offset >= 0 or a negative errno value (-EINVAL, -ENOSPC,
 *    -EMSGSIZE): these are caller bugs, not wire events;
 *  - receivers (htoe_frame_parse, htoe_payload_check) return 0 or
 *    -(enum htoe_drop): the reason the frame is dropped.
 */
#ifndef HTOE_WIRE_H
#define HTOE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The 16-bit counters of the header wrap: frame sequence numbers and acks,
 * and the credit counters. a - b as a signed distance in [-32768, 32767]
 * (serial arithmetic), exact while the two are less than 2^15 apart. The
 * one helper for all of them (htoe_retry.h, htoe_credit.h). */
inline int32_t htoe_seq_diff(uint16_t a, uint16_t b)
{
	return (int32_t)(int16_t)(uint16_t)(a - b);
}

#define HTOE_ETHERTYPE      0x88B5u /* IEEE 802 Local Experimental EtherType 1 */
#define HTOE_TPID_8021Q     0x8100u
#define HTOE_TPID_8021AD    0x88A8u /* S-tag: never accepted (double tag) */

#define HTOE_ETH_HLEN       14u     /* dst + src + EtherType */
#define HTOE_VLAN_HLEN      4u      /* TPID + TCI */
#define HTOE_L2_MAX         (HTOE_ETH_HLEN + HTOE_VLAN_HLEN)
#define HTOE_HDR_LEN        32u     /* the HToE header */
#define HTOE_MIN_FRAME      60u     /* Ethernet minimum without FCS */

#define HTOE_VERSION        1u

/* MTU = HToE header + payload (the Ethernet header is not counted). */
#define HTOE_MTU_DEFAULT    1500u
#define HTOE_MTU_MIN        64u
#define HTOE_MTU_MAX        9000u
#define HTOE_MAX_PAYLOAD(mtu) ((mtu) - HTOE_HDR_LEN)
/* Largest frame this layer ever builds or accepts (without FCS). */
#define HTOE_FRAME_MAX      (HTOE_L2_MAX + HTOE_MTU_MAX)

/* Header byte offsets (relative to the start of the HToE header). */
#define HTOE_OFF_VER_TYPE   0u
#define HTOE_OFF_FLAGS      1u
#define HTOE_OFF_NPKTS      2u
#define HTOE_OFF_EPOCH      3u
#define HTOE_OFF_SRC_NODE   4u
#define HTOE_OFF_DST_NODE   6u
#define HTOE_OFF_SEQ        8u
#define HTOE_OFF_ACK        10u
#define HTOE_OFF_CREDIT     12u   /* 6 x u16 */
#define HTOE_OFF_PLEN       24u
#define HTOE_OFF_RSVD       26u
#define HTOE_OFF_CRC        28u
#define HTOE_CRC_COVER_HDR  28u   /* header bytes covered by the CRC */

/* Flags byte */
#define HTOE_FLAG_VC_MASK   0x03u /* bits 1:0 VC of the payload (DATA) */
#define HTOE_FLAG_COLD      0x04u /* bit 2: cold reset (RESET, RESET_ACK) */
#define HTOE_FLAG_CREDIT_REQ 0x08u /* bit 3: ACK only: "send me your credit limits" */
/* bit 4: RESET, RESET_ACK: "I use selective retry" (capability);
 * ACK, NAK: the payload is a SACK block (htoe_retry.h, docs/wire-format.md) */
#define HTOE_FLAG_SACK      0x10u
#define HTOE_FLAG_RSVD_MASK 0xE0u /* bits 7:5 reserved, must be 0 */
/* Payload of an ACK/NAK with the SACK flag: 4 + 4k bytes, k = 1..128 */
#define HTOE_SACK_LEN_MIN   8u
#define HTOE_SACK_LEN_MAX   516u

/* Frame types (low nibble of header byte 0). 0 and 7..15 are invalid. */
enum htoe_ftype {
	HTOE_FT_DATA = 1,       /* HT packets of one VC */
	HTOE_FT_ACK = 2,        /* ack + credits, no payload */
	HTOE_FT_NAK = 3,        /* ack = expected seq; go-back-N from it */
	HTOE_FT_RESET = 4,      /* VL reset; epoch = the new epoch */
	HTOE_FT_RESET_ACK = 5,  /* VL reset acknowledged; epoch echoed */
	HTOE_FT_CTRL = 6,       /* control message, payload opaque here */
};
#define HTOE_FT_MIN HTOE_FT_DATA
#define HTOE_FT_MAX HTOE_FT_CTRL

const char *htoe_ftype_name(unsigned ftype); /* "DATA", ... or "?" */
inline bool htoe_ftype_valid(unsigned ftype)
{
	return ftype >= HTOE_FT_MIN && ftype <= HTOE_FT_MAX;
}

/* Types that may carry a payload: DATA, CTRL, RESET and RESET_ACK. */
inline bool htoe_ftype_has_payload(unsigned ftype)
{
	return ftype != HTOE_FT_ACK && ftype != HTOE_FT_NAK && htoe_ftype_valid(ftype);
}

/* Types that use the seq field: DATA (frame sequence number), RESET and
 * RESET_ACK (the reset nonce). It must be 0 in the others. */
inline bool htoe_ftype_has_seq(unsigned ftype)
{
	return ftype == HTOE_FT_DATA || ftype == HTOE_FT_RESET || ftype == HTOE_FT_RESET_ACK;
}

/*
 * Payload of RESET and RESET_ACK (exactly HTOE_RESET_PAYLOAD_LEN bytes):
 *   0..3   incarnation of the sender (u32, big-endian)
 *   4..11  nonce (u64, big-endian): RESET: the sender's nonce;
 *          RESET_ACK: the nonce of the RESET it answers
 * The seq field of both carries the low 16 bits of the nonce.
 * Payload of CTRL: the message, then a 4-byte trailer with the incarnation
 * of the sender (u32, big-endian); payload_len >= HTOE_CTRL_TRAILER_LEN.
 * htoe_frame_parse() checks neither (the payload of these types is opaque
 * to this layer); the bridge drops other lengths (HTOE_DROP_LENGTH).
 * docs/wire-format.md ("Incarnations and nonces").
 */
#define HTOE_RESET_PAYLOAD_LEN 12u
#define HTOE_CTRL_TRAILER_LEN  4u

/* The one CTRL message the bridge handles itself: LEAVE, "this node stops"
 * (htoe_leave()): exactly (HTOE_LEAVE_PROTO, HTOE_LEAVE_VERSION). */
#define HTOE_LEAVE_PROTO   0x42u  /* 'B': bye */
#define HTOE_LEAVE_VERSION 1u
#define HTOE_LEAVE_LEN     2u

/* The header of a CTRL message of a protocol above HT (memory leases,
 * memory digests): byte 0 the protocol, byte 1 its version. 0 if msg[0..len)
 * starts with (proto, version); -EPROTO if not a message of proto (empty, or
 * another protocol byte: the caller may hand it to another protocol);
 * -EPROTONOSUPPORT for a version it does not know. The rest of the message
 * is the protocol's to check. */
int htoe_ctrl_hdr_check(const uint8_t *msg, size_t len, uint8_t proto, uint8_t version);

/* Credit classes, in header order (offset 12 + 2*class). The numbering is
 * 2*vc + data, the same as ht_link_class() in lib/htmodel. */
enum htoe_credit_class {
	HTOE_CR_P_CMD = 0,
	HTOE_CR_P_DATA,
	HTOE_CR_NP_CMD,
	HTOE_CR_NP_DATA,
	HTOE_CR_R_CMD,
	HTOE_CR_R_DATA,
	HTOE_CR__COUNT
};

/*
 * Every reason a frame (or an HT packet in it) is dropped anywhere in the
 * bridge. One enum, so that the counters and the logs of all layers use the
 * same names. The wire layer detects RUNT..VC; the others are for the later
 * layers (htoe.c, htoe_retry.c, htoe_credit.c, htoe_reset.c).
 * Functions return the negative value. Append new reasons before
 * HTOE_DROP__COUNT and name them in htoe_drop_name().
 */
enum htoe_drop {
	HTOE_DROP_NONE = 0,
	HTOE_DROP_RUNT,          /* shorter than Ethernet header (+ tag) + 32 */
	HTOE_DROP_ETHERTYPE,     /* not 0x88B5, or more than one VLAN tag */
	HTOE_DROP_VERSION,       /* HToE version != 1 */
	HTOE_DROP_TYPE,          /* frame type 0 or 7..15 */
	HTOE_DROP_RESERVED,      /* a reserved bit/field is non-zero, VC 3, COLD
	                          * or seq or VC where the type forbids it */
	HTOE_DROP_LENGTH,        /* payload length inconsistent with the frame,
	                          * the type or the MTU; HT lengths do not add up */
	HTOE_DROP_CRC,           /* CRC32C mismatch */
	HTOE_DROP_HT_MALFORMED,  /* an HT packet in the payload does not decode */
	HTOE_DROP_COUNT,         /* npkts does not match the payload / the type */
	HTOE_DROP_VC,            /* HT packet of another VC, or an info packet */
	HTOE_DROP_NOT_FOR_US,    /* destination node is not the local node */
	HTOE_DROP_UNKNOWN_PEER,  /* source node not in the peer table */
	HTOE_DROP_EPOCH,         /* stale VL epoch */
	HTOE_DROP_DUP,           /* duplicate frame (already delivered) */
	HTOE_DROP_OUT_OF_ORDER,  /* seq beyond the expected one (gap) */
	HTOE_DROP_NO_CREDIT,     /* the sender overran the credits granted */
	HTOE_DROP_SRC_MAC,       /* Ethernet source MAC is not the peer table's MAC
	                          * of the node the header claims to be from */
	HTOE_DROP_NONCE,         /* RESET_ACK that does not echo our pending RESET */
	HTOE_DROP_INCARNATION,   /* RESET/RESET_ACK/CTRL of a retired incarnation
	                          * of the peer, or a CTRL that announced a new one */
	HTOE_DROP_STALE_LAP,     /* the CRC32C matches only with an earlier lap of
	                          * seq/ack: a frame of an earlier sequence lap */
	HTOE_DROP__COUNT
};

/* "runt", "ethertype", ...; accepts the positive or the negative value;
 * "?" for anything out of range. */
const char *htoe_drop_name(int reason);

/*
 * A decoded header: Ethernet, optional 802.1Q tag and the HToE header.
 * htoe_frame_parse() fills every field; htoe_hdr_write() reads all but
 * version (always HTOE_VERSION) and crc (computed by htoe_frame_seal()).
 */
struct htoe_hdr {
	uint8_t  dst[6];
	uint8_t  src[6];
	bool     has_vlan;
	uint8_t  pcp;          /* 0..7: the VL's priority */
	uint8_t  dei;          /* 0..1 */
	uint16_t vid;          /* 0..4095 */

	uint8_t  version;      /* parse: the version found (always 1 on success) */
	uint8_t  ftype;        /* enum htoe_ftype */
	uint8_t  vc;           /* enum ht_vc of the payload (DATA); 0 otherwise */
	bool     cold;         /* RESET, RESET_ACK: cold reset */
	bool     credit_req;   /* ACK: the sender is starved and asks for our limits */
	bool     sack;         /* RESET/RESET_ACK: selective capability; ACK/NAK:
	                        * the payload is a SACK block */
	uint8_t  npkts;        /* HT packets in the payload (DATA) */
	uint8_t  ndata;        /* parse, DATA: of those, the ones with a data packet */
	uint8_t  epoch;        /* VL epoch */
	uint16_t src_node;
	uint16_t dst_node;
	uint16_t seq;          /* DATA: sequence number; RESET/RESET_ACK: nonce; else 0 */
	uint16_t ack;          /* next sequence number expected from the peer */
	uint16_t credit[HTOE_CR__COUNT]; /* cumulative credit limits */
	uint16_t payload_len;  /* bytes of payload (DATA, CTRL) */
	uint32_t crc;          /* parse: the CRC32C found (and verified) */
};

/* Ethernet header length for h: 14, or 18 with a VLAN tag. */
size_t htoe_l2_len(const struct htoe_hdr *h);

/*
 * Check that the fields of h are in range and consistent with its type
 * (the rules htoe_frame_parse() enforces on the header, except the payload
 * and npkts, which the caller fills in later). Returns 0 or -EINVAL.
 */
int htoe_hdr_check(const struct htoe_hdr *h);

/*
 * Write the Ethernet header (+ 802.1Q tag) and the HToE header for h into
 * buf[0..cap). The CRC field is written as 0 (htoe_frame_seal() fills it).
 * The payload length field is written from h->payload_len (usually 0 at this
 * point; htoe_frame_seal() overwrites it). Returns the offset of the payload
 * (htoe_l2_len(h) + 32), -ENOSPC if cap is too small, -EINVAL if h fails
 * htoe_hdr_check().
 */
int htoe_hdr_write(const struct htoe_hdr *h, uint8_t *buf, size_t cap);

/*
 * Finish a frame whose headers were written by htoe_hdr_write() at frame[0]
 * and whose payload_len bytes of payload follow at frame[l2_len + 32]:
 * write payload_len into the header, compute the CRC32C over header bytes
 * 0..27 and the payload, store it, and zero-pad up to 60 bytes. Returns the
 * frame length (max(60, l2_len + 32 + payload_len)).
 * Errors: -EINVAL (l2_len not 14/18, payload on a type without payload),
 * -EMSGSIZE (32 + payload_len > HTOE_MTU_MAX), -ENOSPC (cap too small).
 */
int htoe_frame_seal(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len);

/*
 * The bytes every frame of one VL starts with: the Ethernet header (with
 * its 802.1Q tag), the HToE version and the two node ids, checked and
 * written once when the VL is set up (htoe_hdr_template, from dst, src,
 * has_vlan, pcp, dei, vid, src_node and dst_node of h). A DATA frame is
 * then a copy of it with the per-frame fields written over
 * (htoe_hdr_data), its payload, and htoe_frame_seal_data: the same bytes
 * as htoe_hdr_write + htoe_frame_set_npkts + htoe_frame_seal, without
 * checking and re-reading a header the bridge has just built.
 */
struct htoe_hdr_tmpl {
	uint8_t b[HTOE_L2_MAX + HTOE_HDR_LEN];
	uint8_t l2;            /* 14, or 18 with the tag */
};
/* 0, or -EINVAL (a field out of range, as htoe_hdr_write). */
int htoe_hdr_template(const struct htoe_hdr *h, struct htoe_hdr_tmpl *t);
/* The header of a DATA frame of VC vc (0..2) with npkts (1..255) packets:
 * returns its length (the payload goes there), or -ENOSPC. */
int htoe_hdr_data(const struct htoe_hdr_tmpl *t, uint8_t *buf, size_t cap, unsigned vc,
		  unsigned npkts, uint8_t epoch, uint16_t seq, uint16_t ack,
		  const uint16_t credit[HTOE_CR__COUNT]);
/* htoe_frame_seal of a frame htoe_hdr_data began: payload length, CRC32C,
 * padding. Returns the frame length, -EMSGSIZE or -ENOSPC. */
int htoe_frame_seal_data(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len);

/* Sequence laps (docs/wire-format.md, "Sequence laps"): the 16-bit seq and
 * ack of a frame are the low bits of 48-bit numbers; their high 32 bits (the
 * laps) are not sent but covered by the CRC32C: when lap = seq_lap << 32 |
 * ack_lap is not 0, the CRC goes on over its 8 bytes, big-endian, after the
 * payload. The _lap forms of the sealers take it; lap 0 is the plain CRC. */
int htoe_frame_seal_lap(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len,
			uint64_t lap);
int htoe_frame_seal_data_lap(uint8_t *frame, size_t cap, size_t l2_len, size_t payload_len,
			     uint64_t lap);

/* HT packets in one DATA frame at most (the header's npkts byte). */
#define HTOE_FRAME_MAX_PKTS 255u

/* Set the npkts byte of a frame being built (before htoe_frame_seal()). */
int htoe_frame_set_npkts(uint8_t *frame, size_t len, unsigned npkts);

/* Recompute and store the CRC of a sealed frame of length len (as
 * htoe_frame_seal() returned it) after editing header fields other than the
 * payload length: for tests and tools that craft frames (the bridge builds
 * a retransmission anew). Returns 0, or -EINVAL if it is not an HToE frame
 * built by this layer. */
int htoe_frame_reseal(uint8_t *frame, size_t len);

/*
 * Validate a received frame (Ethernet header onwards, FCS already stripped)
 * and decode its headers into *h. mtu is the configured MTU (header +
 * payload); values outside HTOE_MTU_MIN..HTOE_MTU_MAX are clamped. On
 * success *payload (if not NULL) points at the payload inside frame and 0 is
 * returned. A DATA frame's payload is checked with htoe_payload_check(), so a
 * successfully parsed DATA frame can be walked with htoe_pkt_iter.
 * Bytes after the payload are padding and are ignored.
 * On failure returns -(enum htoe_drop); *h is then partially filled (the
 * fields decoded before the failing check), *payload is untouched.
 * The validation order is in docs/wire-format.md ("Receiver validation").
 */
int htoe_frame_parse(const uint8_t *frame, size_t len, unsigned mtu,
		     struct htoe_hdr *h, const uint8_t **payload);

/* htoe_frame_parse, and on success the HT packets of a DATA frame parsed
 * into pk[0..h->npkts) (pk has room for HTOE_FRAME_MAX_PKTS; NULL: not
 * kept), in the same pass that validates them: the receive path parses each
 * packet from the wire once. The descriptors point into frame. */
struct ht_desc;
int htoe_frame_parse_desc(const uint8_t *frame, size_t len, unsigned mtu,
			  struct htoe_hdr *h, const uint8_t **payload, struct ht_desc *pk);

/* htoe_frame_parse_desc with the laps the receiver expects: lap_fn(arg, h,
 * NULL) is called once the header fields are decoded and returns the lap
 * (seq_lap << 32 | ack_lap) the CRC must cover. Only when the CRC does not
 * match, lap_fn(arg, h, prev) also puts in prev[0..1] laps of an earlier
 * lap of seq or ack (equal to the result when there is none): a frame whose
 * CRC matches one of them is -HTOE_DROP_STALE_LAP, else -HTOE_DROP_CRC. HTOE_LAP_UNCHECKED: the caller drops the
 * frame for another reason (not for it, another epoch): the CRC is not
 * checked. */
#define HTOE_LAP_UNCHECKED UINT64_MAX
typedef uint64_t (*htoe_lap_fn)(void *arg, const struct htoe_hdr *h, uint64_t prev[2]);
int htoe_frame_parse_lap(const uint8_t *frame, size_t len, unsigned mtu, struct htoe_hdr *h,
			 const uint8_t **payload, struct ht_desc *pk, htoe_lap_fn lap_fn,
			 void *arg);

/*
 * Check the payload of a DATA frame: a sequence of HT packets, back to back,
 * each in link order. Every packet must decode (ht_decode), belong to VC vc
 * and not be an info packet (NOP, Sync, ExtFC); there must be exactly npkts
 * of them and their lengths must add up to len. Returns 0 or
 * -HTOE_DROP_LENGTH (a packet runs past the end / trailing bytes),
 * -HTOE_DROP_HT_MALFORMED, -HTOE_DROP_VC, -HTOE_DROP_COUNT.
 */
int htoe_payload_check(const uint8_t *p, size_t len, unsigned npkts, unsigned vc);

/*
 * Walk the HT packets of a payload that passed htoe_payload_check() (or
 * htoe_frame_parse()) without decoding them again (ht_peek_len only).
 *
 *   struct htoe_pkt_iter it;
 *   const uint8_t *pkt; size_t n;
 *   htoe_pkt_iter_init(&it, payload, h.payload_len);
 *   while (htoe_pkt_iter_next(&it, &pkt, &n) > 0) ...
 *
 * htoe_pkt_iter_next returns 1 with the next packet, 0 at the end, or
 * -HTOE_DROP_LENGTH / -HTOE_DROP_HT_MALFORMED on a payload that was not
 * checked.
 */
struct htoe_pkt_iter {
	const uint8_t *p;
	size_t len;
	size_t off;   /* offset of the next packet */
	unsigned idx; /* packets returned so far */
};
void htoe_pkt_iter_init(struct htoe_pkt_iter *it, const uint8_t *payload, size_t len);
int htoe_pkt_iter_next(struct htoe_pkt_iter *it, const uint8_t **pkt, size_t *pkt_len);

/*
 * CRC32C (Castagnoli), the standard one: polynomial 0x1EDC6F41 reflected
 * (0x82F63B78), initial value 0xFFFFFFFF, final XOR 0xFFFFFFFF;
 * htoe_crc32c("123456789", 9) == 0xE3069283. Computed with Intel ISA-L.
 * htoe_crc32c_update(crc, ...) continues a CRC: start with crc = 0;
 * update(update(0, a), b) == crc32c(a || b).
 */
uint32_t htoe_crc32c(const void *buf, size_t len);
uint32_t htoe_crc32c_update(uint32_t crc, const void *buf, size_t len);

/* Big-endian helpers (used by the other htoe layers too). */
static inline uint16_t htoe_get_be16(const uint8_t *p)
{
	return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}
static inline uint32_t htoe_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void htoe_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void htoe_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
