/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge configuration. See config.h and docs/config.md.
 *
 * Every key is an entry of the table in cfgkeys.c: cfgtab.c reads the file
 * (once), applies --set, checks the names, parses and range-checks each
 * value into its field. What is left here are the relations between keys
 * and sections: members, ports and crossovers, the address map, the nodes
 * and their workloads. The library checks the bridge configuration itself
 * (htoe_config_check); its message is reported against the key it blames.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "op_mix.h"
#include "default_config.h"

#define DEF_MEM_BASE 0x100000ull

const char *br_cfg_default_text(void)
{
	return br_default_ini;
}

void br_overrides_init(struct br_overrides *o)
{
	memset(o, 0, sizeof(*o));
	o->duration_ns = -1;
	o->transactions = -1;
	o->stats_ns = -1;
}

void br_format_mac(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* ------------------------------------------------------- parse context */

struct ctx {
	struct cfg_doc d;
	unsigned n_members;
	struct br_member_cfg members[BR_MAX_MEMBERS];
};

#define ERR(x, sect, key, ...) cfg_error(&(x)->d, sect, key, __VA_ARGS__)

/* An htoe_map label "FILE:[sect] key" (file without its directories, so
 * that it fits HTOE_MAP_LABEL_MAX). */
static void make_label(const struct ctx *x, char label[HTOE_MAP_LABEL_MAX], const char *sect,
		       const char *key)
{
	char org[CFG_ORIGIN_MAX], tmp[CFG_ORIGIN_MAX + 2 * CFG_NAME_MAX];
	const char *f = org, *slash;

	cfg_origin(&x->d, sect, key, org, sizeof(org));
	/* the label keeps its old form FILE:[sect] key: without the line */
	if (strcmp(org, "--set")) {
		char *colon = strrchr(org, ':');

		if (colon && colon > org && isdigit((unsigned char)colon[1]))
			*colon = 0;
	}
	slash = strrchr(f, '/');
	if (slash && slash[1])
		f = slash + 1;
	snprintf(tmp, sizeof(tmp), "%s:[%s] %s", f, sect, key);
	_Static_assert(HTOE_MAP_LABEL_MAX == 64, "the precision below");
	snprintf(label, HTOE_MAP_LABEL_MAX, "%.63s", tmp);
}

/* Of two related keys, the one to name in a message: k1 if it is given
 * (in sect or its fallback), else k2. */
static const char *blame(struct ctx *x, const char *sect, const char *k1, const char *k2)
{
	return cfg_val(&x->d, sect, k1) ? k1 : k2;
}

/* The numbers of the sections of one kind, sorted. */
static unsigned list_kind(struct ctx *x, int kind, long *nums, unsigned max)
{
	unsigned c = 0;

	for (unsigned i = 0; i < x->d.n && c < max; i++)
		if (x->d.s[i].kind == kind && x->d.s[i].num >= 0)
			nums[c++] = x->d.s[i].num;
	for (unsigned i = 1; i < c; i++)
		for (unsigned j = i; j > 0 && nums[j - 1] > nums[j]; j--) {
			long t = nums[j];

			nums[j] = nums[j - 1];
			nums[j - 1] = t;
		}
	return c;
}

/* At most max [KIND N] sections: else the error names the first one too many. */
static int check_count(struct ctx *x, int kind, unsigned max)
{
	unsigned c = 0;

	for (unsigned i = 0; i < x->d.n; i++)
		if (x->d.s[i].kind == kind && x->d.s[i].num >= 0 && ++c > max)
			return ERR(x, x->d.s[i].name, NULL, "too many [%s N] sections (at most %u)",
				   br_cfg_schema.sects[kind].name, max);
	return 0;
}

/* ------------------------------------------------------------ [macsec] */

/* A [macsec] key without enable = on would leave the frames in clear. */
static int check_macsec_enabled(struct ctx *x)
{
	bool any_on = false;

	for (unsigned i = 0; i < x->d.n; i++) {
		const struct cfg_sec *s = &x->d.s[i];
		bool on = false;

		if (s->kind == BR_S_MACSEC && cfg_val(&x->d, s->name, "enable") &&
		    !cfg_parse_bool(cfg_val(&x->d, s->name, "enable"), &on))
			any_on |= on;
	}
	for (unsigned i = 0; i < x->d.n; i++) {
		const struct cfg_sec *s = &x->d.s[i];
		const char *v;
		bool on = false;

		if (s->kind != BR_S_MACSEC)
			continue;
		v = cfg_val(&x->d, s->name, "enable");
		if (v && cfg_parse_bool(v, &on))
			return cfg_get_typed(&x->d, s->name, "enable", NULL);
		if (s->num < 0)
			on = any_on; /* [macsec] serves the [macsec N] that enable it */
		for (unsigned j = 0; j < s->n && !on; j++)
			if (strcmp(s->e[j].key, "enable"))
				return ERR(x, s->name, s->e[j].key,
					   "MACsec is not enabled for %s (enable = on in [%s]%s): "
					   "frames would go out in clear",
					   s->num < 0 ? "any node" : "this node", s->name,
					   s->num < 0 ? " or a [macsec N]" : " or [macsec]");
	}
	return 0;
}

/* ------------------------------------------------------------ [global] */

static int parse_global(struct ctx *x, struct br_config *c, const struct br_overrides *o)
{
	const char *g = "global";

	if (cfg_apply(&x->d, BR_OBJ_GLOBAL, g, c))
		return -1;
	if (c->mbufs && c->mbufs < 1024)
		return ERR(x, g, "mbufs", "at least 1024 (or 0: computed)");
	if (c->capture_dir[0])
		cfg_where(&x->d, g, "capture", c->capture_where, sizeof(c->capture_where));
	if (c->metrics[0])
		cfg_where(&x->d, g, "metrics", c->metrics_where, sizeof(c->metrics_where));
	if (o->capture_dir) {
		snprintf(c->capture_dir, sizeof(c->capture_dir), "%s", o->capture_dir);
		snprintf(c->capture_where, sizeof(c->capture_where), "--capture '%s'",
			 o->capture_dir);
	}
	if (o->duration_ns >= 0)
		c->duration_ns = (uint64_t)o->duration_ns;
	if (o->stats_ns >= 0)
		c->stats_interval_ns = (uint64_t)o->stats_ns;
	return 0;
}

/* ----------------------------------------------------- [node N] [peer N] */

static struct br_member_cfg *member_find(struct ctx *x, uint16_t id)
{
	for (unsigned i = 0; i < x->n_members; i++)
		if (x->members[i].id == id)
			return &x->members[i];
	return NULL;
}

static bool id_selected(const char *list, uint16_t id)
{
	char buf[256], *save = NULL;

	if (!list)
		return true;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (!cfg_parse_u64(t, &v) && v == id)
			return true;
	}
	return false;
}

