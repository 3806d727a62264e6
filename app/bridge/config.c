/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge configuration. See config.h and docs/config.md.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "default_config.h"

/* ------------------------------------------------------------- defaults */

#define DEF_MEM_BASE        0x100000ull
#define DEF_MEM_SIZE        (64ull * 1024)
#define DEF_BRIDGE_UNITIDS  4u
#define DEF_REQ_UNITIDS     4u
#define DEF_WL_OPS          100000ull
#define DEF_WL_WINDOW       128u
#define DEF_RTO_NS          1000000ull      /* 1 ms: a burst of frames through the
					     * software endpoint model takes longer than
					     * the library's 200 us on a slow core */
#define DEF_RTO_MAX_NS      200000000ull    /* 200 ms */
#define DEF_RTO_MIN_NS      1000000ull      /* 1 ms: floor of the adaptive RTO; a
					     * descheduled poller stretches single round
					     * trips far beyond the smoothed RTT (the
					     * lossless demo: 835 spurious retransmissions
					     * in 2 s with 200 us, 9 with 1 ms) */
#define DEF_RETRY_LIMIT     50u             /* ~9 s of silence before a VL reset */
#define DEF_STALL_TIMEOUT_NS 10000000000ull /* 10 s */
#define DEF_NP_TIMEOUT_NS   30000000000ull  /* 30 s */
#define MAX_MEM_SIZE        (1ull << 32)
#define LINE_MAX_CFG        (CFG_NAME_LEN + CFG_VALUE_LEN + 4 - 1) /* rte_cfgfile's buffer */

const char *br_cfg_default_text(void)
{
	return br_default_ini;
}

void br_overrides_init(struct br_overrides *o)
{
	memset(o, 0, sizeof(*o));
	o->duration_ns = -1;
	o->transactions = -1;
	o->stats_ns = -1;
}

/* --------------------------------------------------------- value parsers */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Unsigned integer: decimal or 0x hex, nothing else. */
static int parse_u64_plain(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end) ? -1 : 0;
}

int br_parse_size(const char *s, uint64_t *v)
{
	char buf[64], *end;
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
	if (!n || buf[0] == '-' || buf[0] == '+' || isspace((unsigned char)buf[0]))
		return -1;
	errno = 0;
	x = strtoull(buf, &end, 0);
	if (errno || end == buf || *end)
		return -1;
	if (shift && x > (UINT64_MAX >> shift))
		return -1;
	*v = x << shift;
	return 0;
}

int br_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
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
	for (unsigned i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u)) {
			double v = x * units[i].mul;

			if (v > 1e18)
				return -1;
			*ns = (uint64_t)llround(v);
			return 0;
		}
	return -1;
}

int br_parse_mac(const char *s, uint8_t mac[6])
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

