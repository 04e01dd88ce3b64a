/* SPDX-License-Identifier: MIT */
/**
 * @file pool.h
 * A cache of freed message chunks behind the engine's allocation hooks.
 *
 * The engine stores messages in RT_POOL_BLOCK-byte chunks. Handing each
 * freed chunk straight back to malloc lets the C library return the
 * memory to the kernel, and the next message then page-faults on fresh
 * memory; on a virtual machine a page fault costs microseconds, and
 * copying a 10 MB message stalled its thread for milliseconds, long
 * enough for peers to ask for retransmissions. The pool keeps up to
 * max_bytes of freed chunks for reuse; blocks of any other size go to
 * malloc and free unchanged. The runtime builds outgoing messages from
 * the same cache (homa_rt_pool_hooks()), so that a socket whose received
 * messages do not use it (rx_alloc hooks, e.g. libhoma-linux.so's region)
 * still reuses the chunks its sent messages freed.
 *
 * Locking: its own mutex, innermost (the engine calls the hooks under
 * rt->lock; senders build messages without it). Small blocks have a
 * second list, the owner's, that only a thread holding the owner's lock
 * (homa_rt_pool_set_outer(): the socket's rt->lock) touches, without the
 * pool's mutex: the engine allocates and frees a 100 B RPC's records and
 * chunks under rt->lock, so most small blocks come and go without a
 * mutex of their own. That list trades blocks with the shared one a
 * batch (RT_POOL_MOVE) at a time, under the mutex.
 */
#ifndef HOMA_RT_POOL_H
#define HOMA_RT_POOL_H

#include <pthread.h>
#include <stddef.h>

#include "homa/engine.h"

/** Size of the engine's full message chunk (64 KiB). */
#define RT_POOL_BLOCK ((size_t)1 << 16)

/** Default bound on cached bytes per socket. */
#define RT_POOL_MAX_BYTES ((size_t)32 << 20)

/**
 * Blocks of at most this many bytes (a small message's record and its
 * one chunk: a 100 B RPC's four messages take eight) are all allocated
 * at this size and cached too, so a steady stream of small RPCs calls
 * malloc() for none of them.
 */
#define RT_POOL_SMALL ((size_t)256)

/** Most small blocks on a pool's shared list (RT_POOL_SMALL bytes each). */
#define RT_POOL_SMALL_MAX 1024

/** Most small blocks on the owner's list (on top of RT_POOL_SMALL_MAX). */
#define RT_POOL_MINE_MAX 64

/** Small blocks moved at once between the owner's list and the shared one. */
#define RT_POOL_MOVE 32

/**
 * The mutex this thread holds as a pool's owner lock, or NULL: set by
 * the runtime when it takes a socket's rt->lock and cleared before it
 * drops it (lock.c), so the pool knows when its owner's list is safe.
 */
extern __thread const pthread_mutex_t *homa_rt_pool_holder;

/** Freed chunks kept for reuse (a LIFO list linked through each block's first bytes). */
struct rt_pool {
	pthread_mutex_t lock; /**< guards the fields below (innermost) */
	void *head;
	size_t count;     /**< blocks cached */
	size_t max;       /**< most blocks to cache */
	size_t reused;    /**< allocations served from the cache */
	void *small;      /**< cached small blocks (RT_POOL_SMALL bytes), same linking */
	size_t nsmall;
	size_t small_mallocs; /**< small blocks ever taken from malloc() (tests) */
	size_t small_reused;  /**< small blocks served from the cache (tests) */
	size_t lock_takes;    /**< takes of lock by small-block hooks (tests) */
	/* guarded by *outer, not by lock */
	const pthread_mutex_t *outer; /**< owner's lock, or NULL: no owner's list */
	void *mine;           /**< the owner's cached small blocks, same linking */
	size_t nmine;
	size_t mine_mallocs;  /**< small blocks taken from malloc() by the owner (tests) */
	size_t mine_reused;   /**< small blocks the owner's list served (tests) */
};

/**
 * homa_rt_pool_init() - Make @p an empty pool caching at most @max_bytes,
 * and fill @hooks so that an engine allocates through it. The pool must
 * outlive the engine.
 */
void homa_rt_pool_init(struct rt_pool *p, size_t max_bytes, struct homa_alloc *hooks);

/**
 * homa_rt_pool_set_outer() - Give @p an owner's list of small blocks
 * guarded by @outer (the socket's rt->lock), used by threads that hold
 * it (homa_rt_pool_holder). Call before any allocation.
 */
void homa_rt_pool_set_outer(struct rt_pool *p, const pthread_mutex_t *outer);

/**
 * homa_rt_pool_stats() - The pool's cached blocks in *@count and its
 * reuses in *@reused, read under its lock (either may be NULL).
 */
void homa_rt_pool_stats(struct rt_pool *p, size_t *count, size_t *reused);

/**
 * homa_rt_pool_drain() - Free every cached block, the owner's list's too
 * (after the engine that used the pool is freed, and no message built
 * from it is left: no other thread uses the pool). The pool stays usable.
 */
void homa_rt_pool_drain(struct rt_pool *p);

#endif