static int parse_members(struct ctx *x, const struct br_overrides *o)
{
	long nums[BR_MAX_MEMBERS];
	unsigned n;

	for (unsigned i = 0, c = 0; i < x->d.n; i++)
		if ((x->d.s[i].kind == BR_S_NODE || x->d.s[i].kind == BR_S_PEER) &&
		    ++c > BR_MAX_MEMBERS)
			return ERR(x, x->d.s[i].name, NULL, "more than %u nodes and peers (one VL per "
				   "peer, at most %u)", BR_MAX_MEMBERS, HTOE_MAX_PEERS);
	for (int kind = BR_S_NODE; kind <= BR_S_PEER; kind++) {
		n = list_kind(x, kind, nums, BR_MAX_MEMBERS);
		for (unsigned i = 0; i < n; i++) {
			struct br_member_cfg *m;
			char sect[32];
			uint64_t u;
			int r;

			snprintf(sect, sizeof(sect), "%s %ld", br_cfg_schema.sects[kind].name, nums[i]);
			if (member_find(x, (uint16_t)nums[i]))
				return ERR(x, sect, NULL, "node %ld is both a [node] and a [peer]",
					   nums[i]);
			m = &x->members[x->n_members++];
			memset(m, 0, sizeof(*m));
			m->id = (uint16_t)nums[i];
			m->node_sect = kind == BR_S_NODE;
			m->local = m->node_sect && id_selected(o->only_nodes, m->id);
			snprintf(m->sect, sizeof(m->sect), "%s", sect);
			htoe_map_node_mac(m->id, m->mac);
			m->mem_seed = m->id;
			if (cfg_apply(&x->d, BR_OBJ_MEMBER, sect, m) ||
			    cfg_get_typed(&x->d, sect, "mem_seed", &m->mem_seed) < 0 ||
			    (r = cfg_get_typed(&x->d, sect, "pcp", &u)) < 0)
				return -1;
			m->pcp = r ? (int)u : -1;
			m->has_mac = cfg_val(&x->d, sect, "mac") != NULL;
			make_label(x, m->mac_label, sect, "mac");
			if (m->mem_base + m->mem_size < m->mem_base)
				return ERR(x, sect, "mem_base", "the region wraps past 2^64");
		}
	}
	/* one MAC per node (a node's own MAC is not in its peer table, so
	 * htoe_map cannot see a clash with it) */
	for (unsigned i = 0; i < x->n_members; i++)
		for (unsigned j = i + 1; j < x->n_members; j++) {
			const struct br_member_cfg *a = &x->members[i], *b = &x->members[j];
			char mac[24];

			if (memcmp(a->mac, b->mac, 6))
				continue;
			br_format_mac(a->mac, mac, sizeof(mac));
			return ERR(x, (b->has_mac ? b : a)->sect, "mac",
				   "[%s] and [%s] have the same MAC %s", a->sect, b->sect, mac);
		}
	return 0;
}

