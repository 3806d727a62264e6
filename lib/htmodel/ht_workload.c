/* SPDX-License-Identifier: BSD-3-Clause
 * Seeded HT workload with a shadow memory. See ht_workload.h.
 */
#include "ht_workload.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#define COOKIE_POSTED 0xFFFFu

static const unsigned default_weight[HT_OP__COUNT] = {
	[HT_OP_READ] = 35, [HT_OP_WRITE_P] = 25, [HT_OP_WRITE_NP] = 10,
	[HT_OP_FETCH_ADD] = 10, [HT_OP_CAS] = 10, [HT_OP_FLUSH] = 5, [HT_OP_FENCE] = 5,
};

void ht_wl_cfg_default(struct ht_wl_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	memcpy(cfg->weight, default_weight, sizeof(default_weight));
	cfg->byte_pct = 30;
	cfg->max_inflight = HT_WL_MAX_INFLIGHT;
	cfg->sweep = true;
}

void ht_wl_fill(uint64_t seed, uint8_t *buf, size_t len)
{
	struct ht_rand r;
	ht_rand_seed(&r, seed ^ 0x5EEDF111ull);
	size_t i = 0;
	while (i < len) {
		uint64_t v = ht_rand_u64(&r);
		for (int b = 0; b < 8 && i < len; b++, i++)
			buf[i] = (uint8_t)(v >> (8 * b));
	}
}

int ht_wl_init(struct ht_workload *w, const struct ht_wl_cfg *cfg)
{
	if (!w || !cfg || !cfg->shadow || !cfg->busy || !cfg->taint || !cfg->size || (cfg->size & 63) ||
	    (cfg->base & 63) || cfg->base + (cfg->size - 1) < cfg->base || cfg->byte_pct > 100 ||
	    cfg->max_inflight > HT_WL_MAX_INFLIGHT ||
	    (cfg->fixed_len && (cfg->fixed_len > 64 || (cfg->fixed_len & 3))))
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->cfg = *cfg;
	bool any = false;
	for (unsigned i = 0; i < HT_OP__COUNT; i++)
		any |= cfg->weight[i] != 0;
	if (!any)
		memcpy(w->cfg.weight, default_weight, sizeof(default_weight));
	w->only_type = -1;
	for (unsigned i = 0; i < HT_OP__COUNT; i++) {
		w->wsum += w->cfg.weight[i];
		if (w->cfg.weight[i])
			w->only_type = w->wsum == w->cfg.weight[i] ? (int)i : -1;
	}
	if (!w->cfg.max_inflight)
		w->cfg.max_inflight = HT_WL_MAX_INFLIGHT;
	w->gen_np = !w->cfg.weight[HT_OP_WRITE_P] && !w->cfg.weight[HT_OP_FENCE] &&
		    !w->cfg.weight[HT_OP_CAS];
	ht_rand_seed(&w->rng, cfg->seed);
	memset(cfg->busy, 0, cfg->size / 64);
	memset(cfg->taint, 0, cfg->size / 64 * sizeof(*cfg->taint));
	/* pop order 0, 1, 2, ... */
	for (unsigned i = 0; i < HT_WL_MAX_INFLIGHT; i++)
		w->free_list[i] = (uint16_t)(HT_WL_MAX_INFLIGHT - 1 - i);
	w->free_top = HT_WL_MAX_INFLIGHT;
	return 0;
}

static uint64_t nblocks(const struct ht_workload *w)
{
	return w->cfg.size / 64;
}

static bool has_block(uint8_t type)
{
	return type != HT_OP_FLUSH && type != HT_OP_FENCE;
}

static uint64_t block_of(const struct ht_workload *w, uint64_t addr)
{
	return (addr - w->cfg.base) / 64;
}

/* busy[block]: WL_BUSY, a non-posted op is in flight on it; WL_TAINTED,
 * some of its bytes hold a value the shadow does not know (reported lost by
 * ht_wl_taint, or never owned since ht_wl_unown): taint[block] has a bit for
 * each (bit i: byte i) until an op owns it again (writes it, or reads it and
 * seeds the shadow). Only the bytes read that are tainted are seeded; the
 * others of the same read are compared. */
