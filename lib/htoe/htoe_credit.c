/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_credit: VL credits and the receive pool. See htoe_credit.h.
 */
#include "htoe/htoe_credit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* ---- sender ------------------------------------------------------------- */

void htoe_credit_tx_init(struct htoe_credit_tx *tx)
{
	memset(tx, 0, sizeof(*tx));
}

void htoe_credit_tx_reset(struct htoe_credit_tx *tx)
{
	memset(tx->limit, 0, sizeof(tx->limit));
	memset(tx->consumed, 0, sizeof(tx->consumed));
	for (int v = 0; v < HT_VC_COUNT; v++)
		tx->blocked[v] = false;
}

int htoe_credit_tx_take(struct htoe_credit_tx *tx, enum ht_vc vc, bool has_data)
{
	return htoe_credit_tx_take_n(tx, vc, 1, has_data);
}

static void close_interval(struct htoe_credit_tx *tx, int v, uint64_t now)
{
	if (!tx->blocked[v])
		return;
	if (now > tx->blocked_since[v])
		tx->starved_ns[v] += now - tx->blocked_since[v];
	tx->blocked[v] = false;
}

unsigned htoe_credit_tx_update(struct htoe_credit_tx *tx,
			       const uint16_t credit[HTOE_CREDIT_NCLASS],
			       uint64_t now)
{
	unsigned mask = 0;

#pragma GCC unroll 3 /* per frame received */
	for (int v = 0; v < HT_VC_COUNT; v++) {
#pragma GCC unroll 2
		for (int d = 0; d < 2; d++) {
			uint16_t nl = credit[2 * v + d];
			int32_t df = htoe_seq_diff(nl, tx->limit[v][d]);
			if (df > 0) {
				tx->limit[v][d] = nl;
				mask |= 1u << (2 * v + d);
				tx->updates++;
			} else if (df < 0) {
				tx->stale_updates++;
			}
		}
	}
	for (int v = 0; v < HT_VC_COUNT; v++)
		if (tx->blocked[v] &&
		    htoe_credit_tx_can_send(tx, (enum ht_vc)v, tx->blocked_data[v]))
			close_interval(tx, v, now);
	return mask;
}

void htoe_credit_tx_blocked(struct htoe_credit_tx *tx, enum ht_vc vc,
			    bool has_data, uint64_t now)
{
	if (!htoe_credit_vc_ok(vc))
		return;
	tx->blocked_data[vc] = has_data;
	if (tx->blocked[vc])
		return;
	tx->blocked[vc] = true;
	tx->blocked_since[vc] = now;
	tx->starved_events[vc]++;
}

void htoe_credit_tx_unblocked(struct htoe_credit_tx *tx, enum ht_vc vc,
			      uint64_t now)
{
	if (htoe_credit_vc_ok(vc))
		close_interval(tx, (int)vc, now);
}

uint64_t htoe_credit_tx_starved_ns(const struct htoe_credit_tx *tx,
				   enum ht_vc vc, uint64_t now)
{
	if (!htoe_credit_vc_ok(vc))
		return 0;
	uint64_t t = tx->starved_ns[vc];
	if (tx->blocked[vc] && now > tx->blocked_since[vc])
		t += now - tx->blocked_since[vc];
	return t;
}

/* ---- pool --------------------------------------------------------------- */

/* The fair share of class (v, d) for each of its busy VLs, at least 1
 * (with more busy VLs than shared buffers, the first ones get one each):
 * kept in share[] as the busy VLs change. */
static uint32_t share_of(const struct htoe_rxpool *p, int v, int d)
{
	uint32_t s = p->n_busy[v][d] ? p->shared[v][d] / p->n_busy[v][d] : p->shared[v][d];

	return s ? s : 1;
}

static void set_share(struct htoe_rxpool *p, int v, int d)
{
	p->share[v][d] = share_of(p, v, d);
}

int htoe_rxpool_init(struct htoe_rxpool *p, const uint16_t total[HT_VC_COUNT][2],
		     uint16_t reserve, uint16_t max_per_vl, uint16_t n_vls)
{
	if (!p || !total || reserve == 0 || max_per_vl < reserve || n_vls == 0)
		return -EINVAL;
	for (int v = 0; v < HT_VC_COUNT; v++)
		for (int d = 0; d < 2; d++)
			if (total[v][d] > HTOE_CREDIT_POOL_MAX ||
			    (uint32_t)total[v][d] < (uint32_t)n_vls * reserve)
				return -EINVAL;
	memset(p, 0, sizeof(*p));
	memcpy(p->total, total, sizeof(p->total));
	p->reserve = reserve;
	p->max_per_vl = max_per_vl;
	p->n_vls = n_vls;
	for (int v = 0; v < HT_VC_COUNT; v++)
		for (int d = 0; d < 2; d++) {
			p->shared[v][d] = total[v][d] - (uint32_t)n_vls * reserve;
			set_share(p, v, d);
		}
	return 0;
}

