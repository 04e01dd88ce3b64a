/* SPDX-License-Identifier: MIT */
/**
 * @file test_psp_steer.c
 * Kernel steering of the PSP port (src/runtime/psp_steer.c) on the real
 * stack: sockets opened with udp_port set bind that port too and a BPF
 * program hands each sealed packet to the socket its clear header names,
 * with no receiver in between (its forwards stay 0): between sockets of
 * one process, of two processes, after a socket leaves the group (the
 * kernel reorders the group then), and the fallback to the receiver when
 * steering is turned off or the port is held without SO_REUSEPORT, and
 * the kernel's drops counted by reason. Needs
 * root (CAP_BPF, CAP_NET_ADMIN); the test uses a free port instead of
 * 1000. The second process is this program again (--child), exec'd: no
 * forked image with the first one's threads.
 */
#define _GNU_SOURCE
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "homa/encrypt.h"
#include "homa/homa.h"
#include "homa/obs.h"
#include "rt_helpers.h"

/** The PSP port of the run. */
static uint16_t psp_port;

/** Sockets of the current test (closed by close_all() after a failure too). */
static struct crypto_echo eps[5];

/** ep_open_at() - Open @e on @host (an echo server if @server) with the PSP port. */
static int ep_open_at(struct crypto_echo *e, bool server, const char *host)
{
	struct homa_encrypt_opts eo;
	struct homa_open_opts o;
	struct homa_settings st;

	crypto_opts_init(&o, &eo, &st, host, server);
	eo.udp_port = psp_port;
	return crypto_ep_open(e, &o, server);
}

/** ep_open() - ep_open_at() on 127.0.0.1. */
static int ep_open(struct crypto_echo *e, bool server)
{
	return ep_open_at(e, server, "127.0.0.1");
}

/** close_all() - Teardown: close what a test left open; steering back on. */
static int close_all(void **state)
{
	(void)state;
	for (int i = 0; i < 5; i++)
		crypto_echo_stop(&eps[i]);
	unsetenv("HOMA_PSP_STEER");
	return 0;
}

/** host() - This process's PSP port counters. */
static struct homa_psp_host_stats host(void)
{
	struct homa_psp_host_stats h;

	assert_int_equal(homa_encrypt_host_stats(&h), 0);
	return h;
}

/** opened() - Packets @e opened. */
static uint64_t opened(struct crypto_echo *e)
{
	struct homa_psp_stats st;

	assert_int_equal(homa_encrypt_stats(e->s, &st), 0);
	return st.opened;
}

/** rpcs() - 100 B and 200 kB RPCs from @c to @s; @s opened packets of them. */
static void rpcs(struct crypto_echo *c, struct crypto_echo *s)
{
	uint64_t before = opened(s);

	for (int i = 0; i < 3; i++)
		assert_int_equal(crypto_rpc(c->s, s->port, i ? 200000 : 100), 0);
	assert_true(opened(s) > before);
}

/** pair() - Associate client @c and server @s both ways. */
static void pair(struct crypto_echo *c, struct crypto_echo *s)
{
	crypto_associate(c->s, s->s, s->port);
	crypto_associate(s->s, c->s, c->port);
}

/**
 * psp_steer__no_hop() - Two servers and a client of one process: every
 * socket is steered, RPCs to both servers complete and no packet is
 * forwarded by a receiver (there is none: owner 0, forwarded 0).
 */
static void psp_steer__no_hop(void **state)
{
	struct crypto_echo *s1 = &eps[0], *s2 = &eps[1], *c = &eps[2];
	struct homa_psp_host_stats h;

	(void)state;
	assert_int_equal(ep_open(s1, true), 0);
	assert_int_equal(ep_open(s2, true), 0);
	assert_int_equal(ep_open(c, false), 0);
	pair(c, s1);
	pair(c, s2);
	rpcs(c, s1);
	rpcs(c, s2);
	rpcs(c, s1);
	h = host();
	assert_int_equal(h.steered, 3);
	assert_int_equal(h.sockets, 0);
	assert_int_equal(h.owner, 0);
	assert_int_equal(h.forwarded, 0);
	close_all(state);
	assert_int_equal(homa_encrypt_host_stats(&h), HOMA_ENOTSUP);
}

