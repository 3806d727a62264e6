/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of lib/htoe/htoe_retry: Go-Back-N per VL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmodel/ht_rand.h"
#include "htoe/htoe_retry.h"

static struct htoe_retry_cfg cfg_default(void)
{
	struct htoe_retry_cfg c = {
		.window = 64,
		.ack_every = 4,
		.retry_limit = 3,
		.rto_init_ns = 1000,
		.rto_max_ns = 5000,
		.ack_delay_ns = 300,
	};
	return c;
}

static void init_r(struct htoe_retry *r, const struct htoe_retry_cfg *c)
{
	assert_int_equal(htoe_retry_init(r, c), 0);
}

static uint16_t send1(struct htoe_retry *r, uint64_t now)
{
	uint16_t s = 0xDEAD;
	assert_int_equal(htoe_retry_tx_send(r, now, &s), 0);
	return s;
}

/* Default config (RTO 1000 .. 5000, limit 3), frames 0 and 1 sent at 0. */
static void init_two_sent(struct htoe_retry *r)
{
	struct htoe_retry_cfg c = cfg_default();

	init_r(r, &c);
	send1(r, 0);
	send1(r, 0);
}

/* ---- serial arithmetic --------------------------------------------------- */

static void test_seq_arith(void **state)
{
	(void)state;
	assert_true(htoe_seq_lt(0, 1));
	assert_false(htoe_seq_lt(1, 0));
	assert_false(htoe_seq_lt(5, 5));
	assert_true(htoe_seq_le(5, 5));
	assert_true(htoe_seq_lt(65535, 0));
	assert_true(htoe_seq_lt(65000, 100));
	assert_false(htoe_seq_lt(100, 65000));
	assert_int_equal(htoe_seq_diff(0, 65535), 1);
	assert_int_equal(htoe_seq_diff(65535, 0), -1);
	assert_int_equal(htoe_seq_diff(3, 65533), 6);
	assert_int_equal(htoe_seq_diff(100, 100), 0);
	assert_int_equal(htoe_seq_diff(32767, 0), 32767);
	assert_int_equal(htoe_seq_diff(32768, 0), -32768);
}

static void test_init_invalid(void **state)
{
	(void)state;
	struct htoe_retry r;
	struct htoe_retry_cfg c = cfg_default();

	c.window = 0;
	assert_int_equal(htoe_retry_init(&r, &c), -EINVAL);
	c = cfg_default();
	c.window = 4097;
	assert_int_equal(htoe_retry_init(&r, &c), -EINVAL);
	c = cfg_default();
	c.window = 4096;
	assert_int_equal(htoe_retry_init(&r, &c), 0);
	c = cfg_default();
	c.ack_every = 0;
	assert_int_equal(htoe_retry_init(&r, &c), -EINVAL);
	c = cfg_default();
	c.rto_init_ns = 0;
	assert_int_equal(htoe_retry_init(&r, &c), -EINVAL);
	c = cfg_default();
	c.rto_max_ns = 999;
	assert_int_equal(htoe_retry_init(&r, &c), -EINVAL);
	assert_int_equal(htoe_retry_init(NULL, &c), -EINVAL);
}

/* ---- in-order delivery ---------------------------------------------------- */

static void test_in_order(void **state)
{
	(void)state;
	struct htoe_retry a, b;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&a, &c);
	init_r(&b, &c);

	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
	for (int i = 0; i < 10; i++) {
		uint16_t s = send1(&a, 100 + (uint64_t)i);
		assert_int_equal(s, i);
		assert_int_equal(htoe_retry_rx_frame(&b, s, 200 + (uint64_t)i), HTOE_RX_ACCEPT);
	}
	/* RTO armed by the first send only */
	assert_int_equal(htoe_retry_next_deadline(&a), 100 + 1000);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 10);
	assert_int_equal(htoe_retry_rx_ack_value(&b), 10);
	assert_int_equal(htoe_retry_tx_ack(&a, htoe_retry_rx_ack_value(&b), 300), 10);
	assert_int_equal(htoe_retry_tx_una(&a), 10);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 0);
	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
	assert_int_equal(a.stats.frames_sent, 10);
	assert_int_equal(b.stats.frames_accepted, 10);
	assert_int_equal(b.stats.dups + b.stats.out_of_order, 0);
}

/* ---- wrap-around ------------------------------------------------------------ */

static void test_wraparound(void **state)
{
	(void)state;
	struct htoe_retry a, b;
	struct htoe_retry_cfg c = cfg_default();
	c.window = 100;
	init_r(&a, &c);
	init_r(&b, &c);
	uint64_t now = 0;
	uint32_t total = 0;
	const uint32_t N = 70000; /* > 65536: crosses 65535 -> 0 */
	bool crossed = false;

	while (total < N) {
		/* fill the window, the receiver gets every frame */
		while (htoe_retry_tx_can_send(&a) && total < N) {
			uint16_t s = send1(&a, now);
			assert_int_equal(s, (uint16_t)total);
			if (s == 0 && total)
				crossed = true;
			assert_int_equal(htoe_retry_rx_frame(&b, s, now), HTOE_RX_ACCEPT);
			total++;
			now++;
		}
		assert_true(htoe_retry_tx_outstanding(&a) <= 100);
		/* cumulative ack, sometimes partial */
		uint16_t ack = htoe_retry_rx_ack_value(&b);
		if (total % 3 == 0)
			ack = (uint16_t)(ack - 7);
		int n = htoe_retry_tx_ack(&a, ack, now);
		assert_true(n >= 0);
		assert_int_equal(htoe_retry_tx_una(&a), ack);
		/* a duplicate of an old frame across the wrap is still a DUP */
		assert_int_equal(htoe_retry_rx_frame(&b, (uint16_t)(htoe_retry_rx_ack_value(&b) - 50), now),
				 HTOE_RX_DUP);
		htoe_retry_rx_ack_sent(&b, now);
	}
	assert_true(crossed);
	assert_int_equal(htoe_retry_tx_ack(&a, htoe_retry_rx_ack_value(&b), now) >= 0, 1);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 0);
	assert_int_equal(htoe_retry_tx_next_seq(&a), (uint16_t)N);
	assert_int_equal(b.stats.frames_accepted, N);
	assert_int_equal(a.stats.invalid_acks, 0);
	/* the next expected after the wrap is (N mod 65536): a frame with the
	 * pre-wrap number 65535 is a duplicate, N mod 65536 + 1 is a gap */
	assert_int_equal(htoe_retry_rx_frame(&b, 65535, now), HTOE_RX_DUP);
	assert_int_equal(htoe_retry_rx_frame(&b, (uint16_t)(N + 1), now), HTOE_RX_OUT_OF_ORDER);
}

/* ---- RX verdicts -------------------------------------------------------------- */

static void test_dup_ooo(void **state)
{
	(void)state;
	struct htoe_retry b;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&b, &c);

	assert_int_equal(htoe_retry_rx_frame(&b, 0, 10), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&b, 1, 10), HTOE_RX_ACCEPT);
	htoe_retry_rx_ack_sent(&b, 10);
	assert_false(htoe_retry_rx_ack_pending(&b));

	/* duplicate: immediate ack */
	assert_int_equal(htoe_retry_rx_frame(&b, 0, 20), HTOE_RX_DUP);
	assert_true(htoe_retry_rx_ack_due(&b, 20));
	assert_int_equal(htoe_retry_next_deadline(&b), 20);
	assert_false(htoe_retry_rx_nak_due(&b, 20));
	htoe_retry_rx_ack_sent(&b, 20);
	assert_false(htoe_retry_rx_ack_due(&b, 1000000));
	assert_int_equal(htoe_retry_rx_frame(&b, 1, 21), HTOE_RX_DUP);
	assert_int_equal(htoe_retry_rx_frame(&b, (uint16_t)(2 - 3000), 21), HTOE_RX_DUP);

	/* out of order: NAK for the expected value 2, not delivered */
	assert_int_equal(htoe_retry_rx_frame(&b, 3, 30), HTOE_RX_OUT_OF_ORDER);
	assert_int_equal(htoe_retry_rx_ack_value(&b), 2);
	assert_true(htoe_retry_rx_nak_due(&b, 30));
	assert_int_equal(htoe_retry_rx_frame(&b, 100, 31), HTOE_RX_OUT_OF_ORDER);
	assert_int_equal(b.stats.dups, 3);
	assert_int_equal(b.stats.out_of_order, 2);
	assert_int_equal(b.stats.frames_accepted, 2);
	/* the missing one is accepted */
	assert_int_equal(htoe_retry_rx_frame(&b, 2, 40), HTOE_RX_ACCEPT);
	assert_false(htoe_retry_rx_nak_due(&b, 40));
	assert_int_equal(htoe_retry_rx_frame(&b, 3, 41), HTOE_RX_ACCEPT);
}

static void test_nak_once_per_gap(void **state)
{
	(void)state;
	struct htoe_retry b;
	struct htoe_retry_cfg c = cfg_default(); /* rto_init 1000 */
	init_r(&b, &c);

	assert_int_equal(htoe_retry_rx_frame(&b, 0, 0), HTOE_RX_ACCEPT);
	/* gap at 1 */
	assert_int_equal(htoe_retry_rx_frame(&b, 2, 100), HTOE_RX_OUT_OF_ORDER);
	assert_true(htoe_retry_rx_nak_due(&b, 100));
	assert_int_equal(htoe_retry_next_deadline(&b), 100);
	htoe_retry_rx_nak_sent(&b, 100);
	assert_int_equal(b.stats.naks_sent, 1);
	assert_false(htoe_retry_rx_ack_pending(&b)); /* the NAK carried the ack */
	assert_false(htoe_retry_rx_nak_due(&b, 100));
	assert_int_equal(htoe_retry_next_deadline(&b), HTOE_RETRY_NEVER);

	/* more frames after the gap: no new NAK before 100 + rto_init */
	for (uint16_t s = 3; s < 20; s++) {
		assert_int_equal(htoe_retry_rx_frame(&b, s, 100 + s), HTOE_RX_OUT_OF_ORDER);
		assert_false(htoe_retry_rx_nak_due(&b, 100 + s));
	}
	assert_false(htoe_retry_rx_nak_due(&b, 1099));
	assert_int_equal(htoe_retry_next_deadline(&b), 1100);
	assert_true(htoe_retry_rx_nak_due(&b, 1100));
	htoe_retry_rx_nak_sent(&b, 1100);
	assert_int_equal(b.stats.naks_sent, 2);
	/* no further out-of-order frame: no NAK even much later */
	assert_false(htoe_retry_rx_nak_due(&b, 5000));
	assert_int_equal(htoe_retry_next_deadline(&b), HTOE_RETRY_NEVER);
	/* an out-of-order frame after the re-arm time: NAK due at once */
	assert_int_equal(htoe_retry_rx_frame(&b, 5, 6000), HTOE_RX_OUT_OF_ORDER);
	assert_true(htoe_retry_rx_nak_due(&b, 6000));
	htoe_retry_rx_nak_sent(&b, 6000);

	/* the gap closes: expected advances; a new gap NAKs immediately */
	assert_int_equal(htoe_retry_rx_frame(&b, 1, 6100), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&b, 2, 6101), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&b, 4, 6102), HTOE_RX_OUT_OF_ORDER);
	assert_true(htoe_retry_rx_nak_due(&b, 6102));
	assert_int_equal(htoe_retry_rx_ack_value(&b), 3);
}

static void test_ack_every_and_delay(void **state)
{
	(void)state;
	struct htoe_retry b;
	struct htoe_retry_cfg c = cfg_default(); /* ack_every 4, delay 300 */
	init_r(&b, &c);

	assert_false(htoe_retry_rx_ack_pending(&b));
	assert_int_equal(htoe_retry_rx_frame(&b, 0, 1000), HTOE_RX_ACCEPT);
	assert_true(htoe_retry_rx_ack_pending(&b));
	assert_false(htoe_retry_rx_ack_due(&b, 1000));
	assert_int_equal(htoe_retry_next_deadline(&b), 1300);
	assert_int_equal(htoe_retry_rx_frame(&b, 1, 1010), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&b, 2, 1020), HTOE_RX_ACCEPT);
	assert_false(htoe_retry_rx_ack_due(&b, 1020));
	assert_int_equal(htoe_retry_next_deadline(&b), 1300); /* from the first */
	assert_int_equal(htoe_retry_rx_frame(&b, 3, 1030), HTOE_RX_ACCEPT);
	assert_true(htoe_retry_rx_ack_due(&b, 1030)); /* 4th frame */
	assert_int_equal(htoe_retry_next_deadline(&b), 1030);
	htoe_retry_rx_ack_sent(&b, 1030);
	assert_false(htoe_retry_rx_ack_pending(&b));

	/* delay path: one frame, due after ack_delay */
	assert_int_equal(htoe_retry_rx_frame(&b, 4, 2000), HTOE_RX_ACCEPT);
	assert_false(htoe_retry_rx_ack_due(&b, 2299));
	assert_true(htoe_retry_rx_ack_due(&b, 2300));
	/* a piggybacked ack (DATA frame) clears it */
	htoe_retry_rx_ack_sent(&b, 2100);
	assert_false(htoe_retry_rx_ack_due(&b, 2300));
	assert_int_equal(htoe_retry_next_deadline(&b), HTOE_RETRY_NEVER);
	assert_int_equal(b.stats.acks_sent, 2);

	/* ack_every = 1: every frame due at once */
	c.ack_every = 1;
	init_r(&b, &c);
	assert_int_equal(htoe_retry_rx_frame(&b, 0, 5), HTOE_RX_ACCEPT);
	assert_true(htoe_retry_rx_ack_due(&b, 5));
}

