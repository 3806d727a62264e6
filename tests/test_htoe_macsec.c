/* SPDX-License-Identifier: BSD-3-Clause
 * Unit tests of lib/htoe/htoe_macsec: IEEE 802.1AE MACsec.
 *
 *   test_htoe_macsec VECTORS.json
 *
 * VECTORS.json is tests/data/macsec-ieee-802.1ae.json (802.1AE Annex C and
 * one DPDK case, 33 vectors). Every test that involves crypto runs on both
 * backends (OpenSSL EVP and intel-ipsec-mb); ipsec-mb parts are skipped if
 * the build has no ipsec-mb.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "htoe/htoe_macsec.h"
#include "htoe/htoe_macsec_gcm.h"

static const char *vectors_path;
static json_t *vectors;

#define N_BACKENDS 2
static const enum htoe_macsec_backend backends[N_BACKENDS] = {
	HTOE_MACSEC_BACKEND_OPENSSL, HTOE_MACSEC_BACKEND_IPSECMB,
};
static bool have_imb;

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s);

	assert_true(n % 2 == 0 && n / 2 <= cap);
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;

		assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n / 2;
}

static uint64_t hex64(const char *s)
{
	return strtoull(s, NULL, 16);
}

static const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static bool skip_backend(enum htoe_macsec_backend b)
{
	return b == HTOE_MACSEC_BACKEND_IPSECMB && !have_imb;
}

static struct htoe_macsec *secy_new(const struct htoe_macsec_cfg *cfg)
{
	int err = 0;
	struct htoe_macsec *m = htoe_macsec_new(cfg, &err);

	assert_non_null(m);
	return m;
}

static struct htoe_macsec_sa_cfg sa_cfg(const uint8_t *key, size_t key_len, uint64_t pn,
                                        enum htoe_macsec_backend b)
{
	struct htoe_macsec_sa_cfg s = {
		.key = key, .key_len = key_len, .pn = pn, .backend = b,
		.ssci = 0x7A30C118,
		.salt = { 0xE6, 0x30, 0xE8, 0x1A, 0x48, 0xDE, 0x86, 0xA2, 0x1C, 0x66, 0xFA, 0x6D },
	};
	return s;
}

static uint64_t drops(const struct htoe_macsec_stats *s)
{
	return s->secy.InPktsNoTag + s->secy.InPktsBadTag + s->secy.InPktsNoSCI +
	       s->rx.InPktsNotUsingSA + s->rx.InPktsLate + s->rx.InPktsNotValid;
}

static struct htoe_macsec_stats stats(const struct htoe_macsec *m)
{
	struct htoe_macsec_stats s;

	htoe_macsec_stats(m, &s);
	return s;
}

/* A plain Ethernet frame: fixed MACs, EtherType 0x88B5, random payload. */
static void make_frame(uint8_t *f, size_t len, const uint8_t src[6])
{
	static const uint8_t dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };

	assert_true(len >= 14);
	memcpy(f, dst, 6);
	memcpy(f + 6, src, 6);
	f[12] = 0x88;
	f[13] = 0xB5;
	rnd_bytes(f + 14, len - 14);
}

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0x01 };

/* A TX/RX SecY pair for one (cipher, mode, backend): node A sends with
 * SCI mac_a||1 on AN 0, node B receives. */
struct pair {
	struct htoe_macsec *tx, *rx;
	uint8_t key[32];
	uint64_t sci;
};

static void pair_init(struct pair *p, enum htoe_macsec_cipher c, bool integrity,
                      enum htoe_macsec_tx_sci sci_mode, uint32_t window, uint64_t pn,
                      enum htoe_macsec_backend b)
{
	struct htoe_macsec_cfg cfg = {
		.cipher = c, .integrity_only = integrity, .tx_sci_mode = sci_mode,
		.replay_window = window,
	};
	size_t kl = htoe_macsec_cipher_key_len(c);

	memset(p, 0, sizeof(*p));
	p->sci = htoe_macsec_sci(mac_a, 1);
	cfg.sci = p->sci;
	rnd_bytes(p->key, sizeof(p->key));
	p->tx = secy_new(&cfg);
	cfg.sci = 0x0200000000020001ull;
	p->rx = secy_new(&cfg);
	struct htoe_macsec_sa_cfg s = sa_cfg(p->key, kl, pn, b);

	assert_int_equal(htoe_macsec_tx_sa_add(p->tx, 0, &s), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(p->rx, p->sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(p->rx, p->sci, 0, &s), 0);
}

static void pair_fini(struct pair *p)
{
	htoe_macsec_free(p->tx);
	htoe_macsec_free(p->rx);
}

/* protect in -> out (an array: its size is the capacity); returns the
 * protected length. */
static size_t prot_(struct htoe_macsec *m, const uint8_t *in, size_t len, uint8_t *out,
                    size_t cap, struct htoe_macsec_tx_info *info)
{
	size_t n = 0;

	assert_int_equal(htoe_macsec_protect(m, in, len, out, cap, &n, info), HTOE_MACSEC_TX_OK);
	return n;
}
#define prot(m, in, len, out, info) prot_(m, in, len, out, sizeof(out), info)

static int val_(struct htoe_macsec *m, const uint8_t *in, size_t len, uint8_t *out,
                size_t cap, size_t *out_len)
{
	size_t dummy;

	return htoe_macsec_validate(m, in, len, out, cap, out_len ? out_len : &dummy, NULL);
}
#define val(m, in, len, out, out_len) val_(m, in, len, out, sizeof(out), out_len)

/* ---- known-answer vectors ----------------------------------------------------- */

struct vec {
	const char *name;
	enum htoe_macsec_cipher cipher;
	bool integrity, sci_in_tag;
	uint8_t key[32];
	size_t key_len;
	uint64_t sci, pn;           /* pn: full (XPN: pn64) */
	unsigned an, sl;
	uint8_t tci_an;
	uint8_t plain[128], prot[160];
	size_t plain_len, prot_len;
	uint32_t ssci;
	uint8_t salt[12];
};

static void vec_load(json_t *v, struct vec *x)
{
	memset(x, 0, sizeof(*x));
	x->name = jstr(v, "name");
	assert_int_equal(htoe_macsec_cipher_parse(jstr(v, "cipher_suite"), &x->cipher), 0);
	x->integrity = !strcmp(jstr(v, "protection"), "integrity");
	x->sci_in_tag = json_is_true(json_object_get(v, "sci_in_sectag"));
	x->key_len = unhex(jstr(v, "key"), x->key, sizeof(x->key));
	x->sci = hex64(jstr(v, "sci"));
	x->an = (unsigned)json_integer_value(json_object_get(v, "an"));
	x->sl = (unsigned)json_integer_value(json_object_get(v, "sl"));
	x->tci_an = (uint8_t)strtoul(jstr(v, "tci_an"), NULL, 16);
	x->plain_len = unhex(jstr(v, "plaintext_frame"), x->plain, sizeof(x->plain));
	x->prot_len = unhex(jstr(v, "protected_frame"), x->prot, sizeof(x->prot));
	if (htoe_macsec_cipher_xpn(x->cipher)) {
		x->pn = hex64(jstr(v, "pn64"));
		x->ssci = (uint32_t)strtoul(jstr(v, "ssci"), NULL, 16);
		unhex(jstr(v, "salt"), x->salt, sizeof(x->salt));
	} else {
		x->pn = hex64(jstr(v, "pn"));
	}
}

static struct htoe_macsec *vec_secy(const struct vec *x, bool tx, enum htoe_macsec_backend b,
                                    uint64_t pn)
{
	struct htoe_macsec_cfg cfg = {
		.cipher = x->cipher,
		.integrity_only = x->integrity,
		.tx_sci_mode = x->sci_in_tag ? HTOE_MACSEC_TX_SCI_EXPLICIT : HTOE_MACSEC_TX_SCI_ES,
		.sci = tx ? x->sci : 0x0A0B0C0D0E0F0001ull,
	};
	struct htoe_macsec *m = secy_new(&cfg);
	struct htoe_macsec_sa_cfg s = {
		.key = x->key, .key_len = x->key_len, .pn = pn, .backend = b, .ssci = x->ssci,
	};

	memcpy(s.salt, x->salt, sizeof(s.salt));
	if (tx) {
		assert_int_equal(htoe_macsec_tx_sa_add(m, x->an, &s), 0);
	} else {
		assert_int_equal(htoe_macsec_rx_sc_add(m, x->sci), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(m, x->sci, x->an, &s), 0);
	}
	struct htoe_macsec_sa_state st;

	assert_int_equal(tx ? htoe_macsec_tx_sa_state(m, x->an, &st)
	                    : htoe_macsec_rx_sa_state(m, x->sci, x->an, &st), 0);
	assert_int_equal(st.backend, b);
	return m;
}

static void test_vectors(void **state)
{
	(void)state;
	json_t *arr = json_object_get(vectors, "vectors");
	size_t i, checked = 0;
	json_t *v;

	assert_int_equal(json_array_size(arr), 33);
	json_array_foreach(arr, i, v) {
		struct vec x;

		vec_load(v, &x);
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			enum htoe_macsec_backend b = backends[bi];

			if (skip_backend(b))
				continue;
			uint8_t out[256], buf[512];
			size_t n = 0, off, len;
			struct htoe_macsec_tx_info ti;
			struct htoe_macsec_rx_info ri;

			/* protect (out of place) -> exact bytes */
			struct htoe_macsec *tx = vec_secy(&x, true, b, x.pn);

			assert_int_equal(htoe_macsec_protect(tx, x.plain, x.plain_len, out,
			                                     sizeof(out), &n, &ti), HTOE_MACSEC_TX_OK);
			if (n != x.prot_len || memcmp(out, x.prot, n))
				fail_msg("%s/%s: protected frame differs", x.name,
				         htoe_macsec_backend_name(b));
			assert_int_equal(ti.an, x.an);
			assert_int_equal(ti.pn, x.pn);
			assert_int_equal(out[14], x.tci_an);
			assert_int_equal(out[15], x.sl);
			htoe_macsec_free(tx);

			/* protect in place, SecTAG into the headroom */
			tx = vec_secy(&x, true, b, x.pn);
			memset(buf, 0xEE, sizeof(buf));
			memcpy(buf + 64, x.plain, x.plain_len);
			off = 64;
			len = x.plain_len;
			assert_int_equal(htoe_macsec_protect_inplace(tx, buf, 64 + x.plain_len + 16,
			                                             &off, &len, NULL),
			                 HTOE_MACSEC_TX_OK);
			assert_int_equal(len, x.prot_len);
			assert_int_equal(off, 64 - (x.sci_in_tag ? 16 : 8));
			assert_memory_equal(buf + off, x.prot, len);
			htoe_macsec_free(tx);

			/* protect in place, no headroom: the secure data moves */
			tx = vec_secy(&x, true, b, x.pn);
			memcpy(buf, x.plain, x.plain_len);
			off = 0;
			len = x.plain_len;
			assert_int_equal(htoe_macsec_protect_inplace(tx, buf, x.prot_len, &off, &len,
			                                             NULL), HTOE_MACSEC_TX_OK);
			assert_int_equal(off, 0);
			assert_memory_equal(buf, x.prot, x.prot_len);
			htoe_macsec_free(tx);

			/* validate (out of place) -> plaintext */
			struct htoe_macsec *rx = vec_secy(&x, false, b, x.pn);

			assert_int_equal(htoe_macsec_validate(rx, x.prot, x.prot_len, out,
			                                      sizeof(out), &n, &ri), HTOE_MACSEC_RX_OK);
			assert_int_equal(n, x.plain_len);
			assert_memory_equal(out, x.plain, n);
			assert_int_equal(ri.pn, x.pn);
			assert_int_equal(ri.sci, x.sci);
			assert_int_equal(ri.an, x.an);
			struct htoe_macsec_stats s = stats(rx);

			assert_int_equal(s.rx.InPktsOK, 1);
			if (x.integrity)
				assert_int_equal(s.rx.InOctetsValidated, x.plain_len - 12);
			else
				assert_int_equal(s.rx.InOctetsDecrypted, x.plain_len - 12);
			htoe_macsec_free(rx);

			/* validate in place */
			rx = vec_secy(&x, false, b, x.pn);
			memcpy(buf, x.prot, x.prot_len);
			assert_int_equal(htoe_macsec_validate_inplace(rx, buf, x.prot_len, &off, &len,
			                                              NULL), HTOE_MACSEC_RX_OK);
			assert_int_equal(off, x.sci_in_tag ? 16 : 8);
			assert_int_equal(len, x.plain_len);
			assert_memory_equal(buf + off, x.plain, len);
			htoe_macsec_free(rx);

			/* SL: MAC padding after the ICV is ignored */
			if (x.sl) {
				rx = vec_secy(&x, false, b, x.pn);
				memcpy(buf, x.prot, x.prot_len);
				memset(buf + x.prot_len, 0, 8);
				assert_int_equal(htoe_macsec_validate(rx, buf, x.prot_len + 8, out,
				                                      sizeof(out), &n, NULL),
				                 HTOE_MACSEC_RX_OK);
				assert_int_equal(n, x.plain_len);
				assert_memory_equal(out, x.plain, n);
				/* ... but a frame shorter than SL says is a bad tag */
				assert_int_equal(htoe_macsec_validate(rx, x.prot, x.prot_len - 1, out,
				                                      sizeof(out), &n, NULL),
				                 HTOE_MACSEC_RX_BAD_TAG);
				htoe_macsec_free(rx);
			}
			checked++;
		}
	}
	print_message("vectors: %zu vector/backend combinations checked\n", checked);
	assert_true(checked >= 33);
}

