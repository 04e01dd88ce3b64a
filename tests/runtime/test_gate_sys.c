/* SPDX-License-Identifier: MIT */
/**
 * @file test_gate_sys.c
 * System calls the UDP driver (src/io/udp.c, batch.c) makes for strangers:
 * the strangers' gate (gate.h) closing and opening costs no epoll_ctl()
 * while nobody but the polled list's waiter waits on the driver's epoll
 * set, and keeps that set exact once someone does (homa_fd() users); an
 * ICMP report about a reply to a stranger costs one read of the error
 * queue of the socket it was filed on, read before that socket's packets,
 * which a pending report no longer holds back, and no error queue is read
 * after the receives (the next wait reports the socket); a closed gate
 * wakes the polled list's waiter by the driver's rx_wake_ns, without a
 * timerfd_settime(), and arms its timer only for a waiter on the epoll
 * set. Without the polled list, a report filed while the gate is closed
 * is read at the first wake-up it causes. The binary links with
 * -Wl,--wrap=epoll_ctl,--wrap=recvmmsg,--wrap=timerfd_settime to count
 * those calls, and with --wrap=clock_gettime to hold the gate's clock
 * still.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <time.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "drv_cfg.h"
#include "gate.h"
#include "helpers.h"
#include "homa/wire.h"

/** Packets per receive. */
#define BATCH 16
/** Strangers' packets per millisecond in the test. */
#define BUDGET 8
/** Strangers' packets queued at the start. */
#define STRANGERS 1000
/** Milliseconds the known peer keeps sending at least. */
#define ACTIVE_MS 10

/** epoll_ctl(EPOLL_CTL_MOD) calls, counted by __wrap_epoll_ctl(). */
static int mods;
/** recvmmsg() calls on an error queue (MSG_ERRQUEUE). */
static int errq_reads;
/** recvmmsg() calls refused with ECONNREFUSED (a pending ICMP report). */
static int refused;
/** timerfd_settime() calls, counted by __wrap_timerfd_settime(). */
static int timer_sets;

/** CLOCK_MONOTONIC as __wrap_clock_gettime() reports it while non-zero (ns). */
static atomic_ullong frozen_ns;

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __real_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev);

/** __wrap_clock_gettime() - clock_gettime(); CLOCK_MONOTONIC held at frozen_ns if set. */
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	unsigned long long f = atomic_load(&frozen_ns);

	if (!f || clk != CLOCK_MONOTONIC)
		return __real_clock_gettime(clk, ts);
	ts->tv_sec = (time_t)(f / 1000000000ull);
	ts->tv_nsec = (long)(f % 1000000000ull);
	return 0;
}

/** freeze() - Hold CLOCK_MONOTONIC (for the driver: gate, known peers) at its value now. */
static void freeze(void)
{
	struct timespec ts;

	__real_clock_gettime(CLOCK_MONOTONIC, &ts);
	atomic_store(&frozen_ns, (unsigned long long)ts.tv_sec * 1000000000ull +
		     (unsigned long long)ts.tv_nsec);
}

int __real_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t);

/** __wrap_epoll_ctl() - epoll_ctl(), EPOLL_CTL_MOD calls counted. */
int __wrap_epoll_ctl(int ep, int op, int fd, struct epoll_event *ev)
{
	if (op == EPOLL_CTL_MOD)
		mods++;
	return __real_epoll_ctl(ep, op, fd, ev);
}

int __real_timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old);

/** __wrap_timerfd_settime() - timerfd_settime(), calls counted. */
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *v, struct itimerspec *old)
{
	timer_sets++;
	return __real_timerfd_settime(fd, flags, v, old);
}

/** __wrap_recvmmsg() - recvmmsg(), error-queue reads and refusals counted. */
int __wrap_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t)
{
	int r = __real_recvmmsg(fd, v, n, flags, t);

	if (flags & MSG_ERRQUEUE)
		errq_reads++;
	else if (r < 0 && errno == ECONNREFUSED)
		refused++;
	return r;
}

/** cfg_of() - A driver config on 127.0.0.1: @fast queue (0: one queue), @known peers, @budget. */
static struct homa_driver_config cfg_of(uint8_t fast, uint32_t known, uint32_t budget)
{
	struct homa_driver_config c = test_drv_cfg("127.0.0.1", BATCH, false, fast, known);

