/* SPDX-License-Identifier: MIT */
/**
 * @file test_icmp.c
 * Draining a UDP socket's error queue (src/io/icmp.c): real ICMP port
 * unreachable reports on loopback, caused by datagrams that quote a Homa
 * common header, are read in batches (one recvmmsg() per 16 reports, so
 * a flood of replies to closed ports costs few system calls), kept only
 * when they quote our port, and the queue is emptied even past @max.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "homa/wire.h"
#include "icmp.h"

/** Reports caused per case (loopback reports are not rate-limited). */
#define REPORTS 40

/** Calls that read the error queue, counted by the wrappers below. */
static int reads;

int __real_recvmsg(int fd, struct msghdr *h, int flags);
int __real_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t);

/** __wrap_recvmsg() - recvmsg(), counted. */
int __wrap_recvmsg(int fd, struct msghdr *h, int flags)
{
	reads++;
	return __real_recvmsg(fd, h, flags);
}

/** __wrap_recvmmsg() - recvmmsg(), counted. */
int __wrap_recvmmsg(int fd, struct mmsghdr *v, unsigned int n, int flags, struct timespec *t)
{
	reads++;
	return __real_recvmmsg(fd, v, n, flags, t);
}

/** lo() - 127.0.0.1:@port. */
static struct sockaddr_in lo(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/** bound() - A UDP socket on 127.0.0.1 (ephemeral port in *@port), IP_RECVERR on. */
static int bound(uint16_t *port)
{
	struct sockaddr_in a = lo(0);
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	assert_int_equal(homa_io_icmp_enable(fd, AF_INET), 0);
	return fd;
}

/**
 * closed_port() - A UDP port on 127.0.0.1 that nothing is bound to: one
 * below the kernel's ephemeral range (ip_local_port_range starts at 32768
 * by default), so that no socket of a test running beside this one, which
 * binds port 0, can take it and swallow the datagrams that should come
 * back as reports. Checked free by binding it once.
 */
static uint16_t closed_port(void)
{
	for (uint16_t port = (uint16_t)(20000 + getpid() % 5000);; port++) {
		struct sockaddr_in a = lo(port);
		int fd = socket(AF_INET, SOCK_DGRAM, 0), ok;

		assert_true(fd >= 0);
		ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (ok)
			return port;
		assert_true(port < 30000);
	}
}

/**
 * marker() - Send one datagram from a fresh socket to another one of ours
 * on loopback and wait (up to 5 s) until it arrives.
 */
static void marker(void)
{
	struct timeval tv = {.tv_sec = 5};
	uint16_t port;
	int rx = bound(&port), tx = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in dst = lo(port);
	char b = 0;

	assert_true(tx >= 0);
	assert_int_equal(setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(sendto(tx, &b, 1, 0, (struct sockaddr *)&dst, sizeof(dst)), 1);
	assert_int_equal(recv(rx, &b, 1, 0), 1);
	close(tx);
	close(rx);
}

/**
 * provoke() - Send @count datagrams from @fd to 127.0.0.1:@to, each
 * starting with a Homa common header whose source port is @sport: each
 * comes back as a port unreachable report in @fd's error queue, and all
 * are there when this returns.
 *
 * The kernel may handle loopback datagrams after the send returns (in
 * ksoftirqd when the machine is busy). It queues each on the sending
 * CPU's backlog in order, and the report each causes joins that same
 * backlog behind it. So, sending from one CPU throughout: once a marker
 * sent after the datagrams has arrived, every report is queued; once a
 * second marker sent after that has arrived, every report is delivered.
 */
static void provoke(int fd, uint16_t to, uint16_t sport, int count)
{
	struct sockaddr_in dst = lo(to);
	uint8_t pkt[HOMA_COMMON_LEN + 8] = {0};
	cpu_set_t was, one;

	assert_int_equal(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	pkt[0] = (uint8_t)(sport >> 8);
	pkt[1] = (uint8_t)sport;
	for (int i = 0; i < count; i++) {
		ssize_t n;

		pkt[HOMA_COMMON_LEN] = (uint8_t)i;
		/* the last report's socket error fails one send: send again */
		do
			n = sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&dst, sizeof(dst));
		while (n < 0 && errno == ECONNREFUSED);
		assert_int_equal(n, (ssize_t)sizeof(pkt));
	}
	marker();
	marker();
	assert_int_equal(sched_setaffinity(0, sizeof(was), &was), 0);
}

/** drain__batched() - 40 reports: all kept, in at most 3 reads of the queue. */
static void drain__batched(void **state)
{
	struct homa_io_unreach out[64];
	uint16_t port, to = closed_port();
	int fd = bound(&port);

	(void)state;
	provoke(fd, to, port, REPORTS);
	reads = 0;
	assert_int_equal(homa_io_icmp_drain(fd, port, out, 64), REPORTS);
	assert_true(reads <= REPORTS / 16 + 1);
	for (int i = 0; i < REPORTS; i++) {
		assert_int_equal(out[i].kind, HOMA_UNREACH_PORT);
		assert_int_equal(out[i].len, HOMA_COMMON_LEN + 8);
		assert_int_equal(out[i].quoted[HOMA_COMMON_LEN], i);
	}
	reads = 0;
	assert_int_equal(homa_io_icmp_drain(fd, port, out, 64), 0);
	assert_int_equal(reads, 1);
	close(fd);
}

/** drain__past_max_and_strangers() - Keeps @max of ours, drops others, empties the queue. */
static void drain__past_max_and_strangers(void **state)
{
	struct homa_io_unreach out[5];
	uint16_t port, to = closed_port();
	int fd = bound(&port);

	(void)state;
	provoke(fd, to, (uint16_t)(port + 1), 10);  /* not from our port */
	provoke(fd, to, port, 20);
	assert_int_equal(homa_io_icmp_drain(fd, port, out, 5), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(out[i].quoted[HOMA_COMMON_LEN], i);
	assert_int_equal(homa_io_icmp_drain(fd, port, out, 5), 0);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(drain__batched),
		cmocka_unit_test(drain__past_max_and_strangers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
