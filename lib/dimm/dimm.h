/* SPDX-License-Identifier: BSD-3-Clause
 * dimm: remote memory over HToE, the explicit API (docs/dimm.md).
 *
 * A *client* gives an application thread read, write, fetch-add,
 * compare-swap and flush on a region of the global address space (a
 * lease, htoe/htoe_lease.h), blocking or asynchronous. An *engine* runs on
 * the node's poll thread: it takes the clients' operations from their
 * submission rings, turns them into HT requests (struct ht_op, one HT
 * requester with many tags) for the node's bridge, matches the responses
 * and hands completions back on the clients' completion rings.
 *
 *   application thread                       node thread (poll loop)
 *   dimm_read()/..._async() --SQ ring-->  dimm_engine_poll(): HT requester
 *   dimm_wait()/dimm_reap() <--CQ ring--    <-> dimm_link (struct htoe, or
 *                                              the loopback of dimm_loop.h)
 *
 * Rings are single-producer/single-consumer: one client belongs to one
 * application thread (use one client per thread), the engine to one node
 * thread. The ring is an interface (struct dimm_ring): the built-in one is
 * a C11-atomics SPSC ring (dimm_spsc_*); the DPDK application passes
 * rte_ring. The library itself has no DPDK, and no clock: the engine gets
 * `now` from its caller.
 *
 * Operations: a read or write of any length is split into legal HT packets
 * (64-byte RdSized/WrSized dword, byte forms at unaligned edges) that are
 * all in flight at once, up to the requester's tags and the bridge's
 * credits (backpressure is retried, never dropped). Writes are posted
 * (WrSized, no response) unless DIMM_F_SYNC: a posted write completes when
 * it has been handed to the bridge; dimm_flush() (HT Flush) returns when
 * every earlier posted write has reached the remote memory, or reports that
 * some may have been lost. HT ordering keeps a later read behind earlier
 * posted writes.
 *
 * Errors (result status, negative errno):
 *   -EIO      the remote side answered with an error: ht_err says which
 *             (data error, target abort: VL reset; master abort: request
 *             timed out, node unreachable, or address unmapped)
 *   -EPIPE    dimm_flush(): posted writes since the previous flush may have
 *             been lost in a VL reset (the data is not known to be there)
 *   -ENOLINK  the lease is lost (not renewed in time, revoked): nothing more
 *             is sent to the region; operations fail at once
 *   -ERANGE   outside the region; -EINVAL bad length/alignment/argument;
 *   -EAGAIN   (submission) every descriptor is in flight: reap first.
 */
#ifndef DIMM_H
#define DIMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_requester.h"
#include "htmodel/ht_target.h"

/* ---------------------------------------------------------------- rings */

/* A ring of pointers, single producer / single consumer. Burst calls move
 * up to n objects and return how many moved (0 when full / empty). */
struct dimm_ring_ops {
	unsigned (*enqueue)(void *ring, void *const *objs, unsigned n);
	unsigned (*dequeue)(void *ring, void **objs, unsigned n);
};

struct dimm_ring {
	const struct dimm_ring_ops *ops;
	void *ring;
};

/* The built-in ring: count (power of two) slots, count - 1 usable. */
struct dimm_spsc;
struct dimm_spsc *dimm_spsc_new(unsigned count);
void dimm_spsc_free(struct dimm_spsc *r);
extern const struct dimm_ring_ops dimm_spsc_ops;

/* ---------------------------------------------------------------- link */

/*
 * Where HT packets go: the node's local HT side. For a bridge
 * (dimm_link_htoe) input is htoe_local_input() and output
 * htoe_local_output(); dimm_loop.h has an in-memory loopback.
 */
struct dimm_engine;

