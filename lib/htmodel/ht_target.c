/* SPDX-License-Identifier: BSD-3-Clause
 * HT memory target (host-bridge model). See ht_target.h.
 */
#include "ht_target.h"

#include <errno.h>
#include <string.h>

/* ht_addr_reserved, inlined into check_access (once per request served) */
static inline bool reserved(uint64_t addr, uint64_t len)
{
	if (!len)
		len = 1;
	uint64_t last = addr + (len - 1);
	if (last < addr) /* wraps: it certainly covers the range */
		return true;
	return addr < HT_RSV_END && last >= HT_RSV_BASE;
}

bool ht_addr_reserved(uint64_t addr, uint64_t len)
{
	return reserved(addr, len);
}

int ht_tgt_init(struct ht_target *t, const struct ht_target_cfg *cfg)
{
	if (!t || !cfg || !cfg->mem || !cfg->size || cfg->base + (cfg->size - 1) < cfg->base)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->cfg = *cfg;
	for (unsigned i = 0; i < HT_TGT_MAX_FAULTS; i++)
		if (cfg->fault[i].err)
			t->faults |= 1u << i;
	t->last = cfg->base + (cfg->size - 1);
	t->plain = !t->faults && !reserved(cfg->base, cfg->size);
	return 0;
}

int ht_tgt_set_fault(struct ht_target *t, unsigned idx, uint64_t base, uint64_t size,
		     enum ht_rsp_err err)
{
	if (!t || idx >= HT_TGT_MAX_FAULTS || (unsigned)err > HT_RSP_MASTER_ABORT)
		return -EINVAL;
	t->cfg.fault[idx].base = base;
	t->cfg.fault[idx].size = err ? size : 0;
	t->cfg.fault[idx].err = (uint8_t)err;
	t->faults = err ? t->faults | 1u << idx : t->faults & ~(1u << idx);
	t->plain = !t->faults && !reserved(t->cfg.base, t->cfg.size);
	return 0;
}

static bool overlaps(uint64_t a, uint64_t len, uint64_t b, uint64_t blen)
{
	if (!len || !blen)
		return false;
	uint64_t alast = a + (len - 1), blast = b + (blen - 1);
	return a <= blast && b <= alast;
}

/*
 * Status for an access to [addr, addr+len): master abort when reserved or not
 * fully inside the region, else an injected fault, else ok.
 */
static enum ht_rsp_err check_access(struct ht_target *t, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + (len - 1);

	if (t->plain && addr >= t->cfg.base && end >= addr && end <= t->last)
		return HT_RSP_OK; /* inside a region with nothing else to check */
	if (reserved(addr, len)) {
		t->st.master_abort_reserved++;
		return HT_RSP_MASTER_ABORT;
	}
	uint64_t last = addr + (len - 1);
	uint64_t rlast = t->cfg.base + (t->cfg.size - 1);
	if (last < addr || addr < t->cfg.base || last > rlast) {
		t->st.master_abort_range++;
		return HT_RSP_MASTER_ABORT;
	}
	for (unsigned m = t->faults; m; m &= m - 1) {
		const struct ht_tgt_fault *f = &t->cfg.fault[__builtin_ctz(m)];
		if (overlaps(addr, len, f->base, f->size)) {
			t->st.faults_injected++;
			return (enum ht_rsp_err)f->err;
		}
	}
	return HT_RSP_OK;
}

static uint8_t *mem_at(struct ht_target *t, uint64_t addr)
{
	return t->cfg.mem + (addr - t->cfg.base);
}

/* Common response header. */
static void rsp_init(struct ht_pkt *rsp, const struct ht_pkt *req, enum ht_kind k)
{
	memset(rsp, 0, sizeof(*rsp));
	rsp->unitid = req->unitid;
	rsp->srctag = req->srctag;
	rsp->bridge = 1;
	rsp->rquid = 0;
	(void)ht_pkt_set_cmd(rsp, k);
}

