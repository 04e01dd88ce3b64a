/* SPDX-License-Identifier: MIT */
/**
 * @file test_psp_host.c
 * The host's PSP receiver (src/runtime/psp_host.c, psp_fwd.c) on the real
 * stack: sockets opened with udp_port set send every sealed packet to
 * that one UDP port, where the receiver hands it to the socket its clear
 * header names; two sockets of one process share it, sockets of two
 * processes share it (one holds the port, the other registers over
 * loopback and takes the port over when the holder leaves), and hostile
 * datagrams are dropped and counted by reason: not PSP, truncated, a port
 * no socket registered (by the receiver), an unknown SPI and a replay (by
 * the socket the packet was forwarded to); IPv6 sockets (::1) share it
 * with IPv4 ones. The receiver is what sockets use where the kernel
 * cannot steer (psp_steer.c): the tests turn steering off
 * (HOMA_PSP_STEER=off). Needs root (port and
 * IP_TRANSPARENT); the test uses a free port instead of 1000 so that it
 * never meets another program's receiver.
 *
 * Under AddressSanitizer the second process execs this program again
 * (--child) instead of running on in the forked image: clang 14's ASan
 * allocator is not fork-safe, and threads a forked child starts block
 * forever when another thread of the parent held an allocator lock at
 * the fork.
 */
#define _GNU_SOURCE  /* psp_host.h: struct mmsghdr, struct in6_pktinfo */
#include <arpa/inet.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "psp_host.h"
#include "rt_helpers.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/** The PSP port of the run. */
static uint16_t psp_port;

/** Sockets open now, closed by close_all() when a test fails half-way. */
static struct crypto_echo *open_eps[8];

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/**
 * ep_open_at() - Open an encrypted socket on @host (127.0.0.1 or ::1)
 * sending to @udp_port; a @server answers as an echo server. Return: as
 * homa_open().
 */
static int ep_open_at(struct crypto_echo *e, bool server, uint16_t udp_port, const char *host)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;
	int err;

	crypto_opts_init(&o, &eo, &st, host, server);
	eo.udp_port = udp_port;
	err = crypto_ep_open(e, &o, server);
	if (err)
		return err;
	for (int i = 0; i < 8; i++)
		if (!open_eps[i]) {
			open_eps[i] = e;
			break;
		}
	return 0;
}

/** ep_open() - ep_open_at() on 127.0.0.1. */
static int ep_open(struct crypto_echo *e, bool server, uint16_t udp_port)
{
	return ep_open_at(e, server, udp_port, "127.0.0.1");
}

/** ep_close() - Close @e and join its echo thread. */
static void ep_close(struct crypto_echo *e)
{
	for (int i = 0; i < 8; i++)
		if (open_eps[i] == e)
			open_eps[i] = NULL;
	crypto_echo_stop(e);
}

/**
 * close_all() - Teardown of every test: close the sockets a failed test
 * left open, so that the next test finds the PSP port free.
 */
static int close_all(void **state)
{
	(void)state;
	for (int i = 0; i < 8; i++)
		if (open_eps[i])
			ep_close(open_eps[i]);
	return 0;
}

/** host() - This process's receiver counters. */
static struct homa_psp_host_stats host(void)
{
	struct homa_psp_host_stats h;

	assert_int_equal(homa_encrypt_host_stats(&h), 0);
	return h;
}

/** psp() - @e's PSP counters. */
static struct homa_psp_stats psp(struct crypto_echo *e)
{
	struct homa_psp_stats st;

	assert_int_equal(homa_encrypt_stats(e->s, &st), 0);
	return st;
}

/** tell() - Print @who's PSP, engine and receiver counters to stderr (why a round failed). */
static void tell(const char *who, homa_socket *s)
{
	struct homa_psp_host_stats h = {0};
	struct homa_psp_stats p = {0};
	struct homa_stats st = {0};

	homa_encrypt_host_stats(&h);
	homa_encrypt_stats(s, &p);
	homa_socket_stats(s, &st);
	fprintf(stderr, "%s port %d: receiver owner %u fwd %llu no_port %llu send_err %llu regs %llu; "
		"psp sealed %llu opened %llu no_assoc %llu rej unknown %llu replay %llu; "
		"resends sent %llu recv %llu restarts %llu timed_out %llu busy %llu\n", who,
		homa_local_port(s), h.owner, (unsigned long long)h.forwarded,
		(unsigned long long)h.no_port, (unsigned long long)h.send_errors,
		(unsigned long long)h.registrations, (unsigned long long)p.sealed,
		(unsigned long long)p.opened, (unsigned long long)p.seal_no_assoc,
		(unsigned long long)p.rejected[HOMA_PSP_REJ_UNKNOWN_SPI],
		(unsigned long long)p.rejected[HOMA_PSP_REJ_REPLAY],
		(unsigned long long)st.resends_sent, (unsigned long long)st.resends_received,
		(unsigned long long)st.rpc_restarts, (unsigned long long)st.rpcs_timed_out,
		(unsigned long long)st.busy_sent);
}

