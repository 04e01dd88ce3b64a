/* SPDX-License-Identifier: MIT */
/**
 * @file test_tcp.c
 * The TCP transport through the public API on loopback: ids and cookies,
 * many RPCs on a small pool answered in any order, large messages,
 * message views, homa_fd(), errors (no server, a server that goes away,
 * a second reply, abort), hostile input, a server accepting both
 * transports at one port number, and several threads waiting in
 * homa_recv() (one of them reads the connections at a time).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/**
 * open_with() - A loopback socket with @transport (TEST_TIMEOUT_TICKS)
 * and auto_tcp_min_bytes @tcp_min.
 */
static homa_socket *open_with(int transport, bool server, uint16_t port, uint64_t tcp_min)
{
	struct homa_open_opts o;
	struct homa_settings st;
	homa_socket *s = NULL;

	homa_settings_default(&st);
	st.timeout_ticks = TEST_TIMEOUT_TICKS;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.server = server;
	o.port = port;
	o.settings = &st;
	o.transport = transport;
	o.auto_tcp_min_bytes = tcp_min;
	assert_int_equal(homa_open(&s, &o), 0);
	return s;
}

/** open_tp() - A loopback socket with @transport (TEST_TIMEOUT_TICKS). */
static homa_socket *open_tp(int transport, bool server, uint16_t port)
{
	return open_with(transport, server, port, 0);
}

/** take() - Receive a request on @srv (30 s at most). */
static void take(homa_socket *srv, struct homa_message *m)
{
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, m), 0);
}

static void tcp__rpcs_answered_in_any_order(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message req[8], m;
	struct homa_transport_stats ts;
	uint64_t ids[8];
	char buf[16];

	(void)state;
	for (int i = 0; i < 8; i++) {
		snprintf(buf, sizeof(buf), "req%d", i);
		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, buf, strlen(buf),
					   100 + i, &ids[i]), 0);
		assert_int_equal(ids[i] & 1, 0);
	}
	for (int i = 0; i < 8; i++) {
		take(srv, &req[i]);
		assert_int_equal(req[i].id & 1, 1);
		assert_int_equal(homa_message_transport(&req[i]), HOMA_TRANSPORT_TCP);
	}
	for (int i = 7; i >= 0; i--) { /* answered last first */
		homa_message_copy(&req[i], 0, buf, sizeof(buf));
		buf[0] = 'R';
		assert_int_equal(homa_reply_buf(srv, req[i].id, buf, req[i].length), 0);
		assert_int_equal(homa_message_release(&req[i]), 0);
	}
	for (int i = 0; i < 8; i++) {
		char want[16];

		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, ids[i], 30000000000LL, &m), 0);
		assert_true(m.id == ids[i]);
		assert_int_equal(m.cookie, 100 + i);
		assert_int_equal(m.type, HOMA_RECV_RESPONSE);
		assert_int_equal(homa_message_transport(&m), HOMA_TRANSPORT_TCP);
		snprintf(want, sizeof(want), "Req%d", i);
		assert_int_equal(m.length, strlen(want));
		assert_int_equal(homa_message_copy(&m, 0, buf, sizeof(buf)), strlen(want));
		assert_memory_equal(buf, want, strlen(want));
		assert_int_equal(homa_message_release(&m), 0);
		assert_int_equal(homa_message_transport(&m), HOMA_EINVAL); /* released */
	}
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.tcp_rpcs, 8);
	assert_true(ts.tcp_connects >= 1 && ts.tcp_connects <= 4);
	assert_true(ts.tcp_rx_bytes >= 8 * (16 + 4));
	assert_int_equal(homa_transport_stats(srv, &ts), 0);
	assert_int_equal(ts.tcp_requests, 8);
	homa_close(cli);
	homa_close(srv);
}

