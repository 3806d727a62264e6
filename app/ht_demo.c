/* SPDX-License-Identifier: BSD-3-Clause
 * `htoe-ht demo`: node A (requester + link end A) and node B (memory target +
 * link end B) connected back to back (lib/htmodel/ht_b2b). A seeded workload
 * issues reads, writes, atomics, flushes and fences; every read and atomic
 * result is checked against a shadow copy of memory, and a final read-back
 * sweep checks the posted writes. Every packet's HT3 CRC is checked while it
 * is moved between the two link ends. Deterministic for a seed.
 */
#include "ht_demo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htmodel/ht_b2b.h"
#include "htmodel/ht_workload.h"
#include "parse_num.h"

#define DEMO_BASE        0x1000ull
#define DEMO_SIZE        (16u * 1024u)
#define DEMO_PRINT_FIRST 20u
#define DEMO_STALL_LIMIT 100000u

struct demo_opts {
	uint64_t ops;
	uint64_t seed;
	uint64_t size;
	unsigned credits;
	unsigned latency;
	bool quiet, verbose, no_sweep;
};

static void demo_usage(FILE *f)
{
	fputs("usage: htoe-ht demo [--ops N] [--seed S] [--credits K] [--latency L]\n"
	      "                    [--size BYTES] [--quiet | --verbose] [--no-sweep]\n"
	      "\n"
	      "Runs a requester against a memory target over a modelled HT link\n"
	      "(two link ends back to back) and verifies every result.\n"
	      "\n"
	      "  --ops N       random ops to issue (default 1000)\n"
	      "  --seed S      workload seed (default 1)\n"
	      "  --credits K   receive buffers per class on both link ends, 1..64 (default 4)\n"
	      "  --latency L   steps a packet spends on the wire, 0..64 (default 4)\n"
	      "  --size BYTES  memory window, multiple of 64 (default 16384) at 0x1000\n"
	      "  --quiet       summary only\n"
	      "  --verbose     one line per op (default: the first 20 ops)\n"
	      "  --no-sweep    skip the final read-back of the window\n"
	      "\n"
	      "Exit status 0 only if every op completed and verified.\n", f);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	return !htoe_parse_u64(s, v);
}

static int parse_opts(int argc, char **argv, struct demo_opts *o)
{
	o->ops = 1000;
	o->seed = 1;
	o->size = DEMO_SIZE;
	o->credits = 4;
	o->latency = 4;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			demo_usage(stdout);
			return 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o->quiet = true;
		} else if (!strcmp(a, "--verbose") || !strcmp(a, "-v")) {
			o->verbose = true;
		} else if (!strcmp(a, "--no-sweep")) {
			o->no_sweep = true;
		} else if (!strcmp(a, "--ops") || !strcmp(a, "--seed") ||
			   !strcmp(a, "--credits") || !strcmp(a, "--size") ||
			   !strcmp(a, "--latency")) {
			if (i + 1 >= argc || !parse_u64(argv[i + 1], &v)) {
				fprintf(stderr, "htoe-ht demo: %s needs a number\n", a);
				return -1;
			}
			i++;
			if (!strcmp(a, "--ops")) {
				o->ops = v;
			} else if (!strcmp(a, "--seed")) {
				o->seed = v;
			} else if (!strcmp(a, "--credits")) {
				if (v < 1 || v > 64) {
					fprintf(stderr, "htoe-ht demo: --credits must be 1..64\n");
					return -1;
				}
				o->credits = (unsigned)v;
			} else if (!strcmp(a, "--latency")) {
				if (v > HT_B2B_MAX_LATENCY) {
					fprintf(stderr, "htoe-ht demo: --latency must be 0..%u\n",
						HT_B2B_MAX_LATENCY);
					return -1;
				}
				o->latency = (unsigned)v;
			} else {
				if (v < 64 || v % 64 || v > (1u << 30)) {
					fprintf(stderr, "htoe-ht demo: --size must be a multiple of 64, 64..1 GiB\n");
					return -1;
				}
				o->size = v;
			}
		} else {
			fprintf(stderr, "htoe-ht demo: unknown option '%s'\n", a);
			demo_usage(stderr);
			return -1;
		}
	}
	return 0;
}