uint32_t htoe_rxpool_free(const struct htoe_rxpool *p, enum ht_vc vc, bool data)
{
	if (!htoe_credit_vc_ok(vc))
		return 0;
	return p->total[vc][data] - p->committed[vc][data];
}

/* ---- receiver ----------------------------------------------------------- */

#define CLASS_ALL ((uint8_t)((1u << HTOE_CREDIT_NCLASS) - 1))

static inline uint8_t class_bit(int v, int d)
{
	return (uint8_t)(1u << (2 * v + d));
}

/* The pool changed in a way that may let another VL's grant grow (its
 * share grew, or the room that limited it): every VL recomputes all its
 * classes at its next regrant, except rx (the VL that caused it, if it was
 * up to date: its own class is dirty). */
static void pool_bump(struct htoe_rxpool *p, struct htoe_credit_rx *rx)
{
	bool current = rx && rx->pool_gen == p->gen;

	p->gen++;
	if (current)
		rx->pool_gen = p->gen;
}

static inline uint32_t outstanding(const struct htoe_credit_rx *rx, int v, int d)
{
	return (uint16_t)(rx->granted[v][d] - rx->released[v][d]);
}

static inline uint32_t excess_of(uint32_t o, uint32_t reserve)
{
	return o > reserve ? o - reserve : 0;
}

int htoe_credit_rx_init(struct htoe_rxpool *p, struct htoe_credit_rx *rx)
{
	if (p->n_attached >= p->n_vls)
		return -ENOSPC;
	memset(rx, 0, sizeof(*rx));
	rx->dirty = CLASS_ALL;
	rx->pool_gen = p->gen;
	p->n_attached++;
	return 0;
}

int htoe_credit_rx_receive(struct htoe_credit_rx *rx, enum ht_vc vc, bool has_data)
{
	return htoe_credit_rx_receive_n(rx, vc, 1, has_data);
}

/* n buffers of class (v, d) are free again (n <= held). Of the n, those
 * released while o > R were excess: min(n, o - R). */
static inline __attribute__((always_inline)) void release_n(struct htoe_rxpool *p,
							    struct htoe_credit_rx *rx, int v,
							    int d, unsigned n)
{
	uint32_t o = outstanding(rx, v, d);

	if (o > p->reserve) {
		uint32_t ex = o - p->reserve;

		p->excess[v][d] -= n < ex ? n : ex;
		/* the shared part has room again: it matters to a VL whose
		 * grant the room limited */
		if (p->room_limited & class_bit(v, d)) {
			p->room_limited &= (uint8_t)~class_bit(v, d);
			pool_bump(p, rx);
		}
	}
	p->committed[v][d] -= n;
	rx->released[v][d] = (uint16_t)(rx->released[v][d] + n);
}

/* May npkts packets of vc, ndata of them with data, be released: held. */
static inline bool release_ok(const struct htoe_credit_rx *rx, enum ht_vc vc, unsigned npkts,
			      unsigned ndata)
{
	return htoe_credit_vc_ok(vc) && ndata <= npkts &&
	       htoe_seq_diff(rx->received[vc][0], rx->released[vc][0]) >= (int)npkts &&
	       (!ndata || htoe_seq_diff(rx->received[vc][1], rx->released[vc][1]) >= (int)ndata);
}

int htoe_credit_rx_release_n(struct htoe_rxpool *p, struct htoe_credit_rx *rx, enum ht_vc vc,
			     unsigned npkts, unsigned ndata)
{
	if (!release_ok(rx, vc, npkts, ndata))
		return -EINVAL;
	if (!npkts)
		return 0;
	release_n(p, rx, vc, 0, npkts);
	rx->dirty |= class_bit(vc, 0);
	if (ndata) {
		release_n(p, rx, vc, 1, ndata);
		rx->dirty |= class_bit(vc, 1);
	}
	return 0;
}

int htoe_credit_rx_release(struct htoe_rxpool *p, struct htoe_credit_rx *rx,
			   enum ht_vc vc, bool has_data)
{
	return htoe_credit_rx_release_n(p, rx, vc, 1, has_data);
}

