/* SPDX-License-Identifier: MIT */
/**
 * @file fault_wrap.c
 * See fault_wrap.h. Received datagrams are copied out of the caller's
 * slots, given a fate, and written back in their new order; datagrams that
 * do not fit (duplicates, held ones) wait in a per-socket queue and are
 * returned by the next call on that socket. A mutex serializes the
 * runtime threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fault_wrap.h"

int __real_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout);

#define HD_MAX_FDS 64
#define HD_MAX_SLOTS 1024

/** A datagram copied out of a receive slot. */
struct hd_dgram {
	struct hd_dgram *next;
	struct sockaddr_storage name;
	socklen_t namelen;
	size_t len, ctllen;
	int flags;
	uint8_t *ctl;
	uint8_t data[];
};

/** Datagrams waiting to be returned on one socket, FIFO; one held back. */
struct hd_queue {
	int fd;
	struct hd_dgram *head, *tail;
	struct hd_dgram *held;
};

static pthread_mutex_t hd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hd_queue hd_queues[HD_MAX_FDS];
static _Atomic uint32_t hd_loss, hd_dup, hd_reorder; /* read without the lock on the fast path */
static uint64_t hd_rng = 1;
static struct hd_fault_counts hd_counts;

/** hd_faults_set() - See fault_wrap.h. */
void hd_faults_set(uint32_t loss_ppm, uint32_t dup_ppm, uint32_t reorder_ppm, uint64_t seed)
{
	pthread_mutex_lock(&hd_lock);
	hd_loss = loss_ppm;
	hd_dup = dup_ppm;
	hd_reorder = reorder_ppm;
	hd_rng = seed | 1;
	pthread_mutex_unlock(&hd_lock);
}

/** hd_faults_counts() - See fault_wrap.h. */
void hd_faults_counts(struct hd_fault_counts *out, int reset)
{
	pthread_mutex_lock(&hd_lock);
	*out = hd_counts;
	if (reset)
		memset(&hd_counts, 0, sizeof(hd_counts));
	pthread_mutex_unlock(&hd_lock);
}

/** chance() - True with probability @ppm per million (xorshift64*). */
static int chance(uint32_t ppm)
{
	hd_rng ^= hd_rng >> 12;
	hd_rng ^= hd_rng << 25;
	hd_rng ^= hd_rng >> 27;
	return ppm && (hd_rng * 0x2545f4914f6cdd1dull) % 1000000 < ppm;
}

/** queue_for() - The queue of socket @fd (created on first use), or NULL if full. */
static struct hd_queue *queue_for(int fd)
{
	int i;

	for (i = 0; i < HD_MAX_FDS; i++)
		if (hd_queues[i].fd == fd + 1)
			return &hd_queues[i];
	for (i = 0; i < HD_MAX_FDS; i++)
		if (hd_queues[i].fd == 0) {
			hd_queues[i].fd = fd + 1; /* 0 marks a free entry */
			return &hd_queues[i];
		}
	return NULL;
}

/** push() - Append @d to @q. */
static void push(struct hd_queue *q, struct hd_dgram *d)
{
	d->next = NULL;
	if (q->tail)
		q->tail->next = d;
	else
		q->head = d;
	q->tail = d;
}

/** copy_out() - Copy slot @m (just filled by the kernel) into a new datagram. */
static struct hd_dgram *copy_out(const struct mmsghdr *m)
{
	const struct msghdr *h = &m->msg_hdr;
	struct hd_dgram *d = malloc(sizeof(*d) + m->msg_len + h->msg_controllen);

	if (!d)
		abort();
	memcpy(d->data, h->msg_iov[0].iov_base, m->msg_len);
	d->len = m->msg_len;
	d->ctl = d->data + m->msg_len;
	d->ctllen = h->msg_controllen;
	if (d->ctllen)
		memcpy(d->ctl, h->msg_control, d->ctllen);
	d->namelen = h->msg_namelen <= sizeof(d->name) ? h->msg_namelen : sizeof(d->name);
	memcpy(&d->name, h->msg_name, d->namelen);
	d->flags = h->msg_flags;
	return d;
}

/** dup_of() - A copy of @d. */
static struct hd_dgram *dup_of(const struct hd_dgram *d)
{
	struct hd_dgram *c = malloc(sizeof(*c) + d->len + d->ctllen);

	if (!c)
		abort();
	memcpy(c, d, sizeof(*c) + d->len + d->ctllen);
	c->ctl = c->data + d->len;
	return c;
}

/** copy_in() - Write @d into slot @m, whose control capacity is @ctlcap. */
static void copy_in(struct mmsghdr *m, const struct hd_dgram *d, size_t ctlcap)
{
	struct msghdr *h = &m->msg_hdr;

	memcpy(h->msg_iov[0].iov_base, d->data, d->len);
	m->msg_len = (unsigned int)d->len;
	memcpy(h->msg_name, &d->name, d->namelen);
	h->msg_namelen = d->namelen;
	h->msg_controllen = d->ctllen <= ctlcap ? d->ctllen : 0;
	if (h->msg_controllen)
		memcpy(h->msg_control, d->ctl, h->msg_controllen);
	h->msg_flags = d->flags;
}

/** judge() - Give datagram @d its fate and queue what survives on @q. */
static void judge(struct hd_queue *q, struct hd_dgram *d)
{
	hd_counts.seen++;
	if (chance(hd_loss)) {
		hd_counts.dropped++;
		free(d);
		return;
	}
	if (chance(hd_dup)) {
		hd_counts.duplicated++;
		push(q, dup_of(d));
	}
	if (!q->held && chance(hd_reorder)) {
		hd_counts.reordered++;
		q->held = d;
		return;
	}
	push(q, d);
	if (q->held) {
		push(q, q->held);
		q->held = NULL;
	}
}

/**
 * __wrap_recvmmsg() - recvmmsg() with faults: see the file comment.
 * Return: datagrams written to @msgs, or -1 with errno as the real call.
 */
int __wrap_recvmmsg(int fd, struct mmsghdr *msgs, unsigned int vlen, int flags,
		    struct timespec *timeout)
{
	size_t ctlcap[HD_MAX_SLOTS];
	struct hd_queue *q;
	unsigned int i, out = 0;
	int n, err;

	if (!(hd_loss | hd_dup | hd_reorder) || vlen > HD_MAX_SLOTS)
		return __real_recvmmsg(fd, msgs, vlen, flags, timeout);
	pthread_mutex_lock(&hd_lock);
	q = queue_for(fd);
	for (i = 0; i < vlen; i++)
		ctlcap[i] = msgs[i].msg_hdr.msg_controllen;
	n = __real_recvmmsg(fd, msgs, vlen, flags, timeout);
	err = errno;
	if (!q) {
		pthread_mutex_unlock(&hd_lock);
		return n;
	}
	for (i = 0; n > 0 && i < (unsigned int)n; i++)
		judge(q, copy_out(&msgs[i]));
	if (n <= 0 && q->held) { /* nothing new came: let the held one go */
		push(q, q->held);
		q->held = NULL;
	}
	while (q->head && out < vlen) {
		struct hd_dgram *d = q->head;

		q->head = d->next;
		if (!q->head)
			q->tail = NULL;
		copy_in(&msgs[out], d, ctlcap[out]);
		out++;
		free(d);
	}
	pthread_mutex_unlock(&hd_lock);
	if (out == 0 && n < 0) {
		errno = err;
		return -1;
	}
	if (out == 0) {
		errno = EAGAIN;
		return n < 0 ? -1 : 0;
	}
	return (int)out;
}
