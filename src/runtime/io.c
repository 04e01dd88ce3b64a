/* SPDX-License-Identifier: MIT */
/**
 * @file io.c
 * The I/O loop: receive packets, feed them to the engine, run its timers
 * and send what it produces. Threaded sockets run homa_rt_thread(); polled
 * sockets run homa_rt_poll_step() from an application thread.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rt.h"
#include "tp.h"

/** Nice value asked for the I/O thread. */
#define IO_THREAD_NICE -10

/** Receive rounds per call before timers get a turn again. */
#define INPUT_ROUNDS 8

/**
 * Deadlines closer than this are not slept for: the waiter only checks for
 * packets and returns. A sleep and wake-up costs more than this on most
 * machines (far more on virtual ones), and the pacer's deadlines are
 * often a microsecond apart, so sleeping for them would send one packet
 * per wake-up.
 */
#define RT_SPIN_NS 10000

/**
 * While packets wait for room in the send buffer (tx.c), the engine's
 * "send now" deadlines cannot be met: the waiter sleeps at least this
 * long (or until the socket is writable, or a packet arrives) instead of
 * spinning on them.
 */
#define RT_BLOCKED_NS 1000000

/**
 * homa_rt_timers() - See rt.h. The wake-up time is read in the same hold
 * as the timers ran (ticks may wait for a packet wake-up:
 * homa_engine_wake_by()).
 */
uint64_t homa_rt_timers(struct homa_rt *rt, uint64_t *now, uint64_t limit)
{
	bool worked = *now >= homa_engine_next_deadline(rt->engine);
	uint64_t d;

	if (worked) {
		homa_engine_on_timer(rt->engine, *now);
		homa_rt_collect(rt);
	}
	if (homa_rt_tx_work(rt)) {
		homa_rt_unlock(rt);
		homa_rt_flush_wait(rt);
		homa_rt_lock(rt);
		worked = true;
	}
	d = homa_engine_wake_by(rt->engine);
	atomic_store(&rt->wake_at, d < limit ? d : limit);
	homa_rt_unlock(rt);
	if (worked)
		*now = homa_rt_now();
	return d;
}

/**
 * homa_rt_rx_order() - See rt.h. A counting sort over the eight levels:
 * linear in @n, whatever mix of priorities a sender chooses.
 */
void homa_rt_rx_order(const struct homa_io_rx *rx, int n, uint32_t *order)
{
	uint32_t start[HOMA_MAX_PRIORITIES] = {0}, sum = 0;

	/* bucket 0 holds priority 7, bucket 7 priority 0 */
	for (int i = 0; i < n; i++)
		start[7 - (rx[i].priority & 7)]++;
	for (int b = 0; b < HOMA_MAX_PRIORITIES; b++) {
		uint32_t c = start[b];

		start[b] = sum;
		sum += c;
	}
	for (int i = 0; i < n; i++)
		order[start[7 - (rx[i].priority & 7)]++] = (uint32_t)i;
}

/**
 * Payload copies listed per received packet: one, two where a packet
 * straddles two of a message's pieces, more for retransmissions filling
 * several holes.
 */
#define RX_COPIES_PER_PKT 2

/** homa_rt_input_init() - See rt.h. */
int homa_rt_input_init(struct homa_rt *rt)
{
	uint32_t max_rx = rt->drv->max_rx ? rt->drv->max_rx : 1;

	rt->rx_order = calloc(max_rx, sizeof(*rt->rx_order));
	rt->rx_copies_cap = RX_COPIES_PER_PKT * max_rx + RT_RX_COPIES_ROOM;
	rt->rx_copies = calloc(rt->rx_copies_cap, sizeof(*rt->rx_copies));
	return rt->rx_order && rt->rx_copies ? 0 : HOMA_ENOMEM;
}

