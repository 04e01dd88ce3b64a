/* SPDX-License-Identifier: MIT */
/**
 * @file test_lend.c
 * The UDP driver's zero-copy receive (homa_open_opts.rx_lend_slots,
 * src/io/lendpool.c) through real sockets on loopback: bulk payload left
 * in the driver's receive buffers arrives bit-exact in both directions,
 * a small pool lends what it can and copies the rest, and the buffers a
 * message holds go back when the application releases it, when the
 * socket closes with messages unreleased, when a partial message
 * times out, and when the server aborts a partial request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"
#include "homa/wire.h"
#include "rt.h"

/** Requests per test; lengths differ, none a multiple of a datagram. */
#define NREQ 12
/** Length of request @i. */
#define REQ_LEN(i) ((size_t)400000 + (size_t)(i) * 77777)

/** total_len() - Bytes of requests 0..@n-1. */
static uint64_t total_len(int n)
{
	uint64_t t = 0;

	for (int i = 0; i < n; i++)
		t += REQ_LEN(i);
	return t;
}

/**
 * send_all() - Send requests 0..@n-1 from @cli to @port, filled with
 * test_fill() (seed = index + 1, also the cookie); their ids in @ids.
 */
static void send_all(homa_socket *cli, int port, int n, uint64_t *ids)
{
	struct sockaddr_storage dst = test_dst(port);
	uint8_t *buf = malloc(REQ_LEN(n));

	assert_non_null(buf);
	for (int i = 0; i < n; i++) {
		test_fill(buf, REQ_LEN(i), (uint64_t)i + 1);
		assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, buf, REQ_LEN(i),
						  (uint64_t)i + 1, &ids[i]), 0);
	}
	free(buf);
}

/**
 * take_all() - Receive the responses to @ids (@n of them) on @cli, check
 * each bit-exact against its request, and keep them unreleased in @m.
 */
static void take_all(homa_socket *cli, int n, const uint64_t *ids, struct homa_message *m)
{
	for (int i = 0; i < n; i++) {
		assert_int_equal(homa_recv(cli, HOMA_RECV_RESPONSE, ids[i], 30000000000LL, &m[i]), 0);
		assert_int_equal(m[i].length, REQ_LEN(i));
		assert_true(test_check_response(&m[i], REQ_LEN(i), (uint64_t)i + 1));
	}
}

/**
 * exchange() - Start an echo server @ts (2 threads) and open a client
 * *@cli, both with test_rx_lend_slots; the client sends requests
 * 0..NREQ-1 and takes their responses into @m, bit-exact, unreleased.
 */
