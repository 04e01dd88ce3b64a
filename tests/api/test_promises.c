/* SPDX-License-Identifier: MIT */
/**
 * @file test_promises.c
 * What homa.h promises beyond its error codes (those are
 * test_conformance.c's): homa_poll() waits as its timeout says even when
 * the standby thread holds the poller role; a message is read as it
 * arrives with homa_recv_partial_wait(), a response at the client and a
 * request at the server (HOMA_RECV_PARTIAL); a send's own timeout
 * (homa_send_opts) overrides the socket's; the earlier names are the
 * same functions as the new ones.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "api.h"

/** A request sent from a thread after a delay. */
struct later {
	homa_socket *cli;
	struct sockaddr_storage dst;
	useconds_t delay_us;
	const void *buf;
	size_t len;
	uint64_t id;
	int err;
};

/** send_later() - Thread body: sleep, then send the request of @arg. */
static void *send_later(void *arg)
{
	struct later *l = arg;

	usleep(l->delay_us);
	l->err = homa_request_buf(l->cli, (struct sockaddr *)&l->dst, l->buf, l->len, 0, &l->id);
	return NULL;
}

/**
 * poll_for_request() - homa_poll(@srv, -1) while another thread sends a
 * 1-byte request from @cli to @srv @delay_us later; then take the request.
 * Return: what homa_poll() returned (the test fails if the send did, or if
 * the request is not there after it).
 */
static int poll_for_request(homa_socket *srv, homa_socket *cli, useconds_t delay_us)
{
	struct later l = {.cli = cli, .dst = api_dst(srv), .delay_us = delay_us,
			  .buf = "p", .len = 1};
	struct homa_message m;
	pthread_t t;
	uint64_t t0;
	int n;

	assert_int_equal(pthread_create(&t, NULL, send_later, &l), 0);
	t0 = api_now_ns();
	n = homa_poll(srv, -1);
	t0 = api_now_ns() - t0;
	pthread_join(t, NULL);
	assert_int_equal(l.err, 0);
	if (n != 1)
		print_message("homa_poll(-1) returned %d after %llu us\n", n,
			      (unsigned long long)(t0 / 1000));
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 0, &m), 0);
	homa_message_release(&m);
	return n;
}

/**
 * homa_poll__waits_while_the_standby_polled() - A polled socket whose
 * application was away (the standby thread drives it): homa_poll() with
 * a timeout waits that long for packets, and with -1 until one arrives,
 * instead of returning at once with nothing.
 */
