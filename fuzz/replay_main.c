/* SPDX-License-Identifier: MIT */
/**
 * @file replay_main.c
 * A main() for fuzz targets built without libFuzzer (any compiler): runs
 * LLVMFuzzerTestOneInput() once on every file named on the command line,
 * descending into directories. Used to replay the seed corpus and saved
 * crash inputs as regression tests under gcc and the sanitizers.
 * Exit status: 0 if every input ran (a broken invariant aborts), 1 if a
 * path could not be read, 2 on usage errors.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/** run_file() - Feed one file to the target. Return: 0 or 1 if unreadable. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return 1;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return 1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

/** run_path() - A file, or every entry of a directory. Return: failures. */
static int run_path(const char *path, unsigned *count)
{
	struct stat st;
	struct dirent *d;
	DIR *dir;
	int bad = 0;

	if (stat(path, &st))
		return 1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	dir = opendir(path);
	if (!dir)
		return 1;
	while ((d = readdir(dir))) {
		char sub[4096];

		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, d->d_name);
		bad += run_path(sub, count);
	}
	closedir(dir);
	return bad;
}

/** main() - Replay every input named in argv. */
int main(int argc, char **argv)
{
	unsigned count = 0;
	int i, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		bad += run_path(argv[i], &count);
	printf("replayed %u inputs, %d unreadable\n", count, bad);
	return bad ? 1 : (count ? 0 : 1);
}
