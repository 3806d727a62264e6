/* SPDX-License-Identifier: BSD-3-Clause
 * bench_bridge: library-level throughput of the HToE bridge (lib/htoe) and
 * of the HT codec (lib/htmodel), no DPDK (meson benchmark, suite 'perf';
 * `meson test --benchmark --suite perf`, or run the binary).
 *
 *   1. posted writes: two struct htoe bridges in one thread, back to back in
 *      memory. The bench, as node 1's local side, offers 64-byte posted
 *      WrSized packets to bridge A; frames go A -> B; B's local side takes
 *      the writes out; B's acks go back to A. Reports writes/s, ns/write.
 *   2. endpoint model: node 1's requester (htnode + a read workload) ->
 *      bridge A -> bridge B -> node 2's memory target and the responses
 *      back; every read verified by the workload. Reports ops/s.
 *   3. codec: ht_encode / ht_decode per common layout, the table-driven
 *      reference (ht_encode_table / ht_decode_table), ht_validate.
 *
 * Prints figures only; no assertions on time. Usage: bench_bridge [SCALE
 * [all|codec|posted|model]] (SCALE multiplies the iteration counts, default
 * 1; the word runs one part, e.g. under perf record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htmodel/ht_packet.h"
#include "htmodel/ht_workload.h"
#include "htoe/htoe.h"
#include "node/node.h"

#define MEM_BASE  0x100000ull
#define MEM_SIZE  0x100000ull
#define BRIDGE_UBASE 24
#define BRIDGE_UNITS 2

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t gaddr(uint16_t node, uint64_t off)
{
	return ((uint64_t)node << 32) + off;
}

/* Nodes 1 and 2 carry the traffic; nodes 3.. (the third argument, "idle
 * peers") are peers of everyone with no traffic: their VLs come up and
 * stay idle, the case of a node in a large cluster talking to one other. */
#define MAX_NODES 64u
static unsigned n_nodes = 2;

struct pair {
	struct htoe_map map[MAX_NODES];
	struct htoe *b[MAX_NODES];
	uint8_t fbuf[HTOE_FRAME_MAX];
	uint64_t frames;
};

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench_bridge: %s: %s\n", what, err);
	exit(1);
}

static struct pair *pair_new(void)
{
	struct pair *p = calloc(1, sizeof(*p));
	char err[256];

	if (!p)
		die("pair", "out of memory");
	for (uint16_t id = 1; id <= n_nodes; id++) {
		struct htoe_map *m = &p->map[id - 1];
		struct htoe_config c;

		htoe_map_init(m, id);
		for (uint16_t k = 1; k <= n_nodes; k++)
			if (k != id && htoe_map_add_peer(m, k, NULL, "peer", err, sizeof(err)) != 0)
				die("map", err);
		for (uint16_t k = 1; k <= 2; k++)
			if (htoe_map_add_range(m, gaddr(k, 0), MEM_SIZE, k, MEM_BASE, "range", err,
					       sizeof(err)) != 0)
				die("map", err);
		if (htoe_map_finalize(m, err, sizeof(err)) != 0)
			die("map", err);
		htoe_config_defaults(&c);
		c.node_id = id;
		htoe_map_node_mac(id, c.mac);
		c.map = m;
		c.unitid_base = BRIDGE_UBASE;
		c.n_unitids = BRIDGE_UNITS;
		/* the pool: the default, and each idle peer's reserve on top */
		for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
			for (unsigned k = 0; k < 2; k++)
				c.rx_bufs[vc][k] = (uint16_t)(c.rx_bufs[vc][k] + c.reserve * (n_nodes - 2));
		p->b[id - 1] = htoe_new(&c, err, sizeof(err));
		if (!p->b[id - 1])
			die("htoe_new", err);
	}
	return p;
}

static void pair_free(struct pair *p)
{
	for (unsigned i = 0; i < n_nodes; i++)
		htoe_free(p->b[i]);
	free(p);
}

/* Move every frame each bridge wants to send to its destination (the low
 * bytes of the destination MAC: htoe_map_node_mac), until quiet. */
static void pump(struct pair *p, uint64_t now, unsigned flags)
{
	unsigned moved;

	do {
		moved = 0;
		for (unsigned i = 0; i < n_nodes; i++) {
			int len;

			while ((len = htoe_frame_output(p->b[i], p->fbuf, sizeof(p->fbuf), now,
							 flags)) > 0) {
				unsigned dst = (unsigned)p->fbuf[4] << 8 | p->fbuf[5];

				if (dst >= 1 && dst <= n_nodes)
					htoe_frame_input(p->b[dst - 1], p->fbuf, (size_t)len, now);
				moved++;
			}
		}
		p->frames += moved;
	} while (moved);
}

/* ---- 1. posted 64-byte writes through two bridges ---- */