static void tcp__large_messages_as_views(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	size_t len = 3u << 20, off = 0, n;
	uint8_t *big = malloc(len);
	struct homa_message req, m;
	const void *p;
	uint64_t id;

	(void)state;
	for (size_t i = 0; i < len; i++)
		big[i] = (uint8_t)(i * 7 + (i >> 12));
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, big, len, 9, &id), 0);
	take(srv, &req);
	assert_int_equal(req.length, len);
	while ((n = homa_message_segment(&req, off, &p)) > 0) {
		assert_memory_equal(p, big + off, n);
		off += n;
	}
	assert_int_equal(off, len);
	assert_int_equal(homa_reply_buf(srv, req.id, big, len), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(m.length, len);
	memset(big, 0, 4096);
	assert_int_equal(homa_message_copy(&m, len - 4096, big, 4096), 4096);
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(big[i], (uint8_t)((len - 4096 + i) * 7 + ((len - 4096 + i) >> 12)));
	homa_message_release(&m);
	free(big);
	homa_close(cli);
	homa_close(srv);
}

static void tcp__server_accepts_homa_too(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_HOMA, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message req, m;
	uint64_t id;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "h", 1, 1, &id), 0);
	take(srv, &req);
	assert_int_equal(homa_message_transport(&req), HOMA_TRANSPORT_HOMA);
	assert_int_equal(homa_reply_buf(srv, req.id, "H", 1), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(homa_message_transport(&m), HOMA_TRANSPORT_HOMA);
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
}

static void tcp__no_listener_is_enoserver(void **state)
{
	homa_socket *other = open_tp(HOMA_TRANSPORT_HOMA, true, 0); /* no TCP listener */
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(other));
	struct homa_message m;
	uint64_t id;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 5, &id), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m),
			 HOMA_ENOSERVER);
	assert_true(m.id == id);
	assert_int_equal(m.cookie, 5);
	assert_int_equal(m.error, HOMA_ENOSERVER);
	homa_close(cli);
	homa_close(other);
}

static void tcp__server_gone_fails_pending_rpcs(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message req, m;
	uint64_t id;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	take(srv, &req);
	homa_close(srv); /* with the request unanswered */
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m),
			 HOMA_ETIMEDOUT);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, &m), HOMA_ENOTFOUND);
	homa_close(cli);
}

/** A reply given by another thread after a pause (reply_later()). */
struct later {
	homa_socket *srv;
	uint64_t id;
};

/** reply_later() - Thread: answer @arg's request with "hello world" after 50 ms. */
static void *reply_later(void *arg)
{
	struct later *l = arg;

	usleep(50000);
	assert_int_equal(homa_reply_buf(l->srv, l->id, "hello world", 11), 0);
	return NULL;
}

/**
 * tcp__partial_read_of_a_response() - homa_recv_partial_wait() on an RPC
 * carried by TCP behaves as over Homa: HOMA_EAGAIN and HOMA_ETIME while
 * nothing arrived, the bytes (and the whole length) once the response is
 * there, waking a reader already waiting; homa_recv() still takes it.
 */
static void tcp__partial_read_of_a_response(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_partial info;
	struct homa_message req, m;
	struct later l;
	pthread_t t;
	char b[16];
	uint64_t id;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	take(srv, &req);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, b, sizeof(b), 0, NULL), HOMA_EAGAIN);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, b, sizeof(b), 1000000, NULL),
			 HOMA_ETIME);
	l = (struct later){srv, req.id};
	assert_int_equal(pthread_create(&t, NULL, reply_later, &l), 0);
	assert_int_equal(homa_recv_partial_wait(cli, id, 6, b, sizeof(b), 30000000000LL, &info), 5);
	pthread_join(t, NULL);
	assert_memory_equal(b, "world", 5);
	assert_int_equal(info.length, 11);
	assert_int_equal(info.arrived, 11);
	assert_true(info.complete);
	assert_int_equal(homa_recv_partial_wait(cli, id, 11, b, sizeof(b), 0, NULL), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(m.length, 11);
	homa_message_release(&m);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, b, sizeof(b), 0, NULL),
			 HOMA_ENOTFOUND);
	homa_close(cli);
	homa_close(srv);
}

/**
 * request_with() - One RPC of @len bytes from @cli to @srv with @hint and
 * @flags (homa_send_opts); the server answers it. Return: the transport
 * that carried the response (and the request, as the server saw it).
 */
