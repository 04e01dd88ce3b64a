/* SPDX-License-Identifier: MIT */
/**
 * @file xsk_join.c
 * AF_XDP sockets on another process's UMEM (see xsk_join.h). The ring
 * layout comes from XDP_MMAP_OFFSETS; since Linux 6.x the fill and
 * completion rings of a bound socket's pool can be mapped through it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_xdp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xsk_join.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/**
 * map_ring() - Map the ring at @pgoff of @fd (@desc_bytes per entry) and
 * point @r at it; producer rings start with all entries free.
 * Return: the mapping (its length in *@len), or MAP_FAILED.
 */
static void *map_ring(int fd, const struct xdp_ring_offset *o, off_t pgoff, size_t desc_bytes,
		      bool prod, struct xsk_ring_cons *r, size_t *len)
{
	uint8_t *m;

	*len = o->desc + HOMA_XSK_RING * desc_bytes;
	m = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
	if (m == MAP_FAILED)
		return m;
	r->mask = HOMA_XSK_RING - 1;
	r->size = HOMA_XSK_RING;
	r->producer = (uint32_t *)(m + o->producer);
	r->consumer = (uint32_t *)(m + o->consumer);
	r->ring = m + o->desc;
	r->flags = (uint32_t *)(m + o->flags);
	r->cached_prod = __atomic_load_n(r->producer, __ATOMIC_ACQUIRE);
	r->cached_cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE) + (prod ? r->size : 0);
	return m;
}

/** offsets() - The ring layout of @fd. Return: 0 or -errno. */
static int offsets(int fd, struct xdp_mmap_offsets *off)
{
	socklen_t len = sizeof(*off);

	return getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, off, &len) ? -errno : 0;
}

/** rings() - Size and map @x's rings. Return: 0 or -errno. */
static int rings(struct homa_xsk *x, bool with_tx)
{
	int n = HOMA_XSK_RING;
	struct xdp_mmap_offsets off;
	int err;

	if (setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &n, sizeof(n)) ||
	    (with_tx && setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n))))
		return -errno;
	err = offsets(x->fd, &off);
	if (err)
		return err;
	x->rx_map = map_ring(x->fd, &off.rx, XDP_PGOFF_RX_RING, sizeof(struct xdp_desc), false,
			     &x->rx, &x->rx_len);
	if (x->rx_map == MAP_FAILED) {
		x->rx_map = NULL;
		return -errno;
	}
	if (!with_tx)
		return 0;
	x->tx_map = map_ring(x->fd, &off.tx, XDP_PGOFF_TX_RING, sizeof(struct xdp_desc), true,
			     (struct xsk_ring_cons *)&x->tx, &x->tx_len);
	if (x->tx_map == MAP_FAILED) {
		x->tx_map = NULL;
		return -errno;
	}
	return 0;
}

/** unmap() - Unmap @x's rings. */
static void unmap(struct homa_xsk *x)
{
	if (x->rx_map)
		munmap(x->rx_map, x->rx_len);
	if (x->tx_map)
		munmap(x->tx_map, x->tx_len);
	x->rx_map = x->tx_map = NULL;
}

/** homa_xsk_join_socket() - See xsk_join.h. */
int homa_xsk_join_socket(struct homa_xsk *x, struct homa_xsk_umem *u, int ifindex,
			 bool with_tx, int share_fd)
{
	struct sockaddr_xdp a = {.sxdp_family = AF_XDP, .sxdp_ifindex = (uint32_t)ifindex,
		.sxdp_queue_id = u->queue, .sxdp_flags = XDP_SHARED_UMEM,
		.sxdp_shared_umem_fd = (uint32_t)share_fd};
	int err;

	x->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (x->fd < 0)
		return -errno;
	err = rings(x, with_tx);
	if (!err && bind(x->fd, (struct sockaddr *)&a, sizeof(a)))
		err = -errno;
	if (err) {
		unmap(x);
		close(x->fd);
		x->fd = -1;
	}
	return err;
}

/** homa_xsk_join_rings() - See xsk_join.h. */
int homa_xsk_join_rings(struct homa_xsk_umem *u, int fd)
{
	struct xdp_mmap_offsets off;
	int err = offsets(fd, &off);

	if (err)
		return err;
	u->fill_map = map_ring(fd, &off.fr, XDP_UMEM_PGOFF_FILL_RING, sizeof(uint64_t), true,
			       (struct xsk_ring_cons *)&u->fill, &u->fill_len);
	if (u->fill_map == MAP_FAILED) {
		u->fill_map = NULL;
		return -errno;
	}
	u->comp_map = map_ring(fd, &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING, sizeof(uint64_t),
			       false, &u->comp, &u->comp_len);
	if (u->comp_map == MAP_FAILED) {
		err = -errno;
		munmap(u->fill_map, u->fill_len);
		u->fill_map = u->comp_map = NULL;
		return err;
	}
	return 0;
}

/** homa_xsk_join_close() - See xsk_join.h. */
void homa_xsk_join_close(struct homa_xsk *x)
{
	unmap(x);
	if (x->fd >= 0 && (!x->u || x->fd != x->u->share_fd))
		close(x->fd);
	x->fd = -1;
}

/** homa_xsk_join_release() - See xsk_join.h. */
void homa_xsk_join_release(struct homa_xsk_umem *u)
{
	if (u->fill_map)
		munmap(u->fill_map, u->fill_len);
	if (u->comp_map)
		munmap(u->comp_map, u->comp_len);
	if (u->share_fd >= 0)
		close(u->share_fd);
	u->fill_map = u->comp_map = NULL;
	u->share_fd = -1;
}
