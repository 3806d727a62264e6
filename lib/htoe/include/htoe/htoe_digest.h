/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_digest: memory digest messages, carried in CTRL frames
 * (htoe_ctrl_send/htoe_ctrl_recv): a node asks a peer for the CRC32C of a
 * range of the peer's exported memory and compares it with what it expects
 * there (a verified workload's shadow), so that two processes end a run
 * knowing whether the memory one of them wrote is what the other holds.
 * docs/wire-format.md ("Digest messages") has the byte layout.
 *
 * Sans-I/O: encoding, decoding and the answer (a CRC of memory the caller
 * hands in); no clock, no state. Retries, matching and what the answer means
 * are the caller's (htoe-bridge: app/node/peercheck.c).
 */
#ifndef HTOE_DIGEST_H
#define HTOE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define HTOE_DIGEST_PROTO   0x44u  /* 'D': first byte of every digest message */
#define HTOE_DIGEST_VERSION 1u
#define HTOE_DIGEST_MSG_LEN 32u    /* bytes of a version-1 message (exactly) */

enum htoe_digest_type {
	HTOE_DIGEST_REQUEST = 1,   /* the CRC32C of [offset, +len) of your memory, please */
	HTOE_DIGEST_ANSWER = 2,    /* here it is (status OK), or why not */
};

enum htoe_digest_status {
	HTOE_DIGEST_OK = 0,
	HTOE_DIGEST_E_RANGE = 1,   /* the range is not inside the exported memory */
	HTOE_DIGEST_E_NOMEM = 2,   /* the node exports no memory */
	HTOE_DIGEST_E_FULL = 3,    /* the node keeps no more ranges (it records what it answered) */
};

struct htoe_digest_msg {
	uint8_t  type;         /* enum htoe_digest_type */
	uint8_t  status;       /* enum htoe_digest_status; 0 in a REQUEST */
	uint32_t session;      /* the asker's incarnation; echoed */
	uint32_t id;           /* chosen by the asker, one per range; echoed */
	uint32_t crc;          /* ANSWER with status OK: CRC32C of the range; else 0 */
	uint64_t offset;       /* the range: offset in the answering node's exported memory */
	uint64_t len;          /* bytes, > 0 */
};

/* Encode into buf (cap >= HTOE_DIGEST_MSG_LEN): the length, or -ENOSPC. */
int htoe_digest_encode(const struct htoe_digest_msg *m, uint8_t *buf, size_t cap);
/* Decode: 0, or -EPROTO (not a digest message: protocol byte),
 * -EPROTONOSUPPORT (version), -EBADMSG (length not 32, unknown type or
 * status, len 0, offset + len wraps, a REQUEST with a status or a CRC). */
int htoe_digest_decode(const uint8_t *buf, size_t len, struct htoe_digest_msg *m);
/* The answer to REQUEST q from memory mem[0, mem_size): status OK and the
 * CRC32C of the range, or E_NOMEM / E_RANGE (crc 0). Session and id echoed. */
void htoe_digest_answer(const struct htoe_digest_msg *q, const uint8_t *mem, uint64_t mem_size,
			struct htoe_digest_msg *a);
/* "ok", "range", "nomem", "full", or "?" */
const char *htoe_digest_status_name(unsigned status);

#endif
