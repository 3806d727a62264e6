/* SPDX-License-Identifier: BSD-3-Clause
 * The round trip's path under callgrind (meson option callgrind_path,
 * scripts/cg_read_path.sh): instructions are counted from the RX burst that
 * brings a frame to the flush of the first frame the poll sends, and not in
 * between. With both nodes of a read round trip on one lcore, that is every
 * instruction between a frame's arrival and the frame it lets leave, at
 * both ends: the work that delays the round trip, apart from the work done
 * after a frame has left. Without the option these are no-ops.
 */
#ifndef BR_CG_PATH_H
#define BR_CG_PATH_H

#ifdef HTOE_CG_PATH
#include <valgrind/callgrind.h>

extern int br_cg_on;
static inline void br_cg_path_begin(void)
{
	if (!br_cg_on) {
		br_cg_on = 1;
		CALLGRIND_TOGGLE_COLLECT;
	}
}
static inline void br_cg_path_end(void)
{
	if (br_cg_on) {
		br_cg_on = 0;
		CALLGRIND_TOGGLE_COLLECT;
	}
}
#else
static inline void br_cg_path_begin(void) {}
static inline void br_cg_path_end(void) {}
#endif

#endif
