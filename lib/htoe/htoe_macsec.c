/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_macsec: IEEE 802.1AE MACsec SecY, sans-I/O. See htoe_macsec.h and
 * docs/macsec.md.
 */
#include "htoe/htoe_macsec.h"
#include "htoe/htoe_macsec_gcm.h"
#include "htoe/htoe_wire.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define EV_RING 16u
#define NO_AN   (-1)
#define RX_SC_DEFAULT 64u
#define RX_SC_LIMIT   65536u
#define XPN_MAX_WINDOW (1u << 30)
#define PN32_MAX 0xFFFFFFFFull

struct tx_sa {
	bool installed, in_use, exhausted, warned;
	uint64_t gen;                 /* install order (SecY-wide) */
	uint64_t next_pn;
	uint8_t iv_base[HTOE_GCM_IV_LEN];
	enum htoe_macsec_backend backend;
	struct htoe_gcm gcm;
	struct htoe_macsec_tx_sa_stats st;
};

struct rx_sa {
	bool installed, active, in_use, exhausted, retiring;
	uint32_t retire_left;
	uint64_t used_at;             /* order of first use in the SC */
	uint64_t next_pn;
	uint8_t iv_base[HTOE_GCM_IV_LEN];
	enum htoe_macsec_backend backend;
	struct htoe_gcm gcm;
	struct htoe_macsec_rx_sa_stats st;
};

struct rx_sc {
	bool used;
	bool bound;                   /* speaks for HToE node `node` only */
	uint16_t node;
	uint64_t sci;
	uint64_t use_seq;
	struct rx_sa sa[HTOE_MACSEC_AN_COUNT];
	struct htoe_macsec_rx_sc_stats st;
};

struct ev_ring {
	struct htoe_macsec_event ev[EV_RING];
	unsigned head, count;
	uint64_t lost;
};

struct htoe_macsec {
	struct htoe_macsec_cfg cfg;
	bool xpn;
	size_t key_len;
	uint64_t max_pn;
	uint64_t pn_warn;
	uint8_t sci_bytes[8];
	uint8_t tx_tci;                /* TCI bits (no AN) of every frame sent */
	uint8_t tx_taglen;
	int encoding_an;               /* NO_AN if none */
	uint64_t gen;
	struct tx_sa tx[HTOE_MACSEC_AN_COUNT];
	struct htoe_macsec_tx_sc_stats tx_st;
	struct htoe_macsec_secy_stats secy;
	struct htoe_macsec_rx_sc_stats rx_gone;  /* counters of deleted RX SCs */
	unsigned max_rx_sc;
	unsigned rx_hw;                /* slots [rx_hw, max_rx_sc) are unused */
	struct rx_sc *rx;
	void *shared[3];               /* per backend, by enum value */
	bool shared_tried[3];
	struct ev_ring ev_tx, ev_rx;
};

/* ---- byte helpers ---------------------------------------------------------- */

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return be16toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline void put16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, 4);
}

