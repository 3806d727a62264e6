/* SPDX-License-Identifier: BSD-3-Clause
 * See parse_num.h.
 */
#include "parse_num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int htoe_parse_unsigned(const char *s, int base, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading blanks and a sign: the digits must come first */
	if (!s || !isxdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int htoe_parse_u64(const char *s, uint64_t *out)
{
	return htoe_parse_unsigned(s, 0, 0, UINT64_MAX, out);
}

int htoe_parse_u64_list(const char *s, char sep, uint64_t *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		const char *e = i + 1 < n ? strchr(s, sep) : s + strlen(s);
		char tok[32];

		if (!e || (size_t)(e - s) >= sizeof(tok))
			return -1;
		memcpy(tok, s, (size_t)(e - s));
		tok[e - s] = 0;
		if (htoe_parse_u64(tok, &out[i]))
			return -1;
		s = e + 1;
	}
	return 0;
}

int htoe_parse_double(const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	if (!s || !*s || isspace((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	/* NaN compares false with everything: !(v >= min) refuses it */
	if (errno || end == s || *end || !isfinite(v) || !(v >= min) || !(v <= max))
		return -1;
	*out = v;
	return 0;
}
