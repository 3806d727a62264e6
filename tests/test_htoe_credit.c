/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of lib/htoe/htoe_credit: cumulative VL credits and the
 * receive-pool policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "htmodel/ht_rand.h"
#include "htoe/htoe.h"
#include "htoe/htoe_credit.h"

static void set_all(uint16_t t[HT_VC_COUNT][2], uint16_t v)
{
	for (int i = 0; i < HT_VC_COUNT; i++)
		t[i][0] = t[i][1] = v;
}

static void lim_all(uint16_t c[HTOE_CREDIT_NCLASS], uint16_t v)
{
	for (int i = 0; i < HTOE_CREDIT_NCLASS; i++)
		c[i] = v;
}

#define CHECK_POOL(p, arr, n)                                                     \
	do {                                                                      \
		char err_[160] = "";                                              \
		int rc_ = htoe_credit_check((p), (arr), (n), sizeof((arr)[0]), err_, \
					    sizeof(err_));                        \
		if (rc_ != 0)                                                     \
			fail_msg("invariant: %s", err_);                          \
	} while (0)

/* ---- sender side ---------------------------------------------------------- */

static void test_class_index(void **state)
{
	(void)state;
	assert_int_equal(htoe_credit_class(HT_VC_P, false), 0);
	assert_int_equal(htoe_credit_class(HT_VC_P, true), 1);
	assert_int_equal(htoe_credit_class(HT_VC_NP, false), 2);
	assert_int_equal(htoe_credit_class(HT_VC_NP, true), 3);
	assert_int_equal(htoe_credit_class(HT_VC_R, false), 4);
	assert_int_equal(htoe_credit_class(HT_VC_R, true), 5);
	/* the flat wire order is the memory order of [vc][d] */
	struct htoe_credit_rx rx;
	memset(&rx, 0, sizeof(rx));
	rx.granted[HT_VC_NP][1] = 77;
	rx.granted[HT_VC_R][0] = 55;
	uint16_t c[HTOE_CREDIT_NCLASS];
	htoe_credit_rx_limits(&rx, c);
	assert_int_equal(c[3], 77);
	assert_int_equal(c[4], 55);
	assert_int_equal(c[0], 0);
}

static void test_tx_take_limit(void **state)
{
	(void)state;
	struct htoe_credit_tx tx;
	uint16_t c[HTOE_CREDIT_NCLASS];

	htoe_credit_tx_init(&tx);
	for (int v = 0; v < HT_VC_COUNT; v++) {
		assert_false(htoe_credit_tx_can_send(&tx, (enum ht_vc)v, false));
		assert_int_equal(htoe_credit_tx_take(&tx, (enum ht_vc)v, false), -EAGAIN);
	}
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_NONE, false), -EINVAL);
	assert_false(htoe_credit_tx_can_send(&tx, HT_VC_NONE, false));

	/* P: 2 command, 1 data */
	lim_all(c, 0);
	c[0] = 2;
	c[1] = 1;
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0x3);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, false), 2);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, true), 1);
	assert_true(htoe_credit_tx_can_send(&tx, HT_VC_P, true));
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_P, true), 0);
	/* one command credit left, no data credit: a packet with data waits,
	 * one without data goes */
	assert_false(htoe_credit_tx_can_send(&tx, HT_VC_P, true));
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_P, true), -EAGAIN);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, false), 1); /* not taken */
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_P, false), 0);
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_P, false), -EAGAIN);
	/* the other VCs are independent */
	assert_false(htoe_credit_tx_can_send(&tx, HT_VC_NP, false));
	c[2] = 1;
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 1u << 2);
	assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_NP, false), 0);
	assert_int_equal(tx.consumed[HT_VC_P][0], 2);
	assert_int_equal(tx.consumed[HT_VC_P][1], 1);
	assert_int_equal(tx.consumed[HT_VC_NP][0], 1);
	assert_int_equal(tx.consumed[HT_VC_NP][1], 0);
}

static void test_tx_wrap(void **state)
{
	(void)state;
	struct htoe_credit_tx tx;
	uint16_t c[HTOE_CREDIT_NCLASS];

	htoe_credit_tx_init(&tx);
	/* walk the cumulative counters of R cmd up to the wrap, in steps of
	 * 1000 as a receiver would grant them */
	uint32_t granted = 0, consumed = 0;
	lim_all(c, 0);
	while (granted < 70000) {
		granted += 1000;
		c[4] = (uint16_t)granted;
		assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 1u << 4);
		assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_R, false),
				 (uint16_t)(granted - consumed));
		while (htoe_credit_tx_take(&tx, HT_VC_R, false) == 0)
			consumed++;
		assert_int_equal(consumed, granted);
	}
	assert_int_equal(tx.limit[HT_VC_R][0], (uint16_t)70000);
	assert_int_equal(tx.consumed[HT_VC_R][0], (uint16_t)70000);
	/* across the wrap exactly: limit 65530 -> 10 is an advance of 16 */
	htoe_credit_tx_init(&tx);
	lim_all(c, 0);
	/* a grant never moves by 32768 or more (pools are <= 32767) */
	c[0] = 32768;
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0);
	assert_int_equal(tx.stale_updates, 1);
	tx.stale_updates = 0;
	const uint16_t steps[] = { 30000, 60000, 65530 };
	for (int k = 0; k < 3; k++) {
		c[0] = steps[k];
		assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 1);
		while (htoe_credit_tx_avail(&tx, HT_VC_P, false) > (k == 2 ? 5 : 0))
			assert_int_equal(htoe_credit_tx_take(&tx, HT_VC_P, false), 0);
	}
	assert_int_equal(tx.consumed[HT_VC_P][0], 65525);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, false), 5);
	c[0] = 10;
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 1);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, false), 21);
	assert_int_equal(tx.stale_updates, 0);
}

static void test_tx_stale_update(void **state)
{
	(void)state;
	struct htoe_credit_tx tx;
	uint16_t c[HTOE_CREDIT_NCLASS];

	htoe_credit_tx_init(&tx);
	lim_all(c, 10);
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0x3F);
	/* an older header (overtaken by the newer one): ignored */
	lim_all(c, 8);
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0);
	assert_int_equal(tx.stale_updates, 6);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_NP, true), 10);
	/* the same totals again (duplicate): nothing */
	lim_all(c, 10);
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0);
	assert_int_equal(tx.stale_updates, 6);
	/* mixed: some classes ahead, some behind */
	c[0] = 12;
	c[5] = 9;
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 1);
	assert_int_equal(tx.limit[HT_VC_P][0], 12);
	assert_int_equal(tx.limit[HT_VC_R][1], 10);
	assert_int_equal(tx.stale_updates, 7);
	/* stale across the wrap: 65535 is before 3 */
	htoe_credit_tx_init(&tx);
	lim_all(c, 3);
	htoe_credit_tx_update(&tx, c, 0);
	lim_all(c, 65535);
	assert_int_equal(htoe_credit_tx_update(&tx, c, 0), 0);
	assert_int_equal(tx.limit[HT_VC_P][0], 3);
}

