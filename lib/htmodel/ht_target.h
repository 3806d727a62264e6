/* SPDX-License-Identifier: BSD-3-Clause
 * HT memory target: serves requests against one memory region the caller
 * owns, and builds the responses. Models the host bridge (responses carry
 * Bridge=1). Sans-I/O, no allocation, no global state.
 *
 *  - RdSized dword/byte, WrSized dword/byte (posted and non-posted) with the
 *    byte-write mask of reference §4 (data dword j uses mask nibble
 *    Addr[4:2]+j), Atomic fetch-add / compare-swap (little-endian qword, old
 *    value returned in a RdResponse Count=1), Flush -> TgtDone, NP write ->
 *    TgtDone, Fence and Broadcast counted and consumed.
 *  - Outside the region, or touching the reserved HT range
 *    0xFD_0000_0000..0xFF_FFFF_FFFF (Addr[63:40]=0): master abort
 *    (Error0=1, Error1=1), nothing is written. Partly outside counts as
 *    outside.
 *  - An error RdResponse carries Count+1 data dwords of all-ones.
 *  - Responses: Bridge=1, UnitID and SrcTag of the request, RqUID=0,
 *    PassPW = the request's ResponsePassPW for reads (0 otherwise).
 */
#ifndef HT_TARGET_H
#define HT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ht_packet.h"

#define HT_TGT_MAX_FAULTS 4u

#define HT_RSV_BASE 0xFD00000000ull  /* reserved HT range, 40-bit map (§14) */
#define HT_RSV_END  0x10000000000ull /* exclusive */

/* True if [addr, addr+len) touches the reserved HT range (Addr[63:40]=0). */
bool ht_addr_reserved(uint64_t addr, uint64_t len);

/* Fault injection: requests touching [base, base+size) get status `err`
 * (HT_RSP_DATA_ERROR, HT_RSP_TARGET_ABORT or HT_RSP_MASTER_ABORT) and have
 * no effect. Flush, Fence and Broadcast are never faulted. */
struct ht_tgt_fault {
	uint64_t base, size;
	uint8_t  err; /* enum ht_rsp_err; 0 = slot unused */
};

struct ht_target_cfg {
	uint64_t base;  /* HT address of mem[0] */
	uint64_t size;  /* bytes */
	uint8_t *mem;   /* caller-owned, size bytes; byte i = address base+i */
	struct ht_tgt_fault fault[HT_TGT_MAX_FAULTS];
};

struct ht_tgt_stats {
	uint64_t rd_dword, rd_byte;
	uint64_t wr_p_dword, wr_p_byte, wr_np_dword, wr_np_byte;
	uint64_t fetchadd, cas, cas_swapped;
	uint64_t flush, fence, broadcast;
	uint64_t bytes_read, bytes_written;
	uint64_t rsp_rd, rsp_tgtdone;
	uint64_t rsp_err[4];        /* responses by enum ht_rsp_err */
	uint64_t posted_dropped;    /* posted writes not applied (abort/fault/DataError) */
	uint64_t master_abort_range;    /* outside the region */
	uint64_t master_abort_reserved; /* in the reserved HT range */
	uint64_t faults_injected;
	uint64_t not_request;       /* ht_tgt_handle() given a response/info packet */
	uint64_t malformed;         /* request the codec would not produce (target abort) */
};

struct ht_target {
	struct ht_target_cfg cfg;
	unsigned faults;      /* bit i: cfg.fault[i] is set (none: no per-access walk) */
	uint64_t last;        /* cfg.base + cfg.size - 1 */
	bool     plain;       /* the region touches no reserved byte and no fault is set:
	                       * an access inside it is ok, nothing more to check */
	struct ht_tgt_stats st;
};

/* 0, or -EINVAL (no memory, size 0, region wraps past 2^64). */
int ht_tgt_init(struct ht_target *t, const struct ht_target_cfg *cfg);

/* Install (err != 0) or clear (err == 0) fault slot idx. */
int ht_tgt_set_fault(struct ht_target *t, unsigned idx, uint64_t base, uint64_t size,
		     enum ht_rsp_err err);

/*
 * Serve one request. Returns 1 with the response in *rsp (RdResponse or
 * TgtDone, ready for ht_link_send), 0 when the request has no response
 * (posted write, Fence, Broadcast), -EINVAL when req is not a request.
 */
int ht_tgt_handle(struct ht_target *t, const struct ht_pkt *req, struct ht_pkt *rsp);

/*
 * Serve one parsed request (ht_desc_parse) and encode the response straight
 * into out[0..cap): the same effect, statistics and response bytes as
 * ht_tgt_handle() on the decoded request followed by ht_encode(). RdSized
 * and WrSized dword without the 0x3E prefix (what workloads send most) are
 * served from the packet bytes: a write is copied from the packet into the
 * memory, a read response is filled from the memory, with no struct ht_pkt;
 * other requests take the decoded path. Returns the response length, 0 when
 * the request has no response, -EINVAL when it is not a request, -ENOSPC
 * when cap is too small (nothing done: cap >= HT_MAX_PKT_LEN always fits).
 */
int ht_tgt_serve(struct ht_target *t, const struct ht_desc *req, uint8_t *out, size_t cap);

/*
 * A burst: serve req[0..n) in order, responses back to back in out[0..cap)
 * (rsp_len[i]: length of req[i]'s response, 0 for none or a refused
 * non-request). Stops before a request whose response might not fit
 * (HT_MAX_PKT_LEN of room left). Returns the number of requests served.
 */
unsigned ht_tgt_serve_burst(struct ht_target *t, const struct ht_desc *req, unsigned n,
			    uint8_t *out, size_t cap, uint16_t *rsp_len);

const struct ht_tgt_stats *ht_tgt_stats(const struct ht_target *t);

#endif
