/* SPDX-License-Identifier: MIT */
/**
 * @file xdp.c
 * The AF_XDP driver: Homa packets bypass the kernel's socket stack. An XDP
 * program (homa_xdp.bpf.c, embedded at build time) redirects this socket's
 * Homa packets on @ifname to one AF_XDP socket per receive queue and
 * passes everything else to the kernel. Frames are built here with the
 * Ethernet and IP headers the kernel's route and neighbour tables give
 * (xdp_route.c), byte for byte as the UDP or raw driver's packets.
 *
 * Received packets are handed to the runtime in place, in their UMEM
 * frames, until the next recv(), and the engine may keep a frame whose
 * payload it stores in place (zero-copy receive, homa_engine_input_lend()):
 * the frame then returns to the fill ring when its message is freed. The
 * runtime builds packets straight in UMEM send frames the driver lends it
 * (xdp_tx_bufs()), behind room for the headers, so the engine's copy of a
 * payload out of its message is the only one; other packets are copied
 * once, into a send frame, behind their headers.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "homa/obs.h"
#include "xdp_drv.h"
#include "xdp_frame.h"
#include "xdp_route.h"
#include "homa_xsk.h"
#include "xdp_share.h"

/** An XDP driver. */
struct xdp_driver {
	struct homa_driver base;
	int reserve_fd;              /**< UDP socket holding the Homa port */
	int epfd;                    /**< several queues: epoll set of their sockets */
	bool raw;                    /**< IP protocol 146 instead of UDP */
	size_t room;                 /**< header room in front of a lent send frame's packet:
					  the longest header of the families the bind allows */
	char ifname[IF_NAMESIZE];
	struct homa_xdp_iface *iface; /**< program and UMEMs shared with the process's other drivers */
	struct homa_xdp_share_req req; /**< how the sockets were opened (for closing them) */
	uint32_t nq;
	struct homa_xsk *q;          /**< nq sockets; q[0] also sends */
	struct homa_xdp_route route;
	struct homa_io_rx *pkts;     /**< max_rx */
	uint64_t *addrs;             /**< batch UMEM addresses (receive and send) */
	uint32_t *lens;
	uint64_t *tx_addrs;
	uint32_t *tx_lens;
	uint64_t *tx_take;           /**< batch: send frames taken (send_batch(), xdp_tx_bufs()) */
	uint32_t batch;
	/* zero-copy receive: frames kept by messages (see xdp_release()) */
	struct homa_rx_lend lend;
	uint32_t *rx_slot;           /**< max_rx: held[] slot of each packet's frame */
	uint32_t *rx_queue;          /**< max_rx: its queue */
	int last_n;                  /**< packets the last recv() returned */
	pthread_mutex_t ret_lock;    /**< guards ret and ret_queue; n_ret written under it */
	uint64_t *ret;               /**< nq * HOMA_XSK_RING: frames given back, as area offsets */
	uint32_t *ret_queue;         /**< and their queues */
	uint32_t n_ret;              /**< read atomically without the lock (is any there?) */
	uint64_t *ret_take;          /**< nq * HOMA_XSK_RING: recv()'s copy of ret */
	uint32_t *ret_take_queue;    /**< and of ret_queue */
	uint64_t *ret_mine;          /**< several queues: one queue's frames of ret_take */
};

/**
 * Most receive frames of a queue that messages may keep: the rest stay
 * for the fill ring, so that an application holding many messages makes
 * the engine copy instead of starving the kernel of frames.
 */
#define XDP_KEEP_MAX (HOMA_XSK_RING / 2)

/**
 * Fewest packets one recv() takes from a queue's receive ring (and one
 * send posts): more than the runtime's default batch, since copy mode
 * hands over one frame per packet where the UDP driver's GRO gives 64.
 */
#define XDP_BATCH_MIN 64

/** now_ns() - CLOCK_MONOTONIC in ns (route cache ages). */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/**
 * take_frames() - Parse the @n frames just peeked from queue @qi into
 * d->pkts from @k on, each lendable while the queue has frames to spare.
 */