/**
 * psp_host__two_sockets_share() - Two servers and a client of one process
 * with the PSP port set: 100 B and 200 kB RPCs to both servers complete,
 * every packet the three opened came through the receiver (the client's
 * and servers' own ports receive nothing directly), which holds the port.
 */
static void psp_host__two_sockets_share(void **state)
{
	static struct crypto_echo s1, s2, c;  /* static: close_all() closes them after a failure */
	struct homa_psp_host_stats h0, h;
	uint64_t opened;

	(void)state;
	assert_int_equal(homa_encrypt_host_stats(&h0), HOMA_ENOTSUP);
	assert_int_equal(ep_open(&s1, true, psp_port), 0);
	h0 = host();
	assert_int_equal(h0.owner, 1);
	assert_int_equal(ep_open(&s2, true, psp_port), 0);
	assert_int_equal(ep_open(&c, false, psp_port), 0);
	assert_int_equal(host().sockets, 3);
	crypto_associate(c.s, s1.s, s1.port);
	crypto_associate(c.s, s2.s, s2.port);
	crypto_associate(s1.s, c.s, c.port);
	crypto_associate(s2.s, c.s, c.port);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(crypto_rpc(c.s, s1.port, 100), 0);
		assert_int_equal(crypto_rpc(c.s, s2.port, 200000), 0);
		assert_int_equal(crypto_rpc(c.s, s1.port, 200000), 0);
	}
	opened = psp(&s1).opened + psp(&s2).opened + psp(&c).opened;
	assert_true(opened > 100);
	/* The receiver adds its counts to the totals after each batch: a
	 * packet may be opened before its forwarding is counted. */
	for (uint64_t until = now_ns() + 20000000000ull;; usleep(5000)) {
		h = host();
		if (h.forwarded - h0.forwarded >= opened || now_ns() > until)
			break;
	}
	assert_true(h.forwarded - h0.forwarded >= opened);
	ep_close(&c);
	ep_close(&s2);
	ep_close(&s1);
	assert_int_equal(homa_encrypt_host_stats(&h), HOMA_ENOTSUP);
}

/** send_to() - Send @len bytes from @fd to 127.0.0.1:@port. */
static void send_to(int fd, const uint8_t *p, size_t len, uint16_t port)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
}

/** Counters a hostile datagram may move. */
struct seen {
	struct homa_psp_host_stats h;
	struct homa_psp_stats s;
};

/** wait_for() - Wait (up to 20 s) until @done(@e) holds. Return: whether it did. */
static bool wait_for(struct crypto_echo *e, bool (*done)(struct crypto_echo *, const struct seen *),
		     const struct seen *base)
{
	uint64_t until = now_ns() + 20000000000ull;

	while (!done(e, base) && now_ns() < until)
		usleep(5000);
	return done(e, base);
}

/** Predicates of wait_for() over the receiver's and the server's counters. */
static bool one_not_psp(struct crypto_echo *e, const struct seen *b)
{
	(void)e;
	return host().not_psp > b->h.not_psp;
}
static bool one_truncated(struct crypto_echo *e, const struct seen *b)
{
	(void)e;
	return host().truncated > b->h.truncated;
}
static bool one_no_port(struct crypto_echo *e, const struct seen *b)
{
	(void)e;
	return host().no_port > b->h.no_port;
}
static bool one_opened(struct crypto_echo *e, const struct seen *b) { return psp(e).opened > b->s.opened; }
static bool one_replay(struct crypto_echo *e, const struct seen *b)
{
	return psp(e).rejected[HOMA_PSP_REJ_REPLAY] > b->s.rejected[HOMA_PSP_REJ_REPLAY];
}
static bool one_unknown(struct crypto_echo *e, const struct seen *b)
{
	return psp(e).rejected[HOMA_PSP_REJ_UNKNOWN_SPI] > b->s.rejected[HOMA_PSP_REJ_UNKNOWN_SPI];
}

