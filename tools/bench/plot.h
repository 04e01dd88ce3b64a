/* SPDX-License-Identifier: MIT */
/**
 * @file plot.h
 * Plots with gnuplot: one line per arm of a value (P99 slowdown or
 * latency) against message size, log-scaled x.
 */
#ifndef HOMA_BENCH_PLOT_H
#define HOMA_BENCH_PLOT_H

#include <stddef.h>
#include <stdint.h>

/** One line of a plot. */
struct bench_series {
	const char *label;
	size_t n;
	const uint32_t *x;  /**< message sizes (bytes) */
	const double *y;
};

/**
 * bench_plot() - Draw @n @series into the PNG @path.
 * Return: 0, HOMA_EIO (gnuplot missing or failed; message on stderr).
 */
int bench_plot(const char *path, const char *title, const char *ylabel,
	       const struct bench_series *series, size_t n);

#endif