/* ---- TX: acks ------------------------------------------------------------------ */

static void test_partial_ack(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&a, &c);

	for (int i = 0; i < 8; i++)
		send1(&a, 100);
	assert_int_equal(htoe_retry_next_deadline(&a), 1100);
	assert_int_equal(htoe_retry_tx_ack(&a, 3, 500), 3);
	assert_int_equal(htoe_retry_tx_una(&a), 3);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 5);
	/* re-armed with the adaptive RTO: frame 0 took 400 ns, so SRTT 400,
	 * RTTVAR 200, RTO = 400 + 4 * 200 */
	assert_int_equal(htoe_retry_tx_rto(&a), 1200);
	assert_int_equal(htoe_retry_next_deadline(&a), 500 + 1200); /* re-armed */
	assert_int_equal(htoe_retry_tx_ack(&a, 3, 600), 0);        /* no progress */
	assert_int_equal(htoe_retry_next_deadline(&a), 1700);      /* not re-armed */
	assert_int_equal(htoe_retry_tx_ack(&a, 1, 600), 0);        /* stale */
	assert_int_equal(htoe_retry_tx_una(&a), 3);
	assert_int_equal(htoe_retry_tx_ack(&a, 8, 700), 5);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 0);
	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
	assert_int_equal(a.stats.invalid_acks, 0);
	/* the next send re-arms */
	send1(&a, 800);
	assert_int_equal(htoe_retry_next_deadline(&a), 800 + 1200);
}

/* ---- adaptive RTO (RFC 6298, Karn) ------------------------------------------- */

static struct htoe_retry_cfg cfg_adaptive(void)
{
	struct htoe_retry_cfg c = cfg_default();

	c.rto_min_ns = 100;
	c.rto_max_ns = 100000;
	return c;
}

/* One frame sent at *t and acked rtt later; returns the RTO after it. */
static uint64_t round_trip(struct htoe_retry *a, uint64_t *t, uint64_t rtt)
{
	uint16_t seq = send1(a, *t);

	*t += rtt;
	assert_int_equal(htoe_retry_tx_ack(a, (uint16_t)(seq + 1), *t), 1);
	*t += 1000;
	return htoe_retry_tx_rto(a);
}

static void test_rto_converges(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_adaptive();
	uint64_t t = 0;

	init_r(&a, &c);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000); /* rto_init before any sample */
	assert_int_equal(htoe_retry_srtt(&a), 0);
	/* first sample R: SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 */
	assert_int_equal(round_trip(&a, &t, 400), 1200);
	assert_int_equal(htoe_retry_srtt(&a), 400);
	assert_int_equal(htoe_retry_rttvar(&a), 200);
	/* second: RTTVAR = 3/4 200 + 1/4 |400 - 600| = 200, SRTT = 7/8 400 + 1/8 600 */
	assert_int_equal(round_trip(&a, &t, 600), 425 + 800);
	/* a steady path: the variation decays, the RTO converges to the RTT */
	for (int i = 0; i < 200; i++)
		round_trip(&a, &t, 400);
	assert_int_equal(htoe_retry_srtt(&a), 400);
	assert_int_equal(htoe_retry_rttvar(&a), 0);
	assert_int_equal(htoe_retry_tx_rto(&a), 400);
	/* a jittery path (300/500 ns): RTT + 4 x its variation, about 400 + 4 x 100 */
	for (int i = 0; i < 400; i++)
		round_trip(&a, &t, i % 2 ? 300 : 500);
	assert_in_range(htoe_retry_srtt(&a), 380, 420);
	assert_in_range(htoe_retry_rttvar(&a), 80, 120);
	assert_in_range(htoe_retry_tx_rto(&a), 700, 900);
	assert_int_equal(a.stats.rtt_samples, 602);
	/* clamped to [rto_min, rto_max] */
	for (int i = 0; i < 200; i++)
		round_trip(&a, &t, 10);
	assert_int_equal(htoe_retry_tx_rto(&a), 100);
	assert_int_equal(round_trip(&a, &t, 500000), 100000);
	/* the estimators survive a VL reset, the RTO restarts at the base */
	htoe_retry_reset(&a);
	assert_int_equal(htoe_retry_tx_rto(&a), 100000);
	assert_true(htoe_retry_srtt(&a) > 0);

	/* rto_min 0: the floor is rto_init (the RTO only adapts upwards) */
	c.rto_min_ns = 0;
	init_r(&a, &c);
	for (int i = 0; i < 100; i++)
		round_trip(&a, &t, 10);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
	/* and rto_min above rto_max is refused */
	c.rto_min_ns = c.rto_max_ns + 1;
	assert_int_equal(htoe_retry_init(&a, &c), -EINVAL);
}

static void test_rto_karn(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_adaptive();
	uint16_t seq;

	/* a timeout: the frame is retransmitted, its ack gives no sample */
	init_r(&a, &c);
	send1(&a, 0);
	assert_int_equal(htoe_retry_tx_timer(&a, 1000), HTOE_RETRY_GOBACK);
	assert_true(htoe_retry_tx_retransmit_next(&a, &seq));
	assert_int_equal(seq, 0);
	assert_int_equal(htoe_retry_tx_ack(&a, 1, 1100), 1);
	assert_int_equal(a.stats.rtt_samples, 0);
	assert_int_equal(htoe_retry_srtt(&a), 0);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000); /* backoff undone: the base */
	/* the next first transmission is timed again */
	send1(&a, 2000);
	assert_int_equal(htoe_retry_tx_ack(&a, 2, 2300), 1);
	assert_int_equal(a.stats.rtt_samples, 1);
	assert_int_equal(htoe_retry_srtt(&a), 300);

	/* a NAK go-back: no sample from the frames it resent */
	init_r(&a, &c);
	send1(&a, 0);
	send1(&a, 0);
	assert_int_equal(htoe_retry_tx_nak(&a, 0, 50), 0);
	assert_true(htoe_retry_tx_retransmit_next(&a, &seq));
	assert_true(htoe_retry_tx_retransmit_next(&a, &seq));
	assert_int_equal(htoe_retry_tx_ack(&a, 2, 400), 2);
	assert_int_equal(a.stats.rtt_samples, 0);
}

static void test_rto_backoff(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_adaptive();
	uint64_t t = 0;

	c.retry_limit = 10;
	init_r(&a, &c);
	for (int i = 0; i < 100; i++)
		round_trip(&a, &t, 400);
	assert_int_equal(htoe_retry_tx_rto(&a), 400);
	/* the path goes silent: timeouts after 400, 800, 1600, ... ns */
	send1(&a, t);
	assert_int_equal(htoe_retry_next_deadline(&a), t + 400);
	assert_int_equal(htoe_retry_tx_timer(&a, t + 399), HTOE_RETRY_IDLE);
	assert_int_equal(htoe_retry_tx_timer(&a, t + 400), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_rto(&a), 800);
	assert_int_equal(htoe_retry_next_deadline(&a), t + 400 + 800);
	assert_int_equal(htoe_retry_tx_timer(&a, t + 1200), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_rto(&a), 1600);
	assert_int_equal(htoe_retry_next_deadline(&a), t + 1200 + 1600);
	/* progress: back to the adaptive base, no sample from the resent frame */
	assert_int_equal(htoe_retry_tx_ack(&a, htoe_retry_tx_next_seq(&a), t + 1500), 1);
	assert_int_equal(htoe_retry_tx_rto(&a), 400);
	assert_int_equal(a.stats.rtt_samples, 100);
}

static void test_invalid_ack(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&a, &c);

	for (int i = 0; i < 5; i++)
		send1(&a, 0);
	assert_int_equal(htoe_retry_tx_ack(&a, 6, 10), -EINVAL);
	assert_int_equal(htoe_retry_tx_ack(&a, 1000, 10), -EINVAL);
	assert_int_equal(htoe_retry_tx_nak(&a, 7, 10), -EINVAL);
	assert_int_equal(a.stats.invalid_acks, 3);
	assert_int_equal(a.stats.naks_received, 0);
	assert_int_equal(htoe_retry_tx_una(&a), 0);
	assert_int_equal(htoe_retry_tx_outstanding(&a), 5);
	assert_false(htoe_retry_tx_in_goback(&a));
	/* exactly next_seq is valid */
	assert_int_equal(htoe_retry_tx_ack(&a, 5, 10), 5);
	/* nothing outstanding: any ack > una is invalid */
	assert_int_equal(htoe_retry_tx_ack(&a, 6, 10), -EINVAL);
	assert_int_equal(a.stats.invalid_acks, 4);
}

static void test_window(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	c.window = 4;
	init_r(&a, &c);
	uint16_t s;

	for (int i = 0; i < 4; i++)
		send1(&a, 0);
	assert_false(htoe_retry_tx_can_send(&a));
	assert_int_equal(htoe_retry_tx_send(&a, 0, &s), -EAGAIN);
	assert_int_equal(a.stats.frames_sent, 4);
	assert_int_equal(htoe_retry_tx_ack(&a, 1, 0), 1);
	assert_true(htoe_retry_tx_can_send(&a));
	assert_int_equal(send1(&a, 0), 4);
	assert_false(htoe_retry_tx_can_send(&a));
}

/* ---- TX: NAK and go-back ------------------------------------------------------- */

static void test_nak_goback(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&a, &c);
	uint16_t s;

	for (int i = 0; i < 10; i++)
		send1(&a, 0);
	assert_false(htoe_retry_tx_retransmit_peek(&a, &s));
	/* NAK(4): frames 0..3 acked, go back to 4 */
	assert_int_equal(htoe_retry_tx_nak(&a, 4, 100), 4);
	assert_true(htoe_retry_tx_in_goback(&a));
	assert_false(htoe_retry_tx_can_send(&a)); /* retransmissions first */
	assert_int_equal(htoe_retry_next_deadline(&a), 1100);
	assert_true(htoe_retry_tx_retransmit_peek(&a, &s));
	assert_int_equal(s, 4);
	assert_true(htoe_retry_tx_retransmit_peek(&a, &s)); /* peek does not advance */
	assert_int_equal(s, 4);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 4);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 5);

	/* the same NAK again while the go-back is in progress: ignored */
	assert_int_equal(htoe_retry_tx_nak(&a, 4, 110), 0);
	assert_int_equal(a.stats.naks_ignored, 1);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 6); /* not restarted */

	/* an ack during the go-back skips the released frames */
	assert_int_equal(htoe_retry_tx_ack(&a, 8, 120), 4);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 8);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 9);
	assert_false(htoe_retry_tx_retransmit_next(&a, &s));
	assert_false(htoe_retry_tx_in_goback(&a));
	assert_true(htoe_retry_tx_can_send(&a));
	assert_int_equal(a.stats.retransmitted, 5);

	/* NAK(8) after the go-back finished: a new go-back from 8 */
	assert_int_equal(htoe_retry_tx_nak(&a, 8, 130), 0);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 8);
	/* a NAK from a later point restarts from there */
	assert_int_equal(htoe_retry_tx_nak(&a, 9, 140), 1);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 9);
	assert_false(htoe_retry_tx_retransmit_next(&a, &s));
	/* a stale NAK starts nothing */
	assert_int_equal(htoe_retry_tx_nak(&a, 5, 150), 0);
	assert_false(htoe_retry_tx_in_goback(&a));
	/* a NAK acknowledging everything starts nothing */
	assert_int_equal(htoe_retry_tx_nak(&a, 10, 160), 1);
	assert_false(htoe_retry_tx_in_goback(&a));
	assert_int_equal(a.stats.naks_received, 6);
	assert_int_equal(a.stats.gobacks, 3);
	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
}

/* ---- TX: RTO backoff and retry limit ---------------------------------------- */

static void test_rto_backoff_limit(void **state)
{
	(void)state;
	struct htoe_retry a;
	uint16_t s;

	init_two_sent(&a);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
	assert_int_equal(htoe_retry_tx_timer(&a, 999), HTOE_RETRY_IDLE);
	/* expected timeouts: 1000, +2000, +4000, then LIMIT at +5000 (cap) */
	const uint64_t at[] = { 1000, 3000, 7000 };
	const uint64_t rto_after[] = { 2000, 4000, 5000 };
	for (int k = 0; k < 3; k++) {
		assert_int_equal(htoe_retry_next_deadline(&a), at[k]);
		assert_int_equal(htoe_retry_tx_timer(&a, at[k] - 1), HTOE_RETRY_IDLE);
		assert_int_equal(htoe_retry_tx_timer(&a, at[k]), HTOE_RETRY_GOBACK);
		assert_int_equal(htoe_retry_tx_rto(&a), rto_after[k]);
		/* go back to the oldest unacknowledged */
		assert_true(htoe_retry_tx_retransmit_next(&a, &s));
		assert_int_equal(s, 0);
		assert_true(htoe_retry_tx_retransmit_next(&a, &s));
		assert_int_equal(s, 1);
		assert_false(htoe_retry_tx_retransmit_next(&a, &s));
	}
	assert_int_equal(htoe_retry_next_deadline(&a), 12000);
	assert_int_equal(htoe_retry_tx_timer(&a, 12000), HTOE_RETRY_LIMIT);
	assert_true(htoe_retry_tx_failed(&a));
	assert_false(htoe_retry_tx_can_send(&a));
	assert_false(htoe_retry_tx_in_goback(&a));
	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
	assert_int_equal(htoe_retry_tx_timer(&a, 100000), HTOE_RETRY_IDLE);
	assert_int_equal(a.stats.timeouts, 4);

	/* reset: back to seq 0, rto_init, can send */
	htoe_retry_reset(&a);
	assert_false(htoe_retry_tx_failed(&a));
	assert_true(htoe_retry_tx_can_send(&a));
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
	assert_int_equal(send1(&a, 20000), 0);
	assert_int_equal(htoe_retry_next_deadline(&a), 21000);
	assert_int_equal(a.stats.resets, 1);
	assert_int_equal(a.stats.timeouts, 4); /* counters kept */
}

