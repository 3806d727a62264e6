/* SPDX-License-Identifier: BSD-3-Clause
 * htoe: the HyperTransport Ethernet Adapter (HTEA) as a sans-I/O library.
 *
 * One `struct htoe` is the bridge of one node. It never performs I/O and
 * never reads a clock: the caller feeds it
 *   - HT packets from the node's local HT side   (htoe_local_input)
 *   - Ethernet frames from the network            (htoe_frame_input)
 *   - the time                                    (every call takes `now`, ns)
 * and pulls out
 *   - frames to transmit, written straight into a caller buffer
 *                                                  (htoe_frame_output)
 *   - HT packets for the local HT side            (htoe_local_output, or
 *                                                  without a copy:
 *                                                  htoe_local_output_burst)
 *   - the next time it must be called again       (htoe_next_deadline)
 *
 * Local HT side routing rule for the driver (app, simulator, tests):
 *   - every request from the local requester      -> htoe_local_input()
 *   - a response from the local memory target whose UnitID is one of the
 *     bridge's (cfg.unitid_base .. +n_unitids-1)   -> htoe_local_input()
 *   - every other response from the local target  -> the local requester
 *   - htoe_local_output(): requests               -> the local memory target
 *                          responses              -> the local requester
 * Requests whose global address maps to the local node are translated and
 * looped back through htoe_local_output() with their tags unchanged;
 * unmapped addresses are answered with a master-abort response.
 *
 * Not thread-safe: one struct htoe per lcore/thread.
 */
#ifndef HTOE_H
#define HTOE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htmodel/ht_packet.h"
#include "htoe/htoe_map.h"
#include "htoe/htoe_wire.h"

#define HTOE_MAX_PEERS 64

/* 802.1Q priority of the VL to one node (default: cfg.default_pcp). */
struct htoe_pcp {
	uint16_t node;
	uint8_t  pcp;
};

/* Go-Back-N or selective retry of a VL (htoe_retry.h has the rules). */
enum htoe_retry_mode { HTOE_RETRY_GBN = 0, HTOE_RETRY_SELECTIVE = 1 };

struct htoe_config {
	uint16_t node_id;
	uint8_t  mac[6];
	uint16_t mtu;               /* HToE header + payload; default 1500, max 9000 */
	bool     vlan;              /* send 802.1Q-tagged frames */
	uint16_t vid;
	uint8_t  epoch;             /* initial VL epoch (manual override; default 0) */

	/* This start of the bridge: an unpredictable value the caller draws
	 * from the OS (getrandom) at every start (the library reads no OS
	 * randomness). Carried in RESET, RESET_ACK and CTRL frames: a peer that
	 * sees a new incarnation knows at once that this node restarted and
	 * cold-resets the VL. 0 is a valid value (tests, old callers) but then
	 * a restart looks like a duplicate to the peers. */
	uint32_t incarnation;
	/* Key of the keyed PRF (SipHash-2-4) that makes the reset nonces; the
	 * caller fills it with random bytes at every start. A nonce cannot be
	 * predicted from the frames seen on the wire without the key. */
	uint8_t  nonce_key[16];

	/* local HT side: the bridge's own tag space for remote requests */
	uint8_t  unitid_base;       /* default 8 */
	uint8_t  n_unitids;         /* default 1 (32 tags); >1 = UnitID clumping */

	/* receive pool (buffers per VC per class) and its sharing policy */
	uint16_t rx_bufs[HT_VC_COUNT][2]; /* [vc][0 cmd, 1 data] */
	uint16_t reserve;           /* guaranteed buffers per VL per class */
	uint16_t max_per_vl;        /* cap per VL per class */

	uint16_t txq_pkts;          /* HT packets queued per VL per VC (incl. unacked) */
	uint16_t window;            /* max unacknowledged frames per VL */
	uint16_t ack_every;         /* standalone ack after this many frames */
	uint32_t retry_limit;       /* consecutive timeouts before a VL reset */
	enum htoe_retry_mode retry_mode; /* HTOE_RETRY_SELECTIVE (default): offered
	                             * in the reset handshake, used on VLs whose
	                             * peer offers it too; HTOE_RETRY_GBN: never */

