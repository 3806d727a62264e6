/* SPDX-License-Identifier: BSD-3-Clause
 * bench_macsec: per-frame cost of htoe_macsec_protect / htoe_macsec_validate
 * for both crypto backends at 64/512/1500-octet frames (plain frame length,
 * no FCS), through the public API (SecTAG, IV, counters included).
 *
 *   bench_macsec [SECONDS_PER_CASE] [--all]
 *   meson test -C BUILD --benchmark --suite macsec
 *
 * Default: GCM-AES-128, SCI in the SecTAG, confidentiality and integrity
 * only. --all adds GCM-AES-256 and GCM-AES-XPN-128. Each case runs three
 * times; the best and the median ns/frame are printed. Validation uses a
 * receiver with replay protection off so that the same frame can be
 * validated again and again (it is then counted InPktsDelayed; the work is
 * the same as for a fresh frame). "in-place rt" is the bridge's way
 * (app/bridge/macsec.c): htoe_macsec_protect_inplace with the SecTAG going
 * into 128 octets of headroom, then htoe_macsec_validate_inplace of the
 * result, which leaves the plain frame where it was (fresh PN, RX_OK).
 * --inplace runs only that (for perf record). No assertion on the numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "htoe/htoe_macsec.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void fail(const char *what)
{
	fprintf(stderr, "bench_macsec: %s\n", what);
	exit(1);
}

struct result {
	double best, median;
};

static struct result run(struct htoe_macsec *tx, struct htoe_macsec *rx, const uint8_t *plain,
                         size_t len, bool validate, double secs)
{
	static uint8_t out[2048], back[2048];
	double t[3];
	size_t n = 0, m = 0;

	if (htoe_macsec_protect(tx, plain, len, out, sizeof(out), &n, NULL) != HTOE_MACSEC_TX_OK)
		fail("protect failed");
	for (int r = 0; r < 3; r++) {
		unsigned long iters = 0;
		double t0 = now_s(), el;

		do {
			for (int k = 0; k < 256; k++) {
				int st;

				if (validate) {
					st = htoe_macsec_validate(rx, out, n, back, sizeof(back), &m, NULL);
					if (st != HTOE_MACSEC_RX_OK && st != HTOE_MACSEC_RX_DELAYED)
						fail("validate failed");
				} else {
					st = htoe_macsec_protect(tx, plain, len, back, sizeof(back), &m, NULL);
					if (st != HTOE_MACSEC_TX_OK)
						fail("protect failed");
				}
			}
			iters += 256;
			el = now_s() - t0;
		} while (el < secs);
		t[r] = el * 1e9 / (double)iters;
	}
	qsort(t, 3, sizeof(t[0]), cmp_d);
	return (struct result){ t[0], t[1] };
}

#define HEADROOM 128u

static struct result run_inplace(struct htoe_macsec *tx, struct htoe_macsec *rx,
                                 const uint8_t *plain, size_t len, double secs)
{
	static uint8_t buf[HEADROOM + 2048];
	double t[3];

	memcpy(buf + HEADROOM, plain, len);
	for (int r = 0; r < 3; r++) {
		unsigned long iters = 0;
		double t0 = now_s(), el;

		do {
			for (int k = 0; k < 256; k++) {
				size_t off = HEADROOM, n = len, poff, plen;

				if (htoe_macsec_protect_inplace(tx, buf, sizeof(buf), &off, &n, NULL) !=
				    HTOE_MACSEC_TX_OK)
					fail("protect_inplace failed");
				if (htoe_macsec_validate_inplace(rx, buf + off, n, &poff, &plen, NULL) !=
				    HTOE_MACSEC_RX_OK || off + poff != HEADROOM || plen != len)
					fail("validate_inplace failed");
			}
			iters += 256;
			el = now_s() - t0;
		} while (el < secs);
		t[r] = el * 1e9 / (double)iters;
	}
	if (memcmp(buf + HEADROOM, plain, len))
		fail("in-place round trip changed the frame");
	qsort(t, 3, sizeof(t[0]), cmp_d);
	return (struct result){ t[0], t[1] };
}

int main(int argc, char **argv)
{
	double secs = 0.3;
	bool all = false, only_inplace = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			all = true;
		else if (!strcmp(argv[i], "--inplace"))
			only_inplace = true;
		else
			secs = atof(argv[i]);
	}
	if (secs <= 0)
		secs = 0.3;
	static const size_t sizes[] = { 64, 512, 1500 };
	enum htoe_macsec_backend bes[2] = { HTOE_MACSEC_BACKEND_OPENSSL, HTOE_MACSEC_BACKEND_IPSECMB };
	enum htoe_macsec_cipher suites[3] = { HTOE_MACSEC_GCM_AES_128, HTOE_MACSEC_GCM_AES_256,
	                                      HTOE_MACSEC_GCM_AES_XPN_128 };
	uint8_t key[32], plain[1500];

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 11 + 3);
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 7);
	plain[12] = 0x88;
	plain[13] = 0xB5;

	printf("# htoe_macsec per-frame cost, ns/frame (best / median of 3 runs of %.2f s)\n", secs);
	printf("# frame = plain frame length (DA SA EtherType payload), SCI in the SecTAG\n");
	printf("%-16s %-15s %-9s %6s %18s %18s %18s\n", "suite", "mode", "backend", "frame",
	       "protect ns", "validate ns", "in-place rt ns");
	for (int s = 0; s < (all ? 3 : 1); s++) {
		for (int integ = 0; integ < 2; integ++) {
			for (int b = 0; b < 2; b++) {
				if (!htoe_macsec_backend_available(bes[b])) {
					printf("%-16s %-15s %-9s   (not available)\n",
					       htoe_macsec_cipher_name(suites[s]),
					       integ ? "integrity-only" : "confidential",
					       htoe_macsec_backend_name(bes[b]));
					continue;
				}
				for (size_t z = 0; z < 3; z++) {
					struct htoe_macsec_cfg cfg = {
						.cipher = suites[s], .integrity_only = integ,
						.sci = 0x0200000000010001ull, .no_replay_protect = true,
					};
					struct htoe_macsec *tx = htoe_macsec_new(&cfg, NULL);
					struct htoe_macsec *rx = htoe_macsec_new(&cfg, NULL);
					struct htoe_macsec_sa_cfg sa = {
						.key = key,
						.key_len = htoe_macsec_cipher_key_len(suites[s]),
						.pn = 1, .backend = bes[b], .ssci = 1,
					};

					if (!tx || !rx || htoe_macsec_tx_sa_add(tx, 0, &sa) ||
					    htoe_macsec_rx_sc_add(rx, cfg.sci) ||
					    htoe_macsec_rx_sa_add(rx, cfg.sci, 0, &sa))
						fail("setup failed");
					struct result p = { 0, 0 }, v = { 0, 0 };

					if (!only_inplace) {
						p = run(tx, rx, plain, sizes[z], false, secs);
						v = run(tx, rx, plain, sizes[z], true, secs);
					}
					struct result ip = run_inplace(tx, rx, plain, sizes[z], secs);

					printf("%-16s %-15s %-9s %6zu %8.0f / %7.0f %8.0f / %7.0f "
					       "%8.0f / %7.0f\n",
					       htoe_macsec_cipher_name(suites[s]),
					       integ ? "integrity-only" : "confidential",
					       htoe_macsec_backend_name(bes[b]), sizes[z], p.best, p.median,
					       v.best, v.median, ip.best, ip.median);
					fflush(stdout);
					htoe_macsec_free(tx);
					htoe_macsec_free(rx);
				}
			}
		}
	}
	return 0;
}