	c.stranger_budget = budget;
	return c;
}

/**
 * open_trio() - Open a stranger @s and a known peer @k (plain drivers)
 * and the receiver @b (fast queue, 4 known peers, BUDGET) on 127.0.0.1;
 * @b knows @k and its first recv() (nothing yet) admits it. The caller
 * closes all three.
 */
static void open_trio(struct homa_driver **s, struct homa_driver **k, struct homa_driver **b)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0), cb = cfg_of(5, 4, BUDGET);
	struct homa_io_rx *rx;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, b), 0);
	(*b)->ops->know(*b, &(*k)->local, (*k)->port);
	assert_int_equal((*b)->ops->recv(*b, &rx), 0);  /* admits k */
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

/**
 * wait_list() - The runtime's wait: ppoll() the driver's rx_poll list for
 * up to @ms ms and hand the revents back (rx_polled). Return: poll()'s.
 */
static int wait_list(struct homa_driver *b, int ms)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll, r;

	assert_true(n > 0);
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	r = poll(p, (nfds_t)n, ms);
	for (int i = 0; i < n && r > 0; i++)
		b->rx_poll[i].revents = p[i].revents;
	b->rx_polled = r > 0;
	return r;
}

/**
 * rx_wake() - One wake-up of the runtime's waiter (up to @ms ms):
 * wait_list(), then receive while batches come back full.
 */
static void rx_wake(struct homa_driver *b, int ms)
{
	struct homa_io_rx *rx;
	int n;

	if (wait_list(b, ms) <= 0)
		return;
	do {
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
	} while (n >= BATCH);
	b->rx_polled = false;
}

/**
 * port_queues_ready() - Whether the driver's epoll set reports one of the
 * port's queues (epoll data 0 or 1) readable now.
 */
static bool port_queues_ready(struct homa_driver *b)
{
	struct epoll_event ev[HOMA_DRIVER_POLL_MAX + 2];
	int n = epoll_wait(b->fd, ev, HOMA_DRIVER_POLL_MAX + 2, 0);

	for (int i = 0; i < n; i++)
		if (ev[i].data.u32 < 2)
			return true;
	return false;
}

/**
 * udp_recv__gate_cycles_without_epoll_ctl() - Two queues, a known peer
 * sending one packet per wake-up and STRANGERS waiting: the gate closes
 * and opens again and again, and while only the polled list's waiter
 * waits no epoll_ctl() is made. Once the epoll set is watched
 * (fd_watched), it does not report the port's queues while the gate is
 * closed, and does once it is open again (the known peer silent),
 * strangers' packets waiting in both cases.
 */
static void udp_recv__gate_cycles_without_epoll_ctl(void **state)
{
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	int closed_seen = 0;
	int64_t t0;

	(void)state;
	open_trio(&s, &k, &b);
	assert_int_equal(b->c.rx_known_peers, 1);
	send_n(s, b, STRANGERS, 'S');
	usleep(20000);
	mods = 0;
	/* at least ACTIVE_MS, and until two closings: a thread descheduled for
	 * most of ACTIVE_MS saw only one (2 s at most) */
	for (t0 = test_now_ms(); test_now_ms() - t0 < 2000 &&
	     (test_now_ms() - t0 < ACTIVE_MS || b->c.rx_gate_closed < 2);) {
		send_n(k, b, 1, 'K');
		rx_wake(b, 2);
	}
	if (b->c.rx_gate_closed < 2 || mods)
		fail_msg("%d epoll_ctl(MOD) calls for %llu closings of the gate (expected none)",
			 mods, (unsigned long long)b->c.rx_gate_closed);
	atomic_store(&b->fd_watched, true);
	for (t0 = test_now_ms(); test_now_ms() - t0 < 2000 && !closed_seen;) {
		send_n(s, b, 2 * BATCH, 'S');  /* strangers' packets always wait */
		send_n(k, b, 1, 'K');
		rx_wake(b, 2);
		assert_true(b->ops->recv(b, &rx) >= 0);  /* brings the set in line */
		if (b->rx_poll[0].fd < 0) {  /* the gate is closed until the next recv() */
			closed_seen++;
			assert_false(port_queues_ready(b));
		}
	}
	assert_true(closed_seen > 0);
	usleep(20000);  /* the known peer is no longer active: the gate opens for good */
	send_n(s, b, 4 * BATCH, 'S');
	usleep(20000);
	assert_int_equal(b->ops->recv(b, &rx), BATCH);
	assert_true(b->rx_poll[0].fd >= 0);
	assert_true(port_queues_ready(b));
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
}