	uint64_t flush_ns;          /* latency bound for a partly filled frame */
	uint64_t ack_delay_ns;
	uint64_t rto_init_ns, rto_max_ns;
	uint64_t rto_min_ns;        /* floor of the adaptive RTO (RFC 6298, per VL;
	                             * htoe_retry.h); 0: rto_init_ns */
	uint64_t np_timeout_ns;     /* a remote NP request older than this is poisoned
	                             * (and, if still queued unsent, never sent) */
	uint64_t stall_timeout_ns;  /* a VL refusing local input this long is reset */

	/* The address map and its peer table (one VL per peer, to the peer's
	 * MAC). Owned by the caller, finalized, and must outlive the bridge. */
	const struct htoe_map *map;
	uint8_t  default_pcp;
	unsigned n_pcp;
	struct htoe_pcp pcp[HTOE_MAX_PEERS];
};

/* Fill `cfg` with the defaults documented in docs/config.md. */
void htoe_config_defaults(struct htoe_config *cfg);

/* The receive buffers per class (rx_bufs) that n_vls VLs need under the
 * pool's policy (htoe_credit.h): every VL its reserve, and beyond them
 * enough for one busy VL to reach max_per_vl (at least 64), so that peers
 * configured but idle take none of a busy VL's credits. A caller sizing the
 * pool by the cluster raises the counts it was not given to this. */
unsigned htoe_rx_bufs_needed(const struct htoe_config *cfg, unsigned n_vls);

/* Check cfg as htoe_new() does, without allocating anything: 0, or -1 with
 * a message in err and, if field is not NULL, *field =
 * offsetof(struct htoe_config, F) of the field F to blame (SIZE_MAX: the
 * address map, whose labels name the culprit). */
int htoe_config_check(const struct htoe_config *cfg, size_t *field, char *err, size_t errlen);

/* Create a bridge; on error returns NULL with a message in err. */
struct htoe *htoe_new(const struct htoe_config *cfg, char *err, size_t errlen);
void htoe_free(struct htoe *b);

/* Return codes of htoe_local_input (besides negative errno-style errors). */
enum {
	HTOE_TAKEN = 0,      /* queued for a VL, looped back, or answered locally */
};

/*
 * An HT packet (one, in link order) from the local HT side.
 *  0           taken
 *  -EAGAIN     backpressure: this packet's VL (or the pending-request table)
 *              is full. Keep the packet and offer it again later; other VLs
 *              are not affected. A VL that stays full longer than
 *              stall_timeout_ns is reset, after which its packets are taken
 *              (NP: answered with an error response; posted: refused).
 *  -EINVAL     malformed or not forwardable (counted)
 */
int htoe_local_input(struct htoe *b, const uint8_t *pkt, size_t len, uint64_t now);

/* The same for a packet the caller holds decoded (the endpoint model's
 * requester and target): encoded once here (-EINVAL, counted as malformed,
 * if ht_encode refuses it) instead of encoded by the caller and decoded
 * again. The same results as htoe_local_input(encoding of pkt). */
int htoe_local_input_pkt(struct htoe *b, const struct ht_pkt *pkt, uint64_t now);

/* The same for a packet the caller has already parsed: d as ht_desc_parse()
 * or the requester's ht_req_issue_desc() fill it, d->pkt pointing at the
 * bytes (not parsed again: the local side is trusted to hand over what its
 * own encoder produced). */
int htoe_local_input_desc(struct htoe *b, const struct ht_desc *d, uint64_t now);

/* A run of posted writes to consecutive addresses, one map lookup and one
 * queue reservation for all: n posted dword WrSized packets shaped like d
 * (as ht_req_issue_desc fills it: its control packet, UnitID, PassPW and
 * Count; its own data is not used), packet k writing d->data_len bytes
 * from data + k * d->data_len to d->addr + k * d->data_len. Queues the
 * first packets the VL's posted queue has room for and returns how many
 * (each as htoe_local_input_desc would have queued it). 0: none — the
 * queue is full, or the run is not one this path takes (another kind of
 * packet, a 64-bit address, a range that is local, unmapped or spans two
 * map entries): hand packet 0 to htoe_local_input_desc, which decides
 * (backpressure, a stalled VL, a master abort) as for any packet. */
unsigned htoe_local_input_run(struct htoe *b, const struct ht_desc *d, const uint8_t *data,
			      unsigned n, uint64_t now);

