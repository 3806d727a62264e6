/* SPDX-License-Identifier: BSD-3-Clause
 * Parsing the unsigned numbers of the programs' command lines, one way for
 * all of them: strtoull() alone turns "-1" into 2^64-1 and "12x" into 12.
 */
#ifndef HTOE_PARSE_NUM_H
#define HTOE_PARSE_NUM_H

#include <stdint.h>

/* Parses s as an unsigned integer in [min, max] into *out. base as for
 * strtoull (0: decimal, 0x hex or 0 octal). Refused (-1, *out unchanged):
 * an empty string, a sign (so "-1" is not 2^64-1), leading or trailing
 * characters that are not digits, overflow, a value outside [min, max]. */
int htoe_parse_unsigned(const char *s, int base, uint64_t min, uint64_t max, uint64_t *out);

/* htoe_parse_unsigned(s, 0, 0, UINT64_MAX, out) */
int htoe_parse_u64(const char *s, uint64_t *out);

/* Exactly n numbers as htoe_parse_u64 separated by sep, e.g. "2:3:1000"
 * (n = 3, sep ':'), into out[0..n-1]. -1 on anything else. */
int htoe_parse_u64_list(const char *s, char sep, uint64_t *out, unsigned n);

/* Parses s as a finite decimal number in [min, max] into *out. Refused
 * (-1, *out unchanged): an empty string, leading blanks, trailing
 * characters, NaN, an infinity, a value outside [min, max]. */
int htoe_parse_double(const char *s, double min, double max, double *out);

#endif
