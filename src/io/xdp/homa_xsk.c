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

/** make_umem() - Allocate and register the UMEM of @u. Return: 0 or -errno. */
static int make_umem(struct homa_xsk_umem *u)
{
	struct xsk_umem_config uc = {.fill_size = HOMA_XSK_RING, .comp_size = HOMA_XSK_RING,
				     .frame_size = HOMA_XSK_FRAME, .frame_headroom = 0};

	if (!u->area) {
		void *a = mmap(NULL, UMEM_BYTES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED)
			return -ENOMEM;
		u->area = a;
	}
	return xsk_umem__create(&u->umem, u->area, UMEM_BYTES, &u->fill, &u->comp, &uc);
}

/** create_socket() - Bind @x on UMEM @u with @bind_flags. Return: 0 or -errno. */
static int create_socket(struct homa_xsk *x, struct homa_xsk_umem *u, const char *ifname,
			 bool with_tx, uint32_t bind_flags)
{
	struct xsk_socket_config sc = {.rx_size = HOMA_XSK_RING, .tx_size = HOMA_XSK_RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD, .bind_flags = bind_flags};

	/* sharing (the kernel wants XDP_SHARED_UMEM alone): libxdp sets it */
	return xsk_socket__create_shared(&x->xsk, ifname, u->queue, u->umem, &x->rx,
					 with_tx ? &x->tx : NULL, &u->fill, &u->comp, &sc);
}

/**
 * bind_first() - Bind @x, the first socket of the new UMEM @u: zero copy
 * first, copy mode if the driver cannot (the UMEM is made anew for the
 * second try). Return: 0 or -errno.
 */
static int bind_first(struct homa_xsk *x, struct homa_xsk_umem *u, const char *ifname,
		      bool with_tx)
{
	int err = make_umem(u);

	if (err)
		return err;
	err = create_socket(x, u, ifname, with_tx, XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY);
	if (!err) {
		u->zerocopy = true;
		return 0;
	}
	if (err == -EBUSY || err == -EPERM || err == -EAFNOSUPPORT)
		return err;
	xsk_umem__delete(u->umem);
	u->umem = NULL;
	err = make_umem(u);
	if (err)
		return err;
	return create_socket(x, u, ifname, with_tx, XDP_USE_NEED_WAKEUP | XDP_COPY);
}

/**
 * post_fill() - Put the @n frame addresses @addrs on the fill ring of @u
 * (it has room for all: it holds every frame), leaving out HOMA_XSK_KEPT
 * slots. The caller holds u->lock.
 */
static void post_fill(struct homa_xsk_umem *u, const uint64_t *addrs, uint32_t n)
{
	uint32_t idx = 0, k = 0, m = 0;

	for (uint32_t i = 0; i < n; i++)
		m += addrs[i] != HOMA_XSK_KEPT;
	if (!m || xsk_ring_prod__reserve(&u->fill, m, &idx) != m)
		return;
	for (uint32_t i = 0; i < n; i++)
		if (addrs[i] != HOMA_XSK_KEPT)
			*xsk_ring_prod__fill_addr(&u->fill, idx + k++) = addrs[i];
	xsk_ring_prod__submit(&u->fill, m);
}

/** wake_fill() - Wake the kernel if it waits for fill ring entries. Return: calls made. */
static int wake_fill(struct homa_xsk *x)
{
	if (!xsk_ring_prod__needs_wakeup(&x->u->fill))
		return 0;
	recvfrom(homa_xsk_fd(x), NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return 1;
}

/**
 * new_umem() - Create the UMEM of queue @queue and bind @x as its first
 * socket; all receive frames on the fill ring, all send frames free.
 * Return: the UMEM, or NULL with *@err set (-errno).
 */
static struct homa_xsk_umem *new_umem(struct homa_xsk *x, const char *ifname, uint32_t queue,
				      bool with_tx, int *err)
{
	struct homa_xsk_umem *u = calloc(1, sizeof(*u));
	uint64_t *rx = calloc(HOMA_XSK_RING, sizeof(*rx));

	*err = -ENOMEM;
	if (u)
		u->tx_free = calloc(HOMA_XSK_RING, sizeof(*u->tx_free));
	if (u && rx && u->tx_free) {
		u->queue = queue;
		*err = bind_first(x, u, ifname, with_tx);
	}
	if (*err) {
		if (u && u->umem)
			xsk_umem__delete(u->umem);
		if (u && u->area)
			munmap(u->area, UMEM_BYTES);
		if (u)
			free(u->tx_free);
		free(u);
		free(rx);
		return NULL;
	}
	pthread_mutex_init(&u->lock, NULL);
	for (uint32_t i = 0; i < HOMA_XSK_RING; i++) {
		rx[i] = (uint64_t)i * HOMA_XSK_FRAME;
		u->tx_free[u->n_tx_free++] = (uint64_t)(HOMA_XSK_RING + i) * HOMA_XSK_FRAME;
	}
	post_fill(u, rx, HOMA_XSK_RING);
	free(rx);
	return u;
}

/** homa_xsk_open() - See homa_xsk.h. */
int homa_xsk_open(struct homa_xsk *x, struct homa_xsk_umem **u, const char *ifname,
		  uint32_t queue, bool with_tx, uint32_t batch)
{
	int err = 0;

	memset(x, 0, sizeof(*x));
	x->held_cap = batch;
	x->held = calloc(HOMA_XSK_RING, sizeof(*x->held));
	if (!x->held)
		return HOMA_ENOMEM;
	if (*u) {
		err = create_socket(x, *u, ifname, with_tx, 0);
		if (!err)
			x->u = *u;
	} else {
		x->u = new_umem(x, ifname, queue, with_tx, &err);
		*u = x->u;
	}
	if (err) {
		x->xsk = NULL;
		free(x->held);
		x->held = NULL;
		return open_error(ifname, queue, -err, "bind a socket");
	}
	x->u->refs++;
	x->zerocopy = x->u->zerocopy;
	return 0;
}

/** homa_xsk_close() - See homa_xsk.h. */
void homa_xsk_close(struct homa_xsk *x, struct homa_xsk_umem **u)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	if (x->u && !--x->u->refs) {
		xsk_umem__delete(x->u->umem);
		munmap(x->u->area, UMEM_BYTES);
		pthread_mutex_destroy(&x->u->lock);
		free(x->u->tx_free);
		free(x->u);
		*u = NULL;
	}
	free(x->held);
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
	if (!x->n_held)
		return wake_fill(x);
	pthread_mutex_lock(&x->u->lock);
	post_fill(x->u, x->held, x->n_held);
	pthread_mutex_unlock(&x->u->lock);
	x->n_held = 0;
	return wake_fill(x);
}