/* The scapy-made frame of docs (shared/reference/macsec.md 10.1). */
static void test_scapy_known_answer(void **state)
{
	(void)state;
	static const char *want =
		"02000000000202000000000188e52c16000000010200000000010001705981a87e50df89"
		"cf221c4e704c6ded9d0674a0fb47f92caf3f7ac59be479af5b6719ab62f7";
	uint8_t exp[128], plain[64], out[128];
	size_t exp_len = unhex(want, exp, sizeof(exp)), n;

	for (int bi = 0; bi < N_BACKENDS; bi++) {
		if (skip_backend(backends[bi]))
			continue;
		/* The scapy recipe's inputs: SCI 02:00:00:00:00:01/1, AN 0, PN 1,
		 * key AD7A2BD03EAC835A6F620FDCB506B345 (the 802.1AE Annex C
		 * 128-bit key), inner frame 02..02 <- 02..01, EtherType 88B5,
		 * payload 00 01 .. 13. */
		struct htoe_macsec_cfg cfg = { .sci = 0x0200000000010001ull };
		struct htoe_macsec *m = secy_new(&cfg);
		uint8_t key[16];

		unhex("AD7A2BD03EAC835A6F620FDCB506B345", key, sizeof(key));
		struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 1, backends[bi]);

		assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
		assert_int_equal(htoe_macsec_rx_sc_add(m, cfg.sci), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(m, cfg.sci, 0, &s), 0);
		/* decrypt the known frame, re-protect its plaintext: same bytes */
		int st = htoe_macsec_validate(m, exp, exp_len, plain, sizeof(plain), &n, NULL);

		assert_int_equal(st, HTOE_MACSEC_RX_OK);
		assert_int_equal(n, 34);
		assert_int_equal(plain[12], 0x88);
		assert_int_equal(plain[13], 0xB5);
		for (int i = 0; i < 20; i++)
			assert_int_equal(plain[14 + i], i);
		assert_int_equal(prot(m, plain, n, out, NULL), exp_len);
		assert_memory_equal(out, exp, exp_len);
		htoe_macsec_free(m);
	}
}

/* ---- SecTAG codec --------------------------------------------------------------- */

static void test_sectag_codec(void **state)
{
	(void)state;
	uint8_t f[128];
	struct htoe_macsec_sectag t, u;

	/* round trip of every legal TCI with every AN */
	for (unsigned tci = 0; tci < 0x100; tci += 4) {
		for (unsigned an = 0; an < 4; an++) {
			bool sc = tci & HTOE_MACSEC_TCI_SC;

			memset(f, 0, sizeof(f));
			make_frame(f, 100, mac_a);
			t = (struct htoe_macsec_sectag){
				.tci = (uint8_t)tci, .an = (uint8_t)an, .sl = 0, .pn = 0x01020304,
				.sci = 0x1122334455660007ull,
			};
			int n = htoe_macsec_sectag_write(f + 12, 16, &t);

			assert_int_equal(n, sc ? 16 : 8);
			int r = htoe_macsec_sectag_parse(f, 12 + (size_t)n + 48 + 16, false, &u);
			bool bad = (tci & HTOE_MACSEC_TCI_V) ||
			           (sc && (tci & (HTOE_MACSEC_TCI_ES | HTOE_MACSEC_TCI_SCB)));

			assert_int_equal(r, bad ? HTOE_MACSEC_RX_BAD_TAG : HTOE_MACSEC_RX_OK);
			assert_int_equal(u.tci, tci);
			assert_int_equal(u.an, an);
			assert_int_equal(u.pn, 0x01020304);
			assert_int_equal(u.len, n);
			assert_int_equal(u.sci, sc ? t.sci : htoe_macsec_sci(mac_a, 1));
			if (!bad) {
				assert_int_equal(u.secure_len, 48);
				assert_int_equal(u.frame_len, 12 + (size_t)n + 48 + 16);
			}
		}
	}
	/* SL */
	t = (struct htoe_macsec_sectag){ .tci = 0x2C, .sl = 47, .pn = 1, .sci = 5 };
	assert_int_equal(htoe_macsec_sectag_write(f + 12, 16, &t), 16);
	assert_int_equal(htoe_macsec_sectag_parse(f, 12 + 16 + 47 + 16, false, &u), 0);
	assert_int_equal(u.secure_len, 47);
	assert_int_equal(htoe_macsec_sectag_parse(f, 12 + 16 + 47 + 16 + 30, false, &u), 0);
	assert_int_equal(u.frame_len, 12 + 16 + 47 + 16);
	assert_int_equal(htoe_macsec_sectag_parse(f, 12 + 16 + 46 + 16, false, &u),
	                 HTOE_MACSEC_RX_BAD_TAG);
	/* SL = 0 needs >= 48 octets of secure data */
	t.sl = 0;
	htoe_macsec_sectag_write(f + 12, 16, &t);
	assert_int_equal(htoe_macsec_sectag_parse(f, 12 + 16 + 47 + 16, false, &u),
	                 HTOE_MACSEC_RX_BAD_TAG);
	assert_int_equal(htoe_macsec_sectag_parse(f, 12 + 16 + 48 + 16, false, &u), 0);
	/* SL 48..63, reserved bits */
	f[15] = 48;
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, false, &u), HTOE_MACSEC_RX_BAD_TAG);
	f[15] = 0x40 | 10;
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, false, &u), HTOE_MACSEC_RX_BAD_TAG);
	f[15] = 0x80;
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, false, &u), HTOE_MACSEC_RX_BAD_TAG);
	f[15] = 0;
	/* PN 0: bad unless XPN */
	memset(f + 16, 0, 4);
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, false, &u), HTOE_MACSEC_RX_BAD_TAG);
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, true, &u), HTOE_MACSEC_RX_OK);
	/* short frames, wrong EtherType */
	for (size_t l = 0; l < 14; l++)
		assert_int_equal(htoe_macsec_sectag_parse(f, l, true, &u), HTOE_MACSEC_RX_NO_TAG);
	for (size_t l = 14; l < 12 + 16 + 16 + 48; l++)
		assert_int_equal(htoe_macsec_sectag_parse(f, l, true, &u), HTOE_MACSEC_RX_BAD_TAG);
	f[13] = 0xE6;
	assert_int_equal(htoe_macsec_sectag_parse(f, 120, true, &u), HTOE_MACSEC_RX_NO_TAG);
	/* writer argument checks */
	t = (struct htoe_macsec_sectag){ .tci = 0x2C, .an = 4 };
	assert_int_equal(htoe_macsec_sectag_write(f, 16, &t), -EINVAL);
	t.an = 0;
	t.sl = 48;
	assert_int_equal(htoe_macsec_sectag_write(f, 16, &t), -EINVAL);
	t.sl = 0;
	t.tci = 0x2D;
	assert_int_equal(htoe_macsec_sectag_write(f, 16, &t), -EINVAL);
	t.tci = 0x2C;
	assert_int_equal(htoe_macsec_sectag_write(f, 15, &t), -ENOSPC);
	t.tci = 0x0C;
	assert_int_equal(htoe_macsec_sectag_write(f, 8, &t), 8);
	/* SL helper and SCI helpers */
	assert_int_equal(htoe_macsec_sl(0), 0);
	assert_int_equal(htoe_macsec_sl(47), 47);
	assert_int_equal(htoe_macsec_sl(48), 0);
	assert_int_equal(htoe_macsec_sci(mac_a, 7), 0x0200000000010007ull);
	htoe_macsec_sci_put(f, 0x0102030405060708ull);
	assert_int_equal(htoe_macsec_sci_get(f), 0x0102030405060708ull);
}

/* ---- tampering -------------------------------------------------------------------- */

/* Every byte position of protected frames, every bit: never delivered as
 * valid, and each rejection is counted in the counter the status names. */
static void tamper_frame(struct htoe_macsec *rx, const uint8_t *good, size_t len,
                         const uint8_t *plain, size_t plain_len, bool es, size_t *n_checked)
{
	uint8_t f[256], out[256];
	size_t n;

	for (size_t pos = 0; pos < len; pos++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			struct htoe_macsec_stats a = stats(rx), b;

			memcpy(f, good, len);
			f[pos] ^= (uint8_t)(1u << bit);
			int st = val(rx, f, len, out, &n);

			b = stats(rx);
			assert_int_not_equal(st, HTOE_MACSEC_RX_OK);
			assert_false(htoe_macsec_rx_delivered(st));
			assert_int_equal(b.rx.InPktsOK, a.rx.InPktsOK);
			if (st == HTOE_MACSEC_RX_UNCONTROLLED) {
				/* E=1 C=0: not for the controlled port, not counted */
				assert_int_equal(pos, 14);
				assert_int_equal(drops(&b), drops(&a));
			} else {
				assert_int_equal(drops(&b), drops(&a) + 1);
			}
			size_t tag_end = 12 + (size_t)(es ? 8 : 16);

			if (pos >= tag_end || (pos < 12 && !(es && pos >= 6)))
				/* secure data, ICV, DA, SA (with an explicit SCI) */
				assert_int_equal(st, HTOE_MACSEC_RX_NOT_VALID);
			if (pos == 12 || pos == 13)
				assert_int_equal(st, HTOE_MACSEC_RX_NO_TAG);
			switch (st) {
			case HTOE_MACSEC_RX_NOT_VALID:
				assert_int_equal(b.rx.InPktsNotValid, a.rx.InPktsNotValid + 1);
				break;
			case HTOE_MACSEC_RX_BAD_TAG:
				assert_int_equal(b.secy.InPktsBadTag, a.secy.InPktsBadTag + 1);
				break;
			case HTOE_MACSEC_RX_NO_TAG:
				assert_int_equal(b.secy.InPktsNoTag, a.secy.InPktsNoTag + 1);
				break;
			case HTOE_MACSEC_RX_NO_SCI:
				assert_int_equal(b.secy.InPktsNoSCI, a.secy.InPktsNoSCI + 1);
				break;
			case HTOE_MACSEC_RX_NOT_USING_SA:
				assert_int_equal(b.rx.InPktsNotUsingSA, a.rx.InPktsNotUsingSA + 1);
				break;
			case HTOE_MACSEC_RX_LATE:
				assert_int_equal(b.rx.InPktsLate, a.rx.InPktsLate + 1);
				break;
			case HTOE_MACSEC_RX_UNCONTROLLED:
				break;
			default:
				fail_msg("pos %zu bit %u: unexpected status %s", pos, bit,
				         htoe_macsec_rx_status_name(st));
			}
			(*n_checked)++;
		}
	}
	/* no rejected frame changed the receiver's state: the untouched frame
	 * is still accepted */
	assert_int_equal(val(rx, good, len, out, &n), HTOE_MACSEC_RX_OK);
	assert_int_equal(n, plain_len);
	assert_memory_equal(out, plain, n);
}