static void rsp_rd(struct ht_target *t, struct ht_pkt *rsp, const struct ht_pkt *req,
		   unsigned count, enum ht_rsp_err err)
{
	rsp_init(rsp, req, HT_K_RDRESPONSE);
	rsp->count = (uint8_t)count;
	rsp->data_len = (uint16_t)(4 * (count + 1));
	if (err != HT_RSP_OK)
		memset(rsp->data, 0xFF, rsp->data_len);
	ht_pkt_set_rsp_err(rsp, err);
	t->st.rsp_rd++;
	t->st.rsp_err[err]++;
}

static void rsp_done(struct ht_target *t, struct ht_pkt *rsp, const struct ht_pkt *req,
		     enum ht_rsp_err err)
{
	rsp_init(rsp, req, HT_K_TGTDONE);
	ht_pkt_set_rsp_err(rsp, err);
	t->st.rsp_tgtdone++;
	t->st.rsp_err[err]++;
}

/* Span [first, last] of the enabled bytes of a mask restricted to the data
 * dwords actually present; false if none is enabled. */
static bool byte_span(uint64_t addr0, uint32_t mask, unsigned first_dw, unsigned ndw,
		      uint64_t *lo, uint64_t *len)
{
	int fb = -1, lb = -1;
	for (unsigned j = 0; j < ndw; j++)
		for (unsigned b = 0; b < 4; b++)
			if (mask & (1u << (4 * (first_dw + j) + b))) {
				int pos = (int)(4 * j + b);
				if (fb < 0)
					fb = pos;
				lb = pos;
			}
	if (fb < 0)
		return false;
	*lo = addr0 + (uint64_t)fb;
	*len = (uint64_t)(lb - fb + 1);
	return true;
}

static int handle_read(struct ht_target *t, const struct ht_pkt *req, struct ht_pkt *rsp)
{
	enum ht_rsp_err err;
	if (req->dword) {
		uint32_t n = 4u * (req->count + 1u);
		t->st.rd_dword++;
		err = check_access(t, req->addr, n);
		rsp_rd(t, rsp, req, req->count, err);
		if (err == HT_RSP_OK) {
			memcpy(rsp->data, mem_at(t, req->addr), n);
			t->st.bytes_read += n;
		}
	} else {
		uint32_t mask = req->mask & 0xF;
		uint64_t lo, len;
		t->st.rd_byte++;
		if (!byte_span(req->addr, mask, 0, 1, &lo, &len)) {
			lo = req->addr; /* Mask=0: accepted, one dword returned */
			len = 4;
		}
		err = check_access(t, lo, len);
		rsp_rd(t, rsp, req, 0, err);
		if (err == HT_RSP_OK) {
			for (unsigned b = 0; b < 4; b++)
				if (mask & (1u << b)) {
					rsp->data[b] = *mem_at(t, req->addr + b);
					t->st.bytes_read++;
				}
			/* bytes not enabled are returned as zero */
		}
	}
	rsp->passpw = req->responsepasspw ? 1 : 0;
	return 1;
}

