/* SPDX-License-Identifier: MIT */
/**
 * @file psp_host.h
 * Internals of the host's PSP receiver (psp_host.c, psp_fwd.c): one UDP
 * socket per host on the PSP port (HOMA_PSP_UDP_PORT by default), held by
 * one process at a time, that hands each sealed packet to the local Homa
 * socket its clear common header names.
 */
#ifndef HOMA_RT_PSP_HOST_H
#define HOMA_RT_PSP_HOST_H

#include <netinet/in.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>

#include "homa/encrypt.h"

/** Registration datagrams start with these bytes, then 16-bit ports (big-endian). */
#define PSP_HOST_MAGIC "HPSR"
#define PSP_HOST_MAGIC_LEN 4
/** A registered port is served this long after its last registration. */
#define PSP_HOST_REG_TTL_NS 2000000000ull
/** Processes re-register their ports this often. */
#define PSP_HOST_REG_EVERY_NS 500000000ull
/** Shortest sealed packet worth dispatching: PSP header, Homa common header, ICV. */
#define PSP_HOST_MIN_LEN (HOMA_PSP_HDR_LEN + HOMA_PSP_CRYPT_OFF * 4 + HOMA_PSP_ICV_LEN)

/** Datagrams read (recvmmsg) and forwarded (sendmmsg) per system call. */
#define PSP_HOST_BATCH 16
/** Largest datagram the receiver reads (bigger ones are counted as truncated). */
#define PSP_HOST_MAX_DGRAM 65536

/** Control data of one datagram: its IPv4 and/or IPv6 packet info. */
union psp_host_cmsg {
	struct cmsghdr h;
	uint8_t b[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(struct in_pktinfo))];
};

/** Forwards queued by psp_host_dispatch(), sent together by psp_host_flush(). */
struct psp_host_out {
	int n;                                          /**< queued */
	struct mmsghdr m[PSP_HOST_BATCH];
	struct iovec iov[PSP_HOST_BATCH];               /**< point into the read batch */
	struct sockaddr_storage to[PSP_HOST_BATCH];
	union psp_host_cmsg c[PSP_HOST_BATCH];          /**< source: the original sender */
};

/** The receiving side of the receiver thread (owned by it). */
struct psp_host_rx {
	int fd;                         /**< bound to the PSP port, IP_TRANSPARENT */
	int family;                     /**< fd's: AF_INET6 (dual-stack), or AF_INET without IPv6 */
	uint16_t port;                  /**< the PSP port */
	const uint64_t *local;          /**< this process's Homa ports (bitmap, atomic words) */
	const int *stop;                /**< atomic: set when the receiver stops */
	uint64_t *seen;                 /**< [65536]: other processes' ports, live until */
	struct psp_host_out out;        /**< forwards of the current batch */
	struct homa_psp_host_stats st;  /**< counted since the last hand-over to the totals */
};

/**
 * psp_host_dispatch() - Handle one datagram @p of @len bytes that @src
 * sent to address @dst (the PSP port; @dst's port is ignored; both of
 * @r->fd's family: IPv4 arrives on a dual-stack socket as v4-mapped IPv6)
 * at CLOCK_MONOTONIC @now: take a registration (from loopback only:
 * 127.0.0.0/8 or ::1), queue a sealed packet's forward to its socket in
 * @r->out (@p must stay valid until psp_host_flush()), or count why not
 * (not_psp, truncated, no_port).
 */
void psp_host_dispatch(struct psp_host_rx *r, const uint8_t *p, size_t len,
		       const struct sockaddr_storage *src, const struct sockaddr_storage *dst,
		       uint64_t now);

/**
 * psp_host_flush() - Send the forwards queued in @r->out (sendmmsg, not
 * waiting for room), counting each as forwarded or send_errors; empties
 * the queue.
 */
void psp_host_flush(struct psp_host_rx *r);

/**
 * psp_host_drain() - Read up to PSP_HOST_BATCH datagrams from @r->fd into
 * @bufs (PSP_HOST_BATCH x PSP_HOST_MAX_DGRAM bytes) with one recvmmsg()
 * (@flags: MSG_WAITFORONE to sleep until the first, as long as the
 * socket's receive timeout), dispatch them and send the forwards with
 * one sendmmsg(). Dispatches nothing once *@r->stop is set.
 * Return: the number read, or -1 (errno: EAGAIN on timeout, EINTR...).
 */
int psp_host_drain(struct psp_host_rx *r, uint8_t *bufs, int flags);

/** psp_host_local_has() - Is @port set in the bitmap @bits (read atomically)? */
bool psp_host_local_has(const uint64_t *bits, uint16_t port);

#endif /* HOMA_RT_PSP_HOST_H */
