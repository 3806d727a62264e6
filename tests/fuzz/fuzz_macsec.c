/* SPDX-License-Identifier: BSD-3-Clause
 * libFuzzer target: the MACsec receive path (SecTAG parsing and the
 * validation order of htoe_macsec_validate) and the protect/validate round
 * trip, on arbitrary bytes.
 *
 * Input: byte 0 = configuration, byte 1 = TX AN (bits 1:0) and replay
 * window (bits 7:2), the rest = one Ethernet frame.
 *   byte 0 bits 1:0 cipher suite (GCM-AES-128, -256, XPN-128, XPN-256)
 *          bit 2    TX integrity only
 *          bits 4:3 validateFrames (0 Strict, 1 Check, 2 Disabled, 3 Strict)
 *          bit 5    replay protection off
 *          bit 6    ipsec-mb backend (OpenSSL otherwise)
 *          bit 7    TX ES mode (no SCI in the SecTAG)
 * The receiver knows the SCI 02:00:00:00:00:01/0001 with an SA on every AN
 * (keys below; lowest PN 1; XPN SSCI/salt fixed): tests/fuzz/
 * gen_corpus_macsec.py builds seeds that validate.
 *
 * Invariants (abort on failure):
 *  - htoe_macsec_sectag_parse returns OK/NO_TAG/BAD_TAG; an accepted SecTAG
 *    re-encodes to the same octets, its lengths add up, SL follows 9.12;
 *  - validate returns a known status, counts it in exactly the counter it
 *    names, and delivers exactly 12 + secure-data octets (or the frame
 *    unchanged for untagged/uncontrolled); in place and out of place agree
 *    byte for byte;
 *  - the frame as plaintext: protect then validate gives it back (OK), in
 *    place and out of place give the same bytes, and any single-byte change
 *    of the protected frame is never OK.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "htoe/htoe_macsec.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", \
		__FILE__, __LINE__, #x); abort(); } } while (0)

#define MAXF 9200

static const uint8_t rx_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t salt[12] = { 0xE6, 0x30, 0xE8, 0x1A, 0x48, 0xDE, 0x86, 0xA2,
                                  0x1C, 0x66, 0xFA, 0x6D };

static void key_for(unsigned an, uint8_t key[32])
{
	for (unsigned i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 7 + 1 + an * 0x40);
}

static uint64_t counted(const struct htoe_macsec_stats *s)
{
	return s->secy.InPktsUntagged + s->secy.InPktsNoTag + s->secy.InPktsBadTag +
	       s->secy.InPktsUnknownSCI + s->secy.InPktsNoSCI + s->rx.InPktsUnchecked +
	       s->rx.InPktsDelayed + s->rx.InPktsOK + s->rx.InPktsInvalid + s->rx.InPktsLate +
	       s->rx.InPktsNotValid + s->rx.InPktsNotUsingSA + s->rx.InPktsUnusedSA +
	       s->rx.InPktsSCIMismatch;
}

static bool have_imb(void)
{
	static int cached = -1;

	if (cached < 0)
		cached = htoe_macsec_backend_available(HTOE_MACSEC_BACKEND_IPSECMB);
	return cached;
}

static struct htoe_macsec *mk(uint8_t conf, uint8_t b1, bool tx_side, uint64_t sci)
{
	struct htoe_macsec_cfg cfg = {
		.cipher = (enum htoe_macsec_cipher)(conf & 3),
		.integrity_only = conf & 4,
		.validate = ((conf >> 3) & 3) == 3 ? HTOE_MACSEC_VALIDATE_STRICT
		                                   : (enum htoe_macsec_validate_mode)((conf >> 3) & 3),
		.no_replay_protect = conf & 0x20,
		.replay_window = b1 >> 2,
		.backend = (conf & 0x40) && have_imb() ? HTOE_MACSEC_BACKEND_IPSECMB
		                                       : HTOE_MACSEC_BACKEND_OPENSSL,
		.tx_sci_mode = (conf & 0x80) ? HTOE_MACSEC_TX_SCI_ES : HTOE_MACSEC_TX_SCI_EXPLICIT,
		.sci = sci,
		.max_rx_sc = 2,
	};
	struct htoe_macsec *m = htoe_macsec_new(&cfg, NULL);

	CHECK(m);
	if (!tx_side)
		CHECK(htoe_macsec_rx_sc_add(m, htoe_macsec_sci(rx_mac, 1)) == 0);
	return m;
}

static struct htoe_macsec_sa_cfg sa_for(uint8_t conf, unsigned an, uint8_t key[32])
{
	struct htoe_macsec_sa_cfg sa = {
		.key = key, .key_len = htoe_macsec_cipher_key_len((enum htoe_macsec_cipher)(conf & 3)),
		.pn = 1, .ssci = 0x7A30C118,
	};

	key_for(an, key);
	memcpy(sa.salt, salt, sizeof(salt));
	return sa;
}

/* Fresh SAs (PN 1, nothing retired) on a cached SecY, so that every input
 * starts from the same state without the cost of a new SecY. */
