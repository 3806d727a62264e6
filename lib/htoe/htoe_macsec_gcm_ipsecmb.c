/* SPDX-License-Identifier: BSD-3-Clause
 * AES-GCM for htoe_macsec on intel-ipsec-mb (the fast backend), direct API.
 *
 * The IMB_MGR (52 KB, the CPU-specific function table) is allocated once
 * per SecY (shared_new: alloc_mb_mgr + init_mb_mgr_auto) and only read per
 * frame. Per key: IMB_AES{128,256}_GCM_PRE expands the round keys and the
 * GHASH tables once; per frame IMB_AES{128,256}_GCM_ENC/DEC with a context
 * on the stack. The direct GCM functions do not write the manager, so a TX
 * and an RX thread can share it.
 *
 * The library computes the tag on open and leaves the comparison to the
 * caller: it is done here in constant time.
 */
#ifndef LINUX
#define LINUX   /* intel-ipsec-mb.h: 64-byte alignment of struct gcm_key_data */
#endif
#include "htoe/htoe_macsec_gcm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <intel-ipsec-mb.h>

struct imb_gcm {
	struct gcm_key_data key;     /* first: aligned_alloc(64) aligns it */
	IMB_MGR *mgr;                /* borrowed from the SecY */
	bool k256;
	bool encrypt;
};

static void *imb_shared_new(void)
{
	IMB_MGR *mgr = alloc_mb_mgr(0);

	if (!mgr)
		return NULL;
	init_mb_mgr_auto(mgr, NULL);
	if (imb_get_errno(mgr) != 0) {
		free_mb_mgr(mgr);
		return NULL;
	}
	return mgr;
}

static void imb_shared_free(void *shared)
{
	if (shared)
		free_mb_mgr(shared);
}

static int imb_init(struct htoe_gcm *g, void *shared, const uint8_t *key, size_t key_len,
                    bool encrypt)
{
	IMB_MGR *mgr = shared;

	if (!mgr)
		return -EIO;
	if (key_len != 16 && key_len != 32)
		return -EINVAL;
	size_t sz = (sizeof(struct imb_gcm) + 63) & ~(size_t)63;
	struct imb_gcm *o = aligned_alloc(64, sz);

	if (!o)
		return -ENOMEM;
	memset(o, 0, sz);
	o->mgr = mgr;
	o->k256 = key_len == 32;
	o->encrypt = encrypt;
	if (o->k256)
		IMB_AES256_GCM_PRE(mgr, key, &o->key);
	else
		IMB_AES128_GCM_PRE(mgr, key, &o->key);
	g->impl = o;
	return 0;
}

static void imb_fini(struct htoe_gcm *g)
{
	struct imb_gcm *o = g->impl;

	if (!o)
		return;
	explicit_bzero(o, sizeof(*o));
	free(o);
	g->impl = NULL;
}

static int imb_seal(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
                    const uint8_t *aad, size_t aad_len,
                    const uint8_t *in, uint8_t *out, size_t len,
                    uint8_t tag[HTOE_GCM_TAG_LEN])
{
	struct imb_gcm *o = g->impl;
	struct gcm_context_data ctx;
	uint8_t dummy[16];

	if (!o->encrypt)
		return -EINVAL;
	/* The library checks its pointer arguments even for zero lengths. */
	if (!len) {
		in = dummy;
		out = dummy;
	}
	if (!aad_len)
		aad = dummy;
	if (o->k256)
		IMB_AES256_GCM_ENC(o->mgr, &o->key, &ctx, out, in, len, iv, aad, aad_len,
		                   tag, HTOE_GCM_TAG_LEN);
	else
		IMB_AES128_GCM_ENC(o->mgr, &o->key, &ctx, out, in, len, iv, aad, aad_len,
		                   tag, HTOE_GCM_TAG_LEN);
	explicit_bzero(&ctx, sizeof(ctx));
	return 0;
}

static int imb_open(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
                    const uint8_t *aad, size_t aad_len,
                    const uint8_t *in, uint8_t *out, size_t len,
                    const uint8_t tag[HTOE_GCM_TAG_LEN])
{
	struct imb_gcm *o = g->impl;
	struct gcm_context_data ctx;
	uint8_t t[HTOE_GCM_TAG_LEN], dummy[16];

	if (o->encrypt)
		return -EINVAL;
	if (!len) {
		in = dummy;
		out = dummy;
	}
	if (!aad_len)
		aad = dummy;
	if (o->k256)
		IMB_AES256_GCM_DEC(o->mgr, &o->key, &ctx, out, in, len, iv, aad, aad_len,
		                   t, HTOE_GCM_TAG_LEN);
	else
		IMB_AES128_GCM_DEC(o->mgr, &o->key, &ctx, out, in, len, iv, aad, aad_len,
		                   t, HTOE_GCM_TAG_LEN);
	explicit_bzero(&ctx, sizeof(ctx));
	return htoe_gcm_ct_diff(t, tag, HTOE_GCM_TAG_LEN) ? -EBADMSG : 0;
}

const struct htoe_gcm_ops htoe_gcm_ipsecmb_ops = {
	.name = "ipsec-mb",
	.shared_new = imb_shared_new,
	.shared_free = imb_shared_free,
	.init = imb_init,
	.fini = imb_fini,
	.seal = imb_seal,
	.open = imb_open,
};
