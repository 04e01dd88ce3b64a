/* SPDX-License-Identifier: MIT */
/**
 * @file udp.c
 * The UDP driver: each Homa packet is the payload of one UDP datagram
 * whose port is the Homa port. Needs no privilege. Uses UDP_SEGMENT to
 * send runs of same-size packets in one super-packet and UDP_GRO to
 * receive coalesced ones, when the kernel supports them. ICMP errors
 * about our packets are queued on the socket (IP_RECVERR), so a request to
 * a port where nothing listens ends with port unreachable at once rather
 * than by timeout (unreach).
 *
 * With a config's rx_fast_prio, the driver receives on two sockets of one
 * SO_REUSEPORT group with a steering program (steer.h): packets of that
 * priority and above (short messages, control packets) wait in a queue
 * of their own, read first; the runtime waits on an epoll set of both.
 * Where the kernel refuses a step it keeps one socket and says so in the
 * log and in the rx_queues counter.
 *
 * With a config's known_peers, peers the runtime names known get a
 * connected socket of their own in the port's group, read before the
 * port's queues (known.h); the port's queues get a turn after
 * HOMA_KNOWN_TURNS known batches in a row.
 *
 * With several receiving sockets and at most HOMA_DRIVER_POLL_MAX of them,
 * the driver hands the waiter the list to poll one by one (rx_poll): the
 * wait says which sockets have packets and recv() reads only those,
 * without an epoll_wait() or an empty receive per wake-up.
 *
 * With a config's stranger_budget, the port's queues get at most that many
 * packets per millisecond while known peers are active, and under a flood
 * are read once per millisecond, in full batches (gate.h).
 *
 * ICMP reports (replies to strangers often go to closed ports) are read
 * from a polled socket's error queue before its packets when the wait
 * reported POLLERR on it: that also clears the socket error that would
 * refuse the read, and no other socket's queue is read for it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "batch.h"
#include "gate.h"
#include "driver.h"
#include "icmp.h"
#include "homa/obs.h"
#include "known.h"
#include "lendpool.h"
#include "steer.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

/** Receive buffer size with UDP_GRO: a whole coalesced super-packet. */
#define UDP_GRO_BUF 65536

/**
 * Receives in a row from the fast queue, while it has packets, before the
 * other queue gets a turn: a steady stream of high-priority packets delays
 * the rest but cannot starve it.
 */
#define FAST_TURNS 4

/** ICMP reports a wait's POLLERR reads ahead of udp_unreach() (drain_reported()). */
#define UDP_HELD 8

/** A UDP driver. */
struct udp_driver {
	struct homa_driver base;
	struct homa_io_sender tx;   /**< sends on fds[HOMA_STEER_FAST] */
	/**
	 * One receiver per socket of the port; rx[1] shares rx[0]'s buffers
	 * (one recv() reads one socket, and its packets live until the next
	 * recv()).
	 */
	struct homa_io_receiver rx[2];
	int fds[2];                 /**< the port's sockets; fds[1] is -1 with one queue */
	int nq;                     /**< the port's receive queues: 1 or 2 */
	int fast_turns;             /**< fast-queue receives since the other's turn */
	_Atomic uint8_t fast_prio;  /**< lowest of the fast queue's priorities (0: none; steer()) */
	bool repoll_due;            /**< the latest polled read filled a batch (read_entry()) */
	struct homa_io_receiver rx2;  /**< add_rx()'s socket (rx2.fd -1: none) */
	bool rx2_first;               /**< recv() reads rx2 before rx */
	uint32_t batch, rcvbuf;       /**< as opened */
	size_t buf;                   /**< bytes per receive buffer */
	struct homa_io_rx *pkts;  /**< what recv() returns */
	size_t max_pkts;
	int last_n;               /**< packets the latest recv() returned (settled by the next) */
	/** zero-copy receive (lend.arena NULL: off): every receiver but urgent reads through its table */
	struct homa_lendpool lend;
	/** recv_urgent()'s receiver on the fast queue, buffers of its own (made on first use) */
	struct homa_io_receiver urgent;
	struct homa_io_rx *urgent_pkts;  /**< what recv_urgent() returns */
	size_t urgent_max;               /**< urgent_pkts' room (0: not made yet) */
	struct homa_known known;  /**< known peers' sockets (known.cap 0: none) */
	/** base.rx_poll[i]'s socket: -1 - q for the port's queue q, else a known slot */
	int poll_src[HOMA_DRIVER_POLL_MAX];
	uint32_t poll_gen;        /**< known.gen when base.rx_poll was built */
	int poll_known;           /**< known peers' entries in base.rx_poll (after the port's) */
	struct homa_gate gate;    /**< strangers' budget (homa_gate_on() false: none) */
	bool ep_open;             /**< the epoll set asks for the port's queues' packets (ep_sync()) */
	/** reports read from error queues the wait reported (drain_reported()), for unreach() */
	struct homa_io_unreach held[UDP_HELD];
	int nheld;
};

/** poll_src of the gate's timerfd (the last entry of base.rx_poll). */
#define POLL_GATE (-100)

/**
 * probe_gso() - True if the kernel accepts UDP_SEGMENT on @fd.
 */
static bool probe_gso(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_UDP, UDP_SEGMENT, &v, &len) == 0;
}

/**
 * bind_socket() - Create and bind the UDP socket; learn the bound port.
 * Return: the fd, or a negative homa error.
 */
static int bind_socket(const struct homa_driver_config *cfg, uint16_t *port)
{
	int family = cfg->bind.ss_family;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int off = 0;

	if (fd < 0)
		return homa_io_errno(errno);
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (const struct sockaddr *)&cfg->bind, cfg->bind_len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&got, &len) < 0) {
		int err = homa_io_errno(errno);

		close(fd);
		return err;
	}
	homa_io_addr_from_sockaddr((struct sockaddr *)&got, &(homa_addr){0}, port);
	return fd;
}