/* The tag comparison (word-wise since the fast path work): equal is 0, one
 * flipped bit anywhere (the 8-octet words and the octet tail) is not. */
static void test_ct_diff(void **state)
{
	(void)state;
	uint8_t a[19], b[19];

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = b[i] = (uint8_t)(0xA5 ^ i * 29);
	for (size_t n = 0; n <= sizeof(a); n++)
		assert_int_equal(htoe_gcm_ct_diff(a, b, n), 0);
	for (size_t i = 0; i < sizeof(a); i++)
		for (int bit = 0; bit < 8; bit++) {
			b[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(htoe_gcm_ct_diff(a, b, sizeof(a)), 1);
			assert_int_equal(htoe_gcm_ct_diff(a, b, i + 1), 1);
			assert_int_equal(htoe_gcm_ct_diff(a, b, i), 0);   /* before the flip */
			b[i] ^= (uint8_t)(1u << bit);
		}
	/* sci_put / sci_get are big-endian */
	uint8_t s8[8];

	htoe_macsec_sci_put(s8, 0x0102030405060708ull);
	assert_memory_equal(s8, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
	assert_true(htoe_macsec_sci_get(s8) == 0x0102030405060708ull);
}

static void test_tamper(void **state)
{
	(void)state;
	json_t *arr = json_object_get(vectors, "vectors");
	size_t i, checked = 0;
	json_t *v;

	json_array_foreach(arr, i, v) {
		struct vec x;

		vec_load(v, &x);
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			struct htoe_macsec *rx = vec_secy(&x, false, backends[bi], x.pn);

			tamper_frame(rx, x.prot, x.prot_len, x.plain, x.plain_len, !x.sci_in_tag,
			             &checked);
			struct htoe_macsec_stats s = stats(rx);

			assert_int_equal(s.rx.InPktsOK, 1);
			htoe_macsec_free(rx);
		}
	}
	/* random frames of many lengths, both modes, ES and explicit SCI */
	for (int k = 0; k < 8; k++) {
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			struct pair p;
			bool es = k & 1;
			uint8_t plain[128], out[192];
			size_t len = 14 + rnd() % 100;

			pair_init(&p, (enum htoe_macsec_cipher)(k / 2), k & 2,
			          es ? HTOE_MACSEC_TX_SCI_ES : HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1,
			          backends[bi]);
			make_frame(plain, len, mac_a);
			size_t n = prot(p.tx, plain, len, out, NULL);

			tamper_frame(p.rx, out, n, plain, len, es, &checked);
			pair_fini(&p);
		}
	}
	print_message("tamper: %zu single-bit changes rejected\n", checked);
}

/* Every truncation of a protected frame (the receiver must not read past
 * the end: the buffers are exactly as long as the frame, for ASan). */
static void test_truncated(void **state)
{
	(void)state;
	for (int es = 0; es < 2; es++) {
		struct pair p;
		uint8_t plain[100], f[160], out[160];
		size_t n = 0;

		pair_init(&p, HTOE_MACSEC_GCM_AES_XPN_128, es, es ? HTOE_MACSEC_TX_SCI_ES
		          : HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1, HTOE_MACSEC_BACKEND_AUTO);
		make_frame(plain, 100, mac_a);
		size_t pl = prot(p.tx, plain, 100, f, NULL);

		for (size_t len = 0; len < pl; len++) {
			uint8_t *c = malloc(len ? len : 1);
			size_t off, m;

			assert_non_null(c);
			memcpy(c, f, len);
			int st = htoe_macsec_validate(p.rx, c, len, out, sizeof(out), &n, NULL);

			assert_int_equal(st, len < 14 ? HTOE_MACSEC_RX_NO_TAG
			                 : len < 12u + (es ? 8 : 16) + 16 + 48 ? HTOE_MACSEC_RX_BAD_TAG
			                 : HTOE_MACSEC_RX_NOT_VALID);
			assert_int_equal(htoe_macsec_validate_inplace(p.rx, c, len, &off, &m, NULL), st);
			free(c);
		}
		assert_int_equal(val(p.rx, f, pl, out, &n), HTOE_MACSEC_RX_OK);
		pair_fini(&p);
	}
}

/* ---- replay ---------------------------------------------------------------------- */

static void test_replay(void **state)
{
	(void)state;
	for (int c = 0; c < 4; c++) {
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			enum htoe_macsec_cipher cs = (enum htoe_macsec_cipher)c;
			uint8_t plain[100], fr[20][160], out[160];
			size_t fl[20];

			/* window 0: strictly increasing */
			struct pair p;

			pair_init(&p, cs, false, HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1, backends[bi]);
			for (int k = 0; k < 20; k++) {
				make_frame(plain, 100, mac_a);
				struct htoe_macsec_tx_info ti;

				fl[k] = prot(p.tx, plain, 100, fr[k], &ti);
				assert_int_equal(ti.pn, (uint64_t)k + 1);
			}
			for (int k = 0; k < 10; k++)
				assert_int_equal(val(p.rx, fr[k], fl[k], out, NULL), HTOE_MACSEC_RX_OK);
			/* a byte-identical resend: late */
			assert_int_equal(val(p.rx, fr[4], fl[4], out, NULL), HTOE_MACSEC_RX_LATE);
			assert_int_equal(val(p.rx, fr[9], fl[9], out, NULL), HTOE_MACSEC_RX_LATE);
			/* reordering: 12 then 11 -> 11 late */
			assert_int_equal(val(p.rx, fr[11], fl[11], out, NULL), HTOE_MACSEC_RX_OK);
			assert_int_equal(val(p.rx, fr[10], fl[10], out, NULL), HTOE_MACSEC_RX_LATE);
			struct htoe_macsec_stats s = stats(p.rx);

			assert_int_equal(s.rx.InPktsLate, 3);
			assert_int_equal(s.rx.InPktsOK, 11);
			struct htoe_macsec_sa_state st;

			assert_int_equal(htoe_macsec_rx_sa_state(p.rx, p.sci, 0, &st), 0);
			assert_int_equal(st.next_pn, 13);
			pair_fini(&p);

			/* window 4: inside the window accepted (802.1AE has no
			 * duplicate detection), below it late */
			pair_init(&p, cs, true, HTOE_MACSEC_TX_SCI_EXPLICIT, 4, 1, backends[bi]);
			for (int k = 0; k < 20; k++) {
				make_frame(plain, 100, mac_a);
				fl[k] = prot(p.tx, plain, 100, fr[k], NULL);
			}
			for (int k = 0; k < 10; k++)   /* PN 1..10, next_pn 11 */
				assert_int_equal(val(p.rx, fr[k], fl[k], out, NULL), HTOE_MACSEC_RX_OK);
			for (int k = 6; k < 10; k++)   /* PN 7..10 >= 11 - 4 */
				assert_int_equal(val(p.rx, fr[k], fl[k], out, NULL), HTOE_MACSEC_RX_OK);
			for (int k = 0; k < 6; k++)    /* PN 1..6 < 7 */
				assert_int_equal(val(p.rx, fr[k], fl[k], out, NULL), HTOE_MACSEC_RX_LATE);
			/* reordering within the window */
			assert_int_equal(val(p.rx, fr[14], fl[14], out, NULL), HTOE_MACSEC_RX_OK);
			for (int k = 10; k < 14; k++)  /* PN 11..14 >= 16 - 4 = 12 except 11 */
				assert_int_equal(val(p.rx, fr[k], fl[k], out, NULL),
				                 k == 10 ? HTOE_MACSEC_RX_LATE : HTOE_MACSEC_RX_OK);
			s = stats(p.rx);
			assert_int_equal(s.rx.InPktsLate, 7);
			pair_fini(&p);
		}
	}
}

/* replayProtect off: old frames are delivered and counted as Delayed. */
static void test_replay_off_delayed(void **state)
{
	(void)state;
	struct htoe_macsec_cfg cfg = { .sci = htoe_macsec_sci(mac_a, 1), .no_replay_protect = true };
	struct htoe_macsec *tx = secy_new(&cfg), *rx = secy_new(&cfg);
	uint8_t key[16] = { 1 }, plain[80], f[3][160], out[160];
	size_t fl[3];
	struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 1, HTOE_MACSEC_BACKEND_OPENSSL);

	assert_int_equal(htoe_macsec_tx_sa_add(tx, 0, &s), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, cfg.sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &s), 0);
	for (int k = 0; k < 3; k++) {
		make_frame(plain, 80, mac_a);
		fl[k] = prot(tx, plain, 80, f[k], NULL);
	}
	assert_int_equal(val(rx, f[2], fl[2], out, NULL), HTOE_MACSEC_RX_OK);
	assert_int_equal(val(rx, f[0], fl[0], out, NULL), HTOE_MACSEC_RX_DELAYED);
	assert_int_equal(val(rx, f[1], fl[1], out, NULL), HTOE_MACSEC_RX_DELAYED);
	struct htoe_macsec_stats st = stats(rx);

	assert_int_equal(st.rx.InPktsOK, 1);
	assert_int_equal(st.rx.InPktsDelayed, 2);
	assert_int_equal(st.rx.InPktsLate, 0);
	htoe_macsec_free(tx);
	htoe_macsec_free(rx);
}

/* XPN: the upper PN half is recovered across the 2^32 boundary, and a
 * replay on either side of it is late. */
static void test_xpn_boundary(void **state)
{
	(void)state;
	for (int c = HTOE_MACSEC_GCM_AES_XPN_128; c <= HTOE_MACSEC_GCM_AES_XPN_256; c++) {
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			struct pair p;
			uint8_t plain[64], f[6][128], out[128];
			size_t fl[6];
			uint64_t start = 0x00000007FFFFFFFDull;

			pair_init(&p, (enum htoe_macsec_cipher)c, false, HTOE_MACSEC_TX_SCI_EXPLICIT,
			          2, start, backends[bi]);
			for (int k = 0; k < 6; k++) {
				struct htoe_macsec_tx_info ti;

				make_frame(plain, 64, mac_a);
				fl[k] = prot(p.tx, plain, 64, f[k], &ti);
				assert_int_equal(ti.pn, start + (uint64_t)k);
			}
			/* 7_FFFFFFFD, 7_FFFFFFFE, 7_FFFFFFFF, 8_00000000 ... */
			assert_int_equal(f[3][16] | f[3][17] | f[3][18] | f[3][19], 0);
			for (int k = 0; k < 6; k++) {
				struct htoe_macsec_rx_info ri;
				size_t n;

				assert_int_equal(htoe_macsec_validate(p.rx, f[k], fl[k], out, sizeof(out),
				                                      &n, &ri), HTOE_MACSEC_RX_OK);
				assert_int_equal(ri.pn, start + (uint64_t)k);
			}
			/* next_pn = 8_00000003, window 2: 8_00000001 ok, 8_00000000 and
			 * 7_FFFFFFFF late */
			assert_int_equal(val(p.rx, f[4], fl[4], out, NULL), HTOE_MACSEC_RX_OK);
			assert_int_equal(val(p.rx, f[3], fl[3], out, NULL), HTOE_MACSEC_RX_LATE);
			assert_int_equal(val(p.rx, f[2], fl[2], out, NULL), HTOE_MACSEC_RX_LATE);
			assert_int_equal(val(p.rx, f[0], fl[0], out, NULL), HTOE_MACSEC_RX_LATE);
			/* PN low half 0 is legal under XPN */
			struct htoe_macsec_stats s = stats(p.rx);

			assert_int_equal(s.secy.InPktsBadTag, 0);
			assert_int_equal(s.rx.InPktsLate, 3);
			pair_fini(&p);
		}
	}
}

