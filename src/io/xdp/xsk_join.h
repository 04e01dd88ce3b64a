/* SPDX-License-Identifier: MIT */
/**
 * @file xsk_join.h
 * AF_XDP sockets bound on a UMEM another process registered
 * (XDP_SHARED_UMEM with that process's socket), made with the plain
 * socket calls: libxdp shares only UMEMs it created itself.
 */
#ifndef HOMA_IO_XDP_XSK_JOIN_H
#define HOMA_IO_XDP_XSK_JOIN_H

#include <stdbool.h>

#include "homa_xsk.h"

/**
 * homa_xsk_join_socket() - Create @x with a receive ring (and a send ring
 * if @with_tx) and bind it to queue u->queue of @ifindex sharing the UMEM
 * of the bound socket @share_fd. Sets x->fd, x->rx, x->tx.
 * Return: 0 or -errno (nothing left open).
 */
int homa_xsk_join_socket(struct homa_xsk *x, struct homa_xsk_umem *u, int ifindex,
			 bool with_tx, int share_fd);

/**
 * homa_xsk_join_rings() - Map the queue's fill and completion rings into
 * @u through @fd, a socket homa_xsk_join_socket() bound.
 * Return: 0 or -errno (nothing left mapped).
 */
int homa_xsk_join_rings(struct homa_xsk_umem *u, int fd);

/** homa_xsk_join_close() - Unmap @x's rings and close it (unless it is u->share_fd). */
void homa_xsk_join_close(struct homa_xsk *x);

/** homa_xsk_join_release() - Unmap @u's rings and close u->share_fd. */
void homa_xsk_join_release(struct homa_xsk_umem *u);

#endif /* HOMA_IO_XDP_XSK_JOIN_H */
