/* SPDX-License-Identifier: MIT */
/**
 * @file raw.c
 * The raw IP driver: Homa packets directly after the IP header, IP
 * protocol 146, as the Linux Homa module sends them. Needs CAP_NET_RAW.
 *
 * A raw socket receives every protocol-146 packet addressed to the host,
 * so the driver keeps only those whose Homa destination port is its own,
 * and those for other ports that carry an ack for its port (the Linux
 * module sends the acks it owes a host on packets to any port of it; the
 * engine acts on those acks only).
 * IPv4 raw sockets deliver the IP header too; it is stripped here (its
 * TOS byte gives the priority; IPv6 uses IPV6_RECVTCLASS). The
 * Homa port is reserved against other users by binding a UDP socket to
 * the same address and port (the kernel then also picks ephemeral ports
 * and reports "port in use" across processes).
 *
 * ICMP errors about our packets are queued on the socket (IP_RECVERR):
 * a Linux module host answers a packet for a port where nothing serves
 * with port unreachable, and the driver hands such reports on (unreach).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "batch.h"
#include "driver.h"
#include "homa/wire.h"
#include "icmp.h"

/** Room for the longest IPv4 header in front of each received packet. */
#define RAW_IPV4_HDR_MAX 60

/** A raw IP driver. */
struct raw_driver {
	struct homa_driver base;
	int reserve_fd;           /**< UDP socket holding the port */
	struct homa_io_sender tx;
	struct homa_io_receiver rx;
	struct homa_io_rx *pkts;
};

/**
 * open_raw() - Create the protocol-146 socket bound to the configured
 * address. Return: the fd, or HOMA_EPERM (with a message on stderr),
 * HOMA_ENOTSUP, HOMA_EIO.
 */
static int open_raw(const struct homa_driver_config *cfg)
{
	struct sockaddr_storage a = cfg->bind;
	int fd = socket(a.ss_family, SOCK_RAW | SOCK_CLOEXEC, HOMA_IPPROTO);

	if (fd < 0) {
		int err = homa_io_errno(errno);

		if (err == HOMA_EPERM)
			fprintf(stderr, "homa: the raw IP driver needs CAP_NET_RAW "
				"(run as root or grant the capability), or use the UDP driver\n");
		return err;
	}
	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	if (bind(fd, (struct sockaddr *)&a, cfg->bind_len) < 0) {
		int err = homa_io_errno(errno);

		close(fd);
		return err;
	}
	homa_driver_set_bufs(fd, cfg->rcvbuf);
	homa_io_icmp_enable(fd, a.ss_family);
	if (a.ss_family == AF_INET6)
		homa_io_recv_tos_enable(fd, AF_INET6);
	return fd;
}

/**
 * strip_ip() - Find the Homa packet in datagram @buf/@len of message @h:
 * after the IPv4 header on IPv4 sockets (@prio from its TOS byte), the
 * whole datagram on IPv6 ones (@prio from the IPV6_TCLASS control message).
 * Return: offset of the Homa header, or -1 if the datagram is malformed.
 */
static int strip_ip(int family, const uint8_t *buf, size_t len,
		    struct msghdr *h, uint8_t *prio)
{
	size_t ihl;

	if (family != AF_INET) {
		*prio = homa_io_cmsg_priority(h);
		return 0;
	}
	if (len < 20 || (buf[0] >> 4) != 4)
		return -1;
	*prio = homa_io_tos_priority(buf[1]);
	ihl = (size_t)(buf[0] & 0xf) * 4;
	return ihl < 20 || ihl > len ? -1 : (int)ihl;
}

