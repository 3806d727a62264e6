/* SPDX-License-Identifier: BSD-3-Clause
 * An operation mix, "rd=35,wrp=25,wrn=10,fadd=10,cas=10,flush=5,fence=5": the
 * weights of the named HT operations (ht_op_name), the others 0. One rule for
 * the bridge's [workload] mix and htoe-sim --mix: blanks around names and
 * weights allowed, each weight 0..1000000, not all 0.
 */
#ifndef HTOE_OP_MIX_H
#define HTOE_OP_MIX_H

#include <stddef.h>

#include "htmodel/ht_requester.h"

/* 0, or -1 with what was wrong in why. */
int htoe_parse_mix(const char *s, unsigned w[HT_OP__COUNT], char *why, size_t whylen);

#endif