/** snap() - The counters now. */
static struct seen snap(struct crypto_echo *e)
{
	return (struct seen){.h = host(), .s = psp(e)};
}

/**
 * psp_host__hostile() - Datagrams sent to the PSP port: clear text is
 * "not PSP", a 20-byte PSP header
 * is "truncated", a sealed packet for a port no socket holds is "no
 * port" (none is forwarded); a correctly sealed packet is forwarded and
 * opened once, its replay and one with an unknown SPI are forwarded and
 * rejected by the server's PSP by reason; honest RPCs still complete.
 */
static void psp_host__hostile(void **state)
{
	uint8_t pkt[100], sealed[100], key[16];
	homa_addr srv = homa_addr_ipv4(0x7f000001);
	uint16_t nobody = crypto_free_udp_port();
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(nobody),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_DGRAM, 0), trap = socket(AF_INET, SOCK_DGRAM, 0);
	uint8_t got[128];
	homa_psp *a;
	static struct crypto_echo s, c;  /* static: see close_all() */
	struct seen b;
	uint32_t spi;

	(void)state;
	/* where a packet for the unregistered port would go if forwarded */
	assert_int_equal(bind(trap, (struct sockaddr *)&at, sizeof(at)), 0);
	assert_int_equal(ep_open(&s, true, psp_port), 0);
	assert_int_equal(ep_open(&c, false, psp_port), 0);
	crypto_associate(c.s, s.s, s.port);
	crypto_associate(s.s, c.s, c.port);
	assert_int_equal(crypto_rpc(c.s, s.port, 5000), 0);
	assert_int_equal(homa_psp_new(&a, 0, NULL), 0);
	assert_int_equal(homa_encrypt_rx_issue(s.s, &spi, key), 0);
	assert_int_equal(homa_psp_tx_add(a, &srv, (uint16_t)s.port, spi, key, 0), 0);
	assert_int_equal(homa_psp_tx_add(a, &srv, nobody, spi, key, 0), 0);
	memset(pkt, 0, sizeof(pkt));  /* BUSY for an RPC the server does not know */
	pkt[0] = 0x30, pkt[1] = 0x39, pkt[11] = 0x14, pkt[12] = 5 << 4, pkt[27] = 8;

	b = snap(&s);
	send_to(fd, (const uint8_t *)"clear text", 10, psp_port);
	assert_true(wait_for(&s, one_not_psp, &b));
	b = snap(&s);
	memset(sealed, 0, sizeof(sealed));
	sealed[0] = 146, sealed[1] = 1;
	send_to(fd, sealed, 20, psp_port);
	assert_true(wait_for(&s, one_truncated, &b));

	b = snap(&s);
	pkt[2] = (uint8_t)(nobody >> 8), pkt[3] = (uint8_t)nobody;
	memcpy(sealed, pkt, 28);
	assert_int_equal(homa_psp_seal(a, &srv, sealed, 28, sizeof(sealed)), 60);
	send_to(fd, sealed, 60, psp_port);
	assert_true(wait_for(&s, one_no_port, &b));
	/* not forwarded (the forwarded count may move: the RPC's last packets) */
	assert_int_equal(recv(trap, got, sizeof(got), MSG_DONTWAIT), -1);

	pkt[2] = (uint8_t)(s.port >> 8), pkt[3] = (uint8_t)s.port;
	memcpy(sealed, pkt, 28);
	assert_int_equal(homa_psp_seal(a, &srv, sealed, 28, sizeof(sealed)), 60);
	b = snap(&s);
	send_to(fd, sealed, 60, psp_port);
	assert_true(wait_for(&s, one_opened, &b));
	b = snap(&s);
	send_to(fd, sealed, 60, psp_port);  /* replay */
	assert_true(wait_for(&s, one_replay, &b));
	b = snap(&s);
	sealed[7] ^= 0x55;  /* an SPI never issued */
	sealed[15] = 0x77;
	send_to(fd, sealed, 60, psp_port);
	assert_true(wait_for(&s, one_unknown, &b));
	assert_int_equal(crypto_rpc(c.s, s.port, 200000), 0);
	homa_psp_free(a);
	close(fd);
	close(trap);
	ep_close(&c);
	ep_close(&s);
}