static void test_tx_starvation(void **state)
{
	(void)state;
	struct htoe_credit_tx tx;
	uint16_t c[HTOE_CREDIT_NCLASS];

	htoe_credit_tx_init(&tx);
	lim_all(c, 0);
	htoe_credit_tx_blocked(&tx, HT_VC_P, true, 100);
	htoe_credit_tx_blocked(&tx, HT_VC_P, true, 150); /* same interval */
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_P, 200), 100);
	/* a command credit alone does not unblock a packet with data */
	c[0] = 1;
	htoe_credit_tx_update(&tx, c, 250);
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_P, 300), 200);
	c[1] = 1;
	htoe_credit_tx_update(&tx, c, 350);
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_P, 1000), 250);
	assert_int_equal(tx.starved_events[HT_VC_P], 1);
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_NP, 1000), 0);
	/* explicit end */
	htoe_credit_tx_blocked(&tx, HT_VC_NP, false, 1000);
	htoe_credit_tx_unblocked(&tx, HT_VC_NP, 1400);
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_NP, 5000), 400);
	/* reset drops an open interval, keeps the total */
	htoe_credit_tx_blocked(&tx, HT_VC_NP, false, 6000);
	htoe_credit_tx_reset(&tx);
	assert_int_equal(htoe_credit_tx_starved_ns(&tx, HT_VC_NP, 9000), 400);
	assert_int_equal(tx.limit[HT_VC_P][0], 0);
	assert_int_equal(tx.consumed[HT_VC_P][0], 0);
}

/* ---- receiver side and pool ----------------------------------------------- */

static void test_pool_init(void **state)
{
	(void)state;
	struct htoe_rxpool p;
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, 100);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 25), 0);  /* 25*4 = 100 */
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 26), -EINVAL);
	assert_int_equal(htoe_rxpool_init(&p, t, 0, 20, 2), -EINVAL);
	assert_int_equal(htoe_rxpool_init(&p, t, 5, 4, 2), -EINVAL);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 0), -EINVAL);
	t[HT_VC_NP][1] = 99; /* one class too small */
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 25), -EINVAL);
	set_all(t, 32768);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 2), -EINVAL);
	set_all(t, 32767);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 20, 2), 0);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_R, true), 32767);

	/* attach at most n_vls VLs */
	set_all(t, 10);
	assert_int_equal(htoe_rxpool_init(&p, t, 2, 4, 2), 0);
	struct htoe_credit_rx rx[3];
	assert_int_equal(htoe_credit_rx_init(&p, &rx[0]), 0);
	assert_int_equal(htoe_credit_rx_init(&p, &rx[1]), 0);
	assert_int_equal(htoe_credit_rx_init(&p, &rx[2]), -ENOSPC);
}

/* The per-frame forms take or receive a whole frame's credits or none. */
static void test_frame_credits(void **state)
{
	(void)state;
	struct htoe_credit_tx tx;
	struct htoe_rxpool p;
	struct htoe_credit_rx rx;
	uint16_t c[HTOE_CREDIT_NCLASS], t[HT_VC_COUNT][2];

	htoe_credit_tx_init(&tx);
	lim_all(c, 0);
	c[0] = 5; /* P: 5 command, 2 data */
	c[1] = 2;
	htoe_credit_tx_update(&tx, c, 0);
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 6, 0), -EAGAIN);
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 3, 3), -EAGAIN);
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 1, 2), -EINVAL); /* more data than packets */
	assert_int_equal(tx.consumed[HT_VC_P][0], 0); /* nothing taken */
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 4, 2), 0);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, false), 1);
	assert_int_equal(htoe_credit_tx_avail(&tx, HT_VC_P, true), 0);
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 1, 1), -EAGAIN);
	assert_int_equal(htoe_credit_tx_take_n(&tx, HT_VC_P, 1, 0), 0);

	set_all(t, 16);
	assert_int_equal(htoe_rxpool_init(&p, t, 3, 8, 1), 0);
	assert_int_equal(htoe_credit_rx_init(&p, &rx), 0);
	assert_true(htoe_credit_rx_regrant(&p, &rx)); /* 3 of each class */
	assert_int_equal(htoe_credit_rx_receive_n(&rx, HT_VC_P, 4, 0), -ENOSPC);
	assert_int_equal(htoe_credit_rx_receive_n(&rx, HT_VC_P, 3, 4), -EINVAL);
	assert_int_equal(rx.overruns, 1);             /* one frame, one overrun */
	assert_int_equal(rx.received[HT_VC_P][0], 0); /* nothing counted */
	assert_int_equal(htoe_credit_rx_receive_n(&rx, HT_VC_P, 3, 2), 0);
	assert_int_equal(rx.received[HT_VC_P][0], 3);
	assert_int_equal(rx.received[HT_VC_P][1], 2);
	assert_int_equal(htoe_credit_rx_receive_n(&rx, HT_VC_P, 1, 0), -ENOSPC);
}

static void test_rx_overrun(void **state)
{
	(void)state;
	struct htoe_rxpool p;
	struct htoe_credit_rx rx[1];
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, 16);
	assert_int_equal(htoe_rxpool_init(&p, t, 3, 8, 1), 0);
	assert_int_equal(htoe_credit_rx_init(&p, &rx[0]), 0);
	/* nothing granted yet: any packet is an overrun */
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), -ENOSPC);
	assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
	assert_false(htoe_credit_rx_regrant(&p, &rx[0])); /* nothing new */
	for (int i = 0; i < 3; i++)
		assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), -ENOSPC);
	assert_int_equal(rx[0].overruns, 2);
	assert_int_equal(rx[0].received[HT_VC_P][0], 3);
	/* P cmd is active (8 granted), P data is not (3): after 3 packets
	 * with data, a 4th with data overruns the data class although
	 * command credit is left; it is not counted at all */
	assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
	assert_int_equal(rx[0].granted[HT_VC_P][0], 8);
	assert_int_equal(rx[0].granted[HT_VC_P][1], 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, true), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, true), -ENOSPC);
	assert_int_equal(rx[0].overruns, 3);
	assert_int_equal(rx[0].received[HT_VC_P][0], 6);
	assert_int_equal(rx[0].received[HT_VC_P][1], 3);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), 0);
	assert_int_equal(rx[0].received[HT_VC_P][0], 7);
	/* command overrun with data credit available: nothing counted */
	for (int i = 0; i < 3; i++)
		assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_R, i == 0), 0);
	assert_int_equal(htoe_credit_rx_unused(&rx[0], HT_VC_R, false), 0);
	assert_int_equal(htoe_credit_rx_unused(&rx[0], HT_VC_R, true), 2);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, false), 0);
	assert_int_equal(htoe_credit_rx_unused(&rx[0], HT_VC_NP, true), 1);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), -ENOSPC);
	assert_int_equal(rx[0].received[HT_VC_NP][1], 2);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NONE, false), -EINVAL);
	assert_int_equal(htoe_credit_rx_held(&rx[0], HT_VC_NP, false), 3);
	/* release more than received is refused (R: one packet with data) */
	assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_R, true), 0);
	assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_R, true), -EINVAL);
	assert_int_equal(htoe_credit_rx_held(&rx[0], HT_VC_R, false), 2);
	CHECK_POOL(&p, rx, 1);
}

