/* SPDX-License-Identifier: MIT */
/**
 * @file latency.h
 * A latency recorder that keeps every sample (message size and completion
 * time), exact percentiles (nearest rank over the sorted samples), and
 * size buckets of equal message counts taken from a workload's CDF, as the
 * Homa papers report them.
 */
#ifndef HOMA_UTIL_LATENCY_H
#define HOMA_UTIL_LATENCY_H

#include <stddef.h>
#include <stdint.h>

#include "util/workload.h"

/** One completed RPC or message. */
struct homa_lat_sample {
	uint64_t ns;   /**< completion time in nanoseconds */
	uint32_t size; /**< message size in bytes (the size that sets its class) */
};

/** All samples of a run. Owns @v; release with homa_lat_free(). */
struct homa_lat {
	struct homa_lat_sample *v;
	size_t n, cap;
};

/** Percentiles and moments of a set of values (in the values' unit). */
struct homa_summary {
	size_t count;
	double min, mean, p50, p99, p999, max;
};

/** Most buckets homa_buckets_from_workload() makes. */
#define HOMA_BUCKETS_MAX 32

/** Size buckets: bucket i holds sizes in (upper[i-1], upper[i]]. */
struct homa_buckets {
	uint32_t upper[HOMA_BUCKETS_MAX];
	size_t n;
};

/** homa_lat_init() - Make @l empty (no allocation yet). */
void homa_lat_init(struct homa_lat *l);

/** homa_lat_add() - Record one sample. Return: 0 or HOMA_ENOMEM. */
int homa_lat_add(struct homa_lat *l, uint32_t size, uint64_t ns);

/** homa_lat_merge() - Append all of @src's samples to @dst. Return: 0 or HOMA_ENOMEM. */
int homa_lat_merge(struct homa_lat *dst, const struct homa_lat *src);

/** homa_lat_free() - Release @l's samples; @l is empty afterwards. */
void homa_lat_free(struct homa_lat *l);

/**
 * homa_summary_of() - Exact summary of @n values; reorders @vals (a
 * selection, linear time on average, not a sort). Percentile q is the
 * value at rank ceil(q * n) (1-based). With @n == 0 every field is 0.
 */
void homa_summary_of(double *vals, size_t n, struct homa_summary *out);

/**
 * homa_select_nth() - Reorder @v[0..n) so that v[k] holds the value a sort
 * would put there, no value before it is larger and none after it is
 * smaller (quickselect with a median-of-three pivot). @k >= @n: no-op.
 */
void homa_select_nth(double *v, size_t n, size_t k);

/**
 * homa_lat_summary() - Summary of the completion times (ns) of samples
 * whose size is in [@lo, @hi].
 * Return: 0 or HOMA_ENOMEM.
 */
int homa_lat_summary(const struct homa_lat *l, uint32_t lo, uint32_t hi,
		     struct homa_summary *out);

/**
 * homa_buckets_from_workload() - Up to @nb (1..HOMA_BUCKETS_MAX) buckets
 * of about equal message counts: the upper bounds are the workload's
 * quantiles at 1/nb, 2/nb, ..., 1. Bounds that coincide (a size that
 * alone covers more than 1/nb of the messages) are merged, so fewer
 * buckets may result. Return: 0 or HOMA_EINVAL (@nb out of range).
 */
int homa_buckets_from_workload(const struct homa_workload *w, size_t nb,
			       struct homa_buckets *out);

/**
 * homa_buckets_index() - The bucket @size falls in; sizes above the last
 * bound count in the last bucket.
 */
size_t homa_buckets_index(const struct homa_buckets *b, uint32_t size);

/** homa_buckets_lower() - Smallest size in bucket @i (1 for bucket 0). */
uint32_t homa_buckets_lower(const struct homa_buckets *b, size_t i);

#endif