static int take_frames(struct xdp_driver *d, uint32_t qi, uint32_t n, int k)
{
	struct homa_io_counters *c = &d->base.c;
	struct homa_xsk *x = &d->q[qi];
	bool lend = __atomic_load_n(&x->u->n_kept, __ATOMIC_RELAXED) + d->batch <= XDP_KEEP_MAX;

	for (uint32_t i = 0; i < n; i++) {
		struct homa_io_rx *p = &d->pkts[k];
		enum homa_xdp_bad bad = d->lens[i] ? homa_xdp_frame_parse(
			homa_xsk_data(x, d->addrs[i]), d->lens[i], d->raw, d->base.port, p)
			: HOMA_XDP_BAD_HEADER;

		if (bad == HOMA_XDP_OTHER_PORT) {
			homa_io_count(&c->rx_filtered, 1);
			continue;
		}
		if (bad) {
			homa_io_count(&c->xdp_rx_invalid, 1);
			continue;
		}
		homa_io_count(&c->rx_bytes, p->len);
		homa_io_count(&c->rx_prio[p->priority], 1);
		p->lendable = lend;
		p->kept = false;
		d->rx_slot[k] = x->n_held - n + i;
		d->rx_queue[k] = qi;
		k++;
	}
	return k;
}

/**
 * xdp_release() - The engine gives back frame @buf it kept (struct
 * homa_rx_lend; any thread, concurrently with recv()): queued for the
 * next recv() to put on the fill ring.
 */
static void xdp_release(void *ctx, uint8_t *buf)
{
	struct xdp_driver *d = ctx;

	for (uint32_t i = 0; i < d->nq; i++) {
		if (!homa_xsk_owns(&d->q[i], buf))
			continue;
		pthread_mutex_lock(&d->ret_lock);
		if (d->n_ret < d->nq * HOMA_XSK_RING) { /* always: each frame once */
			d->ret[d->n_ret] = (uint64_t)(buf - d->q[i].u->area);
			d->ret_queue[d->n_ret] = i;
			__atomic_store_n(&d->n_ret, d->n_ret + 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&d->ret_lock);
		return;
	}
}

/**
 * keep_and_take_back() - Before a recv(): keep the frames of the last
 * batch the engine kept, and move the frames given back since
 * (xdp_release()) to d->ret_take / d->ret_take_queue (one lock, none when
 * none were given back). Return: frames moved.
 */
static uint32_t keep_and_take_back(struct xdp_driver *d)
{
	uint32_t n;

	for (int k = 0; k < d->last_n; k++)
		if (d->pkts[k].kept)
			homa_xsk_keep(&d->q[d->rx_queue[k]], d->rx_slot[k]);
	d->last_n = 0;
	if (!__atomic_load_n(&d->n_ret, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&d->ret_lock);
	n = d->n_ret;
	memcpy(d->ret_take, d->ret, n * sizeof(*d->ret));
	memcpy(d->ret_take_queue, d->ret_queue, n * sizeof(*d->ret_queue));
	__atomic_store_n(&d->n_ret, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&d->ret_lock);
	return n;
}

/**
 * recycle_queue() - Put queue @qi's frames lent by the last recv() and
 * its frames among the @n given back (d->ret_take) on its fill ring, in
 * one call (one lock). Return: system calls made.
 */
static int recycle_queue(struct xdp_driver *d, uint32_t qi, uint32_t n)
{
	uint32_t m = 0;

	if (d->nq == 1)
		return homa_xsk_recycle(&d->q[0], d->ret_take, n);
	for (uint32_t j = 0; j < n; j++)
		if (d->ret_take_queue[j] == qi)
			d->ret_mine[m++] = d->ret_take[j];
	return homa_xsk_recycle(&d->q[qi], d->ret_mine, m);
}

/** kept_frames() - Receive frames messages hold now, over all queues. */
static uint64_t kept_frames(const struct xdp_driver *d)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < d->nq; i++)
		n += d->q[i].n_kept;
	return n;
}

