/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the benchmark of the bridge (throughput, round trips, goodput
 * under loss, MACsec, incast, polling; docs/benchmarks.md). It
 * measures, in one run and on the same virtual devices, htoe-bridge's
 * throughput and round trips against baselines measured in the same run,
 * prints a table with the targets, and writes JSON and PNG plots.
 *
 *   htoe-bench [--quick] [--duration SEC] [--json FILE] [--plots DIR]
 *              [--bridge PATH] [--keep]
 *
 * Every scenario runs in a child process with a fresh EAL: htoe-bridge (found
 * next to this executable) with a generated INI and --json, or htoe-bench
 * itself in a hidden worker mode (`__fwd`: raw forwarding). The TCP
 * ping-pong and the crypto loops need no EAL and run here. Definitions of
 * every figure: docs/benchmarks.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "bench/bench.h"
#include "bench_plot_py.h"
#include "htoe/htoe_macsec.h"
#include "host_info.h"
#include "htoe_version.h"
#include "out_file.h"
#include "run_python.h"

extern char **environ;

static const unsigned write_sizes[] = { 4, 8, 16, 32, 64 };
#define N_WSIZES (sizeof(write_sizes) / sizeof(write_sizes[0]))
#define RTT_SLICES_MAX 5 /* raw ping-pongs and reads of one size and link, in turns */

struct opts {
	bool quick, keep;
	double dur;          /* throughput runs (64-byte writes, loss, MACsec) */
	double dur_short;    /* the other write sizes, latency runs, baselines */
	const char *json, *plots;
	char bridge[PATH_MAX], self[PATH_MAX], tmp[128];
	const char *ip;      /* iproute2's ip, for the namespace scenarios */
	const char *only;    /* --only: the one scenario to run (NULL: all) */
};

static struct opts O;

/* Is NAME one of the scenarios (the table before main)? */
static bool scenario_known(const char *name);

/* Does this run include the scenario? */
static bool want(const char *name)
{
	return !O.only || !strcmp(O.only, name);
}
static unsigned run_no;
static volatile sig_atomic_t stop; /* SIGINT/SIGTERM: kill the child, clean up, exit */

static void on_signal(int sig)
{
	stop = sig;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("htoe-bench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* ------------------------------------------------------------ processes */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	remove(p);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The EAL runtime directory a --file-prefix leaves behind. */
static void rm_runtime_dir(const char *prefix)
{
	char p[PATH_MAX];
	const char *x = getenv("XDG_RUNTIME_DIR");

	snprintf(p, sizeof(p), "/var/run/dpdk/%s", prefix);
	if (geteuid() != 0)
		snprintf(p, sizeof(p), "%s/dpdk/%s", x ? x : "/tmp", prefix);
	rm_rf(p);
}

static pid_t spawn(char *const argv[], const char *out, const char *err)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fflush(NULL);
	int r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);

	posix_spawn_file_actions_destroy(&fa);
	return r ? -1 : pid;
}

/* Every child run: its label, wall and CPU seconds (a busy-polling run that
 * got much less than its lcores' worth of CPU was starved by other load). */
static json_t *runs_log;
static const char *run_label = "";
static double last_cpu_s;

/* The bounds below only catch a hung child: a loaded machine (busy-polling
 * lcores of other processes on two CPUs) can keep a healthy one off its CPU
 * for tens of seconds, and a figure from a killed run is lost. */
#define HANG_S 180.0 /* longer than a run may take beyond its duration */
#define UP_S 60.0    /* for a side to come up */

/* Exit status (128+sig when killed), killing it after timeout_s. */
static int wait_for(pid_t pid, double timeout_s)
{
	unsigned long long end = bench_now_ns() + (unsigned long long)(timeout_s * 1e9);
	int st;
	bool killed = false;
	struct rusage ru;

	for (;;) {
		pid_t r = wait4(pid, &st, WNOHANG, &ru);

		if (r == pid)
			break;
		if (r < 0)
			return -1;
		if (!killed && (stop || bench_now_ns() > end)) {
			kill(pid, SIGKILL);
			killed = true;
		}
		usleep(5000);
	}
	last_cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The last line of a file that starts with '{', parsed; NULL if none. */
static json_t *last_json_line(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *last = NULL;
	size_t cap = 0;
	json_t *j = NULL;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0)
		if (line[0] == '{') {
			free(last);
			last = strdup(line);
		}
	fclose(f);
	free(line);
	if (last)
		j = json_loads(last, 0, NULL);
	free(last);
	return j;
}

/* First line of a file (for error messages). */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(buf, (int)len, f))
		if (strstr(buf, "htoe-bridge:") || strstr(buf, "error") || strstr(buf, "EAL"))
			break;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* A failed run's own words: the last lines of its output and error files on
 * stderr, so that a failure seen once (a loaded CI machine) can be read
 * afterwards, not only its first line in "errors". */
static void dump_tail(const char *what, const char *path)
{
	enum { KEEP = 25 };
	char ring[KEEP][256];
	unsigned n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(ring[n % KEEP], sizeof(ring[0]), f))
		n++;
	fclose(f);
	fprintf(stderr, "htoe-bench: run %s, its %s: the last %u lines:\n", run_label, what,
		n < KEEP ? n : KEEP);
	for (unsigned i = n < KEEP ? 0 : n - KEEP; i < n; i++)
		fprintf(stderr, "  | %s%s", ring[i % KEEP],
			strchr(ring[i % KEEP], '\n') ? "" : "\n");
}

struct child {
	char prefix[64], out[PATH_MAX], err[PATH_MAX], ini[PATH_MAX];
	char *argv[40];
	int argc;
	unsigned lcores;
	pid_t pid;
};

static void child_arg(struct child *c, const char *a)
{
	if (c->argc < 38)
		c->argv[c->argc++] = strdup(a);
	c->argv[c->argc] = NULL;
}

/* child_arg of a formatted argument */
static void child_argf(struct child *c, const char *fmt, ...)
{
	char a[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a, sizeof(a), fmt, ap);
	va_end(ap);
	child_arg(c, a);
}

/* EAL arguments: lcores, a unique prefix, no shared config unless memif;
 * in network namespace ns (`ip netns exec NS`, which execs: the pid is the
 * program's) unless NULL. */
static void child_init_ns(struct child *c, const char *ns, const char *exe, const char *lcores,
			  bool shconf)
{
	if (stop) { /* the previous child was killed and cleaned up */
		fprintf(stderr, "htoe-bench: stopped by signal %d\n", (int)stop);
		if (!O.keep)
			rm_rf(O.tmp);
		exit(130);
	}
	memset(c, 0, sizeof(*c));
	run_no++;
	snprintf(c->prefix, sizeof(c->prefix), "htoe-bench-%d-%u", (int)getpid(), run_no);
	snprintf(c->out, sizeof(c->out), "%s/run%u.out", O.tmp, run_no);
	snprintf(c->err, sizeof(c->err), "%s/run%u.err", O.tmp, run_no);
	snprintf(c->ini, sizeof(c->ini), "%s/run%u.ini", O.tmp, run_no);
	if (ns) {
		child_arg(c, O.ip);
		child_arg(c, "netns");
		child_arg(c, "exec");
		child_arg(c, ns);
	}
	child_arg(c, exe);
	if (exe == O.self)
		child_arg(c, "__fwd");
	child_arg(c, "-l");
	child_arg(c, lcores);
	c->lcores = strchr(lcores, '-') ? 2 : 1;
	child_arg(c, "--no-huge");
	child_arg(c, "-m");
	child_arg(c, "512");
	child_arg(c, "--no-pci");
	if (!shconf)
		child_arg(c, "--no-shconf");
	child_arg(c, "--file-prefix");
	child_arg(c, c->prefix);
	child_arg(c, "--log-level=warning");
}

static void child_init(struct child *c, const char *exe, const char *lcores, bool shconf)
{
	child_init_ns(c, NULL, exe, lcores, shconf);
}

static void child_free(struct child *c)
{
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	c->argc = 0;
	rm_runtime_dir(c->prefix);
}

/* A child that ran from t0 and exited rc into "runs" (after wait_for). */
static void log_run(const struct child *c, int rc, unsigned long long t0)
{
	double wall = (double)(bench_now_ns() - t0) / 1e9;

	if (runs_log && c->pid > 0)
		json_array_append_new(runs_log, json_pack("{s:s, s:i, s:f, s:f, s:f}", "run",
			run_label, "exit", (json_int_t)rc, "wall_s", wall, "cpu_s", last_cpu_s,
			"cpu_share", last_cpu_s / (wall * c->lcores)));
}

/* Run to completion; its JSON line, or NULL (*rc: exit status, *why). */
static json_t *child_run(struct child *c, double timeout_s, int *rc, char *why, size_t wlen)
{
	unsigned long long t0 = bench_now_ns();

	c->pid = spawn(c->argv, c->out, c->err);
	*rc = c->pid < 0 ? -1 : wait_for(c->pid, timeout_s);
	log_run(c, *rc, t0);
	json_t *j = *rc == 0 ? last_json_line(c->out) : NULL;

	if (!j) {
		char l[512];

		first_line(c->err, l, sizeof(l));
		if (!l[0])
			first_line(c->out, l, sizeof(l));
		snprintf(why, wlen, "%s exited %d: %s", c->argv[0], *rc, l[0] ? l : "no output");
		dump_tail("stderr", c->err);
		dump_tail("stdout", c->out);
	}
	child_free(c);
	return j;
}

/* ------------------------------------------------------------ bridge runs */

static const char *bridge_retry; /* [bridge] retry (NULL: the default) */

/* An INI for the bridge: two nodes, node 1's workload on node 2's memory.
 * dev: [port 0] is each process's end of a link (net_memif0, net_af_xdp0,
 * ...: the nodes run in two processes with --node); NULL: an in-process
 * net_ring crossover pair. */
