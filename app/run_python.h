/* SPDX-License-Identifier: BSD-3-Clause
 * Runs a Python script embedded in a program (app/bridge/embed.py turns a
 * .py file into a C string) with Debian's /usr/bin/python3, which sees the
 * distribution's packages (matplotlib), and two arguments. Used for the
 * plots of htoe-dimm and htoe-bench.
 */
#ifndef HTOE_RUN_PYTHON_H
#define HTOE_RUN_PYTHON_H

#include <stdio.h>

/* 0: the script ran and exited 0; -1: python3 could not be started (or
 * the arguments are too long);
 * -2: the script failed. */
static inline int htoe_run_python(const char *script, const char *arg1, const char *arg2)
{
	char cmd[2048];
	FILE *f;

	int n = snprintf(cmd, sizeof(cmd), "/usr/bin/python3 - '%s' '%s'", arg1, arg2);

	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;   /* paths too long */
	f = popen(cmd, "w");
	if (!f)
		return -1;
	fputs(script, f);
	return pclose(f) == 0 ? 0 : -2;
}

#endif