/* ---- keys, SCIs, SAs ----------------------------------------------------------------- */

static void test_wrong_key(void **state)
{
	(void)state;
	for (int c = 0; c < 4; c++) {
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			for (int integ = 0; integ < 2; integ++) {
				struct pair p;
				uint8_t plain[200], f[300], out[300], key2[32];
				size_t kl = htoe_macsec_cipher_key_len((enum htoe_macsec_cipher)c);

				pair_init(&p, (enum htoe_macsec_cipher)c, integ,
				          HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1, backends[bi]);
				memcpy(key2, p.key, sizeof(key2));
				key2[kl - 1] ^= 1;
				struct htoe_macsec_sa_cfg s = sa_cfg(key2, kl, 1, backends[bi]);

				assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 0, &s), 0);
				make_frame(plain, 200, mac_a);
				size_t n = prot(p.tx, plain, 200, f, NULL), m;
				uint8_t keep[300];

				/* in place: a failed decryption leaves no plaintext */
				memcpy(keep, f, n);
				assert_int_equal(htoe_macsec_validate_inplace(p.rx, f, n, &m, &m, NULL),
				                 HTOE_MACSEC_RX_NOT_VALID);
				if (!integ) {
					for (size_t k = 12 + 16; k < n - 16; k++)
						assert_int_equal(f[k], 0);
				} else {
					assert_memory_equal(f, keep, n);
				}
				/* out of place: the input is untouched */
				assert_int_equal(val(p.rx, keep, n, out, &m), HTOE_MACSEC_RX_NOT_VALID);
				assert_int_equal(m, 0);
				struct htoe_macsec_stats st = stats(p.rx);
				struct htoe_macsec_rx_sa_stats sas;

				assert_int_equal(st.rx.InPktsNotValid, 2);
				assert_int_equal(st.rx.InPktsOK, 0);
				assert_int_equal(htoe_macsec_rx_sa_stats(p.rx, p.sci, 0, &sas), 0);
				assert_int_equal(sas.InPktsNotValid, 2);
				/* the right key still works afterwards (no state change) */
				s.key = p.key;
				assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 0, &s), 0);
				assert_int_equal(val(p.rx, keep, n, out, &m), HTOE_MACSEC_RX_OK);
				assert_memory_equal(out, plain, 200);
				pair_fini(&p);
			}
		}
	}
}

static void test_unknown_sci_no_sa(void **state)
{
	(void)state;
	struct pair p;
	uint8_t plain[100], f[160], out[160];
	size_t n, m;

	pair_init(&p, HTOE_MACSEC_GCM_AES_128, false, HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1,
	          HTOE_MACSEC_BACKEND_OPENSSL);
	make_frame(plain, 100, mac_a);
	n = prot(p.tx, plain, 100, f, NULL);
	/* unknown SCI (strict): NoSCI */
	assert_int_equal(htoe_macsec_rx_sc_del(p.rx, p.sci), 0);
	assert_int_equal(val(p.rx, f, n, out, &m), HTOE_MACSEC_RX_NO_SCI);
	struct htoe_macsec_stats s = stats(p.rx);

	assert_int_equal(s.secy.InPktsNoSCI, 1);
	assert_int_equal(s.secy.InPktsUnknownSCI, 0);
	/* known SCI, no SA on the AN: NotUsingSA */
	assert_int_equal(htoe_macsec_rx_sc_add(p.rx, p.sci), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(p.rx, p.sci), -EEXIST);
	assert_int_equal(val(p.rx, f, n, out, &m), HTOE_MACSEC_RX_NOT_USING_SA);
	s = stats(p.rx);
	assert_int_equal(s.rx.InPktsNotUsingSA, 1);
	struct htoe_macsec_sa_cfg sa = sa_cfg(p.key, 16, 1, HTOE_MACSEC_BACKEND_OPENSSL);

	assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 1, &sa), 0);
	assert_int_equal(val(p.rx, f, n, out, &m), HTOE_MACSEC_RX_NOT_USING_SA);
	assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 0, &sa), 0);
	assert_int_equal(val(p.rx, f, n, out, &m), HTOE_MACSEC_RX_OK);
	assert_memory_equal(out, plain, 100);
	pair_fini(&p);

	/* Check mode, integrity only (C=0): delivered but counted */
	struct htoe_macsec_cfg cfg = {
		.sci = htoe_macsec_sci(mac_a, 1), .integrity_only = true,
		.validate = HTOE_MACSEC_VALIDATE_CHECK,
	};
	struct htoe_macsec *tx = secy_new(&cfg), *rx = secy_new(&cfg);

	sa.key = p.key;
	assert_int_equal(htoe_macsec_tx_sa_add(tx, 0, &sa), 0);
	make_frame(plain, 100, mac_a);
	n = prot(tx, plain, 100, f, NULL);
	assert_int_equal(val(rx, f, n, out, &m), HTOE_MACSEC_RX_UNKNOWN_SCI);
	assert_int_equal(m, 100);
	assert_memory_equal(out, plain, 100);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, cfg.sci), 0);
	assert_int_equal(val(rx, f, n, out, &m), HTOE_MACSEC_RX_UNUSED_SA);
	assert_memory_equal(out, plain, 100);
	uint8_t bad[16] = { 9 };

	sa.key = bad;
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &sa), 0);
	assert_int_equal(val(rx, f, n, out, &m), HTOE_MACSEC_RX_INVALID);
	assert_memory_equal(out, plain, 100);
	/* untagged frames are delivered in Check mode */
	assert_int_equal(val(rx, plain, 100, out, &m), HTOE_MACSEC_RX_UNTAGGED);
	assert_memory_equal(out, plain, 100);
	s = stats(rx);
	assert_int_equal(s.secy.InPktsUnknownSCI, 1);
	assert_int_equal(s.rx.InPktsUnusedSA, 1);
	assert_int_equal(s.rx.InPktsInvalid, 1);
	assert_int_equal(s.secy.InPktsUntagged, 1);
	htoe_macsec_free(rx);

	/* Disabled: no ICV check for C=0 */
	cfg.validate = HTOE_MACSEC_VALIDATE_DISABLED;
	rx = secy_new(&cfg);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, cfg.sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &sa), 0);
	assert_int_equal(val(rx, f, n, out, &m), HTOE_MACSEC_RX_UNCHECKED);
	assert_memory_equal(out, plain, 100);
	s = stats(rx);
	assert_int_equal(s.rx.InPktsUnchecked, 1);
	htoe_macsec_free(rx);

	/* Strict: untagged is NoTag */
	cfg.validate = HTOE_MACSEC_VALIDATE_STRICT;
	rx = secy_new(&cfg);
	assert_int_equal(val(rx, plain, 100, out, &m), HTOE_MACSEC_RX_NO_TAG);
	assert_int_equal(val(rx, plain, 5, out, &m), HTOE_MACSEC_RX_NO_TAG);
	s = stats(rx);
	assert_int_equal(s.secy.InPktsNoTag, 2);
	htoe_macsec_free(rx);
	htoe_macsec_free(tx);
}

/* Key rollover AN 0 -> 1 -> 2 -> 3 -> 0 without losing a frame. */
static void test_rollover(void **state)
{
	(void)state;
	for (int bi = 0; bi < N_BACKENDS; bi++) {
		if (skip_backend(backends[bi]))
			continue;
		for (uint32_t w = 0; w <= 2; w += 2) {
			struct pair p;
			uint8_t plain[90], f[8][160], out[160], keys[5][16];
			size_t fl[8];
			struct htoe_macsec_event ev;

			pair_init(&p, HTOE_MACSEC_GCM_AES_128, false, HTOE_MACSEC_TX_SCI_EXPLICIT, w,
			          1, backends[bi]);
			memcpy(keys[0], p.key, 16);
			assert_true(htoe_macsec_event_next(p.tx, &ev));
			assert_int_equal(ev.type, HTOE_MACSEC_EV_TX_SA_CHANGEOVER);
			assert_int_equal(ev.an, 0);
			assert_int_equal(ev.prev_an, 0xFF);
			uint64_t delivered = 0, sent = 0;

			for (unsigned round = 1; round <= 4; round++) {
				unsigned an = round & 3, old = (round - 1) & 3;

				rnd_bytes(keys[round], 16);
				struct htoe_macsec_sa_cfg s = sa_cfg(keys[round], 16, 1, backends[bi]);

				/* new SA on both ends; the sender keeps using the old one */
				assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, an, &s), 0);
				assert_int_equal(htoe_macsec_tx_sa_add(p.tx, an, &s), 0);
				assert_int_equal(htoe_macsec_tx_encoding_an(p.tx), (int)old);
				/* 4 frames on the old SA, then changeover, 4 on the new */
				for (int k = 0; k < 8; k++) {
					if (k == 4) {
						assert_int_equal(htoe_macsec_tx_sa_activate(p.tx, an), 0);
						assert_true(htoe_macsec_event_next(p.tx, &ev));
						assert_int_equal(ev.type, HTOE_MACSEC_EV_TX_SA_CHANGEOVER);
						assert_int_equal(ev.an, an);
						assert_int_equal(ev.prev_an, old);
					}
					struct htoe_macsec_tx_info ti;

					make_frame(plain, 90, mac_a);
					fl[k] = prot(p.tx, plain, 90, f[k], &ti);
					assert_int_equal(ti.an, k < 4 ? old : an);
					sent++;
				}
				/* the wire reorders the last old frame behind the first
				 * w new ones */
				int order[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };

				if (w) {
					order[3] = 4;
					order[4] = 5;
					order[5] = 3;
				}
				for (int k = 0; k < 8; k++) {
					int st = val(p.rx, f[order[k]], fl[order[k]], out, NULL);

					assert_int_equal(st, HTOE_MACSEC_RX_OK);
					delivered++;
				}
				/* the old RX SA is retired now */
				struct htoe_macsec_sa_state ss;

				assert_int_equal(htoe_macsec_rx_sa_state(p.rx, p.sci, old, &ss), 0);
				assert_false(ss.active);
				assert_int_equal(val(p.rx, f[0], fl[0], out, NULL),
				                 HTOE_MACSEC_RX_NOT_USING_SA);
				bool in_use = false, retired = false;

				while (htoe_macsec_event_next(p.rx, &ev)) {
					if (ev.type == HTOE_MACSEC_EV_RX_SA_IN_USE && ev.an == an)
						in_use = true;
					if (ev.type == HTOE_MACSEC_EV_RX_SA_RETIRED && ev.an == old) {
						assert_int_equal(ev.prev_an, an);
						retired = true;
					}
				}
				assert_true(in_use);
				assert_true(retired);
			}
			assert_int_equal(delivered, sent);
			struct htoe_macsec_stats s = stats(p.rx);

			assert_int_equal(s.rx.InPktsOK, sent);
			assert_int_equal(s.rx.InPktsNotUsingSA, 4);
			pair_fini(&p);
		}
	}
}

/* The next key provisioned early (even before the current one) is not
 * retired by the current one's traffic; the current one is retired once the
 * next one is used. */