/** send_to6() - Send @len bytes from a fresh IPv6 socket to [::1]:@port. */
static void send_to6(const uint8_t *p, size_t len, uint16_t port)
{
	struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	int fd = socket(AF_INET6, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	close(fd);
}

/**
 * psp_host__ipv6() - IPv6 and IPv4 sockets of one process share the
 * receiver (its socket is dual-stack): a server and a client on ::1 and
 * a server and a client on 127.0.0.1 exchange 100 B and 200 kB RPCs,
 * every packet they opened came through the receiver (forwarded to
 * [::1] with the IPv6 sender as source, and to 127.0.0.1 as before), and
 * clear text sent over IPv6 to the PSP port is dropped as not PSP.
 */
static void psp_host__ipv6(void **state)
{
	static struct crypto_echo s6, c6, s4, c4;  /* static: see close_all() */
	struct homa_psp_host_stats h0, h;
	uint64_t opened;
	struct seen b;

	(void)state;
	assert_int_equal(ep_open_at(&s6, true, psp_port, "::1"), 0);
	assert_int_equal(ep_open_at(&c6, false, psp_port, "::1"), 0);
	assert_int_equal(ep_open(&s4, true, psp_port), 0);
	assert_int_equal(ep_open(&c4, false, psp_port), 0);
	h0 = host();
	assert_int_equal(h0.owner, 1);
	crypto_associate_at(c6.s, s6.s, "::1", s6.port);
	crypto_associate_at(s6.s, c6.s, "::1", c6.port);
	crypto_associate(c4.s, s4.s, s4.port);
	crypto_associate(s4.s, c4.s, c4.port);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(crypto_rpc_at(c6.s, "::1", s6.port, 100), 0);
		assert_int_equal(crypto_rpc_at(c6.s, "::1", s6.port, 200000), 0);
		assert_int_equal(crypto_rpc(c4.s, s4.port, 100), 0);
	}
	opened = psp(&s6).opened + psp(&c6).opened + psp(&s4).opened + psp(&c4).opened;
	assert_true(psp(&s6).opened >= 3 * 2 && psp(&c6).opened >= 3 * 2);
	for (uint64_t until = now_ns() + 20000000000ull;; usleep(5000)) {
		h = host();  /* counts are added after each batch: see two_sockets_share */
		if (h.forwarded - h0.forwarded >= opened || now_ns() > until)
			break;
	}
	assert_true(h.forwarded - h0.forwarded >= opened);
	b = snap(&s6);
	send_to6((const uint8_t *)"clear text", 10, psp_port);
	assert_true(wait_for(&s6, one_not_psp, &b));
	ep_close(&c4);
	ep_close(&s4);
	ep_close(&c6);
	ep_close(&s6);
}

/** Predicate of wait_for(): the burst's clear and sealed datagrams all seen. */
static bool burst_done(struct crypto_echo *e, const struct seen *b)
{
	return host().not_psp - b->h.not_psp >= 16 && psp(e).opened - b->s.opened >= 32;
}

/**
 * psp_host__burst() - 48 datagrams sent back to back to the PSP port, 32
 * sealed (each with its own IV) and 16 in clear, interleaved: the
 * receiver reads them in batches and forwards each sealed one to the
 * server, which opens all 32; the 16 are dropped as not PSP; no read or
 * forward fails; an honest RPC completes afterwards.
 */
