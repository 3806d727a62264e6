/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-sim: deterministic simulator of N HToE nodes on an impaired switch.
 * See docs/simulator.md. The last line printed is one JSON object; the exit
 * status is 0 only when the oracle found no violation.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe_version.h"
#include "impair_model.h"
#include "op_mix.h"
#include "parse_num.h"
#include "sim/sim.h"

static void usage(FILE *f)
{
	fputs("usage: htoe-sim [options]\n"
	      "  --nodes N            nodes on the switch (2..64, default 2)\n"
	      "  --seed S             PRNG seed (default 1); same seed, same run\n"
	      "  --transactions N     HT operations in total (default 10000)\n"
	      "  --mem BYTES          memory each node exports, a multiple of 64*N\n"
	      "                       (default 65536 rounded up to one: 65664 for 3 nodes)\n"
	      "  --loss P             frame loss probability: 0.1 or 10% (a bare 1 is\n"
	      "                       refused: write 100%); so are all probabilities\n"
	      "  --burst-loss P       probability a loss burst starts\n"
	      "  --burst-len N        mean burst length in frames (default 4)\n"
	      "  --burst-us N         a burst lasts N us of virtual time instead: every\n"
	      "                       frame on that link is lost meanwhile\n"
	      "  --reorder P          probability a frame is held back (overtaken)\n"
	      "  --reorder-delay NS   it is held back NS + 0..NS more (default 50000)\n"
	      "  --dup P              probability a frame is duplicated\n"
	      "  --corrupt P          probability a frame gets one bit flipped\n"
	      "  --delay NS           one-way delay (default 1000)\n"
	      "  --jitter NS          uniform extra delay 0..NS\n"
	      "  --link-gbps G        port speed for serialization (default 10, 0 = none)\n"
	      "  --egress-buf BYTES   switch output port buffer: frames to a node wait in\n"
	      "                       it and are serialized at the link speed; tail drop\n"
	      "                       (default 0 = no output queue; 131072 with --incast)\n"
	      "  --incast             nodes 2..N write posted 64-byte writes to node 1 and\n"
	      "                       nothing else; node 2 alone runs first as the reference;\n"
	      "                       reports goodput, Jain's index, credit-starved time\n"
	      "  --partition AT:LEN   split the nodes in two halves from AT for LEN ns\n"
	      "  --restart NODE:AT    node NODE (1..N) restarts at AT ns\n"
	      "  --reset NODE:PEER:AT node NODE resets its VL to PEER at AT ns\n"
	      "  --forge-reset AT     at AT ns a non-member MAC sends node 2 a RESET and a\n"
	      "                       RESET_ACK claiming node 1 (must be dropped: src_mac)\n"
	      "  --forge-src AT       at AT ns member node 3 sends node 2 RESET, RESET_ACK,\n"
	      "                       ACK and CTRL claiming node 1 from its own MAC (needs\n"
	      "                       --nodes >= 3; must be dropped: src_mac)\n"
	      "  --mix rd=W,wrp=W,wrn=W,fadd=W,cas=W,flush=W,fence=W   op mix weights\n"
	      "  --rto NS             initial retransmission timeout\n"
	      "  --np-timeout NS      request timeout (poisoned answer after it)\n"
	      "  --retry-limit N      timeouts before a VL reset\n"
	      "  --rto-min NS         floor of the adaptive retransmission timeout\n"
	      "  --rto-max NS         ceiling of the retransmission timeout\n"
	      "  --stall-timeout NS   a VL refusing local input this long is reset\n"
	      "  --bridge-timers      the htoe-bridge defaults: rto 1ms, rto-min 1ms,\n"
	      "                       rto-max 200ms, retry-limit 50, np-timeout 30s,\n"
	      "                       stall-timeout 10s (options after it override)\n"
	      "  --mtu BYTES          HToE MTU (default 1500)\n"
	      "  --retry MODE         gbn | selective (default: the library's, selective)\n"
	      "  --stall P:MAX        each time a node with work is to be polled, with\n"
	      "                       probability P it is not polled for 1..MAX ns (frames\n"
	      "                       to it wait in its RX ring)\n"
	      "  --rx-ring N          RX ring of a node in frames (default 1024); frames\n"
	      "                       arriving at a full ring are dropped\n"
	      "  --liveness NS        every NP request must be answered, without error,\n"
	      "                       within NS, and no VL may be reset\n"
	      "  --progress N         progress line on stderr every N transactions\n"
	      "  --quiet              no progress lines\n"
	      "  --pcap FILE          write every frame sent (virtual time stamps) to FILE\n"
	      "  --help               this text\n"
	      "  --version            the version\n",
	      f);
}

