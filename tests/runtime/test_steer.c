/* SPDX-License-Identifier: MIT */
/**
 * @file test_steer.c
 * Tests of the UDP driver's receive queues by priority (src/io/steer.c):
 * a high-priority packet that arrives behind many low-priority ones is
 * received first (IPv4, IPv6, IPv4 on a dual-stack socket, with and
 * without offloads), nothing is lost, the port stays exclusive, the
 * levels can change, and a socket the library opens reports two queues.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "drv_cfg.h"
#include "helpers.h"
#include "steer.h"

/** Low-priority packets queued ahead of the high-priority ones. */
#define AHEAD 200
/** Bytes per test packet. */
#define PKT_LEN 1000

/** cfg_of() - A driver config bound to numeric @addr, port 0, small batches. */
static struct homa_driver_config cfg_of(const char *addr, bool offload, uint8_t fast)
{
	return test_drv_cfg(addr, 16, offload, fast, 0);
}

/**
 * send_run() - Send @n PKT_LEN-byte packets from @a to @b's port at @dst
 * with @prio; byte 4 of each is @mark (the test's label; the driver does
 * not read it).
 */
static void send_run(struct homa_driver *a, struct homa_driver *b, const homa_addr *dst,
		     int n, uint8_t prio, uint8_t mark)
{
	static uint8_t pkt[PKT_LEN];
	struct homa_io_tx tx[16];

	memset(pkt, 0x5a, sizeof(pkt));
	pkt[4] = mark;
	for (int i = 0; i < 16; i++)
		tx[i] = (struct homa_io_tx){.data = pkt, .len = sizeof(pkt), .dst = *dst,
			.dport = b->port, .priority = prio};
	for (int sent = 0; sent < n;) {
		int k = n - sent < 16 ? n - sent : 16;

		assert_int_equal(a->ops->send(a, tx, k), k);
		sent += k;
	}
}

/**
 * read_until() - Receive from @b until @want packets came or 5 s passed;
 * @first_hi: receives how many packets came before the first marked 'H'.
 * Return: packets received.
 */
static int read_until(struct homa_driver *b, int want, int *first_hi)
{
	int got = 0;

	*first_hi = -1;
	for (int64_t end = test_now_ms() + 5000; got < want && test_now_ms() < end;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		struct homa_io_rx *rx;
		int n;

		poll(&p, 1, 10);
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(rx[i].len, PKT_LEN);
			if (rx[i].data[4] == 'H' && *first_hi < 0)
				*first_hi = got;
		}
	}
	return got;
}

/**
 * check_overtakes() - AHEAD packets at priority 0 and 4 reach @to's queue
 * (sent to @dst) before two at priorities 5 and 7; with steering at 5 the
 * receiver reads a marked one first, and gets all packets.
 */
static void check_overtakes(const char *from, const char *to, const homa_addr *dst,
			    bool offload)
{
	struct homa_driver_config ca = cfg_of(from, offload, 0), cb = cfg_of(to, offload, 5);
	struct homa_driver *a, *b;
	int first_hi, got;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	send_run(a, b, dst, AHEAD / 2, 0, 'L');
	send_run(a, b, dst, AHEAD / 2, 4, 'L');
	send_run(a, b, dst, 1, 5, 'H');
	send_run(a, b, dst, 1, 7, 'H');
	usleep(20000); /* all of it queued before the first read */
	got = read_until(b, AHEAD + 2, &first_hi);
	if (first_hi != 0)
		fail_msg("%s -> %s offload %d: %d packets read before the first high-priority one",
			 from, to, offload, first_hi);
	assert_int_equal(got, AHEAD + 2);
	assert_int_equal(b->c.rx_queues, 2);
	assert_int_equal(b->c.rx_fast_packets, 2);
	assert_int_equal(b->c.rx_packets, AHEAD + 2);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * udp_recv__high_priority_overtakes_queue() - Count the packets received
 * before a high-priority one queued behind AHEAD low-priority ones: 0
 * (with one queue, AHEAD). IPv4, IPv6, and IPv4 peers of a dual-stack
 * socket (the program reads the IPv4 header there), offloads on and off.
 */
static void udp_recv__high_priority_overtakes_queue(void **state)
{
	homa_addr v4 = homa_addr_ipv4(INADDR_LOOPBACK), v6;

	(void)state;
	memcpy(v6.b, &in6addr_loopback, 16);
	for (int off = 0; off < 2; off++) {
		check_overtakes("127.0.0.1", "127.0.0.1", &v4, off);
		check_overtakes("::1", "::1", &v6, off);
		check_overtakes("127.0.0.1", "::", &v4, off);
	}
}

/**
 * wait_like_runtime() - What the runtime's waiter does (io.c
 * wait_packets()): poll @b's listed sockets one by one and hand their
 * revents back, so that recv() reads only those found readable.
 */
static void wait_like_runtime(struct homa_driver *b)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll;

	assert_true(n >= 2);
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	assert_true(poll(p, (nfds_t)n, 1000) > 0);
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = p[i].revents;
	b->rx_polled = true;
}