void br_format_mac(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* A probability: "0.01" or "1%". */
static int parse_prob(const char *s, double *p)
{
	char *end;
	double x;

	if (!*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	x = strtod(s, &end);
	if (end == s || !isfinite(x))
		return -1;
	if (*end == '%' && !end[1])
		x /= 100;
	else if (*end)
		return -1;
	if (x < 0 || x > 1)
		return -1;
	*p = x;
	return 0;
}

static int parse_bool(const char *s, bool *b)
{
	static const char *yes[] = { "on", "yes", "true", "1" };
	static const char *no[] = { "off", "no", "false", "0" };

	for (unsigned i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*b = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*b = false;
			return 0;
		}
	}
	return -1;
}

static const char *const op_names[HT_OP__COUNT] = {
	[HT_OP_READ] = "rd", [HT_OP_WRITE_P] = "wrp", [HT_OP_WRITE_NP] = "wrn",
	[HT_OP_FLUSH] = "flush", [HT_OP_FENCE] = "fence", [HT_OP_FETCH_ADD] = "fadd",
	[HT_OP_CAS] = "cas",
};

/* "rd=35,wrp=25,...": weights of the named ops, the others 0. */
static int parse_mix(const char *s, unsigned w[HT_OP__COUNT], char *why, size_t whylen)
{
	char buf[CFG_VALUE_LEN], *save = NULL;
	unsigned sum = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	memset(w, 0, sizeof(unsigned) * HT_OP__COUNT);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;
		unsigned i;

		tok = (char *)skip_ws(tok);
		if (!eq) {
			snprintf(why, whylen, "'%s' is not OP=WEIGHT", tok);
			return -1;
		}
		*eq = 0;
		for (char *e = eq - 1; e >= tok && isspace((unsigned char)*e); e--)
			*e = 0;
		for (i = 0; i < HT_OP__COUNT; i++)
			if (!strcmp(tok, op_names[i]))
				break;
		if (i == HT_OP__COUNT) {
			snprintf(why, whylen,
				 "unknown operation '%s' (rd, wrp, wrn, flush, fence, fadd, cas)", tok);
			return -1;
		}
		if (parse_u64_plain(skip_ws(eq + 1), &v) || v > 1000000) {
			snprintf(why, whylen, "weight of %s is not a number 0..1000000", tok);
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

/* ------------------------------------------------------- parse context */

struct member {
	uint16_t id;
	bool     node_sect;    /* [node N] (else [peer N]) */
	bool     local;        /* hosted here */
	bool     has_mac;
	uint8_t  mac[6];
	int      pcp;          /* -1: default */
	uint64_t mem_base, mem_size, mem_seed;
	char     sect[32];
	char     mac_label[HTOE_MAP_LABEL_MAX];
};

struct ctx {
	struct rte_cfgfile *cf;
	const char *file;
	char *err;
	size_t errlen;
	unsigned n_sets, n_new_sects;
	char new_sect[BR_MAX_SETS][CFG_NAME_LEN]; /* sections only --set gives */
	char set_sect[BR_MAX_SETS][CFG_NAME_LEN];
	char set_key[BR_MAX_SETS][CFG_NAME_LEN];
	unsigned n_members;
	struct member members[BR_MAX_MEMBERS];
};

static const char *origin(const struct ctx *x, const char *sect, const char *key)
{
	for (unsigned i = 0; i < x->n_sets; i++)
		if (!strcmp(x->set_sect[i], sect) && key && !strcmp(x->set_key[i], key))
			return "--set";
	for (unsigned i = 0; i < x->n_new_sects; i++)
		if (!strcmp(x->new_sect[i], sect))
			return "--set";
	return x->file;
}

/* "FILE: [sect] key = 'value': message" */
static int __attribute__((format(printf, 5, 6)))
cerr(struct ctx *x, const char *sect, const char *key, const char *val, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (key && val)
		snprintf(x->err, x->errlen, "%s: [%s] %s = '%s': %s", origin(x, sect, key), sect,
			 key, val, msg);
	else if (key)
		snprintf(x->err, x->errlen, "%s: [%s] %s: %s", origin(x, sect, key), sect, key, msg);
	else
		snprintf(x->err, x->errlen, "%s: [%s]: %s", origin(x, sect, NULL), sect, msg);
	return -1;
}

/* An htoe_map label "FILE:[sect] key" (file without its directories, so
 * that it fits HTOE_MAP_LABEL_MAX). */
static void make_label(const struct ctx *x, char label[HTOE_MAP_LABEL_MAX], const char *sect,
		       const char *key)
{
	const char *f = origin(x, sect, key), *slash = strrchr(f, '/');
	char tmp[BR_PATH_MAX + 2 * CFG_NAME_LEN];

	if (slash && slash[1])
		f = slash + 1;
	snprintf(tmp, sizeof(tmp), "%s:[%s] %s", f, sect, key);
	_Static_assert(HTOE_MAP_LABEL_MAX == 64, "the precision below");
	snprintf(label, HTOE_MAP_LABEL_MAX, "%.63s", tmp);
}

static void where_of(const struct ctx *x, const char *sect, const char *key, char *buf,
		     size_t len)
{
	const char *v = key ? rte_cfgfile_get_entry(x->cf, sect, key) : NULL;

	if (v)
		snprintf(buf, len, "%s: [%s] %s = '%s'", origin(x, sect, key), sect, key, v);
	else if (key)
		snprintf(buf, len, "%s: [%s] %s", origin(x, sect, NULL), sect, key);
	else
		snprintf(buf, len, "%s: [%s]", origin(x, sect, NULL), sect);
}

/* A value looked up in sect, then in fallback (may be NULL). *in tells
 * where it was found (for messages). */
static const char *get2(struct ctx *x, const char *sect, const char *fallback, const char *key,
			const char **in)
{
	const char *v = rte_cfgfile_get_entry(x->cf, sect, key);

	*in = sect;
	if (!v && fallback && rte_cfgfile_has_section(x->cf, fallback)) {
		v = rte_cfgfile_get_entry(x->cf, fallback, key);
		*in = fallback;
	}
	return v;
}

/* Of two related keys, the one to name in a message: k1 if it is set
 * (in sect or fallback), else k2 (set or not). */
static const char *blame(struct ctx *x, const char *sect, const char *fb, const char *k1,
			 const char *k2, const char **in, const char **val)
{
	*val = get2(x, sect, fb, k1, in);
	if (*val)
		return k1;
	*val = get2(x, sect, fb, k2, in);
	if (!*val) {
		*in = sect;
		*val = "(default)";
	}
	return k2;
}

static int get_uint(struct ctx *x, const char *sect, const char *fb, const char *key,
		    uint64_t min, uint64_t max, uint64_t def, uint64_t *out)
{
	const char *in, *v = get2(x, sect, fb, key, &in);
	uint64_t n;

	*out = def;
	if (!v)
		return 0;
	if (parse_u64_plain(v, &n))
		return cerr(x, in, key, v, "not a number (decimal or 0x hex)");
	if (n < min || n > max)
		return cerr(x, in, key, v, "out of range %" PRIu64 "..%" PRIu64, min, max);
	*out = n;
	return 0;
}

static int get_size(struct ctx *x, const char *sect, const char *fb, const char *key,
		    uint64_t min, uint64_t max, uint64_t def, uint64_t *out)
{
	const char *in, *v = get2(x, sect, fb, key, &in);
	uint64_t n;

	*out = def;
	if (!v)
		return 0;
	if (br_parse_size(v, &n))
		return cerr(x, in, key, v, "not a size (decimal, 0x hex, optional K/M/G/T suffix)");
	if (n < min || n > max)
		return cerr(x, in, key, v, "out of range %#" PRIx64 "..%#" PRIx64, min, max);
	*out = n;
	return 0;
}

static int get_dur(struct ctx *x, const char *sect, const char *fb, const char *key,
		   uint64_t min, uint64_t max, uint64_t def, uint64_t *out)
{
	const char *in, *v = get2(x, sect, fb, key, &in);
	uint64_t n;
	int r;

	*out = def;
	if (!v)
		return 0;
	r = br_parse_duration(v, &n);
	if (r == -2)
		return cerr(x, in, key, v, "a duration needs a unit: ns, us, ms or s");
	if (r)
		return cerr(x, in, key, v, "not a duration (e.g. 200us, 1.5s)");
	if (n < min || n > max)
		return cerr(x, in, key, v, "out of range %" PRIu64 " ns..%" PRIu64 " ns", min, max);
	*out = n;
	return 0;
}

static int get_bool(struct ctx *x, const char *sect, const char *fb, const char *key, bool def,
		    bool *out)
{
	const char *in, *v = get2(x, sect, fb, key, &in);

	*out = def;
	if (v && parse_bool(v, out))
		return cerr(x, in, key, v, "not a boolean (on/off, yes/no, true/false, 1/0)");
	return 0;
}

static int get_prob(struct ctx *x, const char *sect, const char *fb, const char *key, double def,
		    double *out)
{
	const char *in, *v = get2(x, sect, fb, key, &in);

	*out = def;
	if (v && parse_prob(v, out))
		return cerr(x, in, key, v, "not a probability (0..1, or a percentage like 1%%)");
	return 0;
}

/* "CMD[/DATA]" receive buffers of a VC */
static int get_bufs(struct ctx *x, const char *sect, const char *fb, const char *key,
		    uint16_t out[2], bool *given)
{
	const char *in, *v = get2(x, sect, fb, key, &in);
	uint64_t a, b;
	char buf[CFG_VALUE_LEN], *slash;

	*given = v != NULL;
	if (!v)
		return 0;
	snprintf(buf, sizeof(buf), "%s", v);
	slash = strchr(buf, '/');
	if (slash)
		*slash = 0;
	if (parse_u64_plain(buf, &a) || (slash && parse_u64_plain(slash + 1, &b)))
		return cerr(x, in, key, v, "expected CMD or CMD/DATA buffer counts");
	if (!slash)
		b = a;
	if (a < 1 || a > 4096 || b < 1 || b > 4096)
		return cerr(x, in, key, v, "buffer counts out of range 1..4096");
	out[0] = (uint16_t)a;
	out[1] = (uint16_t)b;
	return 0;
}

/* ------------------------------------------------ syntax pre-check of a file */

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

/* rte_cfgfile skips lines it does not understand and fails without saying
 * why; read the file once ourselves to point at the line. */
static int prescan(struct ctx *x, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	char (*sects)[CFG_NAME_LEN] = NULL;
	char (*keys)[CFG_NAME_LEN] = NULL;
	unsigned n_sects = 0, n_keys = 0, lineno = 0;
	int rc = -1;

	if (!f) {
		snprintf(x->err, x->errlen, "%s: cannot open: %s", x->file, strerror(errno));
		return -1;
	}
	sects = calloc(1024, CFG_NAME_LEN);
	keys = calloc(1024, CFG_NAME_LEN);
	if (!sects || !keys) {
		snprintf(x->err, x->errlen, "%s: out of memory", x->file);
		goto out;
	}
#define PERR(...) do { \
		int o_ = snprintf(x->err, x->errlen, "%s:%u: ", x->file, lineno); \
		if (o_ >= 0 && (size_t)o_ < x->errlen) \
			snprintf(x->err + o_, x->errlen - (size_t)o_, __VA_ARGS__); \
		goto out; \
	} while (0)
	while (fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		char *s, *c, *eq;

		lineno++;
		if (len > LINE_MAX_CFG || (len == sizeof(line) - 1 && line[len - 1] != '\n'))
			PERR("line longer than %u characters (rte_cfgfile limit)", LINE_MAX_CFG);
		for (c = line; (c = strchr(c, ';')) != NULL; c++)
			if (c == line || c[-1] != '\\') {
				*c = 0;
				break;
			}
		s = trim(line);
		if (!*s)
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']'), *name;

			if (!end)
				PERR("'[' without ']'");
			if (*trim(end + 1))
				PERR("text after ']' (comments start with ';')");
			*end = 0;
			name = trim(s + 1);
			if (!*name)
				PERR("empty section name");
			if (strlen(name) >= CFG_NAME_LEN)
				PERR("section name longer than %u characters", CFG_NAME_LEN - 1);
			for (unsigned i = 0; i < n_sects; i++)
				if (!strcmp(sects[i], name))
					PERR("section [%s] appears twice", name);
			if (n_sects == 1024)
				PERR("more than 1024 sections");
			snprintf(sects[n_sects++], CFG_NAME_LEN, "%s", name);
			n_keys = 0;
			continue;
		}
		eq = strchr(s, '=');
		if (!eq)
			PERR("'%.60s' is neither a [section] nor a key = value line (comments start with ';')",
			     s);
		*eq = 0;
		char *key = trim(s), *val = trim(eq + 1);

		if (!n_sects)
			PERR("key '%s' before the first [section]", key);
		if (!*key)
			PERR("'=' without a key in [%s]", sects[n_sects - 1]);
		if (*key == '#')
			PERR("[%s] '%s': '#' does not start a comment here; use ';'", sects[n_sects - 1],
			     key);
		if (!*val)
			PERR("[%s] %s: no value after '='", sects[n_sects - 1], key);
		if (strlen(key) >= CFG_NAME_LEN)
			PERR("[%s] key longer than %u characters", sects[n_sects - 1], CFG_NAME_LEN - 1);
		if (strlen(val) >= CFG_VALUE_LEN)
			PERR("[%s] %s: value longer than %u characters", sects[n_sects - 1], key,
			     CFG_VALUE_LEN - 1);
		for (unsigned i = 0; i < n_keys; i++)
			if (!strcmp(keys[i], key))
				PERR("[%s] %s: key given twice", sects[n_sects - 1], key);
		if (n_keys == 1024)
			PERR("[%s]: more than 1024 keys", sects[n_sects - 1]);
		snprintf(keys[n_keys++], CFG_NAME_LEN, "%s", key);
	}
#undef PERR
	if (ferror(f)) {
		snprintf(x->err, x->errlen, "%s: read error: %s", x->file, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(sects);
	free(keys);
	fclose(f);
	return rc;
}

/* --------------------------------------------------------- section names */

enum sect_kind { S_GLOBAL, S_BRIDGE, S_NODE, S_PEER, S_PORT, S_MAP, S_IMPAIR, S_WORKLOAD, S_MACSEC,
		S__N };

static const char *const sect_names[S__N] = {
	"global", "bridge", "node", "peer", "port", "map", "impair", "workload", "macsec",
};
/* sections that need / allow a number */
static const bool sect_numbered[S__N] = { false, false, true, true, true, false, true, true,
	true };
static const bool sect_plain_ok[S__N] = { true, true, false, false, false, true, true, true,
	true };

#define BRIDGE_KEYS "mtu", "vlan", "vid", "default_pcp", "epoch", "unitid_base", \
	"bridge_unitids", "requester_unitids", "bufs_posted", "bufs_nonposted", \
	"bufs_response", "reserve", "max_per_vl", "txq_pkts", "window", "ack_every", \
	"ack_delay", "retry_limit", "rto", "rto_min", "rto_max", "flush", "np_timeout", \
	"stall_timeout", "mem_base", "mem_size", "retry"

static const char *const keys_global[] = { "stats_interval", "duration", "drain_timeout",
	"capture", "capture_ring", "mbufs", "burst", "tx_drain", "exit_when_done", "lcore_pause",
	"lcore_pause_max", "lcore_pause_seed", NULL };
static const char *const keys_bridge[] = { BRIDGE_KEYS, NULL };
static const char *const keys_node[] = { BRIDGE_KEYS, "mac", "port", "lcore", "pcp", "mem_seed",
	NULL };
static const char *const keys_peer[] = { "mac", "pcp", "mem_base", "mem_size", "mem_seed", NULL };
static const char *const keys_port[] = { "dev", "crossover", "ring_size", "rxd", "txd",
	"promisc", "capture", NULL };
static const char *const keys_map[] = { "mask", "shift", "remote_base", NULL }; /* + range* */
static const char *const keys_impair[] = { "direction", "seed", "loss", "burst_loss",
	"burst_len", "reorder", "reorder_delay", "dup", "corrupt", "delay", "jitter", "queue",
	"outage_start", "outage_len", NULL };
static const char *const keys_workload[] = { "target", "base", "size", "ops", "duration", "mix",
	"byte_pct", "window", "sweep", "seed", "sizes", NULL };

static const char *const *const sect_keys[S__N] = {
	keys_global, keys_bridge, keys_node, keys_peer, keys_port, keys_map, keys_impair,
	keys_workload, br_macsec_keys,
};

/* Parse "kind" or "kind N". Returns the kind or -1; *num = N or -1. */
static int sect_parse(const char *name, long *num)
{
	char word[CFG_NAME_LEN];
	size_t n = 0;

	*num = -1;
	while (name[n] && isalpha((unsigned char)name[n]) && n < sizeof(word) - 1) {
		word[n] = name[n];
		n++;
	}
	word[n] = 0;
	for (int k = 0; k < S__N; k++) {
		if (strcmp(word, sect_names[k]))
			continue;
		if (!name[n])
			return sect_plain_ok[k] ? k : -1;
		if (!sect_numbered[k] || name[n] != ' ' || !isdigit((unsigned char)name[n + 1]))
			return -1;
		char *end;

		errno = 0;
		long v = strtol(name + n + 1, &end, 10);
		if (errno || *end || v < 0 || v > 65535)
			return -1;
		*num = v;
		return k;
	}
	return -1;
}

static bool key_known(int kind, const char *key)
{
	if (kind == S_MAP && !strncmp(key, "range", 5))
		return true;
	for (const char *const *k = sect_keys[kind]; *k; k++)
		if (!strcmp(*k, key))
			return true;
	return false;
}

/* Every section and key known. */
static int check_names(struct ctx *x)
{
	int n = rte_cfgfile_num_sections(x->cf, NULL, 0);
	char **names;
	int rc = 0;

	if (n <= 0)
		return 0;
	names = calloc((size_t)n, sizeof(*names));
	if (!names)
		return cerr(x, "global", NULL, NULL, "out of memory");
	for (int i = 0; i < n; i++) {
		names[i] = malloc(CFG_NAME_LEN);
		if (!names[i]) {
			rc = cerr(x, "global", NULL, NULL, "out of memory");
			goto out;
		}
	}
	rte_cfgfile_sections(x->cf, names, n);
	for (int i = 0; i < n && !rc; i++) {
		long num;
		int kind = sect_parse(names[i], &num);

		if (kind < 0) {
			rc = cerr(x, names[i], NULL, NULL,
				  "unknown section (known: [global], [bridge], [node N], [peer N], "
				  "[port N], [map], [impair], [impair N], [workload], [workload N], "
				  "[macsec], [macsec N])");
			break;
		}
		int ne = rte_cfgfile_section_num_entries(x->cf, names[i]);
		struct rte_cfgfile_entry *e = ne > 0 ? calloc((size_t)ne, sizeof(*e)) : NULL;

		if (ne > 0 && !e) {
			rc = cerr(x, names[i], NULL, NULL, "out of memory");
			break;
		}
		if (ne > 0)
			rte_cfgfile_section_entries(x->cf, names[i], e, ne);
		for (int j = 0; j < ne; j++)
			if (!key_known(kind, e[j].name)) {
				rc = cerr(x, names[i], e[j].name, e[j].value,
					  "unknown key in a [%s] section (see docs/config.md)",
					  sect_names[kind]);
				break;
			}
		free(e);
	}
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Section names of one kind with their numbers, sorted by number. */
static int list_numbered(struct ctx *x, int kind, long *nums, unsigned max, unsigned *count)
{
	int n = rte_cfgfile_num_sections(x->cf, NULL, 0);
	char **names = NULL;
	unsigned c = 0;

	*count = 0;
	if (n <= 0)
		return 0;
	names = calloc((size_t)n, sizeof(*names));
	if (!names)
		return -1;
	for (int i = 0; i < n; i++)
		if (!(names[i] = malloc(CFG_NAME_LEN))) {
			for (int j = 0; j < i; j++)
				free(names[j]);
			free(names);
			return -1;
		}
	rte_cfgfile_sections(x->cf, names, n);
	for (int i = 0; i < n; i++) {
		long num;

		if (sect_parse(names[i], &num) == kind && num >= 0) {
			if (c == max) {
				cerr(x, names[i], NULL, NULL, "too many [%s N] sections (at most %u)",
				     sect_names[kind], max);
				c = max + 1;
				break;
			}
			nums[c++] = num;
		}
	}
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (c > max)
		return -1;
	/* insertion sort: small */
	for (unsigned i = 1; i < c; i++)
		for (unsigned j = i; j > 0 && nums[j - 1] > nums[j]; j--) {
			long t = nums[j];

			nums[j] = nums[j - 1];
			nums[j - 1] = t;
		}
	*count = c;
	return 0;
}

/* ------------------------------------------------------------ [global] */

static int parse_global(struct ctx *x, struct br_config *c, const struct br_overrides *o)
{
	const char *g = "global";
	uint64_t v;
	bool b;

	if (get_dur(x, g, NULL, "stats_interval", 0, 3600000000000ull, 1000000000ull,
		    &c->stats_interval_ns) ||
	    get_dur(x, g, NULL, "duration", 0, 86400000000000ull * 365, 0, &c->duration_ns) ||
	    get_dur(x, g, NULL, "drain_timeout", 1000000, 3600000000000ull, 10000000000ull,
		    &c->drain_timeout_ns) ||
	    get_dur(x, g, NULL, "tx_drain", 1000, 100000000, 100000, &c->tx_drain_ns) ||
	    get_uint(x, g, NULL, "capture_ring", 64, 1u << 20, 8192, &v))
		return -1;
	c->capture_ring = (unsigned)v;
	if (get_uint(x, g, NULL, "mbufs", 0, 1u << 24, 0, &v))
		return -1;
	c->mbufs = (unsigned)v;
	if (c->mbufs && c->mbufs < 1024)
		return cerr(x, g, "mbufs", rte_cfgfile_get_entry(x->cf, g, "mbufs"),
			    "at least 1024 (or 0: computed)");
	if (get_uint(x, g, NULL, "burst", 1, 64, 32, &v))
		return -1;
	c->burst = (unsigned)v;
	if (get_bool(x, g, NULL, "exit_when_done", true, &b))
		return -1;
	c->exit_when_done = b;
	if (get_prob(x, g, NULL, "lcore_pause", 0, &c->lcore_pause) ||
	    get_dur(x, g, NULL, "lcore_pause_max", 1000, 10000000000ull, 10000000,
		    &c->lcore_pause_max_ns) ||
	    get_uint(x, g, NULL, "lcore_pause_seed", 0, UINT64_MAX, 1, &c->lcore_pause_seed))
		return -1;
	const char *cap = rte_cfgfile_get_entry(x->cf, g, "capture");

	if (cap) {
		snprintf(c->capture_dir, sizeof(c->capture_dir), "%s", cap);
		where_of(x, g, "capture", c->capture_where, sizeof(c->capture_where));
	}
	if (o->capture_dir) {
		snprintf(c->capture_dir, sizeof(c->capture_dir), "%s", o->capture_dir);
		snprintf(c->capture_where, sizeof(c->capture_where), "--capture '%s'",
			 o->capture_dir);
	}
	if (o->duration_ns >= 0)
		c->duration_ns = (uint64_t)o->duration_ns;
	if (o->stats_ns >= 0)
		c->stats_interval_ns = (uint64_t)o->stats_ns;
	return 0;
}

/* ----------------------------------------------------- [node N] [peer N] */

static struct member *member_find(struct ctx *x, uint16_t id)
{
	for (unsigned i = 0; i < x->n_members; i++)
		if (x->members[i].id == id)
			return &x->members[i];
	return NULL;
}

static bool id_selected(const char *list, uint16_t id)
{
	char buf[256], *save = NULL;

	if (!list)
		return true;
	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (!parse_u64_plain(t, &v) && v == id)
			return true;
	}
	return false;
}

static int parse_members(struct ctx *x, const struct br_overrides *o)
{
	long nums[BR_MAX_MEMBERS + 1];
	unsigned n;

	for (int kind = S_NODE; kind <= S_PEER; kind++) {
		if (list_numbered(x, kind, nums, BR_MAX_MEMBERS, &n))
			return -1;
		for (unsigned i = 0; i < n; i++) {
			struct member *m;
			char sect[32];
			const char *v;
			uint64_t u;

			snprintf(sect, sizeof(sect), "%s %ld", sect_names[kind], nums[i]);
			if (member_find(x, (uint16_t)nums[i]))
				return cerr(x, sect, NULL, NULL,
					    "node %ld is both a [node] and a [peer]", nums[i]);
			if (x->n_members == BR_MAX_MEMBERS)
				return cerr(x, sect, NULL, NULL,
					    "more than %u nodes and peers (one VL per peer, at most %u)",
					    BR_MAX_MEMBERS, HTOE_MAX_PEERS);
			m = &x->members[x->n_members++];
			memset(m, 0, sizeof(*m));
			m->id = (uint16_t)nums[i];
			m->node_sect = kind == S_NODE;
			m->local = m->node_sect && id_selected(o->only_nodes, m->id);
			snprintf(m->sect, sizeof(m->sect), "%s", sect);
			v = rte_cfgfile_get_entry(x->cf, sect, "mac");
			if (v) {
				if (br_parse_mac(v, m->mac))
					return cerr(x, sect, "mac", v,
						    "not a MAC address (xx:xx:xx:xx:xx:xx)");
				if ((m->mac[0] & 1) || !(m->mac[0] | m->mac[1] | m->mac[2] | m->mac[3] |
							 m->mac[4] | m->mac[5]))
					return cerr(x, sect, "mac", v,
						    "not a unicast MAC address (multicast or zero)");
				m->has_mac = true;
			} else {
				htoe_map_node_mac(m->id, m->mac);
			}
			make_label(x, m->mac_label, sect, "mac");
			m->pcp = -1;
			if (get_uint(x, sect, NULL, "pcp", 0, 7, 0, &u))
				return -1;
			if (rte_cfgfile_get_entry(x->cf, sect, "pcp"))
				m->pcp = (int)u;
			if (get_size(x, sect, "bridge", "mem_base", 0, UINT64_MAX, DEF_MEM_BASE,
				     &m->mem_base) ||
			    get_size(x, sect, "bridge", "mem_size", 64, MAX_MEM_SIZE, DEF_MEM_SIZE,
				     &m->mem_size) ||
			    get_uint(x, sect, NULL, "mem_seed", 0, UINT64_MAX, m->id, &m->mem_seed))
				return -1;
			if (m->mem_size % 64) {
				const char *in;

				v = get2(x, sect, "bridge", "mem_size", &in);
				return cerr(x, in, "mem_size", v, "not a multiple of 64 bytes");
			}
			if (m->mem_base + m->mem_size < m->mem_base) {
				const char *in;

				v = get2(x, sect, "bridge", "mem_base", &in);
				return cerr(x, in, "mem_base", v, "the region wraps past 2^64");
			}
		}
	}
	/* one MAC per node (a node's own MAC is not in its peer table, so
	 * htoe_map cannot see a clash with it) */
	for (unsigned i = 0; i < x->n_members; i++)
		for (unsigned j = i + 1; j < x->n_members; j++) {
			const struct member *a = &x->members[i], *b = &x->members[j];
			const struct member *m = b->has_mac ? b : a;
			char mac[24];

			if (memcmp(a->mac, b->mac, 6))
				continue;
			br_format_mac(a->mac, mac, sizeof(mac));
			return cerr(x, m->sect, "mac", m->has_mac ?
				    rte_cfgfile_get_entry(x->cf, m->sect, "mac") : mac,
				    "[%s] and [%s] have the same MAC %s", a->sect, b->sect, mac);
		}
	return 0;
}

/* ------------------------------------------------------------- [port N] */

static int parse_ports(struct ctx *x, struct br_config *c)
{
	long nums[BR_MAX_PORTS + 1];
	unsigned n;

	if (list_numbered(x, S_PORT, nums, BR_MAX_PORTS, &n))
		return -1;
	c->ports = calloc(n ? n : 1, sizeof(*c->ports));
	if (!c->ports)
		return cerr(x, "global", NULL, NULL, "out of memory");
	c->n_ports = n;
	for (unsigned i = 0; i < n; i++) {
		struct br_port_cfg *p = &c->ports[i];
		char sect[32], isect[32];
		const char *dev, *in, *v;
		uint64_t u;

		snprintf(sect, sizeof(sect), "port %ld", nums[i]);
		p->index = (unsigned)nums[i];
		where_of(x, sect, NULL, p->where, sizeof(p->where));
		dev = rte_cfgfile_get_entry(x->cf, sect, "dev");
		p->crossover = -1;
		if (get_uint(x, sect, NULL, "crossover", 0, 65535, 0, &u))
			return -1;
		if (rte_cfgfile_get_entry(x->cf, sect, "crossover"))
			p->crossover = (int)u;
		if (dev && p->crossover >= 0)
			return cerr(x, sect, "dev", dev,
				    "a port is either a device (dev) or one end of a crossover pair");
		if (!dev && p->crossover < 0)
			return cerr(x, sect, NULL, NULL,
				    "needs dev = DEVICE-OR-DEVARGS or crossover = OTHER-PORT");
		if (dev) {
			where_of(x, sect, "dev", p->dev_where, sizeof(p->dev_where));
			if (strlen(dev) >= sizeof(p->dev))
				return cerr(x, sect, "dev", dev, "too long");
			snprintf(p->dev, sizeof(p->dev), "%s", dev);
		}
		if (get_uint(x, sect, NULL, "ring_size", 64, 65536, 1024, &u))
			return -1;
		if (u & (u - 1))
			return cerr(x, sect, "ring_size", rte_cfgfile_get_entry(x->cf, sect, "ring_size"),
				    "not a power of two");
		p->ring_size = (unsigned)u;
		if (get_uint(x, sect, NULL, "rxd", 32, 16384, 1024, &u))
			return -1;
		p->rxd = (unsigned)u;
		if (get_uint(x, sect, NULL, "txd", 32, 16384, 1024, &u))
			return -1;
		p->txd = (unsigned)u;
		if (get_bool(x, sect, NULL, "promisc", true, &p->promisc) ||
		    get_bool(x, sect, NULL, "capture", true, &p->capture))
			return -1;

		/* impairment: [impair N] over [impair] */
		snprintf(isect, sizeof(isect), "impair %ld", nums[i]);
		struct impair_cfg *ic = &p->imp;
		char why[160];

		impair_cfg_default(ic);
		ic->seed = 1 + p->index;
		if (get_uint(x, isect, "impair", "seed", 0, UINT64_MAX, ic->seed, &ic->seed) ||
		    get_prob(x, isect, "impair", "loss", 0, &ic->loss) ||
		    get_prob(x, isect, "impair", "burst_loss", 0, &ic->burst_loss) ||
		    get_prob(x, isect, "impair", "reorder", 0, &ic->reorder) ||
		    get_prob(x, isect, "impair", "dup", 0, &ic->dup) ||
		    get_prob(x, isect, "impair", "corrupt", 0, &ic->corrupt) ||
		    get_dur(x, isect, "impair", "reorder_delay", 0, 10000000000ull, 50000,
			    &ic->reorder_ns) ||
		    get_dur(x, isect, "impair", "delay", 0, 10000000000ull, 0, &ic->delay_ns) ||
		    get_dur(x, isect, "impair", "jitter", 0, 10000000000ull, 0, &ic->jitter_ns) ||
		    get_dur(x, isect, "impair", "outage_start", 0, 3600000000000ull, 0,
			    &ic->outage_start_ns) ||
		    get_dur(x, isect, "impair", "outage_len", 0, 3600000000000ull, 0,
			    &ic->outage_len_ns) ||
		    get_uint(x, isect, "impair", "queue", 16, 1u << 20, 4096, &u))
			return -1;
		ic->queue = (unsigned)u;
		v = get2(x, isect, "impair", "burst_len", &in);
		if (v) {
			char *end;

			ic->burst_len = strtod(v, &end);
			if (end == v || *end || !(ic->burst_len >= 1) || ic->burst_len > 1e9)
				return cerr(x, in, "burst_len", v, "a mean burst length >= 1 (frames)");
		}
		if (impair_cfg_check(ic, why, sizeof(why)))
			return cerr(x, isect, NULL, NULL, "%s", why);
		v = get2(x, isect, "impair", "direction", &in);
		p->imp_tx = true;
		p->imp_rx = false;
		if (v) {
			if (!strcmp(v, "tx"))
				;
			else if (!strcmp(v, "rx"))
				p->imp_tx = false, p->imp_rx = true;
			else if (!strcmp(v, "both"))
				p->imp_rx = true;
			else
				return cerr(x, in, "direction", v, "expected tx, rx or both");
		}
		if (!impair_cfg_active(ic))
			p->imp_tx = p->imp_rx = false;
	}
	/* [impair N] for a port that does not exist */
	if (list_numbered(x, S_IMPAIR, nums, BR_MAX_PORTS, &n))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		bool found = false;

		for (unsigned j = 0; j < c->n_ports; j++)
			found |= c->ports[j].index == (unsigned)nums[i];
		if (!found) {
			char sect[32];

			snprintf(sect, sizeof(sect), "impair %ld", nums[i]);
			return cerr(x, sect, NULL, NULL, "there is no [port %ld]", nums[i]);
		}
	}
	/* crossover pairs are mutual */
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct br_port_cfg *p = &c->ports[i];
		char sect[32];
		const struct br_port_cfg *q = NULL;

		if (p->crossover < 0)
			continue;
		snprintf(sect, sizeof(sect), "port %u", p->index);
		for (unsigned j = 0; j < c->n_ports; j++)
			if (c->ports[j].index == (unsigned)p->crossover)
				q = &c->ports[j];
		if (!q || q == p)
			return cerr(x, sect, "crossover", rte_cfgfile_get_entry(x->cf, sect, "crossover"),
				    q ? "a port cannot be its own crossover" :
					"there is no such [port]");
		if (q->crossover != (int)p->index)
			return cerr(x, sect, "crossover", rte_cfgfile_get_entry(x->cf, sect, "crossover"),
				    "[port %u] must say crossover = %u", q->index, p->index);
	}
	return 0;
}