/* The target of an active class (v, d) of rx: the reserve and the VL's
 * fair share of the shared part (share_of), up to the cap and as far as
 * the shared part has room: e + room, the shared part less what the other
 * VLs hold of it. *lim: the room limited it (see release_n). */
static inline uint32_t active_target(const struct htoe_rxpool *p, const struct htoe_credit_rx *rx,
				     int v, int d, bool *lim)
{
	const uint32_t R = p->reserve, M = p->max_per_vl;
	uint32_t share = p->share[v][d];
	uint32_t te = excess_of(outstanding(rx, v, d), R) + p->shared[v][d] - p->excess[v][d];

	*lim = M > R && te < share && te < M - R;
	if (M <= R)
		return R;
	if (te > share)
		te = share;
	if (te > M - R)
		te = M - R;
	return R + te;
}

/* Class (v, d) of rx, n of whose buffers are free again, granted them
 * again at once if that is exactly what the regrant before the VL's next
 * frame would do: the pool has this VL alone, so that the class's target
 * is the one its last regrant found (rx->tgt: its share, the shared part
 * and what the VL holds of it change only by a reset meanwhile), and the
 * class held that target (o >= 1 for a release: a tgt of 0 never matches).
 * Its granted and released move together; the pool is as it was. True if
 * done. */
static inline bool release_regrant(struct htoe_rxpool *p, struct htoe_credit_rx *rx, int v,
				   int d, unsigned n)
{
	if (p->n_attached != 1 || rx->tgt[v][d] != outstanding(rx, v, d) ||
	    (p->room_limited & class_bit(v, d)))
		return false;
	rx->granted[v][d] = (uint16_t)(rx->granted[v][d] + n);
	rx->released[v][d] = (uint16_t)(rx->released[v][d] + n);
	return true;
}

int htoe_credit_rx_release_regrant_n(struct htoe_rxpool *p, struct htoe_credit_rx *rx,
				     enum ht_vc vc, unsigned npkts, unsigned ndata)
{
	bool again = false;

	if (!release_ok(rx, vc, npkts, ndata))
		return -EINVAL;
	if (!npkts)
		return 0;
	if (release_regrant(p, rx, vc, 0, npkts)) {
		again = true;
	} else {
		release_n(p, rx, vc, 0, npkts);
		rx->dirty |= class_bit(vc, 0);
	}
	if (!ndata) {
	} else if (release_regrant(p, rx, vc, 1, ndata)) {
		again = true;
	} else {
		release_n(p, rx, vc, 1, ndata);
		rx->dirty |= class_bit(vc, 1);
	}
	rx->regrants += again;
	return again;
}

bool htoe_credit_rx_regrant(struct htoe_rxpool *p, struct htoe_credit_rx *rx)
{
	bool changed = false;
	const uint32_t R = p->reserve;
	/* a class neither dirty nor behind the pool has target <= o (it was
	 * granted its target at its last visit; since then its o, its active
	 * flag and, by pool_gen, every pool term that could raise the target
	 * are unchanged): visiting it would change nothing */
	unsigned todo = rx->pool_gen != p->gen ? CLASS_ALL : rx->dirty;

	rx->dirty = 0;
	rx->pool_gen = p->gen;
	for (; todo; todo &= todo - 1) {
		int c = __builtin_ctz(todo), v = c / 2, d = c % 2;
		uint32_t o = outstanding(rx, v, d);
		uint32_t e = excess_of(o, R);
		uint32_t target = R;

		if (rx->active[v][d] && !rx->busy[v][d]) {
			rx->busy[v][d] = true;
			p->n_busy[v][d]++;
			set_share(p, v, d);
		}
		rx->tgt[v][d] = 0;
		if (rx->active[v][d]) {
			bool lim;

			target = active_target(p, rx, v, d, &lim);
			if (lim)
				p->room_limited |= class_bit(v, d);
			else
				rx->tgt[v][d] = (uint16_t)target;
		}
		if (target <= o)
			continue;
		uint32_t inc = target - o;
		rx->granted[v][d] = (uint16_t)(rx->granted[v][d] + inc);
		p->committed[v][d] += inc;
		p->excess[v][d] += excess_of(target, R) - e;
		if (p->committed[v][d] > p->committed_hwm[v][d])
			p->committed_hwm[v][d] = p->committed[v][d];
		changed = true;
	}
	if (changed)
		rx->regrants++;
	return changed;
}

