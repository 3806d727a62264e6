/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm workloads: real programs whose data is a plain byte range, run
 * once on local memory and once on remote memory (the pager's mapping),
 * and compared: the result digest and the whole memory image must be equal.
 *
 *   stream  STREAM copy/scale/add/triad over three arrays of doubles
 *   gups    random 8-byte read-modify-write updates (HPCC RandomAccess)
 *   kv      a hash table (open addressing): inserts, lookups, updates
 *   sort    an in-place quicksort of 64-bit keys
 * No I/O, no DPDK: the same function runs on either memory.
 */
#ifndef HTOE_DIMM_WORKLOADS_H
#define HTOE_DIMM_WORKLOADS_H

#include <stddef.h>
#include <stdint.h>

enum wl_kind { WL_STREAM = 0, WL_GUPS, WL_KV, WL_SORT, WL__N };

struct wl_params {
	uint64_t seed;
	unsigned stream_ntimes;    /* passes of the four kernels */
	uint64_t gups_updates;
	uint64_t kv_ops;           /* inserts + lookups + updates */
};

struct wl_out {
	double   units;            /* stream: bytes moved; gups: updates; kv: ops; sort: elements */
	uint64_t digest;           /* results the program computed (lookups, ...) */
	double   kernel_s[4];      /* stream: seconds per kernel (copy, scale, add, triad) */
};

const char *wl_name(int k);
const char *wl_unit(int k);        /* "MB/s", "MUPS", "Mops/s", "Melem/s" */
int wl_by_name(const char *s);     /* -1 if unknown */

void wl_params_default(struct wl_params *p);
/* Write the workload's initial content into buf[0..size). */
void wl_init(int k, const struct wl_params *p, uint8_t *buf, size_t size);
/* Run it on mem[0..size) (holding wl_init's content). */
void wl_run(int k, const struct wl_params *p, uint8_t *mem, size_t size, struct wl_out *o);

double wl_seconds(void);           /* CLOCK_MONOTONIC */

#endif
