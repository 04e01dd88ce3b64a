/* SPDX-License-Identifier: MIT */
/**
 * @file test_big.c
 * A 256 MiB response over loopback with the default RPC timeout: the
 * sender copies it without the socket lock, so the client never sees
 * silence long enough to time out, and every byte arrives. Slow (about
 * a gigabyte of memory and several seconds): registered in the "slow"
 * CTest configuration only (`ctest -C slow -R runtime_big`).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "helpers.h"

/** The response's size. */
#define LEN (256u << 20)

/** big_settings() - Defaults (100 ms RPC timeout) with room for LEN. */
static void big_settings(struct homa_settings *st)
{
	homa_settings_default(st);
	st->max_message = LEN;
	st->max_rx_buffered = 2 * (uint64_t)LEN;
	st->max_tx_buffered = 2 * (uint64_t)LEN;
}

/** big_server() - Answer one request with LEN bytes (test_fill(seed 5) XOR 0x5a). */
static void *big_server(void *arg)
{
	homa_socket *s = arg;
	struct homa_message m;
	uint8_t *buf = malloc(LEN);

	assert_non_null(buf);
	test_fill(buf, LEN, 5);
	for (size_t i = 0; i < LEN; i++)
		buf[i] ^= 0x5a;
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 60000000000LL, &m), 0);
	assert_int_equal(homa_reply_buf(s, m.id, buf, LEN), 0);
	homa_message_release(&m);
	free(buf);
	return NULL;
}

/** reply_256mib__arrives_bit_exact() - The whole response, no HOMA_ETIMEDOUT. */
static void reply_256mib__arrives_bit_exact(void **state)
{
	struct homa_settings st;
	struct sockaddr_storage dst;
	struct homa_message m;
	homa_socket *srv, *cli;
	pthread_t th;
	uint64_t id;

	(void)state;
	big_settings(&st);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	pthread_create(&th, NULL, big_server, srv);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "get", 3, 1, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 120000000000LL, &m), 0);
	assert_int_equal(m.error, 0);
	assert_int_equal(m.length, LEN);
	assert_true(test_check_response(&m, LEN, 5));
	homa_message_release(&m);
	pthread_join(th, NULL);
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reply_256mib__arrives_bit_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
