/* SPDX-License-Identifier: MIT */
/**
 * @file rng.h
 * A small seeded pseudo-random generator (xoshiro256** state, seeded
 * through splitmix64). Deterministic for a given seed on every platform,
 * so a benchmark or a simulation run can be repeated exactly. The one
 * generator of the project: homa-bench, homa-sim and the simulated
 * network (src/sim) all draw from it, each user owning its state.
 */
#ifndef HOMA_UTIL_RNG_H
#define HOMA_UTIL_RNG_H

#include <stdint.h>

/** Generator state; fill with homa_rng_seed(). Plain value, no resources. */
struct homa_rng {
	uint64_t s[4];
};

/** homa_rng_seed() - Initialize @r from @seed (any value, 0 included). */
void homa_rng_seed(struct homa_rng *r, uint64_t seed);

/** homa_rng_next() - Next 64 uniformly distributed bits. */
uint64_t homa_rng_next(struct homa_rng *r);

/** homa_rng_double() - Uniform double in [0, 1) with 53 random bits. */
double homa_rng_double(struct homa_rng *r);

/**
 * homa_rng_below() - Uniform integer in [0, @n). Returns 0 when @n is 0.
 * Unbiased (rejection of the short last interval).
 */
uint64_t homa_rng_below(struct homa_rng *r, uint64_t n);

/**
 * homa_rng_chance() - True with probability @ppm / 1,000,000 (0 is never,
 * 1000000 or more is always; draws nothing in those two cases).
 */
int homa_rng_chance(struct homa_rng *r, uint32_t ppm);

/**
 * homa_rng_exp() - Exponentially distributed value with the given mean
 * (inter-arrival times of a Poisson process). Return: >= 0.
 */
double homa_rng_exp(struct homa_rng *r, double mean);

/**
 * homa_splitmix64() - One splitmix64 step on @state: advances it and
 * returns the output (the seeding function; also for deriving seeds).
 */
uint64_t homa_splitmix64(uint64_t *state);

#endif
