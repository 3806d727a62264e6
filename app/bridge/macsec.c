/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: MACsec glue (see macsec.h): the [macsec] configuration, the
 * per-node SecY with its TX SC and one RX SC per peer, in-place protection
 * and validation of mbufs, the counters (summary, JSON, telemetry
 * /htoe/macsec) and the PN exhaustion event line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <rte_telemetry.h>

#include "bridge.h"
#include "macsec.h"

#define RD(x) br_rd(&(x))

_Static_assert(RTE_PKTMBUF_HEADROOM >= HTOE_MACSEC_SECTAG_SCI, "SecTAG goes into the headroom");

/* ------------------------------------------------------------ parsing */

struct mparse {
	const struct br_cfg_src *src;
	char sect[32];
	struct br_macsec_cfg *mc;
};

static const char *mget(struct mparse *p, const char *key, const char **in)
{
	return p->src->get(p->src->ctx, p->sect, "macsec", key, in);
}

static int __attribute__((format(printf, 5, 6)))
merr(struct mparse *p, const char *in, const char *key, const char *val, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return p->src->error(p->src->ctx, in, key, val, msg);
}

/* HEX (optional 0x) into out[cap]; the number of octets or -1 */
static int parse_hex(const char *s, uint8_t *out, size_t cap)
{
	return htoe_macsec_unhex(s, out, cap);
}

/* the configuration's parsers (cfgtab.c) */
#define parse_u64_dec cfg_parse_u64
#define parse_onoff cfg_parse_bool

/* A SAK of n octets (from HEX: n < 0 if it was not hex) into k, checked
 * against the cipher's key length; origin: for messages. A key value is
 * never echoed into a message. */
static int take_sak(struct mparse *p, const uint8_t *v, int n, const char *in, const char *name,
		    const char *origin, uint8_t k[HTOE_MACSEC_KEY_MAX])
{
	struct br_macsec_cfg *mc = p->mc;
	size_t want = htoe_macsec_cipher_key_len(mc->cipher);

	if (n < 0)
		return merr(p, in, name, origin, "not a hex key (%zu hex digits for %s)", 2 * want,
			    htoe_macsec_cipher_name(mc->cipher));
	if ((size_t)n != want)
		return merr(p, in, name, origin, "%s needs a %zu-octet key (%zu hex digits), got %d "
			    "octets", htoe_macsec_cipher_name(mc->cipher), want, 2 * want, n);
	memcpy(k, v, want);
	mc->key_len = want;
	return 0;
}

/* One key of AN an (inline "key"/"keyN", or a key_file line) */
static int set_key(struct mparse *p, unsigned an, const uint8_t *v, int n, const char *in,
		   const char *name, const char *origin)
{
	struct br_macsec_cfg *mc = p->mc;

	if (mc->pairwise)
		return merr(p, in, name, origin, "keys = pairwise: the SAKs come from master_key or "
			    "from pairwise lines in key_file ('key%u A>B = HEX')", an);
	if (mc->has_key[an])
		return merr(p, in, name, origin, "the key of AN %u is given twice", an);
	if (take_sak(p, v, n, in, name, origin, mc->key[an]))
		return -1;
	mc->has_key[an] = true;
	return 0;
}

/* master_key: 16 or 32 octets (AES-128-CMAC / AES-256-CMAC) */
static int set_master(struct mparse *p, const uint8_t *v, int n, const char *in,
		      const char *name, const char *origin)
{
	struct br_macsec_cfg *mc = p->mc;

	if (!mc->pairwise)
		return merr(p, in, name, origin, "a master_key needs keys = pairwise");
	if (mc->master_len)
		return merr(p, in, name, origin, "master_key is given twice");
	if (n != 16 && n != 32)
		return merr(p, in, name, origin, "a master_key is 32 or 64 hex digits (16 or 32 "
			    "octets)");
	memcpy(mc->master, v, (size_t)n);
	mc->master_len = (size_t)n;
	return 0;
}

static int peer_index(const struct br_macsec_cfg *mc, unsigned node)
{
	for (unsigned i = 0; i < mc->n_peers; i++)
		if (mc->peer_id[i] == node)
			return (int)i;
	return -1;
}

/* A key_file line "keyN A>B = HEX": the SAK node A sends to node B with on
 * AN N. Lines of pairs without this node are skipped (one file may serve
 * the nodes of one process). */
static int set_pair(struct mparse *p, const struct htoe_macsec_keyline *kl, const char *in,
		    const char *path, const char *origin)
{
	struct br_macsec_cfg *mc = p->mc;
	unsigned an = (unsigned)kl->an;

	if (!mc->pairwise)
		return merr(p, in, "key_file", path, "%s: pairwise keys need keys = pairwise",
			    origin);
	if (kl->from != mc->node_id && kl->to != mc->node_id)
		return 0;
	bool out = kl->from == mc->node_id;
	unsigned peer = out ? kl->to : kl->from;
	int i = peer_index(mc, peer);

	if (i < 0)
		return merr(p, in, "key_file", path, "%s: node %u is not a member of this "
			    "configuration", origin, peer);
	bool *has = out ? &mc->has_pw_tx[i][an] : &mc->has_pw_rx[i][an];

	if (*has)
		return merr(p, in, "key_file", path, "%s: the key of %u>%u on AN %u is given "
			    "twice", origin, kl->from, kl->to, an);
	if (take_sak(p, kl->val, (int)kl->len, in, "key_file", origin,
		     out ? mc->pw_tx[i][an] : mc->pw_rx[i][an]))
		return -1;
	*has = true;
	return 0;
}