/* ------------------------------------------------------------- [port N] */

static int parse_ports(struct ctx *x, struct br_config *c)
{
	long nums[BR_MAX_PORTS];
	unsigned n;

	if (check_count(x, BR_S_PORT, BR_MAX_PORTS))
		return -1;
	n = list_kind(x, BR_S_PORT, nums, BR_MAX_PORTS);
	c->ports = calloc(n ? n : 1, sizeof(*c->ports));
	if (!c->ports)
		return ERR(x, "global", NULL, "out of memory");
	c->n_ports = n;
	for (unsigned i = 0; i < n; i++) {
		struct br_port_cfg *p = &c->ports[i];
		struct impair_cfg *ic = &p->imp;
		char sect[32], isect[32], why[160];
		uint64_t u;
		int r;

		snprintf(sect, sizeof(sect), "port %ld", nums[i]);
		p->index = (unsigned)nums[i];
		cfg_where(&x->d, sect, NULL, p->where, sizeof(p->where));
		if (cfg_apply(&x->d, BR_OBJ_PORT, sect, p) ||
		    (r = cfg_get_typed(&x->d, sect, "crossover", &u)) < 0)
			return -1;
		p->crossover = r ? (int)u : -1;
		if (p->dev[0] && p->crossover >= 0)
			return ERR(x, sect, "dev",
				   "a port is either a device (dev) or one end of a crossover pair");
		if (p->hub && (p->dev[0] || p->crossover >= 0))
			return ERR(x, sect, "hub", "a hub is neither a device (dev) nor one end of a "
				   "crossover pair");
		if (!p->dev[0] && p->crossover < 0 && !p->hub)
			return ERR(x, sect, NULL, "needs dev = DEVICE-OR-DEVARGS, crossover = OTHER-PORT "
				   "or hub = on");
		if (p->dev[0])
			cfg_where(&x->d, sect, "dev", p->dev_where, sizeof(p->dev_where));

		/* impairment: [impair N] over [impair] */
		snprintf(isect, sizeof(isect), "impair %ld", nums[i]);
		impair_cfg_default(ic);
		ic->seed = 1 + p->index;
		if (cfg_get_typed(&x->d, isect, "seed", &ic->seed) < 0 ||
		    cfg_apply(&x->d, BR_OBJ_IMPAIR, isect, ic) ||
		    cfg_get_typed(&x->d, isect, "direction", &p->direction) < 0)
			return -1;
		if (impair_cfg_check(ic, why, sizeof(why)))
			return ERR(x, isect, NULL, "%s", why);
		p->imp_tx = p->direction != 1;
		p->imp_rx = p->direction != 0;
		if (!impair_cfg_active(ic))
			p->imp_tx = p->imp_rx = false;
	}
	/* [impair N] for a port that does not exist */
	for (unsigned i = 0; i < x->d.n; i++) {
		const struct cfg_sec *s = &x->d.s[i];
		bool found = false;

		if (s->kind != BR_S_IMPAIR || s->num < 0)
			continue;
		for (unsigned j = 0; j < c->n_ports; j++)
			found |= c->ports[j].index == (unsigned)s->num;
		if (!found)
			return ERR(x, s->name, NULL, "there is no [port %ld]", s->num);
	}
	/* crossover pairs are mutual, unless the other end is a hub */
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct br_port_cfg *p = &c->ports[i];
		const struct br_port_cfg *q = NULL;
		char sect[32];

		if (p->crossover < 0)
			continue;
		snprintf(sect, sizeof(sect), "port %u", p->index);
		for (unsigned j = 0; j < c->n_ports; j++)
			if (c->ports[j].index == (unsigned)p->crossover)
				q = &c->ports[j];
		if (!q || q == p)
			return ERR(x, sect, "crossover", "%s", q ? "a port cannot be its own crossover" :
				   "there is no such [port]");
		if (q->crossover != (int)p->index && !q->hub)
			return ERR(x, sect, "crossover", "[port %u] must say crossover = %u (or be a "
				   "hub: hub = on)", q->index, p->index);
	}
	return 0;
}

/* ------------------------------------------------------------------ [map] */

struct map_entry {
	bool     is_mask;
	uint64_t base, size, remote_base, mask;
	unsigned shift;
	uint16_t node;
	char     label[HTOE_MAP_LABEL_MAX];
};