static void write_ini(const char *path, const char *dev, const char *mix, unsigned size,
		      unsigned window, double secs, const char *extra)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "; generated by htoe-bench\n[global]\nstats_interval = 0\n"
		"[bridge]\nmem_base = 0x100000\nmem_size = 64K\n");
	if (bridge_retry)
		fprintf(f, "retry = %s\n", bridge_retry);
	if (dev)
		fprintf(f, "[port 0]\ndev = %s\n[node 1]\nport = 0\n[node 2]\nport = 0\n", dev);
	else
		fprintf(f, "[port 0]\ncrossover = 1\n[port 1]\ncrossover = 0\n"
			"[node 1]\nport = 0\nlcore = 0\n[node 2]\nport = 1\nlcore = 1\n");
	fprintf(f, "[map]\nrange1 = 0x100000000 64K 1\nrange2 = 0x200000000 64K 2\n"
		"[workload 1]\ntarget = 2\nmix = %s\nsizes = %u\nwindow = %u\nsweep = off\n"
		"duration = %.0fms\n%s", mix, size, window, secs * 1e3, extra ? extra : "");
	fclose(f);
}

json_t *bench_entry(json_t *array, const char *key, unsigned v)
{
	size_t i;
	json_t *n;

	json_array_foreach(array, i, n)
		if (json_integer_value(json_object_get(n, key)) == (json_int_t)v)
			return n;
	return NULL;
}

json_t *bench_node_of(json_t *summary, unsigned id)
{
	return bench_entry(json_object_get(summary, "per_node"), "id", id);
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* For app/bench (bench.h). */
double bench_num(json_t *o, const char *k)
{
	return num(o, k);
}

/* Runs the bridge (lcores 0-1, net_ring) on the INI c->ini with a workload
 * of secs; its JSON summary. */
static json_t *bridge_ini(struct child *c, double secs, int *rc, char *why, size_t wlen)
{
	child_arg(c, "--");
	child_arg(c, "--config");
	child_arg(c, c->ini);
	child_arg(c, "--json");
	return child_run(c, secs + HANG_S, rc, why, wlen);
}

/* Runs the bridge on net_ring with this workload; its JSON summary. */
static json_t *bridge_ring(const char *mix, unsigned size, unsigned window, double secs,
			   const char *extra, int *rc, char *why, size_t wlen)
{
	struct child c;

	child_init(&c, O.bridge, "0-1", false);
	write_ini(c.ini, NULL, mix, size, window, secs, extra);
	return bridge_ini(&c, secs, rc, why, wlen);
}

/* Posted-write throughput of one run: HT payload delivered at node 2. */
static json_t *write_figures(json_t *s, unsigned size)
{
	json_t *n1 = bench_node_of(s, 1), *n2 = bench_node_of(s, 2);

	if (!n1 || !n2)
		return NULL;
	double iv = num(n1, "wl_finish_s") - num(n1, "wl_start_s");
	double frames = num(n1, "frames_tx"), bytes = num(n1, "bytes_tx");
	double dlv = num(n2, "to_target"), pay = dlv * size;
	double l2 = bytes + 4 * frames, phy = l2 + 20 * frames;

	if (iv <= 0 || frames <= 0)
		return NULL;
	/* HT bytes: the data plus each WrSized's 8-byte control packet */
	double ht = dlv * (size + 8.0);

	return json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			 "size", (json_int_t)size, "seconds", iv, "ht_pps", dlv / iv,
			 "mbps", pay / iv / 1e6, "frames_per_s", frames / iv,
			 "avg_frame", bytes / frames, "ht_per_frame", dlv / frames,
			 "wire_eff_l2", pay / l2, "wire_eff_phy", pay / phy,
			 "wire_eff_ht_l2", ht / l2,
			 "retransmits", num(s, "retransmits"), "ack_bytes_per_s",
			 num(n2, "bytes_tx") / iv, "issued", num(n1, "ops"));
}

static json_t *raw_forward(unsigned frame_len, double secs, char *why, size_t wlen)
{
	struct child c;
	int rc;

	child_init(&c, O.self, "0-1", false);
	child_arg(&c, "--");
	child_argf(&c, "%u", frame_len);
	child_argf(&c, "%.3f", secs);
	json_t *j = child_run(&c, secs + HANG_S, &rc, why, wlen);

	if (j)
		json_object_set_new(j, "gbps", json_real(num(j, "fps") * frame_len * 8 / 1e9));
	return j;
}

/* A link between two processes: side 0 (lcore 0: node 1, the pinging or
 * sending half) and side 1 (lcore 1: node 2, the echoing or receiving
 * half), each with its --vdev, in its namespace (or none). */
struct link2 {
	const char *name;     /* "memif", "af_packet", "af_xdp" */
	const char *ns[2];
	char vdev[2][400];    /* --vdev=... of each side */
	char dev[64];         /* the ethdev's name: [port 0] dev */
	bool shconf, memif;
	char sock[256];       /* memif: the server's socket, removed afterwards */
};

static void link_memif(struct link2 *L)
{
	memset(L, 0, sizeof(*L));
	L->name = "memif";
	L->shconf = L->memif = true;
	snprintf(L->sock, sizeof(L->sock), "%s/memif%u.sock", O.tmp, run_no);
	for (int s = 0; s < 2; s++)
		snprintf(L->vdev[s], sizeof(L->vdev[s]),
			 "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no",
			 s ? "server" : "client", L->sock);
	snprintf(L->dev, sizeof(L->dev), "net_memif0");
}

/* One process of a link: `exe` on side `side`. */
static void link_child(struct child *c, const struct link2 *L, int side, const char *exe)
{
	child_init_ns(c, L->ns[side], exe, side ? "1" : "0", L->shconf);
	child_arg(c, L->vdev[side]);
	child_arg(c, "--");
}

/* Until `what` appears in the file (the other side is up), the process
 * exits or UP_S pass; true if it appeared. */
static bool wait_line(const char *path, const char *what, pid_t pid)
{
	unsigned long long end = bench_now_ns() + (unsigned long long)(UP_S * 1e9);

	while (!stop && bench_now_ns() < end) {
		FILE *f = fopen(path, "r");
		char l[512];
		bool seen = false;

		while (f && !seen && fgets(l, sizeof(l), f))
			seen = strstr(l, what) != NULL;
		if (f)
			fclose(f);
		if (seen)
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		usleep(10000);
	}
	return false;
}

/* Starts side 1 (the server half) and waits until it is ready: the memif
 * socket exists, or its output says `ready`. false (why) if it did not
 * come up (it is stopped then). */
static bool link_serve(struct child *srv, const struct link2 *L, const char *ready, char *why,
		       size_t wlen)
{
	srv->pid = spawn(srv->argv, srv->out, srv->err);
	if (srv->pid < 0) {
		snprintf(why, wlen, "cannot start %.900s", srv->argv[0]);
		child_free(srv);
		return false;
	}
	bool up = L->memif ? false : wait_line(srv->out, ready, srv->pid);

	unsigned long long end = bench_now_ns() + (unsigned long long)(UP_S * 1e9);

	while (L->memif && !stop && bench_now_ns() < end && !(up = !access(L->sock, F_OK)))
		usleep(10000);
	if (!up) {
		char l[512];

		kill(srv->pid, SIGKILL);
		wait_for(srv->pid, 20);
		first_line(srv->err, l, sizeof(l));
		if (!l[0])
			first_line(srv->out, l, sizeof(l));
		snprintf(why, wlen, "%s side did not come up: %s", L->name, l[0] ? l : "no output");
		child_free(srv);
		return false;
	}
	return true;
}

/* Stops the server half with SIGINT; its JSON line (or NULL). */
static json_t *link_unserve(struct child *srv, const struct link2 *L, int *rc)
{
	kill(srv->pid, SIGINT);
	*rc = wait_for(srv->pid, 20);
	json_t *j = *rc == 0 ? last_json_line(srv->out) : NULL;

	child_free(srv);
	if (L->memif)
		unlink(L->sock);
	return j;
}

/* The bridge over a link: node 2 serves in one process (side 1, with
 * exit_when_done = off, stopped with SIGINT afterwards), node 1 runs the
 * workload in the other (side 0). The client's summary, with the server's
 * per_node entries appended when `both` (the write figures need node 2's
 * counters). */
/* Node 2's process on side 1 of L: serves until stopped, with --set srv_set
 * (NULL: none); its INI (workload of node 1) is srv->ini. */
static void serve_node2(struct child *srv, const struct link2 *L, const char *mix, unsigned size,
			double secs, const char *srv_set)
{
	link_child(srv, L, 1, O.bridge);
	write_ini(srv->ini, L->dev, mix, size, 1, secs, NULL);
	child_arg(srv, "--config");
	child_arg(srv, srv->ini);
	child_arg(srv, "--node");
	child_arg(srv, "2");
	child_arg(srv, "--set");
	child_arg(srv, "global.exit_when_done=off");
	if (srv_set) {
		child_arg(srv, "--set");
		child_arg(srv, srv_set);
	}
}

static json_t *bridge_link(const struct link2 *L, const char *mix, unsigned size, double secs,
			   bool both, const char *srv_set, char *why, size_t wlen)
{
	struct child srv, cli;
	int rc, src;

	serve_node2(&srv, L, mix, size, secs, srv_set);
	if (both)
		child_arg(&srv, "--json");
	if (!link_serve(&srv, L, "port 0 up", why, wlen))
		return NULL;
	link_child(&cli, L, 0, O.bridge);
	child_arg(&cli, "--config");
	child_arg(&cli, srv.ini);
	child_arg(&cli, "--node");
	child_arg(&cli, "1");
	child_arg(&cli, "--json");
	json_t *j = child_run(&cli, secs + HANG_S, &rc, why, wlen);
	json_t *sj = link_unserve(&srv, L, &src);

	if (j && src != 0) /* the figures are the client's; a server that did not stop is noted */
		json_object_set_new(j, "server_note", json_string("server did not exit 0"));
	if (j && both) {
		size_t i;
		json_t *n, *pn = json_object_get(j, "per_node");

		json_array_foreach(json_object_get(sj, "per_node"), i, n)
			json_array_append(pn, n);
	}
	json_decref(sj);
	return j;
}

