/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: TCP loopback ping-pong between two processes (the peer a user
 * would otherwise pick for a remote read). See bench.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "tcp_child.h"

unsigned long long bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* the echo server, in the child */
static void echo(int c, void *arg)
{
	size_t len = *(const size_t *)arg;
	uint8_t buf[4096];

	while (tcp_xfer(c, buf, len, false) == 0)
		if (tcp_xfer(c, buf, len, true))
			break;
}

int bench_tcp_pingpong(size_t len, double secs, struct lat_hist *h, char *err, size_t errlen)
{
	struct tcp_child t;
	uint8_t buf[4096];
	int rc = -1;

	if (len == 0 || len > sizeof(buf)) {
		snprintf(err, errlen, "tcp: bad size %zu", len);
		return -1;
	}
	if (tcp_child_start(&t, echo, &len, err, errlen))
		return -1;
	tcp_pin(0);
	memset(buf, 0x5A, len);
	unsigned long long t0 = bench_now_ns(), warm = t0 + 200000000ull,
			   end = warm + (unsigned long long)(secs * 1e9), t1 = t0;

	while (t1 < end) {
		unsigned long long s = t1;

		if (tcp_xfer(t.fd, buf, len, true) || tcp_xfer(t.fd, buf, len, false)) {
			snprintf(err, errlen, "tcp: the echo server went away");
			goto out;
		}
		t1 = bench_now_ns();
		if (s >= warm)
			lat_add(h, t1 - s);
	}
	rc = 0;
out:
	tcp_child_stop(&t);
	tcp_unpin(); /* the orchestrator runs on every CPU again */
	return rc;
}
