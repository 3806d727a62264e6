/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: IEEE 802.1AE MACsec on a node's port (lib/htoe/htoe_macsec).
 * docs/macsec.md ("Using MACsec in htoe-bridge") is the user guide and
 * docs/config.md the reference of the [macsec] / [macsec N] keys.
 *
 * Configuration: [macsec] applies to every [node N] of the file, [macsec N]
 * overrides it key by key for node N. The section is node N's own view of
 * the connectivity association: the SAKs (key0..key3, one per AN) it sends
 * with and expects from every peer, the SCI port it sends and expects, the
 * cipher suite. Two nodes whose views differ drop each other's frames.
 *
 * Data path (worker.c): every frame htoe_frame_output writes is protected
 * in place in its mbuf (SecTAG into the headroom, ICV into the tailroom);
 * every received frame is validated before htoe_frame_input, and dropped
 * and counted under its 802.1AE counter when it fails. Each peer's RX SC is
 * bound to the peer's node id: a valid frame whose HToE header claims
 * another source node is dropped (InPktsSCIMismatch).
 *
 * keys = pairwise: the SecY holds the RX SCs (each with the SAKs of its
 * peer -> this node); one TX-only SecY per peer holds the SAKs of this
 * node -> that peer, and a frame is protected by the SecY of the node its
 * HToE header is addressed to. All SAKs are derived or read at start. The HToE mtu of a
 * node shrinks by HTOE_MACSEC_OVERHEAD_MAX so that protected frames still
 * fit the configured mtu.
 */
#ifndef HTOE_BRIDGE_MACSEC_H
#define HTOE_BRIDGE_MACSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "htoe/htoe_macsec.h"

#define BR_MACSEC_MAX_PEERS 65u   /* BR_MAX_MEMBERS */
#define BR_MACSEC_WHERE_MAX 1300u

struct br_macsec_cfg {
	bool     enabled;
	enum htoe_macsec_cipher cipher;
	bool     integrity_only;
	enum htoe_macsec_backend backend;
	bool     include_sci;          /* SC=1: SCI in every SecTAG (else ES=1) */
	uint16_t sci_port;
	uint32_t replay_window;
	bool     has_key[HTOE_MACSEC_AN_COUNT]; /* the ANs with keys (pairwise: for
	                                         * every peer, both directions) */
	uint8_t  key[HTOE_MACSEC_AN_COUNT][HTOE_MACSEC_KEY_MAX];
	size_t   key_len;
	/* keys = pairwise: one SAK per ordered pair of nodes and AN, from
	 * master_key (IEEE 802.1X-2010 KDF) or from "keyN A>B" key_file lines */
	bool     pairwise;
	uint8_t  pw_tx[BR_MACSEC_MAX_PEERS][HTOE_MACSEC_AN_COUNT][HTOE_MACSEC_KEY_MAX]; /* -> peer */
	uint8_t  pw_rx[BR_MACSEC_MAX_PEERS][HTOE_MACSEC_AN_COUNT][HTOE_MACSEC_KEY_MAX]; /* peer -> */
	bool     has_pw_tx[BR_MACSEC_MAX_PEERS][HTOE_MACSEC_AN_COUNT];
	bool     has_pw_rx[BR_MACSEC_MAX_PEERS][HTOE_MACSEC_AN_COUNT];
	uint8_t  master[HTOE_MACSEC_KEY_MAX];
	size_t   master_len;               /* 0: no master_key */
	unsigned an;                   /* the first encoding AN */
	uint64_t rekey_after;          /* frames per TX SA before the next AN (0: never) */
	uint64_t pn;                   /* first TX PN */
	uint8_t  salt[HTOE_MACSEC_SALT_LEN];
	uint16_t node_id;              /* SSCI of the TX SC (XPN) */
	uint8_t  mac[6];
	unsigned n_peers;              /* one RX SC each */
	uint16_t peer_id[BR_MACSEC_MAX_PEERS];
	uint8_t  peer_mac[BR_MACSEC_MAX_PEERS][6];
	char     where[BR_MACSEC_WHERE_MAX]; /* "FILE:LINE: [macsec N]" or "... [macsec]" */
};

/* The configuration reader config.c hands to br_macsec_parse (its `where`
 * conventions: "FILE:LINE: [sect] key = 'value': message"). */
struct br_cfg_src {
	void *ctx;
	/* the value of key in sect, else in fb; *in: the section it came from */
	const char *(*get)(void *ctx, const char *sect, const char *fb, const char *key,
			   const char **in);
	/* writes "ORIGIN: [sect] key = 'val': msg" as the error; returns -1 */
	int (*error)(void *ctx, const char *sect, const char *key, const char *val,
		     const char *msg);
	/* "ORIGIN: [sect]" */
	void (*where)(void *ctx, const char *sect, char *buf, size_t len);
};

/* Parses [macsec N] over [macsec] for node `id` (its MAC, and the members
 * it exchanges frames with) into *mc. Reads a key_file (refused if group or
 * others may read or write it). 0, or -1 with the error written by src. */
int br_macsec_parse(const struct br_cfg_src *src, uint16_t id, const uint8_t mac[6],
		    unsigned n_peers, const uint16_t *peer_id, const uint8_t (*peer_mac)[6],
		    struct br_macsec_cfg *mc);

/* Wipes the keys of a configuration. */
void br_macsec_cfg_wipe(struct br_macsec_cfg *mc);

struct br_app;
struct br_drv;
struct rte_mbuf;

/* Runtime of a node's driver (drv->ms; NULL when MACsec is off), from its
 * configuration c (whose keys are wiped once the SecY holds them). */
int br_macsec_setup(struct br_drv *d, const struct br_macsec_cfg *c, char *err, size_t errlen);
void br_macsec_teardown(struct br_drv *d);
/* Teardown and free the snapshot too (a program without a telemetry thread). */
void br_macsec_free(struct br_drv *d);
/* Protects the plain frame in m in place. 0, or -1: not sent (counted). */
int br_macsec_tx(struct br_drv *d, struct rte_mbuf *m);
/* Validates the frame p[0..*len) of m (p: its data, or d->linbuf holding a
 * copy). Returns the plain frame (*len updated), or NULL: dropped and
 * counted. */
const uint8_t *br_macsec_rx(struct br_drv *d, struct rte_mbuf *m, const uint8_t *p,
			    uint32_t *len);
/* Owner lcore: events (PN exhaustion lines on stderr) and the snapshot. */
void br_macsec_publish(struct br_drv *d);

/* Readers (main lcore, telemetry): from the published snapshot. */
void br_macsec_print(FILE *f, const struct br_drv *d);
void br_macsec_json(struct br_app *a, FILE *f);  /* ,"macsec":{...} or nothing */
int br_macsec_telemetry_register(void);

#endif
