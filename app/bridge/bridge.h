/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: the DPDK driver of lib/htoe. Shared state of the app.
 *
 * Threading model (docs/bridge.md):
 *  - every node (struct br_node: bridge + requester + target + workload)
 *    is owned by exactly one lcore, which polls its port; an lcore may own
 *    several nodes (round-robin in its loop) and a port belongs to one node;
 *  - nothing on the fast path is shared between lcores except the
 *    mempools and the per-lcore capture rings (SP/SC);
 *  - each lcore publishes its nodes' counters into a per-node snapshot
 *    with relaxed atomic stores every millisecond; the main lcore (stats
 *    line, capture writer, stop logic) and the telemetry thread read them
 *    with relaxed atomic loads and sum them. No locks anywhere;
 *  - the main lcore runs the control duties in its timer slot, between
 *    polls of its own nodes (or alone if it owns none);
 *  - the run phase (RUN -> FINISH -> QUIT) is written by the main lcore
 *    only and read by all.
 */
#ifndef HTOE_BRIDGE_H
#define HTOE_BRIDGE_H

#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "config.h"
#include "driver.h"
#include "dumper.h"
#include "impair.h"
#include "port_io.h"
#include "snapshot.h"
#include "stall.h"
#include "node/inject.h"
#include "node/node.h"
#include "node/peercheck.h"

#define BR_PUBLISH_NS  1000000ull   /* counter snapshots every 1 ms */

enum br_phase {
	BR_RUN = 0,     /* workloads issue */
	BR_FINISH = 1,  /* stop generating random ops: sweep, drain, then quit */
	BR_LEAVE = 2,   /* done: tell the peers (htoe_leave), then quit */
	BR_QUIT = 3,    /* leave the poll loops */
};
/* LEAVE messages per VL (CTRL frames are not resent: three copies all lost
 * at 1 % loss is one stop in a million), and how long the polls go on for
 * them to leave at most (a port that refuses them; they leave in a poll or
 * two otherwise). */
#define BR_LEAVE_COPIES 3u
#define BR_LEAVE_MAX_NS 1000000000ull

/* The snapshot other threads read (relaxed atomics, u64 words). */
struct br_pub {
	struct br_counters c;
	struct htoe_stats hs;
	struct ht_wl_stats ws;
	struct htnode_stats ns;
	struct htoe_vl_stats *vl;           /* [n_vl] */
	uint64_t *vl_up;                    /* [n_vl] */
	uint64_t *vl_epoch;                 /* [n_vl] */
};

struct br_lcore;

struct br_node {
	const struct br_node_cfg *cfg;
	uint16_t id;
	struct br_lcore *lc;
	struct htoe *b;                     /* = drv.b */
	struct htnode hn;
	uint8_t *mem;                       /* exported region */
	struct ht_workload *wl;             /* NULL: no workload */
	struct ht_workload *wlp[1];
	struct htinject *inj;               /* [workload] mode = inject, else NULL */
	uint8_t *shadow, *busy;
	uint64_t *taint;
	unsigned n_vl;
	uint16_t *vl_node;                  /* [n_vl], constant */
	bool     finishing;                 /* n_ops cut (duration / stop) */
	uint64_t wl_start_ns;
	uint64_t last_poll_ns;
	struct { uint64_t rx, timeouts, since; } silent[HTOE_MAX_PEERS]; /* drain: per VL */
	uint64_t gone;                      /* drain: VLs whose peer is gone (bits) */
	uint64_t gone_lost;                 /* of those, the ones whose memory was lost */
	struct peercheck pc;                /* end-of-run cross-check with other processes */
	struct br_counters c;
	struct br_pub pub;
	struct br_drv drv;                  /* its port: RX, TX, timers (driver.c) */
} __rte_cache_aligned;

struct br_lcore {
	unsigned lcore_id;
	bool     is_main;
	unsigned n_nodes;
	struct br_node *nodes[BR_MAX_NODES];
	struct rte_ring *cap_ring;          /* to the main lcore, SP/SC */
	struct br_idle idle;                /* busy or adaptive polling (driver.h) */
	uint64_t pub_busy, pub_total, pub_sleep; /* idle's TSC counters, published */
	uint64_t line_busy, line_total;     /* main lcore: at the previous stats line */
	struct br_stall *stall;             /* the poll watchdog's slot (stall.h) */
} __rte_cache_aligned;

struct br_app {
	struct br_config cfg;
	bool     json;
	unsigned n_nodes;
	struct br_node *nodes;              /* [n_nodes] */
	unsigned n_ports;
	struct br_port *ports;              /* [n_ports], as cfg.ports */
	unsigned n_lcores;
	struct br_lcore lcores[RTE_MAX_LCORE];
	struct rte_mempool *pool, *cap_pool;
	uint64_t tsc_hz, tsc0;
	uint64_t ns_mult;                   /* ns = (tsc * ns_mult) >> 32 */
	uint64_t realtime0_ns;              /* wall clock at tsc0 */
	enum br_poll_mode poll;             /* [global] poll, or the program's default */
	const char *prog;                   /* the program's name in messages (NULL: htoe-bridge) */
	volatile int phase;                 /* enum br_phase */
	bool     incomplete;                /* stopped before done */
	uint64_t run_ns;                    /* elapsed at QUIT */
	/* capture (main lcore only) */
	bool     capture;
	unsigned n_dumpers;
	struct br_dumper *dumpers;
};

