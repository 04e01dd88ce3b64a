/* SPDX-License-Identifier: MIT */
/**
 * @file steps.h
 * Step accounting of step-synchronous collective patterns (all-to-all,
 * ring all-reduce, batched lookups): every device computes, then
 * communicates, and the next step starts when every device is done. From
 * the step boundaries and each device's compute end and last message it
 * derives step times, communication time and the idle fraction, the share
 * of device time spent waiting on the network. Used by homa-bench and
 * homa-sim, so both count a step the same way.
 */
#ifndef HOMA_UTIL_STEPS_H
#define HOMA_UTIL_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

/** One device's view of one step (times in ns on one clock). */
struct homa_step_dev {
	uint64_t compute_end_ns; /**< the device finished computing, began sending */
	uint64_t last_msg_ns;    /**< the last message of its step was complete */
};

/** Figures over a run of steps. */
struct homa_step_stats {
	size_t steps;               /**< steps counted */
	double p50_us, p99_us, max_us; /**< step time: start to end */
	double mean_us;             /**< mean step time */
	double comm_us_per_step;    /**< mean over steps and devices of end - compute end */
	double compute_us_per_step; /**< mean over steps and devices of compute end - start */
	double idle_fraction;       /**< comm / (compute + comm), summed over devices and steps */
};

/**
 * homa_step_end() - When a step ended: the later of @barrier_ns (the
 * moment the last device reported it was done) and the last message of
 * any of the @ndev devices in @dev. A step never ends before its last
 * message, even if a barrier clock reads earlier.
 */
uint64_t homa_step_end(uint64_t barrier_ns, const struct homa_step_dev *dev, size_t ndev);

/**
 * homa_step_stats() - Figures of @nsteps steps of @ndev devices.
 * @bound: nsteps + 1 boundaries: bound[s] is when step s started and
 * bound[s + 1] when the barrier after it released.
 * @dev: nsteps x ndev records, step-major (dev[s * ndev + d]).
 * Compute ends are clamped into their step. The caller owns every array.
 * Return: 0, HOMA_EINVAL (NULL array, no steps or devices, a boundary
 * earlier than the one before it), HOMA_ENOMEM.
 */
int homa_step_stats(const uint64_t *bound, const struct homa_step_dev *dev, size_t nsteps,
		    size_t ndev, struct homa_step_stats *out);

/**
 * homa_step_stats_json() - Write @st into the open JSON object @j: steps,
 * step_p50_us, step_p99_us, step_max_us, step_mean_us, comm_us_per_step,
 * compute_us_per_step, idle_fraction.
 */
void homa_step_stats_json(struct homa_json *j, const struct homa_step_stats *st);

#endif
