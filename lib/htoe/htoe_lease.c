/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_lease: memory leases in CTRL frames. See htoe_lease.h and
 * docs/wire-format.md ("Lease messages").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe/htoe.h"
#include "htoe/htoe_lease.h"

/* ------------------------------------------------------------ messages */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

int htoe_lease_msg_encode(const struct htoe_lease_msg *m, uint8_t *buf, size_t cap)
{
	if (cap < HTOE_LEASE_MSG_LEN)
		return -ENOSPC;
	if (m->type < HTOE_LEASE_T_REQUEST || m->type > HTOE_LEASE_T_RELEASE_ACK)
		return -EINVAL;
	memset(buf, 0, HTOE_LEASE_MSG_LEN);
	buf[0] = HTOE_LEASE_PROTO;
	buf[1] = HTOE_LEASE_VERSION;
	buf[2] = m->type;
	buf[3] = m->status;
	put32(buf + 4, m->session);
	put32(buf + 8, m->req_id);
	put32(buf + 12, m->lease_id);
	put64(buf + 16, m->size);
	put64(buf + 24, m->offset);
	put64(buf + 32, m->addr);
	put64(buf + 40, m->duration_ns);
	return HTOE_LEASE_MSG_LEN;
}

int htoe_lease_msg_decode(const uint8_t *buf, size_t len, struct htoe_lease_msg *m)
{
	int rc = htoe_ctrl_hdr_check(buf, len, HTOE_LEASE_PROTO, HTOE_LEASE_VERSION);

	if (rc)
		return rc;
	if (len < HTOE_LEASE_MSG_LEN || buf[2] < HTOE_LEASE_T_REQUEST ||
	    buf[2] > HTOE_LEASE_T_RELEASE_ACK)
		return -EINVAL;
	m->type = buf[2];
	m->status = buf[3];
	m->session = get32(buf + 4);
	m->req_id = get32(buf + 8);
	m->lease_id = get32(buf + 12);
	m->size = get64(buf + 16);
	m->offset = get64(buf + 24);
	m->addr = get64(buf + 32);
	m->duration_ns = get64(buf + 40);
	return 0;
}

const char *htoe_lease_type_name(int type)
{
	static const char *const n[] = { "?", "request", "grant", "refuse", "renew",
					 "renew_ack", "release", "release_ack" };

	return type >= 1 && type <= 7 ? n[type] : "?";
}

const char *htoe_lease_status_name(int status)
{
	switch (status) {
	case HTOE_LEASE_OK: return "ok";
	case HTOE_LEASE_E_NOSPACE: return "no space";
	case HTOE_LEASE_E_TOOMANY: return "too many leases";
	case HTOE_LEASE_E_BADREQ: return "bad request";
	case HTOE_LEASE_E_UNKNOWN: return "unknown lease";
	case HTOE_LEASE_E_NOEXPORT: return "node exports no memory";
	case HTOE_LEASE_E_QUOTA: return "over the lessee's quota";
	case HTOE_LEASE_E_STALE: return "stale request (retired session or replay)";
	case HTOE_LEASE_E_TIMEOUT: return "no answer (timeout)";
	case HTOE_LEASE_E_PEER_RESTARTED: return "lessor restarted (memory lost)";
	default: return "?";
	}
}

/* ------------------------------------------------------------ state */

enum { EXP_FREE = 0, EXP_ACTIVE, EXP_TOMB };

struct lessor_slot {
	uint8_t  state;
	uint16_t node;
	uint32_t session, req_id, lease_id;
	uint64_t offset, size;        /* size: rounded to the granule */
	uint64_t duration_ns;
	uint64_t expiry;              /* ACTIVE: expiry; TOMB: forget after */
};

struct lessee_slot {
	uint8_t  state;
	uint8_t  status;
	uint16_t lessor;
	uint32_t req_id;              /* of the current round */
	uint32_t lease_id;
	uint64_t want_size, want_duration;
	uint64_t size, offset, addr, gaddr, duration_ns;
	uint64_t valid_until;
	uint64_t renewals;
	/* the current round (request, renewal or release) */
	bool     in_round;
	uint64_t round_start;         /* first transmission */
	uint64_t next_tx;             /* next (re)transmission */
	uint64_t backoff;
	uint64_t renew_at;            /* ACTIVE, not in a round: start renewing */
};

/* Lessor: what it knows of one lessee node's sessions (see htoe_lease.h,
 * "Replays"). win bit i: request id max_req - i was answered. */
#define RETIRED_N 4
struct lessee_rec {
	uint16_t node;
	bool     used, live;          /* live: session is the node's live one */
	uint32_t session;
	uint32_t retired[RETIRED_N];
	uint8_t  retired_n;
	uint32_t max_req;
	uint64_t win[HTOE_LEASE_REQ_WINDOW / 64];
	uint32_t ref_req;             /* the last REQUEST refused, and why */
	uint8_t  ref_status;
};

struct reply {
	uint16_t node;
	struct htoe_lease_msg m;
};