/* keys = pairwise: every SAK of this node's pairs from master_key, or a
 * check that the key file gave, for each AN it names, both directions with
 * every peer. Sets has_key[] to the complete ANs. */
static int pairwise_finish(struct mparse *p, const char *mk_in, const char *kf_in,
			   const char *kf)
{
	struct br_macsec_cfg *mc = p->mc;
	size_t len = htoe_macsec_cipher_key_len(mc->cipher);
	bool lines = false;

	for (unsigned i = 0; i < mc->n_peers; i++)
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
			lines |= mc->has_pw_tx[i][an] || mc->has_pw_rx[i][an];
	if (mc->master_len) {
		if (lines)
			return merr(p, kf_in, "key_file", kf, "give a master_key or pairwise keys, not "
				    "both");
		mc->key_len = len;
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
			mc->has_key[an] = true;   /* every AN, also for a node without peers */
		for (unsigned i = 0; i < mc->n_peers; i++)
			for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
				if (htoe_macsec_pairwise_sak(mc->master, mc->master_len, mc->node_id,
							     mc->peer_id[i], an, mc->pw_tx[i][an],
							     len) ||
				    htoe_macsec_pairwise_sak(mc->master, mc->master_len,
							     mc->peer_id[i], mc->node_id, an,
							     mc->pw_rx[i][an], len))
					return merr(p, mk_in, "master_key", NULL, "the key derivation "
						    "failed (OpenSSL AES-CMAC)");
				mc->has_pw_tx[i][an] = mc->has_pw_rx[i][an] = true;
			}
		explicit_bzero(mc->master, sizeof(mc->master));
	}
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
		unsigned got = 0;

		for (unsigned i = 0; i < mc->n_peers; i++)
			got += mc->has_pw_tx[i][an] + mc->has_pw_rx[i][an];
		if (!got)
			continue;
		for (unsigned i = 0; i < mc->n_peers; i++)
			if (!mc->has_pw_tx[i][an] || !mc->has_pw_rx[i][an])
				return merr(p, kf_in, "key_file", kf, "AN %u: no key%u %u>%u", an, an,
					    mc->has_pw_tx[i][an] ? mc->peer_id[i] : mc->node_id,
					    mc->has_pw_tx[i][an] ? mc->node_id : mc->peer_id[i]);
		mc->has_key[an] = true;
	}
	return 0;
}

/* key_file: the lines of htoe_macsec_keyline_parse ("keyN = HEX", a bare
 * HEX for the next AN without a key, "salt = HEX"; with keys = pairwise
 * "master_key = HEX" or "keyN A>B = HEX"), the format htoe-pcap --key-file
 * reads too. */