static void test_preprovisioned(void **state)
{
	(void)state;
	struct htoe_macsec_cfg cfg = { .sci = htoe_macsec_sci(mac_a, 1) };
	struct htoe_macsec *tx = secy_new(&cfg), *rx = secy_new(&cfg);
	uint8_t k0[16] = { 1 }, k1[16] = { 2 }, plain[64], f[128], out[128];
	struct htoe_macsec_sa_cfg s0 = sa_cfg(k0, 16, 1, HTOE_MACSEC_BACKEND_AUTO);
	struct htoe_macsec_sa_cfg s1 = sa_cfg(k1, 16, 1, HTOE_MACSEC_BACKEND_AUTO);
	struct htoe_macsec_sa_state st;

	assert_int_equal(htoe_macsec_rx_sc_add(rx, cfg.sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 1, &s1), 0);   /* next key first */
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &s0), 0);
	assert_int_equal(htoe_macsec_tx_sa_add(tx, 0, &s0), 0);
	assert_int_equal(htoe_macsec_tx_sa_add(tx, 1, &s1), 0);
	make_frame(plain, 64, mac_a);
	for (int k = 0; k < 5; k++) {
		size_t n = prot(tx, plain, 64, f, NULL);

		assert_int_equal(val(rx, f, n, out, NULL), HTOE_MACSEC_RX_OK);
	}
	assert_int_equal(htoe_macsec_rx_sa_state(rx, cfg.sci, 1, &st), 0);
	assert_true(st.active);
	assert_int_equal(htoe_macsec_tx_sa_activate(tx, 1), 0);
	size_t n = prot(tx, plain, 64, f, NULL);

	assert_int_equal(val(rx, f, n, out, NULL), HTOE_MACSEC_RX_OK);
	assert_int_equal(htoe_macsec_rx_sa_state(rx, cfg.sci, 0, &st), 0);
	assert_false(st.active);
	assert_int_equal(htoe_macsec_rx_sa_state(rx, cfg.sci, 1, &st), 0);
	assert_true(st.active && st.in_use);
	htoe_macsec_free(tx);
	htoe_macsec_free(rx);
}

/* rx_keep_old_sa: nothing is retired automatically. */
static void test_keep_old_sa(void **state)
{
	(void)state;
	struct htoe_macsec_cfg cfg = { .sci = htoe_macsec_sci(mac_a, 1), .rx_keep_old_sa = true };
	struct htoe_macsec *tx = secy_new(&cfg), *rx = secy_new(&cfg);
	uint8_t k0[16] = { 1 }, k1[16] = { 2 }, plain[64], f0[128], f1[128], out[128];
	struct htoe_macsec_sa_cfg s0 = sa_cfg(k0, 16, 1, HTOE_MACSEC_BACKEND_AUTO);
	struct htoe_macsec_sa_cfg s1 = sa_cfg(k1, 16, 1, HTOE_MACSEC_BACKEND_AUTO);

	assert_int_equal(htoe_macsec_tx_sa_add(tx, 0, &s0), 0);
	assert_int_equal(htoe_macsec_tx_sa_add(tx, 1, &s1), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, cfg.sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &s0), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(rx, cfg.sci, 1, &s1), 0);
	make_frame(plain, 64, mac_a);
	size_t n0 = prot(tx, plain, 64, f0, NULL);

	assert_int_equal(htoe_macsec_tx_sa_activate(tx, 1), 0);
	assert_int_equal(htoe_macsec_tx_sa_activate(tx, 7), -ENOENT);
	size_t n1 = prot(tx, plain, 64, f1, NULL);

	assert_int_equal(f1[14] & 3, 1);
	for (int k = 0; k < 5; k++)
		assert_int_equal(val(rx, f1, n1, out, NULL), k ? HTOE_MACSEC_RX_LATE : 0);
	assert_int_equal(val(rx, f0, n0, out, NULL), HTOE_MACSEC_RX_OK);
	/* the encoding SA cannot be replaced or deleted */
	assert_int_equal(htoe_macsec_tx_sa_add(tx, 1, &s0), -EBUSY);
	assert_int_equal(htoe_macsec_tx_sa_del(tx, 1), -EBUSY);
	assert_int_equal(htoe_macsec_tx_sa_del(tx, 0), 0);
	assert_int_equal(htoe_macsec_tx_sa_del(tx, 0), -ENOENT);
	assert_int_equal(htoe_macsec_rx_sa_del(rx, cfg.sci, 0), 0);
	assert_int_equal(val(rx, f0, n0, out, NULL), HTOE_MACSEC_RX_NOT_USING_SA);
	htoe_macsec_free(tx);
	htoe_macsec_free(rx);
}

/* ---- PN exhaustion ------------------------------------------------------------------ */

static void test_pn_exhaustion(void **state)
{
	(void)state;
	for (int xpn = 0; xpn < 2; xpn++) {
		for (int bi = 0; bi < N_BACKENDS; bi++) {
			if (skip_backend(backends[bi]))
				continue;
			enum htoe_macsec_cipher cs = xpn ? HTOE_MACSEC_GCM_AES_XPN_128
			                                 : HTOE_MACSEC_GCM_AES_128;
			uint64_t last = xpn ? UINT64_MAX : 0xFFFFFFFFull;
			struct pair p;
			uint8_t plain[70], f[4][128], out[128];
			size_t fl[4], n;
			struct htoe_macsec_event ev;
			struct htoe_macsec_tx_info ti;

			pair_init(&p, cs, false, HTOE_MACSEC_TX_SCI_EXPLICIT, 0, last - 2, backends[bi]);
			while (htoe_macsec_event_next(p.tx, &ev))
				;
			for (int k = 0; k < 3; k++) {
				make_frame(plain, 70, mac_a);
				fl[k] = prot(p.tx, plain, 70, f[k], &ti);
				assert_int_equal(ti.pn, last - 2 + (uint64_t)k);
			}
			/* threshold warning on the first, exhaustion after the last */
			assert_true(htoe_macsec_event_next(p.tx, &ev));
			assert_int_equal(ev.type, HTOE_MACSEC_EV_TX_PN_THRESHOLD);
			assert_true(htoe_macsec_event_next(p.tx, &ev));
			assert_int_equal(ev.type, HTOE_MACSEC_EV_TX_PN_EXHAUSTED);
			assert_int_equal(ev.an, 0);
			assert_int_equal(ev.pn, last);
			assert_false(htoe_macsec_event_next(p.tx, &ev));
			/* never wraps: refused, counted */
			for (int k = 0; k < 3; k++)
				assert_int_equal(htoe_macsec_protect(p.tx, plain, 70, out, sizeof(out), &n,
				                                     NULL), HTOE_MACSEC_TX_PN_EXHAUSTED);
			struct htoe_macsec_stats s = stats(p.tx);

			assert_int_equal(s.secy.OutPktsPNExhausted, 3);
			assert_int_equal(s.tx.OutPktsEncrypted, 3);
			struct htoe_macsec_sa_state st;

			assert_int_equal(htoe_macsec_tx_sa_state(p.tx, 0, &st), 0);
			assert_true(st.exhausted);
			/* the receiver takes all three, the last one ends its SA */
			for (int k = 0; k < 3; k++)
				assert_int_equal(val(p.rx, f[k], fl[k], out, NULL), HTOE_MACSEC_RX_OK);
			bool rx_ex = false;

			while (htoe_macsec_event_next(p.rx, &ev))
				rx_ex |= ev.type == HTOE_MACSEC_EV_RX_PN_EXHAUSTED;
			assert_true(rx_ex);
			assert_int_equal(val(p.rx, f[2], fl[2], out, NULL), HTOE_MACSEC_RX_LATE);
			/* a new SA on AN 1 gets traffic going again */
			uint8_t key1[16] = { 0x42 };
			struct htoe_macsec_sa_cfg s1 = sa_cfg(key1, 16, 1, backends[bi]);

			assert_int_equal(htoe_macsec_tx_sa_add(p.tx, 1, &s1), 0);
			assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 1, &s1), 0);
			assert_int_equal(htoe_macsec_tx_sa_activate(p.tx, 1), 0);
			fl[3] = prot(p.tx, plain, 70, f[3], &ti);
			assert_int_equal(ti.an, 1);
			assert_int_equal(ti.pn, 1);
			assert_int_equal(val(p.rx, f[3], fl[3], out, NULL), HTOE_MACSEC_RX_OK);
			pair_fini(&p);

			/* with the next SA installed in advance: automatic changeover,
			 * no frame refused */
			pair_init(&p, cs, true, HTOE_MACSEC_TX_SCI_EXPLICIT, 0, last - 1, backends[bi]);
			assert_int_equal(htoe_macsec_tx_sa_add(p.tx, 1, &s1), 0);
			assert_int_equal(htoe_macsec_rx_sa_add(p.rx, p.sci, 1, &s1), 0);
			uint64_t want_pn[4] = { last - 1, last, 1, 2 };
			unsigned want_an[4] = { 0, 0, 1, 1 };

			for (int k = 0; k < 4; k++) {
				make_frame(plain, 70, mac_a);
				size_t l = prot(p.tx, plain, 70, f[0], &ti);

				assert_int_equal(ti.an, want_an[k]);
				assert_int_equal(ti.pn, want_pn[k]);
				assert_int_equal(val(p.rx, f[0], l, out, &n), HTOE_MACSEC_RX_OK);
				assert_memory_equal(out, plain, 70);
			}
			bool changeover = false;

			while (htoe_macsec_event_next(p.tx, &ev))
				if (ev.type == HTOE_MACSEC_EV_TX_SA_CHANGEOVER && ev.an == 1) {
					assert_int_equal(ev.prev_an, 0);
					changeover = true;
				}
			assert_true(changeover);
			pair_fini(&p);
		}
	}
	/* non-XPN SA config above 2^32-1 is refused */
	struct htoe_macsec_cfg cfg = { 0 };
	struct htoe_macsec *m = secy_new(&cfg);
	uint8_t key[16] = { 0 };
	struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 0x100000000ull, HTOE_MACSEC_BACKEND_OPENSSL);

	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), -EINVAL);
	s.pn = 0;   /* 0 means 1 */
	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	struct htoe_macsec_sa_state st;

	assert_int_equal(htoe_macsec_tx_sa_state(m, 0, &st), 0);
	assert_int_equal(st.next_pn, 1);
	s.key_len = 32;
	assert_int_equal(htoe_macsec_tx_sa_add(m, 1, &s), -EINVAL);
	htoe_macsec_free(m);
}

/* ---- short frames ---------------------------------------------------------------------- */

static void test_short_frames(void **state)
{
	(void)state;
	for (int bi = 0; bi < N_BACKENDS; bi++) {
		if (skip_backend(backends[bi]))
			continue;
		for (int mode = 0; mode < 4; mode++) {
			struct pair p;
			bool es = mode & 1, integ = mode & 2;

			pair_init(&p, HTOE_MACSEC_GCM_AES_256, integ,
			          es ? HTOE_MACSEC_TX_SCI_ES : HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1,
			          backends[bi]);
			for (size_t len = 14; len <= 80; len++) {
				uint8_t plain[128], f[192], out[192];
				size_t n = 0;

				make_frame(plain, len, mac_a);
				size_t pl = prot(p.tx, plain, len, f, NULL);
				size_t secure = len - 12;

				assert_int_equal(pl, len + (es ? 8 : 16) + 16);
				assert_int_equal(f[15], secure < 48 ? secure : 0);
				/* the MAC pads to 60 octets */
				size_t wire = pl;

				if (wire < 60) {
					memset(f + wire, 0, 60 - wire);
					wire = 60;
				}
				assert_int_equal(val(p.rx, f, wire, out, &n), HTOE_MACSEC_RX_OK);
				assert_int_equal(n, len);
				assert_memory_equal(out, plain, len);
			}
			pair_fini(&p);
		}
	}
}

/* ---- both backends agree ------------------------------------------------------------------- */

