/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the lease protocol (lib/htoe/htoe_lease.[ch]): message
 * codec, grant, renewal, expiry of a dead borrower, release, refusals, loss /
 * duplication / reordering on an in-test channel, and leases over two real
 * bridges in CTRL frames. Time is virtual: nothing depends on the clock.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "htmodel/ht_rand.h"
#include "htoe/htoe.h"
#include "htoe/htoe_lease.h"

#define US 1000ull
#define MS 1000000ull
#define S  1000000000ull

#define EXPORT_ADDR 0x100000ull
#define EXPORT_SIZE (1ull << 20)

/* ------------------------------------------------------- test channel */

#define MAXEP 4
#define CHQ   4096

struct inflight {
	uint64_t at;
	uint16_t from, to;
	uint8_t  len;
	uint8_t  b[HTOE_LEASE_MSG_LEN];
};

struct chan {
	struct htoe_lease_ep *ep[MAXEP + 1]; /* by node id 1..MAXEP; NULL: dead */
	struct inflight q[CHQ];
	unsigned n;
	struct ht_rand rng;
	double loss, dup;
	uint64_t max_delay;
	unsigned sent, dropped, duplicated;
};

static double frand(struct chan *c)
{
	return (double)(ht_rand_u64(&c->rng) >> 11) / 9007199254740992.0;
}

static void ch_put(struct chan *c, uint16_t from, uint16_t to, const uint8_t *b, int len,
		   uint64_t now)
{
	assert_int_equal(len, HTOE_LEASE_MSG_LEN);
	c->sent++;
	if (c->loss > 0 && frand(c) < c->loss) {
		c->dropped++;
		return;
	}
	for (int copy = 0; copy < 2; copy++) {
		struct inflight *f;

		assert_true(c->n < CHQ);
		f = &c->q[c->n++];
		f->at = now + (c->max_delay ? ht_rand_u64(&c->rng) % c->max_delay : 0);
		f->from = from;
		f->to = to;
		f->len = (uint8_t)len;
		memcpy(f->b, b, (size_t)len);
		if (!(c->dup > 0 && frand(c) < c->dup))
			break;
		c->duplicated++;
	}
}

/* Collect output of every endpoint, deliver what is due. */
static unsigned ch_step(struct chan *c, uint64_t now)
{
	unsigned moved = 0;
	uint8_t buf[HTOE_LEASE_MSG_LEN];
	uint16_t to;
	int n;

	for (uint16_t id = 1; id <= MAXEP; id++) {
		if (!c->ep[id])
			continue;
		while ((n = htoe_lease_output(c->ep[id], &to, buf, sizeof(buf), now)) > 0) {
			ch_put(c, id, to, buf, n, now);
			moved++;
		}
		assert_int_equal(n, 0);
	}
	for (unsigned i = 0; i < c->n;) {
		struct inflight f = c->q[i];

		if (f.at > now) {
			i++;
			continue;
		}
		c->q[i] = c->q[--c->n];
		if (f.to <= MAXEP && c->ep[f.to])
			assert_int_equal(htoe_lease_input(c->ep[f.to], f.from, f.b, f.len, now), 0);
		moved++;
	}
	return moved;
}

static void ch_run(struct chan *c, uint64_t *now, uint64_t until, uint64_t step)
{
	while (*now < until) {
		while (ch_step(c, *now))
			;
		*now += step;
	}
	while (ch_step(c, *now))
		;
}

/* mk_ep: lessors without a per-lessee quota (tests of the whole table) */
static bool no_quota;

static struct htoe_lease_ep *mk_ep(uint16_t id, uint64_t export_size, uint32_t session,
				   const struct htoe_map *map)
{
	struct htoe_lease_cfg cfg;
	char err[128];
	struct htoe_lease_ep *ep;

	htoe_lease_cfg_defaults(&cfg);
	cfg.node_id = id;
	cfg.session = session;
	cfg.export_addr = EXPORT_ADDR;
	cfg.export_size = export_size;
	cfg.default_duration_ns = 100 * MS;
	cfg.max_duration_ns = 1 * S;
	cfg.grace_ns = 10 * MS;
	cfg.retry_ns = 1 * MS;
	cfg.retry_max_ns = 8 * MS;
	cfg.request_timeout_ns = 200 * MS;
	cfg.map = map;
	if (no_quota) {
		cfg.quota_slots = HTOE_LEASE_MAX;
		cfg.quota_bytes = UINT64_MAX;
	}
	ep = htoe_lease_new(&cfg, err, sizeof(err));
	if (!ep)
		fail_msg("htoe_lease_new: %s", err);
	return ep;
}

static struct chan *mk_chan(uint64_t seed)
{
	struct chan *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	ht_rand_seed(&c->rng, seed);
	return c;
}

