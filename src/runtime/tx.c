/* SPDX-License-Identifier: MIT */
/**
 * @file tx.c
 * Moving the engine's output to the driver. Any thread that changed the
 * engine's state calls homa_rt_flush(): one thread at a time drains the
 * engine (under rt->lock) into the transmit batch and sends it (without
 * rt->lock). A thread that finds another one sending leaves a note
 * (tx_pending) and returns; the sender loops until no note is left, so no
 * output is stranded.
 */
#include <stdint.h>
#include <unistd.h>

#include "rt.h"

/**
 * drain() - Take up to rt->batch packets from the engine into the batch.
 * Called with rt->lock and rt->tx_lock held. Return: packets taken.
 */
static int drain(struct homa_rt *rt, uint64_t now)
{
	int n = 0;

	while (n < (int)rt->batch) {
		uint8_t *buf = rt->tx_bufs + (size_t)n * rt->pkt_cap;
		struct homa_tx tx;
		int len = homa_engine_output(rt->engine, now, buf, rt->pkt_cap, &tx);

		if (len <= 0)
			break;
		rt->tx_pkts[n] = (struct homa_io_tx){.data = buf, .len = (size_t)len,
			.dst = tx.dst, .dport = tx.dport, .priority = tx.priority};
		n++;
	}
	return n;
}

/**
 * send_all() - Drain and send until the engine has nothing more to send
 * now. Called with rt->tx_lock held. Return: when the engine wants a
 * wake-up at the latest (homa_engine_wake_by()).
 */
static uint64_t send_all(struct homa_rt *rt)
{
	uint64_t deadline = UINT64_MAX;
	int n;

	do {
		homa_rt_lock(rt);
		n = drain(rt, homa_rt_now());
		deadline = homa_engine_wake_by(rt->engine);
		homa_rt_unlock(rt);
		if (n) {
			homa_rt_obs_tx(rt, rt->tx_pkts, n);
			rt->drv->ops->send(rt->drv, rt->tx_pkts, n);
		}
	} while (n == (int)rt->batch);
	return deadline;
}

/** homa_rt_kick() - See rt.h. */
void homa_rt_kick(struct homa_rt *rt)
{
	uint64_t v = 1;

	if (write(rt->kick_fd, &v, sizeof(v)) < 0)
		return;
}

/** homa_rt_flush() - See rt.h. */
void homa_rt_flush(struct homa_rt *rt)
{
	uint64_t deadline = UINT64_MAX;
	bool sent = false;

	atomic_store(&rt->tx_pending, 1);
	while (atomic_load(&rt->tx_pending)) {
		if (pthread_mutex_trylock(&rt->tx_lock) != 0)
			break;
		while (atomic_exchange(&rt->tx_pending, 0)) {
			deadline = send_all(rt);
			sent = true;
		}
		pthread_mutex_unlock(&rt->tx_lock);
	}
	if (!sent)
		return;
	if (rt->mode == HOMA_MODE_THREADED && deadline < atomic_load(&rt->wake_at))
		homa_rt_kick(rt);
	if (rt->mode == HOMA_MODE_POLLED && rt->timer_fd >= 0)
		homa_rt_arm_timer(rt);
}

/** homa_rt_flush_wait() - See rt.h. */
void homa_rt_flush_wait(struct homa_rt *rt)
{
	atomic_store(&rt->tx_pending, 1);
	pthread_mutex_lock(&rt->tx_lock);
	while (atomic_exchange(&rt->tx_pending, 0))
		send_all(rt);
	pthread_mutex_unlock(&rt->tx_lock);
	/* a note left after the loop: its writer could not get the lock */
	if (atomic_load(&rt->tx_pending))
		homa_rt_flush(rt);
}
