/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-sim core: a deterministic discrete-event simulator of N nodes, each
 * an HT endpoint model (requester with verified workloads + memory target)
 * behind its HTEA (lib/htoe), on a simulated Ethernet switch with seeded
 * impairments. Virtual time; the same configuration and seed give the same
 * run. An oracle checks the protocol properties (see sim.c and
 * docs/simulator.md). Used by app/htoe-sim.c and by the test suite.
 */
#ifndef HTOE_SIM_H
#define HTOE_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "htmodel/ht_requester.h"
#include "htoe/htoe.h"

struct sim_cfg {
	unsigned nodes;            /* 2..64 */
	uint64_t seed;
	uint64_t transactions;     /* HT operations in total, over all nodes */
	uint64_t mem_per_node;     /* bytes each node exports (multiple of 64*nodes) */

	/* impairments of the switch, per frame */
	double   loss;             /* independent loss probability */
	double   burst_loss;       /* probability that a burst of losses starts */
	double   burst_len;        /* mean burst length in frames (>= 1) */
	uint64_t burst_ns;         /* > 0: a burst lasts this long instead (every
	                            * frame on that link is lost meanwhile) */
	double   reorder;          /* probability a frame is held back (overtaken) */
	uint64_t reorder_ns;       /* it is held back reorder_ns + 0..reorder_ns more */
	double   dup;              /* probability a frame is delivered twice */
	double   corrupt;          /* probability one random bit is flipped */
	uint64_t delay_ns;         /* one-way propagation delay */
	uint64_t jitter_ns;        /* uniform extra delay 0..jitter */
	uint64_t link_bps;         /* port speed (serialization), 0 = infinite */
	/* the switch's output port towards each node: frames wait in a FIFO of
	 * egress_buf bytes and are serialized at link_bps; a frame that does
	 * not fit is dropped (tail drop, egress_drops). 0: no output queue
	 * (frames leave the switch when their sender's port has sent them) */
	uint64_t egress_buf;

	/* incast (0: off): nodes 2..incast+1 write posted 64-byte writes to
	 * node 1 and nothing else; no other node sends; no read-back sweep
	 * (the final memory image check covers the writes). The result's
	 * incast part (struct sim_incast) measures each sender's goodput. */
	unsigned incast;

	/* a partition: frames between the two halves of the nodes are dropped
	 * in [partition_at, partition_at + partition_ns) */
	uint64_t partition_at_ns, partition_ns;
	/* a node that restarts (bridge and requester; its memory persists) */
	int      restart_node;     /* -1: none; else index 0..nodes-1 */
	uint64_t restart_at_ns;
	/* attackers (forged RESETs), 0: none. At forge_reset_at_ns a host that is
	 * no member (MAC 02:66:66:66:66:66) sends node 2 a RESET and a
	 * RESET_ACK claiming node 1, with a new incarnation; at
	 * forge_src_at_ns member node 3 sends node 2 a RESET, RESET_ACK, ACK
	 * and CTRL claiming node 1 from its own MAC. Every forged frame must be
	 * dropped as src_mac (forged_dropped == forged_sent). */
	uint64_t forge_reset_at_ns, forge_src_at_ns;
	/* a VL reset under load: node reset_node resets its VL to reset_peer */
	int      reset_node, reset_peer;
	uint64_t reset_at_ns;

	unsigned weight[HT_OP__COUNT]; /* workload mix (all 0: defaults) */
	unsigned max_inflight;     /* per workload (0: default) */

	/* bridge parameters that the profiles tune (0: library defaults) */
	uint64_t rto_init_ns, np_timeout_ns;
	uint64_t rto_min_ns, rto_max_ns, stall_timeout_ns;
	uint32_t retry_limit;
	uint16_t mtu;
	int      retry_mode;       /* -1: library default; else enum htoe_retry_mode */

	/* "node not polled": with probability stall_prob each time a node with
	 * work (a frame, a deadline) is to be polled, it is not polled for
	 * 1..stall_max_ns of virtual time (no frame input, no timers, no local
	 * side); frames to it wait in its RX ring of
	 * rx_ring frames (beyond that they are dropped) and are taken in bursts
	 * of 32, each followed by a poll, when it runs again. */
	double   stall_prob;
	uint64_t stall_max_ns;
	unsigned rx_ring;          /* 0: default 1024 */

	/* liveness: every NP request must be answered (not poisoned) within
	 * this long, and no VL may be reset (0: not checked) */
	uint64_t liveness_ns;

	uint64_t stall_bound_ns;   /* no progress for this long = deadlock (0:
	                            * twice the longest of np_timeout,
	                            * stall_timeout and (retry_limit + 1) rto_max) */
	uint64_t max_time_ns;      /* virtual time limit (0: none) */
	FILE    *progress;         /* progress lines (NULL: none) */
	const char *pcap_path;     /* write every frame sent to this pcap (NULL: no) */
	uint64_t progress_every;   /* transactions between progress lines */
};

