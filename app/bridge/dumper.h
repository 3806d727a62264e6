/* SPDX-License-Identifier: BSD-3-Clause
 * One capture file of a port, DIR/port<PORT>-tx.pcap or -rx.pcap
 * (nanosecond pcap, libpcap): written by htoe-bridge's main lcore from the
 * capture rings (capture.c), or by htoe-dimm's node on its own thread
 * (the driver's capture step).
 */
#ifndef HTOE_BRIDGE_DUMPER_H
#define HTOE_BRIDGE_DUMPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pcap/pcap.h>

#include "config.h"

struct br_dumper {
	pcap_t *pcap;
	pcap_dumper_t *dump;
	uint64_t frames;
	char path[BR_PATH_MAX + 32];
};

/* DIR/port<N>-tx.pcap or -rx.pcap into *dp; `where` names the setting in errors. 0, or -1
 * with the reason in err. */
int br_dumper_open(struct br_dumper *dp, const char *dir, unsigned port, bool tx,
		   const char *where, char *err, size_t errlen);
/* One frame (caplen of its len bytes) at wall-clock time t (ns). */
void br_dumper_write(struct br_dumper *dp, const uint8_t *frame, uint32_t caplen, uint32_t len,
		     uint64_t t);
/* Close, and say how many frames went into the file (`prog`: the program's name; NULL:
 * say nothing). */
void br_dumper_close(struct br_dumper *dp, const char *prog);
/* br_dumper_open into a new dumper: NULL with a message naming `where` on failure. Free
 * closes it (br_dumper_close) and frees it (NULL: nothing). */
struct br_dumper *br_dumper_new(const char *dir, unsigned port, bool tx, const char *where,
				char *err, size_t errlen);
void br_dumper_free(struct br_dumper *dp, const char *prog);

#endif
