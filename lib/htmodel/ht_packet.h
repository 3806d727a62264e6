/* SPDX-License-Identifier: BSD-3-Clause
 * HyperTransport 3.1 (non-coherent) packet codec.
 *
 * Bit-exact encode/decode of every non-coherent HT packet in
 * docs/ht-model.md (which follows ../shared/reference/hypertransport.md).
 * Sans-I/O: no allocation, no clock, no DPDK.
 *
 * Byte order on the wire ("link order"): each dword little-endian; the
 * 0x3E address-extension prefix first if present, then the control packet,
 * then the data dwords.
 */
#ifndef HT_PACKET_H
#define HT_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HT_MAX_DATA      64u              /* bytes of data in one data packet */
#define HT_MAX_PKT_LEN   (4u + 8u + 4u + HT_MAX_DATA) /* prefix+ctl+mask+data */
#define HT_ADDR_MAX_40   ((1ull << 40) - 1)

/* Packet kinds (what Cmd[5:0] decodes to). Values are stable. */
enum ht_kind {
	HT_K_NOP = 0,
	HT_K_FLUSH,
	HT_K_WRSIZED,     /* posted or non-posted, byte or dword */
	HT_K_RDSIZED,     /* byte or dword */
	HT_K_RDRESPONSE,
	HT_K_TGTDONE,
	HT_K_EXTFC,       /* Extended Flow Control: decoded, never generated */
	HT_K_BROADCAST,
	HT_K_FENCE,
	HT_K_ATOMIC,      /* Count 1: fetch-add, Count 3: compare-swap */
	HT_K_SYNC,
	HT_K__COUNT
};

/* Virtual channels. HT_VC_NONE for info packets (NOP, Sync, ExtFC). */
enum ht_vc { HT_VC_P = 0, HT_VC_NP = 1, HT_VC_R = 2, HT_VC_COUNT = 3, HT_VC_NONE = -1 };

/* Command codes (Cmd[5:0]); sized commands are built from modifier bits. */
#define HT_CMD_NOP        0x00
#define HT_CMD_FLUSH      0x02
#define HT_CMD_WR_NP      0x08  /* 001 d i c: +4 dword, +2 isoc, +1 coherent */
#define HT_CMD_RD         0x10  /* 01 r d i c: +8 ResponsePassPW */
#define HT_CMD_WR_P       0x28  /* 101 d i c */
#define HT_CMD_RDRESP     0x30
#define HT_CMD_TGTDONE    0x33
#define HT_CMD_EXTFC      0x37
#define HT_CMD_BROADCAST  0x3A
#define HT_CMD_FENCE      0x3C
#define HT_CMD_ATOMIC     0x3D
#define HT_CMD_ADDREXT    0x3E
#define HT_CMD_SYNC       0x3F
/* Bits of a sized request's command (WrSized 0 p 1 d i c, RdSized 01 r d i c) */
#define HT_CMD_BIT_POSTED 0x20  /* WrSized: posted */
#define HT_CMD_BIT_RSPPW  0x08  /* RdSized: ResponsePassPW */
#define HT_CMD_BIT_DWORD  0x04  /* dword (not byte) access */
#define HT_UNITIDS        32u   /* UnitIDs on a chain (5 bits) */
#define HT_ALIGN          64u   /* a dword access never crosses a 64-byte boundary */

/* Response error encoding (Error0, Error1). */
enum ht_rsp_err {
	HT_RSP_OK = 0,            /* E0=0 E1=0 */
	HT_RSP_DATA_ERROR = 1,    /* E0=0 E1=1 */
	HT_RSP_TARGET_ABORT = 2,  /* E0=1 E1=0 */
	HT_RSP_MASTER_ABORT = 3,  /* E0=1 E1=1 */
};

/* Atomic operations, selected by Count. */
#define HT_ATOMIC_FETCHADD_COUNT 1u
#define HT_ATOMIC_CAS_COUNT      3u

