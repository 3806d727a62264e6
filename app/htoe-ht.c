/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-ht: HyperTransport packet tool.
 *
 *   htoe-ht decode [FILE]      hex packets -> one JSON object per line
 *   htoe-ht encode [FILE]      JSON objects -> hex packets
 *   htoe-ht crc [--raw] [FILE] hex packets -> transmitted HT3 CRC (~crc)
 *   htoe-ht demo ...           endpoint model demo (app/ht_demo.c)
 *
 * Input is line oriented; empty lines and lines starting with '#' are
 * skipped, line numbers count every line. A line that fails prints
 * {"line":N,"error":"<text>"} and the tool exits 1 at the end.
 * See docs/ht-model.md.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "htmodel/ht_crc.h"
#include "htmodel/ht_packet.h"
#include "ht_demo.h"
#include "htoe_version.h"
#include "parse_num.h"

#define RAW_CRC_MAX 1024u  /* bytes accepted by `crc --raw` */

static void usage(FILE *f)
{
	fputs("usage: htoe-ht <command> [args]\n"
	      "\n"
	      "  decode [FILE]       decode hex HT packets (one per line, link byte order)\n"
	      "                      into one JSON object per line\n"
	      "  encode [FILE]       encode JSON objects (as printed by decode) into hex\n"
	      "  crc [--raw] [FILE]  print the transmitted HT3 CRC (~crc) of each hex packet;\n"
	      "                      --raw: no packet check, 'CTLHEX [/ DATAHEX]' per line\n"
	      "  demo [options]      run the HT endpoint model demo (see 'demo --help')\n"
	      "  --help              this text\n"
	      "  --version           the version\n"
	      "\n"
	      "FILE defaults to standard input ('-' also means standard input). Empty lines\n"
	      "and lines starting with '#' are skipped. A failing line prints\n"
	      "{\"line\":N,\"error\":\"...\"}; the exit status is then 1.\n", f);
}

/* ---- small output buffer: a line is printed only when complete ---- */

