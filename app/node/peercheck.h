/* SPDX-License-Identifier: BSD-3-Clause
 * The end-of-run cross-check between processes: each node's memory against
 * its peer's shadow, over the wire (digest messages in CTRL frames,
 * htoe/htoe_digest.h; docs/bridge.md "Memory cross-check").
 *
 * Asker: once a verified workload on another process's node is done (the
 * read-back sweep verified, nothing in flight), its window's bytes it owns
 * (runs of 64-byte blocks not tainted: each byte written or read since the
 * start, none reported lost since, ht_wl_tainted) are asked of the target
 * node, one run at a time, retried with backoff until answered. Each answer's
 * CRC32C is compared with the shadow's: a difference is a run that differs.
 * When the node's run ends the same runs are asked once more (pc_ask_again):
 * a run confirmed before that differs now was written after the node's last
 * access (a forger's write) and fails the asker's run too.
 * Answerer: answers from its memory once every write its peers' acknowledged
 * frames carried is applied, and records what it answered, so that the end
 * of its own run finds a range a peer confirmed and that changed afterwards.
 *
 * No DPDK, no clock (`now` from the caller), no allocation. Messages from the
 * wire are hostile: the bridge has checked a CTRL frame's source MAC, node
 * and incarnation; here every message is decoded strictly, an answer is taken
 * only from the node asked, for this incarnation, the run asked and the id
 * asked, and the rest is counted (bad, stale, refused).
 */
#ifndef HTNODE_PEERCHECK_H
#define HTNODE_PEERCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "htoe/htoe.h"
#include "htoe/htoe_digest.h"

#include "htmodel/ht_workload.h"

#define PC_MAX_RUNS    64u   /* runs asked per window (the rest: not compared) */
#define PC_MAX_RECORDS 64u   /* ranges an answerer keeps */
#define PC_RETRY_NS    10000000ull   /* first retransmission of a REQUEST */
#define PC_RETRY_MAX_NS 200000000ull /* backoff cap */

enum pc_state {
	PC_IDLE = 0,      /* not asked (yet) */
	PC_ASKING,        /* runs asked, answers awaited */
	PC_CONFIRMED,     /* every run answered and equal to the shadow */
	PC_DIFFERS,       /* every run answered, some differ (or were refused) */
	PC_GONE,          /* the peer is gone: its memory lost, nothing compared since */
};

struct pc_run {
	uint64_t off, len;    /* in the peer's exported memory */
	uint32_t here, there; /* CRC32C of the shadow, of the peer's answer */
	uint8_t  status;      /* enum htoe_digest_status of the answer */
	bool     answered;
	bool     changed;     /* confirmed, then differs in the final check */
};

enum pc_final {
	PC_FINAL_NONE = 0,    /* not asked again (yet) */
	PC_FINAL_ASKING,      /* the runs asked again at the end of the run */
	PC_FINAL_DONE,        /* every run answered again */
	PC_FINAL_SILENT,      /* the peer stopped answering: not compared again */
};

struct pc_asker {
	int      state;                 /* enum pc_state */
	uint16_t peer;
	uint32_t session;               /* this node's incarnation */
	uint32_t id;                    /* id of run[cur] (ids grow across starts) */
	uint64_t woff;                  /* the window's offset in the peer's memory */
	uint64_t lost;                  /* the workload's loss reports when the runs were made */
	struct pc_run run[PC_MAX_RUNS];
	unsigned n_run, cur, differ;
	int      final;                 /* enum pc_final: the check again at the end */
	unsigned changed;               /* runs confirmed, then differing at the end */
	uint64_t excluded;              /* bytes of the window not owned (ht_wl_tainted) */
	uint64_t uncompared;            /* bytes beyond PC_MAX_RUNS runs */
	uint64_t next_tx_ns, backoff_ns;
	uint64_t requests;              /* REQUESTs sent (retransmissions too) */
};

struct pc_record {
	uint16_t node;
	uint64_t off, len;
	uint32_t crc;                   /* what was answered */
	uint64_t restarts;              /* the VL's peer_restarts then */
};

struct pc_answerer {
	struct pc_record rec[PC_MAX_RECORDS];
	unsigned n;
	uint64_t answered;              /* ANSWERs sent with status OK */
	uint64_t refused;               /* ANSWERs with another status */
	uint64_t bad;                   /* messages that do not decode (other protocols too) */
	uint64_t stale;                 /* ANSWERs that match no run asked */
};

struct peercheck {
	struct pc_asker ask;
	struct pc_answerer ans;
};

/* Ask peer for the window of workload w (its shadow, wsize bytes at offset
 * woff of the peer's memory), runs made from w's taint. A new start (the
 * workload's loss reports changed) forgets the earlier answers. */
void pc_ask_start(struct pc_asker *k, uint16_t peer, uint32_t session, uint64_t woff,
		  const struct ht_workload *w, uint64_t now);
/* At the end of the node's run: the runs answered are asked once more (the
 * same requests, the same retransmissions); a run confirmed before whose
 * answer now differs from the shadow is `changed` and the check DIFFERS. Only
 * once, after a check answered in full (CONFIRMED or DIFFERS); false if not
 * started. */
bool pc_ask_again(struct pc_asker *k, uint64_t now);
/* The final check gets no answer: the first verdict stands, not compared again. */
void pc_ask_silent(struct pc_asker *k);
static inline bool pc_asking_again(const struct pc_asker *k)
{
	return k->final == PC_FINAL_ASKING;
}
/* The peer is gone for good: nothing more is asked. */
void pc_ask_gone(struct pc_asker *k);
static inline bool pc_asking(const struct pc_asker *k) { return k->state == PC_ASKING; }

/* One step: the CTRL messages received (answers to the asker, requests
 * answered from mem[0, mem_size) once htoe_local_pending(b) is 0), then the
 * asker's (re)transmission when due. w: the asking workload (NULL: none); a
 * change of its loss reports makes the runs again. Returns the messages
 * handed to the bridge (htoe_ctrl_send): frames to send now. */
unsigned pc_poll(struct peercheck *pc, struct htoe *b, const struct ht_workload *w,
		 const uint8_t *mem, uint64_t mem_size, uint64_t now);

#endif
