/* SPDX-License-Identifier: BSD-3-Clause
 * bench_dimm: where the time of a remote page fault goes, without a network
 * (meson benchmark, suite 'dimm'; docs/dimm.md quotes it).
 *
 *   1. userfaultfd alone (dimm_uffd_roundtrip, app/dimm/baselines.c, also
 *      htoe-dimm's baseline): a
 *      fault served by a thread that copies a local page (UFFDIO_COPY) - the
 *      kernel's and the thread hand-off's share;
 *   2. the pager over the in-memory loopback link (dimm_loop): 1. plus the
 *      dimm engine and the HT model (64 RdSized/RdResponse per page through
 *      the codec and an HT memory target), no bridge, no frames;
 *   3. the explicit API on the loopback, one thread: a 64-byte and a 4 KiB
 *      read.
 * htoe-dimm adds the bridges, the wire and the remote node on another CPU.
 * Prints one line per measurement and a JSON line. No assertions.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baselines.h"
#include "dimm.h"
#include "dimm_loop.h"
#include "dimm_pager.h"

#define GBASE 0x300000000ull
#define SIZE  (16u << 20)
#define PAGES (SIZE / DIMM_PAGE)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- 2. the pager on the loopback */

static struct dimm_engine *E;
static struct dimm_pager *P;
static _Atomic int stop;

static void *pager_thread(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		dimm_pager_poll(P);
		dimm_engine_poll(E, 0);
	}
	return NULL;
}

static void idle(void *arg)
{
	(void)arg;
	while (dimm_engine_poll(E, 0))
		;
}

int main(void)
{
	static struct lat_hist h_raw, h_app, h64, h4k;
	char err[256];
	uint8_t *mem = calloc(1, SIZE);
	struct dimm_loop_cfg lc = { .gbase = GBASE, .size = SIZE, .mem = mem };
	struct dimm_loop *l = dimm_loop_new(&lc, err, sizeof(err));
	struct dimm_engine_cfg ec;
	struct dimm_client_cfg cc;
	struct dimm_pager_cfg pc;
	pthread_t th;
	volatile uint8_t sink = 0;

	if (dimm_uffd_roundtrip(PAGES, &h_raw, err, sizeof(err)))
		printf("bench_dimm: %s\n", err);
	memset(&ec, 0, sizeof(ec));
	dimm_loop_link(l, &ec.link);
	E = dimm_engine_new(&ec, err, sizeof(err));
	memset(&cc, 0, sizeof(cc));
	cc.gaddr = GBASE;
	cc.size = SIZE;
	cc.depth = 256;
	struct dimm_client *c = dimm_client_new(&cc, err, sizeof(err));

	dimm_engine_attach(E, c);
	memset(&pc, 0, sizeof(pc));
	pc.client = c;
	pc.size = SIZE;
	P = dimm_pager_new(&pc, err, sizeof(err));
	if (P) {
		uint8_t *m = dimm_pager_base(P);

		pthread_create(&th, NULL, pager_thread, NULL);
		for (unsigned i = 0; i < PAGES; i++) {
			uint64_t t0 = now_ns();

			sink += m[(size_t)i * DIMM_PAGE];
			lat_add(&h_app, now_ns() - t0);
		}
		atomic_store(&stop, 1);
		pthread_join(th, NULL);
	} else {
		printf("bench_dimm: %s\n", err);
	}
	/* 3. the explicit API, one thread (a second client driving the engine) */
	cc.idle = idle;
	struct dimm_client *c2 = dimm_client_new(&cc, err, sizeof(err));
	uint8_t buf[DIMM_PAGE];

	dimm_engine_attach(E, c2);
	for (unsigned i = 0; i < 4000; i++) {
		uint64_t t0 = now_ns();

		dimm_read(c2, (uint64_t)(i % PAGES) * DIMM_PAGE, buf, 64);
		lat_add(&h64, now_ns() - t0);
		t0 = now_ns();
		dimm_read(c2, (uint64_t)(i % PAGES) * DIMM_PAGE, buf, DIMM_PAGE);
		lat_add(&h4k, now_ns() - t0);
	}
#define Q(h, q) (lat_quantile(&(h), q) / 1e3)
	printf("bench_dimm: userfaultfd alone (copy of a local page):  p50 %6.1f us  p99 %6.1f us\n",
	       Q(h_raw, 0.5), Q(h_raw, 0.99));
	if (P)
		printf("bench_dimm: pager, loopback (64 HT reads per page):   p50 %6.1f us  p99 %6.1f us"
		       "  (service: p50 %.1f us)\n",
		       Q(h_app, 0.5), Q(h_app, 0.99),
		       lat_quantile(&dimm_pager_stats(P)->hist, 0.5) / 1e3);
	printf("bench_dimm: explicit read, loopback, 64 B:            p50 %6.1f us  p99 %6.1f us\n",
	       Q(h64, 0.5), Q(h64, 0.99));
	printf("bench_dimm: explicit read, loopback, 4 KiB:           p50 %6.1f us  p99 %6.1f us\n",
	       Q(h4k, 0.5), Q(h4k, 0.99));
	printf("{\"uffd_p50_us\":%.1f,\"uffd_p99_us\":%.1f,\"pager_loop_p50_us\":%.1f,"
	       "\"pager_loop_p99_us\":%.1f,\"read64_loop_p50_us\":%.1f,\"read4k_loop_p50_us\":%.1f}\n",
	       Q(h_raw, 0.5), Q(h_raw, 0.99), Q(h_app, 0.5), Q(h_app, 0.99), Q(h64, 0.5),
	       Q(h4k, 0.5));
	dimm_pager_free(P);
	dimm_client_free(c);
	dimm_client_free(c2);
	dimm_engine_free(E);
	dimm_loop_free(l);
	free(mem);
	(void)sink;
	return 0;
}
