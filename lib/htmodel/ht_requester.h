/* SPDX-License-Identifier: BSD-3-Clause
 * HT requester: turns memory operations into HT request packets, owns the
 * SrcTag space (32 tags per UnitID, one or more UnitIDs: "clumping"), keeps
 * the outstanding table and turns responses into completions.
 *
 * Sans-I/O: ht_req_issue() fills a struct ht_pkt the caller queues on a link
 * (or anything else); ht_req_rx() takes a response packet and fills a
 * struct ht_completion. Responses are matched by (UnitID, SrcTag) in any
 * order. No allocation, no global state.
 */
#ifndef HT_REQUESTER_H
#define HT_REQUESTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ht_packet.h"

#define HT_REQ_MAX_UNITIDS 8u
#define HT_REQ_TAGS        32u

enum ht_op_type {
	HT_OP_READ = 0,   /* RdSized dword (aligned multiple of 4) or byte (1..4 in one dword) */
	HT_OP_WRITE_P,    /* posted WrSized: no tag, no completion */
	HT_OP_WRITE_NP,   /* non-posted WrSized: TgtDone */
	HT_OP_FLUSH,      /* Flush: TgtDone once earlier posted writes are visible */
	HT_OP_FENCE,      /* Fence (posted): no tag, no completion */
	HT_OP_FETCH_ADD,  /* Atomic Count=1: returns the old qword */
	HT_OP_CAS,        /* Atomic Count=3: compare, swap; returns the old qword */
	HT_OP__COUNT
};

/* "rd", "wrp", "wrn", "flush", "fence", "fadd", "cas" */
const char *ht_op_name(enum ht_op_type t);

/* One memory operation; must fit one HT packet (see ht_op_check). */
struct ht_op {
	uint8_t  type;        /* enum ht_op_type */
	uint8_t  passpw;      /* request PassPW (0 keeps it behind earlier posted writes) */
	uint8_t  rsp_passpw;  /* reads: ResponsePassPW (the response may pass posted) */
	uint32_t len;         /* read/write: bytes */
	uint64_t addr;        /* byte address (64-bit: the codec adds the 0x3E prefix) */
	uint64_t cookie;      /* caller's, returned in the completion */
	uint64_t operand[2];  /* fetch-add: [0] addend; CAS: [0] compare, [1] swap */
	uint8_t  data[HT_MAX_DATA]; /* write data: data[i] goes to addr + i */
};

/* Validates an op: 0 if it fits one packet, -EINVAL otherwise.
 *  read:  len 4..64, multiple of 4, addr 4-aligned, not crossing 64 B
 *         (RdSized dword), or 1..4 bytes inside one dword (RdSized byte);
 *  write: the same dword form (WrSized dword), else any 1..32 bytes inside
 *         one naturally aligned 32-byte window (WrSized byte + mask);
 *  atomics: addr 8-aligned; flush/fence: no address. */
int ht_op_check(const struct ht_op *op);
/* The VC the op's request travels in (P for posted write and fence, else NP). */
enum ht_vc ht_op_vc(const struct ht_op *op);
/* True for ops that take a tag and produce a completion. */
inline bool ht_op_nonposted(enum ht_op_type t)
{
	return t != HT_OP_WRITE_P && t != HT_OP_FENCE && (unsigned)t < HT_OP__COUNT;
}

/*
 * Split a read or write of any length into legal single-packet ops (helper).
 * type is HT_OP_READ, HT_OP_WRITE_P or HT_OP_WRITE_NP; data (writes) holds len
 * bytes. Returns the number of ops written to out[0..max), -EINVAL for a bad
 * type/length, -ENOSPC if max is too small. Each op gets cookie `cookie`.
 */
int ht_op_split(enum ht_op_type type, uint64_t addr, uint32_t len, const uint8_t *data,
		uint64_t cookie, struct ht_op *out, unsigned max);

