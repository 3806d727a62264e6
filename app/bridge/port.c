/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge ports. The data path does not care what a port is: every
 * port is an ethdev with one RX and one TX queue. A [port N] is either
 *  - dev = NAME: a device that exists already (EAL -a/--vdev, e.g.
 *    net_pcap0, 0000:01:00.0), or devargs that are hot-plugged here with
 *    rte_dev_probe() (e.g. net_null0,size=64; net_memif0,role=server), or
 *  - crossover = M: one end of an in-process ring pair with [port M]
 *    (two rte_rings and rte_eth_from_rings() twice, net_ring), or
 *  - hub = on: an in-process switch. Every port that says crossover = H
 *    sends into the hub's RX ring (multi-producer) and receives from a
 *    ring of its own; what the hub sends (br_port_flush), and what one
 *    member sends to another (br_hub_rx, an RX callback), is switched by
 *    destination MAC into those rings, by the lcore of the hub's node.
 */
/* rte_devargs_reset() (parsing a name to check it, below) is experimental in DPDK 22.11 */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <glob.h>
#include <inttypes.h>
#include <net/if.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_devargs.h>
#include <rte_dev.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>

#include "bridge.h"
#include "port_io.h"

static struct br_port *port_by_index(struct br_app *a, unsigned index)
{
	for (unsigned i = 0; i < a->n_ports; i++)
		if (a->ports[i].cfg->index == index)
			return &a->ports[i];
	return NULL;
}

