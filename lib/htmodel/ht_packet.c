/* SPDX-License-Identifier: BSD-3-Clause
 * HyperTransport 3.1 (non-coherent) packet codec. See docs/ht-model.md.
 *
 * One table per packet layout lists its fields in display order, each with
 * the bit segments it occupies. The same table drives encode, decode, the
 * reserved-bit check, the "field belongs to this kind" check and the field
 * lists htoe-ht prints. No I/O, no allocation.
 */
#include "htmodel/ht_packet.h"

#include <string.h>

/* ---- field descriptors (struct member of each field id) ---- */

struct fld_desc {
	const char *name;
	unsigned short off;
	unsigned char size;
};

#define FD(n, m) { n, (unsigned short)offsetof(struct ht_pkt, m), \
	(unsigned char)sizeof(((struct ht_pkt *)0)->m) }

static const struct fld_desc fld_desc[HT_F__COUNT] = {
	[HT_F_SEQID] = FD("seqid", seqid),
	[HT_F_UNITID] = FD("unitid", unitid),
	[HT_F_PASSPW] = FD("passpw", passpw),
	[HT_F_SRCTAG] = FD("srctag", srctag),
	[HT_F_POSTED] = FD("posted", posted),
	[HT_F_DWORD] = FD("dword", dword),
	[HT_F_ISOC] = FD("isoc", isoc),
	[HT_F_COHERENT] = FD("coherent", coherent),
	[HT_F_COMPAT] = FD("compat", compat),
	[HT_F_RESPONSEPASSPW] = FD("responsepasspw", responsepasspw),
	[HT_F_CHAIN] = FD("chain", chain),
	[HT_F_DATAERROR] = FD("dataerror", dataerror),
	[HT_F_BRIDGE] = FD("bridge", bridge),
	[HT_F_ERROR0] = FD("error0", error0),
	[HT_F_ERROR1] = FD("error1", error1),
	[HT_F_RQUID] = FD("rquid", rquid),
	[HT_F_RSPVCSET] = FD("rspvcset", rspvcset),
	[HT_F_COUNT] = FD("count", count),
	[HT_F_MASK] = FD("mask", mask),
	[HT_F_ADDR] = FD("addr", addr),
	[HT_F_ADDREXT] = FD("addrext", addrext),
	[HT_F_POSTCMD] = FD("postcmd", postcmd),
	[HT_F_POSTDATA] = FD("postdata", postdata),
	[HT_F_RESP] = FD("resp", resp),
	[HT_F_RESPDATA] = FD("respdata", respdata),
	[HT_F_NPCMD] = FD("npcmd", npcmd),
	[HT_F_NPDATA] = FD("npdata", npdata),
	[HT_F_DISCON] = FD("discon", discon),
	[HT_F_DIAG] = FD("diag", diag),
	[HT_F_ACK] = FD("ack", ack),
	[HT_F_LONG] = FD("long", extfc_long),
	[HT_F_VCSET] = FD("vcset", vcset),
	[HT_F_VCSETRSV] = FD("vcsetrsv", vcsetrsv),
	[HT_F_VCSETFREE0] = FD("vcsetfree0", vcsetfree[0]),
	[HT_F_VCSETFREE1] = FD("vcsetfree1", vcsetfree[1]),
	[HT_F_VCSETFREE2] = FD("vcsetfree2", vcsetfree[2]),
	[HT_F_VCSETFREE3] = FD("vcsetfree3", vcsetfree[3]),
};

const char *ht_field_name(enum ht_field_id f)
{
	return (unsigned)f < HT_F__COUNT ? fld_desc[f].name : NULL;
}

int ht_field_by_name(const char *name)
{
	for (int f = 0; f < HT_F__COUNT; f++)
		if (!strcmp(fld_desc[f].name, name))
			return f;
	return -1;
}

static inline uint64_t fget(const struct ht_pkt *p, unsigned f)
{
	const unsigned char *m = (const unsigned char *)p + fld_desc[f].off;
	uint32_t u32;
	uint64_t u64;

	switch (fld_desc[f].size) {
	case 1: return *m;
	case 4: memcpy(&u32, m, 4); return u32;
	default: memcpy(&u64, m, 8); return u64;
	}
}

/* For the codec's own tables: the values always fit the member. */
static inline void fset(struct ht_pkt *p, unsigned f, uint64_t v)
{
	unsigned char *m = (unsigned char *)p + fld_desc[f].off;
	uint32_t u32 = (uint32_t)v;

	switch (fld_desc[f].size) {
	case 1: *m = (uint8_t)v; break;
	case 4: memcpy(m, &u32, 4); break;
	default: memcpy(m, &v, 8); break;
	}
}

uint64_t ht_pkt_get(const struct ht_pkt *p, enum ht_field_id f)
{
	return (unsigned)f < HT_F__COUNT ? fget(p, f) : 0;
}

int ht_pkt_set(struct ht_pkt *p, enum ht_field_id f, uint64_t v)
{
	unsigned char *m = (unsigned char *)p;
	uint8_t u8 = (uint8_t)v;
	uint32_t u32 = (uint32_t)v;

	if ((unsigned)f >= HT_F__COUNT)
		return HT_E_BAD_FIELD;
	m += fld_desc[f].off;
	switch (fld_desc[f].size) {
	case 1:
		if (v > UINT8_MAX)
			return HT_E_BAD_FIELD;
		memcpy(m, &u8, 1);
		break;
	case 4:
		if (v > UINT32_MAX)
			return HT_E_BAD_FIELD;
		memcpy(m, &u32, 4);
		break;
	default:
		memcpy(m, &v, 8);
		break;
	}
	return HT_OK;
}

/* ---- layouts ---- */

/*
 * Bit positions in a 96-bit container: bits 63:0 are the control packet
 * (dword 0, then dword 1), bits 95:64 the 0x3E prefix dword. A segment puts
 * value bits [shift+width-1:shift] at container bits [pos+width-1:pos];
 * segments never straddle a dword.
 */
#define PFX(b) (64 + (b))

struct seg {
	uint8_t pos, width, shift;
};

/* A field of a layout. nseg == 0: the field is not stored in control bits
 * (addrext, the byte-write mask, ExtFC free counts absent from the short
 * form) and vmask is the set of value bits it may have. */
struct fdef {
	uint8_t id;
	uint8_t nseg;
	struct seg seg[3];
	uint32_t vmask;
};

#define F1(id, pos, w)   { id, 1, { { pos, w, 0 } }, 0 }
#define VIRT(id, vmask)  { id, 0, { { 0, 0, 0 } }, vmask }

