/* SPDX-License-Identifier: MIT */
/**
 * @file slowdown.h
 * Slowdown (GUIDE section 6): a message's completion time divided by the
 * best time for that size on the same setup when unloaded. The best times
 * come from a calibration run and live in a baseline: a list of
 * (size, best ns) points. Sizes between points are interpolated linearly;
 * below the first point the first point's time is used, above the last
 * the line through the last two points is extended.
 * Baseline file format: one `size best_ns` pair a line, '#' comments.
 */
#ifndef HOMA_UTIL_SLOWDOWN_H
#define HOMA_UTIL_SLOWDOWN_H

#include <stddef.h>
#include <stdint.h>

#include "util/latency.h"

/** Best unloaded time per size. Owns its arrays; see homa_baseline_free(). */
struct homa_baseline {
	uint32_t *size;  /**< ascending, distinct */
	double *best_ns; /**< best (smallest) time seen for size[i] */
	size_t n, cap;
};

/** homa_baseline_init() - Make @b empty. */
void homa_baseline_init(struct homa_baseline *b);

/** homa_baseline_free() - Release @b's arrays; @b is empty afterwards. */
void homa_baseline_free(struct homa_baseline *b);

/**
 * homa_baseline_add() - Record that an RPC of @size took @ns; the point
 * for @size keeps the smallest time seen.
 * Return: 0, HOMA_EINVAL (@ns not positive), HOMA_ENOMEM.
 */
int homa_baseline_add(struct homa_baseline *b, uint32_t size, double ns);

/**
 * homa_baseline_best() - Best time for @size (interpolated, see file
 * comment). Return: ns (> 0), or 0 when @b is empty.
 */
double homa_baseline_best(const struct homa_baseline *b, uint32_t size);

/**
 * homa_slowdown() - @ns divided by the best time for @size.
 * Return: the slowdown, or 0 when @b is empty.
 */
double homa_slowdown(const struct homa_baseline *b, uint32_t size, double ns);

/** homa_baseline_save() - Write @b to @path. Return: 0 or HOMA_EIO. */
int homa_baseline_save(const struct homa_baseline *b, const char *path);

/**
 * homa_baseline_load() - Read @path into @b (replacing its contents).
 * Return: 0, HOMA_EIO (unreadable), HOMA_EINVAL (bad line or no points),
 * HOMA_ENOMEM.
 */
int homa_baseline_load(struct homa_baseline *b, const char *path);

/**
 * homa_slowdown_summary() - Slowdown percentiles of @l's samples whose size
 * is in [@lo, @hi], against @b.
 * Return: 0, HOMA_EINVAL (@b empty), HOMA_ENOMEM.
 */
int homa_slowdown_summary(const struct homa_lat *l, const struct homa_baseline *b,
			  uint32_t lo, uint32_t hi, struct homa_summary *out);

#endif