static void homa_poll__waits_while_the_standby_polled(void **state)
{
	homa_socket *srv, *cli;
	uint64_t t0;

	(void)state;
	assert_int_equal(api_open(&srv, HOMA_MODE_POLLED, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	usleep(50000); /* away for 10 x resend_ticks: the standby polls */
	t0 = api_now_ns();
	assert_int_equal(homa_poll(srv, 200000000), 0);
	assert_true(api_now_ns() - t0 >= 150000000);

	usleep(50000);
	assert_int_equal(poll_for_request(srv, cli, 300000), 1);
	homa_close(cli);
	homa_close(srv);
}

/**
 * homa_poll__kick_is_not_an_arrival() - homa_poll() with -1 waits until
 * a packet arrives even when the socket's wake-up was left set by an
 * earlier call (here homa_abort(), which interrupts a poller; the
 * standby thread handing the role over leaves the same). The old code
 * returned 0 at once, with nothing arrived.
 */
static void homa_poll__kick_is_not_an_arrival(void **state)
{
	homa_socket *srv, *cli;

	(void)state;
	assert_int_equal(api_open(&srv, HOMA_MODE_POLLED, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	assert_int_equal(homa_abort(srv, 2), HOMA_ENOTFOUND);
	assert_int_equal(poll_for_request(srv, cli, 200000), 1);
	homa_close(cli);
	homa_close(srv);
}

/** A server thread that answers one request after a delay. */
struct slow_server {
	homa_socket *s;
	useconds_t delay_us;
	const void *reply;
	size_t len;
};

/** slow_reply() - Thread body: take one request, wait, answer it. */
static void *slow_reply(void *arg)
{
	struct slow_server *ss = arg;
	struct homa_message m;

	if (homa_recv(ss->s, HOMA_RECV_REQUEST, 0, 30000000000LL, &m))
		return NULL;
	usleep(ss->delay_us);
	homa_reply_buf(ss->s, m.id, ss->reply, ss->len);
	homa_message_release(&m);
	return NULL;
}

/** fill() - Deterministic bytes. */
static void fill(uint8_t *b, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 131 + seed + (i >> 10));
}

/**
 * read_all() - Read message @id of @len bytes with
 * homa_recv_partial_wait() into @dst, checking the length reported.
 * Return: the number of calls it took.
 */
static int read_all(homa_socket *s, uint64_t id, uint8_t *dst, size_t len)
{
	struct homa_partial info;
	size_t off = 0;
	int calls = 0;

	while (off < len) {
		int64_t n = homa_recv_partial_wait(s, id, off, dst + off, len - off,
						   30000000000LL, &info);

		calls++;
		assert_true(n > 0);
		assert_int_equal(info.length, len);
		assert_true(info.arrived >= off + (size_t)n);
		off += (size_t)n;
	}
	assert_int_equal(homa_recv_partial_wait(s, id, len, dst, 1, 0, &info), 0);
	assert_true(info.complete);
	return calls;
}

/**
 * homa_recv_partial_wait__client_waits_for_the_response() - The call
 * blocks until the first response bytes arrive (the server answers
 * 200 ms late), then the whole response reads correctly and stays there
 * for homa_recv().
 */
static void homa_recv_partial_wait__client_waits_for_the_response(void **state)
{
	enum { LEN = 300000 };
	static uint8_t reply[LEN], got[LEN];
	struct slow_server ss = {.delay_us = 200000, .reply = reply, .len = LEN};
	homa_socket *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	pthread_t t;
	uint64_t id, t0;

	(void)state;
	fill(reply, LEN, 7);
	assert_int_equal(api_open(&ss.s, HOMA_MODE_THREADED, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	dst = api_dst(ss.s);
	assert_int_equal(pthread_create(&t, NULL, slow_reply, &ss), 0);
	assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, got, LEN, 0, NULL), HOMA_EAGAIN);
	t0 = api_now_ns();
	read_all(cli, id, got, LEN);
	assert_true(api_now_ns() - t0 >= 150000000);
	assert_memory_equal(got, reply, LEN);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(m.length, LEN);
	homa_message_release(&m);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, got, 1, 0, NULL), HOMA_ENOTFOUND);
	pthread_join(t, NULL);
	homa_close(cli);
	homa_close(ss.s);
}

/**
 * homa_recv_partial_wait__server_reads_a_request_as_it_arrives() - A 2 MB
 * request taken with HOMA_RECV_PARTIAL as soon as it starts, read to the
 * end with homa_recv_partial_wait(), answered, and never delivered again.
 */
static void homa_recv_partial_wait__server_reads_a_request_as_it_arrives(void **state)
{
	enum { LEN = 2 * 1024 * 1024 };
	uint8_t *req = malloc(LEN), *got = malloc(LEN);
	homa_socket *srv, *cli;
	struct homa_message m, r;
	struct later l = {.delay_us = 0, .len = LEN};
	pthread_t t;

	(void)state;
	assert_non_null(req);
	assert_non_null(got);
	fill(req, LEN, 3);
	assert_int_equal(api_open(&srv, HOMA_MODE_THREADED, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	/* the first call with HOMA_RECV_PARTIAL asks for announcements */
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0, 0, &m),
			 HOMA_EAGAIN);
	l.cli = cli;
	l.dst = api_dst(srv);
	l.buf = req;
	assert_int_equal(pthread_create(&t, NULL, send_later, &l), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0,
				   30000000000LL, &m), 0);
	assert_int_equal(m.type, HOMA_RECV_PARTIAL);
	assert_int_equal(m.length, LEN);
	assert_int_equal(m.id & 1, 1);
	assert_int_equal(homa_message_segment(&m, 0, &(const void *){NULL}), 0);
	read_all(srv, m.id, got, LEN);
	assert_memory_equal(got, req, LEN);
	assert_int_equal(homa_reply_buf(srv, m.id, "ok", 2), 0);
	assert_int_equal(homa_message_release(&m), 0);
	/* answered: its bytes are gone, and the whole request never came again */
	assert_int_equal(homa_recv_partial_wait(srv, m.id, 0, got, 1, 0, NULL), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 0, &r), HOMA_EAGAIN);
	pthread_join(t, NULL);
	assert_int_equal(l.err, 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, l.id, 30000000000LL, &r), 0);
	assert_int_equal(r.length, 2);
	homa_message_release(&r);
	homa_close(cli);
	homa_close(srv);
	free(req);
	free(got);
}

