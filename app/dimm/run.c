/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-dimm --run: an unmodified program on remote memory (run.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bridge/config.h"
#include "dimm_preload.h"
#include "out_file.h"
#include "parse_num.h"
#include "run.h"

extern char **environ;

#define RUN_REGION_DEFAULT (256ull << 20)
#define HELLO_TIMEOUT_MS   60000
#define INPROC_PAGES       1024u /* the in-process pager's faults for --compare */

static _Atomic pid_t child = -1;
static _Atomic int forwarded;

static double mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ options */

static void run_usage(FILE *f)
{
	fputs("usage: htoe-dimm EAL-ARGS -- [options] --run [run options] -- PROGRAM [ARGS...]\n"
	      "  --budget N%|SIZE    resident locally at most: N % of the program's large memory\n"
	      "                      in use, or SIZE (default 50%)\n"
	      "  --region SIZE       the most of it that can be remote (default 256M; leased\n"
	      "                      whole); the rest is local\n"
	      "  --threshold SIZE    allocations and anonymous mmaps of at least SIZE are\n"
	      "                      remote (default 128K)\n"
	      "  --readahead N       fetch N more pages on sequential faults (default 8)\n"
	      "  --log FILE          htoe-dimm's own lines (default: stderr)\n"
	      "  --json FILE         the summary as JSON\n"
	      "  --compare           first run the program plainly (stdin and stdout /dev/null)\n"
	      "                      and the in-process pager, and report the slowdown\n",
	      f);
}

int run_parse(int argc, char **argv, struct run_opts *ro)
{
	static const struct option lo[] = {
		{ "budget", required_argument, 0, 'b' },
		{ "region", required_argument, 0, 'r' },
		{ "threshold", required_argument, 0, 't' },
		{ "readahead", required_argument, 0, 'a' },
		{ "log", required_argument, 0, 'l' },
		{ "json", required_argument, 0, 'j' },
		{ "compare", no_argument, 0, 'c' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	char err[PATH_MAX + 128];
	uint64_t u;
	int opt;

	memset(ro, 0, sizeof(*ro));
	ro->on = true;
	ro->budget_pct = 50;
	ro->region = RUN_REGION_DEFAULT;
	ro->readahead = 8;
	ro->prog_out = -1;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (opt) {
		case 'b': {
			size_t n = strlen(optarg);

			ro->budget_pct = 0;
			ro->budget_bytes = 0;
			if (n > 1 && optarg[n - 1] == '%') {
				char num[16];

				if (n > sizeof(num) ||
				    (memcpy(num, optarg, n - 1), num[n - 1] = 0,
				     htoe_parse_unsigned(num, 10, 1, 100, &u))) {
					fprintf(stderr, "htoe-dimm: --budget '%s': a percentage 1%%..100%% "
						"or a size (e.g. 64M)\n", optarg);
					return -1;
				}
				ro->budget_pct = (unsigned)u;
			} else if (br_parse_size(optarg, &u) || u < 64 * 4096ull) {
				fprintf(stderr, "htoe-dimm: --budget '%s': a percentage 1%%..100%% or a "
					"size of at least 256K\n", optarg);
				return -1;
			} else {
				ro->budget_bytes = u;
			}
			break;
		}
		case 'r':
			if (br_parse_size(optarg, &u) || u < (1u << 20) || u > (4ull << 30) ||
			    u % 4096) {
				fprintf(stderr, "htoe-dimm: --region '%s': 1M..4G, whole pages\n", optarg);
				return -1;
			}
			ro->region = u;
			break;
		case 't':
			if (br_parse_size(optarg, &u) || u < 4096 || u > (1ull << 30)) {
				fprintf(stderr, "htoe-dimm: --threshold '%s': 4K..1G\n", optarg);
				return -1;
			}
			ro->threshold = u;
			break;
		case 'a':
			if (htoe_parse_unsigned(optarg, 10, 0, 64, &u)) {
				fprintf(stderr, "htoe-dimm: --readahead '%s': 0..64\n", optarg);
				return -1;
			}
			ro->readahead = (unsigned)u;
			break;
		case 'l': ro->log = optarg; break;
		case 'j': ro->json = optarg; break;
		case 'c': ro->compare = true; break;
		case 'h': run_usage(stdout); exit(0);
		default: run_usage(stderr); return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "htoe-dimm: --run: no program (--run [options] -- PROGRAM [ARGS...])\n");
		return -1;
	}
	ro->argv = argv + optind;
	optind = 0; /* getopt starts afresh for the options before --run */
	if (ro->json && htoe_check_out_file(ro->json, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: --json: %s\n", err);
		return -1;
	}
	if (ro->log && htoe_check_out_file(ro->log, err, sizeof(err))) {
		fprintf(stderr, "htoe-dimm: --log: %s\n", err);
		return -1;
	}
	return 0;
}

static int prog_err = -1;

int run_redirect(struct run_opts *ro)
{
	int to = 2;

	ro->prog_out = fcntl(1, F_DUPFD_CLOEXEC, 10);
	prog_err = fcntl(2, F_DUPFD_CLOEXEC, 10);
	if (ro->prog_out < 0 || prog_err < 0) {
		fprintf(stderr, "htoe-dimm: --run: standard output or error is not open\n");
		return -1;
	}
	if (ro->log) {
		to = open(ro->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (to < 0) {
			fprintf(stderr, "htoe-dimm: --log %s: %s\n", ro->log, strerror(errno));
			return -1;
		}
		dup2(to, 2);
	}
	dup2(to, 1);
	if (to > 2)
		close(to);
	return 0;
}

/* ------------------------------------------------------------ signals */

static void forward(int sig, siginfo_t *si, void *uc)
{
	pid_t c = atomic_load(&child);

	(void)uc;
	/* from the terminal the program has it already (same process group) */
	if (c > 0 && si->si_code != SI_KERNEL) {
		kill(c, sig);
		atomic_fetch_add(&forwarded, 1);
	}
}

void run_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ------------------------------------------------------------ the program */

/* The preload library: $HTOE_DIMM_PRELOAD, next to this program in the
 * build tree, or where it is installed. */
static int preload_path(char *out, size_t len)
{
	const char *e = getenv("HTOE_DIMM_PRELOAD");
	char exe[PATH_MAX - 64], *slash;
	ssize_t n;

	if (e && *e) {
		snprintf(out, len, "%s", e);
		return access(out, R_OK) ? -1 : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(out, len, "%s/../lib/dimm_preload/libhtoe-dimm-preload.so",
				     exe) < (int)len && !access(out, R_OK))
				return 0;
		}
	}
	snprintf(out, len, "%s/libhtoe-dimm-preload.so", HTOE_PRELOAD_DIR);
	return access(out, R_OK) ? -1 : 0;
}

/* environ with LD_PRELOAD (preload first) and the preload's fds; NULL: none */
static char **child_env(const char *preload, const char *fds)
{
	size_t n = 0, k = 0;
	char **env;
	const char *old = getenv("LD_PRELOAD");

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) &&
		    strncmp(environ[i], HTOE_DIMM_PRELOAD_ENV "=", strlen(HTOE_DIMM_PRELOAD_ENV) + 1))
			env[k++] = environ[i];
	if (preload) {
		size_t l = strlen(preload) + (old ? strlen(old) : 0) + 16;

		env[k] = malloc(l);
		if (env[k])
			snprintf(env[k++], l, "LD_PRELOAD=%s%s%s", preload, old && *old ? ":" : "",
				 old ? old : "");
		env[k++] = (char *)fds;
	} else if (old) {
		env[k++] = getenv("LD_PRELOAD") - 11; /* the entry itself */
	}
	return env;
}