static void reset_rx(struct htoe_macsec *m, uint8_t conf)
{
	uint8_t key[32];

	for (unsigned an = 0; an < 4; an++) {
		struct htoe_macsec_sa_cfg sa = sa_for(conf, an, key);

		CHECK(htoe_macsec_rx_sa_add(m, htoe_macsec_sci(rx_mac, 1), an, &sa) == 0);
	}
}

static void reset_tx(struct htoe_macsec *m, uint8_t conf, unsigned an)
{
	uint8_t key[32];
	unsigned other = (an + 1) & 3;
	struct htoe_macsec_sa_cfg sa = sa_for(conf, an, key);

	/* the encoding SA cannot be replaced: switch away, replace, switch back */
	if (htoe_macsec_tx_encoding_an(m) == (int)an) {
		CHECK(htoe_macsec_tx_sa_add(m, other, &sa) == 0);
		CHECK(htoe_macsec_tx_sa_activate(m, other) == 0);
	}
	CHECK(htoe_macsec_tx_sa_add(m, an, &sa) == 0);
	CHECK(htoe_macsec_tx_sa_activate(m, an) == 0);
}

/* SecYs cached by (conf, b1): a receiver and a transmitter. */
struct slot {
	bool used;
	uint16_t id;
	struct htoe_macsec *rx, *tx;
};
static struct slot cache[128];

static struct slot *get(uint8_t conf, uint8_t b1)
{
	uint16_t id = (uint16_t)(conf | b1 << 8);
	struct slot *s = &cache[(id * 40503u >> 9) % 128];

	if (!s->used || s->id != id) {
		htoe_macsec_free(s->rx);
		htoe_macsec_free(s->tx);
		s->used = true;
		s->id = id;
		s->rx = mk(conf, b1, false, 0x0200000000090001ull);
		s->tx = mk(conf, b1, true, htoe_macsec_sci(rx_mac, 1));
	}
	return s;
}

static void check_parse(const uint8_t *f, size_t len, bool xpn)
{
	struct htoe_macsec_sectag t;
	int r = htoe_macsec_sectag_parse(f, len, xpn, &t);

	CHECK(r == HTOE_MACSEC_RX_OK || r == HTOE_MACSEC_RX_NO_TAG || r == HTOE_MACSEC_RX_BAD_TAG);
	if (r != HTOE_MACSEC_RX_OK)
		return;
	uint8_t tag[16];
	int n = htoe_macsec_sectag_write(tag, sizeof(tag), &t);

	CHECK(n == t.len && !memcmp(tag, f + 12, (size_t)n));
	CHECK(t.frame_len == 12u + t.len + t.secure_len + HTOE_MACSEC_ICV_LEN);
	CHECK(t.frame_len <= len);
	CHECK(t.sl ? t.secure_len == t.sl : t.secure_len >= 48);
	CHECK(t.sl || t.frame_len == len);
	CHECK(xpn || t.pn != 0);
}

/* Validates f on a fresh receiver, out of place and in place. Returns the
 * status; the plaintext goes to plain. */