static void exchange(struct test_server *ts, homa_socket **cli, struct homa_message *m)
{
	uint64_t ids[NREQ];

	assert_int_equal(test_server_start(ts, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 2, NULL), 0);
	assert_int_equal(test_open(cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	send_all(*cli, ts->port, NREQ, ids);
	take_all(*cli, NREQ, ids, m);
}

/** io() - @s's driver counters. */
static struct homa_io_stats io(homa_socket *s)
{
	struct homa_io_stats st;

	assert_int_equal(homa_io_stats(s, &st), 0);
	return st;
}

/**
 * struct rpc_driver - How wait_lent_slots() makes a small RPC: from cli to
 * an echo server at 127.0.0.1:port (srv NULL), or served in place by
 * srv's own thread (test_polled_rpc() to dst), for a server socket that
 * no test_server_start() thread reads.
 */
struct rpc_driver {
	homa_socket *cli;
	homa_socket *srv;
	int port;
	struct sockaddr_storage dst;
};

/** drive_rpc() - One small RPC as @d says (test_rpc() fails the test itself). */
static void drive_rpc(const struct rpc_driver *d)
{
	if (d->srv)
		assert_int_equal(test_polled_rpc(d->cli, d->srv, &d->dst), 0);
	else
		test_rpc(d->cli, d->port);
}

/**
 * wait_lent_slots() - Drive small RPCs as @d says (each makes both sockets
 * receive, which brings their rx_lent_slots gauge up to date) until @s's
 * gauge is @want, checking only after the third: a gauge not yet brought
 * up to date cannot pass the check. Return: true if within 10 s.
 */
static bool wait_lent_slots(homa_socket *s, const struct rpc_driver *d, uint64_t want)
{
	int64_t end = test_now_ms() + 10000;

	for (int i = 1; test_now_ms() < end; i++) {
		drive_rpc(d);
		if (i >= 3 && io(s).rx_lent_slots == want)
			return true;
		usleep(10000);
	}
	return false;
}

/**
 * lend__bulk_bit_exact_both_ways() - With the default pool, 12 requests of
 * 400-1255 KB and their echoes arrive bit-exact; both server and client
 * left most payload bytes in place (rx_lent_bytes), every byte either
 * lent or copied once. While the client holds the responses its gauge
 * counts held buffers; after it releases them it drops to 0.
 */
static void lend__bulk_bit_exact_both_ways(void **state)
{
	struct homa_message m[NREQ];
	struct test_server ts;
	struct homa_io_stats si, ci;
	homa_socket *cli;

	(void)state;
	exchange(&ts, &cli, m);
	si = io(ts.s);
	ci = io(cli);
	assert_int_equal(si.rx_lent_bytes + si.rx_copied_bytes, total_len(NREQ));
	assert_int_equal(ci.rx_lent_bytes + ci.rx_copied_bytes, total_len(NREQ));
	assert_true(si.rx_lent_bytes >= total_len(NREQ) / 2);
	assert_true(ci.rx_lent_bytes >= total_len(NREQ) / 2);
	test_rpc(cli, ts.port);  /* the client receives again: its gauge is current */
	assert_true(io(cli).rx_lent_slots > 0);
	for (int i = 0; i < NREQ; i++)
		homa_message_release(&m[i]);
	assert_true(wait_lent_slots(cli, &(struct rpc_driver){.cli = cli, .port = ts.port}, 0));
	assert_true(wait_lent_slots(ts.s, &(struct rpc_driver){.cli = cli, .port = ts.port}, 0));
	homa_close(cli);
	test_server_stop(&ts);
}

/**
 * lend__small_pool_lends_some() - With 3 buffers to lend, held responses
 * soon use them all: the rest of the payload is copied, and every
 * response still arrives bit-exact.
 */
static void lend__small_pool_lends_some(void **state)
{
	struct homa_message m[NREQ];
	struct test_server ts;
	struct homa_io_stats ci;
	homa_socket *cli;

	(void)state;
	test_rx_lend_slots = 3;
	exchange(&ts, &cli, m);
	test_rx_lend_slots = 0;
	ci = io(cli);
	assert_int_equal(ci.rx_lent_bytes + ci.rx_copied_bytes, total_len(NREQ));
	assert_true(ci.rx_lent_bytes > 0);
	assert_true(ci.rx_copied_bytes > total_len(NREQ) / 2);
	for (int i = 0; i < NREQ; i++)
		homa_message_release(&m[i]);
	homa_close(cli);
	test_server_stop(&ts);
}

/**
 * lend__close_with_held_messages() - A client closes its socket while it
 * holds every bit-exact response unreleased (their buffers lent): the
 * close gives them back and frees the pool after the engine (ASan and
 * Valgrind runs see no leak or stray access), and handles of released
 * messages stay refused.
 */
static void lend__close_with_held_messages(void **state)
{
	struct homa_message m[NREQ];
	struct test_server ts;
	homa_socket *cli;

	(void)state;
	exchange(&ts, &cli, m);
	test_rpc(cli, ts.port);
	assert_true(io(cli).rx_lent_slots > 0);
	homa_close(cli);
	assert_int_not_equal(homa_message_release(&m[0]), 0);
	test_server_stop(&ts);
}

/**
 * wait_tx_quiet() - Wait until socket @s has sent at least one packet and
 * then nothing more for 50 ms (a client that sent a request's unscheduled
 * bytes and waits for a grant). Return: true if within 10 s.
 */
static bool wait_tx_quiet(homa_socket *s)
{
	int64_t end = test_now_ms() + 10000;
	uint64_t last = 0;

	while (test_now_ms() < end) {
		uint64_t n = io(s).tx_packets;

		if (n && n == last)
			return true;
		last = n;
		usleep(50000);
	}
	return false;
}

/**
 * wait_rx_lent() - Wait up to 10 s until @s has left received payload in
 * its receive buffers (homa_io_stats.rx_lent_bytes > 0). A new client's
 * request reaches a server's fast queue, which is read first, so it can be
 * answered before the datagram waiting in the server's normal queue is
 * read. Returns whether it happened in time.
 */
static bool wait_rx_lent(homa_socket *s)
{
	int64_t end = test_now_ms() + 10000;

	while (test_now_ms() < end) {
		if (io(s).rx_lent_bytes > 0)
			return true;
		usleep(1000);
	}
	return false;
}

/**
 * lend__partial_message_freed() - A client sends a 4 MB request while the
 * server's I/O thread is held at its socket lock (so no GRANT goes out),
 * and closes once its unscheduled bytes are sent. Let go, the server
 * takes them into a partial request, their buffers lent; the request
 * ends (the client's port is closed: timeout or unreachable) and gives
 * its buffers back: the server's gauge returns to 0 and it serves the
 * next client.
 */
static void lend__partial_message_freed(void **state)
{
	enum { BIG = 4000000 };
	struct sockaddr_storage dst;
	struct homa_settings st;
	struct test_server ts;
	struct homa_rt *held;
	homa_socket *cli;
	uint8_t *buf = calloc(1, BIG);
	uint64_t id;

	(void)state;
	assert_non_null(buf);
	homa_settings_default(&st);
	st.timeout_ticks = 60;
	st.mtu = 60000;  /* the unscheduled bytes in one datagram, lendable coalesced or not */
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, &st), 0);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, &st), 0);
	dst = test_dst(ts.port);
	held = homa_rt_get(ts.s);
	assert_non_null(held);
	homa_rt_lock(held);
	assert_int_equal(homa_request_buf(cli, (struct sockaddr *)&dst, buf, BIG, 1, &id), 0);
	assert_true(wait_tx_quiet(cli));
	homa_close(cli);
	homa_rt_unlock(held);
	homa_rt_put(held);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	test_rpc(cli, ts.port);
	assert_true(wait_rx_lent(ts.s));
	assert_true(wait_lent_slots(ts.s, &(struct rpc_driver){.cli = cli, .port = ts.port}, 0));
	homa_close(cli);
	test_server_stop(&ts);
	free(buf);
}