static void test_rto_progress_resets_backoff(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	c.retry_limit = 2;
	init_r(&a, &c);
	uint16_t s;

	for (int i = 0; i < 4; i++)
		send1(&a, 0);
	assert_int_equal(htoe_retry_tx_timer(&a, 1000), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_timer(&a, 3000), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_rto(&a), 4000);
	while (htoe_retry_tx_retransmit_next(&a, &s))
		;
	/* progress: retries and RTO back to the start */
	assert_int_equal(htoe_retry_tx_ack(&a, 1, 3500), 1);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
	assert_int_equal(htoe_retry_next_deadline(&a), 4500);
	/* two more timeouts are allowed again (limit 2), the third is LIMIT */
	assert_int_equal(htoe_retry_tx_timer(&a, 4500), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_timer(&a, 6500), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_timer(&a, 10500), HTOE_RETRY_LIMIT);
}

/* The backoff is capped at 2^HTOE_RETRY_RTO_SHIFT_MAX times the RTO, far
 * below a large rto_max: a lost retransmission is retried within
 * milliseconds on a datacentre link, not seconds. */
static void test_rto_backoff_capped(void **state)
{
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	uint64_t now = 0;

	(void)state;
	c.retry_limit = 50;
	c.rto_max_ns = 1000000000; /* 1 s */
	init_r(&a, &c);
	send1(&a, 0);
	for (int k = 0; k < 10; k++) {
		now = htoe_retry_next_deadline(&a);
		assert_int_equal(htoe_retry_tx_timer(&a, now), HTOE_RETRY_GOBACK);
	}
	assert_int_equal(htoe_retry_tx_rto(&a), 1000u << HTOE_RETRY_RTO_SHIFT_MAX);
	assert_int_equal(htoe_retry_next_deadline(&a), now + (1000u << HTOE_RETRY_RTO_SHIFT_MAX));
}

/* Liveness comes from the peer, not from a count of timeouts: a peer whose
 * frames keep arriving (acks that release nothing: every retransmission to
 * it is lost) is never given up, however many timeouts it takes. */
static void test_rto_peer_answers_no_limit(void **state)
{
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default(); /* retry_limit 3 */
	uint16_t s;

	(void)state;
	init_r(&a, &c);
	send1(&a, 0);
	for (int k = 0; k < 40; k++) {
		uint64_t t = htoe_retry_next_deadline(&a);

		assert_int_equal(htoe_retry_tx_timer(&a, t), HTOE_RETRY_GOBACK);
		while (htoe_retry_tx_retransmit_next(&a, &s))
			;
		/* the peer's own traffic: ack 0, nothing new */
		assert_int_equal(htoe_retry_tx_ack(&a, 0, t + 10), 0);
	}
	assert_false(htoe_retry_tx_failed(&a));
	assert_int_equal(a.stats.timeouts, 40);
	assert_int_equal(a.stats.silent_timeouts, 0);
	/* and it recovers when a copy gets through */
	assert_int_equal(htoe_retry_tx_ack(&a, 1, htoe_retry_next_deadline(&a) - 1), 1);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
}

/* A dead peer (nothing arrives) is still given up: after retry_limit + 1
 * silent timeouts and no sooner than the silence the uncapped backoff
 * would have taken, sum over k = 0..limit of min(rto 2^k, rto_max). */
static void test_rto_dead_peer(void **state)
{
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	enum htoe_retry_timer v = HTOE_RETRY_IDLE;
	uint64_t t = 0, dead = 0;
	unsigned n = 0;

	(void)state;
	c.retry_limit = 8;
	c.rto_max_ns = 1000000000;
	for (unsigned k = 0; k <= c.retry_limit; k++)
		dead += 1000ull << k;
	init_r(&a, &c);
	send1(&a, 500);
	while (v != HTOE_RETRY_LIMIT) {
		t = htoe_retry_next_deadline(&a);
		assert_true(t != HTOE_RETRY_NEVER && ++n < 1000);
		v = htoe_retry_tx_timer(&a, t);
	}
	assert_true(htoe_retry_tx_failed(&a));
	assert_true(t - 500 >= dead);
	assert_true(t - 500 < dead + (1000u << HTOE_RETRY_RTO_SHIFT_MAX));
	assert_true(n > c.retry_limit + 1);
	assert_int_equal(a.stats.silent_timeouts, n - 1);
}

/* An ack that releases nothing and starts no go-back. */
static void ack_no_goback(struct htoe_retry *r, uint16_t ack, uint64_t now)
{
	assert_int_equal(htoe_retry_tx_ack(r, ack, now), 0);
	assert_false(htoe_retry_tx_in_goback(r));
}

/* A stalled peer (not polled, its RX ring overflowing) loses a go-back; when
 * it runs again it answers with ack == una. The sender goes back at once
 * instead of sitting out its backed-off RTO into the retry limit (htoe-sim
 * --stall found VL resets while the peer was answering). */
static void test_dupack_after_timeout(void **state)
{
	(void)state;
	struct htoe_retry a;
	uint16_t s;

	init_two_sent(&a);
	/* no timeout yet: ack == una is just an ack in flight */
	ack_no_goback(&a, 0, 500);
	/* timeouts at 1000, 3000, 7000; every go-back is lost */
	const uint64_t at[] = { 1000, 3000, 7000 };
	for (int k = 0; k < 3; k++) {
		assert_int_equal(htoe_retry_tx_timer(&a, at[k]), HTOE_RETRY_GOBACK);
		while (htoe_retry_tx_retransmit_next(&a, &s))
			;
	}
	assert_int_equal(htoe_retry_tx_rto(&a), 5000);
	assert_int_equal(htoe_retry_next_deadline(&a), 12000);
	/* an ack sent before the last go-back arrived: less than a base RTO
	 * (1000) after it, no new go-back */
	ack_no_goback(&a, 0, 7500);
	/* a stale ack never starts one */
	ack_no_goback(&a, 0xFFFF, 8000);
	/* the peer runs again and still expects 0: go back now, keep the
	 * backoff and the retry count */
	assert_int_equal(htoe_retry_tx_ack(&a, 0, 8000), 0);
	assert_true(htoe_retry_tx_in_goback(&a));
	assert_int_equal(a.stats.gobacks, 4);
	assert_int_equal(a.stats.timeouts, 3);
	assert_int_equal(htoe_retry_tx_rto(&a), 5000);
	assert_int_equal(htoe_retry_next_deadline(&a), 13000);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 0);
	assert_true(htoe_retry_tx_retransmit_next(&a, &s));
	assert_int_equal(s, 1);
	assert_false(htoe_retry_tx_retransmit_next(&a, &s));
	/* more acks == una within a base RTO of it: ignored */
	ack_no_goback(&a, 0, 8500);
	/* the go-back arrives: progress, no VL reset */
	assert_int_equal(htoe_retry_tx_ack(&a, 2, 8600), 2);
	assert_int_equal(htoe_retry_tx_rto(&a), 1000);
	assert_int_equal(htoe_retry_tx_timer(&a, 13000), HTOE_RETRY_IDLE);
	assert_false(htoe_retry_tx_failed(&a));
	assert_true(htoe_retry_tx_can_send(&a));

	/* after the limit nothing starts again */
	send1(&a, 20000);
	uint64_t t = 21000;
	for (int k = 0; k < 10 && htoe_retry_tx_timer(&a, t) != HTOE_RETRY_LIMIT; k++)
		t += 5000;
	assert_true(htoe_retry_tx_failed(&a));
	ack_no_goback(&a, 2, 100000);
}

static void test_rto_cap_odd(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	c.rto_init_ns = 3;
	c.rto_max_ns = 7;
	c.retry_limit = 10;
	init_r(&a, &c);
	send1(&a, 0);
	uint64_t now = 3;
	const uint64_t seq[] = { 6, 7, 7, 7 };
	for (int k = 0; k < 4; k++) {
		assert_int_equal(htoe_retry_tx_timer(&a, now), HTOE_RETRY_GOBACK);
		assert_int_equal(htoe_retry_tx_rto(&a), seq[k]);
		now += seq[k];
		assert_int_equal(htoe_retry_next_deadline(&a), now);
	}
}

static void test_reset(void **state)
{
	(void)state;
	struct htoe_retry a;
	struct htoe_retry_cfg c = cfg_default();
	init_r(&a, &c);

	for (int i = 0; i < 7; i++)
		send1(&a, 0);
	assert_int_equal(htoe_retry_rx_frame(&a, 0, 0), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&a, 5, 0), HTOE_RX_OUT_OF_ORDER);
	htoe_retry_tx_nak(&a, 2, 0);
	htoe_retry_reset(&a);
	assert_int_equal(htoe_retry_tx_una(&a), 0);
	assert_int_equal(htoe_retry_tx_next_seq(&a), 0);
	assert_false(htoe_retry_tx_in_goback(&a));
	assert_int_equal(htoe_retry_rx_ack_value(&a), 0);
	assert_false(htoe_retry_rx_ack_pending(&a));
	assert_false(htoe_retry_rx_nak_due(&a, 1000000));
	assert_int_equal(htoe_retry_next_deadline(&a), HTOE_RETRY_NEVER);
	assert_int_equal(htoe_retry_rx_frame(&a, 0, 0), HTOE_RX_ACCEPT);
}

/* ---- randomized: two endpoints over a lossy, reordering, duplicating channel ---- */

enum { F_DATA = 1, F_ACK = 2, F_NAK = 3 };

struct wire_pkt {
	uint64_t at;     /* arrival time */
	uint64_t order;  /* tie-break: send order */
	uint8_t  dst;
	uint8_t  type;
	uint16_t seq, ack;
	uint32_t payload;
	uint8_t  sack_len;             /* selective: SACK block carried */
	uint8_t  sack[HTOE_SACK_HDR_LEN + 32];
};

#define CHAN_MAX (1u << 16)

struct chan {
	struct wire_pkt h[CHAN_MAX]; /* min-heap on (at, order) */
	uint32_t n;
	uint64_t order;
};

static bool pkt_before(const struct wire_pkt *a, const struct wire_pkt *b)
{
	return a->at != b->at ? a->at < b->at : a->order < b->order;
}

static void chan_push(struct chan *c, struct wire_pkt p)
{
	assert_true(c->n < CHAN_MAX);
	p.order = c->order++;
	uint32_t i = c->n++;
	while (i > 0) {
		uint32_t parent = (i - 1) / 2;
		if (!pkt_before(&p, &c->h[parent]))
			break;
		c->h[i] = c->h[parent];
		i = parent;
	}
	c->h[i] = p;
}

static struct wire_pkt chan_pop(struct chan *c)
{
	struct wire_pkt top = c->h[0], last = c->h[--c->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t k = 2 * i + 1;
		if (k >= c->n)
			break;
		if (k + 1 < c->n && pkt_before(&c->h[k + 1], &c->h[k]))
			k++;
		if (!pkt_before(&c->h[k], &last))
			break;
		c->h[i] = c->h[k];
		i = k;
	}
	if (c->n)
		c->h[i] = last;
	return top;
}

struct lossy {
	unsigned loss_pct, dup_pct, reorder_pct;
	uint64_t base_ns, jitter_ns, reorder_ns, gap_ns;
};

struct endpoint {
	struct htoe_retry r;
	struct htoe_retry_sb sb[256];   /* selective mode */
	uint32_t held[256];             /* payloads of held frames, by seq % 256 */
	uint64_t lost_data;             /* its DATA frames the channel dropped */
	uint32_t ring[HTOE_RETRY_WINDOW_MAX]; /* payload by seq % 4096 */
	uint32_t next_payload;  /* next new payload to send */
	uint32_t total;         /* payloads to send */
	uint32_t delivered;     /* payloads received in order */
	uint64_t tx_free_at;    /* the link is busy until */
};

struct sim {
	struct chan ch;
	struct endpoint ep[2];
	struct ht_rand rng;
	struct lossy l;
	uint64_t now;
	bool sel;                       /* both ends in selective mode */
};

static void wire_send(struct sim *s, uint8_t dst, struct wire_pkt p)
{
	p.dst = dst;
	if (ht_rand_pct(&s->rng, s->l.loss_pct)) {
		if (p.type == F_DATA)
			s->ep[1 - dst].lost_data++;
		return;
	}
	int copies = ht_rand_pct(&s->rng, s->l.dup_pct) ? 2 : 1;
	for (int k = 0; k < copies; k++) {
		uint64_t d = s->l.base_ns + ht_rand_below(&s->rng, s->l.jitter_ns + 1);
		if (ht_rand_pct(&s->rng, s->l.reorder_pct))
			d += ht_rand_below(&s->rng, s->l.reorder_ns + 1);
		p.at = s->now + d;
		chan_push(&s->ch, p);
	}
}

