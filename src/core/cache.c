/* SPDX-License-Identifier: MIT */
/**
 * @file cache.c
 * Free lists of the engine's small per-RPC records (RPCs, event nodes,
 * RPC groups): a record freed is kept for the next one of its kind, up to
 * HOMA_CACHE_MAX of each, instead of going back through the allocation
 * hooks. Every small RPC otherwise allocates and frees each of them once,
 * often on different threads (the standby thread receives, the
 * application's thread takes the event). The lists live under the
 * engine's lock like the rest of it; homa_engine_free() returns what they
 * hold to the hooks.
 */
#include "internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_ASAN 1
#endif
#endif

#ifdef CACHE_ASAN
#include <sanitizer/asan_interface.h>
/*
 * Under AddressSanitizer a kept record is poisoned past its link word, so
 * a use after free of an RPC is still reported, not hidden by the list.
 */
#define CACHE_POISON(b, n) ASAN_POISON_MEMORY_REGION((char *)(b) + sizeof(void *), \
						     (n) - sizeof(void *))
#define CACHE_UNPOISON(b, n) ASAN_UNPOISON_MEMORY_REGION((b), (n))
#else
#define CACHE_POISON(b, n) ((void)(b), (void)(n))
#define CACHE_UNPOISON(b, n) ((void)(b), (void)(n))
#endif

/**
 * homa_cache_get() - A record of @size bytes from @c, else from the
 * allocation hooks. Its contents are undefined. Return: NULL if the hooks
 * fail.
 */
void *homa_cache_get(homa_engine *e, struct homa_cache *c, size_t size)
{
	void *b = c->head;

	if (!b)
		return homa_mem_alloc(e, size);
	CACHE_UNPOISON(b, size);
	c->head = *(void **)b;
	c->count--;
	e->cache_reused++;
	return b;
}

/**
 * homa_cache_put() - Keep record @p of @size bytes (at least a pointer's)
 * in @c, or free it through the hooks when @c is full. NULL is ignored.
 */
void homa_cache_put(homa_engine *e, struct homa_cache *c, void *p, size_t size)
{
	if (!p)
		return;
	if (c->count >= HOMA_CACHE_MAX) {
		homa_mem_free(e, p, size);
		return;
	}
	*(void **)p = c->head;
	c->head = p;
	c->count++;
	CACHE_POISON(p, size);
}

/** homa_cache_drain() - Free every record @c holds (of @size bytes) through the hooks. */
void homa_cache_drain(homa_engine *e, struct homa_cache *c, size_t size)
{
	while (c->head) {
		void *b = c->head;

		CACHE_UNPOISON(b, size);
		c->head = *(void **)b;
		homa_mem_free(e, b, size);
	}
	c->count = 0;
}
