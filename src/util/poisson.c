/* SPDX-License-Identifier: MIT */
/* Poisson arrival times from a seeded generator. */
#include "util/poisson.h"

#include <math.h>

#include "homa/errors.h"

/** gap() - One exponentially distributed gap in ns. */
static double gap(struct homa_poisson *p)
{
	/* 1 - u is in (0, 1], so the log is finite. */
	return -log(1.0 - homa_rng_double(&p->rng)) * p->mean_gap_ns;
}

int homa_poisson_init(struct homa_poisson *p, double rate_per_sec, uint64_t seed,
		      uint64_t start_ns)
{
	if (!(rate_per_sec > 0) || isinf(rate_per_sec))
		return HOMA_EINVAL;
	homa_rng_seed(&p->rng, seed);
	p->mean_gap_ns = 1e9 / rate_per_sec;
	p->next_ns = (double)start_ns + gap(p);
	return 0;
}

uint64_t homa_poisson_peek(const struct homa_poisson *p)
{
	return (uint64_t)p->next_ns;
}

uint64_t homa_poisson_next(struct homa_poisson *p)
{
	uint64_t t = (uint64_t)p->next_ns;

	p->next_ns += gap(p);
	return t;
}

double homa_poisson_rate_for_load(double gbps, double bytes_per_arrival)
{
	if (!(gbps > 0) || !(bytes_per_arrival > 0))
		return 0;
	return gbps * 1e9 / (8.0 * bytes_per_arrival);
}
