/* SPDX-License-Identifier: MIT */
/* Output of the collective figures (coll_report.h). */
#include "coll_report.h"

void coll_stats_print(FILE *f, const char *what, const struct homa_step_stats *st)
{
	fprintf(f, "%s: %zu steps, step P50 %.0f us, P99 %.0f us, max %.0f us; comm %.0f us per "
		"step, idle fraction %.3f\n", what, st->steps, st->p50_us, st->p99_us, st->max_us,
		st->comm_us_per_step, st->idle_fraction);
}
