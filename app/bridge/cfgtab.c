/* SPDX-License-Identifier: BSD-3-Clause
 * Table-driven INI configuration (see cfgtab.h). No DPDK.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgtab.h"
#include "impair_model.h"

/* ------------------------------------------------------------ the doc */

void cfg_doc_init(struct cfg_doc *d, const struct cfg_schema *sch, const char *display,
		  char *err, size_t errlen)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	memset(d, 0, sizeof(*d));
	d->sch = sch;
	snprintf(d->file, sizeof(d->file), "%s", display);
	d->phys_mem = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX;
	d->err = err;
	d->errlen = errlen;
	if (errlen)
		err[0] = 0;
}

void cfg_doc_free(struct cfg_doc *d)
{
	for (unsigned i = 0; i < d->n; i++) {
		for (unsigned j = 0; j < d->s[i].n; j++) {
			free(d->s[i].e[j].key);
			free(d->s[i].e[j].val);
		}
		free(d->s[i].e);
		free(d->s[i].name);
	}
	free(d->s);
	d->s = NULL;
	d->n = d->cap = 0;
}

static int __attribute__((format(printf, 3, 4)))
line_err(struct cfg_doc *d, unsigned line, const char *fmt, ...)
{
	int o = snprintf(d->err, d->errlen, "%s:%u: ", d->file, line);
	va_list ap;

	if (o >= 0 && (size_t)o < d->errlen) {
		va_start(ap, fmt);
		vsnprintf(d->err + o, d->errlen - (size_t)o, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int oom(struct cfg_doc *d)
{
	snprintf(d->err, d->errlen, "%s: out of memory", d->file);
	return -1;
}

static struct cfg_sec *sec_find(const struct cfg_doc *d, const char *name)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->s[i].name, name))
			return &d->s[i];
	return NULL;
}

static struct cfg_ent *ent_find(const struct cfg_sec *s, const char *key)
{
	for (unsigned i = 0; s && i < s->n; i++)
		if (!strcmp(s->e[i].key, key))
			return &s->e[i];
	return NULL;
}

/* room for one more element in *arr (n used of *cap) */
static int grow(void *arr, unsigned n, unsigned *cap, size_t elem)
{
	void **a = arr, *na;
	unsigned c = *cap ? 2 * *cap : 16;

	if (n < *cap)
		return 0;
	na = realloc(*a, c * elem);
	if (!na)
		return -1;
	*a = na;
	*cap = c;
	return 0;
}

static struct cfg_sec *sec_add(struct cfg_doc *d, const char *name, unsigned line)
{
	struct cfg_sec *s;

	if (grow(&d->s, d->n, &d->cap, sizeof(*s)))
		return NULL;
	s = &d->s[d->n];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return NULL;
	s->line = line;
	s->kind = cfg_kind(d->sch, name, &s->num);
	d->n++;
	return s;
}

static struct cfg_ent *ent_add(struct cfg_sec *s, const char *key, const char *val,
			       unsigned line)
{
	struct cfg_ent *e;

	if (grow(&s->e, s->n, &s->cap, sizeof(*e)))
		return NULL;
	e = &s->e[s->n];
	memset(e, 0, sizeof(*e));
	e->key = strdup(key);
	e->val = strdup(val);
	if (!e->key || !e->val) {
		free(e->key);
		free(e->val);
		return NULL;
	}
	e->line = line;
	s->n++;
	return e;
}

/* ---------------------------------------------------------- reading */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" : "not a regular file";
}