/* Send at most one frame from endpoint i if its link is free. */
static bool ep_output(struct sim *s, int i)
{
	struct endpoint *e = &s->ep[i];
	struct htoe_retry *r = &e->r;
	struct wire_pkt p = { 0 };
	uint16_t seq;

	if (s->now < e->tx_free_at)
		return false;
	if (htoe_retry_rx_nak_due(r, s->now)) {
		p.type = F_NAK;
		p.ack = htoe_retry_rx_ack_value(r);
		p.sack_len = (uint8_t)htoe_retry_rx_sack(r, p.sack, sizeof(p.sack));
		htoe_retry_rx_nak_sent(r, s->now);
	} else if (htoe_retry_tx_retransmit_at(r, s->now, &seq)) {
		p.type = F_DATA;
		p.seq = seq;
		p.payload = e->ring[seq % HTOE_RETRY_WINDOW_MAX];
		p.ack = htoe_retry_rx_ack_value(r);
		htoe_retry_rx_ack_sent(r, s->now);
	} else if (e->next_payload < e->total && htoe_retry_tx_can_send(r)) {
		assert_int_equal(htoe_retry_tx_send(r, s->now, &seq), 0);
		e->ring[seq % HTOE_RETRY_WINDOW_MAX] = e->next_payload++;
		p.type = F_DATA;
		p.seq = seq;
		p.payload = e->ring[seq % HTOE_RETRY_WINDOW_MAX];
		p.ack = htoe_retry_rx_ack_value(r);
		htoe_retry_rx_ack_sent(r, s->now);
	} else if (htoe_retry_rx_ack_due(r, s->now)) {
		p.type = F_ACK;
		p.ack = htoe_retry_rx_ack_value(r);
		p.sack_len = (uint8_t)htoe_retry_rx_sack(r, p.sack, sizeof(p.sack));
		htoe_retry_rx_ack_sent(r, s->now);
	} else {
		return false;
	}
	e->tx_free_at = s->now + s->l.gap_ns;
	wire_send(s, (uint8_t)(1 - i), p);
	return true;
}

/* When does endpoint i next want to output (ignoring its timer)? */
static uint64_t ep_wants(const struct sim *s, int i)
{
	const struct endpoint *e = &s->ep[i];
	const struct htoe_retry *r = &e->r;
	uint16_t seq;
	bool work = htoe_retry_tx_retransmit_peek(r, &seq) ||
		    (e->next_payload < e->total && htoe_retry_tx_can_send(r));
	uint64_t t = HTOE_RETRY_NEVER;
	if (work)
		t = e->tx_free_at > s->now ? e->tx_free_at : s->now;
	uint64_t d = htoe_retry_next_deadline(r);
	if (d != HTOE_RETRY_NEVER) {
		/* ACK/NAK/RTO: the link must also be free */
		if (d < e->tx_free_at)
			d = e->tx_free_at;
		if (d < t)
			t = d;
	}
	return t;
}

static void ep_input(struct sim *s, const struct wire_pkt *p)
{
	struct endpoint *e = &s->ep[p->dst];
	struct htoe_retry *r = &e->r;

	if (p->sack_len) {
		assert_true(s->sel);
		if (htoe_retry_tx_ack(r, p->ack, s->now) >= 0)
			assert_true(htoe_retry_tx_sack(r, p->ack, p->sack, p->sack_len, s->now) >= 0);
		return;
	}
	if (p->type == F_NAK) {
		assert_true(htoe_retry_tx_nak(r, p->ack, s->now) >= 0);
		return;
	}
	assert_true(htoe_retry_tx_ack(r, p->ack, s->now) >= 0);
	if (p->type != F_DATA)
		return;
	enum htoe_retry_verdict v = htoe_retry_rx_frame(r, p->seq, s->now);

	if (v == HTOE_RX_OUT_OF_ORDER && htoe_retry_rx_can_hold(r, p->seq)) {
		e->held[p->seq % 256] = p->payload;
		assert_int_equal(htoe_retry_rx_hold(r, p->seq, s->now), 0);
	}
	if (v != HTOE_RX_ACCEPT)
		return;
	/* exactly once, in order: the frame, then the held ones after it */
	assert_int_equal(p->payload, e->delivered);
	e->delivered++;
	while (htoe_retry_rx_is_held(r, htoe_retry_rx_ack_value(r))) {
		uint16_t seq = htoe_retry_rx_ack_value(r);

		assert_int_equal(e->held[seq % 256], e->delivered);
		e->delivered++;
		assert_int_equal(htoe_retry_rx_frame(r, seq, s->now), HTOE_RX_ACCEPT);
	}
	char err[160];
	assert_int_equal(htoe_retry_check(r, err, sizeof(err)), 0);
}

static bool sim_done(const struct sim *s)
{
	for (int i = 0; i < 2; i++) {
		const struct endpoint *e = &s->ep[i];
		if (e->next_payload < e->total || htoe_retry_tx_outstanding(&e->r) ||
		    s->ep[1 - i].delivered < e->total)
			return false;
	}
	return true;
}

static struct sim g_sim;

static void run_lossy(uint64_t seed, uint32_t n_a, uint32_t n_b, uint16_t window,
		      const struct lossy *l)
{
	struct sim *const s = &g_sim; /* large: keep it off the stack */
	struct htoe_retry_cfg c = {
		.window = window,
		.ack_every = 8,
		.retry_limit = 40,
		.rto_init_ns = 40000,
		.rto_max_ns = 400000,
		.ack_delay_ns = 5000,
	};
	bool sel = s->sel;

	memset(s, 0, sizeof(*s));
	s->sel = sel;
	ht_rand_seed(&s->rng, seed);
	s->l = *l;
	for (int i = 0; i < 2; i++) {
		init_r(&s->ep[i].r, &c);
		if (sel) {
			assert_int_equal(htoe_retry_attach(&s->ep[i].r, s->ep[i].sb, 256), 0);
			assert_int_equal(htoe_retry_set_mode(&s->ep[i].r, HTOE_RETRY_SELECTIVE), 0);
		}
	}
	s->ep[0].total = n_a;
	s->ep[1].total = n_b;

	uint64_t steps = 0;
	const uint64_t max_steps = 50ull * (n_a + n_b) + 100000;
	while (!sim_done(s)) {
		assert_true(++steps < max_steps);
		/* outputs due now */
		for (int i = 0; i < 2; i++)
			ep_output(s, i);
		/* advance time to the next event */
		uint64_t t = HTOE_RETRY_NEVER;
		if (s->ch.n)
			t = s->ch.h[0].at;
		for (int i = 0; i < 2; i++) {
			uint64_t w = ep_wants(s, i);
			if (w < t)
				t = w;
		}
		assert_true(t != HTOE_RETRY_NEVER); /* never stuck */
		if (t > s->now)
			s->now = t;
		while (s->ch.n && s->ch.h[0].at <= s->now) {
			struct wire_pkt p = chan_pop(&s->ch);
			ep_input(s, &p);
		}
		for (int i = 0; i < 2; i++)
			assert_int_not_equal(htoe_retry_tx_timer(&s->ep[i].r, s->now), HTOE_RETRY_LIMIT);
	}
	for (int i = 0; i < 2; i++) {
		const struct htoe_retry_stats *st = &s->ep[i].r.stats;
		assert_int_equal(s->ep[1 - i].delivered, s->ep[i].total);
		assert_int_equal(st->invalid_acks, 0);
		assert_int_equal(st->frames_sent, s->ep[i].total);
		if (l->loss_pct)
			assert_true(st->retransmitted > 0);
	}
	if (getenv("HTOE_TEST_VERBOSE")) {
		for (int i = 0; i < 2; i++) {
			const struct htoe_retry_stats *st = &s->ep[i].r.stats;
			printf("seed %llu ep%d: t=%lluus sent=%llu rexmit=%llu gobacks=%llu "
			       "timeouts=%llu naks_tx=%llu naks_rx=%llu ign=%llu dups=%llu ooo=%llu acks=%llu\n",
			       (unsigned long long)seed, i, (unsigned long long)(s->now / 1000),
			       (unsigned long long)st->frames_sent,
			       (unsigned long long)st->retransmitted, (unsigned long long)st->gobacks,
			       (unsigned long long)st->timeouts, (unsigned long long)st->naks_sent,
			       (unsigned long long)st->naks_received, (unsigned long long)st->naks_ignored,
			       (unsigned long long)st->dups, (unsigned long long)st->out_of_order,
			       (unsigned long long)st->acks_sent);
		}
	}
	if (l->dup_pct)
		assert_true(s->ep[0].r.stats.dups + s->ep[1].r.stats.dups > 0);
	if (l->reorder_pct || l->loss_pct)
		assert_true(s->ep[0].r.stats.out_of_order + s->ep[1].r.stats.out_of_order > 0);
	if (sel && l->loss_pct)
		for (int i = 0; i < 2; i++)
			assert_true(s->ep[1 - i].r.stats.held > 0 && s->ep[i].r.stats.sacks_received > 0);
}

/* The same channels in selective mode: every payload still arrives exactly
 * once and in order, and far fewer frames are resent than by Go-Back-N. */
static void run_both(uint64_t seed, uint32_t n_a, uint32_t n_b, uint16_t window,
		     const struct lossy *l, uint64_t *rtx_gbn, uint64_t *rtx_sel, uint64_t *lost_sel)
{
	g_sim.sel = false;
	run_lossy(seed, n_a, n_b, window, l);
	*rtx_gbn += g_sim.ep[0].r.stats.retransmitted + g_sim.ep[1].r.stats.retransmitted;
	g_sim.sel = true;
	run_lossy(seed, n_a, n_b, window, l);
	*rtx_sel += g_sim.ep[0].r.stats.retransmitted + g_sim.ep[1].r.stats.retransmitted;
	*lost_sel += g_sim.ep[0].lost_data + g_sim.ep[1].lost_data;
	g_sim.sel = false;
}

static void test_sel_lossy_channel(void **state)
{
	(void)state;
	uint64_t gbn = 0, sel = 0, lost = 0;
	/* loss and duplication, little reordering */
	const struct lossy l = {
		.loss_pct = 5, .dup_pct = 1, .reorder_pct = 1,
		.base_ns = 2000, .jitter_ns = 50, .reorder_ns = 1000, .gap_ns = 100,
	};
	for (uint64_t seed = 1; seed <= 6; seed++)
		run_both(seed, 3000, 2000, 64, &l, &gbn, &sel, &lost);
	/* selective resends about what was lost; Go-Back-N several times more */
	assert_true(sel * 2 <= lost * 3);
	assert_true(sel * 3 < gbn);
}

static void test_sel_lossy_channel_heavy(void **state)
{
	(void)state;
	uint64_t gbn = 0, sel = 0, lost = 0;
	const struct lossy l = {
		.loss_pct = 30, .dup_pct = 20, .reorder_pct = 40,
		.base_ns = 1000, .jitter_ns = 500, .reorder_ns = 20000, .gap_ns = 50,
	};
	for (uint64_t seed = 100; seed < 104; seed++)
		run_both(seed, 1500, 1500, 16, &l, &gbn, &sel, &lost);
	/* wrap-around with a full window of 256 */
	const struct lossy w = {
		.loss_pct = 2, .dup_pct = 2, .reorder_pct = 2,
		.base_ns = 2000, .jitter_ns = 20, .reorder_ns = 3000, .gap_ns = 100,
	};
	g_sim.sel = true;
	run_lossy(7, 70000, 500, 256, &w);
	g_sim.sel = false;
}

static void test_lossy_channel(void **state)
{
	(void)state;
	const struct lossy l = {
		.loss_pct = 10, .dup_pct = 5, .reorder_pct = 10,
		.base_ns = 2000, .jitter_ns = 50, .reorder_ns = 6000, .gap_ns = 100,
	};
	for (uint64_t seed = 1; seed <= 8; seed++)
		run_lossy(seed, 3000, 2000, 64, &l);
}

static void test_lossy_channel_heavy(void **state)
{
	(void)state;
	const struct lossy l = {
		.loss_pct = 30, .dup_pct = 20, .reorder_pct = 40,
		.base_ns = 1000, .jitter_ns = 500, .reorder_ns = 20000, .gap_ns = 50,
	};
	for (uint64_t seed = 100; seed < 104; seed++)
		run_lossy(seed, 1500, 1500, 16, &l);
}

static void test_lossy_channel_wrap(void **state)
{
	(void)state;
	/* more than 65536 frames one way, through loss: crosses the wrap */
	const struct lossy l = {
		.loss_pct = 2, .dup_pct = 2, .reorder_pct = 2,
		.base_ns = 2000, .jitter_ns = 20, .reorder_ns = 3000, .gap_ns = 100,
	};
	run_lossy(7, 70000, 500, 256, &l);
}

static void test_lossy_channel_clean(void **state)
{
	(void)state;
	/* no loss at all: no retransmission, no timeout */
	const struct lossy l = { .base_ns = 2000, .jitter_ns = 0, .gap_ns = 100 };
	run_lossy(3, 5000, 5000, 64, &l);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(g_sim.ep[i].r.stats.retransmitted, 0);
		assert_int_equal(g_sim.ep[i].r.stats.timeouts, 0);
		assert_int_equal(g_sim.ep[i].r.stats.naks_sent, 0);
		assert_int_equal(g_sim.ep[i].r.stats.dups, 0);
		assert_true(g_sim.ep[i].r.stats.acks_sent > 0);
	}
}

