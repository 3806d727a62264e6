/* SPDX-License-Identifier: BSD-3-Clause
 * The DPDK driver of one bridge on one port (see driver.h): RX, TX,
 * timers, peer liveness. Shared by htoe-bridge and htoe-dimm.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_cycles.h>
#include <rte_interrupts.h>
#include <rte_log.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include "driver.h"
#include "impair.h"
#include "path_probe.h"

#ifdef HTOE_CG_PATH
int br_cg_on;
#endif
#ifdef HTOE_TSC_PATH
__thread struct br_path_tsc br_path_tsc;

void br_path_report(unsigned lcore, uint64_t tsc_hz)
{
	static const char *const name[BR_PATH_STAGES] = { "input", "model", "framing", "wire",
							   "glue" };
	const struct br_path_tsc *p = &br_path_tsc;
	uint64_t t0 = rte_rdtsc(), t1 = t0;
	double per_mark, ns = 1e9 / (double)tsc_hz, all = 0;
	char line[256];
	int o;

	if (!p->n)
		return;
	/* the cost of one mark: a rdtsc */
	for (unsigned i = 0; i < 1000; i++)
		t1 = rte_rdtsc();
	per_mark = (double)(t1 - t0) / 1000;
	o = snprintf(line, sizeof(line), "path (tsc_path): lcore %u: %" PRIu64 " paths; ns per path:",
		     lcore, p->n);
	for (unsigned s = 0; s < BR_PATH_STAGES; s++) {
		double c = ((double)p->sum[s] - per_mark * (double)p->marks[s]) / (double)p->n;

		all += c;
		o += snprintf(line + o, sizeof(line) - (size_t)o, " %s %.1f", name[s],
			      c > 0 ? c * ns : 0);
	}
	fprintf(stderr, "%s; in all %.1f (a mark's %.1f ns taken off each)\n", line, all * ns,
		per_mark * ns);
}
#endif

int br_drv_init(struct br_drv *d, struct htoe *b, struct br_port *port,
		struct rte_mempool *pool, uint16_t burst, uint16_t id, const char *prog,
		struct br_counters *c, char *err, size_t errlen)
{
	unsigned n = htoe_n_vls(b);

