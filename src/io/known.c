/* SPDX-License-Identifier: MIT */
/**
 * @file known.c
 * Known peers' connected sockets in the port's SO_REUSEPORT group
 * (known.h).
 *
 * Facts from the kernel this relies on: a UDP socket connected to a remote
 * address and port scores above the port's unconnected sockets at lookup,
 * and the SO_REUSEPORT group's selection (by program or by hash) never
 * returns a connected member; the group's program indexes members in the
 * order they joined, and a member that leaves is replaced by the last, so
 * the port's own two sockets (joined first) keep indexes 0 and 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "icmp.h"
#include "known.h"

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/** now_ns() - CLOCK_MONOTONIC in ns. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** homa_known_init() - See known.h. */
int homa_known_init(struct homa_known *k, uint32_t cap, int ep, const struct sockaddr_storage *bind,
		    socklen_t len, uint32_t rcvbuf, bool gro, const struct homa_io_receiver *proto)
{
	memset(k, 0, sizeof(*k));
	if (!cap)
		return 0;
	k->peers = calloc(cap, sizeof(*k->peers));
	k->ready = calloc(cap + 2, sizeof(*k->ready));
	if (!k->peers || !k->ready || homa_peerset_init(&k->set, cap)) {
		free(k->peers);
		free(k->ready);
		k->peers = NULL;
		return HOMA_ENOMEM;
	}
	pthread_mutex_init(&k->lock, NULL);
	for (uint32_t i = 0; i < cap; i++)
		k->peers[i].fd = -1;
	k->cap = cap;
	k->ep = ep;
	k->family = bind->ss_family;
	k->bind = *bind;
	k->bind_len = len;
	k->rcvbuf = rcvbuf;
	k->gro = gro;
	k->proto = *proto;
	return 0;
}

/**
 * drop_slot() - Close slot @i's socket (it leaves the epoll set and the
 * group); its peer is no longer known (k->set).
 */
static void drop_slot(struct homa_known *k, uint32_t i)
{
	pthread_mutex_lock(&k->lock);
	homa_peerset_del(&k->set, &k->peers[i].addr, k->peers[i].port);
	pthread_mutex_unlock(&k->lock);
	close(k->peers[i].fd);
	k->peers[i].fd = -1;
	k->n--;
	k->gen++;
}

/** homa_known_free() - See known.h. */
void homa_known_free(struct homa_known *k)
{
	if (!k->cap)
		return;
	for (uint32_t i = 0; i < k->cap; i++)
		if (k->peers[i].fd >= 0)
			drop_slot(k, i);
	free(k->peers);
	free(k->ready);
	homa_peerset_free(&k->set);
	k->peers = NULL;
	k->cap = 0;
	pthread_mutex_destroy(&k->lock);
}

/** homa_known_note() - See known.h. */
void homa_known_note(struct homa_known *k, const homa_addr *addr, uint16_t port,
		     struct homa_io_counters *c)
{
	if (!k->cap)
		return;
	pthread_mutex_lock(&k->lock);
	if (homa_peerset_has(&k->set, addr, port)) {  /* known already: nothing to admit */
		pthread_mutex_unlock(&k->lock);
		return;
	}
	for (uint32_t i = 0; i < k->npend; i++)
		if (homa_peer_is(&k->pend[i].addr, k->pend[i].port, addr, port)) {
			pthread_mutex_unlock(&k->lock);
			return;
		}
	if (k->npend < HOMA_KNOWN_PENDING) {
		k->pend[k->npend].addr = *addr;
		k->pend[k->npend].port = port;
		k->npend++;
		__atomic_store_n(&k->has_pend, 1, __ATOMIC_RELEASE);
	} else {
		homa_io_count(&c->rx_known_refused, 1);
	}
	pthread_mutex_unlock(&k->lock);
}

/**
 * unspecified() - True for port 0 or the address :: or 0.0.0.0 (mapped),
 * which a connect() would take as the local host: never a peer's.
 */
static bool unspecified(const homa_addr *addr, uint16_t port)
{
	static const uint8_t mapped_any[16] = {[10] = 0xff, [11] = 0xff};

	return !port || !memcmp(addr->b, (const uint8_t[16]){0}, 16) ||
	       !memcmp(addr->b, mapped_any, 16);
}

/**
 * open_peer() - A socket bound to the port (SO_REUSEPORT) and connected to
 * @addr:@port, set up like the port's, in the epoll set as slot @slot.
 * Return: the fd, or -1 (an unspecified address or port, or the kernel
 * refused a step; nothing is left open).
 */
