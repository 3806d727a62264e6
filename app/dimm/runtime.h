/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm runtime: the two kinds of node of the remote-memory demo on
 * DPDK ports (app/bridge's configuration, ports and driver: RX, TX,
 * impairment, MACsec, capture are app/bridge/driver.c, as in htoe-bridge).
 *
 *  - the *exporter* (node B): bridge + HT memory target (app/node htnode)
 *    + lease endpoint as lessor, busy-polled on its own lcore;
 *  - the *borrower* (node A): bridge + lease endpoint as lessee + the dimm
 *    engine + the userfaultfd pager, on the main lcore. Its loop is
 *    cooperative: the application thread shares its CPU (there are only
 *    two), so the loop spins (with sched_yield) only while it has work or
 *    for --spin-us after it, then sleeps in ppoll() on the pager's
 *    userfaultfd and an eventfd the application kicks, with the bridge's
 *    next deadline as the timeout.
 */
#ifndef HTOE_DIMM_RUNTIME_H
#define HTOE_DIMM_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bridge/bridge.h"
#include "dimm.h"
#include "dimm_node.h"
#include "dimm_pager.h"
#include "htoe/htoe_lease.h"

struct dn_ctr {
	uint64_t sleeps, yields;
	uint64_t gaps, max_gap;       /* borrower: loop iterations more than 150 us apart */
};

struct dapp;
struct dm_pub;

struct dnode {
	struct dapp *app;
	const struct br_node_cfg *cfg;
	uint16_t id;
	bool     borrower;
	struct htoe *b;              /* = drv.b */
	struct htoe_lease_ep *lease;
	struct dimm_node dn;
	struct htnode hn;            /* exporter: serves its memory */
	uint8_t *mem;
	struct dimm_engine *eng;     /* borrower */
	struct br_counters c;        /* frames, polls (app/bridge/driver.h) */
	struct dn_ctr lc;            /* the loop's own */
	struct br_idle idle;         /* exporter: busy or adaptive polling ([global] poll) */
	struct br_drv drv;           /* its port: RX, TX, timers, MACsec, capture; drv.deaf: an
				      * exporter acts as a crashed node */
	struct dm_pub *pub;          /* its metrics snapshot (metrics.h); NULL: none */
};

struct dapp {
	struct br_app *br;           /* configuration, ports, mbuf pool, TSC */
	unsigned n_nodes;
	struct dnode *nodes;
	struct dnode *borrower;      /* NULL: this process only exports */
	uint16_t lessor;
	uint64_t lease_ns;
	unsigned quota_slots;        /* exporter: per-lessee quota (htoe_lease_cfg) */
	uint64_t quota_bytes;
	uint64_t spin_ns;
	bool     verbose;

	/* borrower runtime */
	int      lease_h;
	struct htoe_lease_info lease;
	struct dimm_client *app_c;   /* the application thread's client (rte_rings) */
	struct dimm_client *pager_c; /* the pager's (used on the borrower's lcore) */
	struct dimm_client *fetch_c; /* the pager's fetches (passpw_reads) */
	struct rte_ring *sq, *cq;
	_Atomic(struct dimm_pager *) pager;
	_Atomic uint64_t a_iter;
	_Atomic int a_sleeping;
	_Atomic uint64_t kicks;
	int      efd;                 /* the application wakes the loop */
	int      app_efd;             /* the loop wakes the application */
	_Atomic int app_waiting;
	/* Run to completion (default; --poll-thread turns it off): a waiting
	 * application thread polls the borrower's node itself (dr_idle). The
	 * node is not thread-safe: `owner` says who polls it now (DR_OWN_*),
	 * taken with one compare-and-swap per iteration, never waited for;
	 * app_drove is the time (dr_now) of the application's last poll: the
	 * loop naps while it is recent, until rtc_wake (the node's next
	 * deadline, published by the application's poll) or 1 ms at most,
	 * woken early by a page fault or by a kick while a_napping and the
	 * application no longer polls. */
	bool     rtc;
	_Atomic int owner;
	_Atomic uint64_t app_drove;
	_Atomic uint64_t rtc_wake;
	_Atomic int a_napping;
	uint64_t kill_after_faults;
	uint64_t drop_renewals_after; /* test hook: the lessor then ignores lease messages */
	bool     killed;

	_Atomic int quit_a;          /* the borrower's loop ends (release the lease first) */
	_Atomic int quit_b;          /* the exporters' loops end */
};

uint64_t dr_now(const struct dapp *d);

/* Nodes from the loaded configuration (d->br->cfg); lessor memory, the
 * lease endpoints, MACsec ([macsec] keys). The mbuf pool must exist. */
int dr_nodes_setup(struct dapp *d, uint16_t borrower, char *err, size_t errlen);
void dr_nodes_teardown(struct dapp *d);   /* also closes the capture files */
/* With [global] metrics: every node's snapshot (metrics.h), published by its own thread
 * from now on. 0, or -1 with err (no memory). */
int dr_metrics_nodes(struct dapp *d, char *err, size_t errlen);
/* The nodes' ports (d->br->ports, created); then --capture DIR ([global]
 * capture): every node's port writes DIR/port<N>-rx.pcap (as received,
 * before the RX impairment) and DIR/port<N>-tx.pcap (as sent, after MACsec
 * and the TX impairment), nanosecond pcap, like htoe-bridge; each node's
 * own thread writes its files. */
int dr_ports_assign(struct dapp *d, char *err, size_t errlen);

/* Exporter loop (an lcore function; arg: struct dnode *). Ends on quit_b. */
int dr_exporter_loop(void *arg);

/* Borrower: bring the VL up and lease `size` bytes from d->lessor (polling
 * on this thread, at most timeout_ns), then create the two clients. */
int dr_borrower_start(struct dapp *d, uint64_t size, uint64_t timeout_ns, char *err,
		      size_t errlen);
/* The borrower's loop on this thread until quit_a; then the lease is
 * released (bounded wait). */
void dr_borrower_loop(struct dapp *d);

/* Application thread helpers. */
void dr_kick(void *arg);     /* wake the borrower's loop if it sleeps */
void dr_idle(void *arg);     /* while waiting: run to completion, one iteration of the
				borrower's node on this thread; with --poll-thread (or
				while the loop polls): kick, then block (at most 200 us) */
/* Publish / withdraw the pager the borrower's loop serves (withdraw waits
 * until the loop no longer uses it). */
void dr_pager_publish(struct dapp *d, struct dimm_pager *p);
void dr_pager_withdraw(struct dapp *d);

#endif
