/* SPDX-License-Identifier: BSD-3-Clause
 * Where and when a measurement ran, for the JSON of htoe-bench and htoe-dimm:
 * a results table generated from that JSON (scripts/bench_table.py) states
 * the machine, the date and the code it measured.
 */
#ifndef HTOE_HOST_INFO_H
#define HTOE_HOST_INFO_H

struct htoe_host_info {
	char date[32];     /* UTC, ISO 8601: 2026-11-28T02:40:00Z */
	char cpu[128];     /* /proc/cpuinfo "model name", or "unknown" */
	long nproc;        /* online CPUs */
	double loadavg1;   /* /proc/loadavg's first figure at the start, or -1 */
	const char *git;   /* `git describe --always --dirty` at build time */
	const char *version; /* the meson project version */
};

/* Fill *h from the clock, /proc and the build. Never fails: what cannot be
 * read is "unknown" (or -1). */
void htoe_host_info(struct htoe_host_info *h);

/* The round trip of one cache line between CPUs cpu_a and cpu_b, in ns: a
 * thread on each writes a line the other polls, in turns (24 000 round
 * trips, a few ms; the median of groups of 16, so that other load that
 * preempts a thread now and then does not move it). On a shared host the
 * two CPUs may share a cache or not, and this figure moves with that: every
 * round trip between two lcores (a ping-pong, a read) pays a few of these.
 * -1 when the threads cannot run on those CPUs. */
double htoe_line_rtt_ns(int cpu_a, int cpu_b);

#endif
