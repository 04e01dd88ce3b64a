/* SPDX-License-Identifier: MIT */
/**
 * @file test_driver.c
 * Tests of the packet drivers (src/io) on loopback: raw bytes between two
 * driver instances, UDP_SEGMENT/UDP_GRO batching and the plain path, DSCP
 * marks on send and priorities read back on receive, port reservation and
 * the raw driver's port filter.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
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
#include "helpers.h"

/** cfg_loopback() - A config bound to 127.0.0.1:@port. */
static struct homa_driver_config cfg_loopback(uint16_t port, bool offload)
{
	struct homa_driver_config c;
	struct sockaddr_in *in = (struct sockaddr_in *)&c.bind;

	memset(&c, 0, sizeof(c));
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c.bind_len = sizeof(*in);
	c.batch = 16;
	c.max_packet = 1500;
	c.offload = offload;
	return c;
}

/** fake_packet() - Fill @buf with a header naming @dport and a pattern. */
static void fake_packet(uint8_t *buf, size_t len, uint16_t sport, uint16_t dport,
			unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed * 31 + i * 7);
	buf[0] = (uint8_t)(sport >> 8);
	buf[1] = (uint8_t)sport;
	buf[2] = (uint8_t)(dport >> 8);
	buf[3] = (uint8_t)dport;
}

/**
 * recv_all() - Receive from @d until @want packets arrived or 5 s passed;
 * copy each into @store (1500-byte slots) and its length into @lens.
 */
static int recv_all(struct homa_driver *d, int want, uint8_t (*store)[1500],
		    size_t *lens)
{
	int got = 0;

	for (int64_t end = test_now_ms() + 5000; got < want && test_now_ms() < end;) {
		struct pollfd p = {.fd = d->fd, .events = POLLIN};
		struct homa_io_rx *rx;
		int n;

		poll(&p, 1, 10);
		n = d->ops->recv(d, &rx);
		assert_true(n >= 0);
		for (int i = 0; i < n && got < want; i++, got++) {
			assert_true(rx[i].len <= 1500);
			memcpy(store[got], rx[i].data, rx[i].len);
			lens[got] = rx[i].len;
			assert_true(homa_addr_equal(&rx[i].src, &(homa_addr){0}) == false);
		}
	}
	return got;
}

/**
 * exchange_split() - Send @n packets of @len bytes (the last @last bytes)
 * from @a to @b, each given as its first @split bytes in data and the rest
 * in ext (0: all in data), and check each arrives bit-exact and in order.
 */
static void exchange_split(struct homa_driver *a, struct homa_driver *b, int n,
			   size_t len, size_t last, size_t split)
{
	static uint8_t out[64][1500], in[64][1500];
	struct homa_io_tx tx[64];
	size_t lens[64];

	for (int i = 0; i < n; i++) {
		size_t l = i == n - 1 ? last : len;

		fake_packet(out[i], l, a->port, b->port, (unsigned)i);
		tx[i] = (struct homa_io_tx){.data = out[i], .len = l,
			.dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = b->port,
			.priority = 3};
		if (split && split < l) {
			tx[i].len = split;
			tx[i].ext = out[i] + split;
			tx[i].ext_len = l - split;
		}
	}
	assert_int_equal(a->ops->send(a, tx, n), n);
	assert_int_equal(recv_all(b, n, in, lens), n);
	for (int i = 0; i < n; i++) {
		assert_int_equal(lens[i], tx[i].len + tx[i].ext_len);
		assert_memory_equal(in[i], out[i], lens[i]);
	}
}

/** exchange() - exchange_split() with every packet in one piece. */
static void exchange(struct homa_driver *a, struct homa_driver *b, int n,
		     size_t len, size_t last)
{
	exchange_split(a, b, n, len, last, 0);
}

/**
 * udp_send__header_and_payload_apart() - Packets given as a header and a
 * payload elsewhere (zero-copy sends) arrive whole, with offloads (one
 * UDP_SEGMENT send of 2 pieces a packet) and without; packets and bytes
 * are counted per packet.
 */
