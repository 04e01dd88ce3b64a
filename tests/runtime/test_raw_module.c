/* SPDX-License-Identifier: MIT */
/**
 * @file test_raw_module.c
 * The raw driver toward Linux module hosts, on loopback (needs root:
 * skipped otherwise).
 *
 * ICMP unreachable: a module host answers a packet for a port where no
 * socket serves with ICMP port unreachable; here the test plays that host:
 * it reads our packet with a raw socket of its own and sends the ICMP
 * message quoting it through a raw ICMP socket, as the kernel would.
 *
 * Acks for other ports: a module host sends the acks it owes this host on
 * packets to any port of it; the driver of the port they are for keeps
 * such packets (homa_wire_acks_port()).
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
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "helpers.h"
#include "homa/wire.h"

/** A port nothing on this host serves (Homa over raw IP: nothing answers). */
#define DEAD_PORT 9

/** Bytes of our packet the ICMP message quotes (a DATA header and 4 bytes). */
#define QUOTE 60

/** csum() - The Internet checksum of @len bytes at @p. */
static uint16_t csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/** WAIT_MS - How long a test waits for a packet or a report (other tests
 * run beside this one and their raw packets reach our sockets too, so
 * waits are bounded by time, never by a count of wake-ups). */
#define WAIT_MS 10000

/** RESEND_MS - How long a test waits for the driver to report an ICMP
 * message before it sends it again: loopback drops packets when its
 * backlog is full (a flood test beside this one), and nothing resends
 * an ICMP message. */
#define RESEND_MS 500

/**
 * catch_packet() - Read protocol-146 packets on @fd (IPv4 header first)
 * for up to WAIT_MS until one goes to Homa port @dport; copy its first
 * QUOTE bytes after the IP header into @q. Packets of other tests are
 * skipped. Return: true if one came.
 */
static bool catch_packet(int fd, uint16_t dport, uint8_t *q)
{
	int64_t end = test_now_ms() + WAIT_MS;
	uint8_t buf[2048];

	while (test_now_ms() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		size_t ihl;

		if (poll(&p, 1, 10) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 20)
			continue;
		ihl = (size_t)(buf[0] & 0xf) * 4;
		if ((size_t)n < ihl + QUOTE || (buf[ihl + 2] << 8 | buf[ihl + 3]) != dport)
			continue;
		memcpy(q, buf + ihl, QUOTE);
		return true;
	}
	return false;
}

/**
 * send_unreach() - Send ICMP destination unreachable @code to 127.0.0.1,
 * quoting an IPv4 packet 127.0.0.1 -> 127.0.0.1, protocol 146, whose
 * Homa bytes start with @q.
 */
static void send_unreach(int code, const uint8_t *q)
{
	uint8_t m[8 + 20 + QUOTE] = {3, (uint8_t)code};
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	uint16_t c;

	assert_true(fd >= 0);
	m[8] = 0x45;
	m[10] = 0;
	m[11] = 20 + QUOTE;
	m[16] = 64;
	m[17] = 146;
	memcpy(m + 20, (uint8_t[]){127, 0, 0, 1, 127, 0, 0, 1}, 8);
	c = csum(m + 8, 20);
	m[18] = (uint8_t)(c >> 8);
	m[19] = (uint8_t)c;
	memcpy(m + 28, q, QUOTE);
	c = csum(m, sizeof(m));
	m[2] = (uint8_t)(c >> 8);
	m[3] = (uint8_t)c;
	assert_int_equal(sendto(fd, m, sizeof(m), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)sizeof(m));
	close(fd);
}

/**
 * sniffer() - A raw protocol-146 socket on loopback that sees our packets
 * (and every other test's: its buffer is large so that a burst of theirs
 * does not crowd ours out).
 */
static int sniffer(void)
{
	int fd = socket(AF_INET, SOCK_RAW, 146);
	int size = 8 << 20;

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
	return fd;
}