int htoe_credit_rx_reset(struct htoe_rxpool *p, struct htoe_credit_rx *rx)
{
	int held = 0;

	/* Buffers still held (received, not released) belong to the old epoch:
	 * they are given back here, and a late release of one is refused
	 * (htoe_credit_rx_release_n: never more than was received). Refusing
	 * the reset instead left the counters of the old epoch in place: the
	 * peer, restarting at zero, read every grant as stale and never sent
	 * again. */
	for (int v = 0; v < HT_VC_COUNT; v++)
		for (int d = 0; d < 2; d++)
			if (htoe_seq_diff(rx->received[v][d], rx->released[v][d]) > 0)
				held += htoe_seq_diff(rx->received[v][d], rx->released[v][d]);
	rx->forced_releases += (uint64_t)held;
	pool_bump(p, NULL); /* the others' shares and room may grow */
	rx->dirty = CLASS_ALL; /* granted 0: the reserve again */
	for (int v = 0; v < HT_VC_COUNT; v++) {
		for (int d = 0; d < 2; d++) {
			uint32_t o = outstanding(rx, v, d);
			p->committed[v][d] -= o;
			p->excess[v][d] -= excess_of(o, p->reserve);
			rx->granted[v][d] = 0;
			rx->received[v][d] = 0;
			rx->released[v][d] = 0;
			rx->tgt[v][d] = 0;
			rx->active[v][d] = false;
			if (rx->busy[v][d]) {
				rx->busy[v][d] = false;
				p->n_busy[v][d]--;
				set_share(p, v, d);
			}
		}
	}
	return held;
}

/* ---- invariants --------------------------------------------------------- */

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static const char *const cls_name[HT_VC_COUNT][2] = {
	{ "P cmd", "P data" }, { "NP cmd", "NP data" }, { "R cmd", "R data" },
};

/* VL i's class (v, d): its outstanding buffers in *o, within its bounds. */
static int check_class(const struct htoe_rxpool *p, const struct htoe_credit_rx *rx, size_t i,
		       int v, int d, uint32_t *o, char *err, size_t errlen)
{
	const uint32_t cap = p->max_per_vl > p->reserve ? p->max_per_vl : p->reserve;
	int32_t held = htoe_seq_diff(rx->received[v][d], rx->released[v][d]);
	int32_t unused = htoe_seq_diff(rx->granted[v][d], rx->received[v][d]);

	if (held < 0)
		return fail(err, errlen, "credit: VL %zu %s released %u > received %u", i,
			    cls_name[v][d], rx->released[v][d], rx->received[v][d]);
	if (unused < 0)
		return fail(err, errlen, "credit: VL %zu %s received %u > granted %u", i,
			    cls_name[v][d], rx->received[v][d], rx->granted[v][d]);
	*o = (uint32_t)(held + unused);
	if (*o > cap)
		return fail(err, errlen, "credit: VL %zu %s outstanding %u > cap %u", i,
			    cls_name[v][d], *o, cap);
	return 0;
}

/* The pool's counters against the sums over its VLs. */
static int check_sums(const struct htoe_rxpool *p, const uint32_t sum_o[HT_VC_COUNT][2],
		      const uint32_t sum_e[HT_VC_COUNT][2],
		      const uint32_t sum_busy[HT_VC_COUNT][2], char *err, size_t errlen)
{
	for (int v = 0; v < HT_VC_COUNT; v++) {
		for (int d = 0; d < 2; d++) {
			if (sum_o[v][d] != p->committed[v][d])
				return fail(err, errlen,
					    "credit: %s sum outstanding %u != committed %u",
					    cls_name[v][d], sum_o[v][d], p->committed[v][d]);
			if (sum_e[v][d] != p->excess[v][d])
				return fail(err, errlen,
					    "credit: %s sum excess %u != pool excess %u",
					    cls_name[v][d], sum_e[v][d], p->excess[v][d]);
			if (sum_busy[v][d] != p->n_busy[v][d])
				return fail(err, errlen,
					    "credit: %s %u busy VLs, pool counts %u",
					    cls_name[v][d], sum_busy[v][d], p->n_busy[v][d]);
			if (p->share[v][d] != share_of(p, v, d))
				return fail(err, errlen,
					    "credit: %s share %u, not shared %u / %u busy",
					    cls_name[v][d], p->share[v][d], p->shared[v][d],
					    p->n_busy[v][d]);
			if (p->excess[v][d] > p->shared[v][d])
				return fail(err, errlen,
					    "credit: %s excess %u > shared %u",
					    cls_name[v][d], p->excess[v][d], p->shared[v][d]);
			if (p->committed[v][d] > p->total[v][d])
				return fail(err, errlen,
					    "credit: %s committed %u > total %u",
					    cls_name[v][d], p->committed[v][d], p->total[v][d]);
		}
	}
	return 0;
}