static int handle_write(struct ht_target *t, const struct ht_pkt *req, struct ht_pkt *rsp)
{
	bool posted = req->posted;
	enum ht_rsp_err err;
	if (req->dword) {
		uint32_t n = 4u * (req->count + 1u);
		if (posted)
			t->st.wr_p_dword++;
		else
			t->st.wr_np_dword++;
		err = check_access(t, req->addr, n);
		if (posted && req->dataerror && err == HT_RSP_OK)
			err = HT_RSP_DATA_ERROR; /* forwarded with a data error: do not apply */
		if (err == HT_RSP_OK && req->data_len >= n) {
			memcpy(mem_at(t, req->addr), req->data, n);
			t->st.bytes_written += n;
		} else if (err == HT_RSP_OK) {
			t->st.malformed++;
			err = HT_RSP_TARGET_ABORT;
		}
	} else {
		unsigned first_dw = (unsigned)((req->addr >> 2) & 7);
		unsigned ndw = req->count; /* mask dword + ndw data dwords */
		if (posted)
			t->st.wr_p_byte++;
		else
			t->st.wr_np_byte++;
		uint64_t lo, len;
		if (!ndw || first_dw + ndw > 8 || req->data_len < 4 * ndw) {
			t->st.malformed++;
			err = HT_RSP_TARGET_ABORT;
		} else {
			if (!byte_span(req->addr, req->mask, first_dw, ndw, &lo, &len)) {
				lo = req->addr; /* nothing enabled: a no-op, still range-checked */
				len = 4u * ndw;
			}
			err = check_access(t, lo, len);
			if (posted && req->dataerror && err == HT_RSP_OK)
				err = HT_RSP_DATA_ERROR;
			if (err == HT_RSP_OK) {
				for (unsigned j = 0; j < ndw; j++)
					for (unsigned b = 0; b < 4; b++)
						if (req->mask & (1u << (4 * (first_dw + j) + b))) {
							*mem_at(t, req->addr + 4 * j + b) = req->data[4 * j + b];
							t->st.bytes_written++;
						}
			}
		}
	}
	if (posted) {
		if (err != HT_RSP_OK)
			t->st.posted_dropped++;
		return 0;
	}
	rsp_done(t, rsp, req, err);
	return 1;
}

static int handle_atomic(struct ht_target *t, const struct ht_pkt *req, struct ht_pkt *rsp)
{
	enum ht_rsp_err err;
	bool cas = req->count == HT_ATOMIC_CAS_COUNT;
	if (cas)
		t->st.cas++;
	else
		t->st.fetchadd++;
	if ((req->count != HT_ATOMIC_FETCHADD_COUNT && !cas) || (req->addr & 7) ||
	    req->data_len < 4u * (req->count + 1u)) {
		t->st.malformed++;
		err = HT_RSP_TARGET_ABORT;
	} else {
		err = check_access(t, req->addr, 8);
	}
	rsp_rd(t, rsp, req, 1, err);
	if (err != HT_RSP_OK)
		return 1;
	uint8_t *m = mem_at(t, req->addr);
	uint64_t old = ht_get_le64(m);
	if (cas) {
		uint64_t cmp = ht_get_le64(req->data), swap = ht_get_le64(req->data + 8);
		if (old == cmp) {
			ht_put_le64(m, swap);
			t->st.cas_swapped++;
			t->st.bytes_written += 8;
		}
	} else {
		ht_put_le64(m, old + ht_get_le64(req->data));
		t->st.bytes_written += 8;
	}
	t->st.bytes_read += 8;
	ht_put_le64(rsp->data, old);
	return 1;
}

int ht_tgt_handle(struct ht_target *t, const struct ht_pkt *req, struct ht_pkt *rsp)
{
	if (!t || !req || !rsp)
		return -EINVAL;
	switch (req->kind) {
	case HT_K_RDSIZED:
		return handle_read(t, req, rsp);
	case HT_K_WRSIZED:
		return handle_write(t, req, rsp);
	case HT_K_ATOMIC:
		return handle_atomic(t, req, rsp);
	case HT_K_FLUSH:
		/* posted writes are applied when handled and the link delivers a
		 * Flush after every earlier posted write: nothing is pending */
		t->st.flush++;
		rsp_done(t, rsp, req, HT_RSP_OK);
		return 1;
	case HT_K_FENCE:
		t->st.fence++;
		return 0;
	case HT_K_BROADCAST:
		t->st.broadcast++;
		return 0;
	default:
		t->st.not_request++;
		return -EINVAL;
	}
}

/* The decoded path of ht_tgt_serve: rare kinds and shapes. */
static int serve_decoded(struct ht_target *t, const struct ht_desc *req, uint8_t *out,
			 size_t cap)
{
	struct ht_pkt p, rsp;
	int r;

	if (cap < HT_MAX_PKT_LEN)
		return -ENOSPC;
	if (ht_desc_decode(req, &p) < 0) {
		t->st.not_request++; /* a descriptor ht_desc_parse did not fill */
		return -EINVAL;
	}
	r = ht_tgt_handle(t, &p, &rsp);
	if (r != 1)
		return r;
	return ht_encode(&rsp, out, cap);
}