#define WL_BUSY    1u
#define WL_TAINTED 2u

/* The bits of the bytes [addr, addr + len) in their block's taint word (an
 * op stays inside one 64-byte block). */
static uint64_t span_bits(uint64_t addr, uint32_t len)
{
	return (len >= 64 ? ~0ull : (1ull << len) - 1) << (addr & 63);
}

/* Which of the len bytes at addr are tainted: bit i for byte addr + i. */
static uint64_t tainted_bytes(const struct ht_workload *w, uint64_t addr, uint32_t len)
{
	uint64_t b = (addr - w->cfg.base) / 64;

	if (!(w->cfg.busy[b] & WL_TAINTED))
		return 0;
	return (w->cfg.taint[b] & span_bits(addr, len)) >> (addr & 63);
}

/* An op of len bytes at addr owns them again (it wrote them, or read them
 * and seeded the shadow): a tainted block is clean once all of it is. */
static void own(struct ht_workload *w, uint64_t addr, uint32_t len)
{
	uint64_t b = (addr - w->cfg.base) / 64;

	if ((w->cfg.busy[b] & WL_TAINTED) && !(w->cfg.taint[b] &= ~span_bits(addr, len)))
		w->cfg.busy[b] &= (uint8_t)~WL_TAINTED;
}

/* Every byte of block b unknown. */
static void taint_block(struct ht_workload *w, uint64_t b)
{
	w->cfg.busy[b] |= WL_TAINTED;
	w->cfg.taint[b] = ~0ull;
}

static uint8_t *shadow_at(const struct ht_workload *w, uint64_t addr)
{
	return w->cfg.shadow + (addr - w->cfg.base);
}

/* A random legal op inside one 64-byte block. */
static void gen_random(struct ht_workload *w, struct ht_op *op)
{
	struct ht_rand *r = &w->rng;
	/* every field but data[], which is written up to len for writes */
	memset(op, 0, offsetof(struct ht_op, data));
	int t = w->only_type >= 0 ? w->only_type :
		ht_rand_pick_sum(r, w->cfg.weight, HT_OP__COUNT, w->wsum);
	op->type = (uint8_t)(t < 0 ? HT_OP_READ : t);
	uint64_t blk = w->cfg.base + 64 * ht_rand_below(r, nblocks(w));
	/* a draw only where it decides something */
	bool byte = !w->cfg.fixed_len && w->cfg.byte_pct &&
		    (w->cfg.byte_pct >= 100 || ht_rand_pct(r, w->cfg.byte_pct));
	uint32_t off, len, fixed = w->cfg.fixed_len;

	switch (op->type) {
	case HT_OP_READ:
		if (fixed) {
			off = 0;
			len = fixed;
		} else if (byte) {
			off = (uint32_t)ht_rand_below(r, 64);
			len = (uint32_t)ht_rand_range(r, 1, 4 - (off & 3));
		} else {
			uint32_t k = (uint32_t)ht_rand_range(r, 1, 16);
			off = 4 * (uint32_t)ht_rand_below(r, 16 - k + 1);
			len = 4 * k;
		}
		op->addr = blk + off;
		op->len = len;
		break;
	case HT_OP_WRITE_P:
	case HT_OP_WRITE_NP:
		if (fixed) {
			off = 0;
			len = fixed;
		} else if (byte) {
			off = (uint32_t)ht_rand_below(r, 64);
			uint32_t maxlen = 32 - (off & 31);
			if (ht_rand_pct(r, 50) && maxlen > 4)
				maxlen = 4;
			len = (uint32_t)ht_rand_range(r, 1, maxlen);
		} else {
			uint32_t k = (uint32_t)ht_rand_range(r, 1, 16);
			off = 4 * (uint32_t)ht_rand_below(r, 16 - k + 1);
			len = 4 * k;
		}
		op->addr = blk + off;
		op->len = len;
		/* one 64-bit draw per op, then a Weyl sequence (x + i * golden
		 * ratio) as little-endian words: ops' data differ but by a 2^-64
		 * chance, and the words of one op from each other, which is all
		 * the shadow check needs, at a third of the cost of a draw per
		 * word */
		{
			uint64_t v = ht_rand_u64(r);
			uint32_t i = 0, n = len < sizeof(op->data) ? len : sizeof(op->data);

			for (; i + 8 <= n; i += 8, v += 0x9E3779B97F4A7C15ull) {
				uint64_t le = htole64(v);

				memcpy(op->data + i, &le, 8);
			}
			for (uint32_t b = 0; i + b < n; b++)
				op->data[i + b] = (uint8_t)(v >> (8 * b));
		}
		break;
	case HT_OP_FETCH_ADD:
		op->addr = blk + 8 * ht_rand_below(r, 8);
		/* small addends half of the time, to exercise carries both ways */
		op->operand[0] = ht_rand_pct(r, 50) ? ht_rand_below(r, 1000) : ht_rand_u64(r);
		break;
	case HT_OP_CAS:
		op->addr = blk + 8 * ht_rand_below(r, 8);
		/* compare with the current value half of the time so swaps happen */
		op->operand[0] = ht_rand_pct(r, 50) ? ht_get_le64(shadow_at(w, op->addr)) : ht_rand_u64(r);
		op->operand[1] = ht_rand_u64(r);
		break;
	default: /* flush, fence */
		break;
	}
}

