/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-pcap: pcap utilities for HToE captures.
 *
 *   htoe-pcap macsec-decrypt --in IN.pcap --out OUT.pcap
 *             (--key HEX [--key HEX ...] | --key-file FILE | --master-key HEX)
 *             [--node ID=MAC ...] [--sci HEX]
 *             [--xpn --ssci HEX --salt HEX [--pn-high HEX]]
 *             [--drop-invalid] [--json] [--verbose]
 *   htoe-pcap macsec-encrypt --in IN.pcap --out OUT.pcap
 *             (--key HEX | (--key-file FILE | --master-key HEX) --pair A>B)
 *             --sci HEX --an N --pn START [--integrity-only] [--cipher SUITE]
 *             [--ssci HEX --salt HEX] [--es] [--pad]
 *   htoe-pcap macsec-keys (--master-key HEX | --key-file FILE) --node N
 *             --peers ID,ID... --out FILE [--cipher SUITE] [--an N ...]
 *
 * Key files have the format of htoe-bridge's key_file (docs/macsec.md):
 * shared keys ("keyN = HEX" or bare HEX lines) or pairwise ones ("keyN A>B
 * = HEX", "master_key = HEX"). With pairwise keys macsec-decrypt takes the
 * sender's node id from the SCI's MAC and the receiver's from the
 * destination MAC (02:48:54:00:HI:LO, or --node ID=MAC), and uses the SAK
 * of that ordered pair and AN (derived from the master key with the
 * IEEE 802.1X-2010 KDF when a master key is given). macsec-keys writes the
 * pairwise key file of one node (its pairs only) from the master key.
 *
 * macsec-decrypt writes every MACsec frame that validates under one of the
 * keys as its plaintext (DA SA EtherType payload) and copies every other
 * frame unchanged, so that Wireshark < 4.4 (no MACsec decryption) and the
 * HToE dissector can read the capture. It reports how many protected frames
 * failed validation, per reason (802.1AE counter names). Exit status: 0 all
 * protected frames decrypted, 3 some failed validation, 1 error, 2 usage.
 *
 * macsec-encrypt protects every frame of a capture (for building test
 * captures): one TX SA, PNs from START upward.
 *
 * The frames are Ethernet (DLT_EN10MB) without FCS. Keys are never printed.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <pcap/pcap.h>

#include "htoe/htoe_macsec.h"
#include "keyfile.h"
#include "htoe_version.h"
#include "parse_num.h"

#define MAX_KEYS  64
#define FRAME_MAX 65536
#define SNAPLEN   262144

static const char *prog = "htoe-pcap";

struct key {
	uint8_t b[HTOE_MACSEC_KEY_MAX];
	size_t len;
	bool pair;               /* a pairwise SAK: from -> to on AN an */
	uint16_t from, to;
	int an;
	const char *origin;      /* "--key #2" or "FILE:LINE", for messages */
	char origin_buf[300];
};

static struct key keys[MAX_KEYS];
static unsigned n_keys;
static uint8_t master[HTOE_MACSEC_KEY_MAX];   /* pairwise master key */
static size_t master_len;
static uint8_t file_salt[HTOE_MACSEC_SALT_LEN];
static bool have_file_salt;

static void wipe_keys(void)
{
	explicit_bzero(keys, sizeof(keys));
	explicit_bzero(master, sizeof(master));
}

static unsigned n_pair_keys(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < n_keys; i++)
		n += keys[i].pair;
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage:\n"
		"  %s macsec-decrypt --in IN.pcap --out OUT.pcap\n"
		"        (--key HEX [--key HEX ...] | --key-file FILE | --master-key HEX)\n"
		"        [--node ID=MAC ...] [--sci HEX]\n"
		"        [--xpn --ssci HEX --salt HEX [--pn-high HEX]]\n"
		"        [--drop-invalid] [--json] [--verbose]\n"
		"  %s macsec-encrypt --in IN.pcap --out OUT.pcap\n"
		"        (--key HEX | (--key-file FILE | --master-key HEX) --pair A>B)\n"
		"        --sci HEX --an N --pn START [--integrity-only]\n"
		"        [--cipher gcm-aes-128|gcm-aes-256|gcm-aes-xpn-128|gcm-aes-xpn-256]\n"
		"        [--ssci HEX --salt HEX] [--es] [--pad]\n"
		"\n"
		"  %s macsec-keys (--master-key HEX | --key-file FILE) --node N --peers ID,...\n"
		"        --out FILE [--cipher SUITE] [--an N ...]\n"
		"\n"
		"Keys are 32 or 64 hex digits (GCM-AES-128 / -256). A key file is htoe-bridge's\n"
		"key_file: 'keyN = HEX' or a bare HEX per line, or pairwise 'keyN A>B = HEX' /\n"
		"'master_key = HEX' ('#' or ';' starts a comment); it must not be accessible by\n"
		"group or others. Pairwise keys: --master-key (or a pairwise key file); the\n"
		"pair is the SCI's node and the destination MAC's node (--node ID=MAC for MACs\n"
		"other than 02:48:54:00:HI:LO); macsec-encrypt takes --pair A>B.\n"
		"SCI: 16 hex digits (MAC address then port, e.g. 020000000001:0001).\n"
		"\n"
		"  --help       this text\n"
		"  --version    the version\n",
		prog, prog, prog);
}

/* ---- argument parsing ------------------------------------------------------ */

/* the programs' one hex rule (app/common/keyfile.c) */
#define parse_hex htoe_hex_octets

