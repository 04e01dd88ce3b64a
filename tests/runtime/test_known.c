/* SPDX-License-Identifier: MIT */
/**
 * @file test_known.c
 * Tests of the UDP driver's known peers (src/io/known.c): a known peer's
 * packet is read before a queue of strangers' packets at the same
 * priority; strangers still get a bounded turn while a known peer keeps
 * sending; a full table keeps its active peers; where the kernel refuses
 * the peer's socket (no descriptors left) the peer stays on the port's
 * queues and loses nothing; a library socket learns its peer from an RPC;
 * an ICMP report filed on a known peer's socket is handed out by unreach()
 * also when recv_urgent() was the read that saw the socket's error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "drv_cfg.h"
#include "helpers.h"
#include "known.h"
#include "homa/homa.h"

/** Strangers' packets queued ahead of the known peer's. */
#define AHEAD 200
/** Bytes per test packet. */
#define PKT_LEN 1000
/** Packets per receive. */
#define BATCH 16

/** cfg_at() - A driver config bound to numeric @addr, port 0, @known peers, steering at @fast. */
static struct homa_driver_config cfg_at(const char *addr, uint32_t known, uint8_t fast)
{
	return test_drv_cfg(addr, BATCH, true, fast, known);
}

/** cfg_of() - cfg_at() on 127.0.0.1. */
static struct homa_driver_config cfg_of(uint32_t known, uint8_t fast)
{
	return cfg_at("127.0.0.1", known, fast);
}

/** send_to() - Send @n PKT_LEN-byte packets from @a to @dst, @b's port, at priority 7, byte 4 = @mark. */
static void send_to(struct homa_driver *a, struct homa_driver *b, const homa_addr *dst, int n,
		    uint8_t mark)
{
	static uint8_t pkt[PKT_LEN];
	struct homa_io_tx tx[BATCH];

	memset(pkt, 0x5a, sizeof(pkt));
	pkt[4] = mark;
	for (int i = 0; i < BATCH; i++)
		tx[i] = (struct homa_io_tx){.data = pkt, .len = sizeof(pkt),
			.dst = *dst, .dport = b->port, .priority = 7};
	for (int sent = 0; sent < n;) {
		int k = n - sent < BATCH ? n - sent : BATCH;

		assert_int_equal(a->ops->send(a, tx, k), k);
		sent += k;
	}
}

/** send_run() - send_to() 127.0.0.1. */
static void send_run(struct homa_driver *a, struct homa_driver *b, int n, uint8_t mark)
{
	homa_addr lo = homa_addr_ipv4(0x7f000001u);

	send_to(a, b, &lo, n, mark);
}

/**
 * read_until() - Receive from @b until @want packets came or 5 s passed;
 * @first: receives how many packets came before the first marked @mark.
 * Return: packets received.
 */
static int read_until(struct homa_driver *b, int want, uint8_t mark, int *first)
{
	int got = 0;

	*first = -1;
	for (int64_t end = test_now_ms() + 5000; got < want && test_now_ms() < end;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		struct homa_io_rx *rx;
		int n;

		poll(&p, 1, 10);
		n = b->ops->recv(b, &rx);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++, got++) {
			assert_int_equal(rx[i].len, PKT_LEN);
			if (rx[i].data[4] == mark && *first < 0)
				*first = got;
		}
	}
	return got;
}

/** know_at() - Name @addr and @peer's port known to @b and let one receive admit it. */
static void know_at(struct homa_driver *b, struct homa_driver *peer, const homa_addr *addr)
{
	struct homa_io_rx *rx;

	assert_non_null(b->ops->know);
	b->ops->know(b, &(homa_addr){0}, 0);  /* an address no socket can reach: refused */
	b->ops->know(b, addr, peer->port);
	assert_int_equal(b->ops->recv(b, &rx), 0);
}

/** know() - know_at() with @peer's bound address. */
static void know(struct homa_driver *b, struct homa_driver *peer)
{
	know_at(b, peer, &peer->local);
}

/**
 * udp_recv__known_peer_overtakes_strangers() - AHEAD packets from a
 * stranger and then one from a known peer, all at priority 7 (a forger
 * marks its packets as high as honest control packets), wait at the
 * receiver: the known peer's is read first, with one queue or two.
 */
