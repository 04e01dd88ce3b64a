/* SPDX-License-Identifier: MIT */
/* Tests for util/poisson.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "util/poisson.h"

/** Mean gap matches the rate; gaps look exponential (CV near 1). */
static void homa_poisson_next__mean_and_spread(void **state)
{
	struct homa_poisson p;
	const int n = 200000;
	double sum = 0, sq = 0;

	assert_int_equal(homa_poisson_init(&p, 100000, 5, 1000), 0);
	uint64_t prev = 1000;
	for (int i = 0; i < n; i++) {
		assert_true(homa_poisson_peek(&p) >= prev);
		uint64_t t = homa_poisson_next(&p);
		double g = (double)(t - prev);
		sum += g;
		sq += g * g;
		prev = t;
	}
	double mean = sum / n;
	double sd = sqrt(sq / n - mean * mean);
	assert_true(mean > 9800 && mean < 10200);
	assert_true(sd / mean > 0.97 && sd / mean < 1.03);
}

/** Same seed gives the same arrivals; bad rates are refused. */
static void homa_poisson_init__seeded_and_checked(void **state)
{
	struct homa_poisson a, b;

	assert_int_equal(homa_poisson_init(&a, 1000, 9, 0), 0);
	assert_int_equal(homa_poisson_init(&b, 1000, 9, 0), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(homa_poisson_next(&a), homa_poisson_next(&b));
	assert_int_equal(homa_poisson_init(&a, 0, 9, 0), HOMA_EINVAL);
	assert_int_equal(homa_poisson_init(&a, -1, 9, 0), HOMA_EINVAL);
	assert_int_equal(homa_poisson_init(&a, INFINITY, 9, 0), HOMA_EINVAL);
	assert_int_equal(homa_poisson_init(&a, NAN, 9, 0), HOMA_EINVAL);
}

/** 8 Gbps of 1000-byte arrivals is 1M arrivals per second. */
static void homa_poisson_rate_for_load__arith(void **state)
{
	assert_true(fabs(homa_poisson_rate_for_load(8, 1000) - 1e6) < 1e-6);
	assert_true(homa_poisson_rate_for_load(0, 1000) == 0);
	assert_true(homa_poisson_rate_for_load(1, 0) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_poisson_next__mean_and_spread),
		cmocka_unit_test(homa_poisson_init__seeded_and_checked),
		cmocka_unit_test(homa_poisson_rate_for_load__arith),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