/* Outstanding buffers of a VL in the command class of vc. */
static unsigned outst(const struct htoe_credit_rx *rx, enum ht_vc vc)
{
	return (uint16_t)(rx->granted[vc][0] - rx->released[vc][0]);
}

/* The sender uses every credit of vc (with data for R, as responses with
 * data; command only for the others), the local side releases everything
 * held, the VL regrants. Returns its outstanding buffers. */
static unsigned cycle(struct htoe_rxpool *p, struct htoe_credit_rx *rx, enum ht_vc vc)
{
	bool data = vc == HT_VC_R;

	while (htoe_credit_rx_unused(rx, vc, false) && (!data || htoe_credit_rx_unused(rx, vc, true)))
		assert_int_equal(htoe_credit_rx_receive(rx, vc, data), 0);
	while (htoe_credit_rx_held(rx, vc, false))
		assert_int_equal(htoe_credit_rx_release(p, rx, vc, data), 0);
	htoe_credit_rx_regrant(p, rx);
	return outst(rx, vc);
}

/* A pool of n VLs with reserve r, cap m and a shared part of `shared`
 * buffers in every class; every VL attached and granted its reserve. */
static void pool_with_vls(struct htoe_rxpool *p, struct htoe_credit_rx *rx, int n,
			  uint16_t r, uint16_t m, uint16_t shared)
{
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, (uint16_t)(n * r + shared));
	assert_int_equal(htoe_rxpool_init(p, t, r, m, (uint16_t)n), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(htoe_credit_rx_init(p, &rx[i]), 0);
		htoe_credit_rx_regrant(p, &rx[i]);
	}
}

/* A pool sized by htoe_rx_bufs_needed() for a node with 63 peers, one of
 * them busy and 62 configured but idle (the peers_scale bench): the busy VL
 * reaches max_per_vl in every class, as it does with one peer, and the idle
 * ones keep their reserve. With only 64 buffers beyond the reserves it got
 * reserve + 64 = 80 of 128, which bounded its writes/s by the credits. */
static void test_pool_sized_for_idle_peers(void **state)
{
	(void)state;
	enum { N = 63 };
	static struct htoe_credit_rx rx[N];
	struct htoe_rxpool p;
	struct htoe_config c;
	uint16_t t[HT_VC_COUNT][2];

	htoe_config_defaults(&c);
	assert_true(htoe_rx_bufs_needed(&c, N) <= HTOE_CREDIT_POOL_MAX);
	set_all(t, (uint16_t)htoe_rx_bufs_needed(&c, N));
	assert_int_equal(htoe_rxpool_init(&p, t, c.reserve, c.max_per_vl, N), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	for (int vc = 0; vc < HT_VC_COUNT; vc++) {
		assert_int_equal(htoe_credit_rx_receive(&rx[0], (enum ht_vc)vc, true), 0);
		htoe_credit_rx_regrant(&p, &rx[0]);
		assert_int_equal(rx[0].granted[vc][0], c.max_per_vl);
		assert_int_equal(rx[0].granted[vc][1], c.max_per_vl);
		assert_int_equal(cycle(&p, &rx[0], (enum ht_vc)vc), c.max_per_vl);
		for (int i = 1; i < N; i++)
			assert_int_equal(outst(&rx[i], (enum ht_vc)vc), c.reserve);
	}
	CHECK_POOL(&p, rx, N);
	/* a cap at or below the reserve needs no more than the reserves and
	 * the 64 that let every VL start */
	c.max_per_vl = c.reserve;
	assert_int_equal(htoe_rx_bufs_needed(&c, N), c.reserve * N + 64);
}

static void test_policy_reserve_many_vls(void **state)
{
	(void)state;
	enum { N = 64, R = 4, M = 20, SHARED = 100 };
	static struct htoe_credit_rx rx[N];
	struct htoe_rxpool p;
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, N * R + SHARED);
	assert_int_equal(htoe_rxpool_init(&p, t, R, M, N), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		assert_true(htoe_credit_rx_regrant(&p, &rx[i]));
		/* inactive: exactly the reserve */
		assert_int_equal(rx[i].granted[HT_VC_P][0], R);
		assert_int_equal(rx[i].granted[HT_VC_R][1], R);
		CHECK_POOL(&p, rx, (size_t)i + 1);
	}
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), SHARED);

	/* VLs become active one by one (one P cmd packet each) and regrant:
	 * the first six take M - R = 16 each (96), the seventh the last 4,
	 * the others keep their reserve */
	for (int i = 0; i < N; i++) {
		assert_int_equal(htoe_credit_rx_receive(&rx[i], HT_VC_P, false), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
		uint16_t exp;
		if (i < 6)
			exp = M;
		else if (i == 6)
			exp = R + (SHARED - 6 * (M - R));
		else
			exp = R;
		assert_int_equal(rx[i].granted[HT_VC_P][0], exp);
		/* other classes untouched: still inactive */
		assert_int_equal(rx[i].granted[HT_VC_P][1], R);
		CHECK_POOL(&p, rx, N);
	}
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), 0);
	/* every VL can still use its reserve: the last VL gets R packets in */
	for (int k = 1; k < R; k++)
		assert_int_equal(htoe_credit_rx_receive(&rx[N - 1], HT_VC_P, false), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[N - 1], HT_VC_P, false), -ENOSPC);

	/* VL 0 releases its one buffer: its outstanding drops to M - 1 and
	 * the freed shared buffer goes to whoever regrants first */
	assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_P, false), 0);
	CHECK_POOL(&p, rx, N);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), 1);
	assert_true(htoe_credit_rx_regrant(&p, &rx[10]));
	assert_int_equal(rx[10].granted[HT_VC_P][0], R + 1);
	assert_false(htoe_credit_rx_regrant(&p, &rx[0])); /* nothing left */
	CHECK_POOL(&p, rx, N);

	/* VL 63 releases all it held: topped up to the reserve only (the
	 * shared part is exhausted) */
	for (int k = 0; k < R; k++)
		assert_int_equal(htoe_credit_rx_release(&p, &rx[N - 1], HT_VC_P, false), 0);
	assert_true(htoe_credit_rx_regrant(&p, &rx[N - 1]));
	assert_int_equal((uint16_t)(rx[N - 1].granted[HT_VC_P][0] - rx[N - 1].released[HT_VC_P][0]), R);
	CHECK_POOL(&p, rx, N);
}