/** homa_xsk_keep() - See homa_xsk.h. */
void homa_xsk_keep(struct homa_xsk *x, uint32_t slot)
{
	if (slot < x->n_held && x->held[slot] != HOMA_XSK_KEPT) {
		x->held[slot] = HOMA_XSK_KEPT;
		__atomic_add_fetch(&x->u->n_kept, 1, __ATOMIC_RELAXED);
		x->n_kept++;
	}
}

/** homa_xsk_give_back() - See homa_xsk.h. */
int homa_xsk_give_back(struct homa_xsk *x, const uint64_t *addrs, uint32_t n)
{
	uint64_t frames[64];
	uint32_t done = 0;

	if (!n)
		return 0;
	pthread_mutex_lock(&x->u->lock);
	while (done < n) {
		uint32_t m = n - done < 64 ? n - done : 64;

		for (uint32_t i = 0; i < m; i++)
			frames[i] = addrs[done + i] & ~(uint64_t)(HOMA_XSK_FRAME - 1);
		post_fill(x->u, frames, m);
		done += m;
	}
	pthread_mutex_unlock(&x->u->lock);
	n = n < x->n_kept ? n : x->n_kept;  /* only frames this socket kept */
	x->n_kept -= n;
	__atomic_sub_fetch(&x->u->n_kept, n, __ATOMIC_RELAXED);
	return wake_fill(x);
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

/**
 * reap() - Move completed send frames (of every socket sharing @u) back to
 * the free list. The caller holds u->lock.
 */
static void reap(struct homa_xsk_umem *u)
{
	uint32_t idx = 0, n = xsk_ring_cons__peek(&u->comp, HOMA_XSK_RING, &idx);

	for (uint32_t i = 0; i < n && u->n_tx_free < HOMA_XSK_RING; i++)
		u->tx_free[u->n_tx_free++] = *xsk_ring_cons__comp_addr(&u->comp, idx + i);
	if (n)
		xsk_ring_cons__release(&u->comp, n);
}

/** homa_xsk_tx_take() - See homa_xsk.h. */
uint32_t homa_xsk_tx_take(struct homa_xsk *x, uint32_t want, uint64_t *addrs)
{
	struct homa_xsk_umem *u = x->u;
	uint32_t n;

	pthread_mutex_lock(&u->lock);
	reap(u);  /* first: the frames freed last are reused while still in cache */
	n = want < u->n_tx_free ? want : u->n_tx_free;
	u->n_tx_free -= n;
	memcpy(addrs, &u->tx_free[u->n_tx_free], n * sizeof(*addrs));
	pthread_mutex_unlock(&u->lock);
	return n;
}

/** homa_xsk_tx_untake() - See homa_xsk.h. */
void homa_xsk_tx_untake(struct homa_xsk *x, const uint64_t *addrs, uint32_t n)
{
	struct homa_xsk_umem *u = x->u;

	if (!n)
		return;
	pthread_mutex_lock(&u->lock);
	for (uint32_t i = 0; i < n && u->n_tx_free < HOMA_XSK_RING; i++)
		u->tx_free[u->n_tx_free++] = addrs[i];
	pthread_mutex_unlock(&u->lock);
}

/** homa_xsk_tx_post() - See homa_xsk.h. */
int homa_xsk_tx_post(struct homa_xsk *x, uint32_t n, const uint64_t *addrs,
		     const uint32_t *lens)
{
	uint32_t idx = 0;
	int calls = 0;

	if (!n)
		return 0;
	if (xsk_ring_prod__reserve(&x->tx, n, &idx) != n) {
		homa_xsk_tx_untake(x, addrs, n);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);

		d->addr = addrs[i];
		d->len = lens[i];
		d->options = 0;
	}
	xsk_ring_prod__submit(&x->tx, n);
	/* copy mode sends at most a few dozen descriptors per kick (EAGAIN: more left) */
	while (xsk_ring_prod__needs_wakeup(&x->tx) && calls < (int)(n / 16) + 4) {
		calls++;
		if (sendto(homa_xsk_fd(x), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0 ||
		    (errno != EAGAIN && errno != EBUSY))
			break;
	}
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