/**
 * copy_listed() - Do the batch's payload copies the engine listed
 * (homa_engine_defer_copies()) with rt->lock released, then take it
 * again and report them done. Called and returns with rt->lock held.
 * Meanwhile other threads use the socket (send, receive, read a message
 * as it arrives, free one); what the copies touch stays put without the
 * lock: the destinations are chunks of messages the engine neither
 * delivers, reports as present (homa_engine_rx_progress()) nor frees
 * until the copies are reported done (src/core/rxcopy.c); the sources
 * are the driver's receive buffers and the list is rt->rx_copies, which
 * only this thread, the poller, reads from the driver and fills.
 */
static void copy_listed(struct homa_rt *rt)
{
	uint32_t n = rt->rx_ncopies;

	if (!n)
		return;
	homa_rt_unlock(rt);
	homa_rt_copy_payload(rt->rx_copies, n);
	homa_rt_lock(rt);
	homa_engine_copies_done(rt->engine, rt->rx_copies, n);
	rt->rx_ncopies = 0;
}

/**
 * copy_midway() - The copy list is nearly full in the middle of a batch:
 * do the copies listed so far (copy_listed(), rt->lock released) and list
 * the rest of the batch's afresh. Listing is off while the lock is
 * released, so nothing another thread makes the engine do meanwhile adds
 * to the list being copied. Counted in rt->rx_midway. Called and returns
 * with rt->lock held.
 */
static void copy_midway(struct homa_rt *rt)
{
	rt->rx_midway++;
	homa_engine_defer_copies(rt->engine, NULL, 0, NULL);
	copy_listed(rt);
	homa_engine_defer_copies(rt->engine, rt->rx_copies, rt->rx_copies_cap, &rt->rx_ncopies);
}

/** Most unreachable reports handed to the engine per input call. */
#define UNREACH_BATCH 8

/**
 * input_unreach() - Hand the driver's ICMP unreachable reports (if it has
 * any: raw driver) to the engine, which fails the RPCs they name.
 */
static void input_unreach(struct homa_rt *rt)
{
	struct homa_io_unreach u[UNREACH_BATCH];
	int n;

	if (!rt->drv->ops->unreach)
		return;
	n = rt->drv->ops->unreach(rt->drv, u, UNREACH_BATCH);
	if (n <= 0)
		return;
	homa_rt_lock(rt);
	uint64_t now = homa_rt_now();

	for (int i = 0; i < n; i++) {
		homa_rt_enc_unquote(rt, &u[i]);  /* a sealed packet: PSP header first */
		homa_engine_unreachable(rt->engine, &u[i].dst, u[i].kind, u[i].quoted, u[i].len, now);
	}
	homa_rt_collect(rt);
	homa_rt_unlock(rt);
	homa_rt_flush(rt);
}

/**
 * input_one() - Hand packet @p to the engine, lending its buffer when the
 * driver lends (XDP: UMEM frames) and noting in @p whether it was kept.
 * Return: as homa_engine_input().
 */
static int input_one(struct homa_rt *rt, struct homa_io_rx *p, uint64_t now)
{
	if (rt->drv->lend && p->lendable)
		return homa_engine_input_lend(rt->engine, &p->src, p->data, p->len, now,
					      rt->drv->lend, &p->kept);
	return homa_engine_input(rt->engine, &p->src, p->data, p->len, now);
}

/**
 * poller_served() - rt->lock held: whether the application thread running
 * this receive as the poller (homa_rt_poll_self) has been handed what it
 * waits for. Its receive then ends after the current batch: a short
 * message that overtook bulk data in the kernel (the fast queue) is not
 * held back while further batches of bulk data are read and copied; the
 * rest waits in the kernel for the next poll.
 */
static bool poller_served(void)
{
	const struct rt_waiter *w = homa_rt_poll_self;

	return w && (w->item || w->ready);
}

/**
 * Bytes of an encrypted socket's received batch opened before they are
 * handed to the engine (rx_chunk_end()): a batch of 1500-byte packets is
 * one chunk, each 64 KB packet its own, so the engine answers the first
 * (GRANTs, a completed message) while the later ones wait to be opened.
 */
#define OPEN_CHUNK (48u * 1024)

