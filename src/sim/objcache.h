/* SPDX-License-Identifier: MIT */
/**
 * @file objcache.h
 * A recycling allocator for the engines of one simulated network, given
 * to them as their homa_alloc hooks. Engines allocate and free small
 * objects (RPCs, event nodes, message records) for every message; a
 * simulation runs many engines in one thread, so one shared set of
 * last-in-first-out free lists by 16-byte size class hands each request
 * the block freed most recently (still in the cache) without malloc's
 * bookkeeping. Bounded: at most max_bytes sit on the free lists; past
 * that, and for blocks over HOMA_SIM_OBJCACHE_MAX bytes, malloc and free
 * are used directly. Single-threaded, like the network that owns it.
 */
#ifndef HOMA_SIM_OBJCACHE_H
#define HOMA_SIM_OBJCACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest block size the cache recycles (bytes). */
#define HOMA_SIM_OBJCACHE_MAX 1024
/** Granularity of its size classes (bytes). */
#define HOMA_SIM_OBJCACHE_STEP 16
/** Number of size classes. */
#define HOMA_SIM_OBJCACHE_CLASSES (HOMA_SIM_OBJCACHE_MAX / HOMA_SIM_OBJCACHE_STEP + 1)

/** The cache. Zero-initialize, or use homa_sim_objcache_init(). */
struct homa_sim_objcache {
	void *free[HOMA_SIM_OBJCACHE_CLASSES]; /**< per class: free blocks, linked through their first word */
	size_t cached_bytes;   /**< bytes on the free lists */
	size_t max_bytes;      /**< bound on cached_bytes */
	uint64_t reused;       /**< allocations served from a free list */
};

/** homa_sim_objcache_init() - Make @c empty, keeping at most @max_bytes of free blocks. */
void homa_sim_objcache_init(struct homa_sim_objcache *c, size_t max_bytes);

/**
 * homa_sim_objcache_alloc() - homa_alloc.alloc hook (@ctx is the cache):
 * @size bytes, not zeroed. Return: the block or NULL (out of memory).
 */
void *homa_sim_objcache_alloc(void *ctx, size_t size);

/**
 * homa_sim_objcache_free() - homa_alloc.free hook: take back @ptr, which
 * homa_sim_objcache_alloc(@ctx, @size) returned (the same @size). NULL
 * is ignored.
 */
void homa_sim_objcache_free(void *ctx, void *ptr, size_t size);

/** homa_sim_objcache_release() - Free every cached block (blocks in use stay valid). */
void homa_sim_objcache_release(struct homa_sim_objcache *c);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_SIM_OBJCACHE_H */