/**
 * homa_recv__partial_flag_takes_complete_requests_too() - A request that
 * arrived whole before anyone asked comes as an ordinary request.
 */
static void homa_recv__partial_flag_takes_complete_requests_too(void **state)
{
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	uint64_t id;

	(void)state;
	assert_int_equal(api_open(&srv, HOMA_MODE_THREADED, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	dst = api_dst(srv);
	assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, "abc", 3, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0,
				   30000000000LL, &m), 0);
	assert_int_equal(m.type, HOMA_RECV_REQUEST);
	assert_int_equal(m.length, 3);
	assert_int_equal(homa_reply_buf(srv, m.id, "d", 1), 0);
	homa_message_release(&m);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
}

/**
 * homa_request_opts__own_timeout_beats_the_socket() - A socket that would
 * wait forever (send_timeout_ns -1) or not at all (0) for buffer space:
 * one send's timeout_ns decides instead.
 */
static void homa_request_opts__own_timeout_beats_the_socket(void **state)
{
	static char buf[65536];
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_send_opts so;
	struct homa_iov iov;
	homa_socket *srv, *s;
	struct sockaddr_storage dst;
	uint64_t id, t0;

	(void)state;
	assert_int_equal(api_open(&srv, HOMA_MODE_THREADED, true, NULL), 0);
	dst = api_dst(srv);
	homa_settings_default(&st);
	st.max_tx_buffered = st.mtu;
	iov.base = buf;
	iov.len = st.mtu / 2 + 100; /* two do not fit */
	for (int64_t sock_timeout = -1; sock_timeout <= 0; sock_timeout++) {
		api_opts(&o, HOMA_MODE_THREADED, false, &st);
		o.send_timeout_ns = sock_timeout;
		assert_int_equal(homa_open(&s, &o), 0);
		/* the server never answers: the first request keeps the budget */
		assert_int_equal(homa_request_iov(s, (struct sockaddr *)&dst, &iov, 1, 0, &id), 0);
		homa_send_opts_default(&so);
		so.timeout_ns = 0;
		assert_int_equal(homa_request_opts(s, (struct sockaddr *)&dst, &iov, 1, &so, &id),
				 HOMA_EAGAIN);
		so.timeout_ns = 50000000;
		t0 = api_now_ns();
		assert_int_equal(homa_request_opts(s, (struct sockaddr *)&dst, &iov, 1, &so, &id),
				 HOMA_ETIME);
		assert_true(api_now_ns() - t0 >= 40000000);
		homa_close(s);
	}
	homa_close(srv);
}

/**
 * reply_then_close() - A server socket of @mode takes one request, replies
 * with @len bytes of fill(.., 9) and at once closes with @close_wait
 * (homa_close_wait(), up to 20 s) or homa_close(); the client then reads
 * the response. Return: homa_recv()'s result for the response (0 only if
 * every byte arrived intact); *@closed: the close call's result.
 */
static int reply_then_close(int mode, size_t len, bool close_wait, int *closed)
{
	static uint8_t reply[4 << 20], got[4 << 20];
	struct sockaddr_storage dst;
	struct homa_message m;
	homa_socket *srv, *cli;
	uint64_t id;
	int err;

	fill(reply, len, 9);
	assert_int_equal(api_open(&srv, mode, true, NULL), 0);
	assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
	dst = api_dst(srv);
	assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
	assert_int_equal(homa_reply_buf(srv, m.id, reply, len), 0);
	homa_message_release(&m);
	*closed = close_wait ? homa_close_wait(srv, 20000000000LL) : homa_close(srv);
	err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 10000000000LL, &m);
	if (!err) {
		if (m.length != len || homa_message_copy(&m, 0, got, len) != len ||
		    memcmp(got, reply, len))
			err = HOMA_EPROTO;
		homa_message_release(&m);
	}
	homa_close(cli);
	return err;
}

