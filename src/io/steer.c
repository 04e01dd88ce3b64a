/* SPDX-License-Identifier: MIT */
/**
 * @file steer.c
 * The UDP driver's receive queues by priority: an SO_REUSEPORT group of
 * two sockets and the classic BPF program that picks one for each
 * datagram (steer.h).
 *
 * Facts from the kernel this relies on: a classic program attached with
 * SO_ATTACH_REUSEPORT_CBPF runs at the socket lookup of each datagram
 * (reuseport_select_sock()), with the packet's data starting at the UDP
 * payload; loads at SKF_NET_OFF + k read the network header; its return
 * value indexes the group's sockets in the order they joined, and an
 * index out of range falls back to the hash. A socket that is bound alone
 * and then sets SO_REUSEPORT becomes the group's first member when a
 * second socket binds to its address with SO_REUSEPORT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "steer.h"

#ifndef SO_ATTACH_REUSEPORT_CBPF
#define SO_ATTACH_REUSEPORT_CBPF 51
#endif

/** homa_steer_program() - See steer.h. */
int homa_steer_program(uint8_t fast_prio, void *insns)
{
	/*
	 * A = first byte of the IP header; IPv6: priority = (A & 0x0f) >> 1
	 * (the traffic class's top three bits); IPv4: priority = TOS >> 5.
	 * Then fast if priority >= fast_prio. A load out of the packet ends
	 * the program with 0: the fast queue, read first (never happens for
	 * a datagram that reached UDP).
	 */
	const struct sock_filter prog[HOMA_STEER_INSNS] = {
		/* 0 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF),
		/* 1 */ BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 4),
		/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 4),
		/* 3 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF),
		/* 4 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x0f),
		/* 5 */ BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 1),
		/* 6 */ BPF_JUMP(BPF_JMP | BPF_JA, 2, 0, 0),
		/* 7 */ BPF_STMT(BPF_LD | BPF_B | BPF_ABS, (uint32_t)SKF_NET_OFF + 1),
		/* 8 */ BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 5),
		/* 9 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, fast_prio, 0, 1),
		/* 10 */ BPF_STMT(BPF_RET | BPF_K, HOMA_STEER_FAST),
		/* 11 */ BPF_STMT(BPF_RET | BPF_K, HOMA_STEER_SLOW),
	};

	memcpy(insns, prog, sizeof(prog));
	return HOMA_STEER_INSNS;
}

/** homa_steer_attach() - See steer.h. */
int homa_steer_attach(int fd, uint8_t fast_prio)
{
	struct sock_filter insns[HOMA_STEER_INSNS];
	struct sock_fprog prog = {.len = (unsigned short)homa_steer_program(fast_prio, insns),
				  .filter = insns};

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) < 0)
		return errno;
	return 0;
}

/** homa_steer_join() - See steer.h. */
int homa_steer_join(int fd0, int fd1, const struct sockaddr_storage *addr, socklen_t len)
{
	int on = 1;

	if (setsockopt(fd0, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0 ||
	    setsockopt(fd1, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0 ||
	    bind(fd1, (const struct sockaddr *)addr, len) < 0)
		return errno;
	return 0;
}

/** homa_steer_epoll() - See steer.h. */
int homa_steer_epoll(const int *fds)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return -errno;
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = (uint32_t)i};

		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) < 0) {
			int err = errno;

			close(ep);
			return -err;
		}
	}
	return ep;
}