/* §3 requests */
#define F_SEQID     { HT_F_SEQID, 2, { { 6, 2, 2 }, { 13, 2, 0 } }, 0 }
#define F_UNITID    F1(HT_F_UNITID, 8, 5)
#define F_PASSPW    F1(HT_F_PASSPW, 15, 1)
#define F_SRCTAG    F1(HT_F_SRCTAG, 16, 5)
#define F_CHAIN     F1(HT_F_CHAIN, 19, 1)
#define F_DATAERROR F1(HT_F_DATAERROR, 20, 1)
#define F_COMPAT    F1(HT_F_COMPAT, 21, 1)
#define F_ISOC21    F1(HT_F_ISOC, 21, 1)
#define F_COUNT     F1(HT_F_COUNT, 22, 4)
#define F_ADDR      { HT_F_ADDR, 3, { { 26, 6, 2 }, { 32, 32, 8 }, { PFX(8), 24, 40 } }, 0 }
#define F_ADDREXT   VIRT(HT_F_ADDREXT, 1)
/* §2 modifier bits of the sized commands, Cmd[5:0] = bits 5:0 */
#define F_POSTED    F1(HT_F_POSTED, 5, 1)
#define F_RPP       F1(HT_F_RESPONSEPASSPW, 3, 1)
#define F_DWORD     F1(HT_F_DWORD, 2, 1)
#define F_ISOCCMD   F1(HT_F_ISOC, 1, 1)
#define F_COHERENT  F1(HT_F_COHERENT, 0, 1)
#define F_SIZED     F_POSTED, F_DWORD, F_ISOCCMD, F_COHERENT, F_COMPAT
#define F_REQ       F_SEQID, F_UNITID, F_PASSPW

static const struct fdef f_rd_dw[] = { F_REQ, F_SRCTAG, F_SIZED, F_RPP, F_COUNT,
				       F_ADDR, F_ADDREXT };
static const struct fdef f_rd_b[] = { F_REQ, F_SRCTAG, F_SIZED, F_RPP, F_COUNT,
				      VIRT(HT_F_MASK, 0xf), F_ADDR, F_ADDREXT };
static const struct fdef f_wrnp_dw[] = { F_REQ, F_SRCTAG, F_SIZED, F_COUNT,
					 F_ADDR, F_ADDREXT };
static const struct fdef f_wrnp_b[] = { F_REQ, F_SRCTAG, F_SIZED, F_COUNT,
					VIRT(HT_F_MASK, 0xffffffffu), F_ADDR, F_ADDREXT };
static const struct fdef f_wrp_dw[] = { F_REQ, F_SIZED, F_CHAIN, F_DATAERROR, F_COUNT,
					F_ADDR, F_ADDREXT };
static const struct fdef f_wrp_b[] = { F_REQ, F_SIZED, F_CHAIN, F_DATAERROR, F_COUNT,
				       VIRT(HT_F_MASK, 0xffffffffu), F_ADDR, F_ADDREXT };
static const struct fdef f_flush[] = { F_REQ, F_SRCTAG, F_ISOC21 };
static const struct fdef f_fence[] = { F_REQ, F_ISOC21 };
static const struct fdef f_bcast[] = { F_REQ, F_COMPAT, F_ADDR, F_ADDREXT };
static const struct fdef f_atomic[] = { F_REQ, F_SRCTAG, F_COMPAT, F_COUNT, F_ADDR,
					F_ADDREXT };
/* §5 responses */
static const struct fdef f_resp[] = {
	F1(HT_F_UNITID, 8, 5), F1(HT_F_SRCTAG, 16, 5), F1(HT_F_PASSPW, 15, 1),
	F1(HT_F_ISOC, 7, 1), F1(HT_F_BRIDGE, 14, 1), F1(HT_F_ERROR0, 21, 1),
	F1(HT_F_ERROR1, 29, 1), F1(HT_F_RQUID, 30, 2), F1(HT_F_RSPVCSET, 26, 3),
	F1(HT_F_COUNT, 22, 4),
};
/* §10.1 NOP */
static const struct fdef f_nop[] = {
	F1(HT_F_POSTCMD, 8, 2), F1(HT_F_POSTDATA, 10, 2), F1(HT_F_RESP, 12, 2),
	F1(HT_F_RESPDATA, 14, 2), F1(HT_F_NPCMD, 16, 2), F1(HT_F_NPDATA, 18, 2),
	F1(HT_F_ISOC, 21, 1), F1(HT_F_DISCON, 6, 1), F1(HT_F_DIAG, 22, 1),
	F1(HT_F_ACK, 24, 8),
};
/* §10.2 Extended Flow Control, 4-byte and 8-byte forms */
#define F_EXTFC_HEAD F1(HT_F_LONG, 6, 1), F1(HT_F_VCSET, 8, 3), F1(HT_F_VCSETRSV, 12, 4), \
	F1(HT_F_VCSETFREE0, 16, 8)
static const struct fdef f_extfc_s[] = {
	F_EXTFC_HEAD, VIRT(HT_F_VCSETFREE1, 0), VIRT(HT_F_VCSETFREE2, 0),
	VIRT(HT_F_VCSETFREE3, 0), F1(HT_F_ACK, 24, 8),
};
static const struct fdef f_extfc_l[] = {
	F_EXTFC_HEAD, F1(HT_F_VCSETFREE1, 24, 8), F1(HT_F_VCSETFREE2, 32, 8),
	F1(HT_F_VCSETFREE3, 40, 8), F1(HT_F_ACK, 56, 8),
};

enum data_rule {
	D_NONE,     /* no data packet */
	D_COUNT,    /* Count+1 data dwords */
	D_BYTEWR,   /* mask dword + Count data dwords */
};

/* The bytes of struct ht_pkt before the data packet (the fields). */
#define PKT_HDR_BYTES offsetof(struct ht_pkt, data_len)
#define LAY_MAX_FIELDS 20

/*
 * What each layout's table implies, derived once when the program is loaded
 * (ht_codec_derive) so that encode and decode do not walk the table for it:
 * the container bits the fields occupy (everything else is reserved), the
 * value bits each field may take, and which bytes of struct ht_pkt belong
 * to fields foreign to the layout (they must be zero to encode).
 */
struct lcache {
	uint32_t used[3];
	uint64_t allowed[LAY_MAX_FIELDS];
	uint8_t  foreign[PKT_HDR_BYTES];
	uint64_t foreign64[PKT_HDR_BYTES / 8]; /* foreign[] as words (fast check) */
};

struct layout {
	const struct fdef *f;
	uint8_t nf;
	uint8_t ctl_len;  /* control bytes without the prefix */
	uint8_t data;     /* enum data_rule */
	bool addr;        /* carries an address, may take the 0x3E prefix */
	struct lcache *c;
};

