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
