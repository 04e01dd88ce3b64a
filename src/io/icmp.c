/* SPDX-License-Identifier: MIT */
/**
 * @file icmp.c
 * ICMP destination-unreachable reports read from a socket's error queue
 * (IP_RECVERR / IPV6_RECVERR): the Linux module answers a Homa packet for
 * a port where no socket serves with ICMP port unreachable, and a host
 * without Homa answers with protocol unreachable (ICMPv6: parameter
 * problem, unrecognized next header). The kernel queues each report with
 * the original destination as the message's address and the start of our
 * packet (from the Homa header on) as its data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "batch.h"
#include "homa/psp.h"
#include "driver.h"
#include "icmp.h"

/** ICMP and ICMPv6 types and codes used here (RFC 792, RFC 4443). */
#define ICMP_UNREACH 3
#define ICMP_UNREACH_PROTO 2
#define ICMP_UNREACH_PORT 3
#define ICMP6_UNREACH 1
#define ICMP6_UNREACH_PORT 4
#define ICMP6_PARAMPROB 4
#define ICMP6_PARAMPROB_NEXTHDR 1

/** homa_io_icmp_enable() - See icmp.h. */
int homa_io_icmp_enable(int fd, int family)
{
	int on = 1;

	if (family == AF_INET6)
		return setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof(on));
	return setsockopt(fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on));
}

/** homa_io_icmp_kind() - See icmp.h. */
int homa_io_icmp_kind(int origin, int type, int code)
{
	if (origin == SO_EE_ORIGIN_ICMP && type == ICMP_UNREACH)
		return code == ICMP_UNREACH_PORT ? HOMA_UNREACH_PORT :
		       code == ICMP_UNREACH_PROTO ? HOMA_UNREACH_PROTO : 0;
	if (origin == SO_EE_ORIGIN_ICMP6 && type == ICMP6_UNREACH && code == ICMP6_UNREACH_PORT)
		return HOMA_UNREACH_PORT;
	if (origin == SO_EE_ORIGIN_ICMP6 && type == ICMP6_PARAMPROB &&
	    code == ICMP6_PARAMPROB_NEXTHDR)
		return HOMA_UNREACH_PROTO;
	return 0;
}

/** ee_of() - The extended error in message @h's control data, or NULL. */
static const struct sock_extended_err *ee_of(struct msghdr *h)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c))
		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
		    (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR))
			return (const struct sock_extended_err *)CMSG_DATA(c);
	return NULL;
}

/**
 * ours() - Whether the @len quoted bytes at @q are a packet from @port:
 * a Homa packet whose common header names it, or one sealed in PSP
 * (encrypted sockets: the PSP header, then the clear common header).
 */
static bool ours(const uint8_t *q, size_t len, uint16_t port)
{
	if (len >= HOMA_COMMON_LEN && (uint16_t)((q[0] << 8) | q[1]) == port)
		return true;
	return len >= HOMA_PSP_HDR_LEN + HOMA_COMMON_LEN && q[0] == HOMA_PSP_NEXT_HDR && q[1] == 1 &&
	       (uint16_t)((q[HOMA_PSP_HDR_LEN] << 8) | q[HOMA_PSP_HDR_LEN + 1]) == port;
}

/**
 * take_one() - Read one report from @fd's error queue into @out.
 * Return: 1 if it is an unreachable report quoting a packet from @port
 * (ours()),
 * 0 if it was something else (discarded), -1 if the queue is empty.
 */
static int take_one(int fd, uint16_t port, struct homa_io_unreach *out)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_storage name;
	struct iovec iov = {out->quoted, sizeof(out->quoted)};
	struct msghdr h = {.msg_name = &name, .msg_namelen = sizeof(name), .msg_iov = &iov,
			   .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf)};
	const struct sock_extended_err *ee;
	ssize_t n;

	do
		n = recvmsg(fd, &h, MSG_ERRQUEUE | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	ee = ee_of(&h);
	out->len = (size_t)n;
	out->kind = ee ? homa_io_icmp_kind(ee->ee_origin, ee->ee_type, ee->ee_code) : 0;
	if (!out->kind || !ours(out->quoted, out->len, port) ||
	    homa_io_addr_from_sockaddr((struct sockaddr *)&name, &out->dst, NULL) < 0)
		return 0;
	return 1;
}

/** homa_io_icmp_drain() - See icmp.h. */
int homa_io_icmp_drain(int fd, uint16_t port, struct homa_io_unreach *out, int max)
{
	struct homa_io_unreach spare;
	int k = 0, r;

	/* the whole queue is read (reports past @max are dropped): poll()
	 * reports POLLERR while anything is left in it */
	while ((r = take_one(fd, port, k < max ? &out[k] : &spare)) >= 0)
		if (r && k < max)
			k++;
	return k;
}

/** homa_io_icmp_take() - See icmp.h. */
int homa_io_icmp_take(struct homa_io_receiver *rx, struct homa_io_sender *tx, uint16_t port,
		      struct homa_io_unreach *out, int max)
{
	if ((!rx->error && !tx->error) || max < 1)
		return 0;
	rx->error = 0;
	tx->error = 0;
	return homa_io_icmp_drain(rx->fd, port, out, max);
}