/*
 * A decoded HT packet. Only the fields that belong to `kind` are meaningful;
 * the others are zero after ht_decode(). ht_encode() requires fields that do
 * not belong to the kind to be zero (it rejects them) so that encode/decode
 * is a bijection.
 */
struct ht_pkt {
	uint8_t  cmd;        /* Cmd[5:0] of the control packet (never 0x3E) */
	uint8_t  kind;       /* enum ht_kind, derived from cmd by ht_decode/ht_pkt_set_cmd */

	/* requests and responses */
	uint8_t  unitid;     /* 5 bits */
	uint8_t  srctag;     /* 5 bits: NP requests and responses */
	uint8_t  seqid;      /* 4 bits: requests */
	uint8_t  passpw;     /* 1 bit */
	uint8_t  count;      /* 4 bits: the raw Count field (byte RdSized: the mask) */
	uint8_t  compat;     /* sized requests, Atomic, Broadcast */
	uint8_t  isoc;       /* Cmd[1] of sized requests; bit 21 of Flush/Fence; bit 7 of responses */
	uint8_t  coherent;   /* Cmd[0] of sized requests */
	uint8_t  dword;      /* Cmd[2] of sized requests: 1 dword, 0 byte */
	uint8_t  posted;     /* WrSized: Cmd[5] */
	uint8_t  responsepasspw; /* RdSized: Cmd[3] */
	uint8_t  chain;      /* posted WrSized bit 19 */
	uint8_t  dataerror;  /* posted WrSized bit 20 */
	uint8_t  bridge;     /* responses bit 14 */
	uint8_t  error0;     /* responses bit 21 */
	uint8_t  error1;     /* responses bit 29 */
	uint8_t  rquid;      /* responses bits 31:30 */
	uint8_t  rspvcset;   /* responses bits 28:26 */
	uint8_t  addrext;    /* 1: the 0x3E prefix precedes the request */
	uint64_t addr;       /* full byte address (Addr[1:0] always 0) */
	uint32_t mask;       /* byte RdSized: Mask[3:0] (== count); byte WrSized: the mask dword */

	/* NOP */
	uint8_t  postcmd, postdata, resp, respdata, npcmd, npdata; /* 0..3 each */
	uint8_t  discon, diag;
	uint8_t  ack;        /* RxNextPktToAck (NOP and ExtFC) */

	/* Extended Flow Control (decode only) */
	uint8_t  extfc_long; /* bit 6: 8-byte form */
	uint8_t  vcset, vcsetrsv;
	uint8_t  vcsetfree[4];

	/* data packet: for byte WrSized, the data dwords after the mask dword */
	uint16_t data_len;   /* bytes, multiple of 4 */
	uint8_t  data[HT_MAX_DATA];
};

/* Decoder/encoder errors (negative return values). */
enum ht_err {
	HT_OK = 0,
	HT_E_TRUNCATED = -1,     /* buffer shorter than the packet Cmd/Count announce */
	HT_E_RESERVED_CMD = -2,  /* reserved command code */
	HT_E_RESERVED_BIT = -3,  /* a reserved bit is set */
	HT_E_BAD_COUNT = -4,     /* Count illegal for this command (atomic, byte write) */
	HT_E_BAD_MASK = -5,      /* byte write crosses its 32-byte window / mask problem */
	HT_E_BAD_PREFIX = -6,    /* 0x3E prefix with extension type != 00, or not before a request */
	HT_E_BAD_ADDR = -7,      /* address not representable / misaligned / crosses 64 B */
	HT_E_BAD_FIELD = -8,     /* a field out of range or not belonging to the kind (encode) */
	HT_E_NOSPACE = -9,       /* encode: output buffer too small */
	HT_E_BAD_SYNC = -10,     /* Cmd 0x3F but the dword is not all ones */
	HT_E_TRAILING = -11,     /* (tools) bytes left after the packet */
	HT_E_BAD_INPUT = -12,    /* (tools) malformed input line: bad hex or JSON */
};