static void test_backends_equal(void **state)
{
	(void)state;
	if (!have_imb) {
		skip();
		return;
	}
	static uint8_t plain[1600], fa[1700], fb[1700], out[1700];

	for (int iter = 0; iter < 400; iter++) {
		enum htoe_macsec_cipher cs = (enum htoe_macsec_cipher)(rnd() % 4);
		bool integ = rnd() & 1, es = rnd() & 1;
		size_t kl = htoe_macsec_cipher_key_len(cs);
		uint8_t key[32], mac[6];
		size_t len = 14 + rnd() % 1587;

		rnd_bytes(key, sizeof(key));
		rnd_bytes(mac, 6);
		mac[0] &= 0xFE;
		uint64_t sci = es ? htoe_macsec_sci(mac, 1) : rnd();
		uint64_t pn = htoe_macsec_cipher_xpn(cs) ? rnd() >> 1 : 1 + rnd() % 0xFFFFFFF0u;
		struct htoe_macsec_cfg cfg = {
			.cipher = cs, .integrity_only = integ, .sci = sci,
			.tx_sci_mode = es ? HTOE_MACSEC_TX_SCI_ES : HTOE_MACSEC_TX_SCI_EXPLICIT,
		};
		struct htoe_macsec *a = secy_new(&cfg), *b = secy_new(&cfg);
		struct htoe_macsec_sa_cfg sa = sa_cfg(key, kl, pn, HTOE_MACSEC_BACKEND_OPENSSL);

		sa.ssci = (uint32_t)rnd();
		rnd_bytes(sa.salt, sizeof(sa.salt));
		assert_int_equal(htoe_macsec_tx_sa_add(a, 1, &sa), 0);
		assert_int_equal(htoe_macsec_rx_sc_add(a, sci), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(a, sci, 1, &sa), 0);
		sa.backend = HTOE_MACSEC_BACKEND_IPSECMB;
		assert_int_equal(htoe_macsec_tx_sa_add(b, 1, &sa), 0);
		assert_int_equal(htoe_macsec_rx_sc_add(b, sci), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(b, sci, 1, &sa), 0);

		make_frame(plain, len, mac);
		size_t na = prot(a, plain, len, fa, NULL), nb = prot(b, plain, len, fb, NULL), n;

		assert_int_equal(na, nb);
		assert_memory_equal(fa, fb, na);
		/* a tampered frame gets the same verdict from both (same state) */
		uint8_t *t = out;
		static uint8_t out2[1700];

		memcpy(t, fa, na);
		t[rnd() % na] ^= (uint8_t)(1u << (rnd() % 8));
		int st_a = val(a, t, na, out2, &n);

		assert_int_not_equal(st_a, HTOE_MACSEC_RX_OK);
		assert_int_equal(val(b, t, na, out2, &n), st_a);
		/* each validates the other's frame */
		assert_int_equal(val(b, fa, na, out, &n), HTOE_MACSEC_RX_OK);
		assert_int_equal(n, len);
		assert_memory_equal(out, plain, len);
		assert_int_equal(val(a, fb, nb, out, &n), HTOE_MACSEC_RX_OK);
		assert_memory_equal(out, plain, len);
		htoe_macsec_free(a);
		htoe_macsec_free(b);
	}
}

/* ---- TX API corners ---------------------------------------------------------------------- */

static void test_tx_api(void **state)
{
	(void)state;
	struct htoe_macsec_cfg cfg = { .sci = htoe_macsec_sci(mac_a, 1) };
	struct htoe_macsec *m = secy_new(&cfg);
	uint8_t plain[200], buf[400], out[400], key[16] = { 7 };
	size_t n = 99, off, len;

	make_frame(plain, 200, mac_a);
	/* no SA */
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_NO_SA);
	assert_int_equal(n, 0);
	assert_int_equal(htoe_macsec_tx_encoding_an(m), -ENOENT);
	struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 1, HTOE_MACSEC_BACKEND_AUTO);

	assert_int_equal(htoe_macsec_tx_sa_add(m, 2, &s), 0);
	assert_int_equal(htoe_macsec_tx_encoding_an(m), 2);
	assert_int_equal(htoe_macsec_tx_sectag_len(m), 16);
	/* too small */
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, 231, &n, NULL),
	                 HTOE_MACSEC_TX_NOSPACE);
	assert_int_equal(htoe_macsec_protect(m, plain, 13, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_BAD_FRAME);
	/* overlapping in/out */
	memcpy(buf, plain, 200);
	assert_int_equal(htoe_macsec_protect(m, buf, 200, buf + 8, 300, &n, NULL),
	                 HTOE_MACSEC_TX_NOSPACE);
	/* in place: neither enough head- nor tailroom -> unchanged */
	memcpy(buf + 10, plain, 200);
	off = 10;
	len = 200;
	assert_int_equal(htoe_macsec_protect_inplace(m, buf, 10 + 200 + 31, &off, &len, NULL),
	                 HTOE_MACSEC_TX_NOSPACE);
	assert_memory_equal(buf + 10, plain, 200);
	assert_int_equal(htoe_macsec_protect_inplace(m, buf, 10 + 200 + 32, &off, &len, NULL),
	                 HTOE_MACSEC_TX_OK);
	assert_int_equal(off, 10);
	assert_int_equal(len, 232);
	/* headroom path needs only 16 octets of tailroom */
	memcpy(buf + 16, plain, 200);
	off = 16;
	len = 200;
	assert_int_equal(htoe_macsec_protect_inplace(m, buf, 16 + 200 + 15, &off, &len, NULL),
	                 HTOE_MACSEC_TX_NOSPACE);
	assert_int_equal(htoe_macsec_protect_inplace(m, buf, 16 + 200 + 16, &off, &len, NULL),
	                 HTOE_MACSEC_TX_OK);
	assert_int_equal(off, 0);
	struct htoe_macsec_stats st = stats(m);

	assert_int_equal(st.secy.OutPktsNoSA, 1);
	assert_int_equal(st.tx.OutPktsEncrypted, 2);
	assert_int_equal(st.tx.OutOctetsEncrypted, 2 * 188);
	struct htoe_macsec_tx_sa_stats sas;

	assert_int_equal(htoe_macsec_tx_sa_stats(m, 2, &sas), 0);
	assert_int_equal(sas.OutPktsEncrypted, 2);
	assert_int_equal(htoe_macsec_tx_sa_stats(m, 1, &sas), -ENOENT);
	htoe_macsec_free(m);

	/* MTU: OutPktsTooLong; bypass: OutPktsUntagged */
	cfg.max_frame_len = 200 + 32 - 1;
	m = secy_new(&cfg);
	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_TOO_LONG);
	assert_int_equal(htoe_macsec_protect(m, plain, 199, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_OK);
	st = stats(m);
	assert_int_equal(st.secy.OutPktsTooLong, 1);
	htoe_macsec_free(m);
	cfg.max_frame_len = 0;
	cfg.tx_bypass = true;
	m = secy_new(&cfg);
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_UNTAGGED);
	assert_true(htoe_macsec_tx_sent(HTOE_MACSEC_TX_UNTAGGED));
	assert_int_equal(n, 200);
	assert_memory_equal(out, plain, 200);
	st = stats(m);
	assert_int_equal(st.secy.OutPktsUntagged, 1);
	htoe_macsec_free(m);

	/* ES/implicit SCI: the port must be 1 and the frame's source ours */
	cfg.tx_bypass = false;
	cfg.tx_sci_mode = HTOE_MACSEC_TX_SCI_ES;
	cfg.sci = htoe_macsec_sci(mac_a, 2);
	int err = 0;

	assert_null(htoe_macsec_new(&cfg, &err));
	assert_int_equal(err, -EINVAL);
	cfg.sci = htoe_macsec_sci(mac_a, 1);
	m = secy_new(&cfg);
	assert_int_equal(htoe_macsec_tx_sectag_len(m), 8);
	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	plain[11] ^= 1;
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_SCI_MISMATCH);
	plain[11] ^= 1;
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_OK);
	assert_int_equal(out[14], 0x4C);
	htoe_macsec_free(m);

	/* implicit SCI (ES=SC=SCB=0): the receiver uses MAC SA || 1 */
	cfg.tx_sci_mode = HTOE_MACSEC_TX_SCI_IMPLICIT;
	cfg.integrity_only = true;
	m = secy_new(&cfg);
	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(m, cfg.sci), 0);
	assert_int_equal(htoe_macsec_rx_sa_add(m, cfg.sci, 0, &s), 0);
	assert_int_equal(htoe_macsec_protect(m, plain, 200, out, sizeof(out), &n, NULL),
	                 HTOE_MACSEC_TX_OK);
	assert_int_equal(out[14], 0x00);
	assert_int_equal(val(m, out, n, buf, &len), HTOE_MACSEC_RX_OK);
	assert_memory_equal(buf, plain, 200);
	htoe_macsec_free(m);

	/* bad configurations */
	struct htoe_macsec_cfg bad = { .cipher = (enum htoe_macsec_cipher)9 };

	assert_null(htoe_macsec_new(&bad, NULL));
	bad = (struct htoe_macsec_cfg){ .cipher = HTOE_MACSEC_GCM_AES_XPN_128,
	                                .replay_window = (1u << 30) + 1 };
	assert_null(htoe_macsec_new(&bad, NULL));
	bad.replay_window = 1u << 30;
	m = secy_new(&bad);
	htoe_macsec_free(m);
	htoe_macsec_free(NULL);
}

/* Retransmission: the stored plaintext is protected again, with a new PN;
 * both copies are valid, a byte-identical resend is not. */
static void test_retransmit(void **state)
{
	(void)state;
	struct pair p;
	uint8_t plain[120], f1[200], f2[200], out[200];
	struct htoe_macsec_tx_info t1, t2;

	pair_init(&p, HTOE_MACSEC_GCM_AES_128, false, HTOE_MACSEC_TX_SCI_EXPLICIT, 0, 1,
	          HTOE_MACSEC_BACKEND_AUTO);
	make_frame(plain, 120, mac_a);
	size_t n1 = prot(p.tx, plain, 120, f1, &t1), n2 = prot(p.tx, plain, 120, f2, &t2), n;

	assert_int_equal(t2.pn, t1.pn + 1);
	assert_memory_not_equal(f1 + 28, f2 + 28, 20);
	assert_int_equal(val(p.rx, f1, n1, out, &n), HTOE_MACSEC_RX_OK);
	assert_int_equal(val(p.rx, f1, n1, out, &n), HTOE_MACSEC_RX_LATE);
	assert_int_equal(val(p.rx, f2, n2, out, &n), HTOE_MACSEC_RX_OK);
	assert_memory_equal(out, plain, 120);
	/* out of place means not overlapping */
	assert_int_equal(htoe_macsec_validate(p.rx, f2, n2, f2 + 8, 150, &n, NULL),
	                 HTOE_MACSEC_RX_NOSPACE);
	pair_fini(&p);
}

