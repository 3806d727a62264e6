/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_poison: error responses in place of lost ones. See htoe_poison.h.
 */
#include "htoe/htoe_poison.h"

#include <errno.h>
#include <string.h>

enum ht_rsp_err htoe_poison_err(enum htoe_poison_reason why)
{
	switch (why) {
	case HTOE_POISON_VL_RESET:
	case HTOE_POISON_REMOTE_RESET:
		return HT_RSP_TARGET_ABORT;
	case HTOE_POISON_TIMEOUT:
	case HTOE_POISON_UNREACHABLE:
	default:
		return HT_RSP_MASTER_ABORT;
	}
}

int htoe_poison_build(uint8_t unitid, uint8_t srctag, const struct htoe_np_info *np,
		      enum ht_rsp_err err, struct ht_pkt *out)
{
	if (!np || !out || unitid >= HTOE_TAG_UNITIDS || srctag >= HTOE_TAG_SRCTAGS ||
	    np->rsp_count > 15 || (unsigned)err > HT_RSP_MASTER_ABORT)
		return -EINVAL;
	bool rd;
	switch (np->kind) {
	case HT_K_RDSIZED:
	case HT_K_ATOMIC:
		rd = true;
		break;
	case HT_K_WRSIZED:
	case HT_K_FLUSH:
		rd = false;
		break;
	default:
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->unitid = unitid;
	out->srctag = srctag;
	out->bridge = 1;
	out->passpw = np->rsp_passpw ? 1 : 0;
	out->error0 = ((unsigned)err >> 1) & 1u;
	out->error1 = (unsigned)err & 1u;
	if (rd) {
		out->cmd = HT_CMD_RDRESP;
		out->kind = HT_K_RDRESPONSE;
		out->count = np->rsp_count;
		out->data_len = (uint16_t)(4u * (np->rsp_count + 1u));
		memset(out->data, 0xFF, out->data_len);
	} else {
		out->cmd = HT_CMD_TGTDONE;
		out->kind = HT_K_TGTDONE;
	}
	return 0;
}

int htoe_poison_response(const struct htoe_outstanding_entry *e,
			 enum htoe_poison_reason why, struct ht_pkt *out)
{
	if (!e)
		return -EINVAL;
	return htoe_poison_build(e->unitid, e->srctag, &e->np, htoe_poison_err(why), out);
}