/** xdp_recv() - See driver.h: frames of every queue, in place in UMEM. */
static int xdp_recv(struct homa_driver *base, struct homa_io_rx **out)
{
	struct xdp_driver *d = (struct xdp_driver *)base;
	uint32_t back = keep_and_take_back(d);
	int k = 0;

	for (uint32_t i = 0; i < d->nq; i++) {
		struct homa_xsk *x = &d->q[i];
		uint32_t n;

		homa_io_count(&base->c.rx_calls, (uint64_t)recycle_queue(d, i, back));
		n = homa_xsk_peek(x, d->batch, d->addrs, d->lens);
		k = take_frames(d, i, n, k);
	}
	d->last_n = k;
	__atomic_store_n(&base->c.xdp_rx_lent, kept_frames(d), __ATOMIC_RELAXED);
	homa_io_count(&base->c.rx_packets, (uint64_t)k);
	*out = d->pkts;
	return k;
}

/**
 * path_to() - The path of packet @p at time @now (ns), or NULL (counted: a
 * family the bind excludes, no route through the interface, or no
 * neighbour yet, in which case the kernel is resolving it).
 */
static const struct homa_xdp_path *path_to(struct xdp_driver *d, const struct homa_io_tx *p,
					   uint64_t now)
{
	int err = HOMA_ENOTSUP;
	const struct homa_xdp_path *path = homa_xdp_route_get(&d->route, &p->dst, p->dport,
							      now, &err);

	if (!path)
		homa_io_count(err == HOMA_EAGAIN ? &d->base.c.xdp_unresolved : &d->base.c.tx_errors, 1);
	return path;
}

/**
 * sendable() - Whether packet @p can go out at time @now: its path
 * (*@path) is known and it fits a frame (else counted and dropped; Homa
 * resends).
 */
static bool sendable(struct xdp_driver *d, const struct homa_io_tx *p, uint64_t now,
		     const struct homa_xdp_path **path)
{
	*path = path_to(d, p, now);
	if (!*path)
		return false;
	if (homa_xdp_frame_len(p, (*path)->v6, d->raw) > HOMA_XSK_MAX_FRAME) {
		homa_io_count(&d->base.c.tx_errors, 1);  /* larger than a frame: dropped */
		return false;
	}
	return true;
}

/**
 * lent_frame() - Whether @p was built in a send frame xdp_tx_bufs() lent
 * (its data right behind the headers' room in one of q[0]'s send frames);
 * if so the frame's UMEM address in *@addr.
 */
static bool lent_frame(const struct xdp_driver *d, const struct homa_io_tx *p, uint64_t *addr)
{
	const uint8_t *tx0 = d->q[0].u->area + (size_t)HOMA_XSK_RING * HOMA_XSK_FRAME;
	size_t off;

	if (p->data < tx0 + d->room || p->data >= tx0 + (size_t)HOMA_XSK_RING * HOMA_XSK_FRAME)
		return false;
	off = (size_t)(p->data - d->q[0].u->area) - d->room;
	if (off % HOMA_XSK_FRAME)
		return false;
	*addr = off;
	return true;
}

/**
 * send_batch() - Send @pkts[0..n-1] (n <= batch): packets built in lent
 * frames get their headers in place; the others are copied once behind
 * their headers into frames taken under one lock; one post and kick.
 * Return: packets consumed (sent or dropped); fewer than @n when the send
 * frames ran out.
 */
