/* SPDX-License-Identifier: MIT */
/**
 * @file lock.c
 * The socket lock and waking blocked threads. Threads blocked in
 * homa_recv() sleep on a futex word in their (stack-allocated) waiter.
 * Whoever hands them a message sets the word under rt->lock and issues
 * the futex wake only after releasing the lock, so the woken thread does
 * not immediately block on the lock again. A wake on a word whose waiter
 * already left is harmless: FUTEX_WAKE only hashes the address.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "tp.h"

/** futex_wake() - Wake one thread sleeping on @word. */
static void futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/** homa_rt_futex_wait() - See rt.h. */
void homa_rt_futex_wait(_Atomic uint32_t *word, uint64_t until)
{
	struct timespec ts = homa_rt_timespec(until);

	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, 0,
		until == UINT64_MAX ? NULL : &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/** homa_rt_lock_init() - See rt.h. */
void homa_rt_lock_init(struct homa_rt *rt)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&rt->lock, &a);
	pthread_mutexattr_destroy(&a);
}

__thread uint64_t homa_rt_lock_takes;

/**
 * homa_rt_lock() - See rt.h. Counts the take in homa_rt_lock_takes and
 * marks this thread as the holder of rt->lock for the socket's chunk
 * cache (homa_rt_pool_holder: its owner's list of small blocks).
 */
void homa_rt_lock(struct homa_rt *rt)
{
	homa_rt_lock_takes++;
	pthread_mutex_lock(&rt->lock);
	homa_rt_pool_holder = &rt->lock;
}

/**
 * homa_rt_unlock() - See rt.h. Zero-copy sends the engine released while
 * the lock was held are reported after it is dropped (zc.c), unless the
 * transmit batch still points into borrowed buffers (tx.c reports them
 * once it is sent). This thread stops being the chunk cache's holder
 * before the lock is dropped.
 */
void homa_rt_unlock(struct homa_rt *rt)
{
	_Atomic uint32_t *wake[RT_MAX_DEFERRED_WAKES];
	struct rt_zc *released = rt->tx_refs ? NULL : homa_rt_zc_take(rt);
	int n = rt->nwake;

	for (int i = 0; i < n; i++)
		wake[i] = rt->wake[i];
	rt->nwake = 0;
	homa_rt_pool_holder = NULL;
	pthread_mutex_unlock(&rt->lock);
	for (int i = 0; i < n; i++)
		futex_wake(wake[i]);
	homa_rt_zc_notify(released);
}

__thread struct rt_waiter *homa_rt_poll_self;

/** homa_rt_wake_waiter() - See rt.h. Wakes at once if the list is full. */
void homa_rt_wake_waiter(struct homa_rt *rt, struct rt_waiter *w)
{
	atomic_store(&w->word, 1);
	if (w->polling) {
		if (w != homa_rt_poll_self)
			homa_rt_kick(rt); /* e.g. the transport thread: end the poller's wait */
		return;  /* else the poller itself delivered it: it is awake */
	}
	if (w->tp_reader) {
		homa_tp_wake_reader(rt, w);
		return;
	}
	if (rt->nwake < RT_MAX_DEFERRED_WAKES)
		rt->wake[rt->nwake++] = &w->word;
	else
		futex_wake(&w->word);
}

/** homa_rt_wake_now() - See rt.h. */
void homa_rt_wake_now(struct homa_rt *rt)
{
	for (int i = 0; i < rt->nwake; i++)
		futex_wake(rt->wake[i]);
	rt->nwake = 0;
}