/** mono_ns() - CLOCK_MONOTONIC in ns (the driver's clock). */
static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/**
 * wait_wake() - The runtime's wait on the list while the driver asks to
 * be called at rx_wake_ns: ppoll() the list until then. Return: ppoll()'s
 * (0: the time came and nothing was readable; revents are then 0 and
 * rx_polled is set, as the runtime hands them to recv()).
 */
static int wait_wake(struct homa_driver *b)
{
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	uint64_t now = mono_ns(), by = b->rx_wake_ns;
	struct timespec ts = {0, 0};
	int n = b->n_rx_poll, r;

	if (by > now)
		ts = (struct timespec){(time_t)((by - now) / 1000000000u),
				       (long)((by - now) % 1000000000u)};
	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	r = ppoll(p, (nfds_t)n, &ts, NULL);
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = r > 0 ? p[i].revents : 0;
	b->rx_polled = true;
	return r;
}

/** gate_fired() - Whether the driver's epoll set reports the gate's timer within @ms ms. */
static bool gate_fired(struct homa_driver *b, int ms)
{
	struct epoll_event ev[HOMA_DRIVER_POLL_MAX + 2];
	int64_t t0 = test_now_ms();

	do {
		int n = epoll_wait(b->fd, ev, HOMA_DRIVER_POLL_MAX + 2, 1);

		for (int i = 0; i < n; i++)
			if (ev[i].data.u32 == HOMA_GATE_TAG)
				return true;
	} while (test_now_ms() - t0 < ms);
	return false;
}

/**
 * udp_recv__closed_gate_wakes_list_waiter_without_timer() - Two queues,
 * a known peer and STRANGERS waiting: the first wake-up closes the gate
 * and sets rx_wake_ns to the interval's end (at most 1 ms ahead), with
 * no timerfd_settime(); a wait on the list until then sees nothing
 * readable (the gate's timer is not armed), and the recv() after it
 * opens the gate and reads strangers' packets; no timerfd_settime() in
 * all. Once the epoll set is watched (fd_watched), a closing arms the
 * gate's timer, which wakes a waiter on the set.
 */
static void udp_recv__closed_gate_wakes_list_waiter_without_timer(void **state)
{
	struct homa_driver *s, *k, *b;
	struct homa_io_rx *rx;
	uint64_t now;
	int64_t t0;

	(void)state;
	open_trio(&s, &k, &b);
	send_n(s, b, STRANGERS, 'S');
	send_n(k, b, 1, 'K');
	usleep(20000);
	timer_sets = 0;
	rx_wake(b, 1000);  /* the known peer's packet */
	for (int i = 0; i < 4 && b->rx_poll[0].fd >= 0; i++)
		assert_true(b->ops->recv(b, &rx) > 0);  /* strangers' until the gate closes */
	assert_true(b->c.rx_gate_closed >= 1);
	assert_true(b->rx_poll[0].fd < 0 && b->rx_poll[1].fd < 0);  /* closed */
	now = mono_ns();
	if (!b->rx_wake_ns || b->rx_wake_ns > now + 1000000u)
		fail_msg("rx_wake_ns %llu for a gate closed at most 1 ms before %llu",
			 (unsigned long long)b->rx_wake_ns, (unsigned long long)now);
	assert_int_equal(wait_wake(b), 0);  /* no timer fired */
	assert_true(mono_ns() >= b->rx_wake_ns);
	assert_true(b->ops->recv(b, &rx) > 0);  /* the gate opened: strangers read */
	assert_true(b->rx_poll[0].fd >= 0 || b->c.rx_gate_closed >= 2);
	if (timer_sets)
		fail_msg("%d timerfd_settime() calls for %llu closings (expected none)",
			 timer_sets, (unsigned long long)b->c.rx_gate_closed);
	atomic_store(&b->fd_watched, true);
	for (t0 = test_now_ms(); test_now_ms() - t0 < 2000 && !timer_sets;) {
		send_n(k, b, 1, 'K');
		rx_wake(b, 2);
	}
	assert_true(timer_sets > 0);
	if (b->rx_poll[0].fd < 0)  /* still closed: the armed timer wakes the set's waiter */
		assert_true(gate_fired(b, 50));
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
}

