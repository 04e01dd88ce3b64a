/* SPDX-License-Identifier: MIT */
/**
 * @file uring_probe.h
 * homa-udp-probe's uring mode (uring_probe.c): a blocking UDP ping-pong
 * with ppoll/recvmmsg/sendmmsg against the same with io_uring.
 */
#ifndef HOMA_UDP_PROBE_URING_H
#define HOMA_UDP_PROBE_URING_H

/**
 * homa_probe_uring() - @rounds rounds of @count round trips in each arm
 * (arms alternating which goes first); prints each arm's figures and the
 * io_uring/poll ratios (median, range). Return: exit status: 0, 1 (a
 * failed call, a wrong echo, no answer within the watchdog time), 77
 * (io_uring unavailable: ENOSYS, EPERM by kernel.io_uring_disabled, or a
 * kernel before 5.17).
 */
int homa_probe_uring(int count, int rounds);

#endif /* HOMA_UDP_PROBE_URING_H */