/**
 * psp_steer__leave() - Three servers join in turn; the first leaves, so
 * the kernel moves the last one into its place in the group: RPCs to the
 * other two still reach each of them (each opens its own), and a server
 * that joins after that is reached too.
 */
static void psp_steer__leave(void **state)
{
	struct crypto_echo *c = &eps[0], *s = &eps[1];

	(void)state;
	for (int i = 1; i <= 3; i++)
		assert_int_equal(ep_open(&eps[i], true), 0);
	assert_int_equal(ep_open(c, false), 0);
	for (int i = 1; i <= 3; i++)
		pair(c, &eps[i]);
	crypto_echo_stop(&s[0]);
	rpcs(c, &s[1]);
	rpcs(c, &s[2]);
	assert_int_equal(ep_open(&eps[4], true), 0);
	pair(c, &eps[4]);
	rpcs(c, &eps[4]);
	rpcs(c, &s[2]);
	assert_int_equal(host().steered, 4);
	assert_int_equal(host().forwarded, 0);
}

/**
 * psp_steer__fallback() - With HOMA_PSP_STEER=off a socket joins the
 * receiver (which binds the port without SO_REUSEPORT); a socket opened
 * next with steering on cannot join a group there and falls back to the
 * receiver too (steer_refused); RPCs between them go through the
 * receiver (forwarded > 0).
 */
static void psp_steer__fallback(void **state)
{
	struct crypto_echo *s = &eps[0], *c = &eps[1];
	struct homa_psp_host_stats h;

	(void)state;
	setenv("HOMA_PSP_STEER", "off", 1);
	assert_int_equal(ep_open(s, true), 0);
	unsetenv("HOMA_PSP_STEER");
	assert_int_equal(ep_open(c, false), 0);
	pair(c, s);
	rpcs(c, s);
	h = host();
	assert_int_equal(h.steered, 0);
	assert_int_equal(h.steer_refused, 1);
	assert_int_equal(h.sockets, 2);
	assert_int_equal(h.owner, 1);
	assert_true(h.forwarded > 0);
}

/**
 * psp_steer__ipv6() - IPv6 sockets (::1) and IPv4 ones (127.0.0.1) in one
 * group (the PSP port's sockets are dual-stack): RPCs of each family
 * reach their server, nothing is forwarded.
 */
static void psp_steer__ipv6(void **state)
{
	struct crypto_echo *s6 = &eps[0], *c6 = &eps[1], *s4 = &eps[2], *c4 = &eps[3];

	(void)state;
	assert_int_equal(ep_open_at(s6, true, "::1"), 0);
	assert_int_equal(ep_open_at(c6, false, "::1"), 0);
	assert_int_equal(ep_open(s4, true), 0);
	assert_int_equal(ep_open(c4, false), 0);
	crypto_associate_at(c6->s, s6->s, "::1", s6->port);
	crypto_associate_at(s6->s, c6->s, "::1", c6->port);
	pair(c4, s4);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(crypto_rpc_at(c6->s, "::1", s6->port, i ? 200000 : 100), 0);
		assert_int_equal(crypto_rpc(c4->s, s4->port, i ? 200000 : 100), 0);
	}
	assert_true(opened(s6) > 0 && opened(s4) > 0);
	assert_int_equal(host().steered, 4);
	assert_int_equal(host().forwarded, 0);
}