int cfg_read(struct cfg_doc *d, const char *path)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc;
	struct stat st;
	char *buf;
	size_t n = 0;

	if (fd < 0) {
		snprintf(d->err, d->errlen, "%s: cannot open: %s", d->file, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(d->err, d->errlen, "%s: %s, not a configuration file (a regular file)",
			 d->file, file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	if (st.st_size > (off_t)CFG_FILE_MAX) {
		snprintf(d->err, d->errlen, "%s: %jd bytes: a configuration file is at most %u "
			 "bytes (1 MiB); is this the right file?", d->file, (intmax_t)st.st_size,
			 CFG_FILE_MAX);
		close(fd);
		return -1;
	}
	buf = malloc(CFG_FILE_MAX + 1);
	if (!buf) {
		close(fd);
		return oom(d);
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, CFG_FILE_MAX + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(d->err, d->errlen, "%s: read error: %s", d->file, strerror(errno));
			close(fd);
			free(buf);
			return -1;
		}
		n += (size_t)r;
		if (!r || n > CFG_FILE_MAX)
			break;
	}
	close(fd);
	if (n > CFG_FILE_MAX) {
		snprintf(d->err, d->errlen, "%s: grew beyond %u bytes (1 MiB) while read",
			 d->file, CFG_FILE_MAX);
		free(buf);
		return -1;
	}
	rc = cfg_parse(d, buf, n);
	free(buf);
	return rc;
}

int cfg_parse(struct cfg_doc *d, const char *text, size_t len)
{
	const char *nul = memchr(text, 0, len), *p = text, *end = text + len;
	char line[CFG_NAME_MAX + CFG_VALUE_MAX + 1024];
	struct cfg_sec *cur = NULL;
	unsigned lineno = 0;

	if (nul) {
		for (const char *c = text; c < nul; c++)
			lineno += *c == '\n';
		return line_err(d, lineno + 1, "a NUL byte: this is not a text file");
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		char *s, *c, *eq;

		lineno++;
		if (n >= sizeof(line))
			return line_err(d, lineno, "line longer than %zu characters",
					sizeof(line) - 1);
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		if ((c = strchr(line, ';')) != NULL)
			*c = 0;
		s = trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			char *rb = strchr(s, ']'), *name;
			const struct cfg_sec *old;

			if (!rb)
				return line_err(d, lineno, "'[' without ']'");
			if (*trim(rb + 1))
				return line_err(d, lineno, "text after ']' (comments start with ';')");
			*rb = 0;
			name = trim(s + 1);
			if (!*name)
				return line_err(d, lineno, "empty section name");
			if (strlen(name) >= CFG_NAME_MAX)
				return line_err(d, lineno, "section name longer than %u characters",
						CFG_NAME_MAX - 1);
			if ((old = sec_find(d, name)) != NULL)
				return line_err(d, lineno, "section [%s] appears twice (first at line %u)",
						name, old->line);
			if (!(cur = sec_add(d, name, lineno)))
				return oom(d);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq)
			return line_err(d, lineno, "'%.60s' is neither a [section] nor a key = value "
					"line (comments start with ';')", s);
		*eq = 0;
		char *key = trim(s), *val = trim(eq + 1);
		const struct cfg_ent *old;

		if (!cur)
			return line_err(d, lineno, "key '%s' before the first [section]", key);
		if (!*key)
			return line_err(d, lineno, "'=' without a key in [%s]", cur->name);
		if (*key == '#')
			return line_err(d, lineno, "[%s] '%s': '#' does not start a comment here; use ';'",
					cur->name, key);
		if (!*val)
			return line_err(d, lineno, "[%s] %s: no value after '='", cur->name, key);
		if (strlen(key) >= CFG_NAME_MAX)
			return line_err(d, lineno, "[%s] key longer than %u characters", cur->name,
					CFG_NAME_MAX - 1);
		if (strlen(val) >= CFG_VALUE_MAX)
			return line_err(d, lineno, "[%s] %s: value longer than %u characters",
					cur->name, key, CFG_VALUE_MAX - 1);
		if ((old = ent_find(cur, key)) != NULL)
			return line_err(d, lineno, "[%s] %s: key given twice (first at line %u)",
					cur->name, key, old->line);
		if (!ent_add(cur, key, val, lineno))
			return oom(d);
	}
	return 0;
}

int cfg_set(struct cfg_doc *d, const char *a)
{
	const char *dot = strchr(a, '.'), *eq = strchr(a, '=');
	char sect[CFG_NAME_MAX], key[CFG_NAME_MAX];
	struct cfg_sec *s;
	struct cfg_ent *e;

	if (!dot || !eq || eq < dot || dot == a || eq == dot + 1 || !eq[1] ||
	    (size_t)(dot - a) >= sizeof(sect) || (size_t)(eq - dot - 1) >= sizeof(key) ||
	    strlen(eq + 1) >= CFG_VALUE_MAX) {
		snprintf(d->err, d->errlen,
			 "--set '%s': expected SECTION.KEY=VALUE (e.g. impair.loss=0.01)", a);
		return -1;
	}
	snprintf(sect, sizeof(sect), "%.*s", (int)(dot - a), a);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - dot - 1), dot + 1);
	s = sec_find(d, sect);
	if (!s && !(s = sec_add(d, sect, 0)))
		return oom(d);
	e = ent_find(s, key);
	if (e) {
		char *v = strdup(eq + 1);

		if (!v)
			return oom(d);
		free(e->val);
		e->val = v;
		e->line = 0;
		return 0;
	}
	return ent_add(s, key, eq + 1, 0) ? 0 : oom(d);
}

/* ------------------------------------------------------------- names */

int cfg_kind(const struct cfg_schema *sch, const char *name, long *num)
{
	size_t n = 0;

	*num = -1;
	while (isalpha((unsigned char)name[n]) || name[n] == '_')
		n++;
	for (unsigned k = 0; k < sch->n_sects; k++) {
		const struct cfg_sect *sc = &sch->sects[k];
		char *end;
		long v;

		if (strlen(sc->name) != n || strncmp(sc->name, name, n))
			continue;
		if (!name[n])
			return sc->plain ? (int)k : -1;
		if (!sc->numbered || name[n] != ' ' || !isdigit((unsigned char)name[n + 1]) ||
		    (name[n + 1] == '0' && name[n + 2]))
			return -1; /* one spelling per number: [node 1], not [node 01] */
		errno = 0;
		v = strtol(name + n + 1, &end, 10);
		if (errno || *end || v < 0 || v > 65535)
			return -1;
		*num = v;
		return (int)k;
	}
	return -1;
}