struct htoe_lease_ep {
	struct htoe_lease_cfg cfg;
	uint32_t next_req;
	uint32_t next_lease;
	struct lessor_slot ex[HTOE_LEASE_MAX];
	struct lessee_slot ls[HTOE_LEASE_MAX];
	struct lessee_rec rec[HTOE_MAX_PEERS];
	struct reply rq[HTOE_LEASE_REPLYQ];
	unsigned rq_head, rq_n;
	struct htoe_lease_event ev[HTOE_LEASE_EVENTQ];
	unsigned ev_head, ev_n;
	/* the next deadline, cached: every poll of a busy driver asks for it */
	bool     dl_valid;
	uint64_t dl;
	/* htoe_lease_watch: the bridge's peer_restarts per VL, as last seen,
	 * and in all */
	bool     watching;
	uint64_t seen_restarts[HTOE_MAX_PEERS];
	uint64_t seen_total;
	struct htoe_lease_stats st;
};

void htoe_lease_cfg_defaults(struct htoe_lease_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->session = 1;
	c->align = 4096;
	c->default_duration_ns = 1000000000ull;
	c->max_duration_ns = 10000000000ull;
	c->grace_ns = 100000000ull;
	c->retry_ns = 1000000ull;
	c->retry_max_ns = 64000000ull;
	c->request_timeout_ns = 1000000000ull;
	c->renew_div = 3;
	c->quota_slots = 16;
	c->quota_bytes = 0; /* half of the export */
}

#define ERR(...) snprintf(err, errlen, __VA_ARGS__)

struct htoe_lease_ep *htoe_lease_new(const struct htoe_lease_cfg *cfg, char *err, size_t errlen)
{
	struct htoe_lease_ep *ep;
	struct htoe_lease_cfg c = *cfg;

	if (c.session == 0) {
		ERR("lease: session must not be 0");
		return NULL;
	}
	if (c.align == 0 || (c.align & (c.align - 1))) {
		ERR("lease: align %llu is not a power of two", (unsigned long long)c.align);
		return NULL;
	}
	if (c.export_size && ((c.export_addr | c.export_size) & (c.align - 1))) {
		ERR("lease: export 0x%llx+0x%llx is not aligned to 0x%llx",
		    (unsigned long long)c.export_addr, (unsigned long long)c.export_size,
		    (unsigned long long)c.align);
		return NULL;
	}
	if (c.export_size && c.export_addr + c.export_size < c.export_addr) {
		ERR("lease: export wraps past 2^64");
		return NULL;
	}
	if (c.default_duration_ns == 0 || c.max_duration_ns < c.default_duration_ns) {
		ERR("lease: default duration 0 or above the maximum");
		return NULL;
	}
	if (c.renew_div < 2 || c.retry_ns == 0 || c.retry_max_ns < c.retry_ns ||
	    c.request_timeout_ns == 0) {
		ERR("lease: renew_div < 2, or retry/timeout values 0 or inconsistent");
		return NULL;
	}
	if (c.tomb_ns == 0)
		c.tomb_ns = 2 * c.max_duration_ns;
	if (c.quota_slots == 0) {
		ERR("lease: quota_slots must be at least 1");
		return NULL;
	}
	if (c.quota_bytes == 0)
		c.quota_bytes = (c.export_size / 2 + c.align - 1) & ~(c.align - 1);
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		ERR("lease: out of memory");
		return NULL;
	}
	ep->cfg = c;
	ep->next_req = 1;
	/* lease ids of different incarnations of a lessor differ (they are
	 * also checked against the lessee's node and session) */
	ep->next_lease = (c.session << 16) | 1u;
	return ep;
}

void htoe_lease_free(struct htoe_lease_ep *ep)
{
	free(ep);
}

const struct htoe_lease_stats *htoe_lease_stats(const struct htoe_lease_ep *ep)
{
	return &ep->st;
}

static void event(struct htoe_lease_ep *ep, uint8_t type, uint8_t status, int handle,
		  uint16_t node, uint32_t lease_id, uint64_t offset, uint64_t size, uint64_t now)
{
	struct htoe_lease_event *e;

	if (ep->ev_n == HTOE_LEASE_EVENTQ) {
		ep->st.event_overflow++;
		return;
	}
	e = &ep->ev[(ep->ev_head + ep->ev_n++) % HTOE_LEASE_EVENTQ];
	e->type = type;
	e->status = status;
	e->handle = handle;
	e->node = node;
	e->lease_id = lease_id;
	e->offset = offset;
	e->size = size;
	e->now = now;
}

int htoe_lease_event(struct htoe_lease_ep *ep, struct htoe_lease_event *ev)
{
	if (ep->ev_n == 0)
		return 0;
	*ev = ep->ev[ep->ev_head];
	ep->ev_head = (ep->ev_head + 1) % HTOE_LEASE_EVENTQ;
	ep->ev_n--;
	return 1;
}

static void reply(struct htoe_lease_ep *ep, uint16_t node, const struct htoe_lease_msg *m)
{
	if (ep->rq_n == HTOE_LEASE_REPLYQ) {
		ep->st.reply_overflow++;
		return;
	}
	struct reply *r = &ep->rq[(ep->rq_head + ep->rq_n++) % HTOE_LEASE_REPLYQ];

	r->node = node;
	r->m = *m;
}