	d->b = b;
	d->port = port;
	d->pool = pool;
	d->burst = burst ? burst : 32;
	d->data_at = (uint32_t)(sizeof(struct rte_mbuf) + rte_pktmbuf_priv_size(pool) +
				RTE_PKTMBUF_HEADROOM);
	d->id = id;
	d->prog = prog;
	d->c = c;
	d->deadline = 0;
	d->n_stash = d->n_done = 0;
	d->n_watch = n;
	d->watch = calloc(n ? n : 1, sizeof(*d->watch));
	if (!d->watch) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------ mbufs in bulk */

/* An mbuf finished with becomes the TX stash's next one when it can: a
 * plain single-segment mbuf of the driver's pool that nothing else holds
 * any more, reset as the pool would hand it out. A received request's mbuf
 * thus carries its response (no pool round trip on a read's path: the
 * free, and the stash's refill, cost more than the reset). True if kept.
 * The data lines of the frame it brought (the first two at most: a read's
 * request or response fits in them) are written now: that frame was
 * written on the sender's core, and the framing's first store to a line
 * still shared with it waits for the sender's copy to be invalidated, with
 * every store of the framing queued behind it on a round trip's path. */
static inline bool recycle(struct br_drv *d, struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_data_len(m);
	uint8_t *f;

	if (d->n_stash >= d->burst || d->n_stash >= RTE_DIM(d->stash) || m->pool != d->pool ||
	    m->nb_segs != 1 || !RTE_MBUF_DIRECT(m) || RTE_MBUF_HAS_EXTBUF(m))
		return false;
	if (!rte_pktmbuf_prefree_seg(m))
		return true; /* still held elsewhere (an RX duplicate): its last holder frees it */
	rte_pktmbuf_reset(m);
	f = rte_pktmbuf_mtod(m, uint8_t *);
	/* (atomic: stores to bytes the framing overwrites, kept all the same) */
	if (len && rte_pktmbuf_tailroom(m) >= 2 * RTE_CACHE_LINE_SIZE) {
		__atomic_store_n((uint64_t *)(void *)f, 0, __ATOMIC_RELAXED);
		if (len > RTE_CACHE_LINE_SIZE)
			__atomic_store_n((uint64_t *)(void *)(f + RTE_CACHE_LINE_SIZE), 0,
					 __ATOMIC_RELAXED);
	}
	d->stash[d->n_stash++] = m;
	return true;
}

/* The mbufs finished with go back to the stash (recycle) or to the pool
 * together. A single one is freed inline: rte_pktmbuf_free_bulk's set-up
 * costs about 60 instructions more than rte_pktmbuf_free for one mbuf
 * (callgrind), and one frame per poll is the latency-bound case. */
static __rte_noinline void done_free(struct br_drv *d)
{
	unsigned k = 0;

	for (unsigned i = 0; i < d->n_done; i++)
		if (!recycle(d, d->done[i]))
			d->done[k++] = d->done[i];
	if (k == 1)
		rte_pktmbuf_free(d->done[0]);
	else if (k)
		rte_pktmbuf_free_bulk(d->done, k);
	d->n_done = 0;
}

static inline void done_flush(struct br_drv *d)
{
	if (d->n_done)
		done_free(d);
}

/* `m` is finished with (delivered, or dropped): freed with the others at
 * the end of the call. An mbuf delivered twice (an RX duplicate, refcnt 2)
 * is put here twice. */
static inline void done(struct br_drv *d, struct rte_mbuf *m)
{
	d->done[d->n_done++] = m;
	if (unlikely(d->n_done == RTE_DIM(d->done)))
		done_flush(d);
}

/* Fills the empty stash with `burst` mbufs in one bulk allocation (fewer
 * when the pool runs short); false (counted) when the pool has none. */
static __rte_noinline bool stash_fill(struct br_drv *d)
{
	unsigned n = d->burst < RTE_DIM(d->stash) ? d->burst : RTE_DIM(d->stash);

	while (n && rte_pktmbuf_alloc_bulk(d->pool, d->stash, n) != 0)
		n /= 2;
	if (!n) {
		d->c->alloc_fail++;
		return false;
	}
	d->n_stash = n;
	return true;
}

/* An mbuf for a frame to send, from the stash; NULL when the pool has
 * none. */
static inline struct rte_mbuf *tx_mbuf(struct br_drv *d)
{
	if (unlikely(!d->n_stash) && !stash_fill(d))
		return NULL;
	return d->stash[--d->n_stash];
}

/* Back into the stash: taken by tx_mbuf and not used. */
static inline void tx_mbuf_unused(struct br_drv *d, struct rte_mbuf *m)
{
	d->stash[d->n_stash++] = m;
}

void br_drv_fini(struct br_drv *d)
{
	done_flush(d);
	if (d->n_stash)
		rte_pktmbuf_free_bulk(d->stash, d->n_stash);
	d->n_stash = 0;
	br_macsec_teardown(d->ms);
	free(d->watch);
	d->watch = NULL;
	d->n_watch = 0;
}

/* -------------------------------------------------------- one frame */

static void deliver(struct br_drv *d, struct rte_mbuf *m, uint64_t now)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint8_t *p = NULL;

	if (len <= sizeof(d->linbuf))
		p = rte_pktmbuf_read(m, 0, len, d->linbuf);
	/* MACsec: nothing unvalidated reaches the bridge (drops are counted
	 * under their 802.1AE counters, not in rx_bad) */
	if (p && d->ms && !(p = br_macsec_rx(d->ms, m, p, &len, d->linbuf, sizeof(d->linbuf)))) {
		done(d, m);
		return;
	}
	if (!p || htoe_frame_input(d->b, p, len, now) < 0)
		d->c->rx_bad++;
	done(d, m); /* the bridge has copied what it keeps */
}

/* A copy of m for the capture of n's port: onto n->cap_ring (htoe-bridge's writer), else
 * into n->cap[tx] at once (htoe-dimm). A full ring or an empty pool loses the copy (counted
 * as cap_dropped), never blocks the data path. */
