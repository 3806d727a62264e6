/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: TCP loopback ping-pong between two processes (the peer a user
 * would otherwise pick for a remote read). See bench.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

unsigned long long bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	(void)sched_setaffinity(0, sizeof(s), &s); /* best effort (1-CPU machines) */
}

/* Whole message or -1 (0 read: peer closed). */
static int xfer(int fd, uint8_t *buf, size_t len, bool send_it)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = send_it ? send(fd, buf + done, len - done, MSG_NOSIGNAL)
				    : recv(fd, buf + done, len - done, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static void nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int bench_tcp_pingpong(size_t len, double secs, struct lat_hist *h, char *err, size_t errlen)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	uint8_t buf[4096];
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	if (len == 0 || len > sizeof(buf) || ls < 0) {
		snprintf(err, errlen, "tcp: bad size or socket(): %s", strerror(errno));
		if (ls >= 0)
			close(ls);
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 1) ||
	    getsockname(ls, (struct sockaddr *)&a, &al)) {
		snprintf(err, errlen, "tcp: bind/listen on 127.0.0.1: %s", strerror(errno));
		close(ls);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();

	if (pid < 0) {
		snprintf(err, errlen, "tcp: fork: %s", strerror(errno));
		close(ls);
		return -1;
	}
	if (pid == 0) { /* the server: echo every message */
		pin(1);
		int c = accept(ls, NULL, NULL);

		if (c < 0)
			_exit(1);
		nodelay(c);
		while (xfer(c, buf, len, false) == 0)
			if (xfer(c, buf, len, true))
				break;
		_exit(0);
	}
	close(ls);
	pin(0);
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc = -1;

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		snprintf(err, errlen, "tcp: connect to 127.0.0.1:%u: %s", ntohs(a.sin_port),
			 strerror(errno));
		goto out;
	}
	nodelay(fd);
	memset(buf, 0x5A, len);
	unsigned long long t0 = bench_now_ns(), warm = t0 + 200000000ull,
			   end = warm + (unsigned long long)(secs * 1e9), t = t0;

	while (t < end) {
		unsigned long long s = t;

		if (xfer(fd, buf, len, true) || xfer(fd, buf, len, false)) {
			snprintf(err, errlen, "tcp: the echo server went away");
			goto out;
		}
		t = bench_now_ns();
		if (s >= warm)
			lat_add(h, t - s);
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	{ /* the orchestrator runs on every CPU again */
		cpu_set_t all;

		CPU_ZERO(&all);
		for (int i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &all);
		(void)sched_setaffinity(0, sizeof(all), &all);
	}
	return rc;
}