/* Per frame: one 8-octet load or store instead of 8 byte moves. */
static inline uint64_t sci_load(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static inline void sci_store(uint8_t *p, uint64_t sci)
{
	uint64_t v = htobe64(sci);

	memcpy(p, &v, 8);
}

uint64_t htoe_macsec_sci_get(const uint8_t p[8])
{
	return sci_load(p);
}

void htoe_macsec_sci_put(uint8_t p[8], uint64_t sci)
{
	sci_store(p, sci);
}

uint64_t htoe_macsec_sci(const uint8_t mac[6], uint16_t port)
{
	uint64_t v = 0;

	for (int i = 0; i < 6; i++)
		v = v << 8 | mac[i];
	return v << 16 | port;
}

/* Moves DA SA (12 octets) to dst; dst and src may overlap. Inline: libc
 * memmove was a call per frame for 12 octets. */
static inline void macs_move(uint8_t *dst, const uint8_t *src)
{
	uint64_t a;
	uint32_t b;

	memcpy(&a, src, 8);
	memcpy(&b, src + 8, 4);
	memcpy(dst, &a, 8);
	memcpy(dst + 8, &b, 4);
}

/* ---- names -------------------------------------------------------------- */

static const char *const cipher_names[] = {
	[HTOE_MACSEC_GCM_AES_128] = "gcm-aes-128",
	[HTOE_MACSEC_GCM_AES_256] = "gcm-aes-256",
	[HTOE_MACSEC_GCM_AES_XPN_128] = "gcm-aes-xpn-128",
	[HTOE_MACSEC_GCM_AES_XPN_256] = "gcm-aes-xpn-256",
};

const char *htoe_macsec_cipher_name(enum htoe_macsec_cipher c)
{
	return (unsigned)c < 4 ? cipher_names[c] : NULL;
}

int htoe_macsec_cipher_parse(const char *s, enum htoe_macsec_cipher *c)
{
	for (unsigned i = 0; s && i < 4; i++)
		if (!strcasecmp(s, cipher_names[i])) {
			*c = (enum htoe_macsec_cipher)i;
			return 0;
		}
	return -EINVAL;
}

const char *htoe_macsec_tx_status_name(int st)
{
	static const char *const n[] = {
		[HTOE_MACSEC_TX_OK] = "OK",
		[HTOE_MACSEC_TX_UNTAGGED] = "OutPktsUntagged",
		[HTOE_MACSEC_TX_NO_SA] = "OutPktsNoSA",
		[HTOE_MACSEC_TX_PN_EXHAUSTED] = "OutPktsPNExhausted",
		[HTOE_MACSEC_TX_TOO_LONG] = "OutPktsTooLong",
		[HTOE_MACSEC_TX_SCI_MISMATCH] = "SCIMismatch",
		[HTOE_MACSEC_TX_BAD_FRAME] = "BadFrame",
		[HTOE_MACSEC_TX_NOSPACE] = "NoSpace",
		[HTOE_MACSEC_TX_CRYPTO] = "CryptoError",
	};
	return st >= 0 && st < HTOE_MACSEC_TX_STATUS_COUNT ? n[st] : "?";
}

const char *htoe_macsec_rx_status_name(int st)
{
	static const char *const n[] = {
		[HTOE_MACSEC_RX_OK] = "InPktsOK",
		[HTOE_MACSEC_RX_DELAYED] = "InPktsDelayed",
		[HTOE_MACSEC_RX_UNCHECKED] = "InPktsUnchecked",
		[HTOE_MACSEC_RX_INVALID] = "InPktsInvalid",
		[HTOE_MACSEC_RX_UNKNOWN_SCI] = "InPktsUnknownSCI",
		[HTOE_MACSEC_RX_UNUSED_SA] = "InPktsUnusedSA",
		[HTOE_MACSEC_RX_UNTAGGED] = "InPktsUntagged",
		[HTOE_MACSEC_RX_UNCONTROLLED] = "Uncontrolled",
		[HTOE_MACSEC_RX_NO_TAG] = "InPktsNoTag",
		[HTOE_MACSEC_RX_BAD_TAG] = "InPktsBadTag",
		[HTOE_MACSEC_RX_NO_SCI] = "InPktsNoSCI",
		[HTOE_MACSEC_RX_NOT_USING_SA] = "InPktsNotUsingSA",
		[HTOE_MACSEC_RX_LATE] = "InPktsLate",
		[HTOE_MACSEC_RX_NOT_VALID] = "InPktsNotValid",
		[HTOE_MACSEC_RX_SCI_MISMATCH] = "InPktsSCIMismatch",
		[HTOE_MACSEC_RX_NOSPACE] = "NoSpace",
	};
	return st >= 0 && st < HTOE_MACSEC_RX_STATUS_COUNT ? n[st] : "?";
}

const char *htoe_macsec_event_name(enum htoe_macsec_event_type t)
{
	switch (t) {
	case HTOE_MACSEC_EV_TX_PN_THRESHOLD: return "tx-pn-threshold";
	case HTOE_MACSEC_EV_TX_PN_EXHAUSTED: return "tx-pn-exhausted";
	case HTOE_MACSEC_EV_TX_SA_CHANGEOVER: return "tx-sa-changeover";
	case HTOE_MACSEC_EV_RX_SA_IN_USE: return "rx-sa-in-use";
	case HTOE_MACSEC_EV_RX_SA_RETIRED: return "rx-sa-retired";
	case HTOE_MACSEC_EV_RX_PN_EXHAUSTED: return "rx-pn-exhausted";
	}
	return "?";
}

/* ---- SecTAG -------------------------------------------------------------- */

/* The SecTAG of a valid t (TCI/AN, SL, PN checked by the caller); with
 * the SCI when TCI.SC. */
static inline void sectag_put(uint8_t *p, uint8_t tci_an, uint8_t sl, uint32_t pn, uint64_t sci)
{
	put16(p, HTOE_MACSEC_ETHERTYPE);
	p[2] = tci_an;
	p[3] = sl;
	put32(p + 4, pn);
	if (tci_an & HTOE_MACSEC_TCI_SC)
		sci_store(p + 8, sci);
}

int htoe_macsec_sectag_write(uint8_t *p, size_t cap, const struct htoe_macsec_sectag *t)
{
	if (!p || !t || t->an > HTOE_MACSEC_AN_MASK || t->sl >= HTOE_MACSEC_SL_LIMIT ||
	    (t->tci & ~0xFCu))
		return -EINVAL;
	size_t n = (t->tci & HTOE_MACSEC_TCI_SC) ? HTOE_MACSEC_SECTAG_SCI : HTOE_MACSEC_SECTAG_NOSCI;

	if (cap < n)
		return -ENOSPC;
	sectag_put(p, (uint8_t)(t->tci | t->an), t->sl, t->pn, t->sci);
	return (int)n;
}

int htoe_macsec_sectag_parse(const uint8_t *f, size_t len, bool xpn,
                             struct htoe_macsec_sectag *t)
{
	memset(t, 0, sizeof(*t));
	if (len < 14 || get16(f + 12) != HTOE_MACSEC_ETHERTYPE)
		return HTOE_MACSEC_RX_NO_TAG;
	t->len = HTOE_MACSEC_SECTAG_NOSCI;
	if (len < 12 + HTOE_MACSEC_SECTAG_NOSCI)
		return HTOE_MACSEC_RX_BAD_TAG;
	uint8_t tci_an = f[14];

	t->tci = tci_an & 0xFCu;
	t->an = tci_an & HTOE_MACSEC_AN_MASK;
	t->sl = f[15] & 0x3Fu;
	t->pn = get32(f + 16);
	bool sc = t->tci & HTOE_MACSEC_TCI_SC;

	t->len = sc ? HTOE_MACSEC_SECTAG_SCI : HTOE_MACSEC_SECTAG_NOSCI;
	if (len >= 12u + t->len)
		t->sci = sc ? sci_load(f + 20) : htoe_macsec_sci(f + 6, HTOE_MACSEC_PORT_ES);
	/* 802.1AE-2018 9.12 */
	if ((t->tci & HTOE_MACSEC_TCI_V) ||
	    (sc && (t->tci & (HTOE_MACSEC_TCI_ES | HTOE_MACSEC_TCI_SCB))) ||
	    (f[15] & 0xC0u) || t->sl >= HTOE_MACSEC_SL_LIMIT || (!xpn && t->pn == 0))
		return HTOE_MACSEC_RX_BAD_TAG;
	size_t fixed = 12u + t->len + HTOE_MACSEC_ICV_LEN;

	if (len < fixed)
		return HTOE_MACSEC_RX_BAD_TAG;
	size_t avail = len - fixed;

	if (t->sl) {
		/* Beyond 12 + SecTAG + SL + ICV is MAC padding. */
		if (avail < t->sl)
			return HTOE_MACSEC_RX_BAD_TAG;
		t->secure_len = t->sl;
	} else {
		if (avail < HTOE_MACSEC_SL_LIMIT)
			return HTOE_MACSEC_RX_BAD_TAG;
		t->secure_len = avail;
	}
	t->frame_len = fixed + t->secure_len;
	return HTOE_MACSEC_RX_OK;
}

/* ---- backends -------------------------------------------------------------- */

static const struct htoe_gcm_ops *backend_ops(enum htoe_macsec_backend b)
{
	switch (b) {
	case HTOE_MACSEC_BACKEND_OPENSSL:
		return &htoe_gcm_openssl_ops;
	case HTOE_MACSEC_BACKEND_IPSECMB:
#ifdef HTOE_HAVE_IPSECMB
		return &htoe_gcm_ipsecmb_ops;
#else
		return NULL;
#endif
	default:
		return NULL;
	}
}

bool htoe_macsec_backend_available(enum htoe_macsec_backend b)
{
	if (b == HTOE_MACSEC_BACKEND_AUTO || b == HTOE_MACSEC_BACKEND_OPENSSL)
		return true;
	const struct htoe_gcm_ops *ops = backend_ops(b);

	if (!ops)
		return false;
	if (!ops->shared_new)
		return true;
	void *s = ops->shared_new();

	if (!s)
		return false;
	ops->shared_free(s);
	return true;
}

enum htoe_macsec_backend htoe_macsec_backend_auto(void)
{
	return htoe_macsec_backend_available(HTOE_MACSEC_BACKEND_IPSECMB)
	       ? HTOE_MACSEC_BACKEND_IPSECMB : HTOE_MACSEC_BACKEND_OPENSSL;
}

const char *htoe_macsec_backend_name(enum htoe_macsec_backend b)
{
	switch (b) {
	case HTOE_MACSEC_BACKEND_AUTO: return "auto";
	case HTOE_MACSEC_BACKEND_OPENSSL: return "openssl";
	case HTOE_MACSEC_BACKEND_IPSECMB: return "ipsec-mb";
	}
	return "?";
}

/* The per-SecY shared state of a backend, created on first use. */
static int backend_shared(struct htoe_macsec *m, enum htoe_macsec_backend b, void **shared)
{
	const struct htoe_gcm_ops *ops = backend_ops(b);

	if (!ops)
		return -ENOTSUP;
	*shared = NULL;
	if (!ops->shared_new)
		return 0;
	if (!m->shared[b] && !m->shared_tried[b]) {
		m->shared_tried[b] = true;
		m->shared[b] = ops->shared_new();
	}
	*shared = m->shared[b];
	return *shared ? 0 : -EIO;
}

/* Resolves AUTO and sets up g with the key. */
static int gcm_setup(struct htoe_macsec *m, struct htoe_gcm *g, enum htoe_macsec_backend *be,
                     const struct htoe_macsec_sa_cfg *sa, bool encrypt)
{
	enum htoe_macsec_backend b = sa->backend;
	void *shared = NULL;
	int r;

	if ((unsigned)b > HTOE_MACSEC_BACKEND_IPSECMB)
		return -EINVAL;
	if (b == HTOE_MACSEC_BACKEND_AUTO)
		b = m->cfg.backend;
	if (b == HTOE_MACSEC_BACKEND_AUTO) {
		b = HTOE_MACSEC_BACKEND_IPSECMB;
		if (backend_shared(m, b, &shared) != 0)
			b = HTOE_MACSEC_BACKEND_OPENSSL;
	}
	r = backend_shared(m, b, &shared);
	if (r)
		return r;
	g->ops = backend_ops(b);
	g->impl = NULL;
	r = g->ops->init(g, shared, sa->key, sa->key_len, encrypt);
	if (r) {
		g->ops = NULL;
		return r;
	}
	*be = b;
	return 0;
}

static void gcm_release(struct htoe_gcm *g)
{
	if (g->ops)
		g->ops->fini(g);
	g->ops = NULL;
	g->impl = NULL;
}

/* ---- events ------------------------------------------------------------------ */

static void ev_push(struct ev_ring *r, enum htoe_macsec_event_type type, uint64_t sci,
                    unsigned an, unsigned prev_an, uint64_t pn)
{
	if (r->count == EV_RING) {
		r->head = (r->head + 1) % EV_RING;
		r->count--;
		r->lost++;
	}
	struct htoe_macsec_event *e = &r->ev[(r->head + r->count) % EV_RING];

	e->type = type;
	e->sci = sci;
	e->an = (uint8_t)an;
	e->prev_an = (uint8_t)prev_an;
	e->pn = pn;
	r->count++;
}

static bool ev_pop(struct ev_ring *r, struct htoe_macsec_event *ev)
{
	if (!r->count)
		return false;
	*ev = r->ev[r->head];
	r->head = (r->head + 1) % EV_RING;
	r->count--;
	return true;
}

bool htoe_macsec_event_next(struct htoe_macsec *m, struct htoe_macsec_event *ev)
{
	return ev_pop(&m->ev_tx, ev) || ev_pop(&m->ev_rx, ev);
}

uint64_t htoe_macsec_events_lost(const struct htoe_macsec *m)
{
	return m->ev_tx.lost + m->ev_rx.lost;
}

/* ---- SecY ---------------------------------------------------------------------- */

struct htoe_macsec *htoe_macsec_new(const struct htoe_macsec_cfg *cfg, int *err)
{
	int e = -EINVAL;
	struct htoe_macsec *m = NULL;

	if (!cfg || (unsigned)cfg->cipher > HTOE_MACSEC_GCM_AES_XPN_256 ||
	    (unsigned)cfg->tx_sci_mode > HTOE_MACSEC_TX_SCI_IMPLICIT ||
	    (unsigned)cfg->validate > HTOE_MACSEC_VALIDATE_DISABLED ||
	    (unsigned)cfg->backend > HTOE_MACSEC_BACKEND_IPSECMB ||
	    cfg->max_rx_sc > RX_SC_LIMIT)
		goto fail;
	bool xpn = htoe_macsec_cipher_xpn(cfg->cipher);

	if (xpn && cfg->replay_window > XPN_MAX_WINDOW)
		goto fail;
	/* Without an SCI in the SecTAG the receiver derives MAC SA || 0001. */
	if (cfg->tx_sci_mode != HTOE_MACSEC_TX_SCI_EXPLICIT &&
	    (cfg->sci & 0xFFFF) != HTOE_MACSEC_PORT_ES)
		goto fail;
	if (cfg->backend == HTOE_MACSEC_BACKEND_IPSECMB && !backend_ops(cfg->backend)) {
		e = -ENOTSUP;
		goto fail;
	}
	e = -ENOMEM;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto fail;
	m->cfg = *cfg;
	m->max_rx_sc = cfg->max_rx_sc ? cfg->max_rx_sc : RX_SC_DEFAULT;
	m->rx = calloc(m->max_rx_sc, sizeof(*m->rx));
	if (!m->rx)
		goto fail;
	m->xpn = xpn;
	m->key_len = htoe_macsec_cipher_key_len(cfg->cipher);
	m->max_pn = xpn ? UINT64_MAX : PN32_MAX;
	m->pn_warn = cfg->pn_warn ? cfg->pn_warn : (xpn ? 0xC000000000000000ull : 0xC0000000ull);
	htoe_macsec_sci_put(m->sci_bytes, cfg->sci);
	switch (cfg->tx_sci_mode) {
	case HTOE_MACSEC_TX_SCI_EXPLICIT:
		m->tx_tci = HTOE_MACSEC_TCI_SC;
		break;
	case HTOE_MACSEC_TX_SCI_ES:
		m->tx_tci = HTOE_MACSEC_TCI_ES;
		break;
	case HTOE_MACSEC_TX_SCI_IMPLICIT:
		m->tx_tci = 0;
		break;
	}
	/* Confidentiality: E=1 C=1. Integrity only with a 16-octet ICV: E=0 C=0. */
	if (!cfg->integrity_only)
		m->tx_tci |= HTOE_MACSEC_TCI_E | HTOE_MACSEC_TCI_C;
	m->tx_taglen = (m->tx_tci & HTOE_MACSEC_TCI_SC) ? HTOE_MACSEC_SECTAG_SCI
	                                                : HTOE_MACSEC_SECTAG_NOSCI;
	m->encoding_an = NO_AN;
	return m;
fail:
	if (m) {
		free(m->rx);
		free(m);
	}
	if (err)
		*err = e;
	return NULL;
}

void htoe_macsec_free(struct htoe_macsec *m)
{
	if (!m)
		return;
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		gcm_release(&m->tx[an].gcm);
	for (unsigned i = 0; i < m->max_rx_sc; i++)
		for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
			gcm_release(&m->rx[i].sa[an].gcm);
	for (unsigned b = 0; b < 3; b++)
		if (m->shared[b])
			backend_ops((enum htoe_macsec_backend)b)->shared_free(m->shared[b]);
	free(m->rx);
	explicit_bzero(m, sizeof(*m));
	free(m);
}

const struct htoe_macsec_cfg *htoe_macsec_cfg(const struct htoe_macsec *m)
{
	return &m->cfg;
}

size_t htoe_macsec_tx_sectag_len(const struct htoe_macsec *m)
{
	return m->tx_taglen;
}

/* IV: non-XPN SCI(8) || PN(4); XPN (SSCI ^ salt[0..3]) || (PN64 ^ salt[4..11]).
 * iv_base holds everything but the PN. */
static void iv_base_init(const struct htoe_macsec *m, uint8_t base[HTOE_GCM_IV_LEN],
                         uint64_t sci, const struct htoe_macsec_sa_cfg *sa)
{
	if (m->xpn) {
		uint8_t ssci[4];

		put32(ssci, sa->ssci);
		for (int i = 0; i < 4; i++)
			base[i] = ssci[i] ^ sa->salt[i];
		memcpy(base + 4, sa->salt + 4, 8);
	} else {
		htoe_macsec_sci_put(base, sci);
		memset(base + 8, 0, 4);
	}
}

static inline void iv_make(bool xpn, const uint8_t base[HTOE_GCM_IV_LEN], uint64_t pn,
                           uint8_t iv[HTOE_GCM_IV_LEN])
{
	memcpy(iv, base, HTOE_GCM_IV_LEN);
	if (xpn) {
		for (int i = 0; i < 8; i++)
			iv[4 + i] ^= (uint8_t)(pn >> (56 - 8 * i));
	} else {
		put32(iv + 8, (uint32_t)pn);
	}
}

static int sa_cfg_check(const struct htoe_macsec *m, unsigned an,
                        const struct htoe_macsec_sa_cfg *sa)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !sa || !sa->key || sa->key_len != m->key_len)
		return -EINVAL;
	if (!m->xpn && sa->pn > PN32_MAX)
		return -EINVAL;
	return 0;
}