static bool key_matches(const struct cfg_key *k, const char *name)
{
	if (k->flags & CFG_F_PREFIX)
		return !strncmp(name, k->name, strlen(k->name));
	return !strcmp(name, k->name);
}

const struct cfg_key *cfg_key_find(const struct cfg_schema *sch, int kind, const char *name)
{
	if (kind < 0)
		return NULL;
	for (unsigned i = 0; i < sch->n_keys; i++)
		if ((sch->keys[i].sects & CFG_S(kind)) && key_matches(&sch->keys[i], name))
			return &sch->keys[i];
	return NULL;
}

/* Levenshtein distance, capped (names are short) */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[CFG_NAME_MAX + 1];

	if (la > CFG_NAME_MAX || lb > CFG_NAME_MAX)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* "; did you mean 'x'?" (or nothing): the closest of the keys valid in kind */
static void suggest_key(const struct cfg_schema *sch, int kind, const char *name, char *buf,
			size_t len)
{
	const char *best = NULL;
	unsigned bd = 3;

	buf[0] = 0;
	for (unsigned i = 0; i < sch->n_keys; i++) {
		unsigned dd;

		if (!(sch->keys[i].sects & CFG_S(kind)))
			continue;
		dd = distance(name, sch->keys[i].name);
		if (dd < bd && dd < strlen(sch->keys[i].name)) {
			bd = dd;
			best = sch->keys[i].name;
		}
	}
	if (best) {
		snprintf(buf, len, "; did you mean '%s'?", best);
		return;
	}
	/* a key of another section */
	for (unsigned i = 0; i < sch->n_keys; i++)
		if (key_matches(&sch->keys[i], name)) {
			int o = snprintf(buf, len, "; '%s' belongs in", name);

			for (unsigned k = 0; k < sch->n_sects && o > 0 && (size_t)o < len; k++)
				if (sch->keys[i].sects & CFG_S(k))
					o += snprintf(buf + o, len - (size_t)o, " [%s%s]",
						      sch->sects[k].name,
						      sch->sects[k].plain ? "" : " N");
			return;
		}
}

static int known_sections(const struct cfg_schema *sch, char *buf, size_t len)
{
	int o = 0;

	buf[0] = 0;
	for (unsigned k = 0; k < sch->n_sects && o >= 0 && (size_t)o < len; k++) {
		const struct cfg_sect *s = &sch->sects[k];

		if (s->plain)
			o += snprintf(buf + o, len - (size_t)o, "%s[%s]", o ? ", " : "", s->name);
		if (s->numbered && o >= 0 && (size_t)o < len)
			o += snprintf(buf + o, len - (size_t)o, "%s[%s N]", o ? ", " : "", s->name);
	}
	return o;
}

int cfg_check_names(struct cfg_doc *d)
{
	const struct cfg_schema *sch = d->sch;

	for (unsigned i = 0; i < d->n; i++) {
		struct cfg_sec *s = &d->s[i];

		s->kind = cfg_kind(sch, s->name, &s->num);
		if (s->kind < 0) {
			char known[512], hint[128] = "";
			size_t n = 0;
			const char *best = NULL;
			unsigned bd = 3;

			while (isalpha((unsigned char)s->name[n]) || s->name[n] == '_')
				n++;
			for (unsigned k = 0; k < sch->n_sects; k++) {
				char word[CFG_NAME_MAX];
				unsigned dd;

				snprintf(word, sizeof(word), "%.*s", (int)n, s->name);
				dd = distance(word, sch->sects[k].name);
				if (dd < bd) {
					bd = dd;
					best = sch->sects[k].name;
				}
				if (!strcmp(word, sch->sects[k].name))
					best = NULL, bd = 0; /* right word, wrong form */
			}
			if (best)
				snprintf(hint, sizeof(hint), "did you mean [%s%s]? ", best,
					 s->name + n);
			known_sections(sch, known, sizeof(known));
			return cfg_error(d, s->name, NULL, "unknown section (%sknown: %s)", hint,
					 known);
		}
		for (unsigned j = 0; j < s->n; j++) {
			const char *key = s->e[j].key;
			char hint[256];

			if (cfg_key_find(sch, s->kind, key))
				continue;
			for (unsigned r = 0; r < sch->n_removed; r++) {
				const struct cfg_removed *rk = &sch->removed[r];

				if ((rk->sects & CFG_S(s->kind)) && !strcmp(rk->name, key))
					return cfg_error(d, s->name, key, "key %s was removed in %s: %s",
							 key, rk->version, rk->why);
			}
			suggest_key(sch, s->kind, key, hint, sizeof(hint));
			return cfg_error(d, s->name, key,
					 "unknown key in a [%s] section (see docs/config.md)%s",
					 sch->sects[s->kind].name, hint);
		}
	}
	return 0;
}

/* -------------------------------------------------------- lookups */

const struct cfg_sec *cfg_section(const struct cfg_doc *d, const char *name)
{
	return sec_find(d, name);
}

