/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge configuration: an INI file (or the embedded two-node demo),
 * read once by cfgtab.c and checked completely before anything starts.
 * Every key is one entry of the table in cfgkeys.c, which also generates
 * the reference (docs/config.md, htoe.ini(5)).
 *
 * Every error message names the file and line, the section, the key and
 * the value:
 *   "bridge.ini:14: [node 1] mtu = '40': out of range 112..9000"
 * Values given with --set SECTION.KEY=VALUE are reported as coming from
 * "--set". The address map errors come from htoe_map with labels
 * "FILE:[map] KEY", "FILE:[peer N] mac", ...
 *
 * This part needs no EAL: it is run before rte_eal_init(). What needs the
 * EAL (lcores, devices) is checked by the caller, with br_cfg_where() for
 * the messages, before any port starts.
 */
#ifndef HTOE_BRIDGE_CONFIG_H
#define HTOE_BRIDGE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_requester.h"
#include "htmodel/ht_workload.h"
#include "htoe/htoe.h"
#include "cfgtab.h"
#include "impair.h"
#include "macsec_cfg.h"

#define BR_MAX_NODES   64u   /* nodes hosted by one process */
#define BR_MAX_PORTS   64u
#define BR_MAX_MEMBERS (HTOE_MAX_PEERS + 1u) /* nodes + peers in a file */
#define BR_MAX_SETS    64u   /* --set options */
#define BR_WHERE_MAX   160u
#define BR_DEV_MAX     256u
#define BR_PATH_MAX    1024u

/* The section kinds of the table (cfgkeys.c), in its order. */
enum br_cfg_sect {
	BR_S_GLOBAL, BR_S_BRIDGE, BR_S_NODE, BR_S_PEER, BR_S_PORT, BR_S_MAP, BR_S_IMPAIR,
	BR_S_WORKLOAD, BR_S_MACSEC, BR_S__COUNT
};

/* The structs whose fields the table fills (cfg_key.obj). */
enum br_cfg_obj {
	BR_OBJ_GLOBAL,   /* struct br_config:     [global] */
	BR_OBJ_NODE,     /* struct br_node_cfg:   [node N] over [bridge] */
	BR_OBJ_MEMBER,   /* struct br_member_cfg: [node N] or [peer N] (over [bridge]) */
	BR_OBJ_PORT,     /* struct br_port_cfg:   [port N] */
	BR_OBJ_IMPAIR,   /* struct impair_cfg:    [impair N] over [impair] */
	BR_OBJ_WL,       /* struct br_wl_cfg:     [workload N] over [workload] */
};

/* The table of every section and key (cfgkeys.c). */
extern const struct cfg_schema br_cfg_schema;

/* A member of the cluster: a [node N] or a [peer N]. */
struct br_member_cfg {
	uint16_t id;
	bool     node_sect;    /* [node N] (else [peer N]) */
	bool     local;        /* hosted here */
	bool     has_mac;
	uint8_t  mac[6];
	int      pcp;          /* -1: default */
	uint64_t mem_base, mem_size, mem_seed;
	char     sect[32];
	char     mac_label[HTOE_MAP_LABEL_MAX];
};

struct br_port_cfg {
	unsigned index;              /* N of [port N] */
	char     dev[BR_DEV_MAX];    /* device name or devargs ("" with crossover) */
	int      crossover;          /* -1, or M: this port and [port M] are a ring pair,
				      * or this port is joined to the hub [port M] */
	bool     hub;                /* an in-process switch for the ports joined to it */
	unsigned ring_size;          /* crossover/hub ring entries (power of two) */
	unsigned rxd, txd;
	uint64_t connect_timeout_ns; /* a memif client's tries to connect, in all */
	bool     promisc;
	bool     capture;            /* capture this port when a capture dir is set */
	bool     used;               /* a node of this process uses it */
	struct impair_cfg imp;
	bool     imp_tx, imp_rx;     /* where the impairment applies (none if inactive) */
	unsigned direction;          /* [impair] direction: 0 tx, 1 rx, 2 both */
	char     where[BR_WHERE_MAX];/* "FILE:LINE: [port N]" */
	char     dev_where[BR_WHERE_MAX + BR_DEV_MAX]; /* "FILE:LINE: [port N] dev = 'DEV'" */
};

