/* SPDX-License-Identifier: MIT */
/**
 * @file opts.h
 * Command line of homa-bench: defaults, parsing, and the --help text.
 */
#ifndef HOMA_BENCH_OPTS_H
#define HOMA_BENCH_OPTS_H

#include <stdio.h>

#include "bench.h"

/** bench_opts_default() - Fill @o with the documented defaults. */
void bench_opts_default(struct bench_opts *o);

/**
 * bench_opts_parse() - Parse argv (argv[1] is the mode) into @o.
 * Return: 0, 1 when help was printed, HOMA_EINVAL (message on stderr).
 */
int bench_opts_parse(int argc, char **argv, struct bench_opts *o);

/** bench_usage() - Print the full help on @f. */
void bench_usage(FILE *f);

#endif
