/* SPDX-License-Identifier: MIT */
/**
 * @file pool.c
 * The chunk cache behind the engine's allocation hooks (see pool.h).
 */
#include <stdlib.h>

#include "pool.h"

/** pool_alloc() - Allocation hook: a cached block if @size is a chunk, else malloc. */
static void *pool_alloc(void *ctx, size_t size)
{
	struct rt_pool *p = ctx;
	void *b = p->head;

	if (size != RT_POOL_BLOCK || !b)
		return malloc(size);
	p->head = *(void **)b;
	p->count--;
	p->reused++;
	return b;
}

/** pool_free() - Free hook: cache a chunk while under the bound, else free. */
static void pool_free(void *ctx, void *ptr, size_t size)
{
	struct rt_pool *p = ctx;

	if (size != RT_POOL_BLOCK || p->count >= p->max) {
		free(ptr);
		return;
	}
	*(void **)ptr = p->head;
	p->head = ptr;
	p->count++;
}

/** homa_rt_pool_init() - See pool.h. */
void homa_rt_pool_init(struct rt_pool *p, size_t max_bytes, struct homa_alloc *hooks)
{
	p->head = NULL;
	p->count = 0;
	p->reused = 0;
	p->max = max_bytes / RT_POOL_BLOCK;
	hooks->alloc = pool_alloc;
	hooks->free = pool_free;
	hooks->ctx = p;
}

/** homa_rt_pool_drain() - See pool.h. */
void homa_rt_pool_drain(struct rt_pool *p)
{
	while (p->head) {
		void *b = p->head;

		p->head = *(void **)b;
		free(b);
	}
	p->count = 0;
}
