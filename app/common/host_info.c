/* SPDX-License-Identifier: BSD-3-Clause */
#include "host_info.h"

#include <stdio.h>
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
