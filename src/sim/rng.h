/* SPDX-License-Identifier: MIT */
/**
 * @file rng.h
 * Seeded pseudo-random numbers for the simulator: xoshiro256** seeded
 * through splitmix64. Same seed, same sequence, on every platform; no
 * global state (each user owns its generator).
 */
#ifndef HOMA_SIM_RNG_H
#define HOMA_SIM_RNG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Generator state; fill with homa_sim_rng_seed(). */
struct homa_sim_rng {
	uint64_t s[4];
};

/** homa_sim_rng_seed() - Initialize @r from @seed (any value, 0 included). */
void homa_sim_rng_seed(struct homa_sim_rng *r, uint64_t seed);

/** homa_sim_rng_next() - Next 64 uniformly distributed bits. */
uint64_t homa_sim_rng_next(struct homa_sim_rng *r);

/**
 * homa_sim_rng_below() - Uniform integer in [0, @n) without modulo bias.
 * Return: 0 when @n is 0.
 */
uint64_t homa_sim_rng_below(struct homa_sim_rng *r, uint64_t n);

/** homa_sim_rng_unit() - Uniform double in [0, 1) with 53 random bits. */
double homa_sim_rng_unit(struct homa_sim_rng *r);

/**
 * homa_sim_rng_chance() - True with probability @ppm / 1,000,000
 * (0 is never, 1000000 or more is always).
 */
int homa_sim_rng_chance(struct homa_sim_rng *r, uint32_t ppm);

/**
 * homa_sim_rng_exp() - Exponentially distributed value with the given
 * mean (for Poisson arrivals). Return: >= 0.
 */
double homa_sim_rng_exp(struct homa_sim_rng *r, double mean);

/** homa_sim_splitmix64() - One splitmix64 step on @state (for deriving seeds). */
uint64_t homa_sim_splitmix64(uint64_t *state);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_RNG_H */