static void free_chan(struct chan *c)
{
	for (unsigned i = 0; i <= MAXEP; i++)
		htoe_lease_free(c->ep[i]);
	free(c);
}

static int count_events(struct htoe_lease_ep *ep, int type)
{
	struct htoe_lease_event ev;
	int n = 0;

	while (htoe_lease_event(ep, &ev))
		n += ev.type == type;
	return n;
}

/* ------------------------------------------------------------- tests */

static void test_msg_codec(void **state)
{
	(void)state;
	struct htoe_lease_msg m = { .type = HTOE_LEASE_T_GRANT, .status = 0,
				    .session = 0x01020304, .req_id = 0x0a0b0c0d,
				    .lease_id = 0x11223344, .size = 0x2000, .offset = 0x3000,
				    .addr = 0x103000, .duration_ns = 1000000000ull };
	uint8_t b[64];
	static const uint8_t want[48] = {
		0x4c, 0x01, 0x02, 0x00, 0x01, 0x02, 0x03, 0x04, 0x0a, 0x0b, 0x0c, 0x0d,
		0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 0, 0, 0x20, 0x00,
		0, 0, 0, 0, 0, 0, 0x30, 0x00, 0, 0, 0, 0, 0, 0x10, 0x30, 0x00,
		0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0x00,
	};
	struct htoe_lease_msg d;

	assert_int_equal(htoe_lease_msg_encode(&m, b, sizeof(b)), 48);
	assert_memory_equal(b, want, 48);
	assert_int_equal(htoe_lease_msg_decode(b, 48, &d), 0);
	assert_int_equal(d.type, m.type);
	assert_int_equal(d.status, m.status);
	assert_int_equal(d.session, m.session);
	assert_int_equal(d.req_id, m.req_id);
	assert_int_equal(d.lease_id, m.lease_id);
	assert_int_equal(d.size, m.size);
	assert_int_equal(d.offset, m.offset);
	assert_int_equal(d.addr, m.addr);
	assert_int_equal(d.duration_ns, m.duration_ns);
	/* longer messages (a later version's extra fields) are accepted */
	assert_int_equal(htoe_lease_msg_decode(b, 64, &d), 0);
	assert_int_equal(htoe_lease_msg_decode(b, 47, &d), -EINVAL);
	b[0] = 0x4d;
	assert_int_equal(htoe_lease_msg_decode(b, 48, &d), -EPROTO);
	b[0] = 0x4c;
	b[1] = 2;
	assert_int_equal(htoe_lease_msg_decode(b, 48, &d), -EPROTONOSUPPORT);
	b[1] = 1;
	b[2] = 8;
	assert_int_equal(htoe_lease_msg_decode(b, 48, &d), -EINVAL);
	/* the example of docs/wire-format.md ("Lease messages") */
	{
		static const uint8_t req[48] = {
			0x4c, 1, 1, 0, 0, 0, 0, 0x65, 0, 0, 0, 1, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0, 0x27, 0x10,
		};
		static const uint8_t grant[48] = {
			0x4c, 1, 2, 0, 0, 0, 0, 0x65, 0, 0, 0, 1, 0, 0x16, 0, 1,
			0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0,
		};
		struct htoe_lease_msg q = { .type = HTOE_LEASE_T_REQUEST, .session = 0x65,
					    .req_id = 1, .size = 10000 };
		struct htoe_lease_msg g = { .type = HTOE_LEASE_T_GRANT, .session = 0x65,
					    .req_id = 1, .lease_id = 0x00160001, .size = 12288,
					    .addr = 0x100000, .duration_ns = 1000000000ull };

		assert_int_equal(htoe_lease_msg_encode(&q, b, sizeof(b)), 48);
		assert_memory_equal(b, req, 48);
		assert_int_equal(htoe_lease_msg_encode(&g, b, sizeof(b)), 48);
		assert_memory_equal(b, grant, 48);
	}
	m.type = 0;
	assert_int_equal(htoe_lease_msg_encode(&m, b, sizeof(b)), -EINVAL);
	m.type = 1;
	assert_int_equal(htoe_lease_msg_encode(&m, b, 47), -ENOSPC);
}

static void test_config(void **state)
{
	(void)state;
	struct htoe_lease_cfg cfg;
	char err[128];

	htoe_lease_cfg_defaults(&cfg);
	cfg.session = 0;
	assert_null(htoe_lease_new(&cfg, err, sizeof(err)));
	htoe_lease_cfg_defaults(&cfg);
	cfg.align = 3000;
	assert_null(htoe_lease_new(&cfg, err, sizeof(err)));
	htoe_lease_cfg_defaults(&cfg);
	cfg.export_addr = 0x1000;
	cfg.export_size = 0x1800;
	assert_null(htoe_lease_new(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "aligned"));
}

