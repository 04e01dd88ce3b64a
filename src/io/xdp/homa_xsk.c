/* SPDX-License-Identifier: MIT */
/**
 * @file homa_xsk.c
 * AF_XDP sockets and their UMEM for the XDP driver (see homa_xsk.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
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
#include "xsk_join.h"

/** Bytes of one queue's UMEM. */
#define UMEM_BYTES ((size_t)HOMA_XSK_FRAMES * HOMA_XSK_FRAME)
/** Refills between two looks for processes that died holding frames. */
#define SWEEP_EVERY 1024

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

/** frame_of() - The frame index of UMEM address @a (HOMA_XSK_FRAMES if outside). */
static uint32_t frame_of(uint64_t a)
{
	return a < UMEM_BYTES ? (uint32_t)(a / HOMA_XSK_FRAME) : HOMA_XSK_FRAMES;
}

/** set_owner() - Record who holds the frame at UMEM address @a (0: nobody, the kernel). */
static void set_owner(struct homa_xsk_umem *u, uint64_t a, uint16_t who)
{
	uint32_t f = frame_of(a);

	if (f < HOMA_XSK_FRAMES)
		__atomic_store_n(&u->seg.sh->owner[f], who, __ATOMIC_RELAXED);
}

/** me() - This process's owner[] value on @u. */
static uint16_t me(const struct homa_xsk_umem *u)
{
	return (uint16_t)(u->seg.me + 1);
}

/**
 * post_fill() - Put the @n frame addresses @addrs on the fill ring of @u
 * (it has room for all: it holds every frame), leaving out HOMA_XSK_KEPT
 * slots. The caller holds the segment lock (lock_umem()).
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
	for (uint32_t i = 0; i < n; i++)
		if (addrs[i] != HOMA_XSK_KEPT)
			set_owner(u, addrs[i], 0);
}

/** wake_fill() - Wake the kernel if it waits for fill ring entries. Return: calls made. */
static int wake_fill(struct homa_xsk *x)
{
	if (!xsk_ring_prod__needs_wakeup(&x->u->fill))
		return 0;
	recvfrom(homa_xsk_fd(x), NULL, 0, MSG_DONTWAIT, NULL, NULL);
	return 1;
}

/** reap() - Move completed send frames back to the free list. The caller holds the lock. */
static void reap(struct homa_xsk_umem *u)
{
	struct homa_xsk_shm *sh = u->seg.sh;
	uint32_t idx = 0, n = xsk_ring_cons__peek(&u->comp, HOMA_XSK_RING, &idx);

	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&u->comp, idx + i);
		uint32_t f = frame_of(a);

		/* a send frame on a send ring comes back once; anything else is ignored.
		 * Acquire: pairs with homa_xsk_tx_post()'s release, so that the
		 * poster's last use of the frame comes before its next taker's
		 * (the kernel orders them too, but no race checker sees that) */
		if (f >= HOMA_XSK_RING && f < HOMA_XSK_FRAMES &&
		    __atomic_load_n(&sh->owner[f], __ATOMIC_ACQUIRE) &&
		    sh->n_tx_free < HOMA_XSK_RING) {
			set_owner(u, a, 0);
			sh->tx_free[sh->n_tx_free++] = (uint64_t)f * HOMA_XSK_FRAME;
		}
	}
	if (n)
		xsk_ring_cons__release(&u->comp, n);
}

/**
 * take_back() - Return the frames whose owner is in @who (bit i: member
 * i) to the fill ring (receive frames) and the free list (send frames not
 * on a send ring: those the kernel still returns through the completion
 * ring). The caller holds the lock. Return: frames returned.
 */
static uint32_t take_back(struct homa_xsk_umem *u, uint32_t who)
{
	struct homa_xsk_shm *sh = u->seg.sh;
	uint64_t rx[64];
	uint32_t n = 0, total = 0;

	for (uint32_t f = 0; f < HOMA_XSK_FRAMES; f++) {
		uint16_t o = __atomic_load_n(&sh->owner[f], __ATOMIC_RELAXED);

		if (!o || (o & HOMA_XSK_POSTED) || !((who >> (o - 1)) & 1))
			continue;
		total++;
		if (f < HOMA_XSK_RING) {
			rx[n++] = (uint64_t)f * HOMA_XSK_FRAME;
			if (n == 64) {
				post_fill(u, rx, n);
				n = 0;
			}
		} else if (sh->n_tx_free < HOMA_XSK_RING) {
			__atomic_store_n(&sh->owner[f], 0, __ATOMIC_RELAXED);
			sh->tx_free[sh->n_tx_free++] = (uint64_t)f * HOMA_XSK_FRAME;
		}
	}
	post_fill(u, rx, n);
	return total;
}

