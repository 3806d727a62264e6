/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm: DIMM virtualization over HToE, the demo (docs/dimm.md).
 *
 *   htoe-dimm EAL-ARGS -- [--config FILE] [options]
 *
 * Node 2 exports memory; node 1 leases part of it (lease messages in CTRL
 * frames) and runs real workloads on it, through the explicit API
 * (lib/dimm/dimm.h) and through plain pointers (the userfaultfd pager,
 * lib/dimm/dimm_pager.h), with the local budget of resident pages at 100 %,
 * 50 % and 25 % of the working set. Every result is verified against the
 * same workload on local memory; the report gives throughput, page-fault
 * latency (p50/p99) and the slowdown against all-local memory, as text,
 * JSON and a PNG plot. With no --config both nodes run in this process over
 * a net_ring crossover pair (config/dimm-demo.ini); with --config and
 * --node, in two processes (memif) or network namespaces (af_packet).
 *
 * Exit status: 0 everything verified; 1 a verification failed or the run
 * stopped on an error (remote memory lost, ...); 2 usage or configuration
 * error; 3 EAL or device failure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "bridge/args.h"
#include "dimm/baselines.h"
#include "dimm/metrics.h"
#include "dimm/run.h"
#include "dimm/runtime.h"
#include "dimm/workloads.h"
#include "dimm_default_ini.h"
#include "dimm_plot_py.h"
#include "eal_hint.h"
#include "host_info.h"
#include "htmodel/ht_rand.h"
#include "htoe_version.h"
#include "out_file.h"
#include "parse_num.h"
#include "run_python.h"

struct br_app *br_app; /* app/bridge's global (unused by the parts linked here) */

#define MAX_BUDGETS 8
#define GBASE_DEFAULT UINT64_C(0x200000000)
#define EXPLICIT_READS 20000

struct opts {
	const char *config;
	struct br_overrides ov;
	const char *sets[BR_MAX_SETS];
	unsigned n_sets;
	int borrower, lessor;
	uint64_t wss;
	unsigned budgets[MAX_BUDGETS], n_budgets;
	bool wl[WL__N];
	struct wl_params wp;
	unsigned readahead;
	unsigned clean_low;  /* pager's cleaner watermark (0: off, the default) */
	bool no_wp, no_uffd, no_explicit, no_plot, no_baselines, verbose;
	bool no_wp_async, poll_thread;
	uint64_t spin_us, lease_ms, kill_after_faults, drop_renewals_after, duration_ns;
	uint64_t quota_slots, quota_bytes; /* exporter: per-lessee quota (0: default) */
	const char *json, *plot;
};

struct run_res {
	int      wl;
	unsigned pct, budget, pages;
	double   t, thr, slowdown;
	bool     verified;
	char     why[200];
	uint64_t p50, p99, wp50, wp99;
	struct dimm_pager_stats st;
};

struct explicit_res {
	bool     done, verified;
	double   read_mbs, write_mbs, gups_mups, rd64_p50_us, rd64_p99_us;
	uint64_t gups_updates;
	char     why[200];
};

struct app_state {
	struct dapp *d;
	const struct opts *o;
	size_t   wss;
	double   local_t[WL__N], local_thr[WL__N];
	struct run_res runs[WL__N * MAX_BUDGETS];
	unsigned n_runs;
	struct explicit_res ex;
	struct dimm_baselines bl;
	bool     uffd_ok;
	char     uffd_msg[512];
	char     pager_mode[32];
	bool     failed;      /* a verification failed */
	char     fatal[1024]; /* the run stopped on an error */
};

static volatile sig_atomic_t signals;
static struct dapp *g_dapp;
static bool g_borrower_here; /* the borrower runs in this process */

static void on_signal(int sig)
{
	static const char msg[] = "htoe-dimm: interrupted: stopping after the current run (a "
				  "second signal stops the exporter at once)\n";

	(void)sig;
	signals++;
	if (!g_dapp)
		return;
	/* The exporters in this process serve the borrower until it has
	 * finished its run and released the lease (after the application
	 * thread, at "stop"): stopped at the first signal they would cut its
	 * remote memory off mid-run, and the run would end seconds later on
	 * a lost lease and a misleading "remote memory lost" error. */
	if (g_borrower_here && signals == 1) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
			/* nothing to do in a handler */
		}
		return;
	}
	atomic_store(&g_dapp->quit_b, 1);
}

static void usage(FILE *f)
{
	fputs("usage: htoe-dimm EAL-ARGS -- [options]\n"
	      "  EAL-ARGS, e.g.: -l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix NAME\n"
	      "options:\n"
	      "  --config FILE       nodes, ports and map (docs/config.md); default: two nodes\n"
	      "                      in this process over a net_ring pair (config/dimm-demo.ini)\n"
	      "  --set SECT.KEY=VAL  override a configuration value (repeatable), e.g.\n"
	      "                      --set impair.loss=0.01 (frame loss on both ports)\n"
	      "  --node ID[,ID]      run only these [node] sections (two processes)\n"
	      "  --borrower ID       the node that leases memory and runs the workloads (1)\n"
	      "  --lessor ID         the node that exports it (default: the borrower's first peer)\n"
	      "  --wss SIZE          working set of each workload (default 8M)\n"
	      "  --budgets LIST      local budgets in % of the working set (default 100,50,25)\n"
	      "  --workloads LIST    stream,gups,kv,sort (default all)\n"
	      "  --ntimes N          STREAM passes (default 2)\n"
	      "  --updates N         GUPS updates (default 65536)\n"
	      "  --kv-ops N          hash-table operations (default 65536)\n"
	      "  --readahead N       pager: fetch N more pages on sequential faults (default 0)\n"
	      "  --clean-low N       pager: write dirty pages back ahead of eviction while fewer\n"
	      "                      than N of the next victims are free or clean (default 0:\n"
	      "                      off; it measured no faster here, docs/dimm.md)\n"
	      "  --no-wp             pager: no write-protect dirty tracking (write back every page)\n"
	      "  --no-wp-async       pager: dirty pages by write-protect faults even where the\n"
	      "                      kernel has UFFD_FEATURE_WP_ASYNC and PAGEMAP_SCAN (6.7+)\n"
	      "  --spin-us N         borrower loop: spin this long before sleeping (default 50)\n"
	      "  --poll-thread       the application thread blocks while it waits and the\n"
	      "                      borrower's loop does the work (default: run to completion,\n"
	      "                      a waiting explicit-API call polls the node itself)\n"
	      "  --lease-ms N        lease duration (default 10000; renewed every third)\n"
	      "  --quota-slots N     exporter: leases one node may hold at once (default 16)\n"
	      "  --quota-bytes SIZE  exporter: bytes one node may lease in all (default: --wss,\n"
	      "                      what this demo's borrower leases; a REQUEST beyond it is\n"
	      "                      refused with 'over the lessee's quota')\n"
	      "  --json FILE         results as JSON (default htoe-dimm.json)\n"
	      "  --plot FILE         slowdown vs budget as PNG (default htoe-dimm.png)\n"
	      "  --no-plot           no PNG\n"
	      "  --no-explicit       skip the explicit-API measurements\n"
	      "  --no-baselines      skip the baselines: the local userfaultfd round trip and\n"
	      "                      the same pager over TCP to a page server process\n"
	      "  --no-uffd           act as if userfaultfd were unavailable (also:\n"
	      "                      HTOE_DIMM_NO_UFFD=1): only the explicit API runs\n"
	      "  --kill-after-faults N  the exporter (in this process) stops answering after\n"
	      "                      N page faults: shows the remote-memory-lost error\n"
	      "  --drop-renewals-after N  the exporter (in this process) answers N lease\n"
	      "                      renewals, then ignores every lease message while its\n"
	      "                      memory keeps answering: shows the lease-lost error\n"
	      "  --duration SEC      an exporter-only process stops after SEC (default: signal)\n"
	      "  --verbose           print the nodes' driver and VL counters at the end, and\n"
	      "                      under a run the faults that waited for a write-back\n"
	      "  --capture DIR       write DIR/port<N>-tx.pcap and -rx.pcap (all frames)\n"
	      "  MACsec, polling: the [macsec] and [global] poll keys of htoe-bridge, e.g.\n"
	      "                      --set macsec.enable=on --set macsec.key0=HEX (docs/config.md)\n"
	      "  --run [OPTIONS] -- PROGRAM [ARGS...]  run PROGRAM unmodified with its large\n"
	      "                      memory leased from the lessor (--run --help: its options)\n"
	      "  --help              this text\n"
	      "  --version           the version\n"
	      "exit status: 0 all verified, 1 verification failed or stopped on an error,\n"
	      "             2 usage/configuration error, 3 EAL/device error\n",
	      f);
}