static int load_key_file(struct mparse *p, const char *path, const char *in, bool *salt_given)
{
	FILE *f = fopen(path, "r");
	struct stat st;
	struct htoe_macsec_keyline kl;
	char line[512];
	unsigned lineno = 0, n = 0;
	int rc = -1;

	if (!f)
		return merr(p, in, "key_file", path, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		merr(p, in, "key_file", path, "%s is not a regular file", path);
		goto out;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		merr(p, in, "key_file", path,
		     "%s has mode %04o: readable or writable by group or others; a key file "
		     "must be private (chmod 600 %s)", path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
	while (fgets(line, sizeof(line), f)) {
		char origin[BR_PATH_MAX + 16];
		int e = 0, an;

		lineno++;
		snprintf(origin, sizeof(origin), "%s:%u", path, lineno);
		if (strlen(line) == sizeof(line) - 1 && line[sizeof(line) - 2] != '\n') {
			merr(p, in, "key_file", path, "%s: line too long", origin);
			goto out;
		}
		switch (htoe_macsec_keyline_parse(line, &kl)) {
		case HTOE_MACSEC_KL_EMPTY:
			continue;
		case HTOE_MACSEC_KL_ERROR:
			merr(p, in, "key_file", path, "%s: %.40s: %s", origin, kl.name, kl.err);
			goto out;
		case HTOE_MACSEC_KL_SALT:
			if (kl.len != HTOE_MACSEC_SALT_LEN) {
				merr(p, in, "key_file", path, "%s: salt: expected 24 hex digits",
				     origin);
				goto out;
			}
			memcpy(p->mc->salt, kl.val, HTOE_MACSEC_SALT_LEN);
			*salt_given = true;
			continue;
		case HTOE_MACSEC_KL_MASTER:
			e = set_master(p, kl.val, (int)kl.len, in, "key_file", origin);
			break;
		case HTOE_MACSEC_KL_PAIR:
			e = set_pair(p, &kl, in, path, origin);
			break;
		case HTOE_MACSEC_KL_KEY:
			an = kl.an;
			if (an < 0 && p->mc->pairwise) {
				merr(p, in, "key_file", path, "%s: keys = pairwise: a key line names "
				     "its pair ('key0 1>2 = HEX') or is 'master_key = HEX'", origin);
				goto out;
			}
			/* a bare key (htoe-pcap --key-file format): the next free AN */
			for (unsigned k = 0; an < 0 && k < HTOE_MACSEC_AN_COUNT; k++)
				if (!p->mc->has_key[k])
					an = (int)k;
			if (an < 0) {
				merr(p, in, "key_file", path, "%s: more than four keys", origin);
				goto out;
			}
			e = set_key(p, (unsigned)an, kl.val, (int)kl.len, in, "key_file", origin);
			break;
		}
		if (e)
			goto out;
		n++;
	}
	if (ferror(f)) {
		merr(p, in, "key_file", path, "read error on %s", path);
		goto out;
	}
	if (!n) {
		merr(p, in, "key_file", path, "no key in %s", path);
		goto out;
	}
	rc = 0;
out:
	explicit_bzero(line, sizeof(line));
	explicit_bzero(&kl, sizeof(kl));
	fclose(f);
	return rc;
}

int br_macsec_parse(const struct br_cfg_src *src, uint16_t id, const uint8_t mac[6],
		    unsigned n_peers, const uint16_t *peer_id, const uint8_t (*peer_mac)[6],
		    struct br_macsec_cfg *mc)
{
	struct mparse p = { .src = src, .mc = mc };
	const char *v, *in;
	uint64_t u;
	bool any_key = false, salt_given = false;

	memset(mc, 0, sizeof(*mc));
	snprintf(p.sect, sizeof(p.sect), "macsec %u", id);
	v = mget(&p, "enable", &in);
	if (v && parse_onoff(v, &mc->enabled))
		return merr(&p, in, "enable", v, "not a boolean (on/off, yes/no, true/false, 1/0)");
	if (!mc->enabled)
		return 0;
	src->where(src->ctx, in, mc->where, sizeof(mc->where));
	mc->node_id = id;
	memcpy(mc->mac, mac, 6);
	if (n_peers > BR_MACSEC_MAX_PEERS)
		return merr(&p, in, "enable", v, "too many peers");
	mc->n_peers = n_peers;
	memcpy(mc->peer_id, peer_id, n_peers * sizeof(*peer_id));
	memcpy(mc->peer_mac, peer_mac, n_peers * sizeof(*peer_mac));

	if ((v = mget(&p, "cipher", &in)) && htoe_macsec_cipher_parse(v, &mc->cipher))
		return merr(&p, in, "cipher", v, "unknown cipher suite (gcm-aes-128, gcm-aes-256, "
			    "gcm-aes-xpn-128, gcm-aes-xpn-256)");
	if ((v = mget(&p, "mode", &in))) {
		if (!strcasecmp(v, "integrity"))
			mc->integrity_only = true;
		else if (strcasecmp(v, "encrypt"))
			return merr(&p, in, "mode", v, "expected encrypt or integrity");
	}
	mc->backend = HTOE_MACSEC_BACKEND_AUTO;
	if ((v = mget(&p, "backend", &in))) {
		if (!strcasecmp(v, "openssl"))
			mc->backend = HTOE_MACSEC_BACKEND_OPENSSL;
		else if (!strcasecmp(v, "ipsec-mb"))
			mc->backend = HTOE_MACSEC_BACKEND_IPSECMB;
		else if (strcasecmp(v, "auto"))
			return merr(&p, in, "backend", v, "expected auto, openssl or ipsec-mb");
		if (!htoe_macsec_backend_available(mc->backend))
			return merr(&p, in, "backend", v, "this build has no %s backend (auto picks "
				    "%s)", htoe_macsec_backend_name(mc->backend),
				    htoe_macsec_backend_name(htoe_macsec_backend_auto()));
	}
	mc->include_sci = true;
	if ((v = mget(&p, "include_sci", &in)) && parse_onoff(v, &mc->include_sci))
		return merr(&p, in, "include_sci", v, "not a boolean (on/off)");
	mc->sci_port = HTOE_MACSEC_PORT_ES;
	if ((v = mget(&p, "sci_port", &in))) {
		if (parse_u64_dec(v, &u) || u < 1 || u > 65535)
			return merr(&p, in, "sci_port", v, "out of range 1..65535");
		mc->sci_port = (uint16_t)u;
		if (!mc->include_sci && u != HTOE_MACSEC_PORT_ES)
			return merr(&p, in, "sci_port", v, "without include_sci the SCI is MAC || 1 "
				    "(802.1AE ES bit): sci_port must be 1");
	}
	if ((v = mget(&p, "replay_window", &in))) {
		uint64_t max = htoe_macsec_cipher_xpn(mc->cipher) ? (1u << 30) : UINT32_MAX;

		if (parse_u64_dec(v, &u) || u > max)
			return merr(&p, in, "replay_window", v, "out of range 0..%" PRIu64, max);
		mc->replay_window = (uint32_t)u;
	}
	mc->pn = 1;
	if ((v = mget(&p, "pn", &in))) {
		uint64_t max = htoe_macsec_cipher_xpn(mc->cipher) ? UINT64_MAX : UINT32_MAX;

		if (parse_u64_dec(v, &u) || u < 1 || u > max)
			return merr(&p, in, "pn", v, "out of range 1..%#" PRIx64, max);
		mc->pn = u;
	}
	if ((v = mget(&p, "salt", &in))) {
		if (!htoe_macsec_cipher_xpn(mc->cipher))
			return merr(&p, in, "salt", v, "only XPN cipher suites use a salt");
		if (parse_hex(v, mc->salt, sizeof(mc->salt)) != HTOE_MACSEC_SALT_LEN)
			return merr(&p, in, "salt", v, "expected 24 hex digits (12 octets)");
		salt_given = true;
	}

	if ((v = mget(&p, "keys", &in))) {
		if (!strcasecmp(v, "pairwise"))
			mc->pairwise = true;
		else if (strcasecmp(v, "shared"))
			return merr(&p, in, "keys", v, "expected shared (one SAK per AN for every "
				    "node) or pairwise (one per ordered pair of nodes)");
	}

	/* keys: inline key/key0..key3 or master_key, or key_file */
	const char *kf_in, *kf = mget(&p, "key_file", &kf_in);
	const char *mk_in, *mk = mget(&p, "master_key", &mk_in);

	if (mk) {
		if (kf)
			return merr(&p, mk_in, "master_key", NULL, "give the keys inline or in "
				    "key_file = '%s', not both", kf);
		uint8_t k[HTOE_MACSEC_KEY_MAX];
		int kn = parse_hex(mk, k, sizeof(k)), r = set_master(&p, k, kn, mk_in, "master_key",
								       NULL);

		explicit_bzero(k, sizeof(k));
		if (r)
			return -1;
		any_key = true;
	}

	for (unsigned i = 0; i < 5; i++) {
		static const char *const names[] = { "key", "key0", "key1", "key2", "key3" };

		if (!(v = mget(&p, names[i], &in)))
			continue;
		if (kf)
			return merr(&p, in, names[i], NULL, "give the keys inline or in key_file = "
				    "'%s', not both", kf);
		uint8_t k[HTOE_MACSEC_KEY_MAX];
		int kn = parse_hex(v, k, sizeof(k)), r = set_key(&p, i ? i - 1 : 0, k, kn, in,
								names[i], NULL);

		explicit_bzero(k, sizeof(k));
		if (r)
			return -1;
		any_key = true;
	}
	if (kf) {
		if (load_key_file(&p, kf, kf_in, &salt_given))
			return -1;
		any_key = true;
	}
	if (!any_key) {
		(void)mget(&p, "enable", &in);
		return merr(&p, in, mc->pairwise ? "master_key" : "key", NULL,
			    "MACsec is on but no key is given (%s, or key_file = PATH)",
			    mc->pairwise ? "master_key = HEX" : "key = HEX, key0..key3");
	}
	if (mc->pairwise && pairwise_finish(&p, mk_in, kf_in, kf))
		return -1;
	if (salt_given && !htoe_macsec_cipher_xpn(mc->cipher))
		return merr(&p, kf_in, "key_file", kf, "only XPN cipher suites use a salt");
	if ((v = mget(&p, "an", &in))) {
		if (parse_u64_dec(v, &u) || u > 3)
			return merr(&p, in, "an", v, "out of range 0..3");
		mc->an = (unsigned)u;
	}
	if (!mc->has_key[mc->an])
		return merr(&p, v ? in : p.sect, "an", v ? v : "0 (default)",
			    "no key for AN %u (key%u)", mc->an, mc->an);
	if ((v = mget(&p, "rekey_after", &in))) {
		unsigned nk = 0;

		if (parse_u64_dec(v, &u))
			return merr(&p, in, "rekey_after", v, "not a number of frames");
		for (unsigned a = 0; a < HTOE_MACSEC_AN_COUNT; a++)
			nk += mc->has_key[a];
		if (u && nk < 2)
			return merr(&p, in, "rekey_after", v, "rolling over needs keys for at least "
				    "two ANs (key0..key3)");
		mc->rekey_after = u;
	}
	return 0;
}

void br_macsec_cfg_wipe(struct br_macsec_cfg *mc)
{
	explicit_bzero(mc->key, sizeof(mc->key));
	explicit_bzero(mc->has_key, sizeof(mc->has_key));
	explicit_bzero(mc->pw_tx, sizeof(mc->pw_tx));
	explicit_bzero(mc->pw_rx, sizeof(mc->pw_rx));
	explicit_bzero(mc->master, sizeof(mc->master));
}

/* ------------------------------------------------------------ runtime */

struct br_macsec_peer_pub {
	struct htoe_macsec_rx_sc_stats s;
	uint64_t an_ok[HTOE_MACSEC_AN_COUNT];
};

/* The snapshot: u64 words, relaxed atomics. */
struct br_macsec_pub {
	struct htoe_macsec_stats s;
	uint64_t tx_an[HTOE_MACSEC_AN_COUNT];   /* OutPkts{Protected,Encrypted} per TX SA */
	uint64_t rx_an_ok[HTOE_MACSEC_AN_COUNT];/* InPktsOK per AN, all peers */
	uint64_t encoding_an, rekeys, changeovers, pn_threshold, pn_exhausted;
	uint64_t rx_pn_exhausted, tx_failed, events_lost;
	uint64_t tx_no_pair;             /* pairwise: frame to a node without a pairwise key */
};

struct br_macsec {
	struct htoe_macsec *m;           /* the SecY: the RX SCs (and the TX SC, shared keys) */
	const struct br_macsec_cfg *cfg;
	uint64_t peer_sci[BR_MACSEC_MAX_PEERS];
	/* TX SecYs: shared keys: one, m; pairwise: one per peer (TX SC only) */
	unsigned n_tx;
	struct htoe_macsec *tx[BR_MACSEC_MAX_PEERS];
	uint64_t since[BR_MACSEC_MAX_PEERS]; /* frames on the encoding SA since it became one */
	uint8_t *tx_of_node;             /* pairwise: node id -> TX SecY index + 1 */
	struct br_macsec_pub c;          /* the owner's counters (events, rekeys, failures) */
	enum htoe_macsec_backend backend;
	struct br_macsec_pub pub;
	struct br_macsec_peer_pub peers[BR_MACSEC_MAX_PEERS];
};

static void sa_cfg(const struct br_macsec_cfg *c, const uint8_t *key, uint64_t pn, uint32_t ssci,
		   struct htoe_macsec_sa_cfg *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->key = key;
	sa->key_len = c->key_len;
	sa->pn = pn;
	sa->ssci = ssci;
	memcpy(sa->salt, c->salt, sizeof(sa->salt));
	sa->backend = c->backend;
}

/* The TX SAs of one TX SecY: keys[an] for every configured AN; the first
 * becomes the encoding SA, the others follow in AN order (the library
 * changes over to the next one on PN exhaustion). */
static int tx_sas(const struct br_macsec_cfg *c, struct htoe_macsec *m,
		  const uint8_t (*keys)[HTOE_MACSEC_KEY_MAX], const char *to, char *err,
		  size_t errlen)
{
	struct htoe_macsec_sa_cfg sa;

	for (unsigned k = 0; k < HTOE_MACSEC_AN_COUNT; k++) {
		unsigned an = (c->an + k) % HTOE_MACSEC_AN_COUNT;
		int e;

		if (!c->has_key[an])
			continue;
		sa_cfg(c, keys[an], k ? 1 : c->pn, c->node_id, &sa);
		e = htoe_macsec_tx_sa_add(m, an, &sa);
		if (e) {
			snprintf(err, errlen, "%s: TX SA on AN %u%s: %s", c->where, an, to,
				 strerror(-e));
			return -1;
		}
	}
	return 0;
}

int br_macsec_setup(struct br_drv *n, const struct br_macsec_cfg *c, char *err, size_t errlen)
{
	struct htoe_macsec_cfg mcfg;
	struct htoe_macsec_sa_cfg sa;
	struct htoe_macsec_sa_state st;
	struct br_macsec *ms;
	int e = 0;

	if (!c->enabled)
		return 0;
	ms = calloc(1, sizeof(*ms));
	if (!ms || (c->pairwise && !(ms->tx_of_node = calloc(UINT16_MAX + 1, 1)))) {
		free(ms);
		snprintf(err, errlen, "%s: out of memory", c->where);
		return -1;
	}
	n->ms = ms;
	ms->cfg = c;
	memset(&mcfg, 0, sizeof(mcfg));
	mcfg.cipher = c->cipher;
	mcfg.integrity_only = c->integrity_only;
	mcfg.tx_sci_mode = c->include_sci ? HTOE_MACSEC_TX_SCI_EXPLICIT : HTOE_MACSEC_TX_SCI_ES;
	mcfg.sci = htoe_macsec_sci(c->mac, c->sci_port);
	mcfg.validate = HTOE_MACSEC_VALIDATE_STRICT;
	mcfg.replay_window = c->replay_window;
	mcfg.max_rx_sc = c->n_peers ? c->n_peers : 1;
	/* every installed AN stays valid for receive: rekey_after cycles
	 * through the configured keys, each TX SA keeping its PN */
	mcfg.rx_keep_old_sa = true;
	mcfg.backend = c->backend;
	ms->m = htoe_macsec_new(&mcfg, &e);
	if (!ms->m) {
		snprintf(err, errlen, "%s: cannot create the SecY: %s", c->where, strerror(-e));
		return -1;
	}
	if (!c->pairwise) {
		ms->n_tx = 1;
		ms->tx[0] = ms->m;
		if (tx_sas(c, ms->m, c->key, "", err, errlen))
			return -1;
	}
	/* pairwise: a TX-only SecY per peer, with this node's SAKs to it */
	mcfg.max_rx_sc = 1;
	for (unsigned i = 0; c->pairwise && i < c->n_peers; i++) {
		char to[32];

		snprintf(to, sizeof(to), " to node %u", c->peer_id[i]);
		ms->tx[i] = htoe_macsec_new(&mcfg, &e);
		if (!ms->tx[i]) {
			snprintf(err, errlen, "%s: cannot create the SecY%s: %s", c->where, to,
				 strerror(-e));
			return -1;
		}
		ms->n_tx = i + 1;
		ms->tx_of_node[c->peer_id[i]] = (uint8_t)(i + 1);
		if (tx_sas(c, ms->tx[i], c->pw_tx[i], to, err, errlen))
			return -1;
	}
	/* an RX SC per peer, with the SAKs that peer sends with, bound to the
	 * peer's node id (a valid frame claiming another node is dropped) */
	for (unsigned i = 0; i < c->n_peers; i++) {
		uint64_t sci = htoe_macsec_sci(c->peer_mac[i], c->sci_port);

		ms->peer_sci[i] = sci;
		e = htoe_macsec_rx_sc_add(ms->m, sci);
		if (!e)
			e = htoe_macsec_rx_sc_bind(ms->m, sci, c->peer_id[i]);
		for (unsigned an = 0; !e && an < HTOE_MACSEC_AN_COUNT; an++)
			if (c->has_key[an]) {
				sa_cfg(c, c->pairwise ? c->pw_rx[i][an] : c->key[an], 1,
				       c->peer_id[i], &sa);
				e = htoe_macsec_rx_sa_add(ms->m, sci, an, &sa);
			}
		if (e) {
			snprintf(err, errlen, "%s: RX SC of node %u: %s", c->where, c->peer_id[i],
				 strerror(-e));
			return -1;
		}
	}
	if (ms->n_tx) {
		htoe_macsec_tx_sa_state(ms->tx[0], c->an, &st);
		ms->backend = st.backend;
	} else {
		ms->backend = htoe_macsec_cfg(ms->m)->backend == HTOE_MACSEC_BACKEND_AUTO
			      ? htoe_macsec_backend_auto() : htoe_macsec_cfg(ms->m)->backend;
	}
	/* the SecYs hold their own copies of the keys now: wipe the
	 * configuration's (app-owned, const only in this view) */
	br_macsec_cfg_wipe((struct br_macsec_cfg *)c);
	return 0;
}

void br_macsec_teardown(struct br_drv *n)
{
	/* the snapshot stays for the telemetry thread; the keys go */
	if (n->ms) {
		for (unsigned i = 0; i < n->ms->n_tx; i++)
			if (n->ms->tx[i] != n->ms->m)
				htoe_macsec_free(n->ms->tx[i]);
		n->ms->n_tx = 0;
		htoe_macsec_free(n->ms->m);
		n->ms->m = NULL;
		free(n->ms->tx_of_node);
		n->ms->tx_of_node = NULL;
	}
}

void br_macsec_free(struct br_drv *n)
{
	br_macsec_teardown(n);
	free(n->ms);
	n->ms = NULL;
}

static void rekey(struct br_macsec *ms, unsigned t)
{
	struct htoe_macsec *m = ms->tx[t];
	int cur = htoe_macsec_tx_encoding_an(m);

	ms->since[t] = 0;
	for (unsigned k = 1; cur >= 0 && k < HTOE_MACSEC_AN_COUNT; k++) {
		unsigned an = ((unsigned)cur + k) % HTOE_MACSEC_AN_COUNT;
		struct htoe_macsec_sa_state st;

		if (htoe_macsec_tx_sa_state(m, an, &st) || !st.installed || st.exhausted)
			continue;
		if (!htoe_macsec_tx_sa_activate(m, an))
			ms->c.rekeys++;
		return;
	}
}

/* Pairwise: the TX SecY of the frame's destination node (HToE header,
 * after at most one 802.1Q tag; the frame comes from htoe_frame_output).
 * HToE has no multicast or broadcast frames: every frame names one node.
 * -1: no pairwise key for it. */
static int tx_index(const struct br_macsec *ms, const uint8_t *f, size_t len)
{
	size_t o = HTOE_ETH_HLEN - 2;

	if (len >= o + 2 && htoe_get_be16(f + o) == HTOE_TPID_8021Q)
		o += HTOE_VLAN_HLEN;
	if (len < o + 2 + 8 || htoe_get_be16(f + o) != HTOE_ETHERTYPE)
		return -1;
	return (int)ms->tx_of_node[htoe_get_be16(f + o + 2 + 6)] - 1;
}

int br_macsec_tx(struct br_drv *n, struct rte_mbuf *m)
{
	struct br_macsec *ms = n->ms;
	size_t off = m->data_off, len = m->data_len;
	enum htoe_macsec_tx_status st;
	int t = ms->cfg->pairwise ? tx_index(ms, rte_pktmbuf_mtod(m, uint8_t *), len) : 0;

	if (t < 0) {
		ms->c.tx_no_pair++;
		ms->c.tx_failed++;
		return -1;
	}
	st = htoe_macsec_protect_inplace(ms->tx[t], m->buf_addr, m->buf_len, &off, &len, NULL);
	if (!htoe_macsec_tx_sent(st)) {
		ms->c.tx_failed++;
		return -1;
	}
	m->data_off = (uint16_t)off;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	if (ms->cfg->rekey_after && ++ms->since[t] >= ms->cfg->rekey_after)
		rekey(ms, (unsigned)t);
	return 0;
}

const uint8_t *br_macsec_rx(struct br_drv *n, struct rte_mbuf *m, const uint8_t *d,
			    uint32_t *len)
{
	struct br_macsec *ms = n->ms;
	size_t off = 0, plen = 0;
	enum htoe_macsec_rx_status st;

	if (d != n->linbuf && rte_mbuf_refcnt_read(m) > 1) {
		/* shared (a duplicate still to be delivered): out of place */
		st = htoe_macsec_validate(ms->m, d, *len, n->linbuf, sizeof(n->linbuf), &plen,
					  NULL);
		d = n->linbuf;
	} else {
		/* a copy in linbuf, or the mbuf's own contiguous data */
		uint8_t *w = d == n->linbuf ? n->linbuf : rte_pktmbuf_mtod(m, uint8_t *);

		st = htoe_macsec_validate_inplace(ms->m, w, *len, &off, &plen, NULL);
		d = w;
	}
	/* Strict: only validated frames reach the bridge */
	if (st != HTOE_MACSEC_RX_OK)
		return NULL;
	*len = (uint32_t)plen;
	return d + off;
}

static void pub_u64(uint64_t *d, const uint64_t *s, size_t words)
{
	for (size_t i = 0; i < words; i++)
		__atomic_store_n(&d[i], s[i], __ATOMIC_RELAXED);
}

static void events(struct br_drv *n, struct htoe_macsec *m, const char *to)
{
	struct br_macsec *ms = n->ms;
	struct htoe_macsec_event ev;
	bool after_exhaustion = false;

	while (htoe_macsec_event_next(m, &ev)) {
		switch (ev.type) {
		case HTOE_MACSEC_EV_TX_PN_THRESHOLD:
			ms->c.pn_threshold++;
			fprintf(stderr, "%s: node %u: MACsec event: TX SA AN %u%s passed PN "
				"%#" PRIx64 ": its PN space is running out (install a new key)\n",
				br_prog(), n->id, ev.an, to, ev.pn);
			break;
		case HTOE_MACSEC_EV_TX_PN_EXHAUSTED:
			ms->c.pn_exhausted++;
			after_exhaustion = true;
			fprintf(stderr, "%s: node %u: MACsec event: PN EXHAUSTED: TX SA AN "
				"%u%s used its last PN %#" PRIx64 " and is stopped for good (a PN "
				"never wraps)\n", br_prog(), n->id, ev.an, to, ev.pn);
			break;
		case HTOE_MACSEC_EV_TX_SA_CHANGEOVER:
			ms->c.changeovers++;
			if (after_exhaustion)
				fprintf(stderr, "%s: node %u: MACsec event: TX%s changed "
					"over from AN %u to AN %u (PN %#" PRIx64 ")\n", br_prog(), n->id, to,
					ev.prev_an, ev.an, ev.pn);
			after_exhaustion = false;
			break;
		case HTOE_MACSEC_EV_RX_PN_EXHAUSTED:
			ms->c.rx_pn_exhausted++;
			fprintf(stderr, "%s: node %u: MACsec event: RX SA AN %u of SCI "
				"%016" PRIx64 " accepted its last PN %#" PRIx64 "\n", br_prog(), n->id, ev.an,
				ev.sci, ev.pn);
			break;
		default:
			break;
		}
	}
}

void br_macsec_publish(struct br_drv *n)
{
	struct br_macsec *ms = n->ms;
	struct br_macsec_pub p;

	if (!ms || !ms->m)
		return;
	events(n, ms->m, "");
	p = ms->c;
	memset(p.rx_an_ok, 0, sizeof(p.rx_an_ok));
	memset(p.tx_an, 0, sizeof(p.tx_an));
	htoe_macsec_stats(ms->m, &p.s);
	p.events_lost = htoe_macsec_events_lost(ms->m);
	for (unsigned t = 0; t < ms->n_tx; t++) {
		struct htoe_macsec *m = ms->tx[t];

		if (m != ms->m) {  /* pairwise: the TX SecY to peer t */
			struct htoe_macsec_stats ts;
			char to[32];

			snprintf(to, sizeof(to), " to node %u", ms->cfg->peer_id[t]);
			events(n, m, to);
			htoe_macsec_stats(m, &ts);
			p.s.tx.OutPktsProtected += ts.tx.OutPktsProtected;
			p.s.tx.OutPktsEncrypted += ts.tx.OutPktsEncrypted;
			p.s.tx.OutOctetsProtected += ts.tx.OutOctetsProtected;
			p.s.tx.OutOctetsEncrypted += ts.tx.OutOctetsEncrypted;
			p.s.secy.OutPktsUntagged += ts.secy.OutPktsUntagged;
			p.s.secy.OutPktsTooLong += ts.secy.OutPktsTooLong;
			p.s.secy.OutPktsNoSA += ts.secy.OutPktsNoSA;
			p.s.secy.OutPktsPNExhausted += ts.secy.OutPktsPNExhausted;
			p.events_lost += htoe_macsec_events_lost(m);
		}
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
			struct htoe_macsec_tx_sa_stats ts;

			if (!htoe_macsec_tx_sa_stats(m, an, &ts))
				p.tx_an[an] += ts.OutPktsProtected + ts.OutPktsEncrypted;
		}
	}
	for (unsigned i = 0; i < ms->cfg->n_peers; i++) {
		struct br_macsec_peer_pub pp;

		memset(&pp, 0, sizeof(pp));
		htoe_macsec_rx_sc_stats(ms->m, ms->peer_sci[i], &pp.s);
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
			struct htoe_macsec_rx_sa_stats rs;

			if (!htoe_macsec_rx_sa_stats(ms->m, ms->peer_sci[i], an, &rs))
				pp.an_ok[an] = rs.InPktsOK;
			p.rx_an_ok[an] += pp.an_ok[an];
		}
		pub_u64((uint64_t *)&ms->peers[i], (const uint64_t *)&pp, sizeof(pp) / 8);
	}
	/* pairwise: the TX SecY to the first peer */
	int an = ms->n_tx ? htoe_macsec_tx_encoding_an(ms->tx[0]) : -1;

	p.encoding_an = an < 0 ? UINT64_MAX : (uint64_t)an;
	pub_u64((uint64_t *)&ms->pub, (const uint64_t *)&p, sizeof(p) / 8);
}

