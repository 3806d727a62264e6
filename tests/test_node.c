/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of the node's local side (app/node/node.[ch]) that need no
 * bridge traffic: what a peer given up on (htnode_peer_gone) costs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "node/node.h"

#define MEM 4096u

/* A peer gone while this node's workload worked on another node's memory
 * costs that workload nothing: counted as a peer gone, not as a range lost
 * (a node that stopped before its peers must not turn their RESULT into a
 * loss); gone with the memory the workload used, both, and the workload
 * stops. */
static void test_peer_gone_counts(void **state)
{
	static uint8_t shadow[MEM], busy[MEM / 64];
	static uint64_t taint[MEM / 64];
	struct ht_workload wl, *wls[1] = { &wl };
	struct ht_wl_cfg wc;
	struct htnode nd;

	(void)state;
	ht_wl_cfg_default(&wc);
	wc.base = 4ull << 32;
	wc.size = MEM;
	wc.n_ops = 1000;
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = taint;
	assert_int_equal(ht_wl_init(&wl, &wc), 0);
	memset(&nd, 0, sizeof(nd));
	nd.wl = wls;
	nd.n_wl = 1;
	/* node 2 went; the workload is on node 4 */
	assert_int_equal(htnode_peer_gone(&nd, 2, 0, 0), 0);
	assert_int_equal(nd.st.peers_gone, 1);
	assert_int_equal(nd.st.lost_restart, 0);
	assert_int_equal(ht_wl_stats(&wl)->lost_restart, 0);
	assert_false(ht_wl_done(&wl));
	/* node 4 went: its memory, which the workload used, is lost */
	assert_int_equal(htnode_peer_gone(&nd, 4, wc.base, wc.size), 1);
	assert_int_equal(nd.st.peers_gone, 2);
	assert_int_equal(nd.st.lost_restart, 1);
	assert_int_equal(ht_wl_stats(&wl)->lost_restart, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_peer_gone_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