/* --incast: the reference run (node 2 alone, its share of the
 * transactions), then the run of every sender; text lines, then the JSON. */
static int run_incast(struct sim_cfg *c, int egress_set, int mix_set)
{
	struct sim_result *multi = malloc(sizeof(*multi)), *single = malloc(sizeof(*single));
	struct sim_incast_summary sum;
	struct sim_cfg one;
	int rc = 2, r1, rn;

	if (mix_set) {
		fprintf(stderr, "htoe-sim: --mix cannot be used with --incast (incast sends posted "
				"64-byte writes only)\n");
		goto out;
	}
	if (!multi || !single) {
		fprintf(stderr, "htoe-sim: out of memory\n");
		goto out;
	}
	if (!egress_set)
		c->egress_buf = 131072;
	c->incast = c->nodes - 1;
	one = *c;
	one.incast = 1;
	one.transactions = c->transactions / c->incast ? c->transactions / c->incast : 1;
	one.pcap_path = NULL;
	one.progress = NULL;
	r1 = sim_run(&one, single);
	rn = r1 < 0 ? r1 : sim_run(c, multi);
	if (r1 < 0 || rn < 0) {
		fprintf(stderr, "htoe-sim: %s\n", r1 < 0 ? single->first_violation :
			multi->first_violation);
		goto out;
	}
	sim_incast_summarize(multi, single, &sum);
	sim_incast_text(multi, &sum, stdout);
	sim_result_json_incast(multi, single, &sum, stdout);
	rc = r1 || rn ? 1 : 0;
out:
	free(multi);
	free(single);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, 0, 'n' },
		{ "seed", required_argument, 0, 's' },
		{ "transactions", required_argument, 0, 't' },
		{ "mem", required_argument, 0, 'm' },
		{ "loss", required_argument, 0, 'l' },
		{ "burst-loss", required_argument, 0, 'B' },
		{ "burst-len", required_argument, 0, 'L' },
		{ "burst-us", required_argument, 0, 'U' },
		{ "reorder", required_argument, 0, 'r' },
		{ "reorder-delay", required_argument, 0, 'K' },
		{ "dup", required_argument, 0, 'd' },
		{ "corrupt", required_argument, 0, 'c' },
		{ "delay", required_argument, 0, 'D' },
		{ "jitter", required_argument, 0, 'j' },
		{ "link-gbps", required_argument, 0, 'g' },
		{ "egress-buf", required_argument, 0, 'e' },
		{ "incast", no_argument, 0, 'i' },
		{ "partition", required_argument, 0, 'p' },
		{ "restart", required_argument, 0, 'R' },
		{ "reset", required_argument, 0, 'V' },
		{ "forge-reset", required_argument, 0, 'F' },
		{ "forge-src", required_argument, 0, 'G' },
		{ "mix", required_argument, 0, 'x' },
		{ "rto", required_argument, 0, 'o' },
		{ "np-timeout", required_argument, 0, 'T' },
		{ "retry-limit", required_argument, 0, 'y' },
		{ "mtu", required_argument, 0, 'u' },
		{ "rto-min", required_argument, 0, 'I' },
		{ "rto-max", required_argument, 0, 'X' },
		{ "stall-timeout", required_argument, 0, 'S' },
		{ "bridge-timers", no_argument, 0, 'b' },
		{ "stall", required_argument, 0, 'z' },
		{ "rx-ring", required_argument, 0, 'Q' },
		{ "liveness", required_argument, 0, 'E' },
		{ "progress", required_argument, 0, 'P' },
		{ "quiet", no_argument, 0, 'q' },
		{ "pcap", required_argument, 0, 'W' },
		{ "retry", required_argument, 0, 'M' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'v' },
		{ 0, 0, 0, 0 },
	};
	struct sim_cfg c;
	struct sim_result r;
	uint64_t v, t[3];
	int opt, rc, mem_set = 0, incast = 0, egress_set = 0, mix_set = 0;

	sim_cfg_default(&c);
	c.progress = stderr;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *arg = optarg;
		char why[160] = "";
		int bad = 0;

		switch (opt) {
		case 'n': bad = htoe_parse_u64(arg, &v) || v < 2 || v > 64; c.nodes = (unsigned)v; break;
		case 's': bad = htoe_parse_u64(arg, &c.seed); break;
		case 't': bad = htoe_parse_u64(arg, &c.transactions); break;
		case 'm': bad = htoe_parse_u64(arg, &c.mem_per_node) || !c.mem_per_node; mem_set = 1; break;
		case 'l': bad = htoe_parse_prob(arg, &c.loss, why, sizeof(why)); break;
		case 'B': bad = htoe_parse_prob(arg, &c.burst_loss, why, sizeof(why)); break;
		case 'L': bad = htoe_parse_double(arg, 1, 1e9, &c.burst_len); break;
		case 'U':
			bad = htoe_parse_unsigned(arg, 0, 1, 60000000, &v);
			c.burst_ns = v * 1000;
			break;
		case 'r': bad = htoe_parse_prob(arg, &c.reorder, why, sizeof(why)); break;
		case 'd': bad = htoe_parse_prob(arg, &c.dup, why, sizeof(why)); break;
		case 'c': bad = htoe_parse_prob(arg, &c.corrupt, why, sizeof(why)); break;
		case 'K': bad = htoe_parse_unsigned(arg, 0, 0, 10000000000ull, &c.reorder_ns); break;
		case 'D': bad = htoe_parse_u64(arg, &c.delay_ns); break;
		case 'j': bad = htoe_parse_u64(arg, &c.jitter_ns); break;
		case 'e': bad = htoe_parse_u64(arg, &c.egress_buf) || (c.egress_buf && c.egress_buf < 1518);
			egress_set = 1;
			break;
		case 'i': incast = 1; break;
		case 'g': bad = htoe_parse_unsigned(arg, 0, 0, 100000, &v); c.link_bps = v * 1000000000ull; break;
		case 'p':
			bad = htoe_parse_u64_list(arg, ':', t, 2);
			c.partition_at_ns = t[0];
			c.partition_ns = t[1];
			break;
		case 'R':
			bad = htoe_parse_u64_list(arg, ':', t, 2) || t[0] < 1 || t[0] > 64;
			c.restart_node = (int)t[0] - 1;
			c.restart_at_ns = t[1];
			break;
		case 'V':
			bad = htoe_parse_u64_list(arg, ':', t, 3) || t[0] < 1 || t[1] < 1 ||
			      t[0] > 64 || t[1] > 64 || t[0] == t[1];
			c.reset_node = (int)t[0] - 1;
			c.reset_peer = (int)t[1] - 1;
			c.reset_at_ns = t[2];
			break;
		case 'F': bad = htoe_parse_u64(arg, &c.forge_reset_at_ns) || !c.forge_reset_at_ns; break;
		case 'G': bad = htoe_parse_u64(arg, &c.forge_src_at_ns) || !c.forge_src_at_ns; break;
		case 'x': bad = htoe_parse_mix(arg, c.weight, why, sizeof(why)); mix_set = 1; break;
		case 'o': bad = htoe_parse_u64(arg, &c.rto_init_ns); break;
		case 'T': bad = htoe_parse_u64(arg, &c.np_timeout_ns); break;
		case 'y': bad = htoe_parse_unsigned(arg, 0, 0, UINT32_MAX, &v); c.retry_limit = (uint32_t)v; break;
		case 'I': bad = htoe_parse_u64(arg, &c.rto_min_ns); break;
		case 'X': bad = htoe_parse_u64(arg, &c.rto_max_ns); break;
		case 'S': bad = htoe_parse_u64(arg, &c.stall_timeout_ns); break;
		case 'b': /* app/bridge/config.c DEF_* (docs/config.md, keys marked †) */
			c.rto_init_ns = 1000000;
			c.rto_min_ns = 1000000;
			c.rto_max_ns = 200000000;
			c.retry_limit = 50;
			c.np_timeout_ns = 30000000000ull;
			c.stall_timeout_ns = 10000000000ull;
			break;
		case 'z': {
			const char *colon = strchr(arg, ':');
			char prob[64];

			bad = !colon || (size_t)(colon - arg) >= sizeof(prob);
			if (!bad) {
				snprintf(prob, sizeof(prob), "%.*s", (int)(colon - arg), arg);
				bad = htoe_parse_double(prob, 0, 1, &c.stall_prob) ||
				      htoe_parse_u64(colon + 1, &c.stall_max_ns) || !c.stall_max_ns;
			}
			break;
		}
		case 'Q': bad = htoe_parse_u64(arg, &v) || v < 1 || v > 1000000; c.rx_ring = (unsigned)v; break;
		case 'E': bad = htoe_parse_u64(arg, &c.liveness_ns) || !c.liveness_ns; break;
		case 'u': bad = htoe_parse_u64(arg, &v) || v > 9000; c.mtu = (uint16_t)v; break;
		case 'P': bad = htoe_parse_u64(arg, &c.progress_every) || !c.progress_every; break;
		case 'q': c.progress = NULL; break;
		case 'W': c.pcap_path = arg; break;
		case 'M':
			bad = strcmp(arg, "gbn") && strcmp(arg, "selective");
			c.retry_mode = !strcmp(arg, "gbn") ? HTOE_RETRY_GBN : HTOE_RETRY_SELECTIVE;
			break;
		case 'h': usage(stdout); return 0;
		case 'v': htoe_print_version("htoe-sim"); return 0;
		default: usage(stderr); return 2;
		}
		if (bad) {
			const char *name = "?";

			for (const struct option *o = opts; o->name; o++)
				if (o->val == opt)
					name = o->name;
			fprintf(stderr, "htoe-sim: bad value '%s' for --%s%s%s\n", arg, name,
				why[0] ? ": " : "", why);
			return 2;
		}
	}
	if (!mem_set)
		c.mem_per_node = sim_mem_default(c.nodes);
	if (optind < argc) {
		fprintf(stderr, "htoe-sim: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if ((c.restart_node >= 0 && (unsigned)c.restart_node >= c.nodes) ||
	    (c.reset_node >= 0 && ((unsigned)c.reset_node >= c.nodes ||
				   (unsigned)c.reset_peer >= c.nodes))) {
		fprintf(stderr, "htoe-sim: --restart/--reset names a node above --nodes %u\n",
			c.nodes);
		return 2;
	}
	if (c.forge_src_at_ns && c.nodes < 3) {
		fprintf(stderr, "htoe-sim: --forge-src needs --nodes 3 or more (node 3 forges)\n");
		return 2;
	}
	if (incast)
		return run_incast(&c, egress_set, mix_set);
	rc = sim_run(&c, &r);
	if (rc < 0) {
		fprintf(stderr, "htoe-sim: %s\n", r.first_violation);
		return 2;
	}
	sim_result_json(&r, stdout);
	return rc;
}