struct ht_req_cfg {
	unsigned n_unitids;                  /* 1..HT_REQ_MAX_UNITIDS */
	uint8_t  unitids[HT_REQ_MAX_UNITIDS]; /* distinct, 0..31; unitids[0] sends posted ops */
};

struct ht_completion {
	uint64_t cookie;
	uint64_t addr;
	uint8_t  type;     /* enum ht_op_type */
	uint8_t  status;   /* enum ht_rsp_err from Error0/Error1 */
	uint8_t  unitid, srctag;
	uint16_t len;      /* valid bytes at rdata: read length, 8 for atomics, 0 otherwise */
	/* The read data (byte read: only the requested bytes); atomics: the old
	 * value, little-endian. Read it with ht_completion_data(). ht_req_rx
	 * copies it into data[] (rdata NULL); ht_req_rx_desc does not copy it:
	 * rdata points into the response's bytes (valid as long as they are). */
	const uint8_t *rdata;
	uint8_t  data[HT_MAX_DATA];
};

/* The len bytes of read data of a completion (see rdata). */
static inline const uint8_t *ht_completion_data(const struct ht_completion *c)
{
	return c->rdata ? c->rdata : c->data;
}

/* Old value of an atomic completion. */
uint64_t ht_completion_u64(const struct ht_completion *c);

struct ht_req_entry {
	uint64_t cookie;
	uint64_t addr;     /* the op's byte address */
	uint8_t  type;
	uint8_t  len;      /* bytes requested (reads) */
	uint8_t  dword;    /* read: dword form */
	uint8_t  count;    /* expected RdResponse Count */
};

struct ht_req_stats {
	uint64_t issued[HT_OP__COUNT];
	uint64_t completed[HT_OP__COUNT];
	uint64_t status[4];     /* completions by enum ht_rsp_err */
	uint64_t no_tag;        /* ht_req_issue() returned -EAGAIN */
	uint64_t invalid;       /* ht_req_issue() returned -EINVAL */
	uint64_t unexpected;    /* response with no matching outstanding tag (rejected) */
	uint64_t malformed;     /* response of the wrong kind/Count for its tag: completed as data error */
	uint64_t not_response;  /* ht_req_rx() given a non-response packet */
	uint64_t unissued;      /* tags given back with ht_req_unissue() */
};

struct ht_requester {
	struct ht_req_cfg cfg;
	int8_t   unit_ix[HT_UNITIDS];         /* UnitID -> its index in cfg.unitids, or -1 */
	uint32_t inuse[HT_REQ_MAX_UNITIDS];   /* tag bitmap per UnitID */
	uint8_t  next_tag[HT_REQ_MAX_UNITIDS];
	unsigned next_unit;                   /* round-robin over the UnitIDs */
	unsigned outstanding;
	struct ht_req_entry tab[HT_REQ_MAX_UNITIDS][HT_REQ_TAGS];
	struct ht_req_stats st;
};

/* 0, or -EINVAL for a bad config (no UnitID, too many, duplicate, > 31). */
int ht_req_init(struct ht_requester *r, const struct ht_req_cfg *cfg);

/*
 * Build the request packet for op into *out (Coherent=1 on sized requests,
 * SeqID 0, Compat 0, Isoc 0). Non-posted ops take a (UnitID, SrcTag) and enter
 * the outstanding table. Returns 0; -EAGAIN when every tag of every UnitID is
 * in use; -EINVAL when the op does not fit one packet.
 */
int ht_req_issue(struct ht_requester *r, const struct ht_op *op, struct ht_pkt *out);

/* Give back the tag of a request built by ht_req_issue() that was never sent
 * (e.g. the link queue was full). 0, or -ENOENT if it holds no tag. */
int ht_req_unissue(struct ht_requester *r, const struct ht_pkt *req);

/*
 * A response packet (RdResponse/TgtDone). Returns 1 and fills *out when it
 * matches an outstanding (UnitID, SrcTag); the tag is free again. Returns
 * -ENOENT (counted, nothing changes) for an unexpected response and -EINVAL
 * for a packet that is not a response. A response whose kind or Count does
 * not fit its request completes the op with status data error (counted as
 * malformed) so that the tag is not lost.
 */