static int make_crossover(struct br_app *a, struct br_port *p, struct br_port *q, char *err,
			  size_t errlen)
{
	char n1[RTE_RING_NAMESIZE], n2[RTE_RING_NAMESIZE];
	struct rte_ring *pq, *qp;
	int pid, qid;

	(void)a;
	snprintf(n1, sizeof(n1), "htoe_xo%u_%u", p->cfg->index, q->cfg->index);
	snprintf(n2, sizeof(n2), "htoe_xo%u_%u", q->cfg->index, p->cfg->index);
	/* single producer (the sending lcore), single consumer (the other) */
	pq = rte_ring_create(n1, p->cfg->ring_size, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	qp = rte_ring_create(n2, p->cfg->ring_size, (int)rte_socket_id(),
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!pq || !qp) {
		snprintf(err, errlen, "%s crossover: cannot create the rings: %s", p->cfg->where,
			 rte_strerror(rte_errno));
		rte_ring_free(pq);
		rte_ring_free(qp);
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "htoe_xo%u", p->cfg->index);
	snprintf(q->name, sizeof(q->name), "htoe_xo%u", q->cfg->index);
	pid = rte_eth_from_rings(p->name, &qp, 1, &pq, 1, rte_socket_id());
	qid = pid < 0 ? -1 : rte_eth_from_rings(q->name, &pq, 1, &qp, 1, rte_socket_id());
	if (pid < 0 || qid < 0) {
		snprintf(err, errlen, "%s crossover: rte_eth_from_rings failed: %s",
			 p->cfg->where, rte_strerror(rte_errno));
		if (pid >= 0)
			rte_eth_dev_close((uint16_t)pid);
		rte_ring_free(pq);
		rte_ring_free(qp);
		return -1;
	}
	p->port_id = (uint16_t)pid;
	q->port_id = (uint16_t)qid;
	p->rx_ring = qp;
	q->rx_ring = pq;
	p->probed = q->probed = true;
	return 0;
}

/* ------------------------------------------------------ probe failures */

/* The virtual-device ethdev drivers of this DPDK: the net PMD plugins
 * (librte_net_X.so in HTOE_DPDK_PMD_DIRS) whose name net_X the vdev bus
 * accepts (rte_devargs_parse: no device is created). */
static unsigned vdev_drivers(char names[][32], unsigned max)
{
	unsigned n = 0;
#ifdef HTOE_DPDK_PMD_GLOB
	glob_t g;

	if (glob(HTOE_DPDK_PMD_GLOB, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = 0; i < g.gl_pathc && n < max; i++) {
		const char *f = strrchr(g.gl_pathv[i], '/');
		char drv[32], dev[40];
		struct rte_devargs da;
		bool dup = false;

		f = f ? f + 1 : g.gl_pathv[i];
		if (sscanf(f, "librte_net_%20[a-z0-9_].so", drv + 4) != 1)
			continue;
		memcpy(drv, "net_", 4);
		for (unsigned k = 0; k < n; k++)
			dup |= !strcmp(names[k], drv);
		snprintf(dev, sizeof(dev), "%s0", drv);
		if (dup || rte_devargs_parse(&da, dev) != 0)
			continue;
		rte_devargs_reset(&da);
		snprintf(names[n++], 32, "%s", drv);
	}
	globfree(&g);
#else
	(void)names;
	(void)max;
#endif
	return n;
}

static unsigned edit_distance(const char *a, const char *b)
{
	unsigned d[33][33];
	size_t la = strlen(a), lb = strlen(b);

	if (la > 32 || lb > 32)
		return 99;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			c = RTE_MIN(c, d[i - 1][j] + 1);
			d[i][j] = RTE_MIN(c, d[i][j - 1] + 1);
		}
	return d[la][lb];
}

/* The value of KEY=... in devargs ("" if absent). */
static void devarg(const char *args, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	out[0] = 0;
	for (const char *s = args; s && *s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
		if (!strncmp(s, key, kl) && s[kl] == '=') {
			snprintf(out, len, "%.*s", (int)strcspn(s + kl + 1, ","), s + kl + 1);
			return;
		}
}

/* Why probing `dev` (its name: `name`) failed with r, as far as we can
 * tell: an unknown driver name, a PCI address that is not there, a
 * missing network interface, no permission. */
static void probe_hint(const char *dev, const char *name, int r, char *out, size_t len)
{
	char drv[RTE_DEV_NAME_MAX_LEN], iface[64], list[1024] = "", names[64][32];
	const char *args = strchr(dev, ',');
	struct rte_devargs da;
	size_t l;
	unsigned n, best = 99, bi = 0;

	out[0] = 0;
	if (strchr(name, ':')) {
		snprintf(out, len, "; there is no PCI device %s here (is it bound to vfio-pci or "
			 "uio_pci_generic, and does the EAL scan PCI: no --no-pci?)", name);
		return;
	}
	if (rte_devargs_parse(&da, dev) != 0) {
		/* no bus knows the name: an unknown driver */
		snprintf(drv, sizeof(drv), "%s", name);
		for (l = strlen(drv); l && drv[l - 1] >= '0' && drv[l - 1] <= '9'; l--)
			drv[l - 1] = 0;
		n = vdev_drivers(names, RTE_DIM(names));
		for (unsigned i = 0; i < n; i++) {
			unsigned e = edit_distance(drv, names[i]);

			if (e < best) {
				best = e;
				bi = i;
			}
			l = strlen(list);
			snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", names[i]);
		}
		if (!n)
			snprintf(out, len, "; no driver of this DPDK is called '%s' (a virtual device "
				 "is DRIVER<N>[,ARGS], e.g. net_memif0, net_af_packet0,iface=eth1)", drv);
		else
			snprintf(out, len, "; no driver of this DPDK is called '%s'%s%s%s; its "
				 "virtual-device ethdev drivers: %s", drv,
				 best <= 3 ? " (did you mean " : "", best <= 3 ? names[bi] : "",
				 best <= 3 ? "?)" : "", list);
		return;
	}
	rte_devargs_reset(&da);
	/* the interface of af_packet / af_xdp, from dev or from the EAL's --vdev */
	if (!args) {
		const struct rte_devargs *e;

		RTE_EAL_DEVARGS_FOREACH("vdev", e)
			if (!strcmp(e->name, name))
				args = e->args;
	}
	devarg(args, "iface", iface, sizeof(iface));
	if (iface[0] && !if_nametoindex(iface)) {
		snprintf(out, len, "; there is no network interface '%s' (ip link lists them; in "
			 "a network namespace, run under ip netns exec)", iface);
		return;
	}
	if (geteuid() != 0 && (r == -EPERM || r == -EACCES || iface[0]))
		snprintf(out, len, "; not running as root: raw sockets (af_packet, af_xdp) and "
			 "device files need root or CAP_NET_RAW");
	else if (!args || !args[0] || !args[1])
		snprintf(out, len, "; the driver could not create it from its name alone: give its "
			 "arguments (%s,KEY=VALUE,...) in dev or with EAL --vdev, and see the driver's "
			 "message above", name);
	else
		snprintf(out, len, "; the driver refused its arguments '%s' (its message above "
			 "says why)", args + (*args == ','));
}

static int open_dev(struct br_port *p, char *err, size_t errlen)
{
	const char *dev = p->cfg->dev;
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;
	size_t n = strcspn(dev, ",");
	int r;

	snprintf(name, sizeof(name), "%.*s", (int)n, dev);
	if (rte_eth_dev_get_port_by_name(name, &pid) == 0)
		goto found;
	r = rte_dev_probe(dev);
	if (r < 0) {
		char hint[1400];

		probe_hint(dev, name, r, hint, sizeof(hint));
		snprintf(err, errlen,
			 "%s: no such port, and probing it as devargs failed (%s)%s",
			 p->cfg->dev_where, rte_strerror(-r), hint);
		return -1;
	}
	if (rte_eth_dev_get_port_by_name(name, &pid) != 0) {
		snprintf(err, errlen, "%s: probed, but no ethdev port named '%s'",
			 p->cfg->dev_where, name);
		return -1;
	}
found:
	p->port_id = pid;
	p->probed = true;
	snprintf(p->name, sizeof(p->name), "%s", name);
	return 0;
}

/* p's ethdev (named p->name): RX from rx, TX into tx. */
static int ring_ethdev(struct br_port *p, struct rte_ring *rx, struct rte_ring *tx, char *err,
		       size_t errlen)
{
	int pid = rte_eth_from_rings(p->name, &rx, 1, &tx, 1, rte_socket_id());

	if (pid < 0) {
		snprintf(err, errlen, "%s: rte_eth_from_rings failed: %s", p->cfg->where,
			 rte_strerror(rte_errno));
		return -1;
	}
	p->port_id = (uint16_t)pid;
	p->probed = true;
	return 0;
}

/* The hub's own ethdev: RX from the ring its members send into (several
 * producers when they are on several lcores), TX into hub_tx. */
static int make_hub(struct br_port *h, char *err, size_t errlen)
{
	char n1[RTE_RING_NAMESIZE], n2[RTE_RING_NAMESIZE];

	snprintf(n1, sizeof(n1), "htoe_hub%u_rx", h->cfg->index);
	snprintf(n2, sizeof(n2), "htoe_hub%u_tx", h->cfg->index);
	h->rx_ring = rte_ring_create(n1, h->cfg->ring_size, (int)rte_socket_id(), RING_F_SC_DEQ);
	h->hub_tx = rte_ring_create(n2, h->cfg->ring_size, (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!h->rx_ring || !h->hub_tx) {
		snprintf(err, errlen, "%s hub: cannot create the rings: %s", h->cfg->where,
			 rte_strerror(rte_errno));
		return -1;
	}
	snprintf(h->name, sizeof(h->name), "htoe_hub%u", h->cfg->index);
	return ring_ethdev(h, h->rx_ring, h->hub_tx, err, errlen);
}

/* Port p joined to hub h: RX from a ring of its own, TX into the hub's RX. */
static int join_hub(struct br_port *p, struct br_port *h, char *err, size_t errlen)
{
	char n[RTE_RING_NAMESIZE];

	if (!h->probed && make_hub(h, err, errlen))
		return -1;
	snprintf(n, sizeof(n), "htoe_hub%u_%u", h->cfg->index, p->cfg->index);
	/* single producer (the hub's lcore), single consumer (p's) */
	p->rx_ring = rte_ring_create(n, h->cfg->ring_size, (int)rte_socket_id(),
				     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (!p->rx_ring) {
		snprintf(err, errlen, "%s: cannot create the ring from its hub: %s", p->cfg->where,
			 rte_strerror(rte_errno));
		return -1;
	}
	snprintf(p->name, sizeof(p->name), "htoe_xo%u", p->cfg->index);
	return ring_ethdev(p, p->rx_ring, h->rx_ring, err, errlen);
}

/* Each hub's members: the MAC of the node on each port joined to it. */
static int hub_members(struct br_app *a, char *err, size_t errlen)
{
	for (unsigned i = 0; i < a->cfg.n_nodes; i++) {
		const struct br_node_cfg *nc = &a->cfg.nodes[i];
		struct br_port *p = &a->ports[nc->port], *h;

		if (p->cfg->crossover < 0)
			continue;
		h = port_by_index(a, (unsigned)p->cfg->crossover);
		if (!h || !h->cfg->hub)
			continue;
		if (!h->members && !(h->members = calloc(a->n_ports, sizeof(*h->members)))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		memcpy(h->members[h->n_members].mac.addr_bytes, nc->bc.mac, RTE_ETHER_ADDR_LEN);
		h->members[h->n_members++].ring = p->rx_ring;
	}
	return 0;
}

int br_ports_create(struct br_app *a, char *err, size_t errlen)
{
	a->n_ports = a->cfg.n_ports;
	a->ports = calloc(a->n_ports ? a->n_ports : 1, sizeof(*a->ports));
	if (!a->ports) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < a->n_ports; i++) {
		a->ports[i].cfg = &a->cfg.ports[i];
		a->ports[i].cap_idx = -1;
	}
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];

		if (!p->cfg->used || p->probed)
			continue;
		if (p->cfg->hub) {
			if (make_hub(p, err, errlen))
				return -1;
		} else if (p->cfg->crossover >= 0) {
			struct br_port *q = port_by_index(a, (unsigned)p->cfg->crossover);

			if (q->cfg->hub ? join_hub(p, q, err, errlen) :
					  make_crossover(a, p, q, err, errlen))
				return -1;
		} else if (open_dev(p, err, errlen)) {
			return -1;
		}
		/* one ethdev for one [port] */
		for (unsigned j = 0; j < i; j++)
			if (a->ports[j].probed && a->ports[j].port_id == p->port_id) {
				snprintf(err, errlen, "%s: ethdev %u is also %s",
					 p->cfg->dev_where, p->port_id, a->ports[j].cfg->where);
				return -1;
			}
	}
	if (hub_members(a, err, errlen))
		return -1;
	/* checks against the device, and the per-port TX state */
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];
		struct rte_eth_dev_info info;
		int r;

		if (!p->probed)
			continue;
		r = rte_eth_dev_info_get(p->port_id, &info);
		if (r) {
			snprintf(err, errlen, "%s (%s): cannot get device info: %s", p->cfg->where,
				 p->name, rte_strerror(-r));
			return -1;
		}
		if (info.max_rx_pktlen < a->cfg.max_frame) {
			snprintf(err, errlen,
				 "%s (%s): frames up to %u bytes (the largest node mtu + 18), "
				 "the device receives at most %u",
				 p->cfg->where, p->name, a->cfg.max_frame, info.max_rx_pktlen);
			return -1;
		}
		/* frames the port does not take are freed and counted, CTRL
		 * frames kept to be offered again */
		if (br_port_txb_init(p, (uint16_t)a->cfg.burst, rte_eth_dev_socket_id(p->port_id))) {
			snprintf(err, errlen, "%s: cannot allocate the TX buffer or register its "
				 "mbuf flag: %s", p->cfg->where, rte_strerror(rte_errno));
			return -1;
		}
		if (!strcmp(info.driver_name, "net_memif")) {
			p->peer_mem = true;
			if (br_port_guard_install()) {
				snprintf(err, errlen, "%s (%s): cannot install the handler that "
					 "guards its bursts: %s", p->cfg->where, p->name,
					 strerror(errno));
				return -1;
			}
		}
		if (p->cfg->imp_tx && !(p->imp_tx = impair_new(&p->cfg->imp))) {
			snprintf(err, errlen, "%s: cannot create the impairment stage",
				 p->cfg->where);
			return -1;
		}
		if (p->cfg->imp_rx && !(p->imp_rx = impair_new(&p->cfg->imp))) {
			snprintf(err, errlen, "%s: cannot create the impairment stage",
				 p->cfg->where);
			return -1;
		}
	}
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* rte_eth_dev_start; a memif client whose server refuses the connection
 * (it may be starting, or still closing the connection of a client that
 * died) tries again every 100 ms for [port N] connect_timeout, measured on
 * the clock (a signal ends that). */
static int start_port(struct br_port *p)
{
	char role[16], sock[108];
	int r = rte_eth_dev_start(p->port_id);

	if (r == 0 || !p->peer_mem)
		return r;
	devarg(strchr(p->cfg->dev, ','), "role", role, sizeof(role));
	if (!strcmp(role, "server"))
		return r;
	devarg(strchr(p->cfg->dev, ','), "socket", sock, sizeof(sock));
	fprintf(stderr, "htoe-bridge: %s (%s): the memif server at %s does not accept the "
		"connection (not started yet, or still closing a previous client's); trying "
		"again for up to %g s\n", p->cfg->where, p->name, sock[0] ? sock : "its socket",
		(double)p->cfg->connect_timeout_ns / 1e9);
	/* the driver's own message once, not once per try */
	int lt = rte_log_register("pmd.net.memif"), lvl = lt >= 0 ? rte_log_get_level(lt) : -1;

	if (lvl >= 0)
		rte_log_set_level(lt, RTE_LOG_CRIT);
	for (uint64_t end = mono_ns() + p->cfg->connect_timeout_ns;
	     r < 0 && !br_signals && mono_ns() < end;) {
		const struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		r = rte_eth_dev_start(p->port_id);
	}
	if (lvl >= 0)
		rte_log_set_level(lt, (uint32_t)lvl);
	if (r == 0)
		fprintf(stderr, "htoe-bridge: %s (%s): connected to the memif server\n",
			p->cfg->where, p->name);
	return r;
}

int br_ports_start(struct br_app *a, char *err, size_t errlen)
{
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];
		struct rte_eth_conf conf;
		struct rte_eth_dev_info info;
		uint16_t rxd = (uint16_t)p->cfg->rxd, txd = (uint16_t)p->cfg->txd;
		int r, sock;

		if (!p->probed)
			continue;
		sock = rte_eth_dev_socket_id(p->port_id);
		if (sock < 0)
			sock = (int)rte_socket_id();
		memset(&conf, 0, sizeof(conf));
		r = rte_eth_dev_info_get(p->port_id, &info);
		if (!r && a->cfg.max_frame > RTE_ETHER_MAX_LEN - RTE_ETHER_CRC_LEN) {
			uint32_t mtu = a->cfg.max_frame - RTE_ETHER_HDR_LEN - 4u;

			if (mtu > info.max_mtu) {
				snprintf(err, errlen, "%s (%s): the nodes need an MTU of %u, the "
					 "device allows %u", p->cfg->where, p->name, mtu,
					 info.max_mtu);
				return -1;
			}
			conf.rxmode.mtu = mtu;
		}
		/* adaptive polling sleeps on the RX interrupt where the PMD has one */
		conf.intr_conf.rxq = a->poll == BR_POLL_ADAPTIVE;
		r = rte_eth_dev_configure(p->port_id, 1, 1, &conf);
		if (r < 0 && conf.intr_conf.rxq) {
			conf.intr_conf.rxq = 0;
			r = rte_eth_dev_configure(p->port_id, 1, 1, &conf);
		}
		if (r < 0) {
			snprintf(err, errlen, "%s (%s): configure: %s", p->cfg->where, p->name,
				 rte_strerror(-r));
			return -1;
		}
		p->configured = true;
		r = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &rxd, &txd);
		if (r < 0) {
			snprintf(err, errlen, "%s (%s): descriptors: %s", p->cfg->where, p->name,
				 rte_strerror(-r));
			return -1;
		}
		r = rte_eth_rx_queue_setup(p->port_id, 0, rxd, (unsigned)sock, NULL, a->pool);
		if (r < 0) {
			snprintf(err, errlen, "%s (%s): RX queue: %s", p->cfg->where, p->name,
				 rte_strerror(-r));
			return -1;
		}
		r = rte_eth_tx_queue_setup(p->port_id, 0, txd, (unsigned)sock, NULL);
		if (r < 0) {
			snprintf(err, errlen, "%s (%s): TX queue: %s", p->cfg->where, p->name,
				 rte_strerror(-r));
			return -1;
		}
		if (p->hub_tx && !p->hub_cb &&
		    !(p->hub_cb = rte_eth_add_rx_callback(p->port_id, 0, br_hub_rx, p))) {
			snprintf(err, errlen, "%s (%s): cannot add the hub's RX callback: %s",
				 p->cfg->where, p->name, rte_strerror(rte_errno));
			return -1;
		}
		if (p->cfg->promisc) {
			/* the nodes' MACs are not the port's: receive everything */
			r = rte_eth_promiscuous_enable(p->port_id);
			if (r < 0 && r != -ENOTSUP)
				fprintf(stderr, "%s: %s (%s): promiscuous mode: %s\n",
					br_prog(), p->cfg->where, p->name, rte_strerror(-r));
		}
		r = start_port(p);
		if (r < 0) {
			snprintf(err, errlen, "%s (%s): start: %s%s", p->cfg->where, p->name,
				 rte_strerror(-r), p->peer_mem ? " (is the memif server running, "
				 "at the socket this client names?)" : "");
			return -1;
		}
		p->started = true;
		printf("%s: port %u up: %s (ethdev %u)\n", br_prog(), p->cfg->index, p->name,
		       p->port_id);
	}
	return 0;
}

