/* SPDX-License-Identifier: MIT */
/**
 * @file test_recv.c
 * Receiving (src/runtime/recv.c): the errors homa_recv() and homa_poll()
 * document, each with the meaning errors.h gives it; a receiving thread
 * that drives I/O returns its message before reading further batches
 * (src/runtime/io.c).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/**
 * homa_recv__documented_errors() - An odd id is never a client RPC
 * (HOMA_ENOTFOUND); a timeout below -1 is out of range (HOMA_EINVAL); a
 * zero timeout with nothing ready is HOMA_EAGAIN and an expired one
 * HOMA_ETIME, whose text speaks of the timeout.
 */
static void homa_recv__documented_errors(void **state)
{
	struct homa_message m;
	homa_socket *s;

	(void)state;
	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 3, 0, &m), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 4, 0, &m), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, -2, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, INT64_MIN, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 0, &m), HOMA_EAGAIN);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 1000000, &m), HOMA_ETIME);
	assert_non_null(strstr(homa_strerror(HOMA_ETIME), "timeout"));
	assert_null(strstr(homa_strerror(HOMA_ETIME), "buffer"));
	homa_close(s);
}

/** Arguments of recv_thread(). */
struct recv_args {
	homa_socket *s;
	uint64_t id;
	int err;
	struct homa_message m;
};

/** recv_thread() - Wait for the response to a->id. */
static void *recv_thread(void *arg)
{
	struct recv_args *a = arg;

	a->err = homa_recv(a->s, HOMA_RECV_RESPONSE, a->id, -1, &a->m);
	return NULL;
}

/**
 * homa_recv__shutdown_fills_nothing() - A thread waiting for a response
 * when the socket closes gets HOMA_ESHUTDOWN and an untouched @out
 * (HOMA_ESHUTDOWN has one meaning: nothing was filled in).
 */
static void homa_recv__shutdown_fills_nothing(void **state)
{
	homa_socket *cli, *silent;
	struct sockaddr_storage dst;
	struct recv_args a;
	pthread_t th;

	(void)state;
	assert_int_equal(test_open(&silent, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(silent));
	memset(&a, 0, sizeof(a));
	memset(&a.m, 0xab, sizeof(a.m));
	a.s = cli;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "x", 1, 0, &a.id), 0);
	pthread_create(&th, NULL, recv_thread, &a);
	usleep(50000);
	homa_close(cli);
	pthread_join(th, NULL);
	assert_int_equal(a.err, HOMA_ESHUTDOWN);
	for (size_t i = 0; i < sizeof(a.m); i++)
		assert_int_equal(((uint8_t *)&a.m)[i], 0xab);
	homa_close(silent);
}

/** poll_thread() - homa_poll() until something happens; store its result. */
static void *poll_thread(void *arg)
{
	struct recv_args *a = arg;

	a->err = homa_poll(a->s, -1);
	return NULL;
}

/**
 * homa_poll__closed_under_it() - homa_poll() waiting when the socket
 * closes returns HOMA_ESHUTDOWN like every other call (not 0).
 */
static void homa_poll__closed_under_it(void **state)
{
	struct recv_args a = {0};
	pthread_t th;

	(void)state;
	assert_int_equal(test_open(&a.s, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, NULL), 0);
	assert_int_equal(homa_poll(a.s, -2), HOMA_EINVAL);
	pthread_create(&th, NULL, poll_thread, &a);
	usleep(50000);
	homa_close(a.s);
	pthread_join(th, NULL);
	assert_int_equal(a.err, HOMA_ESHUTDOWN);
}

/** Requests queued for homa_recv__returns_before_next_batch(). */
#define QUEUED 12
/** Packets per receive of its server. */
#define SMALL_BATCH 4

/**
 * homa_recv__returns_before_next_batch() - QUEUED one-packet requests
 * wait in a polled server's socket (batch SMALL_BATCH); one homa_recv()
 * returns a request having read one batch: the old loop went on reading
 * batches after handing the caller its message (24 packets read: every
 * queued request and the client's other packets). Then every
 * request is received.
 */
static void homa_recv__returns_before_next_batch(void **state)
{
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_io_stats io;
	struct homa_message m;
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	uint8_t req[100] = {1};
	struct homa_iov iov = {req, sizeof(req)};
	uint64_t id;

	(void)state;
	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	st.tick_ns = 100000000;  /* the standby thread stays away for 5 ticks: 500 ms */
	homa_open_opts_default(&o);
	o.mode = HOMA_MODE_POLLED;
	o.server = true;
	o.bind_addr = "127.0.0.1";
	o.batch = SMALL_BATCH;
	o.settings = &st;
	assert_int_equal(homa_open(&srv, &o), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	for (int i = 0; i < QUEUED; i++)
		assert_int_equal(homa_send_request(cli, (struct sockaddr *)&dst, &iov, 1, (uint64_t)i,
						   &id), 0);
	usleep(20000);  /* all queued in the server's socket */
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 1000000000, &m), 0);
	homa_message_release(&m);
	assert_int_equal(homa_io_stats(srv, &io), 0);
	if (io.rx_packets > SMALL_BATCH)
		fail_msg("%llu packets read before the first request was returned (batch %d)",
			 (unsigned long long)io.rx_packets, SMALL_BATCH);
	for (int i = 1; i < QUEUED; i++) {
		assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 1000000000, &m), 0);
		homa_message_release(&m);
	}
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv__documented_errors),
		cmocka_unit_test(homa_recv__shutdown_fills_nothing),
		cmocka_unit_test(homa_poll__closed_under_it),
		cmocka_unit_test(homa_recv__returns_before_next_batch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
