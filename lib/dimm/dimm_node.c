/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_node: CTRL/lease/engine glue for one node's poll loop. See dimm_node.h.
 */
#include <errno.h>
#include <string.h>

#include "dimm_node.h"

void dimm_node_init(struct dimm_node *n, const struct dimm_node_cfg *cfg)
{
	memset(n, 0, sizeof(*n));
	n->cfg = *cfg;
	if (cfg->lease) {
		/* a lessor's export is closed from the first frame on: no
		 * lease covers any of it yet, so no peer can touch it */
		htoe_lease_acl_sync(cfg->lease, cfg->b);
		htoe_lease_watch(cfg->lease, cfg->b, 0);
	}
}

int dimm_node_bind(struct dimm_node *n, int h, struct dimm_client *c)
{
	if (h < 0 || h >= (int)HTOE_LEASE_MAX || !c)
		return -EINVAL;
	for (unsigned i = 0; i < DIMM_NODE_BIND_MAX; i++)
		if (!n->bind[h][i]) {
			bool known = false;

			n->bind[h][i] = c;
			for (unsigned k = 0; k < n->n_bound; k++)
				known |= n->bound[k] == h;
			if (!known)
				n->bound[n->n_bound++] = h;
			return 0;
		}
	return -ENOSPC;
}

static void lose(struct dimm_node *n, int h, int why)
{
	for (unsigned i = 0; i < DIMM_NODE_BIND_MAX; i++) {
		struct dimm_client *c = n->bind[h][i];

		if (c && !dimm_client_lost(c)) {
			dimm_client_set_lost(c, why);
			n->st.clients_lost++;
		}
	}
}

static unsigned lease_work(struct dimm_node *n, uint64_t now)
{
	struct htoe_lease_ep *ep = n->cfg.lease;
	uint8_t buf[HTOE_CTRL_MAX];
	struct htoe_lease_event ev;
	unsigned moved = 0;
	uint16_t node;
	int len;

	if (ep) {
		/* a peer with a new incarnation: its leases are gone both ways */
		uint64_t restarts = htoe_lease_stats(ep)->peer_restarts;

		htoe_lease_watch(ep, n->cfg.b, now);
		if (htoe_lease_stats(ep)->peer_restarts != restarts) {
			moved++;
			htoe_lease_acl_sync(ep, n->cfg.b);
		}
	}
	while ((len = htoe_ctrl_recv(n->cfg.b, &node, buf, sizeof(buf))) > 0) {
		moved++;
		n->st.ctrl_in++;
		if (ep && buf[0] == HTOE_LEASE_PROTO && !n->lease_deaf)
			htoe_lease_input(ep, node, buf, (size_t)len, now);
		else
			n->st.ctrl_other++;
	}
	if (!ep)
		return moved;
	if (now < htoe_lease_next_deadline(ep) && !moved)
		goto events;
	while ((len = htoe_lease_output(ep, &node, buf, sizeof(buf), now)) > 0) {
		moved++;
		n->st.ctrl_out++;
		/* refused (queue full): lost like a frame, the protocol retries */
		if (htoe_ctrl_send(n->cfg.b, node, buf, (size_t)len) != 0)
			n->st.ctrl_send_fail++;
	}
	/* a lessor with cfg.acl: only lease holders reach the leased ranges */
	htoe_lease_acl_sync(ep, n->cfg.b);
events:
	while (htoe_lease_event(ep, &ev)) {
		moved++;
		n->st.events++;
		if (ev.type == HTOE_LEV_LOST && ev.handle >= 0 && ev.handle < (int)HTOE_LEASE_MAX)
			lose(n, ev.handle, ev.status ? ev.status : HTOE_LEASE_E_TIMEOUT);
		if (n->cfg.on_event)
			n->cfg.on_event(n->cfg.arg, &ev);
	}
	/* belt and braces: a bound lease that is not usable any more */
	for (unsigned i = 0; i < n->n_bound; i++) {
		int h = n->bound[i];

		if (n->bind[h][0] && !htoe_lease_usable(ep, h, now))
			lose(n, h, HTOE_LEASE_E_TIMEOUT);
	}
	return moved;
}

unsigned dimm_node_poll(struct dimm_node *n, uint64_t now)
{
	unsigned moved = lease_work(n, now);

	if (n->cfg.engine)
		moved += dimm_engine_poll(n->cfg.engine, now);
	return moved;
}

uint64_t dimm_node_next_deadline(const struct dimm_node *n)
{
	uint64_t d = htoe_next_deadline(n->cfg.b);

	if (n->cfg.lease) {
		uint64_t l = htoe_lease_next_deadline(n->cfg.lease);

		if (l < d)
			d = l;
	}
	return d;
}

void dimm_client_cfg_from_lease(struct dimm_client_cfg *cfg, const struct htoe_lease_info *li)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->gaddr = li->gaddr;
	cfg->size = li->size;
	cfg->node = li->lessor;
}