/**
 * provoke() - Send a datagram from driver @b to a closed port of
 * 127.0.0.1 that starts with a Homa common header from @b's port: its
 * port unreachable report lands in the error queue of one of @b's
 * sockets, whose socket error it sets.
 */
static void provoke(struct homa_driver *b)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0);
	uint8_t pkt[HOMA_COMMON_LEN + 8] = {0};
	struct homa_driver *gone;
	struct homa_io_tx tx = {.data = pkt, .len = sizeof(pkt), .dst = homa_addr_ipv4(0x7f000001u)};

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &gone), 0);
	tx.dport = gone->port;
	homa_driver_close(gone);
	pkt[0] = (uint8_t)(b->port >> 8);
	pkt[1] = (uint8_t)b->port;
	assert_int_equal(b->ops->send(b, &tx, 1), 1);
	usleep(20000);
}

/**
 * homa_io_receiver_recv__reads_past_a_report() - One queue, no polled
 * list: a report is pending on the socket and 3 strangers' packets wait
 * behind it; one recv() returns the 3 packets (the refused call took the
 * report's socket error, not the packets), and unreach() the report.
 */
static void homa_io_receiver_recv__reads_past_a_report(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0);
	struct homa_driver *s, *b;
	struct homa_io_unreach u[8];
	struct homa_io_rx *rx;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &b), 0);
	provoke(b);
	send_n(s, b, 3, 'S');
	usleep(20000);
	refused = 0;
	assert_int_equal(b->ops->recv(b, &rx), 3);
	assert_int_equal(refused, 1);
	assert_int_equal(b->ops->unreach(b, u, 8), 1);
	assert_int_equal(u[0].kind, HOMA_UNREACH_PORT);
	homa_driver_close(s);
	homa_driver_close(b);
}

/**
 * udp_recv__reads_reported_error_queue_first() - Two queues with the
 * polled list: a report pending on one of the port's sockets, 3
 * strangers' packets waiting in the other queue or the same one. After
 * one wait, recv() returns the 3 packets with no receive refused (the
 * error queue the wait reported in error was read first), unreach()
 * returns the report, and the error queues were read once in all: only
 * the reported socket's. The next wait reports nothing.
 */
static void udp_recv__reads_reported_error_queue_first(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0), cb = cfg_of(5, 0, 0);
	struct homa_driver *s, *b;
	struct homa_io_unreach u[8];
	struct homa_io_rx *rx;
	int err_entries = 0;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_int_equal(b->c.rx_queues, 2);
	provoke(b);
	send_n(s, b, 3, 'S');
	usleep(20000);
	assert_true(wait_list(b, 1000) > 0);
	for (int i = 0; i < b->n_rx_poll; i++)
		err_entries += (b->rx_poll[i].revents & POLLERR) != 0;
	assert_int_equal(err_entries, 1);
	refused = errq_reads = 0;
	assert_int_equal(b->ops->recv(b, &rx), 3);
	b->rx_polled = false;
	assert_int_equal(b->ops->unreach(b, u, 8), 1);
	assert_int_equal(u[0].kind, HOMA_UNREACH_PORT);
	if (refused || errq_reads != 1)
		fail_msg("%d receives refused, %d error-queue reads for one report (expected 0, 1)",
			 refused, errq_reads);
	assert_int_equal(wait_list(b, 0), 0);
	homa_driver_close(s);
	homa_driver_close(b);
}

/** recv_all() - recv() until it returns 0. Return: packets received. */
static int recv_all(struct homa_driver *b)
{
	struct homa_io_rx *rx;
	int n, got = 0;

	while ((n = b->ops->recv(b, &rx)) > 0)
		got += n;
	assert_int_equal(n, 0);
	return got;
}

/**
 * udp_unreach__report_after_wait_read_at_next_wait() - Two queues with
 * the polled list, 3 packets waiting in each: a report that arrives
 * after the wait refuses one receive (read again at once: all 6 packets
 * arrive), and unreach() reads no error queue for it; the next wait
 * reports that socket in error, and the report is read then, in one
 * read of one error queue.
 */