/* ------------------------------------------------------------ options */

static int parse_list_u(const char *s, unsigned *out, unsigned max, unsigned lo, unsigned hi)
{
	unsigned n = 0;
	char *dup = strdup(s), *save = NULL, *tok;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (htoe_parse_unsigned(tok, 10, lo, hi, &v) || n == max) {
			free(dup);
			return -1;
		}
		out[n++] = (unsigned)v;
	}
	free(dup);
	return n ? (int)n : -1;
}

/* --run: its own options and the program follow it; the demo's options come
 * before it. Returns the number of arguments for parse_opts, or -1. */
static int split_run(int n, char **av, struct run_opts *ro)
{
	for (int i = 1; i < n; i++) {
		if (!strcmp(av[i], "--"))
			break;
		if (!strcmp(av[i], "--run"))
			return run_parse(n - i, av + i, ro) ? -1 : i;
	}
	return n;
}

/* --run: the settings of the demo that --run implies. */
static void run_implies(struct opts *o, const struct run_opts *ro)
{
	o->wss = ro->region;        /* the lease: the whole region */
	o->poll_thread = true;      /* the pager is polled by the borrower's loop */
	o->json = NULL;             /* the run's own --json */
	o->no_plot = true;
}

/* the shortest --lease-ms */
#define LEASE_MS_MIN 100u

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "config", required_argument, 0, 'c' },
		{ "set", required_argument, 0, 'S' },
		{ "node", required_argument, 0, 'n' },
		{ "borrower", required_argument, 0, 'B' },
		{ "lessor", required_argument, 0, 'L' },
		{ "wss", required_argument, 0, 'w' },
		{ "budgets", required_argument, 0, 'b' },
		{ "workloads", required_argument, 0, 'W' },
		{ "ntimes", required_argument, 0, 'N' },
		{ "updates", required_argument, 0, 'U' },
		{ "kv-ops", required_argument, 0, 'K' },
		{ "readahead", required_argument, 0, 'r' },
		{ "clean-low", required_argument, 0, 'G' },
		{ "no-wp", no_argument, 0, 'P' },
		{ "no-wp-async", no_argument, 0, 'A' },
		{ "poll-thread", no_argument, 0, 'T' },
		{ "spin-us", required_argument, 0, 's' },
		{ "lease-ms", required_argument, 0, 'l' },
		{ "quota-slots", required_argument, 0, 'Q' },
		{ "quota-bytes", required_argument, 0, 'Y' },
		{ "json", required_argument, 0, 'j' },
		{ "plot", required_argument, 0, 'p' },
		{ "no-plot", no_argument, 0, 'q' },
		{ "no-explicit", no_argument, 0, 'x' },
		{ "no-baselines", no_argument, 0, 'Z' },
		{ "no-uffd", no_argument, 0, 'u' },
		{ "kill-after-faults", required_argument, 0, 'k' },
		{ "drop-renewals-after", required_argument, 0, 'D' },
		{ "duration", required_argument, 0, 'd' },
		{ "verbose", no_argument, 0, 'v' },
		{ "capture", required_argument, 0, 'C' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	int opt;
	uint64_t u;

	memset(o, 0, sizeof(*o));
	br_overrides_init(&o->ov);
	o->borrower = 1;
	o->lessor = -1;
	o->wss = 8u << 20;
	o->budgets[0] = 100;
	o->budgets[1] = 50;
	o->budgets[2] = 25;
	o->n_budgets = 3;
	for (int k = 0; k < WL__N; k++)
		o->wl[k] = true;
	wl_params_default(&o->wp);
	o->spin_us = 50;
	o->clean_low = 0;
	o->lease_ms = 10000;
	o->json = "htoe-dimm.json";
	o->plot = "htoe-dimm.png";
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'c': o->config = optarg; break;
		case 'S':
			if (o->n_sets == BR_MAX_SETS - 4) {
				fprintf(stderr, "htoe-dimm: too many --set\n");
				return -1;
			}
			o->sets[o->n_sets++] = optarg;
			break;
		case 'n': o->ov.only_nodes = optarg; break;
		case 'B':
		case 'L':
			if (br_parse_size(optarg, &u) || u == 0 || u > 0xffff) {
				fprintf(stderr, "htoe-dimm: --%s '%s': not a node id\n",
					opt == 'B' ? "borrower" : "lessor", optarg);
				return -1;
			}
			*(opt == 'B' ? &o->borrower : &o->lessor) = (int)u;
			break;
		case 'Q':
			if (br_parse_size(optarg, &u) || u < 1 || u > HTOE_LEASE_MAX) {
				fprintf(stderr, "htoe-dimm: --quota-slots '%s': 1..%u\n", optarg,
					HTOE_LEASE_MAX);
				return -1;
			}
			o->quota_slots = u;
			break;
		case 'Y':
			if (br_parse_size(optarg, &u) || u < 4096) {
				fprintf(stderr, "htoe-dimm: --quota-bytes '%s': a size of at least 4K\n",
					optarg);
				return -1;
			}
			o->quota_bytes = u;
			break;
		case 'w':
			if (br_parse_size(optarg, &u) || u < 64 * 1024 || u > (4ull << 30)) {
				fprintf(stderr, "htoe-dimm: --wss '%s': 64K..4G\n", optarg);
				return -1;
			}
			o->wss = u;
			break;
		case 'b': {
			int n = parse_list_u(optarg, o->budgets, MAX_BUDGETS, 1, 100);

			if (n < 0) {
				fprintf(stderr, "htoe-dimm: --budgets '%s': percentages 1..100, "
					"comma-separated, at most %u\n", optarg, MAX_BUDGETS);
				return -1;
			}
			o->n_budgets = (unsigned)n;
			break;
		}
		case 'W': {
			char *dup = strdup(optarg), *save = NULL, *tok;

			memset(o->wl, 0, sizeof(o->wl));
			for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				int k = wl_by_name(tok);

				if (k < 0) {
					fprintf(stderr, "htoe-dimm: --workloads: unknown '%s' "
						"(stream, gups, kv, sort)\n", tok);
					free(dup);
					return -1;
				}
				o->wl[k] = true;
			}
			free(dup);
			if (!memchr(o->wl, true, sizeof(o->wl))) {
				fprintf(stderr, "htoe-dimm: --workloads '%s': names no workload "
					"(stream, gups, kv, sort, comma-separated)\n", optarg);
				return -1;
			}
			break;
		}
		case 'N':
		case 'U':
		case 'K':
		case 'r':
		case 'G':
		case 's':
		case 'l':
		case 'k':
		case 'D':
			if (br_parse_size(optarg, &u) || u > (1ull << 40)) {
				fprintf(stderr, "htoe-dimm: '%s': not a count\n", optarg);
				return -1;
			}
			if (opt == 'N')
				o->wp.stream_ntimes = (unsigned)(u ? u : 1);
			else if (opt == 'U')
				o->wp.gups_updates = u;
			else if (opt == 'K')
				o->wp.kv_ops = u;
			else if (opt == 'r')
				o->readahead = (unsigned)(u > 64 ? 64 : u);
			else if (opt == 'G')
				o->clean_low = (unsigned)(u > DIMM_PAGER_CLEAN_MAX ? DIMM_PAGER_CLEAN_MAX : u);
			else if (opt == 's')
				o->spin_us = u;
			else if (opt == 'l' && u < LEASE_MS_MIN) {
				/* renewed every third of it: a shorter lease expires
				 * between two renewals on a busy machine */
				fprintf(stderr, "htoe-dimm: --lease-ms '%s': at least %u (ms)\n",
					optarg, LEASE_MS_MIN);
				return -1;
			} else if (opt == 'l')
				o->lease_ms = u;
			else if (opt == 'D')
				o->drop_renewals_after = u ? u : 1;
			else
				o->kill_after_faults = u;
			break;
		case 'd':
			if (br_parse_duration(optarg, &u)) {
				/* also plain seconds */
				double v;

				if (htoe_parse_double(optarg, 0, 1e9, &v)) {
					fprintf(stderr, "htoe-dimm: --duration '%s'\n", optarg);
					return -1;
				}
				u = (uint64_t)(v * 1e9);
			}
			o->duration_ns = u;
			break;
		case 'P': o->no_wp = true; break;
		case 'A': o->no_wp_async = true; break;
		case 'T': o->poll_thread = true; break;
		case 'j': o->json = optarg; break;
		case 'p': o->plot = optarg; break;
		case 'q': o->no_plot = true; break;
		case 'x': o->no_explicit = true; break;
		case 'Z': o->no_baselines = true; break;
		case 'u': o->no_uffd = true; break;
		case 'v': o->verbose = true; break;
		case 'C': o->ov.capture_dir = optarg; break;
		case 'h': usage(stdout); exit(0);
		case 'V': htoe_print_version("htoe-dimm"); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "htoe-dimm: unexpected argument '%s' (EAL arguments go before --)\n",
			argv[optind]);
		return -1;
	}
	/* output paths, before anything runs */
	char err[PATH_MAX + 128];

	if (o->json && htoe_check_out_file(o->json, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: --json: %s\n", err);
		return -1;
	}
	if (o->json && !o->no_plot && o->plot && htoe_check_out_file(o->plot, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: --plot: %s (--no-plot: none)\n", err);
		return -1;
	}
	if (o->ov.capture_dir && htoe_check_out_dir(o->ov.capture_dir, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: --capture: %s\n", err);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------ explicit helpers */

static int fail_op(struct app_state *s, const char *what, int st)
{
	snprintf(s->fatal, sizeof(s->fatal), "explicit API: %s: %s", what,
		 dimm_strerror(st, 0));
	return st;
}

/* Copy between buf and the lease at offset 0 with many requests in flight:
 * store = posted writes in 16 KiB pieces and one flush at the end; load =
 * reads in 4 KiB pieces. Returns the first error (its ht_err in *ht_err), or 0. */
static int remote_copy_once(struct dimm_client *c, uint8_t *buf, size_t size, bool store,
			    uint8_t *ht_err)
{
	const size_t chunk = store ? 16384 : 4096;
	struct dimm_result r[64];
	int first = 0;

	*ht_err = 0;
	for (size_t off = 0; off < size || dimm_inflight(c);) {
		size_t n = size - off < chunk ? size - off : chunk;
		int h = off == size ? -EAGAIN
			: store   ? dimm_write_async(c, off, buf + off, (uint32_t)n, 0, 0)
				  : dimm_read_async(c, off, buf + off, (uint32_t)n, 0);

		if (h == -EAGAIN) {
			/* every descriptor in flight, or all submitted: reap */
			unsigned k = dimm_reap(c, r, 64);

			for (unsigned i = 0; i < k; i++)
				if (!first && r[i].status) {
					first = r[i].status;
					*ht_err = r[i].ht_err;
				}
			if (!k)
				dr_idle(g_dapp);
			continue;
		}
		if (h < 0)
			return h;
		off += n;
	}
	if (!first && store) {
		struct dimm_result fr = { 0 };
		int h = dimm_flush_async(c, 0);

		first = h < 0 ? h : dimm_wait(c, h, &fr);
		*ht_err = fr.ht_err; /* a flush aborted by a reset: resent too */
	}
	return first;
}

/* Copies sent again after a VL reset (JSON copy_retries). */
static unsigned copy_retries;

/* The copy, sent again (it is idempotent) when a warm VL reset hit it while
 * the lease is valid, like the pager's fetches and write-backs. */
static int remote_copy(struct dimm_client *c, uint8_t *buf, size_t size, bool store)
{
	uint8_t ht_err;
	int st;

	for (unsigned tries = 0;; tries++) {
		st = remote_copy_once(c, buf, size, store, &ht_err);
		if (!st || tries == DIMM_PAGER_RETRIES || !dimm_reset_retryable(st, ht_err) ||
		    dimm_client_lost(c))
			return st;
		copy_retries++;
	}
}

static int remote_store(struct dimm_client *c, const uint8_t *buf, size_t size)
{
	return remote_copy(c, (uint8_t *)buf, size, true);
}

static int remote_load(struct dimm_client *c, uint8_t *buf, size_t size)
{
	return remote_copy(c, buf, size, false);
}

/* Bandwidth, latency and remote atomics through the explicit API. */
static void explicit_bench(struct app_state *s)
{
	struct dimm_client *c = s->d->app_c;
	struct explicit_res *e = &s->ex;
	size_t size = s->wss;
	uint8_t *a = malloc(size), *b = malloc(size);
	static struct lat_hist hist;
	uint64_t x = 42;
	double t0, t1;
	int st;

	if (!a || !b) {
		snprintf(s->fatal, sizeof(s->fatal), "out of memory");
		goto out;
	}
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t v = ht_splitmix64(&x);

		memcpy(a + i, &v, 8);
	}
	t0 = wl_seconds();
	st = remote_store(c, a, size);
	t1 = wl_seconds();
	if (st) {
		fail_op(s, "write", st);
		goto out;
	}
	e->write_mbs = (double)size / 1e6 / (t1 - t0);
	t0 = wl_seconds();
	st = remote_load(c, b, size);
	t1 = wl_seconds();
	if (st) {
		fail_op(s, "read", st);
		goto out;
	}
	e->read_mbs = (double)size / 1e6 / (t1 - t0);
	e->verified = memcmp(a, b, size) == 0;
	/* blocking 64-byte reads: the latency of one remote access (20 000 of
	 * them, about 50 ms: 2 000 were over in a few ms, one burst of the VM's
	 * noise could move their p50) */
	memset(&hist, 0, sizeof(hist));
	for (int i = 0; i < EXPLICIT_READS; i++) {
		uint64_t off = (ht_splitmix64(&x) % (size / 64)) * 64;
		uint8_t line[64];

		t0 = wl_seconds();
		st = dimm_read(c, off, line, 64);
		t1 = wl_seconds();
		if (st) {
			fail_op(s, "read 64 B", st);
			goto out;
		}
		if (memcmp(line, a + off, 64))
			e->verified = false;
		lat_add(&hist, (uint64_t)((t1 - t0) * 1e9));
	}
	e->rd64_p50_us = lat_quantile(&hist, 0.5) / 1e3;
	e->rd64_p99_us = lat_quantile(&hist, 0.99) / 1e3;
	/* GUPS with remote atomics: fetch-add, up to 64 in flight */
	{
		uint64_t n = 1, ran = 1;

		while (n * 2 <= size / 8)
			n *= 2;
		memset(a, 0, n * 8);
		if ((st = remote_store(c, a, n * 8))) {
			fail_op(s, "write", st);
			goto out;
		}
		e->gups_updates = s->o->wp.gups_updates;
		t0 = wl_seconds();
		for (uint64_t i = 0; i < e->gups_updates;) {
			struct dimm_result r[64];
			int h;

			if (dimm_inflight(c) >= 64) {
				unsigned k = dimm_reap(c, r, 64);

				for (unsigned j = 0; j < k; j++)
					if (r[j].status) {
						fail_op(s, "fetch-add", r[j].status);
						goto out;
					}
				if (!k)
					dr_idle(s->d);
				continue;
			}
			uint64_t nr = (ran << 1) ^ ((int64_t)ran < 0 ? 7u : 0u);

			h = dimm_fadd_async(c, (nr & (n - 1)) * 8, nr, 0);
			if (h == -EAGAIN)
				continue;
			if (h < 0) {
				fail_op(s, "fetch-add", h);
				goto out;
			}
			ran = nr;
			uint64_t *t = (uint64_t *)a;

			t[ran & (n - 1)] += ran;
			i++;
		}
		if ((st = dimm_wait_all(c)) || (st = dimm_flush(c))) {
			fail_op(s, "fetch-add", st);
			goto out;
		}
		t1 = wl_seconds();
		e->gups_mups = (double)e->gups_updates / 1e6 / (t1 - t0);
		if ((st = remote_load(c, b, n * 8))) {
			fail_op(s, "read", st);
			goto out;
		}
		if (memcmp(a, b, n * 8))
			e->verified = false;
	}
	e->done = true;
	if (!e->verified) {
		s->failed = true;
		snprintf(e->why, sizeof(e->why), "remote contents differ from the local copy");
	}
out:
	free(a);
	free(b);
}

/* ------------------------------------------------------------ mapped runs */

struct runarg {
	int k;
	const struct wl_params *wp;
	uint8_t *mem;
	size_t size;
	struct wl_out out;
	double t;
	const uint8_t *cmp; /* verification: compare mem with cmp */
	int cmp_result;
};

static void run_fn(void *arg)
{
	struct runarg *r = arg;
	double t0 = wl_seconds();

	wl_run(r->k, r->wp, r->mem, r->size, &r->out);
	r->t = wl_seconds() - t0;
}

static void cmp_fn(void *arg)
{
	struct runarg *r = arg;

	r->cmp_result = memcmp(r->mem, r->cmp, r->size);
}

static void local_baselines(struct app_state *s)
{
	uint8_t *m = aligned_alloc(DIMM_PAGE, s->wss);

	for (int k = 0; k < WL__N; k++) {
		if (!s->o->wl[k])
			continue;
		double best = 1e30;
		struct wl_out out;

		for (int rep = 0; rep < 2; rep++) {
			wl_init(k, &s->o->wp, m, s->wss); /* also faults the pages in */
			double t0 = wl_seconds();

			wl_run(k, &s->o->wp, m, s->wss, &out);
			double t = wl_seconds() - t0;

			if (t < best)
				best = t;
		}
		s->local_t[k] = best;
		s->local_thr[k] = out.units / 1e6 / best;
		printf("htoe-dimm: %-6s local memory:  %8.4f s  %10.2f %s\n", wl_name(k), best,
		       s->local_thr[k], wl_unit(k));
	}
	free(m);
}

/* Once, at the first transparent run: how dirty pages are found. */
static void print_pager_mode(const struct dimm_pager *p)
{
	const char *m = dimm_pager_mode(p);

	printf("htoe-dimm: pager mode %s: %s%s\n", m,
	       !strncmp(m, "wp-async", 8) ? "dirty pages found by PAGEMAP_SCAN at eviction and "
					    "sync, writes never fault (UFFD_FEATURE_WP_ASYNC)"
	       : !strncmp(m, "wp", 2) ? "dirty pages found by write-protect faults"
				      : "every resident page counts as dirty",
	       strstr(m, "sigbus-rtc") ? "; page faults served in the faulting thread (SIGBUS)"
				       : "");
}

/* One workload at one budget on remote memory. Returns false to stop. */
static bool run_mapped(struct app_state *s, int k, unsigned pct)
{
	struct dapp *d = s->d;
	const struct opts *o = s->o;
	struct run_res *rr = &s->runs[s->n_runs];
	unsigned pages = (unsigned)(s->wss / DIMM_PAGE);
	struct dimm_pager_cfg pc;
	struct dimm_pager *p;
	struct runarg ra, rl;
	char msg[400];
	void *addr;
	int r, st;
	uint8_t *ref = aligned_alloc(DIMM_PAGE, s->wss), *back = aligned_alloc(DIMM_PAGE, s->wss);

	memset(rr, 0, sizeof(*rr));
	rr->wl = k;
	rr->pct = pct;
	rr->pages = pages;
	rr->budget = (unsigned)(((uint64_t)pages * pct + 99) / 100);
	if (!rr->budget)
		rr->budget = 1;
	if (!ref || !back) {
		snprintf(s->fatal, sizeof(s->fatal), "out of memory");
		goto stop;
	}
	/* the initial data, remote and local */
	wl_init(k, &o->wp, ref, s->wss);
	if ((st = remote_store(d->app_c, ref, s->wss))) {
		fail_op(s, "initial write", st);
		goto stop;
	}
	memset(&pc, 0, sizeof(pc));
	pc.client = d->pager_c;
	pc.fetch_client = d->fetch_c;
	pc.off = 0;
	pc.size = s->wss;
	pc.budget = rr->budget;
	pc.readahead = o->readahead;
	pc.clean_low = o->clean_low;
	pc.flags = (o->no_wp ? DIMM_PAGER_F_NO_WP : 0) | (o->no_uffd ? DIMM_PAGER_F_NO_UFFD : 0) |
		   (o->no_wp_async ? 0 : DIMM_PAGER_F_WP_ASYNC) |
		   (o->poll_thread ? 0 : DIMM_PAGER_F_SIGBUS);
	pc.drive = dr_idle; /* run to completion: the faulting thread polls the node */
	pc.drive_arg = d;
	p = dimm_pager_new(&pc, msg, sizeof(msg));
	if (!p) {
		s->uffd_ok = false;
		snprintf(s->uffd_msg, sizeof(s->uffd_msg), "%s", msg);
		free(ref);
		free(back);
		return false;
	}
	if (!s->pager_mode[0])
		print_pager_mode(p);
	snprintf(s->pager_mode, sizeof(s->pager_mode), "%s", dimm_pager_mode(p));
	dr_pager_publish(d, p);
	memset(&ra, 0, sizeof(ra));
	ra.k = k;
	ra.wp = &o->wp;
	ra.mem = dimm_pager_base(p);
	ra.size = s->wss;
	r = dimm_pager_run(p, run_fn, &ra, &addr);
	if (r < 0) {
		dimm_pager_error(p, msg, sizeof(msg));
		snprintf(s->fatal, sizeof(s->fatal),
			 "%s at budget %u%%: remote memory lost (access to page %ld of the "
			 "mapping): %s. The workload was stopped: no value that did not come from "
			 "node %u was used",
			 wl_name(k), pct,
			 (long)(((uint8_t *)addr - (uint8_t *)dimm_pager_base(p)) / DIMM_PAGE), msg,
			 d->lessor);
		goto drop;
	}
	rr->t = ra.t;
	rr->thr = ra.out.units / 1e6 / ra.t;
	rr->slowdown = s->local_t[k] > 0 ? ra.t / s->local_t[k] : 0;
	memcpy(&rr->st, dimm_pager_stats(p), sizeof(rr->st));
	rr->p50 = (uint64_t)lat_quantile(&rr->st.hist, 0.5);
	rr->p99 = (uint64_t)lat_quantile(&rr->st.hist, 0.99);
	rr->wp50 = (uint64_t)lat_quantile(&rr->st.hist_wp, 0.5);
	rr->wp99 = (uint64_t)lat_quantile(&rr->st.hist_wp, 0.99);

	/* verification: the same program on local memory */
	memset(&rl, 0, sizeof(rl));
	rl.k = k;
	rl.wp = &o->wp;
	rl.mem = ref;
	rl.size = s->wss;
	run_fn(&rl);
	rr->verified = true;
	if (rl.out.digest != ra.out.digest) {
		rr->verified = false;
		snprintf(rr->why, sizeof(rr->why), "result digest %#" PRIx64 " != local %#" PRIx64,
			 ra.out.digest, rl.out.digest);
	}
	ra.cmp = ref;
	if (rr->verified && (dimm_pager_run(p, cmp_fn, &ra, NULL) < 0 || ra.cmp_result)) {
		rr->verified = false;
		snprintf(rr->why, sizeof(rr->why), "the mapped memory differs from local memory");
	}
	/* and what reached the remote node: write everything back, read it */
	if (rr->verified) {
		st = dimm_pager_sync(p, false, dr_idle, d);
		if (!st)
			st = remote_load(d->app_c, back, s->wss);
		if (st) {
			rr->verified = false;
			snprintf(rr->why, sizeof(rr->why), "write-back: %s", dimm_strerror(st, 0));
		} else if (memcmp(back, ref, s->wss)) {
			rr->verified = false;
			snprintf(rr->why, sizeof(rr->why), "node %u's memory differs from local memory",
				 d->lessor);
		}
	}
	if (!rr->verified)
		s->failed = true;
	/* sent again after a VL reset (docs/dimm.md, "The transparent mapping") */
	char retried[96] = "";

	if (rr->st.fetch_retries || rr->st.writeback_retries)
		snprintf(retried, sizeof(retried),
			 "  retried after a VL reset: %" PRIu64 " fetches, %" PRIu64 " write-backs",
			 rr->st.fetch_retries, rr->st.writeback_retries);
	/* written back ahead of eviction (docs/dimm.md, "The transparent mapping") */
	char cleaned[96] = "";

	if (rr->st.cleaned)
		snprintf(cleaned, sizeof(cleaned),
			 " (%" PRIu64 " ahead: %" PRIu64 " evictions found them clean)",
			 rr->st.cleaned, rr->st.clean_hits);
	printf("htoe-dimm: %-6s budget %3u%% (%5u of %u pages): %8.4f s %10.2f %s  slowdown %7.1fx"
	       "  faults %" PRIu64 " (p50 %.0f us, p99 %.0f us)  wp %" PRIu64 "  write-backs %"
	       PRIu64 "%s%s  %s%s\n",
	       wl_name(k), pct, rr->budget, pages, rr->t, rr->thr, wl_unit(k), rr->slowdown,
	       rr->st.faults, (double)rr->p50 / 1e3, (double)rr->p99 / 1e3, rr->st.wp_faults,
	       rr->st.writebacks, cleaned, retried, rr->verified ? "verified" : "MISMATCH: ",
	       rr->why);
	if (o->verbose && (rr->st.victim_waits || rr->st.batch_waits))
		printf("htoe-dimm:        of the faults, %" PRIu64 " waited for their victim's write-back"
		       " (p50 %.0f us, p99 %.0f us), %" PRIu64 " for an earlier batch's (p50 %.0f us,"
		       " p99 %.0f us)\n",
		       rr->st.victim_waits, lat_quantile(&rr->st.hist_victim, 0.5) / 1e3,
		       lat_quantile(&rr->st.hist_victim, 0.99) / 1e3, rr->st.batch_waits,
		       lat_quantile(&rr->st.hist_batch, 0.5) / 1e3,
		       lat_quantile(&rr->st.hist_batch, 0.99) / 1e3);
	s->n_runs++;
	dr_pager_withdraw(d);
	dimm_pager_free(p);
	free(ref);
	free(back);
	return true;
drop:
	dr_pager_withdraw(d);
	dimm_pager_free(p);
stop:
	free(ref);
	free(back);
	return false;
}

/* ------------------------------------------------------------ baselines */

/* The remote fault's time over a baseline's (0: no baseline). */
/* What a user would pick instead, on the application's CPU (app/dimm/baselines.h). */
static void fault_baselines(struct app_state *s)
{
	struct dimm_baselines *b = &s->bl;

	dimm_baselines_measure(b);
	if (b->uffd_done)
		printf("htoe-dimm: baseline userfaultfd round trip (local page copy, %u pages): "
		       "p50 %.1f us p99 %.1f us\n", b->pages, b->uffd_p50_us, b->uffd_p99_us);
	else
		printf("htoe-dimm: baseline userfaultfd round trip not measured: %s\n",
		       b->uffd_why);
	if (b->tcp_done)
		printf("htoe-dimm: baseline TCP pager (page server process, loopback, %u pages): "
		       "fault p50 %.1f us p99 %.1f us (access to return: p50 %.1f us p99 %.1f us), "
		       "verified\n", b->pages, b->tcp_p50_us, b->tcp_p99_us, b->tcp_rt_p50_us,
		       b->tcp_rt_p99_us);
	else
		printf("htoe-dimm: baseline TCP pager not measured: %s\n", b->tcp_why);
}

/* "6.02x" against a measured baseline, "n/a" against one that was not. */
static const char *ratio_text(char *buf, size_t len, double us, double base_us)
{
	if (base_us > 0)
		snprintf(buf, len, "%5.2fx", us / base_us);
	else
		snprintf(buf, len, "  n/a");
	return buf;
}

/* "p50 12.4 us p99 56.8 us", or "not measured". */
static const char *base_text(char *buf, size_t len, bool done, double p50, double p99)
{
	if (done)
		snprintf(buf, len, "p50 %.1f us p99 %.1f us", p50, p99);
	else
		snprintf(buf, len, "not measured");
	return buf;
}

/* Every run's remote fault next to the baselines, as ratios. */
static void print_vs_baselines(const struct app_state *s)
{
	const struct dimm_baselines *b = &s->bl;
	char t1[48], t2[48];

	if (!s->n_runs || (!b->uffd_done && !b->tcp_done))
		return;
	printf("htoe-dimm: remote fault vs baselines (userfaultfd %s, TCP pager %s):\n",
	       base_text(t1, sizeof(t1), b->uffd_done, b->uffd_p50_us, b->uffd_p99_us),
	       base_text(t2, sizeof(t2), b->tcp_done, b->tcp_p50_us, b->tcp_p99_us));
	for (unsigned i = 0; i < s->n_runs; i++) {
		const struct run_res *r = &s->runs[i];
		double p50 = (double)r->p50 / 1e3, p99 = (double)r->p99 / 1e3;
		double u50 = b->uffd_done ? b->uffd_p50_us : 0, u99 = b->uffd_done ? b->uffd_p99_us : 0;
		double t50 = b->tcp_done ? b->tcp_p50_us : 0, t99 = b->tcp_done ? b->tcp_p99_us : 0;
		char a[16], c[16], d[16], e[16];

		printf("htoe-dimm:   %-6s %3u%%: p50 %6.1f us = %s uffd, %s TCP;  "
		       "p99 %7.1f us = %s uffd, %s TCP\n",
		       wl_name(r->wl), r->pct, p50, ratio_text(a, sizeof(a), p50, u50),
		       ratio_text(c, sizeof(c), p50, t50), p99, ratio_text(d, sizeof(d), p99, u99),
		       ratio_text(e, sizeof(e), p99, t99));
	}
}

static void pin_to_cpu(unsigned cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *app_thread(void *arg)
{
	struct app_state *s = arg;
	struct dapp *d = s->d;

	/* the borrower's CPU: its loop sleeps while this thread computes */
	pin_to_cpu(rte_lcore_to_cpu_id((int)rte_get_main_lcore()));
	local_baselines(s);
	if (!s->o->no_baselines && !s->o->no_uffd && !signals)
		fault_baselines(s);
	if (!s->o->no_explicit && !signals) {
		explicit_bench(s);
		if (s->ex.done)
			printf("htoe-dimm: explicit API: 64 B read p50 %.1f us p99 %.1f us, "
			       "read %.1f MB/s, write %.1f MB/s, remote fetch-add %.3f MUPS, %s\n",
			       s->ex.rd64_p50_us, s->ex.rd64_p99_us, s->ex.read_mbs, s->ex.write_mbs,
			       s->ex.gups_mups, s->ex.verified ? "verified" : "MISMATCH");
	}
	s->uffd_ok = true;
	for (int k = 0; k < WL__N && !s->fatal[0] && s->uffd_ok && !signals; k++) {
		if (!s->o->wl[k])
			continue;
		for (unsigned b = 0; b < s->o->n_budgets && !signals; b++)
			if (!run_mapped(s, k, s->o->budgets[b]))
				break;
	}
	if (!s->uffd_ok)
		fprintf(stderr, "htoe-dimm: %s\n", s->uffd_msg);
	print_vs_baselines(s);
	atomic_store(&d->quit_a, 1);
	dr_kick(d);
	return NULL;
}

/* ------------------------------------------------------------ output */

static json_t *jratio(double us, double base_us, bool done)
{
	return done && base_us > 0 ? json_real(us / base_us) : json_null();
}

/* A quantile of a fault histogram in us, null when it holds no fault. */
static json_t *jquantile(const struct lat_hist *hist, uint64_t n, double q)
{
	return n ? json_real(lat_quantile(hist, q) / 1e3) : json_null();
}

static json_t *stats_json(const struct run_res *r)
{
	json_t *j = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			 "faults", (json_int_t)r->st.faults, "wp_faults", (json_int_t)r->st.wp_faults,
			 "spurious", (json_int_t)r->st.spurious, "fetches", (json_int_t)r->st.fetches,
			 "readaheads", (json_int_t)r->st.readaheads,
			 "evictions", (json_int_t)r->st.evictions,
			 "writebacks", (json_int_t)r->st.writebacks,
			 "clean_drops", (json_int_t)r->st.drops_clean,
			 "bytes_in", (json_int_t)r->st.bytes_in, "bytes_out", (json_int_t)r->st.bytes_out,
			 "room_waits", (json_int_t)r->st.room_waits,
			 "fetch_retries", (json_int_t)r->st.fetch_retries,
			 "writeback_retries", (json_int_t)r->st.writeback_retries);

	json_object_set_new(j, "wp_scans", json_integer((json_int_t)r->st.wp_scans));
	json_object_set_new(j, "scan_dirty", json_integer((json_int_t)r->st.scan_dirty));
	json_object_set_new(j, "readahead_dropped",
			    json_integer((json_int_t)r->st.readahead_dropped));
	json_object_set_new(j, "cleaned", json_integer((json_int_t)r->st.cleaned));
	json_object_set_new(j, "clean_hits", json_integer((json_int_t)r->st.clean_hits));
	json_object_set_new(j, "clean_waits", json_integer((json_int_t)r->st.clean_waits));
	json_object_set_new(j, "batched_drops", json_integer((json_int_t)r->st.batched_drops));
	json_object_set_new(j, "batched_writebacks",
			    json_integer((json_int_t)r->st.batched_writebacks));
	json_object_set_new(j, "copied_writebacks",
			    json_integer((json_int_t)r->st.copied_writebacks));
	/* the faults that waited for a write-back, by what they waited for */
	json_object_set_new(j, "victim_waits", json_integer((json_int_t)r->st.victim_waits));
	json_object_set_new(j, "victim_wait_p50_us",
			    jquantile(&r->st.hist_victim, r->st.victim_waits, 0.5));
	json_object_set_new(j, "victim_wait_p99_us",
			    jquantile(&r->st.hist_victim, r->st.victim_waits, 0.99));
	json_object_set_new(j, "batch_waits", json_integer((json_int_t)r->st.batch_waits));
	json_object_set_new(j, "batch_wait_p50_us",
			    jquantile(&r->st.hist_batch, r->st.batch_waits, 0.5));
	json_object_set_new(j, "batch_wait_p99_us",
			    jquantile(&r->st.hist_batch, r->st.batch_waits, 0.99));
	return j;
}

static int write_json(const struct app_state *s, const char *path, const char *transport)
{
	const struct dapp *d = s->d;
	const struct htoe_vl_stats *vs = htoe_get_vl_stats(d->borrower->b, d->lessor);
	json_t *root = json_object(), *runs = json_array(), *local = json_object();
	char gaddr[32];

	struct htoe_host_info host;

	htoe_host_info(&host); /* date: when the run ended and its results were written */
	snprintf(gaddr, sizeof(gaddr), "0x%" PRIx64, d->lease.gaddr);
	json_object_set_new(root, "tool", json_string("htoe-dimm"));
	json_object_set_new(root, "machine", json_pack("{s:s, s:s, s:i, s:f, s:s, s:s}", "date",
		host.date, "cpu_model", host.cpu, "cpus", (json_int_t)host.nproc, "loadavg1",
		host.loadavg1, "git", host.git, "version", host.version));
	json_object_set_new(root, "setup",
			    json_pack("{s:s,s:I,s:I,s:s,s:I,s:b,s:I,s:I}", "transport", transport,
				      "wss_bytes", (json_int_t)s->wss,
				      "pages", (json_int_t)(s->wss / DIMM_PAGE), "pager_mode",
				      s->pager_mode, "readahead", (json_int_t)s->o->readahead,
				      "transparent", s->uffd_ok, "spin_us",
				      (json_int_t)s->o->spin_us, "cpus",
				      (json_int_t)sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(json_object_get(root, "setup"), "clean_low",
			    json_integer(s->o->clean_low));
	json_object_set_new(json_object_get(root, "setup"), "wait",
			    json_string(s->o->poll_thread ? "poll-thread" : "run-to-completion"));
	if (!s->uffd_ok)
		json_object_set_new(json_object_get(root, "setup"), "transparent_reason",
				    json_string(s->uffd_msg));
	json_object_set_new(root, "lease",
			    json_pack("{s:i,s:s,s:I,s:I,s:I}", "lessor", d->lessor, "gaddr", gaddr,
				      "size", (json_int_t)d->lease.size, "duration_ms",
				      (json_int_t)(d->lease.duration_ns / 1000000),
				      "renewals", (json_int_t)d->lease.renewals));
	for (int k = 0; k < WL__N; k++)
		if (s->o->wl[k])
			json_object_set_new(local, wl_name(k),
					    json_pack("{s:f,s:f,s:s}", "time_s", s->local_t[k],
						      "throughput", s->local_thr[k], "unit",
						      wl_unit(k)));
	json_object_set_new(root, "local", local);
	for (unsigned i = 0; i < s->n_runs; i++) {
		const struct run_res *r = &s->runs[i];
		json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:f,s:f,s:s,s:f,s:b,s:f,s:f,s:f,s:f}",
				      "workload", wl_name(r->wl), "budget_pct", (json_int_t)r->pct,
				      "budget_pages", (json_int_t)r->budget, "pages",
				      (json_int_t)r->pages, "time_s", r->t, "throughput", r->thr,
				      "unit", wl_unit(r->wl), "slowdown", r->slowdown, "verified",
				      r->verified, "fault_p50_us", (double)r->p50 / 1e3,
				      "fault_p99_us", (double)r->p99 / 1e3, "wp_fault_p50_us",
				      (double)r->wp50 / 1e3, "wp_fault_p99_us", (double)r->wp99 / 1e3);

		json_object_set_new(o, "pager", stats_json(r));
		if (s->bl.uffd_done || s->bl.tcp_done) {
			double p50 = (double)r->p50 / 1e3, p99 = (double)r->p99 / 1e3;

			/* null against a baseline that was not measured */
			json_object_set_new(
				o, "vs_baselines",
				json_pack("{s:o,s:o,s:o,s:o}", "p50_vs_uffd",
					  jratio(p50, s->bl.uffd_p50_us, s->bl.uffd_done),
					  "p99_vs_uffd",
					  jratio(p99, s->bl.uffd_p99_us, s->bl.uffd_done),
					  "p50_vs_tcp", jratio(p50, s->bl.tcp_p50_us, s->bl.tcp_done),
					  "p99_vs_tcp", jratio(p99, s->bl.tcp_p99_us, s->bl.tcp_done)));
		}
		if (!r->verified)
			json_object_set_new(o, "why", json_string(r->why));
		json_array_append_new(runs, o);
	}
	json_object_set_new(root, "runs", runs);
	if (s->bl.uffd_done || s->bl.tcp_done) {
		json_t *b = json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f}", "pages",
				      (json_int_t)s->bl.pages, "uffd_p50_us", s->bl.uffd_p50_us,
				      "uffd_p99_us", s->bl.uffd_p99_us, "tcp_fault_p50_us",
				      s->bl.tcp_p50_us, "tcp_fault_p99_us", s->bl.tcp_p99_us,
				      "tcp_access_p50_us", s->bl.tcp_rt_p50_us,
				      "tcp_access_p99_us", s->bl.tcp_rt_p99_us);

		if (!s->bl.uffd_done)
			json_object_set_new(b, "uffd_error", json_string(s->bl.uffd_why));
		if (!s->bl.tcp_done)
			json_object_set_new(b, "tcp_error", json_string(s->bl.tcp_why));
		json_object_set_new(root, "baselines", b);
	}
	if (s->ex.done)
		json_object_set_new(root, "explicit",
				    json_pack("{s:f,s:f,s:f,s:f,s:f,s:I,s:b}", "read64_p50_us",
					      s->ex.rd64_p50_us, "read64_p99_us", s->ex.rd64_p99_us,
					      "read_MBps", s->ex.read_mbs, "write_MBps",
					      s->ex.write_mbs, "fetch_add_mups", s->ex.gups_mups,
					      "fetch_add_updates", (json_int_t)s->ex.gups_updates,
					      "verified", s->ex.verified));
	if (vs)
		json_object_set_new(root, "vl",
				    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "tx_frames",
					      (json_int_t)vs->tx_frames, "rx_frames",
					      (json_int_t)vs->rx_frames, "retransmits",
					      (json_int_t)vs->retransmits, "timeouts",
					      (json_int_t)vs->timeouts, "resets", (json_int_t)vs->resets,
					      "poisoned", (json_int_t)vs->poisoned, "np_timeouts",
					      (json_int_t)vs->np_timeouts, "late_responses",
					      (json_int_t)vs->late_responses, "unexpected_responses",
					      (json_int_t)htoe_get_stats(d->borrower->b)->unexpected_responses,
					      "peer_restarts", (json_int_t)vs->peer_restarts));
	json_object_set_new(root, "copy_retries", json_integer((json_int_t)copy_retries));
	json_object_set_new(root, "ok", json_boolean(!s->failed && !s->fatal[0]));
	json_object_set_new(root, "error", s->fatal[0] ? json_string(s->fatal) : json_null());
	int r = json_dump_file(root, path, JSON_INDENT(1) | JSON_SORT_KEYS);

	json_decref(root);
	return r;
}