int ht_req_rx(struct ht_requester *r, const struct ht_pkt *rsp, struct ht_completion *out);

/*
 * The same three steps on bytes, for drivers that move encoded packets
 * (app/node): no struct ht_pkt on the common path.
 *
 * ht_req_issue_enc: ht_req_issue() with the completion cookie `cookie`
 * (instead of op->cookie, so a caller can tag a borrowed op) and the request
 * encoded into buf[0..cap) (cap >= HT_MAX_PKT_LEN always fits). Reads and
 * dword writes below 2^40 are encoded directly (ht_enc_sized), the rest via
 * ht_encode. Returns the request length, -EAGAIN (no tag), -EINVAL (the op
 * does not fit one packet) or -ENOSPC (cap too small; nothing taken).
 *
 * ht_req_issue_desc: ht_req_issue_enc, and on success *d describes the
 * bytes as ht_desc_parse() would (filled from the fields it encoded; a
 * parse only on the table-driven path), for htoe_local_input_desc().
 *
 * ht_req_enc_fast: true when ht_req_issue_enc encodes op without the
 * table-driven codec (reads, dword writes, addresses below 2^40). A driver
 * may hand other ops to a consumer of struct ht_pkt (ht_req_issue) instead.
 *
 * ht_req_issue_fast: ht_req_issue_desc of an op ht_req_enc_fast accepts,
 * tested once; -ENOTSUP, nothing taken or counted, for any other op (valid
 * or not), which the caller hands to ht_req_issue.
 *
 * ht_req_unissue_bytes: ht_req_unissue() of an encoded request.
 *
 * ht_req_rx_desc: ht_req_rx() of a parsed response (ht_desc_parse); the
 * read data is not copied: the completion's rdata points into the packet
 * bytes, and the consumer copies it once, to where it is going.
 */
int ht_req_issue_enc(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		     uint8_t *buf, size_t cap);
int ht_req_issue_desc(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		      uint8_t *buf, size_t cap, struct ht_desc *d);
bool ht_req_enc_fast(const struct ht_op *op);
int ht_req_issue_fast(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
		      uint8_t *buf, size_t cap, struct ht_desc *d);
int ht_req_unissue_bytes(struct ht_requester *r, const uint8_t *pkt, size_t len);
int ht_req_rx_desc(struct ht_requester *r, const struct ht_desc *rsp, struct ht_completion *out);

unsigned ht_req_outstanding(const struct ht_requester *r);
/* Free tags across all UnitIDs. */
unsigned ht_req_free_tags(const struct ht_requester *r);
const struct ht_req_stats *ht_req_stats(const struct ht_requester *r);

/* n more posted writes issued as copies of one ht_req_issue_desc() packet
 * with the address and data moved on (a run the bridge queues itself,
 * htoe_local_input_run): a posted write takes no tag, so only the counter
 * changes. */
void ht_req_issued_posted(struct ht_requester *r, unsigned n);

/* Tags for n more 64-byte dword reads like op (a 64-byte-aligned read the
 * caller issued with ht_req_issue_desc), read k at op->addr + 64 (k + 1),
 * all with cookie: each enters the outstanding table as that issue would
 * enter it, its (UnitID, SrcTag) in tags[k]. For a run the bridge queues
 * itself (htoe_local_input_reads). Returns how many (fewer when the tags
 * run out). */
unsigned ht_req_issue_reads(struct ht_requester *r, const struct ht_op *op, uint64_t cookie,
			    unsigned n, uint8_t (*tags)[2]);

/* Give back the tag of a non-posted request taken but never sent. 0, or
 * -ENOENT if it is not in use. */
int ht_req_unissue_tag(struct ht_requester *r, uint8_t unitid, uint8_t srctag);

#endif
