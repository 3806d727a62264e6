/* SPDX-License-Identifier: BSD-3-Clause
 * htoe_lease: memory leases between HToE nodes (DIMM virtualization, HToE
 * paper §5.1), carried in CTRL frames (htoe_ctrl_send/htoe_ctrl_recv).
 *
 * A node that exports memory (the *lessor*) hands out regions of it to
 * other nodes (*lessees*) for a limited time. The lessee renews its leases
 * periodically; a lease that is not renewed expires, so a dead borrower
 * never pins memory for ever. docs/wire-format.md ("Lease messages") has
 * the byte layout, docs/dimm.md the user guide.
 *
 * Sans-I/O and single-threaded, like struct htoe: no clock (`now` is the
 * caller's nanoseconds), no I/O, no thread, no allocation after
 * htoe_lease_new(). The driver
 *   - hands every received CTRL message whose first byte is
 *     HTOE_LEASE_PROTO to htoe_lease_input(),
 *   - sends what htoe_lease_output() returns with htoe_ctrl_send() (a message
 *     the bridge cannot take may simply be dropped: the protocol retries),
 *   - calls again no later than htoe_lease_next_deadline().
 * htoe_lease_pump() does all three for a driver that has no other CTRL
 * protocol.
 *
 * Robustness: every exchange is a request with a request id and a reply;
 * the lessee retransmits with exponential backoff until it gets the reply,
 * the lessor answers duplicates idempotently (a duplicate REQUEST gets the
 * same GRANT again, a duplicate RENEW extends again, a duplicate RELEASE is
 * acknowledged again). Replies are matched to the request id of the current
 * round, so stale or reordered replies are ignored. A GRANT for a request
 * the lessee has given up on is released at once.
 *
 * Replays: a REQUEST is bound to the live session of its sender. The
 * lessor remembers, per lessee node, its live session, the sessions it had
 * before (retired when a REQUEST of a new session arrives, or when the
 * bridge saw the node restart: htoe_lease_peer_restarted) and the request
 * ids of that session it answered (a window of HTOE_LEASE_REQ_WINDOW ids
 * below the highest). A REQUEST of a retired session, or one whose id was
 * answered before and holds no lease (its lease released or expired, its
 * tombstone gone), is refused with HTOE_LEASE_E_STALE and counted
 * (stale_requests): it is a replay, never a new lease.
 *
 * Time: the lessee counts a lease valid until (first transmission of the
 * request or renewal that the lessor answered) + duration, the lessor keeps
 * it until (arrival of that message) + duration + grace, so the lessee
 * always stops using memory before the lessor can give it to someone else
 * (no clock synchronization, only equal clock rates).
 */
#ifndef HTOE_LEASE_H
#define HTOE_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "htoe/htoe_map.h"

#define HTOE_LEASE_PROTO   0x4Cu  /* 'L': first byte of every lease message */
#define HTOE_LEASE_VERSION 1u
#define HTOE_LEASE_MSG_LEN 48u    /* bytes of a version-1 message */
#define HTOE_LEASE_MAX     64u    /* leases held as lessee, and granted as lessor */
#define HTOE_LEASE_REPLYQ  32u    /* lessor replies waiting for output */
#define HTOE_LEASE_EVENTQ  64u
#define HTOE_LEASE_REQ_WINDOW 1024u /* request ids per lessee session remembered */

/* Message types (byte 2). */
enum htoe_lease_type {
	HTOE_LEASE_T_REQUEST = 1,     /* lessee -> lessor: lease `size` bytes */
	HTOE_LEASE_T_GRANT = 2,       /* lessor -> lessee: lease id, offset, address */
	HTOE_LEASE_T_REFUSE = 3,      /* lessor -> lessee: no lease, status says why */
	HTOE_LEASE_T_RENEW = 4,       /* lessee -> lessor: extend lease id */
	HTOE_LEASE_T_RENEW_ACK = 5,   /* lessor -> lessee: extended (status 0) or not */
	HTOE_LEASE_T_RELEASE = 6,     /* lessee -> lessor: give lease id back */
	HTOE_LEASE_T_RELEASE_ACK = 7, /* lessor -> lessee: released (or unknown: same) */
};

/* Status (byte 3). Values below 16 travel on the wire; the others are
 * local reasons reported to the lessee. */
