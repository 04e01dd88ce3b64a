/* SPDX-License-Identifier: MIT */
/**
 * @file tx.c
 * Moving the engine's output to the driver. Any thread that changed the
 * engine's state calls homa_rt_flush(): one thread at a time drains the
 * engine (under rt->lock) into the transmit batch and sends it (without
 * rt->lock). A thread that finds another one sending leaves a note
 * (tx_pending) and returns; the sender loops until no note is left, so no
 * output is stranded.
 *
 * DATA packets of zero-copy messages go out without a copy: the batch
 * holds their header and a pointer to the payload in the application's
 * buffers (homa_engine_output_ref()), and while such a batch is unsent
 * (tx_refs) the releases of zero-copy messages wait (lock.c), so no
 * application reuses a buffer the kernel has yet to read. On an encrypted
 * socket the batch also points into the engine's own copy of ordinary
 * messages (sealing reads it there, homa_rt_enc_seal()); the engine keeps
 * every such message freed meanwhile until unref() says the batch is sent.
 *
 * A send with HOMA_SEND_MORE sends nothing (tx_corked notes that): its
 * packets leave with the next flush, so a batch of replies goes to the
 * kernel in one system call (homa_rt_unlock_send_out(), homa_rt_uncork()).
 *
 * A thread that attached a message (homa_rt_flush_share()) sends at most
 * one batch itself and hands whatever is left to the thread that drives
 * I/O: otherwise grants arriving while it sends (each leaves a note) keep
 * it sending a large message whole, for as long as the transfer takes.
 *
 * No thread ever waits for the kernel's send buffer: when it is full, the
 * packets the driver could not take stay in the batch (held) and nothing
 * more is drained from the engine until they are gone; the I/O thread or
 * poller, which keeps receiving and running timers meanwhile, also waits
 * for the socket to become writable and then sends them.
 */
#include <stdint.h>
#include <unistd.h>

#include "rt.h"

/** Batches a thread that attached a message sends itself (homa_rt_flush_share()). */
#define SHARE_BATCHES 1

/** Buffers asked of the driver at a time (homa_driver_ops.tx_bufs). */
#define LEND_CHUNK 16

/**
 * tx_buf() - The buffer packet @n of the batch is built in: a send buffer
 * the driver lent (the packet then goes out where it lies, see
 * homa_driver_ops.tx_bufs) while it lends them and the engine has output,
 * else the runtime's own. Lent buffers are the batch's first *@lent
 * packets. Not for encrypted sockets (sealing works in rt->tx_bufs).
 */
static uint8_t *tx_buf(struct homa_rt *rt, uint64_t now, int n, int *lent)
{
	const struct homa_driver_ops *ops = rt->drv->ops;

	if (n == *lent && ops->tx_bufs && !rt->enc && homa_engine_want_output(rt->engine, now)) {
		int want = (int)rt->batch - n < LEND_CHUNK ? (int)rt->batch - n : LEND_CHUNK;

		*lent += ops->tx_bufs(rt->drv, rt->tx_lent + n, want, rt->pkt_cap);
	}
	return n < *lent ? rt->tx_lent[n] : rt->tx_bufs + (size_t)n * rt->pkt_cap;
}

/**
 * drain() - Take up to rt->batch packets from the engine into the batch
 * (the previous batch is sent: nothing is held), built where the driver
 * sends them if it lends buffers (tx_buf()). Payloads stay in borrowed
 * buffers unless packets are captured (the capture reads each packet
 * whole). Called with rt->lock and rt->tx_lock held.
 * Return: packets taken.
 */
static int drain(struct homa_rt *rt, uint64_t now)
{
	bool borrow = !rt->obs.pcap;
	int n = 0, lent = 0;

	rt->tx_refs = false;
	while (n < (int)rt->batch) {
		uint8_t *buf = tx_buf(rt, now, n, &lent);
		struct homa_iov ref[2] = {{NULL, 0}, {NULL, 0}};
		struct homa_tx tx;
		/* only the seal reads a second piece; the driver sends one */
		int len = borrow ? homa_engine_output_refs(rt->engine, now, buf, rt->pkt_cap, &tx,
							   ref, rt->enc ? 2 : 1)
				 : homa_engine_output(rt->engine, now, buf, rt->pkt_cap, &tx);

		if (len <= 0)
			break;
		rt->tx_pkts[n] = (struct homa_io_tx){.data = buf, .len = (size_t)len,
			.ext = ref[0].base, .ext_len = ref[0].len,
			.dst = tx.dst, .dport = tx.dport, .priority = tx.priority};
		rt->tx_ext2[n] = ref[1];
		rt->tx_refs |= ref[0].len > 0;
		n++;
	}
	if (lent > n)  /* lent buffers the engine had nothing for */
		rt->drv->ops->tx_unbufs(rt->drv, rt->tx_lent + n, lent - n);
	return n;
}

