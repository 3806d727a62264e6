/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the raw frame forwarding baseline on the bridge's vdev (an
 * in-process net_ring crossover pair, as htoe-bridge builds it), in the
 * style of examples/l2fwd and testpmd txonly/macswap. See bench.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_ether.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "bench.h"
#include "eal_hint.h"

#define FWD_BURST 32
#define FWD_DESC  1024

struct fwd {
	uint16_t p0, p1;
	struct rte_mempool *pool;
	unsigned frame_len;
	volatile int phase;          /* 0 warm-up, 1 measure, 2 stop */
	uint64_t fwd_frames;         /* by lcore 1 while phase == 1 */
	uint64_t sent;
};

static int fwd_port(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	uint16_t rxd = FWD_DESC, txd = FWD_DESC;
	int sock = rte_eth_dev_socket_id(port);

	memset(&conf, 0, sizeof(conf));
	if (sock < 0)
		sock = 0;
	if (rte_eth_dev_configure(port, 1, 1, &conf) < 0 ||
	    rte_eth_dev_adjust_nb_rx_tx_desc(port, &rxd, &txd) < 0 ||
	    rte_eth_rx_queue_setup(port, 0, rxd, (unsigned)sock, NULL, pool) < 0 ||
	    rte_eth_tx_queue_setup(port, 0, txd, (unsigned)sock, NULL) < 0 ||
	    rte_eth_dev_start(port) < 0)
		return -1;
	return 0;
}

/* lcore 1: receive on port 1, swap the MACs, send back (macswap). */
static int fwd_lcore(void *arg)
{
	struct fwd *f = arg;
	struct rte_mbuf *m[FWD_BURST];
	uint64_t n = 0;

	while (f->phase < 2) {
		uint16_t k = rte_eth_rx_burst(f->p1, 0, m, FWD_BURST);

		if (!k)
			continue;
		for (uint16_t i = 0; i < k; i++) {
			struct rte_ether_hdr *h = rte_pktmbuf_mtod(m[i], struct rte_ether_hdr *);
			struct rte_ether_addr t = h->dst_addr;

			h->dst_addr = h->src_addr;
			h->src_addr = t;
		}
		uint16_t s = rte_eth_tx_burst(f->p1, 0, m, k);

		if (s < k)
			rte_pktmbuf_free_bulk(m + s, k - s);
		if (f->phase == 1)
			n += k;
	}
	f->fwd_frames = n;
	return 0;
}

/* main lcore: free what came back, send new bursts (header from a template). */
static void send_loop(struct fwd *f, uint64_t warm_tsc, uint64_t end_tsc)
{
	static const uint8_t tmpl[14] = { 0x02, 0x48, 0x54, 0, 0, 2, 0x02, 0x48, 0x54, 0, 0, 1,
					   0x88, 0xB5 };
	struct rte_mbuf *m[FWD_BURST];

	for (;;) {
		uint64_t now = rte_rdtsc();

		if (f->phase == 0 && now >= warm_tsc)
			f->phase = 1;
		if (now >= end_tsc)
			break;
		uint16_t k = rte_eth_rx_burst(f->p0, 0, m, FWD_BURST);

		if (k)
			rte_pktmbuf_free_bulk(m, k);
		if (rte_pktmbuf_alloc_bulk(f->pool, m, FWD_BURST) != 0)
			continue;
		for (unsigned i = 0; i < FWD_BURST; i++) {
			memcpy(rte_pktmbuf_mtod(m[i], uint8_t *), tmpl, sizeof(tmpl));
			m[i]->data_len = (uint16_t)f->frame_len;
			m[i]->pkt_len = f->frame_len;
		}
		uint16_t s = rte_eth_tx_burst(f->p0, 0, m, FWD_BURST);

		f->sent += s;
		if (s < FWD_BURST)
			rte_pktmbuf_free_bulk(m + s, FWD_BURST - s);
	}
	f->phase = 2;
}

int bench_fwd_main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);

	if (n < 0) {
		htoe_eal_init_failed(stderr, "htoe-bench __fwd",
				     rte_errno ? rte_strerror(rte_errno) : NULL, argc, argv);
		return 3;
	}
	argc -= n;
	argv += n;
	if (argc < 3) {
		fprintf(stderr, "htoe-bench __fwd: usage: EAL-ARGS -- FRAME_LEN SECONDS\n");
		return 2;
	}
	static struct fwd f;
	double secs = atof(argv[2]);
	unsigned len = (unsigned)atoi(argv[1]);
	unsigned worker = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);

	if (len < 60 || len > RTE_MBUF_DEFAULT_DATAROOM || secs <= 0 || worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "htoe-bench __fwd: FRAME_LEN 60..%u, SECONDS > 0, two lcores\n",
			RTE_MBUF_DEFAULT_DATAROOM);
		return 2;
	}
	f.frame_len = len;
	int sock = (int)rte_socket_id();
	struct rte_ring *r01 = rte_ring_create("h2b_r01", 1024, sock, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *r10 = rte_ring_create("h2b_r10", 1024, sock, RING_F_SP_ENQ | RING_F_SC_DEQ);
	int p0 = r01 && r10 ? rte_eth_from_rings("h2b_fwd0", &r10, 1, &r01, 1, (unsigned)sock) : -1;
	int p1 = p0 >= 0 ? rte_eth_from_rings("h2b_fwd1", &r01, 1, &r10, 1, (unsigned)sock) : -1;

	f.pool = rte_pktmbuf_pool_create("h2b_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, sock);
	if (p1 < 0 || !f.pool || fwd_port((uint16_t)p0, f.pool) || fwd_port((uint16_t)p1, f.pool)) {
		fprintf(stderr, "htoe-bench __fwd: cannot set up the net_ring pair\n");
		rte_eal_cleanup();
		return 3;
	}
	f.p0 = (uint16_t)p0;
	f.p1 = (uint16_t)p1;
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
	uint64_t warm = t0 + hz / 5, end = warm + (uint64_t)(secs * (double)hz);

	rte_eal_remote_launch(fwd_lcore, &f, worker);
	send_loop(&f, warm, end);
	rte_eal_mp_wait_lcore();
	double el = (double)(end - warm) / (double)hz;

	printf("{\"frame_len\":%u,\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"fps\":%.1f}\n", len,
	       f.fwd_frames, el, (double)f.fwd_frames / el);
	fflush(stdout);
	rte_eth_dev_stop(f.p0);
	rte_eth_dev_stop(f.p1);
	rte_eth_dev_close(f.p0);
	rte_eth_dev_close(f.p1);
	rte_eal_cleanup();
	return 0;
}