struct sbuf {
	char s[4096];
	size_t n;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (b->n >= sizeof(b->s))
		return;
	va_start(ap, fmt);
	r = vsnprintf(b->s + b->n, sizeof(b->s) - b->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		b->n += (size_t)r;
}

static void sb_hex(struct sbuf *b, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_printf(b, "%02x", p[i]);
}

/* ---- hex input ---- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Parse hex digits (whitespace allowed anywhere) from s[0..n). Stores the
 * first `cap` bytes in out and the total byte count in *total.
 */
static int parse_hex(const char *s, size_t n, uint8_t *out, size_t cap, size_t *total)
{
	size_t digits = 0;
	unsigned acc = 0;

	for (size_t i = 0; i < n; i++) {
		int v;

		if (isspace((unsigned char)s[i]))
			continue;
		v = hexval((unsigned char)s[i]);
		if (v < 0)
			return HT_E_BAD_INPUT;
		acc = (acc << 4) | (unsigned)v;
		if (++digits % 2 == 0 && digits / 2 <= cap)
			out[digits / 2 - 1] = (uint8_t)acc;
	}
	if (digits % 2)
		return HT_E_BAD_INPUT;
	*total = digits / 2;
	return HT_OK;
}

/* ---- decode ---- */

/* The "error" text of a response, NULL for other kinds. */
static const char *rsp_err_text(const struct ht_pkt *p)
{
	if (p->kind != HT_K_RDRESPONSE && p->kind != HT_K_TGTDONE)
		return NULL;
	return ht_rsp_err_name(ht_pkt_rsp_err(p));
}

static int do_decode(const char *line, size_t n, struct sbuf *o)
{
	uint8_t buf[HT_MAX_PKT_LEN + 4];
	struct ht_pkt p;
	uint8_t ids[HT_F__COUNT];
	size_t total;
	const char *vc;
	int r, nf;

	r = parse_hex(line, n, buf, sizeof(buf), &total);
	if (r < 0)
		return r;
	r = ht_decode(buf, total < sizeof(buf) ? total : sizeof(buf), &p);
	if (r < 0)
		return r;
	if ((size_t)r != total)
		return HT_E_TRAILING;

	vc = ht_vc_name(ht_pkt_vc(&p));
	sb_printf(o, "{\"cmd\":%u,\"name\":\"%s\",\"vc\":", p.cmd, ht_pkt_name(&p));
	if (vc)
		sb_printf(o, "\"%s\"", vc);
	else
		sb_printf(o, "null");
	sb_printf(o, ",\"len\":%d", r);
	nf = ht_pkt_fields(&p, ids);
	for (int i = 0; i < nf; i++)
		sb_printf(o, ",\"%s\":%" PRIu64, ht_field_name(ids[i]),
			  ht_pkt_get(&p, ids[i]));
	if (ht_atomic_op_name(&p))
		sb_printf(o, ",\"op\":\"%s\"", ht_atomic_op_name(&p));
	if (rsp_err_text(&p))
		sb_printf(o, ",\"error\":\"%s\"", rsp_err_text(&p));
	if (p.kind == HT_K_WRSIZED || p.kind == HT_K_RDRESPONSE || p.kind == HT_K_ATOMIC) {
		sb_printf(o, ",\"data\":\"");
		sb_hex(o, p.data, p.data_len);
		sb_printf(o, "\"");
	}
	sb_printf(o, "}");
	return HT_OK;
}

/* ---- encode ---- */

/*
 * jansson integers are signed 64-bit, but addresses use all 64 bits. Plain
 * unsigned integers of more than 18 digits are turned into JSON strings
 * before parsing; get_u64() accepts such digit strings.
 */
static bool in_set(char c, const char *set)
{
	return c && strchr(set, c);
}

static char *quote_long_ints(const char *s, size_t n, size_t *outn)
{
	char *o = malloc(2 * n + 1);
	size_t j = 0;
	bool in_str = false;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n;) {
		char c = s[i];

		if (in_str) {
			o[j++] = s[i++];
			if (c == '\\' && i < n)
				o[j++] = s[i++];
			else if (c == '"')
				in_str = false;
			continue;
		}
		if (c == '"') {
			in_str = true;
			o[j++] = s[i++];
			continue;
		}
		if (isdigit((unsigned char)c) && (i == 0 || !in_set(s[i - 1], "0123456789.eE+-"))) {
			size_t k = i;

			while (k < n && isdigit((unsigned char)s[k]))
				k++;
			if (k - i > 18 && (k == n || !in_set(s[k], ".eE"))) {
				o[j++] = '"';
				memcpy(o + j, s + i, k - i);
				j += k - i;
				o[j++] = '"';
			} else {
				memcpy(o + j, s + i, k - i);
				j += k - i;
			}
			i = k;
			continue;
		}
		o[j++] = s[i++];
	}
	*outn = j;
	return o;
}

static int get_u64(const json_t *v, uint64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < 0)
			return HT_E_BAD_FIELD;
		*out = (uint64_t)i;
		return HT_OK;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		return htoe_parse_unsigned(s, 10, 0, UINT64_MAX, out) ? HT_E_BAD_FIELD : HT_OK;
	}
	return HT_E_BAD_FIELD;
}

static int kind_by_name(const char *name)
{
	for (int k = 0; k < HT_K__COUNT; k++)
		if (!strcmp(ht_kind_name((enum ht_kind)k), name))
			return k;
	return -1;
}

/* An optional derived key ("vc", "op", "error") must agree when present. */
static bool str_agrees(const json_t *o, const char *key, const char *want)
{
	const json_t *v = json_object_get(o, key);

	if (!v)
		return true;
	if (json_is_null(v))
		return want == NULL;
	return json_is_string(v) && want && !strcmp(json_string_value(v), want);
}

