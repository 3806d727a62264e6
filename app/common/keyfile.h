/* SPDX-License-Identifier: BSD-3-Clause
 * MACsec key files (docs/macsec.md, "Key files"): the one reader of
 * htoe-bridge's key_file and htoe-pcap's --key-file. A key file must be a
 * regular file that neither group nor others may read or write; each line is
 * parsed by htoe_macsec_keyline_parse ("keyN = HEX", a bare HEX, "salt =
 * HEX", "master_key = HEX", "keyN A>B = HEX"; '#' or ';' starts a comment).
 * What the keys mean (which lengths, which mix of kinds) is the caller's.
 * Messages name the file and line and never quote a key.
 */
#ifndef HTOE_KEYFILE_H
#define HTOE_KEYFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "htoe/htoe_macsec.h"

#define HTOE_KEYFILE_LINE_MAX 512u
#define HTOE_KEYFILE_ORIGIN_MAX 1100u

struct htoe_keyfile {
	FILE       *f;
	const char *path;
	unsigned    lineno;
	unsigned    an_used;          /* shared keys: the ANs named so far (bit an) */
	unsigned    n_keys;           /* lines that gave a key or a master key */
	bool        bare;             /* the last key line was a bare HEX (its AN assigned) */
	char        origin[HTOE_KEYFILE_ORIGIN_MAX];  /* "PATH:LINE" of the last line */
	char        line[HTOE_KEYFILE_LINE_MAX];
};

/* Opens path after the checks above. 0, or -1 with the reason in err (the
 * path named first). */
int htoe_keyfile_open(struct htoe_keyfile *kf, const char *path, char *err, size_t errlen);

/* The next line with a key into *kl (kf->origin: "PATH:LINE"): 1; 0 at the
 * end of a file that gave at least one key; -1 with the reason in err
 * ("PATH:LINE: NAME: what was wrong"; a read error; a file without a key).
 * The file's own rules are checked here: a salt is 24 hex digits, a
 * master_key 32 or 64; a bare key (kl->an < 0 from the line parser) takes
 * the next AN no earlier line of the file named (kf->bare; more than four:
 * refused). */
int htoe_keyfile_next(struct htoe_keyfile *kf, struct htoe_macsec_keyline *kl, char *err,
		      size_t errlen);

/* Closes the file and wipes the line buffer. */
void htoe_keyfile_close(struct htoe_keyfile *kf);

/* The one hex rule of the programs' keys, salts, SCIs and MACs:
 * htoe_macsec_unhex (an optional 0x, pairs of hex digits, ':' or '-' allowed
 * between octets). Exactly want_min..want_max octets into out: 0, or -1
 * with what was wrong in err (a value is never quoted: it may be a key). */
int htoe_hex_octets(const char *s, uint8_t *out, size_t want_min, size_t want_max,
		    size_t *got, char *err, size_t errlen);

#endif