static void capture_copy(struct br_drv *n, const struct rte_mbuf *m, bool tx, uint64_t now)
{
	struct rte_mbuf *c;
	struct br_cap_hdr h;
	uint32_t len = rte_pktmbuf_pkt_len(m), room, cl;
	uint8_t *d;
	const void *src;

	if (!n->cap_ring) {
		/* written here, on the node's own thread */
		cl = len < sizeof(n->linbuf) ? len : (uint32_t)sizeof(n->linbuf);
		src = rte_pktmbuf_read(m, 0, cl, n->linbuf);
		if (src) {
			br_dumper_write(n->cap[tx], src, cl, len, n->cap_t0_ns + now);
			n->c->cap_frames++;
		}
		return;
	}
	c = rte_pktmbuf_alloc(n->cap_pool);
	if (!c) {
		n->c->cap_dropped++;
		return;
	}
	room = rte_pktmbuf_tailroom(c) - (uint32_t)sizeof(h);
	cl = len < room ? len : room;
	d = rte_pktmbuf_mtod(c, uint8_t *);
	h.ns = now;
	h.len = len;
	h.dumper = (uint16_t)(2 * n->port->cap_idx + (tx ? 1 : 0));
	h.pad = 0;
	memcpy(d, &h, sizeof(h));
	src = rte_pktmbuf_read(m, 0, cl, d + sizeof(h));
	if (src && src != d + sizeof(h))
		memcpy(d + sizeof(h), src, cl);
	c->data_len = (uint16_t)(sizeof(h) + cl);
	c->pkt_len = c->data_len;
	if (rte_ring_sp_enqueue(n->cap_ring, c) != 0) {
		rte_pktmbuf_free(c);
		n->c->cap_dropped++;
		return;
	}
	n->c->cap_frames++;
}

static void wire_tx(struct br_drv *d, struct rte_mbuf *m, uint64_t now)
{
	struct br_port *p = d->port;

	if (d->cap_ring || d->cap[1])
		capture_copy(d, m, true, now);
	d->c->tx_frames++;
	d->c->tx_bytes += rte_pktmbuf_pkt_len(m);
	br_port_tx(p, m);
}

static struct rte_mbuf *copy_frame(struct br_drv *d, const struct rte_mbuf *m)
{
	struct rte_mbuf *c = tx_mbuf(d);
	uint16_t len = rte_pktmbuf_data_len(m);

	if (!c)
		return NULL;
	memcpy(rte_pktmbuf_mtod(c, uint8_t *), rte_pktmbuf_mtod(m, const uint8_t *), len);
	c->data_len = len;
	c->pkt_len = len;
	return c;
}

/* An impairment stage decides the frame's fate: dropped, corrupted,
 * delayed or held back (the stage keeps it until due), duplicated — on TX
 * as a copy in a new mbuf, on RX as the same mbuf delivered twice. */
static void hold(struct br_drv *d, struct impair *im, struct rte_mbuf *m, uint64_t at,
		 uint64_t now, bool tx)
{
	if (at > now && impair_hold(im, m, at) == 0)
		return;
	if (tx)
		wire_tx(d, m, now);
	else
		deliver(d, m, now);
}

static void impaired(struct br_drv *d, struct impair *im, struct rte_mbuf *m, uint64_t now,
		     bool tx)
{
	struct impair_verdict v;
	struct rte_mbuf *dup = NULL;

	impair_decide(im, rte_pktmbuf_pkt_len(m), now, &v);
	if (!v.copies) {
		done(d, m);
		return;
	}
	if (v.corrupt)
		impair_flip(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m), v.bit);
	if (v.copies == 2 && tx) {
		dup = copy_frame(d, m);
	} else if (v.copies == 2) {
		rte_mbuf_refcnt_update(m, 1); /* delivered (and freed) twice */
		dup = m;
	}
	hold(d, im, m, v.at[0], now, tx);
	if (dup)
		hold(d, im, dup, v.at[1], now, tx);
}

static void rx_frame(struct br_drv *d, struct rte_mbuf *m, uint64_t now)
{
	struct br_port *p = d->port;

	d->c->rx_frames++;
	d->c->rx_bytes += rte_pktmbuf_pkt_len(m);
	if (d->cap_ring || d->cap[0])
		capture_copy(d, m, false, now);
	if (__atomic_load_n(&d->deaf, __ATOMIC_RELAXED)) {
		done(d, m); /* a crashed node hears nothing */
		return;
	}
	if (p->imp_rx)
		impaired(d, p->imp_rx, m, now, false);
	else
		deliver(d, m, now);
}