enum htoe_lease_status {
	HTOE_LEASE_OK = 0,
	HTOE_LEASE_E_NOSPACE = 1,    /* no free range of that size */
	HTOE_LEASE_E_TOOMANY = 2,    /* the lessor's lease table is full */
	HTOE_LEASE_E_BADREQ = 3,     /* size 0, larger than the export, bad field */
	HTOE_LEASE_E_UNKNOWN = 4,    /* no such lease (expired, released, lessor restarted) */
	HTOE_LEASE_E_NOEXPORT = 5,   /* the node exports no memory */
	HTOE_LEASE_E_QUOTA = 6,      /* the lessee's quota (slots or bytes) would be exceeded */
	HTOE_LEASE_E_STALE = 7,      /* a REQUEST of a retired session of its sender, or
	                              * one answered before (a replay) */
	HTOE_LEASE_E_TIMEOUT = 16,   /* local: no answer in time (request, or renewals) */
	HTOE_LEASE_E_PEER_RESTARTED = 17, /* local: the lessor restarted (new incarnation):
	                              * the memory's contents are gone */
};
const char *htoe_lease_status_name(int status);
const char *htoe_lease_type_name(int type);

/* A decoded message (docs/wire-format.md, "Lease messages"). */
struct htoe_lease_msg {
	uint8_t  type;         /* enum htoe_lease_type */
	uint8_t  status;       /* enum htoe_lease_status */
	uint32_t session;      /* the lessee's incarnation */
	uint32_t req_id;       /* the lessee's request id (one per round) */
	uint32_t lease_id;     /* 0 in REQUEST and REFUSE */
	uint64_t size;         /* REQUEST: bytes wanted; GRANT: bytes granted */
	uint64_t offset;       /* GRANT: offset in the lessor's exported region */
	uint64_t addr;         /* GRANT: HT address at the lessor of the first byte */
	uint64_t duration_ns;  /* REQUEST: wanted (0: lessor default); GRANT, RENEW_ACK: granted */
};

/* Encode into buf (cap >= HTOE_LEASE_MSG_LEN): returns the length or
 * -ENOSPC / -EINVAL (bad type). */
int htoe_lease_msg_encode(const struct htoe_lease_msg *m, uint8_t *buf, size_t cap);
/* Decode: 0, or -EPROTO (not a lease message: protocol byte), -EPROTONOSUPPORT
 * (version), -EINVAL (length < 48, unknown type). Longer messages are
 * accepted (later versions may append fields). */
int htoe_lease_msg_decode(const uint8_t *buf, size_t len, struct htoe_lease_msg *m);

struct htoe_lease_cfg {
	uint16_t node_id;
	uint32_t session;          /* this incarnation, != 0; a restarted node takes a new one */

	/* lessor: export_size 0 = this node exports nothing */
	uint64_t export_addr;      /* HT address (at this node) of the exported region */
	uint64_t export_size;
	uint64_t align;            /* allocation granule, power of two (default 4096) */
	uint64_t default_duration_ns; /* granted when the lessee asks for 0 (default 1 s) */
	uint64_t max_duration_ns;  /* cap on a granted duration (default 10 s) */
	uint64_t grace_ns;         /* kept this long past the lessee's view (default 100 ms) */
	uint64_t tomb_ns;          /* a released/expired lease id stays known (default 2 × max) */

	/* lessee */
	uint64_t retry_ns;         /* first retransmission (default 1 ms) */
	uint64_t retry_max_ns;     /* backoff cap (default 64 ms) */
	uint64_t request_timeout_ns; /* a REQUEST unanswered this long is refused (default 1 s) */
	unsigned renew_div;        /* renew every duration / renew_div (default 3, >= 2) */
	/* The address map, to turn a grant (lessor, address) into a global
	 * address (htoe_lease_gaddr). NULL: info.gaddr stays 0. */
	const struct htoe_map *map;
	/* lessor: protect the export with the bridge's access table (htoe_acl_*
	 * in htoe.h): only a lease holder's requests reach its leased range;
	 * htoe_lease_pump() grants on a lease and revokes on release/expiry
	 * (default false) */
	bool acl;
	/* lessor: per-lessee quota, so that one node cannot take every slot
	 * or the whole export. A REQUEST that would give the node more than
	 * quota_slots active leases or quota_bytes bytes in all is refused
	 * with HTOE_LEASE_E_QUOTA (counted in quota_refused). Defaults: 16
	 * slots; quota_bytes 0 = half of the export (export_size / 2, rounded
	 * up to align). HTOE_LEASE_MAX / UINT64_MAX: no quota. */
	unsigned quota_slots;
	uint64_t quota_bytes;
};
void htoe_lease_cfg_defaults(struct htoe_lease_cfg *cfg);