static int request_with(homa_socket *cli, homa_socket *srv, int hint, size_t len,
			uint32_t flags)
{
	static uint8_t buf[200000];
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_iov iov = {buf, len};
	struct homa_send_opts so;
	struct homa_message req, m;
	uint64_t id;
	int t;

	assert_true(len <= sizeof(buf));
	homa_send_opts_default(&so);
	so.hint = hint;
	so.flags = flags;
	assert_int_equal(homa_request_opts(cli, (struct sockaddr *)&dst, &iov, 1, &so, &id), 0);
	take(srv, &req);
	assert_int_equal(req.length, len);
	t = homa_message_transport(&req);
	assert_int_equal(homa_reply_buf(srv, req.id, "r", 1), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	assert_int_equal(homa_message_transport(&m), t);
	homa_message_release(&m);
	return t;
}

/** request_hint() - request_with() of 1 byte, no flags. */
static int request_hint(homa_socket *cli, homa_socket *srv, int hint)
{
	return request_with(cli, srv, hint, 1, 0);
}

/**
 * tcp__per_rpc_hints() - homa_send_opts.hint picks the transport of one
 * RPC: Homa from a TCP socket, TCP from an AUTO socket, the socket's own
 * choice by default; TCP from a HOMA socket and unknown hints are
 * HOMA_EINVAL.
 */
static void tcp__per_rpc_hints(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_AUTO, true, 0);
	homa_socket *tcp = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	homa_socket *aut = open_tp(HOMA_TRANSPORT_AUTO, false, 0);
	homa_socket *hom = open_tp(HOMA_TRANSPORT_HOMA, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_iov iov = {"h", 1};
	struct homa_transport_stats ts;
	struct homa_send_opts so;
	uint64_t id = 7;

	(void)state;
	assert_int_equal(request_hint(tcp, srv, HOMA_HINT_NONE), HOMA_TRANSPORT_TCP);
	assert_int_equal(request_hint(tcp, srv, HOMA_HINT_HOMA), HOMA_TRANSPORT_HOMA);
	assert_int_equal(request_hint(aut, srv, HOMA_HINT_NONE), HOMA_TRANSPORT_HOMA);
	assert_int_equal(request_hint(aut, srv, HOMA_HINT_TCP), HOMA_TRANSPORT_TCP);
	assert_int_equal(request_hint(hom, srv, HOMA_HINT_HOMA), HOMA_TRANSPORT_HOMA);
	assert_int_equal(homa_transport_stats(tcp, &ts), 0);
	assert_int_equal(ts.tcp_rpcs, 1);
	assert_int_equal(ts.homa_rpcs, 1);
	assert_int_equal(homa_transport_stats(aut, &ts), 0);
	assert_int_equal(ts.tcp_rpcs, 1);
	assert_int_equal(ts.homa_rpcs, 1);
	assert_int_equal(ts.auto_to_tcp, 0); /* a hint is not a switch */

	homa_send_opts_default(&so);
	so.hint = HOMA_HINT_TCP;
	assert_int_equal(homa_request_opts(hom, (struct sockaddr *)&dst, &iov, 1, &so, &id),
			 HOMA_EINVAL);
	so.hint = HOMA_HINT_TCP + 1;
	assert_int_equal(homa_request_opts(aut, (struct sockaddr *)&dst, &iov, 1, &so, &id),
			 HOMA_EINVAL);
	so.hint = -1;
	assert_int_equal(homa_request_opts(tcp, (struct sockaddr *)&dst, &iov, 1, &so, &id),
			 HOMA_EINVAL);
	assert_int_equal(id, 7);
	homa_close(hom);
	homa_close(aut);
	homa_close(tcp);
	homa_close(srv);
}

/**
 * auto__routes_by_size_and_priority() - With auto_tcp_min_bytes, an AUTO
 * socket sends requests of that size or more over TCP and smaller ones
 * over Homa, a HOMA_SEND_LATENCY one over Homa whatever its size, and a
 * hint decides over both; the rule is refused on other transports.
 */
static void auto__routes_by_size_and_priority(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_AUTO, true, 0);
	homa_socket *cli = open_with(HOMA_TRANSPORT_AUTO, false, 0, 10000);
	struct homa_transport_stats ts;
	struct homa_open_opts o;
	homa_socket *s;

	(void)state;
	assert_int_equal(request_with(cli, srv, HOMA_HINT_NONE, 9999, 0), HOMA_TRANSPORT_HOMA);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_NONE, 10000, 0), HOMA_TRANSPORT_TCP);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_NONE, 150000, 0), HOMA_TRANSPORT_TCP);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_NONE, 150000, HOMA_SEND_LATENCY),
			 HOMA_TRANSPORT_HOMA);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_HOMA, 150000, 0), HOMA_TRANSPORT_HOMA);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_TCP, 10, 0), HOMA_TRANSPORT_TCP);
	assert_int_equal(request_with(cli, srv, HOMA_HINT_NONE, 10, 0), HOMA_TRANSPORT_HOMA);
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.tcp_rpcs, 3);
	assert_int_equal(ts.homa_rpcs, 4);
	assert_int_equal(ts.auto_to_tcp, 0); /* by size is not a switch */
	homa_close(cli);
	homa_close(srv);

	homa_open_opts_default(&o);
	o.auto_tcp_min_bytes = 1;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL); /* transport HOMA */
	o.transport = HOMA_TRANSPORT_TCP;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	homa_open_opts_default(&o);
	o.version = 3; /* a version 3 caller's struct ends before auto_tcp_min_bytes: not read */
	o.auto_tcp_min_bytes = 1;
	assert_int_equal(homa_open(&s, &o), 0);
	homa_close(s);
}

