/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_reset: selective reset of one VL (the RESET/RESET_ACK handshake,
 * epochs, nonces, the peer's incarnation) and the poisoning of the local
 * requests that will not be answered (on a reset, or at their deadline),
 * with the builders of htoe_poison.h. Uses htoe_encap.h and htoe_deliver.h.
 * Internal (not installed).
 */
#ifndef HTOE_RESET_H
#define HTOE_RESET_H

#include "htoe_internal.h"

void htoe_reset_begin(struct htoe *b, struct htoe_vl *v, bool cold, uint64_t now);
void htoe_reset_up(struct htoe *b, struct htoe_vl *v, uint64_t now);
int  htoe_reset_input(struct htoe *b, struct htoe_vl *v, const struct htoe_hdr *h,
		      const uint8_t *payload, uint64_t now);
int  htoe_peer_incarnation(struct htoe *b, struct htoe_vl *v, uint32_t inc, uint64_t now);
void htoe_poison_vl(struct htoe *b, struct htoe_vl *v);
void htoe_poison_expired(struct htoe *b, uint64_t now);
void htoe_poison_entry(struct htoe *b, const struct htoe_outstanding_entry *e,
		       enum htoe_poison_reason why);

#endif
