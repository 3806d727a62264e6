/* SPDX-License-Identifier: BSD-3-Clause
 * htinject: posted writes from pre-built HT packets, with no requester model
 * in the loop (htoe-bridge `[workload] mode = inject`, to measure the bridge
 * apart from its model). Sans-I/O, like htnode: the driver calls
 * htinject_poll() with its clock.
 *
 * The window [base, base + size) of another node's memory is written in
 * passes of size / 64 slots of 64 bytes, in address order, slot after slot,
 * pass after pass. Pass p writes pattern p % 2 (two buffers of size bytes,
 * ht_wl_fill(seed) and ht_wl_fill(seed + 1)), so the last value written to
 * each slot follows from the number of writes taken: htinject_expect()
 * builds the image the target's memory must hold, to be compared once at
 * the end. The packets are encoded once at setup (posted dword WrSized,
 * Count 15); a poll hands runs of consecutive slots to
 * htoe_local_input_run() and falls back to htoe_local_input_desc() for one
 * packet when the run path declines.
 */
#ifndef HTINJECT_H
#define HTINJECT_H

#include <stdint.h>

#include "htmodel/ht_packet.h"
#include "htoe/htoe.h"

#define HTINJECT_LEN   64u   /* bytes per write */
#define HTINJECT_BURST 256u  /* writes handed over per htinject_poll() at most */

struct htinject {
	struct htoe *b;
	unsigned n;                 /* slots */
	uint8_t *pat[2];            /* [size] each: the data of even / odd passes */
	uint8_t *enc;               /* [2][n][HT_MAX_PKT_LEN]: encoded packets */
	struct ht_desc *desc;       /* [2][n] */
	uint64_t taken;             /* writes the bridge took */
	uint64_t refused;           /* writes refused (not -EAGAIN): none expected */
	uint64_t backpressure;      /* polls that ended on -EAGAIN */
	int      last_err;
};

/* Set up: writes to global addresses base .. base+size (size a non-zero
 * multiple of 64, base 64-aligned) with this UnitID. 0, or -1 (no memory,
 * or the packets do not encode: a bad base, size or unitid). */
int htinject_init(struct htinject *in, struct htoe *b, uint64_t base, uint64_t size,
		  uint8_t unitid, uint32_t seed);
void htinject_fini(struct htinject *in);

/* Hand up to max (at most HTINJECT_BURST) writes to the bridge; how many
 * it took. */
unsigned htinject_poll(struct htinject *in, uint64_t max, uint64_t now);

/* The window's expected contents after the writes taken so far, into
 * img[0..size): slots never written are left as they are. */
void htinject_expect(const struct htinject *in, uint8_t *img);

#endif