const char *ht_strerror(int err);
const char *ht_kind_name(enum ht_kind k);      /* "NOP", "WrSized", ... */
const char *ht_pkt_name(const struct ht_pkt *p); /* same as ht_kind_name(p->kind) */
enum ht_vc  ht_pkt_vc(const struct ht_pkt *p);
const char *ht_vc_name(enum ht_vc vc);          /* "P", "NP", "R" or NULL */
/* The VC of a packet with Cmd[5:0] = cmd (HT_VC_NONE: info packet or not a
 * packet kind). */
enum ht_vc ht_cmd_vc(uint8_t cmd);

/* Classify a Cmd[5:0] value: returns the kind, HT_E_RESERVED_CMD for a
 * reserved code, HT_E_BAD_PREFIX for 0x3E (a prefix, not a packet kind) and
 * HT_E_BAD_FIELD for values above 0x3F. */
int ht_cmd_kind(uint8_t cmd);

/*
 * Lengths. ht_pkt_ctl_len: prefix + control bytes (the part with CTL=1).
 * ht_pkt_len: the whole packet in bytes (control + data, incl. byte-write mask).
 * Both are computed from cmd, Count, addr/addrext (prefix) and extfc_long;
 * 0 if cmd is not a packet kind.
 */
size_t ht_pkt_ctl_len(const struct ht_pkt *p);
size_t ht_pkt_len(const struct ht_pkt *p);

/*
 * Length of the packet starting at buf[0..len) from its Cmd and Count alone
 * (following a 0x3E prefix if present). Returns the length in bytes, or a
 * negative enum ht_err (HT_E_TRUNCATED when fewer than 4 bytes, or when the
 * prefix or control dword itself is cut off; HT_E_RESERVED_CMD;
 * HT_E_BAD_PREFIX). Used to split a stream of back-to-back packets.
 */
int ht_peek_len(const uint8_t *buf, size_t len);
/* The same, by the table alone (the reference for the tests; ht_peek_len
 * takes a fast path for valid common packets). */
int ht_peek_len_table(const uint8_t *buf, size_t len);

/* Decode exactly one packet from buf[0..len); returns the bytes consumed or a
 * negative enum ht_err. Never reads past buf+len. */
int ht_decode(const uint8_t *buf, size_t len, struct ht_pkt *out);

/* Encode p into buf[0..cap); returns the bytes written or a negative enum
 * ht_err. Validates every field (range, belonging to the kind) with the same
 * rules as ht_decode(); data[] bytes past data_len must be zero. The 0x3E
 * prefix is emitted iff addrext is 1 or addr > HT_ADDR_MAX_40. */
int ht_encode(const struct ht_pkt *p, uint8_t *buf, size_t cap);

/* ht_decode() without the decoded packet: the same return value (bytes
 * consumed or the same negative enum ht_err) for every input, much cheaper
 * for the common packets. For receive paths that only need the verdict. */
int ht_validate(const uint8_t *buf, size_t len);

/* Receive fast path: if buf[0..len) starts with a valid common packet
 * (WrSized dword, RdSized, RdResponse, TgtDone, NOP without prefix), its
 * length n, and then ht_peek_len(buf, len) == ht_validate(buf, n) == n;
 * otherwise 0 (not one of those, or not valid: use ht_peek_len and
 * ht_validate). Reads only buf[0..n). */
int ht_peek_valid(const uint8_t *buf, size_t len);

/*
 * A parsed packet: what a hot path needs to route, remap, check and apply a
 * packet, read once where the packet enters and carried with it. It points
 * into the caller's bytes (nothing is copied), so it lives as long as they
 * do; code that rewrites the bytes (a tag or an address) updates the
 * descriptor's fields too.
 */