static void udp_recv__known_peer_overtakes_strangers(void **state)
{
	(void)state;
	for (int fast = 0; fast <= 5; fast += 5) {
		struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, (uint8_t)fast);
		struct homa_driver *s, *k, *b;
		int first, got;

		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
		know(b, k);
		assert_int_equal(b->c.rx_known_peers, 1);
		send_run(s, b, AHEAD, 'L');
		send_run(k, b, 1, 'H');
		usleep(20000);
		got = read_until(b, AHEAD + 1, 'H', &first);
		if (first != 0)
			fail_msg("fast %d: %d stranger packets read before the known peer's", fast, first);
		assert_int_equal(got, AHEAD + 1);
		assert_int_equal(b->c.rx_known_packets, 1);
		assert_int_equal(b->c.rx_packets, AHEAD + 1);
		homa_driver_close(s);
		homa_driver_close(k);
		homa_driver_close(b);
	}
}

/**
 * udp_recv__known_peer_overtakes_strangers_ipv6() - The same over IPv6
 * (::1) and for an IPv4 peer of a dual-stack socket (bound to ::).
 */
static void udp_recv__known_peer_overtakes_strangers_ipv6(void **state)
{
	static const struct {
		const char *recv_at, *send_from;
		homa_addr dst;
	} cases[] = {
		{"::1", "::1", {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}}},
		{"::", "127.0.0.1", {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1}}},
	};

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct homa_driver_config cs = cfg_at(cases[c].send_from, 0, 0);
		struct homa_driver_config cb = cfg_at(cases[c].recv_at, 4, 5);
		struct homa_driver *s, *k, *b;
		int first, got;

		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
		assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
		know_at(b, k, &cases[c].dst);
		assert_int_equal(b->c.rx_known_peers, 1);
		send_to(s, b, &cases[c].dst, AHEAD, 'L');
		send_to(k, b, &cases[c].dst, 1, 'H');
		usleep(20000);
		got = read_until(b, AHEAD + 1, 'H', &first);
		if (first != 0)
			fail_msg("%s: %d stranger packets read before the known peer's",
				 cases[c].recv_at, first);
		assert_int_equal(got, AHEAD + 1);
		assert_int_equal(b->c.rx_known_packets, 1);
		homa_driver_close(s);
		homa_driver_close(k);
		homa_driver_close(b);
	}
}

/**
 * udp_recv__strangers_get_a_turn() - While a known peer keeps its queue
 * busy, a stranger's packets are read after at most 4 known batches (the
 * peer sends without UDP_SEGMENT: one datagram per packet, so a batch is
 * BATCH packets).
 */
static void udp_recv__strangers_get_a_turn(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 5);
	struct homa_driver *s, *k, *b;
	int first, got;

	(void)state;
	cs.offload = false;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &s), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	know(b, k);
	send_run(s, b, 10, 'S');
	send_run(k, b, AHEAD, 'K');
	usleep(20000);
	got = read_until(b, AHEAD + 10, 'S', &first);
	assert_int_equal(got, AHEAD + 10);
	if (first < 0 || first > 4 * BATCH)
		fail_msg("%d known packets read before the first stranger's", first);
	homa_driver_close(s);
	homa_driver_close(k);
	homa_driver_close(b);
}

/**
 * udp_know__full_table_keeps_active_peers() - With room for one peer, a
 * second one named known while the first is active stays a stranger
 * (counted), and its packets still arrive.
 */
static void udp_know__full_table_keeps_active_peers(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(1, 5);
	struct homa_driver *k1, *k2, *b;
	int first;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k1), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k2), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	know(b, k1);
	assert_int_equal(b->c.rx_known_refused, 1);  /* the unreachable address */
	know(b, k2);
	assert_int_equal(b->c.rx_known_peers, 1);
	assert_int_equal(b->c.rx_known_refused, 3);
	send_run(k2, b, 3, 'B');
	send_run(k1, b, 1, 'A');
	usleep(20000);
	assert_int_equal(read_until(b, 4, 'A', &first), 4);
	assert_int_equal(first, 0);
	assert_int_equal(b->c.rx_known_packets, 1);
	homa_driver_close(k1);
	homa_driver_close(k2);
	homa_driver_close(b);
}

/**
 * udp_know__kernel_refuses_socket() - With no descriptor left the peer's
 * socket cannot open: the peer stays on the port's queues (counted in
 * rx_known_refused), and its packets arrive as before.
 */
