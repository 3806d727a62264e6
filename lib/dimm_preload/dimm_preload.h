/* SPDX-License-Identifier: BSD-3-Clause
 * What htoe-dimm --run and its preload library (libhtoe-dimm-preload.so,
 * loaded into the program with LD_PRELOAD) say to each other. No DPDK.
 *
 * htoe-dimm makes a memfd of the region's size and a SOCK_SEQPACKET
 * socket pair and starts the program with HTOE_DIMM_PRELOAD_ENV =
 * "SOCK,MEMFD,SIZE,THRESHOLD" (fds the program inherits). The library maps
 * the memfd, registers the mapping with a userfaultfd of its own and sends
 * one struct dimm_preload_hello with that fd (SCM_RIGHTS); htoe-dimm
 * answers one struct dimm_preload_ack. From then on the program's large
 * allocations come from the region, whose pages htoe-dimm's pager serves
 * from remote memory. The socket stays open (an exec of the program says
 * hello again on it, with the new image's userfaultfd); the program learns
 * that htoe-dimm is gone from its parent-death signal.
 */
#ifndef DIMM_PRELOAD_H
#define DIMM_PRELOAD_H

#include <stdint.h>

#define HTOE_DIMM_PRELOAD_ENV "HTOE_DIMM_PRELOAD_FDS"
#define DIMM_PRELOAD_MAGIC 0x68746f65646d6d31ull /* "htoedmm1" */
/* the program's exit status when htoe-dimm is gone (its memory with it) */
#define DIMM_PRELOAD_LOST_STATUS 70

struct dimm_preload_hello {
	uint64_t magic;
	uint64_t base;      /* the region in the program */
	uint64_t size;
	uint64_t features;  /* UFFDIO_API's answer */
	int32_t  pid;
	int32_t  error;     /* 0, or an errno: then `msg` says what failed, no fd */
	char     msg[200];
};

struct dimm_preload_ack {
	uint64_t magic;
	int32_t  error;     /* 0: go on; else the program exits (htoe-dimm says why) */
	int32_t  pad;
};

#endif