static void test_policy_cap(void **state)
{
	(void)state;
	struct htoe_rxpool p;
	struct htoe_credit_rx rx[2];
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, 1000);
	assert_int_equal(htoe_rxpool_init(&p, t, 8, 64, 2), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
	assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
	/* capped at max_per_vl although the pool has plenty */
	assert_int_equal(rx[0].granted[HT_VC_NP][0], 64);
	assert_int_equal(rx[0].granted[HT_VC_NP][1], 64);
	assert_int_equal(rx[0].granted[HT_VC_P][0], 8);
	assert_false(htoe_credit_rx_regrant(&p, &rx[0]));
	/* the sender uses everything; nothing released: no more credit */
	for (int i = 1; i < 64; i++)
		assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), -ENOSPC);
	assert_false(htoe_credit_rx_regrant(&p, &rx[0]));
	/* each release gives one credit back (cumulative limit +1) */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_NP, true), 0);
		assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
		assert_int_equal(rx[0].granted[HT_VC_NP][0], 65 + i);
		assert_int_equal(htoe_credit_rx_unused(&rx[0], HT_VC_NP, false), i + 1);
	}
	CHECK_POOL(&p, rx, 2);
	assert_int_equal(p.committed[HT_VC_NP][0], 64 + 8);
	assert_int_equal(p.committed_hwm[HT_VC_NP][0], 64 + 8);
}

static void test_policy_regrant_after_release(void **state)
{
	(void)state;
	/* two VLs compete for a shared part of 10 */
	struct htoe_rxpool p;
	struct htoe_credit_rx rx[2];
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, 2 * 2 + 10);
	assert_int_equal(htoe_rxpool_init(&p, t, 2, 12, 2), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	/* A becomes active, takes all 10 shared */
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), 0);
	htoe_credit_rx_regrant(&p, &rx[0]);
	assert_int_equal(rx[0].granted[HT_VC_P][0], 12);
	/* B becomes active: only its reserve */
	assert_int_equal(htoe_credit_rx_receive(&rx[1], HT_VC_P, false), 0);
	assert_false(htoe_credit_rx_regrant(&p, &rx[1]));
	assert_int_equal(rx[1].granted[HT_VC_P][0], 2);
	/* B releases its buffer: back to the reserve (limit 3) */
	assert_int_equal(htoe_credit_rx_release(&p, &rx[1], HT_VC_P, false), 0);
	assert_true(htoe_credit_rx_regrant(&p, &rx[1]));
	assert_int_equal(rx[1].granted[HT_VC_P][0], 3);
	CHECK_POOL(&p, rx, 2);
	/* A uses 5 and releases 6: outstanding 6 (excess 4), 6 free. B
	 * regrants first but takes only its share S/2 = 5 (first come, first
	 * served gave it all 6); A tops up to its share too */
	for (int i = 0; i < 5; i++)
		assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_P, false), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_P, false), 0);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), 6);
	assert_true(htoe_credit_rx_regrant(&p, &rx[1]));
	assert_int_equal(outst(&rx[1], HT_VC_P), 2 + 5);
	assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
	assert_int_equal(outst(&rx[0], HT_VC_P), 2 + 5);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), 0);
	CHECK_POOL(&p, rx, 2);
	/* A uses and releases everything, several times: R + 5 each time */
	for (int k = 0; k < 3; k++) {
		assert_int_equal(cycle(&p, &rx[0], HT_VC_P), 2 + 5);
		assert_int_equal(p.excess[HT_VC_P][0], 10);
		CHECK_POOL(&p, rx, 2);
	}
}

/* Fair share: 8 VLs become busy one after the other on a pool whose shared
 * part (80) is less than 8 * (M - R): the first ones take much more than
 * their share at first (nobody else is busy), but after every sender has
 * used and released its credits a few times each holds R + S/8 (first
 * come, first served kept the first ones at M and left the last at R). */
static void test_policy_fair_share(void **state)
{
	(void)state;
	enum { N = 8, R = 4, M = 64, SHARED = 80 };
	static struct htoe_credit_rx rx[N];
	struct htoe_rxpool p;

	pool_with_vls(&p, rx, N, R, M, SHARED);
	for (int i = 0; i < N; i++) {
		assert_int_equal(htoe_credit_rx_receive(&rx[i], HT_VC_P, false), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
		assert_int_equal(p.n_busy[HT_VC_P][0], i + 1);
		CHECK_POOL(&p, rx, N);
	}
	assert_int_equal(outst(&rx[0], HT_VC_P), M); /* alone at first: the cap */
	for (int round = 0; round < 4; round++)
		for (int i = 0; i < N; i++) {
			cycle(&p, &rx[i], HT_VC_P);
			CHECK_POOL(&p, rx, N);
		}
	for (int i = 0; i < N; i++)
		assert_int_equal(outst(&rx[i], HT_VC_P), R + SHARED / N);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_P, false), 0);
	/* the classes nobody used: the reserve, nobody busy */
	assert_int_equal(outst(&rx[3], HT_VC_NP), R);
	assert_int_equal(p.n_busy[HT_VC_NP][0], 0);
}

/* A VL that becomes busy while the others hold the whole shared part gets
 * its reserve at once and its share as soon as the others have released
 * (they are above the new share, so what they release is not granted to
 * them again); a reset VL leaves the busy count and the others grow. */
