/* SPDX-License-Identifier: BSD-3-Clause
 * The driver's TX (app/bridge/driver.c, port_io.c) on a port that refuses
 * frames: a net_ring port whose TX ring is full. A CTRL frame the port does
 * not take (here the reset handshake's RESET) is kept and offered first at
 * the next call, not lost; data frames are freed and counted; the kept
 * frames are bounded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <limits.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "bridge/driver.h"
#include "htoe/htoe.h"
#include "htoe/htoe_map.h"
#include "htoe/htoe_wire.h"

static struct rte_mempool *pool;
static struct rte_ring *txr, *rxr;
static struct br_port port;
static struct htoe_map map;
static struct htoe *b;
static struct br_drv drv;
static struct br_counters cnt;
static uint16_t port_id;                 /* the net_ring port */

/* A bridge of node 1 with one peer, node 2: its VL starts with the reset
 * handshake, so its first frame is a RESET (a CTRL frame). */
static int setup(void **state)
{
	struct htoe_config c;
	char err[256];

	(void)state;
	htoe_map_init(&map, 1);
	if (htoe_map_add_peer(&map, 2, NULL, "peer", err, sizeof(err)) ||
	    htoe_map_add_range(&map, 2ull << 32, 0x10000, 2, 0x100000, "r", err, sizeof(err)) ||
	    htoe_map_finalize(&map, err, sizeof(err)))
		fail_msg("map: %s", err);
	htoe_config_defaults(&c);
	c.node_id = 1;
	htoe_map_node_mac(1, c.mac);
	c.map = &map;
	b = htoe_new(&c, err, sizeof(err));
	assert_non_null(b);
	memset(&port, 0, sizeof(port));
	port.port_id = port_id;
	assert_int_equal(br_port_txb_init(&port, 32, SOCKET_ID_ANY), 0);
	memset(&cnt, 0, sizeof(cnt));
	memset(&drv, 0, sizeof(drv));
	assert_int_equal(br_drv_init(&drv, b, &port, pool, 32, 1, "test_drv_tx", &cnt, err,
				     sizeof(err)), 0);
	return 0;
}

/* The next frame on the TX ring, or NULL (a burst of one: the ring's
 * single-object calls do not compile cleanly unoptimised). */
static struct rte_mbuf *ring_take(void)
{
	void *m[1];

	return rte_ring_sc_dequeue_burst(txr, m, 1, NULL) == 1 ? m[0] : NULL;
}

static int teardown(void **state)
{
	struct rte_mbuf *m;

	(void)state;
	br_drv_fini(&drv);
	br_port_drop_kept(&port);
	rte_free(port.txb);
	while ((m = ring_take()) != NULL)
		rte_pktmbuf_free(m);
	htoe_free(b);
	return 0;
}

/* The TX ring full: a placeholder frame in its one slot. */
static struct rte_mbuf *fill_ring(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	assert_non_null(m);
	void *obj[1] = { m };

	assert_int_equal(rte_ring_sp_enqueue_burst(txr, obj, 1, NULL), 1);
	assert_int_equal(rte_ring_free_count(txr), 0);
	return m;
}

/* The frame type of the frame on the TX ring (0: none). */
static int ring_ftype(void)
{
	struct rte_mbuf *m;
	struct htoe_hdr h;
	int t;

	if (!(m = ring_take()))
		return 0;
	assert_int_equal(htoe_frame_parse(rte_pktmbuf_mtod(m, const uint8_t *),
					  rte_pktmbuf_data_len(m), 9000, &h, NULL), 0);
	t = h.ftype;
	rte_pktmbuf_free(m);
	return t;
}

/* The RESET the full port refused is kept, then sent first once the port
 * has room, although the bridge does not repeat it before its timer. */
