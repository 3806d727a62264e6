/* SPDX-License-Identifier: BSD-3-Clause
 * Table-driven INI configuration, without DPDK and without the EAL.
 *
 * A schema lists the section kinds ([global], [node N], ...) and one entry
 * per key: its sections, type, range, default, the field it fills
 * (offsetof into a struct of the caller) and its help text. The same table
 * drives the parsing, the range checks, the messages (file:line, section,
 * key, value, what was wrong, the accepted range), the unknown-name checks
 * with a "did you mean", the removed keys, `--set SECTION.KEY=VALUE` and the
 * reference (docs/config.md, htoe.ini(5), --config-reference).
 *
 * The file is read once, by cfg_read: a regular file of at most
 * CFG_FILE_MAX bytes without NUL bytes, parsed line by line with the line
 * numbers kept for the messages.
 */
#ifndef HTOE_BRIDGE_CFGTAB_H
#define HTOE_BRIDGE_CFGTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CFG_NAME_MAX  64u          /* section and key names: < 64 characters */
#define CFG_VALUE_MAX 256u         /* values: < 256 characters */
#define CFG_FILE_MAX  (1u << 20)   /* a configuration file: at most 1 MiB */
#define CFG_ORIGIN_MAX 1100u

enum cfg_type {
	CFG_UINT,   /* decimal or 0x hex, min..max; stored in a field of 1, 2, 4 or 8 bytes */
	CFG_SIZE,   /* a CFG_UINT with an optional K/M/G/T suffix */
	CFG_DUR,    /* a number and ns/us/ms/s ("0" alone): uint64_t nanoseconds */
	CFG_BOOL,   /* on/off, yes/no, true/false, 1/0: bool */
	CFG_PROB,   /* 0..1 or a percentage; exactly 1 only as "100%": double */
	CFG_REAL,   /* a decimal number min..max: double */
	CFG_STR,    /* text: a char array of `size` bytes */
	CFG_ENUM,   /* one of syntax "a|b|c": unsigned (its index) */
	CFG_MAC,    /* xx:xx:xx:xx:xx:xx, unicast, not zero: uint8_t[6] */
	CFG_TEXT,   /* parsed by the caller; syntax says what it looks like */
};

enum {
	CFG_F_ALIGN64  = 1u << 0, /* a multiple of 64 */
	CFG_F_POW2     = 1u << 1, /* a power of two */
	CFG_F_MEM      = 1u << 2, /* memory is allocated for it: at most the machine's memory */
	CFG_F_SECRET   = 1u << 3, /* the value is never printed */
	CFG_F_PREFIX   = 1u << 4, /* every key starting with name ("range" -> range1, ...) */
	CFG_F_REQUIRED = 1u << 5, /* no default: the section needs it */
};

#define CFG_NO_FIELD ((size_t)-1)

struct cfg_key {
	uint32_t sects;        /* bit k: valid in section kind k */
	const char *name;
	enum cfg_type type;
	uint64_t min, max;     /* CFG_UINT, SIZE, DUR, REAL (max 0: no limit); STR: max length */
	const char *def;       /* default as a value (applied); "(...)": described only;
				  NULL: the field keeps what the caller put there */
	unsigned flags;
	int obj;               /* the caller's struct this key fills, -1: none */
	size_t off, size;      /* the field in that struct (CFG_NO_FIELD: none) */
	const char *syntax;    /* CFG_ENUM: "a|b|c"; CFG_TEXT: what the value looks like */
	const char *help;      /* markdown, one paragraph */
};

struct cfg_sect {
	const char *name;      /* "node" */
	bool plain, numbered;  /* [node] and/or [node N] (N 0..65535) */
	const char *fallback;  /* a key absent here is looked up in this section, or NULL */
	const char *title;     /* heading of its reference, e.g. "[bridge] and [node N]" */
	const char *help;      /* markdown paragraphs before its key table */
	const char *after;     /* markdown after its key table, or NULL */
};

struct cfg_removed {
	uint32_t sects;
	const char *name;
	const char *version;   /* "0.2" */
	const char *why;       /* what happened and what to use instead */
};

struct cfg_schema {
	const struct cfg_sect *sects;
	unsigned n_sects;
	const struct cfg_key *keys;
	unsigned n_keys;
	const struct cfg_removed *removed;
	unsigned n_removed;
	/* fills object `obj` with its defaults that are not in the table
	 * (def == NULL: the library's), for the reference; may be NULL */
	void (*obj_defaults)(int obj, void *base);
	size_t obj_size_max;
};

