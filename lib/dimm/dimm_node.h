/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_node: the remote-memory side of one node's poll loop.
 *
 * Glues, on the node's thread, what lives next to its bridge:
 *   - CTRL messages: lease messages (first byte HTOE_LEASE_PROTO) go to the
 *     lease endpoint, its output goes out with htoe_ctrl_send();
 *   - lease events: a lessee lease that is lost (or no longer usable)
 *     marks the clients bound to it lost (dimm_client_set_lost), so every
 *     later operation fails with -ENOLINK instead of touching memory that
 *     may belong to someone else;
 *   - the engine (dimm_engine_poll).
 * Frames (htoe_frame_input/output, htoe_handle_expiry) stay the driver's.
 * Not thread-safe: call everything from the node's thread.
 */
#ifndef DIMM_NODE_H
#define DIMM_NODE_H

#include <stdint.h>

#include "dimm.h"
#include "htoe/htoe.h"
#include "htoe/htoe_lease.h"

#define DIMM_NODE_BIND_MAX 8u   /* clients per lease */

struct dimm_node_cfg {
	struct htoe *b;
	struct htoe_lease_ep *lease;     /* optional */
	struct dimm_engine *engine;      /* optional */
	/* every lease event (optional) */
	void (*on_event)(void *arg, const struct htoe_lease_event *ev);
	void *arg;
};

struct dimm_node_stats {
	uint64_t ctrl_in, ctrl_out, ctrl_other, ctrl_send_fail;
	uint64_t events, clients_lost;
};

struct dimm_node {
	struct dimm_node_cfg cfg;
	struct dimm_client *bind[HTOE_LEASE_MAX][DIMM_NODE_BIND_MAX];
	int      bound[HTOE_LEASE_MAX];   /* handles with clients */
	unsigned n_bound;
	struct dimm_node_stats st;
	/* test hook: received lease messages are dropped (counted in
	 * st.ctrl_other), as by a lessor that stopped answering */
	bool     lease_deaf;
};

void dimm_node_init(struct dimm_node *n, const struct dimm_node_cfg *cfg);
/* CTRL messages, lease timers and events, engine. Returns work done. */
unsigned dimm_node_poll(struct dimm_node *n, uint64_t now);
/* Bind a client to a lessee lease handle: 0, -EINVAL, -ENOSPC. */
int dimm_node_bind(struct dimm_node *n, int lease_handle, struct dimm_client *c);
/* Earliest deadline of the bridge and the lease endpoint. */
uint64_t dimm_node_next_deadline(const struct dimm_node *n);

/* A client configuration for an ACTIVE lease (gaddr, size, lessor). */
void dimm_client_cfg_from_lease(struct dimm_client_cfg *cfg, const struct htoe_lease_info *li);

#endif