/* Lessee lease states. */
enum htoe_lease_state {
	HTOE_LS_FREE = 0,
	HTOE_LS_REQUESTING,   /* REQUEST sent, waiting for GRANT/REFUSE */
	HTOE_LS_ACTIVE,       /* usable until valid_until (renewed automatically) */
	HTOE_LS_RELEASING,    /* RELEASE sent: no longer usable */
	HTOE_LS_RELEASED,     /* terminal: released (or expired after release) */
	HTOE_LS_REFUSED,      /* terminal: status says why */
	HTOE_LS_LOST,         /* terminal: renewal refused (status) or unanswered (TIMEOUT) */
};

struct htoe_lease_info {
	uint8_t  state;        /* enum htoe_lease_state */
	uint8_t  status;       /* REFUSED/LOST: enum htoe_lease_status */
	uint16_t lessor;
	uint32_t lease_id;
	uint64_t size;         /* granted (rounded up to the lessor's granule) */
	uint64_t offset;       /* in the lessor's export */
	uint64_t addr;         /* HT address at the lessor */
	uint64_t gaddr;        /* global address (0 if the map has none) */
	uint64_t duration_ns;
	uint64_t valid_until;  /* ACTIVE: the lessee's view of the expiry */
	uint64_t renewals;     /* successful renewals */
};

/* Events, for logging and for binding leases to users (dimm clients). */
enum htoe_lease_event_type {
	HTOE_LEV_GRANTED = 1,   /* lessee: handle is ACTIVE */
	HTOE_LEV_REFUSED,       /* lessee: status */
	HTOE_LEV_LOST,          /* lessee: status (TIMEOUT or UNKNOWN) */
	HTOE_LEV_RELEASED,      /* lessee: release done */
	HTOE_LEV_EXPORT_GRANTED,  /* lessor: a lease was created */
	HTOE_LEV_EXPORT_EXPIRED,  /* lessor: not renewed in time, memory free again */
	HTOE_LEV_EXPORT_RELEASED, /* lessor: released by its lessee, memory free again */
	HTOE_LEV_EXPORT_REVOKED,  /* lessor: its lessee restarted, memory free again */
};

struct htoe_lease_event {
	uint8_t  type;         /* enum htoe_lease_event_type */
	uint8_t  status;
	int      handle;       /* lessee: the handle; lessor: the export slot */
	uint16_t node;         /* the peer */
	uint32_t lease_id;
	uint64_t offset, size;
	uint64_t now;          /* when it happened */
};

struct htoe_lease_stats {
	uint64_t rx[8], tx[8];          /* messages by type */
	uint64_t rx_bad;                /* undecodable, wrong version */
	uint64_t rx_stale;              /* replies matching no current round */
	uint64_t retransmits;           /* lessee retransmissions */
	uint64_t reply_overflow;        /* lessor replies dropped: queue full */
	uint64_t event_overflow;
	uint64_t dup_requests;          /* REQUEST for a lease already granted */
	uint64_t granted, refused, expired, released; /* lessor */
	uint64_t stray_grants;          /* grants released because nobody wanted them */
	uint64_t lost;                  /* lessee */
	uint64_t quota_refused;         /* lessor: REQUESTs refused with E_QUOTA */
	uint64_t peer_restarts;         /* peers seen restarting (htoe_lease_peer_restarted) */
	uint64_t revoked;               /* lessor: leases dropped because their lessee restarted */
	uint64_t stale_requests;        /* lessor: REQUESTs refused with E_STALE */
};

struct htoe_lease_ep;

/* NULL with a message on a bad config (session field 0, align not a power of
 * two, export not aligned, ...). */
struct htoe_lease_ep *htoe_lease_new(const struct htoe_lease_cfg *cfg, char *err, size_t errlen);
void htoe_lease_free(struct htoe_lease_ep *ep);

/* A received lease message from `node`. 0, or a negative errno from
 * htoe_lease_msg_decode (counted, ignored). */
int htoe_lease_input(struct htoe_lease_ep *ep, uint16_t node, const uint8_t *msg, size_t len,
		     uint64_t now);
/* Runs the timers and writes the next message to send into buf (cap >=
 * HTOE_LEASE_MSG_LEN): its length with *node set, or 0 if nothing is due.
 * Call until it returns 0. */
int htoe_lease_output(struct htoe_lease_ep *ep, uint16_t *node, uint8_t *buf, size_t cap,
		      uint64_t now);