/* ---- TX SAs --------------------------------------------------------------------- */

int htoe_macsec_tx_sa_add(struct htoe_macsec *m, unsigned an, const struct htoe_macsec_sa_cfg *sa)
{
	int r = sa_cfg_check(m, an, sa);

	if (r)
		return r;
	if (m->encoding_an == (int)an)
		return -EBUSY;
	struct htoe_gcm g = { 0 };
	enum htoe_macsec_backend be;

	r = gcm_setup(m, &g, &be, sa, true);
	if (r)
		return r;
	struct tx_sa *t = &m->tx[an];

	gcm_release(&t->gcm);
	memset(t, 0, sizeof(*t));
	t->installed = true;
	t->gen = ++m->gen;
	t->next_pn = sa->pn ? sa->pn : 1;
	t->backend = be;
	t->gcm = g;
	iv_base_init(m, t->iv_base, m->cfg.sci, sa);
	if (m->encoding_an == NO_AN) {
		m->encoding_an = (int)an;
		ev_push(&m->ev_tx, HTOE_MACSEC_EV_TX_SA_CHANGEOVER, m->cfg.sci, an, 0xFF, t->next_pn);
	}
	return 0;
}

int htoe_macsec_tx_sa_activate(struct htoe_macsec *m, unsigned an)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !m->tx[an].installed)
		return -ENOENT;
	if (m->encoding_an == (int)an)
		return 0;
	unsigned prev = m->encoding_an == NO_AN ? 0xFF : (unsigned)m->encoding_an;

	m->encoding_an = (int)an;
	ev_push(&m->ev_tx, HTOE_MACSEC_EV_TX_SA_CHANGEOVER, m->cfg.sci, an, prev,
	        m->tx[an].next_pn);
	return 0;
}

