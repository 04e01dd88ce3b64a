/* SPDX-License-Identifier: MIT */
/**
 * @file test_http.c
 * The /metrics listener served and fetched on loopback.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/obs.h"
#include "http_get.h"
#include "prom_check.h"

/** Callback state: stats to render, or a forced behaviour. */
struct fill_ctx {
	struct homa_stats st;
	size_t big;   /**< if non-zero: produce this many 'x' lines worth of text */
	int fail;     /**< if non-zero: return this error */
	int calls;
};

/** fill() - The metrics callback used by the tests. */
static int fill(void *arg, char *buf, size_t cap)
{
	struct fill_ctx *c = arg;
	struct homa_metrics_source src = {"4000", &c->st};
	size_t i;

	c->calls++;
	if (c->fail)
		return c->fail;
	if (!c->big)
		return homa_metrics_render(&src, 1, NULL, 0, buf, cap, NULL);
	if (cap < c->big)
		return HOMA_ENOSPC;
	for (i = 0; i < c->big; i++)
		buf[i] = i % 64 == 63 ? '\n' : 'x';
	return (int)c->big;
}

/** start() - A listener on a free loopback port. */
static homa_http *start(struct fill_ctx *c, const struct homa_http_opts *o)
{
	homa_http *h = NULL;

	assert_int_equal(homa_http_start(o, fill, c, &h), 0);
	assert_true(homa_http_port(h) > 0);
	return h;
}

/** get() - Exchange @req with the listener; asserts a response came. */
static char *get(homa_http *h, const char *req)
{
	char *r = http_exchange(homa_http_port(h), req, strlen(req));

	assert_non_null(r);
	return r;
}