struct dimm_link {
	/* A packet from the local side: 0 taken, -EAGAIN backpressure (offer
	 * again later), other negative: refused. */
	int (*input)(void *ctx, const uint8_t *pkt, size_t len, uint64_t now);
	/* Optional: the same for a request the engine encoded, with the
	 * descriptor its encoder filled (d->pkt: the bytes), so that it is not
	 * parsed again (htoe_local_input_desc). */
	int (*input_desc)(void *ctx, const struct ht_desc *d, uint64_t now);
	/* Optional: n posted writes shaped like d (the encoder's descriptor),
	 * packet k at d->addr + 64 k with the 64 bytes at data + 64 k, queued
	 * at once (htoe_local_input_run). Returns how many were taken; 0: give
	 * the next one to input_desc, which decides. */
	unsigned (*input_run)(void *ctx, const struct ht_desc *d, const uint8_t *data, unsigned n,
			      uint64_t now);
	/* Optional: n 64-byte reads shaped like d, read k at d->addr + 64 k with
	 * UnitID tags[k][0] and SrcTag tags[k][1] (htoe_local_input_reads).
	 * Returns how many were taken, from the first. */
	unsigned (*input_reads)(void *ctx, const struct ht_desc *d, const uint8_t (*tags)[2],
				unsigned n, uint64_t now);
	/* The next packet for the local side: its length, 0 if none. */
	int (*output)(void *ctx, uint8_t *buf, size_t cap, uint64_t now);
	/* Optional, instead of output: up to n packets for the local side
	 * without a copy (pkt[i][0..len[i]) read in place until output_done;
	 * htoe_local_output_burst). Returns how many. */
	unsigned (*output_burst)(void *ctx, const uint8_t **pkt, unsigned *len, unsigned n,
				 uint64_t now);
	void (*output_done)(void *ctx);
	/* Optional: a count that grows whenever posted writes to `node` may
	 * have been lost (for dimm_flush's -EPIPE). */
	uint64_t (*loss_gen)(void *ctx, uint16_t node);
	/* Optional: the engine made (e) or freed (NULL) on this link; the
	 * htoe link makes it the bridge's local sink (htoe_set_local_sink), so
	 * that responses, posted writes and requests for the target are served
	 * straight from the frames they arrive in. */
	void (*attach)(void *ctx, struct dimm_engine *e);
	void *ctx;
};

struct htoe;
/* input/output through the bridge (output without a copy:
 * htoe_local_output_burst; what can go at once is served from the frame
 * through the bridge's local sink); loss_gen = the VL's posted_lost_reset +
 * posted_refused. */
void dimm_link_htoe(struct dimm_link *l, struct htoe *b);

/* ---------------------------------------------------------------- client */

enum dimm_op_type {
	DIMM_OP_READ = 0,
	DIMM_OP_WRITE,       /* posted, or non-posted with DIMM_F_SYNC */
	DIMM_OP_FADD,
	DIMM_OP_CAS,
	DIMM_OP_FLUSH,
	DIMM_OP__COUNT
};

#define DIMM_F_SYNC 0x01u   /* write: non-posted (TgtDone), complete when applied */

struct dimm_result {
	int      handle;
	int      status;     /* 0 or a negative errno (see above) */
	uint8_t  ht_err;     /* -EIO: enum ht_rsp_err of the worst response */
	uint8_t  op;         /* enum dimm_op_type */
	uint64_t value;      /* fetch-add, compare-swap: the old value */
	uint64_t user;       /* the caller's tag */
};

/* Text for a result: "ok", "remote error: master abort (...)", ... */
const char *dimm_strerror(int status, uint8_t ht_err);
/* True for what a warm VL reset does to an operation while the lease is
 * valid: a request poisoned with a target abort (-EIO), or a flush saying
 * posted writes may have been dropped (-EPIPE). The library never sends an
 * operation again by itself; an idempotent one (read, write, flush; not
 * fetch-add or compare-swap, which may have been applied) may be, by its
 * caller, while dimm_client_lost() is false (the pager does, dimm_pager.h). */
bool dimm_reset_retryable(int status, uint8_t ht_err);

