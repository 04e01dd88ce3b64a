/* SPDX-License-Identifier: MIT */
/**
 * @file ring.c
 * A minimal io_uring over the raw system calls (see ring.h).
 */
#define _GNU_SOURCE
#include "ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/** at() - Pointer @off bytes into mapping @base. */
static void *at(void *base, uint32_t off)
{
	return (char *)base + off;
}

/** map() - mmap @len bytes of ring @fd at @off. Return: the mapping or NULL. */
static void *map(int fd, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/** map_rings() - Map @r's queues as @p describes. Return: 0 or -1 (errno). */
static int map_rings(struct probe_ring *r, const struct io_uring_params *p)
{
	r->sq_len = p->sq_off.array + p->sq_entries * sizeof(unsigned);
	r->cq_len = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
	if (p->features & IORING_FEAT_SINGLE_MMAP) {
		if (r->cq_len > r->sq_len)
			r->sq_len = r->cq_len;
		r->cq_len = 0;
	}
	r->sq_map = map(r->fd, r->sq_len, IORING_OFF_SQ_RING);
	if (!r->sq_map)
		return -1;
	r->cq_map = r->cq_len ? map(r->fd, r->cq_len, IORING_OFF_CQ_RING) : r->sq_map;
	r->sqes_len = p->sq_entries * sizeof(struct io_uring_sqe);
	r->sqes = map(r->fd, r->sqes_len, IORING_OFF_SQES);
	if (!r->cq_map || !r->sqes)
		return -1;
	r->sq_tail = at(r->sq_map, p->sq_off.tail);
	r->sq_mask = at(r->sq_map, p->sq_off.ring_mask);
	r->sq_array = at(r->sq_map, p->sq_off.array);
	r->cq_head = at(r->cq_map, p->cq_off.head);
	r->cq_tail = at(r->cq_map, p->cq_off.tail);
	r->cq_mask = at(r->cq_map, p->cq_off.ring_mask);
	r->cqes = at(r->cq_map, p->cq_off.cqes);
	return 0;
}

int probe_ring_open(struct probe_ring *r, unsigned entries)
{
	struct io_uring_params p;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(SYS_io_uring_setup, entries, &p);
	if (r->fd < 0)
		return -1;
	if (!(p.features & IORING_FEAT_CQE_SKIP)) {
		probe_ring_close(r);
		errno = EOPNOTSUPP;
		return -1;
	}
	if (map_rings(r, &p)) {
		err = errno;
		probe_ring_close(r);
		errno = err;
		return -1;
	}
	return 0;
}

void probe_ring_close(struct probe_ring *r)
{
	if (r->sqes)
		munmap(r->sqes, r->sqes_len);
	if (r->cq_map && r->cq_map != r->sq_map)
		munmap(r->cq_map, r->cq_len);
	if (r->sq_map)
		munmap(r->sq_map, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

struct io_uring_sqe *probe_ring_sqe(struct probe_ring *r)
{
	unsigned tail = *r->sq_tail + r->pending;
	struct io_uring_sqe *sqe;

	if (r->pending > *r->sq_mask)
		return NULL;
	sqe = &r->sqes[tail & *r->sq_mask];
	memset(sqe, 0, sizeof(*sqe));
	r->sq_array[tail & *r->sq_mask] = tail & *r->sq_mask;
	r->pending++;
	return sqe;
}

int probe_ring_enter(struct probe_ring *r, unsigned wait)
{
	unsigned submit = r->pending;
	long n;

	/* Publish the entries before the kernel reads the tail. */
	__atomic_store_n(r->sq_tail, *r->sq_tail + submit, __ATOMIC_RELEASE);
	r->pending = 0;
	for (;;) {
		r->enters++;
		n = syscall(SYS_io_uring_enter, r->fd, submit, wait,
			    wait ? IORING_ENTER_GETEVENTS : 0, NULL, 0);
		if (n >= 0 && (unsigned)n >= submit)
			return 0;
		if (n >= 0) { /* fewer taken: submit the rest */
			submit -= (unsigned)n;
			continue;
		}
		if (errno != EINTR) /* EINTR: nothing was taken, try again */
			return -1;
	}
}

int probe_ring_reap(struct probe_ring *r, struct io_uring_cqe *out)
{
	unsigned head = *r->cq_head;

	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return 0;
	*out = r->cqes[head & *r->cq_mask];
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return 1;
}
