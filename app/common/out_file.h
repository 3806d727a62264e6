/* SPDX-License-Identifier: BSD-3-Clause
 * Output files named on a command line are checked before a long run starts,
 * so that a typo in a path is an error at once (exit status 2), not a
 * message after minutes of work. Writing them can still fail at the end
 * (disk full): the programs treat that as an error too.
 */
#ifndef HTOE_OUT_FILE_H
#define HTOE_OUT_FILE_H

#include <stddef.h>

/* The file `path` can be written: it is created if absent (and removed
 * again), or an existing one is opened for writing (and left unchanged).
 * 0, or -1 with "cannot write PATH: REASON" in err. */
int htoe_check_out_file(const char *path, char *err, size_t errlen);

/* Files can be written into the directory `dir`: it exists and is writable,
 * or it does not exist and its parent is (the program creates it). 0, or -1
 * with the reason in err. */
int htoe_check_out_dir(const char *dir, char *err, size_t errlen);

#endif