/** reclaim_dead() - Take back the frames of members that died. The caller holds the lock. */
static void reclaim_dead(struct homa_xsk_umem *u)
{
	uint32_t dead = homa_xsk_seg_dead(&u->seg);

	if (dead)
		__atomic_add_fetch(&u->seg.sh->reclaimed, take_back(u, dead), __ATOMIC_RELAXED);
}

/**
 * lock_umem() - Take the segment's lock and bring this process's view of
 * the shared fill and completion rings up to date (another process may
 * have moved them). If the last holder died holding it, the free send
 * frames are rebuilt from owner[] and the dead members' frames taken back.
 */
static void lock_umem(struct homa_xsk_umem *u)
{
	struct homa_xsk_shm *sh = u->seg.sh;
	bool repair = homa_xsk_seg_lock(&u->seg);

	u->locks++;

	u->fill.cached_prod = __atomic_load_n(u->fill.producer, __ATOMIC_RELAXED);
	u->fill.cached_cons = __atomic_load_n(u->fill.consumer, __ATOMIC_ACQUIRE) + u->fill.size;
	u->comp.cached_cons = __atomic_load_n(u->comp.consumer, __ATOMIC_RELAXED);
	u->comp.cached_prod = __atomic_load_n(u->comp.producer, __ATOMIC_ACQUIRE);
	if (!repair)
		return;
	sh->n_tx_free = 0;
	for (uint32_t f = HOMA_XSK_RING; f < HOMA_XSK_FRAMES; f++)
		if (!__atomic_load_n(&sh->owner[f], __ATOMIC_RELAXED))
			sh->tx_free[sh->n_tx_free++] = (uint64_t)f * HOMA_XSK_FRAME;
	reclaim_dead(u);
	pthread_mutex_consistent(&sh->lock);
}

/** unlock_umem() - Release the segment's lock. */
static void unlock_umem(struct homa_xsk_umem *u)
{
	homa_xsk_seg_unlock(&u->seg);
}

/**
 * first_on_queue() - Create the queue's UMEM on the segment's frames and
 * bind @x as its first socket: all receive frames on the fill ring, all
 * send frames free. Return: 0 or -errno.
 */
static int first_on_queue(struct homa_xsk *x, struct homa_xsk_umem *u, const char *ifname,
			  bool with_tx)
{
	uint64_t rx[64];
	int err = bind_first(x, u, ifname, with_tx);

	if (err)
		return err;
	x->fd = xsk_socket__fd(x->xsk);
	u->seg.sh->zerocopy = u->zerocopy;
	lock_umem(u);
	for (uint32_t i = 0; i < HOMA_XSK_RING; i += 64) {
		for (uint32_t k = 0; k < 64; k++)
			rx[k] = (uint64_t)(i + k) * HOMA_XSK_FRAME;
		post_fill(u, rx, 64);
	}
	unlock_umem(u);
	return homa_xsk_seg_join(&u->seg, xsk_umem__fd(u->umem));
}

/**
 * join_queue() - Bind @x on the UMEM another live process registered for
 * the queue, map the fill and completion rings, take back the frames of
 * processes that died, and enter as a member. Return: 0 or -errno.
 */
static int join_queue(struct homa_xsk *x, struct homa_xsk_umem *u, int ifindex, bool with_tx)
{
	int peer = homa_xsk_seg_peer_fd(&u->seg), err;

	if (peer < 0)
		return peer;
	err = homa_xsk_join_socket(x, u, ifindex, with_tx, peer);
	close(peer);
	if (err)
		return err;
	u->share_fd = x->fd;
	u->zerocopy = u->seg.sh->zerocopy;
	err = homa_xsk_join_rings(u, x->fd);
	if (err)
		return err;
	lock_umem(u);
	reclaim_dead(u);
	unlock_umem(u);
	return homa_xsk_seg_join(&u->seg, x->fd);
}