/**
 * homa_close_wait__large_reply_reaches_the_client() - A server that
 * replies 4 MB and closes at once with homa_close_wait() returns 0 once
 * the reply was acknowledged, and the client has every byte, in both
 * modes.
 */
static void homa_close_wait__large_reply_reaches_the_client(void **state)
{
	homa_socket *idle;
	int closed;

	(void)state;
	assert_int_equal(api_open(&idle, HOMA_MODE_THREADED, true, NULL), 0);
	assert_int_equal(homa_close_wait(idle, 20000000000LL), 0); /* nothing to wait for */
	assert_int_equal(reply_then_close(HOMA_MODE_THREADED, 4 << 20, true, &closed), 0);
	assert_int_equal(closed, 0);
	assert_int_equal(reply_then_close(HOMA_MODE_POLLED, 4 << 20, true, &closed), 0);
	assert_int_equal(closed, 0);
}

/**
 * homa_close__cut_reply_is_whole_or_a_clear_error() - homa_close() right
 * after a 4 MB reply drops whatever of it was not sent yet. How much that
 * is depends on scheduling (the replying thread itself sends what the
 * client grants while homa_reply_buf() flushes; on a loaded machine that
 * can be all of it), so the promise is: the client gets every byte
 * intact or a clear error (the server is gone), never corrupt data and
 * never a wait until its own 10 s timeout.
 */
static void homa_close__cut_reply_is_whole_or_a_clear_error(void **state)
{
	static const int modes[] = {HOMA_MODE_THREADED, HOMA_MODE_POLLED};
	int closed, err;

	(void)state;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		err = reply_then_close(modes[i], 4 << 20, false, &closed);
		assert_int_equal(closed, 0);
		if (err != 0 && err != HOMA_ENOSERVER && err != HOMA_EABANDONED &&
		    err != HOMA_ETIMEDOUT && err != HOMA_EPEERDEAD)
			fail_msg("mode %d: client got %d (%s)", modes[i], err, homa_strerror(err));
	}
}

/**
 * udp_sink() - A plain UDP socket on 127.0.0.1:@port that reads nothing:
 * datagrams to that port vanish without an ICMP port unreachable (which
 * would tell a Homa server its client is gone). The caller closes it.
 */