/* Run the timers only (expiries, renewals due, request timeouts). */
void htoe_lease_timers(struct htoe_lease_ep *ep, uint64_t now);
/* Earliest time htoe_lease_output/timers has work; UINT64_MAX if none. */
uint64_t htoe_lease_next_deadline(const struct htoe_lease_ep *ep);
/* Next event: 1 and *ev, or 0. */
int htoe_lease_event(struct htoe_lease_ep *ep, struct htoe_lease_event *ev);

struct htoe;
/* Driver helper for a bridge whose CTRL messages are all lease messages
 * (others are counted as rx_bad and dropped): receive, run timers, send;
 * with cfg.acl, then bring the bridge's access table in step with the
 * active leases (htoe_lease_acl_sync). Returns messages moved. */
unsigned htoe_lease_pump(struct htoe_lease_ep *ep, struct htoe *b, uint64_t now);
/* With cfg.acl (else it does nothing): protect the export in b's access
 * table and grant read/write on each active lease to its holder, nothing
 * else. Call it once right after creating the endpoint and the bridge, so
 * the export is closed before the first frame arrives (no lease covers it
 * yet), and after htoe_lease_input/output/timers (htoe_lease_pump does). */
void htoe_lease_acl_sync(const struct htoe_lease_ep *ep, struct htoe *b);

/* A peer restarted (its bridge has a new incarnation, htoe.h): every lease
 * it held from us is dropped at once (HTOE_LEV_EXPORT_REVOKED: its new
 * incarnation knows nothing of them), every lease we held from it is LOST
 * with status HTOE_LEASE_E_PEER_RESTARTED (the memory behind it is gone;
 * a REQUESTING one is refused with that status). */
void htoe_lease_peer_restarted(struct htoe_lease_ep *ep, uint16_t node, uint64_t now);
/* Watch b's VLs for peers with a new incarnation (htoe_vl_stats
 * .peer_restarts) and call htoe_lease_peer_restarted for each; the first
 * call only learns the counters. htoe_lease_pump calls it; a driver that
 * does not use the pump calls it every poll (it reads one counter,
 * htoe_stats.peer_restarts, until some VL saw a restart). */
void htoe_lease_watch(struct htoe_lease_ep *ep, const struct htoe *b, uint64_t now);

/* ---- lessee */

/* Ask `lessor` for `size` bytes for duration_ns (0: the lessor's default).
 * Returns a handle >= 0; -EINVAL (size 0, lessor is this node), -ENOSPC (all
 * HTOE_LEASE_MAX handles in use). Progress: events / htoe_lease_get(). */
int htoe_lease_request(struct htoe_lease_ep *ep, uint16_t lessor, uint64_t size,
		       uint64_t duration_ns, uint64_t now);
/* Give an ACTIVE (or REQUESTING) lease back: 0, or -EINVAL. The memory must
 * not be used any more (flush posted writes first). */
int htoe_lease_release(struct htoe_lease_ep *ep, int handle, uint64_t now);
/* 0 and *info, or -EINVAL for a bad handle. */
int htoe_lease_get(const struct htoe_lease_ep *ep, int handle, struct htoe_lease_info *info);
/* Free a handle in a terminal state (RELEASED, REFUSED, LOST): 0 or -EBUSY. */
int htoe_lease_forget(struct htoe_lease_ep *ep, int handle);
/* True if the lease may be used at `now` (ACTIVE and now < valid_until). */
bool htoe_lease_usable(const struct htoe_lease_ep *ep, int handle, uint64_t now);

/* ---- lessor */

struct htoe_lease_export_info {
	bool     active;
	uint16_t node;         /* the lessee */
	uint32_t session, lease_id;
	uint64_t offset, size;
	uint64_t expiry;       /* the lessor's expiry time */
};
/* Slot i (0..HTOE_LEASE_MAX-1): 0 and *info, -EINVAL out of range. */
int htoe_lease_export_get(const struct htoe_lease_ep *ep, unsigned i,
			  struct htoe_lease_export_info *info);
unsigned htoe_lease_export_count(const struct htoe_lease_ep *ep); /* active leases */
uint64_t htoe_lease_export_free(const struct htoe_lease_ep *ep);  /* free bytes */

const struct htoe_lease_stats *htoe_lease_stats(const struct htoe_lease_ep *ep);

/* The global address of [addr, addr+size) at `node` through the map (range
 * or mask mode): 0 and *gaddr, or -ENOENT if no window of the map covers it
 * whole. Checked with htoe_map_lookup(). */
int htoe_lease_gaddr(const struct htoe_map *map, uint16_t node, uint64_t addr, uint64_t size,
		     uint64_t *gaddr);

#endif
