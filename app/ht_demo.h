/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef HT_DEMO_H
#define HT_DEMO_H
/* `htoe-ht demo [options]`: a requester doing reads, writes and atomics
 * against a memory target over the modelled HT link, printing what it did.
 * argv[0] is "demo". Returns the process exit code. */
int ht_demo_main(int argc, char **argv);
#endif
