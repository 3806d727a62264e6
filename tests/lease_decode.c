/* SPDX-License-Identifier: BSD-3-Clause
 * lease_decode: the lease-message decoder of lib/htoe (htoe_lease_msg_decode)
 * as a filter, for the Wireshark dissector test (tests/dissector_check.py
 * checks every htoe.lease.* field of the dissector against it).
 *
 *   lease_decode < HEXLINES
 *
 * One hex line per CTRL message in; one JSON line out: the decoded fields
 * {"type":..,"status":..,"session":..,"req_id":..,"lease_id":..,"size":..,
 * "offset":..,"addr":..,"duration":..,"type_name":..} or, for a message the
 * library rejects, {"error":"EPROTO|EPROTONOSUPPORT|EINVAL"}.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "htoe/htoe_lease.h"

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(void)
{
	char line[4096];
	uint8_t buf[sizeof(line) / 2];

	while (fgets(line, sizeof(line), stdin)) {
		size_t n = 0;
		struct htoe_lease_msg m;
		int r;

		for (size_t i = 0; line[i] && hexval(line[i]) >= 0 && hexval(line[i + 1]) >= 0;
		     i += 2)
			buf[n++] = (uint8_t)(hexval(line[i]) << 4 | hexval(line[i + 1]));
		r = htoe_lease_msg_decode(buf, n, &m);
		if (r) {
			printf("{\"error\":\"%s\"}\n", r == -EPROTO ? "EPROTO" :
			       r == -EPROTONOSUPPORT ? "EPROTONOSUPPORT" : "EINVAL");
			continue;
		}
		printf("{\"type\":%u,\"type_name\":\"%s\",\"status\":%u,\"session\":%" PRIu32
		       ",\"req_id\":%" PRIu32 ",\"lease_id\":%" PRIu32 ",\"size\":%" PRIu64
		       ",\"offset\":%" PRIu64 ",\"addr\":%" PRIu64 ",\"duration\":%" PRIu64 "}\n",
		       m.type, htoe_lease_type_name(m.type), m.status, m.session, m.req_id,
		       m.lease_id, m.size, m.offset, m.addr, m.duration_ns);
	}
	return 0;
}
