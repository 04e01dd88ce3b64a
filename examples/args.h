/* SPDX-License-Identifier: MIT */
/**
 * @file args.h
 * What every example's getopt_long() loop shares: numbers checked as
 * they are read, and one way to refuse a bad command line (a message on
 * stderr, the usage, exit status 2). -h and --help print the usage on
 * stdout and exit 0 (obs_args.h). Options take their value as
 * "--name value" or "--name=value", and any unambiguous prefix of a
 * name works, as with getopt_long() everywhere.
 */
#ifndef HOMA_EXAMPLES_ARGS_H
#define HOMA_EXAMPLES_ARGS_H

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

/**
 * example_usage_error() - Print the usage (after getopt_long()'s or the
 * caller's message) on stderr and exit with status 2.
 */
static inline void example_usage_error(const char *usage)
{
	fputs(usage, stderr);
	exit(2);
}

/**
 * example_long() - @arg, the value of option --@name, as a whole number
 * in [@lo, @hi]. Anything else (empty, trailing characters, out of range)
 * prints why and exits with status 2.
 */
static inline long example_long(const char *name, const char *arg, long lo, long hi,
				const char *usage)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < lo || v > hi) {
		fprintf(stderr, "--%s wants a whole number from %ld to %ld, got '%s'\n",
			name, lo, hi, arg);
		example_usage_error(usage);
	}
	return v;
}

/**
 * example_double() - @arg, the value of option --@name, as a number
 * above 0 and at most @hi; else prints why and exits with status 2.
 */
static inline double example_double(const char *name, const char *arg, double hi,
				    const char *usage)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > hi) {
		fprintf(stderr, "--%s wants a number above 0 and at most %g, got '%s'\n",
			name, hi, arg);
		example_usage_error(usage);
	}
	return v;
}

/**
 * example_no_operands() - After the getopt_long() loop: the examples take
 * options only, so an argument left over (argv[optind]) is refused.
 */
static inline void example_no_operands(int argc, char **argv, const char *usage)
{
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", argv[0], argv[optind]);
		example_usage_error(usage);
	}
}

#endif