static void udp_know__kernel_refuses_socket(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 5);
	struct homa_driver *k, *b;
	struct rlimit old, low;
	int first, fd;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)fd;  /* descriptors below fd are taken */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	know(b, k);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(b->c.rx_known_peers, 0);
	assert_int_equal(b->c.rx_known_refused, 2);
	send_run(k, b, 5, 'H');
	usleep(20000);
	assert_int_equal(read_until(b, 5, 'H', &first), 5);
	assert_int_equal(b->c.rx_known_packets, 0);
	homa_driver_close(k);
	homa_driver_close(b);
}

/** open_client() - A client on 127.0.0.1 with @known peers (homa_open_opts.known_peers). */
static int open_client(homa_socket **c, int32_t known)
{
	struct homa_open_opts o;

	homa_open_opts_default(&o);
	o.bind_addr = "127.0.0.1";
	o.known_peers = known;
	return homa_open(c, &o);
}

/**
 * homa_open__rpc_makes_peers_known() - After an RPC the server knows the
 * client's port and the client the server's (homa_io_stats), and the
 * next RPC's packets come through their own queues; a client opened with
 * known_peers -1 knows none; out of range is HOMA_EINVAL.
 */
static void homa_open__rpc_makes_peers_known(void **state)
{
	struct test_server sv;
	struct homa_io_stats io;
	homa_socket *c;

	(void)state;
	assert_int_equal(test_server_start(&sv, HOMA_DRIVER_UDP, HOMA_MODE_THREADED, 1, NULL), 0);
	for (int32_t known = 0; known >= -1; known--) {
		assert_int_equal(open_client(&c, known), 0);
		for (int i = 0; i < 3; i++)
			test_rpc(c, sv.port);
		assert_int_equal(homa_io_stats(c, &io), 0);
		assert_int_equal(io.rx_known_peers, known ? 0 : 1);
		if (!known)
			assert_true(io.rx_known_packets > 0);
		else
			assert_int_equal(io.rx_known_packets, 0);
		homa_close(c);
	}
	assert_int_equal(homa_io_stats(sv.s, &io), 0);
	assert_int_equal(io.rx_known_peers, 2);
	assert_true(io.rx_known_packets > 0);
	test_server_stop(&sv);
	assert_int_equal(open_client(&c, HOMA_KNOWN_PEERS_MAX + 1), HOMA_EINVAL);
	assert_int_equal(open_client(&c, -2), HOMA_EINVAL);
}

/**
 * send_one() - Send one PKT_LEN-byte packet from @a to @dst port @port at
 * priority 7, its first two bytes @a's port as a Homa header's source
 * port (an ICMP report quoting it counts as ours).
 */
static void send_one(struct homa_driver *a, const homa_addr *dst, uint16_t port)
{
	static uint8_t pkt[PKT_LEN];
	struct homa_io_tx tx = {.data = pkt, .len = sizeof(pkt), .dst = *dst, .dport = port,
				.priority = 7};

	pkt[0] = (uint8_t)(a->port >> 8);
	pkt[1] = (uint8_t)a->port;
	assert_int_equal(a->ops->send(a, &tx, 1), 1);
}

/**
 * unreach_after_read() - A known peer of a driver (steering at @fast)
 * sends one short packet (@mark), read; then it closes its port, and a
 * packet to it comes back as an ICMP port unreachable filed on the peer's
 * own socket. Reads by recv_urgent() (@urgent) or recv() see the socket's
 * error first; unreach() must still hand the report out, so the engine
 * learns of it and the socket's error queue is drained (left there, it
 * would keep the socket readable as POLLERR).
 */
