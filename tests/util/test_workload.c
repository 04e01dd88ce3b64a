/* SPDX-License-Identifier: MIT */
/* Tests for util/workload.c. */
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
#include "util/workload.h"

/** write_tmp() - Write @text to a fresh temporary file; returns its path. */
static char *write_tmp(const char *text)
{
	static char path[64];

	snprintf(path, sizeof(path), "/tmp/homa_wl_......");
	memset(path + strlen(path) - 6, 'X', 6); /* mkstemp() template */
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

/** A two-size file: CDF, mean, quantiles and sampled frequencies. */
static void homa_workload_load_file__cdf_and_mean(void **state)
{
	struct homa_workload w;
	char *p = write_tmp("# comment\n100 3\n\n1000 1\n");

	assert_int_equal(homa_workload_load_file(p, &w, NULL, 0), 0);
	unlink(p);
	assert_int_equal(w.n, 2);
	assert_true(w.cdf[0] > 0.749 && w.cdf[0] < 0.751);
	assert_true(w.mean > 324.9 && w.mean < 325.1);
	assert_int_equal(homa_workload_quantile(&w, 0.5), 100);
	assert_int_equal(homa_workload_quantile(&w, 0.75), 100);
	assert_int_equal(homa_workload_quantile(&w, 0.76), 1000);
	assert_int_equal(homa_workload_quantile(&w, 1.0), 1000);
	assert_true(homa_workload_cdf_at(&w, 99) == 0);
	assert_true(homa_workload_cdf_at(&w, 500) > 0.74);
	assert_true(homa_workload_cdf_at(&w, 1000) == 1);

	struct homa_rng r;
	int small = 0;
	homa_rng_seed(&r, 1);
	for (int i = 0; i < 40000; i++) {
		uint32_t s = homa_workload_sample(&w, &r);
		assert_true(s == 100 || s == 1000);
		small += s == 100;
	}
	assert_true(small > 29400 && small < 30600);
	homa_workload_free(&w);
}

/** Unsorted sizes without weights, repeated sizes merged. */
static void homa_workload_load_file__plain_sizes(void **state)
{
	struct homa_workload w;
	char *p = write_tmp("300\n100\n300\n200\n");

	assert_int_equal(homa_workload_load_file(p, &w, NULL, 0), 0);
	unlink(p);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.sizes[0], 100);
	assert_int_equal(w.sizes[2], 300);
	assert_true(w.cdf[2] == 1.0);
	assert_true(w.mean > 224.9 && w.mean < 225.1);
	homa_workload_free(&w);
}

/** Bad lines, zero total weight and missing files are errors with text. */
static void homa_workload_load_file__errors(void **state)
{
	struct homa_workload w;
	char err[200] = "";
	char *p = write_tmp("100 1\nabc 2\n");

	assert_int_equal(homa_workload_load_file(p, &w, err, sizeof(err)), HOMA_EINVAL);
	assert_non_null(strstr(err, "line 2"));
	unlink(p);
	p = write_tmp("100 0\n200 0\n");
	assert_int_equal(homa_workload_load_file(p, &w, err, sizeof(err)), HOMA_EINVAL);
	unlink(p);
	p = write_tmp("0 1\n");
	assert_int_equal(homa_workload_load_file(p, &w, NULL, 0), HOMA_EINVAL);
	unlink(p);
	p = write_tmp("100 1 7\n");
	assert_int_equal(homa_workload_load_file(p, &w, NULL, 0), HOMA_EINVAL);
	unlink(p);
	assert_int_equal(homa_workload_load_file("/nonexistent/w", &w, err, sizeof(err)),
			 HOMA_EIO);
}

/** The five paper workloads load and have the expected shapes. */
static void homa_workload_parse__paper_workloads(void **state)
{
	const char *names[] = { "w1", "w2", "w3", "w4", "w5" };
	double prev_mean = 0;

	for (int i = 0; i < 5; i++) {
		struct homa_workload w;
		char err[200];
		assert_int_equal(homa_workload_parse(names[i], HOMA_TEST_WORKLOAD_DIR, &w,
						     err, sizeof(err)), 0);
		assert_string_equal(w.name, names[i]);
		assert_true(w.n > 100);
		assert_true(w.mean > prev_mean); /* W1..W5 get heavier */
		prev_mean = w.mean;
		homa_workload_free(&w);
	}
}

/** Fixed sizes, suffixes, ranges, file: and rejects. */
static void homa_workload_parse__specs(void **state)
{
	struct homa_workload w;
	struct homa_rng r;

	homa_rng_seed(&r, 3);
	assert_int_equal(homa_workload_parse("500K", NULL, &w, NULL, 0), 0);
	assert_int_equal(homa_workload_sample(&w, &r), 500000);
	assert_true(w.mean == 500000);
	homa_workload_free(&w);

	assert_int_equal(homa_workload_parse("range:100-1K", NULL, &w, NULL, 0), 0);
	assert_int_equal(w.kind, HOMA_WORKLOAD_RANGE);
	for (int i = 0; i < 1000; i++) {
		uint32_t s = homa_workload_sample(&w, &r);
		assert_true(s >= 100 && s <= 1000);
	}
	assert_true(w.mean == 550);
	assert_int_equal(homa_workload_quantile(&w, 1.0), 1000);
	assert_int_equal(homa_workload_quantile(&w, 0.0), 100);
	homa_workload_free(&w);

	char err[200] = "";
	assert_int_equal(homa_workload_parse("w9", NULL, &w, err, sizeof(err)), HOMA_EINVAL);
	assert_non_null(strstr(err, "w1..w5"));
	assert_int_equal(homa_workload_parse("range:9-3", NULL, &w, NULL, 0), HOMA_EINVAL);
	assert_int_equal(homa_workload_parse("0", NULL, &w, NULL, 0), HOMA_EINVAL);
	assert_int_equal(homa_workload_parse("", NULL, &w, NULL, 0), HOMA_EINVAL);
	assert_int_equal(homa_workload_parse("file:/nonexistent", NULL, &w, NULL, 0), HOMA_EIO);
}

/** Size parsing: suffixes and limits. */
static void homa_parse_size__suffixes(void **state)
{
	uint32_t v;

	assert_int_equal(homa_parse_size("64Ki", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(homa_parse_size("1.5M", &v), 0);
	assert_int_equal(v, 1500000);
	assert_int_equal(homa_parse_size("3G", &v), HOMA_EINVAL);
	assert_int_equal(homa_parse_size("-5", &v), HOMA_EINVAL);
	assert_int_equal(homa_parse_size("1.5", &v), HOMA_EINVAL);
	assert_int_equal(homa_parse_size("3000M", &v), HOMA_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_workload_load_file__cdf_and_mean),
		cmocka_unit_test(homa_workload_load_file__plain_sizes),
		cmocka_unit_test(homa_workload_load_file__errors),
		cmocka_unit_test(homa_workload_parse__paper_workloads),
		cmocka_unit_test(homa_workload_parse__specs),
		cmocka_unit_test(homa_parse_size__suffixes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
