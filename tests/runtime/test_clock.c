/* SPDX-License-Identifier: MIT */
/**
 * @file test_clock.c
 * Clock readings per RPC (src/runtime/clock.c): the per-RPC paths pass
 * one reading on instead of taking another and skip the reading where
 * nothing needs it, since a reading costs tens of nanoseconds on a
 * virtual machine. Counted with homa_rt_clock_reads, the calling
 * thread's readings, so the count is the same on a loaded machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

/** RPCs the count is taken over. */
#define RPCS 200

/** Most clock readings per 100 B RPC, client and server in one thread. */
#define MAX_READS_PER_RPC 12

/**
 * rpc__clock_reads_per_rpc() - A polled client and server in one thread
 * take at most MAX_READS_PER_RPC clock readings per 100 B RPC (11 for
 * both sides: the send, the receive's poll and its flushes, each passing
 * its reading on). Fails when the poll's wait reads the clock again after
 * timers that did nothing (13 per RPC), when the runtime reads the clock
 * for every flush with nothing to send, again after each wait's deadline,
 * and again in each poll's timers (24 to 27 per RPC).
 */
static void rpc__clock_reads_per_rpc(void **state)
{
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	uint64_t before;
	double per_rpc;

	(void)state;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	for (int i = 0; i < 20; i++)  /* warm-up: peers known, buffers grown */
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	before = homa_rt_clock_reads;
	for (int i = 0; i < RPCS; i++)
		assert_int_equal(test_polled_rpc(cli, srv, &dst), 0);
	per_rpc = (double)(homa_rt_clock_reads - before) / RPCS;
	print_message("clock readings per RPC (client and server): %.2f\n", per_rpc);
	assert_true(per_rpc <= MAX_READS_PER_RPC);
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rpc__clock_reads_per_rpc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