static const char *fallback_of(const struct cfg_doc *d, const char *sect)
{
	long num;
	int k = cfg_kind(d->sch, sect, &num);
	const char *fb = k >= 0 ? d->sch->sects[k].fallback : NULL;

	return fb && strcmp(fb, sect) ? fb : NULL;
}

const struct cfg_ent *cfg_get(const struct cfg_doc *d, const char *sect, const char *key,
			      const char **in)
{
	const struct cfg_ent *e = ent_find(sec_find(d, sect), key);
	const char *fb;

	if (in)
		*in = sect;
	if (!e && (fb = fallback_of(d, sect)) != NULL) {
		e = ent_find(sec_find(d, fb), key);
		if (e && in)
			*in = fb;
	}
	return e;
}

const char *cfg_val(const struct cfg_doc *d, const char *sect, const char *key)
{
	const struct cfg_ent *e = cfg_get(d, sect, key, NULL);

	return e ? e->val : NULL;
}

void cfg_origin(const struct cfg_doc *d, const char *sect, const char *key, char *buf,
		size_t len)
{
	const struct cfg_sec *s = sec_find(d, sect);
	const struct cfg_ent *e = key ? ent_find(s, key) : NULL;
	unsigned line = e ? e->line : s ? s->line : 0;

	if ((e && !e->line) || (!e && s && !s->line))
		snprintf(buf, len, "--set");
	else if (line)
		snprintf(buf, len, "%s:%u", d->file, line);
	else
		snprintf(buf, len, "%s", d->file);
}

static const struct cfg_key *key_of(const struct cfg_doc *d, const char *sect, const char *key)
{
	long num;

	return cfg_key_find(d->sch, cfg_kind(d->sch, sect, &num), key);
}

void cfg_where(const struct cfg_doc *d, const char *sect, const char *key, char *buf,
	       size_t len)
{
	const char *in = sect;
	const struct cfg_ent *e = key ? cfg_get(d, sect, key, &in) : NULL;
	const struct cfg_key *k = key ? key_of(d, in, key) : NULL;
	char org[CFG_ORIGIN_MAX];

	cfg_origin(d, in, key, org, sizeof(org));
	if (e && !(k && (k->flags & CFG_F_SECRET)))
		snprintf(buf, len, "%s: [%s] %s = '%s'", org, in, key, e->val);
	else if (key)
		snprintf(buf, len, "%s: [%s] %s", org, in, key);
	else
		snprintf(buf, len, "%s: [%s]", org, in);
}

int cfg_error(struct cfg_doc *d, const char *sect, const char *key, const char *fmt, ...)
{
	char where[CFG_ORIGIN_MAX + 2 * CFG_NAME_MAX + CFG_VALUE_MAX + 16];
	int o;
	va_list ap;

	cfg_where(d, sect, key, where, sizeof(where));
	o = snprintf(d->err, d->errlen, "%s: ", where);
	if (o >= 0 && (size_t)o < d->errlen) {
		va_start(ap, fmt);
		vsnprintf(d->err + o, d->errlen - (size_t)o, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* ----------------------------------------------------- value parsers */

int cfg_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end) ? -1 : 0;
}

int cfg_parse_size(const char *s, uint64_t *v)
{
	char buf[64];
	size_t n = strlen(s);
	unsigned shift = 0;
	uint64_t x;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n + 1);
	switch (buf[n - 1]) {
	case 'k': case 'K': shift = 10; break;
	case 'm': case 'M': shift = 20; break;
	case 'g': case 'G': shift = 30; break;
	case 't': case 'T': shift = 40; break;
	default: break;
	}
	if (shift)
		buf[--n] = 0;
	if (cfg_parse_u64(buf, &x) || (shift && x > (UINT64_MAX >> shift)))
		return -1;
	*v = x << shift;
	return 0;
}

static const struct { const char *u; uint64_t mul; } dur_units[] = {
	{ "s", 1000000000ull }, { "ms", 1000000ull }, { "us", 1000ull }, { "ns", 1 },
};

int cfg_parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double x;

	if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	x = strtod(s, &end);
	if (errno || end == s || !isfinite(x) || x < 0)
		return -1;
	if (!*end) {
		if (x != 0)
			return -2; /* a unit is required */
		*ns = 0;
		return 0;
	}
	for (unsigned i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
		if (!strcmp(end, dur_units[i].u)) {
			double v = x * (double)dur_units[i].mul;

			if (v > 1e18)
				return -1;
			*ns = (uint64_t)llround(v);
			return 0;
		}
	return -1;
}

int cfg_parse_bool(const char *s, bool *b)
{
	static const char *const yes[] = { "on", "yes", "true", "1" };
	static const char *const no[] = { "off", "no", "false", "0" };

	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i]))
			return *b = true, 0;
		if (!strcasecmp(s, no[i]))
			return *b = false, 0;
	}
	return -1;
}

int cfg_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int n = 0;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &n) != 6 || s[n] || n != 17)
		return -1;
	for (unsigned i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	return 0;
}

