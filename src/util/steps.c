/* SPDX-License-Identifier: MIT */
/* Step accounting of step-synchronous collective patterns (util/steps.h). */
#include "util/steps.h"

#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"
#include "util/latency.h"

uint64_t homa_step_end(uint64_t barrier_ns, const struct homa_step_dev *dev, size_t ndev)
{
	uint64_t end = barrier_ns;

	for (size_t d = 0; d < ndev; d++)
		if (dev[d].last_msg_ns > end)
			end = dev[d].last_msg_ns;
	return end;
}

/** clamp() - @v moved into [@lo, @hi]. */
static uint64_t clamp(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int homa_step_stats(const uint64_t *bound, const struct homa_step_dev *dev, size_t nsteps,
		    size_t ndev, struct homa_step_stats *out)
{
	double comm = 0, compute = 0;
	struct homa_summary sum;

	if (!bound || !dev || !out || nsteps == 0 || ndev == 0)
		return HOMA_EINVAL;
	for (size_t s = 0; s < nsteps; s++)
		if (bound[s + 1] < bound[s])
			return HOMA_EINVAL;
	double *us = malloc(nsteps * sizeof(*us));
	if (!us)
		return HOMA_ENOMEM;
	for (size_t s = 0; s < nsteps; s++) {
		const struct homa_step_dev *row = dev + s * ndev;
		uint64_t end = homa_step_end(bound[s + 1], row, ndev);

		us[s] = (double)(end - bound[s]) / 1000;
		for (size_t d = 0; d < ndev; d++) {
			uint64_t ce = clamp(row[d].compute_end_ns, bound[s], end);
			comm += (double)(end - ce);
			compute += (double)(ce - bound[s]);
		}
	}
	memset(out, 0, sizeof(*out));
	out->steps = nsteps;
	out->comm_us_per_step = comm / 1000 / (double)(nsteps * ndev);
	out->compute_us_per_step = compute / 1000 / (double)(nsteps * ndev);
	out->idle_fraction = comm + compute > 0 ? comm / (comm + compute) : 0;
	homa_summary_of(us, nsteps, &sum);
	free(us);
	out->p50_us = sum.p50;
	out->p99_us = sum.p99;
	out->max_us = sum.max;
	out->mean_us = sum.mean;
	return 0;
}

void homa_step_stats_json(struct homa_json *j, const struct homa_step_stats *st)
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