void br_ports_stop(struct br_app *a)
{
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];
		struct rte_mbuf *m, *pkts[BR_MAX_BURST];
		uint16_t nb;

		if (p->started) {
			/* what is still in the RX queue (bounded: net_null never ends) */
			for (unsigned k = 0; k <= p->cfg->rxd / BR_MAX_BURST; k++) {
				nb = br_port_rx(p, pkts, BR_MAX_BURST);
				if (!nb)
					break;
				rte_pktmbuf_free_bulk(pkts, nb);
			}
			rte_eth_dev_stop(p->port_id);
			p->started = false;
		}
		for (int d = 0; d < 2; d++) {
			struct impair *im = d ? p->imp_rx : p->imp_tx;

			if (!im)
				continue;
			while ((m = impair_drain(im)) != NULL)
				rte_pktmbuf_free(m);
			impair_free(im);
		}
		p->imp_rx = p->imp_tx = NULL;
	}
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];

		if (p->hub_cb) { /* the lcores have stopped: nobody is in it */
			rte_eth_remove_rx_callback(p->port_id, 0, p->hub_cb);
			rte_free((void *)(uintptr_t)p->hub_cb);
			p->hub_cb = NULL;
		}
		if (p->probed) {
			rte_eth_dev_close(p->port_id);
			p->probed = false;
		}
		br_port_drop_kept(p);
		rte_free(p->txb);
		p->txb = NULL;
	}
	/* the crossover and hub rings, once both ends are closed */
	for (unsigned i = 0; i < a->n_ports; i++) {
		struct br_port *p = &a->ports[i];
		struct rte_ring **rings[2] = { &p->rx_ring, &p->hub_tx };

		for (unsigned k = 0; k < 2; k++)
			if (*rings[k]) {
				void *obj;

				while (rte_ring_dequeue(*rings[k], &obj) == 0)
					rte_pktmbuf_free(obj);
				rte_ring_free(*rings[k]);
				*rings[k] = NULL;
			}
		free(p->members);
		p->members = NULL;
		p->n_members = 0;
	}
}
