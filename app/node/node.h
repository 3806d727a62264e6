/* SPDX-License-Identifier: BSD-3-Clause
 * htnode: drives the local HT side of one HToE node, sans-I/O.
 *
 * One node is an HT endpoint model (a requester fed by verified workloads and
 * a memory target, lib/htmodel) behind its HTEA (lib/htoe). This module moves
 * HT packets between them following the routing rule of htoe.h:
 *   - workload op -> requester -> request     -> htoe_local_input()
 *   - htoe_local_output(): a request          -> the memory target
 *                          a response         -> the requester -> workload
 *   - a target response with one of the bridge's UnitIDs -> htoe_local_input()
 *     (queued while the bridge pushes back), any other one -> the requester
 * It does not touch frames or time sources: the driver (htoe-sim, the DPDK
 * app htoe-bridge, tests) calls htoe_frame_input/htoe_frame_output and
 * htoe_handle_expiry itself and calls htnode_poll() in its loop.
 *
 * The optional hooks let a driver observe every step (the simulator's
 * oracle uses them; the app counts with them). Not thread-safe: one
 * struct htnode per thread, like struct htoe.
 */
#ifndef HTNODE_H
#define HTNODE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/lat_hist.h"
#include "htmodel/ht_requester.h"
#include "htmodel/ht_target.h"
#include "htmodel/ht_workload.h"
#include "htoe/htoe.h"

#define HTNODE_RSPQ         64u  /* target responses waiting for the bridge */
#define HTNODE_COOKIE_SHIFT 48u  /* op cookie bits 63:48 = workload index */
#define HTNODE_MAX_WL       256u
#define HTNODE_ISSUE_BURST  256u /* ops issued per htnode_poll() at most */
#define HTNODE_BURST        32u  /* packets taken from the bridge, parsed, then served */

struct htnode;

/* All optional (NULL: not called). `wl` is the index into htnode.wl[].
 * The node moves encoded packets (each parsed once into a struct ht_desc);
 * a hook that takes a struct ht_pkt is given one decoded for it, only when
 * the hook is set (the simulator's oracle). */
struct htnode_hooks {
	/* An op was issued and taken by the bridge (req: its request packet). */
	void (*issued)(struct htnode *nd, unsigned wl, const struct ht_pkt *req);
	/* The bridge refused a request with an error other than -EAGAIN; the
	 * tag was given back and htnode_poll() stops issuing for this call. */
	void (*rejected)(struct htnode *nd, unsigned wl, int err);
	/* A completion, after ht_wl_complete() (wl_rc: its return value;
	 * c->cookie no longer carries the workload index). */
	void (*completed)(struct htnode *nd, unsigned wl, const struct ht_completion *c,
			  int wl_rc, const struct ht_wl_result *res);
	/* A response the requester did not expect (rc from ht_req_rx()). */
	void (*unexpected)(struct htnode *nd, const struct ht_pkt *rsp, int rc);
	/* A posted write is about to be applied by the memory target. */
	void (*posted_write)(struct htnode *nd, const struct ht_pkt *req);
	/* The bridge reported a loss (htoe_set_loss_cb), after the workloads
	 * tainted it. A node without hooks prints a restart to stderr. */
	void (*lost)(struct htnode *nd, const struct htoe_loss *l);
};

struct htnode_stats {
	uint64_t issued;        /* ops taken by the bridge */
	uint64_t backpressure;  /* issue attempts refused with -EAGAIN */
	uint64_t no_tag;        /* issue attempts without a free requester tag */
	uint64_t rejected;      /* refused with another error */
	uint64_t completions;   /* completions handed to a workload */
	uint64_t unexpected;    /* responses with no outstanding request */
	uint64_t bad_cookie;    /* completions naming no workload */
	uint64_t to_target;     /* requests served by the memory target */
	uint64_t rsp_to_bridge; /* target responses for the bridge */
	uint64_t undecodable;   /* htoe_local_output() packets that did not parse */
	uint64_t lost_reset;    /* posted writes the bridge reported lost to a reset */
	uint64_t lost_restart;  /* ranges reported lost to a peer's restart (or death) */
	uint64_t peers_gone;    /* peers the driver gave up on (htnode_peer_gone) */
};

