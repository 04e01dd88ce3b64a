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
 * the socket the packet was forwarded to). Needs root (port and
 * IP_TRANSPARENT); the test uses a free port instead of 1000 so that it
 * never meets another program's receiver.
 */
#include <arpa/inet.h>
#include <pthread.h>
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
#include "rt_helpers.h"

/** The PSP port of the run. */
static uint16_t psp_port;

/** An encrypted socket and, for servers, its echo thread. */
struct ep {
	homa_socket *s;
	int port;
	pthread_t thread;
};

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/** free_udp_port() - A UDP port nothing is bound to at the moment. */
static uint16_t free_udp_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/** serve() - Echo every request until the socket closes. */
static void *serve(void *arg)
{
	static __thread uint8_t buf[300000];
	struct ep *e = arg;
	struct homa_message m;

	while (homa_recv(e->s, HOMA_RECV_REQUEST, 0, -1, &m) == 0) {
		size_t n = homa_message_copy(&m, 0, buf, m.length);

		/* child() installs a client's association while that client's
		 * first request may already be here: the reply waits for it
		 * (HOMA_ENOASSOC leaves the RPC unanswered, as homa.h says). */
		for (int i = 0; i < 10000 && homa_reply_buf(e->s, m.id, buf, n) == HOMA_ENOASSOC; i++)
			usleep(1000);
		homa_message_release(&m);
	}
	return NULL;
}

/** ep_open() - Open an encrypted socket on 127.0.0.1 sending to @udp_port. Return: as homa_open(). */
static int ep_open(struct ep *e, bool server, uint16_t udp_port)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;
	int err;

	homa_open_opts_default(&o);
	homa_encrypt_opts_default(&eo);
	homa_settings_default(&st);
	st.timeout_ticks = 3000;  /* loaded CI machines */
	o.settings = &st;
	o.bind_addr = "127.0.0.1";
	o.server = server;
	o.encrypt = &eo;
	eo.udp_port = udp_port;
	memset(e, 0, sizeof(*e));
	err = homa_open(&e->s, &o);
	if (err)
		return err;
	e->port = homa_local_port(e->s);
	if (server)
		assert_int_equal(pthread_create(&e->thread, NULL, serve, e), 0);
	return 0;
}

/** ep_close() - Close @e and join its thread. */
static void ep_close(struct ep *e, bool server)
{
	homa_close(e->s);
	if (server)
		pthread_join(e->thread, NULL);
}

/** host() - This process's receiver counters. */
static struct homa_psp_host_stats host(void)
{
	struct homa_psp_host_stats h;

	assert_int_equal(homa_encrypt_host_stats(&h), 0);
	return h;
}

/** psp() - @e's PSP counters. */
static struct homa_psp_stats psp(struct ep *e)
{
	struct homa_psp_stats st;

	assert_int_equal(homa_encrypt_stats(e->s, &st), 0);
	return st;
}

/**
 * psp_host__two_sockets_share() - Two servers and a client of one process
 * with the PSP port set: 100 B and 200 kB RPCs to both servers complete,
 * every packet the three opened came through the receiver (the client's
 * and servers' own ports receive nothing directly), which holds the port.
 */
static void psp_host__two_sockets_share(void **state)
{
	struct ep s1, s2, c;
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
	ep_close(&c, false);
	ep_close(&s2, true);
	ep_close(&s1, true);
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
static bool wait_for(struct ep *e, bool (*done)(struct ep *, const struct seen *),
		     const struct seen *base)
{
	uint64_t until = now_ns() + 20000000000ull;

	while (!done(e, base) && now_ns() < until)
		usleep(5000);
	return done(e, base);
}

/** Predicates of wait_for() over the receiver's and the server's counters. */
static bool one_not_psp(struct ep *e, const struct seen *b)
{
	(void)e;
	return host().not_psp > b->h.not_psp;
}
static bool one_truncated(struct ep *e, const struct seen *b)
{
	(void)e;
	return host().truncated > b->h.truncated;
}
static bool one_no_port(struct ep *e, const struct seen *b)
{
	(void)e;
	return host().no_port > b->h.no_port;
}
static bool one_opened(struct ep *e, const struct seen *b) { return psp(e).opened > b->s.opened; }
static bool one_replay(struct ep *e, const struct seen *b)
{
	return psp(e).rejected[HOMA_PSP_REJ_REPLAY] > b->s.rejected[HOMA_PSP_REJ_REPLAY];
}
static bool one_unknown(struct ep *e, const struct seen *b)
{
	return psp(e).rejected[HOMA_PSP_REJ_UNKNOWN_SPI] > b->s.rejected[HOMA_PSP_REJ_UNKNOWN_SPI];
}

/** snap() - The counters now. */
static struct seen snap(struct ep *e)
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
	uint16_t nobody = free_udp_port();
	homa_psp *a;
	struct ep s, c;
	struct seen b;
	uint32_t spi;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	(void)state;
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
	assert_int_equal(host().forwarded, b.h.forwarded);

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
	assert_int_equal(psp(&s).opened, b.s.opened);
	assert_int_equal(crypto_rpc(c.s, s.port, 200000), 0);
	homa_psp_free(a);
	close(fd);
	ep_close(&c, false);
	ep_close(&s, true);
}