/* Read round trip over memif: node 2 serves in one process (lcore 1), node 1
 * runs the closed loop in another (lcore 0). */
static json_t *read_memif(unsigned size, double secs, const char *srv_set, char *why,
			  size_t wlen)
{
	struct link2 L;

	link_memif(&L);
	return bridge_link(&L, "rd=100", size, secs, false, srv_set, why, wlen);
}

/* The raw ping-pong of one frame_len-byte frame over a link (__fwd ping on
 * side 0, echo on side 1); NULL for net_ring: in one process. Its JSON
 * ({"frame_len","lost","rtt"}) or NULL (why). */
/* Echo sides of two-process raw ping-pongs that did not exit 0 (a crash when
 * the ping side left first: fig.raw_rtt_echo_unclean, 0 expected) */
static unsigned echo_unclean;

static json_t *raw_pingpong(const struct link2 *L, unsigned frame_len, double secs, char *why,
			    size_t wlen)
{
	struct child srv = { .pid = -1 }, c;
	int rc, src;

	if (L) {
		link_child(&srv, L, 1, O.self);
		child_arg(&srv, "echo");
		if (!link_serve(&srv, L, "ready", why, wlen))
			return NULL;
		link_child(&c, L, 0, O.self);
		child_arg(&c, "ping");
	} else {
		child_init(&c, O.self, "0-1", false);
		child_arg(&c, "--");
		child_arg(&c, "pingpong");
	}
	child_argf(&c, "%u", frame_len);
	child_argf(&c, "%.3f", secs);
	json_t *j = child_run(&c, secs + HANG_S, &rc, why, wlen);

	if (L) {
		json_decref(link_unserve(&srv, L, &src));
		if (src != 0) {
			echo_unclean++;
			fprintf(stderr, "htoe-bench: raw ping-pong: the echo side exited with status "
				"%d (above 128: killed by signal %d)\n", src, src - 128);
		}
	}
	return j;
}

/* Raw one-way rate over a link: __fwd tx (side 0) -> rx (side 1); the
 * receiver's {"frame_len","frames","seconds","fps"} + "gbps", or NULL. */
static json_t *raw_oneway(const struct link2 *L, unsigned frame_len, double secs, char *why,
			  size_t wlen)
{
	struct child rx, tx;
	int rc;

	link_child(&rx, L, 1, O.self);
	child_arg(&rx, "rx");
	child_argf(&rx, "%.3f", secs);
	if (!link_serve(&rx, L, "ready", why, wlen))
		return NULL;
	unsigned long long t0 = bench_now_ns(); /* the receiver's measured part */

	link_child(&tx, L, 0, O.self);
	child_arg(&tx, "tx");
	child_argf(&tx, "%u", frame_len);
	tx.pid = spawn(tx.argv, tx.out, tx.err);
	rc = wait_for(rx.pid, secs + HANG_S);
	log_run(&rx, rc, t0);
	if (tx.pid > 0) {
		kill(tx.pid, SIGINT);
		wait_for(tx.pid, 20);
	}
	json_t *j = rc == 0 ? last_json_line(rx.out) : NULL;

	if (!j) {
		char l[512];

		first_line(rx.err, l, sizeof(l));
		snprintf(why, wlen, "%s raw rx exited %d: %s", L->name, rc, l[0] ? l : "no output");
		dump_tail("stderr", rx.err);
	} else {
		json_object_set_new(j, "gbps", json_real(num(j, "fps") * frame_len * 8 / 1e9));
	}
	child_free(&rx);
	child_free(&tx);
	return j;
}

static json_t *lat_to_json(const struct lat_hist *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_t *j;

	if (!f)
		return NULL;
	lat_json(h, f);
	fclose(f);
	j = json_loads(buf, 0, NULL);
	free(buf);
	return j;
}

/* ------------------------------------------------------------ the table */

struct target {
	const char *name, *unit;
	double value;   /* NAN: not measured */
	double goal;
	bool le;        /* value <= goal, else >= */
	double scale;   /* for printing */
	const char *why; /* when not measured */
};

#define MAX_TARGETS 48
static struct target T[MAX_TARGETS];
static unsigned n_targets;

static void target(const char *name, double v, double goal, bool le, double scale,
		   const char *unit, const char *why)
{
	if (n_targets < MAX_TARGETS)
		T[n_targets++] = (struct target){ name, unit, v, goal, le, scale, why };
}

static json_t *targets_json(void)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < n_targets; i++) {
		const struct target *t = &T[i];
		bool have = !isnan(t->value);

		json_array_append_new(a, json_pack("{s:s, s:o, s:f, s:s, s:o, s:s, s:s?}",
			"figure", t->name, "value", have ? json_real(t->value) : json_null(),
			"target", t->goal, "cmp", t->le ? "<=" : ">=",
			"met", have ? json_boolean(t->le ? t->value <= t->goal : t->value >= t->goal)
				    : json_null(),
			"unit", t->unit, "unavailable", have ? NULL : t->why));
	}
	return a;
}

static void print_targets(void)
{
	printf("\n%-52s %14s %14s  %s\n", "figure (targets: docs/benchmarks.md)", "measured",
	       "target", "met");
	for (unsigned i = 0; i < n_targets; i++) {
		const struct target *t = &T[i];
		char goal[40];

		snprintf(goal, sizeof(goal), "%s %.4g %s", t->le ? "<=" : ">=", t->goal * t->scale,
			 t->unit);
		if (isnan(t->value))
			printf("%-52s %14s %14s  n/a (%s)\n", t->name, "-", goal, t->why);
		else
			printf("%-52s %10.4g %-3s %14s  %s\n", t->name, t->value * t->scale, t->unit,
			       goal, (t->le ? t->value <= t->goal : t->value >= t->goal) ? "yes"
											 : "NO");
	}
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: htoe-bench [--quick] [--duration SEC] [--json FILE] [--plots DIR]\n"
		"                  [--bridge PATH] [--keep] [--only SCENARIO]\n"
		"  --quick          short runs (about 1 s each; for smoke tests)\n"
		"  --duration SEC   seconds of each throughput run (default 3; --quick 1)\n"
		"  --json FILE      write every figure as JSON\n"
		"  --plots DIR      write DIR/bench-throughput.png, bench-latency.png, bench-loss.png\n"
		"                   (/usr/bin/python3 with matplotlib)\n"
		"  --bridge PATH    the htoe-bridge to run (default: next to htoe-bench)\n"
		"  --keep           keep the temporary directory (INIs, outputs)\n"
		"  --only SCENARIO  run one scenario: writes, baseline, write64_bridge, rtt,\n"
		"                   idle, loss_macsec, netns, loss_sweep, incast, peers,\n"
		"                   crypto (the targets of the others are n/a)\n"
		"  --help           this text\n"
		"  --version        the version\n"
		"Runs on lcores 0-1 (two CPUs); see docs/benchmarks.md.\n");
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, 0, 'q' }, { "duration", required_argument, 0, 'd' },
		{ "json", required_argument, 0, 'j' }, { "plots", required_argument, 0, 'p' },
		{ "bridge", required_argument, 0, 'b' }, { "keep", no_argument, 0, 'k' },
		{ "only", required_argument, 0, 'o' },
		{ "help", no_argument, 0, 'h' }, { "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 }
	};
	int c;

	O.dur = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'q': O.quick = true; break;
		case 'd': {
			char *end;

			O.dur = strtod(optarg, &end);
			if (end == optarg || *end || !(O.dur > 0) || O.dur > 3600)
				die("--duration '%s': seconds in (0, 3600]", optarg);
			break;
		}
		case 'j': O.json = optarg; break;
		case 'p': O.plots = optarg; break;
		case 'b': snprintf(O.bridge, sizeof(O.bridge), "%s", optarg); break;
		case 'k': O.keep = true; break;
		case 'o': {
			if (!scenario_known(optarg))
				die("--only '%s': no such scenario (--help lists them)", optarg);
			O.only = optarg;
			break;
		}
		case 'h': usage(stdout); exit(0);
		case 'V': htoe_print_version("htoe-bench"); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (--help)", argv[optind]);
	char err[PATH_MAX + 128];

	if (O.json && htoe_check_out_file(O.json, err, sizeof(err)))
		die("--json: %s", err);
	if (O.plots && htoe_check_out_dir(O.plots, err, sizeof(err)))
		die("--plots: %s", err);
	if (!O.dur)
		O.dur = O.quick ? 1 : 3;
	O.dur_short = O.quick ? 0.5 : O.dur / 2 < 1 ? 1 : O.dur / 2;
	ssize_t n = readlink("/proc/self/exe", O.self, sizeof(O.self) - 1);

	if (n <= 0)
		die("cannot find my own executable (/proc/self/exe)");
	O.self[n] = 0;
	if (!O.bridge[0]) {
		snprintf(O.bridge, sizeof(O.bridge), "%s", O.self);
		char *sl = strrchr(O.bridge, '/');

		snprintf(sl + 1, sizeof(O.bridge) - (size_t)(sl + 1 - O.bridge), "htoe-bridge");
	}
	if (access(O.bridge, X_OK))
		die("%s: %s (--bridge PATH)", O.bridge, strerror(errno));
}

