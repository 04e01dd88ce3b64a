/* SPDX-License-Identifier: MIT */
/* Output of the collective figures (coll_report.h). */
#include "coll_report.h"

void coll_stats_json(struct homa_json *j, const struct homa_step_stats *st)
{
	homa_json_kv_num(j, "steps", (double)st->steps);
	homa_json_kv_num(j, "step_p50_us", st->p50_us);
	homa_json_kv_num(j, "step_p99_us", st->p99_us);
	homa_json_kv_num(j, "step_max_us", st->max_us);
	homa_json_kv_num(j, "step_mean_us", st->mean_us);
	homa_json_kv_num(j, "comm_us_per_step", st->comm_us_per_step);
	homa_json_kv_num(j, "compute_us_per_step", st->compute_us_per_step);
	homa_json_kv_num(j, "idle_fraction", st->idle_fraction);
}

void coll_stats_print(FILE *f, const char *what, const struct homa_step_stats *st)
{
	fprintf(f, "%s: %zu steps, step P50 %.0f us, P99 %.0f us, max %.0f us; comm %.0f us per "
		"step, idle fraction %.3f\n", what, st->steps, st->p50_us, st->p99_us, st->max_us,
		st->comm_us_per_step, st->idle_fraction);
}
