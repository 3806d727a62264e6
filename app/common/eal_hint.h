/* SPDX-License-Identifier: BSD-3-Clause
 * The message of a failed rte_eal_init(), with its likely cause. The EAL
 * often fails without setting rte_errno (a second process on the same
 * --file-prefix: "failed: Success"), so the cause is looked for here.
 * No DPDK dependency: the caller passes rte_strerror(rte_errno).
 */
#ifndef HTOE_EAL_HINT_H
#define HTOE_EAL_HINT_H

#include <stdio.h>

/* Writes to f: "PROG: EAL initialisation failed: REASON" (REASON NULL: see
 * the EAL's messages) and the likely cause found from the EAL arguments
 * eal_argv[0..eal_argc): another live process holding the runtime
 * configuration of the same --file-prefix (named with its pid), else the
 * usual arguments for a machine without hugepages. */
void htoe_eal_init_failed(FILE *f, const char *prog, const char *reason, int eal_argc,
			  char **eal_argv);

#endif
