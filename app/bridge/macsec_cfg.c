/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bridge: the [macsec] / [macsec N] configuration and its key files
 * (see macsec_cfg.h), without DPDK.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cfgtab.h"
#include "keyfile.h"
#include "macsec_cfg.h"

struct mparse {
	struct cfg_doc *d;
	char sect[32];
	struct br_macsec_cfg *mc;
};

/* The value of key in [macsec N], else in [macsec] (the table's fallback);
 * *in: the section it came from. */
static const char *mget(struct mparse *p, const char *key, const char **in)
{
	const struct cfg_ent *e = cfg_get(p->d, p->sect, key, in);

	return e ? e->val : NULL;
}

static int __attribute__((format(printf, 5, 6)))
merr(struct mparse *p, const char *in, const char *key, const char *val, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	char org[CFG_ORIGIN_MAX];
	struct cfg_doc *d = p->d;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* "ORIGIN: [sect] key = 'val': msg" */
	cfg_origin(d, in, key, org, sizeof(org));
	if (key && val)
		snprintf(d->err, d->errlen, "%s: [%s] %s = '%s': %s", org, in, key, val, msg);
	else if (key)
		snprintf(d->err, d->errlen, "%s: [%s] %s: %s", org, in, key, msg);
	else
		snprintf(d->err, d->errlen, "%s: [%s]: %s", org, in, msg);
	return -1;
}

/* the configuration's parsers (cfgtab.c) */
#define parse_u64_dec cfg_parse_u64
#define parse_onoff cfg_parse_bool
#define parse_hex htoe_macsec_unhex

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

/* key_file: the lines of app/common/keyfile.c ("keyN = HEX", a bare HEX for
 * the next AN without a key, "salt = HEX"; with keys = pairwise
 * "master_key = HEX" or "keyN A>B = HEX"), the format htoe-pcap --key-file
 * reads too. */
static int load_key_file(struct mparse *p, const char *path, const char *in, bool *salt_given)
{
	struct htoe_keyfile kf;
	struct htoe_macsec_keyline kl;
	char msg[HTOE_KEYFILE_ORIGIN_MAX + 256];
	int r, e = 0;

	if (htoe_keyfile_open(&kf, path, msg, sizeof(msg)))
		return merr(p, in, "key_file", path, "%s", msg);
	while (!e && (r = htoe_keyfile_next(&kf, &kl, msg, sizeof(msg))) > 0) {
		switch (kl.kind) {
		case HTOE_MACSEC_KL_SALT:
			memcpy(p->mc->salt, kl.val, HTOE_MACSEC_SALT_LEN);
			*salt_given = true;
			break;
		case HTOE_MACSEC_KL_MASTER:
			e = set_master(p, kl.val, (int)kl.len, in, "key_file", kf.origin);
			break;
		case HTOE_MACSEC_KL_PAIR:
			e = set_pair(p, &kl, in, path, kf.origin);
			break;
		default:   /* HTOE_MACSEC_KL_KEY */
			if (kf.bare && p->mc->pairwise)
				e = merr(p, in, "key_file", path, "%s: keys = pairwise: a key line "
					 "names its pair ('key0 1>2 = HEX') or is 'master_key = HEX'",
					 kf.origin);
			else
				e = set_key(p, (unsigned)kl.an, kl.val, (int)kl.len, in, "key_file",
					    kf.origin);
			break;
		}
	}
	if (!e && r < 0)
		e = merr(p, in, "key_file", path, "%s", msg);
	explicit_bzero(&kl, sizeof(kl));
	htoe_keyfile_close(&kf);
	return e ? -1 : 0;
}

int br_macsec_parse(struct cfg_doc *d, uint16_t id, const uint8_t mac[6], unsigned n_peers,
		    const uint16_t *peer_id, const uint8_t (*peer_mac)[6], struct br_macsec_cfg *mc)
{
	struct mparse p = { .d = d, .mc = mc };
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
	cfg_where(d, in, NULL, mc->where, sizeof(mc->where));
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