/* ------------------------------------------------------------ lessor */

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* First fit over the active leases (and tombstones: their memory is free). */
static int alloc_range(const struct htoe_lease_ep *ep, uint64_t size, uint64_t *off)
{
	uint64_t cand = 0;

	for (;;) {
		bool moved = false;

		if (cand + size > ep->cfg.export_size || cand + size < cand)
			return -ENOSPC;
		for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
			const struct lessor_slot *s = &ep->ex[i];

			if (s->state != EXP_ACTIVE)
				continue;
			if (cand < s->offset + s->size && s->offset < cand + size) {
				cand = s->offset + s->size;
				moved = true;
			}
		}
		if (!moved) {
			*off = cand;
			return 0;
		}
	}
}

static struct lessor_slot *find_export(struct htoe_lease_ep *ep, uint16_t node, uint32_t session,
				       uint32_t lease_id)
{
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessor_slot *s = &ep->ex[i];

		if (s->state != EXP_FREE && s->lease_id == lease_id && s->node == node &&
		    s->session == session)
			return s;
	}
	return NULL;
}

static uint64_t clamp_duration(const struct htoe_lease_ep *ep, uint64_t d)
{
	if (d == 0)
		return ep->cfg.default_duration_ns;
	return d > ep->cfg.max_duration_ns ? ep->cfg.max_duration_ns : d;
}

static void grant_msg(const struct htoe_lease_ep *ep, const struct lessor_slot *s,
		      struct htoe_lease_msg *r)
{
	r->type = HTOE_LEASE_T_GRANT;
	r->status = HTOE_LEASE_OK;
	r->lease_id = s->lease_id;
	r->size = s->size;
	r->offset = s->offset;
	r->addr = ep->cfg.export_addr + s->offset;
	r->duration_ns = s->duration_ns;
}

static struct lessee_rec *rec_of(struct htoe_lease_ep *ep, uint16_t node, bool add)
{
	struct lessee_rec *f = NULL;

	for (unsigned i = 0; i < HTOE_MAX_PEERS; i++) {
		struct lessee_rec *r = &ep->rec[i];

		if (r->used && r->node == node)
			return r;
		if (!r->used && !f)
			f = r;
	}
	if (!add || !f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->used = true;
	f->node = node;
	return f;
}

static void rec_retire(struct lessee_rec *r)
{
	if (!r->live)
		return;
	if (r->retired_n < RETIRED_N)
		r->retired_n++;
	memmove(r->retired + 1, r->retired, sizeof(r->retired) - sizeof(r->retired[0]));
	r->retired[0] = r->session;
	r->live = false;
}

static bool win_test(const struct lessee_rec *r, uint32_t d)
{
	return r->win[d / 64] >> (d % 64) & 1;
}

/* A REQUEST (not a duplicate of a lease held) from r's node: true if it may
 * be answered afresh, false if it is stale (a retired session, or an id
 * answered before); a fresh one is recorded as answered. */
static bool rec_admit(struct lessee_rec *r, uint32_t session, uint32_t req_id)
{
	int32_t d;

	for (unsigned i = 0; i < r->retired_n; i++)
		if (r->retired[i] == session)
			return false;
	if (!r->live || r->session != session) {
		rec_retire(r);
		r->live = true;
		r->session = session;
		r->max_req = req_id;
		memset(r->win, 0, sizeof(r->win));
		r->win[0] = 1;
		return true;
	}
	d = (int32_t)(r->max_req - req_id);
	if (d < 0) {
		/* a newer id: slide the window up by -d */
		uint32_t s = (uint32_t)-d;

		if (s >= HTOE_LEASE_REQ_WINDOW) {
			memset(r->win, 0, sizeof(r->win));
		} else {
			for (unsigned i = HTOE_LEASE_REQ_WINDOW; i-- > s;)
				if (win_test(r, i - s))
					r->win[i / 64] |= 1ull << (i % 64);
				else
					r->win[i / 64] &= ~(1ull << (i % 64));
			for (unsigned i = 0; i < s; i++)
				r->win[i / 64] &= ~(1ull << (i % 64));
		}
		r->max_req = req_id;
		d = 0;
	} else if ((uint32_t)d >= HTOE_LEASE_REQ_WINDOW || win_test(r, (uint32_t)d)) {
		return false; /* below the window, or answered before */
	}
	r->win[d / 64] |= 1ull << (d % 64);
	return true;
}

static void lessor_request(struct htoe_lease_ep *ep, uint16_t node, const struct htoe_lease_msg *m,
			   uint64_t now)
{
	struct htoe_lease_msg r = { .session = m->session, .req_id = m->req_id };
	struct lessor_slot *s = NULL;
	struct lessee_rec *rec = NULL;
	uint64_t size, off;

	/* a duplicate of a request we granted: the same grant again */
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessor_slot *x = &ep->ex[i];

		if (x->state != EXP_FREE && x->node == node && x->session == m->session &&
		    x->req_id == m->req_id) {
			ep->st.dup_requests++;
			if (x->state == EXP_ACTIVE) {
				grant_msg(ep, x, &r);
			} else {
				r.type = HTOE_LEASE_T_REFUSE;
				r.status = HTOE_LEASE_E_UNKNOWN;
			}
			reply(ep, node, &r);
			return;
		}
	}
	r.type = HTOE_LEASE_T_REFUSE;
	rec = rec_of(ep, node, true);
	if (!rec) {
		r.status = HTOE_LEASE_E_TOOMANY;
		goto refuse;
	}
	if (!rec_admit(rec, m->session, m->req_id)) {
		/* the latest refusal is given again (its reply may have
		 * been lost); anything else is a replay */
		if (rec->live && rec->session == m->session && rec->ref_req == m->req_id &&
		    rec->ref_status) {
			r.status = rec->ref_status;
		} else {
			r.status = HTOE_LEASE_E_STALE;
			ep->st.stale_requests++;
		}
		goto refuse;
	}
	if (ep->cfg.export_size == 0) {
		r.status = HTOE_LEASE_E_NOEXPORT;
		goto refuse;
	}
	if (m->size == 0 || m->size > ep->cfg.export_size) {
		r.status = m->size == 0 ? HTOE_LEASE_E_BADREQ : HTOE_LEASE_E_NOSPACE;
		goto refuse;
	}
	size = round_up(m->size, ep->cfg.align);
	{
		unsigned slots = 0;
		uint64_t bytes = 0;

		for (unsigned i = 0; i < HTOE_LEASE_MAX; i++)
			if (ep->ex[i].state == EXP_ACTIVE && ep->ex[i].node == node) {
				slots++;
				bytes += ep->ex[i].size;
			}
		if (slots + 1 > ep->cfg.quota_slots || size > ep->cfg.quota_bytes ||
		    bytes > ep->cfg.quota_bytes - size) {
			r.status = HTOE_LEASE_E_QUOTA;
			ep->st.quota_refused++;
			goto refuse;
		}
	}
	/* a free slot; else the oldest tombstone */
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessor_slot *x = &ep->ex[i];

