/* SPDX-License-Identifier: MIT */
/**
 * @file metrics_int.h
 * Pieces of the Prometheus renderer shared by its files (private).
 */
#ifndef HOMA_OBS_METRICS_INT_H
#define HOMA_OBS_METRICS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/obs.h"
#include "textbuf.h"

/** homa_metrics_header() - Write the HELP and TYPE lines of family @name. */
void homa_metrics_header(struct homa_textbuf *tb, const char *name,
			 const char *help, const char *type);

/**
 * homa_metrics_labels() - Write a label set: endpoint="@endpoint" (if
 * not NULL) and @key="@value" (if @key is not NULL), in braces; nothing
 * when both are absent.
 */
void homa_metrics_labels(struct homa_textbuf *tb, const char *endpoint,
			 const char *key, const char *value);

/** homa_metrics_histograms() - Write both log2 histograms of every source. */
void homa_metrics_histograms(struct homa_textbuf *tb,
			     const struct homa_metrics_source *src, size_t nsrc);

/**
 * homa_metrics_extras() - Write the extra values, one family per name.
 * Return: 0, or HOMA_EINVAL (bad name, unknown kind, one name with two kinds).
 */
int homa_metrics_extras(struct homa_textbuf *tb,
			const struct homa_metric_value *extra, size_t n);

/**
 * homa_metrics_builtin_taken() - True if the full name @name (homa_...)
 * is, or is a series of, a family the stats renderer writes.
 */
bool homa_metrics_builtin_taken(const char *name);

#endif /* HOMA_OBS_METRICS_INT_H */
