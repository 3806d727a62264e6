/* SPDX-License-Identifier: BSD-3-Clause
 * HT requester: ops -> request packets, SrcTag allocation, outstanding table,
 * responses -> completions. See ht_requester.h.
 */
#include "ht_requester.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const char *const op_names[HT_OP__COUNT] = {
	[HT_OP_READ] = "rd", [HT_OP_WRITE_P] = "wrp", [HT_OP_WRITE_NP] = "wrn",
	[HT_OP_FLUSH] = "flush", [HT_OP_FENCE] = "fence",
	[HT_OP_FETCH_ADD] = "fadd", [HT_OP_CAS] = "cas",
};

const char *ht_op_name(enum ht_op_type t)
{
	return (unsigned)t < HT_OP__COUNT ? op_names[t] : "?";
}

/* inline in ht_requester.h; its one external definition, for the ABI */
extern inline bool ht_op_nonposted(enum ht_op_type t);

enum ht_vc ht_op_vc(const struct ht_op *op)
{
	if ((unsigned)op->type >= HT_OP__COUNT)
		return HT_VC_NONE;
	return ht_op_nonposted((enum ht_op_type)op->type) ? HT_VC_NP : HT_VC_P;
}

/* Dword form: 4-aligned, multiple of 4, 4..64 bytes, not crossing 64 B. */
static bool is_dword_access(uint64_t addr, uint32_t len)
{
	return len >= 4 && len <= HT_MAX_DATA && !(len & 3) && !(addr & 3) &&
	       (addr & 63) + len <= 64;
}

/* Byte read: 1..4 bytes inside one dword. */
static bool is_byte_read(uint64_t addr, uint32_t len)
{
	return len >= 1 && len <= 4 && (addr & 3) + len <= 4;
}

/* Byte write: 1..32 bytes inside one naturally aligned 32-byte window. */
static bool is_byte_write(uint64_t addr, uint32_t len)
{
	return len >= 1 && len <= 32 && (addr & 31) + len <= 32;
}

static bool addr_end_ok(uint64_t addr, uint32_t len)
{
	return len == 0 || addr + (len - 1) >= addr; /* no wrap past 2^64 */
}

int ht_op_check(const struct ht_op *op)
{
	if (!op)
		return -EINVAL;
	switch (op->type) {
	case HT_OP_READ:
		if (!addr_end_ok(op->addr, op->len))
			return -EINVAL;
		return is_dword_access(op->addr, op->len) || is_byte_read(op->addr, op->len) ? 0 : -EINVAL;
	case HT_OP_WRITE_P:
	case HT_OP_WRITE_NP:
		if (!addr_end_ok(op->addr, op->len))
			return -EINVAL;
		return is_dword_access(op->addr, op->len) || is_byte_write(op->addr, op->len) ? 0 : -EINVAL;
	case HT_OP_FETCH_ADD:
	case HT_OP_CAS:
		return op->addr & 7 ? -EINVAL : 0;
	case HT_OP_FLUSH:
	case HT_OP_FENCE:
		return 0;
	default:
		return -EINVAL;
	}
}

int ht_op_split(enum ht_op_type type, uint64_t addr, uint32_t len, const uint8_t *data,
		uint64_t cookie, struct ht_op *out, unsigned max)
{
	bool rd = type == HT_OP_READ;
	if (!rd && type != HT_OP_WRITE_P && type != HT_OP_WRITE_NP)
		return -EINVAL;
	if (!len || !addr_end_ok(addr, len) || (!rd && !data) || (max && !out))
		return -EINVAL;
	unsigned n = 0;
	uint32_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		uint32_t rem = len - done, chunk;
		if (!(a & 3) && rem >= 4) {
			chunk = rem & ~3u;
			if (chunk > 64 - (uint32_t)(a & 63))
				chunk = 64 - (uint32_t)(a & 63);
		} else if (rd) {
			chunk = 4 - (uint32_t)(a & 3);
			if (chunk > rem)
				chunk = rem;
		} else {
			/* byte write up to the end of the 32-byte window */
			chunk = 32 - (uint32_t)(a & 31);
			if (chunk > rem)
				chunk = rem;
		}
		if (n >= max)
			return -ENOSPC;
		struct ht_op *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->type = (uint8_t)type;
		o->addr = a;
		o->len = chunk;
		o->cookie = cookie;
		if (!rd)
			memcpy(o->data, data + done, chunk);
		done += chunk;
	}
	return (int)n;
}

uint64_t ht_completion_u64(const struct ht_completion *c)
{
	return ht_get_le64(ht_completion_data(c));
}