/**
 * rx_chunk_end() - The end of the chunk of @rx's @n packets that starts
 * at @i: the whole batch on clear sockets; on encrypted ones, packets
 * until they hold OPEN_CHUNK bytes (at least one).
 */
static int rx_chunk_end(const struct homa_rt *rt, const struct homa_io_rx *rx, int i, int n)
{
	size_t bytes = 0;

	if (!rt->enc)
		return n;
	while (i < n && bytes < OPEN_CHUNK)
		bytes += rx[i++].len;
	return i;
}

/**
 * input_chunk() - Open the @n received packets at @rx (encrypted sockets),
 * hand them to the engine under rt->lock, do the payload copies it listed
 * and send what it answered. *@last: the time they were handed over.
 * Return: whether the application thread running this receive as the
 * poller has been served (poller_served()).
 */
static bool input_chunk(struct homa_rt *rt, struct homa_io_rx *rx, int n, uint64_t *last)
{
	int rejected;
	bool mine;

	n = homa_rt_enc_open_rx(rt, rx, n, &rejected);
	homa_rt_obs_rx(rt, rx, n);
	homa_rt_rx_order(rx, n, rt->rx_order);
	homa_rt_lock(rt);
	uint64_t now = homa_rt_now();

	*last = now;
	homa_engine_count_drop(rt->engine, HOMA_DROP_VERIFY, (uint64_t)rejected);
	rt->rx_ncopies = 0;
	homa_engine_defer_copies(rt->engine, rt->rx_copies, rt->rx_copies_cap, &rt->rx_ncopies);
	for (int k = 0; k < n; k++) {
		struct homa_io_rx *p = &rx[rt->rx_order[k]];
		int r;

		if (rt->rx_copies_cap - rt->rx_ncopies < RT_RX_COPIES_ROOM)
			copy_midway(rt);
		r = input_one(rt, p, now);

		if (r >= HOMA_INPUT_DROPPED)
			homa_rt_obs_drop(rt, &p->src, r);
	}
	homa_engine_defer_copies(rt->engine, NULL, 0, NULL);
	copy_listed(rt);
	homa_rt_collect(rt);
	mine = poller_served();
	homa_rt_unlock_flush(rt);
	return mine;
}

/**
 * Bytes of a received batch an encrypted socket opens between looks at
 * the driver's queues of short messages (input_urgent()): about 30 us of
 * AES-GCM at OpenSSL's speed here, against one poll() per look (and a
 * read when something waits).
 */
#define URGENT_EVERY (128u * 1024)

/**
 * input_urgent() - Between chunks of a batch, read what waits in the
 * driver's queues of short messages and control packets (recv_urgent:
 * buffers of its own, the batch's stay valid) and hand it to the engine.
 * Return: whether the calling poller has been served (poller_served()).
 */
static bool input_urgent(struct homa_rt *rt, uint64_t *last)
{
	struct homa_io_rx *rx;
	bool mine = false;
	int n = rt->drv->ops->recv_urgent ? rt->drv->ops->recv_urgent(rt->drv, &rx) : 0;

	if (n > (int)rt->drv->max_rx)
		n = (int)rt->drv->max_rx;
	for (int i = 0; i < n;) {
		int e = rx_chunk_end(rt, rx, i, n);

		mine |= input_chunk(rt, rx + i, e - i, last);
		i = e;
	}
	return mine;
}

/**
 * urgent_first() - Bytes to count as opened since the last look at the
 * queues of short messages when a batch of @n packets at @rx starts
 * (input_batch()): URGENT_EVERY on an encrypted socket when the batch
 * holds more than URGENT_EVERY bytes, so the queues are looked at before
 * its first chunk is opened (a lookup that arrived while the batch was
 * read waits for no AES-GCM pass over bulk data); 0 otherwise (clear
 * sockets, and batches short enough to open whole).
 */
static size_t urgent_first(const struct homa_rt *rt, const struct homa_io_rx *rx, int n)
{
	size_t bytes = 0;

	if (!rt->enc)
		return 0;
	for (int i = 0; i < n && bytes <= URGENT_EVERY; i++)
		bytes += rx[i].len;
	return bytes > URGENT_EVERY ? URGENT_EVERY : 0;
}