/* A key of len octets (v == NULL: from hex) */
static int add_key_bytes(const char *hex, const uint8_t *v, size_t len, const char *origin)
{
	char err[128];
	struct key *k;
	int r = 0;

	if (n_keys == MAX_KEYS) {
		fprintf(stderr, "%s: %s: too many keys (at most %d)\n", prog, origin, MAX_KEYS);
		return -1;
	}
	k = &keys[n_keys];
	if (v) {
		memcpy(k->b, v, len);
		k->len = len;
	} else {
		r = parse_hex(hex, k->b, 1, 32, &k->len, err, sizeof(err));
	}
	if (r == 0 && k->len != 16 && k->len != 32) {
		snprintf(err, sizeof(err), "expected 32 or 64 hex digits, got %zu", 2 * k->len);
		r = -1;
	}
	if (r) {
		fprintf(stderr, "%s: %s: bad key: %s\n", prog, origin, err);
		explicit_bzero(k, sizeof(*k));
		return -1;
	}
	snprintf(k->origin_buf, sizeof(k->origin_buf), "%s", origin);
	k->origin = k->origin_buf;
	n_keys++;
	return 0;
}

static int add_key(const char *hex, const char *origin)
{
	return add_key_bytes(hex, NULL, 0, origin);
}

/* --key-file: the key file reader of htoe-bridge's key_file (keyfile.c) */
static int load_key_file(const char *path)
{
	struct htoe_keyfile kf;
	struct htoe_macsec_keyline kl;
	char err[HTOE_KEYFILE_ORIGIN_MAX + 256];
	unsigned before = n_keys;
	int r, rc = 0;

	if (htoe_keyfile_open(&kf, path, err, sizeof(err))) {
		fprintf(stderr, "%s: --key-file: %s\n", prog, err);
		return -1;
	}
	while (!rc && (r = htoe_keyfile_next(&kf, &kl, err, sizeof(err))) > 0) {
		if (kl.kind == HTOE_MACSEC_KL_SALT) {
			memcpy(file_salt, kl.val, sizeof(file_salt));
			have_file_salt = true;
		} else if (kl.kind == HTOE_MACSEC_KL_MASTER) {
			if (master_len) {
				fprintf(stderr, "%s: %s: master_key: given twice\n", prog, kf.origin);
				rc = -1;
			} else {
				memcpy(master, kl.val, kl.len);
				master_len = kl.len;
			}
		} else if (add_key_bytes(NULL, kl.val, kl.len, kf.origin)) {
			rc = -1;
		} else {
			/* a shared key's AN: named, or (a bare key) the next one not named
			 * yet (keyfile.c); a pairwise key's pair */
			keys[n_keys - 1].an = kl.an;
			if (kl.kind == HTOE_MACSEC_KL_PAIR) {
				keys[n_keys - 1].pair = true;
				keys[n_keys - 1].from = kl.from;
				keys[n_keys - 1].to = kl.to;
			}
		}
	}
	if (!rc && r < 0) {
		fprintf(stderr, "%s: --key-file: %s\n", prog, err);
		rc = -1;
	}
	explicit_bzero(&kl, sizeof(kl));
	htoe_keyfile_close(&kf);
	if (!rc && n_pair_keys() && (master_len || n_pair_keys() != n_keys - before)) {
		fprintf(stderr, "%s: --key-file %s: give shared keys, pairwise keys or a master_key, "
		        "not a mix\n", prog, path);
		rc = -1;
	}
	return rc;
}

static int parse_u64(const char *opt, const char *s, int base, uint64_t max, uint64_t *v)
{
	uint64_t x;

	if (htoe_parse_unsigned(s, base, 0, UINT64_MAX, &x)) {
		fprintf(stderr, "%s: %s: '%s' is not a number\n", prog, opt, s);
		return -1;
	}
	if (x > max) {
		fprintf(stderr, "%s: %s: %s is out of range (max %" PRIu64 ")\n", prog, opt, s, max);
		return -1;
	}
	*v = x;
	return 0;
}

static int parse_sci(const char *opt, const char *s, uint64_t *sci)
{
	uint8_t b[8];
	size_t n;
	char err[128];

	if (parse_hex(s, b, 8, 8, &n, err, sizeof(err))) {
		fprintf(stderr, "%s: %s: bad SCI '%s': %s\n", prog, opt, s, err);
		return -1;
	}
	*sci = htoe_macsec_sci_get(b);
	return 0;
}

/* --ssci HEX and --salt HEX (12 bytes), for XPN; both subcommands take them. */
static int parse_xpn_opt(bool is_ssci, const char *arg, uint32_t *ssci, bool *have_ssci,
			 uint8_t salt[12], bool *have_salt)
{
	char err[128];
	uint64_t v;
	size_t n;

	if (is_ssci) {
		if (parse_u64("--ssci", arg, 16, UINT32_MAX, &v))
			return -1;
		*ssci = (uint32_t)v;
		*have_ssci = true;
		return 0;
	}
	if (parse_hex(arg, salt, 12, 12, &n, err, sizeof(err))) {
		fprintf(stderr, "%s: --salt: %s\n", prog, err);
		return -1;
	}
	*have_salt = true;
	return 0;
}

/* ---- pcap --------------------------------------------------------------------- */

struct io {
	pcap_t *in, *dead;
	pcap_dumper_t *out;
	const char *in_path, *out_path;
};

static int io_open(struct io *io, const char *in, const char *out)
{
	char errbuf[PCAP_ERRBUF_SIZE];

	memset(io, 0, sizeof(*io));
	io->in_path = in;
	io->out_path = out;
	io->in = pcap_open_offline_with_tstamp_precision(in, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!io->in) {
		fprintf(stderr, "%s: --in %s: %s\n", prog, in, errbuf);
		return -1;
	}
	if (pcap_datalink(io->in) != DLT_EN10MB) {
		fprintf(stderr, "%s: --in %s: link type %s is not supported (Ethernet only)\n", prog,
		        in, pcap_datalink_val_to_name(pcap_datalink(io->in)) ?
		        pcap_datalink_val_to_name(pcap_datalink(io->in)) : "?");
		return -1;
	}
	/* Keep the input's time stamp precision (htoe-sim writes ns). */
	int prec = pcap_get_tstamp_precision(io->in);

	io->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, SNAPLEN, (unsigned)prec);
	if (!io->dead) {
		fprintf(stderr, "%s: pcap_open_dead failed\n", prog);
		return -1;
	}
	io->out = pcap_dump_open(io->dead, out);
	if (!io->out) {
		fprintf(stderr, "%s: --out %s: %s\n", prog, out, pcap_geterr(io->dead));
		return -1;
	}
	return 0;
}

