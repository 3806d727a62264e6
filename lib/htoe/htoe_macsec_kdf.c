/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_macsec: the IEEE 802.1X-2010 key derivation function (6.2.1) and the
 * pairwise SAKs htoe derives with it (docs/macsec.md, "Pairwise keys").
 *
 * KDF(Key, Label, Context, Length) is the counter-mode KDF of NIST SP 800-108
 * with AES-CMAC as the PRF: output block i (i = 1, 2, ...) is
 *   AES-CMAC(Key, i(1 octet) || Label || 0x00 || Context || Length(2 octets))
 * with Length in bits, big-endian; the blocks are concatenated and cut to
 * Length bits. The AES key size is the size of Key (16 or 32 octets).
 * AES-CMAC is OpenSSL's (EVP_MAC "CMAC"). Used at set-up only, never per
 * frame.
 */
#include "htoe/htoe_macsec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#define CMAC_LEN 16u
#define KDF_MSG_MAX 1024u

int htoe_macsec_kdf(const uint8_t *key, size_t key_len, const void *label, size_t label_len,
                    const uint8_t *context, size_t context_len, uint8_t *out, size_t out_len)
{
	uint8_t msg[KDF_MSG_MAX], block[CMAC_LEN];
	size_t hdr = 1 + label_len + 1, n = hdr + context_len + 2;
	int rc = -EIO;

	if (!key || (key_len != 16 && key_len != 32) || (!label && label_len) ||
	    (!context && context_len) || !out || !out_len || out_len * 8 > UINT16_MAX ||
	    out_len > 255 * CMAC_LEN || n > sizeof(msg))
		return -EINVAL;
	/* i || Label || 0x00 || Context || Length: i is filled per block */
	if (label_len)
		memcpy(msg + 1, label, label_len);
	msg[1 + label_len] = 0x00;
	if (context_len)
		memcpy(msg + hdr, context, context_len);
	msg[hdr + context_len] = (uint8_t)((out_len * 8) >> 8);
	msg[hdr + context_len + 1] = (uint8_t)(out_len * 8);

	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER,
		                                 key_len == 16 ? "AES-128-CBC" : "AES-256-CBC", 0),
		OSSL_PARAM_construct_end(),
	};

	if (!ctx)
		goto out;
	for (size_t done = 0, i = 1; done < out_len; i++) {
		size_t got = 0, take;

		msg[0] = (uint8_t)i;
		if (EVP_MAC_init(ctx, key, key_len, params) != 1 ||
		    EVP_MAC_update(ctx, msg, n) != 1 ||
		    EVP_MAC_final(ctx, block, &got, sizeof(block)) != 1 || got != CMAC_LEN)
			goto out;
		take = out_len - done < CMAC_LEN ? out_len - done : CMAC_LEN;
		memcpy(out + done, block, take);
		done += take;
	}
	rc = 0;
out:
	if (rc)
		explicit_bzero(out, out_len);
	explicit_bzero(block, sizeof(block));
	explicit_bzero(msg, sizeof(msg));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return rc;
}

void htoe_macsec_pairwise_context(uint16_t tx_node, uint16_t rx_node, unsigned an,
                                  uint8_t ctx[HTOE_MACSEC_PAIRWISE_CTX_LEN])
{
	ctx[0] = (uint8_t)(tx_node >> 8);
	ctx[1] = (uint8_t)tx_node;
	ctx[2] = (uint8_t)(rx_node >> 8);
	ctx[3] = (uint8_t)rx_node;
	ctx[4] = (uint8_t)an;
}

int htoe_macsec_pairwise_sak(const uint8_t *master, size_t master_len, uint16_t tx_node,
                             uint16_t rx_node, unsigned an, uint8_t *sak, size_t sak_len)
{
	uint8_t ctx[HTOE_MACSEC_PAIRWISE_CTX_LEN];

	if (an >= HTOE_MACSEC_AN_COUNT || tx_node == rx_node || (sak_len != 16 && sak_len != 32))
		return -EINVAL;
	htoe_macsec_pairwise_context(tx_node, rx_node, an, ctx);
	return htoe_macsec_kdf(master, master_len, HTOE_MACSEC_PAIRWISE_LABEL,
	                       sizeof(HTOE_MACSEC_PAIRWISE_LABEL) - 1, ctx, sizeof(ctx), sak,
	                       sak_len);
}

