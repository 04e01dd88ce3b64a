/* SPDX-License-Identifier: MIT */
/* Tests for tools/bench/report.c: figures from a synthetic run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report.h"

/** make_run() - 1000 RPCs of 100 B at 10..10000 ns and 100 of 1 MB at 1 ms. */
static void make_run(struct bench_result *r)
{
	memset(r, 0, sizeof(*r));
	homa_lat_init(&r->lat);
	for (int i = 1; i <= 1000; i++)
		assert_int_equal(homa_lat_add(&r->lat, 100, (uint64_t)i * 10), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(homa_lat_add(&r->lat, 1000000, 1000000), 0);
	r->rpcs = 1100;
	r->bytes = 1000 * 200 + 100 * 1000100;
	r->secs = 2;
	r->client_cpu_us = 2200;
	r->server_cpu_us = 1100;
}

/** Rates, CPU per RPC and percentiles in µs. */
static void bench_stats_compute__rates_and_cpu(void **state)
{
	struct bench_result r;
	struct bench_stats st;

	make_run(&r);
	assert_int_equal(bench_stats_compute(&r, NULL, NULL, 1416, &st), 0);
	assert_true(st.rpcs_per_sec == 550);
	assert_true(fabs(st.gbps - (double)r.bytes * 8 / 2 / 1e9) < 1e-12);
	assert_true(st.client_cpu_us_per_rpc == 2);
	assert_true(st.server_cpu_us_per_rpc == 1);
	assert_true(st.cpu_us_per_rpc == 3);
	assert_true(st.lat_us.max == 1000);
	assert_int_equal(st.nbuckets, 0);
	assert_false(st.have_slow);
	r.server_rpcs = 2200; /* another client shared the server */
	assert_int_equal(bench_stats_compute(&r, NULL, NULL, 1416, &st), 0);
	assert_true(st.server_cpu_us_per_rpc == 0.5 && st.cpu_us_per_rpc == 2.5);
	r.server_cpu_us = -1;
	assert_int_equal(bench_stats_compute(&r, NULL, NULL, 1416, &st), 0);
	assert_true(st.server_cpu_us_per_rpc < 0 && st.cpu_us_per_rpc == 2);
	homa_lat_free(&r.lat);
}

/** Buckets and slowdown against a baseline; one-packet messages. */
static void bench_stats_compute__buckets_and_slowdown(void **state)
{
	struct bench_result r;
	struct bench_stats st;
	struct homa_baseline bl;
	struct homa_buckets bk = { .upper = { 1000, 1000000 }, .n = 2 };

	make_run(&r);
	homa_baseline_init(&bl);
	assert_int_equal(homa_baseline_add(&bl, 100, 10), 0);
	assert_int_equal(homa_baseline_add(&bl, 1000000, 500000), 0);
	assert_int_equal(bench_stats_compute(&r, &bk, &bl, 1416, &st), 0);
	assert_true(st.have_slow);
	assert_int_equal(st.short_count, 1000);
	assert_true(st.short_p50_slow == 500 && st.short_p99_slow == 990);
	assert_int_equal(st.nbuckets, 2);
	assert_int_equal(st.b[0].count, 1000);
	assert_int_equal(st.b[1].count, 100);
	assert_true(st.b[1].p99_slow == 2.0);
	assert_true(st.b[1].p50_us == 1000);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct homa_json j;
	homa_json_init(&j, f, false);
	homa_json_object(&j);
	bench_stats_json(&j, &st);
	homa_json_end(&j);
	assert_int_equal(homa_json_finish(&j), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"short_p99_slowdown\":990"));
	assert_non_null(strstr(buf, "\"max_bytes\":1000000"));
	free(buf);
	homa_baseline_free(&bl);
	homa_lat_free(&r.lat);
}

/** System calls, context switches, copies per byte and busy time from the usage counters. */
static void bench_stats_compute__usage(void **state)
{
	struct bench_result r;
	struct bench_stats st;

	(void)state;
	make_run(&r);
	r.server_rpcs = 1100;
	r.client_use = (struct bench_usage){ 2200, 1100, 5500, 2 * (int64_t)r.bytes };
	r.server_use = (struct bench_usage){ 1100, 2200, 3300, (int64_t)r.bytes };
	r.host_busy_us = 11000;
	assert_int_equal(bench_stats_compute(&r, NULL, NULL, 1416, &st), 0);
	assert_true(st.syscalls_per_rpc == 8);
	assert_true(st.ctxsw_per_rpc == 3);
	assert_true(fabs(st.client_copies_per_byte - 2) < 1e-12);
	assert_true(fabs(st.server_copies_per_byte - 1) < 1e-12);
	assert_true(st.host_cpu_us_per_rpc == 10);
	r.server_use.syscalls = -1;  /* unknown on one side: unknown */
	r.client_use.copied = -1;
	r.host_busy_us = -1;
	assert_int_equal(bench_stats_compute(&r, NULL, NULL, 1416, &st), 0);
	assert_true(st.syscalls_per_rpc < 0 && st.client_copies_per_byte < 0);
	assert_true(st.host_cpu_us_per_rpc < 0 && st.ctxsw_per_rpc == 3);

	struct bench_usage a = { 10, 20, 30, 40 }, b = { 15, 25, 35, -1 }, d;
	bench_usage_sub(&a, &b, &d);
	assert_true(d.cpu_us == 5 && d.ctxsw == 5 && d.syscalls == 5 && d.copied == -1);
	bench_usage_add(&a, &b);
	assert_true(a.cpu_us == 25 && a.copied == -1);
	homa_lat_free(&r.lat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bench_stats_compute__rates_and_cpu),
		cmocka_unit_test(bench_stats_compute__buckets_and_slowdown),
		cmocka_unit_test(bench_stats_compute__usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
