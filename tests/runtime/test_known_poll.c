/* SPDX-License-Identifier: MIT */
/**
 * @file test_known_poll.c
 * Tests of the UDP driver's polled receive (homa_driver.rx_poll): with a
 * known peer, the waiter polls the port's queues and the peer's socket one
 * by one, and recv() reads only the sockets the wait reported readable: no
 * epoll_wait() and no receive call on an idle socket per wake-up, and
 * strangers' packets still arrive.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "drv_cfg.h"
#include "helpers.h"
#include "homa/homa.h"

/** Packets per receive. */
#define BATCH 16
/** Wake-ups the known peer causes. */
#define ROUNDS 40

/** cfg_of() - A driver config on 127.0.0.1, port 0, @known peers, steering at @fast. */
static struct homa_driver_config cfg_of(uint32_t known, uint8_t fast)
{
	return test_drv_cfg("127.0.0.1", BATCH, true, fast, known);
}

/** send_one() - One 100-byte packet from @a to @b at priority @prio. */
static void send_one(struct homa_driver *a, struct homa_driver *b, uint8_t prio)
{
	static uint8_t pkt[100];
	struct homa_io_tx tx = {.data = pkt, .len = sizeof(pkt), .dst = homa_addr_ipv4(0x7f000001u),
				.dport = b->port, .priority = prio};

	assert_int_equal(a->ops->send(a, &tx, 1), 1);
}

/**
 * wait_rx() - Wait up to 1 s as the runtime's waiter does: ppoll() the
 * driver's rx_poll list and hand the revents back (rx_polled), or poll
 * its fd when it lists none. Return: true if something is readable.
 */
static bool wait_rx(struct homa_driver *b)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll, r;

	if (!n) {
		struct pollfd one = {.fd = b->fd, .events = POLLIN};

		return poll(&one, 1, 1000) > 0;
	}
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	r = poll(p, (nfds_t)n, 1000);
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = p[i].revents;
	b->rx_polled = true;
	return r > 0;
}

/**
 * rx_wake() - One wake-up of the runtime: wait, then receive while
 * batches come back full (as homa_rt_input()). Return: packets received.
 */
static int rx_wake(struct homa_driver *b)
{
	struct homa_io_rx *rx;
	int got = 0, n;

	assert_true(wait_rx(b));
	do {
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
		got += n;
	} while (n >= BATCH);
	b->rx_polled = false;
	return got;
}

/**
 * udp_recv__idle_sockets_not_read() - A known peer sends one packet per
 * wake-up ROUNDS times (a stranger sends one in the middle), with one
 * queue and with two: every packet arrives, and the receiver made no
 * epoll_wait() and no receive call that found its socket empty (before
 * the polled list, each wake-up cost an epoll_wait() and every fifth an
 * empty read of the port's queue).
 */
static void udp_recv__idle_sockets_not_read(void **state)
{
	(void)state;
	for (int fast = 0; fast <= 5; fast += 5) {
		struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, (uint8_t)fast);
		struct homa_driver *s, *k, *b;
		struct homa_io_rx *rx;
		int got = 0;

		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
		b->ops->know(b, &k->local, k->port);
		assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits k */
		assert_int_equal(b->c.rx_known_peers, 1);
		uint64_t empty = b->c.rx_empty, scans = b->c.rx_scans;

		for (int i = 0; i < ROUNDS; i++) {
			send_one(k, b, 7);
			if (i == ROUNDS / 2)
				send_one(s, b, 0);
			usleep(200);
			got += rx_wake(b);
		}
		while (got < ROUNDS + 1 && wait_rx(b))
			got += rx_wake(b);
		assert_int_equal(got, ROUNDS + 1);
		assert_int_equal(b->c.rx_known_packets, ROUNDS);
		if (b->c.rx_empty != empty || b->c.rx_scans != scans)
			fail_msg("fast %d: %llu empty receive calls and %llu epoll_wait() calls in %d wake-ups",
				 fast, (unsigned long long)(b->c.rx_empty - empty),
				 (unsigned long long)(b->c.rx_scans - scans), ROUNDS);
		homa_driver_close(s);
		homa_driver_close(k);
		homa_driver_close(b);
	}
}