static void udp_send__header_and_payload_apart(void **state)
{
	for (int off = 0; off < 2; off++) {
		struct homa_driver_config ca = cfg_loopback(0, off == 0);
		struct homa_driver_config cb = cfg_loopback(0, off == 0);
		struct homa_driver *a, *b;

		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
		exchange_split(a, b, 10, 1400, 700, 56);
		assert_int_equal(a->c.tx_packets, 10);
		assert_int_equal(a->c.tx_bytes, 9 * 1400 + 700);
		assert_int_equal(b->c.rx_packets, 10);
		if (a->gso)
			assert_true(a->c.tx_gso_batches >= 1);
		homa_driver_close(a);
		homa_driver_close(b);
	}
}

/** udp_send__gso_batches_and_gro_splits() - Offloads on: one super-packet. */
static void udp_send__gso_batches_and_gro_splits(void **state)
{
	struct homa_driver_config ca = cfg_loopback(0, true), cb = cfg_loopback(0, true);
	struct homa_driver *a, *b;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_true(a->port != 0 && b->port != 0 && a->port != b->port);
	exchange(a, b, 12, 1400, 900);
	print_message("gso=%d gro=%d gso_batches=%lu gro_batches=%lu calls=%lu\n", a->gso, b->gro, (unsigned long)a->c.tx_gso_batches, (unsigned long)b->c.rx_gro_batches, (unsigned long)a->c.tx_calls);
	if (a->gso) {
		assert_true(a->c.tx_gso_batches >= 1);
		assert_true(a->c.tx_calls <= 2);
	}
	if (b->gro)
		assert_true(b->c.rx_gro_batches >= 1);
	assert_int_equal(b->c.rx_packets, 12);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * udp_send__flows_never_coalesce() - Same-size packets to one address
 * and port whose flow alternates (the PSP port: a different Homa port
 * each) go as separate datagrams, never one UDP_SEGMENT send: the
 * receiving kernel gives a coalesced send to one socket. Packets of one
 * flow still coalesce.
 */
static void udp_send__flows_never_coalesce(void **state)
{
	static uint8_t out[12][1500];
	struct homa_driver_config ca = cfg_loopback(0, true), cb = cfg_loopback(0, true);
	struct homa_io_tx tx[12];
	uint8_t in[12][1500];
	size_t lens[12];
	struct homa_driver *a, *b;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	for (int i = 0; i < 12; i++) {
		fake_packet(out[i], 1400, a->port, b->port, (unsigned)i);
		tx[i] = (struct homa_io_tx){.data = out[i], .len = 1400,
			.dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = b->port,
			.flow = (uint16_t)(1000 + i % 2)};
	}
	assert_int_equal(a->ops->send(a, tx, 12), 12);
	assert_int_equal(recv_all(b, 12, in, lens), 12);
	assert_int_equal(a->c.tx_gso_batches, 0);
	for (int i = 0; i < 12; i++)
		tx[i].flow = 7;
	assert_int_equal(a->ops->send(a, tx, 12), 12);
	assert_int_equal(recv_all(b, 12, in, lens), 12);
	if (a->gso)
		assert_true(a->c.tx_gso_batches >= 1);
	homa_driver_close(a);
	homa_driver_close(b);
}

/** udp_send__plain_path_without_offload() - One datagram per packet. */
static void udp_send__plain_path_without_offload(void **state)
{
	struct homa_driver_config ca = cfg_loopback(0, false), cb = cfg_loopback(0, false);
	struct homa_driver *a, *b;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_false(a->gso);
	exchange(a, b, 40, 1000, 1000);
	assert_int_equal(a->c.tx_gso_batches, 0);
	assert_int_equal(b->c.rx_gro_batches, 0);
	assert_int_equal(a->c.tx_packets, 40);
	assert_true(a->c.tx_calls >= 3); /* batch of 16 per sendmmsg */
	homa_driver_close(a);
	homa_driver_close(b);
}

/** udp_send__marks_priority_in_dscp() - TOS byte = priority << 5. */
static void udp_send__marks_priority_in_dscp(void **state)
{
	struct homa_driver_config ca = cfg_loopback(0, true);
	struct sockaddr_in sin = {.sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), on = 1;
	struct homa_driver *a;
	uint8_t pkt[100], rbuf[200];
	char ctl[64];
	struct iovec iov = {rbuf, sizeof(rbuf)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1,
			   .msg_control = ctl, .msg_controllen = sizeof(ctl)};
	int tos = -1;

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	fake_packet(pkt, sizeof(pkt), a->port, ntohs(sin.sin_port), 1);
	struct homa_io_tx tx = {.data = pkt, .len = sizeof(pkt),
		.dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = ntohs(sin.sin_port),
		.priority = 5};
	assert_int_equal(a->ops->send(a, &tx, 1), 1);
	assert_int_equal(recvmsg(fd, &m, 0), (ssize_t)sizeof(pkt));
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS)
			tos = *(uint8_t *)CMSG_DATA(c);
	assert_int_equal(tos, 5 << 5);
	homa_driver_close(a);
	close(fd);
}

