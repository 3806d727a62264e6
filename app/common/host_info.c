/* SPDX-License-Identifier: BSD-3-Clause */
#include "host_info.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "htoe_git.h"
#include "htoe_version.h"

static void cpu_model(char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += strspn(colon + 1, " \t") + 1;
		colon[strcspn(colon, "\n")] = '\0';
		snprintf(out, len, "%s", colon);
		break;
	}
	fclose(f);
}

void htoe_host_info(struct htoe_host_info *h)
{
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	memset(h, 0, sizeof(*h));
	if (gmtime_r(&now, &tm))
		strftime(h->date, sizeof(h->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	cpu_model(h->cpu, sizeof(h->cpu));
	h->nproc = sysconf(_SC_NPROCESSORS_ONLN);
	h->loadavg1 = -1;
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &h->loadavg1) != 1)
			h->loadavg1 = -1;
		fclose(f);
	}
	h->git = HTOE_GIT_DESCRIBE;
	h->version = HTOE_PROJECT_VERSION;
}

/* ------------------------------------------- a cache line between two CPUs */

/* Timed in groups of LINE_RTT_GROUP round trips (a clock read costs about
 * as much as one), the median group: a group in which a thread was
 * preempted by other load is one of many. */
#define LINE_RTT_GROUP  16
#define LINE_RTT_GROUPS 1500
#define LINE_RTT_WARMUP 100 /* groups not counted */

struct line_pp {
	_Alignas(64) uint64_t ping; /* written by the CPU a thread */
	_Alignas(64) uint64_t pong; /* written by the CPU b thread */
	_Alignas(64) int cpu_b;
	int ok;                     /* the CPU b thread runs there: 1, could not: -1 */
	int stop;                   /* the CPU a thread could not run on its CPU */
	uint64_t rounds;
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *line_pong(void *arg)
{
	struct line_pp *pp = arg;

	__atomic_store_n(&pp->ok, pin(pp->cpu_b) ? -1 : 1, __ATOMIC_RELEASE);
	if (pp->ok < 0)
		return NULL;
	for (uint64_t i = 1; i <= pp->rounds; i++) {
		while (__atomic_load_n(&pp->ping, __ATOMIC_ACQUIRE) != i)
			if (__atomic_load_n(&pp->stop, __ATOMIC_RELAXED))
				return NULL;
		__atomic_store_n(&pp->pong, i, __ATOMIC_RELEASE);
	}
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double htoe_line_rtt_ns(int cpu_a, int cpu_b)
{
	struct line_pp *pp = aligned_alloc(64, sizeof(*pp));
	double *group = malloc(LINE_RTT_GROUPS * sizeof(*group)), r = -1;
	cpu_set_t old;
	pthread_t t;

	if (!pp || !group) {
		free(pp);
		free(group);
		return -1;
	}
	memset(pp, 0, sizeof(*pp));
	pp->cpu_b = cpu_b;
	pp->rounds = (uint64_t)LINE_RTT_GROUP * (LINE_RTT_WARMUP + LINE_RTT_GROUPS);
	if (pthread_getaffinity_np(pthread_self(), sizeof(old), &old) ||
	    pthread_create(&t, NULL, line_pong, pp)) {
		free(pp);
		free(group);
		return -1;
	}
	if (pin(cpu_a))
		__atomic_store_n(&pp->stop, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&pp->ok, __ATOMIC_ACQUIRE))
		;
	if (pp->ok > 0 && !pp->stop) {
		uint64_t i = 1;

		for (int g = -LINE_RTT_WARMUP; g < LINE_RTT_GROUPS; g++) {
			uint64_t t0 = mono_ns();

			for (unsigned k = 0; k < LINE_RTT_GROUP; k++, i++) {
				__atomic_store_n(&pp->ping, i, __ATOMIC_RELEASE);
				while (__atomic_load_n(&pp->pong, __ATOMIC_ACQUIRE) != i)
					;
			}
			if (g >= 0)
				group[g] = (double)(mono_ns() - t0) / LINE_RTT_GROUP;
		}
		qsort(group, LINE_RTT_GROUPS, sizeof(group[0]), cmp_double);
		r = group[LINE_RTT_GROUPS / 2];
	}
	pthread_join(t, NULL);
	pthread_setaffinity_np(pthread_self(), sizeof(old), &old);
	free(pp);
	free(group);
	return r;
}