static int parse_map(struct ctx *x, struct map_entry *e, unsigned *count)
{
	const char *s = "map";
	const struct cfg_sec *sec = cfg_section(&x->d, s);
	unsigned n = 0;
	uint64_t sh;

	*count = 0;
	if (!sec)
		return ERR(x, s, NULL,
			   "missing: the address map (rangeN = BASE SIZE NODE [REMOTE_BASE], or mask)");
	for (unsigned i = 0; i < sec->n; i++) {
		const struct cfg_ent *en = &sec->e[i];
		char buf[CFG_VALUE_MAX], *tok[5], *save = NULL;
		unsigned nt = 0;
		uint64_t node;
		struct map_entry *m = &e[n];

		if (strncmp(en->key, "range", 5))
			continue;
		if (n == HTOE_MAP_MAX_RANGES)
			return ERR(x, s, en->key, "more than %u ranges", HTOE_MAP_MAX_RANGES);
		snprintf(buf, sizeof(buf), "%s", en->val);
		for (char *t = strtok_r(buf, " \t,", &save); t && nt < 5;
		     t = strtok_r(NULL, " \t,", &save))
			tok[nt++] = t;
		memset(m, 0, sizeof(*m));
		if (nt < 3 || nt > 4 || cfg_parse_size(tok[0], &m->base) ||
		    cfg_parse_size(tok[1], &m->size) || cfg_parse_u64(tok[2], &node) ||
		    node > 65535 || (nt == 4 && cfg_parse_size(tok[3], &m->remote_base)))
			return ERR(x, s, en->key, "expected BASE SIZE NODE [REMOTE_BASE] (sizes: 0x hex, "
				   "decimal, K/M/G suffix; NODE 0..65535)");
		m->node = (uint16_t)node;
		if (nt == 3) {
			const struct br_member_cfg *mb = member_find(x, m->node);

			m->remote_base = mb ? mb->mem_base : DEF_MEM_BASE;
		}
		make_label(x, m->label, s, en->key);
		n++;
	}
	if (cfg_val(&x->d, s, "mask")) {
		struct map_entry *m = &e[n];

		memset(m, 0, sizeof(*m));
		m->is_mask = true;
		m->remote_base = DEF_MEM_BASE;
		if (cfg_get_typed(&x->d, s, "mask", &m->mask) < 0 ||
		    cfg_get_typed(&x->d, "bridge", "mem_base", &m->remote_base) < 0 ||
		    cfg_get_typed(&x->d, s, "remote_base", &m->remote_base) < 0)
			return -1;
		sh = (uint64_t)__builtin_ctzll(m->mask);
		if (cfg_get_typed(&x->d, s, "shift", &sh) < 0)
			return -1;
		m->shift = (unsigned)sh;
		make_label(x, m->label, s, "mask");
		n++;
	} else {
		if (cfg_val(&x->d, s, "shift"))
			return ERR(x, s, "shift", "shift without mask");
		if (!n)
			return ERR(x, s, NULL, "no rangeN key and no mask");
	}
	*count = n;
	return 0;
}

static int build_map(struct ctx *x, struct br_node_cfg *nc, const struct map_entry *e,
		     unsigned ne)
{
	char msg[400];
	struct htoe_map *m = malloc(sizeof(*m));

	if (!m)
		return ERR(x, "map", NULL, "out of memory");
	nc->map = m;
	htoe_map_init(m, nc->id);
	for (unsigned i = 0; i < x->n_members; i++) {
		const struct br_member_cfg *mb = &x->members[i];

		if (mb->id == nc->id)
			continue;
		if (htoe_map_add_peer(m, mb->id, mb->has_mac ? mb->mac : NULL, mb->mac_label, msg,
				      sizeof(msg)))
			goto fail;
	}
	for (unsigned i = 0; i < ne; i++) {
		int r = e[i].is_mask ?
			htoe_map_set_mask(m, e[i].mask, e[i].shift, e[i].remote_base, e[i].label,
					  msg, sizeof(msg)) :
			htoe_map_add_range(m, e[i].base, e[i].size, e[i].node, e[i].remote_base,
					   e[i].label, msg, sizeof(msg));
		if (r)
			goto fail;
	}
	if (htoe_map_finalize(m, msg, sizeof(msg)))
		goto fail;
	return 0;
fail:
	snprintf(x->d.err, x->d.errlen, "address map of node %u: %s", nc->id, msg);
	return -1;
}

/* ------------------------------------------------------------ the nodes */