static int send_batch(struct xdp_driver *d, const struct homa_io_tx *pkts, int n)
{
	struct homa_io_counters *c = &d->base.c;
	struct homa_xsk *x = &d->q[0];
	uint32_t need = 0, got = 0, next = 0, used = 0;
	uint64_t addr, now = now_ns();  /* one clock read per batch (route cache ages) */
	int i;

	for (i = 0; i < n; i++)
		need += !lent_frame(d, &pkts[i], &addr);
	if (need)
		got = homa_xsk_tx_take(x, need, d->tx_take);
	for (i = 0; i < n; i++) {
		const struct homa_xdp_path *path;
		bool lent = lent_frame(d, &pkts[i], &addr);
		size_t len;

		if (!lent && next == got) {
			homa_io_count(&c->tx_full, 1);
			homa_io_count(&c->xdp_tx_ring_full, 1);
			break;
		}
		if (!sendable(d, &pkts[i], now, &path)) {
			if (lent)  /* dropped: the lent frame is free again */
				homa_xsk_tx_untake(x, &addr, 1);
			continue;
		}
		if (!lent)
			addr = d->tx_take[next++];
		/* the packet's data lies d->room into the frame: its headers end there */
		addr += d->room - homa_xdp_hlen(path->v6, d->raw);
		len = homa_xdp_frame_build(homa_xsk_data(x, addr), HOMA_XSK_MAX_FRAME, path,
					   d->base.port, &pkts[i], d->raw);
		homa_io_count(&c->xdp_tx_copied, (lent ? 0 : pkts[i].len) + pkts[i].ext_len);
		homa_io_count(&c->tx_packets, 1);
		homa_io_count(&c->tx_bytes, pkts[i].len + pkts[i].ext_len);
		d->tx_addrs[used] = addr;
		d->tx_lens[used++] = (uint32_t)len;
	}
	if (next < got)  /* frames left over: dropped packets, or the batch stopped */
		homa_xsk_tx_untake(x, d->tx_take + next, got - next);
	homa_io_count(&c->tx_calls, (uint64_t)homa_xsk_tx_post(x, used, d->tx_addrs, d->tx_lens));
	return i;
}

/**
 * xdp_tx_bufs() - See driver.h: up to @n send frames of q[0], each lent
 * from right behind the room for the headers, if a packet of @cap bytes
 * fits there.
 */
static int xdp_tx_bufs(struct homa_driver *base, uint8_t **out, int n, size_t cap)
{
	struct xdp_driver *d = (struct xdp_driver *)base;
	uint32_t got;

	if (n <= 0 || (uint32_t)n > d->batch || d->room + cap > HOMA_XSK_MAX_FRAME)
		return 0;
	got = homa_xsk_tx_take(&d->q[0], (uint32_t)n, d->tx_take);
	for (uint32_t i = 0; i < got; i++)
		out[i] = homa_xsk_data(&d->q[0], d->tx_take[i]) + d->room;
	return (int)got;
}

/** xdp_tx_unbufs() - See driver.h: the frames go back to q[0]'s free send frames. */
static void xdp_tx_unbufs(struct homa_driver *base, uint8_t *const *bufs, int n)
{
	struct xdp_driver *d = (struct xdp_driver *)base;

	for (int i = 0; i < n && i < (int)d->batch; i++)
		d->tx_take[i] = (uint64_t)(bufs[i] - d->room - d->q[0].u->area);
	homa_xsk_tx_untake(&d->q[0], d->tx_take, (uint32_t)(n < (int)d->batch ? n : (int)d->batch));
}

/**
 * xdp_send() - See driver.h: each packet copied once, behind its headers,
 * into a UMEM frame (its data, then its ext bytes), in batches of frames
 * taken under one lock and posted with one kick. A packet larger than a
 * frame (the caller's error: open checks max_packet) is dropped and
 * counted in tx_errors.
 */
static int xdp_send(struct homa_driver *base, const struct homa_io_tx *pkts, int n)
{
	struct xdp_driver *d = (struct xdp_driver *)base;
	int done = 0;

	while (done < n) {
		int m = n - done < (int)d->batch ? n - done : (int)d->batch;
		int took = send_batch(d, pkts + done, m);

		done += took;
		if (took < m)
			break;
	}
	return done;
}