int htoe_macsec_tx_sa_del(struct htoe_macsec *m, unsigned an)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !m->tx[an].installed)
		return -ENOENT;
	if (m->encoding_an == (int)an)
		return -EBUSY;
	gcm_release(&m->tx[an].gcm);
	memset(&m->tx[an], 0, sizeof(m->tx[an]));
	return 0;
}

int htoe_macsec_tx_encoding_an(const struct htoe_macsec *m)
{
	return m->encoding_an == NO_AN ? -ENOENT : m->encoding_an;
}

int htoe_macsec_tx_sa_state(const struct htoe_macsec *m, unsigned an,
                            struct htoe_macsec_sa_state *st)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !st)
		return -EINVAL;
	const struct tx_sa *t = &m->tx[an];

	memset(st, 0, sizeof(*st));
	if (!t->installed)
		return -ENOENT;
	st->installed = true;
	st->active = m->encoding_an == (int)an;
	st->in_use = t->in_use;
	st->exhausted = t->exhausted;
	st->next_pn = t->next_pn;
	st->backend = t->backend;
	return 0;
}

int htoe_macsec_tx_sa_stats(const struct htoe_macsec *m, unsigned an,
                            struct htoe_macsec_tx_sa_stats *s)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !s)
		return -EINVAL;
	if (!m->tx[an].installed)
		return -ENOENT;
	*s = m->tx[an].st;
	return 0;
}

/* ---- RX SCs and SAs ------------------------------------------------------------- */

