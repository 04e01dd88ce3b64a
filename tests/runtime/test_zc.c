/* SPDX-License-Identifier: MIT */
/**
 * @file test_zc.c
 * Zero-copy sends (src/runtime/zc.c): homa_send_request_zc() and
 * homa_reply_zc() send the caller's bytes without copying them into a
 * message, and report exactly once, through the release function, that
 * the buffers are free again: after the response, an RPC timeout,
 * homa_abort(), homa_close(), or the client's acknowledgement of a
 * response; never after a failed call.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"

/** Longest wait for something that must happen (a loaded machine is slow). */
#define WAIT_NS 20000000000LL

/** release() - Count one release in the counter @arg points to. */
static void release(void *arg)
{
	__atomic_fetch_add((int *)arg, 1, __ATOMIC_SEQ_CST);
}

/** released() - The count behind @c. */
static int released(int *c)
{
	return __atomic_load_n(c, __ATOMIC_SEQ_CST);
}

/** wait_released() - Wait until *@c reaches @want or WAIT_NS pass. Return: the count. */
static int wait_released(int *c, int want)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (released(c) >= want ||
		    (t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > WAIT_NS)
			return released(c);
		struct timespec nap = {0, 1000000};
		nanosleep(&nap, NULL);
	}
}

/**
 * homa_send_request_zc__response_then_release() - A zero-copy request
 * reaches the server intact; its buffers are released once the response
 * arrived; the sender copied no payload except the one packet that spans
 * the two buffers (and retransmissions).
 */
static void homa_send_request_zc__response_then_release(void **state)
{
	enum { N = 250000 };
	struct test_server ts;
	homa_socket *cli;
	struct homa_message m;
	struct homa_io_stats io;
	struct homa_stats st;
	uint8_t *buf = malloc(N);
	int count = 0;
	uint64_t id;

	(void)state;
	assert_non_null(buf);
	test_fill(buf, N, 11);
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	struct sockaddr_storage dst = test_dst(ts.port);
	struct homa_iov iov[2] = {{buf, 1000}, {buf + 1000, N - 1000}};

	assert_int_equal(homa_send_request_zc(cli, (struct sockaddr *)&dst, iov, 2, 5, release,
					      &count, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), 0);
	assert_true(test_check_response(&m, N, 11));
	assert_int_equal(m.cookie, 5);
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(wait_released(&count, 1), 1);
	assert_int_equal(homa_io_stats(cli, &io), 0);
	assert_int_equal(homa_socket_stats(cli, &st), 0);
	assert_true(io.tx_copied_bytes >= 1000);
	assert_true(io.tx_copied_bytes <= 2 * 1500 + st.retransmitted_bytes); /* not N */
	homa_close(cli);
	test_server_stop(&ts);
	assert_int_equal(released(&count), 1); /* exactly once */
	free(buf);
}

/** A silent server: it takes requests and never answers. */
static homa_socket *silent_server(void)
{
	homa_socket *srv;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	return srv;
}

/** send_zc() - Start a zero-copy request of @buf to @srv's port, counting in @count. */
static uint64_t send_zc(homa_socket *cli, int port, const void *buf, size_t len, int *count)
{
	struct sockaddr_storage dst = test_dst(port);
	struct homa_iov iov = {buf, len};
	uint64_t id;

	assert_int_equal(homa_send_request_zc(cli, (struct sockaddr *)&dst, &iov, 1, 0, release,
					      count, &id), 0);
	return id;
}

/**
 * homa_abort__releases_zc_request() - Abort releases the request's buffers:
 * before it returns, or (as homa_send_request_zc() documents) just after,
 * when the I/O thread was sending from them at that moment; never twice.
 */
static void homa_abort__releases_zc_request(void **state)
{
	static uint8_t buf[100000];
	homa_socket *srv = silent_server(), *cli;
	struct homa_message m;
	int count = 0;

	(void)state;
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	uint64_t id = send_zc(cli, homa_local_port(srv), buf, sizeof(buf), &count);
	/* the request reached the server: the client RPC now waits for the response */
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &m), 0);
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(released(&count), 0);
	assert_int_equal(homa_abort(cli, id), 0);
	assert_int_equal(wait_released(&count, 1), 1);
	homa_close(cli);
	homa_close(srv);
	assert_int_equal(released(&count), 1);
}

/** homa_close__releases_zc_requests() - Close reports every release before it returns. */
static void homa_close__releases_zc_requests(void **state)
{
	static uint8_t buf[3][70000];
	homa_socket *srv = silent_server(), *cli;
	int count = 0;

	(void)state;
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	for (int i = 0; i < 3; i++)
		send_zc(cli, homa_local_port(srv), buf[i], sizeof(buf[i]), &count);
	assert_int_equal(homa_close(cli), 0);
	assert_int_equal(released(&count), 3);
	homa_close(srv);
}

/**
 * homa_recv__timeout_releases_zc_request() - A request nobody answers
 * (nothing listens on the port) times out and is released.
 */
