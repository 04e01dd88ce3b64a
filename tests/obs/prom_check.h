/* SPDX-License-Identifier: MIT */
/**
 * @file prom_check.h
 * A strict checker of the Prometheus text exposition format (0.0.4), in
 * the spirit of `promtool check metrics`, used by the tests to validate
 * what homa_metrics_render() and the /metrics listener produce.
 */
#ifndef HOMA_TESTS_PROM_CHECK_H
#define HOMA_TESTS_PROM_CHECK_H

#include <stddef.h>

/**
 * prom_check() - Validate @text line by line: every family has HELP and
 * TYPE before its samples; names, labels, escapes and values are well
 * formed; families are contiguous; no series repeats; counters end in
 * _total and are not negative; histogram buckets have increasing le,
 * non-decreasing counts, a +Inf bucket equal to _count, and _sum.
 * Blank lines and text not ending in a newline are refused.
 * @err: receives "line N: reason" on failure (@cap bytes).
 * Return: 0 if valid, -1 otherwise.
 */
int prom_check(const char *text, char *err, size_t cap);

/**
 * prom_value() - Find the sample whose name and label text match
 * exactly (e.g. "homa_peers", "{endpoint=\"7\"}"; "" for no labels).
 * Return: 0 and the value in *out, or -1 if absent.
 */
int prom_value(const char *text, const char *name, const char *labels, double *out);

#endif /* HOMA_TESTS_PROM_CHECK_H */