struct dimm_client_cfg {
	uint64_t gaddr;      /* global address of the region's offset 0 */
	uint64_t size;       /* bytes */
	uint16_t node;       /* the node serving the region (for loss_gen) */
	unsigned depth;      /* descriptors = operations in flight (default 256) */
	/* rings (ops NULL: built-in SPSC rings of 2 x depth) */
	struct dimm_ring sq, cq;
	/* While a blocking call waits: idle(arg) (NULL: spin, then
	 * sched_yield()). A single-threaded program drives its node here. */
	void (*idle)(void *arg);
	/* After each submission (NULL: none): e.g. wake a sleeping node thread. */
	void (*kick)(void *arg);
	void *arg;
	/* Reads with HT PassPW set: they may pass posted writes issued before
	 * them on the same link (this client's and others'), so a read need not
	 * wait for a batch of writes ahead of it. Only for a client whose reads
	 * never target bytes with an earlier posted write not yet confirmed by
	 * a flush: the pager's fetch client (a page is fetched only after its
	 * write-back's flush). Off: reads see every earlier posted write. */
	bool passpw_reads;
};

struct dimm_client;

struct dimm_client *dimm_client_new(const struct dimm_client_cfg *cfg, char *err, size_t errlen);
/* Only when the engine no longer polls it (dimm_engine_detach or stopped). */
void dimm_client_free(struct dimm_client *c);
uint64_t dimm_client_size(const struct dimm_client *c);
unsigned dimm_client_depth(const struct dimm_client *c);
uint64_t dimm_client_gaddr(const struct dimm_client *c);

/* Asynchronous: returns a handle >= 0, or a negative errno (-EAGAIN: every
 * descriptor in flight). buf must stay valid until the completion. Writes:
 * the data is read when the packets are issued. fadd/cas: off 8-aligned,
 * little-endian qword. */
int dimm_read_async(struct dimm_client *c, uint64_t off, void *buf, uint32_t len, uint64_t user);
int dimm_write_async(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len,
		     unsigned flags, uint64_t user);
int dimm_fadd_async(struct dimm_client *c, uint64_t off, uint64_t add, uint64_t user);
int dimm_cas_async(struct dimm_client *c, uint64_t off, uint64_t expect, uint64_t swap,
		   uint64_t user);
int dimm_flush_async(struct dimm_client *c, uint64_t user);

/* Every completion is consumed exactly once, by dimm_test/dimm_wait (that
 * handle) or dimm_reap (any). The handle is free again afterwards. */
/* 1 and *res if done, 0 if not yet, -EINVAL for a handle not in flight. */
int dimm_test(struct dimm_client *c, int handle, struct dimm_result *res);
/* Wait for handle: returns its status (res may be NULL). */
int dimm_wait(struct dimm_client *c, int handle, struct dimm_result *res);
/* Up to max completed operations (not waited for by handle), oldest first;
 * never blocks. */
unsigned dimm_reap(struct dimm_client *c, struct dimm_result *res, unsigned max);
/* Wait until nothing is in flight, consuming every completion: 0 or the
 * first error status. */
int dimm_wait_all(struct dimm_client *c);
unsigned dimm_inflight(const struct dimm_client *c);

/* Blocking calls: 0 or a negative errno. */
int dimm_read(struct dimm_client *c, uint64_t off, void *buf, uint32_t len);
int dimm_write(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len);
int dimm_write_sync(struct dimm_client *c, uint64_t off, const void *buf, uint32_t len);
int dimm_fadd(struct dimm_client *c, uint64_t off, uint64_t add, uint64_t *old);
/* *old is the value found; the swap happened iff *old == expect. */
int dimm_cas(struct dimm_client *c, uint64_t off, uint64_t expect, uint64_t swap, uint64_t *old);
int dimm_flush(struct dimm_client *c);

/* Lease state, set by the node thread (any thread): after this every
 * operation fails with -ENOLINK; `why` is kept for messages. */
void dimm_client_set_lost(struct dimm_client *c, int why);
bool dimm_client_lost(const struct dimm_client *c);
int dimm_client_lost_why(const struct dimm_client *c);