/* The same for a run of reads: n dword RdSized packets shaped like d
 * (its Count, PassPW, ResponsePassPW; its tags not used), packet k reading
 * at d->addr + k * (its length) with UnitID tags[k][0] and SrcTag
 * tags[k][1]. Each is recorded as outstanding and queued as
 * htoe_local_input_desc would; returns how many, from the first. 0, or
 * fewer than n: hand the next one to htoe_local_input_desc, which decides
 * (a full queue, a tag already outstanding, a range this path does not
 * take). */
unsigned htoe_local_input_reads(struct htoe *b, const struct ht_desc *d,
				const uint8_t (*tags)[2], unsigned n, uint64_t now);

/* Next HT packet for the local HT side, copied into buf[0..cap): returns
 * its length, 0 if none, -ENOSPC if it is longer than cap (it stays). */
int htoe_local_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now);

/*
 * Zero-copy burst: up to n packets for the local HT side, in the order
 * htoe_local_output() would return them, as pointers into the bridge's own
 * queue (out[i].pkt[0..out[i].len)). They stay valid, and their slots are
 * not reused, until htoe_local_output_done(); call it as soon as the burst
 * is consumed (while packets are lent out the local queue has that much
 * less room: input that needs it is refused as when the queue is full).
 * Returns the number of packets. The packets are taken: their receive
 * buffers are already released to the peers.
 */
struct htoe_pkt_ref {
	const uint8_t *pkt;
	unsigned len;
};
unsigned htoe_local_output_burst(struct htoe *b, struct htoe_pkt_ref *out, unsigned n,
				 uint64_t now);
/*
 * The same, with at most np_max non-posted requests among them: a local side
 * with room for only np_max responses (an HT target holds a request until
 * its response can go) still takes the posted writes and the responses
 * waiting behind, as HT requires: their acceptance must never wait on room
 * for responses, or two nodes whose responses wait on each other's receive
 * buffers deadlock (their responses sit behind posted writes neither takes).
 */
unsigned htoe_local_output_burst_np(struct htoe *b, struct htoe_pkt_ref *out, unsigned n,
				    unsigned np_max, uint64_t now);
void htoe_local_output_done(struct htoe *b);

/*
 * Optional zero-copy delivery to the local side: a sink. With one set, an
 * HT packet of an accepted frame is handed to the local side during
 * htoe_frame_input(), straight from the frame and parsed once (d points
 * into the caller's frame), instead of being copied into the local queue
 * and taken out later, whenever HT ordering lets it go at once:
 *   - deliver(ctx, d, now): a posted write while no other posted write
 *     waits for the local side; a response to a local request (matched to
 *     its outstanding entry first) while no response waits and, unless it
 *     has PassPW, no posted write. The sink applies or consumes it at once.
 *   - serve(ctx, d, rsp, cap, now): a non-posted request while no request
 *     and no posted write waits and the request's VL has room for the
 *     answer. The local target executes it and encodes its response into
 *     rsp[0..cap) (cap >= HT_MAX_PKT_LEN), which is the VL's own transmit
 *     slot: the response leaves from there, with the request's UnitID and
 *     SrcTag (an answer given at once needs no tag remapping). Returns the
 *     response's length; 0 or less means "not now" (serve did nothing) and
 *     the request is queued as without a sink.
 * Either may be NULL. The access table is checked first (a refused request
 * takes the queued path and is refused there). Neither may call into this
 * bridge. NULL turns the sink off.
 */
struct htoe_local_sink {
	void (*deliver)(void *ctx, const struct ht_desc *d, uint64_t now);
	int (*serve)(void *ctx, const struct ht_desc *d, uint8_t *rsp, size_t cap, uint64_t now);
	void *ctx;
};
void htoe_set_local_sink(struct htoe *b, const struct htoe_local_sink *s);

