/* SPDX-License-Identifier: MIT */
/* Seeded PRNG: xoshiro256** with splitmix64 seeding (public-domain algorithms). */
#include "util/rng.h"

/** splitmix_step() - Advance a splitmix64 state and return its output. */
static uint64_t splitmix_step(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** rotl() - Rotate @x left by @k bits (0 < k < 64). */
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void homa_rng_seed(struct homa_rng *r, uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix_step(&x);
}

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

double homa_rng_double(struct homa_rng *r)
{
	return (double)(homa_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

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