static void bench_posted(uint64_t n_writes)
{
	struct pair *p = pair_new();
	struct ht_pkt w;
	uint8_t pkt[HT_MAX_PKT_LEN];
	uint64_t now = 1000, sent = 0, got = 0, bytes = 0;
	const unsigned batch = 64;
	int len;

	pump(p, 0, HTOE_TX_FLUSH);
	memset(&w, 0, sizeof(w));
	w.posted = 1;
	w.dword = 1;
	w.count = 15;
	w.unitid = 1;
	w.addr = gaddr(2, 0);
	w.data_len = 64;
	for (unsigned i = 0; i < 64; i++)
		w.data[i] = (uint8_t)i;
	ht_pkt_set_cmd(&w, HT_K_WRSIZED);
	len = ht_encode(&w, pkt, sizeof(pkt));
	if (len <= 0)
		die("encode", ht_strerror(len));

	double t0 = now_s();
	while (got < n_writes) {
		for (unsigned k = 0; k < batch && sent < n_writes; k++) {
			ht_bytes_set_addr(pkt, (size_t)len, gaddr(2, (sent * 64) % MEM_SIZE));
			if (htoe_local_input(p->b[0], pkt, (size_t)len, now) != 0)
				break;
			sent++;
		}
		pump(p, now, HTOE_TX_FLUSH);
		/* the local side reads B's output in place, as app/node does */
		struct htoe_pkt_ref ref[32];
		unsigned k;
		while ((k = htoe_local_output_burst(p->b[1], ref, 32, now)) > 0) {
			for (unsigned i = 0; i < k; i++)
				bytes += ref[i].len;
			got += k;
			htoe_local_output_done(p->b[1]);
		}
		now += 500;
	}
	double dt = now_s() - t0;

	printf("bridge posted 64 B WrSized, A->B, both bridges on one core:  %8.2f M writes/s"
	       "  %7.1f ns/write  (%.2f frames/write, %.0f MB/s of HT data)\n",
	       (double)got / dt / 1e6, dt * 1e9 / (double)got, (double)p->frames / (double)got,
	       (double)got * 64 / dt / 1e6);
	pair_free(p);
}

/* ---- 2. through the endpoint model: requester -> A -> B -> target ---- */

static void bench_model(uint64_t n_ops, const char *label, bool reads_only)
{
	struct pair *p = pair_new();
	struct htnode nd[2];
	struct ht_workload *wl = calloc(1, sizeof(*wl));
	struct ht_workload *wls[2] = { NULL, wl };
	uint8_t *mem = malloc(MEM_SIZE), *shadow = malloc(MEM_SIZE), *busy = calloc(1, MEM_SIZE / 64);
	uint64_t *taint = calloc(MEM_SIZE / 64, sizeof(*taint));
	struct ht_target_cfg tc;
	struct ht_wl_cfg wc;
	uint64_t now = 1000;

	if (!wl || !mem || !shadow || !busy || !taint)
		die("memory", "out of memory");
	pump(p, 0, HTOE_TX_FLUSH);
	for (unsigned i = 0; i < 2; i++) {
		memset(&nd[i], 0, sizeof(nd[i]));
		if (htnode_init(&nd[i], p->b[i], BRIDGE_UBASE, BRIDGE_UNITS, 4, 1, wls, 2) != 0)
			die("htnode_init", "failed");
	}
	ht_wl_fill(7, mem, MEM_SIZE);
	memcpy(shadow, mem, MEM_SIZE);
	memset(&tc, 0, sizeof(tc));
	tc.base = MEM_BASE;
	tc.size = MEM_SIZE;
	tc.mem = mem;
	ht_tgt_init(&nd[1].tgt, &tc);
	ht_tgt_init(&nd[0].tgt, &tc); /* unused: node 1 issues only remote ops */
	nd[1].n_wl = 0;

	ht_wl_cfg_default(&wc);
	wc.seed = 1;
	wc.base = gaddr(2, 0);
	wc.size = MEM_SIZE;
	wc.n_ops = n_ops;
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = taint;
	wc.sweep = false;
	if (reads_only) {
		memset(wc.weight, 0, sizeof(wc.weight));
		wc.weight[HT_OP_READ] = 1;
		wc.byte_pct = 0;
	}
	if (ht_wl_init(wl, &wc) != 0)
		die("ht_wl_init", "bad config");

	double t0 = now_s();
	while (!ht_wl_done(wl)) {
		unsigned moved = htnode_poll(&nd[0], now) + htnode_poll(&nd[1], now);

		pump(p, now, HTOE_TX_FLUSH);
		htoe_handle_expiry(p->b[0], now);
		htoe_handle_expiry(p->b[1], now);
		now += moved ? 200 : 5000;
	}
	double dt = now_s() - t0;
	const struct ht_wl_stats *st = ht_wl_stats(wl);

	printf("endpoint model %-24s requester->A->B->target:   %8.3f M ops/s   %7.1f ns/op"
	       "  (verified %llu, mismatches %llu, errors %llu)\n",
	       label, (double)st->issued_total / dt / 1e6, dt * 1e9 / (double)st->issued_total,
	       (unsigned long long)st->verified, (unsigned long long)st->mismatches,
	       (unsigned long long)st->errors);
	pair_free(p);
	free(wl);
	free(mem);
	free(shadow);
	free(busy);
	free(taint);
}