static void test_refused_reset_kept(void **state)
{
	struct rte_mbuf *ph = fill_ring();
	uint64_t now = 1000;

	(void)state;
	br_drv_tx(&drv, now);
	assert_int_equal(port.n_kept, 1);
	assert_int_equal(port.ctrl_kept, 1);
	assert_int_equal(port.tx_refused, 0);
	/* the port still full: offered again, kept again, nothing new framed */
	br_drv_tx(&drv, now);
	assert_int_equal(port.n_kept, 1);
	/* room now: the placeholder leaves, the RESET goes out */
	assert_ptr_equal(ring_take(), ph);
	rte_pktmbuf_free(ph);
	assert_int_equal(br_drv_tx(&drv, now), 1);
	assert_int_equal(port.n_kept, 0);
	assert_int_equal(ring_ftype(), HTOE_FT_RESET);
	/* and the bridge has nothing more before its RESET timer */
	assert_int_equal(br_drv_tx(&drv, now), 0);
	assert_int_equal(ring_ftype(), 0);
	assert_int_equal(port.tx_refused, 0);
}

/* At most BR_TX_KEEP CTRL frames are kept; more, and frames that are not
 * CTRL frames, are freed and counted as refused. */
static void test_kept_bounded(void **state)
{
	struct rte_mbuf *m[BR_TX_KEEP + 3];

	(void)state;
	assert_int_equal(rte_pktmbuf_alloc_bulk(pool, m, RTE_DIM(m)), 0);
	for (unsigned i = 0; i < BR_TX_KEEP + 1; i++)
		m[i]->ol_flags |= br_port_ctrl_flag;
	br_port_tx_unsent(m, (uint16_t)RTE_DIM(m), &port);
	assert_int_equal(port.n_kept, BR_TX_KEEP);
	assert_int_equal(port.ctrl_kept, BR_TX_KEEP);
	assert_int_equal(port.tx_refused, 3);
	for (unsigned i = 0; i < BR_TX_KEEP; i++)
		assert_ptr_equal(port.kept[i], m[i]); /* in order */
}

/* The EAL's runtime directory (its sockets), which nothing else removes. */
static void rm_rundir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	if (rmdir(dir) != 0)
		perror(dir);
}

int main(int argc, char **argv)
{
	char prefix[64], rundir[PATH_MAX];
	char *eal[] = { argv[0], "--no-huge", "-m", "64", "--no-pci", "--no-shconf",
			"--log-level", "lib.*:error", "--file-prefix", prefix };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_reset_kept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_bounded, setup, teardown),
	};
	int pid, rc;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "htoe_drv_tx_%d", (int)getpid());
	if (rte_eal_init((int)RTE_DIM(eal), eal) < 0) {
		fprintf(stderr, "test_drv_tx: rte_eal_init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("drvtx", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	/* the port's TX ring holds one frame */
	txr = rte_ring_create("drvtx_tx", 1, SOCKET_ID_ANY,
			      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	rxr = rte_ring_create("drvtx_rx", 16, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!pool || !txr || !rxr) {
		fprintf(stderr, "test_drv_tx: no pool or ring\n");
		return 1;
	}
	pid = rte_eth_from_rings("drvtx", &rxr, 1, &txr, 1, SOCKET_ID_ANY);
	if (pid < 0) {
		fprintf(stderr, "test_drv_tx: rte_eth_from_rings failed\n");
		return 1;
	}
	port_id = (uint16_t)pid;
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(port_id, 1, 1, &conf) ||
	    rte_eth_rx_queue_setup(port_id, 0, 16, SOCKET_ID_ANY, NULL, pool) ||
	    rte_eth_tx_queue_setup(port_id, 0, 16, SOCKET_ID_ANY, NULL) ||
	    rte_eth_dev_start(port_id)) {
		fprintf(stderr, "test_drv_tx: cannot start the port\n");
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eth_dev_stop(port_id);
	rte_eth_dev_close(port_id);
	rte_ring_free(txr);
	rte_ring_free(rxr);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	rm_rundir(rundir);
	return rc;
}
