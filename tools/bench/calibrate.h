/* SPDX-License-Identifier: MIT */
/**
 * @file calibrate.h
 * Unloaded best times: RPCs of each size one at a time, keeping the
 * fastest, as the denominator of slowdown.
 */
#ifndef HOMA_BENCH_CALIBRATE_H
#define HOMA_BENCH_CALIBRATE_H

#include "bench.h"

/** Most sizes one calibration measures. */
#define BENCH_CALIB_MAX (HOMA_BUCKETS_MAX + 1)

/**
 * bench_calib_sizes() - The sizes to calibrate for @bk: the smallest size
 * of @w and every bucket's upper bound. Return: how many (into @sizes).
 */
size_t bench_calib_sizes(const struct homa_workload *w, const struct homa_buckets *bk,
			 uint32_t sizes[BENCH_CALIB_MAX]);

/**
 * bench_calibrate() - For each of @n @sizes, run up to @count RPCs one at
 * a time (at most 0.5 s per size) through @ops and keep the fastest in
 * @out (one point per size; RPC time to the first server, response
 * @response bytes). Return: 0 or a negative error.
 */
int bench_calibrate(const struct bench_client_ops *ops, const struct bench_tr_cfg *cfg,
		    const uint32_t *sizes, size_t n, int count, uint32_t response,
		    struct homa_baseline *out);

#endif