struct ht_desc {
	const uint8_t *pkt;  /* the encoded packet, 0x3E prefix included */
	uint16_t len;        /* bytes of the whole packet */
	uint16_t data_off;   /* offset of the data packet in pkt (byte WrSized: after the mask dword); 0: none */
	uint16_t data_len;   /* bytes of data (0: none) */
	uint8_t  ctl;        /* offset of the control packet: 0, or 4 after a 0x3E prefix */
	uint8_t  cmd;        /* Cmd[5:0] of the control packet */
	uint8_t  kind;       /* enum ht_kind */
	int8_t   vc;         /* enum ht_vc (HT_VC_NONE for info packets) */
	uint8_t  unitid;     /* requests and responses */
	uint8_t  srctag;     /* NP requests and responses */
	uint8_t  passpw;
	uint8_t  count;      /* the raw Count field */
	uint8_t  rsp_err;    /* responses: enum ht_rsp_err */
	uint64_t addr;       /* requests with an address (RdSized, WrSized, Atomic, Broadcast) */
};

/*
 * Validate the packet at buf[0..len) exactly as ht_decode() does (same
 * return value: its length, or the same negative enum ht_err) and fill d.
 * The common packets (WrSized dword, RdSized, RdResponse, TgtDone, NOP) are
 * read from their bytes without a full decode.
 */
int ht_desc_parse(const uint8_t *buf, size_t len, struct ht_desc *d);

/* The same, for the packet that follows prev (NULL: none) in a frame: a
 * packet like prev (a run of writes, reads or responses: the same first
 * dword but for UnitID, SrcTag and Addr[7:6]) is read from those and its
 * address alone, with prev's verdict. Same results as ht_desc_parse(). */
int ht_desc_parse_after(const uint8_t *buf, size_t len, const struct ht_desc *prev,
			struct ht_desc *d);

/* Full decode of a parsed packet (the slow path: tools, rare kinds). */
static inline int ht_desc_decode(const struct ht_desc *d, struct ht_pkt *out)
{
	return ht_decode(d->pkt, d->len, out);
}

/*
 * Fast encoders for the shapes the endpoint model sends most, writing the
 * bytes straight into the caller's buffer (no struct ht_pkt). Each gives the
 * same bytes as ht_encode() of the equivalent struct ht_pkt (the tests check
 * it against ht_encode_table on random fields).
 *
 * ht_enc_sized: RdSized (dword, or byte with count = Mask[3:0]) or WrSized
 * dword (posted or not: cmd says which; data holds 4 * (count + 1) bytes)
 * with SeqID, Compat, Chain and DataError 0, SrcTag ignored for posted
 * writes. Returns the length written, 0 when the address needs the 0x3E
 * prefix or cmd is another command (use ht_encode), or HT_E_NOSPACE,
 * HT_E_BAD_FIELD (a field out of range) or HT_E_BAD_ADDR (misaligned, a
 * dword access crossing its 64-byte block).
 *
 * ht_enc_rsp: RdResponse (cmd HT_CMD_RDRESP, 4 * (count + 1) data bytes
 * from data, or all ones when data is NULL) or TgtDone (HT_CMD_TGTDONE,
 * count 0, data unused) with Isoc, RqUID and RspVCSet 0. Returns the length,
 * HT_E_NOSPACE or HT_E_BAD_FIELD.
 */
int ht_enc_sized(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
		 uint8_t passpw, uint8_t count, uint64_t addr, const uint8_t *data);
/* ht_enc_sized, and on success d as ht_desc_parse(buf, n) would give it,
 * without reading the bytes back (the requester's one parse: htoe_local_input_desc). */
int ht_enc_sized_desc(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
		      uint8_t passpw, uint8_t count, uint64_t addr, const uint8_t *data,
		      struct ht_desc *d);
int ht_enc_rsp(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
	       uint8_t passpw, uint8_t bridge, enum ht_rsp_err err, uint8_t count,
	       const uint8_t *data);

/* A dword of a packet in link order (little-endian), read or written with
 * one load or store (byte by byte, gcc -O2 keeps four of each). Plain C11
 * (an installed header: no <endian.h> names without _DEFAULT_SOURCE). */