static void test_gaddr(void **state)
{
	(void)state;
	struct htoe_map *m = calloc(1, sizeof(*m));
	char err[128];
	uint64_t g;

	assert_non_null(m);
	htoe_map_init(m, 1);
	assert_int_equal(htoe_map_add_peer(m, 2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(htoe_map_add_range(m, 0x200000000ull, EXPORT_SIZE, 2, EXPORT_ADDR, NULL,
					    err, sizeof(err)), 0);
	assert_int_equal(htoe_map_finalize(m, err, sizeof(err)), 0);
	assert_int_equal(htoe_lease_gaddr(m, 2, EXPORT_ADDR + 0x3000, 0x2000, &g), 0);
	assert_int_equal(g, 0x200003000ull);
	assert_int_equal(htoe_lease_gaddr(m, 2, EXPORT_ADDR + EXPORT_SIZE - 0x1000, 0x2000, &g),
			 -ENOENT);
	assert_int_equal(htoe_lease_gaddr(m, 3, EXPORT_ADDR, 0x1000, &g), -ENOENT);

	htoe_map_init(m, 1);
	assert_int_equal(htoe_map_add_peer(m, 2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(htoe_map_set_mask(m, 0xff00000000ull, 32, 0x1000, NULL, err, sizeof(err)),
			 0);
	assert_int_equal(htoe_map_finalize(m, err, sizeof(err)), 0);
	assert_int_equal(htoe_lease_gaddr(m, 2, 0x5000, 0x1000, &g), 0);
	assert_int_equal(g, 0x200004000ull);
	free(m);
}

static void test_grant_renew_release(void **state)
{
	(void)state;
	struct chan *c = mk_chan(1);
	struct htoe_map *map = calloc(1, sizeof(*map));
	struct htoe_lease_info info;
	struct htoe_lease_event ev;
	uint64_t now = 0;
	char err[128];

	htoe_map_init(map, 1);
	assert_int_equal(htoe_map_add_peer(map, 2, NULL, NULL, err, sizeof(err)), 0);
	assert_int_equal(htoe_map_add_range(map, 0x200000000ull, EXPORT_SIZE, 2, EXPORT_ADDR, NULL,
					    err, sizeof(err)), 0);
	assert_int_equal(htoe_map_finalize(map, err, sizeof(err)), 0);
	c->ep[1] = mk_ep(1, 0, 11, map);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);

	int h = htoe_lease_request(c->ep[1], 2, 10000, 0, now);
	assert_true(h >= 0);
	assert_int_equal(htoe_lease_request(c->ep[1], 1, 10000, 0, now), -EINVAL);
	assert_int_equal(htoe_lease_request(c->ep[1], 2, 0, 0, now), -EINVAL);
	ch_run(c, &now, 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(info.size, 12288); /* rounded to 4 KiB */
	assert_int_equal(info.offset, 0);
	assert_int_equal(info.addr, EXPORT_ADDR);
	assert_int_equal(info.gaddr, 0x200000000ull);
	assert_int_equal(info.duration_ns, 100 * MS);
	assert_true(htoe_lease_usable(c->ep[1], h, now));
	assert_int_equal(htoe_lease_event(c->ep[1], &ev), 1);
	assert_int_equal(ev.type, HTOE_LEV_GRANTED);
	assert_int_equal(ev.handle, h);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 1);
	assert_int_equal(htoe_lease_export_free(c->ep[2]), EXPORT_SIZE - 12288);
	assert_int_equal(count_events(c->ep[2], HTOE_LEV_EXPORT_GRANTED), 1);

	/* a second lease comes after the first */
	int h2 = htoe_lease_request(c->ep[1], 2, 4096, 50 * MS, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h2, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(info.offset, 12288);
	assert_int_equal(info.duration_ns, 50 * MS);

	/* renewals keep both alive over many lease durations */
	ch_run(c, &now, now + 2 * S, 1 * MS);
	assert_true(htoe_lease_usable(c->ep[1], h, now));
	assert_true(htoe_lease_usable(c->ep[1], h2, now));
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_true(info.renewals >= 20);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 2);
	assert_int_equal(htoe_lease_stats(c->ep[2])->expired, 0);

	/* release */
	assert_int_equal(htoe_lease_forget(c->ep[1], h), -EBUSY);
	assert_int_equal(htoe_lease_release(c->ep[1], h, now), 0);
	assert_false(htoe_lease_usable(c->ep[1], h, now));
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_RELEASED);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 1);
	assert_int_equal(count_events(c->ep[2], HTOE_LEV_EXPORT_RELEASED), 1);
	assert_int_equal(count_events(c->ep[1], HTOE_LEV_RELEASED), 1);
	assert_int_equal(htoe_lease_forget(c->ep[1], h), 0);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), -EINVAL);
	/* the freed range is reused first-fit */
	h = htoe_lease_request(c->ep[1], 2, 8192, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(info.offset, 0);
	free_chan(c);
	free(map);
}