/* ---- 3. codec ---- */

typedef int (*enc_fn)(const struct ht_pkt *, uint8_t *, size_t);
typedef int (*dec_fn)(const uint8_t *, size_t, struct ht_pkt *);

static volatile int sink;

static void bench_codec_one(const char *name, const struct ht_pkt *p, uint64_t iters)
{
	static const struct { const char *n; enc_fn e; dec_fn d; } impl[] = {
		{ "fast ", ht_encode, ht_decode },
		{ "table", ht_encode_table, ht_decode_table },
	};
	uint8_t buf[HT_MAX_PKT_LEN];
	struct ht_pkt q;
	int len = ht_encode(p, buf, sizeof(buf));

	if (len <= 0)
		die("codec", ht_strerror(len));
	for (unsigned k = 0; k < 2; k++) {
		struct ht_pkt pp = *p;
		double t0 = now_s();
		int acc = 0;

		for (uint64_t i = 0; i < iters; i++) {
			pp.unitid = (uint8_t)(i & 7);
			acc += impl[k].e(&pp, buf, sizeof(buf));
		}
		double te = now_s() - t0;

		t0 = now_s();
		for (uint64_t i = 0; i < iters; i++) {
			buf[1] = (uint8_t)((buf[1] & 0xe0) | (i & 7));
			acc += impl[k].d(buf, (size_t)len, &q);
		}
		double td = now_s() - t0;

		sink = acc;
		printf("codec %-5s %-26s encode %6.1f ns   decode %6.1f ns\n", impl[k].n, name,
		       te * 1e9 / (double)iters, td * 1e9 / (double)iters);
	}
	double t0 = now_s();
	int acc = 0;

	for (uint64_t i = 0; i < iters; i++) {
		buf[1] = (uint8_t)((buf[1] & 0xe0) | (i & 7));
		acc += ht_validate(buf, (size_t)len);
	}
	sink = acc;
	printf("codec       %-26s validate %6.1f ns\n", name,
	       (now_s() - t0) * 1e9 / (double)iters);
}

static void bench_codec(uint64_t iters)
{
	struct ht_pkt p;

	memset(&p, 0, sizeof(p));
	p.posted = 1, p.dword = 1, p.count = 15, p.unitid = 1, p.addr = 0x12340000, p.data_len = 64;
	ht_pkt_set_cmd(&p, HT_K_WRSIZED);
	bench_codec_one("WrSized posted 64 B", &p, iters);

	memset(&p, 0, sizeof(p));
	p.dword = 1, p.count = 15, p.unitid = 1, p.srctag = 5, p.addr = 0x12340000;
	ht_pkt_set_cmd(&p, HT_K_RDSIZED);
	bench_codec_one("RdSized dword 64 B", &p, iters);

	memset(&p, 0, sizeof(p));
	p.count = 15, p.unitid = 1, p.srctag = 5, p.passpw = 1, p.data_len = 64;
	ht_pkt_set_cmd(&p, HT_K_RDRESPONSE);
	bench_codec_one("RdResponse 64 B", &p, iters);

	memset(&p, 0, sizeof(p));
	p.unitid = 1, p.srctag = 5;
	ht_pkt_set_cmd(&p, HT_K_TGTDONE);
	bench_codec_one("TgtDone", &p, iters);

	memset(&p, 0, sizeof(p));
	p.postcmd = 1, p.resp = 2, p.ack = 17;
	ht_pkt_set_cmd(&p, HT_K_NOP);
	bench_codec_one("NOP", &p, iters);
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	const char *only = argc > 2 ? argv[2] : "all";
	bool all = strcmp(only, "all") == 0;

	if (argc > 3)
		n_nodes = 2u + (unsigned)atoi(argv[3]);
	if (n_nodes < 2 || n_nodes > MAX_NODES) {
		fprintf(stderr, "bench_bridge: idle peers: 0 to %u\n", MAX_NODES - 2);
		return 2;
	}

	if (scale <= 0)
		scale = 1.0;
	if (!all && strcmp(only, "codec") && strcmp(only, "posted") && strcmp(only, "model")) {
		fprintf(stderr, "usage: bench_bridge [SCALE [all|codec|posted|model [IDLE_PEERS]]]\n");
		return 2;
	}
	printf("bench_bridge (scale %.2f): figures only, no assertions\n", scale);
	if (all || !strcmp(only, "codec"))
		bench_codec((uint64_t)(2e6 * scale));
	if (all || !strcmp(only, "posted"))
		bench_posted((uint64_t)(2e6 * scale));
	if (all || !strcmp(only, "model")) {
		bench_model((uint64_t)(2e5 * scale), "64 B-max reads", true);
		bench_model((uint64_t)(2e5 * scale), "default op mix", false);
	}
	return 0;
}