/** Keys and port of one side, passed between the processes. */
struct offer {
	int port;
	uint32_t spi;
	uint8_t key[16];
};

/** offer_of() - Issue @e's SPI and key for the other process. */
static struct offer offer_of(struct ep *e)
{
	struct offer o = {.port = e->port};

	assert_int_equal(homa_encrypt_rx_issue(e->s, &o.spi, o.key), 0);
	return o;
}

/** take() - Install the other process's offer @o in @e. */
static void take(struct ep *e, const struct offer *o)
{
	struct sockaddr_storage sa = crypto_dst(o->port);

	assert_int_equal(homa_encrypt_tx_add(e->s, (struct sockaddr *)&sa, o->spi, o->key, 0), 0);
}

/**
 * child() - The second process: waits for a byte on @in, opens an echo
 * server with the PSP port set, sends its offer on @out, then installs
 * every client offer read from @in until @in closes. Exits 0, or 1 on
 * any failure (no cmocka in the child).
 */
static void child(int in, int out)
{
	struct offer mine = {0}, theirs;
	struct ep s;
	char go;

	if (read(in, &go, 1) != 1 || ep_open(&s, true, psp_port))
		_exit(1);
	mine.port = s.port;
	if (homa_encrypt_rx_issue(s.s, &mine.spi, mine.key) ||
	    write(out, &mine, sizeof(mine)) != sizeof(mine))
		_exit(1);
	while (read(in, &theirs, sizeof(theirs)) == sizeof(theirs)) {
		struct sockaddr_storage sa = crypto_dst(theirs.port);

		if (homa_encrypt_tx_add(s.s, (struct sockaddr *)&sa, theirs.spi, theirs.key, 0))
			_exit(1);
	}
	ep_close(&s, true);
	_exit(0);
}

/** client_round() - Exchange offers of @c with the child's @srv, run RPCs. */
static void client_round(struct ep *c, const struct offer *srv, int to_child)
{
	struct offer mine;

	take(c, srv);
	mine = offer_of(c);
	assert_int_equal(write(to_child, &mine, sizeof(mine)), sizeof(mine));
	for (int i = 0; i < 3; i++)
		assert_int_equal(crypto_rpc(c->s, srv->port, i ? 200000 : 100), 0);
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
	int to_child[2], from_child[2], status;
	uint64_t until = now_ns() + 20000000000ull;
	bool child_holds = false;
	struct offer srv;
	struct ep c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(to_child), 0);
	assert_int_equal(pipe(from_child), 0);
	assert_int_equal(ep_open(&c, false, psp_port), 0);
	assert_int_equal(host().owner, 1);  /* this process holds the port */
	pid = fork();  /* with the receiver running: the child must start its own */
	assert_true(pid >= 0);
	if (pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	assert_int_equal(write(to_child[1], "g", 1), 1);
	assert_int_equal(read(from_child[0], &srv, sizeof(srv)), sizeof(srv));
	client_round(&c, &srv, to_child[1]);
	assert_true(host().forwarded > 0);  /* the requests, to the child's port */
	ep_close(&c, false);  /* our receiver stops; the child takes the port over */
	while (!child_holds && now_ns() < until) {
		usleep(300000);  /* the child tries every 100 ms */
		assert_int_equal(ep_open(&c, false, psp_port), 0);
		child_holds = host().owner == 0;
		if (!child_holds)
			ep_close(&c, false);
	}
	assert_true(child_holds);
	client_round(&c, &srv, to_child[1]);  /* the child forwards our responses */
	ep_close(&c, false);
	close(to_child[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(from_child[0]);
}

/** setup() - Pick the PSP port of the run; skip without root. */
static int setup(void **state)
{
	(void)state;
	psp_port = free_udp_port();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(psp_host__two_processes),
		cmocka_unit_test(psp_host__two_sockets_share),
		cmocka_unit_test(psp_host__hostile),
	};

	if (geteuid() != 0) {
		printf("skipped: needs root (IP_TRANSPARENT)\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, setup, NULL);
}