static const struct htoe_credit_rx *rx_at(const struct htoe_credit_rx *first, size_t i,
					  size_t stride)
{
	return (const struct htoe_credit_rx *)(const void *)((const char *)first + i * stride);
}

int htoe_credit_check(const struct htoe_rxpool *p, const struct htoe_credit_rx *first,
		      size_t n, size_t stride, char *err, size_t errlen)
{
	uint32_t sum_o[HT_VC_COUNT][2] = { { 0 } }, sum_e[HT_VC_COUNT][2] = { { 0 } };
	uint32_t sum_busy[HT_VC_COUNT][2] = { { 0 } };

	if (n != p->n_attached)
		return fail(err, errlen, "credit: %zu VLs given, %u attached",
			    n, p->n_attached);
	for (size_t i = 0; i < n; i++) {
		const struct htoe_credit_rx *rx = rx_at(first, i, stride);

		for (int v = 0; v < HT_VC_COUNT; v++) {
			for (int d = 0; d < 2; d++) {
				uint32_t o = 0; /* set by check_class; LTO cannot tell */

				if (check_class(p, rx, i, v, d, &o, err, errlen))
					return -EINVAL;
				sum_o[v][d] += o;
				sum_e[v][d] += excess_of(o, p->reserve);
				sum_busy[v][d] += rx->busy[v][d];
			}
		}
	}
	return check_sums(p, sum_o, sum_e, sum_busy, err, errlen);
}

int htoe_credit_check_changed(struct htoe_rxpool *p, const struct htoe_credit_rx *first,
			      size_t n, size_t stride, uint64_t changed, char *err,
			      size_t errlen)
{
	if (n > HTOE_CREDIT_CHECK_VLS)
		return htoe_credit_check(p, first, n, stride, err, errlen);
	if (n != p->n_attached)
		return fail(err, errlen, "credit: %zu VLs given, %u attached",
			    n, p->n_attached);
	if (!p->chk_valid || p->chk_n != n)
		changed = n >= 64 ? ~0ull : (1ull << n) - 1;
	p->chk_valid = false; /* until this check passes */
	p->chk_n = (uint16_t)n;
	for (uint64_t m = changed; m; m &= m - 1) {
		size_t i = (size_t)__builtin_ctzll(m);
		const struct htoe_credit_rx *rx = rx_at(first, i, stride);

		if (i >= n)
			break;
		for (int v = 0; v < HT_VC_COUNT; v++) {
			for (int d = 0; d < 2; d++) {
				uint32_t o, was = p->chk_o[i][v][d];

				if (check_class(p, rx, i, v, d, &o, err, errlen))
					return -EINVAL;
				p->chk_sum_o[v][d] += o - was;
				p->chk_sum_e[v][d] += excess_of(o, p->reserve) -
						      excess_of(was, p->reserve);
				p->chk_sum_busy[v][d] += (uint32_t)rx->busy[v][d] -
							 p->chk_busy[i][v][d];
				p->chk_o[i][v][d] = (uint16_t)o;
				p->chk_busy[i][v][d] = rx->busy[v][d];
			}
		}
	}
	if (check_sums(p, p->chk_sum_o, p->chk_sum_e, p->chk_sum_busy, err, errlen))
		return -EINVAL;
	p->chk_valid = true;
	return 0;
}

int htoe_credit_check_pair(const struct htoe_credit_tx *tx,
			   const struct htoe_credit_rx *rx, char *err, size_t errlen)
{
	for (int v = 0; v < HT_VC_COUNT; v++) {
		for (int d = 0; d < 2; d++) {
			if (htoe_seq_diff(tx->limit[v][d], tx->consumed[v][d]) < 0)
				return fail(err, errlen, "credit pair: %s consumed %u > limit %u",
					    cls_name[v][d], tx->consumed[v][d], tx->limit[v][d]);
			if (htoe_seq_diff(rx->granted[v][d], tx->limit[v][d]) < 0)
				return fail(err, errlen, "credit pair: %s limit %u > granted %u",
					    cls_name[v][d], tx->limit[v][d], rx->granted[v][d]);
			if (htoe_seq_diff(tx->consumed[v][d], rx->received[v][d]) < 0)
				return fail(err, errlen, "credit pair: %s received %u > consumed %u",
					    cls_name[v][d], rx->received[v][d], tx->consumed[v][d]);
		}
	}
	return 0;
}
