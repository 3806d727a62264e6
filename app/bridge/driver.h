/* SPDX-License-Identifier: BSD-3-Clause
 * The DPDK driver of one bridge (struct htoe) on one ethdev port, shared by
 * htoe-bridge (worker.c) and htoe-dimm (app/dimm/runtime.c). A program's
 * poll loop calls the pieces around its own local side, like DPDK's
 * examples/l2fwd:
 *
 *   br_drv_rx      rte_eth_rx_burst -> capture -> RX impairment -> MACsec
 *                  validation -> htoe_frame_input; then what the RX
 *                  impairment releases; the mbufs it is done with go
 *                  back to the pool in one bulk free at the end
 *   br_drv_expire  htoe_handle_expiry once drv->deadline has passed
 *   (the program:  its local side — htoe-bridge: requester, target and
 *                  workload; htoe-dimm: lease endpoint, dimm engine, pager;
 *                  then it sets drv->deadline to its next deadline)
 *   br_drv_tx      htoe_frame_output into an mbuf of the driver's stash
 *                  (filled from the pool in bulk) -> MACsec protection ->
 *                  TX impairment -> capture -> rte_eth_tx_buffer; what the
 *                  TX impairment releases; flush
 *   br_drv_watch   "peer not answering" / "answers again", once each
 *   br_idle_*      busy or adaptive polling of an lcore ([global] poll)
 *
 * Everything here runs on the lcore that owns the driver; nothing is
 * shared with other lcores but the mbuf pool and the capture ring.
 */
#ifndef HTOE_BRIDGE_DRIVER_H
#define HTOE_BRIDGE_DRIVER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "htoe/htoe.h"
#include "dumper.h"
#include "idle.h"
#include "macsec.h"
#include "port_io.h"

/* Driver counters of one node, written by its lcore only. All uint64_t.
 * br_drv fills the first group; the rest belong to the program's loop. */
struct br_counters {
	uint64_t rx_frames, rx_bytes;       /* received from the port */
	uint64_t rx_bad;                    /* refused by htoe_frame_input (any reason) */
	uint64_t tx_frames, tx_bytes;       /* handed to the port */
	uint64_t tx_refused;                /* not accepted by tx: freed */
	uint64_t alloc_fail;                /* mbuf allocation failures */
	uint64_t imp_tx_dropped, imp_rx_dropped, imp_dup, imp_corrupt, imp_reorder;
	uint64_t imp_overflow;              /* hold queue full: sent at once */
	uint64_t cap_frames, cap_dropped;   /* capture copies queued / lost */
	uint64_t expiries;                  /* htoe_handle_expiry calls */
	/* the program's loop */
	uint64_t polls, busy_polls;         /* loop iterations, ones that moved something */
	uint64_t poll_max_ns;               /* the longest node_poll() */
	uint64_t gap_max_ns;                /* the longest time between two polls of the node */
	uint64_t done;                      /* 1: workload done and quiescent */
	uint64_t busy;                      /* htoe_busy() + local side */
	uint64_t wl_finish_ns;              /* when the workload completed (0: not yet) */
	uint64_t left;                      /* clean stop: 1 LEAVE queued, 2 framed */
};

/* A peer that has not answered for this long is reported (once). */
#define BR_PEER_SILENT_NS 2000000000ull

struct br_peer_watch {
	uint64_t rx, tx, timeouts;          /* the VL's counters last seen */
	uint64_t waiting_since;             /* first frame sent after the last one received */
	uint64_t last_rx_ns;                /* when a frame from it was last seen (0: never) */
	bool     reported;                  /* "not answering" said */
};

struct br_macsec;

/* A frame's copy on a capture ring: this header, then the frame's first bytes. */
struct br_cap_hdr {
	uint64_t ns;       /* bridge time */
	uint32_t len;      /* original frame length */
	uint16_t dumper;   /* index into the writer's dumpers: 2 * port's cap_idx + tx */
	uint16_t pad;
};

struct br_drv {
	struct htoe *b;
	struct br_port *port;
	struct rte_mempool *pool;
	uint16_t burst;                     /* RX burst */
	uint32_t data_at;                   /* a pool mbuf's frame: this far from the mbuf */
	uint16_t id;                        /* the node's id (messages) */
	const char *prog;                   /* the program's name (messages) */
	struct br_counters *c;              /* the owner's counters */
	struct br_macsec *ms;               /* MACsec SecY (macsec.c); NULL: off */
	/* capture: copies (struct br_cap_hdr + the frame, in an mbuf of
	 * cap_pool) on a ring to a writer thread (htoe-bridge's main lcore), or
	 * written on this lcore into the dumpers (htoe-dimm) */
	struct rte_ring *cap_ring;
	struct rte_mempool *cap_pool;
	struct br_dumper *cap[2];           /* rx, tx */
	uint64_t cap_t0_ns;                 /* dumpers: the wall clock at time 0 */
	uint64_t deadline;                  /* expiry: htoe_handle_expiry from then on */
	int      deaf;                      /* test hook (atomic): drop every received frame */
	/* TX: mbufs taken from the pool in bulk (up to `burst` at a time),
	 * one per frame; what is left goes back in br_drv_fini */
	unsigned n_stash;
	struct rte_mbuf *stash[BR_MAX_BURST];
	/* mbufs finished with (delivered, dropped), freed in one bulk when the
	 * array is full and at the end of br_drv_rx / br_drv_tx */
	unsigned n_done;
	struct rte_mbuf *done[BR_MAX_BURST];
	unsigned n_watch;
	struct br_peer_watch *watch;        /* [htoe_n_vls] (br_drv_watch) */
	uint64_t next_watch_ns;
	uint8_t  linbuf[HTOE_FRAME_MAX + 64]; /* multi-segment RX, MACsec copies */
};