/*
 * Optional loss event: what a reset or a restart of a peer lost, told to the
 * local side during the call that caused it (a frame or a timer in
 * htoe_frame_input(), htoe_frame_output() or htoe_handle_expiry(), a stall in
 * htoe_local_input*(), or htoe_vl_reset()), as the sink is. Posted writes have no
 * response to poison, so this is the only way their requester learns of
 * them.
 *   HTOE_LOSS_RESET: one call per posted write dropped from a VL's queue
 *     by a reset (framed and not acknowledged: the peer may or may not have
 *     applied it; or, on a cold reset, not yet sent), one per posted write
 *     htoe_local_input*() took and dropped because its VL had refused
 *     input for the stall timeout (counted as posted_refused), and one per request
 *     (read, non-posted write, atomic) in flight on the VL that the reset
 *     answers with an error (the peer may have executed it and its answer
 *     is lost), before that error. addr/len: its global address (as the
 *     requester used it) and length in bytes. What a reset does not report
 *     is delivered exactly once, in order.
 *   HTOE_LOSS_RESTART: the peer proved a new incarnation (it restarted and
 *     its memory is gone): one call per range of the address map that is
 *     the peer's memory (addr/len global; in mask mode the peer's lowest
 *     block of 2^shift bytes), with old_inc -> new_inc.
 * The callback must not call into this bridge. NULL turns it off. Nothing
 * is spent on it unless a reset or a restart happens.
 */
enum htoe_loss_kind { HTOE_LOSS_RESET = 1, HTOE_LOSS_RESTART = 2 };
struct htoe_loss {
	enum htoe_loss_kind kind;
	uint16_t node;              /* the peer */
	uint64_t addr, len;         /* global address and bytes lost */
	uint32_t old_inc, new_inc;  /* RESTART: the peer's incarnations */
};
typedef void (*htoe_loss_fn)(void *ctx, const struct htoe_loss *l);
void htoe_set_loss_cb(struct htoe *b, htoe_loss_fn fn, void *ctx);

/* An Ethernet frame (FCS stripped). Returns 0, or a negative enum htoe_drop
 * reason (the frame was dropped and counted). */
int htoe_frame_input(struct htoe *b, const uint8_t *frame, size_t len, uint64_t now);

#define HTOE_TX_FLUSH 1u  /* local input is idle: do not hold partial frames */
/* Only the frames nothing resends for the caller: the reset handshake
 * (RESET, RESET_ACK) and CTRL messages; no DATA (new or retransmitted), no
 * ACK/NAK (they ride on data, or come next time). A driver asks for these
 * first in each burst, so they lead it: a port that takes only part of a
 * burst takes them, and data never starves them. */
#define HTOE_TX_CTRL_ONLY 2u

/* Next frame to transmit, written into buf[0..cap) (cap >= mtu + 18).
 * Returns its length, 0 if nothing is due. Call until it returns 0. */
int htoe_frame_output(struct htoe *b, uint8_t *buf, size_t cap, uint64_t now,
		      unsigned flags);

/* Run timers (retransmission, acks, request timeouts, stalls), and give
 * framing back the VLs whose timer came: call it once htoe_next_deadline()
 * has passed, before htoe_frame_output(). */
void htoe_handle_expiry(struct htoe *b, uint64_t now);

/* Earliest time at which the bridge has work that does not depend on new
 * input (htoe_handle_expiry, then htoe_frame_output); UINT64_MAX if none. */
uint64_t htoe_next_deadline(const struct htoe *b);

/* Reset the VL to `node` (warm or cold). Outstanding NP requests of that VL
 * are poisoned; other VLs are untouched. */
int htoe_vl_reset(struct htoe *b, uint16_t node, bool cold, uint64_t now);

/*
 * Control messages (CTRL frames): a small datagram service between bridges
 * for protocols above HT (e.g. memory leases). Unreliable and unordered like
 * Ethernet itself — a message may be lost, duplicated or reordered; the
 * protocol on top retries and must be idempotent. Sent only on a VL that is
 * up, ahead of data (new or retransmitted; HTOE_TX_CTRL_ONLY). Payload:
 * 1..HTOE_CTRL_MAX bytes, opaque here.
 */
#define HTOE_CTRL_MAX   256u
#define HTOE_CTRL_QUEUE 16u
/* Queue a message for `node`: 0, -ENOENT (no VL), -EMSGSIZE, -EAGAIN (queue
 * full, counted as ctrl_refused). */
int htoe_ctrl_send(struct htoe *b, uint16_t node, const void *msg, size_t len);
/* Next received message: its length (and *node), or 0 if none. -ENOSPC if
 * cap is too small (the message stays queued). */
int htoe_ctrl_recv(struct htoe *b, uint16_t *node, void *buf, size_t cap);
/* CTRL messages queued and not yet framed, all VLs. */
unsigned htoe_ctrl_queued(const struct htoe *b);

