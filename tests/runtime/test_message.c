/* SPDX-License-Identifier: MIT */
/**
 * @file test_message.c
 * Received messages (src/runtime/message.c): releasing one twice, also
 * through a copy of the struct and after its memory went to another
 * message, is an error and frees nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

/** echo() - One RPC through @srv's threads; fill @m with the response. */
static void echo(homa_socket *cli, int port, struct homa_message *m)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t buf[3000];
	uint64_t id;

	test_fill(buf, sizeof(buf), 1);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, sizeof(buf), 0, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, m), 0);
	assert_true(test_check_response(m, sizeof(buf), 1));
}

/** homa_message_release__twice_is_an_error() - See the file comment. */
static void homa_message_release__twice_is_an_error(void **state)
{
	struct homa_message m, copy, next;
	struct test_server srv;
	homa_socket *cli;

	(void)state;
	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	echo(cli, srv.port, &m);
	copy = m;
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(homa_message_release(&m), HOMA_EALREADY);
	/* the next message may reuse the same memory: the stale copy must not free it */
	echo(cli, srv.port, &next);
	assert_int_equal(homa_message_release(&copy), HOMA_EALREADY);
	assert_true(test_check_response(&next, 3000, 1));
	assert_int_equal(homa_message_release(&next), 0);
	assert_int_equal(homa_message_release(NULL), HOMA_EINVAL);
	echo(cli, srv.port, &m);
	homa_close(cli);
	assert_int_equal(homa_message_release(&m), HOMA_ESHUTDOWN);
	test_server_stop(&srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_message_release__twice_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
