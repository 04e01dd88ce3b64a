/* SPDX-License-Identifier: MIT */
/**
 * @file test_gate.c
 * Tests of the UDP driver's strangers' budget (src/io/gate.c): while a
 * known peer is active, the port's queues (strangers) give the receiving
 * thread at most the budget per millisecond, the rest waiting in the
 * kernel; once no known peer is active they are read without limit, and
 * nothing is lost.
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
#include "helpers.h"
#include "homa/homa.h"

/** Packets per receive. */
#define BATCH 16
/** Strangers' packets per millisecond in the test. */
#define BUDGET 8
/** Strangers' packets queued at the start. */
#define STRANGERS 1000
/** Milliseconds the known peer keeps sending. */
#define ACTIVE_MS 10

/** cfg_of() - A driver config on 127.0.0.1, port 0, @known peers, @budget, no offloads. */
static struct homa_driver_config cfg_of(uint32_t known, uint32_t budget)
{
	struct homa_driver_config c;

	memset(&c, 0, sizeof(c));
	assert_int_equal(homa_sockaddr_parse("127.0.0.1", 0, &c.bind, &c.bind_len), 0);
	c.batch = BATCH;
	c.max_packet = 1500;
	c.known_peers = known;
	c.stranger_budget = budget;
	return c;
}

/** send_n() - @n 100-byte packets from @a to @b, byte 0 = @mark. */
static void send_n(struct homa_driver *a, struct homa_driver *b, int n, uint8_t mark)
{
	static uint8_t pkt[100];
	struct homa_io_tx tx[BATCH];

	pkt[0] = mark;
	for (int i = 0; i < BATCH; i++)
		tx[i] = (struct homa_io_tx){.data = pkt, .len = sizeof(pkt),
			.dst = homa_addr_ipv4(0x7f000001u), .dport = b->port};
	for (int sent = 0; sent < n;) {
		int k = n - sent < BATCH ? n - sent : BATCH;

		assert_int_equal(a->ops->send(a, tx, k), k);
		sent += k;
	}
}

/**
 * rx_wake() - One wake-up of the runtime's waiter (up to @ms ms): ppoll()
 * the driver's rx_poll list, hand the revents back, receive while batches
 * come back full. Counts the packets marked 'S' in *@s and others in *@k.
 */
static void rx_wake(struct homa_driver *b, int ms, int *s, int *k)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll;
	struct homa_io_rx *rx;

	assert_true(n > 0);
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	if (poll(p, (nfds_t)n, ms) <= 0)
		return;
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = p[i].revents;
	b->rx_polled = true;
	do {
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			(*(rx[i].data[0] == 'S' ? s : k))++;
	} while (n >= BATCH);
	b->rx_polled = false;
}

/**
 * udp_recv__strangers_within_budget() - STRANGERS packets wait while a
 * known peer sends one packet per wake-up for ACTIVE_MS: the receiver
 * reads at most BUDGET (rounded up to a batch) strangers' packets per
 * millisecond meanwhile; once the peer is silent, the rest arrive.
 */
static void udp_recv__strangers_within_budget(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, BUDGET);
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	int got_s = 0, got_k = 0, sent_k = 0;
	int64_t t0, ms;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	b->ops->know(b, &k->local, k->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits k */
	assert_int_equal(b->c.rx_known_peers, 1);
	send_n(s, b, STRANGERS, 'S');
	usleep(20000);
	t0 = test_now_ms();
	while ((ms = test_now_ms() - t0) < ACTIVE_MS) {
		send_n(k, b, 1, 'K');
		sent_k++;
		rx_wake(b, 2, &got_s, &got_k);
	}
	ms = test_now_ms() - t0;
	if (got_s > (ms + 2) * BATCH || got_s == 0)
		fail_msg("%d strangers' packets read in %lld ms beside a known peer (budget %d per ms)",
			 got_s, (long long)ms, BUDGET);
	assert_true(b->c.rx_gate_closed > 0);
	for (int64_t end = test_now_ms() + 5000; got_s + got_k < STRANGERS + sent_k &&
						 test_now_ms() < end;)
		rx_wake(b, 100, &got_s, &got_k);
	assert_int_equal(got_s, STRANGERS);
	assert_int_equal(got_k, sent_k);
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
}

/**
 * homa_open__stranger_budget_range() - homa_open_opts.stranger_budget:
 * -1 (no limit), 0 (default) and HOMA_STRANGER_BUDGET_MAX open; -2 and
 * one past the maximum are HOMA_EINVAL; an options struct of version 6
 * (before the field) opens with the default.
 */
static void homa_open__stranger_budget_range(void **state)
{
	static const int32_t ok[] = {-1, 0, 1, HOMA_STRANGER_BUDGET_MAX};
	static const int32_t bad[] = {-2, HOMA_STRANGER_BUDGET_MAX + 1};
	struct homa_open_opts o;
	homa_socket *c;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		homa_open_opts_default(&o);
		o.bind_addr = "127.0.0.1";
		o.stranger_budget = ok[i];
		assert_int_equal(homa_open(&c, &o), 0);
		homa_close(c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		homa_open_opts_default(&o);
		o.bind_addr = "127.0.0.1";
		o.stranger_budget = bad[i];
		assert_int_equal(homa_open(&c, &o), HOMA_EINVAL);
	}
	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.version = 6;
	o.stranger_budget = -2;  /* not read: past a version 6 struct */
	assert_int_equal(homa_open(&c, &o), 0);
	homa_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__strangers_within_budget),
		cmocka_unit_test(homa_open__stranger_budget_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
