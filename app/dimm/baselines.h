/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm baselines (docs/dimm.md, "Baselines"): what a user would pick
 * instead of a remote page fault over HToE, measured in the same run.
 *
 *   uffd  the local userfaultfd round trip: a handler thread copies a local
 *         page (dimm_uffd_roundtrip), time from the access to its return;
 *   tcp   the same pager (lib/dimm/dimm_pager) fetching its pages over TCP
 *         from a page server in another process: a forked child on CPU 1
 *         serves 4 KiB pages on loopback, request/response, TCP_NODELAY,
 *         blocking sockets (app/common/tcp_child). The pager's client is
 *         served directly (dimm_op_take/dimm_op_complete) by a thread that
 *         sleeps in poll() on the userfaultfd when idle. Its fault time is
 *         the pager's service time, the same measure as the remote runs'
 *         fault p50/p99 (from reading the fault to the page installed); the
 *         access-to-return time is given too.
 * Both touch BL_PAGES pages once each (first-touch read faults, no budget
 * limit), on the calling thread's CPU; the pager thread shares it, as the
 * borrower's loop shares the application's CPU in htoe-dimm. Every page the
 * TCP pager installs is checked against the server's content.
 */
#ifndef HTOE_DIMM_BASELINES_H
#define HTOE_DIMM_BASELINES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/lat_hist.h"

#define BL_PAGES 2048u

struct dimm_baselines {
	bool     uffd_done, tcp_done;
	unsigned pages;
	double   uffd_p50_us, uffd_p99_us;
	double   tcp_p50_us, tcp_p99_us;       /* pager service time */
	double   tcp_rt_p50_us, tcp_rt_p99_us; /* access to return */
	char     uffd_why[256], tcp_why[256];  /* why a part was not measured */
};

/*
 * The baseline of a remote fault: the local userfaultfd round trip. Maps
 * `pages` pages of anonymous memory, registers them for missing faults and
 * touches each once from the calling thread, while a handler thread (same
 * CPU affinity as the caller; it sleeps in poll() on the userfaultfd, as a
 * pager does) serves each fault by copying a local page (UFFDIO_COPY). The
 * time from the access to its return - fault delivery, hand-off, copy,
 * wake-up - of each page goes into hist. 0, or a negative errno with a
 * message in err (userfaultfd unavailable, also when HTOE_DIMM_NO_UFFD is
 * set; out of memory). Also tests/dimm/bench_dimm's first figure.
 */
int dimm_uffd_roundtrip(unsigned pages, struct lat_hist *hist, char *err, size_t errlen);

/* Measure both (each part may fail on its own: *_done false, *_why says
 * why). Returns true if both were measured. */
bool dimm_baselines_measure(struct dimm_baselines *b);

#endif
