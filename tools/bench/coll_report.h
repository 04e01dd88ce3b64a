/* SPDX-License-Identifier: MIT */
/**
 * @file coll_report.h
 * Output of the collective figures: a JSON object's fields and a text line.
 */
#ifndef HOMA_BENCH_COLL_REPORT_H
#define HOMA_BENCH_COLL_REPORT_H

#include <stdio.h>

#include "util/json.h"
#include "util/steps.h"

/**
 * coll_stats_json() - Write @st into the open JSON object @j: steps,
 * step_p50_us, step_p99_us, step_max_us, step_mean_us, comm_us_per_step,
 * compute_us_per_step, idle_fraction.
 */
void coll_stats_json(struct homa_json *j, const struct homa_step_stats *st);

/** coll_stats_print() - One line of @st labelled @what on @f. */
void coll_stats_print(FILE *f, const char *what, const struct homa_step_stats *st);

#endif
