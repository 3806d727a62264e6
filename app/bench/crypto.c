/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the MACsec crypto path (lib/htoe htoe_macsec) against the raw
 * AES-GCM of its backend (intel-ipsec-mb IMB_AES128_GCM_ENC/DEC, OpenSSL
 * EVP) on the same frame sizes. See bench.h.
 *
 * One "frame" is one protect and one validate (path), or one encryption and
 * one decryption with the tag compared (raw), of what MACsec protects in a
 * frame of frame_len octets: AAD = DA SA SecTAG (12 + 16 with the SCI), the
 * encrypted user data = EtherType + payload (frame_len - 12), a 12-byte IV,
 * a 16-byte ICV. The raw loops set up their keys once, like the SAs.
 *
 * Two ways, both measured: in place (what app/bridge/macsec.c does:
 * htoe_macsec_protect_inplace puts the SecTAG into the headroom of the
 * buffer, htoe_macsec_validate_inplace decrypts over it; the raw loop
 * encrypts and decrypts in == out) -- the figure compared with the target --
 * and out of place (htoe_macsec_protect / htoe_macsec_validate into other
 * buffers; raw into other buffers). An in-place round trip leaves the plain
 * frame where it started, so every iteration sees the same input.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#ifdef HTOE_BENCH_IPSECMB
#include <intel-ipsec-mb.h>
#endif

#include "bench.h"
#include "htoe/htoe_macsec.h"

#define AAD_LEN 28u
#define MAXF    2048u
#define HEADROOM 128u   /* RTE_PKTMBUF_HEADROOM */

static const uint8_t key[16] = { 0xad, 0x7a, 0x2b, 0xd0, 0x3e, 0xac, 0x83, 0x5a,
				 0x6f, 0x62, 0x0f, 0xdc, 0xb5, 0x06, 0xb3, 0x45 };

/* Runs fn(ctx) in batches of 64 until secs passed, three times; the best
 * ns per call (or -1 when fn failed). */
static double time_best(int (*fn)(void *), void *ctx, double secs)
{
	double best = -1;

	for (int r = 0; r < 3; r++) {
		unsigned long long t0 = bench_now_ns(), el;
		unsigned long n = 0;

		do {
			for (int k = 0; k < 64; k++)
				if (fn(ctx))
					return -1;
			n += 64;
			el = bench_now_ns() - t0;
		} while ((double)el < secs * 1e9 / 3);
		double ns = (double)el / (double)n;

		if (best < 0 || ns < best)
			best = ns;
	}
	return best;
}

struct path_ctx {
	struct htoe_macsec *tx, *rx;
	const uint8_t *plain;
	size_t len;
	uint8_t prot[MAXF + 64], back[MAXF + 64];
	uint8_t buf[HEADROOM + MAXF + 64];      /* in place: the plain frame at HEADROOM */
};

static int path_one(void *arg)
{
	struct path_ctx *c = arg;
	size_t n, m;

	if (htoe_macsec_protect(c->tx, c->plain, c->len, c->prot, sizeof(c->prot), &n, NULL) !=
	    HTOE_MACSEC_TX_OK)
		return -1;
	int st = htoe_macsec_validate(c->rx, c->prot, n, c->back, sizeof(c->back), &m, NULL);

	return st == HTOE_MACSEC_RX_OK || st == HTOE_MACSEC_RX_DELAYED ? 0 : -1;
}

/* As app/bridge/macsec.c: br_macsec_tx, then br_macsec_rx on the result. */
static int path_inplace_one(void *arg)
{
	struct path_ctx *c = arg;
	size_t off = HEADROOM, len = c->len, poff = 0, plen = 0;

	if (htoe_macsec_protect_inplace(c->tx, c->buf, sizeof(c->buf), &off, &len, NULL) !=
	    HTOE_MACSEC_TX_OK)
		return -1;
	if (htoe_macsec_validate_inplace(c->rx, c->buf + off, len, &poff, &plen, NULL) !=
	    HTOE_MACSEC_RX_OK)
		return -1;
	return off + poff == HEADROOM && plen == c->len ? 0 : -1;
}

