/* SPDX-License-Identifier: MIT */
/**
 * @file test_tx_full.c
 * A full kernel send buffer never makes a thread wait (src/io/batch.c,
 * src/runtime/tx.c). The binary links with -Wl,--wrap=sendmmsg,--wrap=poll:
 * sendmmsg() toward one chosen port fails with EAGAIN while the test says
 * the buffer is full, and poll() calls are counted (a driver that waited
 * for room would call it).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "driver.h"
#include "helpers.h"

/** Destination port whose sends fail with EAGAIN (0: none). */
static _Atomic int full_port;
/** poll() calls so far. */
static _Atomic int polls;

int __real_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags);
int __real_poll(struct pollfd *fds, nfds_t n, int timeout);

/** __wrap_sendmmsg() - sendmmsg(), or EAGAIN for messages to full_port. */
int __wrap_sendmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags)
{
	const struct sockaddr_in *to = v[0].msg_hdr.msg_name;
	int port = atomic_load(&full_port);

	if (port && to && to->sin_family == AF_INET && ntohs(to->sin_port) == port) {
		errno = EAGAIN;
		return -1;
	}
	return __real_sendmmsg(fd, v, n, flags);
}

/** __wrap_poll() - poll(), counted. */
int __wrap_poll(struct pollfd *fds, nfds_t n, int timeout)
{
	atomic_fetch_add(&polls, 1);
	return __real_poll(fds, n, timeout);
}

/** open_udp() - A UDP driver on 127.0.0.1 with batch 8. */
static struct homa_driver *open_udp(void)
{
	struct homa_driver_config c;
	struct sockaddr_in *in = (struct sockaddr_in *)&c.bind;
	struct homa_driver *d;

	memset(&c, 0, sizeof(c));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c.bind_len = sizeof(*in);
	c.batch = 8;
	c.max_packet = 1500;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &c, &d), 0);
	return d;
}

/**
 * driver_send__full_buffer_returns_at_once() - With the send buffer full,
 * send() takes nothing, says so (0 of 5) and never waits (no poll(); the
 * driver used to retry 100 times with a 10 ms poll, a second in all, and
 * then report success). Once there is room the same packets go out.
 */
static void driver_send__full_buffer_returns_at_once(void **state)
{
	struct homa_driver *a = open_udp(), *b = open_udp();
	static uint8_t bytes[5][200];
	struct homa_io_tx tx[5];
	struct homa_io_rx *rx;
	int got = 0;

	(void)state;
	for (int i = 0; i < 5; i++)
		tx[i] = (struct homa_io_tx){.data = bytes[i], .len = 200,
			.dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = b->port};
	atomic_store(&full_port, b->port);
	atomic_store(&polls, 0);
	assert_int_equal(a->ops->send(a, tx, 5), 0);
	assert_int_equal(atomic_load(&polls), 0);
	atomic_store(&full_port, 0);
	assert_int_equal(a->ops->send(a, tx, 5), 5);
	for (int tries = 0; got < 5 && tries < 500; tries++) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		int n;

		__real_poll(&p, 1, 10);
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
		got += n;
	}
	assert_int_equal(got, 5);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * runtime__requests_flow_while_replies_wait() - While the server's
 * replies cannot leave (its send buffer toward the client is full), its
 * I/O thread keeps receiving: all requests reach the application, the
 * replies are held and counted, and once the buffer drains every RPC
 * completes with the right bytes.
 */
static void runtime__requests_flow_while_replies_wait(void **state)
{
	struct sockaddr_storage dst;
	struct homa_io_stats st;
	struct test_server ts;
	homa_socket *c;
	uint64_t ids[4];
	uint8_t req[4][500];

	(void)state;
	assert_int_equal(test_server_start(&ts, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	assert_int_equal(test_open(&c, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(ts.port);
	atomic_store(&full_port, homa_local_port(c));
	for (int i = 0; i < 4; i++) {
		test_fill(req[i], sizeof(req[i]), (uint64_t)i);
		assert_int_equal(homa_send(c, (struct sockaddr *)&dst, req[i], sizeof(req[i]),
					   (uint64_t)i, &ids[i]), 0);
	}
	for (int tries = 0; __atomic_load_n(&ts.served, __ATOMIC_ACQUIRE) < 4 && tries < 2000; tries++)
		__real_poll(NULL, 0, 5);
	assert_int_equal(__atomic_load_n(&ts.served, __ATOMIC_ACQUIRE), 4);
	homa_io_stats(ts.s, &st);
	assert_true(st.tx_full > 0 && st.tx_deferred > 0);
	atomic_store(&full_port, 0);
	for (int i = 0; i < 4; i++) {
		struct homa_message m;

		assert_int_equal(homa_recv(c, HOMA_RECV_RESPONSE, ids[i], 30000000000ll, &m), 0);
		assert_true(test_check_response(&m, sizeof(req[i]), (uint64_t)i));
		homa_message_release(&m);
	}
	homa_close(c);
	test_server_stop(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_send__full_buffer_returns_at_once),
		cmocka_unit_test(runtime__requests_flow_while_replies_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