static void psp_host__burst(void **state)
{
	static struct crypto_echo s, c;  /* static: see close_all() */
	homa_addr srv = homa_addr_ipv4(0x7f000001);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint8_t pkt[28], sealed[100], key[16];
	struct homa_psp_host_stats h;
	homa_psp *a;
	struct seen b;
	uint32_t spi;

	(void)state;
	assert_int_equal(ep_open(&s, true, psp_port), 0);
	assert_int_equal(ep_open(&c, false, psp_port), 0);
	crypto_associate(c.s, s.s, s.port);
	crypto_associate(s.s, c.s, c.port);
	assert_int_equal(homa_psp_new(&a, 0, NULL), 0);
	assert_int_equal(homa_encrypt_rx_issue(s.s, &spi, key), 0);
	assert_int_equal(homa_psp_tx_add(a, &srv, (uint16_t)s.port, spi, key, 0), 0);
	memset(pkt, 0, sizeof(pkt));  /* BUSY for an RPC the server does not know */
	pkt[0] = 0x30, pkt[1] = 0x39, pkt[11] = 0x14, pkt[12] = 5 << 4, pkt[27] = 8;
	pkt[2] = (uint8_t)(s.port >> 8), pkt[3] = (uint8_t)s.port;
	b = snap(&s);
	for (int i = 0; i < 48; i++) {
		if (i % 3 == 2) {
			send_to(fd, (const uint8_t *)"clear text", 10, psp_port);
			continue;
		}
		memcpy(sealed, pkt, sizeof(pkt));
		assert_int_equal(homa_psp_seal(a, &srv, sealed, sizeof(pkt), sizeof(sealed)), 60);
		send_to(fd, sealed, 60, psp_port);
	}
	assert_true(wait_for(&s, burst_done, &b));
	h = host();
	assert_int_equal(h.send_errors, b.h.send_errors);
	assert_int_equal(h.truncated, b.h.truncated);
	assert_true(h.batches > b.h.batches && h.batches - b.h.batches <= h.forwarded - b.h.forwarded + 16);
	assert_int_equal(psp(&s).rejected[HOMA_PSP_REJ_REPLAY], b.s.rejected[HOMA_PSP_REJ_REPLAY]);
	assert_int_equal(crypto_rpc(c.s, s.port, 100), 0);
	homa_psp_free(a);
	close(fd);
	ep_close(&c);
	ep_close(&s);
}

/** lists() - Does the registration @p (@len bytes) list Homa port @port? */
static bool lists(const uint8_t *p, ssize_t len, int port)
{
	if (len < PSP_HOST_MAGIC_LEN || memcmp(p, PSP_HOST_MAGIC, PSP_HOST_MAGIC_LEN))
		return false;
	for (ssize_t i = PSP_HOST_MAGIC_LEN; i + 2 <= len; i += 2)
		if ((p[i] << 8 | p[i + 1]) == port)
			return true;
	return false;
}

/**
 * registered_before_mark() - Read @holder until the datagram "mark"
 * arrives (up to 20 s). Return: whether a registration listing @port came
 * before it.
 */
