/* SPDX-License-Identifier: BSD-3-Clause
 * The adaptive lcore's sleep (app/bridge/idle.h, br_idle_after): how long
 * an idle lcore sleeps, against the rule docs/bridge.md "Polling" states.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bridge/idle.h"

#define US 1000ull
#define MS 1000000ull
#define FAR UINT64_MAX

/* Busy for the first 200 µs of idleness: no sleep. */
static void test_spin_first(void **state)
{
	(void)state;
	assert_int_equal(br_idle_sleep_ns(0, FAR, false), 0);
	assert_int_equal(br_idle_sleep_ns(199 * US, FAR, false), 0);
	assert_int_equal(br_idle_sleep_ns(199 * US, FAR, true), 0);
}

/* A tenth of the idle time: after a pause of 300 µs a frame waits at most
 * 30 µs more, after 1 ms at most 100 µs (never the 1 ms of the least
 * retransmission timeout); a long-idle lcore sleeps 5 ms at most. */
static void test_tenth_of_idle(void **state)
{
	(void)state;
	assert_int_equal(br_idle_sleep_ns(200 * US, FAR, false), 20 * US);
	assert_int_equal(br_idle_sleep_ns(300 * US, FAR, false), 30 * US);
	assert_int_equal(br_idle_sleep_ns(1 * MS, FAR, false), 100 * US);
	assert_int_equal(br_idle_sleep_ns(10 * MS, FAR, false), 1 * MS);
	assert_int_equal(br_idle_sleep_ns(50 * MS, FAR, false), BR_IDLE_LONG_NS);
	assert_int_equal(br_idle_sleep_ns(3600000 * MS, FAR, false), BR_IDLE_LONG_NS);
	for (uint64_t idle = BR_IDLE_SPIN_NS; idle < 100 * MS; idle += 7 * US + idle / 3) {
		uint64_t s = br_idle_sleep_ns(idle, FAR, false);

		assert_true(s <= idle / 10 && s <= BR_IDLE_LONG_NS && s >= BR_IDLE_MIN_NS);
	}
}

/* Never past the next deadline; a deadline under 20 µs away: pause. */
static void test_deadline(void **state)
{
	(void)state;
	assert_int_equal(br_idle_sleep_ns(50 * MS, 300 * US, false), 300 * US);
	assert_int_equal(br_idle_sleep_ns(50 * MS, 25 * US, false), 25 * US);
	assert_int_equal(br_idle_sleep_ns(50 * MS, 19 * US, false), 0);
	assert_int_equal(br_idle_sleep_ns(50 * MS, 0, false), 0);
}

/* An RX interrupt wakes the lcore at the first frame: it may sleep long. */
static void test_interrupt(void **state)
{
	(void)state;
	assert_int_equal(br_idle_sleep_ns(300 * US, FAR, true), BR_IDLE_INTR_NS);
	assert_int_equal(br_idle_sleep_ns(50 * MS, FAR, true), BR_IDLE_LONG_NS);
	assert_int_equal(br_idle_sleep_ns(300 * US, 1 * MS, true), 1 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spin_first),
		cmocka_unit_test(test_tenth_of_idle),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_interrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
