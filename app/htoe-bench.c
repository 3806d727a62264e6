/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the benchmark of issue 4 (item 10) and issue 5 (item 3). It
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
#include "run_python.h"

extern char **environ;

static const unsigned write_sizes[] = { 4, 8, 16, 32, 64 };
#define N_WSIZES (sizeof(write_sizes) / sizeof(write_sizes[0]))

struct opts {
	bool quick, keep;
	double dur;          /* throughput runs (64-byte writes, loss, MACsec) */
	double dur_short;    /* the other write sizes, latency runs, baselines */
	const char *json, *plots;
	char bridge[PATH_MAX], self[PATH_MAX], tmp[128];
};

static struct opts O;
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

/* EAL arguments: lcores, a unique prefix, no shared config unless memif. */
static void child_init(struct child *c, const char *exe, const char *lcores, bool shconf)
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

static void child_free(struct child *c)
{
	for (int i = 0; i < c->argc; i++)
		free(c->argv[i]);
	c->argc = 0;
	rm_runtime_dir(c->prefix);
}

/* Run to completion; its JSON line, or NULL (*rc: exit status, *why). */
static json_t *child_run(struct child *c, double timeout_s, int *rc, char *why, size_t wlen)
{
	unsigned long long t0 = bench_now_ns();

	c->pid = spawn(c->argv, c->out, c->err);
	*rc = c->pid < 0 ? -1 : wait_for(c->pid, timeout_s);
	double wall = (double)(bench_now_ns() - t0) / 1e9;

	if (runs_log && c->pid > 0)
		json_array_append_new(runs_log, json_pack("{s:s, s:i, s:f, s:f, s:f}", "run",
			run_label, "exit", (json_int_t)*rc, "wall_s", wall, "cpu_s", last_cpu_s,
			"cpu_share", last_cpu_s / (wall * c->lcores)));
	json_t *j = *rc == 0 ? last_json_line(c->out) : NULL;

	if (!j) {
		char l[512];

		first_line(c->err, l, sizeof(l));
		if (!l[0])
			first_line(c->out, l, sizeof(l));
		snprintf(why, wlen, "%s exited %d: %s", c->argv[0], *rc, l[0] ? l : "no output");
	}
	child_free(c);
	return j;
}

/* ------------------------------------------------------------ bridge runs */

static const char *bridge_retry; /* [bridge] retry (NULL: the default) */

/* An INI for the bridge: two nodes, node 1's workload on node 2's memory.
 * memif: [port 0] is each process's memif end (the nodes run in two
 * processes with --node); else an in-process net_ring crossover pair. */
static void write_ini(const char *path, bool memif, const char *mix, unsigned size,
		      unsigned window, double secs, const char *extra)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die("cannot write %s: %s", path, strerror(errno));
	fprintf(f, "; generated by htoe-bench\n[global]\nstats_interval = 0\n"
		"[bridge]\nmem_base = 0x100000\nmem_size = 64K\n");
	if (bridge_retry)
		fprintf(f, "retry = %s\n", bridge_retry);
	if (memif)
		fprintf(f, "[port 0]\ndev = net_memif0\n[node 1]\nport = 0\n[node 2]\nport = 0\n");
	else
		fprintf(f, "[port 0]\ncrossover = 1\n[port 1]\ncrossover = 0\n"
			"[node 1]\nport = 0\nlcore = 0\n[node 2]\nport = 1\nlcore = 1\n");
	fprintf(f, "[map]\nrange1 = 0x100000000 64K 1\nrange2 = 0x200000000 64K 2\n"
		"[workload 1]\ntarget = 2\nmix = %s\nsizes = %u\nwindow = %u\nsweep = off\n"
		"duration = %.0fms\n%s", mix, size, window, secs * 1e3, extra ? extra : "");
	fclose(f);
}

