/* SPDX-License-Identifier: MIT */
/**
 * @file test_auto.c
 * Transport AUTO on loopback against a peer whose Homa port swallows
 * every packet (a UDP socket that never reads) but that answers the TCP
 * transport's frames at the same port number: the client moves it to
 * TCP, the Homa RPC already sent fails with HOMA_ETIMEDOUT and is never
 * sent again, later RPCs go over TCP, and after the back-off, with a
 * Homa server now at that port, the peer is back on Homa.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** A peer that speaks only the TCP transport (frames as src/transport/tp.h). */
struct tcp_only {
	int udp_fd, tcp_fd;
	uint16_t port;
	pthread_t thread;
	_Atomic int requests;
};

/** read_all() - Read exactly @n bytes. Return: 0 or -1 (closed). */
static int read_all(int fd, uint8_t *b, size_t n)
{
	while (n) {
		ssize_t r = read(fd, b, n);

		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

/** serve() - Answer each request frame with its payload, until the client hangs up. */
static void serve(struct tcp_only *t, int fd)
{
	uint8_t pre[12], h[16], body[256];

	if (read_all(fd, pre, sizeof(pre)) || memcmp(pre, "HOMATCP1", 8))
		return;
	while (!read_all(fd, h, sizeof(h))) {
		uint32_t len = ((uint32_t)h[0] << 24) | (h[1] << 16) | (h[2] << 8) | h[3];

		if (h[4] != 1 || len > sizeof(body) || read_all(fd, body, len))
			return;
		t->requests++;
		h[4] = 2;
		if (write(fd, h, sizeof(h)) != sizeof(h) || write(fd, body, len) != (ssize_t)len)
			return;
	}
}

/** tcp_only_main() - Accept connections one at a time until the listener closes. */
static void *tcp_only_main(void *arg)
{
	struct tcp_only *t = arg;
	int fd;

	while ((fd = accept(t->tcp_fd, NULL, NULL)) >= 0) {
		serve(t, fd);
		close(fd);
	}
	return NULL;
}

/** tcp_only_start() - Bind a UDP black hole and a TCP listener at one free port. */
static void tcp_only_start(struct tcp_only *t)
{
	for (int tries = 0; tries < 20; tries++) {
		struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof(a);

		t->udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
		t->tcp_fd = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(bind(t->udp_fd, (struct sockaddr *)&a, sizeof(a)), 0);
		getsockname(t->udp_fd, (struct sockaddr *)&a, &len);
		if (bind(t->tcp_fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(t->tcp_fd, 8) == 0) {
			t->port = ntohs(a.sin_port);
			assert_int_equal(pthread_create(&t->thread, NULL, tcp_only_main, t), 0);
			return;
		}
		close(t->udp_fd);
		close(t->tcp_fd);
	}
	fail_msg("no port free for both UDP and TCP");
}

/** now_ms() - CLOCK_MONOTONIC in ms. */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/**
 * one_rpc() - An RPC from @cli to server @srv at @dst that the server
 * answers after holding the request @hold_us. Return: the transport that
 * carried the response.
 */
static int one_rpc(homa_socket *cli, homa_socket *srv, const struct sockaddr_storage *dst,
		   unsigned hold_us)
{
	struct homa_message req, m;
	uint64_t id;
	int t;

	assert_int_equal(homa_send(cli, (const struct sockaddr *)dst, "q", 1, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &req), 0);
	usleep(hold_us);
	assert_int_equal(homa_reply_buf(srv, req.id, "r", 1), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
	t = homa_message_transport(&m);
	homa_message_release(&m);
	return t;
}

static void auto__falls_back_to_tcp_and_comes_back(void **state)
{
	struct tcp_only t = {0};
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_transport_stats ts;
	struct homa_message m;
	struct sockaddr_storage dst;
	homa_socket *cli, *srv;
	uint64_t id1, id2;
	double t0, t_tcp;

	(void)state;
	tcp_only_start(&t);
	dst = test_dst(t.port);
	homa_settings_default(&st);
	/*
	 * The Homa RPC to the black hole fails after 300 ticks (300 ms when
	 * ticks keep time). A starved timer thread runs fewer ticks (at most
	 * one per wake-up, none caught up), so that can take far longer; the
	 * engine still fails it within HOMA_CLIENT_RETRY_TIMEOUTS (4) x 300
	 * ms of engine time (retry_expired(), timer.c). The back-off must end
	 * only after that: an RPC sent after the back-off but before the
	 * first one failed finds the port just marked dead and goes to TCP
	 * again with the back-off doubled.
	 */
	st.timeout_ticks = 300;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.settings = &st;
	o.transport = HOMA_TRANSPORT_AUTO;
	o.auto_fallback_ms = 50;
	o.auto_retry_ms = 2500;
	assert_int_equal(homa_open(&cli, &o), 0);

	t0 = now_ms();
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "one", 3, 1, &id1), 0);
	do {
		assert_int_equal(homa_transport_stats(cli, &ts), 0);
		assert_true(now_ms() - t0 < 30000);
		usleep(1000);
	} while (ts.auto_to_tcp == 0);
	t_tcp = now_ms();
	print_message("auto: fell back to TCP after %.1f ms\n", t_tcp - t0);
	assert_int_equal(ts.auto_tcp_peers, 1);
	assert_int_equal(ts.homa_rpcs, 1);
	/* the RPC sent over Homa stays there: it fails, it is not resent over TCP */
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id1, 30000000000LL, &m),
			 HOMA_ETIMEDOUT);
	print_message("auto: the Homa RPC timed out after %.1f ms\n", now_ms() - t0);
	assert_int_equal(t.requests, 0);
	/* still in the back-off (see above), or the next request tries Homa */
	assert_true(now_ms() - t_tcp < 2500);

	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "two", 3, 2, &id2), 0);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id2, 30000000000LL, &m), 0);
	assert_int_equal(homa_message_transport(&m), HOMA_TRANSPORT_TCP);
	assert_int_equal(m.cookie, 2);
	homa_message_release(&m);
	assert_int_equal(t.requests, 1);

	/* Homa comes back at that port; after the back-off the peer is tried on it */
	close(t.udp_fd);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, t.port, NULL), 0);
	/* past the back-off (2.5 s after the switch, which came before t_tcp) */
	while (now_ms() < t_tcp + 2600)
		usleep(10000);
	assert_int_equal(one_rpc(cli, srv, &dst, 0), HOMA_TRANSPORT_HOMA);
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.auto_to_homa, 1);
	assert_int_equal(ts.auto_tcp_peers, 0);
	assert_int_equal(ts.tcp_rpcs, 1);
	assert_int_equal(t.requests, 1);

	homa_close(cli);
	homa_close(srv);
	shutdown(t.tcp_fd, SHUT_RDWR);
	close(t.tcp_fd);
	pthread_join(t.thread, NULL);
}

