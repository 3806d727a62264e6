/* SPDX-License-Identifier: BSD-3-Clause
 * Probes of a round trip's path: from the RX burst that brings a frame to
 * the flush of the first frame that poll sends. With both nodes of a read
 * round trip on one lcore, that is the work between a frame's arrival and
 * the frame it lets leave, at both ends: what delays the round trip, apart
 * from the work done after a frame has left.
 * - meson option callgrind_path (scripts/cg_read_path.sh): under callgrind,
 *   instructions are collected on the path only.
 * - meson option tsc_path (scripts/tsc_read_path.sh): the TSC time of each
 *   stage of the path at full speed, per lcore (thread-local sums, printed
 *   when the lcore's loop ends). A mark costs one rdtsc; its mean cost,
 *   measured at the start, is taken off each stage.
 * Without either option these are no-ops.
 */
#ifndef BR_PATH_PROBE_H
#define BR_PATH_PROBE_H

#include <stdint.h>

enum br_path_stage {
	BR_PATH_INPUT,   /* the received frames: MACsec, htoe_frame_input, delivery */
	BR_PATH_MODEL,   /* the program's poll (htnode_poll: requester, target) */
	BR_PATH_FRAMING, /* htoe_frame_output */
	BR_PATH_WIRE,    /* MACsec, impairment, TX burst up to the first flush */
	BR_PATH_GLUE,    /* the rest: timers, mbufs, the loop */
	BR_PATH_STAGES
};

#ifdef HTOE_CG_PATH
#include <valgrind/callgrind.h>

extern int br_cg_on;
static inline void br_path_begin(void)
{
	if (!br_cg_on) {
		br_cg_on = 1;
		CALLGRIND_TOGGLE_COLLECT;
	}
}
static inline void br_path_mark(enum br_path_stage s) { (void)s; }
static inline void br_path_end(void)
{
	if (br_cg_on) {
		br_cg_on = 0;
		CALLGRIND_TOGGLE_COLLECT;
	}
}
static inline void br_path_report(unsigned lcore, uint64_t tsc_hz) { (void)lcore; (void)tsc_hz; }
#elif defined(HTOE_TSC_PATH)
#include <rte_cycles.h>

struct br_path_tsc {
	uint64_t start, last;         /* 0: not on a path */
	uint64_t n;                   /* paths ended */
	uint64_t sum[BR_PATH_STAGES]; /* TSC cycles in each stage */
	uint64_t marks[BR_PATH_STAGES]; /* the marks that ended them */
};
extern __thread struct br_path_tsc br_path_tsc;

static inline void br_path_begin(void)
{
	if (!br_path_tsc.start)
		br_path_tsc.start = br_path_tsc.last = rte_rdtsc();
}
static inline void br_path_mark(enum br_path_stage s)
{
	if (br_path_tsc.start) {
		uint64_t t = rte_rdtsc();

		br_path_tsc.sum[s] += t - br_path_tsc.last;
		br_path_tsc.last = t;
		br_path_tsc.marks[s]++;
	}
}
static inline void br_path_end(void)
{
	if (br_path_tsc.start) {
		br_path_mark(BR_PATH_WIRE);
		br_path_tsc.n++;
		br_path_tsc.start = 0;
	}
}
/* One line on stderr: the lcore's paths and the mean time of each stage. */
void br_path_report(unsigned lcore, uint64_t tsc_hz);
#else
static inline void br_path_begin(void) {}
static inline void br_path_mark(enum br_path_stage s) { (void)s; }
static inline void br_path_end(void) {}
static inline void br_path_report(unsigned lcore, uint64_t tsc_hz) { (void)lcore; (void)tsc_hz; }
#endif

#endif
