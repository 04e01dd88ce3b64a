/* SPDX-License-Identifier: MIT */
/**
 * @file icmp.h
 * ICMP destination-unreachable reports from a socket's error queue (see
 * icmp.c), for the drivers that can receive them.
 */
#ifndef HOMA_IO_ICMP_H
#define HOMA_IO_ICMP_H

#include <stdint.h>

struct homa_io_unreach;

/**
 * homa_io_icmp_enable() - Ask the kernel to queue ICMP errors about
 * packets sent on @fd (IP_RECVERR, or IPV6_RECVERR for @family AF_INET6).
 * Return: 0, or -1 with errno set (the socket then works without them).
 */
int homa_io_icmp_enable(int fd, int family);

/**
 * homa_io_icmp_kind() - HOMA_UNREACH_PORT or HOMA_UNREACH_PROTO for an
 * error of @origin (SO_EE_ORIGIN_ICMP or _ICMP6), @type and @code; 0 for
 * any other error (host or net unreachable may pass: they are ignored).
 */
int homa_io_icmp_kind(int origin, int type, int code);

/**
 * homa_io_icmp_drain() - Empty @fd's error queue (one recvmmsg() per 16
 * reports); keep in @out (at most
 * @max >= 0 entries; the rest are read and dropped) each unreachable
 * report quoting at least a Homa common header sent from @port.
 * Return: reports kept.
 */
int homa_io_icmp_drain(int fd, uint16_t port, struct homa_io_unreach *out, int max);

struct homa_io_receiver;
struct homa_io_sender;

/**
 * homa_io_icmp_take() - A driver's unreach(): if a receive on @rx or a
 * send on @tx saw the socket error that announces ICMP reports (their
 * error fields), clear both and drain @rx's socket with
 * homa_io_icmp_drain(). Return: reports kept in @out (0 if none waited
 * or @max < 1).
 */
int homa_io_icmp_take(struct homa_io_receiver *rx, struct homa_io_sender *tx, uint16_t port,
		      struct homa_io_unreach *out, int max);

#endif /* HOMA_IO_ICMP_H */