/* Many peers: one RX SC each, lookups by SCI. */
static void test_many_peers(void **state)
{
	(void)state;
	struct htoe_macsec_cfg rc = { .sci = 1, .max_rx_sc = 8 };
	struct htoe_macsec *rx = secy_new(&rc), *tx[8];
	uint8_t key[8][16], plain[64], f[128], out[128];

	for (int i = 0; i < 8; i++) {
		uint8_t mac[6] = { 0x02, 0, 0, 0, 1, (uint8_t)i };
		struct htoe_macsec_cfg c = { .sci = htoe_macsec_sci(mac, 1) };

		rnd_bytes(key[i], 16);
		tx[i] = secy_new(&c);
		struct htoe_macsec_sa_cfg s = sa_cfg(key[i], 16, 1, HTOE_MACSEC_BACKEND_AUTO);

		assert_int_equal(htoe_macsec_tx_sa_add(tx[i], (unsigned)i & 3, &s), 0);
		assert_int_equal(htoe_macsec_rx_sc_add(rx, c.sci), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(rx, c.sci, (unsigned)i & 3, &s), 0);
	}
	assert_int_equal(htoe_macsec_rx_sc_add(rx, 12345), -ENOSPC);
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < 8; i++) {
			uint8_t mac[6] = { 0x02, 0, 0, 0, 1, (uint8_t)i };
			size_t n;

			make_frame(plain, 64, mac);
			size_t l = prot(tx[i], plain, 64, f, NULL);

			assert_int_equal(val(rx, f, l, out, &n), HTOE_MACSEC_RX_OK);
			assert_memory_equal(out, plain, 64);
		}
	for (int i = 0; i < 8; i++) {
		struct htoe_macsec_rx_sc_stats s;

		assert_int_equal(htoe_macsec_rx_sc_stats(rx, htoe_macsec_cfg(tx[i])->sci, &s), 0);
		assert_int_equal(s.InPktsOK, 3);
		htoe_macsec_free(tx[i]);
	}
	/* deleted SCs keep counting in the SecY total */
	assert_int_equal(htoe_macsec_rx_sc_del(rx, htoe_macsec_sci((uint8_t[6]){ 2, 0, 0, 0, 1, 0 },
	                                                           1)), 0);
	struct htoe_macsec_stats s = stats(rx);

	assert_int_equal(s.rx.InPktsOK, 24);
	/* slots are reused; deleting the last one keeps the others reachable */
	struct htoe_macsec_rx_sc_stats scs;
	uint64_t sci6 = htoe_macsec_sci((uint8_t[6]){ 2, 0, 0, 0, 1, 6 }, 1);
	uint64_t sci7 = htoe_macsec_sci((uint8_t[6]){ 2, 0, 0, 0, 1, 7 }, 1);

	assert_int_equal(htoe_macsec_rx_sc_add(rx, 777), 0);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, 778), -ENOSPC);
	assert_int_equal(htoe_macsec_rx_sc_del(rx, sci7), 0);
	assert_int_equal(htoe_macsec_rx_sc_stats(rx, sci7, &scs), -ENOENT);
	assert_int_equal(htoe_macsec_rx_sc_stats(rx, sci6, &scs), 0);
	assert_int_equal(scs.InPktsOK, 3);
	assert_int_equal(htoe_macsec_rx_sc_add(rx, 778), 0);
	assert_int_equal(htoe_macsec_rx_sc_stats(rx, 778, &scs), 0);
	htoe_macsec_free(rx);
}

/* ---- node binding and pairwise keys (the attacker's view) ---------- */

/* Three members 1, 2, 3 (MAC 02:48:54:00:00:0N, SCI MAC || 1); node 2 is the
 * receiver, node 3 the attacker who wants node 2 to accept a frame as node
 * 1's. */
static uint64_t node_sci(uint16_t node)
{
	uint8_t mac[6] = { 0x02, 0x48, 0x54, 0x00, (uint8_t)(node >> 8), (uint8_t)node };

	return htoe_macsec_sci(mac, 1);
}

/* A plain HToE frame DA SA [8100 TCI] 88B5 | header(32: source node at +4,
 * destination at +6) | payload; ethertype != 0x88B5 builds a non-HToE one. */
static size_t htoe_plain(uint8_t *f, uint16_t from_mac, uint16_t src_node, uint16_t dst_node,
                         bool vlan, uint16_t ethertype)
{
	size_t o = 12;

	memset(f, 0, 128);
	f[0] = 0x02; f[1] = 0x48; f[2] = 0x54; f[5] = (uint8_t)dst_node;
	f[6] = 0x02; f[7] = 0x48; f[8] = 0x54; f[11] = (uint8_t)from_mac;
	if (vlan) {
		f[o++] = 0x81; f[o++] = 0x00; f[o++] = 0x20; f[o++] = 0x05;
	}
	f[o++] = (uint8_t)(ethertype >> 8);
	f[o++] = (uint8_t)ethertype;
	f[o] = 0x11;                       /* version 1, DATA */
	f[o + 4] = (uint8_t)(src_node >> 8);
	f[o + 5] = (uint8_t)src_node;
	f[o + 6] = (uint8_t)(dst_node >> 8);
	f[o + 7] = (uint8_t)dst_node;
	for (size_t i = o + 32; i < 128; i++)
		f[i] = (uint8_t)(i * 7);
	return 128;
}

/* A TX SecY speaking with `sci` under `key` (what a member can build with
 * the keys it holds). */
static struct htoe_macsec *sender(uint64_t sci, const uint8_t *key, bool integ)
{
	struct htoe_macsec_cfg cfg = { .cipher = HTOE_MACSEC_GCM_AES_128, .sci = sci,
	                               .integrity_only = integ };
	struct htoe_macsec *m = secy_new(&cfg);
	struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 1, HTOE_MACSEC_BACKEND_AUTO);

	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	return m;
}

/* Node 2's SecY: an RX SC per peer (1 and 3) with the SAK that peer sends
 * with, bound to the peer's node id if bind. */
static struct htoe_macsec *receiver2(const uint8_t *key1, const uint8_t *key3, bool bind)
{
	struct htoe_macsec_cfg cfg = { .cipher = HTOE_MACSEC_GCM_AES_128, .sci = node_sci(2) };
	struct htoe_macsec *m = secy_new(&cfg);
	const uint8_t *keys[2] = { key1, key3 };
	const uint16_t nodes[2] = { 1, 3 };

	for (int i = 0; i < 2; i++) {
		struct htoe_macsec_sa_cfg s = sa_cfg(keys[i], 16, 1, HTOE_MACSEC_BACKEND_AUTO);

		assert_int_equal(htoe_macsec_rx_sc_add(m, node_sci(nodes[i])), 0);
		assert_int_equal(htoe_macsec_rx_sa_add(m, node_sci(nodes[i]), 0, &s), 0);
		if (bind)
			assert_int_equal(htoe_macsec_rx_sc_bind(m, node_sci(nodes[i]), nodes[i]), 0);
	}
	return m;
}

/* Protects plain with tx and validates it in place at rx. */
static int send_to(struct htoe_macsec *tx, struct htoe_macsec *rx, const uint8_t *plain,
                   size_t len, uint8_t *f, size_t *flen)
{
	size_t off, plen;

	assert_int_equal(htoe_macsec_protect(tx, plain, len, f, 300, flen, NULL), HTOE_MACSEC_TX_OK);
	return htoe_macsec_validate_inplace(rx, f, *flen, &off, &plen, NULL);
}

static uint64_t sc_ctr(struct htoe_macsec *m, uint16_t node, size_t field)
{
	struct htoe_macsec_rx_sc_stats s;

	assert_int_equal(htoe_macsec_rx_sc_stats(m, node_sci(node), &s), 0);
	return *(uint64_t *)((uint8_t *)&s + field);
}

#define SC_OK(m, n)       sc_ctr(m, n, offsetof(struct htoe_macsec_rx_sc_stats, InPktsOK))
#define SC_MISMATCH(m, n) sc_ctr(m, n, offsetof(struct htoe_macsec_rx_sc_stats, InPktsSCIMismatch))
#define SC_NOTVALID(m, n) sc_ctr(m, n, offsetof(struct htoe_macsec_rx_sc_stats, InPktsNotValid))

/* One SAK shared by all: member 3 sending under its own SCI but claiming
 * HToE source node 1 is dropped by the binding (InPktsSCIMismatch), with no
 * replay-window change and no plaintext left; honest frames pass; a
 * non-HToE plaintext on a bound SC is dropped; without the binding the
 * forgery passes (a member forging another's node id). What the binding cannot stop: with
 * the shared SAK, member 3 also forges node 1's SCI, and that validates. */
static void test_sci_binding(void **state)
{
	(void)state;
	uint8_t k[16], plain[128], f[300], keep[300];
	size_t n;
	struct htoe_macsec_sa_state st;

	rnd_bytes(k, sizeof(k));
	for (int integ = 0; integ < 2; integ++) {
		struct htoe_macsec *rx = receiver2(k, k, true);
		struct htoe_macsec *as3 = sender(node_sci(3), k, integ);
		struct htoe_macsec *as1 = sender(node_sci(1), k, integ);

		/* the forgery: SCI 3, HToE source 1 */
		htoe_plain(plain, 3, 1, 2, false, 0x88B5);
		assert_int_equal(htoe_macsec_protect(as3, plain, 128, f, 300, &n, NULL),
		                 HTOE_MACSEC_TX_OK);
		memcpy(keep, f, n);
		size_t off, plen;

		assert_int_equal(htoe_macsec_validate_inplace(rx, f, n, &off, &plen, NULL),
		                 HTOE_MACSEC_RX_SCI_MISMATCH);
		if (!integ)   /* the decrypted plaintext is not left behind */
			for (size_t i = 12 + 16; i < n - 16; i++)
				assert_int_equal(f[i], 0);
		assert_int_equal(SC_MISMATCH(rx, 3), 1);
		assert_int_equal(SC_OK(rx, 3), 0);
		assert_int_equal(htoe_macsec_rx_sa_state(rx, node_sci(3), 0, &st), 0);
		assert_int_equal(st.next_pn, 1);          /* replay window untouched */
		assert_false(st.in_use);
		/* out of place: nothing delivered */
		uint8_t out[300];
		size_t ol = 99;

		assert_int_equal(htoe_macsec_validate(rx, keep, n, out, sizeof(out), &ol, NULL),
		                 HTOE_MACSEC_RX_SCI_MISMATCH);
		assert_int_equal(ol, 0);
		struct htoe_macsec_stats s = stats(rx);

		assert_int_equal(s.rx.InPktsSCIMismatch, 2);
		assert_int_equal(s.rx.InPktsOK, 0);
		/* the same member speaking as itself: accepted (also behind a VLAN tag) */
		htoe_plain(plain, 3, 3, 2, false, 0x88B5);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		htoe_plain(plain, 3, 3, 2, true, 0x88B5);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		assert_int_equal(SC_OK(rx, 3), 2);
		/* a VLAN-tagged forgery is caught too */
		htoe_plain(plain, 3, 1, 2, true, 0x88B5);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_SCI_MISMATCH);
		/* a bound SC carries HToE frames only */
		htoe_plain(plain, 3, 3, 2, false, 0x0800);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_SCI_MISMATCH);
		assert_int_equal(send_to(as3, rx, plain, 20, f, &n), HTOE_MACSEC_RX_SCI_MISMATCH);
		assert_int_equal(SC_MISMATCH(rx, 3), 5);
		/* the limit of a shared SAK: member 3 writes node 1's SCI as well */
		htoe_plain(plain, 3, 1, 2, false, 0x88B5);
		assert_int_equal(send_to(as1, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		assert_int_equal(SC_OK(rx, 1), 1);
		htoe_macsec_free(rx);

		/* without the binding, a member's forgery of node 1 is accepted */
		rx = receiver2(k, k, false);
		htoe_plain(plain, 3, 1, 2, false, 0x88B5);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		assert_int_equal(htoe_macsec_rx_sc_bind(rx, node_sci(9), 9), -ENOENT);
		htoe_macsec_free(rx);
		htoe_macsec_free(as3);
		htoe_macsec_free(as1);
	}
}

/* Pairwise SAKs from one master key: member 3 holds only the SAKs of its
 * own pairs (3->x it sends with, x->3 it receives with). Forging node 1's
 * SCI towards node 2 fails the ICV under every key 3 has; its own SCI with
 * HToE source 1 fails the binding; node 1's real frames pass. */