/* ---- selective mode ------------------------------------------------------ */

static struct htoe_retry_sb g_sb[2][64];

/* r in selective mode with the default config (window 64). */
static void init_sel(struct htoe_retry *r, int k)
{
	struct htoe_retry_cfg c = cfg_default();

	c.rto_init_ns = 100000; /* far from the reordering timer's times */
	c.rto_max_ns = 1000000;
	init_r(r, &c);
	assert_int_equal(htoe_retry_attach(r, g_sb[k], 64), 0);
	assert_int_equal(htoe_retry_set_mode(r, HTOE_RETRY_SELECTIVE), 0);
	assert_int_equal(htoe_retry_mode(r), HTOE_RETRY_SELECTIVE);
}

static void check_ok(const struct htoe_retry *r)
{
	char err[160];

	if (htoe_retry_check(r, err, sizeof(err)) != 0)
		fail_msg("%s", err);
	if (htoe_retry_check_full(r, err, sizeof(err)) != 0)
		fail_msg("full walk: %s", err);
}


/* A SACK block: ack-relative offsets given in offs[0..n). */
static size_t mk_sack(uint8_t *b, const unsigned *offs, unsigned n, unsigned words)
{
	memset(b, 0, HTOE_SACK_HDR_LEN + 4u * words);
	b[0] = HTOE_SACK_FMT_BITMAP;
	b[1] = (uint8_t)words;
	for (unsigned i = 0; i < n; i++)
		b[HTOE_SACK_HDR_LEN + offs[i] / 8] |= (uint8_t)(0x80u >> (offs[i] % 8));
	return HTOE_SACK_HDR_LEN + 4u * words;
}

/* r's state is wrong: the check (walking only what is outstanding and
 * held) and the full walk both say so. */
#define check_fails(r)                                                                  \
	do {                                                                            \
		char err_[160];                                                         \
		assert_int_equal(htoe_retry_check((r), err_, sizeof(err_)), -EINVAL);    \
		assert_int_equal(htoe_retry_check_full((r), err_, sizeof(err_)), -EINVAL); \
	} while (0)

/* The scoreboard's TX flags as htoe_retry.c spells them. */
#define T_SACKED 0x01u
#define T_LOST   0x02u

/* r selective (scoreboard g_sb[k]): 0..5 sent, 0 and 1 acked, 3 SACKed. */
static void init_checked(struct htoe_retry *r, int k)
{
	uint8_t blk[8];
	unsigned off = 1;

	init_sel(r, k);
	for (int i = 0; i < 6; i++)
		send1(r, 0);
	assert_int_equal(htoe_retry_tx_ack(r, 2, 10), 2);
	assert_int_equal(htoe_retry_tx_sack(r, 2, blk, mk_sack(blk, &off, 1, 1), 10), 1);
	assert_true(g_sb[k][3].flags & T_SACKED);
	check_ok(r);
}

/* htoe_retry_tx_take, calls on the receiving side, then htoe_retry_tx_sent
 * (the sender settles the second half after the frame has left) leave r as
 * htoe_retry_tx_send before those calls does: the same timers, RTT samples,
 * acks and scoreboard; and r is consistent between the halves. */
static void test_take_sent_is_send(void **state)
{
	struct htoe_retry a, b;
	uint64_t t = 0;

	(void)state;
	init_sel(&a, 0);
	init_sel(&b, 1);
	for (unsigned i = 0; i < 40; i++) {
		uint16_t sa = 0, sb;

		t += 700;
		assert_int_equal(htoe_retry_tx_send(&a, t, &sa), 0);
		sb = htoe_retry_tx_take(&b);
		assert_int_equal(sb, sa);
		assert_int_equal(b.stats.frames_sent, a.stats.frames_sent);
		check_ok(&b);
		/* the peer's frame i arrives before the bookkeeping */
		assert_int_equal(htoe_retry_rx_frame(&b, (uint16_t)i, t + 50), HTOE_RX_ACCEPT);
		assert_int_equal(htoe_retry_rx_frame(&a, (uint16_t)i, t + 50), HTOE_RX_ACCEPT);
		assert_int_equal(htoe_retry_rx_ack_value(&b), htoe_retry_rx_ack_value(&a));
		htoe_retry_tx_sent(&b, sb, t);
		check_ok(&b);
		if (i % 3 == 2) { /* the ack of all but the last frame */
			t += 300;
			assert_int_equal(htoe_retry_tx_ack(&a, sa, t), htoe_retry_tx_ack(&b, sb, t));
		}
		assert_int_equal(htoe_retry_next_deadline(&b), htoe_retry_next_deadline(&a));
		assert_int_equal(htoe_retry_tx_outstanding(&b), htoe_retry_tx_outstanding(&a));
		assert_int_equal(htoe_retry_srtt(&b), htoe_retry_srtt(&a));
		assert_int_equal(htoe_retry_tx_rto(&b), htoe_retry_tx_rto(&a));
	}
	assert_true(htoe_retry_srtt(&a) > 0); /* the comparison covered RTT samples */
	assert_true(htoe_retry_next_deadline(&a) != HTOE_RETRY_NEVER);
	assert_memory_equal(g_sb[0], g_sb[1], sizeof(g_sb[0]));
}

/* Each invariant htoe_retry_check() states can fail, though it walks only
 * the outstanding and held frames. */
static void test_sel_check_catches(void **state)
{
	struct htoe_retry r;
	char err[160];

	(void)state;
	/* flags left on a delivered frame (a release that forgot to clear) */
	init_checked(&r, 0);
	g_sb[0][1].flags |= T_SACKED;
	r.sb_txf++;
	check_fails(&r);
	/* flags written behind the count on a frame not sent: the full walk
	 * sees them at once, the check when the entry is next written */
	init_checked(&r, 0);
	g_sb[0][9].flags |= T_SACKED;
	assert_int_equal(htoe_retry_check_full(&r, err, sizeof(err)), -EINVAL);
	for (int i = 6; i < 10; i++)
		send1(&r, 20);
	check_fails(&r);
	/* an outstanding frame both SACKed and lost */
	init_checked(&r, 0);
	g_sb[0][3].flags |= T_LOST;
	r.lost_n++;
	check_fails(&r);
	/* lost frames miscounted */
	init_checked(&r, 0);
	r.lost_n++;
	check_fails(&r);
	/* more held frames counted than held (fewer: a flag behind the count,
	 * below) */
	init_checked(&r, 0);
	assert_int_equal(htoe_retry_rx_frame(&r, 2, 10), HTOE_RX_OUT_OF_ORDER);
	assert_int_equal(htoe_retry_rx_hold(&r, 2, 10), 0);
	check_ok(&r);
	r.rx_held++;
	check_fails(&r);
	/* a held flag behind the count: the full walk sees it, the check once
	 * the frame is delivered */
	init_checked(&r, 0);
	g_sb[0][1].flags |= HTOE_RETRY_SB_HELD;
	assert_int_equal(htoe_retry_check_full(&r, err, sizeof(err)), -EINVAL);
	assert_int_equal(htoe_retry_rx_frame(&r, 0, 10), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_frame(&r, 1, 10), HTOE_RX_ACCEPT);
	check_fails(&r);
	/* selective state in Go-Back-N mode */
	init_checked(&r, 0);
	g_sb[0][4].flags |= T_LOST;
	r.sb_txf++;
	r.lost_n++;
	check_ok(&r);
	r.sel = false;
	check_fails(&r);
}

static void test_sel_mode_setup(void **state)
{
	struct htoe_retry r;
	struct htoe_retry_cfg c = cfg_default();
	uint8_t blk[8];
	unsigned off = 1;

	(void)state;
	init_r(&r, &c);
	/* no memory: selective refused, GBN stays */
	assert_int_equal(htoe_retry_set_mode(&r, HTOE_RETRY_SELECTIVE), -EINVAL);
	assert_int_equal(htoe_retry_attach(&r, g_sb[0], 32), -EINVAL); /* < window */
	assert_int_equal(htoe_retry_attach(&r, g_sb[0], 48), -EINVAL); /* not 2^k */
	assert_int_equal(htoe_retry_attach(&r, g_sb[0], 64), 0);
	/* GBN with memory attached: nothing is held, SACK blocks ignored */
	send1(&r, 0);
	send1(&r, 0);
	assert_int_equal(htoe_retry_set_mode(&r, HTOE_RETRY_SELECTIVE), -EINVAL); /* outstanding */
	assert_false(htoe_retry_rx_can_hold(&r, 1));
	assert_int_equal(htoe_retry_tx_sack(&r, 0, blk, mk_sack(blk, &off, 1, 1), 0), 0);
	assert_int_equal(htoe_retry_rx_sack(&r, blk, sizeof(blk)), 0);
	/* reset returns to GBN; then selective may be chosen */
	htoe_retry_reset(&r);
	assert_int_equal(htoe_retry_mode(&r), HTOE_RETRY_GBN);
	assert_int_equal(htoe_retry_set_mode(&r, HTOE_RETRY_SELECTIVE), 0);
	htoe_retry_reset(&r);
	assert_int_equal(htoe_retry_mode(&r), HTOE_RETRY_GBN);
	check_ok(&r);
}

/* The receiver holds frames after a gap, reports them, and delivers
 * strictly in sequence once the gap is filled. */
static void test_sel_rx_hold_in_order(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	int n;

	(void)state;
	init_sel(&r, 0);
	assert_int_equal(htoe_retry_rx_frame(&r, 0, 0), HTOE_RX_ACCEPT);
	htoe_retry_rx_ack_sent(&r, 0);
	/* 1 lost; 2 and 4 arrive: held */
	assert_int_equal(htoe_retry_rx_frame(&r, 2, 10), HTOE_RX_OUT_OF_ORDER);
	assert_true(htoe_retry_rx_can_hold(&r, 2));
	assert_int_equal(htoe_retry_rx_hold(&r, 2, 10), 0);
	assert_true(htoe_retry_rx_nak_due(&r, 10));     /* first gap: NAK at once */
	assert_int_equal(htoe_retry_rx_frame(&r, 4, 11), HTOE_RX_OUT_OF_ORDER);
	assert_int_equal(htoe_retry_rx_hold(&r, 4, 11), 0);
	assert_true(htoe_retry_rx_ack_due(&r, 11));     /* a new hole: at once */
	/* a copy of a held frame is a duplicate, never held twice */
	assert_int_equal(htoe_retry_rx_frame(&r, 2, 12), HTOE_RX_DUP);
	assert_false(htoe_retry_rx_can_hold(&r, 2));
	assert_int_equal(htoe_retry_rx_hold(&r, 2, 12), -EINVAL);
	assert_int_equal(htoe_retry_rx_held(&r), 2);
	/* the SACK block: ack 1, offsets 1 (seq 2) and 3 (seq 4), DUP seen */
	assert_true(htoe_retry_rx_sack_due(&r));
	n = htoe_retry_rx_sack(&r, blk, sizeof(blk));
	assert_int_equal(n, 8);
	assert_int_equal(blk[0], HTOE_SACK_FMT_BITMAP);
	assert_int_equal(blk[1], 1);
	assert_int_equal(blk[2], HTOE_SACK_F_DUP);
	assert_int_equal(blk[3], 0);
	assert_int_equal(blk[4], 0x50);                 /* 0101 0000 */
	assert_int_equal(blk[5] | blk[6] | blk[7], 0);
	assert_int_equal(htoe_retry_rx_ack_value(&r), 1);
	/* nothing is delivered out of order: 1 arrives, then 2 (held) follows,
	 * 3 is still missing */
	assert_int_equal(htoe_retry_rx_frame(&r, 1, 20), HTOE_RX_ACCEPT);
	assert_true(htoe_retry_rx_is_held(&r, 2));
	assert_int_equal(htoe_retry_rx_frame(&r, 2, 20), HTOE_RX_ACCEPT);
	assert_false(htoe_retry_rx_is_held(&r, 3));
	assert_int_equal(htoe_retry_rx_ack_value(&r), 3);
	assert_true(htoe_retry_rx_ack_due(&r, 20));
	check_ok(&r);
	assert_int_equal(htoe_retry_rx_frame(&r, 3, 30), HTOE_RX_ACCEPT);
	assert_true(htoe_retry_rx_is_held(&r, 4));
	assert_int_equal(htoe_retry_rx_frame(&r, 4, 30), HTOE_RX_ACCEPT);
	assert_int_equal(htoe_retry_rx_held(&r), 0);
	assert_false(htoe_retry_rx_sack_due(&r));
	assert_int_equal(htoe_retry_rx_sack(&r, blk, sizeof(blk)), 0);
	/* bounded: nothing is held a full scoreboard ahead */
	assert_false(htoe_retry_rx_can_hold(&r, (uint16_t)(5 + 64)));
	assert_true(htoe_retry_rx_can_hold(&r, (uint16_t)(5 + 63)));
	check_ok(&r);
}