/* ------------------------------------------------------------------ [map] */

struct map_entry {
	bool     is_mask;
	uint64_t base, size, remote_base, mask;
	unsigned shift;
	uint16_t node;
	char     label[HTOE_MAP_LABEL_MAX];
};

static int parse_map(struct ctx *x, struct map_entry *e, unsigned *count)
{
	const char *s = "map";
	int ne;
	struct rte_cfgfile_entry *ents;
	unsigned n = 0;

	*count = 0;
	if (!rte_cfgfile_has_section(x->cf, s))
		return cerr(x, s, NULL, NULL,
			    "missing: the address map (rangeN = BASE SIZE NODE [REMOTE_BASE], or mask)");
	ne = rte_cfgfile_section_num_entries(x->cf, s);
	if (ne <= 0)
		return cerr(x, s, NULL, NULL, "empty: no range and no mask");
	ents = calloc((size_t)ne, sizeof(*ents));
	if (!ents)
		return cerr(x, s, NULL, NULL, "out of memory");
	rte_cfgfile_section_entries(x->cf, s, ents, ne);
	for (int i = 0; i < ne; i++) {
		struct rte_cfgfile_entry *en = &ents[i];
		char buf[CFG_VALUE_LEN], *tok[5], *save = NULL;
		unsigned nt = 0;
		uint64_t node;

		if (strncmp(en->name, "range", 5))
			continue;
		if (n == HTOE_MAP_MAX_RANGES) {
			int r = cerr(x, s, en->name, en->value, "more than %u ranges",
				     HTOE_MAP_MAX_RANGES);

			free(ents);
			return r;
		}
		snprintf(buf, sizeof(buf), "%s", en->value);
		for (char *t = strtok_r(buf, " \t,", &save); t && nt < 5;
		     t = strtok_r(NULL, " \t,", &save))
			tok[nt++] = t;
		struct map_entry *m = &e[n];

		memset(m, 0, sizeof(*m));
		if (nt < 3 || nt > 4 || br_parse_size(tok[0], &m->base) ||
		    br_parse_size(tok[1], &m->size) || parse_u64_plain(tok[2], &node) ||
		    node > 65535 || (nt == 4 && br_parse_size(tok[3], &m->remote_base))) {
			int r = cerr(x, s, en->name, en->value,
				     "expected BASE SIZE NODE [REMOTE_BASE] (sizes: 0x hex, "
				     "decimal, K/M/G suffix; NODE 0..65535)");
			free(ents);
			return r;
		}
		m->node = (uint16_t)node;
		if (nt == 3) {
			const struct member *mb = member_find(x, m->node);

			m->remote_base = mb ? mb->mem_base : DEF_MEM_BASE;
		}
		make_label(x, m->label, s, en->name);
		n++;
	}
	free(ents);
	const char *mask = rte_cfgfile_get_entry(x->cf, s, "mask");

	if (mask) {
		struct map_entry *m = &e[n];
		uint64_t sh;

		memset(m, 0, sizeof(*m));
		m->is_mask = true;
		if (br_parse_size(mask, &m->mask) || !m->mask)
			return cerr(x, s, "mask", mask, "not a non-zero number");
		sh = (uint64_t)__builtin_ctzll(m->mask);
		if (get_uint(x, s, NULL, "shift", 0, 63, sh, &sh) ||
		    get_size(x, s, NULL, "remote_base", 0, UINT64_MAX, DEF_MEM_BASE,
			     &m->remote_base))
			return -1;
		if (!rte_cfgfile_get_entry(x->cf, s, "remote_base") &&
		    rte_cfgfile_get_entry(x->cf, "bridge", "mem_base"))
			br_parse_size(rte_cfgfile_get_entry(x->cf, "bridge", "mem_base"),
				      &m->remote_base);
		m->shift = (unsigned)sh;
		make_label(x, m->label, s, "mask");
		n++;
	} else {
		if (rte_cfgfile_get_entry(x->cf, s, "shift"))
			return cerr(x, s, "shift", rte_cfgfile_get_entry(x->cf, s, "shift"),
				    "shift without mask");
		if (!n)
			return cerr(x, s, NULL, NULL, "no rangeN key and no mask");
	}
	*count = n;
	return 0;
}