static int io_close(struct io *io)
{
	int rc = 0;

	if (io->out) {
		if (pcap_dump_flush(io->out) != 0) {
			fprintf(stderr, "%s: --out %s: write error\n", prog, io->out_path);
			rc = -1;
		}
		pcap_dump_close(io->out);
	}
	if (io->dead)
		pcap_close(io->dead);
	if (io->in)
		pcap_close(io->in);
	return rc;
}

static void io_write(struct io *io, const struct pcap_pkthdr *h0, const uint8_t *data, size_t len)
{
	struct pcap_pkthdr h = *h0;

	h.caplen = (bpf_u_int32)len;
	h.len = (bpf_u_int32)(len + (h0->len > h0->caplen ? h0->len - h0->caplen : 0));
	pcap_dump((u_char *)io->out, &h, data);
}

/* ---- macsec-decrypt ------------------------------------------------------------ */

/* The receiving SecY of a key: replay protection off (a capture may hold
 * retransmissions: old PNs are decrypted and counted as delayed). */
static struct htoe_macsec *decrypt_secy(const struct key *k, bool xpn)
{
	struct htoe_macsec_cfg cfg = {
		.cipher = k->len == 32 ? (xpn ? HTOE_MACSEC_GCM_AES_XPN_256 : HTOE_MACSEC_GCM_AES_256)
		                       : (xpn ? HTOE_MACSEC_GCM_AES_XPN_128 : HTOE_MACSEC_GCM_AES_128),
		.no_replay_protect = true,
		.rx_keep_old_sa = true,
		.max_rx_sc = 4096,
	};
	int e = 0;
	struct htoe_macsec *m = htoe_macsec_new(&cfg, &e);

	if (!m)
		fprintf(stderr, "%s: cannot set up MACsec: %s\n", prog, strerror(-e));
	return m;
}

enum { OPT_IN = 1000, OPT_OUT, OPT_KEY, OPT_KEY_FILE, OPT_SCI, OPT_XPN, OPT_SSCI, OPT_SALT,
       OPT_PN_HIGH, OPT_DROP_INVALID, OPT_JSON, OPT_VERBOSE, OPT_AN, OPT_PN, OPT_INTEGRITY,
       OPT_CIPHER, OPT_ES, OPT_PAD, OPT_MASTER, OPT_NODE, OPT_PAIR, OPT_PEERS, OPT_HELP };

/* --master-key HEX */
static int set_master_opt(const char *hex)
{
	char err[128];

	if (master_len) {
		fprintf(stderr, "%s: --master-key: given twice (or also in the key file)\n", prog);
		return -1;
	}
	if (parse_hex(hex, master, 16, 32, &master_len, err, sizeof(err)) ||
	    (master_len != 16 && master_len != 32)) {
		fprintf(stderr, "%s: --master-key: %s\n", prog,
		        master_len ? "expected 32 or 64 hex digits" : err);
		explicit_bzero(master, sizeof(master));
		master_len = 0;
		return -1;
	}
	return 0;
}

/* --node ID=MAC: a node whose MAC is not the default 02:48:54:00:HI:LO */
#define MAX_NODES 256
static struct { uint16_t id; uint8_t mac[6]; } node_macs[MAX_NODES];
static unsigned n_node_macs;

static int add_node_opt(const char *arg)
{
	uint64_t id;
	char idbuf[16], err[128];
	const char *eq = strchr(arg, '=');
	size_t n;

	if (!eq || (size_t)(eq - arg) >= sizeof(idbuf) || n_node_macs == MAX_NODES) {
		fprintf(stderr, "%s: --node %s: expected ID=MAC (e.g. 3=02:00:00:00:00:03)\n", prog,
		        arg);
		return -1;
	}
	memcpy(idbuf, arg, (size_t)(eq - arg));
	idbuf[eq - arg] = 0;
	if (parse_u64("--node", idbuf, 0, UINT16_MAX, &id))
		return -1;
	if (parse_hex(eq + 1, node_macs[n_node_macs].mac, 6, 6, &n, err, sizeof(err))) {
		fprintf(stderr, "%s: --node %s: bad MAC: %s\n", prog, arg, err);
		return -1;
	}
	node_macs[n_node_macs++].id = (uint16_t)id;
	return 0;
}

/* The node id of a MAC: --node, else the default 02:48:54:00:HI:LO; -1 */
static int node_of_mac(const uint8_t *mac)
{
	for (unsigned i = 0; i < n_node_macs; i++)
		if (!memcmp(node_macs[i].mac, mac, 6))
			return node_macs[i].id;
	if (mac[0] == 0x02 && mac[1] == 0x48 && mac[2] == 0x54 && mac[3] == 0x00)
		return mac[4] << 8 | mac[5];
	return -1;
}

/* "A>B" or "A,B" */
static int parse_pair(const char *s, uint16_t *a, uint16_t *b)
{
	unsigned x, y;
	char sep, tail;

	if (sscanf(s, "%u%c%u%c", &x, &sep, &y, &tail) != 3 || (sep != '>' && sep != ',') ||
	    x > UINT16_MAX || y > UINT16_MAX || x == y) {
		fprintf(stderr, "%s: --pair %s: expected A>B (two different node ids)\n", prog, s);
		return -1;
	}
	*a = (uint16_t)x;
	*b = (uint16_t)y;
	return 0;
}

/* The index of the pairwise SAK from -> to on AN an of sak_len octets:
 * listed, or derived from the master key (once). -1 if there is none. */