/* ------------------------------------------------------------ readers */

static uint64_t ctr(const struct br_macsec_pub *p, size_t i)
{
	return RD(*(const uint64_t *)((const uint8_t *)&p->s + htoe_macsec_counters[i].offset));
}

static const char *mode_name(const struct br_macsec_cfg *c)
{
	return c->integrity_only ? "integrity" : "encrypt";
}

static const char *keys_name(const struct br_macsec_cfg *c)
{
	return c->pairwise ? "pairwise" : "shared";
}

void br_macsec_print(FILE *f, const struct br_drv *n)
{
	const struct br_macsec *ms = n->ms;
	const struct br_macsec_pub *p;
	bool any = false;

	if (!ms)
		return;
	p = &ms->pub;
	fprintf(f, "          macsec %s %s, %s keys (%s), TX AN %" PRIu64 ", rekeys %" PRIu64 ":",
		htoe_macsec_cipher_name(ms->cfg->cipher), mode_name(ms->cfg), keys_name(ms->cfg),
		htoe_macsec_backend_name(ms->backend), RD(p->encoding_an), RD(p->rekeys));
	/* the non-zero counters, in 802.1AE order */
	for (size_t i = 0; i < htoe_macsec_counters_count; i++) {
		uint64_t v = ctr(p, i);

		if (v && strstr(htoe_macsec_counters[i].name, "Octets") == NULL) {
			fprintf(f, "%s %s %" PRIu64, any ? "," : "", htoe_macsec_counters[i].name, v);
			any = true;
		}
	}
	if (!any)
		fprintf(f, " no frames");
	fprintf(f, "; InPktsOK by AN");
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		fprintf(f, " %" PRIu64, RD(p->rx_an_ok[an]));
	if (RD(p->pn_exhausted) || RD(p->tx_failed))
		fprintf(f, "; PN EXHAUSTED %" PRIu64 " times, %" PRIu64 " frames not sent",
			RD(p->pn_exhausted), RD(p->tx_failed));
	if (RD(p->tx_no_pair))
		fprintf(f, " (%" PRIu64 " to a node without a pairwise key)", RD(p->tx_no_pair));
	fputc('\n', f);
}

