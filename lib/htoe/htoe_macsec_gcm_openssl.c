/* SPDX-License-Identifier: BSD-3-Clause
 * AES-GCM for htoe_macsec on OpenSSL EVP (the reference backend).
 *
 * One EVP_CIPHER_CTX per key and direction, with cipher and key set once in
 * init; per frame only the IV is set (EVP_*Init_ex with NULL cipher and
 * key), then AAD, data, final and tag. Re-keying per frame would cost about
 * 2x (docs/macsec.md).
 */
#include "htoe/htoe_macsec_gcm.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

struct ossl_gcm {
	EVP_CIPHER_CTX *ctx;
	bool encrypt;
};

static int ossl_init(struct htoe_gcm *g, void *shared, const uint8_t *key, size_t key_len,
                     bool encrypt)
{
	const EVP_CIPHER *c;

	(void)shared;
	if (key_len == 16)
		c = EVP_aes_128_gcm();
	else if (key_len == 32)
		c = EVP_aes_256_gcm();
	else
		return -EINVAL;

	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx)
		return -ENOMEM;
	int ok = encrypt ? EVP_EncryptInit_ex(ctx, c, NULL, key, NULL)
	                 : EVP_DecryptInit_ex(ctx, c, NULL, key, NULL);

	/* The default GCM IV length is 12, which is what MACsec uses. */
	if (ok != 1 || EVP_CIPHER_CTX_get_iv_length(ctx) != (int)HTOE_GCM_IV_LEN) {
		EVP_CIPHER_CTX_free(ctx);
		return -EIO;
	}
	g->impl = NULL;
	struct ossl_gcm *o = OPENSSL_zalloc(sizeof(*o));

	if (!o) {
		EVP_CIPHER_CTX_free(ctx);
		return -ENOMEM;
	}
	o->ctx = ctx;
	o->encrypt = encrypt;
	g->impl = o;
	return 0;
}

static void ossl_fini(struct htoe_gcm *g)
{
	struct ossl_gcm *o = g->impl;

	if (!o)
		return;
	EVP_CIPHER_CTX_free(o->ctx);   /* cleanses the key schedule */
	OPENSSL_free(o);
	g->impl = NULL;
}

static int ossl_seal(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
                     const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, uint8_t *out, size_t len,
                     uint8_t tag[HTOE_GCM_TAG_LEN])
{
	struct ossl_gcm *o = g->impl;
	uint8_t dummy[HTOE_GCM_TAG_LEN];
	int n;

	if (!out)
		out = dummy;    /* integrity only: nothing is written */
	if (!o->encrypt || aad_len > INT_MAX || len > INT_MAX)
		return -EINVAL;
	if (EVP_EncryptInit_ex(o->ctx, NULL, NULL, NULL, iv) != 1)
		return -EIO;
	if (aad_len && EVP_EncryptUpdate(o->ctx, NULL, &n, aad, (int)aad_len) != 1)
		return -EIO;
	if (len && (EVP_EncryptUpdate(o->ctx, out, &n, in, (int)len) != 1 ||
	            (size_t)n != len))
		return -EIO;
	if (EVP_EncryptFinal_ex(o->ctx, out + len, &n) != 1 || n != 0)
		return -EIO;
	if (EVP_CIPHER_CTX_ctrl(o->ctx, EVP_CTRL_AEAD_GET_TAG, HTOE_GCM_TAG_LEN, tag) != 1)
		return -EIO;
	return 0;
}

static int ossl_open(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
                     const uint8_t *aad, size_t aad_len,
                     const uint8_t *in, uint8_t *out, size_t len,
                     const uint8_t tag[HTOE_GCM_TAG_LEN])
{
	struct ossl_gcm *o = g->impl;
	uint8_t t[HTOE_GCM_TAG_LEN], dummy[HTOE_GCM_TAG_LEN];
	int n;

	if (!out)
		out = dummy;
	if (o->encrypt || aad_len > INT_MAX || len > INT_MAX)
		return -EINVAL;
	if (EVP_DecryptInit_ex(o->ctx, NULL, NULL, NULL, iv) != 1)
		return -EIO;
	if (aad_len && EVP_DecryptUpdate(o->ctx, NULL, &n, aad, (int)aad_len) != 1)
		return -EIO;
	if (len && (EVP_DecryptUpdate(o->ctx, out, &n, in, (int)len) != 1 ||
	            (size_t)n != len))
		return -EIO;
	/* SET_TAG takes a non-const pointer; hand it a copy. */
	memcpy(t, tag, sizeof(t));
	if (EVP_CIPHER_CTX_ctrl(o->ctx, EVP_CTRL_AEAD_SET_TAG, HTOE_GCM_TAG_LEN, t) != 1)
		return -EIO;
	/* The verdict: > 0 authentic. */
	return EVP_DecryptFinal_ex(o->ctx, out + len, &n) > 0 ? 0 : -EBADMSG;
}

const struct htoe_gcm_ops htoe_gcm_openssl_ops = {
	.name = "openssl",
	.shared_new = NULL,
	.shared_free = NULL,
	.init = ossl_init,
	.fini = ossl_fini,
	.seal = ossl_seal,
	.open = ossl_open,
};
