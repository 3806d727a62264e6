/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: the HToE bridge on DPDK poll-mode ports.
 *
 *   htoe-bridge EAL-ARGS -- [--config FILE] [options]
 *
 * With no --config it runs the embedded two-node demo
 * (config/two-node-demo.ini): two nodes in this process over a net_ring
 * crossover pair, each on its own lcore, each running a verified workload
 * against the other's memory. See docs/bridge.md and docs/config.md.
 *
 * Exit status: 0 every completion verified (or no workload), 1 a mismatch,
 * an error response or an incomplete run, 2 a configuration or usage
 * error (nothing was started), 3 an EAL or device failure.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "bridge/args.h"
#include "bridge/bridge.h"
#include "bridge/metrics.h"
#include "eal_hint.h"
#include "htoe_version.h"
#include "out_file.h"
#include "parse_num.h"

struct br_app *br_app;

static void usage(FILE *f)
{
	fputs("usage: htoe-bridge EAL-ARGS -- [options]\n"
	      "  EAL-ARGS, e.g.: -l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix NAME\n"
	      "  (add --vdev=... for ports given by name; see docs/bridge.md)\n"
	      "options:\n"
	      "  --config FILE        INI configuration (docs/config.md); default: the\n"
	      "                       embedded two-node demo (config/two-node-demo.ini)\n"
	      "  --set SECT.KEY=VAL   override one configuration value (repeatable),\n"
	      "                       e.g. --set impair.loss=1%  --set 'node 1.mtu=9000'\n"
	      "  --node ID[,ID..]     run only these [node] sections; the others are peers\n"
	      "  --transactions N     random operations in total, split over the workloads\n"
	      "  --duration SEC       stop the workloads after SEC seconds (then drain)\n"
	      "  --stats SEC          seconds between summary lines (0: none; default 1)\n"
	      "  --capture DIR        write DIR/port<N>-tx.pcap and -rx.pcap\n"
	      "  --json               print the final summary also as one JSON line\n"
	      "  --check              check the configuration and the devices, start nothing\n"
	      "  --print-config       print the embedded default configuration and exit\n"
	      "  --config-reference md|man|txt\n"
	      "                       print every section and key of the configuration\n"
	      "                       (type, range, default, meaning) and exit\n"
	      "  --help               this text\n"
	      "  --version            the version\n"
	      "exit status: 0 all verified, 1 verification failed or incomplete,\n"
	      "             2 configuration/usage error (nothing started), 3 EAL/device error\n",
	      f);
}

static void on_signal(int sig)
{
	(void)sig;
	br_signals++;
}

static int parse_seconds(const char *s, uint64_t *ns)
{
	double v;

	if (htoe_parse_double(s, 0, 1e9, &v))
		return -1;
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

/* Nodes to lcores: explicit [node N] lcore, else round-robin over the
 * workers when there are more lcores than nodes (the main lcore then only
 * controls), else over all lcores starting with the main one. */
static int assign_lcores(struct br_app *a, char *err, size_t errlen)
{
	unsigned order[RTE_MAX_LCORE], n = 0, next = 0, l;
	unsigned main_id = rte_get_main_lcore();
	unsigned count = rte_lcore_count();

	if (count <= a->n_nodes)
		order[n++] = main_id;
	RTE_LCORE_FOREACH_WORKER(l)
		order[n++] = l;
	if (!n)
		order[n++] = main_id;
	a->lcores[main_id].is_main = true;
	for (unsigned i = 0; i < a->n_nodes; i++) {
		struct br_node *nd = &a->nodes[i];
		unsigned lc;

		if (nd->cfg->lcore >= 0) {
			lc = (unsigned)nd->cfg->lcore;
			if (lc >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lc)) {
				snprintf(err, errlen,
					 "%s: lcore %u is not enabled (EAL -l/--lcores gives %u lcores)",
					 nd->cfg->lcore_where, lc, count);
				return -1;
			}
		} else {
			lc = order[next++ % n];
		}
		struct br_lcore *c = &a->lcores[lc];

		c->lcore_id = lc;
		c->nodes[c->n_nodes++] = nd;
		nd->lc = c;
	}
	a->n_lcores = 0;
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		a->lcores[l].lcore_id = l;
		a->n_lcores += a->lcores[l].n_nodes > 0;
	}
	return 0;
}

