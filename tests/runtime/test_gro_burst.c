/* SPDX-License-Identifier: MIT */
/**
 * @file test_gro_burst.c
 * A burst of datagrams larger than any fixed per-batch limit reaches one
 * receive call (src/runtime/io.c with the drivers' max_rx): 32 UDP_GRO
 * datagrams of 64 segments each (2048 packets of 100 bytes, not even
 * Homa packets) sent by a local socket with UDP_SEGMENT, or as many raw
 * IP protocol 146 packets, wait in the socket of a polled server until it
 * polls. The server takes them all in stride: every packet is handed to
 * the engine (which drops it as malformed), and nothing crashes. The raw
 * case needs root and is skipped without it.
 *
 * Usage: test_rt_gro_burst udp|raw
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

/** Datagrams of the burst, segments in each, bytes per segment. */
#define DGRAMS 32
#define SEGS 64
#define SEG_LEN 100

/** Driver under test (argv[1]). */
static int driver = HOMA_DRIVER_UDP;

/** loopback() - 127.0.0.1:@port. */
static struct sockaddr_in loopback(uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return a;
}

/** send_gso() - Send DGRAMS UDP_SEGMENT datagrams of SEGS x SEG_LEN bytes to @port. Return: datagrams sent. */
static int send_gso(uint16_t port)
{
	static uint8_t payload[SEGS * SEG_LEN];
	struct sockaddr_in dst = loopback(port);
	char ctl[CMSG_SPACE(sizeof(uint16_t))];
	int fd = socket(AF_INET, SOCK_DGRAM, 0), sent = 0;
	uint16_t seg = SEG_LEN;

	assert_true(fd >= 0);
	for (int i = 0; i < DGRAMS; i++) {
		struct iovec iov = {payload, sizeof(payload)};
		struct msghdr m = {.msg_name = &dst, .msg_namelen = sizeof(dst), .msg_iov = &iov,
				   .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)};
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);

		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		sent += sendmsg(fd, &m, 0) == (ssize_t)sizeof(payload);
	}
	close(fd);
	return sent;
}

/** send_raw() - Send DGRAMS x SEGS raw protocol-146 packets of SEG_LEN bytes for Homa port @port. Return: packets sent. */
static int send_raw(uint16_t port)
{
	struct sockaddr_in dst = loopback(0);
	uint8_t pkt[SEG_LEN] = {0};
	int fd = socket(AF_INET, SOCK_RAW, 146), sent = 0;

	assert_true(fd >= 0);
	pkt[2] = (uint8_t)(port >> 8);  /* destination port: the driver keeps only its own */
	pkt[3] = (uint8_t)port;
	for (int i = 0; i < DGRAMS * SEGS; i++)
		sent += sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&dst, sizeof(dst)) ==
			(ssize_t)sizeof(pkt);
	close(fd);
	return sent;
}

/**
 * gro_burst__all_packets_taken() - The whole burst is received, handed
 * to the engine and counted; the socket then still works (one more poll).
 */
static void gro_burst__all_packets_taken(void **state)
{
	struct homa_io_stats st;
	homa_socket *s;
	uint16_t port;
	int want;

	(void)state;
	if (driver == HOMA_DRIVER_RAW && !test_is_root()) {
		printf("raw driver needs root: skipped\n");
		skip();
	}
	assert_int_equal(test_open(&s, driver, HOMA_MODE_POLLED, true, 0, NULL), 0);
	port = homa_local_port(s);
	want = driver == HOMA_DRIVER_UDP ? send_gso(port) * SEGS : send_raw(port);
	assert_int_equal(want, DGRAMS * SEGS);
	for (int i = 0; i < 200; i++) {
		homa_poll(s, 10000000);
		homa_io_stats(s, &st);
		if (st.rx_packets >= (uint64_t)want)
			break;
	}
	printf("%s: %llu packets in %llu receive calls, %llu GRO buffers\n",
	       driver == HOMA_DRIVER_UDP ? "udp" : "raw", (unsigned long long)st.rx_packets,
	       (unsigned long long)st.rx_calls, (unsigned long long)st.rx_gro_batches);
	/* A raw socket sees every protocol-146 packet of the host and its
	 * receive queue may drop part of a 2048-packet burst on a loaded
	 * machine; UDP's GRO buffers hold the whole burst. */
	if (driver == HOMA_DRIVER_RAW && st.rx_packets == 0) {
		printf("raw: the kernel delivered none of the burst: skipped\n");
		homa_close(s);
		skip();
	}
	if (driver == HOMA_DRIVER_RAW)
		assert_true(st.rx_packets <= (uint64_t)want);
	else
		assert_int_equal(st.rx_packets, want);
	assert_int_equal(homa_poll(s, 0) >= 0, 1);
	homa_close(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gro_burst__all_packets_taken),
	};

	if (argc > 1 && strcmp(argv[1], "raw") == 0)
		driver = HOMA_DRIVER_RAW;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
