/* SPDX-License-Identifier: BSD-3-Clause
 * The poll watchdog (docs/bridge.md "Stalled pollers"): a thread that
 * notices a polling thread that begins no iteration of its loop for longer
 * than a limit. By default (limit BR_STALL_RESCUE_NS) it only acts: a
 * pinned poller that its CPU has not run is allowed on every CPU until it
 * begins an iteration. With HTOE_POLL_WATCHDOG=SECONDS it also says why,
 * for every such wait over that limit: how much CPU the thread had in that
 * time (all of it: a loop in the poll path; little: the thread was not
 * scheduled) and where it is (its stack, printed by the thread itself from
 * a signal handler). A poller pays one relaxed store per iteration.
 */
#ifndef HTOE_BRIDGE_STALL_H
#define HTOE_BRIDGE_STALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A pinned poller not run for this long begins no iteration: it may run
 * on every CPU (well below the ~9 s of silence a peer tolerates, well
 * above a time slice) */
#define BR_STALL_RESCUE_NS 500000000ull

/* One polling thread's slot. `since` is written by its thread only. */
struct br_stall {
	uint64_t since;                     /* TSC at the start of its latest iteration */
	char     name[48];                  /* "lcore 1 (node 2)": in messages */
	/* the rest is the registration's and the watchdog's */
	int      used;
	void    *priv;
};

/* Reads HTOE_POLL_WATCHDOG: unset or empty: *limit_ns BR_STALL_RESCUE_NS,
 * no reports; 0: *limit_ns 0 (no watchdog); SECONDS (e.g. 2 or 0.5): that
 * limit, with reports. 0, or -1 with a message naming the variable and its
 * value. */
int br_stall_config(uint64_t *limit_ns, bool *report, char *err, size_t errlen);

/* Starts the watchdog thread (limit_ns 0: nothing; `prog` in messages).
 * 0, or -1 with a message. */
int br_stall_start(uint64_t limit_ns, bool report, uint64_t tsc_hz, const char *prog,
		   char *err, size_t errlen);
/* Stops it (before the polling threads' slots go away). */
void br_stall_stop(void);

/* The set-up between rte_eal_init() and the polling loops (memory, ports, a
 * memif client's tries to connect) is no poller's work, but the EAL has
 * pinned the calling thread to its lcore's CPUs, which a loaded VM may not
 * run for seconds: br_stall_setup_begin() lets the calling thread, and the
 * EAL's control threads for good, run on every CPU; br_stall_setup_end()
 * pins the calling thread again as the EAL had (before its loop registers
 * it). */
void br_stall_setup_begin(void);
void br_stall_setup_end(void);

/* On the polling thread, before its loop: its slot (never NULL; with no
 * free slot one that is not watched). */
struct br_stall *br_stall_register(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* On the polling thread, after its loop. */
void br_stall_unregister(struct br_stall *s);

/* An iteration of the loop starts at TSC `tsc`. A poller's sleeps between
 * two iterations are short (milliseconds: idle.h, htoe-dimm's naps), so one
 * that starts none for the limit is stuck in an iteration or not run. */
static inline void br_stall_enter(struct br_stall *s, uint64_t tsc)
{
	__atomic_store_n(&s->since, tsc ? tsc : 1, __ATOMIC_RELAXED);
}

#endif