/**
 * take_output() - drain() at the clock's time, or nothing without reading
 * the clock when the engine has no output at all (homa_engine_has_output():
 * most flushes after a receive or a release find nothing to send).
 * Called with rt->lock and rt->tx_lock held. Return: packets taken.
 */
static int take_output(struct homa_rt *rt)
{
	if (!homa_engine_has_output(rt->engine)) {
		rt->tx_refs = false;
		return 0;
	}
	return drain(rt, homa_rt_now());
}

/**
 * unref() - The batch that pointed into borrowed buffers is sent: clear
 * tx_refs, let the engine free the messages it kept for the batch
 * (homa_engine_output_sent()) and report the zero-copy releases that
 * waited for it (at the unlock). Called with rt->tx_lock held, without
 * rt->lock.
 */
static void unref(struct homa_rt *rt)
{
	homa_rt_lock(rt);
	rt->tx_refs = false;
	homa_engine_output_sent(rt->engine);
	homa_rt_unlock(rt);
}

/**
 * hold() - The driver took only @took of the batch's @n packets (send
 * buffer full): keep the rest for send_held(). Called with rt->tx_lock.
 */
static void hold(struct homa_rt *rt, int took, int n)
{
	rt->tx_held_first = (uint32_t)took;
	rt->tx_held = (uint32_t)(n - took);
	atomic_fetch_add(&rt->tx_deferred, (uint64_t)(n - took));
	atomic_store(&rt->tx_blocked, true);
}

/**
 * send_held() - Offer the held packets to the driver again (a failed
 * socket drops them). Called with rt->tx_lock. Return: true if none is
 * left.
 */
static bool send_held(struct homa_rt *rt)
{
	int took = rt->drv->ops->send(rt->drv, rt->tx_pkts + rt->tx_held_first, (int)rt->tx_held);

	if (took < 0)
		took = (int)rt->tx_held;
	rt->tx_held_first += (uint32_t)took;
	rt->tx_held -= (uint32_t)took;
	if (rt->tx_held)
		return false;
	atomic_store(&rt->tx_blocked, false);
	return true;
}

/** wake_by() - homa_engine_wake_by() under rt->lock. */
static uint64_t wake_by(struct homa_rt *rt)
{
	uint64_t d;

	homa_rt_lock(rt);
	d = homa_engine_wake_by(rt->engine);
	homa_rt_unlock(rt);
	return d;
}

/**
 * send_all() - Clear rt->tx_corked (the drain that follows takes every
 * packet HOMA_SEND_MORE sends left), send held packets, then drain and send until the engine
 * has nothing more to send now, the send buffer is full or @max batches
 * went out (*@more then says the engine may have more). Called with
 * rt->tx_lock held, and with rt->lock too if @locked (the first drain is
 * then done in the caller's hold, which it ends); returns without
 * rt->lock; never waits. Return: when the engine wants a wake-up
 * at the latest (homa_engine_wake_by()).
 */
static uint64_t send_all(struct homa_rt *rt, uint32_t max, bool *more, bool locked)
{
	uint64_t deadline = UINT64_MAX;
	bool refs = rt->tx_held > 0;  /* held packets may point into borrowed buffers */
	int n;

	/* whatever HOMA_SEND_MORE sends left in the engine goes now: any
	   flush sends them, so none may leave the note set (release and
	   homa_recv() would take it as packets still held) */
	atomic_store(&rt->tx_corked, false);
	*more = true;
	if (rt->tx_held) {
		if (locked)
			homa_rt_unlock(rt);
		locked = false;
		if (!send_held(rt))
			return wake_by(rt);
	}
	do {
		if (!locked)
			homa_rt_lock(rt);
		locked = false;  /* the caller's hold covers the first drain only */
		n = take_output(rt);
		refs |= rt->tx_refs;
		deadline = homa_engine_wake_by(rt->engine);
		homa_rt_unlock(rt);
		if (n) {
			int took, m;

			homa_rt_obs_tx(rt, rt->tx_pkts, n);
			m = homa_rt_enc_seal(rt, rt->tx_pkts, rt->tx_ext2, n);
			took = m ? rt->drv->ops->send(rt->drv, rt->tx_pkts, m) : 0;
			if (took >= 0 && took < m) {
				hold(rt, took, m);
				return deadline;  /* tx_refs stays until the held packets go */
			}
			homa_rt_enc_yield(rt);
		}
	} while (n == (int)rt->batch && --max > 0);
	*more = n == (int)rt->batch;
	if (refs)
		unref(rt);
	return deadline;
}

/** homa_rt_kick() - See rt.h. */
void homa_rt_kick(struct homa_rt *rt)
{
	uint64_t v = 1;

	if (write(rt->kick_fd, &v, sizeof(v)) < 0)
		return;
}

/**
 * after_send() - Output went out up to the engine's @deadline: kick the
 * waiting I/O thread if it must wake earlier than it planned; in polled
 * mode re-arm homa_fd()'s timer.
 */
static void after_send(struct homa_rt *rt, uint64_t deadline)
{
	if (rt->mode == HOMA_MODE_THREADED && deadline < atomic_load(&rt->wake_at))
		homa_rt_kick(rt);
	if (rt->mode == HOMA_MODE_POLLED)
		homa_rt_arm_timer(rt);
}