static struct rx_sc *rx_sc_find(const struct htoe_macsec *m, uint64_t sci)
{
	for (unsigned i = 0; i < m->rx_hw; i++)
		if (m->rx[i].used && m->rx[i].sci == sci)
			return &m->rx[i];
	return NULL;
}

int htoe_macsec_rx_sc_add(struct htoe_macsec *m, uint64_t sci)
{
	if (rx_sc_find(m, sci))
		return -EEXIST;
	for (unsigned i = 0; i < m->max_rx_sc; i++)
		if (!m->rx[i].used) {
			memset(&m->rx[i], 0, sizeof(m->rx[i]));
			m->rx[i].used = true;
			m->rx[i].sci = sci;
			if (i >= m->rx_hw)
				m->rx_hw = i + 1;
			return 0;
		}
	return -ENOSPC;
}

static void rx_stats_add(struct htoe_macsec_rx_sc_stats *d, const struct htoe_macsec_rx_sc_stats *s)
{
	d->InOctetsValidated += s->InOctetsValidated;
	d->InOctetsDecrypted += s->InOctetsDecrypted;
	d->InPktsUnchecked += s->InPktsUnchecked;
	d->InPktsDelayed += s->InPktsDelayed;
	d->InPktsOK += s->InPktsOK;
	d->InPktsInvalid += s->InPktsInvalid;
	d->InPktsLate += s->InPktsLate;
	d->InPktsNotValid += s->InPktsNotValid;
	d->InPktsNotUsingSA += s->InPktsNotUsingSA;
	d->InPktsUnusedSA += s->InPktsUnusedSA;
	d->InPktsSCIMismatch += s->InPktsSCIMismatch;
}

int htoe_macsec_rx_sc_del(struct htoe_macsec *m, uint64_t sci)
{
	struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc)
		return -ENOENT;
	rx_stats_add(&m->rx_gone, &sc->st);
	for (unsigned an = 0; an < HTOE_MACSEC_AN_COUNT; an++)
		gcm_release(&sc->sa[an].gcm);
	explicit_bzero(sc, sizeof(*sc));
	while (m->rx_hw && !m->rx[m->rx_hw - 1].used)
		m->rx_hw--;
	return 0;
}

int htoe_macsec_rx_sc_bind(struct htoe_macsec *m, uint64_t sci, uint16_t node)
{
	struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc)
		return -ENOENT;
	sc->bound = true;
	sc->node = node;
	return 0;
}

/* The HToE source node of a plaintext's secure data (from its EtherType
 * on): 88B5 after at most one 802.1Q tag, header offset 4. false when the
 * secure data is not an HToE frame long enough to name its source. */
static bool htoe_src_node(const uint8_t *sd, size_t len, uint16_t *node)
{
	size_t o = 0;

	if (len >= 2 && get16(sd) == HTOE_TPID_8021Q)
		o = 4;
	if (len < o + 2 + 6 || get16(sd + o) != HTOE_ETHERTYPE)
		return false;
	*node = get16(sd + o + 2 + 4);
	return true;
}

int htoe_macsec_rx_sa_add(struct htoe_macsec *m, uint64_t sci, unsigned an,
                          const struct htoe_macsec_sa_cfg *sa)
{
	int r = sa_cfg_check(m, an, sa);

	if (r)
		return r;
	struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc)
		return -ENOENT;
	struct htoe_gcm g = { 0 };
	enum htoe_macsec_backend be;

	r = gcm_setup(m, &g, &be, sa, false);
	if (r)
		return r;
	struct rx_sa *s = &sc->sa[an];

	gcm_release(&s->gcm);
	memset(s, 0, sizeof(*s));
	s->installed = true;
	s->active = true;
	s->next_pn = sa->pn ? sa->pn : 1;
	s->backend = be;
	s->gcm = g;
	iv_base_init(m, s->iv_base, sci, sa);
	return 0;
}

int htoe_macsec_rx_sa_del(struct htoe_macsec *m, uint64_t sci, unsigned an)
{
	struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc || an >= HTOE_MACSEC_AN_COUNT || !sc->sa[an].installed)
		return -ENOENT;
	gcm_release(&sc->sa[an].gcm);
	memset(&sc->sa[an], 0, sizeof(sc->sa[an]));
	return 0;
}

int htoe_macsec_rx_sa_state(const struct htoe_macsec *m, uint64_t sci, unsigned an,
                            struct htoe_macsec_sa_state *st)
{
	if (an >= HTOE_MACSEC_AN_COUNT || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	const struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc || !sc->sa[an].installed)
		return -ENOENT;
	const struct rx_sa *s = &sc->sa[an];

	st->installed = true;
	st->active = s->active;
	st->in_use = s->in_use;
	st->exhausted = s->exhausted;
	st->next_pn = s->next_pn;
	st->backend = s->backend;
	return 0;
}

int htoe_macsec_rx_sc_stats(const struct htoe_macsec *m, uint64_t sci,
                            struct htoe_macsec_rx_sc_stats *s)
{
	const struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc || !s)
		return -ENOENT;
	*s = sc->st;
	return 0;
}

int htoe_macsec_rx_sa_stats(const struct htoe_macsec *m, uint64_t sci, unsigned an,
                            struct htoe_macsec_rx_sa_stats *s)
{
	const struct rx_sc *sc = rx_sc_find(m, sci);

	if (!sc || an >= HTOE_MACSEC_AN_COUNT || !sc->sa[an].installed || !s)
		return -ENOENT;
	*s = sc->sa[an].st;
	return 0;
}

void htoe_macsec_stats(const struct htoe_macsec *m, struct htoe_macsec_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->secy = m->secy;
	s->tx = m->tx_st;
	s->rx = m->rx_gone;
	for (unsigned i = 0; i < m->max_rx_sc; i++)
		if (m->rx[i].used)
			rx_stats_add(&s->rx, &m->rx[i].st);
}

#define C_(grp, f) { #f, offsetof(struct htoe_macsec_stats, grp.f) }
const struct htoe_macsec_counter_desc htoe_macsec_counters[] = {
	C_(secy, OutPktsUntagged), C_(secy, OutPktsTooLong), C_(secy, OutPktsNoSA),
	C_(secy, OutPktsPNExhausted), C_(secy, InPktsUntagged), C_(secy, InPktsNoTag),
	C_(secy, InPktsBadTag), C_(secy, InPktsUnknownSCI), C_(secy, InPktsNoSCI),
	C_(secy, InPktsOverrun),
	C_(tx, OutPktsProtected), C_(tx, OutPktsEncrypted), C_(tx, OutOctetsProtected),
	C_(tx, OutOctetsEncrypted),
	C_(rx, InOctetsValidated), C_(rx, InOctetsDecrypted), C_(rx, InPktsUnchecked),
	C_(rx, InPktsDelayed), C_(rx, InPktsOK), C_(rx, InPktsInvalid), C_(rx, InPktsLate),
	C_(rx, InPktsNotValid), C_(rx, InPktsNotUsingSA), C_(rx, InPktsUnusedSA),
	C_(rx, InPktsSCIMismatch),
};
#undef C_
const size_t htoe_macsec_counters_count =
	sizeof(htoe_macsec_counters) / sizeof(htoe_macsec_counters[0]);