static inline uint32_t ht_rd_le32(const uint8_t *b)
{
	uint32_t v;

	memcpy(&v, b, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}

static inline void ht_wr_le32(uint8_t *b, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(b, &v, 4);
}

/* Copy n bytes of an HT packet or its data (a multiple of 4 in a well-formed
 * packet, any n works) in 16-, 8- and 4-byte moves: what the codec and the
 * bridge use for packets. A memcpy of a length the compiler knows is small
 * (a uint8_t) is expanded into a byte loop of six instructions a byte, and
 * an unbounded one is a call and a length dispatch; this takes a few
 * instructions per 16 bytes. dst and src do not overlap. */
inline void ht_data_copy(uint8_t *restrict dst, const uint8_t *restrict src, size_t n)
{
	size_t i = 0;

	for (; i + 16 <= n; i += 16)
		memcpy(dst + i, src + i, 16);
	if (i + 8 <= n) {
		memcpy(dst + i, src + i, 8);
		i += 8;
	}
	if (i + 4 <= n) {
		memcpy(dst + i, src + i, 4);
		i += 4;
	}
	for (; i < n; i++) /* not reached for a well-formed HT packet */
		dst[i] = src[i];
}

/* Whether n bytes at a and b are equal, compared as ht_data_copy copies
 * (a read's data against the shadow: no call for a few bytes). */
static inline bool ht_data_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t d = 0, x, y;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	for (; i < n; i++)
		d |= (uint64_t)(a[i] ^ b[i]);
	return d == 0;
}

/* The control dword of a response (what ht_enc_rsp writes first), in link
 * order, for fields already in range. */
static inline void ht_put_rsp_ctl(uint8_t *buf, uint8_t cmd, uint8_t unitid, uint8_t srctag,
				  uint8_t passpw, uint8_t bridge, enum ht_rsp_err err,
				  uint8_t count)
{
	uint32_t w = (uint32_t)cmd | (uint32_t)unitid << 8 | (uint32_t)bridge << 14 |
		     (uint32_t)passpw << 15 | (uint32_t)srctag << 16 |
		     (uint32_t)(err >> 1) << 21 | (uint32_t)count << 22 |
		     (uint32_t)(err & 1) << 29;

	ht_wr_le32(buf, w);
}

/*
 * ht_enc_sized_desc for fields its caller has made legal (the requester, from
 * an op it checked and a tag it took): cmd a RdSized or a WrSized dword,
 * unitid and srctag below 32, passpw 0 or 1, count below 16, addr below 2^40,
 * 4-aligned, a dword access inside its 64-byte block, buf of HT_MAX_PKT_LEN
 * bytes. Writes the packet and *d, checks nothing, returns the length.
 */
static inline int ht_enc_sized_desc_legal(uint8_t *buf, uint8_t cmd, uint8_t unitid,
					  uint8_t srctag, uint8_t passpw, uint8_t count,
					  uint64_t addr, const uint8_t *data, struct ht_desc *d)
{
	bool rd = (cmd & 0x30) == 0x10, posted = cmd & HT_CMD_BIT_POSTED;
	unsigned total = rd ? 8 : 8 + 4u * (count + 1u);
	uint32_t w0 = (uint32_t)cmd | (uint32_t)unitid << 8 | (uint32_t)passpw << 15 |
		      (uint32_t)count << 22 | (uint32_t)((addr >> 2) & 0x3f) << 26;
	uint32_t w1 = (uint32_t)(addr >> 8);

	if (!posted)
		w0 |= (uint32_t)srctag << 16;
	ht_wr_le32(buf, w0);
	ht_wr_le32(buf + 4, w1);
	if (!rd)
		ht_data_copy(buf + 8, data, total - 8);
	/* what ht_desc_parse gives for these bytes (tests/test_ht_model.c) */
	d->pkt = buf;
	d->len = (uint16_t)total;
	d->data_off = rd ? 0 : 8;
	d->data_len = rd ? 0 : (uint16_t)(total - 8);
	d->ctl = 0;
	d->cmd = cmd;
	d->kind = rd ? HT_K_RDSIZED : HT_K_WRSIZED;
	d->vc = rd || !posted ? HT_VC_NP : HT_VC_P;
	d->unitid = unitid;
	d->srctag = posted ? 0 : srctag;
	d->passpw = passpw;
	d->count = count;
	d->rsp_err = 0;
	d->addr = addr;
	return (int)total;
}

