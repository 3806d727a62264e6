/* SPDX-License-Identifier: BSD-3-Clause
 * The command line of the DPDK programs (htoe-bridge, htoe-dimm):
 *
 *   PROG EAL-ARGS -- PROGRAM-ARGS
 *
 * No DPDK here: the split happens before rte_eal_init().
 */
#ifndef HTOE_BRIDGE_ARGS_H
#define HTOE_BRIDGE_ARGS_H

/*
 * Splits argv at the first "--": rte_eal_init() gets argv[0 .. *eal_argc),
 * the program's own options a new NULL-terminated array *app_argv (its
 * [0] is argv[0]; free() it, its strings are argv's). Without "--", an
 * argument listed in no_eal (NULL-terminated, e.g. "--help") makes every
 * argument the program's and *eal_argc 1, so that it is answered without
 * the EAL; else all arguments are the EAL's. Returns the number of
 * program arguments (with [0]), or -1 when out of memory.
 */
int br_split_args(int argc, char **argv, const char *const *no_eal, int *eal_argc,
		  char ***app_argv);

#endif
