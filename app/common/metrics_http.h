/* SPDX-License-Identifier: BSD-3-Clause
 * A Prometheus endpoint: GET /metrics served by libmicrohttpd from its own
 * thread (never a data-path lcore), in the text exposition format 0.0.4.
 * The program gives a function that writes the families (htoe_prom_*) from
 * counters its pollers publish; it runs on the server's thread for every
 * scrape, so it may only read what is safe to read from another thread
 * (relaxed atomic loads of published snapshots).
 *
 * Start the server before rte_eal_init(): the EAL pins the main thread to
 * its lcore and a thread created later would share that CPU with a poller.
 * An address that cannot be served (junk, a port in use, an address not of
 * this host) is refused before anything runs, with the reason.
 */
#ifndef HTOE_METRICS_HTTP_H
#define HTOE_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The text of one scrape, grown as needed (a failed allocation is kept in
 * `oom`: the scrape is then answered 500). */
struct htoe_prom {
	char  *buf;
	size_t len, cap;
	bool   oom;
};

/* "# HELP name help" and "# TYPE name type" (type: counter, gauge); a
 * counter's name ends in _total. Every sample of a family must follow its
 * header before the next family starts. */
void htoe_prom_family(struct htoe_prom *p, const char *name, const char *type,
		      const char *help);
/* name{labels} value; labels e.g. `node="1",peer="2"` (NULL or "": none) */
void htoe_prom_u64(struct htoe_prom *p, const char *name, const char *labels, uint64_t v);
void htoe_prom_f64(struct htoe_prom *p, const char *name, const char *labels, double v);

/* One column of a table of families: the u64 at `off` of every row's
 * snapshot, read with relaxed atomic loads (the writer publishes with relaxed
 * atomic stores). With `label`, the n u64 from `off` on are one sample each,
 * labelled label="value(k)" after the row's labels. */
struct htoe_prom_col {
	const char *key;     /* the program's own name of the value (e.g. telemetry's) */
	const char *prom;    /* the family (NULL: not a metric) */
	const char *help;
	uint16_t off;
	uint8_t  ns;         /* nanoseconds: written as seconds */
	uint8_t  gauge;      /* not a counter */
	uint8_t  only;       /* rows whose flags have these bits (0: every row) */
	uint8_t  n;          /* with label: the words */
	const char *label;
	const char *(*value)(unsigned k);
};
/* One row: its labels (e.g. `node="1"`), its snapshot, its flags for `only`. */
struct htoe_prom_row {
	const char *labels;
	const void *base;
	unsigned flags;
};
/* Every column with a family, in order: its header, then its sample of every
 * row (rows outer, words inner). */
void htoe_prom_table(struct htoe_prom *p, const struct htoe_prom_col *c, unsigned nc,
		     const struct htoe_prom_row *r, unsigned nr);

typedef void (*htoe_metrics_fn)(struct htoe_prom *p, void *arg);

struct htoe_metrics;

/* Serve http://ADDR:PORT/metrics: `addr` is "IPV4:PORT", "[IPV6]:PORT" or
 * "*:PORT" (every address); `where` starts every message (e.g.
 * "bridge.ini:3: [global] metrics = '...'"). NULL with the reason in err. */
struct htoe_metrics *htoe_metrics_start(const char *addr, const char *where, htoe_metrics_fn fn,
					void *arg, char *err, size_t errlen);
/* Stops the thread (waits for a scrape in progress) and frees m (NULL: nothing). */
void htoe_metrics_stop(struct htoe_metrics *m);

#endif