/** send_len() - One @len-byte packet (at most 1000) from @a to @b at priority @prio. */
static void send_len(struct homa_driver *a, struct homa_driver *b, size_t len, uint8_t prio)
{
	static uint8_t pkt[1000];
	struct homa_io_tx tx = {.data = pkt, .len = len, .dst = homa_addr_ipv4(0x7f000001u),
				.dport = b->port, .priority = prio};

	assert_int_equal(a->ops->send(a, &tx, 1), 1);
}

/**
 * udp_recv__other_peer_read_between_full_batches() - After a wait that
 * found only a bulk peer's socket readable, a packet another known peer
 * sends while the receiver reads full batches of the bulk peer's (without
 * waiting again, as the runtime's receive rounds do) is read by the next
 * recv(): a full batch uses up the wait's readiness. Fails on the old
 * driver, which read the bulk peer's next batch (and the one after) and
 * the other peer's packet only after the bulk peer's queue ran dry.
 */
static void udp_recv__other_peer_read_between_full_batches(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 5);
	struct homa_driver *bulk, *look, *b;
	struct homa_io_rx *rx;
	int n, got = 0;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &bulk), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &look), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	b->ops->know(b, &bulk->local, bulk->port);
	b->ops->know(b, &look->local, look->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits both */
	assert_int_equal(b->c.rx_known_peers, 2);
	for (int i = 0; i < 3 * BATCH; i++)
		send_len(bulk, b, 1000, 0);
	usleep(20000);
	assert_true(wait_rx(b));
	assert_int_equal(b->ops->recv(b, &rx), BATCH);
	assert_int_equal(rx[0].len, 1000);
	send_len(look, b, 300, 0);
	usleep(20000);
	n = b->ops->recv(b, &rx);
	assert_true(n > 0);
	for (int i = 0; i < n; i++)
		if (rx[i].len == 300)
			got = i + 1;
	if (got == 0)
		fail_msg("the next read returned %d of the bulk peer's packets, not the other peer's", n);
	homa_driver_close(bulk);
	homa_driver_close(look);
	homa_driver_close(b);
}

/** Peers of the testbed's hosts: 8 hosts, each talking to the 7 others. */
#define PEERS 7

/**
 * udp_recv__testbed_peers_polled_one_by_one() - A receiver with two
 * queues and 7 known peers (9 sockets; a testbed host adds its gate's
 * timer) lists them all for its waiter; each peer sends one packet per
 * wake-up, and every packet arrives without an epoll_wait(). Fails with
 * a list of at most 8 sockets: the waiter then polled the epoll set and
 * every receive asked it which socket had packets.
 */
static void udp_recv__testbed_peers_polled_one_by_one(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(PEERS, 5);
	struct homa_driver *k[PEERS], *b;
	struct homa_io_rx *rx;
	uint64_t scans;
	int got = 0;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	for (int i = 0; i < PEERS; i++) {
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k[i]), 0);
		b->ops->know(b, &k[i]->local, k[i]->port);
	}
	for (int i = 0; i < 4 && b->c.rx_known_peers < PEERS; i++)
		assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits them, a few per call */
	assert_int_equal(b->c.rx_known_peers, PEERS);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* the list follows the admits */
	assert_true(b->n_rx_poll >= PEERS + 2);
	scans = b->c.rx_scans;
	for (int r = 0; r < ROUNDS / 4; r++) {
		for (int i = 0; i < PEERS; i++)
			send_one(k[i], b, (uint8_t)(i % 8));
		usleep(2000);
		while (got < (r + 1) * PEERS)
			got += rx_wake(b);
	}
	assert_int_equal(got, ROUNDS / 4 * PEERS);
	assert_int_equal(b->c.rx_scans, scans);
	for (int i = 0; i < PEERS; i++)
		homa_driver_close(k[i]);
	homa_driver_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__idle_sockets_not_read),
		cmocka_unit_test(udp_recv__other_peer_read_between_full_batches),
		cmocka_unit_test(udp_recv__testbed_peers_polled_one_by_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
