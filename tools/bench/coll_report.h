/* SPDX-License-Identifier: MIT */
/**
 * @file coll_report.h
 * Output of the collective figures: a text line (the JSON fields are
 * homa_step_stats_json()'s).
 */
#ifndef HOMA_BENCH_COLL_REPORT_H
#define HOMA_BENCH_COLL_REPORT_H

#include <stdio.h>

#include "util/json.h"
#include "util/steps.h"

/** coll_stats_print() - One line of @st labelled @what on @f. */
void coll_stats_print(FILE *f, const char *what, const struct homa_step_stats *st);

#endif