static void homa_recv__timeout_releases_zc_request(void **state)
{
	static uint8_t buf[5000];
	struct homa_settings st;
	homa_socket *cli, *gone;
	struct homa_message m;
	int count = 0, port;

	(void)state;
	homa_settings_default(&st);
	st.timeout_ticks = 30;
	assert_int_equal(test_open(&gone, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	port = homa_local_port(gone);
	homa_close(gone); /* a free port: requests to it meet silence */
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	uint64_t id = send_zc(cli, port, buf, sizeof(buf), &count);
	int rc = homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m);
	assert_true(rc == HOMA_ETIMEDOUT || rc == HOMA_ENOSERVER);
	assert_int_equal(wait_released(&count, 1), 1);
	homa_close(cli);
	assert_int_equal(released(&count), 1);
}

/**
 * homa_reply_zc__released_after_ack() - A zero-copy response arrives
 * intact; the server releases it once the client acknowledged it.
 */
static void homa_reply_zc__released_after_ack(void **state)
{
	enum { N = 180000 };
	homa_socket *srv = silent_server(), *cli;
	struct homa_message req, resp;
	uint8_t *out = malloc(N);
	int count = 0, ccount = 0;
	uint64_t id;

	(void)state;
	assert_non_null(out);
	test_fill(out, N, 3);
	for (size_t i = 0; i < N; i++)
		out[i] ^= 0x5a; /* test_check_response() expects the transform */
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	id = send_zc(cli, homa_local_port(srv), out, 10, &ccount);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &req), 0);
	struct homa_iov iov = {out, N};
	assert_int_equal(homa_reply_zc(srv, req.id, &iov, 1, release, &count), 0);
	assert_int_equal(homa_message_release(&req), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &resp), 0);
	assert_true(test_check_response(&resp, N, 3));
	assert_int_equal(homa_message_release(&resp), 0);
	/* the client acks on its own (NEED_ACK after request_ack_ticks) */
	assert_int_equal(wait_released(&count, 1), 1);
	assert_int_equal(wait_released(&ccount, 1), 1);
	homa_close(cli);
	homa_close(srv);
	assert_int_equal(released(&count), 1);
	free(out);
}

/**
 * take_unacked() - A request from @cli (a polled socket no application
 * thread drives and whose standby thread stays away, so it never takes
 * the response nor acknowledges it) taken at @srv.
 * Return: the server RPC's id.
 */
static uint64_t take_unacked(homa_socket *cli, homa_socket *srv)
{
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message req;
	uint64_t id;

	assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &req), 0);
	id = req.id;
	assert_int_equal(homa_message_release(&req), 0);
	return id;
}

/**
 * homa_reply_zc__released_by_abort_and_close() - A zero-copy response the
 * client never acknowledges is released by homa_abort() of its id and by
 * homa_close() of the server, each exactly once and before (or, for the
 * abort, as documented, just after) the call returns.
 */
static void homa_reply_zc__released_by_abort_and_close(void **state)
{
	static uint8_t out[2][60000];
	struct homa_settings st;
	homa_socket *srv, *cli;
	int count[2] = {0, 0};
	uint64_t ids[2];

	(void)state;
	homa_settings_default(&st);
	st.timeout_ticks = 1000000; /* no timeout frees the unacknowledged RPCs first */
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, &st), 0);
	/* the client's standby thread would step in after resend_ticks of
	 * absence and acknowledge the responses (released before the abort) */
	st.resend_ticks = 1000000;
	st.timeout_ticks = 2000000;
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, &st), 0);
	for (int i = 0; i < 2; i++) {
		struct homa_iov iov = {out[i], sizeof(out[i])};

		ids[i] = take_unacked(cli, srv);
		assert_int_equal(homa_reply_zc(srv, ids[i], &iov, 1, release, &count[i]), 0);
	}
	assert_int_equal(released(&count[0]) + released(&count[1]), 0);
	assert_int_equal(homa_abort(srv, ids[0]), 0);
	assert_int_equal(wait_released(&count[0], 1), 1);
	assert_int_equal(released(&count[1]), 0);
	assert_int_equal(homa_close(srv), 0);
	assert_int_equal(released(&count[1]), 1);
	assert_int_equal(released(&count[0]), 1); /* never twice */
	homa_close(cli);
}

/** Failed calls never report a release; the caller keeps its buffers. */
static void homa_send_request_zc__errors_do_not_release(void **state)
{
	static uint8_t buf[100];
	struct homa_settings st;
	homa_socket *cli, *srv = silent_server();
	int count = 0;
	uint64_t id;

	(void)state;
	homa_settings_default(&st);
	st.max_message = 50;
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_iov iov = {buf, sizeof(buf)};
	const struct sockaddr *d = (const struct sockaddr *)&dst;

	assert_int_equal(homa_send_request_zc(cli, d, &iov, 1, 0, NULL, &count, &id), HOMA_EINVAL);
	assert_int_equal(homa_send_request_zc(cli, d, &iov, 0, 0, release, &count, &id),
			 HOMA_EINVAL);
	assert_int_equal(homa_send_request_zc(cli, d, &iov, 1, 0, release, &count, NULL),
			 HOMA_EINVAL);
	assert_int_equal(homa_send_request_zc(cli, d, &iov, 1, 0, release, &count, &id),
			 HOMA_EMSGSIZE);
	assert_int_equal(homa_reply_zc(srv, 12345, &iov, 1, release, &count), HOMA_ENOTFOUND);
	assert_int_equal(homa_reply_zc(srv, 12345, &iov, 1, NULL, &count), HOMA_EINVAL);
	assert_int_equal(homa_reply_zc(NULL, 1, &iov, 1, release, &count), HOMA_EINVAL);
	homa_close(cli);
	assert_int_equal(homa_send_request_zc(cli, d, &iov, 1, 0, release, &count, &id),
			 HOMA_ESHUTDOWN);
	homa_close(srv);
	assert_int_equal(released(&count), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_send_request_zc__response_then_release),
		cmocka_unit_test(homa_abort__releases_zc_request),
		cmocka_unit_test(homa_close__releases_zc_requests),
		cmocka_unit_test(homa_recv__timeout_releases_zc_request),
		cmocka_unit_test(homa_reply_zc__released_after_ack),
		cmocka_unit_test(homa_reply_zc__released_by_abort_and_close),
		cmocka_unit_test(homa_send_request_zc__errors_do_not_release),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
