/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_pager: transparent remote memory through userfaultfd (docs/dimm.md).
 * The shell around dimm_policy.h (page states, budget, CLOCK, batches,
 * readahead), which does no I/O.
 *
 * dimm_pager_new() maps a region of anonymous memory and registers it with
 * userfaultfd. Code that only sees plain pointers into it runs on remote
 * memory: the first touch of a 4 KiB page faults, the pager fetches the
 * page from the lease (one 4 KiB dimm read = 64 pipelined 64-byte HT reads)
 * and installs it with UFFDIO_COPY. At most `budget` pages are resident;
 * beyond that the pager evicts (CLOCK, the reference bit set by the faults
 * it sees): a clean page is dropped (MADV_DONTNEED), a dirty page is first
 * written back (posted writes, then an HT Flush) and dropped only when the
 * flush confirmed it. Both go in batches: with its victim a fault evicts
 * up to 7 more of the next unreferenced victims of the same kind (an eighth
 * of the budget at most), clean ones dropped in one call, dirty ones
 * (with dirty tracking only) written back under one flush, which the fault
 * waits for, and dropped in one call when it confirms them.
 *
 * Dirty tracking: userfaultfd write-protection. A page fetched for a read
 * is installed write-protected (UFFDIO_COPY_MODE_WP); its first write
 * faults again (a WP fault, no data moves) and the pager marks it dirty and
 * lifts the protection; a page fetched for a write is installed writable
 * and dirty at once. Before a dirty page is written back it is
 * write-protected again, so the copy sent is stable even while other
 * threads run. Without WP support (or DIMM_PAGER_F_NO_WP) every page is
 * treated as dirty (every eviction writes back) and eviction relies on the
 * faulting thread being blocked: correct for one application thread.
 *
 * With DIMM_PAGER_F_WP_ASYNC, where the kernel has UFFD_FEATURE_WP_ASYNC and
 * PAGEMAP_SCAN (Linux 6.7+), the mode is "wp-async": pages are installed
 * write-protected as above,
 * but a first write does not fault — the kernel lifts the protection — and
 * the pager finds the written pages with PAGEMAP_SCAN (which protects them
 * again) when it needs to know: the victim at eviction, every page at a
 * sync, and the victim once more when its write-back is done (written
 * meanwhile: it stays). A readahead never evicts in this mode. Exact for
 * one application thread, which is stopped in its fault while the pager
 * evicts; with several threads a write to a clean page in the instant
 * between its scan and its drop would be lost. So it is opt-in: a program
 * that touches the mapping from one thread only asks for it (htoe-dimm
 * does); without the flag the pager uses write-protect faults, safe with
 * any number of threads.
 *
 * Cleaner (write-back ahead of eviction): when fewer than clean_low of the
 * slots the next faults will take are free or hold a clean page, the pager
 * writes back the dirty pages next in eviction order (the CLOCK hand's
 * order, without moving it) in bursts, after the faults it has read are
 * handled, i.e. overlapped with their fetches; a page so written stays
 * resident and clean, so the fault that evicts it later drops it without a
 * write-back round trip. It is the eviction's write-back (same protection,
 * flush, retries, error path) except that a confirmed page is kept: one
 * written meanwhile stays dirty (write-protect faults: writers wait for the
 * flush and then dirty it again; wp-async: the scan after the flush finds
 * it; a cleaned page found written again gets a second chance, as a WP
 * fault's reference gives it in wp mode). A fault whose victim is still
 * being cleaned waits for that write-back. Off unless clean_low is set
 * (it measured no faster on the project's VM and writes more: docs/dimm.md),
 * without dirty tracking (no-wp: nothing is ever known clean) and when the
 * budget holds the whole mapping. Counted in cleaned, clean_hits
 * and clean_waits. Run to completion: only while a demand fetch is in
 * flight (nobody polls otherwise).
 *
 * Warm VL resets: a fetch or a write-back that fails because the virtual
 * link was reset (a target abort, or -EPIPE from the flush: posted writes
 * may have been dropped) while the lease is still valid is sent again, as
 * it is idempotent: the page stays dirty (write-protected, resident) until
 * a flush acknowledges its write-back. Counted in fetch_retries and
 * writeback_retries; at most max_retries times in a row per operation.
 *
 * Errors: when a fetch or a write-back fails otherwise (remote node lost,
 * lease lost, poisoned response) or its retries are used up, the pager
 * enters the error state: the faulting
 * access, and every later fault on a page that is not resident, gets SIGBUS
 * (UFFDIO_POISON; without it the region is unregistered and made
 * inaccessible, so the access gets SIGSEGV). No access ever returns data
 * that did not come from the remote memory. dimm_pager_run() turns that
 * signal into an error return with the pager's message.
 *
 * Threads: dimm_pager_poll() runs on the pager's thread (typically the
 * node's poll thread, together with the engine); it never blocks. The
 * client given is used from that thread only. The mapping is used by any
 * other thread(s). dimm_pager_sync() is called from an application thread.
 * "The pager's thread" means one thread at a time: with DIMM_PAGER_F_SIGBUS
 * (run to completion, cfg.drive) the faulting thread polls the pager from
 * its signal handler, and the caller's drive() must exclude every other
 * poller meanwhile (htoe-dimm: an ownership word, docs/dimm.md "Threads
 * and CPUs").
 */
#ifndef DIMM_PAGER_H
#define DIMM_PAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/lat_hist.h"
#include "dimm.h"
#include "dimm_policy.h"

#define DIMM_PAGE 4096u

#define DIMM_PAGER_F_NO_WP     0x01u /* no write-protect dirty tracking */
#define DIMM_PAGER_F_NO_POISON 0x02u /* error path without UFFDIO_POISON */
#define DIMM_PAGER_F_WP_ASYNC  0x08u /* dirty tracking by UFFD_FEATURE_WP_ASYNC +
					PAGEMAP_SCAN where the kernel has them:
					ONE application thread only (above) */
#define DIMM_PAGER_F_SIGBUS    0x10u /* run to completion: see cfg.drive */
#define DIMM_PAGER_F_EXTERNAL  0x20u /* another process's memory: cfg.ext_* (below) */
#define DIMM_PAGER_F_NO_UFFD   0x04u /* act as if userfaultfd were unavailable (tests);
					also set by the environment HTOE_DIMM_NO_UFFD=1 */

struct dimm_pager_cfg {
	struct dimm_client *client;  /* the lease; used from the pager's thread only */
	/* Optional: a second client of the same lease, made with passpw_reads,
	 * through which the pages are fetched (NULL: `client`). A fault's
	 * fetch then goes ahead of the dirty pages written back before it
	 * (their writes wait for the exporter's posted credits) instead of
	 * behind them, in the engine and on the link; its depth must be at
	 * least 3 * 16 + 1. The pager fetches a page only once every write-back
	 * of it has been confirmed by a flush, so passing the writes in flight
	 * reads nothing stale. Do not write the mapped pages through another
	 * client while they are mapped. */
	struct dimm_client *fetch_client;
	uint64_t off;                /* offset in the client's region of the first byte */
	size_t   size;               /* bytes, multiple of DIMM_PAGE */
	unsigned budget;             /* resident pages at most (0: all) */
	unsigned readahead;          /* on a sequential fault, also fetch this many next
					pages (0: none) */
	unsigned flags;
	unsigned max_retries;        /* sends again after a VL reset, per operation
					(0: DIMM_PAGER_RETRIES; at most 255) */
	unsigned clean_low;          /* cleaner's low watermark: pages of the next victims
					kept free or clean (0: no cleaner, the default;
					DIMM_PAGER_CLEAN_LOW(budget) is a sensible value;
					at most DIMM_PAGER_CLEAN_MAX) */
	/* Run to completion (DIMM_PAGER_F_SIGBUS, where the kernel has
	 * UFFD_FEATURE_SIGBUS and the mode has no write-protect faults:
	 * wp-async or no-wp): a fault is a SIGBUS in the faulting thread, whose
	 * handler calls drive(drive_arg) until the page is installed; drive
	 * polls the node (bridge, lease, engine and this pager) once, or waits
	 * a little for whoever polls it. It runs inside a signal handler that
	 * interrupted the application's access to the mapping: it must not
	 * take a lock the application may hold (malloc, stdio) and the
	 * application must not touch the mapping while it polls the node
	 * itself or from another signal handler. The pager's own calls are
	 * atomics, ioctl, madvise, clock_gettime. */
	void (*drive)(void *arg);
	void *drive_arg;
	/* DIMM_PAGER_F_EXTERNAL: the memory of another process (htoe-dimm
	 * --run). That process maps ext_memfd (a memfd of `size` bytes)
	 * MAP_SHARED at ext_uaddr, registers the mapping with a userfaultfd of
	 * its own (missing + write-protect faults; features ext_features, which
	 * must include UFFD_FEATURE_POISON and UFFD_FEATURE_EVENT_REMOVE) and
	 * hands that fd over: ext_uffd (the pager owns it from now on, also
	 * when dimm_pager_new fails). The pager maps the memfd too (its base),
	 * reads and writes the pages through that, resolves the faults with
	 * UFFDIO_COPY at the other process's addresses and evicts by punching
	 * holes in the memfd. Every page starts *fresh* (the other process has
	 * never written it): its first fault installs zeros without a fetch,
	 * dirty; a range the process gives back (madvise MADV_REMOVE: a
	 * UFFD_EVENT_REMOVE) is fresh again. No wp-async, no SIGBUS mode, no
	 * cleaner. */
	int ext_uffd;
	int ext_memfd;
	uintptr_t ext_uaddr;
	uint64_t ext_features;
	/* 1..100: the budget is this percentage of the pages in use (touched
	 * and not given back), at least DIMM_PAGER_MIN_BUDGET and at most
	 * `budget` when that is set; 0: `budget` alone */
	unsigned budget_pct;
};

#define DIMM_PAGER_MIN_BUDGET DIMM_POLICY_MIN_BUDGET

#define DIMM_PAGER_RETRIES 32u
/* A watermark for the cleaner: a sixteenth of the budget, 2 to 16 pages. */
#define DIMM_PAGER_CLEAN_LOW(budget) \
	((budget) / 16u < 2u ? 2u : (budget) / 16u > 16u ? 16u : (budget) / 16u)
#define DIMM_PAGER_CLEAN_MAX 64u

struct dimm_pager_stats {
	uint64_t faults;          /* missing faults served by a fetch */
	uint64_t wp_faults;       /* first writes to a clean page */
	uint64_t spurious;        /* faults on pages already handled */
	uint64_t fetches, readaheads, readahead_hits;
	uint64_t readahead_dropped; /* wp-async: fetched, no free slot, nobody waited */
	uint64_t evictions;       /* pages dropped to make room (drops_clean of them
				     without a write-back at that time) */
	uint64_t writebacks;      /* pages written back: evictions, cleaner and syncs */
	uint64_t drops_clean;
	uint64_t batched_drops;   /* of those, pages given back several in one call
				     (the next clean victims, with the one a fault needed) */
	uint64_t batched_writebacks; /* evictions' write-backs sent several under one
				     flush (the next dirty victims, with the one a
				     fault needed), dropped together when confirmed */
	uint64_t poisoned;        /* pages poisoned after an error */
	uint64_t room_waits;      /* a fetched page waited: every resident page was busy */
	uint64_t syncs;
	uint64_t fetch_retries;   /* fetches sent again after a VL reset */
	uint64_t writeback_retries; /* write-backs (eviction or sync) sent again */
	uint64_t bytes_in, bytes_out;
	uint64_t cleaned;         /* write-backs ahead of eviction started (the cleaner) */
	uint64_t clean_hits;      /* evictions that dropped a page the cleaner wrote back */
	uint64_t clean_waits;     /* evictions that waited for the cleaner's write-back */
	uint64_t wp_scans;        /* PAGEMAP_SCAN calls (wp-async dirty tracking) */
	uint64_t scan_dirty;      /* pages they found written */
	uint64_t copied_writebacks; /* evictions' write-backs sent from a copy, the page
				     dropped at once (the fault waited for none of them) */
	uint64_t restored;        /* copied write-backs that failed for good (the error
				     state): their pages put back from the copies */
	uint64_t victim_waits;    /* faults whose page waited for the write-back of the dirty
				     victim evicted for it (and its flush) */
	uint64_t batch_waits;     /* faults whose page waited for a write-back begun before
				     the fault: the oldest copied one when every copy
				     buffer is in use, the rest of a batch written from
				     the mapping, or the cleaner's */
	uint64_t zero_fills;      /* external: fresh pages installed as zeros (no fetch, not
				     in faults or hist) */
	uint64_t removed;         /* external: pages the process gave back (fresh again) */
	uint64_t in_use;          /* external: pages touched and not given back (now) */
	uint64_t in_use_max;      /* ... at most */
	uint64_t budget_max;      /* the budget at its largest (budget_pct: it follows in_use) */
	struct lat_hist hist;        /* fault service time: message read -> page installed */
	struct lat_hist hist_wp;     /* WP fault service time */
	struct lat_hist hist_victim; /* of hist: the victim_waits faults */
	struct lat_hist hist_batch;  /* of hist: the batch_waits faults */
};

struct dimm_pager;

/*
 * Map and register. NULL with a clear message when userfaultfd is
 * unavailable (no permission, no kernel support, or simulated), e.g.
 * "userfaultfd unavailable: Operation not permitted (...); the transparent
 * mapping is off, the explicit API (dimm.h) still works".
 */
struct dimm_pager *dimm_pager_new(const struct dimm_pager_cfg *cfg, char *err, size_t errlen);
/* Unregister and unmap. The pager thread must have stopped polling it, and
 * nothing of it may be in flight: wait for dimm_pager_idle() first (a
 * readahead may still be on its way when the application is done). */
void dimm_pager_free(struct dimm_pager *p);

void *dimm_pager_base(const struct dimm_pager *p);
int dimm_pager_fd(const struct dimm_pager *p);  /* readable when a fault waits */
/* "wp", "no-wp"; "poison", "sigsegv" */
const char *dimm_pager_mode(const struct dimm_pager *p);

/* The budget now (resident pages at most). */
unsigned dimm_pager_budget(const struct dimm_pager *p);

/* Pager thread: serve faults, finish fetches/evictions/syncs. Never blocks.
 * Returns the number of steps done (0: idle). */
unsigned dimm_pager_poll(struct dimm_pager *p);
/* Pager thread: work in progress (a fault being served, a sync). */
bool dimm_pager_busy(const struct dimm_pager *p);
/* Any thread: as of the pager thread's last poll, nothing is in progress and
 * none of its client's operations is in flight. */
bool dimm_pager_idle(const struct dimm_pager *p);

/* Application thread: write every dirty page back (posted writes + one
 * flush) and, if drop, evict every page. Waits for the pager thread, calling
 * idle(arg) (NULL: sched_yield) meanwhile. 0, or the error (see
 * dimm_pager_error). */
int dimm_pager_sync(struct dimm_pager *p, bool drop, void (*idle)(void *), void *arg);

/* 0, or the negative errno of the first failure with its message. */
int dimm_pager_error(const struct dimm_pager *p, char *msg, size_t len);

/*
 * Run fn(arg) on the calling thread. If it touches memory of a pager in the
 * error state (SIGBUS from a poisoned page, or SIGSEGV in the fallback),
 * fn is abandoned and the pager's error is returned (negative errno), with
 * the faulting address in *addr (may be NULL). 0 when fn returns. Signals
 * outside every pager's mapping keep their default action.
 */
int dimm_pager_run(struct dimm_pager *p, void (*fn)(void *), void *arg, void **addr);

const struct dimm_pager_stats *dimm_pager_stats(const struct dimm_pager *p);
/* A userfaultfd (non-blocking, close-on-exec), through the system call or
 * /dev/userfaultfd where the system call is refused; -1 with errno. */
int dimm_uffd_open(void);
/* HTOE_DIMM_NO_UFFD is set (and not "0"): act as if userfaultfd were
 * unavailable. */
bool dimm_uffd_off_by_env(void);

#endif