int ht_req_init(struct ht_requester *r, const struct ht_req_cfg *cfg)
{
	if (!r || !cfg || !cfg->n_unitids || cfg->n_unitids > HT_REQ_MAX_UNITIDS)
		return -EINVAL;
	for (unsigned i = 0; i < cfg->n_unitids; i++) {
		if (cfg->unitids[i] > 31)
			return -EINVAL;
		for (unsigned j = 0; j < i; j++)
			if (cfg->unitids[j] == cfg->unitids[i])
				return -EINVAL;
	}
	memset(r, 0, sizeof(*r));
	r->cfg = *cfg;
	memset(r->unit_ix, -1, sizeof(r->unit_ix));
	for (unsigned i = 0; i < cfg->n_unitids; i++)
		r->unit_ix[cfg->unitids[i]] = (int8_t)i;
	return 0;
}

/* Allocate (unit index, tag); false when all are in use. Round-robin over
 * UnitIDs, and within a UnitID from the tag after the last one handed out, so
 * tags are not reused immediately (helps catch stale responses): the first
 * free tag at or after next_tag, wrapping, is the lowest set bit of the free
 * map rotated by next_tag. */
static bool alloc_tag(struct ht_requester *r, unsigned *ui, unsigned *tag)
{
	unsigned nu = r->cfg.n_unitids;
	/* no division: next_unit < nu */
	for (unsigned k = 0, u = r->next_unit; k < nu; k++, u = u + 1 < nu ? u + 1 : 0) {
		uint32_t free = ~r->inuse[u];
		unsigned from = r->next_tag[u], tg;

		if (!free)
			continue;
		/* rotate right by from (0..31) */
		free = free >> from | (uint32_t)((uint64_t)free << (32 - from));
		tg = (from + (unsigned)__builtin_ctz(free)) & (HT_REQ_TAGS - 1);
		r->inuse[u] |= 1u << tg;
		r->next_tag[u] = (uint8_t)((tg + 1) & (HT_REQ_TAGS - 1));
		r->next_unit = u + 1 < nu ? u + 1 : 0;
		*ui = u;
		*tag = tg;
		return true;
	}
	return false;
}

static int unit_index(const struct ht_requester *r, uint8_t unitid)
{
	return unitid < HT_UNITIDS ? r->unit_ix[unitid] : -1;
}

/* Fill the sized-request fields common to reads and writes. */
static void sized_common(struct ht_pkt *p, uint64_t addr)
{
	p->coherent = 1;
	p->addr = addr;
	p->addrext = addr > HT_ADDR_MAX_40 ? 1 : 0;
}

static int build(const struct ht_op *op, struct ht_pkt *p, struct ht_req_entry *e)
{
	memset(p, 0, sizeof(*p));
	memset(e, 0, sizeof(*e));
	e->cookie = op->cookie;
	e->addr = op->addr;
	e->type = op->type;
	p->passpw = op->passpw ? 1 : 0;
	enum ht_kind k;

	switch (op->type) {
	case HT_OP_READ:
		k = HT_K_RDSIZED;
		e->len = (uint8_t)op->len;
		p->responsepasspw = op->rsp_passpw ? 1 : 0;
		if (is_dword_access(op->addr, op->len)) {
			sized_common(p, op->addr);
			p->dword = 1;
			p->count = (uint8_t)(op->len / 4 - 1);
			e->dword = 1;
			e->count = p->count;
		} else {
			uint32_t off = (uint32_t)(op->addr & 3);
			sized_common(p, op->addr & ~3ull);
			p->dword = 0;
			p->mask = ((1u << op->len) - 1) << off;
			p->count = (uint8_t)p->mask; /* byte RdSized: Count carries Mask[3:0] */
			e->dword = 0;
			e->count = 0;
		}
		break;
	case HT_OP_WRITE_P:
	case HT_OP_WRITE_NP:
		k = HT_K_WRSIZED;
		p->posted = op->type == HT_OP_WRITE_P;
		if (is_dword_access(op->addr, op->len)) {
			sized_common(p, op->addr);
			p->dword = 1;
			p->count = (uint8_t)(op->len / 4 - 1);
			p->data_len = (uint16_t)op->len;
			memcpy(p->data, op->data, op->len);
		} else {
			uint64_t a0 = op->addr & ~3ull;
			uint32_t first = (uint32_t)(op->addr & 3);
			uint32_t ndw = (first + op->len + 3) / 4;
			sized_common(p, a0);
			p->dword = 0;
			p->count = (uint8_t)ndw; /* mask dword + ndw data dwords, minus 1 */
			p->data_len = (uint16_t)(4 * ndw);
			uint32_t mask = 0;
			for (uint32_t i = 0; i < op->len; i++) {
				uint64_t b = op->addr + i;
				mask |= 1u << (b & 31); /* nibble = dword of the window, bit = byte */
				p->data[first + i] = op->data[i];
			}
			p->mask = mask;
		}
		break;
	case HT_OP_FLUSH:
		k = HT_K_FLUSH;
		break;
	case HT_OP_FENCE:
		k = HT_K_FENCE;
		break;
	case HT_OP_FETCH_ADD:
		k = HT_K_ATOMIC;
		p->addr = op->addr;
		p->addrext = op->addr > HT_ADDR_MAX_40 ? 1 : 0;
		p->count = HT_ATOMIC_FETCHADD_COUNT;
		p->data_len = 8;
		ht_put_le64(p->data, op->operand[0]);
		e->count = 1;
		break;
	case HT_OP_CAS:
		k = HT_K_ATOMIC;
		p->addr = op->addr;
		p->addrext = op->addr > HT_ADDR_MAX_40 ? 1 : 0;
		p->count = HT_ATOMIC_CAS_COUNT;
		p->data_len = 16;
		ht_put_le64(p->data, op->operand[0]);     /* compare */
		ht_put_le64(p->data + 8, op->operand[1]); /* swap (input) */
		e->count = 1;
		break;
	default:
		return -EINVAL;
	}
	if (ht_pkt_set_cmd(p, k) < 0)
		return -EINVAL;
	return 0;
}