/* Binds the driver to its bridge, port, pool and counters (everything
 * else zero: no MACsec, no capture). 0, or -1 with a message (no memory). */
int br_drv_init(struct br_drv *d, struct htoe *b, struct br_port *port,
		struct rte_mempool *pool, uint16_t burst, uint16_t id, const char *prog,
		struct br_counters *c, char *err, size_t errlen);
/* Returns the stash's mbufs to the pool, frees the MACsec SecY and the
 * watch table (not the capture dumpers: br_dumper_free). */
void br_drv_fini(struct br_drv *d);

/* One RX burst and the RX impairment's due frames; returns the frames
 * handed on (received + released). */
unsigned br_drv_rx(struct br_drv *d, uint64_t now);
/* htoe_handle_expiry when drv->deadline has passed; true if it ran. */
bool br_drv_expire(struct br_drv *d, uint64_t now);
/* Every frame the bridge has (partly filled ones too: the local side has
 * been drained) and the TX impairment's due frames, then a flush; returns
 * the frames handed to the port. */
unsigned br_drv_tx(struct br_drv *d, uint64_t now);
/* The earliest time a frame held by an impairment stage is due, or
 * drv->deadline if sooner. */
uint64_t br_drv_impair_wake(const struct br_drv *d);
/* The earliest time the driver needs a call: drv->deadline, or a frame
 * held by an impairment stage (inline: every poll of every lcore asks). */
static inline uint64_t br_drv_next_wake(const struct br_drv *d)
{
	if (likely(!d->port->imp_rx && !d->port->imp_tx))
		return d->deadline;
	return br_drv_impair_wake(d);
}
/* Port-side counters into *c (tx_refused, impairment). */
void br_drv_count(struct br_drv *d);
/* Peer liveness messages on stderr, at most every 100 ms of `now`:
 * "peer node N has not answered for 2.0 s" once when frames that need an
 * answer (the VL's start-up handshake, data whose retransmission timer
 * expired) stay unanswered that long, "peer node N answers again" once
 * when it does. */
void br_drv_watch(struct br_drv *d, uint64_t now);

/* ------------------------------------------------------------ polling */

enum br_poll_mode { BR_POLL_BUSY = 0, BR_POLL_ADAPTIVE = 1 };

#define BR_IDLE_MAX_PORTS 64u

/* The polling state of one lcore. Times in TSC cycles. */
struct br_idle {
	enum br_poll_mode mode;
	uint64_t tsc_hz;
	uint64_t idle_since;                /* ns of the first idle iteration; 0: working */
	uint64_t t_last;                    /* TSC at the end of the previous br_idle_after */
	uint64_t busy_tsc, total_tsc, sleep_tsc; /* busy share = busy / total */
	uint64_t sleeps, intr_wakeups;
	unsigned n_intr;                    /* ports whose RX interrupt is armed for sleeps */
	uint16_t intr_port[BR_IDLE_MAX_PORTS];
};

/* On the lcore itself: with mode adaptive, registers the RX interrupts of
 * `ports` with this thread's epoll where the PMD has them (the port must
 * have been configured with intr_conf.rxq: br_ports_start does so when
 * [global] poll = adaptive). */
void br_idle_init(struct br_idle *s, enum br_poll_mode mode, const uint16_t *ports,
		  unsigned n_ports, uint64_t tsc_hz);
/* After each loop iteration: `worked` (frames moved or local work done),
 * `now` (ns, the iteration's time), `wake` (ns: the earliest deadline of
 * the lcore's drivers, br_drv_next_wake) and `tsc`, the TSC the caller read
 * at the end of its polls (0: read it here). Busy: counts and returns.
 * Adaptive: once idle for BR_IDLE_SPIN_NS it sleeps until `wake`, at most
 * as long as br_idle_sleep_ns() (idle.h) says; the first frame or local
 * work ends the idle state. Returns the TSC to start the next iteration
 * with: `tsc`, or the time after a sleep. A TSC read costs about 11 ns on
 * the VM of docs/benchmarks.md: br_lcore_loop reads it once per busy node
 * poll and once per four idle ones, and passes it here. */
uint64_t br_idle_after_adaptive(struct br_idle *s, bool worked, uint64_t now, uint64_t wake,
				uint64_t t);
/* (inline: a busy lcore's idle iteration only counts here) */
static inline uint64_t br_idle_after(struct br_idle *s, bool worked, uint64_t now, uint64_t wake,
				     uint64_t tsc)
{
	uint64_t t = tsc ? tsc : rte_rdtsc();

	s->total_tsc += t - s->t_last;
	if (worked)
		s->busy_tsc += t - s->t_last;
	s->t_last = t;
	if (s->mode != BR_POLL_ADAPTIVE)
		return t;
	return br_idle_after_adaptive(s, worked, now, wake, t);
}
void br_idle_fini(struct br_idle *s);
const char *br_poll_mode_name(enum br_poll_mode m);

#endif