int ht_wl_peek(struct ht_workload *w, struct ht_op *op)
{
	const struct ht_op *p;
	int r;

	if (!op)
		return -EINVAL;
	r = ht_wl_peek_ref(w, &p);
	if (r == 1)
		*op = *p;
	return r;
}

int ht_wl_peek_ref(struct ht_workload *w, const struct ht_op **op)
{
	if (!w || !op)
		return -EINVAL;
	if (!w->have_pending) {
		if (w->generated < w->cfg.n_ops) {
			gen_random(w, &w->pending);
			w->generated++;
			w->pending_sweep = false;
		} else if (w->cfg.sweep && w->sweep_next < nblocks(w)) {
			memset(&w->pending, 0, sizeof(w->pending));
			w->pending.type = HT_OP_READ;
			w->pending.addr = w->cfg.base + 64 * w->sweep_next++;
			w->pending.len = 64;
			w->pending_sweep = true;
		} else {
			return -ENODATA;
		}
		w->have_pending = true;
	}
	struct ht_op *p = &w->pending;
	bool np = ht_op_nonposted((enum ht_op_type)p->type);
	if (np && (w->inflight >= w->cfg.max_inflight || !w->free_top))
		return 0;
	if (has_block(p->type) && (w->cfg.busy[block_of(w, p->addr)] & WL_BUSY)) {
		w->st.blocked++;
		return 0;
	}
	uint64_t slot = np ? w->free_list[w->free_top - 1] : COOKIE_POSTED;
	p->cookie = (w->seq << 16) | slot;
	*op = p;
	return 1;
}

uint64_t ht_wl_commit(struct ht_workload *w)
{
	return ht_wl_commit_at(w, 0);
}

uint64_t ht_wl_commit_at(struct ht_workload *w, uint64_t now)
{
	if (!w->have_pending)
		return UINT64_MAX;
	struct ht_op *p = &w->pending;
	uint64_t seq = w->seq++;
	if (ht_op_nonposted((enum ht_op_type)p->type)) {
		uint16_t s = w->free_list[--w->free_top];
		struct ht_wl_slot *sl = &w->slot[s];
		sl->seq = seq;
		sl->addr = p->addr;
		sl->len = p->len;
		sl->type = p->type;
		sl->operand[0] = p->operand[0];
		sl->operand[1] = p->operand[1];
		sl->sweep = w->pending_sweep;
		sl->lost = 0;
		sl->issued_at = now;
		sl->used = 1;
		if (p->type == HT_OP_WRITE_NP)
			memcpy(sl->data, p->data, p->len);
		if (has_block(p->type))
			w->cfg.busy[block_of(w, p->addr)] |= WL_BUSY;
		w->inflight++;
	} else if (p->type == HT_OP_WRITE_P) {
		/* HT ordering makes every later PassPW=0 read see this write */
		memcpy(shadow_at(w, p->addr), p->data, p->len);
		own(w, p->addr, p->len);
	}
	w->st.issued[p->type]++;
	w->st.issued_total++;
	if (w->pending_sweep)
		w->st.sweep_issued++;
	w->have_pending = false;
	return seq;
}

