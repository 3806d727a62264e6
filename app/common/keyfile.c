/* SPDX-License-Identifier: BSD-3-Clause
 * MACsec key files and the programs' hex values (see keyfile.h).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "keyfile.h"

int htoe_keyfile_open(struct htoe_keyfile *kf, const char *path, char *err, size_t errlen)
{
	struct stat st;

	memset(kf, 0, sizeof(*kf));
	kf->path = path;
	kf->f = fopen(path, "r");
	if (!kf->f) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fileno(kf->f), &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		goto fail;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errlen, "%s has mode %04o: readable or writable by group or others; "
			 "a key file must be private (chmod 600 %s)", path,
			 (unsigned)(st.st_mode & 07777), path);
		goto fail;
	}
	return 0;
fail:
	htoe_keyfile_close(kf);
	return -1;
}

int htoe_keyfile_next(struct htoe_keyfile *kf, struct htoe_macsec_keyline *kl, char *err,
		      size_t errlen)
{
	while (fgets(kf->line, sizeof(kf->line), kf->f)) {
		size_t n = strlen(kf->line);

		kf->lineno++;
		snprintf(kf->origin, sizeof(kf->origin), "%s:%u", kf->path, kf->lineno);
		if (n == sizeof(kf->line) - 1 && kf->line[n - 1] != '\n') {
			snprintf(err, errlen, "%s: line too long", kf->origin);
			return -1;
		}
		kf->bare = false;
		switch (htoe_macsec_keyline_parse(kf->line, kl)) {
		case HTOE_MACSEC_KL_EMPTY:
			continue;
		case HTOE_MACSEC_KL_ERROR:
			snprintf(err, errlen, "%s: %.40s: %s", kf->origin, kl->name, kl->err);
			return -1;
		case HTOE_MACSEC_KL_SALT:
			if (kl->len != HTOE_MACSEC_SALT_LEN) {
				snprintf(err, errlen, "%s: salt: expected 24 hex digits", kf->origin);
				return -1;
			}
			return 1;
		case HTOE_MACSEC_KL_MASTER:
			if (kl->len != 16 && kl->len != 32) {
				snprintf(err, errlen, "%s: master_key: a master_key is 32 or 64 hex "
					 "digits (16 or 32 octets)", kf->origin);
				return -1;
			}
			break;
		case HTOE_MACSEC_KL_KEY:
			/* a bare key: the next AN not named yet */
			kf->bare = kl->an < 0;
			for (int k = 0; kl->an < 0 && k < (int)HTOE_MACSEC_AN_COUNT; k++)
				if (!(kf->an_used & 1u << k))
					kl->an = k;
			if (kl->an < 0) {
				snprintf(err, errlen, "%s: more than four keys", kf->origin);
				return -1;
			}
			kf->an_used |= 1u << kl->an;
			break;
		default:
			break;
		}
		kf->n_keys++;
		return 1;
	}
	if (ferror(kf->f)) {
		snprintf(err, errlen, "read error on %s", kf->path);
		return -1;
	}
	if (!kf->n_keys) {
		snprintf(err, errlen, "no key in %s", kf->path);
		return -1;
	}
	return 0;
}

void htoe_keyfile_close(struct htoe_keyfile *kf)
{
	if (kf->f)
		fclose(kf->f);
	kf->f = NULL;
	explicit_bzero(kf->line, sizeof(kf->line));
}

int htoe_hex_octets(const char *s, uint8_t *out, size_t want_min, size_t want_max,
		    size_t *got, char *err, size_t errlen)
{
	const char *p = s;
	size_t nd = 0;
	int r;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p; p++) {
		if (isxdigit((unsigned char)*p))
			nd++;
		else if (*p != ':' && *p != '-') {
			snprintf(err, errlen, "'%c' is not a hex digit", *p);
			return -1;
		}
	}
	r = htoe_macsec_unhex(s, out, want_max);
	if (r < 0) {
		if (nd % 2)
			snprintf(err, errlen, "odd number of hex digits (%zu)", nd);
		else if (nd / 2 > want_max)
			snprintf(err, errlen, "more than %zu hex digits", 2 * want_max);
		else if (!nd)
			snprintf(err, errlen, "no hex digits");
		else
			snprintf(err, errlen, "':' or '-' only between octets (pairs of hex digits)");
		return -1;
	}
	if ((size_t)r < want_min) {
		if (want_min == want_max)
			snprintf(err, errlen, "expected %zu hex digits, got %zu", 2 * want_min, nd);
		else
			snprintf(err, errlen, "expected at least %zu hex digits, got %zu",
				 2 * want_min, nd);
		return -1;
	}
	*got = (size_t)r;
	return 0;
}