/** raw_recv() - Receive a batch, keep packets for our port. See driver.h. */
static int raw_recv(struct homa_driver *base, struct homa_io_rx **out)
{
	struct raw_driver *d = (struct raw_driver *)base;
	int n = homa_io_receiver_recv(&d->rx), k = 0;

	if (n <= 0)
		return n;
	homa_io_count(&base->c.rx_calls, 1);
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &d->rx.msgs[i].msg_hdr;
		uint8_t *buf = d->rx.iovs[i].iov_base;
		size_t len = d->rx.msgs[i].msg_len;
		uint8_t prio = 0;
		int off = strip_ip(base->family, buf, len, h, &prio);
		homa_addr src;

		if (off < 0 || (h->msg_flags & MSG_TRUNC) || len - (size_t)off < 4 ||
		    homa_io_addr_from_sockaddr(h->msg_name, &src, NULL) < 0)
			continue;
		buf += off;
		len -= (size_t)off;
		if ((uint16_t)((buf[2] << 8) | buf[3]) != base->port &&
		    !homa_wire_acks_port(buf, len, base->port)) {
			homa_io_count(&base->c.rx_filtered, 1);
			continue;
		}
		d->pkts[k].data = buf;
		d->pkts[k].len = len;
		d->pkts[k].src = src;
		d->pkts[k].priority = prio;
		homa_io_count(&base->c.rx_bytes, len);
		homa_io_count(&base->c.rx_prio[prio], 1);
		k++;
	}
	homa_io_count(&base->c.rx_packets, (uint64_t)k);
	*out = d->pkts;
	return k;
}

/** raw_send() - See driver.h. */
static int raw_send(struct homa_driver *base, const struct homa_io_tx *pkts, int n)
{
	struct raw_driver *d = (struct raw_driver *)base;

	return homa_io_sender_send(&d->tx, pkts, n, &base->c);
}

/**
 * raw_unreach() - Take the ICMP unreachable reports about our packets,
 * once a receive saw the socket error that announces them. See driver.h.
 */
static int raw_unreach(struct homa_driver *base, struct homa_io_unreach *out, int max)
{
	struct raw_driver *d = (struct raw_driver *)base;

	return homa_io_icmp_take(&d->rx, &d->tx, base->port, out, max);
}

/** raw_close() - See driver.h. */
static void raw_close(struct homa_driver *base)
{
	struct raw_driver *d = (struct raw_driver *)base;

	if (base->fd >= 0)
		close(base->fd);
	if (d->reserve_fd >= 0)
		close(d->reserve_fd);
	homa_io_sender_free(&d->tx);
	homa_io_receiver_free(&d->rx);
	free(d->pkts);
	free(d);
}

static const struct homa_driver_ops raw_ops = {
	.name = "raw",
	.send = raw_send,
	.recv = raw_recv,
	.unreach = raw_unreach,
	.close = raw_close,
};

/** homa_raw_open() - See driver.h. */
int homa_raw_open(const struct homa_driver_config *cfg, struct homa_driver **out)
{
	struct raw_driver *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return HOMA_ENOMEM;
	d->base.ops = &raw_ops;
	d->base.family = cfg->bind.ss_family;
	d->base.fd = open_raw(cfg);
	d->reserve_fd = -1;
	if (d->base.fd < 0) {
		err = d->base.fd;
		raw_close(&d->base);
		return err;
	}
	d->reserve_fd = homa_io_reserve_port(cfg, &d->base.port);
	if (d->reserve_fd < 0) {
		err = d->reserve_fd;
		raw_close(&d->base);
		return err;
	}
	homa_io_addr_from_sockaddr((const struct sockaddr *)&cfg->bind, &d->base.local, NULL);
	d->base.tx_fd = d->base.fd;
	d->pkts = calloc(cfg->batch, sizeof(*d->pkts));
	d->base.max_rx = cfg->batch;  /* one packet per datagram */
	if (!d->pkts ||
	    homa_io_sender_init(&d->tx, d->base.fd, d->base.family, cfg->batch, false, true) ||
	    homa_io_receiver_init(&d->rx, d->base.fd, cfg->batch,
				  cfg->max_packet + RAW_IPV4_HDR_MAX)) {
		raw_close(&d->base);
		return HOMA_ENOMEM;
	}
	*out = &d->base;
	return 0;
}
