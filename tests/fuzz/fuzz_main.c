/* SPDX-License-Identifier: BSD-3-Clause
 * A main() for the libFuzzer targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput on every file named on the command line or found in
 * a named directory (not recursive). Used to replay the seed corpus in the
 * normal test suite (any compiler, ASan builds) and to reproduce crashes.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (!f) {
		perror(path);
		return -1;
	}
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf), f);

	fclose(f);
	/* a private copy of exactly n bytes so ASan sees reads past the end */
	uint8_t *copy = malloc(n ? n : 1);

	if (!copy)
		return -1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (run_file(argv[i]))
				return 1;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);

		if (!d) {
			perror(argv[i]);
			return 1;
		}
		struct dirent *e;

		while ((e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (run_file(path)) {
				closedir(d);
				return 1;
			}
			count++;
		}
		closedir(d);
	}
	printf("%u inputs ran\n", count);
	return count ? 0 : 1;
}
