/* SPDX-License-Identifier: MIT */
/**
 * @file test_queue.c
 * The queue of delivered messages nobody waited for (src/runtime/queue.c):
 * messages are handed out by the priority level the socket's unscheduled
 * cutoffs give their length, long ones (beyond the unscheduled bytes)
 * last, each level oldest first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "helpers.h"

/** Bulk request length: beyond the unscheduled bytes (default 40,000). */
#define BULK 300000

/**
 * wait_requests() - Wait (at most 30 s) until @srv's engine has received
 * @n requests whole. Return: true if it did.
 */
static bool wait_requests(homa_socket *srv, uint64_t n)
{
	int64_t end = test_now_ms() + 30000;
	struct homa_stats st;

	while (test_now_ms() < end) {
		if (homa_socket_stats(srv, &st) == 0 && st.server_requests_received >= n)
			return true;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	return false;
}

/** recv_len() - Take the next queued request of @srv (none waiting: 0 s); return its length. */
static size_t recv_len(homa_socket *srv)
{
	struct homa_message m;
	size_t len;

	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 5000000000LL, &m), 0);
	len = m.length;
	homa_message_release(&m);
	return len;
}

/**
 * check_order() - Requests of @lens[0..@n) arrive in that order, one at a
 * time, while no thread waits; homa_recv() must hand them out in the
 * order of @want.
 */
static void check_order(const size_t *lens, const size_t *want, int n)
{
	static uint8_t bulk[BULK];
	struct sockaddr_storage dst;
	homa_socket *cli, *srv;
	uint64_t id;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	for (int i = 0; i < n; i++) {
		/* one at a time, so they arrive in this order */
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, bulk, lens[i], 0, &id), 0);
		assert_true(wait_requests(srv, (uint64_t)i + 1));
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(recv_len(srv), want[i]);
	homa_close(cli);
	homa_close(srv);
}

/**
 * homa_recv__short_before_long() - Requests of 300,000, 300,000, 100 and
 * 200 bytes arrive in that order while no thread waits; homa_recv() hands
 * out 100, 200, then the two long ones.
 */
static void homa_recv__short_before_long(void **state)
{
	const size_t lens[4] = {BULK, BULK, 100, 200}, want[4] = {100, 200, BULK, BULK};

	(void)state;
	check_order(lens, want, 4);
}

/**
 * homa_recv__by_priority_level() - Requests of 300,000, 10,000, 2,000, 100
 * and 200 bytes arrive in that order while no thread waits. The default
 * cutoffs (200, 2,800, 15,000 bytes for levels 7, 6, 5) put all but the
 * first on different levels: homa_recv() hands out 100 and 200 (level 7,
 * oldest first), 2,000 (6), 10,000 (5), then the bulk one.
 */
static void homa_recv__by_priority_level(void **state)
{
	const size_t lens[5] = {BULK, 10000, 2000, 100, 200};
	const size_t want[5] = {100, 200, 2000, 10000, BULK};

	(void)state;
	check_order(lens, want, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv__short_before_long),
		cmocka_unit_test(homa_recv__by_priority_level),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