static void auto__homa_peer_stays_on_homa(void **state)
{
	homa_socket *srv, *cli;
	struct homa_open_opts o;
	struct homa_transport_stats ts;
	struct homa_message m;
	struct sockaddr_storage dst;
	uint64_t id;

	(void)state;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.transport = HOMA_TRANSPORT_AUTO;
	assert_int_equal(homa_open(&cli, &o), 0);
	for (int i = 0; i < 5; i++) {
		struct homa_message req;

		assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "x", 1, 0, &id), 0);
		assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &req), 0);
		homa_reply_buf(srv, req.id, "y", 1);
		homa_message_release(&req);
		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 30000000000LL, &m), 0);
		assert_int_equal(homa_message_transport(&m), HOMA_TRANSPORT_HOMA);
		homa_message_release(&m);
	}
	usleep(100000); /* two fallback periods with nothing outstanding */
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.homa_rpcs, 5);
	assert_int_equal(ts.auto_to_tcp, 0);
	homa_close(cli);
	homa_close(srv);
}

/**
 * auto__silent_live_peer_stays_on_homa() - An AUTO server that accepts
 * TCP but is silent on Homa only because nothing waits for it (a request
 * the client aborted), or because it works on a request (it answers the
 * client's RESENDs with BUSY), is not moved to TCP: many fallback windows
 * later, requests still go over Homa.
 */
static void auto__silent_live_peer_stays_on_homa(void **state)
{
	homa_socket *srv, *cli;
	struct homa_open_opts o;
	struct homa_transport_stats ts;
	struct homa_message req;
	struct sockaddr_storage dst;
	uint64_t id;

	(void)state;
	test_transport = HOMA_TRANSPORT_AUTO;
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	test_transport = HOMA_TRANSPORT_HOMA;
	dst = test_dst(homa_local_port(srv));
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.transport = HOMA_TRANSPORT_AUTO;
	o.auto_fallback_ms = 30;
	assert_int_equal(homa_open(&cli, &o), 0);

	/* one answered RPC first: the peers have exchanged what they send once */
	assert_int_equal(one_rpc(cli, srv, &dst, 0), HOMA_TRANSPORT_HOMA);
	usleep(100000);

	/* a request the client gives up: nothing waits for the server any more */
	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "a", 1, 0, &id), 0);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, 30000000000LL, &req), 0);
	assert_int_equal(homa_abort(cli, id), 0);
	homa_message_release(&req);
	usleep(300000); /* 10 fallback windows */

	/* a request the server works on for 10 windows before answering */
	assert_int_equal(one_rpc(cli, srv, &dst, 300000), HOMA_TRANSPORT_HOMA);
	usleep(100000);
	assert_int_equal(one_rpc(cli, srv, &dst, 0), HOMA_TRANSPORT_HOMA);
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.auto_to_tcp, 0);
	assert_int_equal(ts.homa_rpcs, 4);
	assert_int_equal(ts.tcp_rpcs, 0);
	homa_close(cli);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(auto__falls_back_to_tcp_and_comes_back),
		cmocka_unit_test(auto__homa_peer_stays_on_homa),
		cmocka_unit_test(auto__silent_live_peer_stays_on_homa),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
