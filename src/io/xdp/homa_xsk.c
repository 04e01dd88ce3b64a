/* SPDX-License-Identifier: MIT */
/**
 * @file homa_xsk.c
 * AF_XDP sockets and their UMEM for the XDP driver (see homa_xsk.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/if_xdp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa/errors.h"
#include "homa_xsk.h"
#include "xdp_drv.h"

/** Bytes of one socket's UMEM. */
#define UMEM_BYTES ((size_t)2 * HOMA_XSK_RING * HOMA_XSK_FRAME)

/** open_error() - Say why binding queue @q of @ifname failed (errno @e); return the homa error. */
static int open_error(const char *ifname, uint32_t q, int e, const char *what)
{
	switch (e) {
	case EBUSY:
		fprintf(stderr, "homa: queue %u of %s is already taken by another AF_XDP socket\n",
			q, ifname);
		return HOMA_EADDRINUSE;
	case ENOMEM:
	case ENOBUFS:
		fprintf(stderr, "homa: cannot pin the %zu-byte UMEM for queue %u of %s: raise "
			"RLIMIT_MEMLOCK (ulimit -l) or grant CAP_IPC_LOCK\n", UMEM_BYTES, q, ifname);
		return HOMA_ENOMEM;
	case EAFNOSUPPORT:
		fprintf(stderr, "homa: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)\n");
		return HOMA_ENOTSUP;
	case EINVAL:
	case ENODEV:
		fprintf(stderr, "homa: %s has no receive queue %u for AF_XDP\n", ifname, q);
		return HOMA_ENOTSUP;
	default:  /* privileges and the rest: as for the program */
		return homa_xdp_errno(what, ifname, e);
	}
}

/** make_umem() - Allocate and register the UMEM of @x. Return: 0 or -errno. */
static int make_umem(struct homa_xsk *x)
{
	struct xsk_umem_config uc = {.fill_size = HOMA_XSK_RING, .comp_size = HOMA_XSK_RING,
				     .frame_size = HOMA_XSK_FRAME, .frame_headroom = 0};

	if (!x->area) {
		void *a = mmap(NULL, UMEM_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED)
			return -ENOMEM;
		x->area = a;
	}
	return xsk_umem__create(&x->umem, x->area, UMEM_BYTES, &x->fill, &x->comp, &uc);
}

/**
 * bind_socket() - Bind @x to its queue: zero copy first, copy mode if the
 * driver cannot (the UMEM is made anew for the second try).
 * Return: 0 or -errno.
 */
static int bind_socket(struct homa_xsk *x, const char *ifname, bool with_tx)
{
	struct xsk_socket_config sc = {.rx_size = HOMA_XSK_RING, .tx_size = HOMA_XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY};
	int err = make_umem(x);

	if (err)
		return err;
	err = xsk_socket__create(&x->xsk, ifname, x->queue, x->umem, &x->rx,
				 with_tx ? &x->tx : NULL, &sc);
	if (!err) {
		x->zerocopy = true;
		return 0;
	}
	if (err == -EBUSY || err == -EPERM || err == -EAFNOSUPPORT)
		return err;
	xsk_umem__delete(x->umem);
	x->umem = NULL;
	err = make_umem(x);
	if (err)
		return err;
	sc.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY;
	return xsk_socket__create(&x->xsk, ifname, x->queue, x->umem, &x->rx,
				  with_tx ? &x->tx : NULL, &sc);
}

/**
 * post_fill() - Put the @n frame addresses @addrs on the fill ring (it has
 * room for all: it holds every frame), leaving out HOMA_XSK_KEPT slots.
 */
static void post_fill(struct homa_xsk *x, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx = 0, k = 0, m = 0;

	for (uint32_t i = 0; i < n; i++)
		m += addrs[i] != HOMA_XSK_KEPT;
	if (!m || xsk_ring_prod__reserve(&x->fill, m, &idx) != m)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (addrs[i] != HOMA_XSK_KEPT)
			*xsk_ring_prod__fill_addr(&x->fill, idx + k++) = addrs[i];
	xsk_ring_prod__submit(&x->fill, m);
}

/** wake_fill() - Wake the kernel if it waits for fill ring entries. Return: calls made. */
static int wake_fill(struct homa_xsk *x)
{
	if (!xsk_ring_prod__needs_wakeup(&x->fill))
		return 0;
	recvfrom(homa_xsk_fd(x), NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return 1;
}

/** homa_xsk_open() - See homa_xsk.h. */
int homa_xsk_open(struct homa_xsk *x, const char *ifname, uint32_t queue, bool with_tx,
		  uint32_t batch)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->queue = queue;
	x->held_cap = batch;
	x->held = calloc(HOMA_XSK_RING, sizeof(*x->held));
	x->tx_free = calloc(HOMA_XSK_RING, sizeof(*x->tx_free));
	if (!x->held || !x->tx_free)
		return HOMA_ENOMEM;
	err = bind_socket(x, ifname, with_tx);
	if (err)
		return open_error(ifname, queue, -err, "bind a socket");
	for (uint32_t i = 0; i < HOMA_XSK_RING; i++)
		x->held[i] = (uint64_t)i * HOMA_XSK_FRAME;
	post_fill(x, x->held, HOMA_XSK_RING);
	if (with_tx)
		for (uint32_t i = 0; i < HOMA_XSK_RING; i++)
			x->tx_free[x->n_tx_free++] = (uint64_t)(HOMA_XSK_RING + i) * HOMA_XSK_FRAME;
	return 0;
}