static int pair_key(uint16_t from, uint16_t to, unsigned an, size_t sak_len)
{
	uint8_t k[HTOE_MACSEC_KEY_MAX];
	char origin[64];

	for (unsigned i = 0; i < n_keys; i++)
		if (keys[i].pair && keys[i].from == from && keys[i].to == to &&
		    keys[i].an == (int)an)
			return (int)i;
	if (!master_len || from == to ||
	    htoe_macsec_pairwise_sak(master, master_len, from, to, an, k, sak_len))
		return -1;
	snprintf(origin, sizeof(origin), "master key (%u>%u, AN %u)", from, to, an);
	int r = add_key_bytes(NULL, k, sak_len, origin);

	explicit_bzero(k, sizeof(k));
	if (r)
		return -1;
	keys[n_keys - 1].pair = true;
	keys[n_keys - 1].from = from;
	keys[n_keys - 1].to = to;
	keys[n_keys - 1].an = (int)an;
	return (int)n_keys - 1;
}

/* Reasons a protected frame is not decrypted, beyond the rx statuses. */
#define R_TRUNCATED HTOE_MACSEC_RX_STATUS_COUNT
#define R_NO_PAIR   (HTOE_MACSEC_RX_STATUS_COUNT + 1)
#define R_COUNT     (HTOE_MACSEC_RX_STATUS_COUNT + 2)

static const char *reason_name(int r)
{
	return r == R_TRUNCATED ? "Truncated" : r == R_NO_PAIR ? "NoPairwiseKey"
	                                                       : htoe_macsec_rx_status_name(r);
}