static int build_map(struct ctx *x, struct br_node_cfg *nc, const struct map_entry *e,
		     unsigned ne)
{
	char msg[400];
	struct htoe_map *m = malloc(sizeof(*m));

	if (!m)
		return cerr(x, "map", NULL, NULL, "out of memory");
	nc->map = m;
	htoe_map_init(m, nc->id);
	for (unsigned i = 0; i < x->n_members; i++) {
		const struct member *mb = &x->members[i];

		if (mb->id == nc->id)
			continue;
		if (htoe_map_add_peer(m, mb->id, mb->has_mac ? mb->mac : NULL, mb->mac_label, msg,
				      sizeof(msg)))
			goto fail;
	}
	for (unsigned i = 0; i < ne; i++) {
		int r = e[i].is_mask ?
			htoe_map_set_mask(m, e[i].mask, e[i].shift, e[i].remote_base, e[i].label,
					  msg, sizeof(msg)) :
			htoe_map_add_range(m, e[i].base, e[i].size, e[i].node, e[i].remote_base,
					   e[i].label, msg, sizeof(msg));
		if (r)
			goto fail;
	}
	if (htoe_map_finalize(m, msg, sizeof(msg)))
		goto fail;
	return 0;
fail:
	snprintf(x->err, x->errlen, "address map of node %u: %s", nc->id, msg);
	return -1;
}