/**
 * gro_size() - The segment size of a coalesced datagram (from its UDP_GRO
 * control message), or @len if it was not coalesced.
 */
static size_t gro_size(struct msghdr *h, size_t len)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int seg;

			memcpy(&seg, CMSG_DATA(c), sizeof(seg));
			return seg > 0 ? (size_t)seg : len;
		}
	}
	return len;
}

/**
 * recv_into() - Receive a batch from @rx into @pkts (room for @max); split
 * UDP_GRO super-packets into Homa packets using the segment size the
 * kernel reports; read each datagram's priority from its TOS / traffic
 * class. A datagram read into the lend pool's table (@rx->slots) is
 * lendable when it fills enough of its slot, while the pool has free
 * slots to replace each lendable one. Return: packets in @pkts, or HOMA_EIO.
 */
static int recv_into(struct udp_driver *d, struct homa_io_receiver *rx,
		     struct homa_io_rx *pkts, size_t max)
{
	struct homa_driver *base = &d->base;
	int n = homa_io_receiver_recv(rx);
	size_t k = 0;
	uint32_t credit;

	if (n == 0)
		homa_io_count(&base->c.rx_empty, 1);
	if (n <= 0)
		return n;
	base->rx_full = (uint32_t)n >= rx->batch;
	homa_io_count(&base->c.rx_calls, 1);
	credit = rx->slots ? homa_lendpool_spare(&d->lend) : 0;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &rx->msgs[i].msg_hdr;
		uint8_t *buf = rx->iovs[i].iov_base;
		size_t len = rx->msgs[i].msg_len, seg = len;
		homa_addr src;
		uint8_t prio;
		bool lendable;

		if ((h->msg_flags & MSG_TRUNC) ||
		    homa_io_addr_from_sockaddr(h->msg_name, &src, NULL) < 0)
			continue;
		seg = gro_size(h, len);
		if (seg < len)
			homa_io_count(&base->c.rx_gro_batches, 1);
		/* GRO only coalesces datagrams with the same TOS */
		prio = homa_io_cmsg_priority(h);
		lendable = credit && homa_lendpool_lendable(&d->lend, len);
		credit -= lendable;
		for (size_t off = 0; off < len && k < max; off += seg) {
			pkts[k].data = buf + off;
			pkts[k].len = len - off < seg ? len - off : seg;
			pkts[k].src = src;
			pkts[k].priority = prio;
			pkts[k].lendable = lendable;
			pkts[k].kept = false;
			homa_io_count(&base->c.rx_bytes, pkts[k].len);
			homa_io_count(&base->c.rx_prio[prio], 1);
			k++;
		}
	}
	homa_io_count(&base->c.rx_packets, k);
	return (int)k;
}

/** recv_from() - recv_into() d->pkts, what recv() returns. */
static int recv_from(struct udp_driver *d, struct homa_io_receiver *rx)
{
	return recv_into(d, rx, d->pkts, d->max_pkts);
}

/** polled() - True when the waiter's ppoll() said which sockets are readable (rx_poll). */
static bool polled(const struct udp_driver *d)
{
	return d->base.rx_polled && d->base.n_rx_poll > 0;
}

/**
 * may_read() - Whether rx_poll entry @i may have packets: always unless
 * polled(), then only if the wait reported it readable (or in error:
 * the receive takes the error for unreach()).
 */
static bool may_read(const struct udp_driver *d, int i)
{
	return !polled(d) || (d->base.rx_poll[i].revents & (POLLIN | POLLERR));
}

/**
 * repoll() - Ask the listed sockets again, without waiting, which are
 * readable now (base.rx_poll's revents); on failure drop the list's
 * readiness (rx_polled), so reads ask the sockets themselves.
 */
static void repoll(struct udp_driver *d)
{
	struct homa_driver *b = &d->base;
	struct pollfd p[HOMA_DRIVER_POLL_MAX];
	int n = b->n_rx_poll;

	memcpy(p, b->rx_poll, (size_t)n * sizeof(p[0]));
	if (poll(p, (nfds_t)n, 0) < 0) {
		b->rx_polled = false;
		return;
	}
	for (int i = 0; i < n; i++)
		b->rx_poll[i].revents = p[i].revents;
	homa_io_count(&b->c.rx_repolls, 1);
}

/**
 * drain_reported() - Read @rx's socket's error queue, which the wait
 * reported (POLLERR), keeping up to UDP_HELD reports in d->held for
 * udp_unreach() (the rest are read and dropped, as udp_unreach() drops
 * what exceeds its caller's room). The drain also clears the socket
 * error, so the read that follows is not refused; @rx's error note
 * (and the sender's, for the socket it sends on) is void.
 */
static void drain_reported(struct udp_driver *d, struct homa_io_receiver *rx)
{
	d->nheld += homa_io_icmp_drain(rx->fd, d->base.port, d->held + d->nheld,
				       UDP_HELD - d->nheld);
	rx->error = 0;
	if (rx->fd == d->tx.fd)
		d->tx.error = 0;
}

/**
 * read_entry() - recv_from() @rx, the socket of rx_poll entry @i; when
 * polled() and the read did not fill a batch, the socket counts as
 * drained until the next wait. An entry the wait reported in error has
 * its error queue read first (drain_reported()), and is not read at all
 * when it reported no packets. A read that filled a batch has the next
 * recv() ask all listed sockets again (repoll()): a caller goes on
 * reading full batches without waiting again (up to 8 per wake-up in
 * the runtime, 16 MB of one bulk peer's data on loopback), and a packet
 * that reached another socket while it handled them (a lookup in the
 * fast queue or in another known peer's) waited behind all of them.
 * One poll() per full batch. Return: as recv_from().
 */
