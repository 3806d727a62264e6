/* SPDX-License-Identifier: BSD-3-Clause
 * HToE mapping layer: see htoe_map.h.
 */
#include "htoe/htoe_map.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *htoe_map_strerror(int err)
{
	switch (err) {
	case HTOE_MAP_OK: return "ok";
	case HTOE_MAP_E_FULL: return "table full";
	case HTOE_MAP_E_SIZE: return "range of size 0";
	case HTOE_MAP_E_OVERFLOW: return "range overflows 64 bits";
	case HTOE_MAP_E_RESERVED: return "overlaps the reserved HT window";
	case HTOE_MAP_E_OVERLAP: return "ranges overlap";
	case HTOE_MAP_E_MASK: return "bad mask/shift";
	case HTOE_MAP_E_UNKNOWN_NODE: return "unknown node";
	case HTOE_MAP_E_DUP_NODE: return "duplicate peer node id";
	case HTOE_MAP_E_DUP_MAC: return "duplicate peer MAC";
	case HTOE_MAP_E_MODE: return "conflicting mapping mode";
	case HTOE_MAP_E_STATE: return "map finalized / not finalized";
	case HTOE_MAP_E_INVAL: return "invalid argument";
	default: return "?";
	}
}

const char *htoe_map_kind_name(enum htoe_map_kind k)
{
	switch (k) {
	case HTOE_MAP_UNMAPPED: return "unmapped";
	case HTOE_MAP_LOCAL: return "local";
	case HTOE_MAP_REMOTE: return "remote";
	}
	return "?";
}

__attribute__((format(printf, 4, 5)))
static int fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static void set_label(char *dst, const char *label, const char *dflt, unsigned idx)
{
	if (label)
		snprintf(dst, HTOE_MAP_LABEL_MAX, "%s", label);
	else
		snprintf(dst, HTOE_MAP_LABEL_MAX, "%s%u", dflt, idx);
}

void htoe_map_init(struct htoe_map *m, uint16_t local_node)
{
	memset(m, 0, sizeof(*m));
	m->local_node = local_node;
}

void htoe_map_node_mac(uint16_t node, uint8_t mac[6])
{
	mac[0] = 0x02; /* locally administered, unicast */
	mac[1] = 0x48; /* 'H' */
	mac[2] = 0x54; /* 'T' */
	mac[3] = 0x00;
	mac[4] = (uint8_t)(node >> 8);
	mac[5] = (uint8_t)node;
}

#define MACFMT "%02x:%02x:%02x:%02x:%02x:%02x"
#define MACARG(a) (a)[0], (a)[1], (a)[2], (a)[3], (a)[4], (a)[5]

/* ------------------------------------------------------------------ peers */

int htoe_map_add_peer(struct htoe_map *m, uint16_t node, const uint8_t *mac,
		      const char *label, char *err, size_t errlen)
{
	struct htoe_map_peer p;

	memset(&p, 0, sizeof(p));
	set_label(p.label, label, "peer", m->npeers);
	if (m->finalized)
		return fail(HTOE_MAP_E_STATE, err, errlen,
			    "%s: the map is already finalized", p.label);
	if (m->npeers >= HTOE_MAP_MAX_PEERS)
		return fail(HTOE_MAP_E_FULL, err, errlen,
			    "%s: too many peers (max %u)", p.label, HTOE_MAP_MAX_PEERS);
	p.node = node;
	if (mac) {
		static const uint8_t zero[6];

		if ((mac[0] & 1) || !memcmp(mac, zero, 6))
			return fail(HTOE_MAP_E_INVAL, err, errlen,
				    "%s: node %u: MAC " MACFMT " is %s", p.label, node,
				    MACARG(mac), (mac[0] & 1) ? "multicast" : "all zero");
		p.has_mac = true;
		memcpy(p.mac, mac, 6);
	} else {
		htoe_map_node_mac(node, p.mac);
	}
	for (unsigned i = 0; i < m->npeers; i++) {
		const struct htoe_map_peer *q = &m->peers[i];

		if (q->node == node)
			return fail(HTOE_MAP_E_DUP_NODE, err, errlen,
				    "%s: duplicate node id %u (also %s)",
				    p.label, node, q->label);
		if (!memcmp(q->mac, p.mac, 6))
			return fail(HTOE_MAP_E_DUP_MAC, err, errlen,
				    "%s: node %u: duplicate MAC " MACFMT "%s (also %s, node %u%s)",
				    p.label, node, MACARG(p.mac),
				    p.has_mac ? "" : " (default)", q->label, q->node,
				    q->has_mac ? "" : ", default MAC");
	}
	m->peers[m->npeers++] = p;
	return HTOE_MAP_OK;
}