struct htnode {
	struct htoe *b;              /* the bridge (owned by the caller) */
	struct ht_requester req;
	struct ht_target tgt;
	uint8_t  bridge_ubase;       /* the bridge's UnitIDs: ubase .. ubase+units-1 */
	uint8_t  bridge_units;
	unsigned n_wl;
	struct ht_workload **wl;     /* [n_wl], caller-owned; NULL entries issue nothing */
	bool     hold;               /* issue no new ops (completions still flow) */

	unsigned rr;                 /* next workload to try */
	uint8_t  rspq[HTNODE_RSPQ][HT_MAX_PKT_LEN]; /* encoded by the target */
	uint8_t  rsp_len[HTNODE_RSPQ];
	unsigned rsp_head, rsp_n;

	const struct htnode_hooks *hooks;
	void    *user;               /* for the hooks */
	struct htnode_stats st;
	/* round trips of the workloads' reads (not the read-back sweep): the
	 * `now` of htnode_poll() at completion minus the `now` at issue */
	struct lat_hist rd_lat;
};

/*
 * Set up the local side: the requester with UnitIDs first_unitid ..
 * first_unitid+n_unitids-1, an empty response queue and the workload table.
 * The bridge (b), the target (ht_tgt_init(&nd->tgt, ...)) and hooks are set
 * by the caller. Returns 0 or -EINVAL (requester config, n_wl too large or
 * the requester UnitIDs overlapping the bridge's).
 */
int htnode_init(struct htnode *nd, struct htoe *b, uint8_t bridge_ubase, uint8_t bridge_units,
		unsigned n_unitids, uint8_t first_unitid, struct ht_workload **wl, unsigned n_wl);

/* Fill c->incarnation (non-zero) and c->nonce_key from getrandom(2): a
 * real node calls this at every start, so that its peers see a restart
 * (htoe-sim uses seeded values instead). 0, or -1 with the reason in err. */
int htnode_random_incarnation(struct htoe_config *c, char *err, size_t errlen);

/* Re-initialise the requester (UnitIDs first..first+n-1) and drop the
 * response queue: a node restart. Returns 0 or -EINVAL. */
int htnode_reset_requester(struct htnode *nd, unsigned n_unitids, uint8_t first_unitid);

/*
 * One pass over the local side at time `now`: offer queued target responses
 * to the bridge, take what the bridge has for the local side
 * (htoe_local_output, in bursts of HTNODE_BURST packets parsed once each,
 * then served: requests by ht_tgt_serve, responses by ht_req_rx_desc),
 * issue workload ops (ht_wl_peek_ref; reads and dword writes encoded once by
 * ht_req_issue_enc and handed over as bytes, other ops as a struct ht_pkt the
 * bridge encodes; at most HTNODE_ISSUE_BURST, round-robin
 * over the workloads). Returns the number of packets moved;
 * call again (with frame output in between) until it returns 0.
 */
unsigned htnode_poll(struct htnode *nd, uint64_t now);

/*
 * The driver gave up on peer `node` (gone for good: silent while requests to
 * it waited): [addr, addr+len) of its memory, as mapped, is lost. Counted in
 * peers_gone, and (len > 0: a workload used it) as lost to a restart; each workload whose window it overlaps is tainted there
 * and stopped (no more ops, no read-back sweep), so that the errors of its
 * requests to the peer (the driver resets the VL, which poisons them) count
 * as poisoned by a loss. Returns the number of workloads stopped.
 */
unsigned htnode_peer_gone(struct htnode *nd, uint16_t node, uint64_t addr, uint64_t len);

/* Work left on the local side or in the bridge: queued responses,
 * outstanding requests, htoe_busy(). */
bool htnode_busy(const struct htnode *nd);

#endif
