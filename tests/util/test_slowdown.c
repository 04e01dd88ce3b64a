/* SPDX-License-Identifier: MIT */
/* Tests for util/slowdown.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "homa/errors.h"
#include "util/slowdown.h"

/** Points keep their minimum; lookups interpolate and extrapolate. */
static void homa_baseline_best__interpolates(void **state)
{
	struct homa_baseline b;

	homa_baseline_init(&b);
	assert_true(homa_baseline_best(&b, 10) == 0);
	assert_int_equal(homa_baseline_add(&b, 1000, 30000), 0);
	assert_int_equal(homa_baseline_add(&b, 100, 12000), 0);
	assert_int_equal(homa_baseline_add(&b, 100, 10000), 0);
	assert_int_equal(homa_baseline_add(&b, 100, 11000), 0);
	assert_int_equal(homa_baseline_add(&b, 100, 0), HOMA_EINVAL);
	assert_int_equal(b.n, 2);
	assert_true(homa_baseline_best(&b, 100) == 10000);
	assert_true(homa_baseline_best(&b, 50) == 10000);
	assert_true(homa_baseline_best(&b, 550) == 20000);
	assert_true(homa_baseline_best(&b, 1900) == 50000);
	assert_true(homa_slowdown(&b, 550, 60000) == 3.0);
	homa_baseline_free(&b);
}

/** Save then load gives the same points; junk files are rejected. */
static void homa_baseline_save__round_trip(void **state)
{
	struct homa_baseline b, c;
	char path[] = "/tmp/homa_bl_......";

	memset(path + sizeof(path) - 7, 'X', 6); /* mkstemp() template */
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	homa_baseline_init(&b);
	homa_baseline_init(&c);
	assert_int_equal(homa_baseline_add(&b, 8, 9000.5), 0);
	assert_int_equal(homa_baseline_add(&b, 1000000, 800000), 0);
	assert_int_equal(homa_baseline_save(&b, path), 0);
	assert_int_equal(homa_baseline_load(&c, path), 0);
	assert_int_equal(c.n, 2);
	assert_true(c.size[1] == 1000000 && c.best_ns[0] == 9000.5);
	FILE *f = fopen(path, "w");
	fputs("100 abc\n", f);
	fclose(f);
	assert_int_equal(homa_baseline_load(&c, path), HOMA_EINVAL);
	assert_int_equal(c.n, 0);
	unlink(path);
	assert_int_equal(homa_baseline_load(&c, path), HOMA_EIO);
	homa_baseline_free(&b);
}

/** Slowdown percentiles over a size range. */
static void homa_slowdown_summary__by_size(void **state)
{
	struct homa_baseline b;
	struct homa_lat l;
	struct homa_summary s;

	homa_baseline_init(&b);
	homa_lat_init(&l);
	assert_int_equal(homa_slowdown_summary(&l, &b, 1, 10, &s), HOMA_EINVAL);
	assert_int_equal(homa_baseline_add(&b, 100, 1000), 0);
	assert_int_equal(homa_baseline_add(&b, 10000, 100000), 0);
	for (int i = 1; i <= 100; i++) {
		assert_int_equal(homa_lat_add(&l, 100, 1000 * i), 0);
		assert_int_equal(homa_lat_add(&l, 10000, 100000), 0);
	}
	assert_int_equal(homa_slowdown_summary(&l, &b, 1, 100, &s), 0);
	assert_int_equal(s.count, 100);
	assert_true(s.p50 == 50 && s.p99 == 99 && s.min == 1);
	assert_int_equal(homa_slowdown_summary(&l, &b, 101, 20000, &s), 0);
	assert_true(s.p99 == 1.0);
	homa_lat_free(&l);
	homa_baseline_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_baseline_best__interpolates),
		cmocka_unit_test(homa_baseline_save__round_trip),
		cmocka_unit_test(homa_slowdown_summary__by_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