static void tcp__reply_twice_and_abort(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_message req, m;
	uint64_t id, id2;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "a", 1, 0, &id), 0);
	take(srv, &req);
	assert_int_equal(homa_abort(cli, id), 0);
	assert_int_equal(homa_abort(cli, id), HOMA_ENOTFOUND);
	assert_int_equal(homa_reply_buf(srv, req.id, "x", 1), 0);
	assert_int_equal(homa_reply_buf(srv, req.id, "y", 1), HOMA_ESTATE);
	homa_message_release(&req);
	/* the aborted RPC's response is dropped: the next one is the only one */
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "b", 1, 0, &id2), 0);
	take(srv, &req);
	assert_int_equal(homa_abort(srv, req.id), 0);
	assert_int_equal(homa_reply_buf(srv, req.id, "z", 1), HOMA_ENOTFOUND);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, 0, 200000000, &m), HOMA_ETIME);
	homa_close(cli);
	homa_close(srv);
}

static void tcp__stranger_bytes_drop_the_connection(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_transport_stats ts;
	const char *junk = "GET / HTTP/1.0\r\n\r\n";
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char b[8];

	(void)state;
	assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(struct sockaddr_in)), 0);
	assert_int_equal(write(fd, junk, strlen(junk)), (ssize_t)strlen(junk));
	assert_true(read(fd, b, sizeof(b)) <= 0); /* the server hangs up */
	close(fd);
	assert_int_equal(homa_transport_stats(srv, &ts), 0);
	assert_int_equal(ts.tcp_bad_frames, 1);
	homa_close(srv);
}

static void tcp__fd_readable_on_response(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct pollfd p = {.fd = homa_fd(cli), .events = POLLIN};
	struct homa_message req, m;
	uint64_t id;

	(void)state;
	assert_true(p.fd >= 0);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "e", 1, 0, &id), 0);
	take(srv, &req);
	assert_int_equal(homa_reply_buf(srv, req.id, "E", 1), 0);
	homa_message_release(&req);
	assert_int_equal(poll(&p, 1, 30000), 1);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, 0, 0, &m), 0);
	homa_message_release(&m);
	homa_close(cli);
	homa_close(srv);
}

/** A server worker or client thread of tcp__threads_share_reading(). */
struct share_arg {
	homa_socket *s;
	struct sockaddr_storage dst;
	_Atomic int *stop;
	int done;                 /**< RPCs answered (server) or completed (client) */
	int err;                  /**< first error seen, 0 */
};

