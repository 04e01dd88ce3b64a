/* SPDX-License-Identifier: MIT */
/**
 * @file test_api.c
 * The public API's contract: argument checks, documented errors, misuse
 * (reply to unknown or answered RPCs, use after close, port in use),
 * abort, close with blocked threads, polled mode, IPv6, backpressure and
 * incremental receive. Nothing may crash or leak.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** rpc() - One RPC of @len bytes from @cli to port @port; check it. */
static void rpc(homa_socket *cli, int port, size_t len, uint64_t seed)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t *buf = malloc(len);
	struct homa_message m;
	uint64_t id;

	test_fill(buf, len, seed);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, len, seed, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(m.id, id);
	assert_int_equal(m.cookie, seed);
	assert_int_equal(m.type, HOMA_RECV_RESPONSE);
	assert_true(test_check_response(&m, len, seed));
	homa_message_release(&m);
	homa_message_release(&m); /* twice is harmless */
	free(buf);
}

/** homa_open__rejects_bad_options() - Each bad field gives HOMA_EINVAL. */
static void homa_open__rejects_bad_options(void **state)
{
	struct homa_open_opts o;
	struct homa_settings st;
	homa_socket *s;

	assert_int_equal(homa_open(NULL, NULL), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.version = 99;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.driver = 7;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.mode = 3;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.batch = 0;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.bind_addr = "not-an-address";
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	homa_settings_default(&st);
	st.mtu = 10;
	o.settings = &st;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_settings_default(&st);
	st.mtu = 70000;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	/* NULL options mean the defaults */
	assert_int_equal(homa_open(&s, NULL), 0);
	assert_true(homa_local_port(s) > 0);
	assert_int_equal(homa_close(s), 0);
}

/** homa_open__port_in_use() - A second socket on a bound port fails. */
static void homa_open__port_in_use(void **state)
{
	homa_socket *a, *b = NULL;

	assert_int_equal(test_open(&a, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&b, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true,
				   (uint16_t)homa_local_port(a), NULL), HOMA_EADDRINUSE);
	if (test_is_root())
		assert_int_equal(test_open(&b, HOMA_DRIVER_RAW, HOMA_MODE_THREADED, true,
					   (uint16_t)homa_local_port(a), NULL), HOMA_EADDRINUSE);
	homa_close(a);
}

/** homa_send__rejects_bad_arguments() - NULLs, empty, port 0, families, size. */
static void homa_send__rejects_bad_arguments(void **state)
{
	struct homa_settings st;
	struct sockaddr_storage dst = test_dst(4000), zero = test_dst(0), v6;
	struct sockaddr_storage unix_sa = {.ss_family = AF_UNIX};
	socklen_t l;
	struct homa_iov iov = {"x", 1};
	homa_socket *s;
	uint64_t id;
	char *big;

	homa_settings_default(&st);
	st.max_message = 100000;
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	assert_int_equal(homa_send(NULL, (struct sockaddr *)&dst, "x", 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send(s, NULL, "x", 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send(s, (struct sockaddr *)&dst, NULL, 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send(s, (struct sockaddr *)&dst, "x", 1, 0, NULL), HOMA_EINVAL);
	assert_int_equal(homa_send(s, (struct sockaddr *)&zero, "x", 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send(s, (struct sockaddr *)&unix_sa, "x", 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send_request(s, (struct sockaddr *)&dst, &iov, 0, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_send_request(s, (struct sockaddr *)&dst, NULL, 1, 0, &id), HOMA_EINVAL);
	assert_int_equal(homa_sockaddr_parse("::1", 4000, &v6, &l), 0);
	assert_int_equal(homa_send(s, (struct sockaddr *)&v6, "x", 1, 0, &id), HOMA_ENOTSUP);
	big = calloc(1, 100001);
	assert_int_equal(homa_send(s, (struct sockaddr *)&dst, big, 100001, 0, &id), HOMA_EMSGSIZE);
	free(big);
	homa_close(s);
}

/**
 * homa_sockaddr_parse__numeric_only() - IPv4 and IPv6 text parse with the
 * port; NULL arguments, names and junk give HOMA_EINVAL and leave the
 * outputs as they were.
 */
static void homa_sockaddr_parse__numeric_only(void **state)
{
	static const char *bad[] = {"localhost", "", "1.2.3", "1.2.3.4.5", "::1::2", "10.0.0.1 "};
	struct sockaddr_storage sa, keep;
	const struct sockaddr_in *in = (const struct sockaddr_in *)&sa;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&sa;
	socklen_t l = 7;
	size_t i;

	(void)state;
	memset(&sa, 0xa5, sizeof(sa));
	keep = sa;
	assert_int_equal(homa_sockaddr_parse(NULL, 1, &sa, &l), HOMA_EINVAL);
	assert_int_equal(homa_sockaddr_parse("10.0.0.1", 1, NULL, &l), HOMA_EINVAL);
	assert_int_equal(homa_sockaddr_parse("10.0.0.1", 1, &sa, NULL), HOMA_EINVAL);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(homa_sockaddr_parse(bad[i], 1, &sa, &l), HOMA_EINVAL);
	assert_memory_equal(&sa, &keep, sizeof(sa));
	assert_int_equal(l, 7);
	assert_int_equal(homa_sockaddr_parse("10.0.0.1", 4000, &sa, &l), 0);
	assert_int_equal(l, sizeof(struct sockaddr_in));
	assert_int_equal(in->sin_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 4000);
	assert_int_equal(ntohl(in->sin_addr.s_addr), 0x0a000001);
	assert_int_equal(homa_sockaddr_parse("fe80::1", 65535, &sa, &l), 0);
	assert_int_equal(l, sizeof(struct sockaddr_in6));
	assert_int_equal(in6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(in6->sin6_port), 65535);
	assert_int_equal(in6->sin6_addr.s6_addr[0], 0xfe);
	assert_int_equal(in6->sin6_addr.s6_addr[15], 1);
}

/** homa_recv__rejects_bad_arguments() - Flags, ids, non-server, timeout 0. */
static void homa_recv__rejects_bad_arguments(void **state)
{
	struct homa_message m;
	homa_socket *s;

	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	assert_int_equal(homa_recv(NULL, HOMA_RECV_RESPONSE, 0, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 0, 0, NULL), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, 0, 0, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, 0x10, 0, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, HOMA_RECV_REQUEST, 0, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 3, 0, &m), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 1234, -1, &m), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 0, 0, &m), HOMA_EAGAIN);
	assert_int_equal(homa_recv(s, HOMA_RECV_RESPONSE, 0, 20000000, &m), HOMA_ETIME);
	assert_int_equal(homa_poll(s, 0), HOMA_EINVAL); /* threaded socket */
	homa_close(s);
}

/** homa_reply__unknown_and_already_answered() - ENOTFOUND, then ESTATE. */
static void homa_reply__unknown_and_already_answered(void **state)
{
	struct sockaddr_storage dst;
	struct homa_message req, resp;
	homa_socket *srv, *cli;
	uint64_t id;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_reply_buf(srv, 12345, "x", 1), HOMA_ENOTFOUND);
	assert_int_equal(homa_reply_buf(srv, 12345, NULL, 1), HOMA_EINVAL);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "hello", 5, 7, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 10000000000LL, &req), 0);
	assert_int_equal(req.type, HOMA_RECV_REQUEST);
	assert_int_equal(req.length, 5);
	assert_true(req.id & 1);
	assert_int_equal(req.peer.ss_family, AF_INET);
	assert_int_equal(homa_reply_buf(srv, req.id, "world", 5), 0);
	/* answered: ESTATE, or ENOTFOUND once the client acked and it is gone */
	int again = homa_reply_buf(srv, req.id, "again", 5);

	assert_true(again == HOMA_ESTATE || again == HOMA_ENOTFOUND);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 10000000000LL, &resp), 0);
	assert_int_equal(resp.length, 5);
	assert_int_equal(resp.cookie, 7);
	char got[5];

	assert_int_equal(homa_message_copy(&resp, 0, got, 5), 5);
	assert_memory_equal(got, "world", 5);
	homa_message_release(&resp);
	/* the id is finished now */
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, &resp), HOMA_ENOTFOUND);
	homa_close(cli);
	homa_close(srv);
}