/** have_root() - True if raw sockets may be opened; says so when not. */
static bool have_root(void)
{
	if (test_is_root())
		return true;
	print_message("skipped: the raw driver needs root (CAP_NET_RAW)\n");
	return false;
}

/** open_loopback() - A raw driver on 127.0.0.1, ephemeral port. */
static struct homa_driver *open_loopback(void)
{
	struct homa_driver_config cfg;
	struct sockaddr_in *in = (struct sockaddr_in *)&cfg.bind;
	struct homa_driver *d;

	memset(&cfg, 0, sizeof(cfg));
	in->sin_family = AF_INET;
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cfg.bind_len = sizeof(*in);
	cfg.batch = 8;
	cfg.max_packet = 1500;
	assert_int_equal(homa_driver_open(HOMA_IO_RAW, &cfg, &d), 0);
	return d;
}

/**
 * driver__port_unreachable_reported() - The raw driver hands on an ICMP
 * port unreachable quoting a packet from its port (kind, destination and
 * the quoted bytes), and drops one quoting another port's packet; the
 * socket error that announces them is not an I/O error and leaves no
 * POLLERR behind (the driver did not read ICMP at all). The two ICMP
 * messages are sent again every RESEND_MS until the driver reports one.
 */
static void driver__port_unreachable_reported(void **state)
{
	struct homa_io_unreach u[4];
	struct homa_driver *d;
	struct homa_io_rx *rx;
	uint8_t pkt[100], q[QUOTE], other[QUOTE];
	struct pollfd p;
	int sniff, got = 0;

	(void)state;
	if (!have_root())
		skip();
	d = open_loopback();
	sniff = sniffer();
	memset(pkt, 0x5a, sizeof(pkt));
	pkt[0] = (uint8_t)(d->port >> 8);
	pkt[1] = (uint8_t)d->port;
	pkt[2] = 0;
	pkt[3] = DEAD_PORT;
	struct homa_io_tx tx = {.data = pkt, .len = sizeof(pkt),
				.dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = DEAD_PORT};
	assert_int_equal(d->ops->send(d, &tx, 1), 1);
	assert_true(catch_packet(sniff, DEAD_PORT, q));
	memcpy(other, q, QUOTE);
	other[1] ^= 1;  /* another process's port */
	for (int64_t end = test_now_ms() + WAIT_MS, again = 0; test_now_ms() < end && !got;) {
		if (test_now_ms() >= again) {
			send_unreach(3, other);
			send_unreach(3, q);
			again = test_now_ms() + RESEND_MS;
		}
		p = (struct pollfd){.fd = d->fd, .events = POLLIN};
		poll(&p, 1, 10);
		while (d->ops->recv(d, &rx) > 0)
			;
		got = d->ops->unreach(d, u, 4);
	}
	assert_true(got >= 1);  /* more only if a copy sent again arrived too */
	for (int i = 0; i < got; i++) {  /* each ours: the other port's never */
		assert_int_equal(u[i].kind, HOMA_UNREACH_PORT);
		assert_true(homa_addr_equal(&u[i].dst, &tx.dst));
		assert_true(u[i].len >= HOMA_COMMON_LEN);
		assert_memory_equal(u[i].quoted, q, u[i].len < QUOTE ? u[i].len : QUOTE);
	}
	p = (struct pollfd){.fd = d->fd, .events = POLLIN};
	while (d->ops->recv(d, &rx) > 0)
		;
	poll(&p, 1, 0);
	assert_false(p.revents & POLLERR);  /* the error queue is empty */
	close(sniff);
	homa_driver_close(d);
}

/**
 * driver__keeps_acks_for_its_port() - A DATA packet to another port that
 * carries an ack for this driver's port is kept (it was filtered out with
 * every packet for another port); one without is still filtered.
 */