/* ------------------------------------------------ formatting values */

static void fmt_dur(uint64_t ns, char *buf, size_t len)
{
	for (unsigned i = 0; i < sizeof(dur_units) / sizeof(dur_units[0]); i++)
		if (ns && ns % dur_units[i].mul == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", ns / dur_units[i].mul, dur_units[i].u);
			return;
		}
	snprintf(buf, len, "0");
}

static void fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char sfx[] = "KMGT";

	for (int i = 3; i >= 0; i--) {
		uint64_t m = 1ull << (10 * (i + 1));

		if (v && v % m == 0 && v / m < 1024 * 1024) {
			snprintf(buf, len, "%" PRIu64 "%c", v / m, sfx[i]);
			return;
		}
	}
	snprintf(buf, len, v >= 0x10000 ? "%#" PRIx64 : "%" PRIu64, v);
}

static void fmt_uint(uint64_t v, char *buf, size_t len)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "2^64-1");
	else
		snprintf(buf, len, v >= 0x100000 && !(v & (v - 1)) ? "%#" PRIx64 : "%" PRIu64, v);
}

/* "min..max" in the key's units */
static void fmt_range(const struct cfg_key *k, char *buf, size_t len)
{
	char a[32], b[32];

	switch (k->type) {
	case CFG_DUR: fmt_dur(k->min, a, sizeof(a)); fmt_dur(k->max, b, sizeof(b)); break;
	case CFG_SIZE: fmt_size(k->min, a, sizeof(a)); fmt_size(k->max, b, sizeof(b)); break;
	default: fmt_uint(k->min, a, sizeof(a)); fmt_uint(k->max, b, sizeof(b)); break;
	}
	snprintf(buf, len, "%s..%s", a, b);
}

/* the alternatives of a CFG_ENUM: "a, b or c" (quote: with backquotes) */
static void fmt_choices(const char *syn, bool quote, char *buf, size_t len)
{
	char tmp[256], *save = NULL;
	const char *q = quote ? "`" : "";
	int o = 0, n = 0, total = 1;

	for (const char *c = syn; *c; c++)
		total += *c == '|';
	snprintf(tmp, sizeof(tmp), "%s", syn);
	buf[0] = 0;
	for (char *t = strtok_r(tmp, "|", &save); t && o >= 0 && (size_t)o < len;
	     t = strtok_r(NULL, "|", &save), n++)
		o += snprintf(buf + o, len - (size_t)o, "%s%s%s%s",
			      n == 0 ? "" : n == total - 1 ? " or " : ", ", q, t, q);
}

/* ----------------------------------------------------- typed values */

static void store_uint(void *out, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)out = (uint8_t)v; break;
	case 2: *(uint16_t *)out = (uint16_t)v; break;
	case 4: *(uint32_t *)out = (uint32_t)v; break;
	default: *(uint64_t *)out = v; break;
	}
}