static int read_entry(struct udp_driver *d, int i, struct homa_io_receiver *rx)
{
	short ev = polled(d) ? d->base.rx_poll[i].revents : 0;
	int n;

	if (ev & POLLERR) {
		drain_reported(d, rx);
		d->base.rx_poll[i].revents = ev & ~POLLERR;
		if (!(ev & POLLIN)) {
			d->base.rx_poll[i].revents = 0;
			return 0;
		}
	}
	n = recv_from(d, rx);
	if (!polled(d))
		return n;
	if (n <= 0 || !d->base.rx_full)
		d->base.rx_poll[i].revents = 0;
	else
		d->repoll_due = true;
	return n;
}

/**
 * build_poll() - Point base.rx_poll at the port's queues and the known
 * peers' sockets when the driver receives on an epoll set of at most
 * HOMA_DRIVER_POLL_MAX sockets; else empty (the waiter polls base.fd).
 * Revents of the old list are void (rx_polled cleared).
 */
static void build_poll(struct udp_driver *d)
{
	struct homa_driver *b = &d->base;
	int n = 0;

	d->poll_gen = d->known.gen;
	b->rx_polled = false;
	b->n_rx_poll = 0;
	if (b->fd == d->fds[0] ||
	    d->known.n + (uint32_t)d->nq + (d->gate.tfd >= 0) > HOMA_DRIVER_POLL_MAX)
		return;
	for (int q = 0; q < d->nq; q++) {
		d->poll_src[n] = -1 - q;
		b->rx_poll[n++] = (struct pollfd){.fd = d->gate.closed ? -1 : d->fds[q],
						  .events = POLLIN};
	}
	for (uint32_t i = 0; i < d->known.cap && d->known.n; i++) {
		if (d->known.peers[i].fd < 0)
			continue;
		d->poll_src[n] = (int)i;
		b->rx_poll[n++] = (struct pollfd){.fd = d->known.peers[i].fd, .events = POLLIN};
	}
	d->poll_known = n - d->nq;
	if (d->gate.tfd >= 0) {
		d->poll_src[n] = POLL_GATE;
		b->rx_poll[n++] = (struct pollfd){.fd = d->gate.tfd, .events = POLLIN};
	}
	b->n_rx_poll = n;
}

/**
 * list_only() - True when nobody but the runtime's waiter, polling the
 * list (base.rx_poll), waits for this driver's packets: nobody waits on
 * the epoll set (base.fd), so its interest and the gate's timer may lag.
 */
static bool list_only(const struct udp_driver *d)
{
	const struct homa_driver *b = &d->base;

	return b->n_rx_poll > 0 && !atomic_load_explicit(&b->fd_watched, memory_order_relaxed);
}

/**
 * gate_wake() - Make sure the waiter wakes when the closed gate opens
 * (gate.h): the list's waiter by base.rx_wake_ns (no system call), a
 * waiter on the epoll set by the gate's timerfd, armed once per closing
 * (one timerfd_settime()) and only when someone waits there
 * (list_only() false: homa_fd() users, or no list). Clears rx_wake_ns
 * while the gate is open. recv_own() calls it on every call, so a waiter
 * on the set that appears while the gate is closed has the timer armed
 * at the next recv().
 */
static void gate_wake(struct udp_driver *d)
{
	if (!d->gate.closed) {
		d->base.rx_wake_ns = 0;
		return;
	}
	d->base.rx_wake_ns = homa_gate_end(&d->gate);
	if (!list_only(d))
		homa_gate_arm(&d->gate);
}

/**
 * ep_sync() - Make the epoll set (the driver's fd) ask for the port's
 * queues' packets while the gate is open and not while it is closed,
 * if anyone waits on the set: callers without the polled list, and
 * homa_fd() users (base.fd_watched). Otherwise the set is left as it
 * is, two epoll_ctl() calls saved at each close and open of the gate,
 * and brought in line when a waiter appears (build_poll() empties the
 * list, or fd_watched is set): recv_own() calls this each time.
 */
static void ep_sync(struct udp_driver *d)
{
	struct homa_driver *b = &d->base;
	bool open = !d->gate.closed;

	if (d->ep_open == open || list_only(d))
		return;
	for (int q = 0; q < d->nq; q++) {
		struct epoll_event ev = {.events = open ? EPOLLIN : 0, .data.u32 = (uint32_t)q};

		epoll_ctl(b->fd, EPOLL_CTL_MOD, d->fds[q], &ev);
	}
	d->ep_open = open;
}

/**
 * gate_set() - Poll the port's queues (@open) or leave them be until the
 * gate opens (gate.h): in the polled list, and in the epoll set when
 * someone waits on it (ep_sync()); a closed gate has its waiter woken
 * when it opens (gate_wake()). Opening in a flood interval counts
 * the queues as readable in the list (what the flood sent while they
 * were closed waits there), so the wake-up that opens the gate reads
 * them without a further wait.
 */
static void gate_set(struct udp_driver *d, bool open)
{
	struct homa_driver *b = &d->base;

	ep_sync(d);
	gate_wake(d);
	for (int q = 0; q < d->nq; q++) {
		if (q < b->n_rx_poll && d->poll_src[q] == -1 - q) {
			b->rx_poll[q].fd = open ? d->fds[q] : -1;
			b->rx_poll[q].revents = open && d->gate.flood ? POLLIN : 0;
		}
	}
}

/**
 * recv_port() - Receive a batch from the port's fast queue if it has one,
 * else from its other queue; after FAST_TURNS fast batches in a row the
 * other queue is read first once. Return: as recv_from().
 */