void sim_cfg_default(struct sim_cfg *c);

/* The default memory per node for `nodes` nodes: 64 KiB rounded up to a
 * multiple of 64 * nodes (each node's memory is cut into `nodes` slices of
 * whole 64-byte lines), so any node count runs without --mem. */
uint64_t sim_mem_default(unsigned nodes);

/* Incast measurement. The window opens when node 1 applies the first posted
 * write and closes when the first sender has had all its writes applied
 * (until then every sender is backlogged); per sender (by node index): the
 * posted writes and payload bytes applied within the window, and its VL to
 * node 1's credit-starved time within the window (htoe_vl_stats
 * credit_starved_ns: time a packet waited at the head of a VC queue
 * without a credit). */
struct sim_incast {
	unsigned senders;
	uint64_t window_ns;
	uint64_t writes[64], bytes[64], starved_ns[64];
	/* internal: window bookkeeping */
	uint64_t opened_at, total_writes[64], starved_at_open[64];
	bool     open, closed;
};

struct sim_result {
	uint64_t seed, nodes, transactions;
	uint64_t completed;        /* NP ops answered + posted writes applied + fences */
	uint64_t posted_issued, posted_applied;
	uint64_t np_requests, np_responses;
	uint64_t poisoned;         /* responses with error bits */
	uint64_t retransmits, naks, timeouts, resets;
	uint64_t tail_probes;      /* tail loss probes (selective retry) */
	int      retry_mode;       /* the mode the bridges offered (enum htoe_retry_mode) */
	uint64_t vls, selective_vls; /* VLs at the end, those using selective retry */
	uint64_t held, sacks;      /* frames held after a gap, SACK blocks sent */
	uint64_t frames, frames_dropped, frames_duplicated, frames_corrupted, frames_reordered;
	uint64_t drops_crc, drops_other;
	uint64_t lost;             /* posted writes never applied, NP never answered */
	uint64_t duplicated;       /* posted applied twice, NP answered twice */
	uint64_t misordered;       /* posted applied out of order within (src, dst) */
	uint64_t wrong_data;       /* read/atomic results or memory differing from the oracle */
	uint64_t tainted_slices;   /* slices a timeout or restart made uncertain */
	uint64_t unexplained_poison; /* poisoned without a reset or timeout */
	uint64_t credit_errors;    /* credit invariant violations */
	uint64_t stalls;           /* times a node was not polled */
	uint64_t stalled_ns;       /* their total length (over all nodes) */
	uint64_t rx_ring_drops;    /* frames dropped on a full RX ring */
	uint64_t egress_drops;     /* frames dropped at a full switch output port */
	uint64_t max_np_latency_ns; /* longest issue-to-answer time of an NP request */
	uint64_t liveness_failures; /* late or poisoned answers, VL resets (liveness_ns) */
	uint64_t peer_restarts;    /* VLs that saw a new incarnation of their peer */
	uint64_t restart_up_max_ns; /* longest detection-to-up time after one */
	uint64_t forged_sent, forged_dropped; /* forged frames; src_mac drops (also
	                                       * corrupted source MACs) */
	bool     deadlock;
	uint64_t violations;
	uint64_t virtual_ns;
	char     first_violation[256];
	struct sim_incast incast;
};

/* Run the simulation. Returns 0 when violations == 0, 1 otherwise, -1 on a
 * configuration error (message in res->first_violation). */
int sim_run(const struct sim_cfg *cfg, struct sim_result *res);

/* Print the result as one JSON object (one line). */
void sim_result_json(const struct sim_result *r, FILE *f);

/* Incast figures of a run (cfg.incast > 0) against the reference run of a
 * single sender (same configuration, incast = 1). Goodputs are posted-write
 * payload bytes per virtual second within each run's window. */
struct sim_incast_summary {
	unsigned senders;
	double   aggregate_bps, aggregate_wps;  /* payload bits/s, writes/s */
	double   single_bps, single_wps;
	double   ratio;                         /* aggregate / single */
	double   jain;                          /* (sum x)^2 / (n sum x^2) */
	double   starved_max, starved_mean;     /* starved share of the window */
	double   sender_bps[64], starved_share[64];
};

void sim_incast_summarize(const struct sim_result *multi, const struct sim_result *single,
			  struct sim_incast_summary *out);

/* Text lines describing the incast figures (for people). */
void sim_incast_text(const struct sim_result *multi, const struct sim_incast_summary *sum,
		     FILE *f);

/* The result of the incast run as one JSON object (one line) with an
 * "incast" member; violations and deadlock cover both runs. */
void sim_result_json_incast(const struct sim_result *multi, const struct sim_result *single,
			    const struct sim_incast_summary *sum, FILE *f);

#endif
