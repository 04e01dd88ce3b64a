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

/** Reports read from the error queue per recvmmsg() call. */
#define ICMP_BATCH 16

/**
 * Room for one report's control data: at least CMSG_SPACE() of the
 * extended error and the offender's address (CMSG_SPACE() is not an
 * integer constant expression for every compiler).
 */
#define ICMP_CTL_LEN (sizeof(struct cmsghdr) + sizeof(struct sock_extended_err) + \
		      sizeof(struct sockaddr_in6) + 2 * sizeof(size_t))

/** Where one report of a batch lands: its control data, address and quote. */
struct icmp_slot {
	_Alignas(struct cmsghdr) char ctl[ICMP_CTL_LEN];
	struct sockaddr_storage name;
	uint8_t quoted[sizeof(((struct homa_io_unreach *)0)->quoted)];
};

/**
 * keep() - Fill @out from report @h of @len quoted bytes in @slot.
 * Return: true if it is an unreachable report quoting a packet from
 * @port (ours()); false if it was something else (to be discarded).
 */
static bool keep(struct msghdr *h, struct icmp_slot *slot, size_t len, uint16_t port,
		 struct homa_io_unreach *out)
{
	const struct sock_extended_err *ee = ee_of(h);

	out->kind = ee ? homa_io_icmp_kind(ee->ee_origin, ee->ee_type, ee->ee_code) : 0;
	if (!out->kind || !ours(slot->quoted, len, port) ||
	    homa_io_addr_from_sockaddr((struct sockaddr *)&slot->name, &out->dst, NULL) < 0)
		return false;
	out->len = len;
	memcpy(out->quoted, slot->quoted, len);
	return true;
}

/**
 * take_batch() - Read up to ICMP_BATCH reports from @fd's error queue
 * with one recvmmsg(); keep in @out those that are ours (keep()), while
 * *@kept < @max, increasing *@kept; the others are dropped.
 * Return: reports read; fewer than ICMP_BATCH means the queue is empty.
 */
static int take_batch(int fd, uint16_t port, struct homa_io_unreach *out, int max, int *kept)
{
	struct icmp_slot slot[ICMP_BATCH];
	struct mmsghdr mm[ICMP_BATCH];
	struct iovec iov[ICMP_BATCH];
	int n;

	for (int i = 0; i < ICMP_BATCH; i++) {
		iov[i] = (struct iovec){slot[i].quoted, sizeof(slot[i].quoted)};
		mm[i].msg_hdr = (struct msghdr){.msg_name = &slot[i].name,
						.msg_namelen = sizeof(slot[i].name),
						.msg_iov = &iov[i], .msg_iovlen = 1,
						.msg_control = slot[i].ctl,
						.msg_controllen = sizeof(slot[i].ctl)};
		mm[i].msg_len = 0;
	}
	do
		n = recvmmsg(fd, mm, ICMP_BATCH, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
	while (n < 0 && errno == EINTR);
	for (int i = 0; i < n; i++) {
		size_t len = mm[i].msg_len < sizeof(slot[i].quoted) ? mm[i].msg_len
								     : sizeof(slot[i].quoted);

		if (*kept < max && keep(&mm[i].msg_hdr, &slot[i], len, port, &out[*kept]))
			(*kept)++;
	}
	return n < 0 ? 0 : n;
}

/** homa_io_icmp_drain() - See icmp.h. */
int homa_io_icmp_drain(int fd, uint16_t port, struct homa_io_unreach *out, int max)
{
	int k = 0;

	/* the whole queue is read (reports past @max are dropped): poll()
	 * reports POLLERR while anything is left in it */
	while (take_batch(fd, port, out, max, &k) == ICMP_BATCH)
		;
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
