/* SPDX-License-Identifier: MIT */
/**
 * @file test_spin.c
 * Looking before sleeping (src/runtime/spin.c, homa_open_opts.spin_us):
 * a polled client waits in homa_recv() for a response from a polled
 * server in the same thread. The binary links with -Wl,--wrap=ppoll:
 * the test thread's ppoll() calls are counted, those with a zero
 * timeout (looks) apart from those that may sleep; on a chosen look the
 * wrapper has the server reply (the response arrives during the look),
 * and each look can be made to last a known least time, so the number
 * of looks a window allows is bounded whatever the machine's load. The
 * looks themselves are counted by the runtime (homa_rt_spin_looks). It
 * also links with -Wl,--wrap=sched_yield: while counting, a yield can be
 * made to last a known least time, as when another thread runs on the
 * CPU (a crowded CPU, homa_rt_spin_crowded).
 */
#define _GNU_SOURCE
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask);
int __real_sched_yield(void);

/** Set in the test thread while its ppoll() calls are counted. */
static __thread bool counting;
/** The test thread's ppoll() calls with a zero timeout while counting. */
static int zero_polls;
/** ... and those with another timeout or none (they may sleep). */
static int sleep_polls;
/** Microseconds each counted zero-timeout call lasts at least. */
static int look_us;
/** Microseconds each of the test thread's sched_yield() calls lasts at least while counting. */
static int yield_us;
/** The counted zero-timeout call (1 = the first) on which the server replies; 0: never. */
static int reply_on;
/** The server socket and the request it replies to on call reply_on. */
static homa_socket *reply_srv;
static uint64_t reply_id;

/**
 * reply_now() - The server answers reply_id with 5 bytes, then the call
 * waits (up to 10 s) until one of the @n entries of @fds is ready: the
 * response arrives during this look, whatever the machine's load.
 * Return: as ppoll().
 */
static int reply_now(struct pollfd *fds, nfds_t n, const sigset_t *mask)
{
	const struct timespec ten = {10, 0};
	struct homa_iov iov = {"world", 5};

	assert_int_equal(homa_reply(reply_srv, reply_id, &iov, 1), 0);
	return __real_ppoll(fds, n, &ten, mask);
}

/**
 * __wrap_ppoll() - ppoll(); while the calling thread is counting, count
 * the call as a zero-timeout one or one that may sleep; the first kind
 * lasts at least look_us, and the reply_on-th of them has the server
 * reply (reply_now()).
 */
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	int r;

	if (!counting)
		return __real_ppoll(fds, n, ts, mask);
	if (!ts || ts->tv_sec || ts->tv_nsec) {
		sleep_polls++;
		return __real_ppoll(fds, n, ts, mask);
	}
	if (++zero_polls == reply_on)
		return reply_now(fds, n, mask);
	r = __real_ppoll(fds, n, ts, mask);
	if (look_us)
		usleep((useconds_t)look_us);
	return r;
}

/**
 * __wrap_sched_yield() - sched_yield(), except while the calling thread
 * is counting: then it returns at once (a CPU nobody else needs, however
 * loaded the machine running the test is) or, with yield_us set, after
 * at least yield_us, as if another thread had run on this CPU.
 */
int __wrap_sched_yield(void)
{
	if (!counting)
		return __real_sched_yield();
	if (yield_us)
		usleep((useconds_t)yield_us);
	return 0;
}

/** Sockets of one test: a polled server and a polled client. */
struct pair {
	homa_socket *srv, *cli;
	uint64_t id;            /**< the client's RPC */
};

/**
 * open_spin() - A polled socket on 127.0.0.1 with spin_us @spin_us, the
 * tests' RPC timeout and RESENDs only after 1000 ticks of silence: no
 * packet comes while a test waits for a response the server holds back
 * (a packet read would open a new window of looks). Return: homa_open()'s
 * result.
 */
static int open_spin(homa_socket **s, bool server, uint32_t spin_us)
{
	struct homa_open_opts o;
	struct homa_settings st;

	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	st.resend_ticks = 1000;
	homa_open_opts_default(&o);
	o.mode = HOMA_MODE_POLLED;
	o.server = server;
	o.bind_addr = "127.0.0.1";
	o.settings = &st;
	o.spin_us = spin_us;
	return homa_open(s, &o);
}

/**
 * pair_open() - A server and a client looking for @spin_us; the client
 * sends a request, which the server takes (in this thread, not
 * counted) and leaves unanswered.
 */