static int cmd_decrypt(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "in", required_argument, NULL, OPT_IN },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "sci", required_argument, NULL, OPT_SCI },
		{ "xpn", no_argument, NULL, OPT_XPN },
		{ "ssci", required_argument, NULL, OPT_SSCI },
		{ "salt", required_argument, NULL, OPT_SALT },
		{ "pn-high", required_argument, NULL, OPT_PN_HIGH },
		{ "drop-invalid", no_argument, NULL, OPT_DROP_INVALID },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
		{ "master-key", required_argument, NULL, OPT_MASTER },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "cipher", required_argument, NULL, OPT_CIPHER },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *out = NULL;
	size_t sak_len = 16;
	bool master_opt = false;
	bool have_sci = false, xpn = false, have_ssci = false, have_salt = false;
	bool drop_invalid = false, json = false, verbose = false, key_opt = false, key_file = false;
	uint64_t sci_filter = 0, pn_high = 0;
	uint32_t ssci = 0;
	uint8_t salt[HTOE_MACSEC_SALT_LEN];
	char origin[64];
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IN: in = optarg; break;
		case OPT_OUT: out = optarg; break;
		case OPT_KEY:
			key_opt = true;
			snprintf(origin, sizeof(origin), "--key #%u", n_keys + 1);
			if (add_key(optarg, origin))
				return 2;
			break;
		case OPT_KEY_FILE:
			key_file = true;
			if (load_key_file(optarg))
				return 2;
			break;
		case OPT_SCI:
			if (parse_sci("--sci", optarg, &sci_filter))
				return 2;
			have_sci = true;
			break;
		case OPT_XPN: xpn = true; break;
		case OPT_SSCI:
		case OPT_SALT:
			if (parse_xpn_opt(c == OPT_SSCI, optarg, &ssci, &have_ssci, salt, &have_salt))
				return 2;
			break;
		case OPT_PN_HIGH:
			if (parse_u64("--pn-high", optarg, 16, UINT32_MAX, &pn_high))
				return 2;
			break;
		case OPT_DROP_INVALID: drop_invalid = true; break;
		case OPT_JSON: json = true; break;
		case OPT_VERBOSE: verbose = true; break;
		case OPT_MASTER:
			master_opt = true;
			if (set_master_opt(optarg))
				return 2;
			break;
		case OPT_NODE:
			if (add_node_opt(optarg))
				return 2;
			break;
		case OPT_CIPHER: {
			enum htoe_macsec_cipher cs;

			if (htoe_macsec_cipher_parse(optarg, &cs)) {
				fprintf(stderr, "%s: --cipher: unknown suite '%s'\n", prog, optarg);
				return 2;
			}
			sak_len = htoe_macsec_cipher_key_len(cs);
			xpn |= htoe_macsec_cipher_xpn(cs);
			break;
		}
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: macsec-decrypt: unexpected argument '%s'\n", prog, argv[optind]);
		return 2;
	}
	if (master_opt && (key_opt || key_file)) {
		fprintf(stderr, "%s: macsec-decrypt: use --master-key, --key or --key-file, not "
		        "two of them\n", prog);
		return 2;
	}
	key_opt |= master_opt;
	if (have_file_salt && !have_salt && xpn) {   /* the key file's salt (XPN only) */
		memcpy(salt, file_salt, sizeof(salt));
		have_salt = true;
	}
	/* pairwise: the key is the one of the frame's (sender, receiver, AN) */
	bool pairwise = master_len || n_pair_keys();
	if (!in || !out) {
		fprintf(stderr, "%s: macsec-decrypt: %s is required\n", prog, !in ? "--in" : "--out");
		return 2;
	}
	if (!key_opt && !key_file) {
		fprintf(stderr, "%s: macsec-decrypt: --key, --key-file or --master-key is required\n",
		        prog);
		return 2;
	}
	if (key_opt && key_file) {
		fprintf(stderr, "%s: macsec-decrypt: use --key or --key-file, not both\n", prog);
		return 2;
	}
	if (xpn && (!have_ssci || !have_salt)) {
		fprintf(stderr, "%s: macsec-decrypt: --xpn needs --ssci and --salt\n", prog);
		return 2;
	}
	if (!xpn && (have_ssci || have_salt || pn_high)) {
		fprintf(stderr, "%s: macsec-decrypt: --ssci/--salt/--pn-high need --xpn\n", prog);
		return 2;
	}

	/* One SecY per key; RX SCs and SAs appear as frames show up. Replay
	 * protection is off (a capture may hold retransmissions): old PNs are
	 * decrypted and counted as delayed. */
	struct htoe_macsec *secy[MAX_KEYS] = { 0 };
	const char *created = NULL;
	int rc = 1;

	/* one SecY per key (pairwise: created as the pairs show up) */
	for (unsigned i = 0; i < MAX_KEYS; i++) {
		if (i >= n_keys || (pairwise && !keys[i].pair))
			break;
		if (!(secy[i] = decrypt_secy(&keys[i], xpn)))
			goto done;
	}

	struct io io;

	if (io_open(&io, in, out)) {
		io_close(&io);
		goto done;
	}
	created = out;
	static uint8_t plain[FRAME_MAX];
	uint64_t frames = 0, decrypted = 0, unprotected = 0, failed = 0, delayed = 0, dropped = 0;
	uint64_t reasons[R_COUNT] = { 0 };
	struct pcap_pkthdr *h;
	const u_char *data;
	int pr;

	while ((pr = pcap_next_ex(io.in, &h, &data)) == 1) {
		frames++;
		size_t len = h->caplen;
		struct htoe_macsec_sectag t;
		int st = htoe_macsec_sectag_parse(data, len, xpn, &t);

		if (st == HTOE_MACSEC_RX_NO_TAG) {
			unprotected++;
			io_write(&io, h, data, len);
			continue;
		}
		int reason = -1;

		if (h->caplen < h->len) {
			reason = R_TRUNCATED;
		} else if (st != HTOE_MACSEC_RX_OK) {
			reason = st;
		} else if (have_sci && t.sci != sci_filter) {
			reason = HTOE_MACSEC_RX_NO_SCI;
		} else {
			/* Try the keys in order; the first valid one wins. Pairwise:
			 * only the key of (the SCI's node, the destination's node, AN). */
			unsigned first = 0, last = n_keys;

			if (pairwise) {
				uint8_t sci_mac[8];
				int from, to, k = -1;

				htoe_macsec_sci_put(sci_mac, t.sci);
				from = node_of_mac(sci_mac);
				to = node_of_mac(data);
				if (from >= 0 && to >= 0)
					k = pair_key((uint16_t)from, (uint16_t)to, t.an, sak_len);
				if (k >= 0 && !secy[k] && !(secy[k] = decrypt_secy(&keys[k], xpn))) {
					io_close(&io);
					goto done;
				}
				if (k < 0) {
					reason = R_NO_PAIR;
					last = 0;
				} else {
					first = (unsigned)k;
					last = first + 1;
				}
			}
			for (unsigned i = first; i < last; i++) {
				struct htoe_macsec_sa_state sas;
				bool fresh = false;

				if (htoe_macsec_rx_sa_state(secy[i], t.sci, t.an, &sas) != 0) {
					struct htoe_macsec_sa_cfg sa = {
						.key = keys[i].b, .key_len = keys[i].len,
						.pn = xpn ? (pn_high << 32 | t.pn) : t.pn,
						.ssci = ssci,
					};

					memcpy(sa.salt, salt, sizeof(salt));
					if (sa.pn == 0)
						sa.pn = 1;
					int e = htoe_macsec_rx_sc_add(secy[i], t.sci);

					if (e && e != -EEXIST) {
						fprintf(stderr, "%s: too many SCIs in the capture\n", prog);
						io_close(&io);
						goto done;
					}
					e = htoe_macsec_rx_sa_add(secy[i], t.sci, t.an, &sa);
					if (e) {
						fprintf(stderr, "%s: %s: cannot install the key: %s\n", prog,
						        keys[i].origin, strerror(-e));
						io_close(&io);
						goto done;
					}
					fresh = true;
				}
				size_t pl = 0;
				int r = htoe_macsec_validate(secy[i], data, len, plain, sizeof(plain),
				                             &pl, NULL);

				if (r == HTOE_MACSEC_RX_OK || r == HTOE_MACSEC_RX_DELAYED) {
					if (r == HTOE_MACSEC_RX_DELAYED)
						delayed++;
					decrypted++;
					io_write(&io, h, plain, pl);
					reason = -2;
					break;
				}
				/* A key that never validated a frame on this SA is
				 * installed again at the next frame (XPN: its PN
				 * decides the upper half). */
				if (fresh)
					htoe_macsec_rx_sa_del(secy[i], t.sci, t.an);
				if (reason < 0)
					reason = r;
			}
		}
		if (reason == -2)
			continue;
		failed++;
		reasons[reason]++;
		if (verbose)
			fprintf(stderr, "%s: frame %" PRIu64 ": %s (SCI %016" PRIx64 ", AN %u, PN %" PRIu32
			        ")\n", prog, frames, reason_name(reason), t.sci, t.an, t.pn);
		if (drop_invalid)
			dropped++;
		else
			io_write(&io, h, data, len);
	}
	if (pr == PCAP_ERROR) {
		fprintf(stderr, "%s: --in %s: %s\n", prog, in, pcap_geterr(io.in));
		io_close(&io);
		goto done;
	}
	if (io_close(&io))
		goto done;

	FILE *txt = json ? stderr : stdout;

	fprintf(txt, "%s: %s: %" PRIu64 " frames: %" PRIu64 " decrypted, %" PRIu64
	        " unprotected (copied), %" PRIu64 " failed validation%s\n",
	        prog, in, frames, decrypted, unprotected, failed,
	        failed ? (drop_invalid ? " (dropped)" : " (copied unchanged)") : "");
	for (int r = 0; r < R_COUNT; r++)
		if (reasons[r])
			fprintf(txt, "  %s: %" PRIu64 "\n", reason_name(r), reasons[r]);
	if (delayed)
		fprintf(txt, "  note: %" PRIu64 " decrypted frames had a PN at or below one seen "
		        "before (InPktsDelayed: reordered or retransmitted)\n", delayed);
	if (json) {
		json_t *o = json_object(), *rs = json_object();

		json_object_set_new(o, "input", json_string(in));
		json_object_set_new(o, "output", json_string(out));
		json_object_set_new(o, "frames", json_integer((json_int_t)frames));
		json_object_set_new(o, "decrypted", json_integer((json_int_t)decrypted));
		json_object_set_new(o, "unprotected", json_integer((json_int_t)unprotected));
		json_object_set_new(o, "failed", json_integer((json_int_t)failed));
		json_object_set_new(o, "dropped", json_integer((json_int_t)dropped));
		json_object_set_new(o, "delayed", json_integer((json_int_t)delayed));
		for (int r = 0; r < R_COUNT; r++)
			if (reasons[r])
				json_object_set_new(rs, reason_name(r), json_integer((json_int_t)reasons[r]));
		json_object_set_new(o, "failed_by_reason", rs);
		json_dumpf(o, stdout, JSON_COMPACT);
		fputc('\n', stdout);
		json_decref(o);
	}
	rc = failed ? 3 : 0;