static json_t *node_of(json_t *summary, unsigned id)
{
	size_t i;
	json_t *n;

	json_array_foreach(json_object_get(summary, "per_node"), i, n)
		if (json_integer_value(json_object_get(n, "id")) == (json_int_t)id)
			return n;
	return NULL;
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

/* Runs the bridge on net_ring with this workload; its JSON summary. */
static json_t *bridge_ring(const char *mix, unsigned size, unsigned window, double secs,
			   const char *extra, int *rc, char *why, size_t wlen)
{
	struct child c;

	child_init(&c, O.bridge, "0-1", false);
	write_ini(c.ini, false, mix, size, window, secs, extra);
	child_arg(&c, "--");
	child_arg(&c, "--config");
	child_arg(&c, c.ini);
	child_arg(&c, "--json");
	return child_run(&c, secs + 60, rc, why, wlen);
}

/* Posted-write throughput of one run: HT payload delivered at node 2. */
static json_t *write_figures(json_t *s, unsigned size)
{
	json_t *n1 = node_of(s, 1), *n2 = node_of(s, 2);

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
	char a[32];
	int rc;

	child_init(&c, O.self, "0-1", false);
	child_arg(&c, "--");
	snprintf(a, sizeof(a), "%u", frame_len);
	child_arg(&c, a);
	snprintf(a, sizeof(a), "%.3f", secs);
	child_arg(&c, a);
	json_t *j = child_run(&c, secs + 60, &rc, why, wlen);

	if (j)
		json_object_set_new(j, "gbps", json_real(num(j, "fps") * frame_len * 8 / 1e9));
	return j;
}

/* One htoe-bridge process with one memif end, running `node` of ini. */
static void memif_child(struct child *c, const char *role, const char *lcore, const char *node,
			const char *ini, const char *sock)
{
	char vdev[400];

	child_init(c, O.bridge, lcore, true);
	snprintf(vdev, sizeof(vdev), "--vdev=net_memif0,role=%s,socket=%s,socket-abstract=no",
		 role, sock);
	child_arg(c, vdev);
	child_arg(c, "--");
	child_arg(c, "--config");
	child_arg(c, ini ? ini : c->ini);
	child_arg(c, "--node");
	child_arg(c, node);
}

/* Read round trip over memif: node 2 serves in one process (lcore 1), node 1
 * runs the closed loop in another (lcore 0). */
static json_t *read_memif(unsigned size, double secs, char *why, size_t wlen)
{
	struct child srv, cli;
	char sock[256];
	int rc;

	snprintf(sock, sizeof(sock), "%s/memif%u.sock", O.tmp, run_no);
	memif_child(&srv, "server", "1", "2", NULL, sock);
	write_ini(srv.ini, true, "rd=100", size, 1, secs, NULL);
	child_arg(&srv, "--set");
	child_arg(&srv, "global.exit_when_done=off");
	srv.pid = spawn(srv.argv, srv.out, srv.err);
	if (srv.pid < 0) {
		snprintf(why, wlen, "cannot start %.900s", O.bridge);
		child_free(&srv);
		return NULL;
	}
	for (int i = 0; i < 200 && access(sock, F_OK); i++) /* the server is listening */
		usleep(10000);
	memif_child(&cli, "client", "0", "1", srv.ini, sock);
	child_arg(&cli, "--json");
	json_t *j = child_run(&cli, secs + 60, &rc, why, wlen);

	kill(srv.pid, SIGINT);
	if (wait_for(srv.pid, 20) != 0 && j) {
		/* the figures are the client's; a server that did not stop cleanly is noted */
		json_object_set_new(j, "server_note", json_string("server did not exit 0"));
	}
	child_free(&srv);
	unlink(sock);
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

#define MAX_TARGETS 24
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
	printf("\n%-52s %14s %14s  %s\n", "figure (target from issues 4 and 5)", "measured",
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
		"                  [--bridge PATH] [--keep]\n"
		"  --quick          short runs (about 1 s each; for smoke tests)\n"
		"  --duration SEC   seconds of each throughput run (default 3; --quick 1)\n"
		"  --json FILE      write every figure as JSON\n"
		"  --plots DIR      write DIR/bench-throughput.png, bench-latency.png, bench-loss.png\n"
		"                   (/usr/bin/python3 with matplotlib)\n"
		"  --bridge PATH    the htoe-bridge to run (default: next to htoe-bench)\n"
		"  --keep           keep the temporary directory (INIs, outputs)\n"
		"Runs on lcores 0-1 (two CPUs); see docs/benchmarks.md.\n");
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "quick", no_argument, 0, 'q' }, { "duration", required_argument, 0, 'd' },
		{ "json", required_argument, 0, 'j' }, { "plots", required_argument, 0, 'p' },
		{ "bridge", required_argument, 0, 'b' }, { "keep", no_argument, 0, 'k' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	int c;

	O.dur = 0;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'q': O.quick = true; break;
		case 'd':
			O.dur = atof(optarg);
			if (O.dur <= 0 || O.dur > 3600)
				die("--duration '%s': seconds in (0, 3600]", optarg);
			break;
		case 'j': O.json = optarg; break;
		case 'p': O.plots = optarg; break;
		case 'b': snprintf(O.bridge, sizeof(O.bridge), "%s", optarg); break;
		case 'k': O.keep = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc)
		die("unexpected argument '%s' (--help)", argv[optind]);
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

static void plot(const char *json, const char *dir)
{
	if (access("/usr/bin/python3", X_OK) ||
	    system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
		printf("htoe-bench: plots skipped: /usr/bin/python3 with matplotlib not found "
		       "(apt-get install python3-matplotlib)\n");
		return;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "htoe-bench: --plots %s: %s\n", dir, strerror(errno));
		return;
	}
	int r = htoe_run_python(bench_plot_py, json, dir);

	if (r == -1)
		fprintf(stderr, "htoe-bench: cannot run /usr/bin/python3 for the plots\n");
	else if (r)
		fprintf(stderr, "htoe-bench: the plot script failed\n");
	else
		printf("htoe-bench: plots: %s/bench-throughput.png, %s/bench-latency.png, "
		       "%s/bench-loss.png\n", dir, dir, dir);
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

static void print_lat(const char *what, unsigned size, json_t *l)
{
	printf("  %-8s %2u B: p50 %.2f us, p99 %.2f us, p99.9 %.2f us (mean %.2f, min %.2f, "
	       "%.0f round trips)\n", what, size, num(l, "p50_ns") / 1e3, num(l, "p99_ns") / 1e3,
	       num(l, "p999_ns") / 1e3, num(l, "mean_ns") / 1e3, num(l, "min_ns") / 1e3,
	       num(l, "count"));
}

/* The read round-trip histogram of node 1 in a bridge summary (consumed). */
static json_t *take_rtt(json_t *sum)
{
	json_t *n1 = sum ? node_of(sum, 1) : NULL, *l = n1 ? json_object_get(n1, "read_rtt") : NULL;

	if (l && num(l, "count") > 0)
		json_incref(l);
	else
		l = NULL;
	json_decref(sum);
	return l;
}

/* 3, 4. Read round trips over net_ring and memif, the TCP ping-pong. */
static void scen_rtt(json_t *fig)
{
	static const unsigned rsz[2] = { 8, 64 };
	json_t *rr = json_object(), *rm = json_object(), *tcp = json_object(),
	       *ratio = json_object();
	char why[1024], label[64];
	int rc;

	printf("htoe-bench: remote read round trip (closed loop, window 1)\n");
	json_object_set_new(fig, "read_rtt_ring", rr);
	json_object_set_new(fig, "read_rtt_memif", rm);
	json_object_set_new(fig, "tcp_rtt", tcp);
	json_object_set_new(fig, "memif_vs_tcp", ratio);
	for (unsigned k = 0; k < 2; k++) {
		static struct lat_hist th;
		char key[8];
		json_t *l;

		snprintf(key, sizeof(key), "%u", rsz[k]);
		snprintf(label, sizeof(label), "read %u B net_ring", rsz[k]);
		run_label = label;
		why[0] = 0;
		l = take_rtt(bridge_ring("rd=100", rsz[k], 1, O.dur_short, NULL, &rc, why,
					 sizeof(why)));
		if (l) {
			print_lat("net_ring", rsz[k], l);
			json_object_set_new(rr, key, l);
		} else {
			note_err(label, why[0] ? why : "no reads completed");
		}

		snprintf(label, sizeof(label), "read %u B memif (client)", rsz[k]);
		run_label = label;
		why[0] = 0;
		json_t *ml = take_rtt(read_memif(rsz[k], O.dur_short, why, sizeof(why)));

		if (ml) {
			print_lat("memif", rsz[k], ml);
			json_object_set_new(rm, key, ml);
		} else {
			note_err(label, why[0] ? why : "no reads completed");
		}

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
}

/* A 64-byte write run with extra INI text; its write figures or NULL
 * (*sump: the bridge's summary, to be released by the caller). */
static json_t *write64(const char *label, const char *extra, json_t **sump, int *rc, char *why,
		       size_t wlen)
{
	run_label = label;
	*sump = bridge_ring("wrp=100", 64, 1, O.dur, extra, rc, why, wlen);
	return *sump ? write_figures(*sump, 64) : NULL;
}

/* One run of bench_loss_sweep (app/bench/loss.c). */
static int sweep_run(const char *mode, const char *impair, struct bench_write *out)
{
	char why[1024], label[64];
	json_t *sum, *w;
	int rc;

	snprintf(label, sizeof(label), "write 64 B, retry %s%s", mode, impair ? ", loss" : "");
	bridge_retry = mode;
	w = write64(label, impair, &sum, &rc, why, sizeof(why));
	bridge_retry = NULL;
	if (w) {
		out->mbps = num(w, "mbps");
		out->dropped = num(sum, "impair_dropped");
		out->retransmits = num(sum, "retransmits");
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

/* 7. Every target of issues 4 and 5 from the figures. */
static void set_targets(json_t *fig, double crypto_fig)
{
	json_t *w64 = json_object_get(fig, "write64"), *ms = json_object_get(fig, "macsec");
	json_t *rr = json_object_get(fig, "read_rtt_ring"), *q = json_object_get(fig, "memif_vs_tcp");
	const char *nm = "not measured (see errors)";
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
	json_t *why = json_object_get(ms, "reason");

	target("MACsec on / off (64-byte writes)", get_or_nan(ms, "on_off_frac"), 0.7, false, 100,
	       "%", why ? json_string_value(why) : nm);
	target("MACsec crypto path / raw backend (fastest)", crypto_fig, 0.8, false, 100, "%", nm);
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
	json_object_set_new(root, "machine", json_pack("{s:i, s:s, s:b}", "cpus",
		(json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "eal",
		"-l 0-1 --no-huge -m 512 --no-pci [--no-shconf]", "quick", O.quick));
	json_object_set_new(root, "durations", json_pack("{s:f, s:f}", "throughput_s", O.dur,
							 "short_s", O.dur_short));
	scen_writes(fig);
	scen_baseline(fig);
	scen_rtt(fig);
	scen_loss_macsec(fig);
	bench_loss_sweep(fig, sweep_run);
	set_targets(fig, scen_crypto(fig));
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
	if (O.plots && jpath[0])
		plot(jpath, O.plots);
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
