/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench internals: the measurements that do not go through htoe-bridge
 * (raw frame forwarding on net_ring, TCP loopback ping-pong, MACsec crypto
 * path against the raw backend). See app/htoe-bench.c and docs/benchmarks.md.
 */
#ifndef HTOE_BENCH_H
#define HTOE_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/lat_hist.h"

/* Hidden worker mode `htoe-bench __fwd EAL-ARGS -- FRAME_LEN SECONDS`: two
 * net_ring ports joined crosswise in this process (rte_eth_from_rings), lcore
 * 0 sends bursts of FRAME_LEN-byte frames (header written from a template,
 * like testpmd txonly) on port 0 and frees what comes back, lcore 1 receives
 * them on port 1, swaps the MACs (like testpmd macswap) and sends them back.
 * Prints one JSON line {"frame_len","frames","seconds","fps"} (frames
 * forwarded by lcore 1 in the measured interval). Returns the exit status.
 *
 * The other modes (`EAL-ARGS -- MODE ARGS`; frames from node 1's MAC to node
 * 2's, EtherType 0x88B5):
 *   pingpong FRAME_LEN SECONDS  the same net_ring pair; one frame in flight:
 *       the main lcore sends it on port 0 and waits for it, lcore 1 swaps the
 *       MACs and sends it back. {"frame_len","lost","rtt":{lat_json}}
 * and on the one ethdev the EAL made from --vdev (memif, af_packet, af_xdp):
 *   ping FRAME_LEN SECONDS  the sending half of that ping-pong (same JSON)
 *   echo                    the echoing half, until SIGINT; {"echoed"}
 *   tx FRAME_LEN            bursts of 32 frames until SIGINT (testpmd txonly)
 *   rx SECONDS              counts the 0x88B5 frames over SECONDS after the
 *                           first one + 0.2 s (testpmd rxonly);
 *                           {"frame_len","frames","seconds","fps"}
 * A ping counts a frame not back in 10 ms as lost (and sends the next one);
 * ping and rx give up (exit 4) when nothing arrives for 10 / 20 s. */
int bench_fwd_main(int argc, char **argv);

/* TCP loopback ping-pong of `len`-byte messages between this process (pinned
 * to CPU 0) and a forked child (CPU 1): TCP_NODELAY, blocking sockets, one
 * message in flight, for `secs` seconds after a short warm-up. Round trips
 * go into *h. 0, or -1 with a message in err. */
int bench_tcp_pingpong(size_t len, double secs, struct lat_hist *h, char *err, size_t errlen);

/* MACsec: the crypto path (htoe_macsec_protect + htoe_macsec_validate of a
 * frame_len-byte frame, GCM-AES-128, encrypt, SCI in the SecTAG) against the
 * raw AES-GCM of the same backend on the same sizes (encrypt + decrypt of
 * the frame_len - 12 bytes MACsec protects, 28 bytes of AAD, tag check).
 * ns per frame (both directions). backend: "ipsec-mb" or "openssl".
 * path_ns/raw_ns: in place, as the bridge does (the _inplace API, SecTAG
 * into the headroom; raw in == out); oop_*: the out-of-place API.
 * 0, or -1 (backend not available: err says why). */
struct bench_crypto {
	double path_ns, raw_ns;          /* in place */
	double oop_path_ns, oop_raw_ns;  /* out of place */
};
int bench_crypto(const char *backend, size_t frame_len, double secs, struct bench_crypto *r,
		 char *err, size_t errlen);

/* CPU seconds process `pid` has used so far, all threads (from
 * /proc/PID/task/TID/schedstat); -1 if it is gone. */
double bench_proc_cpu_s(int pid);

/* Goodput against loss in both retry modes (app/bench/loss.c). run(mode,
 * impair, out) makes one 64-byte posted-write run of htoe-bridge with
 * `[bridge] retry = mode` and the INI text impair (NULL: lossless): 0 and
 * *out, or -1. Adds fig.loss_sweep. */
struct bench_write {
	double mbps, dropped, retransmits, frames; /* frames: sent by both nodes */
	double timeouts;                           /* RTO expiries, both nodes */
};
/* One 64-byte write run of secs with retry `mode` and [impair] text (NULL:
 * lossless). */
typedef int (*bench_write_fn)(const char *mode, const char *impair, double secs,
			      struct bench_write *out);
#include <jansson.h>
void bench_loss_sweep(json_t *fig, double secs, unsigned slices, bench_write_fn run);
/* A target line of the summary: name, value, goal, value <= goal wanted
 * (else >=), display scale and unit, why it may be missing. */
typedef void (*bench_target_fn)(const char *name, double v, double goal, bool le, double scale,
				const char *unit, const char *why);
/* The loss sweep's targets (fig.loss_sweep). */
void bench_loss_targets(json_t *sweep, bench_target_fn target, const char *why);

/* Incast (app/bench/incast.c): N = 1, 2, 4, 8 senders on lcore 0 writing
 * 64-byte posted writes for secs into one receiver on lcore 1 through a hub
 * port. run(label, ini, secs) runs htoe-bridge on that INI text: its JSON
 * summary (with bench_cpu_share: the share of its lcores' CPU time it got),
 * or NULL (the error noted). Adds fig.incast. */
typedef json_t *(*bench_ini_fn)(const char *label, const char *ini, double secs);
void bench_incast(json_t *fig, double secs, bench_ini_fn run);

/* One run of a series (incast): run(label, ini, secs) (ini freed),
 * then figures(summary, n): its figures with "vs_key" = key ÷ *ref (the
 * n = 1 run sets *ref; null without it), or NULL (the error noted). */
typedef json_t *(*bench_fig_fn)(json_t *sum, unsigned n, char *why, size_t wlen);
json_t *bench_series_run(const char *label, char *ini, double secs, bench_ini_fn run,
			 bench_fig_fn figures, unsigned n, const char *key, const char *vs_key,
			 double *ref);

/* Peers (app/bench/peers.c): 64-byte posted writes node 1 -> node 2 with 1,
 * 8 and 63 configured peers, all but node 2 idle, in interleaved rounds,
 * each P's median round against the 1-peer median (run as for
 * bench_incast). Adds fig.peers_scale. */
void bench_peers(json_t *fig, double secs, bench_ini_fn run);

/* htoe-bench.c's readers of a bridge's JSON summary: the object of array
 * whose integer `key` is v (or NULL: e.g. per_node by "id", a node's vl by
 * "peer"), a number (0 if absent); and its error log. */
json_t *bench_entry(json_t *array, const char *key, unsigned v);
json_t *bench_node_of(json_t *summary, unsigned id); /* per_node by "id" */
double bench_num(json_t *o, const char *k);
void bench_note_err(const char *what, const char *why);

/* CLOCK_MONOTONIC in ns / s. */
unsigned long long bench_now_ns(void);

#endif
