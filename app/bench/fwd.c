/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the raw frame baselines: forwarding on the bridge's vdev (an
 * in-process net_ring crossover pair, as htoe-bridge builds it), in the
 * style of examples/l2fwd and testpmd txonly/macswap; the ping-pong of one
 * frame (net_ring in process, or two processes over one port each: memif,
 * af_packet, af_xdp); one-way txonly -> rxonly between two processes.
 * See bench.h.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
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
/* The length of the frame a ping sends last over a link between two
 * processes: the echo side stops on it (see ping_stop) */
#define FWD_STOP_LEN 21
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

/* ------------------------------------------------------------ one frame in flight */

static volatile sig_atomic_t sig_stop; /* SIGINT/SIGTERM in the one-port modes */

static void on_sig(int sig)
{
	sig_stop = sig;
}

static const struct rte_ether_addr mac_ping = { { 0x02, 0x48, 0x54, 0, 0, 1 } };

/* A frame_len-byte frame from node 1's MAC to node 2's, sequence number at
 * offset 14; NULL when the pool is empty. */
static struct rte_mbuf *ping_frame(struct rte_mempool *pool, unsigned frame_len, uint64_t seq)
{
	static const uint8_t tmpl[14] = { 0x02, 0x48, 0x54, 0, 0, 2, 0x02, 0x48, 0x54, 0, 0, 1,
					   0x88, 0xB5 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	if (!m)
		return NULL;
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	memset(p, 0, frame_len);
	memcpy(p, tmpl, sizeof(tmpl));
	memcpy(p + 14, &seq, sizeof(seq));
	m->data_len = (uint16_t)frame_len;
	m->pkt_len = frame_len;
	return m;
}

/* Is m the echo of frame seq (MACs swapped back to node 1, same number)? */
static bool is_echo(struct rte_mbuf *m, uint64_t seq)
{
	const struct rte_ether_hdr *h = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint64_t s;

	if (m->data_len < 22 || !rte_is_same_ether_addr(&h->dst_addr, &mac_ping))
		return false;
	memcpy(&s, rte_pktmbuf_mtod_offset(m, const uint8_t *, 14), sizeof(s));
	return s == seq;
}

/* Swap the MACs of k frames and send them back on port; frames sent. */
static uint16_t macswap_back(uint16_t port, struct rte_mbuf **m, uint16_t k)
{
	for (uint16_t i = 0; i < k; i++) {
		struct rte_ether_hdr *h = rte_pktmbuf_mtod(m[i], struct rte_ether_hdr *);
		struct rte_ether_addr t = h->dst_addr;

		h->dst_addr = h->src_addr;
		h->src_addr = t;
	}
	uint16_t s = rte_eth_tx_burst(port, 0, m, k);

	if (s < k)
		rte_pktmbuf_free_bulk(m + s, k - s);
	return s;
}

struct echo_arg {
	uint16_t port;
	volatile int *stop;
	uint64_t echoed;
};

static int echo_lcore(void *arg)
{
	struct echo_arg *e = arg;
	struct rte_mbuf *m[FWD_BURST];

	while (!*e->stop && !sig_stop) {
		uint16_t k = rte_eth_rx_burst(e->port, 0, m, FWD_BURST);

		if (!k)
			continue;
		if (unlikely(m[k - 1]->data_len == FWD_STOP_LEN)) { /* the ping is done */
			rte_pktmbuf_free_bulk(m, k);
			break;
		}
		e->echoed += macswap_back(e->port, m, k);
	}
	return 0;
}

/* One frame in flight: send on tx_port, wait for its echo on rx_port, for
 * `secs` after the first echo and 0.2 s of warm-up; a frame not back after
 * 10 ms is counted lost and another one sent. Round trips (TSC -> ns) into
 * *h. 0, or -1 when nothing came back for 10 s (message on stderr). */
static int ping_loop(uint16_t tx_port, uint16_t rx_port, struct rte_mempool *pool,
		     unsigned frame_len, double secs, struct lat_hist *h, uint64_t *lost)
{
	struct rte_mbuf *m[FWD_BURST];
	uint64_t hz = rte_get_tsc_hz(), seq = 0, start = rte_rdtsc(), warm = 0, end = 0;

	while (!sig_stop) {
		struct rte_mbuf *f = ping_frame(pool, frame_len, ++seq);
		uint64_t t0 = rte_rdtsc(), now = t0;
		bool back = false;

		if (!f || rte_eth_tx_burst(tx_port, 0, &f, 1) != 1) {
			if (f)
				rte_pktmbuf_free(f);
			rte_delay_us_block(100);
		} else {
			while (!back && now - t0 < hz / 100) {
				uint16_t k = rte_eth_rx_burst(rx_port, 0, m, FWD_BURST);

				now = rte_rdtsc();
				for (uint16_t i = 0; i < k; i++)
					back |= is_echo(m[i], seq);
				if (k)
					rte_pktmbuf_free_bulk(m, k);
			}
		}
		if (back && !warm) {
			warm = now + hz / 5;
			end = warm + (uint64_t)(secs * (double)hz);
		}
		if (warm && now >= end)
			return 0;
		if (!warm && now - start > 10 * hz) {
			fprintf(stderr, "htoe-bench __fwd: no frame came back in 10 s (is the other "
				"side running, the link up?)\n");
			return -1;
		}
		if (warm && now >= warm) {
			if (back)
				lat_add(h, (now - t0) * 1000000000ull / hz);
			else
				(*lost)++;
		}
	}
	return -1;
}

static void print_rtt(unsigned frame_len, const struct lat_hist *h, uint64_t lost)
{
	printf("{\"frame_len\":%u,\"lost\":%" PRIu64 ",\"rtt\":", frame_len, lost);
	lat_json(h, stdout);
	printf("}\n");
	fflush(stdout);
}

/* The one ethdev of a one-port mode (from --vdev), started, promiscuous. */
static int one_port(struct rte_mempool *pool, uint16_t *port)
{
	uint16_t p;

	RTE_ETH_FOREACH_DEV(p) {
		if (fwd_port(p, pool))
			return -1;
		(void)rte_eth_promiscuous_enable(p); /* best effort: not every PMD has it */
		*port = p;
		return 0;
	}
	return -1;
}

static void port_close(uint16_t port)
{
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
}

/* tx: bursts of FRAME_LEN-byte frames until a signal; {"sent"}. */
static int mode_tx(uint16_t port, struct rte_mempool *pool, unsigned len)
{
	struct rte_mbuf *m[FWD_BURST];
	uint64_t sent = 0;

	while (!sig_stop) {
		struct rte_mbuf *r[FWD_BURST];
		uint16_t k = rte_eth_rx_burst(port, 0, r, FWD_BURST);

		if (k)
			rte_pktmbuf_free_bulk(r, k);
		if (rte_pktmbuf_alloc_bulk(pool, m, FWD_BURST) != 0)
			continue;
		for (unsigned i = 0; i < FWD_BURST; i++) {
			uint8_t *p = rte_pktmbuf_mtod(m[i], uint8_t *);

			memcpy(p, "\x02\x48\x54\x00\x00\x02\x02\x48\x54\x00\x00\x01\x88\xB5", 14);
			m[i]->data_len = (uint16_t)len;
			m[i]->pkt_len = len;
		}
		uint16_t s = rte_eth_tx_burst(port, 0, m, FWD_BURST);

		sent += s;
		if (s < FWD_BURST)
			rte_pktmbuf_free_bulk(m + s, FWD_BURST - s);
	}
	printf("{\"sent\":%" PRIu64 "}\n", sent);
	return 0;
}

/* rx: count the 0x88B5 frames that arrive, over `secs` after the first one
 * and 0.2 s of warm-up (longer, up to 20 s, until at least one frame was
 * counted: a sender starved for the whole interval is not a rate of 0);
 * {"frame_len","frames","seconds","fps"}. */
static int mode_rx(uint16_t port, double secs)
{
	struct rte_mbuf *m[FWD_BURST];
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc(), warm = 0, end = 0, n = 0, now = t0;
	unsigned len = 0;

	while (!sig_stop) {
		uint16_t k = rte_eth_rx_burst(port, 0, m, FWD_BURST);

		now = rte_rdtsc();
		for (uint16_t i = 0; i < k; i++) {
			const struct rte_ether_hdr *h =
				rte_pktmbuf_mtod(m[i], const struct rte_ether_hdr *);

			if (h->ether_type != rte_cpu_to_be_16(0x88B5))
				continue;
			if (!warm) {
				warm = now + hz / 5;
				end = warm + (uint64_t)(secs * (double)hz);
				len = m[i]->pkt_len;
			} else if (now >= warm && (now < end || !n)) {
				n++;
			}
		}
		if (k)
			rte_pktmbuf_free_bulk(m, k);
		if (warm && now >= end && (n || now - end > 20 * hz))
			break;
		if (!warm && now - t0 > 20 * hz) {
			fprintf(stderr, "htoe-bench __fwd rx: no frame in 20 s\n");
			return 4;
		}
	}
	if (sig_stop)
		return 130;
	double el = (double)(now - warm) / (double)hz;

	printf("{\"frame_len\":%u,\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"fps\":%.1f}\n", len,
	       n, el, (double)n / el);
	return 0;
}

/* The ping's end over a link between two processes (memif): the echo side
 * of memif is told to stop (a FWD_STOP_LEN-byte frame), and the link is given up to
 * 2 s to go down before this side closes its port. A memif client owns the
 * shared memory: had it left first, the server's RX burst would read memory
 * its interrupt thread had just unmapped. The link goes down in this side's
 * interrupt thread, which then still unregisters and frees the control
 * channel (after its callback returns); a port closed meanwhile frees it
 * too, and the interrupt thread crashed on it (a segfault in librte_eal
 * after the figures were out). So the port stays open FWD_SETTLE_MS more. */
#define FWD_SETTLE_MS 50
static void ping_stop(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_dev_info info;
	struct rte_mbuf *f;
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
	struct rte_eth_link l;

	/* the other PMDs own their memory on each side (af_packet, af_xdp:
	 * the echo side is stopped with SIGINT, as before) */
	if (rte_eth_dev_info_get(port, &info) != 0 || !info.driver_name ||
	    !strstr(info.driver_name, "memif"))
		return;
	if (!(f = ping_frame(pool, FWD_STOP_LEN, 0)))
		return;
	if (rte_eth_tx_burst(port, 0, &f, 1) != 1) {
		rte_pktmbuf_free(f);
		return;
	}
	do {
		rte_delay_us_block(1000);
		if (rte_eth_link_get_nowait(port, &l) == 0 && l.link_status == RTE_ETH_LINK_DOWN) {
			rte_delay_us_sleep(FWD_SETTLE_MS * 1000);
			return;
		}
	} while (rte_rdtsc() - t0 < 2 * hz);
}

/* The one-port modes: echo, ping, tx, rx (see bench.h). */
static int one_port_main(int argc, char **argv, struct rte_mempool *pool)
{
	const char *mode = argv[0];
	uint16_t port;
	int rc = 0;

	if (one_port(pool, &port)) {
		fprintf(stderr, "htoe-bench __fwd %s: no ethdev (--vdev) or cannot start it\n", mode);
		return 3;
	}
	signal(SIGINT, on_sig);
	signal(SIGTERM, on_sig);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "echo") || !strcmp(mode, "rx"))
		printf("ready\n"); /* htoe-bench starts the other side now */
	if (!strcmp(mode, "echo")) {
		static volatile int never;
		struct echo_arg e = { .port = port, .stop = &never };

		echo_lcore(&e);
		printf("{\"echoed\":%" PRIu64 "}\n", e.echoed);
	} else if (!strcmp(mode, "ping") && argc >= 3) {
		static struct lat_hist h;
		uint64_t lost = 0;
		unsigned len = (unsigned)atoi(argv[1]);

		if (ping_loop(port, port, pool, len, atof(argv[2]), &h, &lost))
			rc = 4;
		else
			print_rtt(len, &h, lost);
		ping_stop(port, pool);
	} else if (!strcmp(mode, "tx") && argc >= 2) {
		rc = mode_tx(port, pool, (unsigned)atoi(argv[1]));
	} else if (!strcmp(mode, "rx") && argc >= 2) {
		rc = mode_rx(port, atof(argv[1]));
	} else {
		fprintf(stderr, "htoe-bench __fwd: unknown mode or missing arguments\n");
		rc = 2;
	}
	fflush(stdout);
	port_close(port);
	return rc;
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
	/* argv[0] stands for the program name (where "--" was) */
	argc--;
	argv++;
	if (argc < 1) {
		fprintf(stderr, "htoe-bench __fwd: usage: EAL-ARGS -- [MODE] ARGS (bench.h)\n");
		return 2;
	}
	static struct fwd f;
	int sock = (int)rte_socket_id();
	const char *mode = argv[0];
	bool pingpong = !strcmp(mode, "pingpong");

	f.pool = rte_pktmbuf_pool_create("h2b_pool", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, sock);
	if (!f.pool) {
		fprintf(stderr, "htoe-bench __fwd: cannot create the mbuf pool\n");
		rte_eal_cleanup();
		return 3;
	}
	if (!pingpong && !(mode[0] >= '0' && mode[0] <= '9')) {
		int rc = one_port_main(argc, argv, f.pool);

		rte_eal_cleanup();
		return rc;
	}
	if (pingpong) {
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "htoe-bench __fwd: usage: EAL-ARGS -- [pingpong] FRAME_LEN SECONDS\n");
		return 2;
	}
	double secs = atof(argv[1]);
	unsigned len = (unsigned)atoi(argv[0]);
	unsigned worker = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);

	if (len < 60 || len > RTE_MBUF_DEFAULT_DATAROOM || secs <= 0 || worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "htoe-bench __fwd: FRAME_LEN 60..%u, SECONDS > 0, two lcores\n",
			RTE_MBUF_DEFAULT_DATAROOM);
		return 2;
	}
	f.frame_len = len;
	struct rte_ring *r01 = rte_ring_create("h2b_r01", 1024, sock, RING_F_SP_ENQ | RING_F_SC_DEQ);
	struct rte_ring *r10 = rte_ring_create("h2b_r10", 1024, sock, RING_F_SP_ENQ | RING_F_SC_DEQ);
	int p0 = r01 && r10 ? rte_eth_from_rings("h2b_fwd0", &r10, 1, &r01, 1, (unsigned)sock) : -1;
	int p1 = p0 >= 0 ? rte_eth_from_rings("h2b_fwd1", &r01, 1, &r10, 1, (unsigned)sock) : -1;

	if (p1 < 0 || fwd_port((uint16_t)p0, f.pool) || fwd_port((uint16_t)p1, f.pool)) {
		fprintf(stderr, "htoe-bench __fwd: cannot set up the net_ring pair\n");
		rte_eal_cleanup();
		return 3;
	}
	f.p0 = (uint16_t)p0;
	f.p1 = (uint16_t)p1;
	if (pingpong) {
		/* lcore 1 echoes on port 1, the main lcore pings on port 0 */
		static struct lat_hist h;
		static volatile int stop_echo;
		struct echo_arg e = { .port = f.p1, .stop = &stop_echo };
		uint64_t lost = 0;

		rte_eal_remote_launch(echo_lcore, &e, worker);
		int r = ping_loop(f.p0, f.p0, f.pool, len, secs, &h, &lost);

		stop_echo = 1;
		rte_eal_mp_wait_lcore();
		if (!r)
			print_rtt(len, &h, lost);
		port_close(f.p0);
		port_close(f.p1);
		rte_eal_cleanup();
		return r ? 4 : 0;
	}
	uint64_t hz = rte_get_tsc_hz(), t0 = rte_rdtsc();
	uint64_t warm = t0 + hz / 5, end = warm + (uint64_t)(secs * (double)hz);

	rte_eal_remote_launch(fwd_lcore, &f, worker);
	send_loop(&f, warm, end);
	rte_eal_mp_wait_lcore();
	double el = (double)(end - warm) / (double)hz;

	printf("{\"frame_len\":%u,\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"fps\":%.1f}\n", len,
	       f.fwd_frames, el, (double)f.fwd_frames / el);
	fflush(stdout);
	port_close(f.p0);
	port_close(f.p1);
	rte_eal_cleanup();
	return 0;
}