done:
	if (rc == 1 && created)
		unlink(created);   /* no half-written capture */
	for (unsigned i = 0; i < n_keys; i++)
		htoe_macsec_free(secy[i]);
	explicit_bzero(plain, sizeof(plain));
	return rc;
}

/* ---- macsec-encrypt ------------------------------------------------------------- */

/* Moves key k to keys[0] (the one macsec-encrypt uses). */
static void key_first(unsigned k)
{
	struct key tmp = keys[0];

	keys[0] = keys[k];
	keys[k] = tmp;
	keys[0].origin = keys[0].origin_buf;
	keys[k].origin = keys[k].origin_buf;
	explicit_bzero(&tmp, sizeof(tmp));
}

static int cmd_encrypt(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "in", required_argument, NULL, OPT_IN },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "sci", required_argument, NULL, OPT_SCI },
		{ "an", required_argument, NULL, OPT_AN },
		{ "pn", required_argument, NULL, OPT_PN },
		{ "integrity-only", no_argument, NULL, OPT_INTEGRITY },
		{ "cipher", required_argument, NULL, OPT_CIPHER },
		{ "ssci", required_argument, NULL, OPT_SSCI },
		{ "salt", required_argument, NULL, OPT_SALT },
		{ "es", no_argument, NULL, OPT_ES },
		{ "pad", no_argument, NULL, OPT_PAD },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "master-key", required_argument, NULL, OPT_MASTER },
		{ "pair", required_argument, NULL, OPT_PAIR },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *out = NULL, *cipher_s = NULL;
	bool have_pair = false, key_file = false;
	uint16_t pair_from = 0, pair_to = 0;
	bool have_sci = false, have_an = false, have_pn = false, integrity = false, es = false;
	bool pad = false, have_ssci = false, have_salt = false;
	uint64_t sci = 0, an = 0, pn = 0;
	uint32_t ssci = 0;
	uint8_t salt[HTOE_MACSEC_SALT_LEN] = { 0 };
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_IN: in = optarg; break;
		case OPT_OUT: out = optarg; break;
		case OPT_KEY:
			if (n_keys || master_len) {
				fprintf(stderr, "%s: macsec-encrypt: one --key only (and not with "
				        "--key-file or --master-key)\n", prog);
				return 2;
			}
			if (add_key(optarg, "--key"))
				return 2;
			break;
		case OPT_SCI:
			if (parse_sci("--sci", optarg, &sci))
				return 2;
			have_sci = true;
			break;
		case OPT_AN:
			if (parse_u64("--an", optarg, 10, 3, &an))
				return 2;
			have_an = true;
			break;
		case OPT_PN:
			if (parse_u64("--pn", optarg, 0, UINT64_MAX, &pn))
				return 2;
			have_pn = true;
			break;
		case OPT_INTEGRITY: integrity = true; break;
		case OPT_CIPHER: cipher_s = optarg; break;
		case OPT_SSCI:
		case OPT_SALT:
			if (parse_xpn_opt(c == OPT_SSCI, optarg, &ssci, &have_ssci, salt, &have_salt))
				return 2;
			break;
		case OPT_ES: es = true; break;
		case OPT_PAD: pad = true; break;
		case OPT_KEY_FILE:
			if (key_file || load_key_file(optarg))
				return 2;
			key_file = true;
			break;
		case OPT_MASTER:
			if (set_master_opt(optarg))
				return 2;
			break;
		case OPT_PAIR:
			if (parse_pair(optarg, &pair_from, &pair_to))
				return 2;
			have_pair = true;
			break;
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: macsec-encrypt: unexpected argument '%s'\n", prog, argv[optind]);
		return 2;
	}
	/* the key: --key, the first key of a shared key file, or the pairwise
	 * SAK of --pair on --an (listed, or derived from the master key) */
	if (master_len || n_pair_keys()) {
		enum htoe_macsec_cipher pc = HTOE_MACSEC_GCM_AES_128;
		int k;

		if (!have_pair || !have_an) {
			fprintf(stderr, "%s: macsec-encrypt: pairwise keys need --pair A>B and --an\n",
			        prog);
			return 2;
		}
		/* a derived SAK has the length of --cipher's keys */
		if (cipher_s && htoe_macsec_cipher_parse(cipher_s, &pc)) {
			fprintf(stderr, "%s: --cipher: unknown suite '%s'\n", prog, cipher_s);
			return 2;
		}
		k = pair_key(pair_from, pair_to, (unsigned)an, htoe_macsec_cipher_key_len(pc));
		if (k < 0) {
			fprintf(stderr, "%s: macsec-encrypt: no pairwise key %u>%u on AN %u\n", prog,
			        pair_from, pair_to, (unsigned)an);
			return 2;
		}
		key_first((unsigned)k);
	} else if (have_pair) {
		fprintf(stderr, "%s: macsec-encrypt: --pair needs --master-key or a pairwise key "
		        "file\n", prog);
		return 2;
	} else if (key_file) {   /* the key of --an */
		unsigned k = 0;

		while (k < n_keys && (!have_an || keys[k].an != (int)an))
			k++;
		if (k == n_keys) {
			fprintf(stderr, "%s: macsec-encrypt: no key for AN %u in the key file\n", prog,
			        (unsigned)an);
			return 2;
		}
		key_first(k);
	}
	const char *missing = !in ? "--in" : !out ? "--out" : !n_keys ? "--key" :
	                      !have_sci ? "--sci" : !have_an ? "--an" : !have_pn ? "--pn" : NULL;

	if (missing) {
		fprintf(stderr, "%s: macsec-encrypt: %s is required\n", prog, missing);
		return 2;
	}
	enum htoe_macsec_cipher cs = keys[0].len == 32 ? HTOE_MACSEC_GCM_AES_256
	                                               : HTOE_MACSEC_GCM_AES_128;

	if (cipher_s) {
		if (htoe_macsec_cipher_parse(cipher_s, &cs)) {
			fprintf(stderr, "%s: --cipher: unknown suite '%s' (gcm-aes-128, gcm-aes-256, "
			        "gcm-aes-xpn-128, gcm-aes-xpn-256)\n", prog, cipher_s);
			return 2;
		}
		if (htoe_macsec_cipher_key_len(cs) != keys[0].len) {
			fprintf(stderr, "%s: --key: %s needs a %zu-octet key (%zu hex digits), got %zu "
			        "octets\n", prog, htoe_macsec_cipher_name(cs),
			        htoe_macsec_cipher_key_len(cs), 2 * htoe_macsec_cipher_key_len(cs),
			        keys[0].len);
			return 2;
		}
	}
	bool xpn = htoe_macsec_cipher_xpn(cs);

	if (have_file_salt && !have_salt && xpn) {   /* the key file's salt (XPN only) */
		memcpy(salt, file_salt, sizeof(salt));
		have_salt = true;
	}
	if (xpn && (!have_ssci || !have_salt)) {
		fprintf(stderr, "%s: --cipher %s needs --ssci and --salt\n", prog,
		        htoe_macsec_cipher_name(cs));
		return 2;
	}
	if (!xpn && (have_ssci || have_salt)) {
		fprintf(stderr, "%s: --ssci/--salt need an XPN --cipher\n", prog);
		return 2;
	}
	if (pn == 0 || (!xpn && pn > 0xFFFFFFFFull)) {
		fprintf(stderr, "%s: --pn: %" PRIu64 " is out of range (1..%s)\n", prog, pn,
		        xpn ? "2^64-1" : "2^32-1");
		return 2;
	}
	if (es && (sci & 0xFFFF) != HTOE_MACSEC_PORT_ES) {
		fprintf(stderr, "%s: --es: the SCI's port must be 0001 (the SCI is then MAC SA || "
		        "0001)\n", prog);
		return 2;
	}

	struct htoe_macsec_cfg cfg = {
		.cipher = cs, .integrity_only = integrity, .sci = sci,
		.tx_sci_mode = es ? HTOE_MACSEC_TX_SCI_ES : HTOE_MACSEC_TX_SCI_EXPLICIT,
	};
	int e = 0;
	struct htoe_macsec *m = htoe_macsec_new(&cfg, &e);

	if (!m) {
		fprintf(stderr, "%s: cannot set up MACsec: %s\n", prog, strerror(-e));
		return 1;
	}
	struct htoe_macsec_sa_cfg sa = {
		.key = keys[0].b, .key_len = keys[0].len, .pn = pn, .ssci = ssci,
	};

	memcpy(sa.salt, salt, sizeof(salt));
	e = htoe_macsec_tx_sa_add(m, (unsigned)an, &sa);
	if (e) {
		fprintf(stderr, "%s: cannot install the key: %s\n", prog, strerror(-e));
		htoe_macsec_free(m);
		return 1;
	}

	struct io io;
	int rc = 1;
	static uint8_t prot[FRAME_MAX + HTOE_MACSEC_OVERHEAD_MAX + 64];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t frames = 0, protected = 0, copied = 0;
	int pr;

	if (io_open(&io, in, out))
		goto close;
	while ((pr = pcap_next_ex(io.in, &h, &data)) == 1) {
		frames++;
		if (h->caplen < h->len || h->caplen < 14 || h->caplen > FRAME_MAX) {
			fprintf(stderr, "%s: %s: frame %" PRIu64 ": %s; copied unprotected\n", prog, in,
			        frames, h->caplen < h->len ? "truncated by the capture"
			        : h->caplen < 14 ? "shorter than an Ethernet header" : "too long");
			io_write(&io, h, data, h->caplen);
			copied++;
			continue;
		}
		size_t pl = 0;
		int st = htoe_macsec_protect(m, data, h->caplen, prot, sizeof(prot), &pl, NULL);

		if (st != HTOE_MACSEC_TX_OK) {
			if (st == HTOE_MACSEC_TX_SCI_MISMATCH)
				fprintf(stderr, "%s: %s: frame %" PRIu64 ": --es: its source MAC is not "
				        "the SCI's address\n", prog, in, frames);
			else if (st == HTOE_MACSEC_TX_PN_EXHAUSTED)
				fprintf(stderr, "%s: %s: frame %" PRIu64 ": the PN space is exhausted "
				        "(start lower with --pn, or use an XPN --cipher)\n", prog, in, frames);
			else
				fprintf(stderr, "%s: %s: frame %" PRIu64 ": %s\n", prog, in, frames,
				        htoe_macsec_tx_status_name(st));
			goto close;
		}
		if (pad && pl < 60) {
			memset(prot + pl, 0, 60 - pl);
			pl = 60;
		}
		io_write(&io, h, prot, pl);
		protected++;
	}
	if (pr == PCAP_ERROR) {
		fprintf(stderr, "%s: --in %s: %s\n", prog, in, pcap_geterr(io.in));
		goto close;
	}
	rc = 0;