/** share_server() - Answer requests until *stop, in slices of 100 ms. */
static void *share_server(void *arg)
{
	struct share_arg *a = arg;
	struct homa_message m;

	while (!atomic_load(a->stop)) {
		int err = homa_recv(a->s, HOMA_RECV_REQUEST, 0, 100000000, &m), v = 0;

		if (err == HOMA_ETIME)
			continue;
		if (err) {
			a->err = a->err ? a->err : err;
			return NULL;
		}
		homa_message_copy(&m, 0, &v, sizeof(v));
		err = homa_reply_buf(a->s, m.id, &v, sizeof(v));
		homa_message_release(&m);
		if (err && !a->err)
			a->err = err;
		a->done++;
	}
	return NULL;
}

/** share_client() - 100 RPCs one after another, each checked. */
static void *share_client(void *arg)
{
	struct share_arg *a = arg;

	for (int i = 0; i < 100 && !a->err; i++) {
		struct homa_message m;
		uint64_t id;
		int err = homa_send(a->s, (struct sockaddr *)&a->dst, &i, sizeof(i), 0, &id);
		int v = -1;

		if (!err)
			err = homa_recv(a->s, HOMA_RECV_RESPONSE, id, 30000000000LL, &m);
		if (!err) {
			homa_message_copy(&m, 0, &v, sizeof(v));
			homa_message_release(&m);
			err = m.length != sizeof(i) || v != i ? HOMA_EPROTO : 0;
		}
		if (!err)
			a->done++;
		a->err = err;
	}
	return NULL;
}

/**
 * tcp__threads_share_reading() - Three server threads and two client
 * threads on one socket each wait in homa_recv() at once: every RPC is
 * answered and every response reaches the thread that waits for it.
 */
