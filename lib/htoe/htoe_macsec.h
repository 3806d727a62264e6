/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_macsec: IEEE 802.1AE MACsec (GCM-AES-128/256, GCM-AES-XPN-128/256)
 * as a sans-I/O library. docs/macsec.md is the user-level description.
 *
 * One `struct htoe_macsec` is one SecY (one port of one node):
 *   - one transmit secure channel (TX SC, this node's SCI) with four SAs,
 *     AN 0..3, one of which is the encoding SA;
 *   - one receive secure channel (RX SC) per peer, keyed by the peer's SCI,
 *     each with four SAs (AN 0..3) that are all valid for receive at once.
 *
 * Frame layout (no FCS anywhere in this API):
 *   DA(6) SA(6) | 88E5 TCI/AN SL PN(4) [SCI(8)] | secure data ... | ICV(16)
 *                |<------ SecTAG: 8 or 16 ----->|
 *   secure data = the plain frame's EtherType (or 802.1Q tag) + payload.
 * Confidentiality (E=C=1): AAD = DA SA SecTAG, the secure data is encrypted.
 * Integrity only  (E=C=0): AAD = the whole frame up to the ICV.
 * IV: non-XPN SCI(8)||PN(4); XPN (SSCI^salt[0..3]) || (PN64^salt[4..11]).
 *
 * Transmit: htoe_macsec_protect() (out of place) or
 * htoe_macsec_protect_inplace() (SecTAG inserted after the MACs, ICV
 * appended, using the caller's headroom/tailroom). Every call takes a fresh
 * PN from the encoding SA: a retransmitted frame is simply protected again
 * from its stored plaintext, which gives it a new PN (a byte-identical resend
 * would be dropped as a replay).
 *
 * Receive: htoe_macsec_validate() (out of place) or
 * htoe_macsec_validate_inplace(). The checks run in the order of
 * 802.1AE-2018 10.6 (and Linux drivers/net/macsec.c):
 *   untagged -> bad SecTAG (9.12, incl. Short Length) -> E=1,C=0 reserved
 *   encoding -> unknown SCI -> no SA for the AN -> replay pre-check (late)
 *   -> ICV -> replay post-check
 * and the result is an enum htoe_macsec_rx_status naming the 802.1AE
 * counter it was counted in. On HTOE_MACSEC_RX_OK the output is the plain
 * frame: DA SA + original EtherType + payload (Short-Length padding
 * removed).
 *
 * Replay protection is 802.1AE's, not an IPsec bitmap: per RX SA the lowest
 * acceptable PN is next_pn - replay_window; after a valid frame
 * next_pn = max(next_pn, PN + 1). Duplicates inside the window are accepted
 * (HToE's sequence numbers discard them); window 0 = strictly increasing.
 *
 * Key rollover: install the new SA on the next AN at both ends
 * (htoe_macsec_tx_sa_add / htoe_macsec_rx_sa_add), then switch the sender
 * with htoe_macsec_tx_sa_activate(). The receiver keeps accepting the old
 * SA; once a frame on the new SA is valid, the SAs of that RX SC that were
 * in use before it are retired after replay_window more valid frames on the
 * new one (window 0: at once), unless cfg.rx_keep_old_sa; an SA installed
 * early and never used is not retired. When the encoding SA uses its last
 * PN (0xFFFFFFFF, or 2^64-1 under XPN) it stops for good (never wraps): the
 * event HTOE_MACSEC_EV_TX_PN_EXHAUSTED is queued and, if an SA installed
 * after it sits on the next AN, the TX SC changes over to it
 * (HTOE_MACSEC_EV_TX_SA_CHANGEOVER); otherwise protect fails with
 * HTOE_MACSEC_TX_PN_EXHAUSTED until a new SA is activated. A warning event
 * is queued when the PN passes cfg.pn_warn.
 *
 * Crypto: two backends behind one internal interface, chosen per SA:
 * OpenSSL EVP (reference; one cipher context per SA with the key set once)
 * and intel-ipsec-mb (direct GCM API, key expanded once per SA; much faster
 * per frame). HTOE_MACSEC_BACKEND_AUTO picks ipsec-mb when the library was
 * built with it and it initializes.
 *
 * Memory is allocated only by htoe_macsec_new() and the SA add functions;
 * protect/validate never allocate, do no I/O and read no clock.
 * Threads: not thread-safe, except that the TX path (protect) and the RX
 * path (validate) touch disjoint state, so one thread may transmit while
 * another receives. SA/SC management, statistics and events must not run
 * concurrently with the path they touch.
 */
#ifndef HTOE_MACSEC_H
#define HTOE_MACSEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTOE_MACSEC_ETHERTYPE    0x88E5u
#define HTOE_MACSEC_ICV_LEN      16u
#define HTOE_MACSEC_SECTAG_NOSCI 8u    /* EtherType + TCI/AN + SL + PN */
#define HTOE_MACSEC_SECTAG_SCI   16u   /* ... + SCI */
#define HTOE_MACSEC_OVERHEAD_MAX (HTOE_MACSEC_SECTAG_SCI + HTOE_MACSEC_ICV_LEN)
#define HTOE_MACSEC_AN_COUNT     4u
#define HTOE_MACSEC_PORT_ES      0x0001u /* port of an implicit SCI (MAC SA || 0001) */
#define HTOE_MACSEC_SL_LIMIT     48u   /* SL != 0 iff secure data < 48 octets */
#define HTOE_MACSEC_SALT_LEN     12u
#define HTOE_MACSEC_KEY_MAX      32u

/* TCI/AN octet */
#define HTOE_MACSEC_TCI_V    0x80u  /* version, must be 0 */
#define HTOE_MACSEC_TCI_ES   0x40u  /* end station: SCI = MAC SA || 0001, not sent */
#define HTOE_MACSEC_TCI_SC   0x20u  /* SCI present */
#define HTOE_MACSEC_TCI_SCB  0x10u  /* single copy broadcast: SCI not sent */
#define HTOE_MACSEC_TCI_E    0x08u  /* encrypted */
#define HTOE_MACSEC_TCI_C    0x04u  /* changed text */
#define HTOE_MACSEC_AN_MASK  0x03u

/* ---- SCI helpers (an SCI is a 64-bit big-endian value: MAC(48) || port(16)) */

uint64_t htoe_macsec_sci(const uint8_t mac[6], uint16_t port);
uint64_t htoe_macsec_sci_get(const uint8_t p[8]);
void htoe_macsec_sci_put(uint8_t p[8], uint64_t sci);

/* ---- SecTAG encode/decode ------------------------------------------------- */

struct htoe_macsec_sectag {
	uint8_t  tci;        /* TCI bits V ES SC SCB E C as in the octet (& 0xFC) */
	uint8_t  an;         /* 0..3 */
	uint8_t  sl;         /* short length, 0 or 1..47 */
	uint32_t pn;         /* PN as sent (XPN: the low 32 bits) */
	uint64_t sci;        /* effective SCI: the SecTAG's when SC=1, else
	                      * MAC SA || HTOE_MACSEC_PORT_ES */
	/* filled by htoe_macsec_sectag_parse(): */
	uint8_t  len;        /* SecTAG octets incl. the EtherType: 8 or 16 */
	size_t   secure_len; /* secure data octets (between SecTAG and ICV) */
	size_t   frame_len;  /* the frame without MAC padding:
	                      * 12 + len + secure_len + ICV */
};

/* Writes the SecTAG (from the MACsec EtherType on) at p; the SCI is written
 * iff tci has SC. Returns its length (8 or 16), or -EINVAL (an > 3,
 * sl > 47, tci bits outside 0xFC) / -ENOSPC (cap too small). */
int htoe_macsec_sectag_write(uint8_t *p, size_t cap, const struct htoe_macsec_sectag *t);

/* Short Length for a secure-data length (0 when >= 48). */
static inline uint8_t htoe_macsec_sl(size_t secure_len)
{
	return secure_len < HTOE_MACSEC_SL_LIMIT ? (uint8_t)secure_len : 0;
}

/* Parses and checks the SecTAG of a frame (starting at DA), 802.1AE 9.12:
 * returns HTOE_MACSEC_RX_OK, HTOE_MACSEC_RX_NO_TAG (not EtherType 88E5, or
 * shorter than 14 octets) or HTOE_MACSEC_RX_BAD_TAG (V=1; ES or SCB with SC;
 * reserved SL bits; SL >= 48; PN = 0 unless xpn; too short; SL != 0 and the
 * frame shorter than 12 + SecTAG + SL + 16; SL = 0 and fewer than 48 octets
 * of secure data). With SL != 0 the bytes after 12 + SecTAG + SL + 16 are
 * MAC padding: t->frame_len excludes them. */
int htoe_macsec_sectag_parse(const uint8_t *frame, size_t len, bool xpn,
                             struct htoe_macsec_sectag *t);

/* ---- configuration ------------------------------------------------------- */

enum htoe_macsec_cipher {
	HTOE_MACSEC_GCM_AES_128 = 0,   /* 16-octet key */
	HTOE_MACSEC_GCM_AES_256,       /* 32-octet key */
	HTOE_MACSEC_GCM_AES_XPN_128,   /* 16-octet key, 64-bit PN, SSCI, salt */
	HTOE_MACSEC_GCM_AES_XPN_256,   /* 32-octet key, 64-bit PN, SSCI, salt */
};

static inline bool htoe_macsec_cipher_xpn(enum htoe_macsec_cipher c)
{
	return c == HTOE_MACSEC_GCM_AES_XPN_128 || c == HTOE_MACSEC_GCM_AES_XPN_256;
}

static inline size_t htoe_macsec_cipher_key_len(enum htoe_macsec_cipher c)
{
	return (c == HTOE_MACSEC_GCM_AES_256 || c == HTOE_MACSEC_GCM_AES_XPN_256) ? 32 : 16;
}

/* "gcm-aes-128", ... ; NULL for an invalid value. */
const char *htoe_macsec_cipher_name(enum htoe_macsec_cipher c);
/* Parses those names (case-insensitive, also "GCM-AES-XPN-128"); -EINVAL. */
int htoe_macsec_cipher_parse(const char *s, enum htoe_macsec_cipher *c);

enum htoe_macsec_backend {
	HTOE_MACSEC_BACKEND_AUTO = 0,  /* ipsec-mb if available, else OpenSSL */
	HTOE_MACSEC_BACKEND_OPENSSL,
	HTOE_MACSEC_BACKEND_IPSECMB,
};

bool htoe_macsec_backend_available(enum htoe_macsec_backend b);
const char *htoe_macsec_backend_name(enum htoe_macsec_backend b);
/* What AUTO resolves to in this build/on this machine. */
enum htoe_macsec_backend htoe_macsec_backend_auto(void);

/* How the TX SC identifies itself in the SecTAG. */
enum htoe_macsec_tx_sci {
	HTOE_MACSEC_TX_SCI_EXPLICIT = 0, /* SC=1: SCI in every frame (+8 octets) */
	HTOE_MACSEC_TX_SCI_ES,           /* ES=1: no SCI; SCI must be MAC SA || 0001 */
	HTOE_MACSEC_TX_SCI_IMPLICIT,     /* ES=SC=SCB=0: no SCI; the receiver takes
	                                  * MAC SA || 0001 (point to point only) */
};

/* validateFrames (802.1AE 10.7.8). The project runs Strict. */
enum htoe_macsec_validate_mode {
	HTOE_MACSEC_VALIDATE_STRICT = 0,
	HTOE_MACSEC_VALIDATE_CHECK,
	HTOE_MACSEC_VALIDATE_DISABLED,
};

/* A zeroed struct is a valid default: GCM-AES-128, confidentiality, SCI in
 * every frame, Strict, replay protection on with window 0, OpenSSL/ipsec-mb
 * chosen automatically. */
struct htoe_macsec_cfg {
	enum htoe_macsec_cipher cipher;
	bool     integrity_only;       /* TX: E=C=0 (default: E=C=1) */
	enum htoe_macsec_tx_sci tx_sci_mode;
	uint64_t sci;                  /* this SecY's (TX SC's) SCI */
	bool     tx_bypass;            /* protectFrames = False: frames go out
	                                * untagged (OutPktsUntagged) */
	enum htoe_macsec_validate_mode validate;
	bool     no_replay_protect;    /* replayProtect = False (InPktsDelayed) */
	uint32_t replay_window;        /* <= 2^30 under XPN */
	unsigned max_rx_sc;            /* RX SCs (peers) this SecY can hold; 0 = 64 */
	size_t   max_frame_len;        /* protected frame (no FCS) longer than
	                                * this: OutPktsTooLong; 0 = no limit */
	uint64_t pn_warn;              /* TX PN at which HTOE_MACSEC_EV_TX_PN_THRESHOLD
	                                * is queued; 0 = 0xC0000000 (XPN:
	                                * 0xC000000000000000) */
	bool     rx_keep_old_sa;       /* never retire older RX SAs automatically */
	enum htoe_macsec_backend backend; /* default for SAs with AUTO */
};

/* One SA's parameters (TX or RX). */
struct htoe_macsec_sa_cfg {
	const uint8_t *key;            /* the SAK, copied */
	size_t   key_len;              /* 16 or 32, must match the cipher suite */
	uint64_t pn;                   /* TX: first PN to send; RX: lowest
	                                * acceptable PN; 0 means 1. Non-XPN:
	                                * <= 0xFFFFFFFF */
	uint32_t ssci;                 /* XPN: short SCI of the SC using the SA */
	uint8_t  salt[HTOE_MACSEC_SALT_LEN]; /* XPN */
	enum htoe_macsec_backend backend; /* AUTO: cfg.backend */
};

struct htoe_macsec;

/* Creates a SecY. NULL on error (*err, if given: -EINVAL, -ENOMEM). */
struct htoe_macsec *htoe_macsec_new(const struct htoe_macsec_cfg *cfg, int *err);
/* Frees it, wiping every key. NULL is fine. */
void htoe_macsec_free(struct htoe_macsec *m);
const struct htoe_macsec_cfg *htoe_macsec_cfg(const struct htoe_macsec *m);

/* TX SAs. _add installs (or replaces) the SA on an AN; it becomes the
 * encoding SA only through _activate, except the very first TX SA of the
 * SecY, which is activated at once. Replacing or deleting the encoding SA:
 * -EBUSY. -EINVAL: bad AN, key length, PN. -ENOMEM, -EIO (crypto backend
 * could not be set up), -ENOTSUP (backend not built). */
int htoe_macsec_tx_sa_add(struct htoe_macsec *m, unsigned an,
                          const struct htoe_macsec_sa_cfg *sa);
int htoe_macsec_tx_sa_activate(struct htoe_macsec *m, unsigned an);
int htoe_macsec_tx_sa_del(struct htoe_macsec *m, unsigned an);
/* The encoding AN, or -ENOENT if none. */
int htoe_macsec_tx_encoding_an(const struct htoe_macsec *m);
/* SecTAG length this SecY sends (8 or 16): the headroom protect needs. */
size_t htoe_macsec_tx_sectag_len(const struct htoe_macsec *m);

/* RX SCs and SAs. -EEXIST, -ENOENT, -ENOSPC (max_rx_sc reached). An RX SA
 * added to a slot replaces the previous one (that key is gone). */
int htoe_macsec_rx_sc_add(struct htoe_macsec *m, uint64_t sci);
int htoe_macsec_rx_sc_del(struct htoe_macsec *m, uint64_t sci);
int htoe_macsec_rx_sa_add(struct htoe_macsec *m, uint64_t sci, unsigned an,
                          const struct htoe_macsec_sa_cfg *sa);
int htoe_macsec_rx_sa_del(struct htoe_macsec *m, uint64_t sci, unsigned an);

struct htoe_macsec_sa_state {
	bool     installed;
	bool     active;     /* TX: the encoding SA; RX: valid for receive */
	bool     in_use;     /* at least one frame protected / validated */
	bool     exhausted;  /* TX: last PN used; RX: next_pn past the PN space */
	uint64_t next_pn;    /* TX: next PN to send; RX: lowest acceptable
	                      * PN + replay_window */
	enum htoe_macsec_backend backend; /* the resolved backend */
};
int htoe_macsec_tx_sa_state(const struct htoe_macsec *m, unsigned an,
                            struct htoe_macsec_sa_state *st);
int htoe_macsec_rx_sa_state(const struct htoe_macsec *m, uint64_t sci, unsigned an,
                            struct htoe_macsec_sa_state *st);

/* ---- transmit --------------------------------------------------------------- */

enum htoe_macsec_tx_status {
	HTOE_MACSEC_TX_OK = 0,        /* protected */
	HTOE_MACSEC_TX_UNTAGGED,      /* cfg.tx_bypass: sent as is (OutPktsUntagged) */
	/* not sent: */
	HTOE_MACSEC_TX_NO_SA,         /* no encoding SA (OutPktsNoSA) */
	HTOE_MACSEC_TX_PN_EXHAUSTED,  /* encoding SA out of PNs (OutPktsPNExhausted) */
	HTOE_MACSEC_TX_TOO_LONG,      /* > cfg.max_frame_len (OutPktsTooLong) */
	HTOE_MACSEC_TX_SCI_MISMATCH,  /* ES/implicit SCI and the frame's MAC SA is
	                               * not the SCI's address (no counter) */
	HTOE_MACSEC_TX_BAD_FRAME,     /* shorter than 14 octets (no counter) */
	HTOE_MACSEC_TX_NOSPACE,       /* buffer/head/tailroom too small (no counter) */
	HTOE_MACSEC_TX_CRYPTO,        /* crypto backend failure (no counter) */
	HTOE_MACSEC_TX_STATUS_COUNT
};

static inline bool htoe_macsec_tx_sent(int st)
{
	return st == HTOE_MACSEC_TX_OK || st == HTOE_MACSEC_TX_UNTAGGED;
}
const char *htoe_macsec_tx_status_name(int st);

struct htoe_macsec_tx_info {
	uint8_t  an;
	uint64_t pn;            /* full PN used (XPN: 64 bits) */
	uint8_t  sectag_len;    /* 8 or 16 */
};

/* Out of place: protects the plain frame in[0..len) (DA SA EtherType
 * payload) into out (cap octets; needs len + SecTAG + 16). in and out must
 * not overlap. *out_len is the protected length. info may be NULL. */
enum htoe_macsec_tx_status
htoe_macsec_protect(struct htoe_macsec *m, const uint8_t *in, size_t len,
                    uint8_t *out, size_t cap, size_t *out_len,
                    struct htoe_macsec_tx_info *info);

/* In place: the plain frame is buf[*off .. *off + *len) in a buffer of
 * buf_len octets. With *off >= SecTAG length (htoe_macsec_tx_sectag_len) the
 * MAC addresses move into the headroom and the secure data stays put (the
 * mbuf way: rte_pktmbuf_prepend + append); otherwise the secure data moves
 * towards the tail. The ICV needs 16 octets of tailroom. On success *off and
 * *len describe the protected frame; on failure the buffer is unchanged. */
enum htoe_macsec_tx_status
htoe_macsec_protect_inplace(struct htoe_macsec *m, uint8_t *buf, size_t buf_len,
                            size_t *off, size_t *len,
                            struct htoe_macsec_tx_info *info);

/* ---- receive ---------------------------------------------------------------- */

enum htoe_macsec_rx_status {
	HTOE_MACSEC_RX_OK = 0,         /* InPktsOK: valid; plaintext delivered */
	/* delivered, but not (fully) validated; only outside the defaults: */
	HTOE_MACSEC_RX_DELAYED,        /* InPktsDelayed: valid, PN below the window
	                                * and replay protection off */
	HTOE_MACSEC_RX_UNCHECKED,      /* InPktsUnchecked: validation Disabled, C=0 */
	HTOE_MACSEC_RX_INVALID,        /* InPktsInvalid: bad ICV, Check mode, C=0 */
	HTOE_MACSEC_RX_UNKNOWN_SCI,    /* InPktsUnknownSCI: not Strict, C=0 */
	HTOE_MACSEC_RX_UNUSED_SA,      /* InPktsUnusedSA: not Strict, C=0 */
	HTOE_MACSEC_RX_UNTAGGED,       /* InPktsUntagged: not MACsec, not Strict;
	                                * the frame is delivered unchanged */
	HTOE_MACSEC_RX_UNCONTROLLED,   /* E=1 C=0 (reserved: not for the controlled
	                                * port): passed on unchanged, no counter */
	/* dropped: */
	HTOE_MACSEC_RX_NO_TAG,         /* InPktsNoTag: not MACsec (Strict) */
	HTOE_MACSEC_RX_BAD_TAG,        /* InPktsBadTag: SecTAG invalid (9.12) */
	HTOE_MACSEC_RX_NO_SCI,         /* InPktsNoSCI: unknown SCI */
	HTOE_MACSEC_RX_NOT_USING_SA,   /* InPktsNotUsingSA: no active SA for the AN */
	HTOE_MACSEC_RX_LATE,           /* InPktsLate: PN below the replay window */
	HTOE_MACSEC_RX_NOT_VALID,      /* InPktsNotValid: ICV check failed */
	HTOE_MACSEC_RX_SCI_MISMATCH,   /* InPktsSCIMismatch (htoe): valid, but the
	                                * RX SC is bound to a node
	                                * (htoe_macsec_rx_sc_bind) and the HToE
	                                * frame inside claims another source node */
	HTOE_MACSEC_RX_NOSPACE,        /* output buffer too small (caller bug; no
	                                * counter, no state change) */
	HTOE_MACSEC_RX_STATUS_COUNT
};

/* The frame goes to the controlled port (OK and the non-Strict cases). */
static inline bool htoe_macsec_rx_delivered(int st)
{
	return st >= HTOE_MACSEC_RX_OK && st <= HTOE_MACSEC_RX_UNTAGGED;
}
/* "InPktsOK", "InPktsLate", ... (the counter), "Uncontrolled", "NoSpace". */
const char *htoe_macsec_rx_status_name(int st);

struct htoe_macsec_rx_info {
	uint8_t  tci_an;        /* as received (0 if no SecTAG) */
	uint8_t  an;
	uint8_t  sectag_len;
	uint64_t sci;           /* effective SCI (0 if no SecTAG) */
	uint64_t pn;            /* full PN (XPN: recovered 64 bits) */
};

/* Out of place: validates in[0..len) and writes the plain frame to out
 * (cap octets; len is always enough). in and out must not overlap. On a
 * drop nothing is delivered (*out_len = 0) and the input is unchanged. */
enum htoe_macsec_rx_status
htoe_macsec_validate(struct htoe_macsec *m, const uint8_t *in, size_t len,
                     uint8_t *out, size_t cap, size_t *out_len,
                     struct htoe_macsec_rx_info *info);

/* In place: on delivery the plain frame is frame[*plain_off ..
 * *plain_off + *plain_len): the MACs move forward over the SecTAG (the
 * mbuf way: rte_pktmbuf_adj(*plain_off) then trim to *plain_len). If the
 * ICV check fails after decryption in place, the secure data is zeroed (no
 * unauthenticated plaintext is left behind); other drops leave the frame
 * unchanged. */
enum htoe_macsec_rx_status
htoe_macsec_validate_inplace(struct htoe_macsec *m, uint8_t *frame, size_t len,
                             size_t *plain_off, size_t *plain_len,
                             struct htoe_macsec_rx_info *info);

/* ---- HToE node binding ----------------------------------------------------
 * An RX SC speaks for one HToE node: once bound, a frame that validates on
 * it is delivered only if its plaintext is an HToE frame (EtherType 88B5,
 * after at most one 802.1Q tag) whose header's source node is `node`.
 * Anything else is dropped as HTOE_MACSEC_RX_SCI_MISMATCH and counted in the
 * RX SC's InPktsSCIMismatch, before the RX SA's state changes (its replay
 * window does not move; an in-place plaintext is wiped). With one SAK shared
 * by all members this stops a member that sends under its own SCI while
 * claiming another node id; pairwise SAKs are needed against a member that
 * also forges the SCI (docs/macsec.md, "What each mode protects against").
 * -ENOENT: no RX SC with that SCI. */
int htoe_macsec_rx_sc_bind(struct htoe_macsec *m, uint64_t sci, uint16_t node);

/* ---- key derivation (IEEE 802.1X-2010 6.2.1) --------------------------------
 * KDF(Key, Label, Context, Length) = SP 800-108 counter mode with AES-CMAC:
 * block i = AES-CMAC(key, i(8 bits) || label || 0x00 || context ||
 * out_len*8 (16 bits, big-endian)), i = 1, 2, ...; out = the blocks cut to
 * out_len octets. key: 16 or 32 octets (AES-128/256-CMAC, OpenSSL). For
 * set-up only (allocates). 0, -EINVAL, -EIO (OpenSSL failure). */
int htoe_macsec_kdf(const uint8_t *key, size_t key_len, const void *label, size_t label_len,
                    const uint8_t *context, size_t context_len, uint8_t *out, size_t out_len);

/* Pairwise SAKs: the SAK node tx_node uses for the frames it sends to
 * rx_node on AN an is
 *   KDF(master, "HToE pairwise SAK", tx_node(2) || rx_node(2) || an(1), 8*sak_len)
 * (node ids big-endian). -EINVAL also for tx_node == rx_node or an > 3. */
#define HTOE_MACSEC_PAIRWISE_LABEL   "HToE pairwise SAK"
#define HTOE_MACSEC_PAIRWISE_CTX_LEN 5u
void htoe_macsec_pairwise_context(uint16_t tx_node, uint16_t rx_node, unsigned an,
                                  uint8_t ctx[HTOE_MACSEC_PAIRWISE_CTX_LEN]);
int htoe_macsec_pairwise_sak(const uint8_t *master, size_t master_len, uint16_t tx_node,
                             uint16_t rx_node, unsigned an, uint8_t *sak, size_t sak_len);

/* ---- key files ----------------------------------------------------------------
 * One line of a key file (htoe-bridge key_file and htoe-pcap --key-file
 * share the format; docs/macsec.md): '#' or ';' starts a comment; then
 *   HEX                 a bare key                       -> KEY, an = -1
 *   key = HEX, keyN/anN = HEX (N = AN 0..3)              -> KEY, an
 *   keyN A>B = HEX      pairwise SAK from node A to B    -> PAIR, an, from, to
 *   master_key = HEX    the pairwise master key          -> MASTER
 *   salt = HEX          the XPN salt                     -> SALT
 * Blank and comment lines are EMPTY. val/len: the value, up to 32 octets
 * (the caller checks the length it needs). ERROR: err says what is wrong;
 * a value is never quoted. The line is modified. */
enum htoe_macsec_keyline_kind {
	HTOE_MACSEC_KL_EMPTY = 0, HTOE_MACSEC_KL_KEY, HTOE_MACSEC_KL_PAIR, HTOE_MACSEC_KL_MASTER,
	HTOE_MACSEC_KL_SALT, HTOE_MACSEC_KL_ERROR,
};
struct htoe_macsec_keyline {
	enum htoe_macsec_keyline_kind kind;
	int      an;
	uint16_t from, to;
	uint8_t  val[HTOE_MACSEC_KEY_MAX];
	size_t   len;
	char     name[41];       /* the name as written (cut), for messages */
	const char *err;
};
enum htoe_macsec_keyline_kind htoe_macsec_keyline_parse(char *line,
                                                        struct htoe_macsec_keyline *kl);
/* HEX into out[cap]: an optional 0x, then octets of two hex digits, one ':'
 * or '-' allowed between two octets (an SCI 024854000001:0001, a MAC
 * 02:48:54:00:00:01). The number of octets, or -1 (not hex, an odd digit, a
 * separator elsewhere, empty, longer than cap). */
int htoe_macsec_unhex(const char *s, uint8_t *out, size_t cap);

/* ---- events ----------------------------------------------------------------- */

enum htoe_macsec_event_type {
	HTOE_MACSEC_EV_TX_PN_THRESHOLD = 1, /* encoding SA passed cfg.pn_warn:
	                                     * install the next SA */
	HTOE_MACSEC_EV_TX_PN_EXHAUSTED,     /* TX SA `an` used its last PN and is
	                                     * stopped for good */
	HTOE_MACSEC_EV_TX_SA_CHANGEOVER,    /* encoding SA prev_an -> an */
	HTOE_MACSEC_EV_RX_SA_IN_USE,        /* first valid frame on RX SA (sci, an) */
	HTOE_MACSEC_EV_RX_SA_RETIRED,       /* RX SA (sci, an) retired because the
	                                     * newer SA (sci, prev_an) is in use */
	HTOE_MACSEC_EV_RX_PN_EXHAUSTED,     /* RX SA (sci, an) accepted the last PN */
};

struct htoe_macsec_event {
	enum htoe_macsec_event_type type;
	uint64_t sci;           /* TX events: the SecY's SCI */
	uint8_t  an;
	uint8_t  prev_an;       /* CHANGEOVER: the old encoding AN (0xFF: none);
	                         * RX_SA_RETIRED: the AN now in use */
	uint64_t pn;            /* the PN concerned */
};

/* Pops the oldest event (TX events first). Each direction queues up to 16;
 * older ones are dropped beyond that (htoe_macsec_events_lost). */
bool htoe_macsec_event_next(struct htoe_macsec *m, struct htoe_macsec_event *ev);
uint64_t htoe_macsec_events_lost(const struct htoe_macsec *m);
const char *htoe_macsec_event_name(enum htoe_macsec_event_type t);

/* ---- counters (802.1AE 10.7 names; extensions marked) ------------------------- */

struct htoe_macsec_secy_stats {
	uint64_t OutPktsUntagged, OutPktsTooLong;
	uint64_t OutPktsNoSA;          /* htoe: no encoding SA */
	uint64_t OutPktsPNExhausted;   /* htoe: encoding SA out of PNs */
	uint64_t InPktsUntagged, InPktsNoTag, InPktsBadTag, InPktsUnknownSCI,
	         InPktsNoSCI, InPktsOverrun;
};
struct htoe_macsec_tx_sc_stats {
	uint64_t OutPktsProtected, OutPktsEncrypted, OutOctetsProtected,
	         OutOctetsEncrypted;
};
struct htoe_macsec_tx_sa_stats {
	uint64_t OutPktsProtected, OutPktsEncrypted;
};
struct htoe_macsec_rx_sc_stats {
	uint64_t InOctetsValidated, InOctetsDecrypted, InPktsUnchecked,
	         InPktsDelayed, InPktsOK, InPktsInvalid, InPktsLate,
	         InPktsNotValid, InPktsNotUsingSA, InPktsUnusedSA;
	uint64_t InPktsSCIMismatch;    /* htoe: valid frame claiming another node */
};
struct htoe_macsec_rx_sa_stats {
	uint64_t InPktsOK, InPktsInvalid, InPktsNotValid, InPktsNotUsingSA,
	         InPktsUnusedSA;
};

/* Everything at SecY level: the SecY counters, the TX SC's and the sum of
 * every RX SC's (including RX SCs deleted since). Octet counters count user
 * data (the secure data: inner EtherType + payload). */
struct htoe_macsec_stats {
	struct htoe_macsec_secy_stats secy;
	struct htoe_macsec_tx_sc_stats tx;
	struct htoe_macsec_rx_sc_stats rx;
};

void htoe_macsec_stats(const struct htoe_macsec *m, struct htoe_macsec_stats *s);
int htoe_macsec_tx_sa_stats(const struct htoe_macsec *m, unsigned an,
                            struct htoe_macsec_tx_sa_stats *s);
int htoe_macsec_rx_sc_stats(const struct htoe_macsec *m, uint64_t sci,
                            struct htoe_macsec_rx_sc_stats *s);
int htoe_macsec_rx_sa_stats(const struct htoe_macsec *m, uint64_t sci, unsigned an,
                            struct htoe_macsec_rx_sa_stats *s);

/* Name/offset table of struct htoe_macsec_stats for telemetry and JSON. */
struct htoe_macsec_counter_desc {
	const char *name;     /* e.g. "InPktsOK" */
	size_t offset;        /* of a uint64_t in struct htoe_macsec_stats */
};
extern const struct htoe_macsec_counter_desc htoe_macsec_counters[];
extern const size_t htoe_macsec_counters_count;

#endif /* HTOE_MACSEC_H */
