/* SPDX-License-Identifier: MIT */
/**
 * @file compare.h
 * compare and demo modes: both arms on loopback in one invocation.
 */
#ifndef HOMA_BENCH_COMPARE_H
#define HOMA_BENCH_COMPARE_H

#include "bench.h"

/**
 * bench_compare_main() - Run o->scenario (compare) or rtt and mixed
 * (demo), print the table (stderr with --json, else stdout), the JSON
 * object (--json) and the plot. Return: 0, or an error if an arm failed.
 */
int bench_compare_main(const struct bench_opts *o);

#endif
