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
 * rt->lock; senders build messages without it).
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

/** Most small blocks cached per socket (RT_POOL_SMALL bytes each). */
#define RT_POOL_SMALL_MAX 1024

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
};

/**
 * homa_rt_pool_init() - Make @p an empty pool caching at most @max_bytes,
 * and fill @hooks so that an engine allocates through it. The pool must
 * outlive the engine.
 */
void homa_rt_pool_init(struct rt_pool *p, size_t max_bytes, struct homa_alloc *hooks);

/**
 * homa_rt_pool_stats() - The pool's cached blocks in *@count and its
 * reuses in *@reused, read under its lock (either may be NULL).
 */
void homa_rt_pool_stats(struct rt_pool *p, size_t *count, size_t *reused);

/**
 * homa_rt_pool_drain() - Free every cached block (after the engine that
 * used the pool is freed, and no message built from it is left). The
 * pool stays usable.
 */
void homa_rt_pool_drain(struct rt_pool *p);

#endif