static bool want_line(const struct demo_opts *o, uint64_t seq)
{
	return !o->quiet && (o->verbose || seq < DEMO_PRINT_FIRST);
}

static void print_op(uint64_t seq, uint8_t type, uint64_t addr, uint32_t len, const char *what)
{
	if (type == HT_OP_FLUSH || type == HT_OP_FENCE)
		printf("#%-5" PRIu64 " %-5s %-15s -> %s\n", seq, ht_op_name(type), "", what);
	else
		printf("#%-5" PRIu64 " %-5s 0x%08" PRIx64 " %3uB -> %s\n", seq, ht_op_name(type),
		       addr, len, what);
}

static void print_link(const char *name, const struct ht_link *l)
{
	const struct ht_link_stats *s = ht_link_stats(l);
	printf("  link %s tx:", name);
	for (int vc = 0; vc < HT_VC_COUNT; vc++)
		printf(" %s %" PRIu64 " pkts/%" PRIu64 " B%s", ht_vc_name((enum ht_vc)vc),
		       s->tx_pkts[vc], s->tx_bytes[vc], vc + 1 < HT_VC_COUNT ? "," : "");
	printf("; NOPs %" PRIu64 "; credit stalls P/NP/R %" PRIu64 "/%" PRIu64 "/%" PRIu64
	       "; order waits NP/R %" PRIu64 "/%" PRIu64 "\n",
	       s->tx_nops, s->credit_stalls[HT_VC_P], s->credit_stalls[HT_VC_NP],
	       s->credit_stalls[HT_VC_R], s->order_waits[HT_VC_NP], s->order_waits[HT_VC_R]);
}