/** homa_rt_flush() - See rt.h. */
void homa_rt_flush(struct homa_rt *rt)
{
	uint64_t deadline = UINT64_MAX;
	bool sent = false, more;

	atomic_store(&rt->tx_pending, 1);
	while (atomic_load(&rt->tx_pending)) {
		if (pthread_mutex_trylock(&rt->tx_lock) != 0)
			break;
		while (atomic_exchange(&rt->tx_pending, 0)) {
			deadline = send_all(rt, UINT32_MAX, &more, false);
			sent = true;
		}
		pthread_mutex_unlock(&rt->tx_lock);
	}
	if (sent)
		after_send(rt, deadline);
}

/** homa_rt_tx_work() - See rt.h. */
bool homa_rt_tx_work(const struct homa_rt *rt)
{
	return homa_engine_has_output(rt->engine) || atomic_load(&rt->tx_blocked) ||
	       atomic_load(&rt->tx_corked);
}

/**
 * homa_rt_unlock_flush() - See rt.h. With no work for a flush (most
 * releases and received batches that complete a message answer nothing)
 * the flush's own take of rt->lock is skipped: the engine's deadline is
 * read in this hold and the I/O thread kicked (or homa_fd()'s timer
 * re-armed) as after a flush.
 */
void homa_rt_unlock_flush(struct homa_rt *rt)
{
	uint64_t deadline;

	if (homa_rt_tx_work(rt)) {
		homa_rt_unlock(rt);
		homa_rt_flush(rt);
		return;
	}
	deadline = homa_engine_wake_by(rt->engine);
	homa_rt_unlock(rt);
	after_send(rt, deadline);
}

/** homa_rt_flush_wait() - See rt.h. */
void homa_rt_flush_wait(struct homa_rt *rt)
{
	bool more;

	atomic_store(&rt->tx_pending, 1);
	pthread_mutex_lock(&rt->tx_lock);
	while (atomic_exchange(&rt->tx_pending, 0))
		send_all(rt, UINT32_MAX, &more, false);
	pthread_mutex_unlock(&rt->tx_lock);
	/* a note left after the loop: its writer could not get the lock */
	if (atomic_load(&rt->tx_pending))
		homa_rt_flush(rt);
}

/**
 * hand_off() - Output is left after a sender's share: wake the thread
 * that drives I/O to send it. A poller waiting for packets is kicked; in
 * threaded mode with no poller the napping I/O thread steps in at once.
 * In polled mode with no poller it goes out when a thread next polls
 * (homa_poll(), a blocking homa_recv(); homa_fd()'s timer says the
 * engine has work due), or from the standby thread.
 */
static void hand_off(struct homa_rt *rt)
{
	homa_rt_lock(rt);
	if (rt->poller_active)
		homa_rt_kick(rt);
	else if (rt->mode == HOMA_MODE_THREADED)
		homa_rt_app_away(rt);
	homa_rt_unlock(rt);
	if (rt->mode == HOMA_MODE_POLLED)
		homa_rt_arm_timer(rt);  /* an epoll loop on homa_fd() wakes to poll */
}

/**
 * flush_share() - homa_rt_flush_share(); with @locked called with rt->lock
 * held, which it releases: the first batch is drained in that hold
 * (send_all()). Trying tx_lock while holding rt->lock cannot deadlock
 * (a sender holding tx_lock waits for rt->lock, never the other way).
 */
static void flush_share(struct homa_rt *rt, bool locked)
{
	uint64_t deadline;
	bool more;

	atomic_store(&rt->tx_pending, 1);
	if (pthread_mutex_trylock(&rt->tx_lock) != 0) {
		if (locked)
			homa_rt_unlock(rt);
		return;  /* the thread sending sees the note */
	}
	atomic_store(&rt->tx_pending, 0);
	deadline = send_all(rt, SHARE_BATCHES, &more, locked);
	pthread_mutex_unlock(&rt->tx_lock);
	if (more || atomic_load(&rt->tx_pending) || atomic_load(&rt->tx_blocked))
		hand_off(rt);
	else
		after_send(rt, deadline);
}

/** homa_rt_flush_share() - See rt.h. */
void homa_rt_flush_share(struct homa_rt *rt)
{
	flush_share(rt, false);
}

/** homa_rt_unlock_send_out() - See rt.h. */
void homa_rt_unlock_send_out(struct homa_rt *rt, bool more)
{
	if (!more) {
		flush_share(rt, true);
		return;
	}
	atomic_store(&rt->tx_corked, true);
	homa_rt_unlock(rt);
}

/** homa_rt_uncork() - See rt.h. */
void homa_rt_uncork(struct homa_rt *rt)
{
	if (atomic_load_explicit(&rt->tx_corked, memory_order_relaxed) &&
	    atomic_exchange(&rt->tx_corked, false))
		homa_rt_flush(rt);
}