/**
 * give_back_all() - Return every frame this process holds on @u (before
 * its last socket closes: libxdp unmaps the rings with it).
 */
static void give_back_all(struct homa_xsk_umem *u)
{
	if (u->seg.me < 0)
		return;
	lock_umem(u);
	take_back(u, 1u << u->seg.me);
	unlock_umem(u);
}

/** free_umem() - Free @u (its sockets closed, its frames given back). */
static void free_umem(struct homa_xsk_umem *u)
{
	if (u->umem)
		xsk_umem__delete(u->umem);
	homa_xsk_join_release(u);
	homa_xsk_seg_close(&u->seg);
	free(u);
}

/**
 * new_umem() - This process's first socket on queue @queue: bind @x on
 * the queue's shared UMEM, creating it if no live process has it.
 * Return: the UMEM, or NULL with *@err set (-errno).
 */
static struct homa_xsk_umem *new_umem(struct homa_xsk *x, const char *ifname, uint32_t queue,
				      bool with_tx, int *err)
{
	struct homa_xsk_umem *u = calloc(1, sizeof(*u));
	int ifindex = (int)if_nametoindex(ifname);
	bool fresh = false;

	if (!u) {
		*err = -ENOMEM;
		return NULL;
	}
	u->queue = queue;
	u->share_fd = -1;
	u->seg.me = -1;
	*err = ifindex ? homa_xsk_seg_open(&u->seg, ifindex, queue, &fresh) : -ENODEV;
	if (!*err) {
		u->area = u->seg.area;
		*err = fresh ? first_on_queue(x, u, ifname, with_tx)
			     : join_queue(x, u, ifindex, with_tx);
		homa_xsk_seg_setup_done(&u->seg);
	}
	if (*err) {
		x->u = u;  /* homa_xsk_join_close() leaves u->share_fd to free_umem() */
		if (x->xsk)
			xsk_socket__delete(x->xsk);
		else
			homa_xsk_join_close(x);
		x->xsk = NULL;
		x->u = NULL;
		free_umem(u);
		return NULL;
	}
	return u;
}

/** homa_xsk_open() - See homa_xsk.h. */
int homa_xsk_open(struct homa_xsk *x, struct homa_xsk_umem **u, const char *ifname,
		  uint32_t queue, bool with_tx, uint32_t batch)
{
	int err = 0;

	memset(x, 0, sizeof(*x));
	x->fd = -1;
	x->held_cap = batch;
	x->held = calloc(HOMA_XSK_RING, sizeof(*x->held));
	if (!x->held)
		return HOMA_ENOMEM;
	if (*u && (*u)->umem) {
		err = create_socket(x, *u, ifname, with_tx, 0);
		if (!err)
			x->fd = xsk_socket__fd(x->xsk);
	} else if (*u) {
		err = homa_xsk_join_socket(x, *u, (int)if_nametoindex(ifname), with_tx,
					   (*u)->share_fd);
	} else {
		*u = new_umem(x, ifname, queue, with_tx, &err);
	}
	if (err) {
		x->xsk = NULL;
		free(x->held);
		x->held = NULL;
		return open_error(ifname, queue, -err, "bind a socket");
	}
	x->u = *u;
	x->u->refs++;
	x->zerocopy = x->u->zerocopy;
	return 0;
}

/** homa_xsk_close() - See homa_xsk.h. */
void homa_xsk_close(struct homa_xsk *x, struct homa_xsk_umem **u)
{
	if (x->u && x->u->refs == 1)
		give_back_all(x->u);
	if (x->xsk)
		xsk_socket__delete(x->xsk);
	else
		homa_xsk_join_close(x);
	if (x->u && !--x->u->refs) {
		free_umem(x->u);
		*u = NULL;
	}
	free(x->held);
	memset(x, 0, sizeof(*x));
	x->fd = -1;
}

/** homa_xsk_fd() - See homa_xsk.h. */
int homa_xsk_fd(const struct homa_xsk *x)
{
	return x->fd;
}

/**
 * post_back() - Put the @n kept frames @addrs (any address inside each)
 * back on the fill ring of @u. The caller holds the lock.
 */
static void post_back(struct homa_xsk_umem *u, const uint64_t *addrs, uint32_t n)
{
	uint64_t frames[64];

	for (uint32_t done = 0; done < n;) {
		uint32_t m = n - done < 64 ? n - done : 64;

		for (uint32_t i = 0; i < m; i++)
			frames[i] = addrs[done + i] & ~(uint64_t)(HOMA_XSK_FRAME - 1);
		post_fill(u, frames, m);
		done += m;
	}
}