/* ------------------------------------------------------------ the nodes */

/* [macsec N] over [macsec] (macsec.c parses it through these adapters) */
static const char *src_get(void *c, const char *sect, const char *fb, const char *key,
			   const char **in)
{
	return get2(c, sect, fb, key, in);
}

static int src_error(void *c, const char *sect, const char *key, const char *val,
		     const char *msg)
{
	return cerr(c, sect, key, val, "%s", msg);
}

static void src_where(void *c, const char *sect, char *buf, size_t len)
{
	where_of(c, sect, NULL, buf, len);
}

static int parse_macsec(struct ctx *x, struct br_node_cfg *nc, const struct member *mb)
{
	const struct br_cfg_src src = { x, src_get, src_error, src_where };
	uint16_t ids[BR_MAX_MEMBERS];
	uint8_t macs[BR_MAX_MEMBERS][6];
	unsigned n = 0;

	for (unsigned i = 0; i < x->n_members; i++)
		if (x->members[i].id != mb->id) {
			ids[n] = x->members[i].id;
			memcpy(macs[n++], x->members[i].mac, 6);
		}
	if (br_macsec_parse(&src, mb->id, mb->mac, n, ids, (const uint8_t (*)[6])macs,
			    &nc->macsec))
		return -1;
	if (!nc->macsec.enabled)
		return 0;
	/* protected frames must still fit the configured mtu */
	if (nc->bc.mtu < HTOE_HDR_LEN + HT_MAX_PKT_LEN + HTOE_MACSEC_OVERHEAD_MAX) {
		const char *in, *v = get2(x, mb->sect, "bridge", "mtu", &in);

		return cerr(x, in, "mtu", v ? v : "(default)",
			    "too small with MACsec on (SecTAG + ICV take %u bytes): at least %u",
			    HTOE_MACSEC_OVERHEAD_MAX,
			    HTOE_HDR_LEN + HT_MAX_PKT_LEN + HTOE_MACSEC_OVERHEAD_MAX);
	}
	nc->bc.mtu -= HTOE_MACSEC_OVERHEAD_MAX;
	return 0;
}

