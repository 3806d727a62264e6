/* SPDX-License-Identifier: BSD-3-Clause
 * How long an adaptive lcore sleeps (br_idle_after in driver.c): the rule
 * alone, without DPDK, so that a unit test (tests/test_idle.c) checks it.
 */
#ifndef BR_IDLE_H
#define BR_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#define BR_IDLE_SPIN_NS   200000ull   /* adaptive: idle this long before sleeping */
#define BR_IDLE_LONG_NS   5000000ull  /* a sleep: a tenth of the idle time, up to this... */
#define BR_IDLE_INTR_NS   2000000ull  /* ...and at least this with an RX interrupt armed */
#define BR_IDLE_MIN_NS    20000ull    /* a sleep shorter than this: pause instead */
#define BR_IDLE_SLACK_NS  1000ul      /* an adaptive lcore's timer slack (prctl) */

/*
 * The sleep of an lcore idle for idle_ns whose next deadline is wake_in_ns
 * away (intr: an RX interrupt can wake it): 0 when it should pause instead.
 * Without an interrupt a frame that arrives during the sleep waits for its
 * end, so the sleep is a tenth of the idle time: a peer that paused for a
 * while (a borrower whose application computed) waits at most a tenth of
 * its pause more — never a whole millisecond, the least retransmission
 * timeout, after a short pause — while a long-idle serve-only node wakes
 * rarely (at most BR_IDLE_LONG_NS apart).
 */
static inline uint64_t br_idle_sleep_ns(uint64_t idle_ns, uint64_t wake_in_ns, bool intr)
{
	uint64_t cap = idle_ns / 10;

	if (idle_ns < BR_IDLE_SPIN_NS)
		return 0;
	if (cap > BR_IDLE_LONG_NS)
		cap = BR_IDLE_LONG_NS;
	if (intr && cap < BR_IDLE_INTR_NS)
		cap = BR_IDLE_INTR_NS;
	if (wake_in_ns < cap)
		cap = wake_in_ns;
	return cap < BR_IDLE_MIN_NS ? 0 : cap;
}

#endif