/** udp_open__port_in_use() - A second bind to a used port fails. */
static void udp_open__port_in_use(void **state)
{
	struct homa_driver_config ca = cfg_loopback(0, true), cb;
	struct homa_driver *a, *b = NULL;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &ca, &a), 0);
	cb = cfg_loopback(a->port, true);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), HOMA_EADDRINUSE);
	assert_int_equal(homa_driver_open(HOMA_IO_RAW + 7, &cb, &b), HOMA_EINVAL);
	cb.batch = 0;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), HOMA_EINVAL);
	homa_driver_close(a);
}

/** udp_send__ipv6_loopback() - The driver works over ::1 too. */
static void udp_send__ipv6_loopback(void **state)
{
	struct homa_driver_config c;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&c.bind;
	struct homa_driver *a, *b;
	static uint8_t out[1][1500], in[1][1500];
	size_t lens[1];
	homa_addr dst;

	memset(&c, 0, sizeof(c));
	in6->sin6_family = AF_INET6;
	in6->sin6_addr = in6addr_loopback;
	c.bind_len = sizeof(*in6);
	c.batch = 4;
	c.max_packet = 1500;
	c.offload = true;
	if (homa_driver_open(HOMA_IO_UDP, &c, &a) == HOMA_ENOTSUP)
		skip();
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &c, &b), 0);
	memcpy(dst.b, &in6addr_loopback, 16);
	fake_packet(out[0], 300, a->port, b->port, 9);
	struct homa_io_tx tx = {.data = out[0], .len = 300, .dst = dst,
				.dport = b->port, .priority = 7};
	assert_int_equal(a->ops->send(a, &tx, 1), 1);
	assert_int_equal(recv_all(b, 1, in, lens), 1);
	assert_int_equal(lens[0], 300);
	assert_memory_equal(in[0], out[0], 300);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * raw_recv__filters_by_port() - Raw sockets see every protocol-146
 * packet; each driver keeps only those for its port.
 */
static void raw_recv__filters_by_port(void **state)
{
	struct homa_driver_config ca = cfg_loopback(0, true), cb = cfg_loopback(0, true);
	struct homa_driver *a, *b, *c;
	int err;

	if (geteuid() != 0) {
		print_message("raw driver test skipped: needs root (CAP_NET_RAW)\n");
		skip();
	}
	err = homa_driver_open(HOMA_IO_RAW, &ca, &a);
	if (err == HOMA_EPERM) {
		print_message("raw driver test skipped: CAP_NET_RAW missing\n");
		skip();
	}
	assert_int_equal(err, 0);
	assert_int_equal(homa_driver_open(HOMA_IO_RAW, &cb, &b), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_RAW, &cb, &c), 0);
	exchange(a, b, 20, 1400, 17);
	assert_int_equal(b->c.rx_packets, 20);
	/* c saw the same packets and dropped them: not its port. */
	struct homa_io_rx *rx;
	int n = 0;

	for (int i = 0; i < 20 && c->c.rx_filtered < 20; i++) {
		usleep(1000);
		n += c->ops->recv(c, &rx);
	}
	assert_int_equal(n, 0);
	assert_true(c->c.rx_filtered >= 20);
	/* The port is reserved: a second raw or UDP endpoint cannot take it. */
	struct homa_driver_config cd = cfg_loopback(b->port, true);
	struct homa_driver *d;

	assert_int_equal(homa_driver_open(HOMA_IO_RAW, &cd, &d), HOMA_EADDRINUSE);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cd, &d), HOMA_EADDRINUSE);
	homa_driver_close(a);
	homa_driver_close(b);
	homa_driver_close(c);
}