static void pair_open(struct pair *p, uint32_t spin_us)
{
	struct sockaddr_storage dst;
	struct homa_message m;

	assert_int_equal(open_spin(&p->srv, true, spin_us), 0);
	assert_int_equal(open_spin(&p->cli, false, spin_us), 0);
	dst = test_dst(homa_local_port(p->srv));
	assert_int_equal(homa_send(p->cli, (struct sockaddr *)&dst, "hello", 5, 0, &p->id), 0);
	assert_int_equal(homa_recv(p->srv, HOMA_RECV_REQUEST, 0, 10000000000, &m), 0);
	reply_srv = p->srv;
	reply_id = m.id;
	homa_message_release(&m);
	zero_polls = sleep_polls = 0;
	homa_rt_spin_looks = homa_rt_spin_crowded = 0;
}

/**
 * wait_counted() - The client's homa_recv() of its response, waiting at
 * most @timeout_ns, with the test thread's ppoll() calls counted
 * (reply_on, look_us as set). Return: homa_recv()'s result; a response
 * is checked and released.
 */
static int wait_counted(struct pair *p, int64_t timeout_ns)
{
	struct homa_message m;
	char got[5];
	int err;

	counting = true;
	err = homa_recv(p->cli, HOMA_RECV_RESPONSE, p->id, timeout_ns, &m);
	counting = false;
	if (err)
		return err;
	assert_int_equal(m.length, 5);
	assert_int_equal(homa_message_copy(&m, 0, got, 5), 5);
	assert_memory_equal(got, "world", 5);
	homa_message_release(&m);
	return 0;
}

/** pair_close() - Close both sockets; reset the wrapper's settings. */
static void pair_close(struct pair *p)
{
	homa_close(p->cli);
	homa_close(p->srv);
	reply_on = look_us = yield_us = 0;
}

/**
 * homa_recv__response_during_looks() - With spin_us 10000, a response
 * that arrives during the client's second look is taken from that look:
 * homa_recv() returns it without a ppoll() that may sleep. Fails where
 * the blocking wait sleeps at once (0 looks, the response taken by a
 * sleeping ppoll()).
 */
static void homa_recv__response_during_looks(void **state)
{
	struct pair p;

	(void)state;
	pair_open(&p, HOMA_SPIN_US_MAX);
	reply_on = 2;
	assert_int_equal(wait_counted(&p, 10000000000), 0);
	assert_int_equal(sleep_polls, 0);
	assert_true(zero_polls >= 2);
	assert_true(homa_rt_spin_looks >= 2);
	pair_close(&p);
}

/**
 * homa_recv__looks_within_bound() - With spin_us 2000 and each look
 * lasting at least 500 us, a client waiting 100 ms for a response that
 * never comes looks at most 2000 / 500 + 1 times (one window, opened
 * when the wait began: the timers that wake it later open none), and
 * then sleeps. Fails if the looks go on past the window, or start again
 * at each wake-up.
 */
static void homa_recv__looks_within_bound(void **state)
{
	struct pair p;

	(void)state;
	pair_open(&p, 2000);
	look_us = 500;
	assert_int_equal(wait_counted(&p, 100000000), HOMA_ETIME);
	print_message("looks %llu, zero-timeout ppoll() %d, others %d\n",
		      (unsigned long long)homa_rt_spin_looks, zero_polls, sleep_polls);
	assert_true(homa_rt_spin_looks >= 1);
	assert_true(homa_rt_spin_looks <= 2000 / 500 + 1);
	assert_true(sleep_polls >= 1);
	pair_close(&p);
}

/**
 * homa_recv__no_looks_with_zero() - With spin_us 0 a client waiting 50 ms
 * for a response that does not come sleeps at once, as it did before the
 * option existed: no look, and its waits are ppoll() calls that may sleep.
 */
static void homa_recv__no_looks_with_zero(void **state)
{
	struct pair p;

	(void)state;
	pair_open(&p, 0);
	assert_int_equal(wait_counted(&p, 50000000), HOMA_ETIME);
	assert_int_equal(homa_rt_spin_looks, 0);
	assert_true(sleep_polls >= 1);
	pair_close(&p);
}

/**
 * homa_recv__crowded_yield_ends_looks() - With spin_us 10000 and each
 * yield between looks lasting at least 100 us (another thread ran on the
 * CPU), a client waiting 50 ms for a response that never comes looks
 * once, finds its CPU crowded and sleeps: its timer wake-ups later in
 * the 10 ms window do not look again (a packet read meanwhile opens a
 * new window, hence at most 3 looks). Fails where the looks go on
 * through the window (about 100 of them).
 */
