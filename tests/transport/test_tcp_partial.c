/* SPDX-License-Identifier: MIT */
/**
 * @file test_tcp_partial.c
 * Partial reads of responses carried by the TCP transport: the client's
 * homa_recv_partial() and homa_recv_partial_wait() see a response's bytes
 * as they arrive, as over Homa. The server here is a plain TCP socket
 * speaking the transport's wire format (src/transport/tp.h), so the test
 * decides when each part of the response leaves.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** Longest wait of a step that should end at once (loaded machine). */
#define WAIT_NS 20000000000LL
/** Length of the response the fake server sends. */
#define RESP_LEN 200000u
/** Bytes of it sent first. */
#define FIRST 1000u

/** A fake server: its listener and the connection the client opened. */
struct fake {
	int lfd, fd;
	uint16_t port;
};

/** byte_at() - The response's byte at @i. */
static uint8_t byte_at(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/** fake_listen() - Listen on 127.0.0.1, an ephemeral port. */
static void fake_listen(struct fake *f)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);

	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(f->lfd >= 0);
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	assert_int_equal(getsockname(f->lfd, (struct sockaddr *)&a, &len), 0);
	f->port = ntohs(a.sin_port);
	f->fd = -1;
}

/** read_all() - Read exactly @len bytes from @fd. */
static void read_all(int fd, uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = read(fd, b, len);

		assert_true(n > 0);
		b += n;
		len -= (size_t)n;
	}
}

/** write_all() - Write @len bytes to @fd. */
static void write_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = write(fd, b, len);

		assert_true(n > 0);
		b += n;
		len -= (size_t)n;
	}
}

/**
 * fake_take_request() - Accept the client's connection and read its
 * preface (12 bytes) and a one-byte request frame. Return: the client's
 * RPC id from the frame header.
 */
static uint64_t fake_take_request(struct fake *f)
{
	uint8_t b[12 + 16 + 1];
	uint64_t id = 0;
	int one = 1;

	f->fd = accept(f->lfd, NULL, NULL);
	assert_true(f->fd >= 0);
	setsockopt(f->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	read_all(f->fd, b, sizeof(b));
	assert_memory_equal(b, "HOMATCP1", 8);
	assert_int_equal(b[12 + 4], 1); /* TP_REQUEST */
	for (int i = 0; i < 8; i++)
		id = id << 8 | b[12 + 8 + i];
	return id;
}

/** fake_respond() - Send the response header for @id and bytes [@from, @to). */
static void fake_respond(struct fake *f, uint64_t id, size_t from, size_t to)
{
	uint8_t *b = malloc(16 + to - from), *p = b;

	assert_non_null(b);
	if (from == 0) {
		memset(p, 0, 16);
		p[0] = RESP_LEN >> 24;
		p[1] = (RESP_LEN >> 16) & 0xff;
		p[2] = (RESP_LEN >> 8) & 0xff;
		p[3] = RESP_LEN & 0xff;
		p[4] = 2; /* TP_RESPONSE */
		p[5] = 1; /* version */
		for (int i = 0; i < 8; i++)
			p[8 + i] = (uint8_t)(id >> (56 - 8 * i));
		p += 16;
	}
	for (size_t i = from; i < to; i++)
		*p++ = byte_at(i);
	write_all(f->fd, b, (size_t)(p - b));
	free(b);
}

/** fake_close() - Close both sockets. */
static void fake_close(struct fake *f)
{
	if (f->fd >= 0)
		close(f->fd);
	close(f->lfd);
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
	struct sockaddr_storage dst = test_dst(f->port);
	uint64_t id, fid;

	assert_int_equal(homa_send(cli, (struct sockaddr *)&dst, "q", 1, 0, &id), 0);
	fid = fake_take_request(f);
	assert_true(fid == id);
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
			assert_int_equal(buf[i], byte_at(offset + (size_t)i));
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
	fake_listen(&f);
	id = start_rpc(cli, &f);
	assert_int_equal(homa_recv_partial(cli, id, 0, b, sizeof(b), &avail), 0);
	assert_int_equal(avail, 0);
	fake_respond(&f, id, 0, FIRST);
	info = read_until(cli, id, 0, FIRST);
	assert_false(info.complete);
	assert_int_equal(homa_recv_partial(cli, id, 10, b, sizeof(b), &avail), sizeof(b));
	assert_true(avail >= FIRST);
	assert_int_equal(b[0], byte_at(10));
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
	assert_int_equal(b[0], byte_at(RESP_LEN - 1));
	assert_int_equal(homa_message_release(&m), 0);
	assert_int_equal(homa_recv_partial(cli, id, 0, b, sizeof(b), NULL), HOMA_ENOTFOUND);
	homa_close(cli);
	fake_close(&f);
}

/**
 * tcp_partial__connection_lost_mid_response() - The server's connection
 * ends half-way through a response a reader follows: the reader gets the
 * RPC's error (not a hang, not the bytes of a cut message), and so does
 * homa_recv().
 */
static void tcp_partial__connection_lost_mid_response(void **state)
{
	homa_socket *cli = open_client();
	struct homa_message m;
	struct fake f;
	uint8_t b[16];
	uint64_t id;

	(void)state;
	fake_listen(&f);
	id = start_rpc(cli, &f);
	fake_respond(&f, id, 0, FIRST);
	read_until(cli, id, 0, FIRST);
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
 * arrives is no longer readable; the rest of its response is dropped and
 * the connection carries the next RPC.
 */
static void tcp_partial__abort_mid_response(void **state)
{
	homa_socket *cli = open_client();
	struct homa_message m;
	struct fake f;
	uint8_t b[16];
	uint64_t id;

	(void)state;
	fake_listen(&f);
	id = start_rpc(cli, &f);
	fake_respond(&f, id, 0, FIRST);
	read_until(cli, id, 0, FIRST);
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