static int parse_node(struct ctx *x, struct br_config *c, struct br_node_cfg *nc,
		      const struct member *mb, const struct map_entry *me, unsigned nme)
{
	const char *s = mb->sect, *b = "bridge", *v, *in;
	struct htoe_config *bc = &nc->bc;
	uint64_t u;
	bool given[HT_VC_COUNT];
	static const char *const bufkeys[HT_VC_COUNT] = { "bufs_posted", "bufs_nonposted",
							  "bufs_response" };

	nc->id = mb->id;
	where_of(x, s, NULL, nc->where, sizeof(nc->where));
	htoe_config_defaults(bc);
	/* htoe-bridge's own defaults (docs/config.md): its lcores may share
	 * CPUs with other processes (on the project's shared VMs pollers
	 * were seen descheduled for seconds), and a stalled poller must not
	 * look like a dead peer (VL reset, poisoned requests, lost posted
	 * writes); and the round trip through the software endpoint model is
	 * far longer than on a wire */
	bc->rto_init_ns = DEF_RTO_NS;
	bc->rto_max_ns = DEF_RTO_MAX_NS;
	bc->rto_min_ns = DEF_RTO_MIN_NS;
	bc->retry_limit = DEF_RETRY_LIMIT;
	bc->stall_timeout_ns = DEF_STALL_TIMEOUT_NS;
	bc->np_timeout_ns = DEF_NP_TIMEOUT_NS;
	bc->node_id = mb->id;
	memcpy(bc->mac, mb->mac, 6);
	nc->mem_base = mb->mem_base;
	nc->mem_size = mb->mem_size;
	nc->mem_seed = mb->mem_seed;

	v = rte_cfgfile_get_entry(x->cf, s, "port");
	if (!v)
		return cerr(x, s, "port", NULL, "missing: the [port N] this node uses");
	if (parse_u64_plain(v, &u))
		return cerr(x, s, "port", v, "not a port number");
	nc->port = UINT32_MAX;
	for (unsigned i = 0; i < c->n_ports; i++)
		if (c->ports[i].index == u)
			nc->port = i;
	if (nc->port == UINT32_MAX)
		return cerr(x, s, "port", v, "there is no [port %" PRIu64 "]", u);
	nc->lcore = -1;
	v = rte_cfgfile_get_entry(x->cf, s, "lcore");
	if (v) {
		if (parse_u64_plain(v, &u) || u >= 1024)
			return cerr(x, s, "lcore", v, "not an lcore id 0..1023");
		nc->lcore = (int)u;
		where_of(x, s, "lcore", nc->lcore_where, sizeof(nc->lcore_where));
	}

#define U(key, min, max, field) do { \
		if (get_uint(x, s, b, key, min, max, bc->field, &u)) \
			return -1; \
		bc->field = (__typeof__(bc->field))u; \
	} while (0)
#define D(key, min, max, field) do { \
		if (get_dur(x, s, b, key, min, max, bc->field, &u)) \
			return -1; \
		bc->field = u; \
	} while (0)
	U("mtu", HTOE_HDR_LEN + HT_MAX_PKT_LEN, HTOE_MTU_MAX, mtu);
	if (parse_macsec(x, nc, mb))
		return -1;
	if (get_bool(x, s, b, "vlan", false, &bc->vlan))
		return -1;
	U("vid", 0, 4095, vid);
	U("default_pcp", 0, 7, default_pcp);
	U("epoch", 0, 255, epoch);
	U("unitid_base", 0, 30, unitid_base);
	bc->n_unitids = DEF_BRIDGE_UNITIDS;
	U("bridge_unitids", 1, 8, n_unitids);
	if (bc->unitid_base + bc->n_unitids + 1 > 32) {
		const char *k = blame(x, s, b, "bridge_unitids", "unitid_base", &in, &v);

		return cerr(x, in, k, v,
			    "unitid_base %u + bridge_unitids %u (+1 for Flush) exceeds UnitID 31",
			    bc->unitid_base, bc->n_unitids);
	}
	if (get_uint(x, s, b, "requester_unitids", 1, HT_REQ_MAX_UNITIDS, DEF_REQ_UNITIDS, &u))
		return -1;
	nc->req_unitids = (unsigned)u;
	if (bc->unitid_base <= nc->req_unitids) {
		/* requester UnitIDs 1..n must stay below the bridge's */
		const char *k = blame(x, s, b, "requester_unitids", "unitid_base", &in, &v);

		return cerr(x, in, k, v,
			    "requester UnitIDs 1..%u overlap the bridge's UnitIDs %u..%u "
			    "(the last one for Flush)",
			    nc->req_unitids, bc->unitid_base, bc->unitid_base + bc->n_unitids);
	}
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++)
		if (get_bufs(x, s, b, bufkeys[vc], bc->rx_bufs[vc], &given[vc]))
			return -1;
	U("reserve", 1, 4096, reserve);
	U("max_per_vl", 1, 4096, max_per_vl);
	U("txq_pkts", 2, 65536, txq_pkts);
	U("window", 2, 4096, window);
	U("ack_every", 1, 4096, ack_every);
	U("retry_limit", 1, 1000000, retry_limit);
	D("ack_delay", 0, 10000000000ull, ack_delay_ns);
	D("rto", 1000, 60000000000ull, rto_init_ns);
	D("rto_min", 1000, 60000000000ull, rto_min_ns);
	D("rto_max", 1000, 600000000000ull, rto_max_ns);
	D("flush", 0, 10000000000ull, flush_ns);
	D("np_timeout", 1000, 3600000000000ull, np_timeout_ns);
	D("stall_timeout", 1000, 3600000000000ull, stall_timeout_ns);
#undef U
#undef D
	/* retry = gbn | selective (docs/config.md) */
	v = get2(x, s, b, "retry", &in);
	if (v && strcmp(v, "gbn") && strcmp(v, "selective"))
		return cerr(x, in, "retry", v, "not a retry mode: gbn or selective");
	if (v)
		bc->retry_mode = !strcmp(v, "gbn") ? HTOE_RETRY_GBN : HTOE_RETRY_SELECTIVE;
	if (bc->rto_max_ns < bc->rto_init_ns) {
		const char *k = blame(x, s, b, "rto_max", "rto", &in, &v);

		return cerr(x, in, k, v, "rto %" PRIu64 " ns is above rto_max %" PRIu64 " ns",
			    bc->rto_init_ns, bc->rto_max_ns);
	}
	if (bc->rto_max_ns < bc->rto_min_ns) {
		const char *k = blame(x, s, b, "rto_max", "rto_min", &in, &v);

		return cerr(x, in, k, v, "rto_min %" PRIu64 " ns is above rto_max %" PRIu64 " ns",
			    bc->rto_min_ns, bc->rto_max_ns);
	}
	/* the receive pool must cover the reserve of every VL (as htoe-sim) */
	for (unsigned vc = 0; vc < HT_VC_COUNT; vc++) {
		unsigned need = bc->reserve * (x->n_members - 1) + 64;

		if (!given[vc]) {
			for (unsigned d = 0; d < 2; d++)
				if (bc->rx_bufs[vc][d] < need)
					bc->rx_bufs[vc][d] = (uint16_t)(need > 4096 ? 4096 : need);
		}
	}
	/* PCP of the VL to each member that sets one */
	for (unsigned i = 0; i < x->n_members; i++) {
		const struct member *m = &x->members[i];

		if (m->pcp < 0 || m->id == nc->id)
			continue;
		bc->pcp[bc->n_pcp].node = m->id;
		bc->pcp[bc->n_pcp].pcp = (uint8_t)m->pcp;
		bc->n_pcp++;
	}
	if (build_map(x, nc, me, nme))
		return -1;
	bc->map = nc->map;
	/* let the library check the whole bridge configuration now */
	{
		char msg[256];
		struct htoe *t = htoe_new(bc, msg, sizeof(msg));

		if (!t)
			return cerr(x, s, NULL, NULL, "the bridge refuses this configuration: %s",
				    msg);
		htoe_free(t);
	}
	/* the largest frame this node sends */
	u = bc->mtu + HTOE_L2_MAX + (nc->macsec.enabled ? HTOE_MACSEC_OVERHEAD_MAX : 0);
	if (u > c->max_frame)
		c->max_frame = (uint16_t)u;
	return 0;
}