		if (x->state == EXP_FREE) {
			s = x;
			break;
		}
		if (x->state == EXP_TOMB && (!s || x->expiry < s->expiry))
			s = x;
	}
	if (!s) {
		r.status = HTOE_LEASE_E_TOOMANY;
		goto refuse;
	}
	if (alloc_range(ep, size, &off) != 0) {
		r.status = HTOE_LEASE_E_NOSPACE;
		goto refuse;
	}
	memset(s, 0, sizeof(*s));
	s->state = EXP_ACTIVE;
	s->node = node;
	s->session = m->session;
	s->req_id = m->req_id;
	s->lease_id = ep->next_lease++;
	if (s->lease_id == 0)
		s->lease_id = ep->next_lease++;
	s->offset = off;
	s->size = size;
	s->duration_ns = clamp_duration(ep, m->duration_ns);
	s->expiry = now + s->duration_ns + ep->cfg.grace_ns;
	ep->st.granted++;
	event(ep, HTOE_LEV_EXPORT_GRANTED, 0, (int)(s - ep->ex), node, s->lease_id, s->offset,
	      s->size, now);
	grant_msg(ep, s, &r);
	reply(ep, node, &r);
	return;
refuse:
	ep->st.refused++;
	if (rec && rec->live && rec->session == m->session && r.status != HTOE_LEASE_E_STALE) {
		rec->ref_req = m->req_id;
		rec->ref_status = r.status;
	}
	reply(ep, node, &r);
}

static void lessor_renew(struct htoe_lease_ep *ep, uint16_t node, const struct htoe_lease_msg *m,
			 uint64_t now)
{
	struct htoe_lease_msg r = { .type = HTOE_LEASE_T_RENEW_ACK, .session = m->session,
				    .req_id = m->req_id, .lease_id = m->lease_id };
	struct lessor_slot *s = find_export(ep, node, m->session, m->lease_id);

	if (s && s->state == EXP_ACTIVE) {
		uint64_t exp = now + s->duration_ns + ep->cfg.grace_ns;

		if (exp > s->expiry) /* a late duplicate never shortens it */
			s->expiry = exp;
		r.status = HTOE_LEASE_OK;
		r.size = s->size;
		r.offset = s->offset;
		r.addr = ep->cfg.export_addr + s->offset;
		r.duration_ns = s->duration_ns;
	} else {
		r.status = HTOE_LEASE_E_UNKNOWN;
	}
	reply(ep, node, &r);
}

static void export_free(struct htoe_lease_ep *ep, struct lessor_slot *s, uint8_t ev, uint64_t now)
{
	s->state = EXP_TOMB;
	s->expiry = now + ep->cfg.tomb_ns;
	event(ep, ev, 0, (int)(s - ep->ex), s->node, s->lease_id, s->offset, s->size, now);
}

static void lessor_release(struct htoe_lease_ep *ep, uint16_t node,
			   const struct htoe_lease_msg *m, uint64_t now)
{
	struct htoe_lease_msg r = { .type = HTOE_LEASE_T_RELEASE_ACK, .session = m->session,
				    .req_id = m->req_id, .lease_id = m->lease_id };
	struct lessor_slot *s = find_export(ep, node, m->session, m->lease_id);

	if (s && s->state == EXP_ACTIVE) {
		ep->st.released++;
		export_free(ep, s, HTOE_LEV_EXPORT_RELEASED, now);
	}
	/* released now, before, or never known: the lessee may forget it */
	r.status = HTOE_LEASE_OK;
	reply(ep, node, &r);
}

