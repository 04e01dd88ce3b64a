/* SPDX-License-Identifier: MIT */
/**
 * @file test_batch.c
 * Tests of the batch receiver (src/io/batch.c): a receive sets afresh only
 * the headers the kernel can have changed, and that bookkeeping holds for
 * receivers that share their headers (the UDP driver's port queues and
 * known peers copy one receiver) and for buffers taken from a lend pool's
 * table that other reads replace.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "batch.h"

/** Datagrams a test receiver takes per call. */
#define BATCH 4

/** bound() - A UDP socket of @family bound to its loopback address; its port in *@port. */
static int bound(int family, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	else
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&ss, len), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
	*port = ntohs(family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					 : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/** send_to() - Send @n one-byte datagrams, 'a', 'b', ..., from @fd to loopback port @port. */
static void send_to(int fd, int family, uint16_t port, int n)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				  .sin6_addr = in6addr_loopback};
	struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	for (int i = 0; i < n; i++) {
		char c = (char)('a' + i);
		ssize_t r = family == AF_INET6
				    ? sendto(fd, &c, 1, 0, (struct sockaddr *)&a6, sizeof(a6))
				    : sendto(fd, &c, 1, 0, (struct sockaddr *)&a4, sizeof(a4));

		assert_int_equal(r, 1);
	}
}

/**
 * homa_io_receiver_recv__copy_sees_whole_headers() - Receiver b is a copy
 * of a (their headers shared) on an IPv6 socket. b reads an empty queue,
 * then a reads three IPv4 datagrams (the kernel shortens those entries'
 * name lengths to an IPv4 address's), then b reads three IPv6 datagrams:
 * each must come with its whole IPv6 source address, so b set afresh the
 * entries a's receive changed, not only those its own had.
 */
static void homa_io_receiver_recv__copy_sees_whole_headers(void **state)
{
	struct homa_io_receiver a, b;
	uint16_t p4, p6, ps4, ps6;
	int fd4 = bound(AF_INET, &p4), fd6 = bound(AF_INET6, &p6);
	int s4 = bound(AF_INET, &ps4), s6 = bound(AF_INET6, &ps6);

	(void)state;
	assert_int_equal(homa_io_receiver_init(&a, fd4, BATCH, 256), 0);
	b = a;
	b.fd = fd6;
	assert_int_equal(homa_io_receiver_recv(&b), 0);
	send_to(s4, AF_INET, p4, 3);
	assert_int_equal(homa_io_receiver_recv(&a), 3);
	assert_int_equal(a.msgs[2].msg_hdr.msg_namelen, sizeof(struct sockaddr_in));
	send_to(s6, AF_INET6, p6, 3);
	assert_int_equal(homa_io_receiver_recv(&b), 3);
	for (int i = 0; i < 3; i++) {
		const struct sockaddr_in6 *src = (const struct sockaddr_in6 *)&b.names[i];

		assert_int_equal(b.msgs[i].msg_hdr.msg_namelen, sizeof(*src));
		assert_int_equal(src->sin6_family, AF_INET6);
		assert_int_equal(ntohs(src->sin6_port), ps6);
		assert_memory_equal(&src->sin6_addr, &in6addr_loopback, sizeof(src->sin6_addr));
		assert_int_equal(b.msgs[i].msg_len, 1);
		assert_int_equal(*(char *)b.iovs[i].iov_base, 'a' + i);
	}
	homa_io_receiver_free(&a);
	close(fd4);
	close(fd6);
	close(s4);
	close(s6);
}

/**
 * homa_io_receiver_recv__slots_looked_up_every_time() - A receiver reading
 * into a table of slots reads one datagram (only its first two headers are
 * then stale); meanwhile the last slot's buffer is replaced (as a lend
 * pool does when another read lent it): the next batch's last datagram
 * must land in the new buffer, not the old one.
 */
static void homa_io_receiver_recv__slots_looked_up_every_time(void **state)
{
	static uint8_t bufs[BATCH + 1][256];
	uint8_t *slots[BATCH] = {bufs[0], bufs[1], bufs[2], bufs[3]};
	struct homa_io_receiver r;
	uint16_t port, sport;
	int fd = bound(AF_INET, &port), s = bound(AF_INET, &sport);

	(void)state;
	memset(bufs, 0, sizeof(bufs));
	assert_int_equal(homa_io_receiver_init(&r, fd, BATCH, sizeof(bufs[0])), 0);
	homa_io_receiver_use_slots(&r, slots);
	send_to(s, AF_INET, port, 1);
	assert_int_equal(homa_io_receiver_recv(&r), 1);
	assert_int_equal(bufs[0][0], 'a');
	slots[3] = bufs[4];
	send_to(s, AF_INET, port, 4);
	assert_int_equal(homa_io_receiver_recv(&r), 4);
	assert_int_equal(bufs[4][0], 'd');
	assert_int_equal(bufs[3][0], 0);
	homa_io_receiver_free(&r);
	close(fd);
	close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_io_receiver_recv__copy_sees_whole_headers),
		cmocka_unit_test(homa_io_receiver_recv__slots_looked_up_every_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
