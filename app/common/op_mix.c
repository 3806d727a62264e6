/* SPDX-License-Identifier: BSD-3-Clause
 * The operation mix of a workload (see op_mix.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "op_mix.h"
#include "parse_num.h"

#define MIX_MAX    256u
#define WEIGHT_MAX 1000000u

/* s without the blanks around it (in place) */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	return s;
}

int htoe_parse_mix(const char *s, unsigned w[HT_OP__COUNT], char *why, size_t whylen)
{
	char buf[MIX_MAX], *save = NULL;
	unsigned sum = 0;

	if (strlen(s) >= sizeof(buf)) {
		snprintf(why, whylen, "longer than %u characters", MIX_MAX - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	memset(w, 0, sizeof(unsigned) * HT_OP__COUNT);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;
		unsigned i;

		if (!eq) {
			snprintf(why, whylen, "'%s' is not OP=WEIGHT", trim(tok));
			return -1;
		}
		*eq = 0;
		tok = trim(tok);
		for (i = 0; i < HT_OP__COUNT; i++)
			if (!strcmp(tok, ht_op_name(i)))
				break;
		if (i == HT_OP__COUNT) {
			snprintf(why, whylen,
				 "unknown operation '%s' (rd, wrp, wrn, flush, fence, fadd, cas)", tok);
			return -1;
		}
		if (htoe_parse_unsigned(trim(eq + 1), 0, 0, WEIGHT_MAX, &v)) {
			snprintf(why, whylen, "weight of %s is not a number 0..%u", tok, WEIGHT_MAX);
			return -1;
		}
		w[i] = (unsigned)v;
		sum += (unsigned)v;
	}
	if (!sum) {
		snprintf(why, whylen, "all weights are 0");
		return -1;
	}
	return 0;
}