/* ------------------------------------------------------------ lessee */

static uint32_t new_req_id(struct htoe_lease_ep *ep)
{
	uint32_t id = ep->next_req++;

	if (id == 0)
		id = ep->next_req++;
	return id;
}

static void start_round(struct htoe_lease_ep *ep, struct lessee_slot *l, uint64_t now)
{
	l->req_id = new_req_id(ep);
	l->in_round = true;
	l->round_start = now;
	l->next_tx = now;
	l->backoff = ep->cfg.retry_ns;
}

static struct lessee_slot *slot_of(struct htoe_lease_ep *ep, int h)
{
	if (h < 0 || h >= (int)HTOE_LEASE_MAX || ep->ls[h].state == HTOE_LS_FREE)
		return NULL;
	return &ep->ls[h];
}

int htoe_lease_request(struct htoe_lease_ep *ep, uint16_t lessor, uint64_t size,
		       uint64_t duration_ns, uint64_t now)
{
	if (size == 0 || lessor == ep->cfg.node_id)
		return -EINVAL;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessee_slot *l = &ep->ls[i];

		if (l->state != HTOE_LS_FREE)
			continue;
		memset(l, 0, sizeof(*l));
		l->state = HTOE_LS_REQUESTING;
		l->lessor = lessor;
		l->want_size = size;
		l->want_duration = duration_ns;
		start_round(ep, l, now);
		ep->dl_valid = false;
		return (int)i;
	}
	return -ENOSPC;
}

int htoe_lease_release(struct htoe_lease_ep *ep, int h, uint64_t now)
{
	struct lessee_slot *l = slot_of(ep, h);

	if (!l)
		return -EINVAL;
	if (l->state == HTOE_LS_REQUESTING) {
		/* nothing granted yet: a late grant is released as a stray */
		l->state = HTOE_LS_RELEASED;
		l->in_round = false;
		ep->dl_valid = false;
		event(ep, HTOE_LEV_RELEASED, 0, h, l->lessor, 0, 0, 0, now);
		return 0;
	}
	if (l->state != HTOE_LS_ACTIVE)
		return -EINVAL;
	l->state = HTOE_LS_RELEASING;
	start_round(ep, l, now);
	ep->dl_valid = false;
	return 0;
}

int htoe_lease_get(const struct htoe_lease_ep *ep, int h, struct htoe_lease_info *info)
{
	const struct lessee_slot *l;

	if (h < 0 || h >= (int)HTOE_LEASE_MAX || ep->ls[h].state == HTOE_LS_FREE)
		return -EINVAL;
	l = &ep->ls[h];
	memset(info, 0, sizeof(*info));
	info->state = l->state;
	info->status = l->status;
	info->lessor = l->lessor;
	info->lease_id = l->lease_id;
	info->size = l->size;
	info->offset = l->offset;
	info->addr = l->addr;
	info->gaddr = l->gaddr;
	info->duration_ns = l->duration_ns;
	info->valid_until = l->valid_until;
	info->renewals = l->renewals;
	return 0;
}

int htoe_lease_forget(struct htoe_lease_ep *ep, int h)
{
	struct lessee_slot *l = slot_of(ep, h);

	if (!l)
		return -EINVAL;
	if (l->state != HTOE_LS_RELEASED && l->state != HTOE_LS_REFUSED &&
	    l->state != HTOE_LS_LOST)
		return -EBUSY;
	memset(l, 0, sizeof(*l));
	ep->dl_valid = false;
	return 0;
}

bool htoe_lease_usable(const struct htoe_lease_ep *ep, int h, uint64_t now)
{
	if (h < 0 || h >= (int)HTOE_LEASE_MAX)
		return false;
	return ep->ls[h].state == HTOE_LS_ACTIVE && now < ep->ls[h].valid_until;
}

static void lessee_lost(struct htoe_lease_ep *ep, struct lessee_slot *l, uint8_t status,
			uint64_t now)
{
	l->state = HTOE_LS_LOST;
	l->status = status;
	l->in_round = false;
	ep->st.lost++;
	event(ep, HTOE_LEV_LOST, status, (int)(l - ep->ls), l->lessor, l->lease_id, l->offset,
	      l->size, now);
}

/* A reply: the lessee slot whose current round it answers, else NULL. */
static struct lessee_slot *match_round(struct htoe_lease_ep *ep, uint16_t node,
				       const struct htoe_lease_msg *m)
{
	if (m->session != ep->cfg.session)
		return NULL;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessee_slot *l = &ep->ls[i];

		if (l->state != HTOE_LS_FREE && l->in_round && l->lessor == node &&
		    l->req_id == m->req_id)
			return l;
	}
	return NULL;
}

/* A grant nobody wants (late, duplicate of a request given up): release it
 * once, without retries (the lessor's expiry is the fallback). */