int ht_demo_main(int argc, char **argv)
{
	struct demo_opts o;
	memset(&o, 0, sizeof(o));
	int prc = parse_opts(argc, argv, &o);
	if (prc)
		return prc > 0 ? 0 : 2;

	struct ht_b2b *b = calloc(1, sizeof(*b));
	struct ht_workload *w = calloc(1, sizeof(*w));
	uint8_t *mem = malloc(o.size), *shadow = malloc(o.size), *busy = malloc(o.size / 64);
	uint64_t *taint = malloc(o.size / 64 * sizeof(*taint));
	if (!b || !w || !mem || !shadow || !busy || !taint) {
		fprintf(stderr, "htoe-ht demo: out of memory\n");
		free(b); free(w); free(mem); free(shadow); free(busy); free(taint);
		return 1;
	}
	ht_wl_fill(o.seed, mem, o.size);
	memcpy(shadow, mem, o.size);

	struct ht_b2b_cfg bc;
	ht_b2b_cfg_default(&bc, o.credits, DEMO_BASE, o.size, mem);
	bc.latency = o.latency;
	struct ht_wl_cfg wc;
	ht_wl_cfg_default(&wc);
	wc.seed = o.seed;
	wc.base = DEMO_BASE;
	wc.size = o.size;
	wc.n_ops = o.ops;
	wc.shadow = shadow;
	wc.busy = busy;
	wc.taint = taint;
	wc.sweep = !o.no_sweep;
	int rc = 1;
	if (ht_b2b_init(b, &bc) < 0 || ht_wl_init(w, &wc) < 0) {
		fprintf(stderr, "htoe-ht demo: bad configuration\n");
		goto out;
	}

	if (!o.quiet)
		printf("htoe-ht demo: seed %" PRIu64 ", %" PRIu64 " ops, window 0x%08" PRIx64
		       "+%" PRIu64 ", %u credits per class, wire latency %u\n",
		       o.seed, o.ops, (uint64_t)DEMO_BASE, o.size, o.credits, o.latency);

	uint64_t stall = 0;
	bool stalled = false, bad_submit = false;
	while (!ht_wl_done(w) || ht_b2b_busy(b)) {
		bool progress = false;
		struct ht_op op;
		while (ht_wl_peek(w, &op) == 1) {
			int s = ht_b2b_submit(b, &op);
			if (s == -EAGAIN)
				break;
			if (s < 0) {
				bad_submit = true;
				break;
			}
			uint64_t seq = ht_wl_commit(w);
			progress = true;
			if (!ht_op_nonposted((enum ht_op_type)op.type) && want_line(&o, seq))
				print_op(seq, op.type, op.addr, op.len, "posted");
		}
		if (bad_submit)
			break;
		uint64_t moved = b->st.pkts[0] + b->st.pkts[1];
		struct ht_completion c;
		if (ht_b2b_step(b, &c) == 1) {
			struct ht_wl_result res;
			int v = ht_wl_complete(w, &c, &res);
			if (v >= 0 && want_line(&o, res.seq)) {
				char what[96];
				const char *st = ht_rsp_err_name((enum ht_rsp_err)res.status);
				if (res.status != HT_RSP_OK)
					snprintf(what, sizeof(what), "%s", st);
				else if (res.type == HT_OP_READ || res.type == HT_OP_FETCH_ADD ||
					 res.type == HT_OP_CAS)
					snprintf(what, sizeof(what), "%s, %s%s%s", st,
						 res.verified ? "verified" : "MISMATCH",
						 res.type == HT_OP_CAS ? (res.cas_swapped ? ", swapped" : ", not swapped") : "",
						 res.sweep ? " (sweep)" : "");
				else
					snprintf(what, sizeof(what), "%s", st);
				print_op(res.seq, res.type, res.addr, res.len, what);
			}
			progress = true;
		}
		if (b->st.pkts[0] + b->st.pkts[1] != moved)
			progress = true;
		stall = progress ? 0 : stall + 1;
		if (stall > DEMO_STALL_LIMIT) {
			stalled = true;
			break;
		}
	}

	const struct ht_wl_stats *ws = ht_wl_stats(w);
	uint64_t np_issued = 0;
	for (int t = 0; t < HT_OP__COUNT; t++)
		if (ht_op_nonposted((enum ht_op_type)t))
			np_issued += ws->issued[t];
	uint64_t image_diff = ht_wl_check_image(w, mem);
	bool pass = !stalled && !bad_submit && ht_wl_done(w) && ws->completed == np_issued &&
		    ws->verified == ws->completed && !ws->mismatches && !ws->errors &&
		    !ws->unexpected && !image_diff && !b->st.crc_bad && !b->st.crc_stomped &&
		    !b->st.link_errors && !b->st.unexpected;

	printf("summary:\n");
	printf("  ops issued %" PRIu64 " (%" PRIu64 " random + %" PRIu64 " sweep reads):",
	       ws->issued_total, ws->issued_total - ws->sweep_issued, ws->sweep_issued);
	for (int t = 0; t < HT_OP__COUNT; t++)
		printf(" %s %" PRIu64, ht_op_name((enum ht_op_type)t), ws->issued[t]);
	printf("\n");
	printf("  completions %" PRIu64 " of %" PRIu64 " non-posted, verified %" PRIu64
	       ", mismatches %" PRIu64 ", errors %" PRIu64 ", cas swapped %" PRIu64 "\n",
	       ws->completed, np_issued, ws->verified, ws->mismatches, ws->errors, ws->cas_swapped);
	printf("  memory image vs shadow: %" PRIu64 " bytes differ\n", image_diff);
	print_link("A", &b->a);
	print_link("B", &b->b);
	printf("  packets A->B %" PRIu64 " (%" PRIu64 " B), B->A %" PRIu64 " (%" PRIu64
	       " B); HT3 CRC checked %" PRIu64 ", bad %" PRIu64 ", stomped %" PRIu64 "\n",
	       b->st.pkts[0], b->st.bytes[0], b->st.pkts[1], b->st.bytes[1],
	       b->st.pkts[0] + b->st.pkts[1], b->st.crc_bad, b->st.crc_stomped);
	printf("  steps %" PRIu64 ", stream hash 0x%016" PRIx64 "\n", b->st.steps, b->hash);
	if (stalled)
		printf("  STALLED: no progress for %u steps\n", DEMO_STALL_LIMIT);
	if (bad_submit)
		printf("  an op was rejected by the requester\n");
	printf("result: %s\n", pass ? "PASS" : "FAIL");
	rc = pass ? 0 : 1;
out:
	free(b);
	free(w);
	free(mem);
	free(shadow);
	free(busy);
	free(taint);
	return rc;
}