static int open_peer(struct homa_known *k, const homa_addr *addr, uint16_t port, uint32_t slot)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = HOMA_KNOWN_TAG | slot};
	struct sockaddr_storage to;
	int on = 1, off = 0, len;
	int fd;

	len = unspecified(addr, port) ? -1 : homa_io_addr_to_sockaddr(k->family, addr, port, &to);
	if (len < 0)
		return -1;
	fd = socket(k->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -1;
	if (k->family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0 ||
	    bind(fd, (const struct sockaddr *)&k->bind, k->bind_len) < 0 ||
	    connect(fd, (const struct sockaddr *)&to, (socklen_t)len) < 0 ||
	    epoll_ctl(k->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		return -1;
	}
	homa_driver_set_bufs(fd, k->rcvbuf);
	homa_io_recv_tos_enable(fd, k->family);
	homa_io_icmp_enable(fd, k->family);
	if (k->gro)
		setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
	return fd;
}

/**
 * pick_slot() - The slot for a new peer: a free one, else the one read
 * least lately if idle HOMA_KNOWN_IDLE_NS at @now (its socket closed);
 * -1 if every peer is busy.
 */
static int pick_slot(struct homa_known *k, uint64_t now)
{
	int free_slot = -1, oldest = -1;

	for (uint32_t i = 0; i < k->cap; i++) {
		struct homa_known_peer *p = &k->peers[i];

		if (p->fd < 0) {
			free_slot = free_slot < 0 ? (int)i : free_slot;
			continue;
		}
		if (oldest < 0 || p->last_ns < k->peers[oldest].last_ns)
			oldest = (int)i;
	}
	if (free_slot >= 0)
		return free_slot;
	if (oldest >= 0 && now - k->peers[oldest].last_ns >= HOMA_KNOWN_IDLE_NS) {
		drop_slot(k, (uint32_t)oldest);
		k->nready = k->iready = 0;  /* the ready list may name the old socket */
		return oldest;
	}
	return -1;
}

/** known() - Whether @addr:@port has a slot (k->set, under k->lock). */
static bool known(struct homa_known *k, const homa_addr *addr, uint16_t port)
{
	bool has;

	pthread_mutex_lock(&k->lock);
	has = homa_peerset_has(&k->set, addr, port);
	pthread_mutex_unlock(&k->lock);
	return has;
}

/**
 * admit_one() - Give @addr:@port a slot and a socket (homa_known_admit()),
 * unless it has one: a note made while the peer's first admission was
 * under way queued it again.
 */
static void admit_one(struct homa_known *k, const homa_addr *addr, uint16_t port, uint64_t now,
		      struct homa_io_counters *c)
{
	struct homa_known_peer *p;
	int slot;

	if (known(k, addr, port))
		return;
	slot = pick_slot(k, now);
	if (slot < 0) {
		homa_io_count(&c->rx_known_refused, 1);
		return;
	}
	p = &k->peers[slot];
	p->fd = open_peer(k, addr, port, (uint32_t)slot);
	if (p->fd < 0) {
		homa_io_count(&c->rx_known_refused, 1);
		return;
	}
	p->addr = *addr;
	p->port = port;
	p->last_ns = now;
	p->rx = k->proto;
	p->rx.fd = p->fd;
	p->rx.error = 0;
	p->urgent = false;
	k->n++;
	k->gen++;
	pthread_mutex_lock(&k->lock);
	homa_peerset_add(&k->set, addr, port);
	pthread_mutex_unlock(&k->lock);
}

/** homa_known_admit() - See known.h. */
void homa_known_admit(struct homa_known *k, struct homa_io_counters *c)
{
	struct {
		homa_addr addr;
		uint16_t port;
	} take[HOMA_KNOWN_ADMITS];
	uint32_t n = 0;
	uint64_t now;

	if (!__atomic_load_n(&k->has_pend, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&k->lock);
	n = k->npend < HOMA_KNOWN_ADMITS ? k->npend : HOMA_KNOWN_ADMITS;
	memcpy(take, k->pend, n * sizeof(k->pend[0]));
	memmove(k->pend, k->pend + n, (k->npend - n) * sizeof(k->pend[0]));
	k->npend -= n;
	__atomic_store_n(&k->has_pend, k->npend > 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&k->lock);
	now = now_ns();
	for (uint32_t i = 0; i < n; i++)
		admit_one(k, &take[i].addr, take[i].port, now, c);
	__atomic_store_n(&c->rx_known_peers, (uint64_t)k->n, __ATOMIC_RELAXED);
}

/** homa_known_next() - See known.h. */
struct homa_known_peer *homa_known_next(struct homa_known *k, bool refill,
					 struct homa_io_counters *c)
{
	for (;;) {
		while (k->iready < k->nready) {
			const struct epoll_event *ev = &k->ready[k->iready++];
			uint32_t tag = ev->data.u32, slot = tag & (HOMA_KNOWN_TAG - 1);

			if ((tag & HOMA_KNOWN_TAG) && slot < k->cap && k->peers[slot].fd >= 0)
				return &k->peers[slot];
			if (tag < 32 && (ev->events & EPOLLERR))
				k->port_err |= 1u << tag;  /* a port queue's report */
		}
		if (!refill || !k->n)
			return NULL;
		refill = false;
		k->iready = 0;
		homa_io_count(&c->rx_scans, 1);
		k->nready = epoll_wait(k->ep, k->ready, (int)k->cap + 2, 0);
		if (k->nready < 0)
			k->nready = 0;
	}
}

/** homa_known_unreach() - See known.h. */
int homa_known_unreach(struct homa_known *k, uint16_t port, struct homa_io_unreach *out, int max)
{
	int n = 0;

	if (!k->errors)
		return 0;
	k->errors = false;
	for (uint32_t i = 0; i < k->cap; i++) {
		struct homa_known_peer *p = &k->peers[i];

		if (p->fd < 0 || !p->rx.error)
			continue;
		if (n >= max) {
			k->errors = true;  /* the next call takes this one's */
			break;
		}
		p->rx.error = 0;
		n += homa_io_icmp_drain(p->fd, port, out + n, max - n);
	}
	return n;
}

/** homa_known_touch() - Mark @p read from now (it keeps its slot). */
void homa_known_touch(struct homa_known_peer *p)
{
	p->last_ns = now_ns();
}
