/* SPDX-License-Identifier: MIT */
/**
 * @file homa_xsk.h
 * AF_XDP sockets of the XDP driver and their UMEM, one per interface
 * queue and shared by the sockets of the process on that queue: the
 * receive frames (all posted to the fill ring at start, returned to it
 * after the driver's caller is done with them) and the send frames (a
 * free list fed by the completion ring).
 */
#ifndef HOMA_IO_XDP_HOMA_XSK_H
#define HOMA_IO_XDP_HOMA_XSK_H

#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <xdp/xsk.h>

#include "xsk_shm.h"

/** Bytes per UMEM frame. */
#define HOMA_XSK_FRAME XSK_UMEM__DEFAULT_FRAME_SIZE
/** Descriptors per ring; also the receive and the send frames per socket. */
#define HOMA_XSK_RING 2048
/** A held[] slot whose frame stays out of the fill ring (homa_xsk_keep()). */
#define HOMA_XSK_KEPT UINT64_MAX
/** Largest frame a UMEM frame holds (the kernel keeps XDP_PACKET_HEADROOM). */
#define HOMA_XSK_MAX_FRAME (HOMA_XSK_FRAME - 256)

/**
 * The UMEM of one interface queue as this process sees it: shared by every
 * AF_XDP socket of the process bound to that queue and, through the
 * segment @seg (xsk_shm.h), by the other processes on the queue
 * (XDP_SHARED_UMEM). The segment's robust lock guards the fill and
 * completion rings, the free send frames and frame owners; n_kept and
 * sweep are read and written atomically. @refs (sockets using it) is
 * guarded by the caller of homa_xsk_open() and homa_xsk_close().
 */
struct homa_xsk_umem {
	struct xsk_umem *umem;      /**< NULL if this process joined another's UMEM */
	uint8_t *area;              /**< 2 * HOMA_XSK_RING frames: receive, then send */
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	struct homa_xsk_seg seg;    /**< the shared segment holding area */
	int share_fd;               /**< joined: the first socket (rings mapped through it), else -1 */
	void *fill_map, *comp_map;  /**< joined: the rings' mappings */
	size_t fill_len, comp_len;
	uint32_t queue;
	uint32_t refs;
	bool zerocopy;              /**< bound in zero-copy mode */
	uint32_t n_kept;            /**< receive frames kept by messages (homa_xsk_keep()) */
	uint32_t sweep;             /**< refills since the last look for dead processes */
	uint64_t locks;             /**< times this process took the segment's lock (under it) */
};
/** One socket on a shared UMEM, and its rings; see the threading rule in driver.h. */
struct homa_xsk {
	struct homa_xsk_umem *u;
	struct xsk_socket *xsk;     /**< NULL for a socket made by xsk_join.c */
	int fd;
	void *rx_map, *tx_map;      /**< xsk_join.c: the rings' mappings */
	size_t rx_len, tx_len;
	struct xsk_ring_prod tx;
	struct xsk_ring_cons rx;
	bool zerocopy;              /**< bound in zero-copy mode */
	uint64_t *held;             /**< receive frames lent to the caller (HOMA_XSK_KEPT: kept longer) */
	uint32_t n_held, held_cap;
	uint32_t n_kept;            /**< of them kept by messages (u->n_kept counts all sockets') */
	uint32_t kept_new;          /**< kept since the last homa_xsk_recycle() (not yet in u->n_kept) */
};

/**
 * homa_xsk_open() - Bind an AF_XDP socket to queue @queue of @ifname, with
 * a send ring when @with_tx. If *@u is NULL the queue's UMEM is created
 * (zero copy if the driver has it, else copy mode, with
 * XDP_USE_NEED_WAKEUP) and stored in *@u; otherwise the socket shares *@u
 * (XDP_SHARED_UMEM). Either way (*@u)->refs counts the socket.
 * @batch: most packets one homa_xsk_peek() returns.
 * Return: 0; HOMA_EPERM (no CAP_NET_ADMIN); HOMA_EADDRINUSE (the queue
 * has an AF_XDP socket of another process or UMEM); HOMA_ENOMEM (UMEM
 * could not be allocated or pinned: RLIMIT_MEMLOCK); HOMA_ENOTSUP (no
 * AF_XDP in this kernel, or no such queue); HOMA_EIO. A message on stderr
 * says which. On failure nothing stays allocated and *@u is unchanged.
 */