/* [macsec N] over [macsec] (macsec_cfg.c) */
static int parse_macsec(struct ctx *x, struct br_node_cfg *nc, const struct br_member_cfg *mb)
{
	uint16_t ids[BR_MAX_MEMBERS];
	uint8_t macs[BR_MAX_MEMBERS][6];
	unsigned n = 0;

	for (unsigned i = 0; i < x->n_members; i++)
		if (x->members[i].id != mb->id) {
			ids[n] = x->members[i].id;
			memcpy(macs[n++], x->members[i].mac, 6);
		}
	if (br_macsec_parse(&x->d, mb->id, mb->mac, n, ids, (const uint8_t (*)[6])macs,
			    &nc->macsec))
		return -1;
	if (!nc->macsec.enabled)
		return 0;
	/* protected frames must still fit the configured mtu */
	if (nc->bc.mtu < HTOE_HDR_LEN + HT_MAX_PKT_LEN + HTOE_MACSEC_OVERHEAD_MAX)
		return ERR(x, mb->sect, "mtu",
			   "too small with MACsec on (SecTAG + ICV take %u bytes): at least %u",
			   HTOE_MACSEC_OVERHEAD_MAX,
			   HTOE_HDR_LEN + HT_MAX_PKT_LEN + HTOE_MACSEC_OVERHEAD_MAX);
	nc->bc.mtu -= HTOE_MACSEC_OVERHEAD_MAX;
	return 0;
}

static const char *const bufkeys[HT_VC_COUNT] = { "bufs_posted", "bufs_nonposted",
						  "bufs_response" };

/* "CMD[/DATA]" receive buffers of a VC; 1: given */
static int get_bufs(struct ctx *x, const char *sect, const char *key, uint16_t out[2])
{
	const char *v = cfg_val(&x->d, sect, key);
	uint64_t a, b;
	char buf[CFG_VALUE_MAX], *slash;

	if (!v)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (cfg_parse_u64(buf, &a) || (slash && cfg_parse_u64(slash + 1, &b)))
		return ERR(x, sect, key, "expected CMD or CMD/DATA buffer counts");
	if (!slash)
		b = a;
	if (a < 1 || a > 4096 || b < 1 || b > 4096)
		return ERR(x, sect, key, "buffer counts out of range 1..4096");
	out[0] = (uint16_t)a;
	out[1] = (uint16_t)b;
	return 1;
}

/* The library's verdict on the bridge configuration, against the key it blames. */
static int lib_check(struct ctx *x, const struct br_node_cfg *nc, const char *s)
{
	const struct cfg_schema *sch = &br_cfg_schema;
	size_t field = SIZE_MAX, off;
	char msg[400];

	if (!htoe_config_check(&nc->bc, &field, msg, sizeof(msg)))
		return 0;
	if (field == SIZE_MAX) {
		snprintf(x->d.err, x->d.errlen, "address map of node %u: %s", nc->id, msg);
		return -1;
	}
	off = offsetof(struct br_node_cfg, bc) + field;
	if (field >= offsetof(struct htoe_config, rx_bufs) &&
	    field < offsetof(struct htoe_config, rx_bufs) + sizeof(nc->bc.rx_bufs)) {
		unsigned vc = (unsigned)((field - offsetof(struct htoe_config, rx_bufs)) /
					 sizeof(nc->bc.rx_bufs[0]));

		return ERR(x, s, blame(x, s, bufkeys[vc], "reserve"), "%s", msg);
	}
	for (unsigned i = 0; i < sch->n_keys; i++)
		if (sch->keys[i].obj == BR_OBJ_NODE && sch->keys[i].off == off)
			return ERR(x, s, sch->keys[i].name, "%s", msg);
	return ERR(x, s, NULL, "the bridge refuses this configuration: %s", msg);
}