/** xdp_refresh() - See driver.h: the kernel's ring statistics, summed over the queues. */
static void xdp_refresh(struct homa_driver *base)
{
	struct xdp_driver *d = (struct xdp_driver *)base;
	struct xdp_statistics sum = {0};
	uint64_t reclaimed = 0;

	for (uint32_t i = 0; i < d->nq; i++) {
		struct xdp_statistics s;

		reclaimed += homa_xsk_reclaimed(&d->q[i]);
		homa_xsk_stats(&d->q[i], &s);
		sum.rx_dropped += s.rx_dropped;
		sum.rx_invalid_descs += s.rx_invalid_descs;
		sum.tx_invalid_descs += s.tx_invalid_descs;
		sum.rx_ring_full += s.rx_ring_full;
		sum.rx_fill_ring_empty_descs += s.rx_fill_ring_empty_descs;
	}
	__atomic_store_n(&base->c.xdp_rx_dropped, sum.rx_dropped + sum.rx_ring_full,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&base->c.xdp_invalid_descs, sum.rx_invalid_descs + sum.tx_invalid_descs,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&base->c.xdp_fill_empty, sum.rx_fill_ring_empty_descs, __ATOMIC_RELAXED);
	__atomic_store_n(&base->c.xdp_reclaimed, reclaimed, __ATOMIC_RELAXED);
}

/** xdp_close() - See driver.h: detach the program, then free sockets and UMEM. */
static void xdp_close(struct homa_driver *base)
{
	struct xdp_driver *d = (struct xdp_driver *)base;

	homa_xdp_share_close(d->iface, &d->req, d->q);
	homa_xdp_route_close(&d->route);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->reserve_fd >= 0)
		close(d->reserve_fd);
	free(d->q);
	free(d->pkts);
	free(d->addrs);
	free(d->lens);
	free(d->tx_addrs);
	free(d->tx_lens);
	free(d->tx_take);
	free(d->rx_slot);
	free(d->rx_queue);
	free(d->ret);
	free(d->ret_queue);
	free(d->ret_take);
	free(d->ret_take_queue);
	free(d->ret_mine);
	pthread_mutex_destroy(&d->ret_lock);
	free(d);
}

/** xdp_pending() - See driver.h: a receive ring of a queue holds packets. */
static bool xdp_pending(struct homa_driver *base)
{
	struct xdp_driver *d = (struct xdp_driver *)base;

	for (uint32_t i = 0; i < d->nq; i++)
		if (homa_xsk_rx_pending(&d->q[i]))
			return true;
	return false;
}

static const struct homa_driver_ops xdp_ops = {
	.name = "xdp",
	.send = xdp_send,
	.recv = xdp_recv,
	.close = xdp_close,
	.refresh = xdp_refresh,
	.pending = xdp_pending,
	.tx_bufs = xdp_tx_bufs,
	.tx_unbufs = xdp_tx_unbufs,
};

/**
 * open_queues() - One AF_XDP socket per queue on the interface's shared
 * program and UMEMs; the driver's descriptor (one socket's, or an epoll
 * set of all). Return: 0 or a homa error (with a message on stderr).
 */
static int open_queues(struct xdp_driver *d, int ifindex)
{
	int err;

	d->q = calloc(d->nq, sizeof(*d->q));
	if (!d->q)
		return HOMA_ENOMEM;
	d->req = (struct homa_xdp_share_req){.ifname = d->ifname, .ifindex = ifindex,
		.nq = d->nq, .port = d->base.port, .raw = d->raw, .batch = d->batch};
	err = homa_xdp_share_open(&d->req, d->q, &d->iface);
	if (err)
		return err;
	d->base.c.xdp_zerocopy = d->q[0].zerocopy;
	HOMA_LOG_INFO("XDP driver on %s: %u queue(s), %s mode, port %u", d->ifname, d->nq,
		      d->q[0].zerocopy ? "zero-copy" : "copy", d->base.port);
	if (d->nq == 1) {
		d->base.fd = d->base.tx_fd = homa_xsk_fd(&d->q[0]);
		return 0;
	}
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return HOMA_EIO;
	for (uint32_t i = 0; i < d->nq; i++) {
		struct epoll_event ev = {.events = EPOLLIN};

		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, homa_xsk_fd(&d->q[i]), &ev))
			return HOMA_EIO;
	}
	d->base.fd = d->base.tx_fd = d->epfd;
	return 0;
}