static void test_dead_borrower_expires(void **state)
{
	(void)state;
	struct chan *c = mk_chan(2);
	struct htoe_lease_info info;
	struct htoe_lease_event ev;
	uint64_t now = 0;

	no_quota = true;
	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	c->ep[3] = mk_ep(3, 0, 33, NULL);
	no_quota = false;
	int h = htoe_lease_request(c->ep[1], 2, EXPORT_SIZE, 0, now);
	ch_run(c, &now, 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	/* everything is leased: node 3 is refused */
	int h3 = htoe_lease_request(c->ep[3], 2, 4096, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[3], h3, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_NOSPACE);
	assert_int_equal(htoe_lease_forget(c->ep[3], h3), 0);

	/* node 1 dies: no renewals. Before duration + grace the memory stays
	 * pinned, afterwards it is free again. */
	htoe_lease_free(c->ep[1]);
	c->ep[1] = NULL;
	uint64_t died = now;
	ch_run(c, &now, died + 100 * MS, 1 * MS);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 1);
	ch_run(c, &now, died + 115 * MS, 1 * MS);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	assert_int_equal(htoe_lease_stats(c->ep[2])->expired, 1);
	bool seen = false;
	while (htoe_lease_event(c->ep[2], &ev))
		if (ev.type == HTOE_LEV_EXPORT_EXPIRED) {
			seen = true;
			assert_int_equal(ev.node, 1);
			assert_int_equal(ev.size, EXPORT_SIZE);
		}
	assert_true(seen);
	/* reusable: node 3 gets the whole export */
	h3 = htoe_lease_request(c->ep[3], 2, EXPORT_SIZE, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[3], h3, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(info.offset, 0);

	/* the old borrower restarts (new session): its lease is gone */
	c->ep[1] = mk_ep(1, 0, 12, NULL);
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	free_chan(c);
}

static void test_refusals(void **state)
{
	(void)state;
	struct chan *c = mk_chan(3);
	struct htoe_lease_info info;
	uint64_t now = 0;
	int h;

	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	c->ep[3] = mk_ep(3, 0, 33, NULL);
	/* node 3 exports nothing */
	h = htoe_lease_request(c->ep[1], 3, 4096, 0, now);
	/* larger than the export */
	int hbig = htoe_lease_request(c->ep[1], 2, EXPORT_SIZE + 1, 0, now);
	ch_run(c, &now, 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_NOEXPORT);
	assert_int_equal(htoe_lease_get(c->ep[1], hbig, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_NOSPACE);
	assert_int_equal(count_events(c->ep[1], HTOE_LEV_REFUSED), 2);
	htoe_lease_forget(c->ep[1], h);
	htoe_lease_forget(c->ep[1], hbig);

	/* the default quota: 16 leases and half the export per lessee */
	assert_true(EXPORT_SIZE / 2 >= 17 * 4096);
	int hq[17];
	for (unsigned i = 0; i < 17; i++)
		assert_true((hq[i] = htoe_lease_request(c->ep[1], 2, 4096, 0, now)) >= 0);
	int hhalf = htoe_lease_request(c->ep[3], 2, EXPORT_SIZE / 2 + 1, 0, now);
	int hok = htoe_lease_request(c->ep[3], 2, EXPORT_SIZE / 2, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	unsigned active = 0, quota = 0;
	for (unsigned i = 0; i < 17; i++) {
		assert_int_equal(htoe_lease_get(c->ep[1], hq[i], &info), 0);
		active += info.state == HTOE_LS_ACTIVE;
		quota += info.state == HTOE_LS_REFUSED && info.status == HTOE_LEASE_E_QUOTA;
	}
	assert_int_equal(active, 16);
	assert_int_equal(quota, 1);
	assert_int_equal(htoe_lease_get(c->ep[3], hhalf, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_QUOTA);
	assert_int_equal(htoe_lease_get(c->ep[3], hok, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(htoe_lease_stats(c->ep[2])->quota_refused, 2);
	free_chan(c);

	/* lease table full: 64 leases for node 1, the 65th (node 3) refused */
	c = mk_chan(3);
	no_quota = true;
	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	c->ep[3] = mk_ep(3, 0, 33, NULL);
	no_quota = false;
	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++)
		assert_true(htoe_lease_request(c->ep[1], 2, 4096, 0, now) >= 0);
	assert_int_equal(htoe_lease_request(c->ep[1], 2, 4096, 0, now), -ENOSPC);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), HTOE_LEASE_MAX);
	h = htoe_lease_request(c->ep[3], 2, 4096, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[3], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_TOOMANY);
	free_chan(c);
}

static void test_lessor_gone(void **state)
{
	(void)state;
	struct chan *c = mk_chan(4);
	struct htoe_lease_info info;
	struct htoe_lease_event ev;
	uint64_t now = 0;

	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	int h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	ch_run(c, &now, 1 * MS, 100 * US);
	assert_true(htoe_lease_usable(c->ep[1], h, now));
	/* the lessor restarts: its renewal answer is "unknown lease" */
	htoe_lease_free(c->ep[2]);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 23, NULL);
	ch_run(c, &now, now + 60 * MS, 1 * MS);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_LOST);
	assert_int_equal(info.status, HTOE_LEASE_E_UNKNOWN);
	assert_false(htoe_lease_usable(c->ep[1], h, now));
	bool lost = false;
	while (htoe_lease_event(c->ep[1], &ev))
		lost |= ev.type == HTOE_LEV_LOST && ev.handle == h;
	assert_true(lost);
	htoe_lease_forget(c->ep[1], h);

	/* the lessor dies: lost (timeout) at the end of the lease time, not
	 * before, and never after the lessor could have reused it */
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	ch_run(c, &now, now + 1 * MS, 100 * US);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	uint64_t until = info.valid_until;
	htoe_lease_free(c->ep[2]);
	c->ep[2] = NULL;
	ch_run(c, &now, until - 1 * MS, 1 * MS);
	assert_true(htoe_lease_usable(c->ep[1], h, now));
	ch_run(c, &now, until + 1 * MS, 1 * MS);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_LOST);
	assert_int_equal(info.status, HTOE_LEASE_E_TIMEOUT);
	assert_true(htoe_lease_stats(c->ep[1])->retransmits > 0);
	htoe_lease_forget(c->ep[1], h);

	/* a request to a dead lessor times out */
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	ch_run(c, &now, now + 250 * MS, 1 * MS);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_REFUSED);
	assert_int_equal(info.status, HTOE_LEASE_E_TIMEOUT);
	free_chan(c);
}

