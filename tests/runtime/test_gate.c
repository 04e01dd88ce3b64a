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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "drv_cfg.h"
#include "gate.h"
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
	struct homa_driver_config c = test_drv_cfg("127.0.0.1", BATCH, false, 0, known);

	c.stranger_budget = budget;
	return c;
}

/** send_prio() - @n 100-byte packets of priority @prio from @a to @b, byte 0 = @mark. */
static void send_prio(struct homa_driver *a, struct homa_driver *b, int n, uint8_t mark,
		      uint8_t prio)
{
	static uint8_t pkt[100];
	struct homa_io_tx tx[BATCH];

	pkt[0] = mark;
	for (int i = 0; i < BATCH; i++)
		tx[i] = (struct homa_io_tx){.data = pkt, .len = sizeof(pkt),
			.dst = homa_addr_ipv4(0x7f000001u), .dport = b->port, .priority = prio};
	for (int sent = 0; sent < n;) {
		int k = n - sent < BATCH ? n - sent : BATCH;

		assert_int_equal(a->ops->send(a, tx, k), k);
		sent += k;
	}
}

/** send_n() - @n 100-byte packets of priority 0 from @a to @b, byte 0 = @mark. */
static void send_n(struct homa_driver *a, struct homa_driver *b, int n, uint8_t mark)
{
	send_prio(a, b, n, mark, 0);
}

/** wake_ms() - CLOCK_MONOTONIC in ms, rounded up from ns. */
static int64_t wake_ms(uint64_t ns)
{
	return (int64_t)((ns + 999999u) / 1000000u);
}

/**
 * rx_wake() - One wake-up of the runtime's waiter (up to @ms ms, no later
 * than the driver's rx_wake_ns): poll() the driver's rx_poll list, hand
 * the revents back (all 0 when the driver's wake-up time came first),
 * receive while batches come back full. Counts the packets marked 'S'
 * in *@s and others in *@k.
 */