static void unreach_after_read(uint8_t fast, bool urgent, uint8_t mark)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, fast);
	struct homa_driver *k, *b;
	struct homa_io_unreach u[4];
	struct homa_io_rx *rx;
	homa_addr kaddr;
	uint16_t kport;
	int first, reports = 0;

	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	assert_true(!urgent || b->ops->recv_urgent);
	know(b, k);
	assert_int_equal(b->c.rx_known_peers, 1);
	send_run(k, b, 1, mark);  /* priority 7 only: with steering, the peer counts as urgent */
	assert_int_equal(read_until(b, 1, mark, &first), 1);
	kaddr = k->local;
	kport = k->port;
	homa_driver_close(k);
	send_one(b, &kaddr, kport);
	for (int64_t end = test_now_ms() + 2000; !reports && test_now_ms() < end;) {
		usleep(1000);
		assert_true((urgent ? b->ops->recv_urgent(b, &rx) : b->ops->recv(b, &rx)) >= 0);
		reports = b->ops->unreach(b, u, 4);
	}
	if (reports != 1)
		fail_msg("unreach() handed out %d reports after %s read the known peer's socket "
			 "error (expected 1)", reports, urgent ? "recv_urgent()" : "recv()");
	assert_int_equal(u[0].kind, HOMA_UNREACH_PORT);
	homa_driver_close(b);
}

/**
 * udp_recv_urgent__keeps_known_peers_unreach_report() - unreach_after_read()
 * with recv_urgent() the first to see the known peer's socket error.
 */
static void udp_recv_urgent__keeps_known_peers_unreach_report(void **state)
{
	(void)state;
	unreach_after_read(5, true, 'H');
}

/**
 * udp_recv__keeps_known_peers_unreach_report() - unreach_after_read() with
 * recv() the first to see it.
 */
static void udp_recv__keeps_known_peers_unreach_report(void **state)
{
	(void)state;
	unreach_after_read(0, false, 'R');
}

/**
 * homa_known_unreach__looks_only_after_noted_error() - homa_known_unreach()
 * runs on every receive, so it looks at no peer until a read noted an
 * error (homa_known_check()): a receiver's error note set behind its back
 * is left alone. Once noted, the note is taken (the socket's empty error
 * queue read) and cleared; a call with no room for reports leaves both the
 * peer's note and the known table's for the next call.
 */
static void homa_known_unreach__looks_only_after_noted_error(void **state)
{
	struct homa_known_peer peers[4];
	struct homa_known k = {.peers = peers, .cap = 4, .n = 1};
	struct homa_io_unreach u[2];

	(void)state;
	memset(peers, 0, sizeof(peers));
	for (int i = 0; i < 4; i++)
		peers[i].fd = -1;
	peers[2].fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	assert_true(peers[2].fd >= 0);
	peers[2].rx.error = ECONNREFUSED;
	assert_int_equal(homa_known_unreach(&k, 4000, u, 2), 0);
	assert_int_equal(peers[2].rx.error, ECONNREFUSED);  /* not looked at */
	homa_known_check(&k, &peers[2]);
	assert_true(k.errors);
	assert_int_equal(homa_known_unreach(&k, 4000, u, 0), 0);
	assert_true(k.errors);
	assert_int_equal(peers[2].rx.error, ECONNREFUSED);
	assert_int_equal(homa_known_unreach(&k, 4000, u, 2), 0);
	assert_int_equal(peers[2].rx.error, 0);
	assert_false(k.errors);
	homa_known_check(&k, &peers[2]);  /* no error: nothing to note */
	assert_false(k.errors);
	close(peers[2].fd);
}

/**
 * homa_known_note__known_peer_costs_a_lookup() - Every completed message
 * names its peer known again: a peer with a slot is found in the table's
 * set and not queued for homa_known_admit() (which would take the lock
 * and scan the slots for it); a peer without one is queued; after its
 * slot is given up (homa_known_free()) nothing of it is left.
 */
static void homa_known_note__known_peer_costs_a_lookup(void **state)
{
	struct sockaddr_in port = {.sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_storage bind_ss;
	socklen_t len = sizeof(port);
	struct homa_io_receiver proto;
	struct homa_io_counters c;
	struct homa_known k;
	homa_addr lo = homa_addr_ipv4(0x7f000001u);
	int on = 1, ep = epoll_create1(EPOLL_CLOEXEC);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	(void)state;
	memset(&proto, 0, sizeof(proto));
	memset(&c, 0, sizeof(c));
	assert_true(ep >= 0 && fd >= 0);
	assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)), 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&port, sizeof(port)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&port, &len), 0);
	memset(&bind_ss, 0, sizeof(bind_ss));
	memcpy(&bind_ss, &port, sizeof(port));
	assert_int_equal(homa_known_init(&k, 4, ep, &bind_ss, sizeof(port), 0, false, &proto), 0);
	homa_known_note(&k, &lo, 40001, &c);
	assert_int_equal(k.has_pend, 1);
	homa_known_admit(&k, &c);
	assert_int_equal(k.n, 1);
	assert_int_equal(k.has_pend, 0);
	for (int i = 0; i < 3; i++)
		homa_known_note(&k, &lo, 40001, &c);
	assert_int_equal(k.has_pend, 0);  /* known: nothing queued */
	assert_int_equal(k.npend, 0);
	homa_known_note(&k, &lo, 40002, &c);
	assert_int_equal(k.npend, 1);
	homa_known_admit(&k, &c);
	assert_int_equal(k.n, 2);
	assert_int_equal(c.rx_known_refused, 0);
	homa_known_free(&k);
	assert_int_equal(k.set.n, 0);
	close(fd);
	close(ep);
}