/* The lessee gives up on a request whose grant then arrives: the grant is
 * released so that the memory does not wait for the expiry. */
static void test_stray_grant(void **state)
{
	(void)state;
	struct chan *c = mk_chan(5);
	uint64_t now = 0;

	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	c->max_delay = 5 * MS; /* the grant is slow */
	int h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	while (ch_step(c, now))
		;
	assert_int_equal(htoe_lease_release(c->ep[1], h, now), 0);
	ch_run(c, &now, 20 * MS, 100 * US);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	assert_true(htoe_lease_stats(c->ep[1])->stray_grants >= 1);
	assert_int_equal(htoe_lease_stats(c->ep[2])->expired, 0);
	free_chan(c);
}

/*
 * Three lessees, one lessor, a lossy channel that drops, duplicates and
 * reorders. Every lessee requests, uses, releases leases at random times.
 * Checked all along:
 *  - safety: a lease a lessee considers usable is active at the lessor with
 *    the same range and borrower;
 *  - active leases at the lessor never overlap;
 *  and at the end: every lease released or expired, all memory free.
 */
struct held {
	int h;
	uint64_t until; /* release at */
};

static void check_safety(struct chan *c, uint64_t now)
{
	struct htoe_lease_export_info a, b;

	for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
		assert_int_equal(htoe_lease_export_get(c->ep[4], i, &a), 0);
		if (!a.active)
			continue;
		for (unsigned j = i + 1; j < HTOE_LEASE_MAX; j++) {
			htoe_lease_export_get(c->ep[4], j, &b);
			if (b.active)
				assert_true(a.offset + a.size <= b.offset ||
					    b.offset + b.size <= a.offset);
		}
	}
	for (uint16_t id = 1; id <= 3; id++)
		for (int h = 0; h < (int)HTOE_LEASE_MAX; h++) {
			struct htoe_lease_info li;
			bool found = false;

			if (!htoe_lease_usable(c->ep[id], h, now))
				continue;
			assert_int_equal(htoe_lease_get(c->ep[id], h, &li), 0);
			for (unsigned i = 0; i < HTOE_LEASE_MAX; i++) {
				htoe_lease_export_get(c->ep[4], i, &a);
				if (a.active && a.lease_id == li.lease_id) {
					assert_int_equal(a.node, id);
					assert_int_equal(a.offset, li.offset);
					assert_int_equal(a.size, li.size);
					assert_true(a.expiry >= li.valid_until);
					found = true;
				}
			}
			assert_true(found);
		}
}