static int recv_port(struct udp_driver *d)
{
	int n = 0;

	if (d->nq == 1)
		return may_read(d, 0) ? read_entry(d, 0, &d->rx[HOMA_STEER_FAST]) : 0;
	if (d->fast_turns < FAST_TURNS && may_read(d, HOMA_STEER_FAST)) {
		n = read_entry(d, HOMA_STEER_FAST, &d->rx[HOMA_STEER_FAST]);
		if (n > 0)
			homa_io_count(&d->base.c.rx_fast_packets, (uint64_t)n);
		if (n != 0) {
			d->fast_turns += n > 0;
			return n;
		}
	}
	d->fast_turns = 0;
	n = may_read(d, HOMA_STEER_SLOW) ? read_entry(d, HOMA_STEER_SLOW, &d->rx[HOMA_STEER_SLOW]) : 0;
	if (n)
		return n;
	n = may_read(d, HOMA_STEER_FAST) ? read_entry(d, HOMA_STEER_FAST, &d->rx[HOMA_STEER_FAST]) : 0;
	if (n > 0)
		homa_io_count(&d->base.c.rx_fast_packets, (uint64_t)n);
	return n;
}

/**
 * Longest packet of a short message or a control packet for
 * got_known_at(): a message that fits one Ethernet frame, with room for
 * an encrypted socket's PSP header and trailer. On loopback (65000-byte
 * packets) a bulk message's packets are far longer, even those sent at
 * the fast queue's priorities (the unscheduled cutoffs give a message of
 * a few packets the highest level).
 */
#define URGENT_PKT_MAX 2048

/**
 * got_known_at() - Count @n packets read from known peer @p into @pkts (n >
 * 0: it keeps its slot) and note whether they were all short
 * (URGENT_PKT_MAX) and of the fast queue's priorities (p->urgent:
 * recv_urgent() reads such a peer, so it never reads bulk data from a
 * peer whose latest batch was bulk data).
 */
static void got_known_at(struct udp_driver *d, struct homa_known_peer *p,
			 const struct homa_io_rx *pkts, int n)
{
	uint8_t fast = atomic_load_explicit(&d->fast_prio, memory_order_relaxed);
	bool high = fast > 0;

	if (n <= 0)
		return;
	homa_known_touch(p);
	homa_io_count(&d->base.c.rx_known_packets, (uint64_t)n);
	for (int i = 0; i < n && high; i++)
		high = pkts[i].priority >= fast && pkts[i].len <= URGENT_PKT_MAX;
	p->urgent = high;
}

/** got_known() - got_known_at() for a batch read into d->pkts (recv()'s). */
static void got_known(struct udp_driver *d, struct homa_known_peer *p, int n)
{
	got_known_at(d, p, d->pkts, n);
}

/**
 * recv_known_polled() - Receive a batch from the next known peer the
 * wait reported readable (round robin over the polled list).
 * Return: as recv_from(); 0 when none is readable.
 */
static int recv_known_polled(struct udp_driver *d)
{
	int m = d->poll_known;

	for (int j = 0; j < m; j++) {
		int i = d->nq + (int)((d->known.next + (uint32_t)j) % (uint32_t)m);
		struct homa_known_peer *p = &d->known.peers[d->poll_src[i]];
		int n;

		if (!may_read(d, i))
			continue;
		n = read_entry(d, i, &p->rx);
		homa_known_check(&d->known, p);
		got_known(d, p, n);
		if (n != 0) {
			d->known.next = (uint32_t)(i - d->nq + 1);
			return n;
		}
	}
	return 0;
}

/**
 * recv_known() - Receive a batch from the next known peer with packets
 * waiting (known.h): among those the wait reported when polled(), else
 * as the epoll set says. Return: as recv_from(); 0 when none has any.
 */
static int recv_known(struct udp_driver *d)
{
	bool refill = true;

	if (polled(d))
		return recv_known_polled(d);
	if (!d->known.n)
		return 0;
	for (;;) {
		struct homa_known_peer *p = homa_known_next(&d->known, refill, &d->base.c);
		int n;

		if (!p)
			return 0;
		refill = false;  /* one epoll_wait() per call at most */
		n = recv_from(d, &p->rx);
		homa_known_check(&d->known, p);
		got_known(d, p, n);
		if (n > 0)
			return n;
	}
}

/**
 * port_more() - After a read from the port's queues: whether one of them
 * may have more packets (the read filled its batch, or a queue the read
 * did not drain was reported readable; always without polled()).
 */
static bool port_more(const struct udp_driver *d)
{
	if (d->base.rx_full)
		return true;
	for (int q = 0; q < d->nq; q++) {
		if (may_read(d, q))
			return true;
	}
	return false;
}

/**
 * recv_strangers() - recv_port() unless the strangers' gate is closed;
 * charge what it read to their budget at @now, closing the gate when it
 * is used up. A batch under the time budget is metered from @now, read
 * before the receive call (rx_t0): the kernel's work on each packet,
 * copied out and freed in that call, is part of what strangers cost.
 * Return: as recv_from().
 */
static int recv_strangers(struct udp_driver *d, uint64_t now)
{
	int n;

	if (d->gate.closed)
		return 0;
	n = recv_port(d);
	if (n > 0 && d->gate.cpu_budget_ns && homa_gate_active(&d->gate, now)) {
		d->base.rx_metered = true;  /* the caller reports its cost: udp_rx_spent() */
		d->base.rx_t0 = now;        /* read before the receive call */
	}
	if (n > 0 && homa_gate_charge(&d->gate, (uint32_t)n, port_more(d), now)) {
		homa_io_count(&d->base.c.rx_gate_closed, 1);
		gate_set(d, false);
	}
	return n;
}

/**
 * udp_rx_spent() - See driver.h: charge @ns to the strangers' CPU budget,
 * closing the gate when it is used up.
 */
static void udp_rx_spent(struct homa_driver *base, uint64_t ns)
{
	struct udp_driver *d = (struct udp_driver *)base;

	if (homa_gate_spend(&d->gate, ns, homa_gate_now())) {
		homa_io_count(&d->base.c.rx_gate_closed, 1);
		gate_set(d, false);
	}
}

/**
 * recv_own() - Receive a batch from a known peer's queue while they have
 * packets, the port's queues (recv_port()) getting one turn after
 * HOMA_KNOWN_TURNS known batches in a row; the port's queues when no
 * known peer has packets. Admits the peers named known since the last
 * call first. Return: as recv_from().
 */