extern struct br_app *br_app;
extern volatile sig_atomic_t br_signals;  /* SIGINT/SIGTERM count */

static inline uint64_t br_now_ns(const struct br_app *a, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - a->tsc0) * a->ns_mult) >> 32);
}

static inline const char *br_prog(void)
{
	return br_app && br_app->prog ? br_app->prog : "htoe-bridge";
}

static inline uint64_t br_rd(const uint64_t *p)
{
	return htoe_snap_get(p);
}

/* setup.c: what htoe-bridge and htoe-dimm set up alike */
/* The TSC's rate (tsc_hz, ns_mult for br_now_ns); then time 0 of the run
 * (tsc0, and realtime0_ns the wall clock then). */
void br_clock_init(struct br_app *a);
void br_clock_start(struct br_app *a);
/* a->pool: room for `base` mbufs plus every used port's descriptors, rings
 * and impairment queues ([global] mbufs overrides), rounded up to 2^k - 1. */
int br_pool_create(struct br_app *a, const char *name, unsigned base, char *err, size_t errlen);
/* One node's bridge (drv->b, a new random incarnation: into *incarnation
 * when not NULL) and its port driver with MACsec ([macsec] of nc). On
 * failure what was made is freed by br_node_close. */
int br_node_bridge(struct br_app *a, const struct br_node_cfg *nc, struct br_drv *drv,
		   struct br_counters *c, uint32_t *incarnation, char *err, size_t errlen);
/* The driver (its mbufs, MACsec keys) and the bridge; the MACsec snapshot
 * stays (br_macsec_free), so do the capture dumpers (br_dumper_free). */
void br_node_close(struct br_drv *drv);
/* The memory a node exports, nc->mem_size bytes (aligned to `align`, 0:
 * malloc's), filled as ht_wl_fill(mem_seed) or zeroed, served by *tgt. */
uint8_t *br_node_memory(const struct br_node_cfg *nc, size_t align, bool fill,
			struct ht_target *tgt, char *err, size_t errlen);
/* htoe-bridge's node: the above, its requester, workload or injector. */
int br_node_setup(struct br_app *a, struct br_node *n, const struct br_node_cfg *nc,
		  char *err, size_t errlen);
void br_node_teardown(struct br_node *n);

/* worker.c (runtime of one node: snapshot, the lcore loop) */
void br_node_publish(struct br_node *n);
int br_lcore_loop(void *arg);

/* port.c */
int br_ports_create(struct br_app *a, char *err, size_t errlen);
int br_ports_start(struct br_app *a, char *err, size_t errlen);
void br_ports_stop(struct br_app *a);

/* capture.c */
int br_capture_open(struct br_app *a, char *err, size_t errlen);
unsigned br_capture_drain(struct br_app *a, unsigned max);
void br_capture_flush(struct br_app *a);
void br_capture_close(struct br_app *a);
int br_capture_mkdir(const struct br_config *c, char *err, size_t errlen); /* capture_dir */
/* The capture of one driver written on its own thread (htoe-dimm): d->cap[] (dumper.h) for
 * d's port when a capture directory is set and the port is captured; t0_ns: the wall clock
 * at time 0 of the run (realtime0_ns), for the frames' timestamps. */
int br_capture_open_drv(const struct br_config *c, struct br_drv *d, uint64_t t0_ns, char *err,
			size_t errlen);

/* stats.c */
struct br_totals {
	uint64_t ops, sweep, completed, verified, mismatches, errors, unexpected;
	uint64_t lost_reset, lost_restart; /* losses the bridge reported (htoe_set_loss_cb) */
	uint64_t lost_poisoned, peers_gone; /* errors those losses explain; peers given up */
	uint64_t tx_frames, rx_frames, tx_bytes, rx_bytes, rx_bad, tx_refused, alloc_fail;
	uint64_t retransmits, naks, timeouts, resets, poisoned, np_timeouts;
	uint64_t late_responses;       /* responses after a timeout/reset (VLs) */
	uint64_t unexpected_responses; /* local responses matching no request */
	uint64_t peer_restarts;        /* peers seen with a new incarnation (VLs) */
	uint64_t imp_dropped, imp_dup, imp_corrupt, imp_reorder;
	uint64_t cap_frames, cap_dropped;
	uint64_t local_in, local_out, backpressure, master_aborts;
	uint64_t poll_max_ns, gap_max_ns;   /* maxima over the nodes */
	uint64_t drops[HTOE_DROP__COUNT];   /* frames refused, by reason (node + VLs) */
	unsigned nodes, wl_nodes, done_nodes;
};
void br_totals(struct br_app *a, int node, struct br_totals *t);
void br_print_line(struct br_app *a, FILE *f, double t_s, const struct br_totals *t,
		   const struct br_totals *prev, double dt_s);
int br_print_summary(struct br_app *a, FILE *f);
void br_print_json(struct br_app *a, FILE *f);

/* telemetry.c */
int br_telemetry_register(struct br_app *a);
/* A telemetry command's error reply: d becomes {"error": "MESSAGE"} (and
 * the command answers that, not null); returns 0 for the callback to return. */
struct rte_tel_data;
int br_tel_error(struct rte_tel_data *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