/* RdSized dword: the response filled from the memory (cf. handle_read). */
static int serve_read_dword(struct ht_target *t, const struct ht_desc *req, uint8_t *out,
			    size_t cap)
{
	uint32_t n = 4u * (req->count + 1u);
	enum ht_rsp_err err;

	if (cap < 4 + n)
		return -ENOSPC;
	t->st.rd_dword++;
	err = check_access(t, req->addr, n);
	t->st.rsp_rd++;
	t->st.rsp_err[err]++;
	/* the response written here: its fields come from a parsed request
	 * (UnitID, SrcTag below 32, Count below 16), nothing to check again */
	ht_put_rsp_ctl(out, HT_CMD_RDRESP, req->unitid, req->srctag,
		       (req->cmd & HT_CMD_BIT_RSPPW) ? 1 : 0, 1, err, req->count);
	if (err == HT_RSP_OK) {
		t->st.bytes_read += n;
		ht_data_copy(out + 4, mem_at(t, req->addr), n);
	} else {
		memset(out + 4, 0xff, n);
	}
	return (int)(4 + n);
}

/* WrSized dword: applied from the packet bytes (cf. handle_write). */
static int serve_write_dword(struct ht_target *t, const struct ht_desc *req, uint8_t *out,
			     size_t cap)
{
	bool posted = req->cmd & HT_CMD_BIT_POSTED;
	uint32_t n = 4u * (req->count + 1u);
	enum ht_rsp_err err;

	if (!posted && cap < 4)
		return -ENOSPC;
	if (posted)
		t->st.wr_p_dword++;
	else
		t->st.wr_np_dword++;
	err = check_access(t, req->addr, n);
	if (posted && (req->pkt[2] & 0x10) && err == HT_RSP_OK) /* DataError, bit 20 */
		err = HT_RSP_DATA_ERROR;
	if (err == HT_RSP_OK) { /* a parsed packet carries exactly n data bytes */
		ht_data_copy(mem_at(t, req->addr), req->pkt + req->data_off, n);
		t->st.bytes_written += n;
	}
	if (posted) {
		if (err != HT_RSP_OK)
			t->st.posted_dropped++;
		return 0;
	}
	t->st.rsp_tgtdone++;
	t->st.rsp_err[err]++;
	return ht_enc_rsp(out, cap, HT_CMD_TGTDONE, req->unitid, req->srctag, 0, 1, err, 0, NULL);
}

int ht_tgt_serve(struct ht_target *t, const struct ht_desc *req, uint8_t *out, size_t cap)
{
	if (!t || !req || !out)
		return -EINVAL;
	if (!req->ctl && req->kind == HT_K_RDSIZED && (req->cmd & HT_CMD_BIT_DWORD))
		return serve_read_dword(t, req, out, cap);
	if (!req->ctl && req->kind == HT_K_WRSIZED && (req->cmd & HT_CMD_BIT_DWORD))
		return serve_write_dword(t, req, out, cap);
	return serve_decoded(t, req, out, cap);
}

unsigned ht_tgt_serve_burst(struct ht_target *t, const struct ht_desc *req, unsigned n,
			    uint8_t *out, size_t cap, uint16_t *rsp_len)
{
	size_t used = 0;
	unsigned i;

	for (i = 0; i < n && cap - used >= HT_MAX_PKT_LEN; i++) {
		int r = ht_tgt_serve(t, &req[i], out + used, cap - used);

		rsp_len[i] = r > 0 ? (uint16_t)r : 0;
		if (r > 0)
			used += (size_t)r;
	}
	return i;
}

const struct ht_tgt_stats *ht_tgt_stats(const struct ht_target *t)
{
	return &t->st;
}