static void json_counters(FILE *f, const struct br_macsec_pub *p)
{
	for (size_t i = 0; i < htoe_macsec_counters_count; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", htoe_macsec_counters[i].name,
			ctr(p, i));
}

static void json_an(FILE *f, const char *name, const uint64_t *v)
{
	fprintf(f, ",\"%s\":[", name);
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		fprintf(f, "%s%" PRIu64, an ? "," : "", RD(v[an]));
	fputc(']', f);
}

void br_macsec_json(struct br_app *a, FILE *f)
{
	bool first = true;

	for (unsigned i = 0; i < a->n_nodes; i++) {
		const struct br_node *n = &a->nodes[i];
		const struct br_macsec *ms = n->drv.ms;
		const struct br_macsec_pub *p;

		if (!ms)
			continue;
		p = &ms->pub;
		fprintf(f, "%s\"%u\":{\"cipher\":\"%s\",\"mode\":\"%s\",\"keys\":\"%s\","
			"\"backend\":\"%s\",", first ? ",\"macsec\":{" : ",", n->id,
			htoe_macsec_cipher_name(ms->cfg->cipher), mode_name(ms->cfg),
			keys_name(ms->cfg), htoe_macsec_backend_name(ms->backend));
		first = false;
		json_counters(f, p);
		json_an(f, "tx_an_protected", p->tx_an);
		json_an(f, "rx_an_ok", p->rx_an_ok);
		fprintf(f, ",\"encoding_an\":%" PRIu64 ",\"rekeys\":%" PRIu64
			",\"pn_exhausted\":%" PRIu64 ",\"tx_failed\":%" PRIu64
			",\"tx_no_pair\":%" PRIu64 ",\"local_in\":%" PRIu64 ",\"local_out\":%" PRIu64
			",\"peers\":{", RD(p->encoding_an), RD(p->rekeys), RD(p->pn_exhausted),
			RD(p->tx_failed), RD(p->tx_no_pair), RD(n->pub.hs.local_in),
			RD(n->pub.hs.local_out));
		for (unsigned k = 0; k < ms->cfg->n_peers; k++) {
			const struct br_macsec_peer_pub *pp = &ms->peers[k];

			fprintf(f, "%s\"%u\":{\"sci\":\"%016" PRIx64 "\",\"InPktsOK\":%" PRIu64
				",\"InPktsNotValid\":%" PRIu64 ",\"InPktsInvalid\":%" PRIu64
				",\"InPktsLate\":%" PRIu64 ",\"InPktsNotUsingSA\":%" PRIu64
				",\"InPktsSCIMismatch\":%" PRIu64, k ? "," : "", ms->cfg->peer_id[k],
				ms->peer_sci[k], RD(pp->s.InPktsOK), RD(pp->s.InPktsNotValid),
				RD(pp->s.InPktsInvalid), RD(pp->s.InPktsLate), RD(pp->s.InPktsNotUsingSA),
				RD(pp->s.InPktsSCIMismatch));
			json_an(f, "an_ok", pp->an_ok);
			fputc('}', f);
		}
		fputs("}}", f);
	}
	if (!first)
		fputc('}', f);
}

