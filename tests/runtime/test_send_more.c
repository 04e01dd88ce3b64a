/* SPDX-License-Identifier: MIT */
/**
 * @file test_send_more.c
 * HOMA_SEND_MORE (src/runtime/tx.c, homa_rt_unlock_send_out()): a send with it
 * leaves its packets in the socket, and the next send without it, a
 * homa_recv() that finds no message ready, or the socket's own thread
 * sends them, so replies to a batch of requests leave in one system call
 * (homa_io_stats.tx_calls) and none is stranded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "rt.h"

/** Requests of a batch. */
#define N 16
/** Longest wait for a message that must come (a loaded machine is slow). */
#define WAIT_NS 10000000000LL

/** A polled client and server on loopback, and the server's N requests. */
struct pair {
	homa_socket *cli, *srv;
	struct sockaddr_storage dst;
	struct homa_message req[N];
};

/** sent() - The socket's send calls and DATA packets so far. */
static void sent(homa_socket *s, uint64_t *calls, uint64_t *pkts)
{
	struct homa_io_stats io;
	struct homa_stats st;

	assert_int_equal(homa_io_stats(s, &io), 0);
	assert_int_equal(homa_socket_stats(s, &st), 0);
	*calls = io.tx_calls;
	*pkts = st.pkts_sent[HOMA_PKT_DATA - HOMA_PKT_FIRST];
}

/**
 * slow_settings() - Defaults, but the standby thread steps in and
 * clients ask for missing data only after 2 s (resend_ticks), so on a
 * slow machine (sanitizers) no other thread sends while a test counts.
 */
static const struct homa_settings *slow_settings(void)
{
	static struct homa_settings st;

	homa_settings_default(&st);
	st.resend_ticks = st.resend_interval = 2000;
	st.timeout_ticks = 20 * 2000;
	return &st;
}

/**
 * open_pair() - Sockets of @mode; the client sends @n requests of 100
 * bytes (cookie i) and the server takes them all before replying.
 */
static void open_pair(struct pair *p, int mode, int n)
{
	uint8_t buf[100];
	uint64_t id;

	memset(p, 0, sizeof(*p));
	assert_int_equal(test_open(&p->srv, HOMA_DRIVER_UDP, mode, true, 0, slow_settings()), 0);
	assert_int_equal(test_open(&p->cli, HOMA_DRIVER_UDP, mode, false, 0, slow_settings()), 0);
	p->dst = test_dst(homa_local_port(p->srv));
	for (int i = 0; i < n; i++) {
		test_fill(buf, sizeof(buf), (uint64_t)i);
		assert_int_equal(homa_request_buf(p->cli, (struct sockaddr *)&p->dst, buf,
						  sizeof(buf), (uint64_t)i, &id), 0);
	}
	for (int i = 0; i < n; i++)
		assert_int_equal(homa_recv(p->srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &p->req[i]), 0);
}

/** reply() - Reply to request @i with its bytes, @flags in the options. */
static int reply(struct pair *p, int i, uint32_t flags)
{
	uint8_t buf[100];
	struct homa_iov iov = {buf, sizeof(buf)};
	struct homa_send_opts o;

	homa_send_opts_default(&o);
	o.flags = flags;
	homa_message_copy(&p->req[i], 0, buf, sizeof(buf));
	return homa_reply_opts(p->srv, p->req[i].id, &iov, 1, &o);
}

/** collect() - The client gets @n responses, each the bytes of its request. */
static void collect(struct pair *p, int n)
{
	uint8_t want[100], got[100];

	for (int i = 0; i < n; i++) {
		struct homa_message m;

		assert_int_equal(homa_recv(p->cli, HOMA_RECV_RESPONSE, 0, WAIT_NS, &m), 0);
		assert_true(m.cookie < (uint64_t)n);
		test_fill(want, sizeof(want), m.cookie);
		assert_int_equal(homa_message_copy(&m, 0, got, sizeof(got)), (int)sizeof(got));
		assert_memory_equal(got, want, sizeof(want));
		homa_message_release(&m);
	}
}

/** close_pair() - Close both sockets. */
static void close_pair(struct pair *p)
{
	homa_close(p->srv);
	homa_close(p->cli);
}

/**
 * send_more__replies_leave_together() - N replies with HOMA_SEND_MORE,
 * each request released after its reply (a release sends nothing either
 * while sends are corked), send nothing; the server's next homa_recv(),
 * finding no request, sends all N in one system call, and the client
 * gets every response. (The old code refused the flag: HOMA_EINVAL.)
 */
static void send_more__replies_leave_together(void **state)
{
	struct homa_message m;
	uint64_t c0, p0, c1, p1;
	struct pair p;

	(void)state;
	open_pair(&p, HOMA_MODE_POLLED, N);
	sent(p.srv, &c0, &p0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(reply(&p, i, HOMA_SEND_MORE), 0);
		homa_message_release(&p.req[i]);
	}
	sent(p.srv, &c1, &p1);
	assert_int_equal(c1 - c0, 0);
	assert_int_equal(p1 - p0, 0);
	assert_int_equal(homa_recv(p.srv, HOMA_RECV_REQUEST, 0, 0, &m), HOMA_EAGAIN);
	sent(p.srv, &c1, &p1);
	assert_int_equal(p1 - p0, N);
	assert_int_equal(c1 - c0, 1);
	collect(&p, N);
	close_pair(&p);
}