static int encode_obj(const json_t *o, struct sbuf *out)
{
	static const char *const derived[] = { "name", "vc", "len", "op", "error" };
	struct ht_pkt p;
	uint8_t buf[HT_MAX_PKT_LEN];
	const json_t *v, *name = json_object_get(o, "name");
	const char *key;
	uint64_t u, cmd = 0;
	bool have_cmd = false;
	int kind, r;

	if (!json_is_string(name))
		return HT_E_BAD_INPUT;
	kind = kind_by_name(json_string_value(name));
	if (kind < 0)
		return HT_E_BAD_FIELD;
	memset(&p, 0, sizeof(p));
	json_object_foreach((json_t *)o, key, v) {
		bool skip = false;

		for (size_t i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
			skip |= !strcmp(key, derived[i]);
		if (skip)
			continue;
		if (!strcmp(key, "data")) {
			size_t total;

			if (!json_is_string(v))
				return HT_E_BAD_FIELD;
			r = parse_hex(json_string_value(v), json_string_length(v), p.data,
				      sizeof(p.data), &total);
			if (r < 0)
				return r;
			if (total > sizeof(p.data))
				return HT_E_BAD_FIELD;
			p.data_len = (uint16_t)total;
			continue;
		}
		r = get_u64(v, &u);
		if (r < 0)
			return r;
		if (!strcmp(key, "cmd")) {
			cmd = u;
			have_cmd = true;
			continue;
		}
		r = ht_field_by_name(key);
		if (r < 0 || ht_pkt_set(&p, (enum ht_field_id)r, u) < 0)
			return HT_E_BAD_FIELD;
	}
	if (have_cmd) {
		if (cmd > 0x3f)
			return HT_E_BAD_FIELD;
		p.cmd = (uint8_t)cmd;
		p.kind = (uint8_t)kind;
	} else {
		r = ht_pkt_set_cmd(&p, (enum ht_kind)kind);
		if (r < 0)
			return r;
	}
	r = ht_encode(&p, buf, sizeof(buf));
	if (r < 0)
		return r;

	v = json_object_get(o, "len");
	if (v && (get_u64(v, &u) < 0 || u != (uint64_t)r))
		return HT_E_BAD_FIELD;
	if (!str_agrees(o, "vc", ht_vc_name(ht_pkt_vc(&p))) ||
	    !str_agrees(o, "op", ht_atomic_op_name(&p)) ||
	    !str_agrees(o, "error", rsp_err_text(&p)))
		return HT_E_BAD_FIELD;
	sb_hex(out, buf, (size_t)r);
	return HT_OK;
}

static int do_encode(const char *line, size_t n, struct sbuf *o)
{
	json_error_t jerr;
	json_t *obj;
	size_t qn;
	char *q = quote_long_ints(line, n, &qn);
	int r;

	if (!q)
		return HT_E_BAD_INPUT;
	obj = json_loadb(q, qn, JSON_REJECT_DUPLICATES, &jerr);
	free(q);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return HT_E_BAD_INPUT;
	}
	r = encode_obj(obj, o);
	json_decref(obj);
	return r;
}

/* ---- crc ---- */

static int do_crc(const char *line, size_t n, struct sbuf *o)
{
	uint8_t buf[HT_MAX_PKT_LEN + 4];
	size_t total;
	uint32_t tx;
	int r = parse_hex(line, n, buf, sizeof(buf), &total);

	if (r < 0)
		return r;
	r = ht_crc_of_packet(buf, total < sizeof(buf) ? total : sizeof(buf), &tx);
	if (r < 0)
		return r;
	if (total > sizeof(buf))
		return HT_E_TRAILING;
	sb_printf(o, "%08" PRIx32, tx);
	return HT_OK;
}