static int validate_both(uint8_t conf, uint8_t b1, const uint8_t *f, size_t len,
                         uint8_t *plain, size_t *plain_len)
{
	static uint8_t out[MAXF], inp[MAXF];
	struct htoe_macsec *a = get(conf, b1)->rx, *b = a;
	struct htoe_macsec_stats s0, s1;
	struct htoe_macsec_rx_info ia, ib;
	size_t n = 0, off = 0, n2 = 0;

	reset_rx(a, conf);
	htoe_macsec_stats(a, &s0);
	int r = htoe_macsec_validate(a, f, len, out, sizeof(out), &n, &ia);

	htoe_macsec_stats(a, &s1);
	CHECK(r >= 0 && r < HTOE_MACSEC_RX_STATUS_COUNT && r != HTOE_MACSEC_RX_NOSPACE);
	/* exactly one counter moves, except for the uncontrolled port */
	CHECK(counted(&s1) == counted(&s0) + (r == HTOE_MACSEC_RX_UNCONTROLLED ? 0 : 1));
	if (htoe_macsec_rx_delivered(r) || r == HTOE_MACSEC_RX_UNCONTROLLED) {
		if (r == HTOE_MACSEC_RX_UNTAGGED || r == HTOE_MACSEC_RX_UNCONTROLLED) {
			CHECK(n == len && !memcmp(out, f, len));
		} else {
			struct htoe_macsec_sectag t;

			CHECK(htoe_macsec_sectag_parse(f, len, conf & 2, &t) == 0);
			CHECK(n == 12 + t.secure_len);
			CHECK(!memcmp(out, f, 12));
		}
	} else {
		CHECK(n == 0);
	}
	memcpy(inp, f, len);
	reset_rx(b, conf);
	int r2 = htoe_macsec_validate_inplace(b, inp, len, &off, &n2, &ib);

	CHECK(r2 == r);
	CHECK(ia.pn == ib.pn && ia.sci == ib.sci && ia.an == ib.an);
	if (htoe_macsec_rx_delivered(r) || r == HTOE_MACSEC_RX_UNCONTROLLED) {
		CHECK(n2 == n && off + n2 <= len && !memcmp(inp + off, out, n));
		if (plain) {
			memcpy(plain, out, n);
			*plain_len = n;
		}
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[MAXF], prot[MAXF + 64], buf[MAXF + 128], plain[MAXF];

	if (size < 2 || size - 2 > MAXF - 64)
		return 0;
	uint8_t conf = data[0], b1 = data[1];
	const uint8_t *f = data + 2;
	size_t len = size - 2;
	bool xpn = conf & 2;

	check_parse(f, len, xpn);
	check_parse(f, len, !xpn);
	validate_both(conf, b1, f, len, NULL, NULL);

	/* The frame as plaintext: protect it, and validate the result. */
	if (len < 14)
		return 0;
	memcpy(frame, f, len);
	if (conf & 0x80)
		memcpy(frame + 6, rx_mac, 6);   /* ES: the SCI is MAC SA || 1 */
	struct htoe_macsec *tx = get(conf, b1)->tx;
	size_t pl = 0, off = 64, l2 = len;
	struct htoe_macsec_tx_info ti;

	reset_tx(tx, conf, b1 & 3u);
	int r = htoe_macsec_protect(tx, frame, len, prot, sizeof(prot), &pl, &ti);

	CHECK(r == HTOE_MACSEC_TX_OK);
	CHECK(ti.pn == 1 && ti.an == (b1 & 3u));
	CHECK(pl == len + ti.sectag_len + HTOE_MACSEC_ICV_LEN);
	memcpy(buf + 64, frame, len);
	reset_tx(tx, conf, b1 & 3u);
	CHECK(htoe_macsec_protect_inplace(tx, buf, sizeof(buf), &off, &l2, NULL) ==
	      HTOE_MACSEC_TX_OK);
	CHECK(l2 == pl && off == 64u - ti.sectag_len && !memcmp(buf + off, prot, pl));
	check_parse(prot, pl, xpn);

	size_t n = 0;

	r = validate_both(conf, b1, prot, pl, plain, &n);
	/* validateFrames Disabled does not check integrity-only frames */
	CHECK(r == (((conf >> 3) & 3) == 2 && (conf & 4) ? HTOE_MACSEC_RX_UNCHECKED
	                                                  : HTOE_MACSEC_RX_OK));
	CHECK(n == len && !memcmp(plain, frame, len));

	/* One changed byte anywhere: never valid. */
	size_t pos = (len * 131u + conf) % pl;
	uint8_t x = (uint8_t)(f[len - 1] | 1);

	prot[pos] ^= x;
	r = validate_both(conf, b1, prot, pl, NULL, NULL);
	CHECK(r != HTOE_MACSEC_RX_OK && r != HTOE_MACSEC_RX_DELAYED);
	return 0;
}