/** send_raw() - Send @len bytes of @p to the PSP port on 127.0.0.1 from a plain UDP socket, @n times. */
static void send_raw(const uint8_t *p, size_t len, int n)
{
	struct sockaddr_storage sa = crypto_dst(psp_port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	assert_true(fd >= 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(sendto(fd, p, len, 0, (struct sockaddr *)&sa, sizeof(struct sockaddr_in)),
				 (ssize_t)len);
	close(fd);
}

/** drops_reach() - Wait (at most 3 s) until the host's drop counts are @want; return them. */
static struct homa_psp_host_stats drops_reach(struct homa_psp_host_stats want)
{
	struct homa_psp_host_stats h = host();

	for (int i = 0; i < 300; i++) {
		if (h.not_psp >= want.not_psp && h.truncated >= want.truncated &&
		    h.no_port >= want.no_port)
			break;
		usleep(10000);
		h = host();
	}
	return h;
}

/**
 * psp_steer__drops_counted() - While sockets are steered, datagrams the
 * kernel drops reach homa_encrypt_host_stats() by reason: 3 cleartext
 * Homa packets (a common header naming the server, no PSP header) in
 * not_psp, 2 PSP packets shorter than PSP header, common header and ICV
 * in truncated, 4 full-size PSP packets for a Homa port no socket has in
 * no_port; nothing else moves, no receiver forwards, and honest RPCs
 * before and after complete. On the old code the counts stay 0.
 */
static void psp_steer__drops_counted(void **state)
{
	struct crypto_echo *s = &eps[0], *c = &eps[1];
	struct homa_psp_host_stats h0, h, want;
	uint8_t clear[100] = {0}, psp[100] = {0};
	uint16_t unknown = 1;

	(void)state;
	assert_int_equal(ep_open(s, true), 0);
	assert_int_equal(ep_open(c, false), 0);
	pair(c, s);
	rpcs(c, s);
	h0 = host();
	assert_int_equal(h0.steered, 2);
	clear[0] = 40000 >> 8;  /* common header: sport 40000, dport the server's */
	clear[1] = 40000 & 0xff;
	clear[2] = (uint8_t)(s->port >> 8);
	clear[3] = (uint8_t)s->port;
	send_raw(clear, sizeof(clear), 3);
	psp[0] = HOMA_PSP_NEXT_HDR;
	psp[HOMA_PSP_HDR_LEN + 2] = (uint8_t)(s->port >> 8);
	psp[HOMA_PSP_HDR_LEN + 3] = (uint8_t)s->port;
	send_raw(psp, HOMA_PSP_HDR_LEN + 28 + HOMA_PSP_ICV_LEN - 1, 2);
	while (unknown == s->port || unknown == c->port)
		unknown++;
	psp[HOMA_PSP_HDR_LEN + 2] = (uint8_t)(unknown >> 8);
	psp[HOMA_PSP_HDR_LEN + 3] = (uint8_t)unknown;
	send_raw(psp, sizeof(psp), 4);
	want = h0;
	want.not_psp += 3;
	want.truncated += 2;
	want.no_port += 4;
	h = drops_reach(want);
	assert_int_equal(h.not_psp, want.not_psp);
	assert_int_equal(h.truncated, want.truncated);
	assert_int_equal(h.no_port, want.no_port);
	assert_int_equal(h.forwarded, 0);
	assert_int_equal(h.owner, 0);
	rpcs(c, s);
	h = host();
	assert_int_equal(h.not_psp, want.not_psp);
	assert_int_equal(h.truncated, want.truncated);
	assert_int_equal(h.no_port, want.no_port);
}

/** Keys and port of one side, passed between the processes. */
struct offer {
	int port;
	uint32_t spi;
	uint8_t key[16];
};

/**
 * child() - The second process: an echo server with the PSP port; writes
 * its offer (port, SPI, key) on @out, installs the client's offer read
 * from @in, then waits for @in to close and exits 0 if its socket was
 * steered and no receiver forwarded anything, 1 otherwise.
 */
static void child(int in, int out)
{
	struct offer mine = {0}, theirs;
	struct homa_psp_host_stats h;
	struct sockaddr_storage sa;
	struct crypto_echo *s = &eps[0];
	char c;

	if (ep_open(s, true) || homa_encrypt_rx_issue(s->s, &mine.spi, mine.key))
		_exit(1);
	mine.port = s->port;
	if (write(out, &mine, sizeof(mine)) != sizeof(mine) ||
	    read(in, &theirs, sizeof(theirs)) != sizeof(theirs))
		_exit(1);
	sa = crypto_dst(theirs.port);
	if (homa_encrypt_tx_add(s->s, (struct sockaddr *)&sa, theirs.spi, theirs.key, 0))
		_exit(1);
	while (read(in, &c, 1) > 0)
		;
	if (homa_encrypt_host_stats(&h) || h.steered != 1 || h.forwarded || opened(s) == 0)
		_exit(1);
	crypto_echo_stop(s);
	_exit(0);
}

/**
 * psp_steer__two_processes() - A server in another process and a client
 * here, both steered: RPCs complete, neither process forwards a packet.
 */
static void psp_steer__two_processes(void **state)
{
	int to[2], from[2], status;
	struct offer srv, mine = {0};
	struct sockaddr_storage sa;
	struct crypto_echo *c = &eps[0];
	char a[16], b[16], port[16];
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(to), 0);
	assert_int_equal(pipe(from), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		snprintf(a, sizeof(a), "%d", to[0]);
		snprintf(b, sizeof(b), "%d", from[1]);
		snprintf(port, sizeof(port), "%u", psp_port);
		execl("/proc/self/exe", "/proc/self/exe", "--child", a, b, port, (char *)NULL);
		_exit(2);
	}
	close(to[0]);
	close(from[1]);
	assert_int_equal(ep_open(c, false), 0);
	assert_int_equal(read(from[0], &srv, sizeof(srv)), sizeof(srv));
	mine.port = c->port;
	assert_int_equal(homa_encrypt_rx_issue(c->s, &mine.spi, mine.key), 0);
	assert_int_equal(write(to[1], &mine, sizeof(mine)), sizeof(mine));
	sa = crypto_dst(srv.port);
	assert_int_equal(homa_encrypt_tx_add(c->s, (struct sockaddr *)&sa, srv.spi, srv.key, 0), 0);
	usleep(100000);  /* the child installs our offer */
	for (int i = 0; i < 3; i++)
		assert_int_equal(crypto_rpc(c->s, srv.port, i ? 200000 : 100), 0);
	assert_int_equal(host().steered, 1);
	assert_int_equal(host().forwarded, 0);
	close(to[1]);
	close(from[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/** record_path() - The steering record of the run's port in this namespace. */
static void record_path(char *out, size_t cap)
{
	struct stat ns;

	if (stat("/proc/self/ns/net", &ns) < 0)
		ns.st_ino = 0;
	snprintf(out, cap, "/dev/shm/homa-psp-steer-%lu-%u", (unsigned long)ns.st_ino, psp_port);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(psp_steer__no_hop, close_all),
		cmocka_unit_test_teardown(psp_steer__leave, close_all),
		cmocka_unit_test_teardown(psp_steer__two_processes, close_all),
		cmocka_unit_test_teardown(psp_steer__ipv6, close_all),
		cmocka_unit_test_teardown(psp_steer__drops_counted, close_all),
		cmocka_unit_test_teardown(psp_steer__fallback, close_all),
	};
	char rec[96];
	int rc;

	if (argc == 5 && !strcmp(argv[1], "--child")) {
		psp_port = (uint16_t)atoi(argv[4]);
		child(atoi(argv[2]), atoi(argv[3]));
	}
	if (geteuid() != 0) {
		printf("skipped: needs root (CAP_BPF, CAP_NET_ADMIN)\n");
		return 77;
	}
	psp_port = crypto_free_udp_port();
	unsetenv("HOMA_PSP_STEER");
	homa_log_set_level(HOMA_LOG_INFO);  /* which path each socket took, for a failure's log */
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	record_path(rec, sizeof(rec));
	unlink(rec);
	return rc;
}
