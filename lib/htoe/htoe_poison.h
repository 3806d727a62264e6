/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_poison: the error responses a bridge gives its local requester in
 * place of a response that will never come (timeout, unreachable node, VL or
 * remote reset; HToE paper, "poisoning"). Pure functions: no state.
 * The bridge-level part (which requests to poison when) is in
 * htoe_reset.c.
 */
#ifndef HTOE_POISON_H
#define HTOE_POISON_H

#include <stdint.h>

#include "htmodel/ht_packet.h"
#include "htoe/htoe_outstanding.h"
#include "htoe/htoe_tagremap.h"

enum htoe_poison_reason {
	HTOE_POISON_TIMEOUT = 0,     /* no response within np_timeout */
	HTOE_POISON_UNREACHABLE,     /* unmapped / no VL to the node */
	HTOE_POISON_VL_RESET,        /* the VL was reset while pending */
	HTOE_POISON_REMOTE_RESET,    /* the remote node was reset */
};

/* Error encoding for a reason (HT reference §5): timeout and unreachable ->
 * HT_RSP_MASTER_ABORT (Error0=1, Error1=1); VL reset and remote reset ->
 * HT_RSP_TARGET_ABORT (Error0=1, Error1=0). */
enum ht_rsp_err htoe_poison_err(enum htoe_poison_reason why);

/*
 * Build the error response to a non-posted request with tags (unitid,
 * srctag): *out is zeroed, then
 *   RdSized, Atomic: RdResponse (Cmd 0x30), Count = np->rsp_count, and
 *                    Count+1 data dwords of all-ones (0xFF bytes);
 *   WrSized NP, Flush: TgtDone (Cmd 0x33), Count 0, no data;
 *   UnitID = unitid, SrcTag = srctag, Bridge = 1, PassPW = np->rsp_passpw,
 *   Error0/Error1 from err, Isoc 0, RqUID 0, RspVCSet 0.
 * Returns 0, or -EINVAL (unknown kind, Count > 15, tags >= 32).
 */
int htoe_poison_build(uint8_t unitid, uint8_t srctag, const struct htoe_np_info *np,
		      enum ht_rsp_err err, struct ht_pkt *out);

/* htoe_poison_build() for an outstanding entry (its own UnitID/SrcTag) with
 * the error of `why`. */
int htoe_poison_response(const struct htoe_outstanding_entry *e,
			 enum htoe_poison_reason why, struct ht_pkt *out);

#endif