static void stray_grant(struct htoe_lease_ep *ep, uint16_t node, const struct htoe_lease_msg *m)
{
	struct htoe_lease_msg r = { .type = HTOE_LEASE_T_RELEASE, .session = ep->cfg.session,
				    .req_id = new_req_id(ep), .lease_id = m->lease_id };

	/* a repeated grant of a lease we hold is not a stray */
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		const struct lessee_slot *l = &ep->ls[i];

		if ((l->state == HTOE_LS_ACTIVE || l->state == HTOE_LS_RELEASING) &&
		    l->lessor == node && l->lease_id == m->lease_id)
			return;
	}
	ep->st.stray_grants++;
	reply(ep, node, &r);
}

static void lessee_reply(struct htoe_lease_ep *ep, uint16_t node, const struct htoe_lease_msg *m,
			 uint64_t now)
{
	struct lessee_slot *l = match_round(ep, node, m);
	int h;

	if (!l) {
		ep->st.rx_stale++;
		if (m->type == HTOE_LEASE_T_GRANT && m->session == ep->cfg.session)
			stray_grant(ep, node, m);
		return;
	}
	h = (int)(l - ep->ls);
	switch (m->type) {
	case HTOE_LEASE_T_GRANT:
		if (l->state != HTOE_LS_REQUESTING)
			break;
		if (m->duration_ns == 0 || m->size < l->want_size) {
			l->state = HTOE_LS_REFUSED;
			l->status = HTOE_LEASE_E_BADREQ;
			l->in_round = false;
			event(ep, HTOE_LEV_REFUSED, l->status, h, node, 0, 0, 0, now);
			stray_grant(ep, node, m);
			break;
		}
		l->state = HTOE_LS_ACTIVE;
		l->status = HTOE_LEASE_OK;
		l->in_round = false;
		l->lease_id = m->lease_id;
		l->size = m->size;
		l->offset = m->offset;
		l->addr = m->addr;
		l->duration_ns = m->duration_ns;
		l->valid_until = l->round_start + m->duration_ns;
		l->renew_at = l->round_start + m->duration_ns / ep->cfg.renew_div;
		l->gaddr = 0;
		if (ep->cfg.map)
			htoe_lease_gaddr(ep->cfg.map, node, m->addr, m->size, &l->gaddr);
		event(ep, HTOE_LEV_GRANTED, 0, h, node, l->lease_id, l->offset, l->size, now);
		break;
	case HTOE_LEASE_T_REFUSE:
		if (l->state != HTOE_LS_REQUESTING)
			break;
		l->state = HTOE_LS_REFUSED;
		l->status = m->status ? m->status : HTOE_LEASE_E_BADREQ;
		l->in_round = false;
		event(ep, HTOE_LEV_REFUSED, l->status, h, node, 0, 0, 0, now);
		break;
	case HTOE_LEASE_T_RENEW_ACK:
		if (l->state != HTOE_LS_ACTIVE || m->lease_id != l->lease_id)
			break;
		if (m->status != HTOE_LEASE_OK) {
			lessee_lost(ep, l, m->status, now);
			break;
		}
		l->in_round = false;
		if (m->duration_ns)
			l->duration_ns = m->duration_ns;
		if (l->round_start + l->duration_ns > l->valid_until)
			l->valid_until = l->round_start + l->duration_ns;
		l->renew_at = l->round_start + l->duration_ns / ep->cfg.renew_div;
		l->renewals++;
		break;
	case HTOE_LEASE_T_RELEASE_ACK:
		if (l->state != HTOE_LS_RELEASING || m->lease_id != l->lease_id)
			break;
		l->state = HTOE_LS_RELEASED;
		l->in_round = false;
		event(ep, HTOE_LEV_RELEASED, 0, h, node, l->lease_id, l->offset, l->size, now);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ driver side */

int htoe_lease_input(struct htoe_lease_ep *ep, uint16_t node, const uint8_t *buf, size_t len,
		     uint64_t now)
{
	struct htoe_lease_msg m;
	int r = htoe_lease_msg_decode(buf, len, &m);

	if (r != 0) {
		ep->st.rx_bad++;
		return r;
	}
	ep->st.rx[m.type]++;
	htoe_lease_timers(ep, now);
	ep->dl_valid = false;
	switch (m.type) {
	case HTOE_LEASE_T_REQUEST:
		lessor_request(ep, node, &m, now);
		break;
	case HTOE_LEASE_T_RENEW:
		lessor_renew(ep, node, &m, now);
		break;
	case HTOE_LEASE_T_RELEASE:
		lessor_release(ep, node, &m, now);
		break;
	default:
		lessee_reply(ep, node, &m, now);
		break;
	}
	return 0;
}

static uint64_t compute_deadline(const struct htoe_lease_ep *ep);

void htoe_lease_timers(struct htoe_lease_ep *ep, uint64_t now)
{
	if (ep->dl_valid && now < ep->dl)
		return;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessor_slot *s = &ep->ex[i];

		if (s->state == EXP_ACTIVE && now >= s->expiry) {
			ep->st.expired++;
			export_free(ep, s, HTOE_LEV_EXPORT_EXPIRED, now);
		} else if (s->state == EXP_TOMB && now >= s->expiry) {
			s->state = EXP_FREE;
		}
	}
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessee_slot *l = &ep->ls[i];

		switch (l->state) {
		case HTOE_LS_REQUESTING:
			if (now - l->round_start >= ep->cfg.request_timeout_ns) {
				l->state = HTOE_LS_REFUSED;
				l->status = HTOE_LEASE_E_TIMEOUT;
				l->in_round = false;
				event(ep, HTOE_LEV_REFUSED, l->status, (int)i, l->lessor, 0, 0, 0,
				      now);
			}
			break;
		case HTOE_LS_ACTIVE:
			if (now >= l->valid_until)
				lessee_lost(ep, l, HTOE_LEASE_E_TIMEOUT, now);
			else if (!l->in_round && now >= l->renew_at)
				start_round(ep, l, now);
			break;
		case HTOE_LS_RELEASING:
			/* past the lease time the lessor frees it anyway */
			if (now >= l->valid_until) {
				l->state = HTOE_LS_RELEASED;
				l->in_round = false;
				event(ep, HTOE_LEV_RELEASED, HTOE_LEASE_E_TIMEOUT, (int)i,
				      l->lessor, l->lease_id, l->offset, l->size, now);
			}
			break;
		default:
			break;
		}
	}
	ep->dl = compute_deadline(ep);
	ep->dl_valid = true;
}

