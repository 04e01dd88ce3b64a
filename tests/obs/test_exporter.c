/* SPDX-License-Identifier: MIT */
/**
 * @file test_exporter.c
 * Endpoints sharing one /metrics listener: labels, extra values, leaving.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "http_get.h"
#include "prom_check.h"

/** One fake endpoint. */
struct ep {
	uint64_t rpcs;
	int fail;
	int calls;
};

/** snap() - Snapshot of a fake endpoint: one counter and two extra values. */
static int snap(void *arg, struct homa_stats *st, struct homa_metric_value *ex, size_t *n)
{
	struct ep *e = arg;

	e->calls++;
	if (e->fail)
		return e->fail;
	st->client_rpcs_started = e->rpcs;
	ex[0] = (struct homa_metric_value){.name = "pool_used_bytes", .help = "Pool bytes in use.",
					   .kind = HOMA_METRIC_GAUGE, .value = (double)e->rpcs * 10};
	ex[1] = (struct homa_metric_value){.name = "io_wakeups", .help = "Wakeups.",
					   .kind = HOMA_METRIC_COUNTER, .endpoint = "overwritten",
					   .value = 3};
	*n = 2;
	return 0;
}

/** scrape() - GET /metrics from @port; checks status and format. Caller frees. */
static char *scrape(uint16_t port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\n\r\n";
	char *r = http_exchange(port, req, sizeof(req) - 1), err[256];

	assert_non_null(r);
	assert_int_equal(http_status(r), 200);
	if (prom_check(http_body(r), err, sizeof(err)))
		fail_msg("invalid: %s", err);
	return r;
}

/** exporter__endpoints_share_a_listener() - Both endpoints in one scrape, then one, then none. */
static void exporter__endpoints_share_a_listener(void **state)
{
	struct ep a = {.rpcs = 11}, b = {.rpcs = 22};
	struct homa_http_opts o = {0};
	homa_exporter_member *ma, *mb;
	uint16_t port;
	char *r;

	assert_int_equal(homa_exporter_join(&o, "4000", snap, &a, &ma), 0);
	port = homa_exporter_port(ma);
	o.port = port;
	assert_int_equal(homa_exporter_join(&o, "4001", snap, &b, &mb), 0);
	assert_int_equal(homa_exporter_port(mb), port);
	r = scrape(port);
	assert_non_null(strstr(r, "homa_client_rpcs_started_total{endpoint=\"4000\"} 11\n"));
	assert_non_null(strstr(r, "homa_client_rpcs_started_total{endpoint=\"4001\"} 22\n"));
	assert_non_null(strstr(r, "homa_pool_used_bytes{endpoint=\"4001\"} 220\n"));
	assert_non_null(strstr(r, "homa_io_wakeups_total{endpoint=\"4000\"} 3\n"));
	assert_null(strstr(r, "overwritten"));
	free(r);
	homa_exporter_leave(ma);
	assert_int_equal(a.calls, 1);
	r = scrape(port);
	assert_null(strstr(r, "endpoint=\"4000\""));
	assert_non_null(strstr(r, "homa_client_rpcs_started_total{endpoint=\"4001\"} 22\n"));
	free(r);
	assert_int_equal(a.calls, 1);                 /* never called after leaving */
	homa_exporter_leave(mb);
	assert_null(http_exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", 26));
}

/** exporter__failed_snapshot_left_out() - An endpoint whose snapshot fails is skipped. */
static void exporter__failed_snapshot_left_out(void **state)
{
	struct ep a = {.rpcs = 5}, b = {.rpcs = 6, .fail = HOMA_ESHUTDOWN};
	struct homa_http_opts o = {0};
	homa_exporter_member *ma, *mb;
	char *r;

	assert_int_equal(homa_exporter_join(&o, "a", snap, &a, &ma), 0);
	o.port = homa_exporter_port(ma);
	assert_int_equal(homa_exporter_join(&o, "b", snap, &b, &mb), 0);
	r = scrape(o.port);
	assert_non_null(strstr(r, "{endpoint=\"a\"} 5\n"));
	assert_null(strstr(r, "endpoint=\"b\""));
	assert_int_equal(b.calls, 1);
	free(r);
	homa_exporter_leave(mb);
	homa_exporter_leave(ma);
}

/** exporter__errors() - Bad arguments; a port taken by a private listener. */
static void exporter__errors(void **state)
{
	struct homa_http_opts o = {0}, bad = {.bind_addr = "nowhere"};
	homa_exporter_member *m;
	struct ep a = {0};

	assert_int_equal(homa_exporter_join(&o, NULL, snap, &a, &m), HOMA_EINVAL);
	assert_int_equal(homa_exporter_join(&o, "x", NULL, &a, &m), HOMA_EINVAL);
	assert_int_equal(homa_exporter_join(&bad, "x", snap, &a, &m), HOMA_EINVAL);
	assert_int_equal(homa_exporter_join(&o, "x", snap, &a, &m), 0);
	o.port = homa_exporter_port(m);
	o.bind_addr = "0.0.0.0";   /* another address on the same port: a new listener, which fails */
	{
		homa_exporter_member *m2;

		assert_int_equal(homa_exporter_join(&o, "y", snap, &a, &m2), HOMA_EADDRINUSE);
	}
	homa_exporter_leave(m);
	homa_exporter_leave(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exporter__endpoints_share_a_listener),
		cmocka_unit_test(exporter__failed_snapshot_left_out),
		cmocka_unit_test(exporter__errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
