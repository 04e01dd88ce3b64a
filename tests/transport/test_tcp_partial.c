/* SPDX-License-Identifier: MIT */
/**
 * @file test_tcp_partial.c
 * Partial reads of responses carried by the TCP transport: the client's
 * homa_recv_partial() and homa_recv_partial_wait() see a response's bytes
 * as they arrive, as over Homa. The server here is a plain TCP socket
 * speaking the transport's wire format (fake_tp.h), so the test decides
 * when each part of the response leaves.
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
/** Length of the response the fake server sends. */
#define RESP_LEN 200000u
/** Bytes of it sent first. */
#define FIRST 1000u

/** A fake server and the connection the client opened. */
struct fake {
	struct fake_tp tp;
	int fd;
};

/** fake_respond() - Send bytes [@from, @to) of the response to @id. */
static void fake_respond(struct fake *f, uint64_t id, size_t from, size_t to)
{
	fake_tp_respond(f->fd, id, RESP_LEN, from, to);
}

/** fake_close() - Close the connection (if open) and the listener. */
static void fake_close(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	fake_tp_close(&f->tp);
}

/** open_client() - A TCP-transport client on loopback. */
static homa_socket *open_client(void)
{
	homa_socket *s = NULL;

	test_transport = HOMA_TRANSPORT_TCP;
	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	return s;
}

/** start_rpc() - Send a one-byte request from @cli to the fake; return its id. */
static uint64_t start_rpc(homa_socket *cli, struct fake *f)
{
	struct sockaddr_storage dst = test_dst(f->tp.port);
	uint64_t id;

	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	f->fd = fake_tp_accept(&f->tp);
	assert_true(fake_tp_request(f->fd) == id);
	return id;
}

/**
 * read_until() - homa_recv_partial_wait() from @offset on until @want
 * bytes from offset 0 on are here; checks the bytes. Return: the last
 * progress seen.
 */
static struct homa_partial read_until(homa_socket *cli, uint64_t id, size_t offset, size_t want)
{
	static uint8_t buf[65536];
	struct homa_partial info = {0};

	while (offset < want) {
		int64_t n = homa_recv_partial_wait(cli, id, offset, buf, sizeof(buf), WAIT_NS, &info);

		assert_true(n > 0);
		assert_int_equal(info.length, RESP_LEN);
		assert_true(info.arrived >= offset + (size_t)n);
		for (int64_t i = 0; i < n; i++)
			assert_int_equal(buf[i], fake_tp_byte(offset + (size_t)i));
		offset += (size_t)n;
	}
	return info;
}

/**
 * tcp_partial__bytes_as_they_arrive() - The first part of a response is
 * readable (homa_recv_partial_wait() and homa_recv_partial()) before the
 * rest has left the server; the rest follows, and homa_recv() then takes
 * the whole message.
 */
static void tcp_partial__bytes_as_they_arrive(void **state)
{
	homa_socket *cli = open_client();
	struct homa_partial info;
	struct homa_message m;
	struct fake f;
	uint8_t b[16];
	size_t avail = 0;
	uint64_t id;

	(void)state;
	fake_tp_listen(&f.tp);
	id = start_rpc(cli, &f);
	assert_int_equal(homa_recv_partial(cli, id, 0, b, sizeof(b), &avail), 0);
	assert_int_equal(avail, 0);
	fake_respond(&f, id, 0, FIRST);
	info = read_until(cli, id, 0, FIRST);
	assert_false(info.complete);
	assert_int_equal(homa_recv_partial(cli, id, 10, b, sizeof(b), &avail), sizeof(b));
	assert_true(avail >= FIRST);
	assert_int_equal(b[0], fake_tp_byte(10));
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, 0, &m), HOMA_EAGAIN);
	assert_int_equal(homa_recv_partial_wait(cli, id, RESP_LEN, b, sizeof(b), 0, &info),
			 HOMA_EAGAIN);
	fake_respond(&f, id, FIRST, RESP_LEN / 2);
	read_until(cli, id, FIRST, RESP_LEN / 2);
	fake_respond(&f, id, RESP_LEN / 2, RESP_LEN);
	info = read_until(cli, id, RESP_LEN / 2, RESP_LEN);
	assert_int_equal(homa_recv_partial_wait(cli, id, RESP_LEN, b, sizeof(b), WAIT_NS, &info), 0);
	assert_true(info.complete);
	assert_int_equal(info.arrived, RESP_LEN);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), 0);
	assert_int_equal(m.length, RESP_LEN);
	assert_int_equal(homa_message_copy(&m, RESP_LEN - 1, b, 1), 1);
	assert_int_equal(b[0], fake_tp_byte(RESP_LEN - 1));
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(homa_recv_partial(cli, id, 0, b, sizeof(b), NULL), HOMA_ENOTFOUND);
	homa_close(cli);
	fake_close(&f);
}

/**
 * half_way() - A client whose RPC to the fake @f has read the first
 * FIRST bytes of its response (the rest not sent yet). Return: the RPC's
 * id; *@cli receives the client.
 */
static uint64_t half_way(struct fake *f, homa_socket **cli)
{
	uint64_t id;

	*cli = open_client();
	fake_tp_listen(&f->tp);
	id = start_rpc(*cli, f);
	fake_respond(f, id, 0, FIRST);
	read_until(*cli, id, 0, FIRST);
	return id;
}

/**
 * tcp_partial__connection_lost_mid_response() - The server's connection
 * ends half-way through a response a reader follows: the reader gets the
 * RPC's error (not a hang, not the bytes of a cut message), and so does
 * homa_recv().
 */
static void tcp_partial__connection_lost_mid_response(void **state)
{
	homa_socket *cli;
	struct homa_message m;
	struct fake f;
	uint8_t b[16];
	uint64_t id;

	(void)state;
	id = half_way(&f, &cli);
	close(f.fd);
	f.fd = -1;
	assert_int_equal(homa_recv_partial_wait(cli, id, FIRST, b, sizeof(b), WAIT_NS, NULL),
			 HOMA_ETIMEDOUT);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, id, WAIT_NS, &m), HOMA_ETIMEDOUT);
	homa_close(cli);
	fake_close(&f);
}

/**
 * tcp_partial__abort_mid_response() - An RPC aborted while its response
 * arrives is no longer readable, and the rest of its response is dropped
 * (nothing is delivered).
 */
static void tcp_partial__abort_mid_response(void **state)
{
	homa_socket *cli;
	struct homa_message m;
	struct fake f;
	uint8_t b[16];
	uint64_t id;

	(void)state;
	id = half_way(&f, &cli);
	assert_int_equal(homa_abort(cli, id), 0);
	assert_int_equal(homa_recv_partial_wait(cli, id, 0, b, sizeof(b), 0, NULL), HOMA_ENOTFOUND);
	assert_int_equal(homa_recv_partial(cli, id, 0, b, sizeof(b), NULL), HOMA_ENOTFOUND);
	fake_respond(&f, id, FIRST, RESP_LEN);
	assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, 0, 200000000, &m), HOMA_ETIME);
	homa_close(cli);
	fake_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp_partial__bytes_as_they_arrive),
		cmocka_unit_test(tcp_partial__connection_lost_mid_response),
		cmocka_unit_test(tcp_partial__abort_mid_response),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