static void test_policy_newly_busy(void **state)
{
	(void)state;
	enum { N = 4, R = 2, M = 40, SHARED = 60 };
	struct htoe_credit_rx rx[N];
	struct htoe_rxpool p;

	pool_with_vls(&p, rx, N, R, M, SHARED);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 3; i++) {
			if (round == 0)
				assert_int_equal(htoe_credit_rx_receive(&rx[i], HT_VC_R, true), 0);
			cycle(&p, &rx[i], HT_VC_R);
		}
	for (int i = 0; i < 3; i++)
		assert_int_equal(outst(&rx[i], HT_VC_R), R + SHARED / 3);
	/* VL 3 starts: nothing is free, it runs on its reserve */
	assert_int_equal(htoe_credit_rx_receive(&rx[3], HT_VC_R, true), 0);
	assert_false(htoe_credit_rx_regrant(&p, &rx[3]));
	assert_int_equal(p.n_busy[HT_VC_R][1], 4);
	CHECK_POOL(&p, rx, N);
	/* the others use and release theirs, each regranting at once: they
	 * stop at the new share and VL 3 gets the rest */
	for (int i = 0; i < 3; i++)
		assert_int_equal(cycle(&p, &rx[i], HT_VC_R), R + SHARED / 4);
	assert_true(htoe_credit_rx_regrant(&p, &rx[3]));
	assert_int_equal(outst(&rx[3], HT_VC_R), R + SHARED / 4);
	assert_int_equal(htoe_rxpool_free(&p, HT_VC_R, true), 0);
	CHECK_POOL(&p, rx, N);
	/* VL 3 is reset (after releasing what it holds): three busy again */
	cycle(&p, &rx[3], HT_VC_R);
	while (htoe_credit_rx_held(&rx[3], HT_VC_R, false))
		assert_int_equal(htoe_credit_rx_release(&p, &rx[3], HT_VC_R, true), 0);
	assert_int_equal(htoe_credit_rx_reset(&p, &rx[3]), 0);
	assert_int_equal(p.n_busy[HT_VC_R][1], 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cycle(&p, &rx[i], HT_VC_R), R + SHARED / 3);
	CHECK_POOL(&p, rx, N);
}

static void test_rx_reset(void **state)
{
	(void)state;
	struct htoe_rxpool p;
	struct htoe_credit_rx rx[2];
	uint16_t t[HT_VC_COUNT][2];

	set_all(t, 40);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 16, 2), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_R, true), 0);
	assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_R, true), 0);
	htoe_credit_rx_regrant(&p, &rx[0]);
	assert_int_equal(p.committed[HT_VC_R][1], 16 + 4);
	/* one buffer released, one still held (two packets with data: a
	 * command and a data buffer each): the reset gives it back too, and
	 * counters of the old epoch never outlive it (a peer restarting at
	 * zero would read every later grant as stale, and never send again) */
	assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_R, true), 0);
	assert_int_equal(htoe_credit_rx_reset(&p, &rx[0]), 2);
	assert_int_equal(rx[0].forced_releases, 2);
	/* a late release of the held one is refused: nothing was received */
	assert_int_equal(htoe_credit_rx_release(&p, &rx[0], HT_VC_R, true), -EINVAL);
	/* everything returned, counters at zero, still attached */
	assert_int_equal(p.committed[HT_VC_R][1], 4);
	assert_int_equal(p.excess[HT_VC_R][1], 0);
	assert_int_equal(rx[0].granted[HT_VC_R][1], 0);
	assert_int_equal(rx[0].received[HT_VC_R][1], 0);
	assert_false(rx[0].active[HT_VC_R][1]);
	CHECK_POOL(&p, rx, 2);
	assert_true(htoe_credit_rx_regrant(&p, &rx[0]));
	assert_int_equal(rx[0].granted[HT_VC_R][1], 4);
	assert_int_equal(p.n_attached, 2);
	CHECK_POOL(&p, rx, 2);
}

static void test_check_detects(void **state)
{
	(void)state;
	struct htoe_rxpool p;
	struct htoe_credit_rx rx[2];
	uint16_t t[HT_VC_COUNT][2];
	char err[160];

	set_all(t, 40);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 16, 2), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	CHECK_POOL(&p, rx, 2);
	assert_int_equal(htoe_credit_check(&p, rx, 1, sizeof(rx[0]), err, sizeof(err)), -EINVAL);
	/* a grant behind the pool's back */
	rx[1].granted[HT_VC_P][0]++;
	assert_int_equal(htoe_credit_check(&p, rx, 2, sizeof(rx[0]), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "committed"));
	rx[1].granted[HT_VC_P][0]--;
	/* received beyond granted */
	rx[0].received[HT_VC_NP][0] = 5;
	assert_int_equal(htoe_credit_check(&p, rx, 2, sizeof(rx[0]), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "granted"));
	rx[0].received[HT_VC_NP][0] = 0;
	/* over-committed pool */
	p.committed[HT_VC_R][0] = 41;
	assert_int_equal(htoe_credit_check(&p, rx, 2, sizeof(rx[0]), NULL, 0), -EINVAL);
	p.committed[HT_VC_R][0] = 8;
	CHECK_POOL(&p, rx, 2);
	/* a busy count that does not match the VLs */
	p.n_busy[HT_VC_P][1] = 1;
	assert_int_equal(htoe_credit_check(&p, rx, 2, sizeof(rx[0]), err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "busy"));
	p.n_busy[HT_VC_P][1] = 0;
	CHECK_POOL(&p, rx, 2);

	/* pair check */
	struct htoe_credit_tx tx;
	uint16_t c[HTOE_CREDIT_NCLASS];
	htoe_credit_tx_init(&tx);
	htoe_credit_rx_limits(&rx[0], c);
	htoe_credit_tx_update(&tx, c, 0);
	assert_int_equal(htoe_credit_check_pair(&tx, &rx[0], err, sizeof(err)), 0);
	tx.limit[HT_VC_R][1]++;
	assert_int_equal(htoe_credit_check_pair(&tx, &rx[0], err, sizeof(err)), -EINVAL);
	tx.limit[HT_VC_R][1]--;
	rx[0].received[HT_VC_P][0] = 1;
	assert_int_equal(htoe_credit_check_pair(&tx, &rx[0], err, sizeof(err)), -EINVAL);
}

/* htoe_credit_check_changed() on pool p (VLs rx[0..3)), changed VLs bit by
 * bit: 0 or -EINVAL */
#define CHECK_CHANGED(bits)                                                           \
	htoe_credit_check_changed(&p, rx, 3, sizeof(rx[0]), (bits), err, sizeof(err))

/* The check of the changed VLs only fails on every invariant the full check
 * states, and on a VL that changed without being named. */