unsigned br_drv_rx(struct br_drv *d, uint64_t now)
{
	struct br_port *p = d->port;
	struct rte_mbuf *pkts[BR_MAX_BURST], *m;
	uint16_t nb = br_port_rx(p, pkts, d->burst);
	unsigned moved = nb;

	if (!nb && likely(!p->imp_rx))
		return 0; /* an idle poll (mbufs left to free go after the next TX burst) */
	if (nb)
		br_path_begin();
	/* Each frame's header cache line and its first two data lines at once
	 * (a read's response with 64 bytes of data is 118 bytes long): a pool's
	 * mbuf keeps its frame a fixed distance after it (its headroom past the
	 * header), so the data lines need not wait for the header's data_off.
	 * All come from the sender's core; fetched one after the other, each
	 * waits for the one before. A frame elsewhere (another pool, an offset)
	 * is read where it is: the prefetches were only wasted. */
	for (uint16_t i = 0; i < nb; i++) {
		const uint8_t *f = (const uint8_t *)pkts[i] + d->data_at;

		rte_prefetch0(pkts[i]);
		rte_prefetch0(f);
		rte_prefetch0(f + RTE_CACHE_LINE_SIZE);
	}
	for (uint16_t i = 0; i < nb; i++)
		rx_frame(d, pkts[i], now);
	if (p->imp_rx)
		while ((m = impair_release(p->imp_rx, now)) != NULL) {
			deliver(d, m, now);
			moved++;
		}
	/* The received mbufs go back to the stash after the TX burst that
	 * follows (br_drv_tx), when the stash covers as many frames as came
	 * in: their second cache line (the sender's reset wrote it) would
	 * cross between the cores on a round trip's path at each end. */
	if (d->n_stash < moved)
		done_flush(d);
	br_path_mark(BR_PATH_INPUT);
	return moved;
}

bool br_drv_expire(struct br_drv *d, uint64_t now)
{
	if (now < d->deadline)
		return false;
	htoe_handle_expiry(d->b, now);
	d->c->expiries++;
	return true;
}

/* ------------------------------------------------------------------- TX */

unsigned br_drv_tx(struct br_drv *d, uint64_t now)
{
	struct br_port *p = d->port;
	struct rte_mbuf *m;
	unsigned sent = 0, lead = 0;

	/* CTRL frames the port refused before go first. While it refuses
	 * them nothing new is framed: it would be refused too, and a frame
	 * kept behind newer ones would reach a MACsec peer after them (an
	 * older PN, dropped as a replay). */
	if (unlikely(p->n_kept)) {
		unsigned n = p->n_kept, left = br_port_offer_kept(p);

		if (left)
			return n - left;
		sent = lead = n;
	}
	/* each frame straight into an mbuf of the stash; partly filled frames
	 * leave too (HTOE_TX_FLUSH): the program has drained its local side,
	 * so nothing more would join them in this iteration. The frames that
	 * nothing resends (the reset handshake, CTRL messages) first: they
	 * lead the burst, so a port that takes only part of it takes them,
	 * and a burst full of data never leaves them without a place. */
	for (unsigned flags = HTOE_TX_FLUSH | HTOE_TX_CTRL_ONLY;;) {
		int len;

		if (!(m = tx_mbuf(d)))
			break;
		uint32_t cap = rte_pktmbuf_tailroom(m);

		if (d->ms) /* room for the ICV; the SecTAG goes into the headroom */
			cap = cap > HTOE_MACSEC_ICV_LEN ? cap - HTOE_MACSEC_ICV_LEN : 0;
		br_path_mark(BR_PATH_GLUE);
		len = htoe_frame_output(d->b, rte_pktmbuf_mtod(m, uint8_t *),
					cap > HTOE_FRAME_MAX ? HTOE_FRAME_MAX : cap, now, flags);
		br_path_mark(BR_PATH_FRAMING);
		if (len <= 0) {
			tx_mbuf_unused(d, m); /* kept for the next frame */
			if (len == 0 && flags != HTOE_TX_FLUSH) {
				flags = HTOE_TX_FLUSH; /* then the data */
				continue;
			}
			break;
		}
		m->data_len = (uint16_t)len;
		m->pkt_len = (uint32_t)len;
		if (flags & HTOE_TX_CTRL_ONLY) /* kept if the port refuses it */
			m->ol_flags |= br_port_ctrl_flag;
		if (d->ms && br_macsec_tx(d->ms, m)) {
			done(d, m); /* counted (no SA / PN exhausted) */
			continue;
		}
		uint64_t wired = d->c->tx_frames;

		if (p->imp_tx)
			impaired(d, p->imp_tx, m, now, true); /* dropped or held, maybe */
		else
			wire_tx(d, m, now);
		/* The first frame that reaches the wire leaves at once: a
		 * read's request or response is one frame, and it need not
		 * wait for the framing to find that nothing follows it (a walk
		 * of the active VLs, on the round trip's path at each end),
		 * nor a window's first frame for its last; the frames after it
		 * leave together below. The same with an impairment stage on
		 * TX, or a lossy link would be measured slower for it. */
		if (!lead && d->c->tx_frames != wired) {
			br_port_flush(p);
			br_path_end();
			lead = sent + 1;
		}
		sent++;
		if (unlikely(p->n_kept))
			break; /* the port refused a CTRL frame: it is full */
	}
	if (p->imp_tx)
		while ((m = impair_release(p->imp_tx, now)) != NULL) {
			wire_tx(d, m, now);
			sent++;
		}
	/* The other frames of the iteration leave together: holding them for a
	 * drain timer would add its period to every round trip (and to the
	 * retransmission timer's view of it). */
	if (sent > lead)
		br_port_flush(p);
	done_flush(d);
	return sent;
}