/* The table-driven codec: the general case behind ht_encode/ht_decode (which
 * take specialised fast paths for WrSized, RdSized, RdResponse, TgtDone and
 * NOP) and the reference the tests compare the fast paths with. Same
 * contract as ht_encode/ht_decode. */
int ht_encode_table(const struct ht_pkt *p, uint8_t *buf, size_t cap);
int ht_decode_table(const uint8_t *buf, size_t len, struct ht_pkt *out);

/* Set p->cmd and p->kind from the modifier fields (posted, dword, isoc,
 * coherent, responsepasspw) for sized commands, or from the kind alone. */
int ht_pkt_set_cmd(struct ht_pkt *p, enum ht_kind k);

/* Response error helpers */
enum ht_rsp_err ht_pkt_rsp_err(const struct ht_pkt *p);
void ht_pkt_set_rsp_err(struct ht_pkt *p, enum ht_rsp_err e);
const char *ht_rsp_err_name(enum ht_rsp_err e); /* "ok", "data error", "target abort", "master abort" */

/*
 * Field access by name, driven by the codec's own per-kind bit tables, so
 * that tools (htoe-ht, tests) print and parse exactly the fields that belong
 * to a packet without a second copy of the layout.
 */
enum ht_field_id {
	HT_F_SEQID, HT_F_UNITID, HT_F_PASSPW, HT_F_SRCTAG,
	HT_F_POSTED, HT_F_DWORD, HT_F_ISOC, HT_F_COHERENT, HT_F_COMPAT,
	HT_F_RESPONSEPASSPW, HT_F_CHAIN, HT_F_DATAERROR,
	HT_F_BRIDGE, HT_F_ERROR0, HT_F_ERROR1, HT_F_RQUID, HT_F_RSPVCSET,
	HT_F_COUNT, HT_F_MASK, HT_F_ADDR, HT_F_ADDREXT,
	HT_F_POSTCMD, HT_F_POSTDATA, HT_F_RESP, HT_F_RESPDATA, HT_F_NPCMD,
	HT_F_NPDATA, HT_F_DISCON, HT_F_DIAG, HT_F_ACK,
	HT_F_LONG, HT_F_VCSET, HT_F_VCSETRSV,
	HT_F_VCSETFREE0, HT_F_VCSETFREE1, HT_F_VCSETFREE2, HT_F_VCSETFREE3,
	HT_F__COUNT
};

/* Lower-case name as used by htoe-ht ("seqid", "long" for extfc_long,
 * "vcsetfree0".."vcsetfree3"); NULL if out of range. */
const char *ht_field_name(enum ht_field_id f);
/* The id for a name, or -1. */
int ht_field_by_name(const char *name);
uint64_t ht_pkt_get(const struct ht_pkt *p, enum ht_field_id f); /* 0 for a bad id */
/* HT_E_BAD_FIELD for a bad id or if v does not fit the struct member. */
int ht_pkt_set(struct ht_pkt *p, enum ht_field_id f, uint64_t v);
/*
 * The fields that belong to p's packet layout, in display order, chosen by
 * p->cmd (and p->extfc_long for ExtFC). Writes up to HT_F__COUNT ids and
 * returns how many, or a negative enum ht_err for an invalid cmd.
 */
int ht_pkt_fields(const struct ht_pkt *p, uint8_t ids[HT_F__COUNT]);

/* Atomic: "fetchadd" (Count 1), "cas" (Count 3), else NULL. */
const char *ht_atomic_op_name(const struct ht_pkt *p);