static int parse_node(struct ctx *x, struct br_config *c, struct br_node_cfg *nc,
		      const struct br_member_cfg *mb, const struct map_entry *me, unsigned nme)
{
	const char *s = mb->sect;
	struct htoe_config *bc = &nc->bc;
	uint64_t u;
	int given[HT_VC_COUNT], r;

	nc->id = mb->id;
	cfg_where(&x->d, s, NULL, nc->where, sizeof(nc->where));
	htoe_config_defaults(bc);
	if (cfg_apply(&x->d, BR_OBJ_NODE, s, nc))
		return -1;
	bc->node_id = mb->id;
	memcpy(bc->mac, mb->mac, 6);
	nc->mem_base = mb->mem_base;
	nc->mem_size = mb->mem_size;
	nc->mem_seed = mb->mem_seed;

	if ((r = cfg_get_typed(&x->d, s, "port", &u)) <= 0)
		return r < 0 ? -1 : ERR(x, s, "port", "missing: the [port N] this node uses");
	nc->port = UINT32_MAX;
	for (unsigned i = 0; i < c->n_ports; i++)
		if (c->ports[i].index == u)
			nc->port = i;
	if (nc->port == UINT32_MAX)
		return ERR(x, s, "port", "there is no [port %" PRIu64 "]", u);
	nc->lcore = -1;
	if ((r = cfg_get_typed(&x->d, s, "lcore", &u)) < 0)
		return -1;
	if (r) {
		nc->lcore = (int)u;
		cfg_where(&x->d, s, "lcore", nc->lcore_where, sizeof(nc->lcore_where));
	}
	if (parse_macsec(x, nc, mb))
		return -1;
	if (bc->unitid_base <= nc->req_unitids)
		/* requester UnitIDs 1..n must stay below the bridge's */
		return ERR(x, s, blame(x, s, "requester_unitids", "unitid_base"),
			   "requester UnitIDs 1..%u overlap the bridge's UnitIDs %u..%u "
			   "(the last one for Flush)",
			   nc->req_unitids, bc->unitid_base, bc->unitid_base + bc->n_unitids);
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		if ((given[vc] = get_bufs(x, s, bufkeys[vc], bc->rx_bufs[vc])) < 0)
			return -1;
	/* the receive pool covers the reserve of every VL and a busy VL's cap
	 * (as htoe-sim) */
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		unsigned need = htoe_rx_bufs_needed(bc, x->n_members - 1);

		if (!given[vc])
			for (unsigned d = 0; d < 2; d++)
				if (bc->rx_bufs[vc][d] < need)
					bc->rx_bufs[vc][d] = (uint16_t)(need > 4096 ? 4096 : need);
	}
	/* PCP of the VL to each member that sets one */
	for (unsigned i = 0; i < x->n_members; i++) {
		const struct br_member_cfg *m = &x->members[i];

		if (m->pcp < 0 || m->id == nc->id)
			continue;
		bc->pcp[bc->n_pcp].node = m->id;
		bc->pcp[bc->n_pcp].pcp = (uint8_t)m->pcp;
		bc->n_pcp++;
	}
	if (build_map(x, nc, me, nme))
		return -1;
	bc->map = nc->map;
	if (lib_check(x, nc, s))
		return -1;
	/* the largest frame this node sends */
	u = bc->mtu + HTOE_L2_MAX + (nc->macsec.enabled ? HTOE_MACSEC_OVERHEAD_MAX : 0);
	if (u > c->max_frame)
		c->max_frame = (uint16_t)u;
	return 0;
}

/* --------------------------------------------------------- the workloads */