close:
	if (io_close(&io))
		rc = 1;
	if (rc != 0 && io.out_path)
		unlink(io.out_path);   /* no half-written capture */
	if (rc == 0) {
		struct htoe_macsec_sa_state s;

		htoe_macsec_tx_sa_state(m, (unsigned)an, &s);
		printf("%s: %s: %" PRIu64 " frames: %" PRIu64 " protected (%s, %s, AN %u, next PN %"
		       PRIu64 "), %" PRIu64 " copied unprotected\n", prog, out, frames, protected,
		       htoe_macsec_cipher_name(cs), integrity ? "integrity only" : "confidentiality",
		       (unsigned)an, s.next_pn, copied);
	}
	htoe_macsec_free(m);
	return rc;
}

/* ---- macsec-keys ---------------------------------------------------------------- */

/* The pairwise key file of one node: its SAKs to and from every peer on
 * the chosen ANs, derived from the master key, written with mode 0600. A
 * node given this file (and not the master key) can speak only as itself. */
static int cmd_keys(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "master-key", required_argument, NULL, OPT_MASTER },
		{ "key-file", required_argument, NULL, OPT_KEY_FILE },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "peers", required_argument, NULL, OPT_PEERS },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "cipher", required_argument, NULL, OPT_CIPHER },
		{ "an", required_argument, NULL, OPT_AN },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *peers_s = NULL;
	enum htoe_macsec_cipher cs = HTOE_MACSEC_GCM_AES_128;
	bool ans[HTOE_MACSEC_AN_COUNT] = { false }, any_an = false, have_node = false;
	uint64_t node = 0, v;
	uint16_t peers[MAX_NODES];
	unsigned n_peers = 0;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case OPT_MASTER:
			if (set_master_opt(optarg))
				return 2;
			break;
		case OPT_KEY_FILE:
			if (load_key_file(optarg))
				return 2;
			break;
		case OPT_NODE:
			if (parse_u64("--node", optarg, 0, UINT16_MAX, &node))
				return 2;
			have_node = true;
			break;
		case OPT_PEERS: peers_s = optarg; break;
		case OPT_OUT: out = optarg; break;
		case OPT_CIPHER:
			if (htoe_macsec_cipher_parse(optarg, &cs)) {
				fprintf(stderr, "%s: --cipher: unknown suite '%s'\n", prog, optarg);
				return 2;
			}
			break;
		case OPT_AN:
			if (parse_u64("--an", optarg, 10, 3, &v))
				return 2;
			ans[v] = any_an = true;
			break;
		case OPT_HELP: usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc || !master_len || !have_node || !peers_s || !out) {
		fprintf(stderr, "%s: macsec-keys: needs --master-key (or a key file with master_key), "
		        "--node, --peers and --out\n", prog);
		return 2;
	}
	for (const char *p = peers_s; *p;) {
		char *end;
		unsigned long x;

		errno = 0;
		x = strtoul(p, &end, 0);
		if (errno || end == p || x > UINT16_MAX || (*end && *end != ',') ||
		    n_peers == MAX_NODES) {
			fprintf(stderr, "%s: --peers %s: expected node ids separated by commas\n", prog,
			        peers_s);
			return 2;
		}
		if (x != node)
			peers[n_peers++] = (uint16_t)x;
		p = *end ? end + 1 : end;
	}
	if (!n_peers) {
		/* a key file without a single pair protects nothing */
		fprintf(stderr, "%s: --peers '%s': names no node other than --node %u\n", prog,
		        peers_s, (unsigned)node);
		return 2;
	}
	if (!any_an)
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
			ans[an] = true;
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	FILE *f = fd >= 0 && fchmod(fd, 0600) == 0 ? fdopen(fd, "w") : NULL;

	if (!f) {
		fprintf(stderr, "%s: --out %s: %s\n", prog, out, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	size_t len = htoe_macsec_cipher_key_len(cs);
	int rc = 0;

	fprintf(f, "# htoe pairwise SAKs of node %u (%s): keyN A>B = the SAK node A sends to "
	        "node B with on AN N\n", (unsigned)node, htoe_macsec_cipher_name(cs));
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT && !rc; an++)
		for (unsigned i = 0; ans[an] && i < n_peers && !rc; i++)
			for (int dir = 0; dir < 2 && !rc; dir++) {
				uint16_t a = dir ? peers[i] : (uint16_t)node;
				uint16_t b = dir ? (uint16_t)node : peers[i];
				uint8_t k[HTOE_MACSEC_KEY_MAX];

				rc = htoe_macsec_pairwise_sak(master, master_len, a, b, an, k, len);
				fprintf(f, "key%u %u>%u = ", an, a, b);
				for (size_t j = 0; j < len; j++)
					fprintf(f, "%02x", k[j]);
				fputc('\n', f);
				explicit_bzero(k, sizeof(k));
			}
	if (fclose(f) != 0 || rc) {
		fprintf(stderr, "%s: --out %s: %s\n", prog, out,
		        rc ? "the key derivation failed" : strerror(errno));
		unlink(out);
		return 1;
	}
	printf("%s: %s: the pairwise SAKs of node %u with %u peers (%s, mode 0600)\n", prog, out,
	       (unsigned)node, n_peers, htoe_macsec_cipher_name(cs));
	return 0;
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	atexit(wipe_keys);
	if (!strcmp(argv[1], "macsec-decrypt")) {
		rc = cmd_decrypt(argc - 1, argv + 1);
	} else if (!strcmp(argv[1], "macsec-encrypt")) {
		rc = cmd_encrypt(argc - 1, argv + 1);
	} else if (!strcmp(argv[1], "macsec-keys")) {
		rc = cmd_keys(argc - 1, argv + 1);
	} else if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	           !strcmp(argv[1], "help")) {
		usage(stdout);
		rc = 0;
	} else if (!strcmp(argv[1], "--version")) {
		htoe_print_version(prog);
		rc = 0;
	} else {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
		usage(stderr);
		rc = 2;
	}
	return rc;
}