struct dimm_client_stats {
	uint64_t submitted[DIMM_OP__COUNT];
	uint64_t completed, errors;
	uint64_t bytes_read, bytes_written;
	uint64_t busy;          /* submissions refused with -EAGAIN */
	uint64_t idle_calls;    /* waits */
};
const struct dimm_client_stats *dimm_client_stats(const struct dimm_client *c);

/* ---------------------------------------------------------- direct serving */

/*
 * A client served without the HT engine: another transport takes its
 * operations from the submission ring and completes them itself (htoe-dimm's
 * TCP page-server baseline runs the same pager over TCP this way). The
 * server plays the engine's part: one thread, and never together with
 * dimm_engine_attach() on the same client.
 */
struct dimm_op {
	uint8_t  op;         /* enum dimm_op_type */
	uint8_t  flags;      /* DIMM_F_* */
	uint32_t len;        /* read/write: bytes; fadd/cas: 8; flush: 0 */
	uint64_t off;        /* offset in the client's region (checked) */
	void    *buf;        /* read: where the bytes go; write: where they come from */
	uint64_t operand[2]; /* fadd: add; cas: expect, swap */
	void    *token;      /* for dimm_op_complete() */
};

/* The next submitted operation: 1 with *op, 0 when there is none. */
int dimm_op_take(struct dimm_client *c, struct dimm_op *op);
/* Complete a taken operation with status (0 or a negative errno, as in
 * struct dimm_result), ht_err and, for fadd/cas, the old value. */
void dimm_op_complete(struct dimm_client *c, const struct dimm_op *op, int status,
		      uint8_t ht_err, uint64_t value);

/* ---------------------------------------------------------------- engine */

#define DIMM_MAX_CLIENTS 16u

struct dimm_engine_cfg {
	struct dimm_link link;
	unsigned n_unitids;        /* requester UnitIDs (default 4: 128 tags) */
	uint8_t  first_unitid;     /* default 1 */
	/* Optional: this node's own memory. Requests arriving from the link
	 * are served by it; its responses for the bridge's UnitIDs
	 * (bridge_ubase .. +bridge_units-1) go back into the link. */
	struct ht_target *target;
	uint8_t  bridge_ubase, bridge_units;
};

struct dimm_engine_stats {
	uint64_t ops_taken;        /* descriptors taken from the SQs */
	uint64_t pkts_issued;      /* HT requests handed to the link */
	uint64_t responses;        /* matched completions */
	uint64_t err_responses;    /* completions with an error status */
	uint64_t backpressure;     /* link -EAGAIN */
	uint64_t no_tag;           /* requester out of tags */
	uint64_t lost_fail;        /* operations failed because the lease is lost */
	uint64_t unexpected;       /* responses matching nothing */
	uint64_t served;           /* requests served by the local target */
	uint64_t from_frame;       /* packets taken straight from the frame (the
	                            * htoe link's local sink): responses copied
	                            * once into their buffers, requests answered
	                            * into the bridge's transmit slot */
	uint64_t undecodable;
};

struct dimm_engine;

struct dimm_engine *dimm_engine_new(const struct dimm_engine_cfg *cfg, char *err, size_t errlen);
void dimm_engine_free(struct dimm_engine *e);
/* Attach a client (any thread, before the client is used): 0 or -ENOSPC. */
int dimm_engine_attach(struct dimm_engine *e, struct dimm_client *c);
/* One pass: link output (responses, requests for the target), then issue
 * from the clients' rings. Returns the number of packets/operations moved;
 * call again until it returns 0. Engine thread only. */
unsigned dimm_engine_poll(struct dimm_engine *e, uint64_t now);
/* Operations taken and not completed, or HT requests outstanding. */
bool dimm_engine_busy(const struct dimm_engine *e);
const struct dimm_engine_stats *dimm_engine_stats(const struct dimm_engine *e);

#endif