static void rx_wake(struct homa_driver *b, int ms, int *s, int *k)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll, r;
	struct homa_io_rx *rx;
	struct timespec ts;
	int64_t now_ms, by_ms = 0;

	assert_true(n > 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	if (b->rx_wake_ns) {
		by_ms = wake_ms(b->rx_wake_ns) - now_ms;
		if (by_ms < ms)
			ms = by_ms < 0 ? 0 : (int)by_ms;
	}
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	r = poll(p, (nfds_t)n, ms);
	if (r < 0 || (r == 0 && !b->rx_wake_ns))
		return;
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = r ? p[i].revents : 0;
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

/** now_us() - CLOCK_MONOTONIC in µs. */
static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/** mono_ns() - CLOCK_MONOTONIC in ns (the gate's clock). */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/**
 * recv_sent() - recv() on @b right after a packet was sent to it: on a
 * loaded machine loopback may queue the datagram after send() returned
 * (its softirq deferred to ksoftirqd), so an empty receive is made again,
 * for up to 1 s. Return: the first non-empty recv()'s result, else 0.
 */
static int recv_sent(struct homa_driver *b, struct homa_io_rx **rx)
{
	int n = 0;

	for (int64_t end = now_us() + 1000000; n == 0 && now_us() < end;) {
		n = b->ops->recv(b, rx);
		if (n == 0)
			usleep(50);
	}
	return n;
}

/**
 * udp_recv__strangers_cpu_budget() - With no packet budget and a CPU
 * budget of 1 ms per ms: beside an active known peer a strangers' batch
 * is marked rx_metered, its measure starting before the receive call
 * (rx_t0: the clock read before recv() reads it), and
 * reporting its cost as 2 ms (rx_spent())
 * closes the gate: no strangers' packet is read or polled for the rest
 * of the interval, the known peer's still are; the next interval opens
 * it again and nothing is lost. Without a known peer no batch is metered.
 */
static void udp_recv__strangers_cpu_budget(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 0);
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	int got_s = 0, got_k = 0, n;
	uint64_t c0, c1;
	int64_t t0;

	(void)state;
	cb.stranger_cpu_ns = 1000000;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_non_null(b->ops->rx_spent);
	b->ops->know(b, &k->local, k->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits k */
	send_n(s, b, 4, 'S');
	usleep(20000);
	n = b->ops->recv(b, &rx);  /* no known peer active yet: not metered */
	assert_int_equal(n, 4);
	assert_false(b->rx_metered);
	send_n(k, b, 1, 'K');
	send_n(s, b, 4 * BATCH, 'S');
	usleep(20000);
	/* this receive starts the gate's interval (or the next one does):
	 * the gate closed below opens 1 ms after that start, not after t0 */
	t0 = now_us();
	assert_int_equal(b->ops->recv(b, &rx), 1);  /* the known peer first */
	assert_int_equal(rx[0].data[0], 'K');
	assert_false(b->rx_metered);
	assert_int_equal(b->rx_t0, 0);
	c0 = mono_ns();
	n = b->ops->recv(b, &rx);
	c1 = mono_ns();
	assert_int_equal(n, BATCH);
	assert_true(b->rx_metered);
	/* metered from before the receive call: its cost is the strangers' */
	if (!b->rx_t0 || b->rx_t0 < c0 || b->rx_t0 > c1)
		fail_msg("rx_t0 %llu not within [%llu, %llu]", (unsigned long long)b->rx_t0,
			 (unsigned long long)c0, (unsigned long long)c1);
	/* the read of BATCH packets outweighs what comes before it (gate
	 * checks, a look at the known peer's empty queue) */
	if (c1 - b->rx_t0 < b->rx_t0 - c0)
		fail_msg("the receive call is not metered: %llu ns after rx_t0, %llu before",
			 (unsigned long long)(c1 - b->rx_t0), (unsigned long long)(b->rx_t0 - c0));
	b->ops->rx_spent(b, 2000000);
	if (!b->c.rx_gate_closed && (uint64_t)(now_us() - t0) * 1000 >= HOMA_GATE_ACTIVE_NS) {
		homa_driver_close(s);
		homa_driver_close(k);
		homa_driver_close(b);
		skip();  /* descheduled so long that the known peer no longer counts as active */
	}
	assert_int_equal(b->c.rx_gate_closed, 1);
	send_n(k, b, 1, 'K');
	assert_int_equal(recv_sent(b, &rx), 1);
	assert_int_equal(rx[0].data[0], 'K');
	n = b->ops->recv(b, &rx);
	/* the interval is 1 ms from its start: later, the gate opens again
	 * (descheduled between the start and here) */
	if (n != 0 && now_us() - t0 < 1000)
		fail_msg("%d strangers' packets read after their CPU budget was spent", n);
	got_s = n;
	for (int64_t end = test_now_ms() + 5000; got_s < 3 * BATCH && test_now_ms() < end;)
		rx_wake(b, 100, &got_s, &got_k);
	assert_int_equal(got_s, 3 * BATCH);
	assert_int_equal(got_k, 0);
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
}

/**
 * urgent_then_strangers() - One try of
 * udp_recv_urgent__known_peer_keeps_budget_on(): a known peer's
 * high-priority packet read by recv() makes it urgent; 11 ms later (known
 * peers no longer active) it sends another, recv_urgent() takes it, and
 * recv() reads a batch of strangers' packets. *@metered: whether that
 * batch was metered. Return: whether the timing held (the two reads
 * within 5 ms of each other); if not, the try says nothing.
 */
static bool urgent_then_strangers(bool *metered)
{
	struct homa_driver_config cs = cfg_of(0, 0);
	struct homa_driver_config cb = test_drv_cfg("127.0.0.1", BATCH, false, 5, 4);
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	int64_t t0, t1;

	cb.stranger_cpu_ns = 1000000;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_non_null(b->ops->recv_urgent);
	b->ops->know(b, &k->local, k->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits k */
	send_prio(k, b, 1, 'K', 7);
	assert_int_equal(recv_sent(b, &rx), 1);  /* k: all high priority, urgent */
	assert_int_equal(rx[0].data[0], 'K');
	usleep(11000);  /* longer than HOMA_GATE_ACTIVE_NS: known peers inactive */
	send_prio(k, b, 1, 'K', 7);
	send_n(s, b, BATCH, 'S');
	t0 = now_us();
	assert_int_equal(b->ops->recv_urgent(b, &rx), 1);
	assert_int_equal(rx[0].data[0], 'K');
	assert_int_equal(b->ops->recv(b, &rx), BATCH);
	t1 = now_us();
	assert_int_equal(rx[0].data[0], 'S');
	*metered = b->rx_metered;
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
	return t1 - t0 < 5000;
}

/**
 * udp_recv_urgent__known_peer_keeps_budget_on() - A known peer's packets
 * taken by recv_urgent() (an encrypted socket's look between chunks of a
 * batch) keep known peers active as recv()'s do: the strangers' batch
 * read right after is metered (rx_metered), so its cost counts against
 * the budget. Were only recv()'s reads to count, a known peer whose
 * lookups all arrive while strangers' batches are opened would leave the
 * budget off. Tries up to 20 times for a run whose timing held.
 */
static void udp_recv_urgent__known_peer_keeps_budget_on(void **state)
{
	bool metered = false;
	int tries = 0;

	(void)state;
	while (tries++ < 20 && !urgent_then_strangers(&metered))
		;
	if (tries > 20)
		skip();  /* the machine never gave the timing the test needs */
	assert_true(metered);
}

/**
 * poll_recv() - The runtime's wait without waiting: poll() the driver's
 * rx_poll list at once, hand the revents back, receive once.
 * Return: what recv() returned; *@rx its packets.
 */
static int poll_recv(struct homa_driver *b, struct homa_io_rx **rx)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll;

	assert_true(n > 0);
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	assert_true(poll(p, (nfds_t)n, 0) >= 0);
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = p[i].revents;
	b->rx_polled = true;
	n = b->ops->recv(b, rx);
	b->rx_polled = false;
	return n;
}

/** spin_until_us() - Busy-wait until CLOCK_MONOTONIC reaches @t µs. */
static void spin_until_us(int64_t t)
{
	while (now_us() < t)
		;
}

/**
 * flood_interval() - One try of udp_recv__flood_reads_once_per_interval():
 * interval A uses up a budget of 2 * BATCH beside a known peer, interval
 * B follows it at once with 3 strangers' packets left, then 5 more come.
 * *@first and *@second: what B's two receives read. Return: whether the
 * timing held (A's reads ended within 1 ms of its start, B began 1-9 ms
 * after A, and its second receive ended within 1 ms of its start); if
 * not, the try says nothing.
 */
static bool flood_interval(int *first, int *second)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 2 * BATCH);
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	int64_t a0, a1, b0, b2;
	uint64_t closed;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	b->ops->know(b, &k->local, k->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits k */
	send_n(k, b, 1, 'K');
	send_n(s, b, 2 * BATCH + 3, 'S');
	spin_until_us(now_us() + 1100);  /* the next receive starts interval A */
	a0 = now_us();
	assert_int_equal(poll_recv(b, &rx), 1);  /* the known peer first */
	a1 = now_us();
	assert_int_equal(rx[0].data[0], 'K');
	assert_int_equal(poll_recv(b, &rx), BATCH);
	assert_int_equal(poll_recv(b, &rx), BATCH);
	closed = b->c.rx_gate_closed;
	if (now_us() - a0 >= 1000) {
		b2 = b0 = a0;  /* descheduled: A may have ended during its reads */
		goto out;
	}
	assert_int_equal(closed, 1);  /* the budget ran out */
	spin_until_us(a1 + 1050);
	b0 = now_us();
	*first = poll_recv(b, &rx);  /* opens interval B */
	send_n(s, b, 5, 'S');
	*second = poll_recv(b, &rx);
	b2 = now_us();
out:
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
	return b2 - a0 < 9000 && b2 - b0 < 1000 && b0 > a0;
}

