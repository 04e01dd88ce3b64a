/* SPDX-License-Identifier: MIT */
/**
 * @file steer.h
 * Separate kernel receive queues for the UDP driver: two UDP sockets bound
 * to the same address and port form one SO_REUSEPORT group, and a classic
 * BPF program attached to the group (SO_ATTACH_REUSEPORT_CBPF, which needs
 * no privilege) puts each arriving datagram in the fast socket's queue
 * when the priority in its IP header's DSCP bits is high enough, in the
 * other's otherwise. The driver reads the fast queue first, so a short
 * message's datagram does not wait behind the bulk or forged datagrams
 * ahead of it in one queue.
 */
#ifndef HOMA_IO_STEER_H
#define HOMA_IO_STEER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "driver.h"

/** Index of the fast queue's socket (it also sends). */
#define HOMA_STEER_FAST 0
/** Index of the other queue's socket. */
#define HOMA_STEER_SLOW 1

/**
 * homa_steer_program() - Build the steering program for packets at least
 * @fast_prio (1..7) into @insns (room for HOMA_STEER_INSNS): it reads the
 * IP version and the DSCP priority (the TOS byte >> 5 for IPv4, also for
 * IPv4 peers of a dual-stack socket; the traffic class >> 5 for IPv6) at
 * the network header (SKF_NET_OFF) and returns HOMA_STEER_FAST or
 * HOMA_STEER_SLOW, the index of the socket in the group.
 * Return: the number of instructions.
 */
#define HOMA_STEER_INSNS 12
int homa_steer_program(uint8_t fast_prio, void *insns);

/**
 * homa_steer_attach() - Attach the program for @fast_prio to the
 * SO_REUSEPORT group of @fd (any member).
 * Return: 0, or the errno of the refusal (the kernel lacks the feature).
 */
int homa_steer_attach(int fd, uint8_t fast_prio);

/**
 * homa_steer_join() - Make @fd0, bound alone to its port (which made sure
 * no other socket holds the port), the first member of an SO_REUSEPORT
 * group, and bind @fd1 to the same @addr (@len bytes, with the port
 * @fd0 got) as the second member.
 * Return: 0, or the errno of the step that failed (the caller goes on
 * with @fd0 alone).
 */
int homa_steer_join(int fd0, int fd1, const struct sockaddr_storage *addr, socklen_t len);

/**
 * homa_steer_epoll() - An epoll descriptor that is readable when either of
 * @fds (two sockets) has a datagram or an error queued, for the runtime
 * to wait on as the driver's fd.
 * Return: the descriptor, or -errno.
 */
int homa_steer_epoll(const int *fds);

#endif /* HOMA_IO_STEER_H */