/** Bytes of a bulk packet in udp_recv_urgent__skips_peer_that_sent_bulk(). */
#define BULK_LEN 9000

/** send_len() - One @len-byte packet from @a to @b (127.0.0.1) at priority 7. */
static void send_len(struct homa_driver *a, struct homa_driver *b, size_t len)
{
	static uint8_t pkt[BULK_LEN];
	struct homa_io_tx tx = {.data = pkt, .len = len, .dst = homa_addr_ipv4(0x7f000001u),
				.dport = b->port, .priority = 7};

	assert_int_equal(a->ops->send(a, &tx, 1), 1);
}

/** recv_len() - Receive from @b (1 s at most) until a packet comes; it must be @len bytes. */
static void recv_len(struct homa_driver *b, size_t len)
{
	struct homa_io_rx *rx;
	int n = 0;

	for (int64_t end = test_now_ms() + 1000; !n && test_now_ms() < end;) {
		usleep(1000);
		n = b->ops->recv(b, &rx);
	}
	assert_int_equal(n, 1);
	assert_int_equal(rx[0].len, len);
}

/**
 * udp_recv_urgent__skips_peer_that_sent_bulk() - recv_urgent() asks a
 * known peer's socket only if its latest batch was all short packets of
 * the fast queue's priorities: after a BULK_LEN-byte packet at priority
 * 7 (a bulk message's unscheduled packet at the top level: the cutoffs
 * give short bulk messages the lookups' level) it reads nothing from
 * that peer (the old rule, priorities alone, read its next bulk packet
 * between chunks of a batch); after a short packet it does.
 */
static void udp_recv_urgent__skips_peer_that_sent_bulk(void **state)
{
	struct homa_driver_config cs = cfg_of(0, 0), cb = cfg_of(4, 5);
	struct homa_driver *k, *b;
	struct homa_io_rx *rx;

	(void)state;
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cs, &k), 0);
	assert_int_equal(homa_driver_open(HOMA_IO_UDP, &cb, &b), 0);
	know(b, k);
	send_len(k, b, BULK_LEN);
	recv_len(b, BULK_LEN);
	send_len(k, b, BULK_LEN);
	usleep(2000);
	assert_int_equal(b->ops->recv_urgent(b, &rx), 0);  /* a bulk peer: not asked */
	recv_len(b, BULK_LEN);
	send_len(k, b, PKT_LEN);
	recv_len(b, PKT_LEN);
	send_len(k, b, PKT_LEN);
	usleep(2000);
	assert_int_equal(b->ops->recv_urgent(b, &rx), 1);  /* short packets only: asked */
	assert_int_equal(rx[0].len, PKT_LEN);
	homa_driver_close(k);
	homa_driver_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_recv__known_peer_overtakes_strangers),
		cmocka_unit_test(udp_recv__known_peer_overtakes_strangers_ipv6),
		cmocka_unit_test(udp_recv__strangers_get_a_turn),
		cmocka_unit_test(udp_know__full_table_keeps_active_peers),
		cmocka_unit_test(udp_know__kernel_refuses_socket),
		cmocka_unit_test(udp_recv_urgent__keeps_known_peers_unreach_report),
		cmocka_unit_test(udp_recv__keeps_known_peers_unreach_report),
		cmocka_unit_test(homa_known_unreach__looks_only_after_noted_error),
		cmocka_unit_test(homa_known_note__known_peer_costs_a_lookup),
		cmocka_unit_test(udp_recv_urgent__skips_peer_that_sent_bulk),
		cmocka_unit_test(homa_open__rpc_makes_peers_known),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