static void test_pairwise_attacker(void **state)
{
	(void)state;
	uint8_t master[16], k12[16], k32[16], k31[16], k13[16], k21[16], f[300], plain[128];
	size_t n;

	rnd_bytes(master, sizeof(master));
	assert_int_equal(htoe_macsec_pairwise_sak(master, 16, 1, 2, 0, k12, 16), 0);
	assert_int_equal(htoe_macsec_pairwise_sak(master, 16, 3, 2, 0, k32, 16), 0);
	assert_int_equal(htoe_macsec_pairwise_sak(master, 16, 3, 1, 0, k31, 16), 0);
	assert_int_equal(htoe_macsec_pairwise_sak(master, 16, 1, 3, 0, k13, 16), 0);
	assert_int_equal(htoe_macsec_pairwise_sak(master, 16, 2, 1, 0, k21, 16), 0);
	/* every ordered pair has its own key */
	assert_memory_not_equal(k12, k21, 16);
	assert_memory_not_equal(k12, k32, 16);
	assert_memory_not_equal(k13, k31, 16);
	for (int integ = 0; integ < 2; integ++) {
		struct htoe_macsec *rx = receiver2(k12, k32, true);
		const uint8_t *held[3] = { k32, k31, k13 };   /* what member 3 knows */

		htoe_plain(plain, 1, 1, 2, false, 0x88B5);
		for (int i = 0; i < 3; i++) {
			struct htoe_macsec *forger = sender(node_sci(1), held[i], integ);

			assert_int_equal(send_to(forger, rx, plain, 128, f, &n),
			                 HTOE_MACSEC_RX_NOT_VALID);
			htoe_macsec_free(forger);
		}
		assert_int_equal(SC_NOTVALID(rx, 1), 3);
		/* its own SCI and its own key, claiming node 1: the binding */
		struct htoe_macsec *as3 = sender(node_sci(3), k32, integ);

		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_SCI_MISMATCH);
		assert_int_equal(SC_MISMATCH(rx, 3), 1);
		/* as itself it is fine */
		htoe_plain(plain, 3, 3, 2, false, 0x88B5);
		assert_int_equal(send_to(as3, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		/* the real node 1 */
		struct htoe_macsec *n1 = sender(node_sci(1), k12, integ);

		htoe_plain(plain, 1, 1, 2, false, 0x88B5);
		assert_int_equal(send_to(n1, rx, plain, 128, f, &n), HTOE_MACSEC_RX_OK);
		assert_int_equal(SC_OK(rx, 1), 1);
		/* node 1's SAK to node 3 does not open at node 2 either */
		htoe_macsec_free(n1);
		n1 = sender(node_sci(1), k13, integ);
		/* (PN 1 was used on that SA: take PN 2, past the replay check) */
		assert_int_equal(htoe_macsec_protect(n1, plain, 128, f, 300, &n, NULL),
		                 HTOE_MACSEC_TX_OK);
		assert_int_equal(send_to(n1, rx, plain, 128, f, &n), HTOE_MACSEC_RX_NOT_VALID);
		htoe_macsec_free(n1);
		htoe_macsec_free(as3);
		htoe_macsec_free(rx);
	}
}

/* The pairwise SAK derivation: deterministic, a different key per AN, per
 * direction, per master key, per length; argument checks. The KDF itself
 * is checked against an independent implementation in test_macsec_kdf. */
static void test_pairwise_sak(void **state)
{
	(void)state;
	uint8_t m16[16], m32[32], a[32], b[32];

	rnd_bytes(m16, sizeof(m16));
	rnd_bytes(m32, sizeof(m32));
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, 0, a, 16), 0);
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, 0, b, 16), 0);
	assert_memory_equal(a, b, 16);
	for (unsigned an = 1; an < 4; an++) {
		assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, an, b, 16), 0);
		assert_memory_not_equal(a, b, 16);
	}
	assert_int_equal(htoe_macsec_pairwise_sak(m32, 32, 1, 2, 0, b, 16), 0);
	assert_memory_not_equal(a, b, 16);
	/* the Length input is part of the derivation: a 32-octet SAK does not
	 * start with the 16-octet one */
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, 0, b, 32), 0);
	assert_memory_not_equal(a, b, 16);
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 1, 0, b, 16), -EINVAL);
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, 4, b, 16), -EINVAL);
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 24, 1, 2, 0, b, 16), -EINVAL);
	assert_int_equal(htoe_macsec_pairwise_sak(m16, 16, 1, 2, 0, b, 24), -EINVAL);
	uint8_t ctx[HTOE_MACSEC_PAIRWISE_CTX_LEN];

	htoe_macsec_pairwise_context(0x0102, 0xA0B0, 3, ctx);
	assert_memory_equal(ctx, ((const uint8_t[]){ 0x01, 0x02, 0xA0, 0xB0, 0x03 }), 5);
}

/* Key file lines (htoe-bridge key_file and htoe-pcap --key-file). */
static void test_keyline(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		enum htoe_macsec_keyline_kind kind;
		int an;
		unsigned from, to;
		size_t len;
	} c[] = {
		{ "", HTOE_MACSEC_KL_EMPTY, 0, 0, 0, 0 },
		{ "   # only a comment", HTOE_MACSEC_KL_EMPTY, 0, 0, 0, 0 },
		{ "; ini comment", HTOE_MACSEC_KL_EMPTY, 0, 0, 0, 0 },
		{ "000102030405060708090a0b0c0d0e0f\n", HTOE_MACSEC_KL_KEY, -1, 0, 0, 16 },
		{ "key = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_KEY, 0, 0, 0, 16 },
		{ " key2=0x000102030405060708090A0B0C0D0E0F ; c", HTOE_MACSEC_KL_KEY, 2, 0, 0, 16 },
		{ "an3 = 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
		  HTOE_MACSEC_KL_KEY, 3, 0, 0, 32 },
		{ "key1 1>2 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_PAIR, 1, 1, 2, 16 },
		{ "key 513>7 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_PAIR, 0, 513, 7, 16 },
		{ "master_key = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_MASTER, 0, 0, 0, 16 },
		{ "salt = 0102030405060708090a0b0c # XPN", HTOE_MACSEC_KL_SALT, 0, 0, 0, 12 },
		{ "key4 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "colour = 00", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key0 1>1 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key4 1>2 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key0 1>70000 = 000102030405060708090a0b0c0d0e0f", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key0 = 00010203040506070809xa0b0c0d0e0f", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key0 = 0001020", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "key0 =", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
		{ "00 01", HTOE_MACSEC_KL_ERROR, 0, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char line[200];
		struct htoe_macsec_keyline kl;

		snprintf(line, sizeof(line), "%s", c[i].line);
		assert_int_equal(htoe_macsec_keyline_parse(line, &kl), c[i].kind);
		assert_int_equal(kl.kind, c[i].kind);
		if (c[i].kind == HTOE_MACSEC_KL_ERROR) {
			assert_non_null(kl.err);
			continue;
		}
		assert_int_equal(kl.len, c[i].len);
		if (c[i].kind == HTOE_MACSEC_KL_KEY || c[i].kind == HTOE_MACSEC_KL_PAIR)
			assert_int_equal(kl.an, c[i].an);
		if (c[i].kind == HTOE_MACSEC_KL_PAIR) {
			assert_int_equal(kl.from, c[i].from);
			assert_int_equal(kl.to, c[i].to);
		}
		if (c[i].len >= 2)
			assert_true(kl.val[0] == (c[i].kind == HTOE_MACSEC_KL_SALT ? 1 : 0) &&
			            kl.val[1] == (c[i].kind == HTOE_MACSEC_KL_SALT ? 2 : 1));
	}
	uint8_t b[4];

	assert_int_equal(htoe_macsec_unhex("0a0B", b, sizeof(b)), 2);
	assert_int_equal(b[1], 0x0B);
	assert_int_equal(htoe_macsec_unhex("0a0b0c0d0e", b, sizeof(b)), -1);
	assert_int_equal(htoe_macsec_unhex("", b, sizeof(b)), -1);
	/* one ':' or '-' between octets (an SCI, a MAC), nowhere else */
	assert_int_equal(htoe_macsec_unhex("0a:0b-0c", b, sizeof(b)), 3);
	assert_int_equal(b[2], 0x0c);
	assert_int_equal(htoe_macsec_unhex("0:a0b", b, sizeof(b)), -1);
	assert_int_equal(htoe_macsec_unhex("0a::0b", b, sizeof(b)), -1);
	assert_int_equal(htoe_macsec_unhex(":0a", b, sizeof(b)), -1);
	assert_int_equal(htoe_macsec_unhex("0a:", b, sizeof(b)), -1);
	assert_int_equal(htoe_macsec_unhex("0a.0b", b, sizeof(b)), -1);
}

static void test_names(void **state)
{
	(void)state;
	for (int i = 0; i < HTOE_MACSEC_RX_STATUS_COUNT; i++)
		assert_string_not_equal(htoe_macsec_rx_status_name(i), "?");
	for (int i = 0; i < HTOE_MACSEC_TX_STATUS_COUNT; i++)
		assert_string_not_equal(htoe_macsec_tx_status_name(i), "?");
	assert_string_equal(htoe_macsec_rx_status_name(HTOE_MACSEC_RX_LATE), "InPktsLate");
	assert_string_equal(htoe_macsec_rx_status_name(99), "?");
	assert_int_equal(htoe_macsec_counters_count, 25);
	for (size_t i = 0; i < htoe_macsec_counters_count; i++)
		assert_true(htoe_macsec_counters[i].offset < sizeof(struct htoe_macsec_stats));
	enum htoe_macsec_cipher c;

	assert_int_equal(htoe_macsec_cipher_parse("GCM-AES-XPN-256", &c), 0);
	assert_int_equal(c, HTOE_MACSEC_GCM_AES_XPN_256);
	assert_int_equal(htoe_macsec_cipher_parse("aes", &c), -EINVAL);
	assert_string_equal(htoe_macsec_cipher_name(HTOE_MACSEC_GCM_AES_256), "gcm-aes-256");
	assert_null(htoe_macsec_cipher_name((enum htoe_macsec_cipher)4));
	assert_string_equal(htoe_macsec_backend_name(htoe_macsec_backend_auto()),
	                    have_imb ? "ipsec-mb" : "openssl");
	assert_string_equal(htoe_macsec_event_name(HTOE_MACSEC_EV_RX_SA_RETIRED), "rx-sa-retired");
}

/* The event queue keeps the newest 16 per direction. */
static void test_event_overflow(void **state)
{
	(void)state;
	struct htoe_macsec_cfg cfg = { .sci = 1 };
	struct htoe_macsec *m = secy_new(&cfg);
	uint8_t key[16] = { 0 };
	struct htoe_macsec_sa_cfg s = sa_cfg(key, 16, 1, HTOE_MACSEC_BACKEND_OPENSSL);
	struct htoe_macsec_event ev;

	assert_int_equal(htoe_macsec_tx_sa_add(m, 0, &s), 0);
	assert_int_equal(htoe_macsec_tx_sa_add(m, 1, &s), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(htoe_macsec_tx_sa_activate(m, (unsigned)(i + 1) & 1), 0);
	assert_int_equal(htoe_macsec_events_lost(m), 5);
	int k = 0;

	while (htoe_macsec_event_next(m, &ev))
		k++;
	assert_int_equal(k, 16);
	htoe_macsec_free(m);
}

int main(int argc, char **argv)
{
	json_error_t jerr;

	vectors_path = argc > 1 ? argv[1] : "tests/data/macsec-ieee-802.1ae.json";
	vectors = json_load_file(vectors_path, 0, &jerr);
	if (!vectors) {
		fprintf(stderr, "%s:%d: %s\n", vectors_path, jerr.line, jerr.text);
		return 1;
	}
	have_imb = htoe_macsec_backend_available(HTOE_MACSEC_BACKEND_IPSECMB);
	printf("# backends: openssl%s\n", have_imb ? ", ipsec-mb" : " (ipsec-mb not available)");

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_scapy_known_answer),
		cmocka_unit_test(test_sectag_codec),
		cmocka_unit_test(test_ct_diff),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_replay_off_delayed),
		cmocka_unit_test(test_xpn_boundary),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_unknown_sci_no_sa),
		cmocka_unit_test(test_rollover),
		cmocka_unit_test(test_keep_old_sa),
		cmocka_unit_test(test_preprovisioned),
		cmocka_unit_test(test_pn_exhaustion),
		cmocka_unit_test(test_short_frames),
		cmocka_unit_test(test_backends_equal),
		cmocka_unit_test(test_tx_api),
		cmocka_unit_test(test_retransmit),
		cmocka_unit_test(test_many_peers),
		cmocka_unit_test(test_sci_binding),
		cmocka_unit_test(test_pairwise_attacker),
		cmocka_unit_test(test_pairwise_sak),
		cmocka_unit_test(test_keyline),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_event_overflow),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	json_decref(vectors);
	return r;
}