/* ---- byte-level helpers ------------------------------------------------
 * Little-endian 64-bit values in data packets (atomic operands, the old
 * value of an atomic), and access to an encoded packet (link order) on hot
 * paths without a full decode. The control packet follows the 0x3E prefix
 * if there is one.
 */
static inline uint64_t ht_get_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline void ht_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A data packet follows the control packet: WrSized, Atomic, RdResponse. */
static inline bool ht_cmd_has_data(uint8_t cmd)
{
	return (cmd & 0x38u) == 0x08u || (cmd & 0x38u) == 0x28u || cmd == HT_CMD_ATOMIC ||
	       cmd == HT_CMD_RDRESP;
}

/* Offset of the control packet in an encoded packet of len bytes. */
static inline size_t ht_bytes_ctl(const uint8_t *pkt, size_t len)
{
	return (len >= 12 && (pkt[0] & 0x3fu) == HT_CMD_ADDREXT) ? 4 : 0;
}

static inline uint8_t ht_bytes_cmd(const uint8_t *pkt, size_t len)
{
	return pkt[ht_bytes_ctl(pkt, len)] & 0x3fu;
}

static inline bool ht_bytes_has_data(const uint8_t *pkt, size_t len)
{
	return ht_cmd_has_data(ht_bytes_cmd(pkt, len));
}

/* PassPW: bit 15 of the control dword (requests and responses). */
static inline bool ht_bytes_passpw(const uint8_t *pkt, size_t len)
{
	return pkt[ht_bytes_ctl(pkt, len) + 1] >> 7;
}

/* UnitID: bits 12:8, SrcTag: bits 20:16 of the control dword. */
static inline void ht_bytes_get_tag(const uint8_t *pkt, size_t len, uint8_t *unitid,
				    uint8_t *srctag)
{
	size_t o = ht_bytes_ctl(pkt, len);

	*unitid = pkt[o + 1] & 0x1fu;
	*srctag = pkt[o + 2] & 0x1fu;
}

static inline void ht_bytes_set_tag(uint8_t *pkt, size_t len, uint8_t unitid, uint8_t srctag)
{
	size_t o = ht_bytes_ctl(pkt, len);

	pkt[o + 1] = (uint8_t)((pkt[o + 1] & 0xe0u) | (unitid & 0x1fu));
	pkt[o + 2] = (uint8_t)((pkt[o + 2] & 0xe0u) | (srctag & 0x1fu));
}

/*
 * Rewrite the address of an encoded request (RdSized, WrSized, Atomic,
 * Broadcast) in place: Addr[7:2] in bits 31:26 of the control dword,
 * Addr[39:8] in the next dword, Addr[63:40] in the 0x3E prefix. Returns 0,
 * or -1 when the packet has no prefix and addr needs one (encode it again).
 * The caller keeps the address legal for the packet (alignment, 64-byte
 * window): the bridge translates by multiples of 64 bytes.
 */
static inline int ht_bytes_set_addr(uint8_t *pkt, size_t len, uint64_t addr)
{
	size_t o = ht_bytes_ctl(pkt, len);
	uint32_t hi = (uint32_t)(addr >> 8);

	if (!o && addr > HT_ADDR_MAX_40)
		return -1;
	pkt[o + 3] = (uint8_t)((pkt[o + 3] & 0x03u) | (((addr >> 2) & 0x3fu) << 2));
	ht_wr_le32(pkt + o + 4, hi);
	if (o) {
		pkt[1] = (uint8_t)(addr >> 40);
		pkt[2] = (uint8_t)(addr >> 48);
		pkt[3] = (uint8_t)(addr >> 56);
	}
	return 0;
}

/* Response error bits of an encoded response: Error0 = bit 21, Error1 = bit 29. */
static inline enum ht_rsp_err ht_bytes_rsp_err(const uint8_t *pkt, size_t len)
{
	(void)len;
	return (enum ht_rsp_err)(((pkt[2] >> 5) & 1u) << 1 | ((pkt[3] >> 5) & 1u));
}

#endif