/* --raw: "CTLHEX [/ DATAHEX]", any whole number of dwords, no packet check */
static int do_crc_raw(const char *line, size_t n, struct sbuf *o)
{
	uint8_t buf[RAW_CRC_MAX];
	const char *slash = memchr(line, '/', n);
	size_t nc = slash ? (size_t)(slash - line) : n, ctl, data = 0;
	int r = parse_hex(line, nc, buf, sizeof(buf), &ctl);

	if (r < 0)
		return r;
	if (slash && ctl <= sizeof(buf)) {
		r = parse_hex(slash + 1, n - nc - 1, buf + ctl, sizeof(buf) - ctl, &data);
		if (r < 0)
			return r;
	}
	if (ctl + data > sizeof(buf) || ctl % 4 || data % 4)
		return HT_E_BAD_INPUT;
	sb_printf(o, "%08" PRIx32, ht_crc_tx(buf, ctl + data, ctl));
	return HT_OK;
}

/* ---- line driver ---- */

typedef int (*line_fn)(const char *line, size_t n, struct sbuf *o);

static bool skip_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return s[i] == '#';
	return true;
}

/* The longest input line: far more than any HT packet in hex or as JSON
 * (a longer line is still read and reported as bad input), but an input
 * without newlines must not grow a buffer without bound. */
#define LINE_MAX_BYTES (1u << 20)

/* One line of in (its newline included) into line[LINE_MAX_BYTES + 1]:
 * its length, -1 at the end of the input, -2 when it is longer than
 * LINE_MAX_BYTES. */
static ssize_t read_line(FILE *in, char *line)
{
	size_t n = 0;
	int c;

	while ((c = getc(in)) != EOF) {
		if (n == LINE_MAX_BYTES)
			return -2;
		line[n++] = (char)c;
		if (c == '\n')
			break;
	}
	line[n] = 0;
	return n || c != EOF ? (ssize_t)n : -1;
}

static int run_lines(const char *path, line_fn fn)
{
	FILE *in = stdin;
	static char line[LINE_MAX_BYTES + 1];
	ssize_t n;
	unsigned long lineno = 0;
	bool failed = false;

	if (path && strcmp(path, "-")) {
		in = fopen(path, "r");
		if (!in) {
			fprintf(stderr, "htoe-ht: %s: %s\n", path, strerror(errno));
			return 2;
		}
	}
	while ((n = read_line(in, line)) >= 0) {
		struct sbuf o = { .n = 0 };
		int r;

		lineno++;
		if (skip_line(line, (size_t)n))
			continue;
		r = fn(line, (size_t)n, &o);
		if (r < 0) {
			failed = true;
			printf("{\"line\":%lu,\"error\":\"%s\"}\n", lineno, ht_strerror(r));
		} else {
			printf("%.*s\n", (int)o.n, o.s);
		}
	}
	if (n == -2) {
		fprintf(stderr, "htoe-ht: %s:%lu: a line longer than %u bytes (is this a text file "
			"of one packet per line?): refused\n", path && strcmp(path, "-") ? path :
			"stdin", lineno + 1, LINE_MAX_BYTES);
		if (in != stdin)
			fclose(in);
		return 2;
	}
	if (ferror(in)) {
		fprintf(stderr, "htoe-ht: read error\n");
		failed = true;
	}
	if (in != stdin)
		fclose(in);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	int argi = 2;
	line_fn fn;

	if (!cmd) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		htoe_print_version("htoe-ht");
		return 0;
	}
	if (!strcmp(cmd, "demo"))
		return ht_demo_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "decode")) {
		fn = do_decode;
	} else if (!strcmp(cmd, "encode")) {
		fn = do_encode;
	} else if (!strcmp(cmd, "crc")) {
		fn = do_crc;
		if (argc > argi && !strcmp(argv[argi], "--raw")) {
			fn = do_crc_raw;
			argi++;
		}
	} else {
		fprintf(stderr, "htoe-ht: unknown command '%s' (try --help)\n", cmd);
		return 2;
	}
	if (argc > argi + 1) {
		fprintf(stderr, "htoe-ht %s: too many arguments\n", cmd);
		return 2;
	}
	return run_lines(argc > argi ? argv[argi] : NULL, fn);
}