/** cfg_of() - A config bound to @addr (numeric, port 0) with @offload. */
static struct homa_driver_config cfg_of(const char *addr, bool offload)
{
	struct homa_driver_config c = cfg_loopback(0, offload);
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&c.bind;

	if (!strchr(addr, ':'))
		return c;
	memset(&c.bind, 0, sizeof(c.bind));
	in6->sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
	c.bind_len = sizeof(*in6);
	return c;
}

/**
 * check_rx_priorities() - From a driver of @kind bound to @from to one
 * bound to @to (sent to @dst): 8 packets at priorities 7..0, then a run of
 * 6 same-size packets at priority 2 (one UDP_SEGMENT super-packet when
 * offloads are on); each arrives with the priority it was sent with, and
 * the receiver's rx_prio counts them.
 */
static void check_rx_priorities(int kind, const char *from, const char *to,
				const homa_addr *dst, bool offload)
{
	struct homa_driver_config ca = cfg_of(from, offload), cb = cfg_of(to, offload);
	static uint8_t out[14][1500];
	struct homa_io_tx tx[14];
	struct homa_driver *a, *b;
	int got = 0, i;

	assert_int_equal(homa_driver_open(kind, &ca, &a), 0);
	assert_int_equal(homa_driver_open(kind, &cb, &b), 0);
	for (i = 0; i < 14; i++) {
		fake_packet(out[i], 1000, a->port, b->port, (unsigned)i);
		tx[i] = (struct homa_io_tx){.data = out[i], .len = 1000, .dst = *dst,
			.dport = b->port, .priority = (uint8_t)(i < 8 ? 7 - i : 2)};
	}
	assert_int_equal(a->ops->send(a, tx, 14), 14);
	for (int64_t end = test_now_ms() + 5000; got < 14 && test_now_ms() < end;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		struct homa_io_rx *rx;
		int n;

		poll(&p, 1, 10);
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0 && got + n <= 14);
		for (i = 0; i < n; i++, got++) {
			assert_memory_equal(rx[i].data, out[got], 1000);
			if (rx[i].priority != tx[got].priority)
				fail_msg("%s %s -> %s offload %d: packet %d priority %u, sent %u",
					 a->ops->name, from, to, offload, got, rx[i].priority,
					 tx[got].priority);
		}
	}
	assert_int_equal(got, 14);
	for (i = 0; i < 8; i++)
		assert_int_equal(b->c.rx_prio[i], i == 2 ? 7 : 1);
	homa_driver_close(a);
	homa_driver_close(b);
}

/**
 * driver_recv__reports_priority() - Received packets carry the priority of
 * their DSCP (the inverse of the send path's marks): UDP over IPv4, IPv6
 * and from an IPv6 socket to an IPv4 one (mapped), with and without
 * offloads; raw IP over IPv4 (TOS in the delivered header) and IPv6
 * (IPV6_TCLASS) when privileged.
 */
static void driver_recv__reports_priority(void **state)
{
	homa_addr v4 = homa_addr_ipv4(INADDR_LOOPBACK), v6;

	memcpy(v6.b, &in6addr_loopback, 16);
	for (int off = 0; off < 2; off++) {
		check_rx_priorities(HOMA_IO_UDP, "127.0.0.1", "127.0.0.1", &v4, off);
		check_rx_priorities(HOMA_IO_UDP, "::1", "::1", &v6, off);
		check_rx_priorities(HOMA_IO_UDP, "::", "127.0.0.1", &v4, off);
	}
	if (geteuid() != 0) {
		print_message("raw driver part skipped: needs root (CAP_NET_RAW)\n");
		return;
	}
	check_rx_priorities(HOMA_IO_RAW, "127.0.0.1", "127.0.0.1", &v4, false);
	check_rx_priorities(HOMA_IO_RAW, "::1", "::1", &v6, false);
}