/* --plot FILE: 0 when written, -1 (message on stderr) if not */
static int plot(const char *json, const char *png)
{
	int r = htoe_run_python(dimm_plot_py, json, png);

	if (r == -1)
		fprintf(stderr, "htoe-dimm: --plot %s: cannot run /usr/bin/python3\n", png);
	else if (r)
		fprintf(stderr, "htoe-dimm: --plot %s: the plot failed (python3-matplotlib "
			"installed?)\n", png);
	else
		printf("htoe-dimm: plot: %s\n", png);
	return r ? -1 : 0;
}

/* --verbose: the driver's and the bridges' counters of every node here. */
static void print_counters(const struct dapp *d, const struct opts *o)
{
	for (unsigned i = 0; i < d->n_nodes; i++) {
		const struct dnode *x = &d->nodes[i];
		uint16_t peer = x->borrower ? d->lessor : (uint16_t)o->borrower;
		const struct htoe_vl_stats *v = htoe_get_vl_stats(x->b, peer);
		const struct htoe_stats *hs = htoe_get_stats(x->b);

		printf("htoe-dimm: node %u: frames rx %" PRIu64 " tx %" PRIu64 " rx_bad %" PRIu64
		       " tx_refused %" PRIu64 " alloc_fail %" PRIu64 "; loop: polls %" PRIu64
		       " sleeps %" PRIu64 " yields %" PRIu64 " gaps>150us %" PRIu64
		       " (max %.1f ms); backpressure %" PRIu64 "\n",
		       x->id, x->c.rx_frames, x->c.tx_frames, x->c.rx_bad, x->drv.port->tx_refused,
		       x->c.alloc_fail, x->c.polls, x->lc.sleeps, x->lc.yields, x->lc.gaps,
		       (double)x->lc.max_gap / 1e6, hs->backpressure);
		if (!v)
			continue;
		printf("htoe-dimm: node %u: VL to %u: tx %" PRIu64 " rx %" PRIu64 " retransmits %"
		       PRIu64 " timeouts %" PRIu64 " naks %" PRIu64 "/%" PRIu64 " acks %" PRIu64
		       " credit-starved %.1f ms probes %" PRIu64 " resets %" PRIu64 " drops:",
		       x->id, peer, v->tx_frames, v->rx_frames, v->retransmits, v->timeouts,
		       v->naks_sent, v->naks_rcvd, v->acks_sent, (double)v->credit_starved_ns / 1e6,
		       v->credit_probes, v->resets);
		for (int k = 1; k < HTOE_DROP__COUNT; k++)
			if (v->drops[k])
				printf(" %s=%" PRIu64, htoe_drop_name(k), v->drops[k]);
		putchar('\n');
	}
}

