/* SPDX-License-Identifier: BSD-3-Clause
 * The IEEE 802.1X-2010 KDF of lib/htoe/htoe_macsec_kdf.c and the pairwise
 * SAKs, checked against an independent implementation: a few lines of
 * Python on the `cryptography` package's AES-CMAC (run with
 * /usr/bin/python3; the test is skipped, exit 77, without it).
 *
 *   test_macsec_kdf [PYTHON]
 *
 * 300 random cases (16- and 32-octet keys, labels of 0..40 octets, contexts
 * of 0..200 octets, outputs of 1..80 octets, so one to six CMAC blocks) and
 * the pairwise SAKs of every ordered pair of nodes {1, 2, 3, 0x1234} on
 * every AN for both SAK lengths must be byte-identical.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htoe/htoe_macsec.h"

#define CASES 300

/* The KDF as 802.1X-2010 6.2.1 states it, written independently of the C
 * code: block i = AES-CMAC(K, i || Label || 0x00 || Context || L). */
static const char py_kdf[] =
	"import sys\n"
	"from cryptography.hazmat.primitives.cmac import CMAC\n"
	"from cryptography.hazmat.primitives.ciphers.algorithms import AES\n"
	"def kdf(key, label, ctx, nbytes):\n"
	"    bits = nbytes * 8\n"
	"    out = b''\n"
	"    i = 1\n"
	"    while len(out) < nbytes:\n"
	"        c = CMAC(AES(key))\n"
	"        c.update(bytes([i]) + label + b'\\x00' + ctx + bits.to_bytes(2, 'big'))\n"
	"        out += c.finalize()\n"
	"        i += 1\n"
	"    return out[:nbytes]\n"
	"for line in sys.stdin:\n"
	"    k, l, c, n = line.split(',')\n"
	"    print(kdf(bytes.fromhex(k), bytes.fromhex(l), bytes.fromhex(c), int(n)).hex())\n"
	"    sys.stdout.flush()\n";

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1Dull;
}

static void hexs(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

struct kcase {
	uint8_t key[32], label[40], ctx[200], out[80];
	size_t key_len, label_len, ctx_len, out_len;
};

int main(int argc, char **argv)
{
	const char *python = argc > 1 ? argv[1] : "/usr/bin/python3";
	char script[] = "/tmp/htoe-kdf-XXXXXX", cmd[512], in_path[] = "/tmp/htoe-kdf-in-XXXXXX";
	static struct kcase c[CASES + 2 * 12 * 4];
	unsigned n = 0, bad = 0;
	int fd;

	if (access(python, X_OK) != 0) {
		printf("SKIP: %s is not there\n", python);
		return 77;
	}
	snprintf(cmd, sizeof(cmd), "%s -c 'import cryptography.hazmat.primitives.cmac' 2>/dev/null",
	         python);
	if (system(cmd) != 0) {
		printf("SKIP: %s has no 'cryptography' package\n", python);
		return 77;
	}
	for (; n < CASES; n++) {
		struct kcase *k = &c[n];

		k->key_len = rnd() & 1 ? 32 : 16;
		k->label_len = rnd() % 41;
		k->ctx_len = n < 10 ? n : rnd() % 201;
		k->out_len = n < 10 ? 16 + 16 * (n % 2) : 1 + rnd() % 80;
		for (size_t i = 0; i < k->key_len; i++)
			k->key[i] = (uint8_t)rnd();
		for (size_t i = 0; i < k->label_len; i++)
			k->label[i] = (uint8_t)rnd();
		for (size_t i = 0; i < k->ctx_len; i++)
			k->ctx[i] = (uint8_t)rnd();
		if (htoe_macsec_kdf(k->key, k->key_len, k->label, k->label_len, k->ctx, k->ctx_len,
		                    k->out, k->out_len)) {
			fprintf(stderr, "FAIL: case %u: htoe_macsec_kdf failed\n", n);
			return 1;
		}
	}
	/* the pairwise SAKs: label and context as documented in docs/macsec.md */
	static const uint16_t nodes[4] = { 1, 2, 3, 0x1234 };
	uint8_t master[32];

	for (size_t i = 0; i < sizeof(master); i++)
		master[i] = (uint8_t)rnd();
	for (unsigned len = 16; len <= 32; len += 16)
		for (unsigned a = 0; a < 4; a++)
			for (unsigned b = 0; b < 4; b++)
				for (unsigned an = 0; a != b && an < 4; an++) {
					struct kcase *k = &c[n++];

					k->key_len = len;   /* master of the SAK's size */
					memcpy(k->key, master, len);
					k->label_len = strlen(HTOE_MACSEC_PAIRWISE_LABEL);
					memcpy(k->label, HTOE_MACSEC_PAIRWISE_LABEL, k->label_len);
					htoe_macsec_pairwise_context(nodes[a], nodes[b], an, k->ctx);
					k->ctx_len = HTOE_MACSEC_PAIRWISE_CTX_LEN;
					k->out_len = len;
					if (htoe_macsec_pairwise_sak(master, len, nodes[a], nodes[b], an,
					                             k->out, len)) {
						fprintf(stderr, "FAIL: pairwise SAK %u->%u AN %u\n",
						        nodes[a], nodes[b], an);
						return 1;
					}
				}

	fd = mkstemp(script);
	if (fd < 0 || write(fd, py_kdf, sizeof(py_kdf) - 1) != (ssize_t)(sizeof(py_kdf) - 1)) {
		perror("test_macsec_kdf: script");
		return 1;
	}
	close(fd);
	fd = mkstemp(in_path);
	FILE *in = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!in) {
		perror("test_macsec_kdf: input");
		unlink(script);
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		hexs(in, c[i].key, c[i].key_len);
		fputc(',', in);
		hexs(in, c[i].label, c[i].label_len);
		fputc(',', in);
		hexs(in, c[i].ctx, c[i].ctx_len);
		fprintf(in, ",%zu\n", c[i].out_len);
	}
	fclose(in);
	snprintf(cmd, sizeof(cmd), "%s %s < %s", python, script, in_path);
	FILE *py = popen(cmd, "r");
	char line[256];
	unsigned got = 0;

	while (py && fgets(line, sizeof(line), py)) {
		char mine[200] = "";

		if (got >= n)
			break;
		for (size_t j = 0; j < c[got].out_len; j++)
			snprintf(mine + 2 * j, 3, "%02x", c[got].out[j]);
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, mine)) {
			fprintf(stderr, "FAIL: case %u (key %zu, label %zu, context %zu, %zu octets): "
			        "C %s, Python %s\n", got, c[got].key_len, c[got].label_len,
			        c[got].ctx_len, c[got].out_len, mine, line);
			bad++;
		}
		got++;
	}
	int st = py ? pclose(py) : -1;

	unlink(script);
	unlink(in_path);
	if (st != 0 || got != n) {
		fprintf(stderr, "FAIL: the Python KDF answered %u of %u cases (status %d)\n", got, n, st);
		return 1;
	}
	if (bad)
		return 1;
	printf("test_macsec_kdf: %u cases identical (%u random, %u pairwise SAKs)\n", n, CASES,
	       n - CASES);
	return 0;
}