static void tcp__threads_share_reading(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	_Atomic int stop = 0;
	struct share_arg sa[3], ca[2];
	pthread_t st[3], ct[2];
	int served = 0;

	(void)state;
	for (int i = 0; i < 3; i++) {
		sa[i] = (struct share_arg){.s = srv, .stop = &stop};
		assert_int_equal(pthread_create(&st[i], NULL, share_server, &sa[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		ca[i] = (struct share_arg){.s = cli, .dst = test_dst(homa_local_port(srv))};
		assert_int_equal(pthread_create(&ct[i], NULL, share_client, &ca[i]), 0);
	}
	for (int i = 0; i < 2; i++) {
		pthread_join(ct[i], NULL);
		assert_int_equal(ca[i].err, 0);
		assert_int_equal(ca[i].done, 100);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 3; i++) {
		pthread_join(st[i], NULL);
		assert_int_equal(sa[i].err, 0);
		served += sa[i].done;
	}
	assert_int_equal(served, 200);
	homa_close(cli);
	homa_close(srv);
}

/** Arguments of wait_forever(). */
struct forever_arg {
	homa_socket *s;
	int err;
};

/** wait_forever() - homa_recv() of any response with no timeout. */
static void *wait_forever(void *arg)
{
	struct forever_arg *a = arg;
	struct homa_message m;

	a->err = homa_recv(a->s, HOMA_RECV_RESPONSE, 0, -1, &m);
	return NULL;
}

/**
 * tcp__close_wakes_a_reading_waiter() - A thread waiting without a time
 * limit for a response that never comes (it reads the connection
 * itself) returns HOMA_ESHUTDOWN when another thread closes the socket.
 */
static void tcp__close_wakes_a_reading_waiter(void **state)
{
	homa_socket *srv = open_tp(HOMA_TRANSPORT_TCP, true, 0);
	homa_socket *cli = open_tp(HOMA_TRANSPORT_TCP, false, 0);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct forever_arg a = {.s = cli, .err = 1};
	struct homa_message req;
	pthread_t t;
	uint64_t id;

	(void)state;
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	take(srv, &req); /* never answered */
	assert_int_equal(pthread_create(&t, NULL, wait_forever, &a), 0);
	usleep(50000);
	homa_close(cli);
	pthread_join(t, NULL);
	assert_int_equal(a.err, HOMA_ESHUTDOWN);
	homa_message_release(&req);
	homa_close(srv);
}

/**
 * one_rpc() - An RPC from @cli to 127.0.0.1:@port that @srv (NULL: none)
 * answers. Return: 0, or the error the client saw.
 */
static int one_rpc(homa_socket *cli, homa_socket *srv, int port)
{
	struct sockaddr_storage dst = test_dst(port);
	struct homa_message req, m;
	uint64_t id;
	int err = homa_send(cli, (struct sockaddr *)&dst, "k", 1, 0, &id);

	if (err)
		return err;
	if (srv && homa_recv(srv, HOMA_RECV_REQUEST, 0, 5000000000LL, &req) == 0) {
		homa_reply_buf(srv, req.id, "K", 1);
		homa_message_release(&req);
	}
	err = homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m);
	if (!err)
		err = m.error;
	if (!err)
		homa_message_release(&m);
	return err;
}

/**
 * restart_on_same_port() - A server of @transport closed (killed) and
 * opened again at the same port number: while it is gone an RPC fails
 * with HOMA_ENOSERVER or HOMA_ETIMEDOUT (a connection lost with it), and
 * once it is back the same client reaches it again (over TCP its pool
 * drops the dead connections and connects anew).
 */
static void restart_on_same_port(int transport)
{
	homa_socket *srv = open_tp(transport, true, 0);
	homa_socket *cli = open_tp(transport, false, 0);
	int port = homa_local_port(srv), err = -1;
	int64_t until;

	assert_int_equal(one_rpc(cli, srv, port), 0);
	homa_close(srv);
	err = one_rpc(cli, NULL, port);
	assert_true(err == HOMA_ENOSERVER || err == HOMA_ETIMEDOUT);
	srv = open_tp(transport, true, (uint16_t)port);
	until = test_now_ms() + 10000;
	do
		err = one_rpc(cli, srv, port);
	while (err && test_now_ms() < until);
	assert_int_equal(err, 0);
	homa_close(cli);
	homa_close(srv);
}

static void tcp__server_restart_on_same_port(void **state)
{
	(void)state;
	restart_on_same_port(HOMA_TRANSPORT_TCP);
}

static void auto__server_restart_on_same_port(void **state)
{
	(void)state;
	restart_on_same_port(HOMA_TRANSPORT_AUTO);
}

static void tcp__open_checks(void **state)
{
	struct homa_open_opts o;
	homa_socket *s;

	(void)state;
	homa_open_opts_default(&o);
	o.transport = 3;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	o.transport = HOMA_TRANSPORT_TCP;
	o.driver = HOMA_DRIVER_RAW;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
	/* a version 1 caller's struct ends before transport: not read */
	homa_open_opts_default(&o);
	o.version = 1;
	o.transport = 77;
	assert_int_equal(homa_open(&s, &o), 0);
	homa_close(s);
	o.version = HOMA_OPEN_OPTS_VERSION + 1;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp__rpcs_answered_in_any_order),
		cmocka_unit_test(tcp__large_messages_as_views),
		cmocka_unit_test(tcp__server_accepts_homa_too),
		cmocka_unit_test(tcp__no_listener_is_enoserver),
		cmocka_unit_test(tcp__server_gone_fails_pending_rpcs),
		cmocka_unit_test(tcp__reply_twice_and_abort),
		cmocka_unit_test(tcp__partial_read_of_a_response),
		cmocka_unit_test(tcp__per_rpc_hints),
		cmocka_unit_test(auto__routes_by_size_and_priority),
		cmocka_unit_test(tcp__stranger_bytes_drop_the_connection),
		cmocka_unit_test(tcp__fd_readable_on_response),
		cmocka_unit_test(tcp__threads_share_reading),
		cmocka_unit_test(tcp__close_wakes_a_reading_waiter),
		cmocka_unit_test(tcp__server_restart_on_same_port),
		cmocka_unit_test(auto__server_restart_on_same_port),
		cmocka_unit_test(tcp__open_checks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