#define PEER_HASH_SIZE (sizeof(((struct htoe_map *)0)->peer_hash) / sizeof(uint16_t))
#define PEER_HASH_MASK (PEER_HASH_SIZE - 1)
_Static_assert((PEER_HASH_SIZE & PEER_HASH_MASK) == 0 && PEER_HASH_SIZE > HTOE_MAP_MAX_PEERS,
	       "peer_hash: a power of two with free slots");

static inline unsigned peer_hash_of(uint16_t node)
{
	return (unsigned)(((uint32_t)node * 2654435761u) >> 16) & PEER_HASH_MASK;
}

int htoe_map_peer_index(const struct htoe_map *m, uint16_t node)
{
	if (!m->finalized) {
		for (unsigned i = 0; i < m->npeers; i++)
			if (m->peers[i].node == node)
				return (int)i;
		return -1;
	}
	for (unsigned h = peer_hash_of(node);; h = (h + 1) & PEER_HASH_MASK) {
		unsigned i = m->peer_hash[h];

		if (i == 0)
			return -1;
		if (m->peers[i - 1].node == node)
			return (int)i - 1;
	}
}

/* (Re)build the node -> peer index over the sorted peer table (at most half
 * full: every probe sequence ends at an empty slot). */
static void peer_hash_build(struct htoe_map *m)
{
	memset(m->peer_hash, 0, sizeof(m->peer_hash));
	for (unsigned i = 0; i < m->npeers; i++) {
		unsigned h = peer_hash_of(m->peers[i].node);

		while (m->peer_hash[h])
			h = (h + 1) & PEER_HASH_MASK;
		m->peer_hash[h] = (uint16_t)(i + 1);
	}
}

int htoe_map_peer_by_mac(const struct htoe_map *m, const uint8_t mac[6])
{
	for (unsigned i = 0; i < m->npeers; i++)
		if (!memcmp(m->peers[i].mac, mac, 6))
			return (int)i;
	return -1;
}

bool htoe_map_node_known(const struct htoe_map *m, uint16_t node)
{
	return node == m->local_node || htoe_map_peer_index(m, node) >= 0;
}

int htoe_map_mac(const struct htoe_map *m, uint16_t node, uint8_t mac[6])
{
	int i = htoe_map_peer_index(m, node);

	if (i >= 0) {
		memcpy(mac, m->peers[i].mac, 6);
		return HTOE_MAP_OK;
	}
	if (node == m->local_node) {
		htoe_map_node_mac(node, mac);
		return HTOE_MAP_OK;
	}
	return HTOE_MAP_E_UNKNOWN_NODE;
}

/* ------------------------------------------------------------------ ranges */

/* Does [a, a_last] intersect [b, b_last]? */
static bool overlaps(uint64_t a, uint64_t a_last, uint64_t b, uint64_t b_last)
{
	return a <= b_last && b <= a_last;
}

#define RSV_FMT "the reserved HT window [0x%" PRIx64 ", 0x%" PRIx64 "]"
#define RSV_ARG (uint64_t)HTOE_HT_RESERVED_BASE, (uint64_t)HTOE_HT_RESERVED_LAST

