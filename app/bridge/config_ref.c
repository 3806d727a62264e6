/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-config-ref: the configuration reference from the table (cfgkeys.c).
 *
 *   htoe-config-ref md|man|txt      print it (man: htoe.ini(5))
 *   htoe-config-ref --check FILE    exit 1 if FILE's generated part differs
 *   htoe-config-ref --update FILE   rewrite FILE's generated part
 *
 * The generated part of FILE (docs/config.md) is everything between the
 * lines CFG_REF_BEGIN and CFG_REF_END; the rest is hand-written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define CFG_REF_BEGIN "<!-- BEGIN config-reference: generated from app/bridge/cfgkeys.c by " \
	"`ninja -C build config-doc`; do not edit -->\n"
#define CFG_REF_END "<!-- END config-reference -->\n"

static char *slurp(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);

	while (b) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		char *nb = realloc(b, 2 * cap + 1);

		if (!nb) {
			free(b);
			return NULL;
		}
		b = nb;
		cap *= 2;
	}
	if (b)
		b[n] = 0;
	*len = n;
	return b;
}

static char *generated(size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	cfg_reference(&br_cfg_schema, CFG_REF_MD, f);
	fclose(f);
	*len = n;
	return buf;
}

static int check_or_update(const char *path, bool update)
{
	FILE *f = fopen(path, "r");
	size_t len, glen;
	char *doc, *gen, *b, *e;
	int rc = 1;

	if (!f) {
		perror(path);
		return 2;
	}
	doc = slurp(f, &len);
	fclose(f);
	gen = generated(&glen);
	if (!doc || !gen) {
		fprintf(stderr, "htoe-config-ref: out of memory\n");
		free(doc);
		free(gen);
		return 2;
	}
	b = strstr(doc, CFG_REF_BEGIN);
	e = b ? strstr(b, CFG_REF_END) : NULL;
	if (!b || !e) {
		fprintf(stderr, "%s: no generated part (the marker lines of htoe-config-ref)\n", path);
		rc = 2;
	} else if (!update) {
		b += strlen(CFG_REF_BEGIN);
		if ((size_t)(e - b) == glen && !memcmp(b, gen, glen)) {
			rc = 0;
		} else {
			fprintf(stderr, "%s: the key reference differs from the table in "
				"app/bridge/cfgkeys.c: run `ninja -C build config-doc` (and commit)\n",
				path);
		}
	} else if ((f = fopen(path, "w")) != NULL) {
		b += strlen(CFG_REF_BEGIN);
		fwrite(doc, 1, (size_t)(b - doc), f);
		fwrite(gen, 1, glen, f);
		fputs(e, f);
		rc = fclose(f) ? 2 : 0;
	} else {
		perror(path);
		rc = 2;
	}
	free(doc);
	free(gen);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "md"))
		cfg_reference(&br_cfg_schema, CFG_REF_MD, stdout);
	else if (argc == 2 && !strcmp(argv[1], "man"))
		cfg_reference(&br_cfg_schema, CFG_REF_MAN, stdout);
	else if (argc == 2 && !strcmp(argv[1], "txt"))
		cfg_reference(&br_cfg_schema, CFG_REF_TXT, stdout);
	else if (argc == 3 && !strcmp(argv[1], "--check"))
		return check_or_update(argv[2], false);
	else if (argc == 3 && !strcmp(argv[1], "--update"))
		return check_or_update(argv[2], true);
	else {
		fprintf(stderr, "usage: htoe-config-ref md|man|txt | --check FILE | --update FILE\n");
		return 2;
	}
	return 0;
}
