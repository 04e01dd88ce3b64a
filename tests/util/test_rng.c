/* SPDX-License-Identifier: MIT */
/* Tests for util/rng.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/rng.h"

/** Same seed, same sequence; different seeds, different sequences. */
static void homa_rng_seed__deterministic(void **state)
{
	struct homa_rng a, b, c;

	homa_rng_seed(&a, 42);
	homa_rng_seed(&b, 42);
	homa_rng_seed(&c, 43);
	int same_c = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t x = homa_rng_next(&a);
		assert_int_equal(x, homa_rng_next(&b));
		same_c += x == homa_rng_next(&c);
	}
	assert_true(same_c < 2);
}

/** Doubles stay in [0, 1) and average near 0.5. */
static void homa_rng_double__range_and_mean(void **state)
{
	struct homa_rng r;
	double sum = 0;

	homa_rng_seed(&r, 0);
	for (int i = 0; i < 100000; i++) {
		double d = homa_rng_double(&r);
		assert_true(d >= 0 && d < 1);
		sum += d;
	}
	assert_true(sum / 100000 > 0.49 && sum / 100000 < 0.51);
}

/** Every value below n appears, nothing at or above n; n = 0 gives 0. */
static void homa_rng_below__covers_range(void **state)
{
	struct homa_rng r;
	int seen[7] = { 0 };

	homa_rng_seed(&r, 7);
	for (int i = 0; i < 7000; i++) {
		uint64_t v = homa_rng_below(&r, 7);
		assert_true(v < 7);
		seen[v]++;
	}
	for (int i = 0; i < 7; i++)
		assert_true(seen[i] > 800 && seen[i] < 1200);
	assert_int_equal(homa_rng_below(&r, 0), 0);
	assert_int_equal(homa_rng_below(&r, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_rng_seed__deterministic),
		cmocka_unit_test(homa_rng_double__range_and_mean),
		cmocka_unit_test(homa_rng_below__covers_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