int htoe_map_add_range(struct htoe_map *m, uint64_t base, uint64_t size,
		       uint16_t node, uint64_t remote_base, const char *label,
		       char *err, size_t errlen)
{
	struct htoe_map_range r;

	memset(&r, 0, sizeof(r));
	set_label(r.label, label, "range", m->nranges);
	if (m->finalized)
		return fail(HTOE_MAP_E_STATE, err, errlen,
			    "%s: the map is already finalized", r.label);
	if (m->mask_mode)
		return fail(HTOE_MAP_E_MODE, err, errlen,
			    "%s: ranges cannot be mixed with mask/shift mode (%s)",
			    r.label, m->mask_label);
	if (m->nranges >= HTOE_MAP_MAX_RANGES)
		return fail(HTOE_MAP_E_FULL, err, errlen,
			    "%s: too many ranges (max %u)", r.label, HTOE_MAP_MAX_RANGES);
	if (size == 0)
		return fail(HTOE_MAP_E_SIZE, err, errlen,
			    "%s: base 0x%" PRIx64 ": size 0", r.label, base);
	if (base > UINT64_MAX - (size - 1))
		return fail(HTOE_MAP_E_OVERFLOW, err, errlen,
			    "%s: base 0x%" PRIx64 " + size 0x%" PRIx64 " overflows 64 bits",
			    r.label, base, size);
	if (remote_base > UINT64_MAX - (size - 1))
		return fail(HTOE_MAP_E_OVERFLOW, err, errlen,
			    "%s: remote_base 0x%" PRIx64 " + size 0x%" PRIx64
			    " overflows 64 bits", r.label, remote_base, size);
	uint64_t last = base + (size - 1);

	if (overlaps(base, last, HTOE_HT_RESERVED_BASE, HTOE_HT_RESERVED_LAST))
		return fail(HTOE_MAP_E_RESERVED, err, errlen,
			    "%s: [0x%" PRIx64 ", 0x%" PRIx64 "] overlaps " RSV_FMT,
			    r.label, base, last, RSV_ARG);
	r.base = base;
	r.size = size;
	r.node = node;
	r.remote_base = remote_base;
	m->ranges[m->nranges++] = r;
	return HTOE_MAP_OK;
}

/* ------------------------------------------------------------------ mask */

