/* SPDX-License-Identifier: MIT */
/**
 * @file test_metrics.c
 * homa_metrics_render(): output checked by the strict exposition checker,
 * values checked against the stats, buffer-size handling, extra values.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "prom_check.h"

#define BIG (1 << 20)

/** fill_stats() - Distinct values in every field, derived from @seed. */
static void fill_stats(struct homa_stats *st, uint64_t seed)
{
	uint64_t *v = (uint64_t *)st;
	size_t i;

	for (i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		v[i] = seed * 1000 + i;
	memset(st->rx_msg_size_hist, 0, sizeof(st->rx_msg_size_hist));
	st->rx_msg_size_hist[0] = 1;   /* a 0- or 1-byte message */
	st->rx_msg_size_hist[10] = 5;  /* 1024..2047 */
	st->rx_msg_size_hist[20] = 2;  /* ~1 MB */
	st->rx_msg_size_hist[39] = 1;  /* clamped outlier: only in +Inf */
	memset(st->rpc_latency_hist, 0, sizeof(st->rpc_latency_hist));
	st->rpc_latency_hist[14] = 7;  /* 16..32 us */
	st->pacer_throttled_ns = 1500000001;
}

/** render() - Render into a fresh buffer; assert success. Caller frees. */
static char *render(const struct homa_metrics_source *src, size_t n,
		    const struct homa_metric_value *extra, size_t nextra)
{
	char *buf = malloc(BIG);
	int r = homa_metrics_render(src, n, extra, nextra, buf, BIG, NULL);

	assert_true(r > 0);
	assert_int_equal(strlen(buf), (size_t)r);
	return buf;
}

/** check_valid() - The text must pass the strict checker. */
static void check_valid(const char *text)
{
	char err[256];

	if (prom_check(text, err, sizeof(err)))
		fail_msg("exposition invalid: %s", err);
}

/** value_of() - Value of one series; fails the test if absent. */
static double value_of(const char *text, const char *name, const char *labels)
{
	double v;

	if (prom_value(text, name, labels, &v))
		fail_msg("missing %s%s", name, labels);
	return v;
}

/** render__two_endpoints_valid_and_exact() - Every family valid, values match the stats. */
static void render__two_endpoints_valid_and_exact(void **state)
{
	struct homa_stats a, b;
	struct homa_metrics_source src[2] = {{"4000", &a}, {"4001", &b}};
	char *t;

	fill_stats(&a, 1);
	fill_stats(&b, 2);
	t = render(src, 2, NULL, 0);
	check_valid(t);
	assert_true(value_of(t, "homa_client_rpcs_started_total", "{endpoint=\"4000\"}") ==
		    (double)a.client_rpcs_started);
	assert_true(value_of(t, "homa_peers", "{endpoint=\"4001\"}") == (double)b.peers);
	assert_true(value_of(t, "homa_packets_sent_total", "{endpoint=\"4000\",type=\"GRANT\"}") ==
		    (double)a.pkts_sent[1]);
	assert_true(value_of(t, "homa_bytes_received_total",
			     "{endpoint=\"4001\",type=\"START_MSG\"}") == (double)b.bytes_recv[9]);
	assert_true(value_of(t, "homa_packets_sent_by_priority_total",
			     "{endpoint=\"4000\",priority=\"7\"}") == (double)a.pkts_sent_prio[7]);
	assert_true(value_of(t, "homa_packets_dropped_total",
			     "{endpoint=\"4001\",reason=\"completed\"}") ==
		    (double)b.drops[HOMA_DROP_COMPLETED]);
	assert_true(value_of(t, "homa_pacer_throttled_seconds_total", "{endpoint=\"4000\"}") ==
		    1.500000001);
	assert_non_null(strstr(t, "# TYPE homa_rx_message_size_bytes histogram\n"));
	free(t);
}

/**
 * render__every_field_rendered() - Each counter and gauge of struct
 * homa_stats shows up as a sample value (catches fields added to the
 * struct without a metric).
 */
static void render__every_field_rendered(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {"e", &a};
	size_t nslots = offsetof(struct homa_stats, rx_msg_size_hist) / sizeof(uint64_t);
	uint64_t *v = (uint64_t *)&a;
	char want[64];
	size_t i;
	char *t;

	memset(&a, 0, sizeof(a));
	for (i = 0; i < nslots; i++)
		v[i] = 7000000 + 13 * i;
	t = render(&src, 1, NULL, 0);
	for (i = 0; i < nslots; i++) {
		if (&v[i] == &a.pacer_throttled_ns)
			snprintf(want, sizeof(want), " 0.%09llu\n", (unsigned long long)v[i]);
		else
			snprintf(want, sizeof(want), " %llu\n", (unsigned long long)v[i]);
		if (!strstr(t, want))
			fail_msg("stats slot %zu (value%s) is not rendered", i, want);
	}
	free(t);
}

/** render__histogram_buckets_cumulative() - le bounds, cumulative counts, +Inf, _sum. */
static void render__histogram_buckets_cumulative(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {"e", &a};
	double sum;
	char *t;

	fill_stats(&a, 1);
	t = render(&src, 1, NULL, 0);
	check_valid(t);
	assert_true(value_of(t, "homa_rx_message_size_bytes_bucket", "{endpoint=\"e\",le=\"1\"}") == 1);
	assert_true(value_of(t, "homa_rx_message_size_bytes_bucket", "{endpoint=\"e\",le=\"1023\"}") == 1);
	assert_true(value_of(t, "homa_rx_message_size_bytes_bucket", "{endpoint=\"e\",le=\"2047\"}") == 6);
	assert_true(value_of(t, "homa_rx_message_size_bytes_bucket",
			     "{endpoint=\"e\",le=\"549755813887\"}") == 8);
	assert_true(value_of(t, "homa_rx_message_size_bytes_bucket", "{endpoint=\"e\",le=\"+Inf\"}") == 9);
	assert_true(value_of(t, "homa_rx_message_size_bytes_count", "{endpoint=\"e\"}") == 9);
	sum = value_of(t, "homa_rx_message_size_bytes_sum", "{endpoint=\"e\"}");
	assert_true(fabs(sum - (1.5 + 5 * 1536.0 + 2 * 1572864.0 + 1.5 * 549755813888.0)) < 1);
	/* latency is in seconds: bucket 14 ends at 32767 ns */
	assert_true(value_of(t, "homa_client_rpc_latency_seconds_bucket",
			     "{endpoint=\"e\",le=\"0.000032767\"}") == 7);
	assert_true(value_of(t, "homa_client_rpc_latency_seconds_bucket",
			     "{endpoint=\"e\",le=\"0.000016383\"}") == 0);
	free(t);
}

/** render__escapes_label_values() - Quotes, backslashes and newlines in endpoint names. */
static void render__escapes_label_values(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {"a\"b\\c\nd", &a};
	char *t;

	memset(&a, 0, sizeof(a));
	t = render(&src, 1, NULL, 0);
	check_valid(t);
	assert_non_null(strstr(t, "homa_peers{endpoint=\"a\\\"b\\\\c\\nd\"} 0\n"));
	free(t);
}

/** render__no_endpoint_label() - A NULL endpoint omits the label. */
static void render__no_endpoint_label(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {NULL, &a};
	char *t;

	fill_stats(&a, 3);
	t = render(&src, 1, NULL, 0);
	check_valid(t);
	assert_true(value_of(t, "homa_peers", "") == (double)a.peers);
	assert_true(value_of(t, "homa_packets_sent_total", "{type=\"DATA\"}") == (double)a.pkts_sent[0]);
	free(t);
}

/** render__extras() - Runtime values: grouped by name, counters get _total, special floats. */
static void render__extras(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {"1", &a};
#define EX(n, h, k, e, v) {.name = n, .help = h, .kind = k, .endpoint = e, .value = v}
	struct homa_metric_value ex[] = {
		EX("pool_used_bytes", "Buffer pool bytes in use.", HOMA_METRIC_GAUGE, "1", 4096),
		EX("wakeups", NULL, HOMA_METRIC_COUNTER, NULL, 17),
		EX("pool_used_bytes", "ignored", HOMA_METRIC_GAUGE, "2", NAN),
		EX("load_ratio", "Load.", HOMA_METRIC_GAUGE, "1", -INFINITY),
	};
	char *t;

	memset(&a, 0, sizeof(a));
	t = render(&src, 1, ex, 4);
	check_valid(t);
	assert_true(value_of(t, "homa_pool_used_bytes", "{endpoint=\"1\"}") == 4096);
	assert_non_null(strstr(t, "homa_pool_used_bytes{endpoint=\"2\"} NaN\n"));
	assert_non_null(strstr(t, "homa_load_ratio{endpoint=\"1\"} -Inf\n"));
	assert_true(value_of(t, "homa_wakeups_total", "") == 17);
	assert_non_null(strstr(t, "# HELP homa_wakeups_total wakeups\n"));
	assert_null(strstr(t, "ignored"));
	free(t);
	t = render(NULL, 0, ex, 2);
	check_valid(t);
	assert_null(strstr(t, "homa_peers"));
	free(t);
}

/** render__labelled_extras() - One family, one sample per label value, after the endpoint. */
static void render__labelled_extras(void **state)
{
	struct homa_metric_value ex[] = {
		{.name = "packets_received_by_priority", .help = "By priority.",
		 .kind = HOMA_METRIC_COUNTER, .endpoint = "9", .value = 5,
		 .label = "priority", .label_value = "0"},
		{.name = "packets_received_by_priority", .kind = HOMA_METRIC_COUNTER,
		 .endpoint = "9", .value = 7, .label = "priority", .label_value = "7"},
		{.name = "queue_depth", .kind = HOMA_METRIC_GAUGE, .value = 2,
		 .label = "queue", .label_value = "a\"b"},
	};
	char *t = render(NULL, 0, ex, 3);

	check_valid(t);
	assert_true(value_of(t, "homa_packets_received_by_priority_total",
			     "{endpoint=\"9\",priority=\"0\"}") == 5);
	assert_true(value_of(t, "homa_packets_received_by_priority_total",
			     "{endpoint=\"9\",priority=\"7\"}") == 7);
	assert_non_null(strstr(t, "homa_queue_depth{queue=\"a\\\"b\"} 2\n"));
	free(t);
}

/** render__bad_extras_rejected() - Bad names, labels, kinds and clashes give HOMA_EINVAL. */
static void render__bad_extras_rejected(void **state)
{
#define BAD(n, k) {.name = n, .help = "", .kind = k, .value = 1}
#define BADL(l, v) {.name = "x", .kind = HOMA_METRIC_GAUGE, .label = l, .label_value = v}
	struct homa_metric_value bad[][2] = {
		{BAD("Upper", HOMA_METRIC_GAUGE)},
		{BAD("9lives", HOMA_METRIC_GAUGE)},
		{BAD("has space", HOMA_METRIC_GAUGE)},
		{BAD("", HOMA_METRIC_GAUGE)},
		{BAD("x", 7)},
		{BAD("peers", HOMA_METRIC_GAUGE)},
		{BAD("rx_message_size_bytes_count", HOMA_METRIC_GAUGE)},
		{BAD("x", HOMA_METRIC_GAUGE), BAD("x", HOMA_METRIC_COUNTER)},
		{BADL("endpoint", "1")},
		{BADL("bad-label", "1")},
		{BADL("", "1")},
		{BADL("priority", NULL)},
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(homa_metrics_render(NULL, 0, bad[i], bad[i][1].name ? 2 : 1,
						     buf, sizeof(buf), NULL), HOMA_EINVAL);
	assert_int_equal(homa_metrics_render(NULL, 1, NULL, 0, buf, sizeof(buf), NULL), HOMA_EINVAL);
}

/** render__enospc_reports_needed() - Too small: HOMA_ENOSPC and the exact size needed. */
static void render__enospc_reports_needed(void **state)
{
	struct homa_stats a;
	struct homa_metrics_source src = {"4000", &a};
	size_t needed = 0, again = 0;
	char *full, *buf;
	int r;

	fill_stats(&a, 5);
	full = render(&src, 1, NULL, 0);
	assert_int_equal(homa_metrics_render(&src, 1, NULL, 0, NULL, 0, &needed), HOMA_ENOSPC);
	assert_int_equal(needed, strlen(full) + 1);
	buf = malloc(needed);
	assert_int_equal(homa_metrics_render(&src, 1, NULL, 0, buf, needed - 1, &again), HOMA_ENOSPC);
	assert_int_equal(again, needed);
	assert_int_equal(buf[needed - 2], '\0');          /* truncated but terminated */
	assert_memory_equal(buf, full, needed - 2);
	r = homa_metrics_render(&src, 1, NULL, 0, buf, needed, NULL);
	assert_int_equal(r, (int)needed - 1);
	assert_string_equal(buf, full);
	free(buf);
	free(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(render__two_endpoints_valid_and_exact),
		cmocka_unit_test(render__every_field_rendered),
		cmocka_unit_test(render__histogram_buckets_cumulative),
		cmocka_unit_test(render__escapes_label_values),
		cmocka_unit_test(render__no_endpoint_label),
		cmocka_unit_test(render__extras),
		cmocka_unit_test(render__labelled_extras),
		cmocka_unit_test(render__bad_extras_rejected),
		cmocka_unit_test(render__enospc_reports_needed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