/* v of key k into out; err: report (else silent, for the defaults) */
static int parse_typed(struct cfg_doc *d, const struct cfg_key *k, const char *v, void *out,
		       size_t size, const char *sect)
{
	char rng[80];
	uint64_t u = 0;
	double x;
	char *end;
	int r;

	switch (k->type) {
	case CFG_UINT:
	case CFG_SIZE:
		if (*v == '-')
			return cfg_error(d, sect, k->name, "negative, but only %s is accepted",
					 (fmt_range(k, rng, sizeof(rng)), rng));
		if (k->type == CFG_UINT ? cfg_parse_u64(v, &u) : cfg_parse_size(v, &u))
			return cfg_error(d, sect, k->name, k->type == CFG_UINT ?
					 "not a number (decimal or 0x hex)" :
					 "not a size (decimal, 0x hex, optional K/M/G/T suffix)");
		if (u < k->min || u > k->max) {
			if (k->type == CFG_SIZE)
				return cfg_error(d, sect, k->name, "out of range %#" PRIx64 "..%#" PRIx64,
						 k->min, k->max);
			return cfg_error(d, sect, k->name, "out of range %" PRIu64 "..%" PRIu64,
					 k->min, k->max);
		}
		if ((k->flags & CFG_F_POW2) && (u & (u - 1)))
			return cfg_error(d, sect, k->name, "not a power of two");
		if ((k->flags & CFG_F_ALIGN64) && u % 64)
			return cfg_error(d, sect, k->name,
					 "not a multiple of 64 bytes (64-byte aligned)");
		if ((k->flags & CFG_F_MEM) && u > d->phys_mem) {
			fmt_size(d->phys_mem, rng, sizeof(rng));
			return cfg_error(d, sect, k->name, "more than the memory of this machine "
					 "(%" PRIu64 " bytes = %s, physical pages x page size)",
					 d->phys_mem, rng);
		}
		if (out)
			store_uint(out, size, u);
		return 0;
	case CFG_DUR:
		r = cfg_parse_duration(v, &u);
		if (r == -2)
			return cfg_error(d, sect, k->name, "a duration needs a unit: ns, us, ms or s");
		if (r)
			return cfg_error(d, sect, k->name, "not a duration (e.g. 200us, 1.5s)");
		if (u < k->min || u > k->max)
			return cfg_error(d, sect, k->name, "out of range %s",
					 (fmt_range(k, rng, sizeof(rng)), rng));
		if (out)
			*(uint64_t *)out = u;
		return 0;
	case CFG_BOOL: {
		bool b;

		if (cfg_parse_bool(v, &b))
			return cfg_error(d, sect, k->name,
					 "not a boolean (on/off, yes/no, true/false, 1/0)");
		if (out)
			*(bool *)out = b;
		return 0;
	}
	case CFG_PROB: {
		char why[200];

		if (htoe_parse_prob(v, &x, why, sizeof(why)))
			return cfg_error(d, sect, k->name, "%s", why);
		if (out)
			*(double *)out = x;
		return 0;
	}
	case CFG_REAL:
		errno = 0;
		x = strtod(v, &end);
		if (end == v || *end || errno || !isfinite(x) || x < (double)k->min ||
		    (k->max && x > (double)k->max))
			return cfg_error(d, sect, k->name, "expected %s, %" PRIu64 "..%" PRIu64,
					 k->syntax ? k->syntax : "a number", k->min, k->max);
		if (out)
			*(double *)out = x;
		return 0;
	case CFG_STR:
		if (strlen(v) > k->max || (out && strlen(v) >= size))
			return cfg_error(d, sect, k->name, "too long (at most %" PRIu64 " characters)",
					 k->max);
		if (out)
			snprintf(out, size, "%s", v);
		return 0;
	case CFG_ENUM: {
		char tmp[256], *save = NULL;
		unsigned i = 0;

		snprintf(tmp, sizeof(tmp), "%s", k->syntax);
		for (char *t = strtok_r(tmp, "|", &save); t; t = strtok_r(NULL, "|", &save), i++)
			if (!strcasecmp(t, v)) {
				if (out)
					*(unsigned *)out = i;
				return 0;
			}
		fmt_choices(k->syntax, false, tmp, sizeof(tmp));
		return cfg_error(d, sect, k->name, "expected %s", tmp);
	}
	case CFG_MAC: {
		uint8_t m[6];

		if (cfg_parse_mac(v, m))
			return cfg_error(d, sect, k->name, "not a MAC address (xx:xx:xx:xx:xx:xx)");
		if ((m[0] & 1) || !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]))
			return cfg_error(d, sect, k->name,
					 "not a unicast MAC address (multicast or zero)");
		if (out)
			memcpy(out, m, 6);
		return 0;
	}
	case CFG_TEXT:
		return 0;
	}
	return -1;
}

int cfg_get_typed(struct cfg_doc *d, const char *sect, const char *key, void *out)
{
	const struct cfg_key *k = key_of(d, sect, key);
	const char *in;
	const struct cfg_ent *e;
	size_t size = 8;

	if (!k) {
		snprintf(d->err, d->errlen, "internal error: no key %s in [%s]", key, sect);
		return -1;
	}
	if (k->off != CFG_NO_FIELD)
		size = k->size;
	else if (k->type == CFG_STR)
		size = k->max + 1;
	e = cfg_get(d, sect, key, &in);
	if (!e) {
		if (k->def && k->def[0] != '(' && parse_typed(d, k, k->def, out, size, sect)) {
			snprintf(d->err, d->errlen, "internal error: default of [%s] %s", sect, key);
			return -1;
		}
		return 0;
	}
	return parse_typed(d, k, e->val, out, size, in) ? -1 : 1;
}

int cfg_apply(struct cfg_doc *d, int obj, const char *sect, void *base)
{
	long num;
	int kind = cfg_kind(d->sch, sect, &num);

	for (unsigned i = 0; i < d->sch->n_keys; i++) {
		const struct cfg_key *k = &d->sch->keys[i];

		if (k->obj != obj || k->off == CFG_NO_FIELD || kind < 0 ||
		    !(k->sects & CFG_S(kind)))
			continue;
		if (cfg_get_typed(d, sect, k->name, (char *)base + k->off) < 0)
			return -1;
	}
	return 0;
}

/* -------------------------------------------------------- reference */