/* Start the program: stdin ours, stdout/stderr the program's own (run_redirect);
 * with a preload, sock and memfd become its fds 3 and 4. -1 with a message. */
static pid_t spawn(const struct run_opts *ro, const char *preload, int sock, int memfd,
		   bool plain)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char fds[128];
	char **env;
	pid_t pid = -1;
	int e, devnull = -1;

	snprintf(fds, sizeof(fds), HTOE_DIMM_PRELOAD_ENV "=3,4,%" PRIu64 ",%" PRIu64, ro->region,
		 ro->threshold);
	env = child_env(preload, fds);
	if (!env) {
		fprintf(stderr, "htoe-dimm: out of memory\n");
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (plain) {
		/* --compare's plain run: no input, output thrown away */
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		posix_spawn_file_actions_adddup2(&fa, devnull, 0);
		posix_spawn_file_actions_adddup2(&fa, devnull, 1);
	} else {
		posix_spawn_file_actions_adddup2(&fa, ro->prog_out, 1);
	}
	posix_spawn_file_actions_adddup2(&fa, prog_err, 2);
	if (preload) {
		posix_spawn_file_actions_adddup2(&fa, sock, 3);
		posix_spawn_file_actions_adddup2(&fa, memfd, 4);
	}
	posix_spawn_file_actions_addclosefrom_np(&fa, preload ? 5 : 3);
	e = posix_spawnp(&pid, ro->argv[0], &fa, &at, ro->argv, env);
	if (e) {
		fprintf(stderr, "htoe-dimm: --run: cannot start '%s': %s\n", ro->argv[0], strerror(e));
		pid = -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (devnull >= 0)
		close(devnull);
	if (preload)
		for (char **x = env; *x; x++)
			if (!strncmp(*x, "LD_PRELOAD=", 11))
				free(*x);
	free(env);
	return pid;
}

/* The exit status htoe-dimm gives for the program's wait status. */
static int exit_code(int ws)
{
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
}

static void status_text(char *b, size_t n, int ws)
{
	if (WIFEXITED(ws))
		snprintf(b, n, "exit status %d", WEXITSTATUS(ws));
	else if (WIFSIGNALED(ws))
		snprintf(b, n, "killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
	else
		snprintf(b, n, "wait status %#x", ws);
}

/* Every CPU for the program (this thread may be pinned to the borrower's). */
static void all_cpus(void)
{
	cpu_set_t s;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&s);
	for (long i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET((int)i, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

/* ------------------------------------------------------------ results */

struct run_res {
	double   t, plain_t;
	int      ws, plain_ws;
	bool     plain_done;
	uint64_t p50, p99, ip50, ip99;
	bool     inproc_done;
	char     inproc_why[300];
	struct dimm_pager_stats st;
	unsigned budget_end;
	char     mode[40];
	unsigned execs;         /* images after the first (exec) */
	char     fatal[600];
	bool     started;
};

/* --compare: the in-process pager's faults on this lease, in the same mode
 * as the program's (write-protect faults, served by the borrower's loop):
 * every page of INPROC_PAGES written once under a budget of a quarter,
 * then read once again. */
static void inproc_faults(struct dapp *d, const struct run_opts *ro, struct run_res *r)
{
	struct dimm_pager_cfg pc;
	struct dimm_pager *p;
	volatile uint8_t *m;
	unsigned sum = 0;

	memset(&pc, 0, sizeof(pc));
	pc.client = d->pager_c;
	pc.fetch_client = d->fetch_c;
	pc.size = (size_t)INPROC_PAGES * DIMM_PAGE;
	pc.budget = INPROC_PAGES / 4;
	pc.readahead = ro->readahead;
	p = dimm_pager_new(&pc, r->inproc_why, sizeof(r->inproc_why));
	if (!p)
		return;
	dr_pager_publish(d, p);
	m = dimm_pager_base(p);
	for (unsigned i = 0; i < INPROC_PAGES; i++)
		m[(size_t)i * DIMM_PAGE] = (uint8_t)i;
	for (unsigned i = 0; i < INPROC_PAGES; i++)
		sum += m[(size_t)i * DIMM_PAGE + 1];
	(void)sum;
	dr_pager_withdraw(d);
	if (dimm_pager_error(p, r->inproc_why, sizeof(r->inproc_why)) == 0) {
		const struct dimm_pager_stats *st = dimm_pager_stats(p);

		r->ip50 = (uint64_t)lat_quantile(&st->hist, 0.5);
		r->ip99 = (uint64_t)lat_quantile(&st->hist, 0.99);
		r->inproc_done = st->faults > 0;
	}
	dimm_pager_free(p);
}

static void run_plain(const struct run_opts *ro, struct run_res *r)
{
	double t0 = mono();
	pid_t pid = spawn(ro, NULL, -1, -1, true);

	if (pid < 0)
		return;
	atomic_store(&child, pid);
	while (waitpid(pid, &r->plain_ws, 0) < 0 && errno == EINTR)
		;
	atomic_store(&child, -1);
	r->plain_t = mono() - t0;
	r->plain_done = true;
}

/* The program's hello (its userfaultfd in *uffd). 0, or -1 with r->fatal. */
static int recv_hello(int sock, pid_t pid, struct dimm_preload_hello *h, int *uffd,
		      struct run_res *r)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct pollfd pf = { .fd = sock, .events = POLLIN };
	ssize_t n;
	int ws;

	*uffd = -1;
	for (int waited = 0; poll(&pf, 1, 100) == 0; waited += 100) {
		if (waitpid(pid, &ws, WNOHANG) == pid) {
			char st[64];

			status_text(st, sizeof(st), ws);
			snprintf(r->fatal, sizeof(r->fatal), "the program ended (%s) before its "
				 "preload library spoke: is it a static binary, or setuid?", st);
			r->ws = ws;
			return -2;
		}
		if (waited >= HELLO_TIMEOUT_MS) {
			snprintf(r->fatal, sizeof(r->fatal), "no word from the program's preload "
				 "library in %d s", HELLO_TIMEOUT_MS / 1000);
			return -1;
		}
	}
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n != (ssize_t)sizeof(*h) || h->magic != DIMM_PRELOAD_MAGIC) {
		snprintf(r->fatal, sizeof(r->fatal), "the program's preload library sent %zd bytes, "
			 "not its hello", n);
		return -1;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(uffd, CMSG_DATA(c), sizeof(int));
	if (h->error) {
		snprintf(r->fatal, sizeof(r->fatal), "the program cannot use remote memory: %.*s",
			 (int)sizeof(h->msg), h->msg);
		return -1;
	}
	if (*uffd < 0) {
		snprintf(r->fatal, sizeof(r->fatal), "the program's hello came without its "
			 "userfaultfd");
		return -1;
	}
	return 0;
}

static void send_ack(int sock, int error)
{
	struct dimm_preload_ack a = { .magic = DIMM_PRELOAD_MAGIC, .error = error };

	if (send(sock, &a, sizeof(a), MSG_NOSIGNAL) < 0) {
		/* the program is gone: its wait status says so */
	}
}

/* The pager of one image of the program (the first, or the one an exec
 * started: its hello came with a new userfaultfd). NULL with r->fatal. */
static struct dimm_pager *attach(struct dapp *d, const struct run_opts *ro, int memfd,
				 const struct dimm_preload_hello *h, int uffd, struct run_res *r)
{
	struct dimm_pager_cfg pc;
	struct dimm_pager *p;

	if (h->size != ro->region) {
		snprintf(r->fatal, sizeof(r->fatal), "the preload library mapped %" PRIu64
			 " bytes, not the region's %" PRIu64, h->size, ro->region);
		close(uffd);
		return NULL;
	}
	memset(&pc, 0, sizeof(pc));
	pc.client = d->pager_c;
	pc.fetch_client = d->fetch_c;
	pc.size = ro->region;
	pc.budget = (unsigned)(ro->budget_bytes / DIMM_PAGE);
	pc.budget_pct = ro->budget_pct;
	pc.readahead = ro->readahead;
	pc.flags = DIMM_PAGER_F_EXTERNAL;
	pc.ext_uffd = uffd; /* the pager's from now on */
	pc.ext_memfd = memfd;
	pc.ext_uaddr = (uintptr_t)h->base;
	pc.ext_features = h->features;
	p = dimm_pager_new(&pc, r->fatal, sizeof(r->fatal));
	if (p) {
		snprintf(r->mode, sizeof(r->mode), "%s", dimm_pager_mode(p));
		dr_pager_publish(d, p);
	}
	return p;
}

/* The counters of one image's pager added to the run's. */
static void stats_add(struct dimm_pager_stats *a, const struct dimm_pager_stats *b)
{
	uint64_t *x = (uint64_t *)a, max = a->in_use_max > b->in_use_max ? a->in_use_max
									 : b->in_use_max;
	uint64_t bmax = a->budget_max > b->budget_max ? a->budget_max : b->budget_max;
	const uint64_t *y = (const uint64_t *)b;

	for (size_t i = 0; i < offsetof(struct dimm_pager_stats, hist) / sizeof(uint64_t); i++)
		x[i] += y[i];
	lat_merge(&a->hist, &b->hist);
	lat_merge(&a->hist_wp, &b->hist_wp);
	lat_merge(&a->hist_victim, &b->hist_victim);
	lat_merge(&a->hist_batch, &b->hist_batch);
	a->in_use_max = max;
	a->budget_max = bmax;
	a->in_use = b->in_use;
}

static void detach(struct dapp *d, struct dimm_pager *p, struct run_res *r)
{
	dr_pager_withdraw(d);
	stats_add(&r->st, dimm_pager_stats(p));
	r->budget_end = dimm_pager_budget(p);
	dimm_pager_free(p);
}

/* Wait for the program; serve an exec's new image; stop the program when
 * the pager cannot serve it any more. */
static void wait_program(struct dapp *d, const struct run_opts *ro, pid_t pid, int sock,
			 int memfd, struct dimm_pager **pp, struct run_res *r)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool killed = false;

	for (;;) {
		struct pollfd pf[2] = { { .fd = pfd, .events = POLLIN },
					{ .fd = sock, .events = POLLIN } };
		char msg[300];

		poll(pf, 2, 20);
		if (!killed && *pp && dimm_pager_error(*pp, msg, sizeof(msg))) {
			/* no access gets wrong data (poisoned pages give SIGBUS); end
			 * the program now rather than let it run on part of its memory */
			kill(pid, SIGKILL);
			killed = true;
			snprintf(r->fatal, sizeof(r->fatal), "the program was stopped: its remote "
				 "memory failed: %s", msg);
		}
		if (pf[1].revents & (POLLHUP | POLLERR)) {
			sock = -1; /* the program closed it (it ends) */
			pf[1].revents = 0;
		}
		if (!killed && (pf[1].revents & POLLIN)) {
			/* an exec: the old image is gone, its pages are garbage */
			struct dimm_preload_hello h;
			int uffd;

			if (*pp) {
				detach(d, *pp, r);
				*pp = NULL;
			}
			fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
				  (off_t)ro->region);
			if (recv_hello(sock, pid, &h, &uffd, r) == 0)
				*pp = attach(d, ro, memfd, &h, uffd, r);
			send_ack(sock, *pp ? 0 : 1);
			r->execs++;
		}
		pid_t w = waitpid(pid, &r->ws, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
	}
	if (pfd >= 0)
		close(pfd);
}

static void run_remote(struct dapp *d, const struct run_opts *ro, const char *preload,
		       struct run_res *r)
{
	int sv[2] = { -1, -1 }, memfd, uffd = -1;
	struct dimm_preload_hello h;
	struct dimm_pager *p = NULL;
	double t0;
	pid_t pid;

	memfd = (int)syscall(SYS_memfd_create, "htoe-dimm-region", MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, (off_t)ro->region) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		snprintf(r->fatal, sizeof(r->fatal), "memfd or socket pair: %s", strerror(errno));
		goto out;
	}
	t0 = mono();
	pid = spawn(ro, preload, sv[1], memfd, false);
	if (pid < 0) {
		r->ws = 127 << 8;
		goto out;
	}
	atomic_store(&child, pid);
	r->started = true;
	close(sv[1]);
	sv[1] = -1;
	int hr = recv_hello(sv[0], pid, &h, &uffd, r);

	if (hr == 0) {
		p = attach(d, ro, memfd, &h, uffd, r);
		if (!p)
			hr = -1;
	}
	if (hr == -1) {
		send_ack(sv[0], 1);
		while (waitpid(pid, &r->ws, 0) < 0 && errno == EINTR)
			;
	}
	if (hr == 0) {
		send_ack(sv[0], 0);
		wait_program(d, ro, pid, sv[0], memfd, &p, r);
	}
	atomic_store(&child, -1);
	r->t = mono() - t0;
	if (p)
		detach(d, p, r);
	r->p50 = (uint64_t)lat_quantile(&r->st.hist, 0.5);
	r->p99 = (uint64_t)lat_quantile(&r->st.hist, 0.99);
out:
	if (memfd >= 0)
		close(memfd);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
}

static double mib(uint64_t pages)
{
	return (double)pages * DIMM_PAGE / (1 << 20);
}

static void print_summary(const struct dapp *d, const struct run_opts *ro, const struct run_res *r)
{
	const struct dimm_pager_stats *st = &r->st;
	char stx[80], bud[48];

	status_text(stx, sizeof(stx), r->ws);
	if (ro->budget_pct)
		snprintf(bud, sizeof(bud), "%u%% of the pages in use", ro->budget_pct);
	else
		snprintf(bud, sizeof(bud), "%" PRIu64 " KiB", ro->budget_bytes / 1024);
	printf("htoe-dimm: run: %s: %s after %.3f s\n", ro->argv[0], stx, r->t);
	printf("htoe-dimm: run: large memory in use up to %.1f MiB (%" PRIu64 " pages); budget %s "
	       "(%u pages at most); pager mode %s%s\n",
	       mib(st->in_use_max), st->in_use_max, bud, (unsigned)st->budget_max, r->mode,
	       r->execs ? "; the program exec'd (a new pager for each image)" : "");
	printf("htoe-dimm: run: %" PRIu64 " pages faulted in remotely (%.1f MiB), %" PRIu64
	       " fresh pages zero-filled locally, %" PRIu64 " written back (%.1f MiB), %" PRIu64
	       " evicted, %" PRIu64 " given back by the program\n",
	       st->faults + st->readaheads, (double)st->bytes_in / (1 << 20), st->zero_fills,
	       st->writebacks, (double)st->bytes_out / (1 << 20), st->evictions, st->removed);
	printf("htoe-dimm: run: remote fault latency p50 %.1f us, p99 %.1f us (%" PRIu64
	       " faults waited for a fetch, %" PRIu64 " readahead hits); VL resets recovered: "
	       "%" PRIu64 " fetches, %" PRIu64 " write-backs sent again\n",
	       (double)r->p50 / 1e3, (double)r->p99 / 1e3, st->faults, st->readahead_hits,
	       st->fetch_retries, st->writeback_retries);
	printf("htoe-dimm: run: lease %#x of node %u: %" PRIu64 " KiB for %" PRIu64 " ms, renewed "
	       "every %" PRIu64 " ms\n", d->lease.lease_id, d->lessor, d->lease.size / 1024,
	       d->lease.duration_ns / 1000000, d->lease.duration_ns / 3000000);
	if (ro->compare) {
		if (r->plain_done)
			printf("htoe-dimm: compare: plain run %.3f s, on remote memory %.3f s: slowdown "
			       "%.2fx\n", r->plain_t, r->t, r->plain_t > 0 ? r->t / r->plain_t : 0);
		if (r->inproc_done)
			printf("htoe-dimm: compare: in-process pager fault p50 %.1f us, p99 %.1f us; "
			       "the program's p50 is %.2fx that\n", (double)r->ip50 / 1e3,
			       (double)r->ip99 / 1e3, r->ip50 ? (double)r->p50 / (double)r->ip50 : 0);
		else
			printf("htoe-dimm: compare: in-process pager not measured: %s\n",
			       r->inproc_why);
	}
}

static int write_json(const struct dapp *d, const struct run_opts *ro, const struct run_res *r)
{
	const struct dimm_pager_stats *st = &r->st;
	json_t *argv = json_array(), *j;
	int rc;

	for (char **a = ro->argv; *a; a++)
		json_array_append_new(argv, json_string(*a));
	j = json_pack("{s:o,s:i,s:f,s:s,s:I,s:I,s:I,s:I,s:I}", "argv", argv, "exit_status",
		      exit_code(r->ws), "seconds", r->t, "pager_mode", r->mode, "region_bytes",
		      (json_int_t)ro->region, "threshold_bytes", (json_int_t)ro->threshold,
		      "budget_pct", (json_int_t)ro->budget_pct, "budget_bytes",
		      (json_int_t)ro->budget_bytes, "budget_pages_max", (json_int_t)r->st.budget_max);
	json_object_set_new(j, "pager",
			    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f}",
				      "faults", (json_int_t)st->faults, "readaheads",
				      (json_int_t)st->readaheads, "readahead_hits",
				      (json_int_t)st->readahead_hits, "zero_fills",
				      (json_int_t)st->zero_fills, "writebacks",
				      (json_int_t)st->writebacks, "evictions",
				      (json_int_t)st->evictions, "removed", (json_int_t)st->removed,
				      "in_use_max_pages", (json_int_t)st->in_use_max, "bytes_in",
				      (json_int_t)st->bytes_in, "bytes_out", (json_int_t)st->bytes_out,
				      "fetch_retries", (json_int_t)st->fetch_retries,
				      "writeback_retries", (json_int_t)st->writeback_retries,
				      "fault_p50_us", (double)r->p50 / 1e3, "fault_p99_us",
				      (double)r->p99 / 1e3));
	json_object_set_new(json_object_get(j, "pager"), "waits",
			    json_pack("{s:I,s:I,s:I,s:f,s:f}", "room_waits",
				      (json_int_t)st->room_waits, "victim_waits",
				      (json_int_t)st->victim_waits, "batch_waits",
				      (json_int_t)st->batch_waits, "victim_wait_p50_us",
				      lat_quantile(&st->hist_victim, 0.5) / 1e3,
				      "batch_wait_p50_us",
				      lat_quantile(&st->hist_batch, 0.5) / 1e3));
	json_object_set_new(json_object_get(j, "pager"), "spurious", json_integer((json_int_t)st->spurious));
	json_object_set_new(json_object_get(j, "pager"), "wp_faults", json_integer((json_int_t)st->wp_faults));
	json_object_set_new(j, "lease",
			    json_pack("{s:I,s:i,s:I,s:I}", "id", (json_int_t)d->lease.lease_id,
				      "lessor", (int)d->lessor, "bytes", (json_int_t)d->lease.size,
				      "duration_ms", (json_int_t)(d->lease.duration_ns / 1000000)));
	if (ro->compare)
		json_object_set_new(
			j, "compare",
			json_pack("{s:f,s:i,s:f,s:f,s:f}", "plain_seconds", r->plain_t,
				  "plain_exit_status", exit_code(r->plain_ws), "slowdown",
				  r->plain_t > 0 ? r->t / r->plain_t : 0.0, "inproc_fault_p50_us",
				  (double)r->ip50 / 1e3, "fault_p50_ratio",
				  r->ip50 ? (double)r->p50 / (double)r->ip50 : 0.0));
	if (r->fatal[0])
		json_object_set_new(j, "error", json_string(r->fatal));
	rc = json_dump_file(j, ro->json, JSON_INDENT(2));
	json_decref(j);
	return rc;
}

void *run_thread(void *arg)
{
	struct run_ctx *c = arg;
	struct dapp *d = c->d;
	struct run_opts *ro = c->ro;
	struct run_res *r = calloc(1, sizeof(*r));
	char preload[PATH_MAX];

	c->status = 1;
	if (!r)
		goto done;
	run_signals();
	all_cpus();
	if (preload_path(preload, sizeof(preload))) {
		fprintf(stderr, "htoe-dimm: --run: the preload library %s is not there "
			"(HTOE_DIMM_PRELOAD=FILE names it)\n", preload);
		goto done;
	}
	if (ro->compare) {
		run_plain(ro, r);
		inproc_faults(d, ro, r);
	}
	run_remote(d, ro, preload, r);
	if (r->started)
		print_summary(d, ro, r);
	if (ro->json && write_json(d, ro, r))
		fprintf(stderr, "htoe-dimm: --json %s: cannot write it\n", ro->json);
	if (r->fatal[0]) {
		fprintf(stderr, "htoe-dimm: error: %s\n", r->fatal);
		c->status = 1;
	} else {
		c->status = r->started ? exit_code(r->ws) : 127;
	}
done:
	free(r);
	atomic_store(&d->quit_a, 1);
	dr_kick(d);
	return NULL;
}