/* The sender resends only the frames the SACK shows missing. */
static void test_sel_tx_resends_missing(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 2, 3, 4 }; /* ack 1: seqs 3, 4, 5 held */
	uint16_t seq;

	(void)state;
	init_sel(&r, 0);
	for (int i = 0; i < 6; i++)
		send1(&r, 0);
	/* ack 1 at t=100 (frame 0 delivered), then the SACK */
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 100), 1);
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, held, 3, 1), 100), 3);
	/* 1 and 2 were sent with (before) the delivered ones: lost once the
	 * reordering window has passed (the timer says when) */
	uint64_t t = htoe_retry_next_deadline(&r);
	assert_true(t > 100 && t < 100000); /* before the RTO */
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
	assert_true(htoe_retry_tx_in_goback(&r));
	assert_false(htoe_retry_tx_can_send(&r));
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 1);
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 2);
	assert_false(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_true(htoe_retry_tx_can_send(&r));
	assert_int_equal(r.stats.retransmitted, 2);
	assert_int_equal(r.stats.timeouts, 0);
	check_ok(&r);
	/* the repaired gap: everything acknowledged */
	assert_int_equal(htoe_retry_tx_ack(&r, 6, t + 50), 5);
	assert_int_equal(htoe_retry_tx_outstanding(&r), 0);
	check_ok(&r);
}

/* A lost retransmission is found by the same rule, without the RTO. */
static void test_sel_lost_retransmission(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	unsigned held[8];
	uint16_t seq;

	(void)state;
	init_sel(&r, 0);
	for (int i = 0; i < 4; i++)
		send1(&r, 0);
	for (unsigned i = 0; i < 3; i++)
		held[i] = i + 1; /* 1..3 held, 0 missing */
	htoe_retry_tx_sack(&r, 0, blk, mk_sack(blk, held, 3, 1), 200);
	uint64_t t = htoe_retry_next_deadline(&r);
	htoe_retry_tx_timer(&r, t);
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 0);
	/* the copy is lost too; new frames go after it and arrive */
	send1(&r, t + 10);
	send1(&r, t + 10);
	for (unsigned i = 0; i < 5; i++)
		held[i] = i + 1; /* 1..5 */
	htoe_retry_tx_sack(&r, 0, blk, mk_sack(blk, held, 5, 1), t + 500);
	uint64_t t2 = htoe_retry_next_deadline(&r);
	assert_true(t2 < t + 100000); /* well before the RTO of the copy */
	htoe_retry_tx_timer(&r, t2);
	assert_true(htoe_retry_tx_retransmit_at(&r, t2, &seq));
	assert_int_equal(seq, 0);
	assert_int_equal(r.stats.timeouts, 0);
	assert_int_equal(r.stats.retransmitted, 2);
	check_ok(&r);
}

/* The wire is hostile: malformed, stale, duplicate and forged SACK blocks
 * change nothing they should not. */
static void test_sel_hostile_sack(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	unsigned offs[40];
	size_t n;

	(void)state;
	init_sel(&r, 0);
	for (int i = 0; i < 4; i++)
		send1(&r, 0);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 10), 1);
	/* malformed: format, word count, length, reserved bits */
	n = mk_sack(blk, NULL, 0, 1);
	blk[0] = 2;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, n, 10), -EINVAL);
	n = mk_sack(blk, NULL, 0, 1);
	blk[1] = 0;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, n, 10), -EINVAL);
	n = mk_sack(blk, NULL, 0, 2);
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, n - 4, 10), -EINVAL);
	blk[1] = 129;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, HTOE_SACK_MAX_LEN, 10), -EINVAL);
	n = mk_sack(blk, NULL, 0, 1);
	blk[2] = 0x02;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, n, 10), -EINVAL);
	n = mk_sack(blk, NULL, 0, 1);
	blk[3] = 1;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, n, 10), -EINVAL);
	assert_int_equal(r.stats.sack_invalid, 6);
	assert_int_equal(htoe_retry_tx_outstanding(&r), 3);
	/* forged: claims frames 1..40 (only 1..3 were sent): the ones never
	 * sent are ignored and counted; the rest is as if 2, 3 were SACKed */
	for (unsigned i = 0; i < 40; i++)
		offs[i] = i + 1;
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, offs, 40, 2), 20), 2);
	assert_int_equal(r.stats.sack_invalid, 7);
	assert_int_equal(htoe_retry_tx_next_seq(&r), 4);
	check_ok(&r);
	/* the same block again, and a stale one relative to an old ack:
	 * nothing new */
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, offs, 40, 2), 30), 0);
	offs[0] = 0; /* relative to ack 0: seq 0, acknowledged already */
	assert_int_equal(htoe_retry_tx_sack(&r, 0, blk, mk_sack(blk, offs, 1, 1), 30), 0);
	/* a false SACK cannot stop the oldest frame from being resent: the
	 * RTO resends una whatever the peer claimed */
	assert_int_equal(htoe_retry_tx_timer(&r, 200000), HTOE_RETRY_GOBACK);
	uint16_t seq;
	assert_true(htoe_retry_tx_retransmit_at(&r, 200000, &seq));
	assert_int_equal(seq, 1);
	check_ok(&r);
	/* an ack beyond next_seq stays invalid */
	assert_int_equal(htoe_retry_tx_ack(&r, 9, 200000), -EINVAL);
	check_ok(&r);
}

/* A NAK without a SACK block (the peer could not hold, e.g. a Go-Back-N
 * peer): every frame not SACKed from the NAK on is resent. */
static void test_sel_nak_without_sack(void **state)
{
	struct htoe_retry r;
	uint16_t seq;

	(void)state;
	init_sel(&r, 0);
	for (int i = 0; i < 5; i++)
		send1(&r, 0);
	assert_int_equal(htoe_retry_tx_nak(&r, 2, 100), 2);
	for (uint16_t want = 2; want < 5; want++) {
		assert_true(htoe_retry_tx_retransmit_at(&r, 100, &seq));
		assert_int_equal(seq, want);
	}
	assert_false(htoe_retry_tx_retransmit_at(&r, 100, &seq));
	check_ok(&r);
}

/* Fires the probes a silent peer gets before the RTO takes over: from the
 * next deadline on, one base delay (2 SRTT + ack_delay 300) apart, each
 * resending `last`, HTOE_RETRY_TLP_SILENT of them or as many as come
 * before the RTO; the time of the last one, and their number in *n. */
static uint64_t silent_probes(struct htoe_retry *r, uint16_t last, unsigned *n)
{
	uint64_t base = 2 * htoe_retry_srtt(r) + 300, d = 0, p0 = r->stats.tail_probes;
	uint16_t seq;
	unsigned k;

	for (k = 0; k < HTOE_RETRY_TLP_SILENT; k++) {
		uint64_t t = htoe_retry_next_deadline(r);

		if (k && t == r->rto_deadline) /* the next would come after it */
			break;
		if (k)
			assert_int_equal(t, d + base);
		d = t;
		assert_int_equal(htoe_retry_tx_timer(r, d), HTOE_RETRY_IDLE);
		assert_true(htoe_retry_tx_retransmit_at(r, d, &seq));
		assert_int_equal(seq, last);
		assert_false(htoe_retry_tx_retransmit_at(r, d, &seq));
	}
	/* stopped by the count, or by the RTO: the next probe's time is past it */
	assert_true(k == HTOE_RETRY_TLP_SILENT || d + base >= r->rto_deadline);
	assert_int_equal(r->stats.tail_probes, p0 + k);
	*n = k;
	return d;
}

/* A lost tail is probed after about two round trips, well before the RTO:
 * the last frame is resent, and its SACK exposes the lost ones before it. */
static void test_sel_tail_probe(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 2 };
	uint16_t seq;

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 1000), 1); /* an RTT sample: 1 us */
	send1(&r, 2000);
	send1(&r, 2000);
	send1(&r, 2000); /* 1..3; all lost, nothing comes back */
	uint64_t t = htoe_retry_next_deadline(&r);
	assert_int_equal(t, 2000 + 2 * htoe_retry_srtt(&r) + 300); /* ack_delay 300 */
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 3); /* the probe: the last frame */
	assert_false(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(r.stats.tail_probes, 1);
	/* the probe may be lost too: the next one a base delay after it */
	assert_int_equal(htoe_retry_next_deadline(&r), t + 2 * htoe_retry_srtt(&r) + 300);
	/* the probe arrives: ack 1, seq 3 held -> 1 and 2 lost, resent */
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, held, 1, 1), t + 1000), 1);
	uint64_t t2 = t + 1000; /* overdue already: lost at once */
	assert_true(htoe_retry_tx_in_goback(&r));
	assert_true(htoe_retry_tx_retransmit_at(&r, t2, &seq));
	assert_int_equal(seq, 1);
	assert_true(htoe_retry_tx_retransmit_at(&r, t2, &seq));
	assert_int_equal(seq, 2);
	assert_int_equal(r.stats.timeouts, 0);
	check_ok(&r);
}

/* An RTT of 1 us, frames 1..4 sent at 2000 and lost, then n probes one
 * base delay apart (each the last frame, 4, and before the RTO), the n-th
 * answered by a SACK of 4 (with the DUP flag if `dup`) that exposes 1..3,
 * resent at once, and an ack of all: no timeout. The time of the last
 * probe. */
static uint64_t burst_probes(struct htoe_retry *r, unsigned n, bool dup)
{
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 3 };
	uint64_t base, t = 2000;
	uint16_t seq;

	init_sel(r, 0);
	send1(r, 0);
	assert_int_equal(htoe_retry_tx_ack(r, 1, 1000), 1); /* RTT 1 us */
	base = 2 * htoe_retry_srtt(r) + 300;
	for (int i = 0; i < 4; i++)
		send1(r, 2000); /* 1..4, all lost */
	for (unsigned k = 0; k < n; k++) {
		assert_int_equal(htoe_retry_next_deadline(r), t + base);
		t += base;
		assert_true(t < r->rto_deadline);
		assert_int_equal(htoe_retry_tx_timer(r, t), HTOE_RETRY_IDLE);
		assert_true(htoe_retry_tx_retransmit_at(r, t, &seq));
		assert_int_equal(seq, 4); /* each probe: the last frame */
	}
	size_t len = mk_sack(blk, held, 1, 1);

	if (dup)
		blk[2] = HTOE_SACK_F_DUP;
	assert_int_equal(htoe_retry_tx_sack(r, 1, blk, len, t + 1000), 1);
	for (uint16_t want = 1; want <= 3; want++) {
		assert_true(htoe_retry_tx_retransmit_at(r, t + 1000, &seq));
		assert_int_equal(seq, want);
	}
	assert_int_equal(htoe_retry_tx_ack(r, 5, t + 2000), 4);
	assert_int_equal(r->stats.timeouts, 0);
	assert_int_equal(r->stats.tail_probes, n);
	check_ok(r);
	return t;
}

/* A burst that swallows the tail, the first probe and the peer's answer to
 * the second (a burst counted in frames on the path of the acks, which
 * carries nothing else while the sender waits for credits) is crossed by
 * the third probe, one base delay after the second (its copy is a
 * duplicate to the peer: the SACK has the DUP flag): no timeout, and the
 * lost frames are repaired within a few round trips, not milliseconds. */
static void test_sel_burst_eats_probes(void **state)
{
	struct htoe_retry r;
	uint64_t t;

	(void)state;
	t = burst_probes(&r, 3, true);
	assert_true(t + 2000 < 2000 + htoe_retry_tx_rto(&r) / 4);
}

/* A burst counted in frames (a flaky link, or a switch buffer that drops
 * everything for a while) may outlast the tail and many probes, each
 * lost with the odds of the burst going on: with an RTO of 100 us against
 * a 1 us round trip, probes keep their base delay until the RTO, up to
 * HTOE_RETRY_TLP_SILENT of them, so that the 21st crosses the burst and
 * repairs the window with no timeout. */
static void test_sel_long_burst_probes(void **state)
{
	struct htoe_retry r;

	(void)state;
	burst_probes(&r, 21, false);
}

/* Probes the peer already had (a peer that acknowledges late, not a lost
 * tail: its SACK has the DUP flag) push the next probe back, its delay
 * doubled each time, until it would come after the RTO and none is armed;
 * a loss the peer's SACK exposes brings it back to 2 SRTT + ack_delay. */
static void test_sel_tail_probe_backoff(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 2 };
	uint64_t now = 2000, base;
	uint16_t seq, a;
	unsigned k;

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 1000), 1); /* an RTT sample: 1 us */
	base = 2 * htoe_retry_srtt(&r) + 300;                  /* + ack_delay */
	for (k = 0; now + (base << k) < now + r.rto_ns; k++) {
		uint16_t s = send1(&r, now);
		uint64_t t = htoe_retry_next_deadline(&r);

		assert_int_equal(t, now + (base << k));
		assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
		assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
		assert_int_equal(seq, s); /* the probe */
		/* the peer had it: the ack (no sooner than half an RTT, which
		 * would be a sign of its own) and a DUP SACK */
		assert_int_equal(htoe_retry_tx_ack(&r, (uint16_t)(s + 1), t + 600), 1);
		size_t len = mk_sack(blk, held, 0, 1);

		blk[2] = HTOE_SACK_F_DUP;
		assert_int_equal(htoe_retry_tx_sack(&r, (uint16_t)(s + 1), blk, len, t + 600), 0);
		now = t + 700;
	}
	assert_true(k >= 2);
	assert_int_equal(r.stats.tail_probes, k);
	assert_int_equal(r.stats.spurious, k);
	/* a probe now would come after the RTO: only the RTO is armed */
	a = send1(&r, now);
	send1(&r, now);
	send1(&r, now);
	assert_int_equal(htoe_retry_next_deadline(&r), now + r.rto_ns);
	/* the third frame arrives, the first two do not: lost (RACK), and
	 * the probe is back to its base delay */
	assert_int_equal(htoe_retry_tx_sack(&r, a, blk, mk_sack(blk, held, 1, 1), now + 5000), 1);
	uint64_t t = htoe_retry_next_deadline(&r); /* the reordering timer */

	assert_true(t < now + r.rto_ns);
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
	assert_int_equal(r.stats.rack_lost, 2);
	for (uint16_t want = a; want != (uint16_t)(a + 2); want++) {
		assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
		assert_int_equal(seq, want);
	}
	assert_int_equal(htoe_retry_tx_ack(&r, (uint16_t)(a + 3), t + 1000), 3);
	now = t + 2000;
	send1(&r, now);
	assert_int_equal(htoe_retry_next_deadline(&r), now + 2 * htoe_retry_srtt(&r) + 300);
	assert_int_equal(r.stats.timeouts, 0);
	check_ok(&r);
}

