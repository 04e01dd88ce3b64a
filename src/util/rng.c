/* SPDX-License-Identifier: MIT */
/**
 * @file rng.c
 * Seeded PRNG: xoshiro256** (Blackman and Vigna) seeded through
 * splitmix64, written from the published algorithm descriptions.
 */
#include <math.h>

#include "util/rng.h"

/** homa_splitmix64() - See rng.h. */
uint64_t homa_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** rotl() - Rotate @x left by @k bits (0 < k < 64). */
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/** homa_rng_seed() - See rng.h. splitmix64 never yields an all-zero state. */
void homa_rng_seed(struct homa_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = homa_splitmix64(&x);
}

/** homa_rng_next() - See rng.h. */
uint64_t homa_rng_next(struct homa_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/** homa_rng_double() - See rng.h. The top 53 bits, scaled by 2^-53. */
double homa_rng_double(struct homa_rng *r)
{
	return (double)(homa_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/** homa_rng_below() - See rng.h. Rejects the biased top slice. */
uint64_t homa_rng_below(struct homa_rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
	uint64_t v;

	do {
		v = homa_rng_next(r);
	} while (v >= limit);
	return v % n;
}

/** homa_rng_chance() - See rng.h. */
int homa_rng_chance(struct homa_rng *r, uint32_t ppm)
{
	if (ppm == 0)
		return 0;
	if (ppm >= 1000000)
		return 1;
	return homa_rng_below(r, 1000000) < ppm;
}

/** homa_rng_exp() - See rng.h. Inverse transform of 1 - unit (never 0). */
double homa_rng_exp(struct homa_rng *r, double mean)
{
	return -mean * log(1.0 - homa_rng_double(r));
}