static void run_lossy(uint64_t seed, double loss, double dup, uint64_t delay)
{
	struct chan *c = mk_chan(seed);
	struct held held[4][8];
	unsigned granted = 0;
	uint64_t now = 0;
	struct ht_rand r;

	ht_rand_seed(&r, seed * 7 + 1);
	c->loss = loss;
	c->dup = dup;
	c->max_delay = delay;
	for (uint16_t id = 1; id <= 3; id++)
		c->ep[id] = mk_ep(id, 0, 100 + id, NULL);
	c->ep[4] = mk_ep(4, EXPORT_SIZE, 44, NULL);
	memset(held, 0xff, sizeof(held));
	for (unsigned step = 0; step < 4000; step++) {
		for (uint16_t id = 1; id <= 3; id++) {
			for (unsigned k = 0; k < 8; k++) {
				struct held *x = &held[id][k];
				struct htoe_lease_info li;

				if (x->h < 0) {
					if (ht_rand_u64(&r) % 64 == 0 && step < 3000) {
						uint64_t sz = 4096 * (1 + ht_rand_u64(&r) % 16);

						x->h = htoe_lease_request(c->ep[id], 4, sz, 0, now);
						assert_true(x->h >= 0);
						x->until = now + (ht_rand_u64(&r) % 400) * MS;
					}
					continue;
				}
				htoe_lease_get(c->ep[id], x->h, &li);
				if (li.state == HTOE_LS_ACTIVE && now >= x->until) {
					assert_int_equal(htoe_lease_release(c->ep[id], x->h, now), 0);
				} else if (li.state == HTOE_LS_RELEASED || li.state == HTOE_LS_REFUSED ||
					   li.state == HTOE_LS_LOST) {
					granted += li.lease_id != 0;
					assert_int_equal(htoe_lease_forget(c->ep[id], x->h), 0);
					x->h = -1;
				}
			}
		}
		while (ch_step(c, now))
			;
		check_safety(c, now);
		now += 1 * MS;
	}
	/* drain: everything released (or expired) */
	for (uint16_t id = 1; id <= 3; id++)
		for (unsigned k = 0; k < 8; k++)
			if (held[id][k].h >= 0)
				htoe_lease_release(c->ep[id], held[id][k].h, now);
	ch_run(c, &now, now + 2 * S, 1 * MS);
	assert_int_equal(htoe_lease_export_count(c->ep[4]), 0);
	assert_int_equal(htoe_lease_export_free(c->ep[4]), EXPORT_SIZE);
	assert_true(granted > 50);
	if (loss > 0)
		assert_true(c->dropped > 0);
	if (dup > 0)
		assert_true(c->duplicated > 0);
	/* with little loss, lost leases are rare; none without loss */
	if (loss == 0)
		for (uint16_t id = 1; id <= 3; id++)
			assert_int_equal(htoe_lease_stats(c->ep[id])->lost, 0);
	free_chan(c);
}

static void test_lossy_clean(void **state)
{
	(void)state;
	run_lossy(10, 0, 0, 0);
}

static void test_lossy_loss(void **state)
{
	(void)state;
	for (uint64_t s = 20; s < 24; s++)
		run_lossy(s, 0.2, 0, 0);
}

static void test_lossy_dup_reorder(void **state)
{
	(void)state;
	for (uint64_t s = 30; s < 34; s++)
		run_lossy(s, 0, 0.3, 3 * MS);
}

static void test_lossy_all(void **state)
{
	(void)state;
	for (uint64_t s = 40; s < 46; s++)
		run_lossy(s, 0.15, 0.15, 5 * MS);
}

/* ------------------------------------------ over two real bridges (CTRL) */

struct bnode {
	struct htoe_map map;
	struct htoe *b;
	struct htoe_lease_ep *ep;
};

static struct bnode BN[3];
static uint8_t fbuf[HTOE_FRAME_MAX];

static void pump_bridges(uint64_t now, unsigned *n_ctrl, bool drop_ctrl)
{
	unsigned moved;

	do {
		moved = 0;
		for (int id = 1; id <= 2; id++) {
			int len;

			htoe_lease_pump(BN[id].ep, BN[id].b, now);
			htoe_handle_expiry(BN[id].b, now);
			while ((len = htoe_frame_output(BN[id].b, fbuf, sizeof(fbuf), now,
							HTOE_TX_FLUSH)) > 0) {
				struct htoe_hdr h;

				assert_int_equal(htoe_frame_parse(fbuf, (size_t)len, 9000, &h, NULL),
						 0);
				moved++;
				if (h.ftype == HTOE_FT_CTRL) {
					(*n_ctrl)++;
					if (drop_ctrl && *n_ctrl % 3 == 1)
						continue;
				}
				htoe_frame_input(BN[3 - id].b, fbuf, (size_t)len, now);
			}
		}
	} while (moved);
}