/*
 * A clean stop (docs/wire-format.md, "LEAVE"). A node that stops on purpose
 * tells each peer whose VL is up, in a CTRL message the bridge handles
 * itself. Like every frame it carries the sender's cumulative ack, so the
 * peer retires the frames that were received although their last ACK was
 * lost, and a frame still unacknowledged after it is known lost at once:
 * the peer does not take a node that stopped for a dead one and wait
 * peer_dead_timeout for it. CTRL frames are not resent: each VL gets
 * `copies` of the message (a lost one costs the peer only that wait).
 * Returns the messages queued.
 */
unsigned htoe_leave(struct htoe *b, unsigned copies);
/* The peer said it leaves and has sent no DATA and no RESET since (a peer
 * that goes on working, or a forged LEAVE followed by the real peer's
 * traffic, clears it). Authentic only as far as the frame's source is: a
 * MAC forger without MACsec can make a node in its drain give the peer up
 * early, which costs one cold reset of that VL (docs/macsec.md). */
bool htoe_vl_peer_left(const struct htoe *b, uint16_t node);

/* Counters of one VL: one set. Those marked (retry) are the retry layer's
 * own counters (struct htoe_retry_stats), read from it by
 * htoe_get_vl_stats(), not counted a second time by the bridge. */
struct htoe_vl_stats {
	uint64_t tx_frames, rx_frames, tx_pkts[HT_VC_COUNT], rx_pkts[HT_VC_COUNT];
	uint64_t tx_bytes, rx_bytes;
	uint64_t retransmits;         /* (retry) DATA frames sent again */
	uint64_t naks_sent;           /* (retry) */
	uint64_t naks_rcvd;           /* NAK frames received (with or without a SACK block) */
	uint64_t timeouts;            /* (retry) retransmission timer expiries */
	uint64_t acks_sent;           /* standalone ACK frames (acks ride on every frame) */
	uint64_t credit_starved_ns;
	uint64_t credit_probes;       /* CREDIT_REQ probes sent while starved */
	uint64_t resets, poisoned, posted_refused, posted_lost_reset;
	uint64_t late_responses;
	uint64_t np_timeouts;         /* local requests poisoned after np_timeout */
	uint64_t drops[HTOE_DROP__COUNT];
	uint64_t srtt_ns, rttvar_ns;  /* (retry) smoothed RTT and its variation (0: no sample yet) */
	uint64_t rto_ns;              /* (retry) current retransmission timeout */
	/* incarnations of the peer (htoe_config.incarnation) */
	uint64_t peer_restarts;       /* new incarnations seen: each a cold reset */
	uint64_t peer_restart_ns;     /* `now` of the last one (0: none) */
	uint64_t up_ns;               /* `now` when the VL last came up */
	uint64_t restart_up_ns;       /* up_ns - peer_restart_ns of the first
	                               * handshake after the last new incarnation */
	uint64_t selective;           /* 1 while the VL uses selective retry */
	uint64_t rx_held;             /* (retry) frames held after a gap (selective) */
	uint64_t sacks_sent;          /* (retry) ACK/NAK frames sent with a SACK block */
	uint64_t sacks_rcvd;          /* ACK/NAK frames received with a SACK block */
	uint64_t forced_releases;     /* receive buffers a reset of this VL found
	                               * counted as held by no packet (neither queued
	                               * for the local side nor held for ordering)
	                               * and gave back: an accounting fault, 0 */
	uint64_t tail_probes;         /* (retry) tail loss probes sent (selective) */
	uint64_t ctrl_refused;        /* htoe_ctrl_send -EAGAIN: this VL's CTRL queue was full */
};

struct htoe_stats {
	uint64_t local_in, local_out, local_loopback, master_aborts;
	uint64_t local_direct;        /* of local_out: handed to the local sink
	                               * straight from the frame (htoe_set_local_sink) */
	uint64_t consumed;            /* NOP, ExtFC, Fence, Broadcast: not forwarded */
	uint64_t local_sync;          /* Sync/Error packets from the local side */
	uint64_t local_malformed;     /* local input that does not decode */
	uint64_t unexpected_responses;/* local responses with no pending entry */
	uint64_t backpressure;        /* -EAGAIN returns */
	uint64_t tag_full;            /* pending table full events */
	uint64_t ctrl_sent, ctrl_rcvd, ctrl_overflow; /* CTRL messages; received but queue full */
	uint64_t ctrl_refused;        /* htoe_ctrl_send -EAGAIN: the VL's CTRL queue was full */
	uint64_t acl_denied;          /* remote requests refused by the access table */
	uint64_t peer_restarts;       /* new incarnations seen, all VLs (htoe_vl_stats) */
	uint64_t vl_resets;           /* VL resets, all VLs (htoe_vl_stats.resets) */
	uint64_t drops[HTOE_DROP__COUNT]; /* frames not attributable to a VL */
};

