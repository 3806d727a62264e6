/* SPDX-License-Identifier: BSD-3-Clause
 * See dumper.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "dumper.h"


int br_dumper_open(struct br_dumper *dp, const char *dir, unsigned port, bool tx,
		   const char *where, char *err, size_t errlen)
{
	snprintf(dp->path, sizeof(dp->path), "%s/port%u-%s.pcap", dir, port, tx ? "tx" : "rx");
	dp->pcap = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535,
							PCAP_TSTAMP_PRECISION_NANO);
	dp->dump = dp->pcap ? pcap_dump_open(dp->pcap, dp->path) : NULL;
	if (!dp->dump) {
		snprintf(err, errlen, "%s: cannot write %s: %s", where, dp->path,
			 dp->pcap ? pcap_geterr(dp->pcap) : "pcap_open_dead");
		return -1;
	}
	return 0;
}

void br_dumper_write(struct br_dumper *dp, const uint8_t *frame, uint32_t caplen, uint32_t len,
		     uint64_t t)
{
	struct pcap_pkthdr ph;

	/* nanosecond pcap: tv_usec holds nanoseconds */
	ph.ts.tv_sec = (time_t)(t / 1000000000ull);
	ph.ts.tv_usec = (suseconds_t)(t % 1000000000ull);
	ph.caplen = caplen;
	ph.len = len;
	pcap_dump((u_char *)dp->dump, &ph, frame);
	dp->frames++;
}

void br_dumper_close(struct br_dumper *dp, const char *prog)
{
	if (dp->dump) {
		pcap_dump_close(dp->dump);
		if (prog)
			printf("%s: capture: %s: %" PRIu64 " frames\n", prog, dp->path,
			       dp->frames);
	}
	if (dp->pcap)
		pcap_close(dp->pcap);
	dp->dump = NULL;
	dp->pcap = NULL;
}

struct br_dumper *br_dumper_new(const char *dir, unsigned port, bool tx, const char *where,
				char *err, size_t errlen)
{
	struct br_dumper *dp = calloc(1, sizeof(*dp));

	if (!dp) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (br_dumper_open(dp, dir, port, tx, where, err, errlen)) {
		br_dumper_free(dp, NULL);
		return NULL;
	}
	return dp;
}

void br_dumper_free(struct br_dumper *dp, const char *prog)
{
	if (!dp)
		return;
	br_dumper_close(dp, prog);
	free(dp);
}