static void print_plan(const struct br_app *a)
{
	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];
		char mac[24];

		br_format_mac(n->cfg->bc.mac, mac, sizeof(mac));
		printf("htoe-bridge: node %u (%s) on lcore %u, port %u (%s), exports %#" PRIx64
		       " +%#" PRIx64, n->id, mac, n->lc->lcore_id, n->drv.port->cfg->index,
		       n->drv.port->name,
		       n->cfg->mem_base, n->cfg->mem_size);
		if (n->cfg->wl.enabled)
			printf(", workload: %" PRIu64 " ops on node %u [%#" PRIx64 ", +%#" PRIx64 ")",
			       n->cfg->wl.ops, n->cfg->wl.target, n->cfg->wl.base, n->cfg->wl.size);
		putchar('\n');
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, 0, 'c' },
		{ "set", required_argument, 0, 'S' },
		{ "node", required_argument, 0, 'n' },
		{ "transactions", required_argument, 0, 't' },
		{ "duration", required_argument, 0, 'd' },
		{ "stats", required_argument, 0, 's' },
		{ "capture", required_argument, 0, 'C' },
		{ "json", no_argument, 0, 'j' },
		{ "check", no_argument, 0, 'k' },
		{ "print-config", no_argument, 0, 'p' },
		{ "config-reference", required_argument, 0, 'R' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	struct br_overrides ov;
	const char *config = NULL;
	bool check = false, json = false;
	char err[1024];
	static const char *const no_eal[] = { "--help", "-h", "--print-config",
					      "--config-reference", "--version", NULL };
	int eal_argc, app_argc, opt, rc = 0;
	char **app_argv;
	struct br_app *a;
	uint64_t u, watchdog_ns;
	bool watchdog_report;

	setvbuf(stdout, NULL, _IOLBF, 0);
	br_overrides_init(&ov);
	/* EAL arguments, then --, then ours */
	app_argc = br_split_args(argc, argv, no_eal, &eal_argc, &app_argv);
	if (app_argc < 0)
		return 3;
#define ARGS_DONE(code) do { free(app_argv); return (code); } while (0)
	while ((opt = getopt_long(app_argc, app_argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': config = optarg; break;
		case 'S':
			if (ov.n_sets == BR_MAX_SETS) {
				fprintf(stderr, "htoe-bridge: more than %u --set\n", BR_MAX_SETS);
				ARGS_DONE(2);
			}
			ov.sets[ov.n_sets++] = optarg;
			break;
		case 'n': ov.only_nodes = optarg; break;
		case 't':
			if (br_parse_size(optarg, &u) || u > INT64_MAX) {
				fprintf(stderr, "htoe-bridge: --transactions '%s': not a count\n", optarg);
				ARGS_DONE(2);
			}
			ov.transactions = (int64_t)u;
			break;
		case 'd':
			if (parse_seconds(optarg, &u)) {
				fprintf(stderr, "htoe-bridge: --duration '%s': not seconds\n", optarg);
				ARGS_DONE(2);
			}
			ov.duration_ns = (int64_t)u;
			break;
		case 's':
			if (parse_seconds(optarg, &u)) {
				fprintf(stderr, "htoe-bridge: --stats '%s': not seconds\n", optarg);
				ARGS_DONE(2);
			}
			ov.stats_ns = (int64_t)u;
			break;
		case 'C': ov.capture_dir = optarg; break;
		case 'j': json = true; break;
		case 'k': check = true; break;
		case 'p': fputs(br_cfg_default_text(), stdout); ARGS_DONE(0);
		case 'R':
			if (strcmp(optarg, "md") && strcmp(optarg, "man") && strcmp(optarg, "txt")) {
				fprintf(stderr, "htoe-bridge: --config-reference '%s': md, man or txt\n",
					optarg);
				ARGS_DONE(2);
			}
			cfg_reference(&br_cfg_schema, !strcmp(optarg, "md") ? CFG_REF_MD :
				      !strcmp(optarg, "man") ? CFG_REF_MAN : CFG_REF_TXT, stdout);
			ARGS_DONE(0);
		case 'h': usage(stdout); ARGS_DONE(0);
		case 'V': htoe_print_version("htoe-bridge"); ARGS_DONE(0);
		default: usage(stderr); ARGS_DONE(2);
		}
	}
	if (optind < app_argc) {
		fprintf(stderr, "htoe-bridge: unexpected argument '%s' (EAL arguments go before --)\n",
			app_argv[optind]);
		ARGS_DONE(2);
	}

	if (ov.capture_dir && htoe_check_out_dir(ov.capture_dir, err, sizeof(err))) {
		fprintf(stderr, "htoe-bridge: --capture: %s\n", err);
		ARGS_DONE(2);
	}
	free(app_argv); /* optarg points into argv, not into app_argv */
#undef ARGS_DONE

	a = calloc(1, sizeof(*a));
	if (!a)
		return 3;
	br_app = a;
	a->json = json;
	/* the whole configuration is checked before the EAL starts */
	if (br_cfg_load(&a->cfg, config, &ov, err, sizeof(err))) {
		fprintf(stderr, "htoe-bridge: %s\n", err);
		return 2;
	}
	if (br_stall_config(&watchdog_ns, &watchdog_report, err, sizeof(err))) {
		fprintf(stderr, "htoe-bridge: %s\n", err);
		return 2;
	}
	/* before the EAL pins this thread: the HTTP thread must not share a poller's CPU */
	if (br_metrics_start(a, err, sizeof(err))) {
		fprintf(stderr, "htoe-bridge: %s\n", err);
		return 2;
	}

	if (rte_eal_init(eal_argc, argv) < 0) {
		htoe_eal_init_failed(stderr, "htoe-bridge", rte_errno ? rte_strerror(rte_errno) : NULL,
				     eal_argc, argv);
		return 3;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	br_clock_init(a);
	br_stall_setup_begin();
	/* busy polling unless [global] poll = adaptive: the demo measures speed */
	a->poll = a->cfg.poll == 2 ? BR_POLL_ADAPTIVE : BR_POLL_BUSY;
	a->n_nodes = a->cfg.n_nodes;
	/* plain heap, not DPDK memory: the telemetry thread may read the
	 * published counters until exit, after rte_eal_cleanup() */
	a->nodes = aligned_alloc(RTE_CACHE_LINE_SIZE,
				 RTE_ALIGN_CEIL(sizeof(*a->nodes) * a->n_nodes, RTE_CACHE_LINE_SIZE));
	if (a->nodes)
		memset(a->nodes, 0, sizeof(*a->nodes) * a->n_nodes);
	if (!a->nodes) {
		fprintf(stderr, "htoe-bridge: out of memory\n");
		rc = 3;
		goto cleanup;
	}
	for (unsigned i = 0; i < a->n_nodes; i++) {
		a->nodes[i].cfg = &a->cfg.nodes[i];
		a->nodes[i].id = a->cfg.nodes[i].id;
	}
	rc = 2;
	if (assign_lcores(a, err, sizeof(err)))
		goto fail;
	rc = 3;
	if (br_pool_create(a, "htoe_mbufs", 4096 + 2 * 256 * rte_lcore_count(), err, sizeof(err)))
		goto fail;
	for (unsigned i = 0; i < a->n_nodes; i++)
		if (br_node_setup(a, &a->nodes[i], &a->cfg.nodes[i], err, sizeof(err)))
			goto fail;
	rc = 2; /* a device that does not exist is a configuration error */
	if (br_ports_create(a, err, sizeof(err)))
		goto fail;
	for (unsigned i = 0; i < a->n_nodes; i++)
		a->nodes[i].drv.port = &a->ports[a->cfg.nodes[i].port];
	if (br_capture_open(a, err, sizeof(err)))
		goto fail;
	if (check) {
		print_plan(a);
		printf("htoe-bridge: configuration OK (%s)\n", a->cfg.file);
		rc = 0;
		goto cleanup;
	}
	if (br_telemetry_register(a))
		fprintf(stderr, "htoe-bridge: telemetry commands not registered\n");
	br_metrics_ready(a);
	rc = 3;
	if (br_ports_start(a, err, sizeof(err)))
		goto fail;
	print_plan(a);

	if (br_stall_start(watchdog_ns, watchdog_report, a->tsc_hz, "htoe-bridge", err,
			   sizeof(err)))
		goto fail;
	br_stall_setup_end();
	/* go */
	br_clock_start(a);
	for (unsigned l = 0; l < RTE_MAX_LCORE; l++) {
		struct br_lcore *lc = &a->lcores[l];

		if (lc->is_main || !lc->n_nodes)
			continue;
		if (rte_eal_remote_launch(br_lcore_loop, lc, l)) {
			snprintf(err, sizeof(err), "cannot launch lcore %u", l);
			__atomic_store_n(&a->phase, BR_QUIT, __ATOMIC_RELAXED);
			rte_eal_mp_wait_lcore();
			goto fail;
		}
	}
	br_lcore_loop(&a->lcores[rte_get_main_lcore()]);
	rte_eal_mp_wait_lcore();
	br_stall_stop();
	/* the loops are over: a signal now ends the process */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);

	br_capture_close(a);
	rc = br_print_summary(a, stdout);
	if (a->json)
		br_print_json(a, stdout);
	goto cleanup;
fail:
	fprintf(stderr, "htoe-bridge: %s\n", err);
cleanup:
	br_stall_stop();
	br_metrics_stop();
	br_capture_close(a);
	br_ports_stop(a);
	for (unsigned i = 0; a->nodes && i < a->n_nodes; i++)
		br_node_teardown(&a->nodes[i]);
	if (a->pool)
		rte_mempool_free(a->pool);
	a->pool = NULL;
	rte_eal_cleanup();
	/* br_app, the nodes' published counters and the configuration stay
	 * until exit: the telemetry thread may still read them. */
	return rc;
}
