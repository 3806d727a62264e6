/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: IEEE 802.1AE MACsec on a node's port (lib/htoe/htoe_macsec).
 * docs/macsec.md ("Using MACsec in htoe-bridge") is the user guide and
 * docs/config.md the reference of the [macsec] / [macsec N] keys.
 *
 * Configuration: macsec_cfg.h.
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
#include "macsec_cfg.h"

struct br_macsec;
struct rte_mbuf;

/* The SecY of node `id` (into *ms; stays NULL when MACsec is off), from its configuration c
 * (whose keys are wiped once the SecY holds them); `prog` starts its messages. */
int br_macsec_setup(struct br_macsec **ms, uint16_t id, const char *prog,
		    const struct br_macsec_cfg *c, char *err, size_t errlen);
/* The keys go; the snapshot stays for the readers (NULL: nothing). */
void br_macsec_teardown(struct br_macsec *ms);
/* Teardown and free the snapshot too (a program without a telemetry thread). */
void br_macsec_free(struct br_macsec *ms);
/* Protects the plain frame in m in place. 0, or -1: not sent (counted). */
int br_macsec_tx(struct br_macsec *ms, struct rte_mbuf *m);
/* Validates the frame p[0..*len) of m (p: its data, or linbuf holding a copy; linbuf, linlen
 * bytes, also takes the plain frame when m is shared). Returns the plain frame (*len
 * updated), or NULL: dropped and counted. */
const uint8_t *br_macsec_rx(struct br_macsec *ms, struct rte_mbuf *m, const uint8_t *p,
			    uint32_t *len, uint8_t *linbuf, size_t linlen);
/* Owner lcore: events (PN exhaustion lines on stderr) and the snapshot (NULL: nothing). */
void br_macsec_publish(struct br_macsec *ms);

/* The snapshot br_macsec_publish writes: u64 words, read with relaxed
 * atomic loads (snapshot.h) by the main lcore and the telemetry thread. */
struct br_macsec_peer_pub {
	struct htoe_macsec_rx_sc_stats s;
	uint64_t an_ok[HTOE_MACSEC_AN_COUNT];
};

/* The snapshot: u64 words, relaxed atomics. */
struct br_macsec_pub {
	struct htoe_macsec_stats s;
	uint64_t tx_an[HTOE_MACSEC_AN_COUNT];   /* OutPkts{Protected,Encrypted} per TX SA */
	uint64_t rx_an_ok[HTOE_MACSEC_AN_COUNT];/* InPktsOK per AN, all peers */
	uint64_t encoding_an, rekeys, changeovers, pn_threshold, pn_exhausted;
	uint64_t rx_pn_exhausted, tx_failed, events_lost;
	uint64_t tx_no_pair;             /* pairwise: frame to a node without a pairwise key */
};

/* What readers see of a node's MACsec: false when it is off. */
struct br_macsec_view {
	const struct br_macsec_cfg *cfg;
	enum htoe_macsec_backend backend;
	const struct br_macsec_pub *pub;
};
bool br_macsec_view(const struct br_macsec *ms, struct br_macsec_view *v);
/* The i-th counter of htoe_macsec_counters[] in the snapshot */
uint64_t br_macsec_counter(const struct br_macsec_pub *p, size_t i);
const char *br_macsec_mode_name(const struct br_macsec_cfg *c);  /* encrypt, integrity */
const char *br_macsec_keys_name(const struct br_macsec_cfg *c);  /* shared, pairwise */

/* Readers (main lcore): from the published snapshot. */
void br_macsec_print(FILE *f, const struct br_macsec *ms);
/* One node's "ID":{...} of the JSON's "macsec" object (its first when `first`: opens the
 * object); local_in, local_out: its HT packets. Returns whether the object is still to open
 * (ms NULL: nothing written, `first`). */
bool br_macsec_json(FILE *f, const struct br_macsec *ms, uint64_t local_in, uint64_t local_out,
		    bool first);

#endif