static int recv_own(struct udp_driver *d)
{
	struct homa_known *k = &d->known;
	uint64_t now = homa_gate_on(&d->gate) ? homa_gate_now() : 0;
	int n;

	if (!k->cap)
		return recv_port(d);
	homa_known_admit(k, &d->base.c);
	if (d->poll_gen != k->gen)
		build_poll(d);
	if (homa_gate_due(&d->gate, now))
		gate_set(d, true);
	else if (homa_gate_on(&d->gate)) {
		ep_sync(d);  /* a waiter on the epoll set may have come */
		gate_wake(d);
	}
	if (k->n && k->turns < HOMA_KNOWN_TURNS) {
		n = recv_known(d);
		if (n > 0) {
			k->turns++;
			homa_gate_known(&d->gate, now);
			return n;
		}
	}
	k->turns = 0;
	n = recv_strangers(d, now);
	if (n || !k->n)
		return n;
	n = recv_known(d);
	if (n > 0)
		homa_gate_known(&d->gate, now);
	return n;
}

/**
 * recv_side() - recv_own() (@second false) or from add_rx()'s socket.
 */
static int recv_side(struct udp_driver *d, bool second)
{
	return second ? recv_from(d, &d->rx2) : recv_own(d);
}

/**
 * recv_any() - udp_recv()'s read. With a second socket (add_rx()), one call
 * returns the packets of one socket: the one that last had packets
 * first, the other if it has none; a full batch hands the first turn to
 * the other socket, so neither starves the other.
 */
static int recv_any(struct homa_driver *base)
{
	struct udp_driver *d = (struct udp_driver *)base;
	int n;

	base->rx_metered = false;
	base->rx_t0 = 0;
	if (d->repoll_due) {
		d->repoll_due = false;
		if (polled(d))
			repoll(d);
	}
	if (d->rx2.fd < 0)
		return recv_own(d);
	n = recv_side(d, d->rx2_first);
	if (n > 0) {
		if ((uint32_t)n >= d->batch)
			d->rx2_first = !d->rx2_first;
		return n;
	}
	n = recv_side(d, !d->rx2_first);
	if (n > 0)
		d->rx2_first = !d->rx2_first;
	return n;
}

/**
 * udp_recv() - See driver.h. With the lend pool, the last batch's slots
 * the engine kept packets in are replaced first (homa_lendpool_settle();
 * gauge rx_lent_slots).
 */
static int udp_recv(struct homa_driver *base, struct homa_io_rx **out)
{
	struct udp_driver *d = (struct udp_driver *)base;
	int n;

	*out = d->pkts;
	if (d->lend.arena) {
		homa_lendpool_settle(&d->lend, d->pkts, d->last_n);
		__atomic_store_n(&base->c.rx_lent_slots, homa_lendpool_held(&d->lend),
				 __ATOMIC_RELAXED);
	}
	n = recv_any(base);
	d->last_n = n > 0 ? n : 0;
	return n;
}

/** Datagrams recv_urgent() reads at a time: short messages and control packets. */
#define URGENT_BATCH 8
/** Sockets recv_urgent() asks at most: the fast queue and urgent known peers. */
#define URGENT_SOCKETS 8

/**
 * make_urgent() - recv_urgent()'s receiver, with buffers of its own (the
 * size of the others: a coalesced super-packet fits), made on the first
 * call; its fd is set before each read. Return: 0 or HOMA_ENOMEM.
 */
static int make_urgent(struct udp_driver *d)
{
	size_t max = (size_t)URGENT_BATCH * (d->base.gro ? HOMA_IO_GSO_MAX_SEGS : 1);

	if (d->urgent_max)
		return 0;
	if (max > d->max_pkts)
		max = d->max_pkts;  /* never more than max_rx */
	d->urgent_pkts = calloc(max, sizeof(*d->urgent_pkts));
	if (!d->urgent_pkts || homa_io_receiver_init(&d->urgent, -1, URGENT_BATCH, d->buf)) {
		free(d->urgent_pkts);
		d->urgent_pkts = NULL;
		return HOMA_ENOMEM;
	}
	d->urgent_max = max;
	return 0;
}

/**
 * urgent_sockets() - The sockets recv_urgent() asks, into @p (room for
 * URGENT_SOCKETS) with their known-peer slot in @slot (-1: the port's
 * fast queue, read only while no strangers' budget is on: gate.h): the
 * fast queue, then the known peers whose latest batch was all of its
 * priorities. Return: how many.
 */
static int urgent_sockets(const struct udp_driver *d, struct pollfd *p, int *slot)
{
	int n = 0;

	if (d->nq == 2 && !homa_gate_on(&d->gate)) {
		slot[n] = -1;
		p[n++] = (struct pollfd){.fd = d->fds[HOMA_STEER_FAST], .events = POLLIN};
	}
	for (uint32_t i = 0; i < d->known.cap && d->known.n && n < URGENT_SOCKETS; i++) {
		const struct homa_known_peer *k = &d->known.peers[i];

		if (k->fd < 0 || !k->urgent)
			continue;
		slot[n] = (int)i;
		p[n++] = (struct pollfd){.fd = k->fd, .events = POLLIN};
	}
	return n;
}

/**
 * read_urgent() - Read socket @fd (known-peer slot @slot, -1: the fast
 * queue) into make_urgent()'s buffers, leaving recv()'s batch flag
 * (rx_full) as it was. A socket error the read took is noted on that
 * socket's own receiver (the known peer's, or the fast queue's), where
 * unreach() looks for it before draining that socket's error queue.
 * Packets read from a known peer keep known peers active for the
 * strangers' budget (homa_gate_known()), as recv() does: a known peer
 * whose lookups are all taken here, between chunks of strangers'
 * batches, still puts those batches under the budget.
 * Return: as recv_into().
 */
