/* SPDX-License-Identifier: MIT */
/**
 * @file poisson.h
 * Open-loop Poisson arrivals: exponentially distributed gaps with a given
 * mean rate, drawn from a seeded homa_rng, as absolute times in ns.
 */
#ifndef HOMA_UTIL_POISSON_H
#define HOMA_UTIL_POISSON_H

#include <stdint.h>

#include "util/rng.h"

/** Arrival generator state. Plain value, no resources. */
struct homa_poisson {
	struct homa_rng rng;
	double mean_gap_ns; /**< 1e9 / rate */
	double next_ns;     /**< time of the next arrival */
};

/**
 * homa_poisson_init() - Arrivals at @rate_per_sec on average, the first one
 * a random gap after @start_ns.
 * Return: 0, or HOMA_EINVAL if @rate_per_sec is not positive and finite.
 */
int homa_poisson_init(struct homa_poisson *p, double rate_per_sec, uint64_t seed,
		      uint64_t start_ns);

/** homa_poisson_peek() - Time of the next arrival (ns), not consumed. */
uint64_t homa_poisson_peek(const struct homa_poisson *p);

/** homa_poisson_next() - Consume the next arrival and return its time (ns). */
uint64_t homa_poisson_next(struct homa_poisson *p);

/**
 * homa_poisson_rate_for_load() - Arrival rate (per second) that makes
 * @gbps of traffic when each arrival carries @bytes_per_arrival bytes.
 * Return: the rate, or 0 if an argument is not positive.
 */
double homa_poisson_rate_for_load(double gbps, double bytes_per_arrival);

#endif