/** homa_xsk_recycle() - See homa_xsk.h. */
int homa_xsk_recycle(struct homa_xsk *x, const uint64_t *back, uint32_t n)
{
	bool sweep = __atomic_add_fetch(&x->u->sweep, 1, __ATOMIC_RELAXED) % SWEEP_EVERY == 0;
	uint32_t mine;

	if (x->n_held || n || sweep) {
		lock_umem(x->u);
		if (sweep)
			reclaim_dead(x->u);
		post_fill(x->u, x->held, x->n_held);
		post_back(x->u, back, n);
		unlock_umem(x->u);
		x->n_held = 0;
	}
	mine = n < x->n_kept ? n : x->n_kept;  /* only frames this socket kept */
	x->n_kept -= mine;
	if (x->kept_new != mine) {  /* one update of the UMEM's count per call */
		if (x->kept_new > mine)
			__atomic_add_fetch(&x->u->n_kept, x->kept_new - mine, __ATOMIC_RELAXED);
		else
			__atomic_sub_fetch(&x->u->n_kept, mine - x->kept_new, __ATOMIC_RELAXED);
	}
	x->kept_new = 0;
	return wake_fill(x);
}

/** homa_xsk_keep() - See homa_xsk.h. */
void homa_xsk_keep(struct homa_xsk *x, uint32_t slot)
{
	if (slot < x->n_held && x->held[slot] != HOMA_XSK_KEPT) {
		x->held[slot] = HOMA_XSK_KEPT;
		x->kept_new++;
		x->n_kept++;
	}
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
		x->held[x->n_held] = xsk_umem__extract_addr(d->addr) & ~(uint64_t)(HOMA_XSK_FRAME - 1);
		set_owner(x->u, x->held[x->n_held++], me(x->u));
	}
	if (n)
		xsk_ring_cons__release(&x->rx, n);
	return n;
}

/** homa_xsk_tx_take() - See homa_xsk.h. */
uint32_t homa_xsk_tx_take(struct homa_xsk *x, uint32_t want, uint64_t *addrs)
{
	struct homa_xsk_umem *u = x->u;
	struct homa_xsk_shm *sh = u->seg.sh;
	uint32_t n;

	lock_umem(u);
	reap(u);  /* first: the frames freed last are reused while still in cache */
	n = want < sh->n_tx_free ? want : sh->n_tx_free;
	sh->n_tx_free -= n;
	memcpy(addrs, &sh->tx_free[sh->n_tx_free], n * sizeof(*addrs));
	for (uint32_t i = 0; i < n; i++)
		set_owner(u, addrs[i], me(u));
	unlock_umem(u);
	return n;
}

/** homa_xsk_tx_untake() - See homa_xsk.h. */
void homa_xsk_tx_untake(struct homa_xsk *x, const uint64_t *addrs, uint32_t n)
{
	struct homa_xsk_umem *u = x->u;
	struct homa_xsk_shm *sh = u->seg.sh;

	if (!n)
		return;
	lock_umem(u);
	for (uint32_t i = 0; i < n && sh->n_tx_free < HOMA_XSK_RING; i++) {
		set_owner(u, addrs[i], 0);
		/* a posted address may lie inside its frame (a shorter header's start) */
		sh->tx_free[sh->n_tx_free++] = addrs[i] & ~(uint64_t)(HOMA_XSK_FRAME - 1);
	}
	unlock_umem(u);
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
		/* before the kernel can see it: a frame is never both taken back and
		 * completed; release: the frame's bytes were written and read
		 * before (see reap()) */
		if (frame_of(addrs[i]) < HOMA_XSK_FRAMES)
			__atomic_store_n(&x->u->seg.sh->owner[frame_of(addrs[i])],
					 (uint16_t)(me(x->u) | HOMA_XSK_POSTED), __ATOMIC_RELEASE);
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

/** homa_xsk_reclaimed() - See homa_xsk.h. */
uint64_t homa_xsk_reclaimed(const struct homa_xsk *x)
{
	return x->u ? __atomic_load_n(&x->u->seg.sh->reclaimed, __ATOMIC_RELAXED) : 0;
}