static void keep_err(struct ht_workload *w, const struct ht_wl_slot *sl);

/* The tainted bytes (bit i: byte i) of len read into the shadow at m. */
static void seed(uint8_t *m, const uint8_t *data, uint64_t tainted, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (tainted >> i & 1)
			m[i] = data[i];
}

/* An atomic's old value read bytes that were tainted: they seed the
 * shadow, and the 8 bytes are owned (the shadow then follows the target). */
static void seed_old(struct ht_workload *w, uint8_t *m, uint64_t old, uint64_t tainted,
		     uint64_t addr)
{
	uint8_t b[8];

	ht_put_le64(b, old);
	seed(m, b, tainted, 8);
	own(w, addr, 8);
	w->st.tainted_reads++;
}

int ht_wl_complete(struct ht_workload *w, const struct ht_completion *c, struct ht_wl_result *res)
{
	if (!w || !c)
		return -EINVAL;
	uint64_t s = c->cookie & 0xFFFF, seq = c->cookie >> 16;
	if (s >= HT_WL_MAX_INFLIGHT || !w->slot[s].used || w->slot[s].seq != seq ||
	    w->slot[s].type != c->type) {
		w->st.unexpected++;
		return -ENOENT;
	}
	struct ht_wl_slot *sl = &w->slot[s];
	bool ok = c->status == HT_RSP_OK, match = true, swapped = false;
	if (!ok && sl->lost) {
		w->st.poisoned_lost++;
	} else if (!ok) {
		w->st.errors++;
		keep_err(w, sl);
	} else {
		uint8_t *m = sl->type == HT_OP_FLUSH ? NULL : shadow_at(w, sl->addr);
		uint32_t span = sl->type == HT_OP_FETCH_ADD || sl->type == HT_OP_CAS ? 8 : sl->len;
		/* bytes reported lost hold any value: what the target says
		 * they hold seeds the shadow (those bytes only: the others
		 * of the op are compared) */
		uint64_t lost = m ? tainted_bytes(w, sl->addr, span) : 0;

		switch (sl->type) {
		case HT_OP_READ:
			if (lost && c->len == sl->len) {
				seed(m, ht_completion_data(c), lost, sl->len);
				own(w, sl->addr, sl->len);
				w->st.tainted_reads++;
			}
			match = c->len == sl->len && ht_data_eq(ht_completion_data(c), m, sl->len);
			break;
		case HT_OP_WRITE_NP:
			memcpy(m, sl->data, sl->len);
			own(w, sl->addr, sl->len);
			break;
		case HT_OP_FETCH_ADD: {
			uint64_t old = ht_completion_u64(c);
			if (lost && c->len == 8)
				seed_old(w, m, old, lost, sl->addr);
			match = c->len == 8 && old == ht_get_le64(m);
			/* follow the target (resync after a mismatch) */
			ht_put_le64(m, old + sl->operand[0]);
			break;
		}
		case HT_OP_CAS: {
			uint64_t old = ht_completion_u64(c);
			if (lost && c->len == 8)
				seed_old(w, m, old, lost, sl->addr);
			match = c->len == 8 && old == ht_get_le64(m);
			if (old == sl->operand[0]) {
				ht_put_le64(m, sl->operand[1]);
				swapped = true;
				w->st.cas_swapped++;
			}
			break;
		}
		default: /* flush: nothing to compare */
			break;
		}
		if (match)
			w->st.verified++;
		else
			w->st.mismatches++;
	}
	if (res) {
		res->seq = sl->seq;
		res->addr = sl->addr;
		res->len = sl->type == HT_OP_FETCH_ADD || sl->type == HT_OP_CAS ? 8 : sl->len;
		res->type = sl->type;
		res->status = c->status;
		res->verified = ok && match;
		res->sweep = sl->sweep;
		res->cas_swapped = swapped;
		res->issued_at = sl->issued_at;
	}
	if (has_block(sl->type))
		w->cfg.busy[block_of(w, sl->addr)] &= (uint8_t)~WL_BUSY;
	sl->used = 0;
	w->free_list[w->free_top++] = (uint16_t)s;
	w->inflight--;
	w->st.completed++;
	return ok && match ? 0 : 1;
}

