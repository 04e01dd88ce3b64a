/* SPDX-License-Identifier: MIT */
/**
 * @file tmpdir.c
 * The tests' temporary directory (see tmpdir.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tmpdir.h"

char tmpdir[64];

/** tmpdir_setup() - See tmpdir.h. */
int tmpdir_setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/homa-obs-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

/** tmpdir_teardown() - See tmpdir.h. */
int tmpdir_teardown(void **state)
{
	char cmd[128];

	if (getenv("KEEP")) {
		printf("kept %s\n", tmpdir);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) ? -1 : 0;
}