static void udp_unreach__report_after_wait_read_at_next_wait(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0), cb = cfg_of(5, 0, 0);
	struct homa_driver *s, *b;
	struct homa_io_unreach u[8];

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	send_prio(s, b, 3, 'S', 0);
	send_prio(s, b, 3, 'S', 6);
	usleep(20000);
	assert_true(wait_list(b, 1000) > 0);
	provoke(b);
	refused = errq_reads = 0;
	assert_int_equal(recv_all(b), 6);
	b->rx_polled = false;
	assert_int_equal(refused, 1);
	assert_int_equal(b->ops->unreach(b, u, 8), 0);
	assert_int_equal(errq_reads, 0);
	assert_int_equal(wait_list(b, 1000), 1);
	assert_int_equal(recv_all(b), 0);
	b->rx_polled = false;
	assert_int_equal(b->ops->unreach(b, u, 8), 1);
	assert_int_equal(u[0].kind, HOMA_UNREACH_PORT);
	assert_int_equal(errq_reads, 1);
	assert_int_equal(wait_list(b, 0), 0);
	homa_driver_close(s);
	homa_driver_close(b);
}

/** Known peers in udp_unreach__closed_gate_report_without_list(): too many for the list. */
#define MANY_KNOWN 14

/**
 * udp_unreach__closed_gate_report_without_list() - Two queues and
 * MANY_KNOWN known peers (no polled list: the waiter waits on the epoll
 * set); a known peer's packet and strangers' close the gate (the clock
 * held still: it stays closed), then a report arrives on one of the
 * port's queues, which the set reports in error although the gate has
 * it ask for nothing. The waiter's first wake-up (recv() and unreach(),
 * as the runtime's input) reads the report, and the set stops reporting
 * the queue. It used to report it at every wake-up until the gate
 * opened: nothing read the error queue, and the waiter spun for up to
 * a millisecond.
 */
static void udp_unreach__closed_gate_report_without_list(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0, 0), cb = cfg_of(5, 16, BUDGET);
	struct homa_driver *s, *k[MANY_KNOWN], *b;
	struct homa_io_unreach u[8];
	struct homa_io_rx *rx;
	int wakes = 0, reports = 0;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	for (int i = 0; i < MANY_KNOWN; i++) {
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k[i]), 0);
		b->ops->know(b, &k[i]->local, k[i]->port);
	}
	for (int i = 0; i < 20 && b->c.rx_known_peers < MANY_KNOWN; i++)
		assert_int_equal(b->ops->recv(b, &rx), 0);  /* admits them */
	assert_int_equal(b->c.rx_known_peers, MANY_KNOWN);
	assert_int_equal(b->n_rx_poll, 0);
	send_n(s, b, STRANGERS, 'S');
	send_n(k[0], b, 1, 'K');
	usleep(20000);
	freeze();
	for (int i = 0; i < 20 && !b->c.rx_gate_closed; i++)
		assert_true(b->ops->recv(b, &rx) > 0);
	assert_int_equal(b->c.rx_gate_closed, 1);
	assert_false(port_queues_ready(b));  /* strangers wait, unreported */
	provoke(b);
	while (port_queues_ready(b) && wakes < 100) {
		wakes++;
		assert_int_equal(b->ops->recv(b, &rx), 0);
		reports += b->ops->unreach(b, u, 8);
	}
	atomic_store(&frozen_ns, 0);
	if (wakes != 1 || reports != 1)
		fail_msg("%d wake-ups with the gate closed, %d reports read (expected 1, 1)",
			 wakes, reports);
	assert_int_equal(u[0].kind, HOMA_UNREACH_PORT);
	homa_driver_close(s);
	for (int i = 0; i < MANY_KNOWN; i++)
		homa_driver_close(k[i]);
	homa_driver_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__gate_cycles_without_epoll_ctl),
		cmocka_unit_test(udp_recv__closed_gate_wakes_list_waiter_without_timer),
		cmocka_unit_test(homa_io_receiver_recv__reads_past_a_report),
		cmocka_unit_test(udp_recv__reads_reported_error_queue_first),
		cmocka_unit_test(udp_unreach__closed_gate_report_without_list),
		cmocka_unit_test(udp_unreach__report_after_wait_read_at_next_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