static void driver__keeps_acks_for_its_port(void **state)
{
	struct homa_driver *a, *b, *c;
	struct homa_io_rx *rx;
	struct homa_pkt k;
	uint8_t with[100], without[100];
	int n = 0, len;

	(void)state;
	if (!have_root())
		skip();
	a = open_loopback();
	b = open_loopback();
	c = open_loopback();
	memset(&k, 0, sizeof(k));
	k.type = HOMA_PKT_DATA;
	k.sport = a->port;
	k.dport = b->port;
	k.sender_id = 202;
	k.u.data.message_length = 10;
	k.u.data.incoming = 10;
	k.u.data.payload = with;
	k.u.data.payload_len = 10;
	len = homa_wire_encode(&k, without, sizeof(without));
	k.u.data.ack.client_id = 100;
	k.u.data.ack.server_port = c->port;
	assert_int_equal(homa_wire_encode(&k, with, sizeof(with)), len);
	struct homa_io_tx tx[2] = {
		{.data = without, .len = (size_t)len, .dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = b->port},
		{.data = with, .len = (size_t)len, .dst = homa_addr_ipv4(INADDR_LOOPBACK), .dport = b->port},
	};
	assert_int_equal(a->ops->send(a, tx, 2), 2);
	/* Packets go out in order: once "with" arrived, "without" was seen
	 * (and filtered, with other tests' packets: hence >= 1 below). */
	for (int64_t end = test_now_ms() + WAIT_MS; test_now_ms() < end && n < 1;) {
		struct pollfd p = {.fd = c->fd, .events = POLLIN};
		int r;

		poll(&p, 1, 10);
		r = c->ops->recv(c, &rx);
		if (r > 0) {
			assert_int_equal(r, 1);
			assert_int_equal(rx[0].len, (size_t)len);
			assert_memory_equal(rx[0].data, with, (size_t)len);
			n += r;
		}
	}
	assert_int_equal(n, 1);
	assert_true(c->c.rx_filtered >= 1);
	homa_driver_close(a);
	homa_driver_close(b);
	homa_driver_close(c);
}

/**
 * socket__port_unreachable_fails_rpc() - A request to a port where
 * nothing serves fails with HOMA_ENOSERVER as soon as ICMP port
 * unreachable quoting it arrives (it waited for its timeout: the raw
 * driver did not read ICMP). The ICMP message is sent again every
 * RESEND_MS until the RPC ends.
 */
static void socket__port_unreachable_fails_rpc(void **state)
{
	struct sockaddr_storage dst = test_dst(DEAD_PORT);
	struct homa_message m;
	struct homa_stats st;
	homa_socket *s;
	uint8_t q[QUOTE];
	uint64_t id;
	int sniff, err = HOMA_ETIME;

	(void)state;
	if (!have_root())
		skip();
	assert_int_equal(test_open(&s, HOMA_DRIVER_RAW, HOMA_MODE_THREADED, false, 0, NULL), 0);
	sniff = sniffer();
	assert_int_equal(homa_send(s, (struct sockaddr *)&dst, "ping", 4, 7, &id), 0);
	assert_true(catch_packet(sniff, DEAD_PORT, q));
	/* the RPC's own timeout is TEST_TIMEOUT_TICKS (3 s): a lost ICMP
	 * message is sent again before that */
	for (int64_t end = test_now_ms() + WAIT_MS; test_now_ms() < end;) {
		send_unreach(3, q);
		err = homa_recv(s, HOMA_RECV_RESPONSE, id, RESEND_MS * 1000000LL, &m);
		if (err != HOMA_ETIME)
			break;
	}
	assert_int_equal(err, HOMA_ENOSERVER);
	assert_true(m.id == id);
	homa_socket_stats(s, &st);
	assert_true(st.unreachable_received >= 1);
	assert_int_equal(st.rpcs_timed_out, 0);
	homa_close(s);
	close(sniff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver__port_unreachable_reported),
		cmocka_unit_test(socket__port_unreachable_fails_rpc),
		cmocka_unit_test(driver__keeps_acks_for_its_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