/* The bytes an op covers (a Flush or a Fence: the whole window). */
static void op_span(const struct ht_workload *w, const struct ht_wl_slot *sl, uint64_t *lo,
		    uint64_t *hi)
{
	if (has_block(sl->type)) {
		*lo = sl->addr;
		*hi = sl->addr + (sl->len ? sl->len : 1);
	} else {
		*lo = w->cfg.base;
		*hi = w->cfg.base + w->cfg.size;
	}
}

/* An error not explained (yet): kept for a loss report that may explain it. */
static void keep_err(struct ht_workload *w, const struct ht_wl_slot *sl)
{
	if (w->n_err < HT_WL_ERR_KEEP) {
		uint64_t lo, hi;

		op_span(w, sl, &lo, &hi);
		w->err[w->n_err++] = (struct ht_wl_err){ lo, hi - lo };
	}
}

/* [lo, hi) was reported lost: the ops in flight on it, and the errors kept,
 * are explained by the report. */
static void explain(struct ht_workload *w, uint64_t lo, uint64_t hi)
{
	for (unsigned s = 0; s < HT_WL_MAX_INFLIGHT; s++) {
		struct ht_wl_slot *sl = &w->slot[s];
		uint64_t a, b;

		if (!sl->used)
			continue;
		op_span(w, sl, &a, &b);
		if (a < hi && lo < b)
			sl->lost = 1;
	}
	for (unsigned i = 0; i < w->n_err;) {
		const struct ht_wl_err *e = &w->err[i];

		if (e->addr < hi && lo < e->addr + e->len) {
			w->st.errors--;
			w->st.poisoned_lost++;
			w->err[i] = w->err[--w->n_err];
		} else {
			i++;
		}
	}
}

void ht_wl_stop(struct ht_workload *w)
{
	if (w->have_pending)
		w->have_pending = false; /* not committed: never issued */
	w->cfg.n_ops = w->generated;
	w->sweep_next = nblocks(w);
}

void ht_wl_unown(struct ht_workload *w)
{
	for (uint64_t b = 0; b < nblocks(w); b++)
		taint_block(w, b);
}

int ht_wl_taint(struct ht_workload *w, uint64_t addr, uint64_t len, bool restart)
{
	uint64_t end = w->cfg.base + w->cfg.size;

	if (len == 0 || addr >= end || addr + len <= w->cfg.base || addr + len < addr)
		return 0;
	uint64_t lo = addr > w->cfg.base ? addr : w->cfg.base;
	uint64_t hi = addr + len < end ? addr + len : end;

	for (uint64_t a = lo; a < hi;) {
		uint64_t b = (a - w->cfg.base) / 64, e = w->cfg.base + 64 * (b + 1);

		if (e > hi)
			e = hi;
		w->cfg.busy[b] |= WL_TAINTED;
		w->cfg.taint[b] |= span_bits(a, (uint32_t)(e - a));
		a = e;
	}
	explain(w, lo, hi);
	if (restart)
		w->st.lost_restart++;
	else
		w->st.lost_reset++;
	w->st.lost_bytes += hi - lo;
	return 1;
}

bool ht_wl_done(const struct ht_workload *w)
{
	return !w->have_pending && w->generated >= w->cfg.n_ops &&
	       (!w->cfg.sweep || w->sweep_next >= nblocks(w)) && !w->inflight;
}

bool ht_wl_tainted(const struct ht_workload *w, uint64_t off)
{
	return off < w->cfg.size && (w->cfg.busy[off / 64] & WL_TAINTED);
}

uint64_t ht_wl_check_image(const struct ht_workload *w, const uint8_t *mem)
{
	uint64_t diff = 0;
	for (uint64_t i = 0; i < w->cfg.size; i++)
		diff += w->cfg.shadow[i] != mem[i] && !tainted_bytes(w, w->cfg.base + i, 1);
	return diff;
}

const struct ht_wl_stats *ht_wl_stats(const struct ht_workload *w)
{
	return &w->st;
}