/**
 * homa_recv__a_served_id_is_no_response() - On a socket that is client
 * and server, the id of a request it serves (odd) names no response to
 * wait for (HOMA_ENOTFOUND, at once even with no timeout), and an id
 * without HOMA_RECV_RESPONSE is HOMA_EINVAL; the request is answered as
 * usual afterwards.
 */
static void homa_recv__a_served_id_is_no_response(void **state)
{
	struct sockaddr_storage dst;
	struct homa_message req, m;
	homa_socket *srv, *cli;
	uint64_t id;

	(void)state;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "hello", 5, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 10000000000LL, &req), 0);
	assert_true(req.id & 1);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 2, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, req.id, 0, &m), HOMA_EINVAL);
	assert_int_equal(homa_recv(srv, HOMA_RECV_RESPONSE, req.id, -1, &m), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv(srv, HOMA_RECV_RESPONSE | HOMA_RECV_REQUEST, req.id, -1, &m),
			 HOMA_ENOTFOUND);
	assert_int_equal(homa_reply_buf(srv, req.id, "world", 5), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 10000000000LL, &m), 0);
	assert_int_equal(m.length, 5);
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
}

/** homa_close__then_every_call_says_shutdown() - Use after close. */
static void homa_close__then_every_call_says_shutdown(void **state)
{
	struct test_server srv;
	struct sockaddr_storage dst;
	struct homa_message m;
	struct homa_stats st;
	struct homa_io_stats io;
	struct homa_settings set;
	homa_socket *cli;
	uint64_t id;

	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(srv.port);
	/* keep a response unreleased across the close */
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "abc", 3, 0, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 10000000000LL, &m), 0);
	assert_int_equal(homa_close(cli), 0);
	homa_message_release(&m); /* after close: does nothing */
	homa_settings_default(&set);
	assert_int_equal(homa_close(cli), HOMA_ESHUTDOWN);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "x", 1, 0, &id), HOMA_ESHUTDOWN);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, 0, 0, &m), HOMA_ESHUTDOWN);
	assert_int_equal(homa_reply_buf(cli, 1, "x", 1), HOMA_ESHUTDOWN);
	assert_int_equal(homa_abort(cli, 2), HOMA_ESHUTDOWN);
	assert_int_equal(homa_fd(cli), HOMA_ESHUTDOWN);
	assert_int_equal(homa_poll(cli, 0), HOMA_ESHUTDOWN);
	assert_int_equal(homa_local_port(cli), HOMA_ESHUTDOWN);
	assert_int_equal(homa_socket_stats(cli, &st), HOMA_ESHUTDOWN);
	assert_int_equal(homa_io_stats(cli, &io), HOMA_ESHUTDOWN);
	assert_int_equal(homa_set_settings(cli, &set), HOMA_ESHUTDOWN);
	assert_int_equal(homa_recv_partial(cli, 2, 0, NULL, 0, NULL), HOMA_ESHUTDOWN);
	assert_int_equal(homa_close(NULL), HOMA_EINVAL);
	/* a fresh socket can reuse the slot; the old handle stays dead */
	homa_socket *again;

	assert_int_equal(test_open(&again, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	assert_int_equal(homa_local_port(cli), HOMA_ESHUTDOWN);
	rpc(again, srv.port, 1000, 5);
	homa_close(again);
	test_server_stop(&srv);
}

/** Arguments of blocked_recv(). */
struct blocked {
	homa_socket *s;
	uint64_t id;
	int err;
	_Atomic pid_t tid; /* the thread's gettid(), set before it calls */
};

/** blocked_recv() - Wait (forever) for one response. */
static void *blocked_recv(void *arg)
{
	struct blocked *b = arg;
	struct homa_message m;

	b->tid = test_tid();
	b->err = homa_recv(b->s, HOMA_RECV_RESPONSE, b->id, -1, &m);
	if (b->err == 0)
		homa_message_release(&m);
	return NULL;
}

/**
 * homa_abort__wakes_waiter_with_canceled() - A thread waiting for an
 * aborted RPC returns HOMA_ECANCELED; unknown ids give HOMA_ENOTFOUND.
 */
static void homa_abort__wakes_waiter_with_canceled(void **state)
{
	homa_socket *cli, *silent;
	struct sockaddr_storage dst;
	struct blocked b;
	pthread_t th;

	/* a server socket whose application never answers */
	assert_int_equal(test_open(&silent, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(silent));
	b.s = cli;
	b.tid = 0;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &b.id), 0);
	pthread_create(&th, NULL, blocked_recv, &b);
	while (b.tid == 0)
		usleep(1000);
	assert_true(test_wait_asleep(b.tid, 10));
	assert_int_equal(homa_abort(cli, b.id), 0);
	pthread_join(th, NULL);
	assert_int_equal(b.err, HOMA_ECANCELED);
	assert_int_equal(homa_abort(cli, b.id), HOMA_ENOTFOUND);
	assert_int_equal(homa_abort(cli, 424242), HOMA_ENOTFOUND);
	assert_int_equal(homa_abort(cli, 0), HOMA_EINVAL);
	homa_close(cli);
	homa_close(silent);
}