static int udp_sink(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/**
 * reply_to_silent_client() - A threaded server socket, returned in *@srv,
 * takes one request and replies 1 MB to a client that went silent (its
 * process hangs: its port stays open in a plain UDP socket, returned in
 * *@sink for the caller to close, and nothing answers). A server that
 * heard of the closed port before the sink opened (ICMP port unreachable:
 * the reply's RPC is gone, HOMA_ENOTFOUND) is set up again, up to 5 times.
 */
static void reply_to_silent_client(homa_socket **srv, int *sink)
{
	static uint8_t reply[1 << 20];
	struct sockaddr_storage dst;
	struct homa_message m;
	homa_socket *cli;
	uint64_t id;
	uint16_t port;
	int err = HOMA_ENOTFOUND;

	for (int tries = 0; err == HOMA_ENOTFOUND && tries < 5; tries++) {
		if (tries) {
			homa_close(*srv);
			close(*sink);
		}
		assert_int_equal(api_open(srv, HOMA_MODE_THREADED, true, NULL), 0);
		assert_int_equal(api_open(&cli, HOMA_MODE_THREADED, false, NULL), 0);
		dst = api_dst(*srv);
		assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
		assert_int_equal(homa_recv(*srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &m), 0);
		port = (uint16_t)homa_local_port(cli);
		homa_close(cli);
		*sink = udp_sink(port);
		err = homa_reply_buf(*srv, m.id, reply, sizeof(reply));
		homa_message_release(&m);
	}
	assert_int_equal(err, 0);
}

/**
 * homa_close_wait__gives_up_after_its_timeout() - A reply whose client
 * went silent is never acknowledged: homa_close_wait() waits its 100 ms,
 * returns HOMA_ETIME and the socket is closed all the same. (A client
 * whose port closed is gone at once: ICMP port unreachable frees the
 * reply.)
 */
static void homa_close_wait__gives_up_after_its_timeout(void **state)
{
	homa_socket *srv;
	uint64_t t0;
	int sink;

	(void)state;
	reply_to_silent_client(&srv, &sink);
	t0 = api_now_ns();
	assert_int_equal(homa_close_wait(srv, 100000000), HOMA_ETIME);
	assert_true(api_now_ns() - t0 >= 90000000);
	assert_int_equal(homa_close(srv), HOMA_ESHUTDOWN);
	close(sink);
}

/**
 * homa_close__does_not_wait_for_a_silent_client() - homa_close() right
 * after a 1 MB reply to a client that never acknowledges returns 0
 * without waiting for it (a wait would never end); homa_close_wait() is
 * the call that waits.
 */
static void homa_close__does_not_wait_for_a_silent_client(void **state)
{
	homa_socket *srv;
	int sink;

	(void)state;
	reply_to_silent_client(&srv, &sink);
	assert_int_equal(homa_close(srv), 0);
	close(sink);
}

/**
 * names__aliases_are_the_same_functions() - The earlier names are the
 * new functions themselves (no wrapper).
 */
static void names__aliases_are_the_same_functions(void **state)
{
	(void)state;
	assert_ptr_equal((void *)homa_send, (void *)homa_request_buf);
	assert_ptr_equal((void *)homa_send_request, (void *)homa_request_iov);
	assert_ptr_equal((void *)homa_send_request_zc, (void *)homa_request_zc);
	assert_ptr_equal((void *)homa_reply, (void *)homa_reply_iov);
}

/**
 * homa_fd__fails_cleanly_at_the_descriptor_limit() - A polled socket's
 * homa_fd() at the process's descriptor limit returns HOMA_EIO and keeps
 * nothing: with room for one more descriptor, the timer it created is
 * closed again (it stayed open, and a later call opened another), and once
 * room is back the call gives a descriptor that works.
 */
static void homa_fd__fails_cleanly_at_the_descriptor_limit(void **state)
{
	struct rlimit was, one;
	homa_socket *s;
	int next, fd;

	(void)state;
	assert_int_equal(api_open(&s, HOMA_MODE_POLLED, false, NULL), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	next = dup(0); /* the lowest free descriptor number */
	assert_true(next >= 0);
	close(next);
	one = was;
	one.rlim_cur = (rlim_t)next + 1; /* room for exactly one more */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &one), 0);
	fd = homa_fd(s);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	assert_int_equal(fd, HOMA_EIO);
	assert_int_equal(fcntl(next, F_GETFD), -1); /* nothing kept open */
	fd = homa_fd(s);
	assert_true(fd >= 0);
	assert_int_equal(homa_poll(s, 0), 0);
	assert_int_equal(homa_close(s), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_poll__waits_while_the_standby_polled),
		cmocka_unit_test(homa_poll__kick_is_not_an_arrival),
		cmocka_unit_test(homa_recv_partial_wait__client_waits_for_the_response),
		cmocka_unit_test(homa_recv_partial_wait__server_reads_a_request_as_it_arrives),
		cmocka_unit_test(homa_recv__partial_flag_takes_complete_requests_too),
		cmocka_unit_test(homa_request_opts__own_timeout_beats_the_socket),
		cmocka_unit_test(names__aliases_are_the_same_functions),
		cmocka_unit_test(homa_close_wait__large_reply_reaches_the_client),
		cmocka_unit_test(homa_close__cut_reply_is_whole_or_a_clear_error),
		cmocka_unit_test(homa_close_wait__gives_up_after_its_timeout),
		cmocka_unit_test(homa_fd__fails_cleanly_at_the_descriptor_limit),
		cmocka_unit_test(homa_close__does_not_wait_for_a_silent_client),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
