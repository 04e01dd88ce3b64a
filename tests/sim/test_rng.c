/* SPDX-License-Identifier: MIT */
/** @file test_rng.c Tests of sim/rng.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sim/rng.h"

/** splitmix64 from state 0 gives the published first value. */
static void splitmix64__reference_value(void **state)
{
	uint64_t s = 0;

	(void)state;
	assert_true(homa_sim_splitmix64(&s) == 0xe220a8397b1dcdafull);
	assert_true(homa_sim_splitmix64(&s) == 0x6e789e6aa1b965f4ull);
}

/** The same seed gives the same sequence; another seed another one. */
static void rng_seed__deterministic(void **state)
{
	struct homa_sim_rng a, b, c;
	int i, differ = 0;

	(void)state;
	homa_sim_rng_seed(&a, 42);
	homa_sim_rng_seed(&b, 42);
	homa_sim_rng_seed(&c, 43);
	for (i = 0; i < 1000; i++) {
		uint64_t x = homa_sim_rng_next(&a);

		assert_true(x == homa_sim_rng_next(&b));
		differ += x != homa_sim_rng_next(&c);
	}
	assert_true(differ > 990);
}

/** below() stays in range and fills every bucket about evenly. */
static void rng_below__uniform(void **state)
{
	struct homa_sim_rng r;
	int counts[10] = {0}, i;

	(void)state;
	homa_sim_rng_seed(&r, 7);
	for (i = 0; i < 100000; i++) {
		uint64_t x = homa_sim_rng_below(&r, 10);

		assert_true(x < 10);
		counts[x]++;
	}
	for (i = 0; i < 10; i++)
		assert_in_range(counts[i], 9400, 10600);
	assert_true(homa_sim_rng_below(&r, 0) == 0);
}

/** chance() hits at the requested rate; 0 and 1e6 are exact. */
static void rng_chance__rate(void **state)
{
	struct homa_sim_rng r;
	int i, hits = 0;

	(void)state;
	homa_sim_rng_seed(&r, 9);
	for (i = 0; i < 200000; i++)
		hits += homa_sim_rng_chance(&r, 50000);
	assert_in_range(hits, 9400, 10600);
	for (i = 0; i < 1000; i++) {
		assert_false(homa_sim_rng_chance(&r, 0));
		assert_true(homa_sim_rng_chance(&r, 1000000));
	}
}

/** unit() is in [0, 1) and exp() has the requested mean. */
static void rng_unit_exp__ranges(void **state)
{
	struct homa_sim_rng r;
	double sum = 0;
	int i;

	(void)state;
	homa_sim_rng_seed(&r, 11);
	for (i = 0; i < 100000; i++) {
		double u = homa_sim_rng_unit(&r);

		assert_true(u >= 0.0 && u < 1.0);
		sum += homa_sim_rng_exp(&r, 100.0);
	}
	assert_true(sum / 100000 > 98.0 && sum / 100000 < 102.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(splitmix64__reference_value),
		cmocka_unit_test(rng_seed__deterministic),
		cmocka_unit_test(rng_below__uniform),
		cmocka_unit_test(rng_chance__rate),
		cmocka_unit_test(rng_unit_exp__ranges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