/**
 * homa_close__wakes_blocked_threads() - Threads blocked in homa_recv()
 * return when another thread closes the socket.
 */
static void homa_close__wakes_blocked_threads(void **state)
{
	homa_socket *cli, *silent;
	struct sockaddr_storage dst;
	struct blocked b[3];
	pthread_t th[3];

	assert_int_equal(test_open(&silent, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(homa_local_port(silent));
	for (int i = 0; i < 3; i++) {
		b[i].s = cli;
		b[i].id = 0;
		b[i].tid = 0;
		if (i < 2)
			assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &b[i].id), 0);
		pthread_create(&th[i], NULL, blocked_recv, &b[i]);
	}
	for (int i = 0; i < 3; i++) {
		while (b[i].tid == 0)
			usleep(1000);
		assert_true(test_wait_asleep(b[i].tid, 10));
	}
	assert_int_equal(homa_close(cli), 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(b[i].err, HOMA_ESHUTDOWN);
	}
	homa_close(silent);
}

/** homa_send__waits_then_eagain_when_buffer_full() - Backpressure. */
static void homa_send__waits_then_eagain_when_buffer_full(void **state)
{
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_io_stats io;
	homa_socket *cli, *silent;
	struct sockaddr_storage dst;
	char *buf = calloc(1, 60000);
	uint64_t id;
	int err = 0, sent = 0;

	assert_int_equal(test_open(&silent, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	homa_open_opts_default(&o);
	homa_settings_default(&st);
	st.max_tx_buffered = 200000;
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	o.settings = &st;
	o.bind_addr = "127.0.0.1";
	o.send_timeout_ns = 30000000; /* 30 ms */
	assert_int_equal(homa_open(&cli, &o), 0);
	dst = test_dst(homa_local_port(silent));
	/* the server never replies, so sent requests stay buffered */
	for (int i = 0; i < 20 && !err; i++) {
		err = homa_send(cli, (struct sockaddr *)&dst, buf, 60000, 0, &id);
		sent += err == 0;
	}
	assert_int_equal(err, HOMA_ETIME);
	assert_true(sent >= 1 && sent < 20);
	assert_int_equal(homa_io_stats(cli, &io), 0);
	assert_true(io.send_waits >= 1);
	homa_close(cli);
	homa_close(silent);
	free(buf);
}

/** homa_recv_partial__reads_a_response_while_it_arrives() - Incremental receive. */
static void homa_recv_partial__reads_a_response_while_it_arrives(void **state)
{
	struct test_server srv;
	struct sockaddr_storage dst;
	struct homa_message m;
	const size_t len = 3000000;
	uint8_t *req = malloc(len), *part = malloc(len), *want = malloc(len);
	homa_socket *cli;
	size_t have = 0;
	uint64_t id;
	int err;

	assert_int_equal(test_server_start(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(srv.port);
	test_fill(req, len, 77);
	for (size_t i = 0; i < len; i++)
		want[i] = req[i] ^ 0x5a;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, req, len, 0, &id), 0);
	while ((err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, &m)) == HOMA_EAGAIN) {
		size_t avail = 0;
		int64_t n = homa_recv_partial(cli, id, have, part + have, len - have, &avail);

		assert_true(n >= 0 || n == HOMA_ENOTFOUND);
		if (n > 0) {
			assert_memory_equal(part + have, want + have, (size_t)n);
			have += (size_t)n;
		}
		usleep(200);
	}
	assert_int_equal(err, 0);
	print_message("read %zu of %zu bytes incrementally before completion\n", have, len);
	assert_true(test_check_response(&m, len, 77));
	homa_message_release(&m);
	assert_int_equal(homa_recv_partial(cli, id, 0, part, 1, NULL), HOMA_ENOTFOUND);
	homa_close(cli);
	test_server_stop(&srv);
	free(req);
	free(part);
	free(want);
}

/** server_thread_polled() - Serve a polled socket (homa_recv drives I/O). */
static void *server_thread_polled(void *arg)
{
	uint64_t served = 0, errors = 0;

	test_serve_forever(arg, &served, &errors);
	return NULL;
}

/** homa_open__polled_mode_serves_and_calls() - No runtime thread at all. */
static void homa_open__polled_mode_serves_and_calls(void **state)
{
	homa_socket *srv, *cli;
	pthread_t th;

	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, true, 0, NULL), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_POLLED, false, 0, NULL), 0);
	pthread_create(&th, NULL, server_thread_polled, srv);
	for (int i = 0; i < 50; i++)
		rpc(cli, homa_local_port(srv), (size_t)(1 + i * 997), (uint64_t)i);
	rpc(cli, homa_local_port(srv), 2000000, 99);
	assert_true(homa_poll(cli, 0) >= 0);
	homa_close(cli);
	homa_close(srv);
	pthread_join(th, NULL);
}