/**
 * send_first_data() - From a plain UDP socket (returned; the caller
 * closes it), send the server at @port the first DATA packet of a
 * request of @total bytes: the @len bytes of @buf at offset 0, all its
 * unscheduled bytes. Nothing answers the server's GRANTs or RESENDs, so
 * the request stays partial without holding any socket's lock.
 */
static int send_first_data(int port, const uint8_t *buf, uint32_t len, uint32_t total)
{
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage dst = test_dst(port);
	socklen_t mlen = sizeof(me);
	uint8_t *wire = malloc(len + 256);
	struct homa_pkt k;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), n;

	assert_true(fd >= 0 && wire);
	assert_int_equal(bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&me, &mlen), 0);
	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_DATA;
	k.ours = true;
	k.sport = ntohs(me.sin_port);
	k.dport = (uint16_t)port;
	k.sender_id = 1000;
	k.u.data.message_length = total;
	k.u.data.incoming = len;
	k.u.data.payload = buf;
	k.u.data.payload_len = len;
	n = homa_wire_encode(&k, wire, len + 256);
	assert_true(n > (int)len);
	assert_int_equal(sendto(fd, wire, (size_t)n, 0, (struct sockaddr *)&dst,
				sizeof(struct sockaddr_in)), n);
	free(wire);
	return fd;
}

/**
 * lend__abort_partial_request() - A server takes a 4 MB request as it
 * starts (HOMA_RECV_PARTIAL) whose first 60000 bytes came in one
 * datagram (lent) and whose sender answers nothing. The server reads
 * them with homa_recv_partial_wait() (bit-exact), then aborts the
 * request: its buffers go back (the gauge returns to 0), the id is
 * refused afterwards, and the server answers the next RPC.
 */
static void lend__abort_partial_request(void **state)
{
	enum { BIG = 4000000, FIRST = 60000 };
	struct sockaddr_storage dst;
	struct homa_partial info;
	struct homa_message m;
	homa_socket *srv, *cli;
	uint8_t *buf = malloc(FIRST), *got = malloc(FIRST);
	int64_t n;
	int fd;

	(void)state;
	assert_true(buf && got);
	test_fill(buf, FIRST, 9);
	assert_int_equal(test_open(&srv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, true, 0, NULL), 0);
	dst = test_dst(homa_local_port(srv));
	fd = send_first_data(homa_local_port(srv), buf, FIRST, BIG);
	assert_int_equal(homa_recv(srv, HOMA_RECV_REQUEST | HOMA_RECV_PARTIAL, 0,
				   10000000000LL, &m), 0);
	assert_int_equal(m.type, HOMA_RECV_PARTIAL);
	n = homa_recv_partial_wait(srv, m.id, 0, got, FIRST, 10000000000LL, &info);
	assert_int_equal(n, FIRST);
	assert_true(info.length == BIG && !info.complete);
	assert_memory_equal(got, buf, FIRST);
	assert_true(io(srv).rx_lent_bytes >= FIRST);
	assert_int_equal(homa_abort(srv, m.id), 0);
	assert_int_equal(homa_recv_partial_wait(srv, m.id, 0, got, FIRST, 0, NULL), HOMA_ENOTFOUND);
	assert_int_equal(test_open(&cli, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	assert_true(wait_lent_slots(srv, &(struct rpc_driver){.cli = cli, .srv = srv, .dst = dst}, 0));
	close(fd);
	homa_close(cli);
	homa_close(srv);
	free(buf);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lend__bulk_bit_exact_both_ways),
		cmocka_unit_test(lend__small_pool_lends_some),
		cmocka_unit_test(lend__close_with_held_messages),
		cmocka_unit_test(lend__partial_message_freed),
		cmocka_unit_test(lend__abort_partial_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
