/* SPDX-License-Identifier: MIT */
/* Tests for util/latency.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "util/latency.h"

/** Percentiles of 1..1000 follow the nearest-rank rule exactly. */
static void homa_summary_of__nearest_rank(void **state)
{
	double v[1000];
	struct homa_summary s;

	for (int i = 0; i < 1000; i++)
		v[i] = 1000 - i; /* unsorted on purpose */
	homa_summary_of(v, 1000, &s);
	assert_int_equal(s.count, 1000);
	assert_true(s.p50 == 500);
	assert_true(s.p99 == 990);
	assert_true(s.p999 == 999);
	assert_true(s.min == 1 && s.max == 1000);
	assert_true(s.mean == 500.5);
}

/** Tiny and empty inputs. */
static void homa_summary_of__small_sets(void **state)
{
	double one[1] = { 7 };
	double two[2] = { 9, 3 };
	struct homa_summary s;

	homa_summary_of(one, 1, &s);
	assert_true(s.p50 == 7 && s.p99 == 7 && s.p999 == 7);
	homa_summary_of(two, 2, &s);
	assert_true(s.p50 == 3 && s.p99 == 9);
	homa_summary_of(one, 0, &s);
	assert_int_equal(s.count, 0);
	assert_true(s.p99 == 0);
}

/** cmp() - qsort order for the reference sort. */
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/** fill() - Input pattern @kind of @n values (random with few or many
 * distinct values, sorted, reversed, constant, organ pipe). */
static void fill(double *v, int n, int kind, unsigned *seed)
{
	for (int i = 0; i < n; i++) {
		switch (kind) {
		case 0: v[i] = rand_r(seed) % 1000000; break;
		case 1: v[i] = rand_r(seed) % 3; break;
		case 2: v[i] = i; break;
		case 3: v[i] = n - i; break;
		case 4: v[i] = 1.0; break;
		default: v[i] = i < n / 2 ? i : n - i; break;
		}
	}
}

/**
 * Selection gives what a full sort gives, at every rank tried, on inputs
 * that break naive quickselects (duplicates, sorted, constant); the
 * summary's percentiles equal the sorted array's at their ranks.
 */
static void homa_select_nth__matches_sort(void **state)
{
	static double src[4001], v[4001], ref[4001];
	unsigned seed = 7;

	for (int kind = 0; kind < 6; kind++) {
		for (int n = 1; n <= 4001; n += n < 20 ? 1 : 997) {
			size_t bytes = (size_t)n * sizeof(*v);
			struct homa_summary s;

			fill(src, n, kind, &seed);
			memcpy(ref, src, bytes);
			qsort(ref, (size_t)n, sizeof(*ref), cmp);
			for (int k = 0; k < n; k += n < 50 ? 1 : n / 7 + 1) {
				memcpy(v, src, bytes);
				homa_select_nth(v, (size_t)n, (size_t)k);
				assert_true(v[k] == ref[k]);
				for (int i = 0; i < n; i++)
					assert_true(i < k ? v[i] <= v[k] : v[i] >= v[k]);
			}
			memcpy(v, src, bytes);
			homa_summary_of(v, (size_t)n, &s);
			assert_true(s.min == ref[0] && s.max == ref[n - 1]);
			assert_true(s.p50 == ref[(n + 1) / 2 - 1]);
			assert_true(s.p99 == ref[(int)ceil(0.99 * n - 1e-9) - 1]);
			assert_true(s.p999 == ref[(int)ceil(0.999 * n - 1e-9) - 1]);
		}
	}
}

/** Summaries select samples by size; merge appends. */
static void homa_lat_summary__size_filter(void **state)
{
	struct homa_lat a, b;
	struct homa_summary s;

	homa_lat_init(&a);
	homa_lat_init(&b);
	for (int i = 1; i <= 3000; i++)
		assert_int_equal(homa_lat_add(i % 2 ? &a : &b, i % 2 ? 100 : 5000, i), 0);
	assert_int_equal(homa_lat_merge(&a, &b), 0);
	assert_int_equal(a.n, 3000);
	assert_int_equal(homa_lat_summary(&a, 1, 1000, &s), 0);
	assert_int_equal(s.count, 1500);
	assert_true(s.min == 1 && s.max == 2999);
	assert_int_equal(homa_lat_summary(&a, 1001, 10000, &s), 0);
	assert_true(s.min == 2 && s.max == 3000);
	assert_int_equal(homa_lat_summary(&a, 1, UINT32_MAX, &s), 0);
	assert_int_equal(s.count, 3000);
	homa_lat_free(&a);
	homa_lat_free(&b);
	assert_int_equal(a.n, 0);
}

/** Uniform 1..100: ten buckets with bounds 10, 20, ... 100. */
static void homa_buckets_from_workload__uniform(void **state)
{
	struct homa_workload w;
	struct homa_buckets b;

	assert_int_equal(homa_workload_range(1, 100, &w), 0);
	assert_int_equal(homa_buckets_from_workload(&w, 10, &b), 0);
	assert_int_equal(b.n, 10);
	for (size_t i = 0; i < 10; i++)
		assert_int_equal(b.upper[i], 10 * (i + 1));
	assert_int_equal(homa_buckets_index(&b, 1), 0);
	assert_int_equal(homa_buckets_index(&b, 10), 0);
	assert_int_equal(homa_buckets_index(&b, 11), 1);
	assert_int_equal(homa_buckets_index(&b, 100), 9);
	assert_int_equal(homa_buckets_index(&b, 5000), 9);
	assert_int_equal(homa_buckets_lower(&b, 0), 1);
	assert_int_equal(homa_buckets_lower(&b, 3), 31);
	assert_int_equal(homa_buckets_from_workload(&w, 0, &b), -1);
}

/** A heavy size merges buckets; the W1 paper workload makes fewer than 10. */
static void homa_buckets_from_workload__merges_repeats(void **state)
{
	struct homa_workload w;
	struct homa_buckets b;

	assert_int_equal(homa_workload_fixed(64, &w), 0);
	assert_int_equal(homa_buckets_from_workload(&w, 10, &b), 0);
	assert_int_equal(b.n, 1);
	assert_int_equal(b.upper[0], 64);
	homa_workload_free(&w);

	assert_int_equal(homa_workload_parse("w4", HOMA_TEST_WORKLOAD_DIR, &w, NULL, 0), 0);
	assert_int_equal(homa_buckets_from_workload(&w, 10, &b), 0);
	assert_true(b.n >= 2 && b.n <= 10);
	for (size_t i = 1; i < b.n; i++)
		assert_true(b.upper[i] > b.upper[i - 1]);
	assert_int_equal(b.upper[b.n - 1], w.hi);
	/* Each bound is a decile: the CDF crosses some k/10 exactly there. */
	for (size_t i = 0; i + 1 < b.n; i++) {
		double at = homa_workload_cdf_at(&w, b.upper[i]);
		double below = homa_workload_cdf_at(&w, b.upper[i] - 1);
		int k = (int)ceil(below * 10 + 1e-9);
		assert_true(below < k / 10.0 && at >= k / 10.0 - 1e-9);
	}
	homa_workload_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_summary_of__nearest_rank),
		cmocka_unit_test(homa_summary_of__small_sets),
		cmocka_unit_test(homa_select_nth__matches_sort),
		cmocka_unit_test(homa_lat_summary__size_filter),
		cmocka_unit_test(homa_buckets_from_workload__uniform),
		cmocka_unit_test(homa_buckets_from_workload__merges_repeats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