static void test_over_bridges(void **state)
{
	(void)state;
	char err[256];
	uint64_t now = 0;
	unsigned n_ctrl = 0;
	struct htoe_lease_info info;

	for (uint16_t id = 1; id <= 2; id++) {
		struct htoe_config c;
		struct htoe_lease_cfg lc;

		htoe_map_init(&BN[id].map, id);
		assert_int_equal(htoe_map_add_peer(&BN[id].map, (uint16_t)(3 - id), NULL, "peer", err,
						   sizeof(err)), 0);
		assert_int_equal(htoe_map_add_range(&BN[id].map, 0x200000000ull, EXPORT_SIZE, 2,
						    EXPORT_ADDR, "b", err, sizeof(err)), 0);
		assert_int_equal(htoe_map_finalize(&BN[id].map, err, sizeof(err)), 0);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = &BN[id].map;
		BN[id].b = htoe_new(&c, err, sizeof(err));
		assert_non_null(BN[id].b);
		htoe_lease_cfg_defaults(&lc);
		lc.node_id = id;
		lc.session = id * 1000u;
		lc.map = &BN[id].map;
		if (id == 2) {
			lc.export_addr = EXPORT_ADDR;
			lc.export_size = EXPORT_SIZE;
		}
		BN[id].ep = htoe_lease_new(&lc, err, sizeof(err));
		assert_non_null(BN[id].ep);
	}
	pump_bridges(now, &n_ctrl, false);
	assert_true(htoe_vl_is_up(BN[1].b, 2));
	int h = htoe_lease_request(BN[1].ep, 2, 64 * 1024, 0, now);
	/* every third CTRL frame is lost: retries get through */
	for (int i = 0; i < 200; i++) {
		pump_bridges(now, &n_ctrl, true);
		now += 1 * MS;
	}
	assert_int_equal(htoe_lease_get(BN[1].ep, h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(info.gaddr, 0x200000000ull);
	assert_int_equal(htoe_lease_export_count(BN[2].ep), 1);
	/* renewed over several lease times (1 s default) */
	for (int i = 0; i < 400; i++) {
		pump_bridges(now, &n_ctrl, true);
		now += 10 * MS;
	}
	assert_true(htoe_lease_usable(BN[1].ep, h, now));
	assert_int_equal(htoe_lease_get(BN[1].ep, h, &info), 0);
	assert_true(info.renewals >= 6);
	assert_true(htoe_get_stats(BN[1].b)->ctrl_sent > 0);
	assert_int_equal(htoe_lease_release(BN[1].ep, h, now), 0);
	for (int i = 0; i < 100; i++) {
		pump_bridges(now, &n_ctrl, true);
		now += 1 * MS;
	}
	assert_int_equal(htoe_lease_get(BN[1].ep, h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_RELEASED);
	assert_int_equal(htoe_lease_export_count(BN[2].ep), 0);
	for (int id = 1; id <= 2; id++) {
		assert_int_equal(htoe_check_invariants(BN[id].b, err, sizeof(err)), 0);
		htoe_lease_free(BN[id].ep);
		htoe_free(BN[id].b);
	}
}

/* The lessor's reply to one message from node `from`: its decoded form. */
static void reply_to(struct htoe_lease_ep *lessor, uint16_t from, const uint8_t *msg, int len,
		     uint64_t now, struct htoe_lease_msg *r)
{
	uint8_t buf[HTOE_LEASE_MSG_LEN];
	uint16_t to;
	int n;

	assert_int_equal(htoe_lease_input(lessor, from, msg, (size_t)len, now), 0);
	n = htoe_lease_output(lessor, &to, buf, sizeof(buf), now);
	assert_int_equal(n, HTOE_LEASE_MSG_LEN);
	assert_int_equal(to, from);
	assert_int_equal(htoe_lease_msg_decode(buf, (size_t)n, r), 0);
}

/* An attacker recorded a borrower's REQUEST and replays it: after the
 * borrower died and its lease's tombstone expired, after the borrower
 * restarted (new session), after the bridge saw it restart, and in its
 * live session after the lease was released. Each replay is refused with
 * E_STALE and counted: nothing reserved, nothing counted against the
 * node's quota. A retransmission the lessor has not answered yet, and the
 * new session's own requests, are still granted. */
static void test_replayed_request(void **state)
{
	(void)state;
	struct chan *c = mk_chan(3);
	struct htoe_lease_msg r;
	struct htoe_lease_info info;
	uint8_t req[HTOE_LEASE_MSG_LEN], req2[HTOE_LEASE_MSG_LEN], late[HTOE_LEASE_MSG_LEN];
	uint64_t now = 0;
	uint16_t to;
	int n, n2, nl, h;

	c->ep[1] = mk_ep(1, 0, 11, NULL);
	c->ep[2] = mk_ep(2, EXPORT_SIZE, 22, NULL);
	/* the REQUEST goes out; the attacker keeps a copy */
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	n = htoe_lease_output(c->ep[1], &to, req, sizeof(req), now);
	assert_int_equal(n, HTOE_LEASE_MSG_LEN);
	reply_to(c->ep[2], 1, req, n, now, &r);
	assert_int_equal(r.type, HTOE_LEASE_T_GRANT);
	ch_run(c, &now, 5 * MS, 1 * MS); /* its retransmission gets the grant */
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);

	/* the borrower dies; its lease expires, then the tombstone */
	htoe_lease_free(c->ep[1]);
	c->ep[1] = NULL;
	ch_run(c, &now, now + 25 * S, 100 * MS);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	assert_int_equal(htoe_lease_stats(c->ep[2])->expired, 1);
	reply_to(c->ep[2], 1, req, n, now, &r);
	assert_int_equal(r.type, HTOE_LEASE_T_REFUSE);
	assert_int_equal(r.status, HTOE_LEASE_E_STALE);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	assert_int_equal(htoe_lease_stats(c->ep[2])->granted, 1);
	assert_int_equal(htoe_lease_stats(c->ep[2])->stale_requests, 1);

	/* the borrower restarts with a new session: its requests are
	 * granted, the old session's are stale */
	c->ep[1] = mk_ep(1, 0, 12, NULL);
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	n2 = htoe_lease_output(c->ep[1], &to, req2, sizeof(req2), now);
	/* a second request, whose first transmission is late: answered once */
	int h2 = htoe_lease_request(c->ep[1], 2, 4096, 0, now);

	nl = htoe_lease_output(c->ep[1], &to, late, sizeof(late), now);
	assert_int_equal(nl, HTOE_LEASE_MSG_LEN);
	reply_to(c->ep[2], 1, req2, n2, now, &r);
	assert_int_equal(r.type, HTOE_LEASE_T_GRANT);
	ch_run(c, &now, now + 5 * MS, 1 * MS);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	assert_int_equal(htoe_lease_get(c->ep[1], h2, &info), 0);
	assert_int_equal(info.state, HTOE_LS_ACTIVE);
	reply_to(c->ep[2], 1, req, n, now, &r);
	assert_int_equal(r.status, HTOE_LEASE_E_STALE);
	/* the late copy of the second request: the same grant (a duplicate) */
	reply_to(c->ep[2], 1, late, nl, now, &r);
	assert_int_equal(r.type, HTOE_LEASE_T_GRANT);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 2);

	/* released, tombstone gone: the live session's own old REQUEST is a
	 * replay too */
	assert_int_equal(htoe_lease_release(c->ep[1], h, now), 0);
	ch_run(c, &now, now + 5 * MS, 1 * MS);
	assert_int_equal(htoe_lease_get(c->ep[1], h, &info), 0);
	assert_int_equal(info.state, HTOE_LS_RELEASED);
	assert_int_equal(htoe_lease_forget(c->ep[1], h), 0);
	assert_int_equal(htoe_lease_release(c->ep[1], h2, now), 0);
	ch_run(c, &now, now + 25 * S, 100 * MS);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	reply_to(c->ep[2], 1, req2, n2, now, &r);
	assert_int_equal(r.status, HTOE_LEASE_E_STALE);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);

	/* the bridge saw node 1 restart: its session is retired even before
	 * the new incarnation asks for anything */
	h = htoe_lease_request(c->ep[1], 2, 4096, 0, now);
	n2 = htoe_lease_output(c->ep[1], &to, req2, sizeof(req2), now);
	htoe_lease_peer_restarted(c->ep[2], 1, now);
	reply_to(c->ep[2], 1, req2, n2, now, &r);
	assert_int_equal(r.status, HTOE_LEASE_E_STALE);
	assert_int_equal(htoe_lease_export_count(c->ep[2]), 0);
	assert_int_equal(htoe_lease_stats(c->ep[2])->stale_requests, 4);
	assert_int_equal(htoe_lease_stats(c->ep[2])->granted, 3);
	free_chan(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_codec),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_gaddr),
		cmocka_unit_test(test_grant_renew_release),
		cmocka_unit_test(test_dead_borrower_expires),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_replayed_request),
		cmocka_unit_test(test_lessor_gone),
		cmocka_unit_test(test_stray_grant),
		cmocka_unit_test(test_lossy_clean),
		cmocka_unit_test(test_lossy_loss),
		cmocka_unit_test(test_lossy_dup_reorder),
		cmocka_unit_test(test_lossy_all),
		cmocka_unit_test(test_over_bridges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
