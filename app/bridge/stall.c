/* SPDX-License-Identifier: BSD-3-Clause
 * The poll watchdog (stall.h): a thread of its own, not pinned, that looks
 * at every registered polling thread a few times per limit. A poller that
 * the EAL pinned to some CPUs and that has begun no iteration of its loop
 * for longer than the limit while not being run (its CPU clock, read from
 * here, moved less than half that time) is allowed on every CPU until it
 * begins one: a CPU whose kernel leaves its pinned threads waiting (seen
 * for minutes on 2-vCPU VMs) no longer holds it. With HTOE_POLL_WATCHDOG
 * set, every such wait over the limit is also reported once, with that CPU
 * share and the thread's stack, which the thread itself collects in a
 * signal handler (backtrace(3)) and this thread prints.
 */
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "stall.h"

#define STALL_SLOTS  64
#define STALL_DEPTH  48
/* SIGURG: ignored by default, so that a stray one harms nobody */
#define STALL_SIGNAL SIGURG

struct stall_priv {
	pthread_t th;
	clockid_t cpu;                      /* the thread's CPU-time clock */
	bool      has_cpu;
	uint64_t  seen;                     /* `since` as last seen */
	uint64_t  seen_tsc;                 /* when it was first seen */
	uint64_t  cpu0_ns;                  /* the thread's CPU time then */
	bool      reported;
	bool      has_pin;                  /* its affinity, when it is not every CPU */
	bool      widened;                  /* on every CPU until it begins an iteration */
	cpu_set_t pin;
};

static struct br_stall slots[STALL_SLOTS];
static struct stall_priv privs[STALL_SLOTS];

static struct {
	pthread_t th;
	bool      running;
	int       stop;                     /* atomic */
	uint64_t  limit_ns, limit_tsc, hz;
	bool      report;                   /* HTOE_POLL_WATCHDOG: reports and stacks */
	const char *prog;
} wd;

/* what the signalled thread found: its stack */
static void *stack_pcs[STALL_DEPTH];
static volatile int stack_n;
static volatile sig_atomic_t stack_done;

static void on_stack_signal(int sig)
{
	int saved = errno;

	(void)sig;
	stack_n = backtrace(stack_pcs, STALL_DEPTH);
	__atomic_store_n(&stack_done, 1, __ATOMIC_RELEASE);
	errno = saved;
}

int br_stall_config(uint64_t *limit_ns, bool *report, char *err, size_t errlen)
{
	const char *v = getenv("HTOE_POLL_WATCHDOG");
	char *end;
	double s;

	*limit_ns = BR_STALL_RESCUE_NS;
	*report = false;
	if (!v || !*v)
		return 0;
	errno = 0;
	s = strtod(v, &end);
	if (errno || end == v || *end || s < 0 || s > 3600 || s != s) {
		snprintf(err, errlen, "environment HTOE_POLL_WATCHDOG='%s': not seconds (0: no "
			 "watchdog thread at all, or the longest time a poller may begin no "
			 "iteration unreported, e.g. 2 or 0.5; at most 3600)", v);
		return -1;
	}
	*limit_ns = (uint64_t)(s * 1e9);
	if (*limit_ns && *limit_ns < 1000000)
		*limit_ns = 1000000; /* the watchdog looks a few times per limit */
	*report = *limit_ns != 0;
	return 0;
}