/* A tag for a non-posted request: its (UnitID, SrcTag) and its entry in the
 * outstanding table, for the caller to fill; NULL when every tag is in use
 * (counted). */
static struct ht_req_entry *take_np(struct ht_requester *r, uint8_t *unitid, uint8_t *srctag)
{
	unsigned ui, tag;

	if (!alloc_tag(r, &ui, &tag)) {
		r->st.no_tag++;
		return NULL;
	}
	*unitid = r->cfg.unitids[ui];
	*srctag = (uint8_t)tag;
	r->outstanding++;
	return &r->tab[ui][tag];
}

/* Account for an op whose request is built: a posted op goes out with
 * unitids[0]; a non-posted one takes a tag and enters the outstanding table
 * with entry e. 0, or -EAGAIN (no tag, counted). */
static int take_tag(struct ht_requester *r, const struct ht_req_entry *e, uint8_t *unitid,
		    uint8_t *srctag)
{
	struct ht_req_entry *slot;

	if (!ht_op_nonposted((enum ht_op_type)e->type)) {
		*unitid = r->cfg.unitids[0];
		r->st.issued[e->type]++;
		return 0;
	}
	slot = take_np(r, unitid, srctag);
	if (!slot)
		return -EAGAIN;
	*slot = *e;
	r->st.issued[e->type]++;
	return 0;
}

int ht_req_issue(struct ht_requester *r, const struct ht_op *op, struct ht_pkt *out)
{
	if (!r || !op || !out)
		return -EINVAL;
	if (ht_op_check(op) < 0) {
		r->st.invalid++;
		return -EINVAL;
	}
	struct ht_req_entry e;
	if (build(op, out, &e) < 0) {
		r->st.invalid++;
		return -EINVAL;
	}
	return take_tag(r, &e, &out->unitid, &out->srctag);
}

/* Give back (unit, tag) of a non-posted request never sent. */
static int unissue_tag(struct ht_requester *r, bool np, uint8_t unitid, uint8_t srctag)
{
	if (!np)
		return -ENOENT;
	int ui = unit_index(r, unitid);
	if (ui < 0 || srctag >= HT_REQ_TAGS || !(r->inuse[ui] & (1u << srctag)))
		return -ENOENT;
	struct ht_req_entry *e = &r->tab[ui][srctag];
	if (r->st.issued[e->type])
		r->st.issued[e->type]--;
	r->inuse[ui] &= ~(1u << srctag);
	r->outstanding--;
	r->st.unissued++;
	return 0;
}

int ht_req_unissue(struct ht_requester *r, const struct ht_pkt *req)
{
	if (!r || !req)
		return -ENOENT;
	return unissue_tag(r, ht_pkt_vc(req) == HT_VC_NP, req->unitid, req->srctag);
}

int ht_req_unissue_bytes(struct ht_requester *r, const uint8_t *pkt, size_t len)
{
	uint8_t unitid, srctag;

	if (!r || !pkt || len < 4)
		return -ENOENT;
	ht_bytes_get_tag(pkt, len, &unitid, &srctag);
	return unissue_tag(r, ht_cmd_vc(ht_bytes_cmd(pkt, len)) == HT_VC_NP, unitid, srctag);
}