static void type_text(const struct cfg_key *k, bool md, char *buf, size_t len)
{
	char r[96] = "", c[256];
	bool full = k->min == 0 && k->max == UINT64_MAX;

	if (!full && k->max == UINT64_MAX)
		snprintf(r, sizeof(r), "%" PRIu64 " or more", k->min);
	else if (!full && (k->type == CFG_UINT || k->type == CFG_SIZE || k->type == CFG_DUR))
		fmt_range(k, r, sizeof(r));
	switch (k->type) {
	case CFG_UINT: snprintf(buf, len, "integer %s", r); break;
	case CFG_SIZE: snprintf(buf, len, "size %s", r); break;
	case CFG_DUR: snprintf(buf, len, "duration %s", r); break;
	case CFG_BOOL: snprintf(buf, len, "boolean"); break;
	case CFG_PROB: snprintf(buf, len, "probability"); break;
	case CFG_REAL: snprintf(buf, len, "number %" PRIu64 "..%" PRIu64, k->min, k->max); break;
	case CFG_STR: snprintf(buf, len, "text"); break;
	case CFG_MAC: snprintf(buf, len, "MAC"); break;
	case CFG_ENUM: fmt_choices(k->syntax, md, c, sizeof(c)); snprintf(buf, len, "%s", c); break;
	case CFG_TEXT: snprintf(buf, len, "%s", k->syntax); break;
	}
	for (char *e = buf + strlen(buf); e > buf && e[-1] == ' ';)
		*--e = 0;
	if (k->flags & CFG_F_ALIGN64)
		strncat(buf, ", multiple of 64", len - strlen(buf) - 1);
	if (k->flags & CFG_F_POW2)
		strncat(buf, ", power of two", len - strlen(buf) - 1);
	if (k->flags & CFG_F_MEM)
		strncat(buf, ", at most the machine's memory", len - strlen(buf) - 1);
}

/* the value of a field, formatted as the key's type ("" if it cannot) */
static void fmt_field(const struct cfg_key *k, const void *p, char *buf, size_t len)
{
	uint64_t u = 0;

	buf[0] = 0;
	switch (k->type) {
	case CFG_UINT:
	case CFG_SIZE:
		switch (k->size) {
		case 1: u = *(const uint8_t *)p; break;
		case 2: u = *(const uint16_t *)p; break;
		case 4: u = *(const uint32_t *)p; break;
		default: u = *(const uint64_t *)p; break;
		}
		if (k->type == CFG_SIZE)
			fmt_size(u, buf, len);
		else
			fmt_uint(u, buf, len);
		break;
	case CFG_DUR: fmt_dur(*(const uint64_t *)p, buf, len); break;
	case CFG_BOOL: snprintf(buf, len, "%s", *(const bool *)p ? "on" : "off"); break;
	case CFG_PROB:
	case CFG_REAL: snprintf(buf, len, "%g", *(const double *)p); break;
	default: break;
	}
}

/* the default column: "`1ms` (library: `200us`)", "required", ... */
static void default_text(const struct cfg_schema *sch, const struct cfg_key *k, void *obj,
			 char *buf, size_t len)
{
	char lib[64] = "";
	bool haslib = false;

	if (obj && k->obj >= 0 && k->off != CFG_NO_FIELD && sch->obj_defaults) {
		memset(obj, 0, sch->obj_size_max);
		sch->obj_defaults(k->obj, obj);
		fmt_field(k, (char *)obj + k->off, lib, sizeof(lib));
		/* a field the defaults leave zero has no library default */
		for (size_t i = 0; i < k->size && !haslib; i++)
			haslib = ((const char *)obj)[k->off + i] != 0;
	}
	if (k->flags & CFG_F_REQUIRED)
		snprintf(buf, len, "required");
	else if (!k->def)
		snprintf(buf, len, lib[0] ? "`%s`" : "—", lib);
	else if (k->def[0] == '(')
		snprintf(buf, len, "%.*s", (int)strlen(k->def) - 2, k->def + 1);
	else if (haslib && strcmp(lib, k->def))
		snprintf(buf, len, "`%s` (library: `%s`)", k->def, lib);
	else
		snprintf(buf, len, "`%s`", k->def);
}

/* markdown inline -> roff: `x` bold, [t](u) -> t, escapes */
static void man_text(FILE *f, const char *s)
{
	bool code = false, bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		bol = false;
		if (*s == '`') {
			fputs(code ? "\\fR" : "\\fB", f);
			code = !code;
		} else if (*s == '\\') {
			fputs("\\e", f);
		} else if (*s == '[' && !code) {
			const char *rb = strchr(s, ']');

			if (rb && rb[1] == '(' && strchr(rb, ')')) {
				fprintf(f, "%.*s", (int)(rb - s - 1), s + 1);
				s = strchr(rb, ')');
			} else {
				fputc(*s, f);
			}
		} else if (*s == '\n') {
			if (s[1] == '\n') {
				fputs("\n.PP\n", f);
				s++;
			} else {
				fputc('\n', f);
			}
			bol = true;
		} else if (*s == '-' && code) {
			fputs("\\-", f);
		} else {
			fputc(*s, f);
		}
	}
	if (code)
		fputs("\\fR", f);
	fputc('\n', f);
}

/* the keys listed under section kind k: valid there, and not in its
 * fallback (those are listed there) */
static bool listed(const struct cfg_schema *sch, unsigned k, const struct cfg_key *key)
{
	const char *fb = sch->sects[k].fallback;
	long num;
	int fk = fb ? cfg_kind(sch, fb, &num) : -1;

	if (!(key->sects & CFG_S(k)))
		return false;
	return fk < 0 || fk == (int)k || !(key->sects & CFG_S(fk));
}

