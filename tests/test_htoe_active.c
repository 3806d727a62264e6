/* SPDX-License-Identifier: BSD-3-Clause
 * The bridge visits only VLs with work (white box, htoe_internal.h): with 63
 * peers, its next deadline equals a scan of every VL's deadline over random
 * operations, and the check of the changed VLs (htoe_check_invariants_changed)
 * leaves an idle VL alone but sees a VL that something woke; a VL whose only
 * work is a timer is parked until then.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "htmodel/ht_packet.h"
#include "htmodel/ht_rand.h"
#include "htoe/htoe.h"
#include "htoe/htoe_encap.h"
#include "htoe/htoe_internal.h"

#define PEERS    63u
#define MEM_SIZE 0x100000ull

static struct htoe_map map;

static uint64_t gaddr(uint16_t node, uint64_t off)
{
	return ((uint64_t)node << 32) + off;
}

/* Node 1 with 63 peers (nodes 2..64); their bridges are not needed: the
 * tests drive node 1 alone and throw its frames away or answer none. */
static struct htoe *mk_bridge(void)
{
	struct htoe_config c;
	struct htoe *b;
	char err[256];

	htoe_map_init(&map, 1);
	for (uint16_t k = 1; k <= PEERS + 1; k++) {
		if (k != 1)
			assert_int_equal(htoe_map_add_peer(&map, k, NULL, "peer", err, sizeof(err)),
					 0);
		assert_int_equal(htoe_map_add_range(&map, gaddr(k, 0), MEM_SIZE, k, 0x100000,
						    "range", err, sizeof(err)), 0);
	}
	assert_int_equal(htoe_map_finalize(&map, err, sizeof(err)), 0);
	htoe_config_defaults(&c);
	c.node_id = 1;
	htoe_map_node_mac(1, c.mac);
	c.map = &map;
	c.reserve = 4;
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		c.rx_bufs[vc][0] = c.rx_bufs[vc][1] = 4 * PEERS + 64;
	b = htoe_new(&c, err, sizeof(err));
	if (!b)
		fail_msg("htoe_new: %s", err);
	return b;
}

static int write_to(struct htoe *b, uint16_t node, uint64_t now)
{
	struct ht_pkt p;
	uint8_t raw[HT_MAX_PKT_LEN];
	int n;

	memset(&p, 0, sizeof(p));
	p.dword = 1;
	p.posted = 1;
	p.coherent = 1;
	assert_int_equal(ht_pkt_set_cmd(&p, HT_K_WRSIZED), 0);
	p.unitid = 1;
	p.count = 15;
	p.addr = gaddr(node, 0x40);
	p.data_len = 64;
	n = ht_encode(&p, raw, sizeof(raw));
	assert_true(n > 0);
	return htoe_local_input(b, raw, (size_t)n, now);
}

/* Every VL's deadline, and the requester's: what htoe_next_deadline must
 * give without walking the VLs that have none. */
static uint64_t brute_deadline(const struct htoe *b)
{
	uint64_t d = htoe_outstanding_next_deadline(&b->out);

	for (unsigned i = 0; i < b->n_vl; i++) {
		uint64_t t = htoe_encap_deadline(b, &b->vl[i]);

		if (t < d)
			d = t;
	}
	return d;
}

static void test_deadline_equals_scan(void **state)
{
	struct htoe *b = mk_bridge();
	struct ht_rand r;
	uint8_t f[HTOE_FRAME_MAX];
	uint64_t now = 0;
	char err[256];

	(void)state;
	ht_rand_seed(&r, 26);
	for (unsigned step = 0; step < 4000; step++) {
		switch (ht_rand_below(&r, 4)) {
		case 0: /* a write to one peer (it may be refused: not up) */
			(void)write_to(b, (uint16_t)(2 + ht_rand_below(&r, PEERS)), now);
			break;
		case 1: /* time passes up to the next deadline, or a little */
			now += ht_rand_below(&r, 2) ? 1 + ht_rand_below(&r, 50000) : 0;
			if (htoe_next_deadline(b) != UINT64_MAX && htoe_next_deadline(b) > now &&
			    ht_rand_below(&r, 2))
				now = htoe_next_deadline(b);
			htoe_handle_expiry(b, now);
			break;
		default: /* framing: the frames are lost */
			for (unsigned k = ht_rand_below(&r, 8); k; k--)
				if (htoe_frame_output(b, f, sizeof(f), now,
						      ht_rand_below(&r, 2) ? HTOE_TX_FLUSH : 0) <= 0)
					break;
			break;
		}
		assert_int_equal(htoe_next_deadline(b), brute_deadline(b));
		if (htoe_check_invariants(b, err, sizeof(err)) != 0)
			fail_msg("step %u: %s", step, err);
	}
	htoe_free(b);
}

/* An idle VL is not visited by the check of the changed VLs; once woken
 * (local input for it) it is, and a broken VL is found. */
static void test_changed_check_visits_woken_only(void **state)
{
	struct htoe *b = mk_bridge();
	struct htoe_vl *v = htoe_vl_by_node(b, 40);
	char err[256];

	(void)state;
	assert_int_equal(htoe_check_invariants_changed(b, err, sizeof(err)), 0);
	v->rob.frames++; /* break VL 40: frames stored without a held one */
	assert_int_not_equal(htoe_check_invariants(b, err, sizeof(err)), 0);
	assert_int_equal(htoe_check_invariants_changed(b, err, sizeof(err)), 0);
	/* another VL woken: VL 40 still not visited */
	assert_int_equal(write_to(b, 41, 0), 0);
	assert_int_equal(htoe_check_invariants_changed(b, err, sizeof(err)), 0);
	/* VL 40 woken: found */
	assert_int_equal(write_to(b, 40, 0), 0);
	assert_int_not_equal(htoe_check_invariants_changed(b, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "reorder buffer"));
	v->rob.frames--;
	assert_int_equal(write_to(b, 40, 0), 0);
	assert_int_equal(htoe_check_invariants_changed(b, err, sizeof(err)), 0);
	htoe_free(b);
}

/* A VL whose only work is a timer (here: the next RESET offer to a peer
 * that does not answer) is parked, not visited by the polls before its
 * time; at its time it is active again and sends. */
static void test_timer_only_vl_is_parked(void **state)
{
	struct htoe *b = mk_bridge();
	uint8_t f[HTOE_FRAME_MAX];
	unsigned sent = 0;
	uint64_t d;

	(void)state;
	while (htoe_frame_output(b, f, sizeof(f), 0, HTOE_TX_FLUSH) > 0)
		sent++;
	assert_int_equal(sent, PEERS); /* one RESET to each peer */
	assert_int_equal(b->active, 0);
	assert_int_equal(__builtin_popcountll(b->parked), PEERS);
	d = htoe_next_deadline(b);
	assert_true(d > 0 && d != UINT64_MAX);
	assert_int_equal(d, brute_deadline(b));
	htoe_handle_expiry(b, d - 1);
	assert_int_equal(b->active, 0);
	assert_int_equal(htoe_frame_output(b, f, sizeof(f), d - 1, HTOE_TX_FLUSH), 0);
	htoe_handle_expiry(b, d);
	assert_int_not_equal(b->active, 0);
	assert_true(htoe_frame_output(b, f, sizeof(f), d, HTOE_TX_FLUSH) > 0);
	htoe_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deadline_equals_scan),
		cmocka_unit_test(test_changed_check_visits_woken_only),
		cmocka_unit_test(test_timer_only_vl_is_parked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