static int parse_workload(struct ctx *x, struct br_node_cfg *nc)
{
	char s[32];
	struct br_wl_cfg *wl = &nc->wl;
	const struct br_member_cfg *tg;
	const char *v;
	uint64_t u;
	int r;

	snprintf(s, sizeof(s), "workload %u", nc->id);
	if (!cfg_section(&x->d, s))
		return 0;
	wl->enabled = true;
	cfg_where(&x->d, s, NULL, wl->where, sizeof(wl->where));
	if ((r = cfg_get_typed(&x->d, s, "target", &u)) <= 0)
		return r < 0 ? -1 : ERR(x, s, "target", "missing: the node whose memory it uses");
	tg = member_find(x, (uint16_t)u);
	if (!tg)
		return ERR(x, s, "target", "node %" PRIu64 " is neither a [node] nor a [peer]", u);
	wl->target = (uint16_t)u;
	wl->fill_seed = tg->mem_seed;

	/* the window: default the target's whole exported region */
	struct htoe_map_result res;
	uint64_t def_base = 0;
	bool have_def = false;

	if (nc->map->mask_mode) {
		if (tg->mem_base >= nc->map->mask_remote_base) {
			def_base = ((uint64_t)tg->id << nc->map->shift) +
				   (tg->mem_base - nc->map->mask_remote_base);
			have_def = true;
		}
	} else {
		for (unsigned i = 0; i < nc->map->nranges && !have_def; i++) {
			const struct htoe_map_range *rg = &nc->map->ranges[i];

			if (rg->node == tg->id && tg->mem_base >= rg->remote_base &&
			    tg->mem_base - rg->remote_base < rg->size) {
				def_base = rg->base + (tg->mem_base - rg->remote_base);
				have_def = true;
			}
		}
	}
	wl->base = def_base;
	wl->size = tg->mem_size;
	if ((r = cfg_get_typed(&x->d, s, "base", &wl->base)) < 0 ||
	    cfg_get_typed(&x->d, s, "size", &wl->size) < 0)
		return -1;
	if (!r && !have_def)
		return ERR(x, s, "base", "missing, and no [map] entry maps node %u's memory at %#"
			   PRIx64 " (its mem_base)", tg->id, tg->mem_base);
	enum htoe_map_kind k = htoe_map_lookup(nc->map, wl->base, wl->size, &res);
	/* a window error names base, else size, else target */
	const char *bkey = cfg_val(&x->d, s, "base") ? "base" :
			   cfg_val(&x->d, s, "size") ? "size" : "target";

	if (k == HTOE_MAP_UNMAPPED || res.node != tg->id)
		return ERR(x, s, bkey, "the window [%#" PRIx64 ", +%#" PRIx64 ") is %s by [map]%s%u",
			   wl->base, wl->size,
			   k == HTOE_MAP_UNMAPPED ? "not mapped (as a whole)" : "mapped",
			   k == HTOE_MAP_UNMAPPED ? ", target node " : " to node ",
			   k == HTOE_MAP_UNMAPPED ? tg->id : res.node);
	if (res.addr < tg->mem_base || res.addr - tg->mem_base + wl->size > tg->mem_size)
		return ERR(x, s, bkey, "the window maps to [%#" PRIx64 ", +%#" PRIx64 ") at node %u, "
			   "outside its memory [%#" PRIx64 ", +%#" PRIx64 ") (%s mem_base, mem_size)",
			   res.addr, wl->size, tg->id, tg->mem_base, tg->mem_size, tg->sect);
	wl->fill_offset = res.addr - tg->mem_base;

	{
		struct ht_wl_cfg d;

		ht_wl_cfg_default(&d);
		memcpy(wl->weight, d.weight, sizeof(wl->weight));
		wl->byte_pct = d.byte_pct;
		wl->sweep = d.sweep;
	}
	wl->seed = 1000u + nc->id;
	if ((r = cfg_get_typed(&x->d, s, "ops", &wl->ops)) < 0 ||
	    cfg_apply(&x->d, BR_OBJ_WL, s, wl) ||
	    cfg_get_typed(&x->d, s, "seed", &wl->seed) < 0)
		return -1;
	if (wl->duration_ns && !r)
		wl->ops = UINT64_MAX / 4; /* until the duration */
	if ((v = cfg_val(&x->d, s, "mix")) != NULL) {
		char why[160];

		if (htoe_parse_mix(v, wl->weight, why, sizeof(why)))
			return ERR(x, s, "mix", "%s", why);
	}
	v = cfg_val(&x->d, s, "sizes");
	wl->fixed_len = 0;
	if (v && strcmp(v, "random")) {
		if (cfg_parse_u64(v, &u) || u < 4 || u > 64 || (u & 3))
			return ERR(x, s, "sizes", "must be 'random' or a multiple of 4 in 4..64");
		wl->fixed_len = (uint32_t)u;
	}
	return 0;
}

/* Two local workloads writing one region would break each other's shadow. */
static int check_workload_overlap(struct ctx *x, struct br_config *c)
{
	for (unsigned i = 0; i < c->n_nodes; i++)
		for (unsigned j = i + 1; j < c->n_nodes; j++) {
			const struct br_wl_cfg *a = &c->nodes[i].wl, *b = &c->nodes[j].wl;
			char s[32];

			if (!a->enabled || !b->enabled || a->target != b->target)
				continue;
			if (a->fill_offset >= b->fill_offset + b->size ||
			    b->fill_offset >= a->fill_offset + a->size)
				continue;
			snprintf(s, sizeof(s), "workload %u", c->nodes[j].id);
			return ERR(x, s, "target", "its window overlaps [workload %u]'s in node %u's "
				   "memory: each byte needs a single writer for verification",
				   c->nodes[i].id, a->target);
		}
	return 0;
}

/* ------------------------------------------------------------------ load */

/* Every [KIND N] section has a [node N]. */
static int check_node_sects(struct ctx *x, int kind, const char *why)
{
	for (unsigned i = 0; i < x->d.n; i++) {
		const struct cfg_sec *s = &x->d.s[i];
		const struct br_member_cfg *mb;

		if (s->kind != kind || s->num < 0)
			continue;
		mb = member_find(x, (uint16_t)s->num);
		if (!mb || !mb->node_sect)
			return ERR(x, s->name, NULL, "there is no [node %ld]%s", s->num, why);
	}
	return 0;
}