/* An op encoded straight from its fields: a read (ht_op_check's dword or
 * byte form) or a dword write, below 2^40 (where no read of at most 64 bytes
 * wraps past 2^64); *dw: the dword form. One pass of ht_op_check's tests. */
static inline __attribute__((always_inline)) bool fast_op(const struct ht_op *op, bool *dw)
{
	if (op->addr > HT_ADDR_MAX_40)
		return false;
	*dw = is_dword_access(op->addr, op->len);
	if (op->type == HT_OP_READ)
		return *dw || is_byte_read(op->addr, op->len);
	return (op->type == HT_OP_WRITE_P || op->type == HT_OP_WRITE_NP) && *dw;
}

bool ht_req_enc_fast(const struct ht_op *op)
{
	bool dw;

	return fast_op(op, &dw);
}

int ht_req_issue_enc(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		     uint8_t *buf, size_t cap)
{
	struct ht_desc d;

	return ht_req_issue_desc(r, op, cookie, buf, cap, &d);
}

/* ht_req_issue_desc of an op fast_op accepted (dw: its dword form), what
 * build() + ht_encode give; buf holds HT_MAX_PKT_LEN bytes. The tag's entry
 * is written in place, and the fields fast_op and the tag made legal are
 * encoded unchecked. */
static int issue_fast(struct ht_requester *r, const struct ht_op *op, bool dw, uint64_t cookie,
		      uint8_t *buf, struct ht_desc *d)
{
	uint8_t unitid, srctag = 0, type = op->type;
	bool rd = type == HT_OP_READ;
	uint32_t off = dw ? 0 : (uint32_t)(op->addr & 3);
	/* dword: Count = dwords - 1; byte read: Count carries Mask[3:0] */
	uint8_t count = (uint8_t)(dw ? op->len / 4 - 1 : ((1u << op->len) - 1) << off);
	uint8_t cmd = rd ? HT_CMD_RD | (op->rsp_passpw ? HT_CMD_BIT_RSPPW : 0) :
		      type == HT_OP_WRITE_P ? HT_CMD_WR_P : HT_CMD_WR_NP;

	if (type == HT_OP_WRITE_P) {
		unitid = r->cfg.unitids[0];
	} else {
		struct ht_req_entry *e = take_np(r, &unitid, &srctag);

		if (!e)
			return -EAGAIN;
		e->cookie = cookie;
		e->addr = op->addr;
		e->type = type;
		e->len = rd ? (uint8_t)op->len : 0;
		e->dword = rd && dw;
		e->count = rd && dw ? count : 0;
	}
	r->st.issued[type]++;
	return ht_enc_sized_desc_legal(buf, cmd | (dw ? HT_CMD_BIT_DWORD : 0) | 0x01 /* coherent */,
				       unitid, srctag, op->passpw ? 1 : 0, count, op->addr - off,
				       op->data, d);
}

int ht_req_issue_fast(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		      uint8_t *buf, size_t cap, struct ht_desc *d)
{
	bool dw;

	if (!r || !op || !buf || !d)
		return -EINVAL;
	if (cap < HT_MAX_PKT_LEN)
		return -ENOSPC;
	if (!fast_op(op, &dw))
		return -ENOTSUP;
	return issue_fast(r, op, dw, cookie, buf, d);
}

int ht_req_issue_desc(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		      uint8_t *buf, size_t cap, struct ht_desc *d)
{
	struct ht_req_entry e;
	struct ht_pkt p;
	bool dw;
	int n;

	if (!r || !op || !buf || !d)
		return -EINVAL;
	if (cap < HT_MAX_PKT_LEN)
		return -ENOSPC;
	if (ht_op_check(op) < 0) {
		r->st.invalid++;
		return -EINVAL;
	}
	if (fast_op(op, &dw)) /* the common case, encoded from the op */
		return issue_fast(r, op, dw, cookie, buf, d);
	if (build(op, &p, &e) < 0) {
		r->st.invalid++;
		return -EINVAL;
	}
	e.cookie = cookie;
	n = take_tag(r, &e, &p.unitid, &p.srctag);
	if (n < 0)
		return n;
	n = ht_encode(&p, buf, cap);
	if (n > 0 && ht_desc_parse(buf, (size_t)n, d) != n)
		n = -EINVAL;
	if (n <= 0) { /* not expected for an op ht_op_check accepts */
		unissue_tag(r, ht_op_nonposted((enum ht_op_type)op->type), p.unitid, p.srctag);
		r->st.invalid++;
		return -EINVAL;
	}
	return n;
}