struct br_wl_cfg {
	bool     enabled;
	uint16_t target;             /* node whose memory it uses */
	uint64_t base, size;         /* global window */
	uint64_t ops;                /* random ops (the read-back sweep comes on top) */
	uint64_t duration_ns;        /* stop generating after this (0: no limit) */
	unsigned weight[HT_OP__COUNT];
	unsigned byte_pct;
	unsigned window;             /* max non-posted ops in flight */
	bool     sweep;
	uint32_t fixed_len;          /* [workload] sizes: 0 random, else bytes per read/write */
	unsigned mode;               /* [workload] mode: 0 verify, 1 inject (node/inject.h) */
	uint64_t seed;
	uint64_t fill_seed;          /* the target's mem_seed */
	uint64_t fill_offset;        /* window offset in the target's region */
	char     where[BR_WHERE_MAX];/* "FILE:LINE: [workload N]" */
};

struct br_node_cfg {
	uint16_t id;
	struct htoe_config bc;       /* bc.map points to map */
	struct htoe_map *map;        /* malloc'd, finalized */
	unsigned port;               /* index into br_config.ports[] */
	int      lcore;              /* -1: assigned by the app */
	uint64_t mem_base, mem_size, mem_seed;
	unsigned req_unitids;        /* requester UnitIDs 1..req_unitids */
	struct br_wl_cfg wl;
	struct br_macsec_cfg macsec; /* [macsec N] over [macsec] (macsec_cfg.h) */
	char     where[BR_WHERE_MAX];      /* "FILE:LINE: [node N]" */
	char     lcore_where[BR_WHERE_MAX];/* "FILE:LINE: [node N] lcore = 'L'" */
};

struct br_config {
	char     file[BR_PATH_MAX];  /* display name: the path or "<embedded>" */

	/* [global] */
	uint64_t stats_interval_ns;  /* 0: no periodic line */
	uint64_t duration_ns;        /* 0: no limit */
	uint64_t drain_timeout_ns;   /* finishing bound after a stop */
	uint64_t peer_dead_ns;       /* the drain gives up on a peer silent this long */
	char     capture_dir[BR_PATH_MAX];
	char     capture_where[BR_WHERE_MAX];
	unsigned capture_ring;
	char     metrics[64];        /* ADDR:PORT of the Prometheus endpoint ("": none) */
	char     metrics_where[BR_WHERE_MAX];
	unsigned mbufs;              /* 0: computed */
	unsigned burst;
	uint64_t tx_drain_ns;
	bool     exit_when_done;
	unsigned poll;               /* [global] poll: 0 the program's default, 1 busy, 2 adaptive */
	double   lcore_pause;        /* test hook: pause probability per poll iteration */
	uint64_t lcore_pause_max_ns; /* ...for 1 us .. this long */
	uint64_t lcore_pause_seed;

	unsigned n_nodes;
	struct br_node_cfg *nodes;   /* [n_nodes], sorted by id */
	unsigned n_ports;
	struct br_port_cfg *ports;   /* [n_ports], sorted by index */
	uint16_t max_frame;          /* largest frame of any node (mtu + 18) */
};

/* Command-line values that override the file. */
struct br_overrides {
	const char *sets[BR_MAX_SETS]; /* "SECTION.KEY=VALUE" */
	unsigned n_sets;
	const char *capture_dir;     /* --capture */
	int64_t  duration_ns;        /* --duration (-1: not given) */
	int64_t  transactions;       /* --transactions (-1: not given) */
	int64_t  stats_ns;           /* --stats (-1: not given) */
	const char *only_nodes;      /* --node ID[,ID...]: run these [node] sections */
};

void br_overrides_init(struct br_overrides *o);

/* The embedded default configuration (config/two-node-demo.ini) as text. */
const char *br_cfg_default_text(void);

/*
 * Load and check a configuration: `path` (NULL: the embedded default).
 * Returns 0, or -1 with the message in err. br_cfg_free() in both cases.
 */
int br_cfg_load(struct br_config *c, const char *path, const struct br_overrides *o,
		char *err, size_t errlen);
void br_cfg_free(struct br_config *c);

/* Helpers shared with the app (cfgtab.c's parsers). */
#define br_parse_duration cfg_parse_duration /* "100us", "1.5s", "0" */
#define br_parse_size     cfg_parse_size     /* "4096", "0x1000", "64K", "1M" */
#define br_parse_mac      cfg_parse_mac
void br_format_mac(const uint8_t mac[6], char *buf, size_t len);

#endif
