/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_child: a TCP connection over loopback to a forked child process, the
 * peer of the baselines a user would otherwise pick (htoe-bench's TCP
 * ping-pong, htoe-dimm's TCP page server). The child is pinned to CPU 1 and
 * runs serve(fd, arg) on its end of the connection, then exits; the caller's
 * end has TCP_NODELAY and blocking I/O. Pinning is best effort (1-CPU
 * machines).
 */
#ifndef HTOE_TCP_CHILD_H
#define HTOE_TCP_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tcp_child {
	int   fd;   /* this process's end */
	pid_t pid;
};

/* 0, or -1 with a message in err (nothing left running). */
int tcp_child_start(struct tcp_child *t, void (*serve)(int fd, void *arg), void *arg, char *err,
		    size_t errlen);
/* Close this end, stop the child (SIGTERM) and wait for it. */
void tcp_child_stop(struct tcp_child *t);
/* Send or receive exactly len bytes: 0, or -1 (error, or the peer closed). */
int tcp_xfer(int fd, void *buf, size_t len, bool send_it);
/* Pin the calling thread to one CPU / let it run on every CPU again. */
void tcp_pin(int cpu);
void tcp_unpin(void);

#endif
