/* SPDX-License-Identifier: BSD-3-Clause
 * EAL arguments, "--", the program's arguments (see args.h).
 */
#include <stdlib.h>
#include <string.h>

#include "args.h"

int br_split_args(int argc, char **argv, const char *const *no_eal, int *eal_argc,
		  char ***app_argv)
{
	int start = argc, n;
	char **av;

	*eal_argc = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			*eal_argc = i;
			start = i + 1;
			break;
		}
	for (int i = 1; *eal_argc == argc && no_eal && i < argc; i++)
		for (const char *const *o = no_eal; *o; o++)
			if (!strcmp(argv[i], *o)) {
				*eal_argc = 1;
				start = 1;
				break;
			}
	n = 1 + argc - start;
	av = calloc((size_t)n + 1, sizeof(char *));
	if (!av)
		return -1;
	av[0] = argv[0];
	for (int i = start; i < argc; i++)
		av[1 + i - start] = argv[i];
	*app_argv = av;
	return n;
}