static uint64_t cpu_ns(const struct stall_priv *p)
{
	struct timespec ts;

	if (!p->has_cpu || clock_gettime(p->cpu, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void all_cpus(cpu_set_t *set)
{
	long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(set);
	for (long c = 0; c < n_cpu && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, set);
}

/* the set-up thread's pin while it runs on every CPU */
static cpu_set_t setup_pin;
static bool setup_widened;

/* The EAL's control threads (interrupts: a memif peer's connection and its
 * end; multi-process; telemetry) are pinned to the CPUs no lcore uses, else
 * to the main lcore's. A poller that faults on memory while one of them
 * holds the process's memory map (a dead memif peer's regions being
 * unmapped) waits until that thread runs again: seen for 58 s on a loaded
 * VM. They do little work and may run on every CPU; the lcores' threads
 * (the EAL names them rte-worker-N) keep their pins. */
static void widen_control_threads(const cpu_set_t *all)
{
	DIR *d = opendir("/proc/self/task");
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[64], comm[32] = "";
		pid_t tid = (pid_t)atoi(e->d_name);
		FILE *f;

		if (tid <= 0 || tid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
		if ((f = fopen(path, "r"))) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		if (strncmp(comm, "rte-worker-", 11))
			sched_setaffinity(tid, sizeof(*all), all);
	}
	if (d)
		closedir(d);
}

void br_stall_setup_begin(void)
{
	cpu_set_t all;

	all_cpus(&all);
	widen_control_threads(&all);
	setup_widened = pthread_getaffinity_np(pthread_self(), sizeof(setup_pin), &setup_pin) == 0 &&
			!CPU_EQUAL(&setup_pin, &all) &&
			pthread_setaffinity_np(pthread_self(), sizeof(all), &all) == 0;
}

void br_stall_setup_end(void)
{
	if (setup_widened &&
	    pthread_setaffinity_np(pthread_self(), sizeof(setup_pin), &setup_pin) == 0)
		setup_widened = false;
}

/* A pinned thread that its CPU does not run may run on another: the
 * kernel can move it only if its affinity allows. */
static void widen(const struct br_stall *s, struct stall_priv *p)
{
	cpu_set_t all;

	all_cpus(&all);
	if (!p->has_pin || pthread_setaffinity_np(p->th, sizeof(all), &all) != 0)
		return;
	p->widened = true;
	fprintf(stderr, "%s: poll watchdog: %s: not run on its CPU for %.3f s: allowed on every "
		"CPU until it begins an iteration\n", wd.prog, s->name,
		(double)(rte_rdtsc() - p->seen) / (double)wd.hz);
}

/* The share of the time since the iteration was first seen that the
 * thread spent on a CPU, in percent; -1 when unknown. */
static double on_cpu_pct(const struct stall_priv *p, uint64_t now)
{
	double win = (double)(now - p->seen_tsc) / (double)wd.hz;

	if (!p->has_cpu || win <= 0)
		return -1;
	return 100.0 * ((double)(cpu_ns(p) - p->cpu0_ns) / 1e9) / win;
}

static void report(const struct br_stall *s, struct stall_priv *p, uint64_t now)
{
	double len = (double)(now - p->seen) / (double)wd.hz;
	double win = (double)(now - p->seen_tsc) / (double)wd.hz;
	double pct = on_cpu_pct(p, now);
	char **sym;

	fprintf(stderr, "%s: poll watchdog: %s has begun no iteration of its poll loop for "
		"%.3f s (limit %.3f s); it ran on a CPU %.0f %% of the last %.3f s: %s\n",
		wd.prog, s->name, len, (double)wd.limit_ns / 1e9, pct, win,
		pct < 0 ? "its CPU time is unknown" :
		pct >= 50 ? "on CPU: a loop in the poll path (a retry, or a spin waiting for "
			    "another thread)" :
			    "off CPU: the thread was descheduled (an overloaded host, a CPU "
			    "shared with other busy threads) or asleep, not looping");
	if (pct >= 0 && pct < 50)
		widen(s, p);
	__atomic_store_n(&stack_done, 0, __ATOMIC_RELAXED);
	if (pthread_kill(p->th, STALL_SIGNAL) == 0)
		/* up to 1 s for the thread to run its handler */
		for (int i = 0; i < 1000 && !__atomic_load_n(&stack_done, __ATOMIC_ACQUIRE); i++) {
			const struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
	if (!__atomic_load_n(&stack_done, __ATOMIC_ACQUIRE)) {
		fprintf(stderr, "%s: poll watchdog: %s: no stack (the thread did not run its "
			"signal handler within 1 s)\n", wd.prog, s->name);
		return;
	}
	fprintf(stderr, "%s: poll watchdog: %s: its stack (addr2line -f -e PROGRAM +OFFSET "
		"names a static function):\n", wd.prog, s->name);
	sym = backtrace_symbols(stack_pcs, stack_n);
	/* the first two frames are the handler and the signal trampoline */
	for (int i = 2; i < stack_n; i++)
		fprintf(stderr, "  #%d %s\n", i - 2, sym ? sym[i] : "?");
	free(sym);
	fflush(stderr);
}

static void look(uint64_t now)
{
	for (unsigned i = 0; i < STALL_SLOTS; i++) {
		struct br_stall *s = &slots[i];
		struct stall_priv *p = &privs[i];
		uint64_t since;

		if (__atomic_load_n(&s->used, __ATOMIC_ACQUIRE) != 1)
			continue;
		since = __atomic_load_n(&s->since, __ATOMIC_RELAXED);
		if (since != p->seen) {
			if (p->reported && (wd.report || p->widened))
				fprintf(stderr, "%s: poll watchdog: %s: it began an iteration again, "
					"after %.3f s at most%s\n", wd.prog, s->name,
					(double)(now - p->seen) / (double)wd.hz,
					p->widened ? "; pinned again" : "");
			if (p->widened &&
			    pthread_setaffinity_np(p->th, sizeof(p->pin), &p->pin) == 0)
				p->widened = false;
			p->seen = since;
			p->seen_tsc = now;
			p->cpu0_ns = cpu_ns(p);
			p->reported = false;
			continue;
		}
		if (!since || p->reported || now - since < wd.limit_tsc)
			continue;
		p->reported = true;
		if (wd.report) {
			report(s, p, now);
		} else {
			double pct = on_cpu_pct(p, now);

			if (pct >= 0 && pct < 50)
				widen(s, p);
		}
	}
}

static void *watchdog(void *arg)
{
	uint64_t period = wd.limit_ns / 4;
	struct timespec ts;

	(void)arg;
	if (period > 250000000ull)
		period = 250000000ull;
	ts.tv_sec = (time_t)(period / 1000000000ull);
	ts.tv_nsec = (long)(period % 1000000000ull);
	while (!__atomic_load_n(&wd.stop, __ATOMIC_RELAXED)) {
		nanosleep(&ts, NULL);
		look(rte_rdtsc());
	}
	return NULL;
}

int br_stall_start(uint64_t limit_ns, bool report, uint64_t tsc_hz, const char *prog,
		   char *err, size_t errlen)
{
	struct sigaction sa;
	void *warm[2];
	int r;

	if (!limit_ns || wd.running)
		return 0;
	/* backtrace() loads its unwinder on first use: not in the handler */
	if (report)
		(void)backtrace(warm, 2);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stack_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (report && sigaction(STALL_SIGNAL, &sa, NULL) != 0) {
		snprintf(err, errlen, "HTOE_POLL_WATCHDOG: cannot install the signal handler: %s",
			 strerror(errno));
		return -1;
	}
	wd.limit_ns = limit_ns;
	wd.report = report;
	wd.hz = tsc_hz;
	wd.limit_tsc = (uint64_t)((unsigned __int128)limit_ns * tsc_hz / 1000000000u);
	wd.prog = prog;
	__atomic_store_n(&wd.stop, 0, __ATOMIC_RELAXED);
	/* not on the pollers' CPUs alone (the EAL pinned the thread that
	 * creates it): a CPU that does not run them must not hold it */
	pthread_attr_t attr;
	cpu_set_t all;

	all_cpus(&all);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(all), &all);
	r = pthread_create(&wd.th, &attr, watchdog, NULL);
	pthread_attr_destroy(&attr);
	if (r) {
		snprintf(err, errlen, "HTOE_POLL_WATCHDOG: cannot start the watchdog thread: %s",
			 strerror(r));
		return -1;
	}
	pthread_setname_np(wd.th, "htoe-watchdog");
	wd.running = true;
	if (report)
		fprintf(stderr, "%s: poll watchdog on: a poller that begins no iteration for %.3f s "
			"is reported with its stack\n", prog, (double)limit_ns / 1e9);
	return 0;
}

void br_stall_stop(void)
{
	if (!wd.running)
		return;
	__atomic_store_n(&wd.stop, 1, __ATOMIC_RELAXED);
	pthread_join(wd.th, NULL);
	wd.running = false;
}

struct br_stall *br_stall_register(const char *fmt, ...)
{
	static __thread struct br_stall unwatched;
	va_list ap;

	for (unsigned i = 0; i < STALL_SLOTS; i++) {
		int free_slot = 0;
		struct br_stall *s = &slots[i];
		struct stall_priv *p = &privs[i];

		/* claimed (2) while being filled in, watched (1) when done */
		if (!__atomic_compare_exchange_n(&s->used, &free_slot, 2, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		va_start(ap, fmt);
		vsnprintf(s->name, sizeof(s->name), fmt, ap);
		va_end(ap);
		__atomic_store_n(&s->since, 0, __ATOMIC_RELAXED);
		memset(p, 0, sizeof(*p));
		p->th = pthread_self();
		p->has_cpu = pthread_getcpuclockid(p->th, &p->cpu) == 0;
		cpu_set_t all;

		all_cpus(&all);
		p->has_pin = pthread_getaffinity_np(p->th, sizeof(p->pin), &p->pin) == 0 &&
			     !CPU_EQUAL(&p->pin, &all);
		s->priv = p;
		__atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
		return s;
	}
	return &unwatched;
}

void br_stall_unregister(struct br_stall *s)
{
	if (s->priv) {
		s->priv = NULL;
		__atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
	}
}