/**
 * input_batch() - Hand the @n packets at @rx to the engine a chunk at a
 * time (rx_chunk_end(): the whole batch on clear sockets). On an
 * encrypted socket, before the first chunk of a batch of more than
 * URGENT_EVERY bytes and then every URGENT_EVERY bytes, short messages
 * that arrived meanwhile are taken (input_urgent(), urgent_first());
 * once the calling poller has been served, the rest of the batch is left
 * in rt->rx_rest for its next homa_rt_input(). Return: whether the
 * poller has been served.
 */
static bool input_batch(struct homa_rt *rt, struct homa_io_rx *rx, int n, uint64_t *last)
{
	size_t since = urgent_first(rt, rx, n);
	bool mine = false;

	for (int i = 0; i < n;) {
		int e;

		if (since >= URGENT_EVERY) {
			since = 0;
			mine |= input_urgent(rt, last);
		}
		if (mine) {
			rt->rx_rest = rx + i;
			rt->rx_rest_n = n - i;
			break;
		}
		e = rx_chunk_end(rt, rx, i, n);
		for (int k = i; k < e; k++)
			since += rx[k].len;
		mine |= input_chunk(rt, rx + i, e - i, last);
		i = e;
	}
	return mine;
}

/**
 * input_metered() - input_batch() of the @n packets at @rx; with @t0 set
 * (strangers' packets under their budget, metered from @t0: before the
 * receive call that read them, or before this call for a batch's rest),
 * report the calling thread's time on them, up to now, to the driver
 * (rx_spent()). What the batch leaves in rt->rx_rest is marked metered
 * with it (rt->rx_rest_metered), so the call that takes the rest reports
 * its own time on it: every part is charged once, by whoever handles it.
 * Return: whether the calling poller has been served.
 */
static bool input_metered(struct homa_rt *rt, struct homa_io_rx *rx, int n, uint64_t t0,
			  uint64_t *last)
{
	bool mine = input_batch(rt, rx, n, last);

	rt->rx_rest_metered = t0 && rt->rx_rest_n;
	if (t0) {
		uint64_t t1 = homa_rt_now();

		rt->drv->ops->rx_spent(rt->drv, t1 > t0 ? t1 - t0 : 0);
	}
	return mine;
}

/**
 * input_rest() - Hand the engine what a poller left of its batch
 * (rt->rx_rest), if anything, metered as the batch was (input_metered()).
 * Return: packets taken from the rest; *@mine: whether the calling
 * poller has been served.
 */
static int input_rest(struct homa_rt *rt, uint64_t *last, bool *mine)
{
	int n = rt->rx_rest_n;
	uint64_t t0;

	*mine = false;
	if (!n)
		return 0;
	t0 = rt->rx_rest_metered ? homa_rt_now() : 0;
	rt->rx_rest_n = 0;
	*mine = input_metered(rt, rt->rx_rest, n, t0, last);
	return n - rt->rx_rest_n;
}

/** homa_rt_input() - See rt.h. */
int homa_rt_input(struct homa_rt *rt, uint64_t *last)
{
	bool served;
	int total = input_rest(rt, last, &served);

	for (int round = 0; round < INPUT_ROUNDS && !served; round++) {
		struct homa_io_rx *rx;
		int n = rt->drv->ops->recv(rt->drv, &rx);
		/* strangers' batch under their budget: what it costs, from
		 * before the receive call (the driver's clock reading) */
		uint64_t t0 = n > 0 && rt->drv->rx_metered && rt->drv->ops->rx_spent
			      ? rt->drv->rx_t0 : 0;
		bool mine = false;

		if (n <= 0)
			break;
		if ((uint32_t)n > rt->drv->max_rx)
			n = (int)rt->drv->max_rx;  /* the driver's contract; never trusted blindly */
		mine = input_metered(rt, rx, n, t0, last);
		total += n - rt->rx_rest_n;
		if (mine)
			break;  /* hand the message over before reading more */
		if (n < (int)rt->batch && !rt->drv->rx_full)
			break;  /* the socket queue is most likely empty now */
	}
	rt->drv->rx_polled = false;  /* the wait's readiness is used up */
	input_unreach(rt);
	return total;
}