/* --plots DIR: 0 when the plots were written, -1 (message on stderr) if not */
static int plot(const char *json, const char *dir)
{
	if (access("/usr/bin/python3", X_OK) ||
	    system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
		fprintf(stderr, "htoe-bench: --plots %s: not written: /usr/bin/python3 with "
			"matplotlib not found (apt-get install python3-matplotlib)\n", dir);
		return -1;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "htoe-bench: --plots %s: %s\n", dir, strerror(errno));
		return -1;
	}
	int r = htoe_run_python(bench_plot_py, json, dir);

	if (r == -1)
		fprintf(stderr, "htoe-bench: --plots %s: cannot run /usr/bin/python3\n", dir);
	else if (r)
		fprintf(stderr, "htoe-bench: --plots %s: the plot script failed\n", dir);
	else
		printf("htoe-bench: plots: %s/bench-throughput.png, %s/bench-latency.png, "
		       "%s/bench-loss.png\n", dir, dir, dir);
	return r ? -1 : 0;
}

static double get_or_nan(json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* ------------------------------------------------------------ scenarios */

static json_t *errs_log;

static void note_err(const char *what, const char *why)
{
	fprintf(stderr, "htoe-bench: %s: %s\n", what, why);
	json_array_append_new(errs_log, json_pack("{s:s, s:s}", "scenario", what, "error", why));
}

void bench_note_err(const char *what, const char *why)
{
	note_err(what, why);
}

/* One run of bench_incast (app/bench/incast.c): the bridge on this INI. */
static json_t *incast_run(const char *label, const char *ini, double secs)
{
	char why[1024];
	struct child c;
	int rc;
	FILE *f;

	run_label = label;
	child_init(&c, O.bridge, "0-1", false);
	f = fopen(c.ini, "w");
	if (!f || fputs(ini, f) < 0 || fclose(f))
		die("cannot write %s: %s", c.ini, strerror(errno));
	json_t *sum = bridge_ini(&c, secs, &rc, why, sizeof(why));

	if (!sum)
		note_err(label, why);
	else /* the share of its two lcores' CPU time the run got (log_run) */
		json_object_set(sum, "bench_cpu_share", json_object_get(json_array_get(runs_log,
				json_array_size(runs_log) - 1), "cpu_share"));
	return sum;
}

/* 2. Posted-write throughput at every HT payload size; fig.write_sizes. */
static void scen_writes(json_t *fig)
{
	json_t *wsz = json_array();
	char why[1024], label[64];
	int rc;

	printf("htoe-bench: posted writes (net_ring, node 1 on lcore 0 -> node 2 on lcore 1)\n");
	json_object_set_new(fig, "write_sizes", wsz);
	for (unsigned i = 0; i < N_WSIZES; i++) {
		unsigned s = write_sizes[i];

		snprintf(label, sizeof(label), "write %u B", s);
		run_label = label;
		json_t *sum = bridge_ring("wrp=100", s, 1, s == 64 ? O.dur : O.dur_short, NULL, &rc,
					  why, sizeof(why));
		json_t *w = sum ? write_figures(sum, s) : NULL;

		if (!w) {
			if (sum)
				snprintf(why, sizeof(why), "no per-node figures in the bridge's JSON");
			note_err(label, why);
		} else {
			printf("  %2u B: %.3f M HT packets/s, %.1f MB/s, %.0f frames/s of %.0f B, "
			       "wire efficiency %.1f %% (%.1f %% with preamble+IFG)\n", s,
			       num(w, "ht_pps") / 1e6, num(w, "mbps"), num(w, "frames_per_s"),
			       num(w, "avg_frame"), 100 * num(w, "wire_eff_l2"),
			       100 * num(w, "wire_eff_phy"));
			if (s == 64)
				json_object_set(fig, "write64", w);
			json_array_append_new(wsz, w);
		}
		json_decref(sum);
	}
}

/* 1. Raw forwarding at the frame sizes the write runs produced, and the
 * ratios of each write run to it; fig.baseline_fwd. */
static void scen_baseline(json_t *fig)
{
	json_t *base = json_array(), *w;
	char why[1024], label[64];
	size_t i;

	printf("htoe-bench: raw forwarding baseline (net_ring, lcore 0 sends, lcore 1 macswaps)\n");
	json_object_set_new(fig, "baseline_fwd", base);
	json_array_foreach(json_object_get(fig, "write_sizes"), i, w) {
		unsigned fl = (unsigned)lround(num(w, "avg_frame"));
		json_t *b;

		fl = fl < 60 ? 60 : fl;
		snprintf(label, sizeof(label), "raw forwarding %u B", fl);
		run_label = label;
		b = raw_forward(fl, O.dur_short, why, sizeof(why));
		if (!b) {
			note_err(label, why);
			continue;
		}
		printf("  %4u B frames: %.3f Mframes/s, %.2f Gbit/s\n", fl, num(b, "fps") / 1e6,
		       num(b, "gbps"));
		/* HToE frames/s and HT payload bytes/s against the raw figures */
		json_object_set_new(w, "baseline_fps", json_real(num(b, "fps")));
		json_object_set_new(w, "ratio_frames", json_real(num(w, "frames_per_s") / num(b, "fps")));
		json_object_set_new(w, "ratio_bytes",
			json_real(num(w, "mbps") * 1e6 / (num(b, "fps") * fl)));
		json_array_append_new(base, b);
	}
}

/* The bridge alone: node 1's writes injected as pre-built HT packets
 * (`[workload] mode = inject`, no requester model), node 2's memory checked
 * once at the end (the bridge fails the run if it differs; its JSON has
 * both CRCs), against raw forwarding at this run's mean frame length,
 * measured right after it. fig.write64_bridge. */
static void scen_write64_bridge(json_t *fig)
{
	const char *label = "write 64 B, injected";
	char why[1024];
	json_t *sum, *w, *b = NULL;
	int rc;

	printf("htoe-bench: 64-byte posted writes injected as pre-built HT packets (no model), "
	       "against raw forwarding\n");
	run_label = label;
	sum = bridge_ring("wrp=100", 64, 1, O.dur, "mode = inject\n", &rc, why, sizeof(why));
	w = sum ? write_figures(sum, 64) : NULL;
	if (w) {
		json_t *n1 = bench_node_of(sum, 1), *n2 = bench_node_of(sum, 2);
		bool same = json_integer_value(json_object_get(n1, "shadow_crc32c")) ==
			    json_integer_value(json_object_get(n2, "mem_crc32c")) &&
			    json_object_get(n2, "mem_crc32c");

		json_object_set_new(w, "image_ok", json_boolean(same));
		if (!same)
			snprintf(why, sizeof(why), "node 2's memory differs from the expected image");
		unsigned fl = (unsigned)lround(num(w, "avg_frame"));

		run_label = "raw forwarding (injected writes' frames)";
		b = same ? raw_forward(fl < 60 ? 60 : fl, O.dur_short, why, sizeof(why)) : NULL;
	} else if (sum) {
		snprintf(why, sizeof(why), "no per-node figures in the bridge's JSON");
	}
	json_decref(sum);
	if (!w || !b) {
		note_err(label, why);
		json_decref(w);
		return;
	}
	json_object_set_new(w, "baseline_fps", json_real(num(b, "fps")));
	json_object_set_new(w, "ratio_frames", json_real(num(w, "frames_per_s") / num(b, "fps")));
	json_object_set_new(w, "ratio_ht", json_real(num(w, "ht_pps") / num(b, "fps")));
	/* the model's run beside it, against the same raw rate */
	json_t *w64 = json_object_get(fig, "write64");

	if (w64)
		json_object_set_new(w64, "ratio_ht_injected_raw",
				    json_real(num(w64, "ht_pps") / num(b, "fps")));
	json_decref(b);
	printf("  injected: %.3f M HT packets/s, %.0f frames/s of %.0f B = %.1f %% of raw "
	       "forwarding (%.0f frames/s; HT packets/s %.1f %% of it); memory image identical\n",
	       num(w, "ht_pps") / 1e6, num(w, "frames_per_s"), num(w, "avg_frame"),
	       100 * num(w, "ratio_frames"), num(w, "baseline_fps"), 100 * num(w, "ratio_ht"));
	json_object_set_new(fig, "write64_bridge", w);
}

static void print_lat(const char *what, unsigned size, json_t *l)
{
	printf("  %-13s %2u B: p50 %.2f us, p99 %.2f us, p99.9 %.2f us (mean %.2f, min %.2f, "
	       "%.0f round trips)\n", what, size, num(l, "p50_ns") / 1e3, num(l, "p99_ns") / 1e3,
	       num(l, "p999_ns") / 1e3, num(l, "mean_ns") / 1e3, num(l, "min_ns") / 1e3,
	       num(l, "count"));
}

/* The read round-trip histogram of node 1 in a bridge summary (consumed). */
static json_t *take_rtt(json_t *sum)
{
	json_t *n1 = sum ? bench_node_of(sum, 1) : NULL;
	json_t *l = n1 ? json_object_get(n1, "read_rtt") : NULL;

	if (l && num(l, "count") > 0)
		json_incref(l);
	else
		l = NULL;
	json_decref(sum);
	return l;
}

/* The frame of a raw ping-pong standing for a read of `size` bytes: as long
 * as the read's response (Ethernet + HToE header + 8-byte HT control packet
 * + data). */
static unsigned raw_frame_len(unsigned size)
{
	return 14 + 32 + 8 + size;
}

/* A raw ping-pong's histogram (with frame_len and lost inside), or NULL. */
static json_t *raw_rtt(const struct link2 *L, unsigned size, double secs, const char *label)
{
	char why[1024];

	why[0] = 0;
	run_label = label;
	json_t *j = raw_pingpong(L, raw_frame_len(size), secs, why, sizeof(why));
	json_t *h = j ? json_object_get(j, "rtt") : NULL;

	if (j && (!h || num(h, "count") <= 0)) {
		/* both ends up but not one round trip: on a loaded machine a
		 * short run can pass with the pollers descheduled; once more,
		 * three times as long */
		fprintf(stderr, "htoe-bench: %s: no round trip in %.1f s, once more for %.1f s\n",
			label, secs, 3 * secs);
		json_decref(j);
		why[0] = 0;
		j = raw_pingpong(L, raw_frame_len(size), 3 * secs, why, sizeof(why));
		h = j ? json_object_get(j, "rtt") : NULL;
	}
	if (!h || num(h, "count") <= 0) {
		note_err(label, why[0] ? why : "no round trip completed");
		json_decref(j);
		return NULL;
	}
	json_incref(h);
	json_object_set(h, "frame_len", json_object_get(j, "frame_len"));
	json_object_set(h, "lost", json_object_get(j, "lost"));
	json_decref(j);
	return h;
}

/* Read RTT ÷ raw ping-pong at p50 and p99 into o[key], printed. */
static void vs_raw(json_t *o, const char *key, json_t *rd, json_t *raw)
{
	if (!rd || !raw)
		return;
	double r50 = num(rd, "p50_ns") / num(raw, "p50_ns"), r99 = num(rd, "p99_ns") /
		     num(raw, "p99_ns");

	json_object_set_new(o, key, json_pack("{s:f, s:f}", "p50", r50, "p99", r99));
	printf("  %19s = %.2f x the raw ping-pong at p50 (%.2f us), %.2f x at p99 (target: p50 "
	       "<= 2 x raw and <= 1 us, p99 <= 3 us)\n", "", r50, num(raw, "p50_ns") / 1e3, r99);
}

/* A lat_json object back into a histogram (mean x count stands for the sum). */
static void lat_from_json(json_t *j, struct lat_hist *h)
{
	size_t i;
	json_t *b;

	memset(h, 0, sizeof(*h));
	h->count = (uint64_t)num(j, "count");
	h->min_ns = (uint64_t)num(j, "min_ns");
	h->max_ns = (uint64_t)num(j, "max_ns");
	h->sum_ns = (uint64_t)(num(j, "mean_ns") * (double)h->count + 0.5);
	json_array_foreach(json_object_get(j, "hist"), i, b)
		h->bucket[lat_index((uint64_t)json_number_value(json_array_get(b, 0)))] +=
			(uint64_t)json_number_value(json_array_get(b, 1));
}

/* The histograms l[0..n) (lat_json objects) as one. */
static json_t *lat_json_merged(json_t *const *l, unsigned n)
{
	static struct lat_hist all, one;

	memset(&all, 0, sizeof(all));
	for (unsigned i = 0; i < n; i++) {
		lat_from_json(l[i], &one);
		lat_merge(&all, &one);
	}
	return lat_to_json(&all);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of the `key` of l[0..n) (n > 0), and every value into *arr. */
static double median_of(json_t *const *l, unsigned n, const char *key, json_t **arr)
{
	double v[RTT_SLICES_MAX];

	*arr = json_array();
	for (unsigned i = 0; i < n; i++) {
		v[i] = num(l[i], key);
		json_array_append_new(*arr, json_real(v[i]));
	}
	qsort(v, n, sizeof(v[0]), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One read of `size` bytes against its floor on one link (NULL: net_ring in
 * one process, else memif): raw ping-pongs and reads in turns (raw, read,
 * raw, read, ...; `slices` of each, O.dur_short / slices each), so that a
 * change of the host's speed hits both alike. Sets raw[key] and rd[key] (every
 * slice's histogram as one) and vr[key] (the median of the reads' p50 ÷ the
 * median of the raw p50s, p99 alike, and each slice's figures). */
static void rtt_turns(const struct link2 *L, const char *link, unsigned size, unsigned slices,
		      json_t *raw, json_t *rd, json_t *vr)
{
	json_t *sr[RTT_SLICES_MAX], *sd[RTT_SLICES_MAX];
	unsigned nr = 0, nd = 0;
	double secs = O.dur_short / slices, lost = 0;
	char why[1024], label[64], key[8];
	int rc;

	snprintf(key, sizeof(key), "%u", size);
	for (unsigned i = 0; i < slices && !stop; i++) {
		snprintf(label, sizeof(label), "raw ping-pong %u B %s", raw_frame_len(size), link);
		if ((sr[nr] = raw_rtt(L, size, secs, label)) != NULL)
			lost += num(sr[nr++], "lost");
		snprintf(label, sizeof(label), "read %u B %s%s", size, link, L ? " (client)" : "");
		run_label = label;
		why[0] = 0;
		sd[nd] = take_rtt(L ? read_memif(size, secs, NULL, why, sizeof(why)) :
				  bridge_ring("rd=100", size, 1, secs, NULL, &rc, why, sizeof(why)));
		if (sd[nd])
			nd++;
		else
			note_err(label, why[0] ? why : "no reads completed");
	}
	json_t *hr = nr ? lat_json_merged(sr, nr) : NULL, *hd = nd ? lat_json_merged(sd, nd) : NULL;

	if (hr) {
		json_object_set_new(hr, "frame_len", json_integer(raw_frame_len(size)));
		json_object_set_new(hr, "lost", json_real(lost));
		snprintf(label, sizeof(label), "%s raw", link);
		print_lat(label, size, hr);
		json_object_set_new(raw, key, hr);
	}
	if (hd) {
		print_lat(link, size, hd);
		json_object_set_new(rd, key, hd);
	}
	if (nr && nd) {
		json_t *a50, *a99, *b50, *b99;
		double r50 = median_of(sd, nd, "p50_ns", &a50) / median_of(sr, nr, "p50_ns", &b50),
		       r99 = median_of(sd, nd, "p99_ns", &a99) / median_of(sr, nr, "p99_ns", &b99);

		json_object_set_new(vr, key, json_pack("{s:f, s:f, s:o, s:o, s:o, s:o}", "p50", r50,
			"p99", r99, "read_p50_slices", a50, "raw_p50_slices", b50,
			"read_p99_slices", a99, "raw_p99_slices", b99));
		printf("  %19s = %.2f x the raw ping-pong at p50, %.2f x at p99 (medians of %u "
		       "slice%s each, taking turns; target: p50 <= 2 x raw)\n", "", r50, r99, nd,
		       nd > 1 ? "s" : "");
	}
	for (unsigned i = 0; i < nr; i++)
		json_decref(sr[i]);
	for (unsigned i = 0; i < nd; i++)
		json_decref(sd[i]);
}

/* 3, 4. Read round trips over net_ring and memif against the raw ping-pong
 * of one frame as long as the read's response between the two lcores over
 * the same devices (the read's floor; fig.raw_rtt_*, shaped like
 * fig.read_rtt_*), and the TCP ping-pong. */
static void scen_rtt(json_t *fig)
{
	static const unsigned rsz[2] = { 8, 64 };
	json_t *rr = json_object(), *rm = json_object(), *tcp = json_object(),
	       *ratio = json_object(), *rawr = json_object(), *rawm = json_object();
	char why[1024], label[64];
	unsigned slices = O.quick ? 1 : 3;

	printf("htoe-bench: remote read round trip (closed loop, window 1) against the raw "
	       "ping-pong of one frame (lcore 0 sends, lcore 1 swaps the MACs and sends it "
	       "back), %u slice%s of each in turns\n", slices, slices > 1 ? "s" : "");
	json_object_set_new(fig, "raw_rtt_ring", rawr);
	json_object_set_new(fig, "raw_rtt_memif", rawm);
	json_object_set_new(fig, "read_rtt_ring", rr);
	json_object_set_new(fig, "read_rtt_memif", rm);
	json_object_set_new(fig, "tcp_rtt", tcp);
	json_object_set_new(fig, "memif_vs_tcp", ratio);
	json_t *vr = json_object(), *vring = json_object(), *vmem = json_object();

	json_object_set_new(fig, "read_vs_raw", vr);
	json_object_set_new(vr, "ring", vring);
	json_object_set_new(vr, "memif", vmem);
	echo_unclean = 0;
	for (unsigned k = 0; k < 2; k++) {
		static struct lat_hist th;
		struct link2 L;
		char key[8];
		json_t *l;

		snprintf(key, sizeof(key), "%u", rsz[k]);
		rtt_turns(NULL, "net_ring", rsz[k], slices, rawr, rr, vring);
		link_memif(&L);
		rtt_turns(&L, "memif", rsz[k], slices, rawm, rm, vmem);
		json_t *ml = json_object_get(rm, key);

		memset(&th, 0, sizeof(th));
		snprintf(label, sizeof(label), "TCP ping-pong %u B", rsz[k]);
		if (bench_tcp_pingpong(rsz[k], O.dur_short, &th, why, sizeof(why)) == 0 &&
		    (l = lat_to_json(&th)) != NULL) {
			print_lat("TCP", rsz[k], l);
			json_object_set_new(tcp, key, l);
			if (ml)
				json_object_set_new(ratio, key, json_pack("{s:f, s:f}",
					"p50", num(ml, "p50_ns") / num(l, "p50_ns"),
					"p99", num(ml, "p99_ns") / num(l, "p99_ns")));
		} else {
			note_err(label, why);
		}
	}
	json_object_set_new(fig, "raw_rtt_echo_unclean", json_integer(echo_unclean));
}

/* True if the file contains `s`. */
/* Idle-aware polling ([global] poll): the CPU share of a serve-only node
 * (memif server, node 2, no peer connected) over a fixed interval, and the
 * 8-byte read round trip (window 1) with that node as the server, busy
 * against adaptive; fig.poll. */
static void scen_idle(json_t *fig)
{
	static const char *const mode[2] = { "busy", "adaptive" };
	json_t *res = json_object();
	char why[1024], set[32];

	printf("htoe-bench: polling: idle serve-only node (memif, 1 lcore), read RTT 8 B\n");
	json_object_set_new(fig, "poll", res);
	for (int m = 0; m < 2; m++) {
		struct child srv;
		double secs = O.dur_short, c0, c1;
		json_t *l, *r = json_object();

		snprintf(set, sizeof(set), "global.poll=%s", mode[m]);
		struct link2 L;

		link_memif(&L);
		serve_node2(&srv, &L, "rd=100", 8, secs, set);
		srv.pid = spawn(srv.argv, srv.out, srv.err);
		/* past the start-up (EAL, mempool): the port is up, then 0.5 s */
		wait_line(srv.out, "port 0 up", srv.pid);
		usleep(500000);
		c0 = bench_proc_cpu_s(srv.pid);
		usleep((useconds_t)(secs * 1e6));
		c1 = bench_proc_cpu_s(srv.pid);
		kill(srv.pid, SIGINT);
		wait_for(srv.pid, 20);
		child_free(&srv);
		unlink(L.sock);
		json_object_set_new(r, "idle_cpu_share", json_real(c0 >= 0 && c1 >= c0 ?
								   (c1 - c0) / secs : NAN));
		run_label = set;
		l = take_rtt(read_memif(8, secs, set, why, sizeof(why)));
		if (l)
			json_object_set(r, "read_rtt", l);
		else
			note_err(set, why);
		printf("  %-8s idle serve-only node: %.1f %% of a CPU; read 8 B: p50 %.2f us, "
		       "p99 %.2f us\n", mode[m], 100 * num(r, "idle_cpu_share"),
		       l ? num(l, "p50_ns") / 1e3 : NAN, l ? num(l, "p99_ns") / 1e3 : NAN);
		json_decref(l);
		json_object_set_new(res, mode[m], r);
	}
}

/* A 64-byte write run with extra INI text; its write figures or NULL
 * (*sump: the bridge's summary, to be released by the caller). */
static json_t *write64_for(const char *label, const char *extra, double secs, json_t **sump,
			   int *rc, char *why, size_t wlen)
{
	run_label = label;
	*sump = bridge_ring("wrp=100", 64, 1, secs, extra, rc, why, wlen);
	return *sump ? write_figures(*sump, 64) : NULL;
}

static json_t *write64(const char *label, const char *extra, json_t **sump, int *rc, char *why,
		       size_t wlen)
{
	return write64_for(label, extra, O.dur, sump, rc, why, wlen);
}

/* One run of bench_loss_sweep (app/bench/loss.c). */
static int sweep_run(const char *mode, const char *impair, double secs, struct bench_write *out)
{
	char why[1024], label[64];
	json_t *sum, *w;
	int rc;

	snprintf(label, sizeof(label), "write 64 B, retry %s%s", mode, impair ? ", loss" : "");
	bridge_retry = mode;
	w = write64_for(label, impair, secs, &sum, &rc, why, sizeof(why));
	bridge_retry = NULL;
	if (w) {
		out->mbps = num(w, "mbps");
		out->timeouts = num(sum, "timeouts");
		out->dropped = num(sum, "impair_dropped");
		out->retransmits = num(sum, "retransmits");
		out->frames = num(sum, "frames_tx");
	} else {
		note_err(label, why);
	}
	json_decref(w);
	json_decref(sum);
	return w ? 0 : -1;
}

/* 5, 6. Loss and MACsec, each against a lossless reference run made just
 * before them (on a shared machine the load drifts over the run). */
static void scen_loss_macsec(json_t *fig)
{
	json_t *sum, *ref, *wl, *wm, *ms = json_object();
	char why[1024];
	int rc;

	printf("htoe-bench: 64-byte posted writes: reference, then [impair] loss = 0.01, then "
	       "[macsec] (gcm-aes-128, encrypt, backend auto = %s)\n",
	       htoe_macsec_backend_name(htoe_macsec_backend_auto()));
	ref = write64("write 64 B reference", NULL, &sum, &rc, why, sizeof(why));
	json_decref(sum);
	if (!ref) {
		note_err("write 64 B reference", why);
		return;
	}
	printf("  reference: %.1f MB/s\n", num(ref, "mbps"));
	json_object_set_new(fig, "write64_reference", ref);

	wl = write64("write 64 B, 1 % loss", "[impair]\nloss = 0.01\n", &sum, &rc, why,
		     sizeof(why));
	if (wl) {
		json_object_set_new(wl, "goodput_frac", json_real(num(wl, "mbps") / num(ref, "mbps")));
		json_object_set_new(wl, "impair_dropped", json_real(num(sum, "impair_dropped")));
		printf("  1 %% loss: %.1f MB/s goodput = %.1f %% of lossless (%.0f frames dropped, "
		       "%.0f retransmitted)\n", num(wl, "mbps"), 100 * num(wl, "goodput_frac"),
		       num(sum, "impair_dropped"), num(sum, "retransmits"));
		json_object_set_new(fig, "loss", wl);
	} else {
		note_err("write 64 B, 1 % loss", why);
	}
	json_decref(sum);

	json_object_set_new(fig, "macsec", ms);
	wm = write64("write 64 B, MACsec", "[macsec]\nenable = on\ncipher = gcm-aes-128\n"
		     "mode = encrypt\nbackend = auto\nkey = 00112233445566778899aabbccddeeff\n",
		     &sum, &rc, why, sizeof(why));
	json_decref(sum);
	json_object_set_new(ms, "available", json_boolean(wm != NULL));
	if (wm) {
		json_object_set_new(ms, "on", wm);
		json_object_set_new(ms, "on_off_frac", json_real(num(wm, "mbps") / num(ref, "mbps")));
		printf("  MACsec on: %.1f MB/s = %.1f %% of MACsec off\n", num(wm, "mbps"),
		       100 * num(ms, "on_off_frac"));
	} else if (rc == 2 && strstr(why, "macsec")) {
		/* a configuration error about [macsec]: this bridge does not have it */
		char r[1100];

		snprintf(r, sizeof(r), "unavailable: htoe-bridge has no [macsec] (%s)", why);
		json_object_set_new(ms, "reason", json_string(r));
		printf("  MACsec on/off: %s\n", r);
	} else {
		json_object_set_new(ms, "reason", json_string(why));
		note_err("write 64 B, MACsec", why);
	}
}

/* 6. The MACsec crypto path against its raw backend; the figure for the
 * targets (fastest backend, the bridge's frame size). fig.crypto. */
static double scen_crypto(json_t *fig)
{
	static const char *const bes[2] = { "ipsec-mb", "openssl" };
	json_t *cr = json_array(), *w64 = json_object_get(fig, "write64");
	size_t csz[4] = { 64, 512, 1500, 0 };
	unsigned ncsz = 3;
	double fig_ratio = NAN;
	const char *fast = htoe_macsec_backend_name(htoe_macsec_backend_auto());
	char why[1024];

	printf("htoe-bench: MACsec crypto path (protect+validate) vs raw backend "
	       "(encrypt+decrypt), in place as the bridge (out of place)\n");
	json_object_set_new(fig, "crypto", cr);
	if (w64) {
		csz[3] = (size_t)lround(num(w64, "avg_frame"));
		ncsz = csz[3] >= 14 && csz[3] <= 2000 ? 4 : 3;
	}
	for (unsigned b = 0; b < 2; b++)
		for (unsigned z = 0; z < ncsz; z++) {
			struct bench_crypto r;

			if (bench_crypto(bes[b], csz[z], O.quick ? 0.05 : 0.3, &r, why,
					 sizeof(why))) {
				note_err("crypto", why);
				break;
			}
			json_array_append_new(cr, json_pack("{s:s, s:i, s:f, s:f, s:f, s:b, s:s, s:f, "
				"s:f, s:f}",
				"backend", bes[b], "frame_len", (json_int_t)csz[z], "path_ns", r.path_ns,
				"raw_ns", r.raw_ns, "ratio", r.raw_ns / r.path_ns,
				"bridge_frame", z == 3, "api", "inplace", "oop_path_ns", r.oop_path_ns,
				"oop_raw_ns", r.oop_raw_ns, "oop_ratio", r.oop_raw_ns / r.oop_path_ns));
			printf("  %-8s %4zu B frames: path %.0f ns, raw %.0f ns: %.1f %% "
			       "(out of place %.0f / %.0f: %.1f %%)%s\n", bes[b],
			       csz[z], r.path_ns, r.raw_ns, 100 * r.raw_ns / r.path_ns,
			       r.oop_path_ns, r.oop_raw_ns, 100 * r.oop_raw_ns / r.oop_path_ns,
			       z == 3 ? "  (the bridge's frame size)" : "");
			if (!strcmp(bes[b], fast) && (z == 3 || (ncsz == 3 && z == 0)))
				fig_ratio = r.raw_ns / r.path_ns;
		}
	return fig_ratio;
}

/* ------------------------------------------------------------ namespaces */

static char ns_name[2][64];
static bool ns_made[2];

/* Runs `ip ARGS...`; 0, or -1 with its first line of stderr in why. */
static int ip_cmd(char *why, size_t wlen, ...)
{
	char *argv[32], err[PATH_MAX];
	va_list ap;
	int n = 0;

	argv[n++] = (char *)O.ip;
	va_start(ap, wlen);
	while (n < 31 && (argv[n] = va_arg(ap, char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	snprintf(err, sizeof(err), "%s/ip.err", O.tmp);
	if (access(O.tmp, W_OK)) /* at exit, after the temporary directory went */
		snprintf(err, sizeof(err), "/dev/null");
	pid_t pid = spawn(argv, "/dev/null", err);
	sig_atomic_t was = stop; /* after Ctrl-C too: ip cleans up the namespaces */

	stop = 0;
	int rc = pid < 0 ? -1 : wait_for(pid, 30);

	stop = was;

	if (rc != 0) {
		FILE *f = fopen(err, "r");
		char l[512] = "";

		if (f) {
			if (!fgets(l, sizeof(l), f))
				l[0] = 0;
			fclose(f);
		}
		l[strcspn(l, "\n")] = 0;
		snprintf(why, wlen, "ip %s %s: %s", argv[1], argv[2], l[0] ? l : "failed");
		return -1;
	}
	return 0;
}

static void ns_cleanup(void)
{
	char why[256];

	for (int i = 0; i < 2; i++)
		if (ns_made[i]) {
			ip_cmd(why, sizeof(why), "netns", "del", ns_name[i], NULL);
			ns_made[i] = false;
		}
}

/* Two namespaces joined by a veth pair (htoe0 in each, one queue, up,
 * promiscuous), deleted at exit; false (why) where that is not permitted. */
static bool ns_setup(char *why, size_t wlen)
{
	static const char *const cand[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };

	for (unsigned i = 0; !O.ip && i < 4; i++)
		if (!access(cand[i], X_OK))
			O.ip = cand[i];
	if (!O.ip) {
		snprintf(why, wlen, "iproute2's ip not found");
		return false;
	}
	atexit(ns_cleanup);
	for (int i = 0; i < 2; i++) {
		snprintf(ns_name[i], sizeof(ns_name[i]), "htoe-bench-%d-%c", (int)getpid(), 'a' + i);
		if (ip_cmd(why, wlen, "netns", "add", ns_name[i], NULL))
			return false;
		ns_made[i] = true;
	}
	if (ip_cmd(why, wlen, "link", "add", "htoe0", "numtxqueues", "1", "numrxqueues", "1",
		   "netns", ns_name[0], "type", "veth", "peer", "name", "htoe0", "numtxqueues",
		   "1", "numrxqueues", "1", "netns", ns_name[1], NULL))
		return false;
	for (int i = 0; i < 2; i++)
		if (ip_cmd(why, wlen, "-n", ns_name[i], "link", "set", "htoe0", "up", "promisc", "on",
			   NULL))
			return false;
	return true;
}

/* 8. The two-host path between two namespaces over a veth pair, for
 * af_packet and af_xdp: the raw one-way rate of the PMD (64-byte frames and
 * the bridge's mean frame), the bridge's 64-byte write throughput and 8-byte
 * read round trip, the raw ping-pong; fig.netns. */
static void scen_netns(json_t *fig)
{
	static const char *const pmd[2] = { "af_packet", "af_xdp" };
	json_t *nf = json_object();
	char why[1024], label[96];

	json_object_set_new(fig, "netns", nf);
	printf("htoe-bench: two namespaces over a veth pair (node 1 / sender on lcore 0 in one, "
	       "node 2 / receiver on lcore 1 in the other)\n");
	if (!ns_setup(why, sizeof(why))) {
		char r[1100];

		snprintf(r, sizeof(r), "unavailable: cannot create namespaces (%.900s); needs root "
			 "(CAP_SYS_ADMIN, CAP_NET_ADMIN)", why);
		json_object_set_new(nf, "available", json_false());
		json_object_set_new(nf, "reason", json_string(r));
		printf("  skipped: %s\n", r);
		return;
	}
	json_object_set_new(nf, "available", json_true());
	for (unsigned k = 0; k < 2; k++) {
		struct link2 L;
		json_t *p = json_object(), *raw, *w, *l;

		memset(&L, 0, sizeof(L));
		L.name = pmd[k];
		L.ns[0] = ns_name[0];
		L.ns[1] = ns_name[1];
		snprintf(L.dev, sizeof(L.dev), "net_%s0", pmd[k]);
		for (int s = 0; s < 2; s++)
			snprintf(L.vdev[s], sizeof(L.vdev[s]), "--vdev=%s,iface=htoe0", L.dev);
		json_object_set_new(nf, pmd[k], p);
		json_object_set_new(p, "vdev", json_string(L.vdev[0] + 7));

		/* the PMD alone, 64-byte frames (also: is it there at all?) */
		snprintf(label, sizeof(label), "netns %s raw tx->rx 64 B", pmd[k]);
		run_label = label;
		why[0] = 0;
		raw = raw_oneway(&L, 64, O.dur_short, why, sizeof(why));
		if (!raw && k == 1) {
			char r[1100];

			snprintf(r, sizeof(r), "unavailable: net_af_xdp did not start (%.900s)", why);
			json_object_set_new(p, "available", json_false());
			json_object_set_new(p, "reason", json_string(r));
			printf("  %s: skipped: %s\n", pmd[k], r);
			continue;
		}
		json_object_set_new(p, "available", json_boolean(raw != NULL));
		if (!raw) {
			note_err(label, why);
			continue;
		}
		printf("  %-9s raw tx -> rx, 64 B frames: %.3f Mframes/s\n", pmd[k],
		       num(raw, "fps") / 1e6);
		json_object_set_new(p, "raw_fwd_64", raw);

		/* the bridge's 64-byte writes, then the PMD at the bridge's frame length */
		snprintf(label, sizeof(label), "netns %s write 64 B", pmd[k]);
		run_label = label;
		json_t *sum = bridge_link(&L, "wrp=100", 64, O.dur, true, NULL, why, sizeof(why));

		w = sum ? write_figures(sum, 64) : NULL;
		if (!w)
			note_err(label, sum ? "no per-node figures in the bridges' JSON" : why);
		json_decref(sum);
		if (w) {
			unsigned fl = (unsigned)lround(num(w, "avg_frame"));

			fl = fl < 60 ? 60 : fl;
			json_object_set_new(p, "write64", w);
			snprintf(label, sizeof(label), "netns %s raw tx->rx %u B", pmd[k], fl);
			run_label = label;
			raw = raw_oneway(&L, fl, O.dur_short, why, sizeof(why));
			if (raw && num(raw, "fps") > 0) {
				json_object_set_new(w, "baseline_fps", json_real(num(raw, "fps")));
				json_object_set_new(w, "ratio_frames",
					json_real(num(w, "frames_per_s") / num(raw, "fps")));
				json_object_set_new(p, "raw_fwd", raw);
			} else if (raw) {
				json_object_set_new(p, "raw_fwd", raw);
				note_err(label, "no frame arrived in 20 s");
			} else {
				note_err(label, why);
			}
			printf("  %-9s 64-byte writes: %.3f M HT packets/s, %.1f MB/s, %.0f frames/s "
			       "of %.0f B; raw at %u B: %.0f frames/s; bridge / raw %.1f %% "
			       "(target >= 50 %%)\n", pmd[k], num(w, "ht_pps") / 1e6, num(w, "mbps"),
			       num(w, "frames_per_s"), num(w, "avg_frame"), fl,
			       raw ? num(raw, "fps") : NAN, 100 * get_or_nan(w, "ratio_frames"));
		}

		/* read round trip, and its floor on this PMD */
		json_t *rd = json_object(), *rr = json_object(), *vr = json_object();

		json_object_set_new(p, "read_rtt", rd);
		json_object_set_new(p, "raw_rtt", rr);
		json_object_set_new(p, "read_vs_raw", vr);
		snprintf(label, sizeof(label), "netns %s raw ping-pong %u B", pmd[k],
			 raw_frame_len(8));
		json_t *raw8 = raw_rtt(&L, 8, O.dur_short, label);

		snprintf(label, sizeof(label), "%s raw", pmd[k]);
		if (raw8) {
			print_lat(label, 8, raw8);
			json_object_set_new(rr, "8", raw8);
		}
		snprintf(label, sizeof(label), "netns %s read 8 B", pmd[k]);
		run_label = label;
		why[0] = 0;
		l = take_rtt(bridge_link(&L, "rd=100", 8, O.dur_short, false, NULL, why, sizeof(why)));
		snprintf(label, sizeof(label), "%s read", pmd[k]);
		if (l) {
			print_lat(label, 8, l);
			json_object_set_new(rd, "8", l);
			vs_raw(vr, "8", l, raw8);
		} else {
			note_err(label, why[0] ? why : "no reads completed");
		}
	}
	/* af_xdp against af_packet */
	json_t *xp = json_object_get(json_object_get(nf, "af_packet"), "write64"),
	       *xx = json_object_get(json_object_get(nf, "af_xdp"), "write64");

	if (xp && xx && num(xp, "ht_pps") > 0) {
		double r = num(xx, "ht_pps") / num(xp, "ht_pps"), rr = get_or_nan(json_object_get(
			json_object_get(nf, "af_xdp"), "raw_fwd_64"), "fps") / get_or_nan(
			json_object_get(json_object_get(nf, "af_packet"), "raw_fwd_64"), "fps");
		json_t *o = json_object();

		json_object_set_new(o, "write64_ht_pps", json_real(r));
		if (isfinite(rr)) /* jansson has no NaN or infinity */
			json_object_set_new(o, "raw_fps_64", json_real(rr));
		json_object_set_new(nf, "af_xdp_vs_af_packet", o);
		printf("  64-byte writes, af_xdp / af_packet: %.2f x (target >= 3 x)\n", r);
	}
}

/* 7. Every target of docs/benchmarks.md ("Targets") from the figures. */
static void set_targets(json_t *fig, double crypto_fig)
{
	json_t *w64 = json_object_get(fig, "write64"), *ms = json_object_get(fig, "macsec");
	json_t *rr = json_object_get(fig, "read_rtt_ring"), *q = json_object_get(fig, "memif_vs_tcp");
	const char *nm = O.only ? "not run (--only)" : "not measured (see errors)";
	char name[80];

	target("64-byte posted writes, HT packets/s", get_or_nan(w64, "ht_pps"), 39e6, false, 1e-6,
	       "M/s", nm);
	target("64-byte posted writes, MB/s of HT payload", get_or_nan(w64, "mbps"), 2500, false, 1,
	       "MB/s", nm);
	target("wire efficiency, L2 (frame + FCS)", get_or_nan(w64, "wire_eff_l2"), 0.9, false, 100,
	       "%", nm);
	target("wire efficiency, L1 (+ preamble + IFG)", get_or_nan(w64, "wire_eff_phy"), 0.9,
	       false, 100, "%", nm);
	target("wire efficiency, HT packets (control+data) / L2", get_or_nan(w64, "wire_eff_ht_l2"),
	       0.9, false, 100, "%", nm);
	static const char *const sz[2] = { "8", "64" };

	for (unsigned k = 0; k < 2; k++) {
		json_t *r = json_object_get(rr, sz[k]);

		snprintf(name, sizeof(name), "read RTT %s B net_ring p50", sz[k]);
		target(strdup(name), get_or_nan(r, "p50_ns"), 1000, true, 1e-3, "us", nm);
		snprintf(name, sizeof(name), "read RTT %s B net_ring p99", sz[k]);
		target(strdup(name), get_or_nan(r, "p99_ns"), 3000, true, 1e-3, "us", nm);
	}
	for (unsigned k = 0; k < 2; k++)
		for (unsigned p = 0; p < 2; p++) {
			snprintf(name, sizeof(name), "read RTT %s B memif / TCP ping-pong, p%s", sz[k],
				 p ? "99" : "50");
			target(strdup(name), get_or_nan(json_object_get(q, sz[k]), p ? "p99" : "p50"),
			       0.05, true, 1, "x", nm);
		}
	target("goodput at 1% loss / lossless", get_or_nan(json_object_get(fig, "loss"),
	       "goodput_frac"), 0.8, false, 100, "%", nm);
	bench_loss_targets(json_object_get(fig, "loss_sweep"), target, nm);
	json_t *why = json_object_get(ms, "reason");

	target("MACsec on / off (64-byte writes)", get_or_nan(ms, "on_off_frac"), 0.7, false, 100,
	       "%", why ? json_string_value(why) : nm);
	target("MACsec crypto path / raw backend (fastest)", crypto_fig, 0.8, false, 100, "%", nm);

	/* the read round trip against its floor, the two-host path */
	json_t *vr = json_object_get(fig, "read_vs_raw");

	for (unsigned t = 0; t < 2; t++)
		for (unsigned k = 0; k < 2; k++) {
			snprintf(name, sizeof(name), "read RTT %s B %s p50 / raw ping-pong p50", sz[k],
				 t ? "memif" : "net_ring");
			target(strdup(name), get_or_nan(json_object_get(json_object_get(vr, t ?
			       "memif" : "ring"), sz[k]), "p50"), 2, true, 1, "x", nm);
		}
	json_t *nf = json_object_get(fig, "netns");
	const char *nsr = json_is_false(json_object_get(nf, "available")) ?
		json_string_value(json_object_get(nf, "reason")) : NULL;
	json_t *xdp = json_object_get(nf, "af_xdp"), *pkt = json_object_get(nf, "af_packet");
	const char *xr = nsr ? nsr : json_is_false(json_object_get(xdp, "available")) ?
		json_string_value(json_object_get(xdp, "reason")) : nm;

	target("netns 64-byte writes, af_xdp / af_packet", get_or_nan(json_object_get(nf,
	       "af_xdp_vs_af_packet"), "write64_ht_pps"), 3, false, 1, "x", xr);
	target("netns af_xdp: bridge / raw frames/s", get_or_nan(json_object_get(xdp, "write64"),
	       "ratio_frames"), 0.5, false, 100, "%", xr);
	target("netns af_packet: bridge / raw frames/s", get_or_nan(json_object_get(pkt,
	       "write64"), "ratio_frames"), 0.5, false, 100, "%", nsr ? nsr : nm);

	/* incast: 8 senders to one receiver against one sender */
	json_t *i8 = json_object_get(json_object_get(fig, "incast"), "8");

	target("incast 8 -> 1: aggregate / one sender's writes/s", get_or_nan(i8, "vs_single"),
	       0.9, false, 100, "%", nm);
	target("incast 8 -> 1: Jain's fairness index", get_or_nan(i8, "jain"), 0.99, false, 1, "",
	       nm);
	target("64-byte writes injected, writes/s / raw frames/s", get_or_nan(json_object_get(fig,
	       "write64_bridge"), "ratio_ht"), 0.6, false, 100, "%", nm);
	target("63 idle-but-configured peers / 1 peer, writes/s", get_or_nan(json_object_get(
	       json_object_get(fig, "peers_scale"), "63"), "vs_one"), 0.8, false, 100, "%", nm);
}

/* Did every scenario get its lcores' CPU? The smallest share. */
static double min_cpu_share(void)
{
	double worst = 1;
	size_t i;
	json_t *r;

	json_array_foreach(runs_log, i, r)
		if (num(r, "cpu_share") < worst)
			worst = num(r, "cpu_share");
	return worst;
}

static void scen_netns_run(json_t *fig)
{
	scen_netns(fig);
	ns_cleanup();
}

static void scen_loss_sweep(json_t *fig)
{
	bench_loss_sweep(fig, O.dur, O.quick ? 1 : 3, sweep_run);
}

static void scen_incast(json_t *fig)
{
	bench_incast(fig, O.dur, incast_run);
}

static void scen_peers(json_t *fig)
{
	bench_peers(fig, O.dur, incast_run);
}

/* The crypto scenario's target figure (NAN when it did not run). */
static double crypto_fig = NAN;

static void scen_crypto_run(json_t *fig)
{
	crypto_fig = scen_crypto(fig);
}

/* The scenarios, in the order they run; --only names one of them. */
static const struct {
	const char *name;
	void (*run)(json_t *fig);
} scenarios[] = {
	{ "writes", scen_writes }, { "baseline", scen_baseline },
	{ "write64_bridge", scen_write64_bridge }, { "rtt", scen_rtt }, { "idle", scen_idle },
	{ "loss_macsec", scen_loss_macsec },
	{ "netns", scen_netns_run }, { "loss_sweep", scen_loss_sweep },
	{ "incast", scen_incast }, { "peers", scen_peers }, { "crypto", scen_crypto_run },
};
#define N_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static bool scenario_known(const char *name)
{
	for (size_t i = 0; i < N_SCENARIOS; i++)
		if (!strcmp(name, scenarios[i].name))
			return true;
	return false;
}

/* The cache line round trip between the lcores' CPUs, appended to `a` (null
 * when the two CPUs cannot be used) and printed. */
static void line_rtt_add(json_t *a, const char *when)
{
	double ns = htoe_line_rtt_ns(0, 1);

	json_array_append_new(a, ns > 0 ? json_real(ns) : json_null());
	if (ns > 0)
		printf("htoe-bench: cache line round trip between CPUs 0 and 1: %.0f ns%s\n", ns,
		       when);
	else
		printf("htoe-bench: cache line round trip between CPUs 0 and 1: not measured (a "
		       "thread could not run on CPU 0 or 1)%s\n", when);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "__fwd"))
		return bench_fwd_main(argc - 1, argv + 1);
	parse(argc, argv);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	snprintf(O.tmp, sizeof(O.tmp), "/tmp/htoe-bench.XXXXXX");
	if (!mkdtemp(O.tmp))
		die("mkdtemp: %s", strerror(errno));

	json_t *root = json_object(), *fig = json_object();
	unsigned long long t_start = bench_now_ns();

	runs_log = json_array();
	errs_log = json_array();
	json_object_set_new(root, "runs", runs_log);
	json_object_set_new(root, "figures", fig);
	json_object_set_new(root, "errors", errs_log);
	struct htoe_host_info host;

	htoe_host_info(&host);
	/* the lcores' cache line round trip at the start and at the end: how
	 * fast the host moved data between the two CPUs during the run */
	json_t *line_rtt = json_array();

	line_rtt_add(line_rtt, "");
	json_object_set_new(root, "machine", json_pack(
		"{s:i, s:s, s:b, s:s, s:s, s:f, s:s, s:s, s:o}",
		"cpus", (json_int_t)host.nproc, "eal",
		"-l 0-1 --no-huge -m 512 --no-pci [--no-shconf]", "quick", O.quick, "date",
		host.date, "cpu_model", host.cpu, "loadavg1", host.loadavg1, "git", host.git,
		"version", host.version, "line_rtt_ns", line_rtt));
	json_object_set_new(root, "durations", json_pack("{s:f, s:f}", "throughput_s", O.dur,
							 "short_s", O.dur_short));
	for (size_t i = 0; i < N_SCENARIOS; i++)
		if (want(scenarios[i].name))
			scenarios[i].run(fig);
	line_rtt_add(line_rtt, " at the end");
	set_targets(fig, crypto_fig);
	json_object_set_new(root, "targets", targets_json());
	json_object_set_new(root, "run_seconds", json_real((double)(bench_now_ns() - t_start) / 1e9));
	print_targets();
	double worst = min_cpu_share();

	json_object_set_new(root, "min_cpu_share", json_real(worst));
	if (worst < 0.5)
		printf("htoe-bench: WARNING: a scenario got only %.0f %% of its lcores' CPU time "
		       "(other load on the machine): its figures are not representative (\"runs\" "
		       "in the JSON)\n", 100 * worst);

	/* output */
	char jpath[PATH_MAX];

	snprintf(jpath, sizeof(jpath), "%s", O.json ? O.json : "");
	if (!O.json && O.plots)
		snprintf(jpath, sizeof(jpath), "%s/results.json", O.tmp);
	int ret = json_array_size(errs_log) ? 1 : 0;

	if (jpath[0]) {
		if (json_dump_file(root, jpath, JSON_INDENT(1) | JSON_SORT_KEYS)) {
			fprintf(stderr, "htoe-bench: cannot write %s\n", jpath);
			ret = 1;
		} else if (O.json) {
			printf("htoe-bench: JSON: %s\n", jpath);
		}
	}
	if (O.plots && jpath[0] && plot(jpath, O.plots))
		ret = 1;
	printf("htoe-bench: %s in %.0f s%s\n", ret ? "done with errors" : "done",
	       (double)(bench_now_ns() - t_start) / 1e9,
	       ret ? " (see \"errors\" in the JSON)" : "");
	json_decref(root);
	if (O.keep)
		printf("htoe-bench: kept %s\n", O.tmp);
	else
		rm_rf(O.tmp);
	return ret;
}