/* --------------------------------------------------------- the workloads */

static int parse_workload(struct ctx *x, struct br_config *c, struct br_node_cfg *nc)
{
	char s[32];
	const char *w = "workload", *v, *in;
	struct br_wl_cfg *wl = &nc->wl;
	const struct member *tg;
	uint64_t u;
	bool ops_given;

	snprintf(s, sizeof(s), "workload %u", nc->id);
	if (!rte_cfgfile_has_section(x->cf, s))
		return 0;
	wl->enabled = true;
	where_of(x, s, NULL, wl->where, sizeof(wl->where));
	const char *tv, *tin;

	v = tv = get2(x, s, w, "target", &in);
	tin = in;
	if (!v)
		return cerr(x, s, "target", NULL, "missing: the node whose memory it uses");
	if (parse_u64_plain(v, &u) || u > 65535)
		return cerr(x, in, "target", v, "not a node id 0..65535");
	tg = member_find(x, (uint16_t)u);
	if (!tg)
		return cerr(x, in, "target", v, "node %" PRIu64 " is neither a [node] nor a [peer]", u);
	wl->target = (uint16_t)u;
	wl->fill_seed = tg->mem_seed;

	/* the window: default the target's whole exported region */
	struct htoe_map_result r;
	uint64_t def_base = 0;
	bool have_def = false;

	if (nc->map->mask_mode) {
		if (tg->mem_base >= nc->map->mask_remote_base) {
			def_base = ((uint64_t)tg->id << nc->map->shift) +
				   (tg->mem_base - nc->map->mask_remote_base);
			have_def = true;
		}
	} else {
		for (unsigned i = 0; i < nc->map->nranges && !have_def; i++) {
			const struct htoe_map_range *rg = &nc->map->ranges[i];

			if (rg->node == tg->id && tg->mem_base >= rg->remote_base &&
			    tg->mem_base - rg->remote_base < rg->size) {
				def_base = rg->base + (tg->mem_base - rg->remote_base);
				have_def = true;
			}
		}
	}
	if (get_size(x, s, w, "base", 0, UINT64_MAX, def_base, &wl->base) ||
	    get_size(x, s, w, "size", 64, MAX_MEM_SIZE, tg->mem_size, &wl->size))
		return -1;
	v = get2(x, s, w, "base", &in);
	if (!v && !have_def)
		return cerr(x, s, "base", NULL,
			    "missing, and no [map] entry maps node %u's memory at %#" PRIx64
			    " (its mem_base)", tg->id, tg->mem_base);
	if (wl->base % 64)
		return cerr(x, in, "base", v, "not 64-byte aligned");
	if (wl->size % 64) {
		v = get2(x, s, w, "size", &in);
		return cerr(x, in, "size", v, "not a multiple of 64 bytes");
	}
	enum htoe_map_kind k = htoe_map_lookup(nc->map, wl->base, wl->size, &r);

	/* a window error names base, else size, else target */
	const char *bkey = "base", *bv = get2(x, s, w, "base", &in);

	if (!bv && (bv = get2(x, s, w, "size", &in)) != NULL)
		bkey = "size";
	if (!bv) {
		bkey = "target";
		bv = tv;
		in = tin;
	}
	if (k == HTOE_MAP_UNMAPPED || r.node != tg->id) {
		return cerr(x, in, bkey, bv,
			    "the window [%#" PRIx64 ", +%#" PRIx64 ") is %s by [map]%s%u", wl->base,
			    wl->size, k == HTOE_MAP_UNMAPPED ? "not mapped (as a whole)" : "mapped",
			    k == HTOE_MAP_UNMAPPED ? ", target node " : " to node ",
			    k == HTOE_MAP_UNMAPPED ? tg->id : r.node);
	}
	if (r.addr < tg->mem_base || r.addr - tg->mem_base + wl->size > tg->mem_size) {
		return cerr(x, in, bkey, bv,
			    "the window maps to [%#" PRIx64 ", +%#" PRIx64 ") at node %u, outside "
			    "its memory [%#" PRIx64 ", +%#" PRIx64 ") (%s mem_base, mem_size)",
			    r.addr, wl->size, tg->id, tg->mem_base, tg->mem_size, tg->sect);
	}
	wl->fill_offset = r.addr - tg->mem_base;

	ops_given = get2(x, s, w, "ops", &in) != NULL;
	if (get_uint(x, s, w, "ops", 0, UINT64_MAX / 4, DEF_WL_OPS, &wl->ops) ||
	    get_dur(x, s, w, "duration", 0, 86400000000000ull * 365, 0, &wl->duration_ns))
		return -1;
	if (wl->duration_ns && !ops_given)
		wl->ops = UINT64_MAX / 4; /* until the duration */
	{
		struct ht_wl_cfg d;

		ht_wl_cfg_default(&d);
		memcpy(wl->weight, d.weight, sizeof(wl->weight));
		wl->byte_pct = d.byte_pct;
		wl->sweep = d.sweep;
	}
	v = get2(x, s, w, "mix", &in);
	if (v) {
		char why[160];

		if (parse_mix(v, wl->weight, why, sizeof(why)))
			return cerr(x, in, "mix", v, "%s", why);
	}
	if (get_uint(x, s, w, "byte_pct", 0, 100, wl->byte_pct, &u))
		return -1;
	wl->byte_pct = (unsigned)u;
	if (get_uint(x, s, w, "window", 1, HT_WL_MAX_INFLIGHT, DEF_WL_WINDOW, &u))
		return -1;
	wl->window = (unsigned)u;
	if (get_bool(x, s, w, "sweep", wl->sweep, &wl->sweep) ||
	    get_uint(x, s, w, "seed", 0, UINT64_MAX, 1000u + nc->id, &wl->seed))
		return -1;
	v = get2(x, s, w, "sizes", &in);
	wl->fixed_len = 0;
	if (v && strcmp(v, "random")) {
		if (get_uint(x, s, w, "sizes", 4, 64, 0, &u))
			return -1;
		if (u & 3)
			return cerr(x, in, "sizes", v, "must be 'random' or a multiple of 4 in 4..64");
		wl->fixed_len = (uint32_t)u;
	}
	(void)c;
	return 0;
}

/* Two local workloads writing one region would break each other's shadow. */
static int check_workload_overlap(struct ctx *x, struct br_config *c)
{
	for (unsigned i = 0; i < c->n_nodes; i++)
		for (unsigned j = i + 1; j < c->n_nodes; j++) {
			const struct br_wl_cfg *a = &c->nodes[i].wl, *b = &c->nodes[j].wl;

			if (!a->enabled || !b->enabled || a->target != b->target)
				continue;
			if (a->fill_offset < b->fill_offset + b->size &&
			    b->fill_offset < a->fill_offset + a->size) {
				char s[32];

				snprintf(s, sizeof(s), "workload %u", c->nodes[j].id);
				return cerr(x, s, "target",
					    rte_cfgfile_get_entry(x->cf, s, "target") ?
					    rte_cfgfile_get_entry(x->cf, s, "target") : "(default)",
					    "its window overlaps [workload %u]'s in node %u's memory: "
					    "each byte needs a single writer for verification",
					    c->nodes[i].id, a->target);
			}
		}
	return 0;
}

/* ----------------------------------------------------------- --set, load */