/* Fires every deadline (probe or RTO) until HTOE_RETRY_TLP_SILENT probes
 * and timeouts since the last progress have gone out, or two timeouts with
 * nothing from the peer (a silent peer is probed no more), checking that each
 * probe comes one base delay after the last transmission and resends the
 * last frame not SACKed (`last`), and that the k-th timeout in a row
 * resends the 2^(k-1) oldest frames from `first` (at most n_out); the time
 * of the last one, the timeouts in *timeouts. */
static uint64_t quick_phase(struct htoe_retry *r, uint16_t first, uint16_t last, unsigned n_out,
			    unsigned *timeouts)
{
	uint64_t base = 2 * htoe_retry_srtt(r) + 300, d = 0, prev = 0;
	unsigned to = 0, probes = 0;
	uint16_t seq;

	while (r->tlp_n < HTOE_RETRY_TLP_SILENT && r->silent_rtos < 2) {
		bool rto;

		d = htoe_retry_next_deadline(r);
		rto = d == r->rto_deadline;
		if (!rto && prev)
			assert_int_equal(d, prev + base);
		if (rto) {
			unsigned n = 1u << to;

			assert_int_equal(htoe_retry_tx_timer(r, d), HTOE_RETRY_GOBACK);
			to++;
			for (unsigned i = 0; i < n && i < n_out; i++) {
				assert_true(htoe_retry_tx_retransmit_at(r, d, &seq));
				assert_int_equal(seq, (uint16_t)(first + i));
			}
		} else {
			assert_int_equal(htoe_retry_tx_timer(r, d), HTOE_RETRY_IDLE);
			assert_true(htoe_retry_tx_retransmit_at(r, d, &seq));
			assert_int_equal(seq, last);
			probes++;
		}
		assert_false(htoe_retry_tx_retransmit_at(r, d, &seq));
		prev = d;
	}
	assert_true(probes + to == HTOE_RETRY_TLP_SILENT || to == 2);
	assert_int_equal(r->tlp_n, probes + to);
	*timeouts = to;
	return d;
}

/* A retransmission that is lost when nothing can be sent after it (the
 * peer holds every frame behind the hole, and with them every credit) is
 * probed before the RTO; should the probes be lost too, more follow at the
 * same delay, past the first RTO too (which resends it as well), up to
 * HTOE_RETRY_TLP_SILENT probes and timeouts since the progress or the
 * second timeout with nothing from the peer; then the peer, silent, is not
 * probed again until it answers. */
static void test_sel_probe_repeats(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 1, 2, 3 };
	uint64_t t, base, d;
	unsigned timeouts;
	uint16_t seq;

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 3000), 1); /* RTT 3 us */
	base = 2 * htoe_retry_srtt(&r) + 300;
	for (int i = 0; i < 4; i++)
		send1(&r, 2000); /* 1..4 */
	/* 2..4 arrive, 1 does not: resent at once (RACK), and lost again */
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, held, 3, 1), 6000), 3);
	t = htoe_retry_next_deadline(&r); /* the reordering timer */
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 1);
	/* the probes, one base delay later each: the only frame not SACKed;
	 * the RTOs between them resend it too */
	assert_int_equal(htoe_retry_next_deadline(&r), t + base);
	t = quick_phase(&r, 1, 1, 1, &timeouts);
	assert_true(timeouts >= 1);
	/* all lost, and the peer is silent: only the RTO is armed */
	d = htoe_retry_next_deadline(&r);
	assert_int_equal(d, r.rto_deadline);
	/* the peer answers without progress (a repeated ack): it is alive and
	 * our frames may still be lost in a burst, so the probes resume at
	 * their base delay (HTOE_RETRY_TLP_SILENT since the progress bounds
	 * them) */
	assert_int_equal(htoe_retry_tx_ack(&r, 1, t + 500), 0);
	/* (an ack naming una after a timeout: 1 is resent at once, as ever) */
	while (htoe_retry_tx_retransmit_at(&r, t + 500, &seq))
		assert_int_equal(seq, 1);
	assert_true(r.tlp_n < HTOE_RETRY_TLP_SILENT);
	send1(&r, t + 600); /* a transmission re-arms the probe */
	d = htoe_retry_next_deadline(&r);
	assert_int_equal(d, t + 600 + base);
	assert_int_equal(r.stats.timeouts, timeouts);
	/* one gets through: progress, the probes start from their base again */
	assert_int_equal(htoe_retry_tx_ack(&r, 5, t + 1000), 4);
	send1(&r, t + 2000);
	assert_int_equal(htoe_retry_next_deadline(&r), t + 2000 + 2 * htoe_retry_srtt(&r) + 300);
	check_ok(&r);
}

/* Selective, an RTT of 3 us measured, then frames 1..n sent at 4000. */
static void init_sel_flight(struct htoe_retry *r, int n)
{
	init_sel(r, 0);
	send1(r, 0);
	assert_int_equal(htoe_retry_tx_ack(r, 1, 3000), 1);
	for (int i = 0; i < n; i++)
		send1(r, 4000);
}

/* A peer that never answers (gone, or its link down) gets the quick probes,
 * bounded by HTOE_RETRY_TLP_SILENT, and none after the second timeout with
 * nothing from it: only the RTO, until the liveness rule gives up on it at
 * its retry_limit + 1-th silent timeout (no probe storm, no endless
 * retry). */
static void test_sel_silent_peer_given_up(void **state)
{
	struct htoe_retry r;
	enum htoe_retry_timer v = HTOE_RETRY_IDLE;
	unsigned timeouts;
	uint64_t t, d, probes;
	uint16_t seq;

	(void)state;
	init_sel_flight(&r, 8);
	t = quick_phase(&r, 1, 8, 8, &timeouts);
	probes = r.stats.tail_probes;
	assert_true(probes <= HTOE_RETRY_TLP_SILENT);
	while (v != HTOE_RETRY_LIMIT) {
		d = htoe_retry_next_deadline(&r);
		assert_true(d > t);
		assert_int_equal(d, r.rto_deadline); /* no probe: the RTO alone */
		v = htoe_retry_tx_timer(&r, d);
		while (htoe_retry_tx_retransmit_at(&r, d, &seq))
			;
		t = d;
	}
	assert_int_equal(r.stats.tail_probes, probes);
	assert_int_equal(r.stats.timeouts, 3 + 1); /* retry_limit 3 */
	assert_int_equal(htoe_retry_next_deadline(&r), HTOE_RETRY_NEVER);
}

/* A peer that is not polled for a while (a descheduled poller) gets the
 * quick probes (the last frame) and, per timeout, the oldest frame, then
 * the two oldest, the four oldest...: not the whole window each time; then
 * only timeouts. When it runs again, its answer releases everything and
 * nothing more is resent. */
static void test_sel_stalled_peer(void **state)
{
	struct htoe_retry r;
	uint64_t t, d;
	unsigned timeouts, k;
	uint16_t seq;

	(void)state;
	init_sel_flight(&r, 16);
	t = quick_phase(&r, 1, 16, 16, &timeouts);
	uint64_t rtx = r.stats.retransmitted;

	/* up to the third timeout with nothing from the peer (the fourth
	 * would give up on it, retry_limit 3), no probe between */
	for (k = timeouts; k < 3; k++) {
		d = htoe_retry_next_deadline(&r);
		assert_true(d > t);
		assert_int_equal(d, r.rto_deadline);
		assert_int_equal(htoe_retry_tx_timer(&r, d), HTOE_RETRY_GOBACK);
		for (uint16_t want = 1; want <= 16 && want <= 1u << k; want++) {
			assert_true(htoe_retry_tx_retransmit_at(&r, d, &seq));
			assert_int_equal(seq, want);
		}
		assert_false(htoe_retry_tx_retransmit_at(&r, d, &seq));
		t = d;
	}
	assert_int_equal(r.stats.tail_probes, r.tlp_n - 3);
	assert_int_equal(r.stats.timeouts, 3);
	assert_true(r.stats.retransmitted - rtx <= 32);
	/* it runs again: every frame arrived */
	assert_int_equal(htoe_retry_tx_ack(&r, 17, t + 100), 16);
	assert_int_equal(htoe_retry_tx_outstanding(&r), 0);
	assert_false(htoe_retry_tx_retransmit_at(&r, t + 100, &seq));
	assert_int_equal(htoe_retry_next_deadline(&r), HTOE_RETRY_NEVER);
	check_ok(&r);
}

/* An RTT sample that measured a stalled poller (its ack ended a silence
 * far longer than the path's round trip) leaves the RTO alone: a timeout
 * costs a copy or two in selective mode, while an RTO grown to the longest
 * stall would make every loss it repairs wait that long. Four such samples
 * in a row are the path's own round trip, which did grow. */
static void test_sel_rtt_stall(void **state)
{
	struct htoe_retry r;
	uint64_t now = 0, rto;

	(void)state;
	init_sel(&r, 0);
	r.cfg.rto_min_ns = 1000; /* the RTO follows the RTT */
	send1(&r, now);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, now + 3000), 1); /* RTT 3 us */
	assert_int_equal(htoe_retry_srtt(&r), 3000);
	rto = htoe_retry_tx_rto(&r);
	for (unsigned k = 0; k < 4; k++) { /* the peer stalls for 5 ms */
		now += 10000000;
		send1(&r, now);
		assert_int_equal(htoe_retry_tx_ack(&r, (uint16_t)(k + 2), now + 5000000), 1);
		assert_int_equal(htoe_retry_srtt(&r), 3000);
		assert_int_equal(htoe_retry_tx_rto(&r), rto);
	}
	assert_int_equal(r.stats.rtt_stalled, 4);
	/* a fifth in a row: the path's round trip is 5 ms now */
	now += 10000000;
	send1(&r, now);
	assert_int_equal(htoe_retry_tx_ack(&r, 6, now + 5000000), 1);
	assert_true(htoe_retry_srtt(&r) > 3000);
	assert_true(htoe_retry_tx_rto(&r) > rto);
	/* an ordinary sample is taken as ever */
	now += 10000000;
	send1(&r, now);
	assert_int_equal(htoe_retry_tx_ack(&r, 7, now + 4000), 1);
	assert_int_equal(r.stats.rtt_stalled, 4);
	check_ok(&r);
}

/* The whole window lost (a burst): the timeout resends the oldest frame,
 * and the peer's answer to it exposes the others, resent at once without
 * another timeout. */
static void test_sel_rto_window_lost(void **state)
{
	struct htoe_retry r;
	uint64_t d;
	uint16_t seq;

	(void)state;
	init_sel_flight(&r, 8); /* all lost, and the probes too */
	silent_probes(&r, 8, &(unsigned){ 0 });
	d = htoe_retry_next_deadline(&r);
	assert_int_equal(htoe_retry_tx_timer(&r, d), HTOE_RETRY_GOBACK);
	assert_true(htoe_retry_tx_retransmit_at(&r, d, &seq));
	assert_int_equal(seq, 1);
	assert_false(htoe_retry_tx_retransmit_at(&r, d, &seq));
	/* 1's copy arrives: ack 2, one round trip later */
	assert_int_equal(htoe_retry_tx_ack(&r, 2, d + 3000), 1);
	for (uint16_t want = 2; want <= 7; want++) {
		assert_true(htoe_retry_tx_retransmit_at(&r, d + 3000, &seq));
		assert_int_equal(seq, want);
	}
	/* 8 was probed after 2..7 were last sent: its own copy may still come */
	assert_int_equal(r.stats.timeouts, 1);
	check_ok(&r);
}

/* Progress that is not of the oldest frame (a SACK of frames sent after a
 * lost one) collapses the RTO's backoff too. */
static void test_sel_sack_collapses_backoff(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 1 };
	uint64_t t;

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);
	send1(&r, 0);
	t = htoe_retry_next_deadline(&r);
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_GOBACK);
	t = htoe_retry_next_deadline(&r);
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_GOBACK);
	assert_int_equal(htoe_retry_tx_rto(&r), 400000);
	assert_int_equal(htoe_retry_tx_sack(&r, 0, blk, mk_sack(blk, held, 1, 1), t + 10), 1);
	assert_int_equal(htoe_retry_tx_rto(&r), 100000);
	assert_int_equal(htoe_retry_next_deadline(&r), t + 10 + 100000);
	check_ok(&r);
}

/* The RTT is timed to the first sign that the frame arrived (its SACK),
 * not to the cumulative ack that waits for the repair of a hole before it:
 * that would add the repair to every estimate derived from the RTT. */
static void test_sel_rtt_from_sack(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 1 };

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);   /* 0: timed */
	send1(&r, 500); /* 1: lost */
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 1000), 1); /* RTT 1 us */
	send1(&r, 2000); /* 2: timed, arrives */
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, held, 1, 1), 3000), 1);
	assert_int_equal(htoe_retry_srtt(&r), 1000);
	assert_int_equal(htoe_retry_tx_ack(&r, 3, 50000), 2); /* after a long repair */
	assert_int_equal(htoe_retry_srtt(&r), 1000);
	assert_int_equal(r.stats.rtt_samples, 2);
	check_ok(&r);
}

