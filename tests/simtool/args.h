/* SPDX-License-Identifier: MIT */
/** @file args.h homa-sim option parsing from a word list, for the simtool tests. */
#ifndef HOMA_TEST_SIMTOOL_ARGS_H
#define HOMA_TEST_SIMTOOL_ARGS_H

#include <stdio.h>

#include "sim.h"

/** parse() - Run sim_opts_parse() on a NULL-terminated list of (at most 30) words. */
static inline int parse(struct sim_opts *o, const char *const *words)
{
	char *argv[32];
	int argc = 0;

	argv[argc++] = "homa-sim";
	while (*words && argc < 31)
		argv[argc++] = (char *)*words++;
	return sim_opts_parse(o, argc, argv, stderr);
}

#endif