/* /htoe/macsec[,NODE]: the counters of a node (default: the first with
 * MACsec on). */
static int cb_macsec(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct br_node *n = NULL;
	char *end;
	long id = -1;

	(void)cmd;
	if (params && *params) {
		errno = 0;
		id = strtol(params, &end, 0);
		if (errno || *end || id < 0)
			return br_tel_error(d, "bad parameter '%s': expected [NODE] (a number)",
					    params);
	}
	for (unsigned i = 0; i < br_app->n_nodes && !n; i++)
		if (br_app->nodes[i].drv.ms && (id < 0 || br_app->nodes[i].id == id))
			n = &br_app->nodes[i];
	if (!n)
		return id < 0 ? br_tel_error(d, "no node with MACsec in this process")
			      : br_tel_error(d, "no node %ld with MACsec in this process", id);
	const struct br_macsec *ms = n->drv.ms;
	const struct br_macsec_pub *p = &ms->pub;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "node", n->id);
	rte_tel_data_add_dict_string(d, "cipher", htoe_macsec_cipher_name(ms->cfg->cipher));
	rte_tel_data_add_dict_string(d, "mode", mode_name(ms->cfg));
	rte_tel_data_add_dict_string(d, "keys", keys_name(ms->cfg));
	rte_tel_data_add_dict_string(d, "backend", htoe_macsec_backend_name(ms->backend));
	for (size_t i = 0; i < htoe_macsec_counters_count; i++)
		rte_tel_data_add_dict_u64(d, htoe_macsec_counters[i].name, ctr(p, i));
	rte_tel_data_add_dict_u64(d, "encoding_an", RD(p->encoding_an));
	rte_tel_data_add_dict_u64(d, "rekeys", RD(p->rekeys));
	rte_tel_data_add_dict_u64(d, "pn_exhausted", RD(p->pn_exhausted));
	rte_tel_data_add_dict_u64(d, "tx_failed", RD(p->tx_failed));
	rte_tel_data_add_dict_u64(d, "tx_no_pair", RD(p->tx_no_pair));
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++) {
		char k[32];

		snprintf(k, sizeof(k), "rx_an%u_ok", an);
		rte_tel_data_add_dict_u64(d, k, RD(p->rx_an_ok[an]));
		snprintf(k, sizeof(k), "tx_an%u_protected", an);
		rte_tel_data_add_dict_u64(d, k, RD(p->tx_an[an]));
	}
	return 0;
}

int br_macsec_telemetry_register(void)
{
	return rte_telemetry_register_cmd("/htoe/macsec", cb_macsec,
					  "MACsec counters of a node (802.1AE names). "
					  "Parameters: [NODE]");
}