/**
 * udp_recv__flood_reads_once_per_interval() - Beside an active known
 * peer, an interval that follows one whose strangers used up their budget
 * is a flood interval: the wake-up that opens the gate reads what waits
 * (3 packets) at once, and as that read drained the queue the gate closes
 * for the rest of the interval: 5 strangers' packets arriving after it
 * wait (read: 0). Tries up to 20 times for a run whose timing held.
 */
static void udp_recv__flood_reads_once_per_interval(void **state)
{
	int first = -1, second = -1, tries = 0;

	(void)state;
	while (tries++ < 20 && !flood_interval(&first, &second))
		;
	if (tries > 20)
		skip();  /* the machine never gave the timing the test needs */
	if (first != 3 || second != 0)
		fail_msg("flood interval: %d then %d strangers' packets read (expected 3, then 0)",
			 first, second);
}

/** A thread sending 100-byte junk datagrams to a port until told to stop. */
struct junk {
	uint16_t port;
	_Atomic int stop;
	pthread_t thread;
};

/** junk_main() - Send junk to 127.0.0.1:@arg->port, 32 per call, until stopped. */
static void *junk_main(void *arg)
{
	struct junk *j = arg;
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(j->port),
				 .sin_addr.s_addr = htonl(0x7f000001u)};
	static uint8_t pkt[100];
	struct mmsghdr m[32];
	struct iovec iov = {pkt, sizeof(pkt)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(m, 0, sizeof(m));
	for (int i = 0; i < 32; i++) {
		m[i].msg_hdr.msg_name = &to;
		m[i].msg_hdr.msg_namelen = sizeof(to);
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while (fd >= 0 && !atomic_load(&j->stop)) {
		if (sendmmsg(fd, m, 32, MSG_DONTWAIT) < 32)
			usleep(100);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/** serve_main() - Answer the requests of test_server @arg until its socket closes. */
static void *serve_main(void *arg)
{
	struct test_server *ts = arg;

	test_serve_forever(ts->s, &ts->served, &ts->errors);
	return NULL;
}

/** rpc() - One @len-byte RPC from @c to @dst. Return: 0 or the error. */
static int rpc(homa_socket *c, const struct sockaddr_storage *dst, const void *req, size_t len)
{
	struct homa_message m;
	uint64_t id;
	int err = homa_request_buf(c, (const struct sockaddr *)dst, req, len, 0, &id);

	if (!err)
		err = homa_recv(c, HOMA_RECV_RESPONSE, id, 5000000000ll, &m);
	if (!err)
		homa_message_release(&m);
	return err;
}

/**
 * gate_closed_during_junk() - A server with stranger_budget
 * HOMA_STRANGER_BUDGET_MAX (the packet count never closes the gate) and
 * stranger_cpu_us @cpu_us answers a client (a known peer after its first
 * RPC) for 300 ms while a thread sends junk to the server's port.
 * Return: the server's homa_io_stats.rx_gate_closed.
 */
static uint64_t gate_closed_during_junk(int32_t cpu_us)
{
	struct homa_open_opts o;
	struct test_server ts = {0};
	struct homa_io_stats io;
	struct sockaddr_storage dst;
	struct junk j = {0};
	homa_socket *c;
	uint8_t req[100] = {0};
	int64_t end;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.server = 1;
	o.stranger_budget = HOMA_STRANGER_BUDGET_MAX;
	o.stranger_cpu_us = cpu_us;
	assert_int_equal(homa_open(&ts.s, &o), 0);
	ts.port = (int)homa_local_port(ts.s);
	ts.nthreads = 1;
	assert_int_equal(pthread_create(&ts.threads[0], NULL, serve_main, &ts), 0);
	assert_int_equal(test_open(&c, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, false, 0, NULL), 0);
	dst = test_dst(ts.port);
	assert_int_equal(rpc(c, &dst, req, sizeof(req)), 0);  /* now a known peer */
	j.port = (uint16_t)ts.port;
	assert_int_equal(pthread_create(&j.thread, NULL, junk_main, &j), 0);
	for (end = test_now_ms() + 300; test_now_ms() < end;)
		assert_int_equal(rpc(c, &dst, req, sizeof(req)), 0);
	atomic_store(&j.stop, 1);
	pthread_join(j.thread, NULL);
	assert_int_equal(homa_io_stats(ts.s, &io), 0);
	homa_close(c);
	test_server_stop(&ts);
	return io.rx_gate_closed;
}

/**
 * homa_rt_input__reports_strangers_cpu() - The runtime measures the CPU
 * time of each strangers' batch and reports it (rx_spent()): with a CPU
 * budget of 1 µs per ms the gate closes during a junk flood beside a
 * busy known peer, although the packet budget never runs out; with no
 * CPU limit (-1) it never closes.
 */
static void homa_rt_input__reports_strangers_cpu(void **state)
{
	uint64_t with = gate_closed_during_junk(1), without = gate_closed_during_junk(-1);

	(void)state;
	if (!with || without)
		fail_msg("gate closed %llu times with a CPU budget of 1 us/ms, %llu without",
			 (unsigned long long)with, (unsigned long long)without);
}

/**
 * open_field() - homa_open() on 127.0.0.1 of default options whose
 * int32_t field at byte @off is @v and whose version is @version (0:
 * the current one). Return: homa_open()'s result; the socket is closed.
 */
static int open_field(size_t off, int32_t v, uint32_t version)
{
	struct homa_open_opts o;
	homa_socket *c;
	int err;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	if (version)
		o.version = version;
	memcpy((char *)&o + off, &v, sizeof(v));
	err = homa_open(&c, &o);
	if (!err)
		homa_close(c);
	return err;
}

/**
 * check_range() - The int32_t option at byte @off opens with each of the
 * @nok values @ok, is HOMA_EINVAL with each of the @nbad values @bad, and
 * is not read in a struct of @before, the version before the field (-2
 * there opens with the default).
 */
static void check_range(size_t off, const int32_t *ok, size_t nok, const int32_t *bad,
			size_t nbad, uint32_t before)
{
	for (size_t i = 0; i < nok; i++)
		assert_int_equal(open_field(off, ok[i], 0), 0);
	for (size_t i = 0; i < nbad; i++)
		assert_int_equal(open_field(off, bad[i], 0), HOMA_EINVAL);
	assert_int_equal(open_field(off, -2, before), 0);
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

	(void)state;
	check_range(offsetof(struct homa_open_opts, stranger_budget), ok, 4, bad, 2, 6);
}

/**
 * homa_open__stranger_cpu_range() - homa_open_opts.stranger_cpu_us: -1
 * (no limit), 0 (default), 1 and HOMA_STRANGER_CPU_MAX open; -2 and one
 * past the maximum are HOMA_EINVAL; a version 7 struct (before the
 * field) opens with the default.
 */
static void homa_open__stranger_cpu_range(void **state)
{
	static const int32_t ok[] = {-1, 0, 1, HOMA_STRANGER_CPU_MAX};
	static const int32_t bad[] = {-2, HOMA_STRANGER_CPU_MAX + 1};

	(void)state;
	check_range(offsetof(struct homa_open_opts, stranger_cpu_us), ok, 4, bad, 2, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__strangers_within_budget),
		cmocka_unit_test(udp_recv__strangers_cpu_budget),
		cmocka_unit_test(udp_recv__flood_reads_once_per_interval),
		cmocka_unit_test(udp_recv_urgent__known_peer_keeps_budget_on),
		cmocka_unit_test(homa_rt_input__reports_strangers_cpu),
		cmocka_unit_test(homa_open__stranger_budget_range),
		cmocka_unit_test(homa_open__stranger_cpu_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