/* ---- transmit ---------------------------------------------------------------------- */

/* The checks that may refuse a frame; nothing is consumed. */
static enum htoe_macsec_tx_status tx_check(struct htoe_macsec *m, const uint8_t *frame,
                                           size_t len)
{
	if (len < 14)
		return HTOE_MACSEC_TX_BAD_FRAME;
	if (m->encoding_an == NO_AN) {
		m->secy.OutPktsNoSA++;
		return HTOE_MACSEC_TX_NO_SA;
	}
	if (m->tx[m->encoding_an].exhausted) {
		m->secy.OutPktsPNExhausted++;
		return HTOE_MACSEC_TX_PN_EXHAUSTED;
	}
	if (m->cfg.max_frame_len &&
	    len + m->tx_taglen + HTOE_MACSEC_ICV_LEN > m->cfg.max_frame_len) {
		m->secy.OutPktsTooLong++;
		return HTOE_MACSEC_TX_TOO_LONG;
	}
	/* The receiver will use MAC SA || 0001 as the SCI: it must be ours. */
	if (!(m->tx_tci & HTOE_MACSEC_TCI_SC) && memcmp(frame + 6, m->sci_bytes, 6))
		return HTOE_MACSEC_TX_SCI_MISMATCH;
	return HTOE_MACSEC_TX_OK;
}

/* Takes the next PN of the encoding SA. The last PN stops the SA for good
 * and changes over to an SA installed after it on the next AN, if any. */
static uint64_t tx_take_pn(struct htoe_macsec *m, unsigned an)
{
	struct tx_sa *t = &m->tx[an];
	uint64_t pn = t->next_pn;

	t->in_use = true;
	if (pn >= m->pn_warn && !t->warned) {
		t->warned = true;
		ev_push(&m->ev_tx, HTOE_MACSEC_EV_TX_PN_THRESHOLD, m->cfg.sci, an, an, pn);
	}
	if (pn < m->max_pn) {
		t->next_pn = pn + 1;
		return pn;
	}
	t->exhausted = true;
	ev_push(&m->ev_tx, HTOE_MACSEC_EV_TX_PN_EXHAUSTED, m->cfg.sci, an, an, pn);
	unsigned next = (an + 1) & HTOE_MACSEC_AN_MASK;
	struct tx_sa *n = &m->tx[next];

	if (n->installed && !n->exhausted && n->gen > t->gen) {
		m->encoding_an = (int)next;
		ev_push(&m->ev_tx, HTOE_MACSEC_EV_TX_SA_CHANGEOVER, m->cfg.sci, next, an,
		        n->next_pn);
	}
	return pn;
}

/* out: the protected frame, with DA SA already at out[0..12) and the secure
 * data at src (src == out + 12 + SecTAG, or not overlapping it). */
static enum htoe_macsec_tx_status tx_seal(struct htoe_macsec *m, uint8_t *out,
                                          const uint8_t *src, size_t secure_len,
                                          struct htoe_macsec_tx_info *info)
{
	unsigned an = (unsigned)m->encoding_an;
	struct tx_sa *t = &m->tx[an];
	uint64_t pn = tx_take_pn(m, an);
	size_t taglen = m->tx_taglen;
	uint8_t *sd = out + 12 + taglen;
	uint8_t iv[HTOE_GCM_IV_LEN];
	bool enc = m->tx_tci & HTOE_MACSEC_TCI_E;
	int r;

	/* tx_tci has no AN bits; htoe_macsec_sl() < HTOE_MACSEC_SL_LIMIT */
	sectag_put(out + 12, (uint8_t)(m->tx_tci | an), htoe_macsec_sl(secure_len), (uint32_t)pn,
	           m->cfg.sci);
	iv_make(m->xpn, t->iv_base, pn, iv);
	if (enc) {
		r = t->gcm.ops->seal(&t->gcm, iv, out, 12 + taglen, src, sd, secure_len,
		                     sd + secure_len);
	} else {
		if (src != sd)
			memcpy(sd, src, secure_len);
		r = t->gcm.ops->seal(&t->gcm, iv, out, 12 + taglen + secure_len, NULL, NULL, 0,
		                     sd + secure_len);
	}
	if (r)
		return HTOE_MACSEC_TX_CRYPTO;
	if (enc) {
		m->tx_st.OutPktsEncrypted++;
		m->tx_st.OutOctetsEncrypted += secure_len;
		t->st.OutPktsEncrypted++;
	} else {
		m->tx_st.OutPktsProtected++;
		m->tx_st.OutOctetsProtected += secure_len;
		t->st.OutPktsProtected++;
	}
	if (info) {
		info->an = (uint8_t)an;
		info->pn = pn;
		info->sectag_len = (uint8_t)taglen;
	}
	return HTOE_MACSEC_TX_OK;
}

static bool overlap(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;

	return pa < pb + blen && pb < pa + alen;
}

enum htoe_macsec_tx_status
htoe_macsec_protect(struct htoe_macsec *m, const uint8_t *in, size_t len,
                    uint8_t *out, size_t cap, size_t *out_len,
                    struct htoe_macsec_tx_info *info)
{
	if (info)
		memset(info, 0, sizeof(*info));
	if (out_len)
		*out_len = 0;
	if (!in || !out || !out_len)
		return HTOE_MACSEC_TX_BAD_FRAME;
	if (len < 14)
		return HTOE_MACSEC_TX_BAD_FRAME;
	if (m->cfg.tx_bypass) {
		if (cap < len || overlap(in, len, out, cap))
			return HTOE_MACSEC_TX_NOSPACE;
		memcpy(out, in, len);
		*out_len = len;
		m->secy.OutPktsUntagged++;
		return HTOE_MACSEC_TX_UNTAGGED;
	}
	size_t total = len + m->tx_taglen + HTOE_MACSEC_ICV_LEN;

	if (cap < total || overlap(in, len, out, cap))
		return HTOE_MACSEC_TX_NOSPACE;
	enum htoe_macsec_tx_status st = tx_check(m, in, len);