uint64_t br_drv_impair_wake(const struct br_drv *d)
{
	uint64_t t = d->deadline;

	if (d->port->imp_rx && impair_next(d->port->imp_rx) < t)
		t = impair_next(d->port->imp_rx);
	if (d->port->imp_tx && impair_next(d->port->imp_tx) < t)
		t = impair_next(d->port->imp_tx);
	return t;
}

void br_drv_count(struct br_drv *d)
{
	struct br_port *p = d->port;
	struct br_counters *c = d->c;

	/* impairment counters live in the stages */
	c->imp_tx_dropped = c->imp_rx_dropped = 0;
	c->imp_dup = c->imp_corrupt = c->imp_reorder = c->imp_overflow = 0;
	for (int k = 0; k < 2; k++) {
		const struct impair *im = k ? p->imp_rx : p->imp_tx;

		if (!im)
			continue;
		const struct impair_stats *s = impair_stats(im);

		if (k)
			c->imp_rx_dropped = s->dropped + s->burst_dropped;
		else
			c->imp_tx_dropped = s->dropped + s->burst_dropped;
		c->imp_dup += s->duplicated;
		c->imp_corrupt += s->corrupted;
		c->imp_reorder += s->reordered;
		c->imp_overflow += s->overflow;
	}
	c->tx_refused = p->tx_refused;
}

/* ------------------------------------------------------------ liveness */

void br_drv_watch(struct br_drv *d, uint64_t now)
{
	if (now < d->next_watch_ns)
		return;
	d->next_watch_ns = now + 100000000ull;
	for (unsigned i = 0; i < d->n_watch; i++) {
		struct br_peer_watch *w = &d->watch[i];
		uint16_t peer = htoe_vl_node(d->b, i);
		const struct htoe_vl_stats *v = htoe_get_vl_stats(d->b, peer);

		if (!v)
			continue;
		if (v->rx_frames != w->rx) {
			/* it answered */
			if (w->reported)
				fprintf(stderr, "%s: node %u: peer node %u answers again (silent for "
					"%.1f s)\n", d->prog, d->id, peer,
					(double)(now - (w->last_rx_ns ? w->last_rx_ns : w->waiting_since)) /
					1e9);
			w->rx = v->rx_frames;
			w->tx = v->tx_frames;
			w->timeouts = v->timeouts;
			w->last_rx_ns = now;
			w->waiting_since = 0;
			w->reported = false;
			continue;
		}
		/* waiting for it: frames went to it since it last answered, and
		 * they need an answer — the VL is not up yet (its reset
		 * handshake), or a retransmission timer expired (an ack-only
		 * frame needs none: a quiet peer is not a silent one) */
		if (v->tx_frames != w->tx &&
		    (v->timeouts != w->timeouts || !htoe_vl_is_up(d->b, peer)) &&
		    !w->waiting_since)
			w->waiting_since = now ? now : 1;
		w->tx = v->tx_frames;
		w->timeouts = v->timeouts;
		if (w->waiting_since && !w->reported && now - w->waiting_since >= BR_PEER_SILENT_NS) {
			w->reported = true;
			if (w->last_rx_ns)
				fprintf(stderr, "%s: node %u: peer node %u has not answered for %.1f s "
					"(frames to it, none back on port %u, %s): is it still running, "
					"and is the link up?\n", d->prog, d->id, peer,
					(double)(now - w->waiting_since) / 1e9, d->port->cfg->index,
					d->port->name);
			else
				fprintf(stderr, "%s: node %u: peer node %u not connected: no frame from "
					"it in %.1f s on port %u (%s): is it running, and is the other "
					"end of the port there?\n", d->prog, d->id, peer,
					(double)(now - w->waiting_since) / 1e9, d->port->cfg->index,
					d->port->name);
		}
	}
}

