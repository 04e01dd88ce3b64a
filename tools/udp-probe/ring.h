/* SPDX-License-Identifier: MIT */
/**
 * @file ring.h
 * The least of io_uring that homa-udp-probe's uring mode needs, over the
 * raw system calls (no liburing): one ring, submission entries filled in
 * place, io_uring_enter() to submit and wait, completions read from the
 * shared ring. One thread owns a ring; nothing here locks.
 */
#ifndef HOMA_UDP_PROBE_RING_H
#define HOMA_UDP_PROBE_RING_H

#include <linux/io_uring.h>
#include <stddef.h>
#include <stdint.h>

/** An io_uring instance and its mapped queues. */
struct probe_ring {
	int fd;                    /**< from io_uring_setup(), -1 when closed */
	unsigned *sq_tail;         /**< submission tail (we write it) */
	unsigned *sq_mask;         /**< submission index mask */
	unsigned *sq_array;        /**< submission index array */
	struct io_uring_sqe *sqes; /**< submission entries */
	unsigned *cq_head;         /**< completion head (we write it) */
	unsigned *cq_tail;         /**< completion tail (the kernel writes it) */
	unsigned *cq_mask;         /**< completion index mask */
	struct io_uring_cqe *cqes; /**< completion entries */
	void *sq_map, *cq_map;     /**< the ring mappings (may be one) */
	size_t sq_len, cq_len;     /**< their lengths */
	size_t sqes_len;           /**< length of the sqes mapping */
	unsigned pending;          /**< entries queued since the last enter */
	uint64_t enters;           /**< io_uring_enter() calls made */
};

/**
 * probe_ring_open() - Set up @r with @entries submission entries. Return:
 * 0, or -1 with errno set (ENOSYS or EPERM where io_uring is unavailable
 * or disabled by kernel.io_uring_disabled; EOPNOTSUPP when the kernel
 * lacks IORING_FEAT_CQE_SKIP, 5.17+). @r is closed on failure.
 */
int probe_ring_open(struct probe_ring *r, unsigned entries);

/** probe_ring_close() - Unmap and close @r; safe on a closed ring. */
void probe_ring_close(struct probe_ring *r);

/**
 * probe_ring_sqe() - The next submission entry of @r, zeroed, to fill in;
 * it is submitted by the next probe_ring_enter(). Return: the entry, or
 * NULL when the submission queue is full.
 */
struct io_uring_sqe *probe_ring_sqe(struct probe_ring *r);

/**
 * probe_ring_enter() - Submit the queued entries and wait until at least
 * @wait completions are ready (0: do not wait); a signal may end the wait
 * early, so callers reap until they have what they wait for. Retries a
 * call that took nothing (EINTR) and submits what a call left. Return:
 * 0, or -1 with errno set.
 */
int probe_ring_enter(struct probe_ring *r, unsigned wait);

/**
 * probe_ring_reap() - Take the oldest completion of @r into @out.
 * Return: 1 if one was taken, 0 if none is ready.
 */
int probe_ring_reap(struct probe_ring *r, struct io_uring_cqe *out);

#endif /* HOMA_UDP_PROBE_RING_H */