/** homa_xsk_close() - See homa_xsk.h. */
void homa_xsk_close(struct homa_xsk *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, UMEM_BYTES);
	free(x->held);
	free(x->tx_free);
	memset(x, 0, sizeof(*x));
}

/** homa_xsk_fd() - See homa_xsk.h. */
int homa_xsk_fd(const struct homa_xsk *x)
{
	return xsk_socket__fd(x->xsk);
}

/** homa_xsk_refill() - See homa_xsk.h. */
int homa_xsk_refill(struct homa_xsk *x)
{
	post_fill(x, x->held, x->n_held);
	x->n_held = 0;
	return wake_fill(x);
}

/** homa_xsk_keep() - See homa_xsk.h. */
void homa_xsk_keep(struct homa_xsk *x, uint32_t slot)
{
	if (slot < x->n_held && x->held[slot] != HOMA_XSK_KEPT) {
		x->held[slot] = HOMA_XSK_KEPT;
		x->n_kept++;
	}
}

/** homa_xsk_give_back() - See homa_xsk.h. */
int homa_xsk_give_back(struct homa_xsk *x, const uint64_t *addrs, uint32_t n)
{
	uint64_t frames[64];
	uint32_t done = 0;

	while (done < n) {
		uint32_t m = n - done < 64 ? n - done : 64;

		for (uint32_t i = 0; i < m; i++)
			frames[i] = addrs[done + i] & ~(uint64_t)(HOMA_XSK_FRAME - 1);
		post_fill(x, frames, m);
		done += m;
	}
	x->n_kept -= n < x->n_kept ? n : x->n_kept;
	return n ? wake_fill(x) : 0;
}

/** homa_xsk_peek() - See homa_xsk.h. */
uint32_t homa_xsk_peek(struct homa_xsk *x, uint32_t max, uint64_t *addrs, uint32_t *lens)
{
	uint32_t idx = 0, n;

	if (max > x->held_cap - x->n_held)
		max = x->held_cap - x->n_held;
	n = xsk_ring_cons__peek(&x->rx, max, &idx);
	for (uint32_t i = 0; i < n; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
		uint64_t a = xsk_umem__add_offset_to_addr(d->addr);

		/* the kernel's descriptors are trusted no more than the packets */
		if (a >= (uint64_t)HOMA_XSK_RING * HOMA_XSK_FRAME ||
		    (a % HOMA_XSK_FRAME) + d->len > HOMA_XSK_FRAME)
			lens[i] = 0;
		else
			lens[i] = d->len;
		addrs[i] = a;
		x->held[x->n_held++] = xsk_umem__extract_addr(d->addr) & ~(uint64_t)(HOMA_XSK_FRAME - 1);
	}
	if (n)
		xsk_ring_cons__release(&x->rx, n);
	return n;
}

/** reap() - Move completed send frames back to the free list. */
static void reap(struct homa_xsk *x)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&x->comp, HOMA_XSK_RING, &idx);

	for (uint32_t i = 0; i < n && x->n_tx_free < HOMA_XSK_RING; i++)
		x->tx_free[x->n_tx_free++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	if (n)
		xsk_ring_cons__release(&x->comp, n);
}

/** homa_xsk_tx_frame() - See homa_xsk.h. */
uint64_t homa_xsk_tx_frame(struct homa_xsk *x)
{
	uint32_t idx = 0;

	if (!x->n_tx_free)
		reap(x);
	if (!x->n_tx_free || xsk_ring_prod__reserve(&x->tx, 1, &idx) != 1)
		return UINT64_MAX;
	return x->tx_free[--x->n_tx_free];
}

/** homa_xsk_tx_post() - See homa_xsk.h. */
int homa_xsk_tx_post(struct homa_xsk *x, uint32_t n, const uint64_t *addrs,
		     const uint32_t *lens)
{
	int calls = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, x->tx_first + i);

		d->addr = addrs[i];
		d->len = lens[i];
		d->options = 0;
	}
	if (n)
		xsk_ring_prod__submit(&x->tx, n);
	x->tx_first += n;
	/* copy mode sends at most a few dozen descriptors per kick (EAGAIN: more left) */
	while (xsk_ring_prod__needs_wakeup(&x->tx) && calls < (int)(n / 16) + 4) {
		calls++;
		if (sendto(homa_xsk_fd(x), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 ||
		    (errno != EAGAIN && errno != EBUSY))
			break;
	}
	reap(x);
	return calls;
}

/** homa_xsk_stats() - See homa_xsk.h. */
void homa_xsk_stats(const struct homa_xsk *x, struct xdp_statistics *out)
{
	socklen_t len = sizeof(*out);

	memset(out, 0, sizeof(*out));
	if (!x->xsk || getsockopt(homa_xsk_fd(x), SOL_XDP, XDP_STATISTICS, out, &len) < 0)
		memset(out, 0, sizeof(*out));
}