int homa_xsk_open(struct homa_xsk *x, struct homa_xsk_umem **u, const char *ifname,
		  uint32_t queue, bool with_tx, uint32_t batch);

/**
 * homa_xsk_close() - Free the socket homa_xsk_open() bound (safe on a
 * failed open), and the UMEM *@u with its last socket (*@u set to NULL).
 */
void homa_xsk_close(struct homa_xsk *x, struct homa_xsk_umem **u);

/** homa_xsk_fd() - The socket's descriptor (readable when packets wait). */
int homa_xsk_fd(const struct homa_xsk *x);

/**
 * homa_xsk_recycle() - Before the next homa_xsk_peek(): give the frames
 * lent by the last peek (except those homa_xsk_keep() kept) and the @n
 * kept frames @back that messages released (any address inside each, in
 * this socket's receive area) back to the fill ring, under one lock of
 * the shared UMEM (none when there is nothing to give back and no sweep
 * for dead processes is due), then wake the kernel if it asks for fill
 * ring entries.
 * Return: system calls made (0 or 1).
 */
int homa_xsk_recycle(struct homa_xsk *x, const uint64_t *back, uint32_t n);

/**
 * homa_xsk_peek() - Take up to @max received frames: @addrs[i] and
 * @lens[i] give their data (see homa_xsk_data()). They stay lent until
 * the next homa_xsk_recycle(); frame i is in held[] slot n_held - n + i
 * after the call. Return: frames taken (n).
 */
uint32_t homa_xsk_peek(struct homa_xsk *x, uint32_t max, uint64_t *addrs, uint32_t *lens);

/**
 * homa_xsk_keep() - Keep the frame of held[] slot @slot out of the next
 * homa_xsk_recycle(): a message holds it until it is given back there.
 * The UMEM's count of kept frames (u->n_kept) is brought up to date once
 * per homa_xsk_recycle(), not per frame.
 */
void homa_xsk_keep(struct homa_xsk *x, uint32_t slot);

/** homa_xsk_owns() - True if @p points into @x's receive frames. */
static inline bool homa_xsk_owns(const struct homa_xsk *x, const uint8_t *p)
{
	return x->u && p >= x->u->area && p < x->u->area + (size_t)HOMA_XSK_RING * HOMA_XSK_FRAME;
}

/** homa_xsk_data() - The bytes at UMEM address @addr. */
static inline uint8_t *homa_xsk_data(const struct homa_xsk *x, uint64_t addr)
{
	return x->u->area + addr;
}

/**
 * homa_xsk_tx_take() - Take up to @want free send frames for @x under one
 * lock, after reaping the completed frames of every socket on the UMEM
 * (the last freed are taken first); their UMEM addresses go to @addrs. Each must go
 * out through homa_xsk_tx_post() (the send ring has a slot for every
 * send frame, so posting them cannot fail).
 * Return: frames taken, 0 if the send frames are exhausted.
 */
uint32_t homa_xsk_tx_take(struct homa_xsk *x, uint32_t want, uint64_t *addrs);

/**
 * homa_xsk_tx_untake() - Give @n frames taken with homa_xsk_tx_take() and
 * not posted back to the free list.
 */
void homa_xsk_tx_untake(struct homa_xsk *x, const uint64_t *addrs, uint32_t n);

/**
 * homa_xsk_tx_post() - Post @n taken frames (@lens[i] bytes at @addrs[i])
 * on the send ring and kick the kernel once if it asks (copy mode: the
 * kick sends them; it is repeated only while the kernel says it stopped
 * early with more to send).
 * Return: system calls made.
 */
int homa_xsk_tx_post(struct homa_xsk *x, uint32_t n, const uint64_t *addrs,
		     const uint32_t *lens);

/**
 * homa_xsk_rx_pending() - True if the kernel has put received frames on
 * @x's receive ring that homa_xsk_peek() has not taken (no system call).
 */
static inline bool homa_xsk_rx_pending(const struct homa_xsk *x)
{
	return __atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE) != x->rx.cached_cons;
}

/**
 * homa_xsk_reclaimed() - Frames taken back on @x's queue from processes
 * that died holding them, since the queue's UMEM was made.
 */
uint64_t homa_xsk_reclaimed(const struct homa_xsk *x);

/** homa_xsk_stats() - The kernel's ring statistics (XDP_STATISTICS); zeros on failure. */
void homa_xsk_stats(const struct homa_xsk *x, struct xdp_statistics *out);

#endif /* HOMA_IO_XDP_HOMA_XSK_H */