/* Selective, an RTT of 1 us, one frame sent at 2000 and probed at *t (it
 * had arrived): the frame's seq. */
static uint16_t sel_probed(struct htoe_retry *r, uint64_t *t)
{
	uint16_t seq, s;

	init_sel(r, 0);
	send1(r, 0);
	assert_int_equal(htoe_retry_tx_ack(r, 1, 1000), 1);
	s = send1(r, 2000);
	*t = htoe_retry_next_deadline(r);
	assert_int_equal(htoe_retry_tx_timer(r, *t), HTOE_RETRY_IDLE);
	assert_true(htoe_retry_tx_retransmit_at(r, *t, &seq));
	assert_int_equal(seq, s);
	return s;
}

/* The frame of sel_probed() is acknowledged `after` the probe, with a
 * DUP report: that answers the probe (one spurious retransmission), no
 * sign of reordering. The SACK block in blk, its length returned. */
static size_t dup_answers_probe(struct htoe_retry *r, uint64_t after, uint8_t *blk)
{
	uint64_t t;
	uint16_t s = sel_probed(r, &t);
	size_t len = mk_sack(blk, NULL, 0, 1);

	assert_int_equal(htoe_retry_tx_ack(r, (uint16_t)(s + 1), t + after), 1);
	blk[2] = HTOE_SACK_F_DUP;
	assert_int_equal(htoe_retry_tx_sack(r, (uint16_t)(s + 1), blk, len, t + after), 0);
	assert_int_equal(r->stats.spurious, 1);
	assert_int_equal(r->reo_mult, 1);
	return len;
}

/* A duplicate reported right after a probe answers the probe (its ack was
 * lost): the probes back off, the reordering window does not widen. */
static void test_sel_dup_after_probe(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];

	(void)state;
	dup_answers_probe(&r, 600, blk);
	assert_int_equal(r.tlp_shift, 1);
	check_ok(&r);
}

/* A peer that was not polled for a while reports the probe's copy as a
 * duplicate when it runs again, long after the probe (5 ms): the answer
 * to the probe too; a second duplicate report after it is a sign of
 * reordering. */
static void test_sel_dup_after_stall(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	size_t len;

	(void)state;
	len = dup_answers_probe(&r, 5000000, blk);
	assert_int_equal(htoe_retry_tx_sack(&r, htoe_retry_tx_una(&r), blk, len, 9000000), 0);
	assert_int_equal(r.reo_mult, 2);
	check_ok(&r);
}

/* A retransmission reported sooner than any round trip allows speaks of
 * its original: it must not make every frame sent before the copy look
 * lost (RFC 8985, step 2). */
static void test_sel_fast_rtx_no_rack(void **state)
{
	struct htoe_retry r;
	uint8_t blk[HTOE_SACK_MAX_LEN];
	const unsigned held[] = { 1 };
	uint16_t seq;
	uint64_t t;

	(void)state;
	init_sel(&r, 0);
	send1(&r, 0);
	assert_int_equal(htoe_retry_tx_ack(&r, 1, 10000), 1); /* RTT 10 us */
	send1(&r, 20000); /* 1: late */
	send1(&r, 20000); /* 2: arrives */
	assert_int_equal(htoe_retry_tx_sack(&r, 1, blk, mk_sack(blk, held, 1, 1), 30000), 1);
	send1(&r, 31000); /* 3, 4: on their way */
	send1(&r, 31000);
	t = htoe_retry_next_deadline(&r); /* 1 is overdue: resent */
	assert_true(t < 40000);
	assert_int_equal(htoe_retry_tx_timer(&r, t), HTOE_RETRY_IDLE);
	assert_true(htoe_retry_tx_retransmit_at(&r, t, &seq));
	assert_int_equal(seq, 1);
	/* the original of 1 arrived after all: acked 500 ns after the copy */
	assert_int_equal(htoe_retry_tx_ack(&r, 3, t + 500), 2);
	/* 3 and 4 were sent before the copy; nothing says they are lost */
	assert_int_equal(htoe_retry_tx_timer(&r, t + 12000), HTOE_RETRY_IDLE);
	assert_false(htoe_retry_tx_in_goback(&r));
	assert_int_equal(r.stats.rack_lost, 1);
	check_ok(&r);
}

/* two posted WrSized (dword, 32-bit address): 12 bytes each */
static const uint8_t rob_pl[] = {
	0x2C, 0x01, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11,
	0x2C, 0x01, 0x00, 0x04, 0x10, 0x00, 0x00, 0x00, 0xEF, 0xBE, 0xAD, 0xDE,
};

/* rob's state is wrong: the check (visiting the stored frames only) and
 * the full walk both say so. */
#define rob_fails(rob)                                                                  \
	do {                                                                            \
		char err_[160];                                                         \
		assert_int_equal(htoe_rob_check((rob), err_, sizeof(err_)), -EINVAL);    \
		assert_int_equal(htoe_rob_check_full((rob), err_, sizeof(err_)), -EINVAL); \
	} while (0)

/* Each invariant htoe_rob_check() states can fail. */
static void test_rob_check_catches(void **state)
{
	static struct htoe_rob_frame fr[8];
	static struct htoe_rob_pkt pk[6];
	struct htoe_rob rob;
	char err[160];
#define ROB_SETUP()                                                                   \
	do {                                                                          \
		assert_int_equal(htoe_rob_init(&rob, fr, 8, pk, 6, 2), 0);            \
		assert_int_equal(htoe_rob_put(&rob, 2, 0, rob_pl, sizeof(rob_pl), 2), 0);     \
		assert_int_equal(htoe_rob_put(&rob, 5, 1, rob_pl, sizeof(rob_pl), 2), 0);     \
		assert_true(htoe_rob_unpool(&rob, 5));                                \
		assert_int_equal(htoe_rob_check(&rob, err, sizeof(err)), 0);          \
		assert_int_equal(htoe_rob_check_full(&rob, err, sizeof(err)), 0);     \
	} while (0)

	(void)state;
	/* a frame stored but not counted (the last one, where the check stops
	 * early): its slots are neither used nor free */
	ROB_SETUP();
	rob.frames--;
	rob.pkts[1] -= 2;
	rob.data[1] -= 2;
	rob.upkts[1] -= 2;
	rob.udata[1] -= 2;
	rob.unpooled -= 2;
	rob_fails(&rob);
	/* a frame counted but not stored */
	ROB_SETUP();
	rob.frames++;
	rob_fails(&rob);
	/* a frame's packet count, or its entry, wrong */
	ROB_SETUP();
	fr[2].npkts++;
	rob_fails(&rob);
	ROB_SETUP();
	fr[5].seq = 6;
	rob_fails(&rob);
	/* slots lost from the free list */
	ROB_SETUP();
	rob.nfree--;
	rob_fails(&rob);
	/* per-VC counts */
	ROB_SETUP();
	rob.pkts[0]++;
	rob_fails(&rob);
	ROB_SETUP();
	rob.udata[1]--;
	rob_fails(&rob);
	/* unpooled packets beyond their slots */
	ROB_SETUP();
	rob.unpooled_max = 1;
	rob_fails(&rob);
#undef ROB_SETUP
}

/* The reorder buffer: bounded slots, packets kept in order. */
static void test_rob(void **state)
{
	static struct htoe_rob_frame fr[8];
	static struct htoe_rob_pkt pk[4];
	struct htoe_rob rob;
	char err[160];
	const uint8_t *pl = rob_pl;

	(void)state;
	assert_int_equal(htoe_rob_init(&rob, fr, 6, pk, 4, 0), -EINVAL);
	assert_int_equal(htoe_rob_init(&rob, fr, 8, pk, 4, 5), -EINVAL); /* unpooled > slots */
	assert_int_equal(htoe_rob_init(&rob, fr, 8, pk, 4, 2), 0);
	assert_int_equal(htoe_rob_put(&rob, 5, 0, pl, sizeof(rob_pl), 2), 0);
	assert_int_equal(htoe_rob_put(&rob, 13, 0, pl, sizeof(rob_pl), 2), -EEXIST); /* same slot */
	assert_int_equal(htoe_rob_put(&rob, 6, 0, pl, sizeof(rob_pl), 2), 0);
	assert_int_equal(htoe_rob_put(&rob, 7, 0, pl, 12, 1), -ENOSPC);         /* all slots used */
	assert_int_equal(htoe_rob_check(&rob, err, sizeof(err)), 0);
	const struct htoe_rob_frame *f = htoe_rob_get(&rob, 5);
	assert_non_null(f);
	assert_null(htoe_rob_get(&rob, 13));
	assert_int_equal(f->npkts, 2);
	assert_int_equal(f->ndata, 2);
	assert_memory_equal(pk[f->first].bytes, pl, 12);
	assert_memory_equal(pk[pk[f->first].next].bytes, pl + 12, 12);
	assert_int_equal(rob.pkts[0], 4);
	/* two slots for unpooled packets: one frame of two fits, not two */
	assert_true(htoe_rob_unpool(&rob, 5));
	assert_false(htoe_rob_unpool(&rob, 5));  /* already */
	assert_false(htoe_rob_unpool(&rob, 6));  /* no unpooled slot left */
	assert_false(htoe_rob_unpool(&rob, 13)); /* not stored */
	assert_int_equal(htoe_rob_pooled(&rob, 0, false), 2);
	assert_int_equal(htoe_rob_pooled(&rob, 0, true), 2);
	assert_int_equal(htoe_rob_check(&rob, err, sizeof(err)), 0);
	rob.unpooled++; /* a miscount is caught */
	assert_int_equal(htoe_rob_check(&rob, err, sizeof(err)), -EINVAL);
	rob.unpooled--;
	htoe_rob_free(&rob, 5);
	htoe_rob_free(&rob, 5); /* no-op */
	assert_int_equal(rob.unpooled, 0);
	assert_int_equal(htoe_rob_pooled(&rob, 0, false), 2);
	assert_true(htoe_rob_unpool(&rob, 6)); /* its slots are free again */
	assert_int_equal(htoe_rob_put(&rob, 7, 0, pl, 12, 1), 0);
	/* a payload that does not hold npkts packets is refused */
	assert_int_equal(htoe_rob_put(&rob, 0, 0, pl, 12, 2), -ENOSPC);
	assert_int_equal(htoe_rob_check(&rob, err, sizeof(err)), 0);
	assert_int_equal(rob.frames, 2);
	assert_int_equal(rob.nfree, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_arith),
		cmocka_unit_test(test_init_invalid),
		cmocka_unit_test(test_in_order),
		cmocka_unit_test(test_wraparound),
		cmocka_unit_test(test_dup_ooo),
		cmocka_unit_test(test_nak_once_per_gap),
		cmocka_unit_test(test_ack_every_and_delay),
		cmocka_unit_test(test_partial_ack),
		cmocka_unit_test(test_invalid_ack),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_nak_goback),
		cmocka_unit_test(test_rto_backoff_limit),
		cmocka_unit_test(test_rto_progress_resets_backoff),
		cmocka_unit_test(test_rto_cap_odd),
		cmocka_unit_test(test_dupack_after_timeout),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_lossy_channel),
		cmocka_unit_test(test_lossy_channel_heavy),
		cmocka_unit_test(test_lossy_channel_wrap),
		cmocka_unit_test(test_lossy_channel_clean),
		cmocka_unit_test(test_rto_converges),
		cmocka_unit_test(test_rto_karn),
		cmocka_unit_test(test_rto_backoff),
		cmocka_unit_test(test_sel_mode_setup),
		cmocka_unit_test(test_sel_rx_hold_in_order),
		cmocka_unit_test(test_sel_tx_resends_missing),
		cmocka_unit_test(test_sel_lost_retransmission),
		cmocka_unit_test(test_sel_hostile_sack),
		cmocka_unit_test(test_sel_nak_without_sack),
		cmocka_unit_test(test_sel_tail_probe),
		cmocka_unit_test(test_sel_burst_eats_probes),
		cmocka_unit_test(test_sel_long_burst_probes),
		cmocka_unit_test(test_sel_tail_probe_backoff),
		cmocka_unit_test(test_rto_backoff_capped),
		cmocka_unit_test(test_rto_peer_answers_no_limit),
		cmocka_unit_test(test_rto_dead_peer),
		cmocka_unit_test(test_sel_probe_repeats),
		cmocka_unit_test(test_sel_stalled_peer),
		cmocka_unit_test(test_sel_silent_peer_given_up),
		cmocka_unit_test(test_sel_rtt_stall),
		cmocka_unit_test(test_sel_rto_window_lost),
		cmocka_unit_test(test_sel_sack_collapses_backoff),
		cmocka_unit_test(test_sel_rtt_from_sack),
		cmocka_unit_test(test_sel_dup_after_probe),
		cmocka_unit_test(test_sel_dup_after_stall),
		cmocka_unit_test(test_sel_fast_rtx_no_rack),
		cmocka_unit_test(test_rob),
		cmocka_unit_test(test_rob_check_catches),
		cmocka_unit_test(test_sel_check_catches),
		cmocka_unit_test(test_take_sent_is_send),
		cmocka_unit_test(test_sel_lossy_channel),
		cmocka_unit_test(test_sel_lossy_channel_heavy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