	if (st != HTOE_MACSEC_TX_OK)
		return st;
	memcpy(out, in, 12);
	st = tx_seal(m, out, in + 12, len - 12, info);
	if (st == HTOE_MACSEC_TX_OK)
		*out_len = total;
	return st;
}

enum htoe_macsec_tx_status
htoe_macsec_protect_inplace(struct htoe_macsec *m, uint8_t *buf, size_t buf_len,
                            size_t *off, size_t *len, struct htoe_macsec_tx_info *info)
{
	if (info)
		memset(info, 0, sizeof(*info));
	if (!buf || !off || !len || *off > buf_len || *len > buf_len - *off)
		return HTOE_MACSEC_TX_NOSPACE;
	if (*len < 14)
		return HTOE_MACSEC_TX_BAD_FRAME;
	uint8_t *f = buf + *off;
	size_t n = *len, taglen = m->tx_taglen;

	if (m->cfg.tx_bypass) {
		m->secy.OutPktsUntagged++;
		return HTOE_MACSEC_TX_UNTAGGED;
	}
	size_t tail = buf_len - *off - n;
	bool head = *off >= taglen;

	if (head ? tail < HTOE_MACSEC_ICV_LEN : tail < taglen + HTOE_MACSEC_ICV_LEN)
		return HTOE_MACSEC_TX_NOSPACE;
	enum htoe_macsec_tx_status st = tx_check(m, f, n);

	if (st != HTOE_MACSEC_TX_OK)
		return st;
	uint8_t *out;

	if (head) {
		out = f - taglen;
		macs_move(out, f);                            /* MACs into the headroom */
	} else {
		out = f;
		memmove(f + 12 + taglen, f + 12, n - 12);     /* secure data to the tail */
	}
	st = tx_seal(m, out, out + 12 + taglen, n - 12, info);
	if (st == HTOE_MACSEC_TX_OK) {
		*off = (size_t)(out - buf);
		*len = n + taglen + HTOE_MACSEC_ICV_LEN;
	}
	return st;
}

/* ---- receive ------------------------------------------------------------------------ */

/* XPN: the 64-bit PN whose low half is pn32 and which is closest to next_pn
 * (within -2^31 .. 2^31-1 of it). The window (<= 2^30) lies inside that
 * range, so frames below it are classified late, frames up to 2^31 ahead
 * carry into the next upper half (Linux: pn_same_half). */
static uint64_t xpn_recover(uint64_t next_pn, uint32_t pn32)
{
	int64_t d = (int32_t)(pn32 - (uint32_t)next_pn);
	uint64_t cand = (next_pn & ~PN32_MAX) | pn32;

	if (d < 0 && (uint64_t)-d > next_pn)
		return cand;                 /* below 0: the upper half stays 0 */
	if (d > 0 && next_pn + (uint64_t)d < next_pn)
		return cand;                 /* beyond 2^64 - 1 */
	return next_pn + (uint64_t)d;
}

/* Delivers the frame stripped of SecTAG and ICV without (successful)
 * validation: the secure data as received. */
static void deliver_stripped(const uint8_t *in, uint8_t *dst, const struct htoe_macsec_sectag *t)
{
	const uint8_t *sd = in + 12 + t->len;

	if (dst + 12 != sd)
		memmove(dst + 12, sd, t->secure_len);
	macs_move(dst, in);
}

static void rx_sa_valid(struct htoe_macsec *m, struct rx_sc *sc, unsigned an, uint64_t pn)
{
	struct rx_sa *s = &sc->sa[an];

	if (pn >= s->next_pn) {
		if (pn == m->max_pn) {
			s->exhausted = true;
			s->next_pn = m->xpn ? UINT64_MAX : PN32_MAX + 1;
			ev_push(&m->ev_rx, HTOE_MACSEC_EV_RX_PN_EXHAUSTED, sc->sci, an, an, pn);
		} else {
			s->next_pn = pn + 1;
		}
	}
	if (!s->in_use) {
		s->in_use = true;
		s->used_at = ++sc->use_seq;
		ev_push(&m->ev_rx, HTOE_MACSEC_EV_RX_SA_IN_USE, sc->sci, an, an, pn);
	}
	if (m->cfg.rx_keep_old_sa)
		return;
	/* The SAs of the SC that were in use before this one stay valid for
	 * replay_window more valid frames on it (reordering across the
	 * changeover), then retire. SAs installed but never used (the next
	 * key, provisioned early) are left alone. */
	for (unsigned o = 0; o < HTOE_MACSEC_AN_COUNT; o++) {
		struct rx_sa *old = &sc->sa[o];

		if (o == an || !old->active || !old->in_use || old->used_at > s->used_at)
			continue;
		if (!old->retiring) {
			old->retiring = true;
			old->retire_left = m->cfg.replay_window;
		}
		if (old->retire_left) {
			old->retire_left--;
			continue;
		}
		old->active = false;
		old->retiring = false;
		ev_push(&m->ev_rx, HTOE_MACSEC_EV_RX_SA_RETIRED, sc->sci, o, an, old->next_pn);
	}
}

/* The receive path. in: the frame (len octets). In place (inplace: the
 * writable frame, in == inplace): the plain frame starts at inplace + SecTAG
 * length (*poff); else it goes to out[cap]. */
static enum htoe_macsec_rx_status rx_process(struct htoe_macsec *m, uint8_t *inplace,
                                             const uint8_t *in, size_t len,
                                             uint8_t *out, size_t cap,
                                             size_t *poff, size_t *plen,
                                             struct htoe_macsec_rx_info *info)
{
	struct htoe_macsec_sectag t;
	bool strict = m->cfg.validate == HTOE_MACSEC_VALIDATE_STRICT;
	int r = htoe_macsec_sectag_parse(in, len, m->xpn, &t);

	*poff = 0;
	*plen = 0;
	if (r == HTOE_MACSEC_RX_NO_TAG) {
		/* 10.6.1: untagged */
		if (strict) {
			m->secy.InPktsNoTag++;
			return HTOE_MACSEC_RX_NO_TAG;
		}
		if (!inplace) {
			if (cap < len)
				return HTOE_MACSEC_RX_NOSPACE;
			memcpy(out, in, len);
		}
		m->secy.InPktsUntagged++;
		*plen = len;
		return HTOE_MACSEC_RX_UNTAGGED;
	}
	info->tci_an = (uint8_t)(t.tci | t.an);   /* as parsed: 0 if truncated */
	info->an = t.an;
	info->sectag_len = t.len;
	info->sci = t.sci;
	info->pn = t.pn;
	if (r == HTOE_MACSEC_RX_BAD_TAG) {
		m->secy.InPktsBadTag++;
		return HTOE_MACSEC_RX_BAD_TAG;
	}
	bool cbit = t.tci & HTOE_MACSEC_TCI_C, ebit = t.tci & HTOE_MACSEC_TCI_E;