static bool registered_before_mark(int holder, int port)
{
	uint64_t until = now_ns() + 20000000000ull;
	bool seen = false;
	uint8_t buf[1500];

	while (now_ns() < until) {
		struct pollfd p = {.fd = holder, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(holder, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 4 && !memcmp(buf, "mark", 4))
			return seen;
		seen = seen || lists(buf, n, port);
	}
	return false;
}

/**
 * psp_host__join_announces_at_once() - While another program holds the
 * PSP port (here a plain socket of the test), this process's receiver
 * stands by; each socket that joins is registered with the holder before
 * homa_open() returns: a datagram the test sends right after homa_open()
 * reaches the holder after the registration listing the new port. (The
 * receiver's own announcements come every 500 ms, so a holder learned of
 * a new socket only then, and dropped its first packets as no_port.)
 */
static void psp_host__join_announces_at_once(void **state)
{
	struct sockaddr_in at = {.sin_family = AF_INET, .sin_port = htons(psp_port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons(psp_port)};
	int holder = socket(AF_INET, SOCK_DGRAM, 0), marker = socket(AF_INET, SOCK_DGRAM, 0);
	static struct crypto_echo e[3];  /* static: see close_all() */
	bool ok[3];

	(void)state;
	assert_int_equal(bind(holder, (struct sockaddr *)&any, sizeof(any)), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ep_open(&e[i], false, psp_port), 0);
		assert_int_equal(sendto(marker, "mark", 4, 0, (struct sockaddr *)&at, sizeof(at)), 4);
		assert_int_equal(host().owner, 0);
		ok[i] = registered_before_mark(holder, e[i].port);
		if (!ok[i])
			fprintf(stderr, "socket %d (port %d): registered only later\n", i, e[i].port);
	}
	for (int i = 2; i >= 0; i--)
		ep_close(&e[i]);
	close(marker);
	close(holder);
	assert_true(ok[0] && ok[1] && ok[2]);
}

/** Keys and port of one side, passed between the processes. */
struct offer {
	int port;
	uint32_t spi;
	uint8_t key[16];
};

/** offer_of() - Issue @e's SPI and key for the other process. */
static struct offer offer_of(struct crypto_echo *e)
{
	struct offer o = {.port = e->port};

	assert_int_equal(homa_encrypt_rx_issue(e->s, &o.spi, o.key), 0);
	return o;
}

/** take() - Install the other process's offer @o in @e. */
static void take(struct crypto_echo *e, const struct offer *o)
{
	struct sockaddr_storage sa = crypto_dst(o->port);

	assert_int_equal(homa_encrypt_tx_add(e->s, (struct sockaddr *)&sa, o->spi, o->key, 0), 0);
}

/** What psp_host__two_processes() holds open, for two_processes_end(). */
static struct {
	struct crypto_echo c;
	int to_child, from_child;
	pid_t pid;
} P = {.to_child = -1, .from_child = -1};

/**
 * child() - The second process: opens an echo server with the PSP port
 * set and writes its port on @out; then for every client offer read from
 * @in installs it and answers with an SPI and key issued for that client
 * alone (two senders with one SPI would repeat its IVs), until @in
 * closes. Exits 0, or 1 on any failure (no cmocka in the child).
 */
static void child(int in, int out)
{
	struct offer mine = {0}, theirs;
	struct crypto_echo s;

	if (ep_open(&s, true, psp_port))
		_exit(1);
	mine.port = s.port;
	if (write(out, &mine, sizeof(mine)) != sizeof(mine))
		_exit(1);
	while (read(in, &theirs, sizeof(theirs)) == sizeof(theirs)) {
		struct sockaddr_storage sa = crypto_dst(theirs.port);
		int err = homa_encrypt_tx_add(s.s, (struct sockaddr *)&sa, theirs.spi, theirs.key, 0);

		if (!err)
			err = homa_encrypt_rx_issue(s.s, &mine.spi, mine.key);
		if (err || write(out, &mine, sizeof(mine)) != sizeof(mine)) {
			fprintf(stderr, "child: offer for port %d: %d\n", theirs.port, err);
			_exit(1);
		}
	}
	ep_close(&s);
	_exit(0);
}

/**
 * client_round() - Give the child @c's offer, take the child's answer
 * (the server's association is installed both ways before the first
 * packet), run RPCs to @srv_port.
 */
static void client_round(struct crypto_echo *c, int srv_port)
{
	struct offer mine = offer_of(c), srv;

	assert_int_equal(write(P.to_child, &mine, sizeof(mine)), sizeof(mine));
	assert_int_equal(read(P.from_child, &srv, sizeof(srv)), sizeof(srv));
	assert_int_equal(srv.port, srv_port);
	take(c, &srv);
	for (int i = 0; i < 3; i++) {
		int err = crypto_rpc(c->s, srv_port, i ? 200000 : 100);

		if (err) {
			fprintf(stderr, "RPC %d failed: %d\n", i, err);
			tell("client", c->s);
		}
		assert_int_equal(err, 0);
	}
}

/**
 * start_child() - Fork the second process with this process's receiver
 * running; it serves through child() (exec'd again under ASan, see the
 * file comment). Fills P's pipe ends and pid.
 */
static void start_child(void)
{
	int to_child[2], from_child[2];

	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	P.pid = fork();
	assert_true(P.pid >= 0);
	if (P.pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
#ifdef UNDER_ASAN
		char in[16], out[16], port[16];

		snprintf(in, sizeof(in), "%d", to_child[0]);
		snprintf(out, sizeof(out), "%d", from_child[1]);
		snprintf(port, sizeof(port), "%u", psp_port);
		execl("/proc/self/exe", "/proc/self/exe", "--child", in, out, port, (char *)NULL);
		_exit(1);
#endif
		child(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	P.to_child = to_child[1];
	P.from_child = from_child[0];
}

/**
 * psp_host__two_processes() - A server in a child process (forked while
 * this process's receiver runs) and a client here share the port: this
 * process holds it and learns the child's port by registration, and RPCs
 * complete. Then this process leaves (its
 * receiver stops), the child takes the port over, and a new client here
 * (standing by, registered with the child) completes RPCs again.
 */
static void psp_host__two_processes(void **state)
{
	uint64_t until = now_ns() + 20000000000ull;
	bool child_holds = false;
	struct offer srv;
	int status;

	(void)state;
	assert_int_equal(ep_open(&P.c, false, psp_port), 0);
	assert_int_equal(host().owner, 1);  /* this process holds the port */
	start_child();  /* with the receiver running: the child must start its own */
	assert_int_equal(read(P.from_child, &srv, sizeof(srv)), sizeof(srv));
	client_round(&P.c, srv.port);
	assert_true(host().forwarded > 0);  /* the requests, to the child's port */
	ep_close(&P.c);  /* our receiver stops; the child takes the port over */
	while (!child_holds && now_ns() < until) {
		usleep(300000);  /* the child tries every 100 ms */
		assert_int_equal(ep_open(&P.c, false, psp_port), 0);
		child_holds = host().owner == 0;
		if (!child_holds)
			ep_close(&P.c);
	}
	assert_true(child_holds);
	client_round(&P.c, srv.port);  /* the child forwards our responses */
	ep_close(&P.c);
	close(P.to_child);
	P.to_child = -1;
	assert_int_equal(waitpid(P.pid, &status, 0), P.pid);
	P.pid = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/**
 * two_processes_end() - Teardown of psp_host__two_processes(), also after
 * a failure: close the client (close_all()) and the pipes, kill and reap
 * the child, so that no socket of it outlives the test.
 */
static int two_processes_end(void **state)
{
	close_all(state);
	if (P.to_child >= 0)
		close(P.to_child);
	if (P.from_child >= 0)
		close(P.from_child);
	P.to_child = P.from_child = -1;
	if (P.pid > 0) {
		kill(P.pid, SIGKILL);
		waitpid(P.pid, NULL, 0);
	}
	P.pid = 0;
	return 0;
}

/**
 * unprivileged() - Run as user nobody (exec'd by
 * psp_host__needs_privilege()): homa_open() with the PSP port set must
 * say HOMA_EPERM (IP_TRANSPARENT needs CAP_NET_ADMIN). Exits 0 if it
 * did, 1 otherwise.
 */
static void unprivileged(void)
{
	struct crypto_echo e;
	int err;

	if (setgid(65534) || setuid(65534) || geteuid() == 0)
		_exit(1);
	err = ep_open(&e, false, psp_port);
	if (err != HOMA_EPERM) {
		fprintf(stderr, "unprivileged homa_open: %d (%s), expected HOMA_EPERM\n", err,
			homa_strerror(err));
		_exit(1);
	}
	_exit(0);
}

/**
 * psp_host__needs_privilege() - A process without CAP_NET_ADMIN (this
 * program again, as user nobody) gets HOMA_EPERM from homa_open() with
 * the PSP port set, and no socket.
 */
static void psp_host__needs_privilege(void **state)
{
	char port[16];
	int status;
	pid_t pid;

	(void)state;
	snprintf(port, sizeof(port), "%u", psp_port);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "/proc/self/exe", "--unprivileged", port, (char *)NULL);
		_exit(2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/** setup() - Pick the PSP port of the run; skip without root. */
static int setup(void **state)
{
	(void)state;
	psp_port = crypto_free_udp_port();
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(psp_host__two_processes, two_processes_end),
		cmocka_unit_test_teardown(psp_host__two_sockets_share, close_all),
		cmocka_unit_test_teardown(psp_host__hostile, close_all),
		cmocka_unit_test_teardown(psp_host__ipv6, close_all),
		cmocka_unit_test_teardown(psp_host__burst, close_all),
		cmocka_unit_test_teardown(psp_host__join_announces_at_once, close_all),
		cmocka_unit_test(psp_host__needs_privilege),
	};

	if (argc == 5 && !strcmp(argv[1], "--child")) {  /* start_child() under ASan */
		psp_port = (uint16_t)atoi(argv[4]);
		child(atoi(argv[2]), atoi(argv[3]));
	}
	if (argc == 3 && !strcmp(argv[1], "--unprivileged")) {
		psp_port = (uint16_t)atoi(argv[2]);
		unprivileged();
	}
	if (geteuid() != 0) {
		printf("skipped: needs root (IP_TRANSPARENT)\n");
		return 77;
	}
	setenv("HOMA_PSP_STEER", "off", 1);  /* the receiver, not kernel steering (test_psp_steer.c) */
	return cmocka_run_group_tests(tests, setup, NULL);
}
