/* SPDX-License-Identifier: MIT */
/**
 * @file test_unreach_udp.c
 * ICMP port unreachable on the UDP driver (src/io/udp.c, IP_RECVERR): a
 * request to a UDP port where nothing listens ends with HOMA_ENOSERVER
 * long before the RPC timeout (here 10 s: without the reports it ends
 * with HOMA_ETIMEDOUT), and the reports do not disturb RPCs to a live
 * server on the same socket.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/errors.h"

/** Longest wait for any RPC's outcome: past the 10 s timeout, bounded. */
#define WAIT_NS 30000000000LL

/** now_ms() - CLOCK_MONOTONIC in ms. */
static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/** free_port() - A UDP port on 127.0.0.1 that was just bound and closed again. */
static int free_port(void)
{
	homa_socket *gone;
	int port;

	assert_int_equal(test_open(&gone, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	port = homa_local_port(gone);
	homa_close(gone);
	return port;
}

/** slow_timeout() - Defaults with a 10 s RPC timeout. */
static void slow_timeout(struct homa_settings *st)
{
	homa_settings_default(st);
	st->timeout_ticks = (uint32_t)(10000000000ull / st->tick_ns);
}

/** request() - Send a 100 B request to 127.0.0.1:@port from @c. Return: its id. */
static uint64_t request(homa_socket *c, int port, uint64_t cookie)
{
	static const char msg[100];
	struct sockaddr_storage dst = test_dst(port);
	uint64_t id = 0;

	assert_int_equal(homa_request_buf(c, (struct sockaddr *)&dst, msg, sizeof(msg), cookie, &id),
			 0);
	return id;
}

/**
 * unreach_udp__closed_port_ends_with_enoserver: see the file comment.
 */
static void unreach_udp__closed_port_ends_with_enoserver(void **state)
{
	struct homa_settings st;
	struct homa_message m;
	homa_socket *c;
	int port = free_port(), rc;
	double t0;

	(void)state;
	slow_timeout(&st);
	assert_int_equal(test_open(&c, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	t0 = now_ms();
	rc = homa_recv(c, HOMA_RECV_RESPONSE, request(c, port, 1), WAIT_NS, &m);
	print_message("request to a closed UDP port: %s after %.1f ms\n", homa_strerror(rc),
		      now_ms() - t0);
	assert_int_equal(rc, HOMA_ENOSERVER);
	homa_close(c);
}

/**
 * unreach_udp__live_server_unaffected: requests to a closed port and to
 * a live server alternate on one socket; every request to the closed
 * port ends with HOMA_ENOSERVER and every one to the server is answered.
 */
static void unreach_udp__live_server_unaffected(void **state)
{
	struct homa_settings st;
	struct test_server sv;
	struct homa_message m;
	homa_socket *c;
	int dead = free_port(), i, enoserver = 0, answered = 0;

	(void)state;
	slow_timeout(&st);
	assert_int_equal(test_server_start(&sv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, &st), 0);
	assert_int_equal(test_open(&c, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	for (i = 0; i < 20; i++) {
		uint64_t to_dead = request(c, dead, 2 * (uint64_t)i);
		uint64_t to_live = request(c, sv.port, 2 * (uint64_t)i + 1);
		int rc = homa_recv(c, HOMA_RECV_RESPONSE, to_live, WAIT_NS, &m);

		assert_int_equal(rc, 0);
		homa_message_release(&m);
		answered++;
		rc = homa_recv(c, HOMA_RECV_RESPONSE, to_dead, WAIT_NS, &m);
		assert_int_equal(rc, HOMA_ENOSERVER);
		enoserver++;
	}
	print_message("%d answered, %d HOMA_ENOSERVER\n", answered, enoserver);
	homa_close(c);
	test_server_stop(&sv);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unreach_udp__closed_port_ends_with_enoserver),
		cmocka_unit_test(unreach_udp__live_server_unaffected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