static int read_urgent(struct udp_driver *d, int fd, int slot)
{
	struct homa_io_receiver *own = slot >= 0 ? &d->known.peers[slot].rx
						 : &d->rx[HOMA_STEER_FAST];
	bool full = d->base.rx_full;
	int n;

	d->urgent.fd = fd;
	n = recv_into(d, &d->urgent, d->urgent_pkts, d->urgent_max);
	d->base.rx_full = full;
	if (d->urgent.error && !own->error)
		own->error = d->urgent.error;  /* for unreach() */
	d->urgent.error = 0;
	if (slot >= 0) {
		homa_known_check(&d->known, &d->known.peers[slot]);
		got_known_at(d, &d->known.peers[slot], d->urgent_pkts, n);
		if (n > 0 && homa_gate_on(&d->gate))
			homa_gate_known(&d->gate, homa_gate_now());
	} else if (n > 0)
		homa_io_count(&d->base.c.rx_fast_packets, (uint64_t)n);
	return n;
}

/**
 * udp_recv_urgent() - See driver.h. Asks the fast queue and the known
 * peers that sent only short messages and control packets lately
 * (got_known_at())
 * (urgent_sockets()) in one poll() and reads the first that has
 * packets into buffers of its own; recv()'s batch and readiness are
 * left as they were (a socket drained here reads empty once in recv()).
 */
static int udp_recv_urgent(struct homa_driver *base, struct homa_io_rx **out)
{
	struct udp_driver *d = (struct udp_driver *)base;
	struct pollfd p[URGENT_SOCKETS];
	int slot[URGENT_SOCKETS];
	int m = urgent_sockets(d, p, slot);

	*out = d->urgent_pkts;
	if (!m || make_urgent(d) || poll(p, (nfds_t)m, 0) <= 0)
		return 0;
	for (int i = 0; i < m; i++) {
		int n;

		if (!(p[i].revents & (POLLIN | POLLERR)))
			continue;
		n = read_urgent(d, p[i].fd, slot[i]);
		if (n != 0) {
			*out = d->urgent_pkts;
			return n;
		}
	}
	return 0;
}

/** udp_add_rx() - See driver.h: rx2 on @fd, with the driver's buffers and options. */
static int udp_add_rx(struct homa_driver *base, int fd)
{
	struct udp_driver *d = (struct udp_driver *)base;
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);
	int on = 1;

	if (d->rx2.fd >= 0) {
		close(fd);
		return HOMA_EINVAL;
	}
	homa_driver_set_bufs(fd, d->rcvbuf);
	if (getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		homa_io_recv_tos_enable(fd, a.ss_family);
	if (base->gro)  /* buffers are UDP_GRO_BUF: coalesced or not, it fits */
		setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
	if (homa_io_receiver_init(&d->rx2, fd, d->batch, d->buf)) {
		close(fd);
		d->rx2.fd = -1;
		return HOMA_ENOMEM;
	}
	if (d->lend.arena)
		homa_io_receiver_use_slots(&d->rx2, d->lend.table);
	base->rx_fd2 = fd;
	d->rx2_first = true;
	return 0;
}

/** udp_send() - See driver.h. */
static int udp_send(struct homa_driver *base, const struct homa_io_tx *pkts, int n)
{
	struct udp_driver *d = (struct udp_driver *)base;

	return homa_io_sender_send(&d->tx, pkts, n, &base->c);
}

/**
 * take_held() - Move up to @max of the reports drain_reported() read
 * (oldest first) to @out. Return: how many.
 */
static int take_held(struct udp_driver *d, struct homa_io_unreach *out, int max)
{
	int n = d->nheld < max ? d->nheld : max;

	if (n <= 0)
		return 0;
	memcpy(out, d->held, (size_t)n * sizeof(*out));
	memmove(d->held, d->held + n, (size_t)(d->nheld - n) * sizeof(*out));
	d->nheld -= n;
	return n;
}

/**
 * unreach_any() - Without the polled list: once a receive or send on
 * either of the port's sockets took the socket error that announces
 * ICMP reports, or the epoll set reported one of them in error
 * (known.port_err: while the strangers' gate is closed nothing receives
 * from them, and the set reports the error until the queue is read, so
 * the waiter would wake at once again and again until the gate opens),
 * drain both sockets' error queues. Return: reports kept in @out (at
 * most @max).
 */
static int unreach_any(struct udp_driver *d, struct homa_io_unreach *out, int max)
{
	bool other;
	int n;

	for (int q = 0; q < d->nq; q++)
		if ((d->known.port_err & (1u << q)) && !d->rx[q].error)
			d->rx[q].error = ECONNREFUSED;
	d->known.port_err = 0;
	other = d->nq == 2 && d->rx[1].error;

	/* the kernel files a report under the group's hash: either socket */
	if (other)
		d->tx.error = d->tx.error ? d->tx.error : d->rx[1].error;
	if ((!d->rx[0].error && !d->tx.error) || max < 1)
		return 0;
	d->rx[1].error = 0;
	n = homa_io_icmp_take(&d->rx[0], &d->tx, d->base.port, out, max);
	if (d->nq == 2 && n < max)
		n += homa_io_icmp_drain(d->fds[1], d->base.port, out + n, max - n);
	return n;
}

/**
 * udp_unreach() - Take the ICMP unreachable reports about our packets
 * filed on the port's sockets. With the polled list, those read when a
 * wait reported a socket in error (drain_reported()) and no others: a
 * report whose socket error a receive or send took after the wait is
 * still in its socket's error queue, so the next wait reports that
 * socket in error (POLLERR), and no error queue is read here (replies
 * to strangers at closed ports bring such reports all the time under a
 * flood). Without the list, unreach_any(). See driver.h.
 */
static int udp_unreach(struct homa_driver *base, struct homa_io_unreach *out, int max)
{
	struct udp_driver *d = (struct udp_driver *)base;
	int n = take_held(d, out, max);

	return base->n_rx_poll > 0 ? n : n + unreach_any(d, out + n, max - n);
}