int htoe_lease_output(struct htoe_lease_ep *ep, uint16_t *node, uint8_t *buf, size_t cap,
		      uint64_t now)
{
	struct htoe_lease_msg m;

	if (cap < HTOE_LEASE_MSG_LEN)
		return -ENOSPC;
	htoe_lease_timers(ep, now);
	if (ep->rq_n) {
		const struct reply *r = &ep->rq[ep->rq_head];

		ep->rq_head = (ep->rq_head + 1) % HTOE_LEASE_REPLYQ;
		ep->rq_n--;
		*node = r->node;
		ep->st.tx[r->m.type]++;
		return htoe_lease_msg_encode(&r->m, buf, cap);
	}
	if (ep->dl_valid && now < ep->dl)
		return 0; /* no retransmission due (they are part of the deadline) */
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessee_slot *l = &ep->ls[i];

		if (l->state == HTOE_LS_FREE || !l->in_round || now < l->next_tx)
			continue;
		memset(&m, 0, sizeof(m));
		m.session = ep->cfg.session;
		m.req_id = l->req_id;
		switch (l->state) {
		case HTOE_LS_REQUESTING:
			m.type = HTOE_LEASE_T_REQUEST;
			m.size = l->want_size;
			m.duration_ns = l->want_duration;
			break;
		case HTOE_LS_ACTIVE:
			m.type = HTOE_LEASE_T_RENEW;
			m.lease_id = l->lease_id;
			break;
		case HTOE_LS_RELEASING:
			m.type = HTOE_LEASE_T_RELEASE;
			m.lease_id = l->lease_id;
			break;
		default:
			l->in_round = false;
			continue;
		}
		if (l->next_tx != l->round_start)
			ep->st.retransmits++;
		l->next_tx = now + l->backoff;
		l->backoff = l->backoff * 2 > ep->cfg.retry_max_ns ? ep->cfg.retry_max_ns
								    : l->backoff * 2;
		*node = l->lessor;
		ep->st.tx[m.type]++;
		ep->dl_valid = false;
		return htoe_lease_msg_encode(&m, buf, cap);
	}
	ep->dl = compute_deadline(ep);
	ep->dl_valid = true;
	return 0;
}

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t htoe_lease_next_deadline(const struct htoe_lease_ep *ep)
{
	if (ep->rq_n)
		return 0;
	return ep->dl_valid ? ep->dl : compute_deadline(ep);
}

static uint64_t compute_deadline(const struct htoe_lease_ep *ep)
{
	uint64_t d = UINT64_MAX;

	if (ep->rq_n)
		return 0;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		const struct lessor_slot *s = &ep->ex[i];
		const struct lessee_slot *l = &ep->ls[i];

		if (s->state != EXP_FREE)
			d = min64(d, s->expiry);
		switch (l->state) {
		case HTOE_LS_REQUESTING:
			d = min64(d, l->round_start + ep->cfg.request_timeout_ns);
			break;
		case HTOE_LS_ACTIVE:
			d = min64(d, l->valid_until);
			if (!l->in_round)
				d = min64(d, l->renew_at);
			break;
		case HTOE_LS_RELEASING:
			d = min64(d, l->valid_until);
			break;
		default:
			break;
		}
		if (l->state != HTOE_LS_FREE && l->in_round)
			d = min64(d, l->next_tx);
	}
	return d;
}

unsigned htoe_lease_pump(struct htoe_lease_ep *ep, struct htoe *b, uint64_t now)
{
	uint8_t buf[HTOE_CTRL_MAX];
	unsigned moved = 0;
	uint16_t node;
	int n;

	htoe_lease_watch(ep, b, now);
	while ((n = htoe_ctrl_recv(b, &node, buf, sizeof(buf))) > 0) {
		htoe_lease_input(ep, node, buf, (size_t)n, now);
		moved++;
	}
	while ((n = htoe_lease_output(ep, &node, buf, sizeof(buf), now)) > 0) {
		/* a message the bridge cannot take now is lost: retried */
		htoe_ctrl_send(b, node, buf, (size_t)n);
		moved++;
	}
	htoe_lease_acl_sync(ep, b);
	return moved;
}

