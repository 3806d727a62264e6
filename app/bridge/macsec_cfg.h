/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: the MACsec configuration of a node, without DPDK (tested by
 * tests/test_config.c). docs/config.md is the reference of the [macsec] /
 * [macsec N] keys, docs/macsec.md the user guide; key files are read by
 * app/common/keyfile.c (the format htoe-pcap --key-file reads too).
 *
 * Configuration: [macsec] applies to every [node N] of the file, [macsec N]
 * overrides it key by key for node N. The section is node N's own view of
 * the connectivity association: the SAKs (key0..key3, one per AN) it sends
 * with and expects from every peer, the SCI port it sends and expects, the
 * cipher suite. Two nodes whose views differ drop each other's frames.
 *
 * keys = pairwise: one SAK per ordered pair of nodes and AN, from master_key
 * (IEEE 802.1X-2010 KDF, derived here) or from "keyN A>B" key_file lines.
 */
#ifndef HTOE_BRIDGE_MACSEC_CFG_H
#define HTOE_BRIDGE_MACSEC_CFG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htoe/htoe_macsec.h"

struct cfg_doc;

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

/* Parses [macsec N] over [macsec] of d for node `id` (its MAC, and the
 * members it exchanges frames with) into *mc. Reads a key_file (refused if
 * group or others may read or write it). 0, or -1 with the error in d->err
 * ("FILE:LINE: [macsec N] key = 'value': what was wrong"; a key is never
 * quoted). */
int br_macsec_parse(struct cfg_doc *d, uint16_t id, const uint8_t mac[6], unsigned n_peers,
		    const uint16_t *peer_id, const uint8_t (*peer_mac)[6], struct br_macsec_cfg *mc);

/* Wipes the keys of a configuration. */
void br_macsec_cfg_wipe(struct br_macsec_cfg *mc);

#endif