void cfg_reference(const struct cfg_schema *sch, enum cfg_ref_format fmt, FILE *f)
{
	void *obj = sch->obj_size_max ? malloc(sch->obj_size_max) : NULL;
	char ty[320], def[320];

	if (fmt == CFG_REF_MAN)
		fputs(".\\\" generated from app/bridge/cfgkeys.c: do not edit\n"
		      ".TH HTOE.INI 5 \"\" \"htoe\" \"File formats\"\n"
		      ".SH NAME\nhtoe.ini \\- configuration file of htoe\\-bridge and htoe\\-dimm\n"
		      ".SH SYNOPSIS\n.B htoe\\-bridge\n.I EAL-ARGS\n.B \\-\\- \\-\\-config\n"
		      ".I FILE\n[\\fB\\-\\-set\\fR \\fISECTION.KEY=VALUE\\fR]...\n"
		      ".SH DESCRIPTION\nAn INI file: \\fB[section]\\fR lines, then \\fBkey = value\\fR "
		      "lines; only \\fB;\\fR starts a comment. Numbered sections are written "
		      "\\fB[node 1]\\fR, \\fB[port 0]\\fR. A key before the first section, an empty "
		      "value, a key or section given twice, unknown sections and keys are errors; "
		      "every error names the file and line, the section, the key and the value, and "
		      "the program exits with status 2 before anything starts. The file is a "
		      "regular text file of at most 1 MiB.\n.PP\nValue types: \\fIinteger\\fR "
		      "(decimal or 0x hex), \\fIsize\\fR (an integer with an optional K, M, G or T "
		      "suffix), \\fIduration\\fR (a number and ns, us, ms or s; 0 alone), "
		      "\\fIprobability\\fR (0..1 or a percentage such as 1%; exactly one only as "
		      "100%), \\fIboolean\\fR (on/off, yes/no, true/false, 1/0), \\fIMAC\\fR "
		      "(xx:xx:xx:xx:xx:xx). Negative numbers are refused.\n.PP\n"
		      "\\fB\\-\\-set\\fR \\fISECTION.KEY=VALUE\\fR overrides or adds one value, "
		      "e.g. \\fB\\-\\-set impair.loss=1%\\fR or \\fB\\-\\-set 'node 1.mtu=9000'\\fR.\n"
		      ".SH SECTIONS\n", f);
	for (unsigned k = 0; k < sch->n_sects; k++) {
		const struct cfg_sect *s = &sch->sects[k];

		if (fmt == CFG_REF_MD)
			fprintf(f, "### %s\n\n%s\n\n| key | type | default | meaning |\n"
				"|---|---|---|---|\n", s->title, s->help);
		else if (fmt == CFG_REF_MAN) {
			fprintf(f, ".SS \"%s\"\n", s->title);
			man_text(f, s->help);
		} else
			fprintf(f, "%s\n", s->title);
		for (unsigned i = 0; i < sch->n_keys; i++) {
			const struct cfg_key *key = &sch->keys[i];
			const char *star = key->flags & CFG_F_PREFIX ? "*" : "";

			if (!listed(sch, k, key))
				continue;
			type_text(key, fmt == CFG_REF_MD, ty, sizeof(ty));
			default_text(sch, key, obj, def, sizeof(def));
			if (fmt == CFG_REF_MD) {
				fprintf(f, "| `%s%s` | %s | %s | %s |\n", key->name, star, ty, def,
					key->help);
			} else if (fmt == CFG_REF_MAN) {
				fprintf(f, ".TP\n\\fB%s%s\\fR = ", key->name, star);
				man_text(f, ty);
				fputs("Default: ", f);
				man_text(f, def);
				fputs(".br\n", f);
				man_text(f, key->help);
			} else {
				fprintf(f, "  %s%s = %s; default: %s\n", key->name, star, ty, def);
			}
		}
		if (fmt == CFG_REF_MD)
			fprintf(f, s->after ? "\n%s\n\n" : "\n", s->after);
		else if (fmt == CFG_REF_MAN && s->after) {
			fputs(".PP\n", f);
			man_text(f, s->after);
		}
	}
	if (fmt == CFG_REF_MAN) {
		fputs(".SH REMOVED KEYS\nThese keys are refused with an explanation:\n", f);
		for (unsigned r = 0; r < sch->n_removed; r++) {
			fprintf(f, ".TP\n\\fB%s\\fR (removed in %s)\n", sch->removed[r].name,
				sch->removed[r].version);
			man_text(f, sch->removed[r].why);
		}
		fputs(".SH EXIT STATUS\n2 for every configuration error.\n"
		      ".SH SEE ALSO\n\\fBhtoe\\-bridge\\fR(1), docs/config.md\n", f);
	} else if (fmt == CFG_REF_MD && sch->n_removed) {
		fputs("### Removed keys\n\nRefused with this explanation for one release:\n\n"
		      "| key | removed in | why |\n|---|---|---|\n", f);
		for (unsigned r = 0; r < sch->n_removed; r++)
			fprintf(f, "| `%s` | %s | %s |\n", sch->removed[r].name,
				sch->removed[r].version, sch->removed[r].why);
	}
	free(obj);
}