void htoe_lease_peer_restarted(struct htoe_lease_ep *ep, uint16_t node, uint64_t now)
{
	struct lessee_rec *rec = rec_of(ep, node, false);

	if (rec)
		rec_retire(rec); /* its requests are replays from now on */
	ep->st.peer_restarts++;
	ep->dl_valid = false;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		struct lessor_slot *s = &ep->ex[i];
		struct lessee_slot *l = &ep->ls[i];

		if (s->node == node && s->state == EXP_ACTIVE) {
			ep->st.revoked++;
			export_free(ep, s, HTOE_LEV_EXPORT_REVOKED, now);
		}
		if (l->lessor != node)
			continue;
		switch (l->state) {
		case HTOE_LS_ACTIVE:
		case HTOE_LS_RELEASING:
			lessee_lost(ep, l, HTOE_LEASE_E_PEER_RESTARTED, now);
			break;
		case HTOE_LS_REQUESTING:
			/* its new incarnation may already have granted it: a
			 * grant of the new round is accepted, the old round is
			 * asked again */
			start_round(ep, l, now);
			break;
		default:
			break;
		}
	}
}

void htoe_lease_watch(struct htoe_lease_ep *ep, const struct htoe *b, uint64_t now)
{
	unsigned n = htoe_n_vls(b);
	uint64_t total = htoe_get_stats(b)->peer_restarts;

	/* called every poll: nothing to look at until some VL saw one */
	if (ep->watching && total == ep->seen_total)
		return;
	ep->seen_total = total;

	for (unsigned i = 0; i < n && i < HTOE_MAX_PEERS; i++) {
		uint16_t node = htoe_vl_node(b, i);
		uint64_t r = htoe_get_vl_stats(b, node)->peer_restarts;

		if (ep->watching && r != ep->seen_restarts[i])
			htoe_lease_peer_restarted(ep, node, now);
		ep->seen_restarts[i] = r;
	}
	ep->watching = true;
}

void htoe_lease_acl_sync(const struct htoe_lease_ep *ep, struct htoe *b)
{
	if (!ep->cfg.acl)
		return;
	htoe_acl_protect(b, ep->cfg.export_addr, ep->cfg.export_size);
	htoe_acl_clear_all(b);
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		const struct lessor_slot *s = &ep->ex[i];

		if (s->state == EXP_ACTIVE)
			htoe_acl_set(b, s->node, ep->cfg.export_addr + s->offset, s->size,
				     HTOE_ACL_READ | HTOE_ACL_WRITE);
	}
}

/* ------------------------------------------------------------ lessor info */

int htoe_lease_export_get(const struct htoe_lease_ep *ep, unsigned i,
			  struct htoe_lease_export_info *info)
{
	const struct lessor_slot *s;

	if (i >= HTOE_LEASE_MAX)
		return -EINVAL;
	s = &ep->ex[i];
	memset(info, 0, sizeof(*info));
	info->active = s->state == EXP_ACTIVE;
	if (!info->active)
		return 0;
	info->node = s->node;
	info->session = s->session;
	info->lease_id = s->lease_id;
	info->offset = s->offset;
	info->size = s->size;
	info->expiry = s->expiry;
	return 0;
}

unsigned htoe_lease_export_count(const struct htoe_lease_ep *ep)
{
	unsigned n = 0;

	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++)
		n += ep->ex[i].state == EXP_ACTIVE;
	return n;
}

uint64_t htoe_lease_export_free(const struct htoe_lease_ep *ep)
{
	uint64_t used = 0;

	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++)
		if (ep->ex[i].state == EXP_ACTIVE)
			used += ep->ex[i].size;
	return ep->cfg.export_size - used;
}

/* ------------------------------------------------------------ addresses */

int htoe_lease_gaddr(const struct htoe_map *map, uint16_t node, uint64_t addr, uint64_t size,
		     uint64_t *gaddr)
{
	struct htoe_map_result res;
	uint64_t g = 0;
	bool found = false;

	if (size == 0 || addr + size < addr)
		return -ENOENT;
	if (map->mask_mode) {
		uint64_t rel = addr - map->mask_remote_base;

		/* every byte of the range in one window: bits >= shift equal */
		if (addr >= map->mask_remote_base && (rel & map->mask) == 0 &&
		    ((rel ^ (rel + size - 1)) >> map->shift) == 0) {
			g = ((uint64_t)node << map->shift) | rel;
			found = true;
		}
	} else {
		for (unsigned i = 0; i < map->nranges; i++) {
			const struct htoe_map_range *r = &map->ranges[i];

			if (r->node == node && addr >= r->remote_base &&
			    addr - r->remote_base <= r->size && size <= r->size - (addr - r->remote_base)) {
				g = r->base + (addr - r->remote_base);
				found = true;
				break;
			}
		}
	}
	if (!found)
		return -ENOENT;
	/* the way back must give the same node and address */
	if (htoe_map_lookup(map, g, size, &res) == HTOE_MAP_UNMAPPED || res.node != node ||
	    res.addr != addr)
		return -ENOENT;
	*gaddr = g;
	return 0;
}