/**
 * send_more__plain_send_ends_batch() - Replies with HOMA_SEND_MORE, then
 * one without: that call sends all of them, in one system call.
 */
static void send_more__plain_send_ends_batch(void **state)
{
	uint64_t c0, p0, c1, p1;
	struct pair p;

	(void)state;
	open_pair(&p, HOMA_MODE_POLLED, 4);
	sent(p.srv, &c0, &p0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(reply(&p, i, HOMA_SEND_MORE), 0);
	assert_int_equal(reply(&p, 3, 0), 0);
	sent(p.srv, &c1, &p1);
	assert_int_equal(p1 - p0, 4);
	assert_int_equal(c1 - c0, 1);
	for (int i = 0; i < 4; i++)
		homa_message_release(&p.req[i]);
	collect(&p, 4);
	close_pair(&p);
}

/**
 * send_more__request_goes_with_wait() - A request with HOMA_SEND_MORE is
 * not sent by its call; the client's homa_recv() for the response, with
 * nothing ready, sends it first, and the response comes.
 */
static void send_more__request_goes_with_wait(void **state)
{
	struct homa_send_opts o;
	struct homa_message m;
	uint8_t buf[100] = {7};
	struct homa_iov iov = {buf, sizeof(buf)};
	struct test_server ts;
	struct sockaddr_storage dst;
	homa_socket *cli;
	uint64_t c0, p0, c1, p1, id;

	(void)state;
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, 1,
					   slow_settings()), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0,
				   slow_settings()), 0);
	dst = test_dst(ts.port);
	homa_send_opts_default(&o);
	o.flags = HOMA_SEND_MORE;
	sent(cli, &c0, &p0);
	assert_int_equal(homa_request_opts(cli, (struct sockaddr *)&dst, &iov, 1, &o, &id), 0);
	sent(cli, &c1, &p1);
	assert_int_equal(p1 - p0, 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), 0);
	assert_int_equal(m.id, id);
	homa_message_release(&m);
	homa_close(cli);
	test_server_stop(&ts);
}

/**
 * left_alone() - A reply with HOMA_SEND_MORE after which the server's
 * application makes no call at all still reaches the client: the
 * socket's own thread sends it (polled: the standby thread, here after 2 s;
 * threaded: the I/O thread, at its next tick).
 */
static void left_alone(int mode)
{
	struct pair p;

	open_pair(&p, mode, 1);
	assert_int_equal(reply(&p, 0, HOMA_SEND_MORE), 0);
	homa_message_release(&p.req[0]);
	collect(&p, 1);
	close_pair(&p);
}

/** send_more__left_alone_polled() - left_alone() in polled mode. */
static void send_more__left_alone_polled(void **state)
{
	(void)state;
	left_alone(HOMA_MODE_POLLED);
}

/** send_more__left_alone_threaded() - left_alone() in threaded mode. */
static void send_more__left_alone_threaded(void **state)
{
	(void)state;
	left_alone(HOMA_MODE_THREADED);
}

/**
 * send_more__any_flush_clears_note() - A reply with HOMA_SEND_MORE that
 * another call's flush sent (homa_abort() sends what the engine holds)
 * leaves no note that packets are held: otherwise every later release
 * skips its flush and every homa_recv() that finds nothing ready flushes
 * once more for nothing. (The old code cleared the note only when a
 * send without the flag went out: still set here.)
 */
static void send_more__any_flush_clears_note(void **state)
{
	uint64_t c0, p0, c1, p1;
	struct homa_rt *rt;
	struct pair p;

	(void)state;
	open_pair(&p, HOMA_MODE_POLLED, 2);
	sent(p.srv, &c0, &p0);
	assert_int_equal(reply(&p, 0, HOMA_SEND_MORE), 0);
	rt = homa_rt_get(p.srv);
	assert_non_null(rt);
	assert_true(atomic_load(&rt->tx_corked));
	homa_abort(p.srv, 2);  /* an id it does not know: only the flush matters */
	sent(p.srv, &c1, &p1);
	assert_int_equal(p1 - p0, 1);
	assert_false(atomic_load(&rt->tx_corked));
	homa_rt_put(rt);
	assert_int_equal(reply(&p, 1, 0), 0);
	homa_message_release(&p.req[0]);
	homa_message_release(&p.req[1]);
	collect(&p, 2);
	close_pair(&p);
}

/** send_more__unknown_flag_refused() - A flag bit this library does not know: HOMA_EINVAL. */
static void send_more__unknown_flag_refused(void **state)
{
	struct pair p;

	(void)state;
	open_pair(&p, HOMA_MODE_POLLED, 1);
	assert_int_equal(reply(&p, 0, 0x80000000u), HOMA_EINVAL);
	assert_int_equal(reply(&p, 0, HOMA_SEND_MORE | HOMA_SEND_LATENCY), 0);
	homa_message_release(&p.req[0]);
	collect(&p, 1);
	close_pair(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(send_more__replies_leave_together),
		cmocka_unit_test(send_more__plain_send_ends_batch),
		cmocka_unit_test(send_more__request_goes_with_wait),
		cmocka_unit_test(send_more__left_alone_polled),
		cmocka_unit_test(send_more__left_alone_threaded),
		cmocka_unit_test(send_more__any_flush_clears_note),
		cmocka_unit_test(send_more__unknown_flag_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
