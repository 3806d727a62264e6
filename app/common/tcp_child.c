/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_child: a loopback TCP connection to a forked child. See tcp_child.h.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcp_child.h"

void tcp_pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	(void)sched_setaffinity(0, sizeof(s), &s); /* best effort (1-CPU machines) */
}

void tcp_unpin(void)
{
	cpu_set_t all;

	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	(void)sched_setaffinity(0, sizeof(all), &all);
}

int tcp_xfer(int fd, void *buf, size_t len, bool send_it)
{
	uint8_t *b = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t r = send_it ? send(fd, b + done, len - done, MSG_NOSIGNAL)
				    : recv(fd, b + done, len - done, 0);

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

int tcp_child_start(struct tcp_child *t, void (*serve)(int fd, void *arg), void *arg, char *err,
		    size_t errlen)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	t->fd = -1;
	t->pid = -1;
	if (ls < 0) {
		snprintf(err, errlen, "tcp: socket(): %s", strerror(errno));
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
	/* SIGTERM is held until the child has the default action: a stop sent
	 * at once (the connect below failed) would otherwise find the parent's
	 * handler (htoe-dimm's: "stopping after the current run") and leave the
	 * child in accept(), and tcp_child_stop waiting for it, for ever */
	sigset_t term, old;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &term, &old);
	pid_t pid = fork();

	if (pid < 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		snprintf(err, errlen, "tcp: fork: %s", strerror(errno));
		close(ls);
		return -1;
	}
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL); /* not the parent's handler: SIGTERM stops it */
		pthread_sigmask(SIG_UNBLOCK, &term, NULL);
		tcp_pin(1);
		int c = accept(ls, NULL, NULL);

		if (c < 0)
			_exit(1);
		nodelay(c);
		serve(c, arg);
		_exit(0);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(ls);
	t->pid = pid;
	t->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (t->fd < 0 || connect(t->fd, (struct sockaddr *)&a, sizeof(a))) {
		snprintf(err, errlen, "tcp: connect to 127.0.0.1:%u: %s", ntohs(a.sin_port),
			 strerror(errno));
		tcp_child_stop(t);
		return -1;
	}
	nodelay(t->fd);
	return 0;
}

void tcp_child_stop(struct tcp_child *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->pid > 0) {
		kill(t->pid, SIGTERM);
		waitpid(t->pid, NULL, 0);
	}
	t->pid = -1;
}