/* ht_req_rx() on the fields of a response, decoded or parsed (inlined:
 * once per response, ten arguments). */
static inline __attribute__((always_inline)) int rx_core(struct ht_requester *r, uint8_t kind, uint8_t unitid, uint8_t srctag,
		   uint8_t count, uint8_t status, const uint8_t *data, size_t data_len,
		   bool copy, struct ht_completion *out)
{
	if (kind != HT_K_RDRESPONSE && kind != HT_K_TGTDONE) {
		r->st.not_response++;
		return -EINVAL;
	}
	int ui = unit_index(r, unitid);
	if (ui < 0 || srctag >= HT_REQ_TAGS || !(r->inuse[ui] & (1u << srctag))) {
		r->st.unexpected++;
		return -ENOENT;
	}
	const struct ht_req_entry *e = &r->tab[ui][srctag];
	memset(out, 0, offsetof(struct ht_completion, data)); /* data[]: only what is copied */
	out->cookie = e->cookie;
	out->addr = e->addr;
	out->type = e->type;
	out->unitid = unitid;
	out->srctag = srctag;
	out->status = status;

	bool want_data = e->type == HT_OP_READ || e->type == HT_OP_FETCH_ADD || e->type == HT_OP_CAS;
	bool ok_shape;
	if (want_data)
		ok_shape = kind == HT_K_RDRESPONSE && count == e->count &&
			   data_len == 4u * (e->count + 1u);
	else
		ok_shape = kind == HT_K_TGTDONE;

	if (!ok_shape) {
		r->st.malformed++;
		if (out->status == HT_RSP_OK)
			out->status = HT_RSP_DATA_ERROR;
	} else if (want_data) {
		uint32_t off = e->type == HT_OP_READ && !e->dword ? (uint32_t)(e->addr & 3) : 0;

		out->len = e->type == HT_OP_READ ? e->len : 8;
		if (copy)
			memcpy(out->data, data + off, out->len);
		else
			out->rdata = data + off;
	}

	r->inuse[ui] &= ~(1u << srctag);
	r->outstanding--;
	r->st.completed[e->type]++;
	r->st.status[out->status & 3]++;
	return 1;
}

int ht_req_rx(struct ht_requester *r, const struct ht_pkt *rsp, struct ht_completion *out)
{
	if (!r || !rsp || !out)
		return -EINVAL;
	return rx_core(r, rsp->kind, rsp->unitid, rsp->srctag, rsp->count,
		       (uint8_t)ht_pkt_rsp_err(rsp), rsp->data, rsp->data_len, true, out);
}

int ht_req_rx_desc(struct ht_requester *r, const struct ht_desc *rsp, struct ht_completion *out)
{
	if (!r || !rsp || !out)
		return -EINVAL;
	return rx_core(r, rsp->kind, rsp->unitid, rsp->srctag, rsp->count, rsp->rsp_err,
		       rsp->pkt + rsp->data_off, rsp->data_len, false, out);
}

unsigned ht_req_outstanding(const struct ht_requester *r)
{
	return r->outstanding;
}

unsigned ht_req_free_tags(const struct ht_requester *r)
{
	return r->cfg.n_unitids * HT_REQ_TAGS - r->outstanding;
}

const struct ht_req_stats *ht_req_stats(const struct ht_requester *r)
{
	return &r->st;
}

void ht_req_issued_posted(struct ht_requester *r, unsigned n)
{
	r->st.issued[HT_OP_WRITE_P] += n;
}

unsigned ht_req_issue_reads(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
			    unsigned n, uint8_t (*tags)[2])
{
	struct ht_req_entry e;
	unsigned k;

	if (op->type != HT_OP_READ || op->len != HT_MAX_DATA || (op->addr & (HT_MAX_DATA - 1)))
		return 0;
	if (n > ht_req_free_tags(r))
		n = ht_req_free_tags(r); /* (the next issue counts the wait for a tag) */
	/* the entry ht_req_issue_desc makes for a 64-byte dword read */
	memset(&e, 0, sizeof(e));
	e.cookie = cookie;
	e.type = HT_OP_READ;
	e.len = HT_MAX_DATA;
	e.dword = 1;
	e.count = HT_MAX_DATA / 4 - 1;
	for (k = 0; k < n; k++) {
		e.addr = op->addr + HT_MAX_DATA * (k + 1ull);
		if (take_tag(r, &e, &tags[k][0], &tags[k][1]) != 0)
			break;
	}
	return k;
}

int ht_req_unissue_tag(struct ht_requester *r, uint8_t unitid, uint8_t srctag)
{
	return unissue_tag(r, true, unitid, srctag);
}