static void test_check_changed_detects(void **state)
{
	static struct htoe_rxpool p;
	struct htoe_credit_rx rx[3];
	uint16_t t[HT_VC_COUNT][2];
	char err[160];

	(void)state;
	set_all(t, 40);
	assert_int_equal(htoe_rxpool_init(&p, t, 4, 16, 3), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		htoe_credit_rx_regrant(&p, &rx[i]);
	}
	assert_int_equal(CHECK_CHANGED(0), 0); /* the first call sees every VL */
	assert_int_equal(htoe_credit_check_changed(&p, rx, 2, sizeof(rx[0]), 1, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(CHECK_CHANGED(0), 0);
	/* work on VL 1, named: fine */
	assert_int_equal(htoe_credit_rx_receive_n(&rx[1], HT_VC_P, 3, 2), 0);
	assert_int_equal(CHECK_CHANGED(2), 0);
	assert_int_equal(htoe_credit_rx_release_n(&p, &rx[1], HT_VC_P, 3, 2), 0);
	htoe_credit_rx_regrant(&p, &rx[1]);
	assert_int_equal(CHECK_CHANGED(2), 0);
	/* a grant behind the pool's back, on the VL named or another */
	rx[1].granted[HT_VC_R][0]++;
	assert_int_equal(CHECK_CHANGED(2), -EINVAL);
	assert_non_null(strstr(err, "committed"));
	rx[1].granted[HT_VC_R][0]--;
	assert_int_equal(CHECK_CHANGED(2), 0);
	rx[2].granted[HT_VC_NP][1]++;
	assert_int_equal(CHECK_CHANGED(1), 0); /* not visited (nor the pool changed) */
	assert_int_equal(CHECK_CHANGED(4), -EINVAL);
	assert_non_null(strstr(err, "committed"));
	rx[2].granted[HT_VC_NP][1]--;
	assert_int_equal(CHECK_CHANGED(0), 0); /* after a failure: all again */
	/* the pool changed for a VL not named */
	assert_int_equal(htoe_credit_rx_receive_n(&rx[2], HT_VC_NP, 2, 0), 0);
	assert_int_equal(htoe_credit_rx_release_n(&p, &rx[2], HT_VC_NP, 2, 0), 0);
	assert_int_equal(CHECK_CHANGED(1), -EINVAL);
	assert_non_null(strstr(err, "committed"));
	assert_int_equal(CHECK_CHANGED(4), 0);
	htoe_credit_rx_regrant(&p, &rx[2]);
	assert_int_equal(CHECK_CHANGED(4), 0);
	/* received beyond granted; released beyond received; beyond the cap */
	rx[0].received[HT_VC_NP][0] = 5;
	assert_int_equal(CHECK_CHANGED(1), -EINVAL);
	assert_non_null(strstr(err, "granted"));
	rx[0].received[HT_VC_NP][0] = 0;
	rx[0].released[HT_VC_NP][0] = 1;
	assert_int_equal(CHECK_CHANGED(1), -EINVAL);
	assert_non_null(strstr(err, "released"));
	rx[0].released[HT_VC_NP][0] = 0;
	rx[0].granted[HT_VC_NP][0] = 17;
	assert_int_equal(CHECK_CHANGED(1), -EINVAL);
	assert_non_null(strstr(err, "cap"));
	rx[0].granted[HT_VC_NP][0] = 4;
	assert_int_equal(CHECK_CHANGED(1), 0);
	/* a busy VL the pool does not count, named or not */
	rx[2].busy[HT_VC_R][1] = true;
	assert_int_equal(CHECK_CHANGED(4), -EINVAL);
	assert_non_null(strstr(err, "busy"));
	assert_int_equal(CHECK_CHANGED(0), -EINVAL);
	rx[2].busy[HT_VC_R][1] = false;
	assert_int_equal(CHECK_CHANGED(0), 0);
	/* the pool's own bounds */
	p.excess[HT_VC_R][0] = p.shared[HT_VC_R][0] + 1;
	assert_int_equal(CHECK_CHANGED(0), -EINVAL);
	p.excess[HT_VC_R][0] = 0;
	p.committed[HT_VC_R][0] = 41;
	assert_int_equal(CHECK_CHANGED(0), -EINVAL);
	p.committed[HT_VC_R][0] = 12;
	assert_int_equal(CHECK_CHANGED(0), 0);
}

/* Releasing a frame's packets at once (release_n) leaves the pool and the
 * VL exactly as releasing them one by one, across the reserve boundary
 * (some of the released buffers were excess, some reserve). */
static void test_release_n(void **state)
{
	(void)state;
	enum { R = 3, M = 12, SHARED = 20 };
	struct htoe_rxpool p, p1;
	struct htoe_credit_rx rx[2], r1;

	for (unsigned n = 1; n <= M; n++) {
		for (unsigned nd = 0; nd <= n; nd += 3) {
			pool_with_vls(&p, rx, 2, R, M, SHARED);
			/* VL 0 busy in NP: granted up to the cap, all received */
			assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
			htoe_credit_rx_regrant(&p, &rx[0]);
			assert_int_equal(outst(&rx[0], HT_VC_NP), M);
			while (htoe_credit_rx_unused(&rx[0], HT_VC_NP, false))
				assert_int_equal(htoe_credit_rx_receive(&rx[0], HT_VC_NP, true), 0);
			p1 = p;
			r1 = rx[0];
			assert_int_equal(htoe_credit_rx_release_n(&p, &rx[0], HT_VC_NP, n, nd), 0);
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(htoe_credit_rx_release(&p1, &r1, HT_VC_NP, i < nd), 0);
			assert_memory_equal(&p, &p1, sizeof(p));
			assert_memory_equal(&rx[0], &r1, sizeof(r1));
			assert_int_equal(p.excess[HT_VC_NP][0], M - R - (n < M - R ? n : M - R));
			CHECK_POOL(&p, rx, 2);
		}
	}
	/* more than is held, or more data than packets: refused, nothing changes */
	p1 = p;
	r1 = rx[0];
	assert_int_equal(htoe_credit_rx_release_n(&p, &rx[0], HT_VC_NP, M + 1, 0), -EINVAL);
	assert_int_equal(htoe_credit_rx_release_n(&p, &rx[0], HT_VC_NP, 1, 2), -EINVAL);
	assert_memory_equal(&p, &p1, sizeof(p));
	assert_memory_equal(&rx[0], &r1, sizeof(r1));
}

/* Released buffers granted again at once (htoe_credit_rx_release_regrant_n)
 * must leave, at each regrant, exactly what a release and that regrant
 * leave (htoe_credit_rx_release_n, htoe_credit_rx_regrant): the same
 * grants, the same pool, the same need to advertise; a regrant skipped as
 * not due (htoe_credit_rx_regrant_due) must be one that changes nothing.
 * Two copies of a pool of n VLs are driven alike, one each way: with one
 * VL it is granted at once, with two never (the other VL may change the
 * pool before this one's next frame). */
static void release_regrant_lockstep(uint16_t n_vl, uint64_t seed, uint64_t *at_once)
{
	struct htoe_rxpool pa, pb;
	struct htoe_credit_rx ra[2], rb[2];
	uint16_t t[HT_VC_COUNT][2];
	unsigned held[2][HT_VC_COUNT][2] = { { { 0 } } };
	bool adv_a[2] = { false, false }, adv_b[2] = { false, false };
	struct ht_rand rng;

	ht_rand_seed(&rng, seed);
	for (int v = 0; v < HT_VC_COUNT; v++)
		for (int d = 0; d < 2; d++)
			t[v][d] = (uint16_t)(n_vl * 2 + ht_rand_below(&rng, 24));
	assert_int_equal(htoe_rxpool_init(&pa, t, 2, (uint16_t)(2 + ht_rand_below(&rng, 12)), n_vl),
			 0);
	for (int i = 0; i < n_vl; i++) {
		assert_int_equal(htoe_credit_rx_init(&pa, &ra[i]), 0);
		htoe_credit_rx_regrant(&pa, &ra[i]);
	}
	pb = pa;
	memcpy(rb, ra, sizeof(ra));
	for (int step = 0; step < 20000; step++) {
		int i = (int)ht_rand_below(&rng, n_vl);
		enum ht_vc vc = (enum ht_vc)ht_rand_below(&rng, HT_VC_COUNT);
		unsigned op = (unsigned)ht_rand_below(&rng, 100);

		if (op < 40) {
			/* a frame of up to 4 packets (some with data) within
			 * the credits advertised (granted by the last regrant:
			 * rb's) */
			unsigned n = 1 + (unsigned)ht_rand_below(&rng, 4), nd = (unsigned)ht_rand_below(&rng, n + 1);

			if (htoe_credit_rx_unused(&rb[i], vc, false) < n ||
			    htoe_credit_rx_unused(&rb[i], vc, true) < nd)
				continue;
			assert_int_equal(htoe_credit_rx_receive_n(&ra[i], vc, n, nd), 0);
			assert_int_equal(htoe_credit_rx_receive_n(&rb[i], vc, n, nd), 0);
			held[i][vc][0] += n;
			held[i][vc][1] += nd;
		} else if (op < 75) {
			/* some of them taken by the local side: nd of the n
			 * with data, at least those the packets without data
			 * held cannot make up */
			unsigned c = held[i][vc][0], dd = held[i][vc][1];
			unsigned n = (unsigned)ht_rand_below(&rng, c + 1);
			unsigned lo = n > c - dd ? n - (c - dd) : 0, hi = n < dd ? n : dd;
			unsigned nd = lo + (unsigned)ht_rand_below(&rng, hi - lo + 1);
			int r;

			r = htoe_credit_rx_release_regrant_n(&pa, &ra[i], vc, n, nd);
			assert_true(r >= 0);
			adv_a[i] |= r > 0;
			*at_once += r > 0;
			assert_int_equal(htoe_credit_rx_release_n(&pb, &rb[i], vc, n, nd), 0);
			held[i][vc][0] -= n;
			held[i][vc][1] -= nd;
		} else if (op < 98) {
			/* the VL's next frame: regranted first, the limits
			 * advertised; then both copies are alike */
			if (htoe_credit_rx_regrant_due(&pa, &ra[i]))
				adv_a[i] |= htoe_credit_rx_regrant(&pa, &ra[i]);
			adv_b[i] |= htoe_credit_rx_regrant(&pb, &rb[i]);
			assert_int_equal(adv_a[i], adv_b[i]);
			adv_a[i] = adv_b[i] = false;
			assert_memory_equal(ra[i].granted, rb[i].granted, sizeof(ra[i].granted));
			assert_memory_equal(ra[i].released, rb[i].released, sizeof(ra[i].released));
			assert_memory_equal(ra[i].busy, rb[i].busy, sizeof(ra[i].busy));
			assert_int_equal(ra[i].dirty, rb[i].dirty);
			assert_int_equal(ra[i].pool_gen, rb[i].pool_gen);
			assert_memory_equal(&pa, &pb, sizeof(pa));
			CHECK_POOL(&pa, ra, n_vl);
		} else {
			/* VL reset: what it holds released, then reset */
			for (int v = 0; v < HT_VC_COUNT; v++) {
				assert_true(htoe_credit_rx_release_regrant_n(&pa, &ra[i], (enum ht_vc)v,
									      held[i][v][0],
									      held[i][v][1]) >= 0);
				assert_int_equal(htoe_credit_rx_release_n(&pb, &rb[i], (enum ht_vc)v,
									  held[i][v][0], held[i][v][1]),
						 0);
				held[i][v][0] = held[i][v][1] = 0;
			}
			assert_int_equal(htoe_credit_rx_reset(&pa, &ra[i]), 0);
			assert_int_equal(htoe_credit_rx_reset(&pb, &rb[i]), 0);
			assert_memory_equal(&pa, &pb, sizeof(pa));
			adv_a[i] = adv_b[i] = false;
		}
	}
}

static void test_release_regrant(void **state)
{
	(void)state;
	uint64_t one = 0, two = 0;

	for (uint64_t seed = 1; seed <= 8; seed++) {
		release_regrant_lockstep(1, seed, &one);
		release_regrant_lockstep(2, seed, &two);
	}
	assert_true(one > 1000); /* granted at once with one VL */
	assert_int_equal(two, 0);  /* never with two */
}

/* ---- randomized: senders and receivers of K VLs through one pool --------- */

#define K 6
#define INFLIGHT 512

struct pkt {
	uint8_t vc, data;
};

struct vlsim {
	struct htoe_credit_tx tx;
	/* packets on the wire, FIFO (the retry layer delivers in order) */
	struct pkt fly[INFLIGHT];
	unsigned fly_head, fly_n;
	unsigned fly_cnt[HT_VC_COUNT][2]; /* in flight per class */
	/* packets held in the receiving bridge */
	struct pkt held[INFLIGHT];
	unsigned held_n;
	/* credit headers on the wire, possibly reordered: a small bag */
	uint16_t hdr[8][HTOE_CREDIT_NCLASS];
	unsigned hdr_n;
	uint64_t sent;
};

static void check_all(const struct htoe_rxpool *p, const struct htoe_credit_rx *rx,
		      const struct vlsim *vs)
{
	char err[200] = "";
	if (htoe_credit_check(p, rx, K, sizeof(rx[0]), err, sizeof(err)) != 0)
		fail_msg("pool: %s", err);
	for (int i = 0; i < K; i++) {
		if (htoe_credit_check_pair(&vs[i].tx, &rx[i], err, sizeof(err)) != 0)
			fail_msg("VL %d: %s", i, err);
		/* in flight = consumed - received; held = received - released */
		unsigned held[HT_VC_COUNT][2] = { { 0 } };
		for (unsigned k = 0; k < vs[i].held_n; k++) {
			held[vs[i].held[k].vc][0]++;
			held[vs[i].held[k].vc][1] += vs[i].held[k].data;
		}
		for (int v = 0; v < HT_VC_COUNT; v++) {
			for (int d = 0; d < 2; d++) {
				assert_int_equal((uint16_t)(vs[i].tx.consumed[v][d] - rx[i].received[v][d]),
						 vs[i].fly_cnt[v][d]);
				assert_int_equal(htoe_credit_rx_held(&rx[i], (enum ht_vc)v, d), held[v][d]);
			}
		}
	}
}

/* A regrant visits only the classes whose grant may have changed (dirty,
 * pool_gen): it must leave nothing that a visit of all six classes would
 * still grant. The pool and the VL are copied, every class of the copy is
 * marked dirty, and its regrant must change nothing. */
static void assert_regrant_complete(const struct htoe_rxpool *p, const struct htoe_credit_rx *rx)
{
	struct htoe_rxpool pc = *p;
	struct htoe_credit_rx rc = *rx;

	rc.dirty = (uint8_t)((1u << HTOE_CREDIT_NCLASS) - 1);
	if (htoe_credit_rx_regrant(&pc, &rc))
		fail_msg("a full regrant grants more than the incremental one");
}

static void test_randomized_pool(void **state)
{
	(void)state;
	static struct vlsim vs[K];
	static struct htoe_credit_rx rx[K];
	struct htoe_rxpool p;
	struct ht_rand rng;
	uint16_t t[HT_VC_COUNT][2];
	uint64_t total_sent = 0, resets = 0;

	for (uint64_t seed = 1; seed <= 4; seed++) {
		ht_rand_seed(&rng, seed);
		memset(vs, 0, sizeof(vs));
		/* some classes tight, some generous */
		for (int v = 0; v < HT_VC_COUNT; v++) {
			t[v][0] = (uint16_t)(K * 3 + ht_rand_below(&rng, 60));
			t[v][1] = (uint16_t)(K * 3 + ht_rand_below(&rng, 30));
		}
		assert_int_equal(htoe_rxpool_init(&p, t, 3, (uint16_t)(3 + ht_rand_below(&rng, 20)), K), 0);
		for (int i = 0; i < K; i++) {
			htoe_credit_tx_init(&vs[i].tx);
			assert_int_equal(htoe_credit_rx_init(&p, &rx[i]), 0);
		}
		for (int step = 0; step < 200000; step++) {
			int i = (int)ht_rand_below(&rng, K);
			struct vlsim *s = &vs[i];
			unsigned op = (unsigned)ht_rand_below(&rng, 100);

			if (op < 35) {
				/* sender: one packet if credits allow */
				struct pkt k = { (uint8_t)ht_rand_below(&rng, 3),
						 (uint8_t)ht_rand_pct(&rng, 50) };
				if (htoe_credit_tx_can_send(&s->tx, k.vc, k.data)) {
					assert_int_equal(htoe_credit_tx_take(&s->tx, k.vc, k.data), 0);
					assert_true(s->fly_n < INFLIGHT);
					s->fly[(s->fly_head + s->fly_n++) % INFLIGHT] = k;
					s->fly_cnt[k.vc][0]++;
					s->fly_cnt[k.vc][1] += k.data;
					s->sent++;
				} else {
					assert_int_equal(htoe_credit_tx_take(&s->tx, k.vc, k.data), -EAGAIN);
				}
			} else if (op < 60) {
				/* receiver: the oldest packet in flight arrives */
				if (s->fly_n) {
					struct pkt k = s->fly[s->fly_head];
					s->fly_head = (s->fly_head + 1) % INFLIGHT;
					s->fly_n--;
					s->fly_cnt[k.vc][0]--;
					s->fly_cnt[k.vc][1] -= k.data;
					/* never an overrun: the sender obeyed */
					assert_int_equal(htoe_credit_rx_receive(&rx[i], k.vc, k.data), 0);
					s->held[s->held_n++] = k;
				}
			} else if (op < 80) {
				/* the local HT side consumes a held packet (any) */
				if (s->held_n) {
					unsigned j = (unsigned)ht_rand_below(&rng, s->held_n);
					struct pkt k = s->held[j];
					s->held[j] = s->held[--s->held_n];
					assert_int_equal(htoe_credit_rx_release(&p, &rx[i], k.vc, k.data), 0);
				}
			} else if (op < 90) {
				/* regrant and put the limits in a header on the wire */
				htoe_credit_rx_regrant(&p, &rx[i]);
				assert_regrant_complete(&p, &rx[i]);
				/* reserve guarantee: every class has >= R outstanding */
				for (int v = 0; v < HT_VC_COUNT; v++)
					for (int d = 0; d < 2; d++)
						assert_true((uint16_t)(rx[i].granted[v][d] -
								       rx[i].released[v][d]) >= 3);
				if (s->hdr_n < 8)
					htoe_credit_rx_limits(&rx[i], s->hdr[s->hdr_n++]);
			} else if (op < 99) {
				/* a header arrives: any of the bag (reordering);
				 * sometimes duplicated, sometimes lost */
				if (s->hdr_n) {
					unsigned j = (unsigned)ht_rand_below(&rng, s->hdr_n);
					if (!ht_rand_pct(&rng, 10))
						htoe_credit_tx_update(&s->tx, s->hdr[j], (uint64_t)step);
					if (!ht_rand_pct(&rng, 10))
						memcpy(s->hdr[j], s->hdr[--s->hdr_n], sizeof(s->hdr[j]));
				}
			} else {
				/* VL reset: in-flight frames of the old epoch are
				 * dropped, held buffers released, both sides reset */
				s->fly_n = 0;
				memset(s->fly_cnt, 0, sizeof(s->fly_cnt));
				s->hdr_n = 0;
				while (s->held_n) {
					struct pkt k = s->held[--s->held_n];
					assert_int_equal(htoe_credit_rx_release(&p, &rx[i], k.vc, k.data), 0);
				}
				assert_int_equal(htoe_credit_rx_reset(&p, &rx[i]), 0);
				htoe_credit_tx_reset(&s->tx);
				resets++;
			}
			check_all(&p, rx, vs);
		}
		for (int i = 0; i < K; i++)
			total_sent += vs[i].sent;
	}
	/* the run made real progress and saw stale headers */
	assert_true(total_sent > 100000);
	assert_true(resets > 10);
	uint64_t stale = 0;
	for (int i = 0; i < K; i++)
		stale += vs[i].tx.stale_updates;
	assert_true(stale > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_index),
		cmocka_unit_test(test_tx_take_limit),
		cmocka_unit_test(test_frame_credits),
		cmocka_unit_test(test_tx_wrap),
		cmocka_unit_test(test_tx_stale_update),
		cmocka_unit_test(test_tx_starvation),
		cmocka_unit_test(test_pool_init),
		cmocka_unit_test(test_rx_overrun),
		cmocka_unit_test(test_policy_reserve_many_vls),
		cmocka_unit_test(test_policy_cap),
		cmocka_unit_test(test_policy_regrant_after_release),
		cmocka_unit_test(test_policy_fair_share),
		cmocka_unit_test(test_policy_newly_busy),
		cmocka_unit_test(test_rx_reset),
		cmocka_unit_test(test_release_n),
		cmocka_unit_test(test_release_regrant),
		cmocka_unit_test(test_check_detects),
		cmocka_unit_test(test_check_changed_detects),
		cmocka_unit_test(test_randomized_pool),
		cmocka_unit_test(test_pool_sized_for_idle_peers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