/** homa_xdp_open() - See driver.h. */
int homa_xdp_open(const struct homa_driver_config *cfg, struct homa_driver **out)
{
	struct xdp_driver *d = calloc(1, sizeof(*d));
	struct homa_xdp_link link;
	int err;

	if (!d)
		return HOMA_ENOMEM;
	d->base.ops = &xdp_ops;
	d->base.fd = d->base.tx_fd = d->epfd = d->reserve_fd = d->route.nl = -1;
	d->base.family = cfg->bind.ss_family;
	pthread_mutex_init(&d->ret_lock, NULL);
	d->lend.release = xdp_release;
	d->lend.ctx = d;
	d->raw = cfg->xdp_raw;
	d->room = homa_xdp_hlen(cfg->bind.ss_family == AF_INET6, d->raw);
	d->batch = cfg->batch > XDP_BATCH_MIN ? cfg->batch : XDP_BATCH_MIN;
	err = homa_xdp_link_check(cfg, &link);
	if (!err) {
		snprintf(d->ifname, sizeof(d->ifname), "%s", cfg->ifname);
		d->nq = link.queues;
		d->reserve_fd = homa_io_reserve_port(cfg, &d->base.port);
		err = d->reserve_fd < 0 ? d->reserve_fd : 0;
	}
	if (!err) {
		homa_io_addr_from_sockaddr((const struct sockaddr *)&cfg->bind, &d->base.local, NULL);
		d->base.max_rx = d->batch * d->nq;
		d->pkts = calloc(d->base.max_rx, sizeof(*d->pkts));
		d->addrs = calloc(d->batch, sizeof(*d->addrs));
		d->lens = calloc(d->batch, sizeof(*d->lens));
		d->tx_addrs = calloc(d->batch, sizeof(*d->tx_addrs));
		d->tx_lens = calloc(d->batch, sizeof(*d->tx_lens));
		d->tx_take = calloc(d->batch, sizeof(*d->tx_take));
		d->rx_slot = calloc(d->base.max_rx, sizeof(*d->rx_slot));
		d->rx_queue = calloc(d->base.max_rx, sizeof(*d->rx_queue));
		d->ret = calloc((size_t)d->nq * HOMA_XSK_RING, sizeof(*d->ret));
		d->ret_queue = calloc((size_t)d->nq * HOMA_XSK_RING, sizeof(*d->ret_queue));
		d->ret_take = calloc((size_t)d->nq * HOMA_XSK_RING, sizeof(*d->ret_take));
		d->ret_take_queue = calloc((size_t)d->nq * HOMA_XSK_RING,
					   sizeof(*d->ret_take_queue));
		d->ret_mine = calloc((size_t)d->nq * HOMA_XSK_RING, sizeof(*d->ret_mine));
		err = d->pkts && d->addrs && d->lens && d->tx_addrs && d->tx_lens && d->tx_take &&
		      d->rx_slot && d->rx_queue && d->ret && d->ret_queue && d->ret_take &&
		      d->ret_take_queue && d->ret_mine ? 0 : HOMA_ENOMEM;
	}
	if (!err)
		err = homa_xdp_route_open(&d->route, link.ifindex, link.mac, &cfg->bind,
					  d->base.port);
	d->base.maps_v4 = d->route.v4_ok && d->base.family == AF_INET6;  /* bound to "::" */
	if (!err)
		err = open_queues(d, link.ifindex);
	if (err) {
		xdp_close(&d->base);
		return err;
	}
	d->base.lend = &d->lend;
	d->base.lend_by_start = true;  /* frames go back by their start */
	*out = &d->base;
	return 0;
}

/** homa_xdp_umem_locks() - See xdp_drv.h. */
uint64_t homa_xdp_umem_locks(const struct homa_driver *base)
{
	const struct xdp_driver *d = (const struct xdp_driver *)base;
	uint64_t n = 0;

	for (uint32_t i = 0; i < d->nq; i++)
		n += d->q[i].u->locks;
	return n;
}
