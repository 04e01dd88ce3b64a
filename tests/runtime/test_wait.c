/* SPDX-License-Identifier: MIT */
/**
 * @file test_wait.c
 * The poller role of a polled socket (src/runtime/wait.c) while its
 * standby thread holds it: homa_poll() and homa_recv() with a zero
 * timeout interrupt the standby and poll themselves, so an event loop
 * woken by homa_fd() finds what woke it instead of waking again at once
 * until the standby gets a CPU. The binary links with -Wl,--wrap=ppoll:
 * while the test says so, the standby thread's waits watch only its
 * eventfds and timerfds (its kick and timers), so the response stays in
 * the socket while the standby holds the role, deterministically.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** While set, the standby thread's ppoll() calls watch no socket. */
static atomic_bool hold;
/** The standby thread's ppoll() calls made while hold was set. */
static atomic_int held_waits;
/** While hold is set, microseconds the standby sleeps after each ppoll(). */
static atomic_int slow_us;

int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);

/** standby_thread() - Whether the calling thread is a socket's "homa-standby". */
static bool standby_thread(void)
{
	char name[16] = {0};

	prctl(PR_GET_NAME, name, 0, 0, 0);
	return strcmp(name, "homa-standby") == 0;
}

/** kept() - Whether @fd is an eventfd or a timerfd (not a socket or epoll set). */
static bool kept(int fd)
{
	char path[48], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = 0;
	return strstr(link, "[eventfd]") || strstr(link, "[timerfd]");
}

/**
 * __wrap_ppoll() - ppoll(); while hold is set, the standby thread's call
 * has every descriptor but its eventfds and timerfds taken out (the
 * kick and the timers still end its wait), is counted in held_waits and
 * is followed by a sleep of slow_us.
 */
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	struct pollfd p[64];
	int r;

	if (!atomic_load(&hold) || n > 64 || !standby_thread())
		return __real_ppoll(fds, n, ts, mask);
	for (nfds_t i = 0; i < n; i++) {
		p[i] = fds[i];
		if (p[i].fd >= 0 && !kept(p[i].fd))
			p[i].fd = -1;
	}
	atomic_fetch_add(&held_waits, 1);
	r = __real_ppoll(p, n, ts, mask);
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = p[i].revents;
	if (atomic_load(&slow_us))
		usleep((useconds_t)atomic_load(&slow_us));
	return r;
}

/** serve_thread() - Answer requests until the socket closes. */
static void *serve_thread(void *arg)
{
	uint64_t served = 0, errors = 0;

	test_serve_forever(arg, &served, &errors);
	return NULL;
}

/** Arguments and results of standby_holds_response(). */
struct held {
	homa_socket *srv, *cli;
	pthread_t th;
	int ep;              /**< epoll set of homa_fd(cli) */
	uint64_t id;         /**< the client's RPC */
};

/**
 * standby_holds_response() - A threaded server answering in a thread, a
 * polled client watched through homa_fd(); the client sends a request
 * and makes no call until its standby thread holds the poller role
 * (waiting with the sockets taken out) and the response waits in the
 * client's socket, which homa_fd() then reports readable.
 */
static void standby_holds_response(struct held *h)
{
	struct sockaddr_storage dst;
	struct epoll_event ev;
	struct homa_stats st = {0};

	assert_int_equal(test_open(&h->srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&h->cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, NULL), 0);
	pthread_create(&h->th, NULL, serve_thread, h->srv);
	h->ep = test_watch(homa_fd(h->cli));
	atomic_store(&held_waits, 0);
	atomic_store(&hold, true);
	dst = test_dst(homa_local_port(h->srv));
	assert_int_equal(homa_send(h->cli, (struct sockaddr *)&dst, "hello", 5, 0, &h->id), 0);
	for (int64_t t0 = test_now_ms(); test_now_ms() - t0 < 10000;) {
		assert_int_equal(homa_socket_stats(h->srv, &st), 0);
		if (st.server_replies_sent >= 1 && atomic_load(&held_waits) >= 1)
			break;
		usleep(1000);
	}
	assert_int_equal(st.server_replies_sent, 1);
	assert_true(atomic_load(&held_waits) >= 1);
	usleep(20000);  /* the response crosses loopback into the client's socket */
	assert_int_equal(epoll_wait(h->ep, &ev, 1, 10000), 1);
}

/** held_end() - Check the response taken into @m, then close everything. */
static void held_end(struct held *h, struct homa_message *m)
{
	char got[5];

	assert_int_equal(m->length, 5);
	assert_int_equal(homa_message_copy(m, 0, got, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal((uint8_t)got[i], (uint8_t)("hello"[i] ^ 0x5a));
	homa_message_release(m);
	atomic_store(&hold, false);
	atomic_store(&slow_us, 0);
	close(h->ep);
	homa_close(h->cli);
	homa_close(h->srv);
	pthread_join(h->th, NULL);
}

/**
 * homa_poll__takes_role_from_standby() - homa_poll(s, 0) called while the
 * standby thread holds the role and the response waits in the socket
 * returns 1 (it interrupted the standby and read the socket itself), and
 * homa_recv() then has the response. It used to return 0 at once with
 * the socket unread: the event loop woke again at once, until the
 * standby got a CPU.
 */
static void homa_poll__takes_role_from_standby(void **state)
{
	struct held h = {0};
	struct homa_message m;

	(void)state;
	standby_holds_response(&h);
	assert_int_equal(homa_poll(h.cli, 0), 1);
	assert_int_equal(homa_recv(h.cli, HOMA_RECV_RESPONSE, h.id, 0, &m), 0);
	held_end(&h, &m);
}

/**
 * homa_recv__zero_timeout_takes_role_from_standby() - homa_recv() with a
 * zero timeout in the same state returns the response at once (it used
 * to return HOMA_EAGAIN with the socket unread).
 */
static void homa_recv__zero_timeout_takes_role_from_standby(void **state)
{
	struct held h = {0};
	struct homa_message m;

	(void)state;
	standby_holds_response(&h);
	assert_int_equal(homa_recv(h.cli, HOMA_RECV_RESPONSE, h.id, 0, &m), 0);
	held_end(&h, &m);
}

/**
 * homa_poll__standby_slow_to_yield_stays_away() - As
 * homa_poll__takes_role_from_standby(), but each of the standby's steps
 * lasts 20 ms past its wait (a thread that lost its CPU), longer than its
 * standby_ns (5 ms): once it yields, it must not take the role again
 * while the caller waits for it (it did in a first version of this fix,
 * and homa_poll(s, 0) then waited for good).
 */
static void homa_poll__standby_slow_to_yield_stays_away(void **state)
{
	struct held h = {0};
	struct homa_message m;

	(void)state;
	atomic_store(&slow_us, 20000);
	standby_holds_response(&h);
	assert_int_equal(homa_poll(h.cli, 0), 1);
	assert_int_equal(homa_recv(h.cli, HOMA_RECV_RESPONSE, h.id, 0, &m), 0);
	held_end(&h, &m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_poll__takes_role_from_standby),
		cmocka_unit_test(homa_recv__zero_timeout_takes_role_from_standby),
		cmocka_unit_test(homa_poll__standby_slow_to_yield_stays_away),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