static unsigned ctz64(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
static unsigned popcount64(uint64_t x) { return (unsigned)__builtin_popcountll(x); }

int htoe_map_set_mask(struct htoe_map *m, uint64_t mask, unsigned shift,
		      uint64_t remote_base, const char *label,
		      char *err, size_t errlen)
{
	char lbl[HTOE_MAP_LABEL_MAX];

	snprintf(lbl, sizeof(lbl), "%s", label ? label : "mask");
	if (m->finalized)
		return fail(HTOE_MAP_E_STATE, err, errlen,
			    "%s: the map is already finalized", lbl);
	if (m->mask_mode)
		return fail(HTOE_MAP_E_MODE, err, errlen,
			    "%s: a mask is already set (%s)", lbl, m->mask_label);
	if (m->nranges)
		return fail(HTOE_MAP_E_MODE, err, errlen,
			    "%s: mask/shift mode cannot be mixed with ranges (%s)",
			    lbl, m->ranges[0].label);
	if (mask == 0)
		return fail(HTOE_MAP_E_MASK, err, errlen, "%s: mask is 0", lbl);
	unsigned low = ctz64(mask);
	uint64_t m0 = mask >> low;

	if (m0 & (m0 + 1))
		return fail(HTOE_MAP_E_MASK, err, errlen,
			    "%s: mask 0x%016" PRIx64 " is not contiguous", lbl, mask);
	if (shift != low)
		return fail(HTOE_MAP_E_MASK, err, errlen,
			    "%s: shift %u is not the lowest set bit of mask 0x%016" PRIx64
			    " (expected %u)", lbl, shift, mask, low);
	if (popcount64(mask) > 16)
		return fail(HTOE_MAP_E_MASK, err, errlen,
			    "%s: mask 0x%016" PRIx64 " is %u bits wide; node ids have 16",
			    lbl, mask, popcount64(mask));
	if (remote_base > UINT64_MAX - ~mask)
		return fail(HTOE_MAP_E_OVERFLOW, err, errlen,
			    "%s: remote_base 0x%" PRIx64 " + offset up to 0x%" PRIx64
			    " overflows 64 bits", lbl, remote_base, ~mask);
	m->mask_mode = true;
	m->mask = mask;
	m->shift = shift;
	m->mask_remote_base = remote_base;
	snprintf(m->mask_label, sizeof(m->mask_label), "%s", lbl);
	return HTOE_MAP_OK;
}

/*
 * In mask mode, the addresses of node n are { a : (a & mask) == n << shift }:
 * blocks of 2^shift bytes repeating every 2^(shift+width). If one of them
 * overlaps [lo, hi], store it in *bs, *be and return true.
 */
static bool mask_window_overlaps(const struct htoe_map *m, uint16_t node,
				 uint64_t lo, uint64_t hi, uint64_t *bs, uint64_t *be)
{
	unsigned top = m->shift + popcount64(m->mask); /* period = 2^top */
	uint64_t v = (uint64_t)node << m->shift;
	uint64_t span = m->shift ? (1ull << m->shift) - 1 : 0;
	uint64_t s;

	if (top >= 64) {
		s = v;
	} else {
		uint64_t period = 1ull << top;

		s = (lo & ~(period - 1)) | v;
		if (s + span < lo) {
			if (s > UINT64_MAX - period)
				return false;
			s += period;
		}
	}
	if (s + span < lo || s > hi)
		return false;
	*bs = s;
	*be = s + span;
	return true;
}

/* ------------------------------------------------------------------ finalize */

static int cmp_range(const void *a, const void *b)
{
	const struct htoe_map_range *x = a, *y = b;

	return x->base < y->base ? -1 : x->base > y->base;
}

static int cmp_peer(const void *a, const void *b)
{
	const struct htoe_map_peer *x = a, *y = b;

	return (int)x->node - (int)y->node;
}

int htoe_map_finalize(struct htoe_map *m, char *err, size_t errlen)
{
	if (m->finalized)
		return fail(HTOE_MAP_E_STATE, err, errlen, "the map is already finalized");
	if (!m->mask_mode && !m->nranges)
		return fail(HTOE_MAP_E_MODE, err, errlen,
			    "no mapping: neither ranges nor a mask/shift");

	/* node ids are unique (checked by add_peer); equal range bases are
	 * overlaps and reported below, whatever their order */
	qsort(m->peers, m->npeers, sizeof(m->peers[0]), cmp_peer);
	qsort(m->ranges, m->nranges, sizeof(m->ranges[0]), cmp_range);
	peer_hash_build(m);
	m->finalized = true; /* peer lookups below use the sorted table */

	int rc = HTOE_MAP_OK;

	for (unsigned i = 0; i + 1 < m->nranges && !rc; i++) {
		const struct htoe_map_range *a = &m->ranges[i], *b = &m->ranges[i + 1];
		uint64_t al = a->base + (a->size - 1), bl = b->base + (b->size - 1);

		if (overlaps(a->base, al, b->base, bl))
			rc = fail(HTOE_MAP_E_OVERLAP, err, errlen,
				  "%s [0x%" PRIx64 ", 0x%" PRIx64 "] overlaps %s [0x%"
				  PRIx64 ", 0x%" PRIx64 "]",
				  b->label, b->base, bl, a->label, a->base, al);
	}
	for (unsigned i = 0; i < m->nranges && !rc; i++) {
		struct htoe_map_range *r = &m->ranges[i];

		r->peer = (int16_t)htoe_map_peer_index(m, r->node);
		if (!htoe_map_node_known(m, r->node))
			rc = fail(HTOE_MAP_E_UNKNOWN_NODE, err, errlen,
				  "%s [0x%" PRIx64 ", 0x%" PRIx64 "]: node %u is neither "
				  "the local node (%u) nor in the peer table",
				  r->label, r->base, r->base + (r->size - 1), r->node,
				  m->local_node);
	}
	if (m->mask_mode && !rc) {
		uint64_t bs, be;

		if (mask_window_overlaps(m, m->local_node, HTOE_HT_RESERVED_BASE,
					 HTOE_HT_RESERVED_LAST, &bs, &be))
			rc = fail(HTOE_MAP_E_RESERVED, err, errlen,
				  "%s: local node %u window [0x%" PRIx64 ", 0x%" PRIx64
				  "] overlaps " RSV_FMT, m->mask_label, m->local_node,
				  bs, be, RSV_ARG);
		for (unsigned i = 0; i < m->npeers && !rc; i++) {
			const struct htoe_map_peer *p = &m->peers[i];

			if (mask_window_overlaps(m, p->node, HTOE_HT_RESERVED_BASE,
						 HTOE_HT_RESERVED_LAST, &bs, &be))
				rc = fail(HTOE_MAP_E_RESERVED, err, errlen,
					  "%s: node %u (%s) window [0x%" PRIx64 ", 0x%"
					  PRIx64 "] overlaps " RSV_FMT, m->mask_label,
					  p->node, p->label, bs, be, RSV_ARG);
		}
	}
	if (rc)
		m->finalized = false;
	return rc;
}

/* ------------------------------------------------------------------ lookup */

enum htoe_map_kind htoe_map_lookup(const struct htoe_map *m, uint64_t gaddr,
				   uint64_t len, struct htoe_map_result *res)
{
	return htoe_map_lookup_hint(m, gaddr, len, res, NULL);
}

/* The lookup by search (mask mode, or a range other than the hinted one). */
static __attribute__((noinline)) enum htoe_map_kind
lookup_search(const struct htoe_map *m, uint64_t gaddr, uint64_t len,
	      struct htoe_map_result *res, unsigned *hint)
{
	struct htoe_map_result r = { .kind = HTOE_MAP_UNMAPPED, .range = -1, .peer = -1 };
	uint64_t last;

	if (len == 0)
		len = 1;
	if (!m->finalized || gaddr > UINT64_MAX - (len - 1))
		goto out;
	last = gaddr + (len - 1);

	if (m->mask_mode) {
		/* one node's addresses are blocks of 2^shift bytes that share
		 * bits 63..shift; the access must stay inside one block */
		if ((gaddr >> m->shift) != (last >> m->shift))
			goto out;
		r.node = (uint16_t)((gaddr & m->mask) >> m->shift);
		r.addr = (gaddr & ~m->mask) + m->mask_remote_base;
		if (r.node != m->local_node)
			r.peer = htoe_map_peer_index(m, r.node);
	} else {
		/* last range with base <= gaddr */
		unsigned lo = 0, hi = m->nranges;

		/* the hinted range contains the whole access: it is the one
		 * (ranges do not overlap) */
		if (hint && *hint < hi && m->ranges[*hint].base <= gaddr &&
		    last <= m->ranges[*hint].base + (m->ranges[*hint].size - 1))
			lo = hi = *hint + 1;
		while (lo < hi) {
			unsigned mid = lo + (hi - lo) / 2;

			if (m->ranges[mid].base <= gaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == 0)
			goto out;
		const struct htoe_map_range *e = &m->ranges[lo - 1];

		if (last > e->base + (e->size - 1))
			goto out;
		r.range = (int)(lo - 1);
		if (hint)
			*hint = lo - 1;
		r.node = e->node;
		r.addr = gaddr - e->base + e->remote_base;
		r.peer = e->peer;
	}

	if (r.node == m->local_node) {
		r.peer = -1;
		r.kind = HTOE_MAP_LOCAL;
	} else {
		if (r.peer < 0) {
			r.range = -1;
			goto out_clear;
		}
		r.kind = HTOE_MAP_REMOTE;
	}
	if (res)
		*res = r;
	return r.kind;

out_clear:
	r.node = 0;
	r.addr = 0;
out:
	r.kind = HTOE_MAP_UNMAPPED;
	if (res)
		*res = r;
	return HTOE_MAP_UNMAPPED;
}

enum htoe_map_kind htoe_map_lookup_hint(const struct htoe_map *m, uint64_t gaddr,
					uint64_t len, struct htoe_map_result *res,
					unsigned *hint)
{
	uint64_t n = len ? len : 1;

	/* the hinted range of a remote node holds the whole access: it is the
	 * one (ranges do not overlap), and what lookup_search() would find */
	if (hint && *hint < m->nranges && m->finalized && !m->mask_mode) {
		const struct htoe_map_range *e = &m->ranges[*hint];

		if (gaddr >= e->base && n <= e->size && gaddr - e->base <= e->size - n &&
		    e->node != m->local_node && e->peer >= 0) {
			if (res) {
				res->kind = HTOE_MAP_REMOTE;
				res->node = e->node;
				res->addr = gaddr - e->base + e->remote_base;
				res->range = (int)*hint;
				res->peer = e->peer;
			}
			return HTOE_MAP_REMOTE;
		}
	}
	return lookup_search(m, gaddr, len, res, hint);
}