/* ---- key file lines -------------------------------------------------------- */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

static char *trim(char *s)
{
	char *e;

	while (is_space((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && is_space((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int htoe_macsec_unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (;;) {
		int hi = hexval((unsigned char)s[0]), lo = hi < 0 ? -1 : hexval((unsigned char)s[1]);

		if (hi < 0 || lo < 0 || n == cap)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (!*s)
			return (int)n;
		if (*s == ':' || *s == '-')   /* one separator between octets */
			s++;
	}
}

/* "keyN A>B" / "key A>B" (AN 0) */
static bool pair_name(const char *name, struct htoe_macsec_keyline *kl)
{
	unsigned an = 0, a, b;
	char tail;

	if (sscanf(name, "key%u %u>%u%c", &an, &a, &b, &tail) != 3 &&
	    (an = 0, sscanf(name, "key %u>%u%c", &a, &b, &tail) != 2))
		return false;
	if (an >= HTOE_MACSEC_AN_COUNT || a > UINT16_MAX || b > UINT16_MAX || a == b)
		return false;
	kl->an = (int)an;
	kl->from = (uint16_t)a;
	kl->to = (uint16_t)b;
	return true;
}

enum htoe_macsec_keyline_kind htoe_macsec_keyline_parse(char *line, struct htoe_macsec_keyline *kl)
{
	char *s, *eq, *name = NULL, *val;

	memset(kl, 0, sizeof(*kl));
	line[strcspn(line, "#;")] = 0;
	s = trim(line);
	if (!*s)
		return kl->kind = HTOE_MACSEC_KL_EMPTY;
	eq = strchr(s, '=');
	if (eq) {
		*eq = 0;
		name = trim(s);
		val = trim(eq + 1);
		snprintf(kl->name, sizeof(kl->name), "%s", name);
	} else {
		val = s;
		snprintf(kl->name, sizeof(kl->name), "(a bare key)");
	}
	if (!name) {
		kl->kind = HTOE_MACSEC_KL_KEY;
		kl->an = -1;
	} else if (!strcmp(name, "salt")) {
		kl->kind = HTOE_MACSEC_KL_SALT;
	} else if (!strcmp(name, "master_key")) {
		kl->kind = HTOE_MACSEC_KL_MASTER;
	} else if (!strcmp(name, "key")) {
		kl->kind = HTOE_MACSEC_KL_KEY;
	} else if ((!strncmp(name, "key", 3) || !strncmp(name, "an", 2)) &&
	           name[name[0] == 'k' ? 3 : 2] >= '0' && name[name[0] == 'k' ? 3 : 2] <= '3' &&
	           !name[(name[0] == 'k' ? 3 : 2) + 1]) {
		kl->kind = HTOE_MACSEC_KL_KEY;
		kl->an = name[name[0] == 'k' ? 3 : 2] - '0';
	} else if (strchr(name, '>')) {
		if (!pair_name(name, kl)) {
			kl->err = "a pairwise key is named 'keyN A>B' (AN N 0..3, from node A to "
			          "another node B)";
			return kl->kind = HTOE_MACSEC_KL_ERROR;
		}
		kl->kind = HTOE_MACSEC_KL_PAIR;
	} else {
		kl->err = "unknown name (key, key0..key3, salt, master_key, keyN A>B)";
		return kl->kind = HTOE_MACSEC_KL_ERROR;
	}
	int n = htoe_macsec_unhex(val, kl->val, sizeof(kl->val));

	if (n >= 0)
		kl->len = (size_t)n;
	if (n < 0) {
		explicit_bzero(kl->val, sizeof(kl->val));
		kl->err = kl->kind == HTOE_MACSEC_KL_SALT ? "not a hex salt (24 hex digits)"
		                                          : "not a hex key (32 or 64 hex digits)";
		return kl->kind = HTOE_MACSEC_KL_ERROR;
	}
	return kl->kind;
}