static void homa_recv__crowded_yield_ends_looks(void **state)
{
	struct pair p;

	(void)state;
	pair_open(&p, HOMA_SPIN_US_MAX);
	yield_us = 100;
	assert_int_equal(wait_counted(&p, 50000000), HOMA_ETIME);
	print_message("looks %llu, crowded %llu, others %d\n",
		      (unsigned long long)homa_rt_spin_looks,
		      (unsigned long long)homa_rt_spin_crowded, sleep_polls);
	assert_true(homa_rt_spin_looks >= 1 && homa_rt_spin_looks <= 3);
	assert_true(homa_rt_spin_crowded >= 1);
	assert_true(sleep_polls >= 1);
	pair_close(&p);
}

/** ns_now() - CLOCK_MONOTONIC in ns. */
static uint64_t ns_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/**
 * homa_recv__crowded_windows_back_off() - One window ended by a crowded
 * yield does not stop the next wait's looks: with yields quick again, a
 * response arriving during the second look is taken without sleeping.
 * Three windows in a row ended so do: a fourth wait that begins within
 * 4 ms of the third (the backoff lasts 5 ms) makes no look at all (not
 * asserted, and said so, if the machine delayed it past that). Fails
 * where one crowded window stops the looks, or where no number of them
 * does.
 */
static void homa_recv__crowded_windows_back_off(void **state)
{
	uint64_t before_third = 0;
	struct pair p;

	(void)state;
	pair_open(&p, HOMA_SPIN_US_MAX);
	yield_us = 100;
	assert_int_equal(wait_counted(&p, 1000000), HOMA_ETIME);
	yield_us = 0;
	reply_on = zero_polls + 2;
	sleep_polls = 0;
	assert_int_equal(wait_counted(&p, 10000000000), 0);
	assert_int_equal(sleep_polls, 0);
	pair_close(&p);

	pair_open(&p, HOMA_SPIN_US_MAX);
	yield_us = 100;
	/* a slow machine may reach a 1 ms wait's end before its first yield:
	 * such a wait counts for nothing either way, so wait until three did */
	for (int i = 0; i < 20 && homa_rt_spin_crowded < 3; i++) {
		before_third = ns_now();
		assert_int_equal(wait_counted(&p, 1000000), HOMA_ETIME);
	}
	assert_int_equal(homa_rt_spin_crowded, 3);
	homa_rt_spin_looks = 0;
	yield_us = 0;
	if (ns_now() - before_third < 4000000) {
		assert_int_equal(wait_counted(&p, 1000000), HOMA_ETIME);
		assert_int_equal(homa_rt_spin_looks, 0);
	} else {
		print_message("the fourth wait began too late to be inside the backoff\n");
	}
	pair_close(&p);
}

/**
 * open_spin_us() - homa_open() on 127.0.0.1 of default options with
 * spin_us @v and version @version (0: the current one). Return:
 * homa_open()'s result; the socket is closed.
 */
static int open_spin_us(uint32_t v, uint32_t version)
{
	struct homa_open_opts o;
	homa_socket *s;
	int err;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.spin_us = v;
	if (version)
		o.version = version;
	err = homa_open(&s, &o);
	if (!err)
		homa_close(s);
	return err;
}

/**
 * homa_open__spin_range() - spin_us 0, 1 and HOMA_SPIN_US_MAX open; one
 * past the maximum and UINT32_MAX are HOMA_EINVAL; a version 8 struct
 * (before the field) opens whatever the field holds; the default is
 * HOMA_SPIN_US_DEFAULT.
 */
static void homa_open__spin_range(void **state)
{
	struct homa_open_opts o;

	(void)state;
	assert_int_equal(open_spin_us(0, 0), 0);
	assert_int_equal(open_spin_us(1, 0), 0);
	assert_int_equal(open_spin_us(HOMA_SPIN_US_MAX, 0), 0);
	assert_int_equal(open_spin_us(HOMA_SPIN_US_MAX + 1, 0), HOMA_EINVAL);
	assert_int_equal(open_spin_us(UINT32_MAX, 0), HOMA_EINVAL);
	assert_int_equal(open_spin_us(UINT32_MAX, 8), 0);
	homa_open_opts_default(&o);
	assert_int_equal(o.spin_us, HOMA_SPIN_US_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_recv__response_during_looks),
		cmocka_unit_test(homa_recv__looks_within_bound),
		cmocka_unit_test(homa_recv__no_looks_with_zero),
		cmocka_unit_test(homa_recv__crowded_yield_ends_looks),
		cmocka_unit_test(homa_recv__crowded_windows_back_off),
		cmocka_unit_test(homa_open__spin_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
