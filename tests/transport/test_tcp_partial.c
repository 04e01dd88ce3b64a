/* SPDX-License-Identifier: MIT */
/**
 * @file test_tcp_partial.c
 * Partial reads of messages carried by the TCP transport: the client's
 * homa_recv_partial() and homa_recv_partial_wait() see a response's bytes
 * as they arrive, and a server that asks with HOMA_RECV_PARTIAL sees a
 * request's, as over Homa. The other end here is a plain TCP socket
 * speaking the transport's wire format (fake_tp.h), so the test decides
 * when each part of a message leaves.
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

/** open_server() - A TCP-transport server on loopback, an ephemeral port. */
static homa_socket *open_server(void)
{
	homa_socket *s = NULL;

	test_transport = HOMA_TRANSPORT_TCP;
	assert_int_equal(test_open(&s, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	return s;
}

/**
 * announced() - A fake client on *@fd has sent the first FIRST bytes of
 * a request of RESP_LEN bytes (RPC id 42) to server @srv, which takes its
 * announcement with HOMA_RECV_PARTIAL. Return: the server RPC's id.
 */
static uint64_t announced(homa_socket *srv, int *fd)
{
	struct homa_message m;

	*fd = fake_tp_connect(homa_local_port(srv));
	fake_tp_send_request(*fd, 42, RESP_LEN, 0, FIRST);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0, WAIT_NS, &m), 0);
	assert_int_equal(m.type, HOMA_RECV_PARTIAL);
	assert_int_equal(m.length, RESP_LEN);
	assert_true(m.id & 1);
	assert_true(m.peer_len > 0);
	return m.id;
}

/**
 * tcp_partial__request_as_it_arrives() - A server asking for requests as
 * they start (HOMA_RECV_PARTIAL) is told of a TCP request once its first
 * part is here and reads its bytes as they arrive; a reply before the
 * request is whole is HOMA_ESTATE; once whole it is readable to the end
 * (complete), not delivered a second time, and the reply reaches the
 * client.
 */
static void tcp_partial__request_as_it_arrives(void **state)
{
	homa_socket *srv = open_server();
	struct homa_partial info;
	struct homa_message m;
	uint8_t b[16];
	uint32_t len;
	uint64_t id;
	int fd;

	(void)state;
	id = announced(srv, &fd);
	info = read_until(srv, id, 0, FIRST);
	assert_false(info.complete);
	assert_int_equal(homa_reply_buf(srv, id, "r", 1), HOMA_ESTATE);
	assert_int_equal(homa_recv_partial_wait(srv, id, RESP_LEN, b, sizeof(b), 0, &info),
			 HOMA_EAGAIN);
	fake_tp_send_request(fd, 42, RESP_LEN, FIRST, RESP_LEN / 2);
	read_until(srv, id, FIRST, RESP_LEN / 2);
	fake_tp_send_request(fd, 42, RESP_LEN, RESP_LEN / 2, RESP_LEN);
	read_until(srv, id, RESP_LEN / 2, RESP_LEN);
	assert_int_equal(homa_recv_partial_wait(srv, id, RESP_LEN, b, sizeof(b), WAIT_NS, &info), 0);
	assert_true(info.complete);
	assert_int_equal(info.arrived, RESP_LEN);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0, 0, &m),
			 HOMA_EAGAIN); /* the whole request is not announced again */
	assert_int_equal(homa_reply_buf(srv, id, "resp", 4), 0);
	assert_int_equal(fake_tp_response(fd, &len), 42);
	assert_int_equal(len, 4);
	assert_int_equal(homa_recv_partial_wait(srv, id, 0, b, sizeof(b), 0, NULL),
			 HOMA_ENOTFOUND); /* answered: gone */
	close(fd);
	homa_close(srv);
}

/**
 * tcp_partial__request_cut_or_aborted() - A request whose client goes
 * away half-way is no longer readable (HOMA_ENOTFOUND, a waiting reader
 * wakes); one the server aborts half-way is not readable either, and its
 * rest is dropped while the connection keeps carrying requests.
 */
static void tcp_partial__request_cut_or_aborted(void **state)
{
	homa_socket *srv = open_server();
	struct homa_message m;
	uint8_t b[16];
	uint64_t id;
	int fd;

	(void)state;
	id = announced(srv, &fd);
	read_until(srv, id, 0, FIRST);
	close(fd);
	assert_int_equal(homa_recv_partial_wait(srv, id, FIRST, b, sizeof(b), WAIT_NS, NULL),
			 HOMA_ENOTFOUND);
	id = announced(srv, &fd);
	assert_int_equal(homa_abort(srv, id), 0);
	assert_int_equal(homa_recv_partial_wait(srv, id, 0, b, sizeof(b), 0, NULL), HOMA_ENOTFOUND);
	fake_tp_send_request(fd, 42, RESP_LEN, FIRST, RESP_LEN);
	fake_tp_send_request(fd, 43, 3, 0, 3);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST, 0, WAIT_NS, &m), 0);
	assert_int_equal(m.length, 3); /* the aborted request never shows up */
	assert_int_equal(homa_message_release(&m), 0);
	close(fd);
	homa_close(srv);
}

/**
 * tcp_partial__request_started_before_first_ask() - A request whose first
 * part the server read before it ever asked with HOMA_RECV_PARTIAL (and
 * of which nothing more comes) is announced by that first ask, and is
 * readable and answerable once the rest arrives.
 */
static void tcp_partial__request_started_before_first_ask(void **state)
{
	homa_socket *srv = open_server();
	struct homa_transport_stats st;
	struct homa_partial info;
	struct homa_message m;
	uint32_t len;
	uint64_t id;
	int fd;

	(void)state;
	fd = fake_tp_connect(homa_local_port(srv));
	fake_tp_send_request(fd, 42, RESP_LEN, 0, FIRST);
	for (int ms = 0;; ms++) { /* until the server has read preface, header and FIRST bytes */
		assert_int_equal(homa_transport_stats(srv, &st), 0);
		if (st.tcp_rx_bytes >= 12 + 16 + FIRST)
			break;
		assert_true(ms < 20000);
		usleep(1000);
	}
	usleep(50000); /* and parsed them */
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0, WAIT_NS / 4, &m),
			 0);
	assert_int_equal(m.type, HOMA_RECV_PARTIAL);
	assert_int_equal(m.length, RESP_LEN);
	id = m.id;
	info = read_until(srv, id, 0, FIRST);
	assert_false(info.complete);
	fake_tp_send_request(fd, 42, RESP_LEN, FIRST, RESP_LEN);
	read_until(srv, id, FIRST, RESP_LEN);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0, 0, &m),
			 HOMA_EAGAIN); /* announced once, not delivered again */
	assert_int_equal(homa_reply_buf(srv, id, "resp", 4), 0);
	assert_int_equal(fake_tp_response(fd, &len), 42);
	assert_int_equal(len, 4);
	close(fd);
	homa_close(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tcp_partial__bytes_as_they_arrive),
		cmocka_unit_test(tcp_partial__connection_lost_mid_response),
		cmocka_unit_test(tcp_partial__abort_mid_response),
		cmocka_unit_test(tcp_partial__request_as_it_arrives),
		cmocka_unit_test(tcp_partial__request_cut_or_aborted),
		cmocka_unit_test(tcp_partial__request_started_before_first_ask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