struct raw_ctx {
	size_t len;                       /* encrypted octets */
	uint8_t aad[AAD_LEN], iv[12], in[MAXF], ct[MAXF], pt[MAXF], tag[16], tag2[16];
	uint32_t pn;
	bool inplace;                     /* ct and pt are in */
	EVP_CIPHER_CTX *enc, *dec;
#ifdef HTOE_BENCH_IPSECMB
	IMB_MGR *mgr;
	struct gcm_key_data kd;
#endif
};

/* a fresh IV per frame, as MACsec does (SCI || PN) */
static void next_iv(struct raw_ctx *c)
{
	c->pn++;
	memcpy(c->iv + 8, &c->pn, 4);
}

static int raw_openssl(void *arg)
{
	struct raw_ctx *c = arg;
	uint8_t *ct = c->inplace ? c->in : c->ct, *pt = c->inplace ? c->in : c->pt;
	int l, l2;

	next_iv(c);
	if (!EVP_EncryptInit_ex(c->enc, NULL, NULL, NULL, c->iv) ||
	    !EVP_EncryptUpdate(c->enc, NULL, &l, c->aad, AAD_LEN) ||
	    !EVP_EncryptUpdate(c->enc, ct, &l, c->in, (int)c->len) ||
	    !EVP_EncryptFinal_ex(c->enc, ct + l, &l2) ||
	    !EVP_CIPHER_CTX_ctrl(c->enc, EVP_CTRL_GCM_GET_TAG, 16, c->tag))
		return -1;
	if (!EVP_DecryptInit_ex(c->dec, NULL, NULL, NULL, c->iv) ||
	    !EVP_DecryptUpdate(c->dec, NULL, &l, c->aad, AAD_LEN) ||
	    !EVP_DecryptUpdate(c->dec, pt, &l, ct, (int)c->len) ||
	    !EVP_CIPHER_CTX_ctrl(c->dec, EVP_CTRL_GCM_SET_TAG, 16, c->tag) ||
	    EVP_DecryptFinal_ex(c->dec, pt + l, &l2) <= 0)
		return -1;
	return 0;
}

#ifdef HTOE_BENCH_IPSECMB
static int raw_ipsecmb(void *arg)
{
	struct raw_ctx *c = arg;
	struct gcm_context_data g;
	uint8_t *ct = c->inplace ? c->in : c->ct, *pt = c->inplace ? c->in : c->pt;

	next_iv(c);
	IMB_AES128_GCM_ENC(c->mgr, &c->kd, &g, ct, c->in, c->len, c->iv, c->aad, AAD_LEN,
			   c->tag, 16);
	IMB_AES128_GCM_DEC(c->mgr, &c->kd, &g, pt, ct, c->len, c->iv, c->aad, AAD_LEN,
			   c->tag2, 16);
	return memcmp(c->tag, c->tag2, 16) ? -1 : 0;
}
#endif