static int apply_sets(struct ctx *x, const struct br_overrides *o)
{
	for (unsigned i = 0; i < o->n_sets; i++) {
		const char *a = o->sets[i], *dot = strchr(a, '.'), *eq = strchr(a, '=');
		char sect[CFG_NAME_LEN], key[CFG_NAME_LEN], val[CFG_VALUE_LEN];

		if (!dot || !eq || eq < dot || dot == a || eq == dot + 1 || !eq[1] ||
		    (size_t)(dot - a) >= sizeof(sect) || (size_t)(eq - dot - 1) >= sizeof(key) ||
		    strlen(eq + 1) >= sizeof(val)) {
			snprintf(x->err, x->errlen,
				 "--set '%s': expected SECTION.KEY=VALUE (e.g. impair.loss=0.01)", a);
			return -1;
		}
		snprintf(sect, sizeof(sect), "%.*s", (int)(dot - a), a);
		snprintf(key, sizeof(key), "%.*s", (int)(eq - dot - 1), dot + 1);
		snprintf(val, sizeof(val), "%s", eq + 1);
		if (!rte_cfgfile_has_section(x->cf, sect)) {
			if (rte_cfgfile_add_section(x->cf, sect) < 0) {
				snprintf(x->err, x->errlen, "--set '%s': cannot add section [%s]", a,
					 sect);
				return -1;
			}
			if (x->n_new_sects < BR_MAX_SETS)
				snprintf(x->new_sect[x->n_new_sects++], CFG_NAME_LEN, "%s", sect);
		}
		int r = rte_cfgfile_get_entry(x->cf, sect, key) ?
			rte_cfgfile_set_entry(x->cf, sect, key, val) :
			rte_cfgfile_add_entry(x->cf, sect, key, val);
		if (r < 0) {
			snprintf(x->err, x->errlen, "--set '%s': cannot set [%s] %s", a, sect, key);
			return -1;
		}
		if (x->n_sets < BR_MAX_SETS) {
			snprintf(x->set_sect[x->n_sets], CFG_NAME_LEN, "%s", sect);
			snprintf(x->set_key[x->n_sets], CFG_NAME_LEN, "%s", key);
			x->n_sets++;
		}
	}
	return 0;
}

static int open_embedded(char *path, size_t len)
{
	const char *t = br_default_ini;
	size_t n = strlen(t);
	int fd = memfd_create("htoe-bridge-default-config", 0);

	if (fd < 0)
		return -1;
	while (n) {
		ssize_t w = write(fd, t, n);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		t += w;
		n -= (size_t)w;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Every [KIND N] section has a [node N]. */
static int check_node_sects(struct ctx *x, int kind, const char *why)
{
	long nums[BR_MAX_MEMBERS + 1];
	unsigned n;

	if (list_numbered(x, kind, nums, BR_MAX_MEMBERS, &n))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const struct member *mb = member_find(x, (uint16_t)nums[i]);
		char s[32];

		snprintf(s, sizeof(s), "%s %ld", sect_names[kind], nums[i]);
		if (!mb || !mb->node_sect)
			return cerr(x, s, NULL, NULL, "there is no [node %ld]%s", nums[i], why);
	}
	return 0;
}

int br_cfg_load(struct br_config *c, const char *path, const struct br_overrides *o,
		char *err, size_t errlen)
{
	struct ctx *x = calloc(1, sizeof(*x));
	struct map_entry *me = NULL;
	unsigned nme = 0;
	char fdpath[64];
	int fd = -1, rc = -1;

	memset(c, 0, sizeof(*c));
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	x->err = err;
	x->errlen = errlen;
	err[0] = 0;
	snprintf(c->file, sizeof(c->file), "%s", path ? path : "<embedded>");
	x->file = c->file;
	if (!path) {
		fd = open_embedded(fdpath, sizeof(fdpath));
		if (fd < 0) {
			snprintf(err, errlen, "<embedded>: cannot create a memfd: %s",
				 strerror(errno));
			goto out;
		}
		path = fdpath;
	}
	if (prescan(x, path))
		goto out;
	struct rte_cfgfile_parameters params = { .comment_character = ';' };

	x->cf = rte_cfgfile_load_with_params(path, 0, &params);
	if (!x->cf) {
		snprintf(err, errlen, "%s: rte_cfgfile cannot parse this file", c->file);
		goto out;
	}
	if (apply_sets(x, o) || check_names(x) || parse_global(x, c, o) ||
	    parse_members(x, o) || parse_ports(x, c))
		goto out;
	me = calloc(HTOE_MAP_MAX_RANGES + 1, sizeof(*me));
	if (!me) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (parse_map(x, me, &nme))
		goto out;

	/* the nodes hosted here */
	unsigned nlocal = 0;

	for (unsigned i = 0; i < x->n_members; i++)
		nlocal += x->members[i].local;
	if (!nlocal) {
		if (o->only_nodes)
			snprintf(err, errlen, "%s: --node %s: no such [node N] section", c->file,
				 o->only_nodes);
		else
			snprintf(err, errlen, "%s: no [node N] section: nothing to run", c->file);
		goto out;
	}
	if (nlocal > BR_MAX_NODES) {
		snprintf(err, errlen, "%s: %u [node N] sections, at most %u per process", c->file,
			 nlocal, BR_MAX_NODES);
		goto out;
	}
	c->nodes = calloc(nlocal, sizeof(*c->nodes));
	if (!c->nodes) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < x->n_members; i++) {
		const struct member *mb = &x->members[i];

		if (!mb->local)
			continue;
		if (parse_node(x, c, &c->nodes[c->n_nodes++], mb, me, nme))
			goto out;
	}
	/* one node per port */
	for (unsigned i = 0; i < c->n_nodes; i++)
		for (unsigned j = i + 1; j < c->n_nodes; j++)
			if (c->nodes[i].port == c->nodes[j].port) {
				char s[32];

				snprintf(s, sizeof(s), "node %u", c->nodes[j].id);
				cerr(x, s, "port", rte_cfgfile_get_entry(x->cf, s, "port"),
				     "[node %u] already uses this port (one node per port; "
				     "--node ID runs one [node] of a cluster file)", c->nodes[i].id);
				goto out;
			}
	/* every port belongs to a node: here, or (--node) to another process */
	for (unsigned i = 0; i < c->n_nodes; i++)
		c->ports[c->nodes[i].port].used = true;
	for (unsigned i = 0; i < c->n_ports; i++) {
		struct br_port_cfg *p = &c->ports[i];
		bool elsewhere = false;
		char s[32];

		if (p->used)
			continue;
		for (unsigned k = 0; k < x->n_members; k++) {
			const struct member *mb = &x->members[k];
			const char *v = rte_cfgfile_get_entry(x->cf, mb->sect, "port");
			uint64_t u;

			if (mb->node_sect && v && !parse_u64_plain(v, &u) && u == p->index)
				elsewhere = true;
		}
		snprintf(s, sizeof(s), "port %u", p->index);
		if (!elsewhere) {
			cerr(x, s, NULL, NULL, "no [node] uses this port");
			goto out;
		}
		if (p->crossover >= 0) {
			cerr(x, s, "crossover", rte_cfgfile_get_entry(x->cf, s, "crossover"),
			     "both ends of a crossover pair must be used by nodes of this process");
			goto out;
		}
	}
	/* [workload N] and [macsec N] belong to a [node N] */
	if (check_node_sects(x, S_WORKLOAD, " to run it") || check_node_sects(x, S_MACSEC, ""))
		goto out;
	unsigned n_wl = 0;

	for (unsigned i = 0; i < c->n_nodes; i++) {
		if (parse_workload(x, c, &c->nodes[i]))
			goto out;
		n_wl += c->nodes[i].wl.enabled;
	}
	if (check_workload_overlap(x, c))
		goto out;
	if (o->transactions >= 0 && n_wl) {
		uint64_t t = (uint64_t)o->transactions, k = 0;

		for (unsigned i = 0; i < c->n_nodes; i++)
			if (c->nodes[i].wl.enabled) {
				c->nodes[i].wl.ops = t / n_wl + (k < t % n_wl);
				k++;
			}
	}
	rc = 0;
out:
	if (x->cf)
		rte_cfgfile_close(x->cf);
	if (fd >= 0)
		close(fd);
	free(me);
	free(x);
	if (rc)
		br_cfg_free(c);
	return rc;
}

void br_cfg_free(struct br_config *c)
{
	if (c->nodes)
		for (unsigned i = 0; i < c->n_nodes; i++) {
			free(c->nodes[i].map);
			br_macsec_cfg_wipe(&c->nodes[i].macsec);
		}
	free(c->nodes);
	free(c->ports);
	c->nodes = NULL;
	c->ports = NULL;
	c->n_nodes = c->n_ports = 0;
}
