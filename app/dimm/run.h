/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm --run: an unmodified program on remote memory (docs/dimm.md
 * "Running an unmodified program"). The program is started with the
 * preload library (lib/dimm_preload), which hands its large memory's
 * userfaultfd over; a dimm pager in external mode (dimm_pager.h) serves it
 * on the borrower's loop, as it serves the demo's mapping.
 */
#ifndef HTOE_DIMM_RUN_H
#define HTOE_DIMM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime.h"

struct run_opts {
	bool     on;
	char   **argv;          /* the program and its arguments */
	unsigned budget_pct;    /* --budget N%: of the pages in use */
	uint64_t budget_bytes;  /* --budget SIZE */
	uint64_t region;        /* --region SIZE: the most that can be remote */
	uint64_t threshold;     /* --threshold SIZE: smaller allocations stay local */
	unsigned readahead;
	const char *log, *json;
	bool     compare;       /* --compare: a plain run first, and the in-process pager */
	int      prog_out;      /* the program's stdout (ours goes to stderr or --log) */
};

/* Parse what follows --run: [options] -- PROGRAM [ARGS...]. 0, or -1 with a
 * message on stderr (exit 2). */
int run_parse(int argc, char **argv, struct run_opts *ro);
/* Before anything prints: the program keeps stdout, htoe-dimm's own lines
 * go to stderr or --log. 0, or -1 with a message. */
int run_redirect(struct run_opts *ro);
/* The borrower's application thread: run the program once (twice with
 * --compare), print the summary, end the borrower's loop. */
struct run_ctx {
	struct dapp *d;
	struct run_opts *ro;
	int status;             /* htoe-dimm's exit status: the program's */
};
void *run_thread(void *arg);
/* SIGINT, SIGTERM, SIGHUP, SIGQUIT to htoe-dimm reach the program. */
void run_signals(void);

#endif