/** homa_open__ipv6_loopback() - A socket bound to ::1 talks IPv6. */
static void homa_open__ipv6_loopback(void **state)
{
	struct homa_open_opts o;
	homa_socket *srv, *cli;
	struct sockaddr_storage dst;
	struct homa_message m;
	socklen_t l;
	pthread_t th;
	uint64_t id;

	homa_open_opts_default(&o);
	o.bind_addr = "::1";
	o.server = true;
	if (homa_open(&srv, &o) == HOMA_ENOTSUP)
		skip();
	o.server = false;
	assert_int_equal(homa_open(&cli, &o), 0);
	pthread_create(&th, NULL, server_thread_polled, srv);
	assert_int_equal(homa_sockaddr_parse("::1", (uint16_t)homa_local_port(srv), &dst, &l), 0);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "six", 3, 6, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 10000000000LL, &m), 0);
	assert_int_equal(m.length, 3);
	assert_int_equal(m.peer.ss_family, AF_INET6);
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
	pthread_join(th, NULL);
}

/** homa_open__raw_driver_needs_privilege() - Root works; others get EPERM. */
static void homa_open__raw_driver_needs_privilege(void **state)
{
	homa_socket *s;
	int err = test_open(&s, HOMA_DRIVER_RAW, HOMA_MODE_THREADED, false, 0, NULL);

	if (test_is_root()) {
		assert_int_equal(err, 0);
		homa_close(s);
	} else {
		assert_int_equal(err, HOMA_EPERM);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_open__rejects_bad_options),
		cmocka_unit_test(homa_open__port_in_use),
		cmocka_unit_test(homa_send__rejects_bad_arguments),
		cmocka_unit_test(homa_sockaddr_parse__numeric_only),
		cmocka_unit_test(homa_recv__rejects_bad_arguments),
		cmocka_unit_test(homa_recv__a_served_id_is_no_response),
		cmocka_unit_test(homa_reply__unknown_and_already_answered),
		cmocka_unit_test(homa_close__then_every_call_says_shutdown),
		cmocka_unit_test(homa_abort__wakes_waiter_with_canceled),
		cmocka_unit_test(homa_close__wakes_blocked_threads),
		cmocka_unit_test(homa_send__waits_then_eagain_when_buffer_full),
		cmocka_unit_test(homa_recv_partial__reads_a_response_while_it_arrives),
		cmocka_unit_test(homa_open__polled_mode_serves_and_calls),
		cmocka_unit_test(homa_open__ipv6_loopback),
		cmocka_unit_test(homa_open__raw_driver_needs_privilege),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
