/* SPDX-License-Identifier: MIT */
/**
 * @file test_epoll.c
 * homa_fd() with epoll: in threaded mode the descriptor is readable while
 * a message waits and not once all are taken; in polled mode it wakes
 * the application when homa_poll() has work; in both, homa_close()
 * wakes a loop waiting on it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** ready() - Wait up to @ms for @ep; true if an event came. */
static bool ready(int ep, int ms)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, ms) == 1;
}

/**
 * homa_fd__threaded_readable_while_messages_wait() - Requests make the
 * server's descriptor readable; taking them all clears it; responses do
 * the same on the client.
 */
static void homa_fd__threaded_readable_while_messages_wait(void **state)
{
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	uint64_t ids[3];
	int eps, epc, got = 0;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	eps = test_watch(homa_fd(srv));
	epc = test_watch(homa_fd(cli));
	assert_false(ready(eps, 0));
	dst = test_dst(homa_local_port(srv));
	for (int i = 0; i < 3; i++)
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "ping", 4, (uint64_t)i,
					   &ids[i]), 0);
	while (got < 3) {
		assert_true(ready(eps, 10000));
		while (homa_recv(srv, HOMA_RECV_REQUEST, 0, 0, &m) == 0) {
			assert_int_equal(homa_reply_buf(srv, m.id, "pong", 4), 0);
			homa_message_release(&m);
			got++;
		}
	}
	assert_false(ready(eps, 0));
	for (got = 0; got < 3;) {
		assert_true(ready(epc, 10000));
		while (homa_recv(cli, HOMA_RECV_RESPONSE, 0, 0, &m) == 0) {
			assert_int_equal(m.length, 4);
			homa_message_release(&m);
			got++;
		}
	}
	assert_false(ready(epc, 0));
	close(eps);
	close(epc);
	homa_close(cli);
	homa_close(srv);
}

/**
 * homa_fd__readable_for_messages_queued_before_it() - The descriptor is
 * kept current only once homa_fd() handed it out; requests that arrived
 * before that must still make it readable at once, and taking them must
 * clear it.
 */
static void homa_fd__readable_for_messages_queued_before_it(void **state)
{
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	struct homa_stats st;
	uint64_t id;
	int ep, waited = 0;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	for (int i = 0; i < 2; i++)
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "early", 5, (uint64_t)i,
					   &id), 0);
	do { /* both requests delivered and queued, nobody waiting */
		usleep(1000);
		assert_int_equal(homa_socket_stats(srv, &st), 0);
	} while (st.server_requests_received < 2 && ++waited < 10000);
	assert_int_equal(st.server_requests_received, 2);
	ep = test_watch(homa_fd(srv));
	assert_true(ready(ep, 0));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 0, &m), 0);
		homa_message_release(&m);
	}
	assert_false(ready(ep, 0));
	close(ep);
	homa_close(cli);
	homa_close(srv);
}

/** serve_thread() - Answer requests until the socket closes. */
static void *serve_thread(void *arg)
{
	uint64_t served = 0, errors = 0;

	test_serve_forever(arg, &served, &errors);
	return NULL;
}

/**
 * homa_fd__polled_wakes_for_homa_poll() - A polled client sleeps in
 * epoll, then homa_poll() and homa_recv(timeout 0) get its response.
 */
static void homa_fd__polled_wakes_for_homa_poll(void **state)
{
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	pthread_t th;
	uint64_t id;
	int ep, err = HOMA_EAGAIN, wakeups = 0;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, NULL), 0);
	pthread_create(&th, NULL, serve_thread, srv);
	ep = test_watch(homa_fd(cli));
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "hello", 5, 0, &id), 0);
	while (err == HOMA_EAGAIN && wakeups < 1000) {
		if (ready(ep, 10000))
			wakeups++;
		assert_true(homa_poll(cli, 0) >= 0);
		err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, &m);
	}
	assert_int_equal(err, 0);
	assert_true(wakeups >= 1);
	assert_int_equal(m.length, 5);
	char got[5];

	assert_int_equal(homa_message_copy(&m, 0, got, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal((uint8_t)got[i], (uint8_t)("hello"[i] ^ 0x5a));
	homa_message_release(&m);
	close(ep);
	homa_close(cli);
	homa_close(srv);
	pthread_join(th, NULL);
}

/** Arguments of loop_thread(). */
struct loop_args {
	homa_socket *s;
	int ep;
	int events;          /**< epoll_wait()'s result */
	int recv_err;        /**< homa_recv() once woken */
};

/**
 * loop_thread() - An event loop: wait up to 10 s for the socket's
 * descriptor, then try to receive, as a loop would once woken.
 */
static void *loop_thread(void *arg)
{
	struct loop_args *a = arg;
	struct epoll_event ev;
	struct homa_message m;

	a->events = epoll_wait(a->ep, &ev, 1, 10000);
	a->recv_err = homa_recv(a->s, HOMA_RECV_RESPONSE, 0, 0, &m);
	return NULL;
}

/**
 * close_wakes_loop() - homa_close() from another thread wakes an epoll
 * loop blocked on homa_fd() of a socket of @mode at once (it used to
 * sleep on: the descriptor was closed, which took it out of the set
 * silently); the woken loop's next call says HOMA_ESHUTDOWN.
 */
static void close_wakes_loop(int mode)
{
	struct loop_args a = {0};
	pthread_t th;

	assert_int_equal(test_open(&a.s, HOMA_DRIVER_UDP, mode, false, 0, NULL), 0);
	a.ep = test_watch(homa_fd(a.s));
	assert_false(ready(a.ep, 0));
	pthread_create(&th, NULL, loop_thread, &a);
	usleep(100000); /* let it block in epoll_wait() */
	assert_int_equal(homa_close(a.s), 0);
	pthread_join(th, NULL);
	assert_int_equal(a.events, 1);
	assert_int_equal(a.recv_err, HOMA_ESHUTDOWN);
	close(a.ep);
}

/** homa_fd__close_wakes_epoll_threaded() - Threaded socket. */
static void homa_fd__close_wakes_epoll_threaded(void **state)
{
	(void)state;
	close_wakes_loop(HOMA_MODE_THREADED);
}

/** homa_fd__close_wakes_epoll_polled() - Polled socket. */
static void homa_fd__close_wakes_epoll_polled(void **state)
{
	(void)state;
	close_wakes_loop(HOMA_MODE_POLLED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_fd__threaded_readable_while_messages_wait),
		cmocka_unit_test(homa_fd__polled_wakes_for_homa_poll),
		cmocka_unit_test(homa_fd__readable_for_messages_queued_before_it),
		cmocka_unit_test(homa_fd__close_wakes_epoll_threaded),
		cmocka_unit_test(homa_fd__close_wakes_epoll_polled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