/* The MACsec counters of a node (nothing when MACsec is off); on the
 * node's own thread, or after it stopped. */
static void print_macsec(struct dnode *x)
{
	if (!x->drv.ms)
		return;
	br_macsec_publish(x->drv.ms);
	printf("htoe-dimm: node %u:\n", x->id);
	br_macsec_print(stdout, x->drv.ms);
}

/* ------------------------------------------------------------ setup */

/* The embedded default configuration, as a file br_cfg_load can read. */
static int embedded_config(char *path, size_t len)
{
	int fd = memfd_create("dimm-demo.ini", MFD_CLOEXEC);
	size_t n = strlen(dimm_default_ini);

	if (fd < 0 || write(fd, dimm_default_ini, n) != (ssize_t)n)
		return -1;
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run_opts ro = { .on = false };
	struct run_ctx rx;
	bool run_done = false;
	struct dapp *d;
	struct br_app *a;
	struct app_state *s;
	char err[1024], cfgpath[64], set_mem[64], set_map[96];
	int eal_argc, rc = 0, cfd = -1;
	uint64_t export_size, watchdog_ns = 0;
	bool watchdog_report = false;
	pthread_t th;
	bool th_started = false, out_failed = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	{
		static const char *const no_eal[] = { "--help", "-h", "--version", NULL };
		char **av;
		int n = br_split_args(argc, argv, no_eal, &eal_argc, &av);

		if (n < 0)
			return 3;
		n = split_run(n, av, &ro);
		if (n < 0 || parse_opts(n, av, &o)) {
			free(av);
			return 2;
		}
		if (ro.on) {
			/* the program's arguments: from av into argv (br_split_args) */
			int start = eal_argc < argc && !strcmp(argv[eal_argc], "--") ? eal_argc + 1 : 1;

			ro.argv = argv + start + (ro.argv - av) - 1;
			run_implies(&o, &ro);
			if (run_redirect(&ro)) {
				free(av);
				return 2;
			}
		}
		free(av);
	}
	s = calloc(1, sizeof(*s));
	d = calloc(1, sizeof(*d));
	a = calloc(1, sizeof(*a));
	if (!s || !d || !a) {
		free(s);
		free(d);
		free(a);
		return 3;
	}
	br_app = a;
	a->prog = "htoe-dimm";
	d->br = a;
	d->efd = -1;
	d->app_efd = -1;
	d->lease_ns = o.lease_ms * 1000000ull;
	d->quota_slots = o.quota_slots ? (unsigned)o.quota_slots : 16;
	d->quota_bytes = o.quota_bytes ? o.quota_bytes
				       : (o.wss + DIMM_PAGE - 1) / DIMM_PAGE * DIMM_PAGE;
	d->spin_ns = o.spin_us * 1000ull;
	d->rtc = !o.poll_thread;
	d->kill_after_faults = o.kill_after_faults;
	d->drop_renewals_after = o.drop_renewals_after;
	s->d = d;
	s->o = &o;
	s->wss = (size_t)((o.wss + DIMM_PAGE - 1) / DIMM_PAGE * DIMM_PAGE);

	/* configuration: the embedded default is sized from --wss */
	export_size = (s->wss + 0xffff) / 0x10000 * 0x10000 + 0x10000;
	if (!o.config) {
		cfd = embedded_config(cfgpath, sizeof(cfgpath));
		if (cfd < 0) {
			fprintf(stderr, "htoe-dimm: cannot create a memfd for the embedded configuration\n");
			rc = 2;
			goto out_free;
		}
		snprintf(set_mem, sizeof(set_mem), "node 2.mem_size=%" PRIu64, export_size);
		snprintf(set_map, sizeof(set_map), "map.range2=%#" PRIx64 " %" PRIu64 " 2",
			 GBASE_DEFAULT, export_size);
		o.ov.sets[o.ov.n_sets++] = set_mem;
		o.ov.sets[o.ov.n_sets++] = set_map;
	}
	for (unsigned i = 0; i < o.n_sets; i++)
		o.ov.sets[o.ov.n_sets++] = o.sets[i];
	if (br_cfg_load(&a->cfg, o.config ? o.config : cfgpath, &o.ov, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: %s\n", err);
		rc = 2;
		goto out_free;
	}
	if (!o.config)
		snprintf(a->cfg.file, sizeof(a->cfg.file), "<embedded dimm-demo.ini>");
	/* roles */
	bool borrower_here = false;

	for (unsigned i = 0; i < a->cfg.n_nodes; i++)
		borrower_here |= a->cfg.nodes[i].id == o.borrower;
	if (o.lessor < 0) {
		/* the borrower's first peer (from any node's map) */
		const struct htoe_map *m = a->cfg.nodes[0].bc.map;

		for (unsigned i = 0; i < htoe_map_peer_count(m); i++)
			if (htoe_map_peer(m, i)->node != o.borrower) {
				o.lessor = htoe_map_peer(m, i)->node;
				break;
			}
		if (o.lessor < 0 && a->cfg.nodes[0].id != o.borrower)
			o.lessor = a->cfg.nodes[0].id;
	}
	if (o.lessor < 0 || o.lessor == o.borrower) {
		fprintf(stderr, "htoe-dimm: %s: no node to lease memory from (--lessor)\n",
			a->cfg.file);
		rc = 2;
		goto out_free;
	}
	d->lessor = (uint16_t)o.lessor;
	if (br_stall_config(&watchdog_ns, &watchdog_report, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: %s\n", err);
		rc = 2;
		goto out_free;
	}
	/* before the EAL pins this thread: the HTTP thread must not share a poller's CPU */
	if (dm_metrics_start(&d->br->cfg, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: %s\n", err);
		rc = 2;
		goto out_free;
	}

	if (rte_eal_init(eal_argc, argv) < 0) {
		htoe_eal_init_failed(stderr, "htoe-dimm", rte_errno ? rte_strerror(rte_errno) : NULL,
				     eal_argc, argv);
		rc = 3;
		goto out_free;
	}
	g_dapp = d;
	g_borrower_here = borrower_here;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	br_clock_init(a);
	br_clock_start(a);
	br_stall_setup_begin();
	if (br_stall_start(watchdog_ns, watchdog_report, a->tsc_hz, "htoe-dimm", err,
			   sizeof(err))) {
		rc = 3;
		goto fail;
	}
	/* the exporters only serve: they sleep when idle unless [global] poll = busy */
	a->poll = a->cfg.poll == 1 ? BR_POLL_BUSY : BR_POLL_ADAPTIVE;

	unsigned n_exporters = a->cfg.n_nodes - (borrower_here ? 1u : 0u);

	if (borrower_here && n_exporters > rte_lcore_count() - 1) {
		snprintf(err, sizeof(err), "%u exporting node(s) here need %u worker lcore(s) next to "
			 "the borrower's main lcore (EAL -l 0-%u)", n_exporters, n_exporters,
			 n_exporters);
		rc = 2;
		goto fail;
	}
	rc = 3;
	if (br_pool_create(a, "dimm_mbufs", 8192, err, sizeof(err)))
		goto fail;
	rc = 2;
	if (dr_nodes_setup(d, borrower_here ? (uint16_t)o.borrower : 0, err, sizeof(err)))
		goto fail;
	if (dr_metrics_nodes(d, err, sizeof(err)))
		goto fail;
	if (br_ports_create(a, err, sizeof(err)))
		goto fail;
	if (dr_ports_assign(d, err, sizeof(err)))
		goto fail;
	rc = 3;
	if (br_ports_start(a, err, sizeof(err)))
		goto fail;

	br_stall_setup_end();
	/* exporters on worker lcores (or the main one, in an exporter-only process) */
	{
		unsigned l, next = 0;
		unsigned workers[RTE_MAX_LCORE], nw = 0;

		RTE_LCORE_FOREACH_WORKER(l)
			workers[nw++] = l;
		for (unsigned i = 0; i < d->n_nodes; i++) {
			struct dnode *x = &d->nodes[i];

			if (x->borrower)
				continue;
			printf("htoe-dimm: node %u exports %" PRIu64 " KiB at %#" PRIx64 " (%s)\n", x->id,
			       x->cfg->mem_size / 1024, x->cfg->mem_base, x->drv.port->name);
			if (next < nw) {
				rte_eal_remote_launch(dr_exporter_loop, x, workers[next++]);
			} else if (!borrower_here && i == d->n_nodes - 1) {
				/* the last one runs here, until a signal or --duration */
				if (o.duration_ns) {
					/* a timer thread would be overkill: alarm() */
					signal(SIGALRM, on_signal);
					alarm((unsigned)((o.duration_ns + 999999999) / 1000000000));
				}
				dr_exporter_loop(x);
			} else {
				snprintf(err, sizeof(err), "not enough lcores for the exporting nodes");
				goto fail;
			}
		}
	}
	if (!borrower_here) {
		while (!atomic_load(&d->quit_b)) {
			usleep(10000);
		}
		rte_eal_mp_wait_lcore();
		for (unsigned i = 0; i < d->n_nodes; i++)
			print_macsec(&d->nodes[i]);
		rc = 0;
		goto cleanup;
	}

	/* the borrower: lease, then the application thread and this lcore's loop */
	printf("htoe-dimm: node %u leases %zu KiB from node %u (%s)\n", o.borrower, s->wss / 1024,
	       d->lessor, a->cfg.file);
	if (dr_borrower_start(d, s->wss, 10000000000ull, err, sizeof(err))) {
		rc = 1;
		goto stop;
	}
	printf("htoe-dimm: lease %#x: global %#" PRIx64 " +%" PRIu64 " KiB (node %u address %#"
	       PRIx64 "), %" PRIu64 " ms, renewed every %" PRIu64 " ms\n",
	       d->lease.lease_id, d->lease.gaddr, d->lease.size / 1024, d->lessor, d->lease.addr,
	       d->lease.duration_ns / 1000000, d->lease.duration_ns / 3000000);
	rx.d = d;
	rx.ro = &ro;
	rx.status = 1;
	if (ro.on) {
		if (pthread_create(&th, NULL, run_thread, &rx)) {
			snprintf(err, sizeof(err), "cannot start the --run thread");
			rc = 3;
			goto stop;
		}
		dr_borrower_loop(d);
		pthread_join(th, NULL);
		rc = 0;
		run_done = true; /* the run thread said what went wrong */
		goto stop;
	}
	if (pthread_create(&th, NULL, app_thread, s)) {
		snprintf(err, sizeof(err), "cannot start the application thread");
		rc = 3;
		goto stop;
	}
	th_started = true;
	dr_borrower_loop(d);
	pthread_join(th, NULL);
	th_started = false;

	/* report */
	{
		const char *transport = o.config ? "config" : "in-process net_ring";
		bool impaired = false;

		for (unsigned i = 0; i < a->n_ports; i++)
			impaired |= a->ports[i].imp_tx || a->ports[i].imp_rx;
		if (impaired)
			transport = o.config ? "config, impaired" : "in-process net_ring, impaired";
		if (o.json) {
			if (write_json(s, o.json, transport)) {
				fprintf(stderr, "htoe-dimm: --json %s: cannot write it\n", o.json);
				out_failed = true;
			} else {
				printf("htoe-dimm: results: %s\n", o.json);
				if (!o.no_plot && o.plot && s->n_runs && plot(o.json, o.plot))
					out_failed = true;
			}
		}
		const struct htoe_vl_stats *vs = htoe_get_vl_stats(d->borrower->b, d->lessor);

		if (vs)
			printf("htoe-dimm: VL to node %u: %" PRIu64 " frames out, %" PRIu64
			       " in, %" PRIu64 " retransmits, %" PRIu64 " resets, %" PRIu64
			       " late responses, %" PRIu64 " unexpected responses, %" PRIu64
			       " peer restarts; lease renewed %" PRIu64 " times\n", d->lessor,
			       vs->tx_frames, vs->rx_frames, vs->retransmits, vs->resets,
			       vs->late_responses,
			       htoe_get_stats(d->borrower->b)->unexpected_responses,
			       vs->peer_restarts, d->lease.renewals);
	}
	print_macsec(d->borrower);
	if (o.verbose)
		print_counters(d, &o);
	if (s->fatal[0]) {
		fprintf(stderr, "htoe-dimm: error: %s\n", s->fatal);
		rc = 1;
	} else if (s->failed) {
		fprintf(stderr, "htoe-dimm: verification FAILED\n");
		rc = 1;
	} else {
		printf("htoe-dimm: all results verified against local memory\n");
		rc = 0;
	}
	if (out_failed && !rc) {
		/* printed at cleanup */
		snprintf(err, sizeof(err), "an output file was not written (above)");
		rc = 1;
	}
stop:
	if (th_started) {
		atomic_store(&d->quit_a, 1);
		pthread_join(th, NULL);
	}
	atomic_store(&d->quit_b, 1);
	rte_eal_mp_wait_lcore();
	goto cleanup;
fail:
	fprintf(stderr, "htoe-dimm: %s\n", err);
	atomic_store(&d->quit_b, 1);
	rte_eal_mp_wait_lcore();
cleanup:
	if (rc == 1 && !s->fatal[0] && !s->failed)
		fprintf(stderr, "htoe-dimm: %s\n", err);
	br_stall_stop();
	br_ports_stop(a);
	dr_nodes_teardown(d);
	if (a->pool)
		rte_mempool_free(a->pool);
	rte_eal_cleanup();
out_free:
	dm_metrics_stop();
	if (cfd >= 0)
		close(cfd);
	free(a->ports);
	br_cfg_free(&a->cfg);
	g_dapp = NULL;
	br_app = NULL;
	free(a);
	free(d);
	free(s);
	return run_done ? rx.status : rc;
}