/* ------------------------------------------------------------ polling */

const char *br_poll_mode_name(enum br_poll_mode m)
{
	return m == BR_POLL_ADAPTIVE ? "adaptive" : "busy";
}

void br_idle_init(struct br_idle *s, enum br_poll_mode mode, const uint16_t *ports,
		  unsigned n_ports, uint64_t tsc_hz)
{
	memset(s, 0, sizeof(*s));
	s->mode = mode;
	s->tsc_hz = tsc_hz;
	s->t_last = rte_rdtsc();
	if (mode != BR_POLL_ADAPTIVE)
		return;
	/* its short sleeps (tens of microseconds) last what they ask: the
	 * default 50 µs timer slack of a thread would more than double them */
	prctl(PR_SET_TIMERSLACK, BR_IDLE_SLACK_NS, 0, 0, 0);
	/* a PMD without RX interrupts (net_ring, memif here) is no error: its
	 * lcore sleeps on timers only; ethdev's "Rx Intr handle unset" is muted */
	int lvl = rte_log_get_level(rte_eth_dev_logtype);

	rte_log_set_level(rte_eth_dev_logtype, RTE_LOG_CRIT);
	for (unsigned i = 0; i < n_ports && s->n_intr < BR_IDLE_MAX_PORTS; i++)
		/* as DPDK's examples/l3fwd-power: the queue's event fd into this
		 * thread's epoll */
		if (rte_eth_dev_rx_intr_ctl_q(ports[i], 0, RTE_EPOLL_PER_THREAD,
					      RTE_INTR_EVENT_ADD, NULL) == 0)
			s->intr_port[s->n_intr++] = ports[i];
	if (lvl >= 0)
		rte_log_set_level(rte_eth_dev_logtype, (uint32_t)lvl);
}

void br_idle_fini(struct br_idle *s)
{
	for (unsigned i = 0; i < s->n_intr; i++)
		rte_eth_dev_rx_intr_ctl_q(s->intr_port[i], 0, RTE_EPOLL_PER_THREAD,
					  RTE_INTR_EVENT_DEL, NULL);
}

static void idle_sleep(struct br_idle *s, uint64_t ns)
{
	struct rte_epoll_event ev[8];
	bool intr = s->n_intr && ns >= 1000000;

	for (unsigned i = 0; intr && i < s->n_intr; i++)
		if (rte_eth_dev_rx_intr_enable(s->intr_port[i], 0) != 0)
			intr = false;
	if (intr) {
		/* woken by the first frame, or after ns (epoll: milliseconds) */
		if (rte_epoll_wait(RTE_EPOLL_PER_THREAD, ev, RTE_DIM(ev), (int)(ns / 1000000)) > 0)
			s->intr_wakeups++;
	} else {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)ns };

		nanosleep(&ts, NULL);
	}
	for (unsigned i = 0; s->n_intr && i < s->n_intr; i++)
		rte_eth_dev_rx_intr_disable(s->intr_port[i], 0);
	s->sleeps++;
}

uint64_t br_idle_after_adaptive(struct br_idle *s, bool worked, uint64_t now, uint64_t wake,
				uint64_t t)
{
	uint64_t d;

	if (worked) {
		s->idle_since = 0;
		return t;
	}
	if (!s->idle_since) {
		s->idle_since = now ? now : 1;
		return t;
	}
	d = br_idle_sleep_ns(now - s->idle_since, wake > now ? wake - now : 0, s->n_intr != 0);
	if (!d) {
		rte_pause();
		return t;
	}
	idle_sleep(s, d);
	uint64_t t2 = rte_rdtsc();

	s->sleep_tsc += t2 - t;
	s->total_tsc += t2 - t;
	s->t_last = t2;
	return t2;
}