/**
 * udp_unreach_all() - udp_unreach(), then the reports filed on known
 * peers' sockets (about packets sent to them) whose socket error a
 * receive took (recv_urgent()'s too). See driver.h.
 */
static int udp_unreach_all(struct homa_driver *base, struct homa_io_unreach *out, int max)
{
	struct udp_driver *d = (struct udp_driver *)base;
	int n = udp_unreach(base, out, max);

	if (d->known.n && n < max)
		n += homa_known_unreach(&d->known, base->port, out + n, max - n);
	return n;
}

/** udp_know() - See driver.h. */
static void udp_know(struct homa_driver *base, const homa_addr *addr, uint16_t port)
{
	struct udp_driver *d = (struct udp_driver *)base;

	homa_known_note(&d->known, addr, port, &base->c);
}

/** udp_close() - See driver.h. */
static void udp_close(struct homa_driver *base)
{
	struct udp_driver *d = (struct udp_driver *)base;

	homa_known_free(&d->known);
	homa_gate_free(&d->gate);
	if (base->fd != d->fds[0])
		close(base->fd);  /* the epoll set */
	for (int i = 0; i < 2; i++)
		if (d->fds[i] >= 0)
			close(d->fds[i]);
	if (d->rx2.fd >= 0) {
		close(d->rx2.fd);
		homa_io_receiver_free(&d->rx2);
	}
	homa_io_sender_free(&d->tx);
	homa_io_receiver_free(&d->rx[0]);  /* rx[1] shares its buffers */
	if (d->urgent_max)
		homa_io_receiver_free(&d->urgent);
	homa_lendpool_free(&d->lend);  /* the engine gave back every slot it held */
	free(d->urgent_pkts);
	free(d->pkts);
	free(d);
}

/** udp_steer() - See driver.h. */
static int udp_steer(struct homa_driver *base, uint8_t fast_prio)
{
	struct udp_driver *d = (struct udp_driver *)base;

	if (fast_prio >= 1 && fast_prio <= 7)
		atomic_store_explicit(&d->fast_prio, fast_prio, memory_order_relaxed);
	if (d->nq == 1 || fast_prio < 1 || fast_prio > 7)
		return HOMA_ENOTSUP;
	return homa_steer_attach(d->fds[0], fast_prio) ? HOMA_EIO : 0;
}

static const struct homa_driver_ops udp_ops = {
	.name = "udp",
	.send = udp_send,
	.recv = udp_recv,
	.recv_urgent = udp_recv_urgent,
	.unreach = udp_unreach_all,
	.close = udp_close,
	.add_rx = udp_add_rx,
	.steer = udp_steer,
	.know = udp_know,
	.rx_spent = udp_rx_spent,
};

/**
 * enable_offloads() - Turn on UDP_GRO and check UDP_SEGMENT when asked.
 */
static void enable_offloads(struct udp_driver *d, bool want)
{
	int on = 1;

	if (!want)
		return;
	d->base.gso = probe_gso(d->fds[0]);
	d->base.gro = setsockopt(d->fds[0], SOL_UDP, UDP_GRO, &on, sizeof(on)) == 0;
}

/**
 * setup_socket() - What every receiving socket of the driver needs:
 * buffers, TOS reports, ICMP reports, and UDP_GRO if the first has it
 * (the receive buffers are sized for it). Never fails (features the
 * kernel lacks stay off, as on the first socket).
 */
static void setup_socket(struct udp_driver *d, int fd, const struct homa_driver_config *cfg)
{
	int on = 1;

	homa_driver_set_bufs(fd, cfg->rcvbuf);
	homa_io_recv_tos_enable(fd, d->base.family);
	homa_io_icmp_enable(fd, d->base.family);
	if (fd != d->fds[0] && d->base.gro)
		setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on));
}

/**
 * port_addr() - @cfg's bind address with the port the driver got, in @a.
 */