/**
 * arm_wait() - Point rt->wait_tfd at the absolute time @until (UINT64_MAX:
 * disarm) unless it already is. Programming a timer is costly (on a
 * virtual machine it leaves the guest), and the engine's deadline is
 * mostly its next tick, the same across many waits, so a timerfd armed
 * only when the deadline moves replaces a timeout on every ppoll().
 * (Keeping an earlier timer instead of moving it later was measured: it
 * trades each timerfd_settime() for an early wake-up, ppoll() plus
 * read(), and cost a server more system calls per RPC than it saved.
 * So was the tick on ppoll()'s own timeout: it saves the 0.05
 * timerfd_settime() per 100 B RPC but arms and cancels a kernel timer
 * at every sleep, and cost more CPU and latency per RPC than it saved.)
 * Only the thread in the waiting role calls this.
 */
static void arm_wait(struct homa_rt *rt, uint64_t until)
{
	struct itimerspec its = {0};

	if (until == rt->wait_armed)
		return;
	rt->wait_armed = until;
	if (until != UINT64_MAX)
		its.it_value = homa_rt_timespec(until ? until : 1);
	timerfd_settime(rt->wait_tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/** drain_fd() - Read and discard an eventfd's or timerfd's count. */
static void drain_fd(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

/** wait_packets() results: packets wait in the driver's socket. */
#define WAIT_PACKETS 1
/** ... a TCP connection (or the transport's kick) is readable. */
#define WAIT_TCP 2

/**
 * drv_wake_due() - The driver's wake-up time (homa_driver.rx_wake_ns)
 * passed while no listed socket became readable: hand the list back as
 * polled, nothing readable, so that recv() does what is due then (the
 * strangers' gate opens, gate.h) without reading sockets the wait saw
 * empty. Return: WAIT_PACKETS (the caller calls recv()).
 */
static int drv_wake_due(struct homa_driver *drv)
{
	for (int i = 0; i < drv->n_rx_poll; i++)
		drv->rx_poll[i].revents = 0;
	drv->rx_polled = true;
	return WAIT_PACKETS;
}

/**
 * sleep_poll() - ppoll() the @n entries of @p until one is ready, the
 * engine's absolute deadline @engine_by passes (through wait_tfd: armed
 * only when it moved, arm_wait()) or the absolute @soon does (ppoll's
 * own timeout); a deadline within RT_SPIN_NS of @now, a clock reading
 * just taken, only checks. Return: ppoll()'s result.
 */
static int sleep_poll(struct homa_rt *rt, struct pollfd *p, nfds_t n, uint64_t now,
		      uint64_t engine_by, uint64_t soon)
{
	uint64_t first = engine_by < soon ? engine_by : soon;
	struct timespec ts = {0, 0};
	bool timed = true;

	if (first > now + RT_SPIN_NS) {
		arm_wait(rt, engine_by);
		if (soon < engine_by) {
			ts.tv_sec = (time_t)((soon - now) / 1000000000u);
			ts.tv_nsec = (long)((soon - now) % 1000000000u);
		} else {
			timed = false;
		}
	}
	return ppoll(p, n, timed ? &ts : NULL, NULL);
}

/**
 * wait_result() - What the wait's ppoll() result @r and the revents of
 * @p (its six fixed entries, then the driver's @nd sockets) say: drain
 * the kick and the timer, hand the driver its sockets' revents, and
 * whether its wake-up time @drv_by passed (drv_wake_due()).
 * Return: as wait_packets().
 */
static int wait_result(struct homa_rt *rt, const struct pollfd *p, int nd, int r,
		       uint64_t drv_by)
{
	if (r == 0 && drv_by != UINT64_MAX && homa_rt_now() >= drv_by)
		return drv_wake_due(rt->drv);
	if (r <= 0)
		return 0;
	bool drv_in = p[0].revents & (POLLIN | POLLERR);

	for (int i = 0; i < nd; i++) {
		rt->drv->rx_poll[i].revents = p[6 + i].revents;
		drv_in |= (p[6 + i].revents & (POLLIN | POLLERR)) != 0;
	}
	rt->drv->rx_polled = nd > 0;
	if (p[1].revents & POLLIN)
		drain_fd(rt->kick_fd);
	if (p[2].revents & POLLIN) {
		drain_fd(rt->wait_tfd);
		rt->wait_armed = UINT64_MAX;  /* a fired one-shot timer is off */
	}
	/* POLLERR: an ICMP report waits in the error queue (input_unreach()) */
	return (drv_in || (p[4].revents & POLLIN) ? WAIT_PACKETS : 0) |
	       (p[3].revents & POLLIN ? WAIT_TCP : 0);
}

/**
 * wait_packets() - Sleep until a packet arrives, the kick eventfd fires,
 * the engine's absolute deadline @engine_by passes (through wait_tfd) or
 * the caller's absolute @caller_by passes (through ppoll's own timeout:
 * it moves with every call, e.g. an open-loop client's next send time,
 * so a timerfd for it would cost a timerfd_settime() and a read() per
 * call). An application poller whose window of looks is open
 * (homa_open_opts.spin_us) first looks without sleeping (homa_rt_spin()).
 * A deadline in the past or within RT_SPIN_NS only checks, without
 * a system call where the driver can tell (ops->pending: a caller spinning
 * on homa_recv() with a zero timeout over the XDP driver reads its rings).
 * An application poller of a socket with a transport layer also watches
 * the TCP connections (rt->poll_tp_fd; ppoll() skips it when -1). Room
 * in the send buffer is watched on the driver's tx_fd, which differs from
 * its fd when the driver receives on several sockets. A driver that
 * lists its receiving sockets (rx_poll) has them polled one by one in
 * place of its fd, and gets their revents back (rx_polled) so that its
 * recv() reads only those with packets; it also sleeps no longer than
 * the driver's rx_wake_ns (ppoll's own timeout), after which recv() is
 * called (drv_wake_due()) though no socket became readable.
 * @now is a clock reading the caller just took (homa_rt_timers() passes
 * the poller's on when it did no work).
 * Return: WAIT_PACKETS if packets (or ICMP reports) are waiting, plus
 * WAIT_TCP if a TCP connection is readable; WAIT_PACKETS also when the
 * driver's rx_wake_ns passed.
 */
static int wait_packets(struct homa_rt *rt, uint64_t now, uint64_t engine_by,
			uint64_t caller_by)
{
	bool blocked = atomic_load(&rt->tx_blocked);
	bool apart = rt->drv->tx_fd != rt->drv->fd;  /* receives on an epoll set */
	int nd = apart ? rt->drv->n_rx_poll : 0;    /* its sockets, polled one by one */
	struct pollfd p[6 + HOMA_DRIVER_POLL_MAX] = {{.fd = nd ? -1 : rt->drv->fd,
			       .events = POLLIN | (blocked && !apart ? POLLOUT : 0)},
			      {.fd = rt->kick_fd, .events = POLLIN},
			      {.fd = rt->wait_tfd, .events = POLLIN},
			      {.fd = rt->poll_tp_fd, .events = POLLIN},
			      {.fd = rt->drv->rx_fd2, .events = POLLIN},
			      {.fd = blocked && apart ? rt->drv->tx_fd : -1, .events = POLLOUT}};
	uint64_t drv_by = nd && rt->drv->rx_wake_ns ? rt->drv->rx_wake_ns : UINT64_MAX;
	uint64_t soon = caller_by < drv_by ? caller_by : drv_by;  /* on ppoll's own timeout */
	uint64_t first;
	int r = 0;

	if (blocked && engine_by < now + RT_BLOCKED_NS)
		engine_by = now + RT_BLOCKED_NS;
	first = engine_by < soon ? engine_by : soon;
	if (first <= now + RT_SPIN_NS && !blocked && rt->drv->ops->pending)
		return rt->drv->ops->pending(rt->drv) ? WAIT_PACKETS : 0;  /* no system call */

	memcpy(p + 6, rt->drv->rx_poll, (size_t)nd * sizeof(p[0]));
	if (first > now + RT_SPIN_NS)
		r = homa_rt_spin(rt, p, (nfds_t)(6 + nd), &now, first);
	if (r == 0)
		r = sleep_poll(rt, p, (nfds_t)(6 + nd), now, engine_by, soon);
	return wait_result(rt, p, nd, r, drv_by);
}

/** homa_rt_poll_step() - See rt.h. */
uint64_t homa_rt_poll_step(struct homa_rt *rt, uint64_t now, uint64_t until)
{
	uint64_t after = 0;
	bool read;
	int got;

	uint64_t engine_by = homa_rt_timers(rt, &now, until);

	/* a batch's rest is handled before any wait */
	got = rt->rx_rest_n ? WAIT_PACKETS : wait_packets(rt, now, engine_by, until);
	rt->poll_input = got != 0;
	if (got & WAIT_PACKETS)
		homa_rt_input(rt, &after);
	if (got & WAIT_TCP)
		homa_tp_poll_read(rt);
	read = after || (got & WAIT_TCP);  /* homa_rt_input() sets after when it read */
	atomic_store(&rt->wake_at, 0);
	homa_rt_arm_timer(rt);
	if (!after)
		after = homa_rt_now();
	if (read)
		homa_rt_spin_renew(rt, after);
	homa_rt_lock(rt);
	return after;
}

/** homa_rt_arm_timer() - See rt.h. Rearms only when the deadline moved. */
void homa_rt_arm_timer(struct homa_rt *rt)
{
	struct itimerspec its = {0};
	uint64_t d;

	if (!atomic_load(&rt->timer_on))
		return;  /* timer_fd is read under the lock only: homa_fd() may make it meanwhile */
	homa_rt_lock(rt);
	d = homa_engine_wake_by(rt->engine);
	if (d == rt->timer_armed) {
		homa_rt_unlock(rt);
		return;
	}
	rt->timer_armed = d;
	if (d != UINT64_MAX)
		its.it_value = homa_rt_timespec(d ? d : 1);
	timerfd_settime(rt->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
	homa_rt_unlock(rt);
}

/**
 * io_thread() - Threaded mode's thread: timers, sleep until the next
 * deadline or a packet, receive (homa_rt_standby_loop()), napping while
 * an application thread waiting in the socket does that itself. Ends
 * when the socket closes. The thread is named "homa-io" (top, perf,
 * /proc/PID/task/TID/comm).
 */
static void *io_thread(void *arg)
{
	struct homa_rt *rt = arg;

	/* Pacer deadlines are microseconds apart: ask for exact wake-ups. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	prctl(PR_SET_NAME, "homa-io", 0, 0, 0);
	/*
	 * The protocol's timers and grants run here: when the process has many
	 * busy threads, let this one go first (works with CAP_SYS_NICE only;
	 * otherwise it keeps the normal priority).
	 */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), IO_THREAD_NICE);
	homa_rt_standby_loop(rt);
	return NULL;
}

/** homa_rt_spawn() - See rt.h. Signals are blocked in the thread. */
int homa_rt_spawn(struct homa_rt *rt, void *(*fn)(void *))
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&rt->thread, NULL, fn, rt);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return HOMA_EIO;
	rt->thread_started = true;
	return 0;
}

/** homa_rt_thread_start() - See rt.h. */
int homa_rt_thread_start(struct homa_rt *rt)
{
	return homa_rt_spawn(rt, io_thread);
}

/** homa_rt_thread_stop() - See rt.h. rt->closing must already be set. */
void homa_rt_thread_stop(struct homa_rt *rt)
{
	if (!rt->thread_started)
		return;
	homa_rt_kick(rt);
	pthread_join(rt->thread, NULL);
	rt->thread_started = false;
}
