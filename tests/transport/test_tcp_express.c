/* SPDX-License-Identifier: MIT */
/**
 * @file test_tcp_express.c
 * HOMA_SEND_LATENCY over the TCP transport: a latency-sensitive RPC
 * travels on the peer's express connection, never on the one where a
 * bulk response is on its way, and the other RPCs stay off it. The
 * server is a plain TCP socket speaking the transport's wire format
 * (fake_tp.h), so the test sees on which connection each request came.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_tp.h"
#include "helpers.h"

/** Longest wait of a step that should end at once (loaded machine). */
#define WAIT_NS 20000000000LL
/** Length of the bulk response. */
#define BULK_LEN 1000000u

/** open_sock() - A loopback socket with transport @transport. */
static homa_socket *open_sock(int transport, bool server)
{
	homa_socket *s = NULL;

	test_transport = transport;
	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, server, 0, NULL), 0);
	return s;
}

/** request() - Send a one-byte request from @cli to port @port with @flags; return its id. */
static uint64_t request(homa_socket *cli, uint16_t port, uint32_t flags)
{
	struct sockaddr_storage dst = test_dst(port);
	struct homa_iov iov = {"q", 1};
	struct homa_send_opts so;
	uint64_t id;

	homa_send_opts_default(&so);
	so.flags = flags;
	assert_int_equal(homa_request_opts(cli, (struct sockaddr *)&dst, &iov, 1, &so, &id), 0);
	return id;
}

/** expect_response() - homa_recv() the response of @id: @len bytes as fake_tp_respond() sends. */
static void expect_response(homa_socket *cli, uint64_t id, uint32_t len)
{
	struct homa_message m;
	uint8_t b;

	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), 0);
	assert_int_equal(m.length, len);
	assert_int_equal(homa_message_copy(&m, len - 1, &b, 1), 1);
	assert_int_equal(b, fake_tp_byte(len - 1));
	assert_int_equal(homa_message_release(&m), 0);
}

/**
 * tcp_express__latency_rpcs_skip_the_bulk_stream() - While a bulk
 * response is half-way on the pooled connection, a latency-sensitive RPC
 * opens the express connection and completes there; a second one reuses
 * it; an ordinary RPC stays on the pool.
 */
static void tcp_express__latency_rpcs_skip_the_bulk_stream(void **state)
{
	homa_socket *cli = open_sock(HOMA_TRANSPORT_TCP, false);
	struct homa_transport_stats ts;
	uint64_t bulk, fast, fast2, plain;
	struct fake_tp f;
	int pooled, express;

	(void)state;
	fake_tp_listen(&f);
	bulk = request(cli, f.port, 0);
	pooled = fake_tp_accept(&f);
	assert_true(fake_tp_request(pooled) == bulk);
	fake_tp_respond(pooled, bulk, BULK_LEN, 0, BULK_LEN / 2);

	fast = request(cli, f.port, HOMA_SEND_LATENCY);
	assert_false(fake_tp_ready(pooled, 100)); /* not behind the bulk response's stream */
	assert_true(fake_tp_ready(f.lfd, 20000));
	express = fake_tp_accept(&f);
	assert_true(fake_tp_request(express) == fast);
	fake_tp_respond(express, fast, 100, 0, 100);
	expect_response(cli, fast, 100);

	fast2 = request(cli, f.port, HOMA_SEND_LATENCY);
	assert_true(fake_tp_ready(express, 20000));
	assert_true(fake_tp_request(express) == fast2);
	plain = request(cli, f.port, 0);
	assert_true(fake_tp_ready(pooled, 20000));
	assert_true(fake_tp_request(pooled) == plain);
	assert_false(fake_tp_ready(express, 0));
	assert_false(fake_tp_ready(f.lfd, 0));

	fake_tp_respond(express, fast2, 10, 0, 10);
	expect_response(cli, fast2, 10);
	fake_tp_respond(pooled, bulk, BULK_LEN, BULK_LEN / 2, BULK_LEN);
	fake_tp_respond(pooled, plain, 5, 0, 5);
	expect_response(cli, bulk, BULK_LEN);
	expect_response(cli, plain, 5);
	assert_int_equal(homa_transport_stats(cli, &ts), 0);
	assert_int_equal(ts.tcp_connects, 2);
	homa_close(cli);
	close(express);
	close(pooled);
	fake_tp_close(&f);
}

/**
 * rpc_with() - One RPC from @cli to @srv with @flags; the server answers
 * "r". Return: the transport that carried it.
 */
static int rpc_with(homa_socket *cli, homa_socket *srv, uint32_t flags)
{
	uint64_t id = request(cli, (uint16_t)homa_local_port(srv), flags);
	struct homa_message req, m;
	int t;

	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &req), 0);
	t = homa_message_transport(&req);
	assert_int_equal(homa_reply_buf(srv, req.id, "r", 1), 0);
	homa_message_release(&req);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), 0);
	assert_int_equal(m.length, 1);
	assert_int_equal(homa_message_transport(&m), t);
	homa_message_release(&m);
	return t;
}

/**
 * tcp_express__flags_on_each_transport() - HOMA_SEND_LATENCY RPCs
 * complete against a real server over TCP and over Homa (where the flag
 * changes nothing); an unknown flag bit (above HOMA_SEND_MORE) is HOMA_EINVAL.
 */
static void tcp_express__flags_on_each_transport(void **state)
{
	homa_socket *srv = open_sock(HOMA_TRANSPORT_TCP, true);
	homa_socket *tcp = open_sock(HOMA_TRANSPORT_TCP, false);
	homa_socket *hom = open_sock(HOMA_TRANSPORT_HOMA, false);
	struct sockaddr_storage dst = test_dst(homa_local_port(srv));
	struct homa_iov iov = {"q", 1};
	struct homa_transport_stats ts;
	struct homa_send_opts so;
	uint64_t id = 9;

	(void)state;
	assert_int_equal(rpc_with(tcp, srv, HOMA_SEND_LATENCY), HOMA_TRANSPORT_TCP);
	assert_int_equal(rpc_with(tcp, srv, HOMA_SEND_LATENCY), HOMA_TRANSPORT_TCP);
	assert_int_equal(rpc_with(tcp, srv, 0), HOMA_TRANSPORT_TCP);
	assert_int_equal(homa_transport_stats(tcp, &ts), 0);
	assert_int_equal(ts.tcp_connects, 2); /* the express one and one of the pool */
	assert_int_equal(rpc_with(hom, srv, HOMA_SEND_LATENCY), HOMA_TRANSPORT_HOMA);
	homa_send_opts_default(&so);
	so.flags = HOMA_SEND_MORE << 1; /* no flag has this bit */
	assert_int_equal(homa_request_opts(tcp, (struct sockaddr *)&dst, &iov, 1, &so, &id),
			 HOMA_EINVAL);
	assert_int_equal(homa_request_opts(hom, (struct sockaddr *)&dst, &iov, 1, &so, &id),
			 HOMA_EINVAL);
	assert_int_equal(id, 9);
	homa_close(hom);
	homa_close(tcp);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp_express__latency_rpcs_skip_the_bulk_stream),
		cmocka_unit_test(tcp_express__flags_on_each_transport),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
