/* SPDX-License-Identifier: BSD-3-Clause
 * tcp_child (app/common/tcp_child.c) in a process that has its own SIGTERM
 * handler, as htoe-dimm and htoe-bench do, where the connection cannot be
 * made (a network namespace whose loopback is down, as in a test's or a
 * container's): tcp_child_start fails at once and stops the child it forked.
 * That stop must end the child even when it comes before the child has
 * dropped the inherited handler; else both wait for ever. 500 rounds, each
 * bounded (SIGALRM kills a hung test). Then a working connection (loopback
 * up in the host's namespace) still works. Needs CAP_SYS_ADMIN for
 * unshare(CLONE_NEWNET): skipped (77) without it.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tcp_child.h"

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1; /* a program's "stop after the current run" */
}

static void echo(int fd, void *arg)
{
	char b[8];

	(void)arg;
	while (tcp_xfer(fd, b, sizeof(b), false) == 0 && tcp_xfer(fd, b, sizeof(b), true) == 0) {
	}
}

/* The rounds in a child process with its own (loopback-down) namespace. */
static int down_rounds(void)
{
	struct sigaction sa;
	char err[160];
	unsigned failed = 0;

	if (unshare(CLONE_NEWNET) != 0)
		return 77;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	for (unsigned i = 0; i < 500; i++) {
		struct tcp_child t;

		alarm(20); /* a hung round */
		if (tcp_child_start(&t, echo, NULL, err, sizeof(err)) == 0) {
			fprintf(stderr, "tcp_child: connected with the loopback down?\n");
			tcp_child_stop(&t);
			return 1;
		}
		failed++;
	}
	alarm(0);
	printf("tcp_child: %u starts without a loopback failed and left nothing running (%s)\n",
	       failed, err);
	fflush(stdout);
	return 0;
}

int main(void)
{
	struct tcp_child t;
	char err[160], b[8] = "ping";
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0); /* its children with it: a hung one is killed below */
		_exit(down_rounds());
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		perror("tcp_child: fork/wait");
		return 1;
	}
	kill(-pid, SIGKILL); /* nothing is left if it all went well */
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "tcp_child: the rounds did not end (signal %d: a child left in "
			"accept(), its parent waiting for it)\n", WTERMSIG(st));
		return 1;
	}
	if (WEXITSTATUS(st) == 77) {
		printf("skip: no network namespace (unshare: needs root)\n");
		return 77;
	}
	if (WEXITSTATUS(st) != 0)
		return 1;
	/* with a loopback: a round trip through the child */
	if (tcp_child_start(&t, echo, NULL, err, sizeof(err)) != 0) {
		fprintf(stderr, "tcp_child: %s\n", err);
		return 1;
	}
	if (tcp_xfer(t.fd, b, sizeof(b), true) || tcp_xfer(t.fd, b, sizeof(b), false) ||
	    strcmp(b, "ping")) {
		fprintf(stderr, "tcp_child: the echo failed\n");
		tcp_child_stop(&t);
		return 1;
	}
	tcp_child_stop(&t);
	return 0;
}