static double raw_ns(enum htoe_macsec_backend be, size_t frame_len, bool inplace, double secs)
{
	static struct raw_ctx c;
	double ns = -1;

	memset(&c, 0, sizeof(c));
	c.inplace = inplace;
	c.len = frame_len - 12;
	for (size_t i = 0; i < c.len; i++)
		c.in[i] = (uint8_t)(i * 7);
	memset(c.aad, 0x11, sizeof(c.aad));
	memset(c.iv, 0x22, sizeof(c.iv));
	if (be == HTOE_MACSEC_BACKEND_OPENSSL) {
		c.enc = EVP_CIPHER_CTX_new();
		c.dec = EVP_CIPHER_CTX_new();
		if (c.enc && c.dec &&
		    EVP_EncryptInit_ex(c.enc, EVP_aes_128_gcm(), NULL, key, NULL) &&
		    EVP_DecryptInit_ex(c.dec, EVP_aes_128_gcm(), NULL, key, NULL))
			ns = time_best(raw_openssl, &c, secs);
		EVP_CIPHER_CTX_free(c.enc);
		EVP_CIPHER_CTX_free(c.dec);
		return ns;
	}
#ifdef HTOE_BENCH_IPSECMB
	c.mgr = alloc_mb_mgr(0);
	if (!c.mgr)
		return -1;
	init_mb_mgr_auto(c.mgr, NULL);
	IMB_AES128_GCM_PRE(c.mgr, key, &c.kd);
	ns = time_best(raw_ipsecmb, &c, secs);
	free_mb_mgr(c.mgr);
#endif
	return ns;
}

int bench_crypto(const char *backend, size_t frame_len, double secs, struct bench_crypto *r,
		 char *err, size_t errlen)
{
	enum htoe_macsec_backend be = !strcmp(backend, "openssl") ? HTOE_MACSEC_BACKEND_OPENSSL
								   : HTOE_MACSEC_BACKEND_IPSECMB;
	static uint8_t plain[MAXF];
	static struct path_ctx p;

	if (frame_len < 14 || frame_len > MAXF) {
		snprintf(err, errlen, "crypto: frame length %zu out of 14..%u", frame_len, MAXF);
		return -1;
	}
#ifndef HTOE_BENCH_IPSECMB
	if (be == HTOE_MACSEC_BACKEND_IPSECMB) {
		snprintf(err, errlen, "intel-ipsec-mb not built in (libipsec-mb-dev)");
		return -1;
	}
#endif
	if (!htoe_macsec_backend_available(be)) {
		snprintf(err, errlen, "backend %s not available", backend);
		return -1;
	}
	for (size_t i = 0; i < frame_len; i++)
		plain[i] = (uint8_t)(i * 7);
	plain[12] = 0x88;
	plain[13] = 0xB5;
	struct htoe_macsec_cfg cfg = {
		.cipher = HTOE_MACSEC_GCM_AES_128, .sci = 0x0248540000010001ull,
		.no_replay_protect = true, .backend = be,
	};
	struct htoe_macsec_sa_cfg sa = { .key = key, .key_len = 16, .pn = 1, .backend = be };

	memset(&p, 0, sizeof(p));
	p.tx = htoe_macsec_new(&cfg, NULL);
	p.rx = htoe_macsec_new(&cfg, NULL);
	p.plain = plain;
	p.len = frame_len;
	memcpy(p.buf + HEADROOM, plain, frame_len);
	r->path_ns = r->raw_ns = r->oop_path_ns = r->oop_raw_ns = -1;
	if (p.tx && p.rx && !htoe_macsec_tx_sa_add(p.tx, 0, &sa) &&
	    !htoe_macsec_rx_sc_add(p.rx, cfg.sci) && !htoe_macsec_rx_sa_add(p.rx, cfg.sci, 0, &sa)) {
		r->path_ns = time_best(path_inplace_one, &p, secs);
		if (r->path_ns >= 0 && memcmp(p.buf + HEADROOM, plain, frame_len))
			r->path_ns = -1;        /* the round trip must give the frame back */
		r->oop_path_ns = time_best(path_one, &p, secs);
	}
	htoe_macsec_free(p.tx);
	htoe_macsec_free(p.rx);
	r->raw_ns = raw_ns(be, frame_len, true, secs);
	r->oop_raw_ns = raw_ns(be, frame_len, false, secs);
	if (r->path_ns < 0 || r->raw_ns < 0 || r->oop_path_ns < 0 || r->oop_raw_ns < 0) {
		snprintf(err, errlen, "crypto: %s setup or a frame failed", backend);
		return -1;
	}
	return 0;
}