#define CFG_S(k) (1u << (k))

/* One key = value of the file or of --set. */
struct cfg_ent {
	char *key, *val;
	unsigned line;         /* 0: from --set */
	bool used;
};

struct cfg_sec {
	char *name;
	unsigned line;         /* 0: created by --set */
	int kind;              /* index into the schema's sections, -1 until checked */
	long num;              /* N of [name N], -1 */
	struct cfg_ent *e;
	unsigned n, cap;
};

struct cfg_doc {
	const struct cfg_schema *sch;
	char file[1024];       /* display name */
	struct cfg_sec *s;
	unsigned n, cap;
	uint64_t phys_mem;     /* the machine's memory (CFG_F_MEM); set by cfg_doc_init */
	char *err;
	size_t errlen;
};

void cfg_doc_init(struct cfg_doc *d, const struct cfg_schema *sch, const char *display,
		  char *err, size_t errlen);
void cfg_doc_free(struct cfg_doc *d);

/* Reads and parses the file `path` (once). 0, or -1 with the message. */
int cfg_read(struct cfg_doc *d, const char *path);
/* Parses text[0..len) (an embedded configuration). */
int cfg_parse(struct cfg_doc *d, const char *text, size_t len);
/* Applies one --set SECTION.KEY=VALUE. */
int cfg_set(struct cfg_doc *d, const char *arg);
/* Every section and key known (with "did you mean"), removed keys refused. */
int cfg_check_names(struct cfg_doc *d);

const struct cfg_sec *cfg_section(const struct cfg_doc *d, const char *name);
/* The entry of key in sect, else in sect's fallback (NULL: not given);
 * *in: the section it came from (sect when not given). */
const struct cfg_ent *cfg_get(const struct cfg_doc *d, const char *sect, const char *key,
			      const char **in);
/* The value (or NULL) of key in sect or its fallback. */
const char *cfg_val(const struct cfg_doc *d, const char *sect, const char *key);
const struct cfg_key *cfg_key_find(const struct cfg_schema *sch, int kind, const char *name);
int cfg_kind(const struct cfg_schema *sch, const char *sect, long *num);

/*
 * Parses key of sect (or its fallback) by its table entry into out (NULL:
 * check only), its default when not given. out is of the field's type, or
 * for a key without a field: uint64_t (UINT, SIZE, DUR), double (PROB,
 * REAL), bool, unsigned (ENUM), uint8_t[6] (MAC), char[max + 1] (STR).
 * Returns 1 given, 0 not given (default stored), -1 error (message written).
 */
int cfg_get_typed(struct cfg_doc *d, const char *sect, const char *key, void *out);
/* Every key of object obj valid in sect: cfg_get_typed into its field of base. */
int cfg_apply(struct cfg_doc *d, int obj, const char *sect, void *base);

/* "ORIGIN: [sect] key = 'value': message" (ORIGIN: FILE:LINE or --set);
 * key NULL: about the section. The value of the key as found in sect or
 * its fallback; "(default)" when not given. Returns -1. */
int cfg_error(struct cfg_doc *d, const char *sect, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "ORIGIN: [sect] key = 'value'" (key NULL: "ORIGIN: [sect]") */
void cfg_where(const struct cfg_doc *d, const char *sect, const char *key, char *buf,
	       size_t len);
/* "FILE:LINE" or "--set" of key in sect (NULL key: the section) */
void cfg_origin(const struct cfg_doc *d, const char *sect, const char *key, char *buf,
		size_t len);

/* Value parsers (also for the command line). 0, or -1 (-2: a duration
 * without a unit). */
int cfg_parse_u64(const char *s, uint64_t *v);
int cfg_parse_size(const char *s, uint64_t *v);
int cfg_parse_duration(const char *s, uint64_t *ns);
int cfg_parse_bool(const char *s, bool *b);
int cfg_parse_mac(const char *s, uint8_t mac[6]);

enum cfg_ref_format { CFG_REF_MD, CFG_REF_MAN, CFG_REF_TXT };
/* The reference of every section and key. */
void cfg_reference(const struct cfg_schema *sch, enum cfg_ref_format fmt, FILE *f);

#endif
