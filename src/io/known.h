/* SPDX-License-Identifier: MIT */
/**
 * @file known.h
 * Known peers apart from strangers, in the kernel (UDP driver): a peer
 * the runtime names known (a whole request or response came from its
 * address and port) gets a UDP socket of its own, bound to the Homa port
 * in the port's SO_REUSEPORT group and connected to the peer. The kernel
 * delivers a datagram to the connected socket whose remote address and
 * port match before it looks at the group, and never picks a connected
 * socket for anyone else's datagram, so a known peer's packets wait in a
 * queue no stranger can fill. The driver reads these queues first; the
 * port's own queues (strangers, and known peers' packets from before they
 * became known) get a turn after HOMA_KNOWN_TURNS known batches in a row.
 *
 * At most a cap of peers is known; a new one takes the slot of the peer
 * read least lately only if that one has been idle HOMA_KNOWN_IDLE_NS, so
 * active peers keep their queues and promotions cost at most cap socket
 * set-ups per idle period. Where the kernel refuses a step (no
 * SO_REUSEPORT, no descriptors) the peer stays on the port's queues.
 */
#ifndef HOMA_IO_KNOWN_H
#define HOMA_IO_KNOWN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "batch.h"
#include "driver.h"
#include "peerset.h"

/** Known batches read in a row, while known peers have packets, before the port's queues get one. */
#define HOMA_KNOWN_TURNS 4
/** A known peer read nothing from for this long may give its slot to a new one. */
#define HOMA_KNOWN_IDLE_NS 1000000000ull
/** Peers named known and not yet given a socket (more are dropped until recv() admits them). */
#define HOMA_KNOWN_PENDING 32
/** Peers admitted per admit call (each costs a few system calls). */
#define HOMA_KNOWN_ADMITS 4
/** epoll data tag of a known peer's socket (its slot in the low bits). */
#define HOMA_KNOWN_TAG 0x10000u

/** One known peer and its connected socket. */
struct homa_known_peer {
	int fd;                      /**< connected socket, -1: free slot */
	homa_addr addr;
	uint16_t port;
	uint64_t last_ns;            /**< admitted or last read from (CLOCK_MONOTONIC) */
	struct homa_io_receiver rx;  /**< shares the driver's buffers; fd is ours */
	/** its latest batch was all short packets of the fast queue's priorities (udp.c) */
	bool urgent;
};

/** A driver's known peers. */
struct homa_known {
	struct homa_known_peer *peers; /**< cap slots */
	uint32_t cap, n;               /**< slots; slots in use */
	int ep;                        /**< epoll set the sockets join (the driver's fd) */
	int family;                    /**< of the port's socket */
	struct sockaddr_storage bind;  /**< the port's address, with its port */
	socklen_t bind_len;
	uint32_t rcvbuf;               /**< as the port's sockets */
	bool gro;                      /**< turn on UDP_GRO (buffers sized for it) */
	struct homa_io_receiver proto; /**< buffers every peer's receiver shares */
	struct epoll_event *ready;     /**< ready sockets from the last epoll_wait() */
	int nready, iready;
	int turns;                     /**< known batches since the port's queues' turn */
	uint32_t gen;                  /**< bumped whenever a socket joins or leaves */
	uint32_t next;                 /**< round-robin start among polled known sockets */
	uint32_t port_err;             /**< bit q: the set reported port queue q (epoll data q < 32) in error */
	bool errors;                   /**< a peer's receiver may hold an error note (homa_known_check()) */
	pthread_mutex_t lock;          /**< guards pend, npend, set */
	struct homa_peerset set;       /**< the peers in slots: one lookup per homa_known_note() */
	struct {
		homa_addr addr;
		uint16_t port;
	} pend[HOMA_KNOWN_PENDING];
	uint32_t npend;
	uint32_t has_pend;             /**< npend > 0, read without the lock (__atomic builtins) */
};

/**
 * homa_known_init() - Room for @cap known peers (0: none; every other
 * call is then a no-op) on a port bound to @bind (@len bytes, port set)
 * whose sockets are in the epoll set @ep and share @proto's buffers.
 * Return: 0 or HOMA_ENOMEM.
 */
int homa_known_init(struct homa_known *k, uint32_t cap, int ep, const struct sockaddr_storage *bind,
		    socklen_t len, uint32_t rcvbuf, bool gro, const struct homa_io_receiver *proto);

/** homa_known_free() - Close every known peer's socket and free @k (not the shared buffers). */
void homa_known_free(struct homa_known *k);

/**
 * homa_known_note() - Name @addr:@port known; any thread. A peer that
 * has a slot already costs one lookup (k->set) and is not queued; another
 * is taken in by the next homa_known_admit(), or dropped (counted in
 * @c->rx_known_refused) when HOMA_KNOWN_PENDING wait already.
 */
void homa_known_note(struct homa_known *k, const homa_addr *addr, uint16_t port,
		     struct homa_io_counters *c);

/**
 * homa_known_admit() - Give up to HOMA_KNOWN_ADMITS noted peers a socket
 * (the receiving thread). A peer no slot can take (all busy within
 * HOMA_KNOWN_IDLE_NS) or whose socket the kernel refuses stays a
 * stranger, counted in @c->rx_known_refused. Keeps @c->rx_known_peers.
 */
void homa_known_admit(struct homa_known *k, struct homa_io_counters *c);

/**
 * homa_known_next() - The next known peer with packets waiting, from the
 * ready list of the last epoll_wait() on the driver's set (made anew,
 * without waiting, when it is used up and @refill; counted in
 * @c->rx_scans). NULL when none. Entries of the port's own queues
 * (epoll data below 32) reported in error (EPOLLERR: an ICMP report
 * waits in the error queue, which the set reports even while the
 * strangers' gate has the queue asking for nothing) are noted in
 * k->port_err for the driver to drain (the UDP driver's unreach()).
 */
struct homa_known_peer *homa_known_next(struct homa_known *k, bool refill,
					 struct homa_io_counters *c);

/** homa_known_touch() - Mark @p read from just now (an active peer keeps its slot). */
void homa_known_touch(struct homa_known_peer *p);

/**
 * homa_known_check() - After a read of @p's socket: note in @k whether the
 * read left an error note in @p's receiver (a read the kernel refused
 * with the socket's pending ICMP error), so that homa_known_unreach()
 * looks for it; it looks at no peer's receiver otherwise.
 */
static inline void homa_known_check(struct homa_known *k, const struct homa_known_peer *p)
{
	if (p->rx.error)
		k->errors = true;
}

/**
 * homa_known_unreach() - Drain the error queues of known peers' sockets
 * on which a receive saw an ICMP report (the kernel files reports about
 * packets to a known peer on its connected socket). Looks at the peers
 * only when a read noted an error (homa_known_check()) since the last
 * call that looked at them all; a call whose @out fills first leaves the
 * note for the next. Return: reports kept in @out (at most @max), as
 * homa_io_icmp_drain().
 */
int homa_known_unreach(struct homa_known *k, uint16_t port, struct homa_io_unreach *out, int max);

#endif /* HOMA_IO_KNOWN_H */
