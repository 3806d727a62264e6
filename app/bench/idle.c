/* SPDX-License-Identifier: BSD-3-Clause
 * htoe-bench: the CPU time a running process has used, for the idle
 * serve-only node of the polling scenario (app/htoe-bench.c, scen_idle).
 */
#include <dirent.h>
#include <stdio.h>

#include "bench.h"

double bench_proc_cpu_s(int pid)
{
	char path[64];
	unsigned long long sum = 0, ns;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	/* schedstat: nanoseconds on a CPU, per thread (utime/stime in
	 * /proc/PID/stat are sampled at the tick, which a thread that wakes
	 * for a few microseconds every millisecond fools) */
	while ((e = readdir(d)) != NULL) {
		FILE *f;
		char p[96];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%.20s/schedstat", pid, e->d_name);
		f = fopen(p, "r");
		if (f && fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	closedir(d);
	return (double)sum / 1e9;
}