/**
 * udp_recv__fast_queue_read_between_full_batches() - After a wait that
 * found only low-priority packets, a high-priority packet that arrives
 * while the caller reads full batches of them (without waiting again, as
 * the runtime's receive rounds do) is read by the next recv(), not after
 * the low-priority queue runs dry. Fails without read_entry()'s repoll(): the
 * next read returns another 16 low-priority packets.
 */
static void udp_recv__fast_queue_read_between_full_batches(void **state)
{
	struct homa_driver_config ca = cfg_of("127.0.0.1", false, 0), cb = cfg_of("127.0.0.1", false, 5);
	homa_addr v4 = homa_addr_ipv4(INADDR_LOOPBACK);
	struct homa_driver *a, *b;
	struct homa_io_rx *rx;
	int n, first_hi;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	send_run(a, b, &v4, 64, 0, 'L');
	usleep(20000);
	wait_like_runtime(b);
	assert_int_equal(b->rx_poll[HOMA_STEER_FAST].revents & POLLIN, 0);
	n = b->ops->recv(b, &rx);
	assert_int_equal(n, 16);
	assert_true(b->rx_full);
	send_run(a, b, &v4, 1, 6, 'H');  /* arrives while the batches are read */
	usleep(20000);
	n = b->ops->recv(b, &rx);
	if (n != 1 || rx[0].data[4] != 'H')
		fail_msg("read %d packets (first '%c') before the high-priority one", n,
			 n > 0 ? rx[0].data[4] : '-');
	n = b->ops->recv(b, &rx);  /* the fast queue is empty again: low priority */
	assert_int_equal(n, 16);
	assert_int_equal(rx[0].data[4], 'L');
	assert_int_equal(read_until(b, 32, &first_hi), 32);
	assert_int_equal(b->c.rx_fast_packets, 1);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * udp_steer__new_levels() - steer() moves the threshold: at 1, a
 * priority-2 packet overtakes 50 at priority 0; at 3 it does not.
 */
static void udp_steer__new_levels(void **state)
{
	struct homa_driver_config ca = cfg_of("127.0.0.1", false, 0);
	struct homa_driver_config cb = cfg_of("127.0.0.1", false, 7);
	homa_addr v4 = homa_addr_ipv4(INADDR_LOOPBACK);
	struct homa_driver *a, *b;
	int first_hi;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_int_equal(b->ops->steer(b, 1), 0);
	send_run(a, b, &v4, 50, 0, 'L');
	send_run(a, b, &v4, 1, 2, 'H');
	usleep(20000);
	assert_int_equal(read_until(b, 51, &first_hi), 51);
	assert_int_equal(first_hi, 0);
	assert_int_equal(b->ops->steer(b, 3), 0);
	send_run(a, b, &v4, 50, 0, 'L');
	send_run(a, b, &v4, 1, 2, 'H');
	usleep(20000);
	assert_int_equal(read_until(b, 51, &first_hi), 51);
	assert_int_equal(first_hi, 50);
	assert_int_equal(b->ops->steer(b, 0), HOMA_ENOTSUP);
	assert_int_equal(a->ops->steer(a, 3), HOMA_ENOTSUP); /* one queue */
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * udp_open__steered_port_stays_exclusive() - With two sockets on its
 * port, a second driver (steered or not) still finds the port in use.
 */
static void udp_open__steered_port_stays_exclusive(void **state)
{
	struct homa_driver_config ca = cfg_of("127.0.0.1", true, 5), cb;
	struct homa_driver *a, *b = NULL;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(a->c.rx_queues, 2);
	assert_int_not_equal(a->fd, a->tx_fd);
	for (uint8_t fast = 0; fast < 8; fast += 5) {
		cb = cfg_of("127.0.0.1", true, fast);
		((struct sockaddr_in *)&cb.bind)->sin_port = htons(a->port);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), HOMA_EADDRINUSE);
	}
	homa_driver_close(a);
}

/**
 * homa_open__two_receive_queues() - A UDP socket the library opens with
 * default settings reports two queues in homa_io_stats(); one with a
 * single priority level reports one.
 */
static void homa_open__two_receive_queues(void **state)
{
	struct homa_open_opts o;
	struct homa_settings st;
	struct homa_io_stats io;
	homa_socket *s;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	assert_int_equal(homa_open(&s, &o), 0);
	assert_int_equal(homa_io_stats(s, &io), 0);
	assert_int_equal(io.rx_queues, 2);
	homa_close(s);
	homa_settings_default(&st);
	st.num_priorities = 1;
	st.num_unsched_priorities = 1;
	st.unsched_cutoffs[0] = 0xffffffffu;
	o.settings = &st;
	assert_int_equal(homa_open(&s, &o), 0);
	assert_int_equal(homa_io_stats(s, &io), 0);
	assert_int_equal(io.rx_queues, 1);
	homa_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__high_priority_overtakes_queue),
		cmocka_unit_test(udp_recv__fast_queue_read_between_full_batches),
		cmocka_unit_test(udp_steer__new_levels),
		cmocka_unit_test(udp_open__steered_port_stays_exclusive),
		cmocka_unit_test(homa_open__two_receive_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
