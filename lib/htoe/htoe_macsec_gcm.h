/* SPDX-License-Identifier: BSD-3-Clause
 * Internal to lib/htoe/htoe_macsec*: the small AES-GCM interface the MACsec
 * layer uses, with two implementations (OpenSSL EVP, intel-ipsec-mb).
 *
 * One struct htoe_gcm holds one key for one direction (a TX SA seals, an RX
 * SA opens). Everything costly (key expansion, cipher context, GHASH tables)
 * happens in init; per frame only the 12-octet IV, the AAD, the data and the
 * 16-octet tag are passed. in == out (exactly) is allowed, partial overlap
 * is not. len may be 0 (integrity only: everything is AAD).
 */
#ifndef HTOE_MACSEC_GCM_H
#define HTOE_MACSEC_GCM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HTOE_GCM_IV_LEN  12u
#define HTOE_GCM_TAG_LEN 16u

struct htoe_gcm;

struct htoe_gcm_ops {
	const char *name;
	/* Shared per-SecY state (ipsec-mb: the IMB_MGR), created on first use;
	 * NULL functions when the backend needs none. */
	void *(*shared_new)(void);
	void (*shared_free)(void *shared);
	/* key_len 16 or 32. 0 or a negative errno. */
	int (*init)(struct htoe_gcm *g, void *shared, const uint8_t *key, size_t key_len,
	            bool encrypt);
	void (*fini)(struct htoe_gcm *g);
	/* 0, or a negative errno (backend failure). */
	int (*seal)(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
	            const uint8_t *aad, size_t aad_len,
	            const uint8_t *in, uint8_t *out, size_t len,
	            uint8_t tag[HTOE_GCM_TAG_LEN]);
	/* 0 if the tag is authentic; -EBADMSG if not (out then holds
	 * unauthenticated data the caller must discard); other negative errno
	 * on backend failure. */
	int (*open)(struct htoe_gcm *g, const uint8_t iv[HTOE_GCM_IV_LEN],
	            const uint8_t *aad, size_t aad_len,
	            const uint8_t *in, uint8_t *out, size_t len,
	            const uint8_t tag[HTOE_GCM_TAG_LEN]);
};

struct htoe_gcm {
	const struct htoe_gcm_ops *ops;
	void *impl;                 /* backend state, owned */
};

extern const struct htoe_gcm_ops htoe_gcm_openssl_ops;
#ifdef HTOE_HAVE_IPSECMB
extern const struct htoe_gcm_ops htoe_gcm_ipsecmb_ops;
#endif

/* Constant-time comparison of n octets: 0 iff equal. The differences are
 * OR-ed 8 octets at a time in a register (the asm barrier keeps the compiler
 * from turning the loop into an early exit); a volatile byte accumulator
 * went through memory on every octet and cost ~20 ns per 16-octet tag. */
static inline int htoe_gcm_ct_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint64_t d = 0;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
		__asm__("" : "+r"(d));
	}
	for (; i < n; i++) {
		d |= (uint8_t)(a[i] ^ b[i]);
		__asm__("" : "+r"(d));
	}
	return d != 0;
}

#endif /* HTOE_MACSEC_GCM_H */
