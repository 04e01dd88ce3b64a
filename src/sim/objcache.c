/* SPDX-License-Identifier: MIT */
/**
 * @file objcache.c
 * Recycling allocator for simulated engines (see objcache.h).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/objcache.h"

/** size_class() - Class of a @size-byte block (0 for blocks too big to cache). */
static inline size_t size_class(size_t size)
{
	if (size > HOMA_SIM_OBJCACHE_MAX)
		return 0;
	return size ? (size + HOMA_SIM_OBJCACHE_STEP - 1) / HOMA_SIM_OBJCACHE_STEP : 1;
}

/** homa_sim_objcache_init() - See objcache.h. */
void homa_sim_objcache_init(struct homa_sim_objcache *c, size_t max_bytes)
{
	memset(c, 0, sizeof(*c));
	c->max_bytes = max_bytes;
}

/** homa_sim_objcache_alloc() - See objcache.h. Misses allocate the class's full size. */
void *homa_sim_objcache_alloc(void *ctx, size_t size)
{
	struct homa_sim_objcache *c = ctx;
	size_t k = size_class(size);
	void *p;

	if (!k)
		return malloc(size);
	p = c->free[k];
	if (!p)
		return malloc(k * HOMA_SIM_OBJCACHE_STEP);
	memcpy(&c->free[k], p, sizeof(p));
	c->cached_bytes -= k * HOMA_SIM_OBJCACHE_STEP;
	c->reused++;
	return p;
}

/** homa_sim_objcache_free() - See objcache.h. */
void homa_sim_objcache_free(void *ctx, void *ptr, size_t size)
{
	struct homa_sim_objcache *c = ctx;
	size_t k = size_class(size);

	if (!ptr)
		return;
	if (!k || c->cached_bytes + k * HOMA_SIM_OBJCACHE_STEP > c->max_bytes) {
		free(ptr);
		return;
	}
	memcpy(ptr, &c->free[k], sizeof(ptr));
	c->free[k] = ptr;
	c->cached_bytes += k * HOMA_SIM_OBJCACHE_STEP;
}

/** homa_sim_objcache_release() - See objcache.h. */
void homa_sim_objcache_release(struct homa_sim_objcache *c)
{
	size_t k;

	for (k = 1; k < HOMA_SIM_OBJCACHE_CLASSES; k++) {
		while (c->free[k]) {
			void *p = c->free[k];

			memcpy(&c->free[k], p, sizeof(p));
			free(p);
		}
	}
	c->cached_bytes = 0;
}