#define LAY(name, arr, ctl, data, addr) \
	static struct lcache name##_c; \
	static const struct layout name = { arr, sizeof(arr) / sizeof((arr)[0]), ctl, data, \
					    addr, &name##_c }

LAY(lay_rd_dw, f_rd_dw, 8, D_NONE, true);
LAY(lay_rd_b, f_rd_b, 8, D_NONE, true);
LAY(lay_wrnp_dw, f_wrnp_dw, 8, D_COUNT, true);
LAY(lay_wrnp_b, f_wrnp_b, 8, D_BYTEWR, true);
LAY(lay_wrp_dw, f_wrp_dw, 8, D_COUNT, true);
LAY(lay_wrp_b, f_wrp_b, 8, D_BYTEWR, true);
LAY(lay_flush, f_flush, 4, D_NONE, false);
LAY(lay_fence, f_fence, 4, D_NONE, false);
LAY(lay_bcast, f_bcast, 8, D_NONE, true);
LAY(lay_atomic, f_atomic, 8, D_COUNT, true);
LAY(lay_rdresp, f_resp, 4, D_COUNT, false);
LAY(lay_tgtdone, f_resp, 4, D_NONE, false);
LAY(lay_nop, f_nop, 4, D_NONE, false);
LAY(lay_extfc_s, f_extfc_s, 4, D_NONE, false);
LAY(lay_extfc_l, f_extfc_l, 8, D_NONE, false);
static struct lcache lay_sync_c;
static const struct layout lay_sync = { NULL, 0, 4, D_NONE, false, &lay_sync_c };

static const struct layout *const all_layouts[] = {
	&lay_rd_dw, &lay_rd_b, &lay_wrnp_dw, &lay_wrnp_b, &lay_wrp_dw, &lay_wrp_b,
	&lay_flush, &lay_fence, &lay_bcast, &lay_atomic, &lay_rdresp, &lay_tgtdone,
	&lay_nop, &lay_extfc_s, &lay_extfc_l, &lay_sync,
};

#define CMD_POSTED 0x20u
#define CMD_RPP    0x08u
#define CMD_DWORD  0x04u
#define CMD_ISOC   0x02u
#define CMD_COH    0x01u
#define EXTFC_LONG_BIT 6

/* The layout for a classified command; extfc_long picks the ExtFC form. */
static const struct layout *layout_of(uint8_t cmd, int kind, unsigned extfc_long)
{
	bool dw = cmd & CMD_DWORD;

	switch (kind) {
	case HT_K_NOP: return &lay_nop;
	case HT_K_FLUSH: return &lay_flush;
	case HT_K_WRSIZED:
		if (cmd & CMD_POSTED)
			return dw ? &lay_wrp_dw : &lay_wrp_b;
		return dw ? &lay_wrnp_dw : &lay_wrnp_b;
	case HT_K_RDSIZED: return dw ? &lay_rd_dw : &lay_rd_b;
	case HT_K_RDRESPONSE: return &lay_rdresp;
	case HT_K_TGTDONE: return &lay_tgtdone;
	case HT_K_EXTFC: return extfc_long ? &lay_extfc_l : &lay_extfc_s;
	case HT_K_BROADCAST: return &lay_bcast;
	case HT_K_FENCE: return &lay_fence;
	case HT_K_ATOMIC: return &lay_atomic;
	default: return &lay_sync;
	}
}

static uint64_t width_mask(unsigned w)
{
	return w >= 64 ? ~0ull : (1ull << w) - 1;
}

/* Value bits a field may take in this layout (0: does not belong). */
static uint64_t allowed_bits(const struct fdef *f)
{
	uint64_t m = f->nseg ? 0 : f->vmask;

	for (unsigned s = 0; s < f->nseg; s++)
		m |= width_mask(f->seg[s].width) << f->seg[s].shift;
	return m;
}

/* Fill every layout's cache from its table (see struct lcache). Runs once,
 * before main(); the caches are read-only afterwards. */
__attribute__((constructor)) static void ht_codec_derive(void)
{
	for (size_t k = 0; k < sizeof(all_layouts) / sizeof(all_layouts[0]); k++) {
		const struct layout *L = all_layouts[k];
		struct lcache *c = L->c;
		bool mine[HT_F__COUNT] = { false };

		memset(c, 0, sizeof(*c));
		for (unsigned i = 0; i < L->nf; i++) {
			mine[L->f[i].id] = true;
			c->allowed[i] = allowed_bits(&L->f[i]);
			for (unsigned s = 0; s < L->f[i].nseg; s++) {
				const struct seg *g = &L->f[i].seg[s];

				c->used[g->pos / 32] |=
					(uint32_t)(width_mask(g->width) << (g->pos % 32));
			}
		}
		for (unsigned f = 0; f < HT_F__COUNT; f++)
			if (!mine[f])
				memset(c->foreign + fld_desc[f].off, 0xff, fld_desc[f].size);
		memcpy(c->foreign64, c->foreign, sizeof(c->foreign64));
	}
}

/* Every byte of p's fields foreign to the layout is zero (padding between
 * the members is masked out by foreign[]). */
static inline bool foreign_zero(const struct ht_pkt *p, const struct lcache *c)
{
	const unsigned char *pb = (const unsigned char *)p;
	uint64_t acc = 0, w;
	size_t i;

	for (i = 0; i < PKT_HDR_BYTES / 8; i++) {
		memcpy(&w, pb + 8 * i, 8);
		acc |= w & c->foreign64[i];
	}
	for (i = 8 * (PKT_HDR_BYTES / 8); i < PKT_HDR_BYTES; i++)
		acc |= pb[i] & c->foreign[i];
	return acc == 0;
}

static void pack(const struct layout *L, const struct ht_pkt *p, uint32_t w[3])
{
	for (unsigned i = 0; i < L->nf; i++) {
		uint64_t v = fget(p, L->f[i].id);

		for (unsigned s = 0; s < L->f[i].nseg; s++) {
			const struct seg *g = &L->f[i].seg[s];
			uint64_t bits = (v >> g->shift) & width_mask(g->width);

			w[g->pos / 32] |= (uint32_t)(bits << (g->pos % 32));
		}
	}
}

static void unpack(const struct layout *L, const uint32_t w[3], struct ht_pkt *p)
{
	for (unsigned i = 0; i < L->nf; i++) {
		uint64_t v = 0;

		if (!L->f[i].nseg)
			continue;
		for (unsigned s = 0; s < L->f[i].nseg; s++) {
			const struct seg *g = &L->f[i].seg[s];
			uint64_t bits = (w[g->pos / 32] >> (g->pos % 32)) & width_mask(g->width);

			v |= bits << g->shift;
		}
		fset(p, L->f[i].id, v); /* fits: widths match the members */
	}
}

/* Bytes of the data packet announced by Count (incl. a byte write's mask). */
static size_t data_bytes(const struct layout *L, unsigned count)
{
	return L->data == D_NONE ? 0 : 4u * (count + 1u);
}

/* ---- names and classification ---- */

static const char *const kind_names[HT_K__COUNT] = {
	[HT_K_NOP] = "NOP", [HT_K_FLUSH] = "Flush", [HT_K_WRSIZED] = "WrSized",
	[HT_K_RDSIZED] = "RdSized", [HT_K_RDRESPONSE] = "RdResponse",
	[HT_K_TGTDONE] = "TgtDone", [HT_K_EXTFC] = "ExtFC",
	[HT_K_BROADCAST] = "Broadcast", [HT_K_FENCE] = "Fence",
	[HT_K_ATOMIC] = "Atomic", [HT_K_SYNC] = "Sync",
};

const char *ht_kind_name(enum ht_kind k)
{
	return (unsigned)k < HT_K__COUNT ? kind_names[k] : NULL;
}

const char *ht_pkt_name(const struct ht_pkt *p)
{
	return ht_kind_name((enum ht_kind)p->kind);
}

const char *ht_strerror(int err)
{
	switch (err) {
	case HT_OK: return "ok";
	case HT_E_TRUNCATED: return "truncated packet";
	case HT_E_RESERVED_CMD: return "reserved command";
	case HT_E_RESERVED_BIT: return "reserved bit set";
	case HT_E_BAD_COUNT: return "illegal count";
	case HT_E_BAD_MASK: return "bad byte-write mask";
	case HT_E_BAD_PREFIX: return "bad address-extension prefix";
	case HT_E_BAD_ADDR: return "bad address";
	case HT_E_BAD_FIELD: return "field out of range or not in this packet";
	case HT_E_NOSPACE: return "output buffer too small";
	case HT_E_BAD_SYNC: return "bad sync packet";
	case HT_E_TRAILING: return "trailing bytes after the packet";
	case HT_E_BAD_INPUT: return "malformed input";
	default: return "unknown error";
	}
}

int ht_cmd_kind(uint8_t cmd)
{
	switch (cmd) {
	case HT_CMD_NOP: return HT_K_NOP;
	case HT_CMD_SYNC: return HT_K_SYNC;
	case HT_CMD_RDRESP: return HT_K_RDRESPONSE;
	case HT_CMD_TGTDONE: return HT_K_TGTDONE;
	default: break;
	}
	if (cmd > 0x3f)
		return HT_E_BAD_FIELD;
	if ((cmd & 0x18) == 0x08)
		return HT_K_WRSIZED;     /* x01xxx */
	if ((cmd & 0x30) == 0x10)
		return HT_K_RDSIZED;     /* 01xxxx */
	switch (cmd) {
	case HT_CMD_FLUSH: return HT_K_FLUSH;
	case HT_CMD_EXTFC: return HT_K_EXTFC;
	case HT_CMD_BROADCAST: return HT_K_BROADCAST;
	case HT_CMD_FENCE: return HT_K_FENCE;
	case HT_CMD_ATOMIC: return HT_K_ATOMIC;
	case HT_CMD_ADDREXT: return HT_E_BAD_PREFIX;
	default: return HT_E_RESERVED_CMD;
	}
}

static int8_t kind_vc(uint8_t kind, uint8_t cmd)
{
	switch (kind) {
	case HT_K_WRSIZED: return (cmd & CMD_POSTED) ? HT_VC_P : HT_VC_NP;
	case HT_K_BROADCAST:
	case HT_K_FENCE: return HT_VC_P;
	case HT_K_FLUSH:
	case HT_K_RDSIZED:
	case HT_K_ATOMIC: return HT_VC_NP;
	case HT_K_RDRESPONSE:
	case HT_K_TGTDONE: return HT_VC_R;
	default: return HT_VC_NONE;
	}
}

enum ht_vc ht_pkt_vc(const struct ht_pkt *p)
{
	return (enum ht_vc)kind_vc(p->kind, p->cmd);
}

const char *ht_vc_name(enum ht_vc vc)
{
	switch (vc) {
	case HT_VC_P: return "P";
	case HT_VC_NP: return "NP";
	case HT_VC_R: return "R";
	default: return NULL;
	}
}

const char *ht_atomic_op_name(const struct ht_pkt *p)
{
	if (p->kind != HT_K_ATOMIC)
		return NULL;
	if (p->count == HT_ATOMIC_FETCHADD_COUNT)
		return "fetchadd";
	if (p->count == HT_ATOMIC_CAS_COUNT)
		return "cas";
	return NULL;
}

enum ht_rsp_err ht_pkt_rsp_err(const struct ht_pkt *p)
{
	return (enum ht_rsp_err)((p->error0 ? 2 : 0) | (p->error1 ? 1 : 0));
}

void ht_pkt_set_rsp_err(struct ht_pkt *p, enum ht_rsp_err e)
{
	p->error0 = (e & 2) ? 1 : 0;
	p->error1 = (e & 1) ? 1 : 0;
}

const char *ht_rsp_err_name(enum ht_rsp_err e)
{
	static const char *const n[] = { "ok", "data error", "target abort", "master abort" };

	return (unsigned)e < 4 ? n[e] : NULL;
}

int ht_pkt_set_cmd(struct ht_pkt *p, enum ht_kind k)
{
	static const uint8_t fixed[HT_K__COUNT] = {
		[HT_K_NOP] = HT_CMD_NOP, [HT_K_FLUSH] = HT_CMD_FLUSH,
		[HT_K_WRSIZED] = HT_CMD_WR_NP, [HT_K_RDSIZED] = HT_CMD_RD,
		[HT_K_RDRESPONSE] = HT_CMD_RDRESP, [HT_K_TGTDONE] = HT_CMD_TGTDONE,
		[HT_K_EXTFC] = HT_CMD_EXTFC, [HT_K_BROADCAST] = HT_CMD_BROADCAST,
		[HT_K_FENCE] = HT_CMD_FENCE, [HT_K_ATOMIC] = HT_CMD_ATOMIC,
		[HT_K_SYNC] = HT_CMD_SYNC,
	};
	uint8_t cmd;

	if ((unsigned)k >= HT_K__COUNT)
		return HT_E_BAD_FIELD;
	cmd = fixed[k];
	if (k == HT_K_WRSIZED || k == HT_K_RDSIZED) {
		uint8_t mod = k == HT_K_WRSIZED ? p->posted : p->responsepasspw;

		if ((mod | p->dword | p->isoc | p->coherent) > 1)
			return HT_E_BAD_FIELD;
		if (k == HT_K_WRSIZED)
			cmd = mod ? HT_CMD_WR_P : HT_CMD_WR_NP;
		else
			cmd |= mod ? CMD_RPP : 0;
		cmd |= (uint8_t)((p->dword ? CMD_DWORD : 0) | (p->isoc ? CMD_ISOC : 0) |
				 (p->coherent ? CMD_COH : 0));
	}
	p->cmd = cmd;
	p->kind = (uint8_t)k;
	return HT_OK;
}

/* ---- lengths ---- */

static const struct layout *pkt_layout(const struct ht_pkt *p)
{
	int k = ht_cmd_kind(p->cmd);

	return k < 0 ? NULL : layout_of(p->cmd, k, p->extfc_long & 1);
}

static bool needs_prefix(const struct layout *L, const struct ht_pkt *p)
{
	return L->addr && (p->addrext || p->addr > HT_ADDR_MAX_40);
}

size_t ht_pkt_ctl_len(const struct ht_pkt *p)
{
	const struct layout *L = pkt_layout(p);

	return L ? (needs_prefix(L, p) ? 4u : 0u) + L->ctl_len : 0;
}

size_t ht_pkt_len(const struct ht_pkt *p)
{
	const struct layout *L = pkt_layout(p);

	return L ? ht_pkt_ctl_len(p) + data_bytes(L, p->count & 0xf) : 0;
}

int ht_pkt_fields(const struct ht_pkt *p, uint8_t ids[HT_F__COUNT])
{
	const struct layout *L = pkt_layout(p);

	if (!L)
		return ht_cmd_kind(p->cmd);
	for (unsigned i = 0; i < L->nf; i++)
		ids[i] = L->f[i].id;
	return L->nf;
}

/* ---- framing, shared by ht_peek_len and ht_decode ---- */

static uint32_t rd32(const uint8_t *b)
{
	return ht_rd_le32(b);
}

static void wr32(uint8_t *b, uint32_t v)
{
	ht_wr_le32(b, v);
}

struct frame {
	size_t pfx;               /* 0 or 4 */
	uint32_t d0;              /* control dword 0 */
	uint8_t cmd;
	int kind;
	const struct layout *L;
	size_t total;
};

static int frame(const uint8_t *buf, size_t len, struct frame *f)
{
	if (len < 4)
		return HT_E_TRUNCATED;
	f->pfx = 0;
	f->d0 = rd32(buf);
	if ((f->d0 & 0x3f) == HT_CMD_ADDREXT) {
		if (f->d0 & 0xc0)
			return HT_E_BAD_PREFIX;
		if (len < 8)
			return HT_E_TRUNCATED;
		f->pfx = 4;
		f->d0 = rd32(buf + 4);
	}
	f->cmd = f->d0 & 0x3f;
	f->kind = ht_cmd_kind(f->cmd);
	if (f->pfx && (f->kind < 0 || !layout_of(f->cmd, f->kind, 0)->addr))
		return HT_E_BAD_PREFIX;
	if (f->kind < 0)
		return f->kind;
	f->L = layout_of(f->cmd, f->kind, (f->d0 >> EXTFC_LONG_BIT) & 1);
	f->total = f->pfx + f->L->ctl_len + data_bytes(f->L, (f->d0 >> 22) & 0xf);
	return HT_OK;
}

static inline int decode_fast(const uint8_t *buf, size_t len, struct ht_pkt *o);

int ht_peek_len(const uint8_t *buf, size_t len)
{
	struct frame f;
	int r = decode_fast(buf, len, NULL); /* a valid common packet: its length */

	if (r > 0)
		return r;
	r = frame(buf, len, &f);
	return r < 0 ? r : (int)f.total;
}

int ht_peek_len_table(const uint8_t *buf, size_t len)
{
	struct frame f;
	int r = frame(buf, len, &f);

	return r < 0 ? r : (int)f.total;
}

/* ---- semantic rules shared by encode and decode (decisions 2 and 3) ---- */

static int check_rules(const struct ht_pkt *p, const struct layout *L)
{
	unsigned first;

	switch (p->kind) {
	case HT_K_ATOMIC:
		if (p->count != HT_ATOMIC_FETCHADD_COUNT && p->count != HT_ATOMIC_CAS_COUNT)
			return HT_E_BAD_COUNT;
		if (p->addr & 4)
			return HT_E_BAD_ADDR;
		return HT_OK;
	case HT_K_TGTDONE:
		return p->count ? HT_E_BAD_COUNT : HT_OK;
	case HT_K_RDSIZED:
	case HT_K_WRSIZED:
		break;
	default:
		return HT_OK;
	}
	if (p->dword)
		return ((p->addr & 63) >> 2) + p->count > 15 ? HT_E_BAD_ADDR : HT_OK;
	if (L->data != D_BYTEWR)
		return p->mask == p->count ? HT_OK : HT_E_BAD_FIELD;   /* byte RdSized */
	if (p->count == 0 || p->count > 8)
		return HT_E_BAD_COUNT;
	first = (p->addr >> 2) & 7;
	if (first + p->count > 8)
		return HT_E_BAD_MASK;
	/* nibbles first..first+count-1 of the window may be set */
	if (p->mask & ~(uint32_t)(width_mask(4 * p->count) << (4 * first)))
		return HT_E_BAD_MASK;
	return HT_OK;
}

/* ---- decode ---- */

int ht_decode_table(const uint8_t *buf, size_t len, struct ht_pkt *out)
{
	struct frame f;
	uint32_t w[3] = { 0, 0, 0 }, u0;
	const uint8_t *d;
	size_t n;
	int r = frame(buf, len, &f);

	if (r < 0)
		return r;
	if (len < f.total)
		return HT_E_TRUNCATED;
	if (f.kind == HT_K_SYNC && f.d0 != 0xffffffffu)
		return HT_E_BAD_SYNC;
	memset(out, 0, sizeof(*out));
	out->cmd = f.cmd;
	out->kind = (uint8_t)f.kind;
	if (f.kind == HT_K_SYNC)
		return (int)f.total;

	w[0] = f.d0;
	if (f.L->ctl_len == 8)
		w[1] = rd32(buf + f.pfx + 4);
	if (f.pfx)
		w[2] = rd32(buf);
	u0 = f.L->c->used[0] | 0x3f; /* and Cmd */
	if ((w[0] & ~u0) || (w[1] & ~f.L->c->used[1]))
		return HT_E_RESERVED_BIT;
	unpack(f.L, w, out);
	out->addrext = f.pfx ? 1 : 0;

	d = buf + f.pfx + f.L->ctl_len;
	n = f.total - f.pfx - f.L->ctl_len;
	if (f.L->data == D_BYTEWR) {
		out->mask = rd32(d);
		d += 4;
		n -= 4;
	} else if (f.kind == HT_K_RDSIZED && !out->dword) {
		out->mask = out->count;
	}
	memcpy(out->data, d, n);
	out->data_len = (uint16_t)n;

	r = check_rules(out, f.L);
	return r < 0 ? r : (int)f.total;
}

/* ---- encode ---- */

int ht_encode_table(const struct ht_pkt *p, uint8_t *buf, size_t cap)
{
	uint32_t w[3] = { 0, 0, 0 };
	const struct layout *L;
	size_t pfx, ctl, dbytes, total;
	int k = ht_cmd_kind(p->cmd), r;

	if (k < 0)
		return k == HT_E_RESERVED_CMD ? k : HT_E_BAD_FIELD;
	if (k != p->kind)
		return HT_E_BAD_FIELD;
	L = pkt_layout(p);
	if (L->addr && (p->addr & 3))
		return HT_E_BAD_ADDR;
	/* every field of the layout within its bits, every other one zero */
	for (unsigned i = 0; i < L->nf; i++)
		if (fget(p, L->f[i].id) & ~L->c->allowed[i])
			return HT_E_BAD_FIELD;
	if (!foreign_zero(p, L->c))
		return HT_E_BAD_FIELD;
	w[0] = p->cmd & ~L->c->used[0]; /* the Cmd bits that are not modifier fields */
	pack(L, p, w);
	if ((w[0] & 0x3f) != p->cmd)
		return HT_E_BAD_FIELD; /* modifier fields disagree with cmd */
	if (k == HT_K_SYNC)
		w[0] = 0xffffffffu;

	r = check_rules(p, L);
	if (r < 0)
		return r;
	dbytes = data_bytes(L, p->count);
	if (p->data_len != dbytes - (L->data == D_BYTEWR ? 4 : 0))
		return HT_E_BAD_FIELD;
	for (size_t i = p->data_len; i < HT_MAX_DATA; i++)
		if (p->data[i])
			return HT_E_BAD_FIELD;

	pfx = needs_prefix(L, p) ? 4 : 0;
	ctl = pfx + L->ctl_len;
	total = ctl + dbytes;
	if (cap < total)
		return HT_E_NOSPACE;
	if (pfx)
		wr32(buf, HT_CMD_ADDREXT | w[2]);
	wr32(buf + pfx, w[0]);
	if (L->ctl_len == 8)
		wr32(buf + pfx + 4, w[1]);
	if (L->data == D_BYTEWR)
		wr32(buf + ctl, p->mask);
	memcpy(buf + total - p->data_len, p->data, p->data_len);
	return (int)total;
}

/* ---- fast paths for the common packets ----
 *
 * WrSized (dword), RdSized, RdResponse, TgtDone and NOP without the 0x3E
 * prefix, by direct bit extraction/insertion. They only take the input that
 * is valid: anything else (a reserved bit, a rule broken, a field out of
 * range, a short buffer, a prefix, another command) returns 0 and goes to
 * the table-driven path, so return values and error codes are those of the
 * table for every input (tests/test_ht_packet.c compares them).
 */

#define BITS(w, pos, width) ((uint8_t)(((w) >> (pos)) & ((1u << (width)) - 1u)))

/* Data bytes from data_len on are zero (the encoder rejects anything else). */
static inline bool data_tail_zero(const struct ht_pkt *p)
{
	typedef uint64_t u64u __attribute__((aligned(1), may_alias));
	size_t i = p->data_len;
	uint64_t acc = 0;

	if (i >= HT_MAX_DATA)
		return true;
	for (; i & 7; i++) /* data_len is a multiple of 4 when valid, not always */
		acc |= p->data[i];
	for (; i < HT_MAX_DATA; i += 8) /* words, not a memcmp call (perf) */
		acc |= *(const u64u *)(p->data + i);
	return acc == 0;
}

/* Request fields common to sized commands (dword 0): SeqID, UnitID, PassPW,
 * Compat, Count, Addr[7:2], and the Cmd modifier bits. */
static inline void dec_sized(uint32_t d0, uint32_t d1, struct ht_pkt *o)
{
	o->seqid = (uint8_t)(BITS(d0, 6, 2) << 2 | BITS(d0, 13, 2));
	o->unitid = BITS(d0, 8, 5);
	o->passpw = BITS(d0, 15, 1);
	o->compat = BITS(d0, 21, 1);
	o->count = BITS(d0, 22, 4);
	o->posted = BITS(d0, 5, 1);
	o->dword = BITS(d0, 2, 1);
	o->isoc = BITS(d0, 1, 1);
	o->coherent = BITS(d0, 0, 1);
	o->addr = (uint64_t)d1 << 8 | (uint64_t)(d0 >> 26) << 2;
}

static inline uint32_t enc_sized(const struct ht_pkt *p)
{
	return (uint32_t)p->cmd | (uint32_t)(p->seqid >> 2) << 6 | (uint32_t)p->unitid << 8 |
	       (uint32_t)(p->seqid & 3) << 13 | (uint32_t)p->passpw << 15 |
	       (uint32_t)p->compat << 21 | (uint32_t)p->count << 22 |
	       (uint32_t)((p->addr >> 2) & 0x3f) << 26;
}

/* The sized-request fields every fast encoder checks: ranges, the modifier
 * fields agreeing with cmd, an address without the prefix. */
static inline bool sized_ok(const struct ht_pkt *p, uint8_t cmd)
{
	return !(p->addr & 3) && p->addr <= HT_ADDR_MAX_40 && !p->addrext && p->seqid < 16 &&
	       p->unitid < 32 && p->passpw < 2 && p->compat < 2 && p->count < 16 &&
	       p->posted == ((cmd >> 5) & 1) && p->dword == ((cmd >> 2) & 1) &&
	       p->isoc == ((cmd >> 1) & 1) && p->coherent == (cmd & 1);
}

/* A dword access stays inside its 64-byte block (decision 3). */
static inline bool dword_window_ok(uint64_t addr, unsigned count)
{
	return ((addr & 63) >> 2) + count <= 15;
}

static inline void dec_resp(uint32_t d0, struct ht_pkt *o)
{
	o->unitid = BITS(d0, 8, 5);
	o->srctag = BITS(d0, 16, 5);
	o->passpw = BITS(d0, 15, 1);
	o->isoc = BITS(d0, 7, 1);
	o->bridge = BITS(d0, 14, 1);
	o->error0 = BITS(d0, 21, 1);
	o->error1 = BITS(d0, 29, 1);
	o->rquid = BITS(d0, 30, 2);
	o->rspvcset = BITS(d0, 26, 3);
	o->count = BITS(d0, 22, 4);
}

/* Start a decode: zero the header fields, and the data bytes the packet
 * does not fill and the struct's tail padding (out->data[0, n) is written by
 * the caller), instead of the whole struct. */
static inline __attribute__((always_inline)) void clear_pkt(struct ht_pkt *o, size_t n)
{
	const size_t end = sizeof(*o) - offsetof(struct ht_pkt, data); /* data + padding */

	memset(o, 0, offsetof(struct ht_pkt, data));
	if (n < end)
		memset(o->data + n, 0, end - n);
}

/*
 * Decode (o != NULL) or only validate (o == NULL) a common packet. Returns
 * its length, or 0: not a valid common packet, ask the table.
 */
static inline __attribute__((always_inline)) int
decode_fast(const uint8_t *buf, size_t len, struct ht_pkt *o)
{
	uint32_t d0, d1;
	uint8_t cmd;
	size_t total;

	if (len < 4)
		return 0;
	d0 = rd32(buf);
	cmd = d0 & 0x3f;
	switch (cmd) {
	case HT_CMD_NOP:
		if (d0 & (1u << 7 | 1u << 20 | 1u << 23))
			return 0;
		if (o) {
			clear_pkt(o, 0);
			o->kind = HT_K_NOP;
			o->discon = BITS(d0, 6, 1);
			o->postcmd = BITS(d0, 8, 2);
			o->postdata = BITS(d0, 10, 2);
			o->resp = BITS(d0, 12, 2);
			o->respdata = BITS(d0, 14, 2);
			o->npcmd = BITS(d0, 16, 2);
			o->npdata = BITS(d0, 18, 2);
			o->isoc = BITS(d0, 21, 1);
			o->diag = BITS(d0, 22, 1);
			o->ack = (uint8_t)(d0 >> 24);
		}
		return 4;
	case HT_CMD_RDRESP:
	case HT_CMD_TGTDONE:
		if (d0 & (1u << 6 | 1u << 13))
			return 0;
		if (cmd == HT_CMD_TGTDONE) {
			if (BITS(d0, 22, 4))
				return 0;
			total = 4;
		} else {
			total = 4 + 4u * (BITS(d0, 22, 4) + 1u);
		}
		if (len < total)
			return 0;
		if (o) {
			clear_pkt(o, total - 4);
			o->cmd = cmd;
			o->kind = cmd == HT_CMD_TGTDONE ? HT_K_TGTDONE : HT_K_RDRESPONSE;
			dec_resp(d0, o);
			o->data_len = (uint16_t)(total - 4);
			ht_data_copy(o->data, buf + 4, total - 4);
		}
		return (int)total;
	default:
		break;
	}
	if ((cmd & 0x30) == 0x10) { /* RdSized */
		if (len < 8)
			return 0;
		d1 = rd32(buf + 4);
		if ((cmd & CMD_DWORD) && !dword_window_ok((uint64_t)(d0 >> 26) << 2, BITS(d0, 22, 4)))
			return 0;
		if (o) {
			clear_pkt(o, 0);
			o->cmd = cmd;
			o->kind = HT_K_RDSIZED;
			dec_sized(d0, d1, o);
			o->srctag = BITS(d0, 16, 5);
			o->responsepasspw = BITS(d0, 3, 1);
			if (!o->dword)
				o->mask = o->count;
		}
		return 8;
	}
	if ((cmd & 0x1c) == 0x0c) { /* WrSized, dword, posted or not */
		unsigned count = BITS(d0, 22, 4);

		total = 8 + 4u * (count + 1u);
		if (len < total || ((cmd & CMD_POSTED) && (d0 & 0x70000u)) ||
		    !dword_window_ok((uint64_t)(d0 >> 26) << 2, count))
			return 0;
		if (o) {
			d1 = rd32(buf + 4);
			clear_pkt(o, total - 8);
			o->cmd = cmd;
			o->kind = HT_K_WRSIZED;
			dec_sized(d0, d1, o);
			if (cmd & CMD_POSTED) {
				o->chain = BITS(d0, 19, 1);
				o->dataerror = BITS(d0, 20, 1);
			} else {
				o->srctag = BITS(d0, 16, 5);
			}
			o->data_len = (uint16_t)(total - 8);
			ht_data_copy(o->data, buf + 8, total - 8);
		}
		return (int)total;
	}
	return 0;
}

/* Encode a common packet; 0: not one, or not valid: ask the table. */
static inline int encode_fast(const struct ht_pkt *p, uint8_t *buf, size_t cap)
{
	uint8_t cmd = p->cmd;
	uint32_t w0;
	size_t total;

	if (cmd > 0x3f)
		return 0;
	switch (cmd) {
	case HT_CMD_NOP:
		if (p->kind != HT_K_NOP || cap < 4 || p->data_len ||
		    (p->postcmd | p->postdata | p->resp | p->respdata | p->npcmd | p->npdata) > 3 ||
		    (p->isoc | p->discon | p->diag) > 1 || !foreign_zero(p, &lay_nop_c) ||
		    !data_tail_zero(p))
			return 0;
		w0 = (uint32_t)p->discon << 6 | (uint32_t)p->postcmd << 8 |
		     (uint32_t)p->postdata << 10 | (uint32_t)p->resp << 12 |
		     (uint32_t)p->respdata << 14 | (uint32_t)p->npcmd << 16 |
		     (uint32_t)p->npdata << 18 | (uint32_t)p->isoc << 21 | (uint32_t)p->diag << 22 |
		     (uint32_t)p->ack << 24;
		wr32(buf, w0);
		return 4;
	case HT_CMD_RDRESP:
	case HT_CMD_TGTDONE:
		total = cmd == HT_CMD_TGTDONE ? 4 : 4 + 4u * (p->count + 1u);
		if (p->kind != (cmd == HT_CMD_TGTDONE ? HT_K_TGTDONE : HT_K_RDRESPONSE) ||
		    p->unitid > 31 || p->srctag > 31 || p->count > 15 ||
		    (cmd == HT_CMD_TGTDONE && p->count) || p->rquid > 3 || p->rspvcset > 7 ||
		    (p->passpw | p->isoc | p->bridge | p->error0 | p->error1) > 1 ||
		    p->data_len != total - 4 || cap < total ||
		    !foreign_zero(p, &lay_rdresp_c) || !data_tail_zero(p))
			return 0;
		w0 = (uint32_t)cmd | (uint32_t)p->isoc << 7 | (uint32_t)p->unitid << 8 |
		     (uint32_t)p->bridge << 14 | (uint32_t)p->passpw << 15 |
		     (uint32_t)p->srctag << 16 | (uint32_t)p->error0 << 21 |
		     (uint32_t)p->count << 22 | (uint32_t)p->rspvcset << 26 |
		     (uint32_t)p->error1 << 29 | (uint32_t)p->rquid << 30;
		wr32(buf, w0);
		ht_data_copy(buf + 4, p->data, p->data_len);
		return (int)total;
	default:
		break;
	}
	if ((cmd & 0x30) == 0x10) { /* RdSized */
		bool dw = cmd & CMD_DWORD;

		if (p->kind != HT_K_RDSIZED || cap < 8 || !sized_ok(p, cmd) || p->srctag > 31 ||
		    p->responsepasspw != ((cmd >> 3) & 1) || p->data_len ||
		    (dw ? !dword_window_ok(p->addr, p->count) : p->mask != p->count) ||
		    !foreign_zero(p, dw ? &lay_rd_dw_c : &lay_rd_b_c) || !data_tail_zero(p))
			return 0;
		wr32(buf, enc_sized(p) | (uint32_t)p->srctag << 16);
		wr32(buf + 4, (uint32_t)(p->addr >> 8));
		return 8;
	}
	if ((cmd & 0x1c) == 0x0c) { /* WrSized dword */
		bool posted = cmd & CMD_POSTED;

		total = 8 + 4u * (p->count + 1u);
		if (p->kind != HT_K_WRSIZED || cap < total || !sized_ok(p, cmd) ||
		    (posted ? (p->chain | p->dataerror) > 1 : p->srctag > 31) ||
		    p->data_len != total - 8 || !dword_window_ok(p->addr, p->count) ||
		    !foreign_zero(p, posted ? &lay_wrp_dw_c : &lay_wrnp_dw_c) || !data_tail_zero(p))
			return 0;
		w0 = enc_sized(p);
		if (posted)
			w0 |= (uint32_t)p->chain << 19 | (uint32_t)p->dataerror << 20;
		else
			w0 |= (uint32_t)p->srctag << 16;
		wr32(buf, w0);
		wr32(buf + 4, (uint32_t)(p->addr >> 8));
		ht_data_copy(buf + 8, p->data, p->data_len);
		return (int)total;
	}
	return 0;
}

/* ---- public entry points ---- */

int ht_decode(const uint8_t *buf, size_t len, struct ht_pkt *out)
{
	int n = decode_fast(buf, len, out);

	return n > 0 ? n : ht_decode_table(buf, len, out);
}

int ht_peek_valid(const uint8_t *buf, size_t len)
{
	return decode_fast(buf, len, NULL);
}

/* The address of a sized request without a prefix: Addr[39:8] in the second
 * dword, Addr[7:2] in the first. */
static inline uint64_t sized_addr(uint32_t d0, const uint8_t *buf)
{
	return (uint64_t)rd32(buf + 4) << 8 | (uint64_t)(d0 >> 26) << 2;
}

/* Fields of a packet's first dword (as rd32 reads it). */
#define D0_UNITID 0x00001f00u /* UnitID[4:0], bits 12:8 */
#define D0_SRCTAG 0x001f0000u /* SrcTag[4:0], bits 20:16 */
#define D0_ADDR76 0xc0000000u /* a sized request's Addr[7:6], bits 31:30 */

/* The bits of a common packet's first dword that may differ from those of
 * the valid packet before it with the same verdict, length and fields but
 * these: the UnitID, the SrcTag of an NP request or a response, the
 * Addr[7:6] of a sized request (Addr[5:2] and Count decide whether a dword
 * access fits its 64-byte window). 0: none (parse). */
static uint32_t after_mask(const struct ht_desc *prev)
{
	if (prev->ctl)
		return 0;
	switch (prev->kind) {
	case HT_K_WRSIZED:
		if (!(prev->cmd & CMD_DWORD))
			return 0; /* (a byte write's mask dword follows) */
		/* a posted write's bits 18:16 must be 0: compared */
		return D0_UNITID | D0_ADDR76 | (prev->cmd & CMD_POSTED ? 0 : D0_SRCTAG);
	case HT_K_RDSIZED:
		return D0_UNITID | D0_SRCTAG | D0_ADDR76;
	case HT_K_RDRESPONSE:
	case HT_K_TGTDONE:
		return D0_UNITID | D0_SRCTAG;
	default:
		return 0;
	}
}

int ht_desc_parse_after(const uint8_t *buf, size_t len, const struct ht_desc *prev,
			struct ht_desc *d)
{
	uint32_t m = prev ? after_mask(prev) : 0;

	/* a run of requests or responses alike (a page's writes, reads or
	 * their responses): the same first dword but for the bits above is
	 * the same packet but for them, its second dword and its data */
	if (m && len >= prev->len && !((rd32(buf) ^ rd32(prev->pkt)) & ~m)) {
		uint32_t d0 = rd32(buf);

		*d = *prev;
		d->pkt = buf;
		d->unitid = BITS(d0, 8, 5);
		if (m & D0_ADDR76)
			d->addr = sized_addr(d0, buf);
		if (m & D0_SRCTAG)
			d->srctag = BITS(d0, 16, 5);
		return d->len;
	}
	return ht_desc_parse(buf, len, d);
}

int ht_desc_parse(const uint8_t *buf, size_t len, struct ht_desc *d)
{
	int n = decode_fast(buf, len, NULL);

	if (n > 0) {
		uint32_t d0 = rd32(buf);
		uint8_t cmd = d0 & 0x3f;

		d->pkt = buf;
		d->len = (uint16_t)n;
		d->ctl = 0;
		d->cmd = cmd;
		d->unitid = BITS(d0, 8, 5);
		d->srctag = BITS(d0, 16, 5);
		d->passpw = BITS(d0, 15, 1);
		d->count = BITS(d0, 22, 4);
		d->rsp_err = 0;
		d->addr = 0;
		d->data_off = 0;
		d->data_len = 0;
		if (cmd == HT_CMD_NOP) {
			d->kind = HT_K_NOP;
			d->unitid = d->srctag = d->passpw = d->count = 0;
		} else if (cmd == HT_CMD_RDRESP || cmd == HT_CMD_TGTDONE) {
			d->kind = cmd == HT_CMD_TGTDONE ? HT_K_TGTDONE : HT_K_RDRESPONSE;
			d->rsp_err = (uint8_t)(BITS(d0, 21, 1) << 1 | BITS(d0, 29, 1));
			if (n > 4) {
				d->data_off = 4;
				d->data_len = (uint16_t)(n - 4);
			}
		} else {
			d->kind = (cmd & 0x30) == 0x10 ? HT_K_RDSIZED : HT_K_WRSIZED;
			d->addr = sized_addr(d0, buf);
			if (d->kind == HT_K_WRSIZED) {
				d->data_off = 8;
				d->data_len = (uint16_t)(n - 8);
				if (cmd & CMD_POSTED)
					d->srctag = 0;
			}
		}
		d->vc = kind_vc(d->kind, cmd);
		return n;
	}

	struct ht_pkt p;

	n = ht_decode_table(buf, len, &p);
	if (n < 0)
		return n;
	d->pkt = buf;
	d->len = (uint16_t)n;
	d->ctl = p.addrext ? 4 : 0;
	d->cmd = p.cmd;
	d->kind = p.kind;
	d->vc = kind_vc(p.kind, p.cmd);
	d->unitid = p.unitid;
	d->srctag = p.srctag;
	d->passpw = p.passpw;
	d->count = p.count;
	d->rsp_err = (uint8_t)(p.error0 << 1 | p.error1);
	d->addr = p.addr;
	d->data_len = p.data_len;
	d->data_off = p.data_len ? (uint16_t)(n - p.data_len) : 0;
	return n;
}

int ht_validate(const uint8_t *buf, size_t len)
{
	struct ht_pkt p;
	int n = decode_fast(buf, len, NULL);

	return n > 0 ? n : ht_decode_table(buf, len, &p);
}

int ht_encode(const struct ht_pkt *p, uint8_t *buf, size_t cap)
{
	int n = encode_fast(p, buf, cap);

	return n > 0 ? n : ht_encode_table(p, buf, cap);
}

/* ---- fast encoders for the endpoint model (see ht_packet.h) ---- */

/* The checks of ht_enc_sized: the packet's length, 0 (not a fast shape:
 * ht_encode) or a negative enum ht_err; inlined, once per packet. */
static inline __attribute__((always_inline)) int
enc_sized_check(size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag, uint8_t passpw,
		uint8_t count, uint64_t addr)
{
	bool rd = (cmd & 0x30) == 0x10, posted = cmd & CMD_POSTED;
	size_t total;

	if (cmd > 0x3f || !(rd || (cmd & 0x1c) == 0x0c)) /* RdSized, WrSized dword */
		return 0;
	if (addr > HT_ADDR_MAX_40)
		return 0;
	if (unitid > 31 || (!posted && srctag > 31) || passpw > 1 || count > 15)
		return HT_E_BAD_FIELD;
	if ((addr & 3) || ((cmd & CMD_DWORD) && !dword_window_ok(addr, count)))
		return HT_E_BAD_ADDR;
	total = rd ? 8 : 8 + 4u * (count + 1u);
	if (cap < total)
		return HT_E_NOSPACE;
	return (int)total;
}

int ht_enc_sized(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
		 uint8_t passpw, uint8_t count, uint64_t addr, const uint8_t *data)
{
	int n = enc_sized_check(cap, cmd, unitid, srctag, passpw, count, addr);
	bool rd = (cmd & 0x30) == 0x10;
	uint32_t w0;

	if (n <= 0)
		return n;
	w0 = (uint32_t)cmd | (uint32_t)unitid << 8 | (uint32_t)passpw << 15 |
	     (uint32_t)count << 22 | (uint32_t)((addr >> 2) & 0x3f) << 26;
	if (!(cmd & CMD_POSTED))
		w0 |= (uint32_t)srctag << 16;
	wr32(buf, w0);
	wr32(buf + 4, (uint32_t)(addr >> 8));
	if (!rd)
		ht_data_copy(buf + 8, data, (size_t)n - 8);
	return n;
}

int ht_enc_sized_desc(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
		      uint8_t passpw, uint8_t count, uint64_t addr, const uint8_t *data,
		      struct ht_desc *d)
{
	int n = enc_sized_check(cap, cmd, unitid, srctag, passpw, count, addr);

	if (n <= 0)
		return n;
	return ht_enc_sized_desc_legal(buf, cmd, unitid, srctag, passpw, count, addr, data, d);
}

int ht_enc_rsp(uint8_t *buf, size_t cap, uint8_t cmd, uint8_t unitid, uint8_t srctag,
	       uint8_t passpw, uint8_t bridge, enum ht_rsp_err err, uint8_t count,
	       const uint8_t *data)
{
	bool done = cmd == HT_CMD_TGTDONE;
	size_t total = done ? 4 : 4 + 4u * (count + 1u);

	if ((!done && cmd != HT_CMD_RDRESP) || unitid > 31 || srctag > 31 || passpw > 1 ||
	    bridge > 1 || (unsigned)err > HT_RSP_MASTER_ABORT || count > 15 || (done && count))
		return HT_E_BAD_FIELD;
	if (cap < total)
		return HT_E_NOSPACE;
	ht_put_rsp_ctl(buf, cmd, unitid, srctag, passpw, bridge, err, count);
	if (done)
		return 4;
	if (data)
		ht_data_copy(buf + 4, data, total - 4);
	else
		memset(buf + 4, 0xff, total - 4);
	return (int)total;
}

/* inline in ht_packet.h; its one external definition, for the ABI */
extern inline void ht_data_copy(uint8_t *restrict dst, const uint8_t *restrict src, size_t n);

enum ht_vc ht_cmd_vc(uint8_t cmd)
{
	struct ht_pkt p;
	int k = ht_cmd_kind(cmd);

	if (k < 0)
		return HT_VC_NONE;
	p.cmd = cmd;
	p.kind = (uint8_t)k;
	return ht_pkt_vc(&p);
}