/** http__serves_metrics() - 200, right headers, a body the strict checker accepts. */
static void http__serves_metrics(void **state)
{
	struct fill_ctx c = {0};
	homa_http *h;
	char *r, err[256];
	const char *body;
	size_t clen;

	c.st.client_rpcs_started = 77;
	h = start(&c, NULL);
	r = get(h, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_int_equal(http_status(r), 200);
	assert_non_null(strstr(r, "Content-Type: " HOMA_METRICS_CONTENT_TYPE "\r\n"));
	body = http_body(r);
	assert_non_null(body);
	assert_non_null(strstr(r, "Content-Length: "));
	clen = strtoul(strstr(r, "Content-Length: ") + 16, NULL, 10);
	assert_int_equal(clen, strlen(body));
	if (prom_check(body, err, sizeof(err)))
		fail_msg("served text invalid: %s", err);
	assert_non_null(strstr(body, "homa_client_rpcs_started_total{endpoint=\"4000\"} 77\n"));
	free(r);
	r = get(h, "GET /metrics?name[]=x HTTP/1.0\n\n");
	assert_int_equal(http_status(r), 200);
	free(r);
	assert_int_equal(homa_http_requests(h), 2);
	homa_http_stop(h);
}

/** http__other_requests() - HEAD, 404, 405, 400 and 431. */
static void http__other_requests(void **state)
{
	struct homa_http_opts o = {.max_request = 256};
	struct fill_ctx c = {0};
	char big[1000];
	homa_http *h = start(&c, &o);
	char *r;

	r = get(h, "HEAD /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(http_status(r), 200);
	assert_string_equal(http_body(r), "");
	free(r);
	r = get(h, "GET / HTTP/1.1\r\n\r\n");
	assert_int_equal(http_status(r), 404);
	free(r);
	r = get(h, "GET /metricsx HTTP/1.1\r\n\r\n");
	assert_int_equal(http_status(r), 404);
	free(r);
	r = get(h, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	assert_int_equal(http_status(r), 405);
	assert_non_null(strstr(r, "Allow: GET, HEAD\r\n"));
	free(r);
	r = get(h, "HELLO\r\n\r\n");
	assert_int_equal(http_status(r), 400);
	free(r);
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
	r = http_exchange(homa_http_port(h), big, sizeof(big));
	assert_non_null(r);
	assert_int_equal(http_status(r), 431);
	free(r);
	homa_http_stop(h);
}

/** http__grows_buffer_and_reports_errors() - ENOSPC grows the buffer; other errors give 500. */
static void http__grows_buffer_and_reports_errors(void **state)
{
	struct fill_ctx c = {.big = 300000};
	homa_http *h = start(&c, NULL);
	char *r = get(h, "GET /metrics HTTP/1.1\r\n\r\n");

	assert_int_equal(http_status(r), 200);
	assert_int_equal(strlen(http_body(r)), 300000);
	assert_true(c.calls >= 3); /* 64 KiB, 128 KiB, 256 KiB, 512 KiB */
	free(r);
	c.fail = HOMA_EIO;
	r = get(h, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(http_status(r), 500);
	free(r);
	homa_http_stop(h);
}

/** http__idle_client_does_not_block_others() - A silent connection is not in the way. */
static void http__idle_client_does_not_block_others(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct fill_ctx c = {0};
	homa_http *h = start(&c, NULL);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char *r;

	sa.sin_port = htons(homa_http_port(h));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, "GET /met", 8, 0), 8);
	r = get(h, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_int_equal(http_status(r), 200);
	free(r);
	close(fd);
	homa_http_stop(h);
}

/** http__bind_errors() - Port in use, bad address, NULL arguments. */
static void http__bind_errors(void **state)
{
	struct fill_ctx c = {0};
	homa_http *h = start(&c, NULL), *h2 = NULL;
	struct homa_http_opts o = {.port = homa_http_port(h)};
	struct homa_http_opts bad = {.bind_addr = "not-an-address"};

	assert_int_equal(homa_http_start(&o, fill, &c, &h2), HOMA_EADDRINUSE);
	assert_int_equal(homa_http_start(&bad, fill, &c, &h2), HOMA_EINVAL);
	assert_int_equal(homa_http_start(NULL, NULL, &c, &h2), HOMA_EINVAL);
	assert_int_equal(homa_http_start(NULL, fill, &c, NULL), HOMA_EINVAL);
	homa_http_stop(h);
	homa_http_stop(NULL);
}

/** http__stop_closes_socket() - After stop nothing listens on the port. */
static void http__stop_closes_socket(void **state)
{
	struct fill_ctx c = {0};
	homa_http *h = start(&c, NULL);
	uint16_t port = homa_http_port(h);

	homa_http_stop(h);
	assert_null(http_exchange(port, "GET /metrics HTTP/1.1\r\n\r\n", 26));
}

/** http__ipv6_loopback() - Binding ::1 works and serves. */
static void http__ipv6_loopback(void **state)
{
	struct homa_http_opts o = {.bind_addr = "::1"};
	struct fill_ctx c = {0};
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6};
	homa_http *h = NULL;
	char buf[64] = {0};
	int fd, r;

	r = homa_http_start(&o, fill, &c, &h);
	if (r == HOMA_EINVAL)
		skip(); /* no IPv6 loopback on this machine */
	assert_int_equal(r, 0);
	fd = socket(AF_INET6, SOCK_STREAM, 0);
	sa.sin6_port = htons(homa_http_port(h));
	sa.sin6_addr = in6addr_loopback;
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(fd, "GET /x HTTP/1.1\r\n\r\n", 19, 0), 19);
	assert_true(recv(fd, buf, sizeof(buf) - 1, MSG_WAITALL) > 12);
	assert_int_equal(strncmp(buf, "HTTP/1.1 404", 12), 0);
	close(fd);
	homa_http_stop(h);
}

/** connect_v4() - 0 if a TCP connection to @addr:@port is accepted, else -1. */
static int connect_v4(uint32_t addr, uint16_t port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), r;

	sa.sin_addr.s_addr = htonl(addr);
	r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return r ? -1 : 0;
}

/**
 * http__loopback_only_by_default() - With no address the listener binds
 * 127.0.0.1 only: 127.0.0.2 (also loopback, but another address) is
 * refused, which a wildcard bind would accept; "0.0.0.0" when asked.
 */
static void http__loopback_only_by_default(void **state)
{
	struct homa_http_opts any = {.bind_addr = "0.0.0.0"};
	struct fill_ctx c = {0};
	homa_http *h = start(&c, NULL);

	assert_int_equal(connect_v4(0x7f000001, homa_http_port(h)), 0);
	assert_int_equal(connect_v4(0x7f000002, homa_http_port(h)), -1);
	homa_http_stop(h);
	h = start(&c, &any);
	assert_int_equal(connect_v4(0x7f000002, homa_http_port(h)), 0);
	homa_http_stop(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(http__serves_metrics),
		cmocka_unit_test(http__other_requests),
		cmocka_unit_test(http__grows_buffer_and_reports_errors),
		cmocka_unit_test(http__idle_client_does_not_block_others),
		cmocka_unit_test(http__bind_errors),
		cmocka_unit_test(http__stop_closes_socket),
		cmocka_unit_test(http__ipv6_loopback),
		cmocka_unit_test(http__loopback_only_by_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