	/* E=1 C=0: reserved encoding, not for the controlled port. */
	if (ebit && !cbit) {
		if (!inplace) {
			if (cap < len)
				return HTOE_MACSEC_RX_NOSPACE;
			memcpy(out, in, len);
		}
		*plen = len;
		return HTOE_MACSEC_RX_UNCONTROLLED;
	}
	size_t plain_len = 12 + t.secure_len;
	uint8_t *dst;

	if (inplace) {
		dst = inplace + t.len;
		*poff = t.len;
	} else {
		if (cap < plain_len)
			return HTOE_MACSEC_RX_NOSPACE;
		dst = out;
	}

	struct rx_sc *sc = rx_sc_find(m, t.sci);

	if (!sc) {
		if (cbit || strict) {
			m->secy.InPktsNoSCI++;
			return HTOE_MACSEC_RX_NO_SCI;
		}
		m->secy.InPktsUnknownSCI++;
		deliver_stripped(in, dst, &t);
		*plen = plain_len;
		return HTOE_MACSEC_RX_UNKNOWN_SCI;
	}
	struct rx_sa *s = &sc->sa[t.an];

	if (!s->installed || !s->active) {
		if (cbit || strict) {
			sc->st.InPktsNotUsingSA++;
			s->st.InPktsNotUsingSA++;
			return HTOE_MACSEC_RX_NOT_USING_SA;
		}
		sc->st.InPktsUnusedSA++;
		s->st.InPktsUnusedSA++;
		deliver_stripped(in, dst, &t);
		*plen = plain_len;
		return HTOE_MACSEC_RX_UNUSED_SA;
	}

	uint64_t pn = m->xpn ? xpn_recover(s->next_pn, t.pn) : t.pn;
	uint32_t w = m->cfg.replay_window;
	uint64_t lowest = s->next_pn > w ? s->next_pn - w : 0;
	bool replay = !m->cfg.no_replay_protect;

	info->pn = pn;
	/* Replay pre-check, before spending time on the crypto. */
	if (replay && (pn < lowest || s->exhausted)) {
		sc->st.InPktsLate++;
		return HTOE_MACSEC_RX_LATE;
	}
	if (m->cfg.validate == HTOE_MACSEC_VALIDATE_DISABLED && !cbit) {
		sc->st.InPktsUnchecked++;
		deliver_stripped(in, dst, &t);
		*plen = plain_len;
		return HTOE_MACSEC_RX_UNCHECKED;
	}

	uint8_t iv[HTOE_GCM_IV_LEN];
	const uint8_t *sd = in + 12 + t.len;
	const uint8_t *icv = sd + t.secure_len;

	iv_make(m->xpn, s->iv_base, pn, iv);
	if (ebit)
		r = s->gcm.ops->open(&s->gcm, iv, in, 12 + t.len, sd, dst + 12, t.secure_len, icv);
	else
		r = s->gcm.ops->open(&s->gcm, iv, in, 12 + t.len + t.secure_len, NULL, NULL, 0, icv);
	if (r) {
		if (ebit)   /* no unauthenticated plaintext left behind */
			explicit_bzero(dst + 12, t.secure_len);
		if (cbit || strict) {
			sc->st.InPktsNotValid++;
			s->st.InPktsNotValid++;
			return HTOE_MACSEC_RX_NOT_VALID;
		}
		sc->st.InPktsInvalid++;
		s->st.InPktsInvalid++;
		deliver_stripped(in, dst, &t);
		*plen = plain_len;
		return HTOE_MACSEC_RX_INVALID;
	}
	/* htoe: the SC's node binding, before any state changes */
	if (sc->bound) {
		uint16_t node;

		if (!htoe_src_node(ebit ? dst + 12 : sd, t.secure_len, &node) || node != sc->node) {
			if (ebit)
				explicit_bzero(dst + 12, t.secure_len);
			sc->st.InPktsSCIMismatch++;
			return HTOE_MACSEC_RX_SCI_MISMATCH;
		}
	}
	/* Post-check (802.1AE figure 10-5). */
	lowest = s->next_pn > w ? s->next_pn - w : 0;
	if (replay && (pn < lowest || s->exhausted)) {
		if (ebit)
			explicit_bzero(dst + 12, t.secure_len);
		sc->st.InPktsLate++;
		return HTOE_MACSEC_RX_LATE;
	}
	enum htoe_macsec_rx_status st = HTOE_MACSEC_RX_OK;

	if (pn < lowest || s->exhausted) {
		sc->st.InPktsDelayed++;
		st = HTOE_MACSEC_RX_DELAYED;
	} else {
		sc->st.InPktsOK++;
		s->st.InPktsOK++;
	}
	if (ebit)
		sc->st.InOctetsDecrypted += t.secure_len;
	else
		sc->st.InOctetsValidated += t.secure_len;
	rx_sa_valid(m, sc, t.an, pn);
	if (!ebit && dst + 12 != sd)
		memmove(dst + 12, sd, t.secure_len);
	macs_move(dst, in);
	*plen = plain_len;
	return st;
}

enum htoe_macsec_rx_status
htoe_macsec_validate(struct htoe_macsec *m, const uint8_t *in, size_t len,
                     uint8_t *out, size_t cap, size_t *out_len,
                     struct htoe_macsec_rx_info *info)
{
	struct htoe_macsec_rx_info dummy;
	size_t off;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (out_len)
		*out_len = 0;
	if (!in || !out || !out_len || overlap(in, len, out, cap))
		return HTOE_MACSEC_RX_NOSPACE;
	return rx_process(m, NULL, in, len, out, cap, &off, out_len, info);
}

enum htoe_macsec_rx_status
htoe_macsec_validate_inplace(struct htoe_macsec *m, uint8_t *frame, size_t len,
                             size_t *plain_off, size_t *plain_len,
                             struct htoe_macsec_rx_info *info)
{
	struct htoe_macsec_rx_info dummy;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!frame || !plain_off || !plain_len)
		return HTOE_MACSEC_RX_NOSPACE;
	return rx_process(m, frame, frame, len, NULL, 0, plain_off, plain_len, info);
}
