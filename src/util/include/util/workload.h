/* SPDX-License-Identifier: MIT */
/**
 * @file workload.h
 * Message-size distributions: the five workloads of the Homa papers
 * (workloads/w1.txt .. w5.txt, one `length weight` pair a line, weights
 * are relative frequencies), a fixed size, a uniform range, or a file of
 * sizes. A workload is kept as a sorted table of sizes with their
 * cumulative probabilities, and sampled with a caller-owned homa_rng.
 */
#ifndef HOMA_UTIL_WORKLOAD_H
#define HOMA_UTIL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "util/rng.h"

/** How a workload draws sizes. */
enum homa_workload_kind {
	HOMA_WORKLOAD_TABLE = 0, /**< discrete sizes with a CDF (files, fixed) */
	HOMA_WORKLOAD_RANGE = 1, /**< uniform integer in [lo, hi] */
};

/** A size distribution. Owns its arrays; release with homa_workload_free(). */
struct homa_workload {
	enum homa_workload_kind kind;
	uint32_t *sizes;   /**< TABLE: distinct sizes, ascending */
	double *cdf;       /**< TABLE: cdf[i] = P(size <= sizes[i]); last is 1 */
	size_t n;          /**< TABLE: entries in sizes/cdf */
	uint32_t lo, hi;   /**< RANGE bounds; for TABLE the smallest and largest size */
	double mean;       /**< mean size in bytes */
	char name[64];     /**< short label ("w3", "100", "range:100-1000", "file:x") */
};

/**
 * homa_workload_parse() - Build a workload from a command-line spec.
 * @spec: "w1".."w5" (file in @dir, or the HOMA_WORKLOAD_DIR environment
 *        variable, or the source tree's workloads/), a size ("100",
 *        "500K", "8M": K = 1000, M = 1000000), "range:LO-HI" (each a size),
 *        or "file:PATH" (a workload file, see homa_workload_load_file()).
 * @dir: folder holding w1.txt..w5.txt, or NULL for the default.
 * @out: filled on success; caller frees with homa_workload_free().
 * Return: 0, HOMA_EINVAL (bad spec or file contents; a message is written
 * to @err if it is not NULL), HOMA_EIO (file cannot be read), HOMA_ENOMEM.
 */
int homa_workload_parse(const char *spec, const char *dir,
			struct homa_workload *out, char *err, size_t err_cap);

/**
 * homa_workload_load_file() - Read a workload file.
 * Each non-empty line not starting with '#' holds `length weight` (weights
 * are relative frequencies and need not sum to 1) or just `length` (weight
 * 1: a plain file of sizes). Lengths must be 1..2^31, weights >= 0 with a
 * positive total. Repeated lengths are merged.
 * Return: 0, HOMA_EIO, HOMA_EINVAL (with a message in @err), HOMA_ENOMEM.
 */
int homa_workload_load_file(const char *path, struct homa_workload *out,
			    char *err, size_t err_cap);

/**
 * homa_workload_fixed() - A workload where every message has @size bytes.
 * Return: 0, HOMA_EINVAL (size 0), HOMA_ENOMEM.
 */
int homa_workload_fixed(uint32_t size, struct homa_workload *out);

/**
 * homa_workload_range() - Sizes uniform in [@lo, @hi].
 * Return: 0 or HOMA_EINVAL (lo 0 or lo > hi).
 */
int homa_workload_range(uint32_t lo, uint32_t hi, struct homa_workload *out);

/** homa_workload_sample() - Draw one size from @w using @rng. */
uint32_t homa_workload_sample(const struct homa_workload *w, struct homa_rng *rng);

/**
 * homa_workload_quantile() - Smallest size s with P(size <= s) >= @q
 * (@q clamped to [0, 1]).
 */
uint32_t homa_workload_quantile(const struct homa_workload *w, double q);

/** homa_workload_cdf_at() - P(size <= @size). */
double homa_workload_cdf_at(const struct homa_workload *w, uint32_t size);

/** homa_workload_free() - Release @w's arrays; @w may then be reused. */
void homa_workload_free(struct homa_workload *w);

/**
 * homa_parse_size() - Parse "123", "64K", "1.5M" (K = 1000, M = 10^6,
 * Ki = 1024, Mi = 1048576) into @out.
 * Return: 0, or HOMA_EINVAL for junk, 0 or values over 2^31.
 */
int homa_parse_size(const char *s, uint32_t *out);

#endif