const struct htoe_stats *htoe_get_stats(const struct htoe *b);

/*
 * Access table for remote requests (optional; off until htoe_acl_protect).
 * Once a region [base, base + size) of this node's local addresses is
 * protected, a remote RdSized/WrSized/Atomic that touches it is executed
 * only if the requesting node holds a grant covering the whole access with
 * the right (READ for reads, WRITE for writes, both for atomics). Otherwise
 * it never reaches the local side: a non-posted request is answered with a
 * Target Abort error response, a posted write is dropped; both are counted
 * in htoe_stats.acl_denied. Requests outside the region and local requests
 * are not checked. The lease endpoint keeps the grants in step with its
 * leases (htoe_lease_cfg.acl, htoe_lease_pump).
 */
#define HTOE_ACL_MAX   64u
#define HTOE_ACL_READ  1u
#define HTOE_ACL_WRITE 2u
/* Protect [base, base + size); size 0 turns the check off. 0 or -EINVAL. */
int htoe_acl_protect(struct htoe *b, uint64_t base, uint64_t size);
/* Grant src_node `flags` on [base, base + size) (replaces a grant of that
 * node and range): 0, -EINVAL (size 0, wraps, no flags), -ENOSPC (table full). */
int htoe_acl_set(struct htoe *b, uint16_t src_node, uint64_t base, uint64_t size,
		 unsigned flags);
/* Revoke the grant of src_node on exactly [base, base + size): 0 or -ENOENT. */
int htoe_acl_clear(struct htoe *b, uint16_t src_node, uint64_t base, uint64_t size);
/* Revoke every grant (the region stays protected). */
void htoe_acl_clear_all(struct htoe *b);
/* Per-VL counters; NULL if there is no VL to that node. The (retry) fields
 * are brought up to date by this call. */
const struct htoe_vl_stats *htoe_get_vl_stats(const struct htoe *b, uint16_t node);
unsigned htoe_n_vls(const struct htoe *b);
uint16_t htoe_vl_node(const struct htoe *b, unsigned idx);
uint8_t htoe_vl_epoch(const struct htoe *b, uint16_t node);
bool htoe_vl_is_up(const struct htoe *b, uint16_t node);
/* The peer's incarnation as last seen in a RESET/RESET_ACK/CTRL frame, and
 * whether one was seen at all (false: *inc untouched). */
bool htoe_vl_peer_incarnation(const struct htoe *b, uint16_t node, uint32_t *inc);

/* SipHash-2-4 of msg[0..len) under a 128-bit key (the reference algorithm
 * of Aumasson and Bernstein; key bytes and result little-endian as there).
 * The bridge derives its reset nonces with it (exposed for the tests). */
uint64_t htoe_siphash24(const uint8_t key[16], const void *msg, size_t len);

/* Outstanding work: HT packets queued or in flight on all VLs, pending
 * remote requests, outstanding local NP requests. 0 when quiescent. */
unsigned htoe_busy(const struct htoe *b);
/* HT packets received from peers that htoe_local_output() has not handed
 * out yet (0: every write a peer's acknowledged frames carried is with the
 * local side). */
unsigned htoe_local_pending(const struct htoe *b);

/* Invariant checks used by tests and the simulator (credits conserved, each
 * VL's receive buffers in use equal to the packets holding one, queue
 * accounting); returns 0 or a negative value with a message. */
int htoe_check_invariants(const struct htoe *b, char *err, size_t errlen);

/* The same checks of the VLs that may have changed since the previous call
 * (something woke them, a frame was sent on them or a timer of theirs fired;
 * the first call checks all) and of the shared receive pool: an idle VL is
 * not visited, so a caller may check after every poll of a node with many
 * peers. */
int htoe_check_invariants_changed(struct htoe *b, char *err, size_t errlen);

#endif
