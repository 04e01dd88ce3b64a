/* SPDX-License-Identifier: MIT */
/**
 * @file test_steer_fallback.c
 * Tests of the UDP driver's fallback to one receive queue: a seccomp
 * filter (this thread only) makes the kernel refuse one setsockopt()
 * step, SO_ATTACH_REUSEPORT_CBPF (the steering program) or SO_REUSEPORT
 * (the group itself, which known peers' sockets need too); the driver
 * still opens, reports rx_queues 1, and every packet sent to it arrives.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "driver.h"
#include "helpers.h"
#include "homa/homa.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/** Packets sent to the driver in each case. */
#define PKTS 50

/**
 * refuse_sockopt() - From now on this thread's setsockopt(SOL_SOCKET,
 * @optname) fails with EPERM (seccomp; other calls are untouched).
 * Return: 0, or -1 if the kernel has no seccomp filters.
 */
static int refuse_sockopt(int optname)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setsockopt, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOL_SOCKET, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)optname, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/**
 * open_refused() - In a child process whose setsockopt(@optname) is
 * refused: open a driver that asks for two queues and known peers, check
 * rx_queues is 1, send it PKTS packets and receive them all. Exit status:
 * 0 ok, 77 no seccomp, else the step that failed.
 */
static int open_refused(int optname)
{
	struct homa_driver_config c;
	struct homa_driver *s, *b;
	static uint8_t pkt[100];
	struct homa_io_tx tx;
	int got = 0;

	memset(&c, 0, sizeof(c));
	if (homa_sockaddr_parse("127.0.0.1", 0, &c.bind, &c.bind_len))
		return 1;
	c.batch = 16;
	c.max_packet = 1500;
	if (homa_driver_open(HOMA_IO_UDP, &c, &s))
		return 2;
	if (refuse_sockopt(optname))
		return 77;
	c.rx_fast_prio = 5;
	c.known_peers = 4;
	c.stranger_budget = 64;
	if (homa_driver_open(HOMA_IO_UDP, &c, &b))
		return 3;
	if (b->c.rx_queues != 1)
		return 4;
	b->ops->know(b, &s->local, s->port);
	tx = (struct homa_io_tx){.data = pkt, .len = sizeof(pkt), .dst = homa_addr_ipv4(0x7f000001u),
				 .dport = b->port, .priority = 7};
	for (int i = 0; i < PKTS; i++)
		if (s->ops->send(s, &tx, 1) != 1)
			return 5;
	for (int64_t end = test_now_ms() + 5000; got < PKTS && test_now_ms() < end;) {
		struct pollfd p = {.fd = b->fd, .events = POLLIN};
		struct homa_io_rx *rx;
		int n;

		poll(&p, 1, 10);
		n = b->ops->recv(b, &rx);
		if (n < 0)
			return 6;
		got += n;
	}
	if (got != PKTS)
		return 7;
	if (optname == SO_REUSEPORT && b->c.rx_known_peers != 0)
		return 8;
	homa_driver_close(b);
	homa_driver_close(s);
	return 0;
}

/**
 * udp_open__one_queue_when_kernel_refuses() - SO_ATTACH_REUSEPORT_CBPF
 * refused: one queue, packets arrive; SO_REUSEPORT refused: one queue,
 * no known peers' queues (the peer named known stays a stranger),
 * packets arrive.
 */
static void udp_open__one_queue_when_kernel_refuses(void **state)
{
	static const int steps[] = {SO_ATTACH_REUSEPORT_CBPF, SO_REUSEPORT};

	(void)state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		pid_t pid = fork();
		int st = 0;

		assert_true(pid >= 0);
		if (pid == 0)
			_exit(open_refused(steps[i]));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == 77)
			skip();
		if (WEXITSTATUS(st))
			fail_msg("setsockopt %d refused: step %d failed", steps[i], WEXITSTATUS(st));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(udp_open__one_queue_when_kernel_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
