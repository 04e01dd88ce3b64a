/* SPDX-License-Identifier: MIT */
/**
 * @file rng.c
 * xoshiro256** (Blackman and Vigna) seeded with splitmix64, written from the
 * published algorithm description.
 */
#include <math.h>

#include "sim/rng.h"

/** homa_sim_splitmix64() - See rng.h. */
uint64_t homa_sim_splitmix64(uint64_t *state)
{
	uint64_t z;

	*state += 0x9e3779b97f4a7c15ull;
	z = *state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/** homa_sim_rng_seed() - See rng.h. splitmix64 never yields an all-zero state. */
void homa_sim_rng_seed(struct homa_sim_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = homa_sim_splitmix64(&seed);
}

/** rotl() - Rotate @x left by @k bits (0 < k < 64). */
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** homa_sim_rng_next() - See rng.h. */
uint64_t homa_sim_rng_next(struct homa_sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/** homa_sim_rng_below() - See rng.h. Rejects the biased top slice. */
uint64_t homa_sim_rng_below(struct homa_sim_rng *r, uint64_t n)
{
	uint64_t limit, x;

	if (n == 0)
		return 0;
	limit = UINT64_MAX - UINT64_MAX % n;
	do {
		x = homa_sim_rng_next(r);
	} while (x >= limit);
	return x % n;
}

/** homa_sim_rng_unit() - See rng.h. */
double homa_sim_rng_unit(struct homa_sim_rng *r)
{
	return (double)(homa_sim_rng_next(r) >> 11) * 0x1.0p-53;
}

/** homa_sim_rng_chance() - See rng.h. */
int homa_sim_rng_chance(struct homa_sim_rng *r, uint32_t ppm)
{
	if (ppm == 0)
		return 0;
	if (ppm >= 1000000)
		return 1;
	return homa_sim_rng_below(r, 1000000) < ppm;
}

/** homa_sim_rng_exp() - See rng.h. Inverse transform of 1 - unit (never 0). */
double homa_sim_rng_exp(struct homa_sim_rng *r, double mean)
{
	return -mean * log(1.0 - homa_sim_rng_unit(r));
}
