/* SPDX-License-Identifier: BSD-3-Clause
 * See eal_hint.h.
 */
#include "eal_hint.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* --file-prefix X, --file-prefix=X; the EAL's default is "rte" */
static const char *file_prefix(int argc, char **argv, bool *shconf)
{
	const char *p = "rte";

	*shconf = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--file-prefix") && i + 1 < argc)
			p = argv[++i];
		else if (!strncmp(argv[i], "--file-prefix=", 14))
			p = argv[i] + 14;
		else if (!strcmp(argv[i], "--no-shconf") || !strcmp(argv[i], "--in-memory"))
			*shconf = false;
	}
	return p;
}

/* pid of the process holding the EAL's lock on DIR/PREFIX/config, or 0 */
static pid_t config_holder(const char *dir, const char *prefix)
{
	struct flock lk = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char path[512];
	int fd;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s/config", dir, prefix);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &lk) || lk.l_type == F_UNLCK)
		lk.l_pid = 0;
	close(fd);
	return lk.l_pid;
}

void htoe_eal_init_failed(FILE *f, const char *prog, const char *reason, int eal_argc,
			  char **eal_argv)
{
	bool shconf;
	const char *prefix = file_prefix(eal_argc, eal_argv, &shconf);
	char xdg[256] = "";
	pid_t pid = 0;

	/* the EAL's runtime directory: /var/run/dpdk as root, else
	 * $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk */
	if (getenv("XDG_RUNTIME_DIR"))
		snprintf(xdg, sizeof(xdg), "%s/dpdk", getenv("XDG_RUNTIME_DIR"));
	if (shconf) {
		pid = config_holder(geteuid() == 0 ? "/var/run/dpdk" : NULL, prefix);
		if (!pid && geteuid() != 0)
			pid = config_holder(xdg[0] ? xdg : "/tmp/dpdk", prefix);
	}
	if (reason)
		fprintf(f, "%s: EAL initialisation failed: %s\n", prog, reason);
	else
		fprintf(f, "%s: EAL initialisation failed (the EAL's messages above say where)\n",
			prog);
	if (pid)
		fprintf(f, "  another process (pid %ld) is using --file-prefix %s: every DPDK "
			"process needs its own --file-prefix NAME\n", (long)pid, prefix);
	else
		fprintf(f, "  without hugepages: -l 0-1 --no-huge -m 512 --no-pci --no-shconf "
			"--file-prefix NAME (memif: without --no-shconf; each process its own NAME)\n");
}
