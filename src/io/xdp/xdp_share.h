/* SPDX-License-Identifier: MIT */
/**
 * @file xdp_share.h
 * What the XDP drivers of one process share on an interface: the attached
 * program with its maps, and one UMEM per receive queue. Several Homa
 * sockets use one interface: each binds an AF_XDP socket of its own on
 * every queue it serves (XDP_SHARED_UMEM), and the program sends a packet
 * to the socket of its destination port and format on the queue it
 * arrived on (map homa_ports: {port, raw, queue} -> XSKMAP slot). The
 * first socket on an interface loads and attaches the program, the last
 * one to close detaches it.
 */
#ifndef HOMA_IO_XDP_SHARE_H
#define HOMA_IO_XDP_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "homa_xsk.h"

/** One interface's shared state (opaque; see xdp_share.c). */
struct homa_xdp_iface;

/** What one driver asks of homa_xdp_share_open(). */
struct homa_xdp_share_req {
	const char *ifname;
	int ifindex;
	uint32_t nq;       /**< queues 0..nq-1 */
	uint16_t port;     /**< Homa port the program sends to these sockets */
	bool raw;          /**< IP protocol 146 instead of UDP */
	uint32_t batch;    /**< most packets one peek returns */
};

/**
 * homa_xdp_share_open() - Bind @q[0..nq-1] (an AF_XDP socket per queue,
 * q[0] with a send ring) for @r->port on @r->ifname, loading and attaching
 * the program if this is the process's first socket there, and route the
 * port's packets to them. Thread-safe.
 * Return: 0 and *@out (pass it to homa_xdp_share_close()); else a homa
 * error (see homa_xsk_open() and homa_xdp_errno(); HOMA_EADDRINUSE also
 * when the port already has sockets on the interface or its 1024 socket
 * slots are taken), with a message on stderr and nothing left open.
 */
int homa_xdp_share_open(const struct homa_xdp_share_req *r, struct homa_xsk *q,
			struct homa_xdp_iface **out);

/**
 * homa_xdp_share_close() - Stop routing @r->port to @q, close its sockets
 * and, with the interface's last socket, detach the program and free the
 * UMEMs. Thread-safe; @f NULL does nothing.
 */
void homa_xdp_share_close(struct homa_xdp_iface *f, const struct homa_xdp_share_req *r,
			  struct homa_xsk *q);

#endif /* HOMA_IO_XDP_SHARE_H */
