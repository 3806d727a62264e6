/* SPDX-License-Identifier: BSD-3-Clause
 * See out_file.h.
 */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int htoe_check_out_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if (!path || !path[0]) {
		snprintf(err, errlen, "cannot write '': an empty file name");
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	if (errno == EEXIST) {
		if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot write %s: it is a directory", path);
			return -1;
		}
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
	}
	snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
	return -1;
}

int htoe_check_out_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	char *copy;
	int r = 0;

	if (!dir || !dir[0]) {
		snprintf(err, errlen, "cannot write into '': an empty directory name");
		return -1;
	}
	if (!stat(dir, &st)) {
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "cannot write into %s: not a directory", dir);
			return -1;
		}
		if (access(dir, W_OK | X_OK)) {
			snprintf(err, errlen, "cannot write into %s: %s", dir, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT) {
		snprintf(err, errlen, "cannot write into %s: %s", dir, strerror(errno));
		return -1;
	}
	/* absent: its parent must take a new directory */
	copy = strdup(dir);
	if (!copy) {
		snprintf(err, errlen, "cannot write into %s: out of memory", dir);
		return -1;
	}
	const char *parent = dirname(copy);

	if (access(parent, W_OK | X_OK)) {
		snprintf(err, errlen, "cannot create the directory %s: %s: %s", dir, parent,
			 strerror(errno));
		r = -1;
	}
	free(copy);
	return r;
}