/** homa_io_addr__round_trip() - sockaddr <-> homa_addr conversions. */
static void homa_io_addr__round_trip(void **state)
{
	struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons(99),
				 .sin_addr.s_addr = htonl(0x0a000001)};
	struct sockaddr_storage ss;
	homa_addr a;
	uint16_t port;

	assert_int_equal(homa_io_addr_from_sockaddr((struct sockaddr *)&in, &a, &port), 0);
	assert_int_equal(port, 99);
	assert_true(homa_addr_is_ipv4(&a));
	assert_int_equal(homa_io_addr_to_sockaddr(AF_INET, &a, 99, &ss), sizeof(in));
	assert_memory_equal(&ss, &in, sizeof(in));
	assert_int_equal(homa_io_addr_to_sockaddr(AF_INET6, &a, 99, &ss),
			 sizeof(struct sockaddr_in6));
	memset(a.b, 0, 16);
	a.b[15] = 1;
	assert_int_equal(homa_io_addr_to_sockaddr(AF_INET, &a, 1, &ss), HOMA_ENOTSUP);
	in.sin_family = AF_UNIX;
	assert_int_equal(homa_io_addr_from_sockaddr((struct sockaddr *)&in, &a, &port),
			 HOMA_EINVAL);
	assert_int_equal(homa_io_errno(EADDRINUSE), HOMA_EADDRINUSE);
	assert_int_equal(homa_io_errno(EPERM), HOMA_EPERM);
	assert_int_equal(homa_io_errno(EBADF), HOMA_EIO);
}

/**
 * homa_driver_settings__compat_and_ipv6_mtu() - The raw driver runs the
 * engine module-compatible by default and UDP does not; an explicit
 * choice stays; the default packet size shrinks on IPv6 so that packet
 * plus IPv6 header fits a 1500-byte link (1472 + 40 did not), and a size
 * the caller chose stays.
 */
static void homa_driver_settings__compat_and_ipv6_mtu(void **state)
{
	static const struct homa_driver_ops raw_ops = {.name = "raw"}, udp_ops = {.name = "udp"};
	struct homa_driver raw = {.ops = &raw_ops, .family = AF_INET};
	struct homa_driver udp = {.ops = &udp_ops, .family = AF_INET6};
	struct homa_settings s, out;

	(void)state;
	homa_settings_default(&s);
	homa_driver_settings(&raw, &s, &out);
	assert_int_equal(out.compat, HOMA_COMPAT_MODULE);
	assert_int_equal(out.mtu, 1472);
	homa_driver_settings(&udp, &s, &out);
	assert_int_equal(out.compat, HOMA_COMPAT_OFF);
	assert_int_equal(out.mtu, 1452);
	raw.family = AF_INET6;
	homa_driver_settings(&raw, &s, &out);
	assert_int_equal(out.mtu, 1460);
	s.compat = HOMA_COMPAT_OFF;
	s.mtu = 9000;
	homa_driver_settings(&raw, &s, &out);
	assert_int_equal(out.compat, HOMA_COMPAT_OFF);
	assert_int_equal(out.mtu, 9000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_driver_settings__compat_and_ipv6_mtu),
		cmocka_unit_test(udp_send__gso_batches_and_gro_splits),
		cmocka_unit_test(udp_send__flows_never_coalesce),
		cmocka_unit_test(udp_send__header_and_payload_apart),
		cmocka_unit_test(udp_send__plain_path_without_offload),
		cmocka_unit_test(udp_send__marks_priority_in_dscp),
		cmocka_unit_test(udp_open__port_in_use),
		cmocka_unit_test(udp_send__ipv6_loopback),
		cmocka_unit_test(raw_recv__filters_by_port),
		cmocka_unit_test(driver_recv__reports_priority),
		cmocka_unit_test(homa_io_addr__round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