/* every port belongs to a node: here, or (--node) to another process */
static int check_ports_used(struct ctx *x, struct br_config *c)
{
	for (unsigned i = 0; i < c->n_nodes; i++)
		for (unsigned j = i + 1; j < c->n_nodes; j++)
			if (c->nodes[i].port == c->nodes[j].port) {
				char s[32];

				snprintf(s, sizeof(s), "node %u", c->nodes[j].id);
				return ERR(x, s, "port", "[node %u] already uses this port (one node per "
					   "port; --node ID runs one [node] of a cluster file)",
					   c->nodes[i].id);
			}
	for (unsigned i = 0; i < c->n_nodes; i++)
		c->ports[c->nodes[i].port].used = true;
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct br_port_cfg *p = &c->ports[i];
		bool elsewhere = false;
		char s[32];

		if (p->used)
			continue;
		for (unsigned k = 0; k < x->n_members; k++) {
			const char *v = cfg_val(&x->d, x->members[k].sect, "port");
			uint64_t u;

			if (x->members[k].node_sect && v && !cfg_parse_u64(v, &u) && u == p->index)
				elsewhere = true;
		}
		snprintf(s, sizeof(s), "port %u", p->index);
		if (!elsewhere)
			return ERR(x, s, NULL, "no [node] uses this port");
		if (p->crossover >= 0)
			return ERR(x, s, "crossover", "both ends of a crossover pair must be used by "
				   "nodes of this process");
		if (p->hub)
			return ERR(x, s, "hub", "a hub must be used by a node of this process");
	}
	return 0;
}

static int load(struct ctx *x, struct br_config *c, const char *path,
		const struct br_overrides *o)
{
	struct map_entry *me = NULL;
	unsigned nme = 0, nlocal = 0, n_wl = 0;
	int rc = -1;

	if (path ? cfg_read(&x->d, path) :
	    cfg_parse(&x->d, br_default_ini, strlen(br_default_ini)))
		return -1;
	for (unsigned i = 0; i < o->n_sets; i++)
		if (cfg_set(&x->d, o->sets[i]))
			return -1;
	if (cfg_check_names(&x->d) || check_macsec_enabled(x) || parse_global(x, c, o) ||
	    parse_members(x, o) || parse_ports(x, c))
		return -1;
	me = calloc(HTOE_MAP_MAX_RANGES + 1, sizeof(*me));
	if (!me)
		return ERR(x, "global", NULL, "out of memory");
	if (parse_map(x, me, &nme))
		goto out;

	/* the nodes hosted here */
	for (unsigned i = 0; i < x->n_members; i++)
		nlocal += x->members[i].local;
	if (!nlocal) {
		if (o->only_nodes)
			snprintf(x->d.err, x->d.errlen, "%s: --node %s: no such [node N] section",
				 c->file, o->only_nodes);
		else
			snprintf(x->d.err, x->d.errlen, "%s: no [node N] section: nothing to run",
				 c->file);
		goto out;
	}
	if (nlocal > BR_MAX_NODES) {
		snprintf(x->d.err, x->d.errlen, "%s: %u [node N] sections, at most %u per process",
			 c->file, nlocal, BR_MAX_NODES);
		goto out;
	}
	c->nodes = calloc(nlocal, sizeof(*c->nodes));
	if (!c->nodes) {
		ERR(x, "global", NULL, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < x->n_members; i++)
		if (x->members[i].local &&
		    parse_node(x, c, &c->nodes[c->n_nodes++], &x->members[i], me, nme))
			goto out;
	if (check_ports_used(x, c) || check_node_sects(x, BR_S_WORKLOAD, " to run it") ||
	    check_node_sects(x, BR_S_MACSEC, ""))
		goto out;
	for (unsigned i = 0; i < c->n_nodes; i++) {
		if (parse_workload(x, &c->nodes[i]))
			goto out;
		n_wl += c->nodes[i].wl.enabled;
	}
	if (check_workload_overlap(x, c))
		goto out;
	if (o->transactions >= 0 && n_wl) {
		uint64_t t = (uint64_t)o->transactions, k = 0;

		for (unsigned i = 0; i < c->n_nodes; i++)
			if (c->nodes[i].wl.enabled) {
				c->nodes[i].wl.ops = t / n_wl + (k < t % n_wl);
				k++;
			}
	}
	rc = 0;
out:
	free(me);
	return rc;
}

int br_cfg_load(struct br_config *c, const char *path, const struct br_overrides *o,
		char *err, size_t errlen)
{
	struct ctx *x = calloc(1, sizeof(*x));
	int rc;

	memset(c, 0, sizeof(*c));
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(c->file, sizeof(c->file), "%s", path ? path : "<embedded>");
	cfg_doc_init(&x->d, &br_cfg_schema, c->file, err, errlen);
	rc = load(x, c, path, o);
	cfg_doc_free(&x->d);
	free(x);
	if (rc)
		br_cfg_free(c);
	return rc;
}

void br_cfg_free(struct br_config *c)
{
	if (c->nodes)
		for (unsigned i = 0; i < c->n_nodes; i++) {
			free(c->nodes[i].map);
			br_macsec_cfg_wipe(&c->nodes[i].macsec);
		}
	free(c->nodes);
	free(c->ports);
	c->nodes = NULL;
	c->ports = NULL;
	c->n_nodes = c->n_ports = 0;
}