static void port_addr(const struct udp_driver *d, const struct homa_driver_config *cfg,
		      struct sockaddr_storage *a)
{
	*a = cfg->bind;
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(d->base.port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(d->base.port);
}

/**
 * open_fast_queue() - Add the second socket and the steering program
 * (steer.h); the first socket is bound and set up. On a refusal keep one
 * queue, undo what was done and log why.
 * Return: 0, or HOMA_ENOMEM/HOMA_EIO for what the caller must fail on.
 */
static int open_fast_queue(struct udp_driver *d, const struct homa_driver_config *cfg)
{
	struct sockaddr_storage a;
	const char *step = "socket";
	int err = 0, off = 0, ep;

	port_addr(d, cfg, &a);
	d->fds[1] = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (d->fds[1] < 0)
		err = errno;
	if (!err && a.ss_family == AF_INET6)
		setsockopt(d->fds[1], IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (!err) {
		step = "SO_REUSEPORT";
		err = homa_steer_join(d->fds[0], d->fds[1], &a, cfg->bind_len);
	}
	if (!err) {
		step = "SO_ATTACH_REUSEPORT_CBPF";
		err = homa_steer_attach(d->fds[0], cfg->rx_fast_prio);
	}
	ep = err ? -1 : homa_steer_epoll(d->fds);
	if (!err && ep < 0) {
		step = "epoll";
		err = -ep;
	}
	if (err) {
		if (d->fds[1] >= 0)
			close(d->fds[1]);
		d->fds[1] = -1;
		setsockopt(d->fds[0], SOL_SOCKET, SO_REUSEPORT, &off, sizeof(off));
		HOMA_LOG_WARN("UDP driver port %u: one receive queue for all priorities (%s: %s)",
			      d->base.port, step, strerror(err));
		return err == ENOMEM ? HOMA_ENOMEM : 0;
	}
	setup_socket(d, d->fds[1], cfg);
	d->nq = 2;
	d->base.fd = ep;
	HOMA_LOG_INFO("UDP driver port %u: priorities %u-7 in a receive queue of their own",
		      d->base.port, cfg->rx_fast_prio);
	return 0;
}

/**
 * open_known() - Room for cfg->known_peers known peers (known.h): with one
 * queue the port's socket joins an SO_REUSEPORT group of its own and an
 * epoll set (the driver's fd) so that peers' sockets can join both. Where
 * the kernel refuses, no peer is ever known (logged).
 * Return: 0, or HOMA_ENOMEM.
 */
static int open_known(struct udp_driver *d, const struct homa_driver_config *cfg)
{
	struct sockaddr_storage a;
	int on = 1;

	if (!cfg->known_peers)
		return 0;
	if (d->nq == 1) {
		struct epoll_event ev = {.events = EPOLLIN, .data.u32 = HOMA_STEER_FAST};
		int ep = epoll_create1(EPOLL_CLOEXEC);

		if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, d->fds[0], &ev) < 0 ||
		    setsockopt(d->fds[0], SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0) {
			int err = errno;

			if (ep >= 0)
				close(ep);
			HOMA_LOG_WARN("UDP driver port %u: no known peers' queues (%s)",
				      d->base.port, strerror(err));
			return err == ENOMEM ? HOMA_ENOMEM : 0;
		}
		d->base.fd = ep;
	}
	port_addr(d, cfg, &a);
	return homa_known_init(&d->known, cfg->known_peers, d->base.fd, &a, cfg->bind_len,
			       cfg->rcvbuf, d->base.gro, &d->rx[0]);
}

/**
 * open_gate() - The strangers' budget (gate.h) of cfg->stranger_budget
 * packets and cfg->stranger_cpu_ns of CPU time per interval, with its timerfd in the driver's epoll set; only
 * with known peers. Where the kernel refuses, no budget (logged).
 */
static void open_gate(struct udp_driver *d, const struct homa_driver_config *cfg)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u32 = HOMA_GATE_TAG};

	d->gate.tfd = -1;
	if ((!cfg->stranger_budget && !cfg->stranger_cpu_ns) || !d->known.cap ||
	    d->base.fd == d->fds[0])
		return;
	if (homa_gate_init(&d->gate, cfg->stranger_budget, cfg->stranger_cpu_ns) ||
	    epoll_ctl(d->base.fd, EPOLL_CTL_ADD, d->gate.tfd, &ev) < 0) {
		HOMA_LOG_WARN("UDP driver port %u: no strangers' budget (%s)", d->base.port,
			      strerror(errno));
		homa_gate_free(&d->gate);
	}
}

/**
 * open_lend() - Zero-copy receive (lendpool.h) with cfg->lend_slots slots
 * beyond the batch's: rx[0] (whose buffers every receiver but the urgent
 * one shares) reads through the pool's table, and the engine may keep
 * what it reads. Where the kernel refuses the mapping, payload is copied
 * as without it (logged).
 */
static void open_lend(struct udp_driver *d, const struct homa_driver_config *cfg)
{
	int err;

	if (!cfg->lend_slots)
		return;
	err = homa_lendpool_init(&d->lend, cfg->batch, cfg->lend_slots, d->buf);
	if (err) {
		HOMA_LOG_WARN("UDP driver port %u: no zero-copy receive (%s)", d->base.port,
			      homa_strerror(err));
		return;
	}
	homa_io_receiver_use_slots(&d->rx[0], d->lend.table);
	d->base.lend = &d->lend.lend;
}

/** homa_udp_open() - See driver.h. */
int homa_udp_open(const struct homa_driver_config *cfg, struct homa_driver **out)
{
	struct udp_driver *d = calloc(1, sizeof(*d));
	size_t buf;
	int fd;

	if (!d)
		return HOMA_ENOMEM;
	d->gate.tfd = -1;
	fd = bind_socket(cfg, &d->base.port);  /* alone: fails if the port is taken */
	if (fd < 0) {
		free(d);
		return fd;
	}
	d->base.ops = &udp_ops;
	d->ep_open = true;
	d->base.fd = d->base.tx_fd = d->fds[0] = fd;
	d->fds[1] = -1;
	d->nq = 1;
	d->fast_prio = cfg->rx_fast_prio <= 7 ? cfg->rx_fast_prio : 0;
	d->base.rx_fd2 = -1;
	d->rx2.fd = -1;
	d->base.family = cfg->bind.ss_family;
	d->base.maps_v4 = true;
	homa_io_addr_from_sockaddr((const struct sockaddr *)&cfg->bind, &d->base.local, NULL);
	enable_offloads(d, cfg->offload);
	setup_socket(d, fd, cfg);
	if (cfg->rx_fast_prio && open_fast_queue(d, cfg)) {
		udp_close(&d->base);
		return HOMA_ENOMEM;
	}
	d->base.c.rx_queues = (uint64_t)d->nq;
	buf = d->base.gro ? UDP_GRO_BUF : cfg->max_packet;
	d->buf = buf;
	d->batch = cfg->batch;
	d->rcvbuf = cfg->rcvbuf;
	d->max_pkts = (size_t)cfg->batch * (d->base.gro ? HOMA_IO_GSO_MAX_SEGS : 1);
	d->base.max_rx = (uint32_t)d->max_pkts;
	d->pkts = calloc(d->max_pkts, sizeof(*d->pkts));
	if (!d->pkts ||
	    homa_io_sender_init(&d->tx, fd, d->base.family, cfg->batch, d->base.gso, false) ||
	    homa_io_receiver_init(&d->rx[0], fd, cfg->batch, buf)) {
		udp_close(&d->base);
		return HOMA_ENOMEM;
	}
	open_lend(d, cfg);
	d->rx[1] = d->rx[0];
	d->rx[1].fd = d->fds[1];
	if (open_known(d, cfg)) {
		udp_close(&d->base);
		return HOMA_ENOMEM;
	}
	open_gate(d, cfg);
	build_poll(d);
	*out = &d->base;
	return 0;
}
