/* SPDX-License-Identifier: BSD-3-Clause
 * dimm_loop: an in-memory stand-in for a remote node, as a struct dimm_link.
 *
 * Requests are served at once by an HT memory target (lib/htmodel
 * ht_target) over caller-owned memory at global address gbase; responses
 * wait in a queue for the link's output. Used by the tests and by
 * `htoe-dimm --backend loop` to separate the cost of the pager and the
 * engine from the cost of the network.
 *
 * Fault injection: dimm_loop_set_dead() makes the "node" unreachable: every
 * non-posted request is answered with a master abort (what a bridge answers
 * when a request times out) and posted writes are dropped and counted in
 * loss_gen (what a VL reset does to writes in flight). dimm_loop_reset()
 * makes a warm VL reset hit the next n requests, after which the node
 * answers again: a non-posted request is answered with a target abort (what
 * a bridge answers for a request poisoned by a reset) without being
 * executed, a posted write is dropped and counted in loss_gen.
 * dimm_loop_set_fault() poisons a range (ht_tgt_set_fault).
 * Single-threaded, like the engine.
 */
#ifndef DIMM_LOOP_H
#define DIMM_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "dimm.h"

struct dimm_loop_cfg {
	uint64_t gbase;     /* global address of mem[0] */
	uint8_t *mem;
	uint64_t size;
	unsigned queue;     /* responses waiting (default 1024); full = backpressure */
};

struct dimm_loop_stats {
	uint64_t requests, posted, responses, dead_answers, dead_dropped, backpressure;
	uint64_t reset_answers, reset_dropped;  /* requests hit by dimm_loop_reset() */
};

struct dimm_loop;

struct dimm_loop *dimm_loop_new(const struct dimm_loop_cfg *cfg, char *err, size_t errlen);
void dimm_loop_free(struct dimm_loop *l);
void dimm_loop_link(struct dimm_loop *l, struct dimm_link *link);
void dimm_loop_set_dead(struct dimm_loop *l, bool dead);
/* A warm VL reset hits the next n requests (posted or not), then the node
 * answers normally again. */
void dimm_loop_reset(struct dimm_loop *l, unsigned n);
/* Poison [gaddr, gaddr+size) with err (enum ht_rsp_err; 0 clears) in slot idx (0..3). */
int dimm_loop_set_fault(struct dimm_loop *l, unsigned idx, uint64_t gaddr, uint64_t size,
			uint8_t err);
const struct dimm_loop_stats *dimm_loop_stats(const struct dimm_loop *l);

#endif
