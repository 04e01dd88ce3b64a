/* SPDX-License-Identifier: MIT */
/**
 * @file pool.c
 * The chunk cache behind the engine's allocation hooks (see pool.h).
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pool.h"

#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif

#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
/*
 * Under AddressSanitizer a cached block is poisoned past its link word:
 * a write into a chunk the engine freed (or a read of it) is reported as
 * the use-after-free it is, not hidden by the cache.
 */
#define POOL_POISON(b, size) ASAN_POISON_MEMORY_REGION((char *)(b) + sizeof(void *), \
						       (size) - sizeof(void *))
#define POOL_UNPOISON(b, size) ASAN_UNPOISON_MEMORY_REGION((b), (size))
#else
#define POOL_POISON(b, size) ((void)(b), (void)(size))
#define POOL_UNPOISON(b, size) ((void)(b), (void)(size))
#endif

/**
 * list_pop() - With the pool's lock held: take the first block of the
 * cached list @head (*@n counts its blocks of @size bytes), unpoisoned.
 * Return: the block, or NULL if the list is empty.
 */
static void *list_pop(void **head, size_t *n, size_t size)
{
	void *b = *head;

	if (b) {
		*head = *(void **)b;
		(*n)--;
		POOL_UNPOISON(b, size);
	}
	return b;
}

/**
 * list_push() - With the pool's lock held: cache block @b of @size bytes
 * on list @head while it holds fewer than @max (*@n), poisoned past its
 * link word. Return: true if cached; false if the caller must free it.
 */
static bool list_push(void **head, size_t *n, size_t max, void *b, size_t size)
{
	if (*n >= max)
		return false;
	*(void **)b = *head;
	*head = b;
	(*n)++;
	POOL_POISON(b, size);
	return true;
}

__thread const pthread_mutex_t *homa_rt_pool_holder;

/** owner_holds() - Whether this thread holds @p's owner lock (its own list is safe). */
static bool owner_holds(const struct rt_pool *p)
{
	return p->outer && homa_rt_pool_holder == p->outer;
}

/**
 * small_alloc_shared() - A small block from the shared list under the
 * pool's mutex, or a new one of RT_POOL_SMALL bytes.
 */
static void *small_alloc_shared(struct rt_pool *p)
{
	void *b;

	pthread_mutex_lock(&p->lock);
	p->lock_takes++;
	b = list_pop(&p->small, &p->nsmall, RT_POOL_SMALL);
	if (!b)
		p->small_mallocs++;
	else
		p->small_reused++;
	pthread_mutex_unlock(&p->lock);
	return b ? b : malloc(RT_POOL_SMALL);
}

/**
 * refill_mine() - The owner's list is empty: move up to RT_POOL_MOVE
 * blocks onto it from the shared list, in one take of the pool's mutex.
 * The owner lock is held.
 */
static void refill_mine(struct rt_pool *p)
{
	void *b;

	pthread_mutex_lock(&p->lock);
	p->lock_takes++;
	for (size_t i = 0; i < RT_POOL_MOVE; i++) {
		b = list_pop(&p->small, &p->nsmall, RT_POOL_SMALL);
		if (!b)
			break;
		list_push(&p->mine, &p->nmine, RT_POOL_MINE_MAX, b, RT_POOL_SMALL);
	}
	pthread_mutex_unlock(&p->lock);
}

/**
 * small_alloc() - A cached small block, or a new one of RT_POOL_SMALL
 * bytes: from the owner's list without a mutex when this thread holds
 * the owner lock (refilled from the shared list when empty), else from
 * the shared list.
 */
static void *small_alloc(struct rt_pool *p)
{
	void *b;

	if (!owner_holds(p))
		return small_alloc_shared(p);
	if (!p->mine)
		refill_mine(p);
	b = list_pop(&p->mine, &p->nmine, RT_POOL_SMALL);
	if (b) {
		p->mine_reused++;
		return b;
	}
	p->mine_mallocs++;
	return malloc(RT_POOL_SMALL);
}

/**
 * spill_mine() - The owner's list is full: move RT_POOL_MOVE of its
 * blocks to the shared list in one take of the pool's mutex; those the
 * shared list has no room for are freed after it. The owner lock is held.
 */
static void spill_mine(struct rt_pool *p)
{
	void *extra = NULL, *b;
	size_t nextra = 0;

	pthread_mutex_lock(&p->lock);
	p->lock_takes++;
	for (size_t i = 0; i < RT_POOL_MOVE; i++) {
		b = list_pop(&p->mine, &p->nmine, RT_POOL_SMALL);
		if (!b)
			break;
		if (!list_push(&p->small, &p->nsmall, RT_POOL_SMALL_MAX, b, RT_POOL_SMALL))
			list_push(&extra, &nextra, RT_POOL_MOVE, b, RT_POOL_SMALL);
	}
	pthread_mutex_unlock(&p->lock);
	while ((b = list_pop(&extra, &nextra, RT_POOL_SMALL)))
		free(b);
}

/**
 * small_free() - Cache small block @b while under the bound, else free
 * it: on the owner's list without a mutex when this thread holds the
 * owner lock (half of a full list first moves to the shared one), else
 * on the shared list. A block with less room than RT_POOL_SMALL came
 * from malloc() at its own size, not from small_alloc() (a message
 * another allocator built, e.g. a TCP message the engine releases):
 * freed, never cached.
 */
static void small_free(struct rt_pool *p, void *b)
{
	bool cached;

	if (malloc_usable_size(b) < RT_POOL_SMALL) {
		free(b);
		return;
	}
	if (owner_holds(p)) {
		if (p->nmine >= RT_POOL_MINE_MAX)
			spill_mine(p);
		list_push(&p->mine, &p->nmine, RT_POOL_MINE_MAX, b, RT_POOL_SMALL);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->lock_takes++;
	cached = list_push(&p->small, &p->nsmall, RT_POOL_SMALL_MAX, b, RT_POOL_SMALL);
	pthread_mutex_unlock(&p->lock);
	if (!cached)
		free(b);
}

/**
 * pool_alloc() - Allocation hook: a cached block if @size is a chunk or
 * small (at most RT_POOL_SMALL: allocated at that size), else malloc.
 */
static void *pool_alloc(void *ctx, size_t size)
{
	struct rt_pool *p = ctx;
	void *b = NULL;

	if (size && size <= RT_POOL_SMALL)
		return small_alloc(p);
	if (size == RT_POOL_BLOCK) {
		pthread_mutex_lock(&p->lock);
		b = list_pop(&p->head, &p->count, RT_POOL_BLOCK);
		if (b)
			p->reused++;
		pthread_mutex_unlock(&p->lock);
	}
	return b ? b : malloc(size);
}

/** pool_free() - Free hook: cache a chunk or small block while under its bound, else free. */
static void pool_free(void *ctx, void *ptr, size_t size)
{
	struct rt_pool *p = ctx;
	bool cached = false;

	if (ptr && size && size <= RT_POOL_SMALL) {
		small_free(p, ptr);
		return;
	}
	if (size == RT_POOL_BLOCK && ptr) {
		pthread_mutex_lock(&p->lock);
		cached = list_push(&p->head, &p->count, p->max, ptr, RT_POOL_BLOCK);
		pthread_mutex_unlock(&p->lock);
	}
	if (!cached)
		free(ptr);
}

/** homa_rt_pool_init() - See pool.h. */
void homa_rt_pool_init(struct rt_pool *p, size_t max_bytes, struct homa_alloc *hooks)
{
	pthread_mutex_init(&p->lock, NULL);
	p->head = NULL;
	p->count = 0;
	p->reused = 0;
	p->small = NULL;
	p->nsmall = 0;
	p->small_mallocs = 0;
	p->small_reused = 0;
	p->lock_takes = 0;
	p->outer = NULL;
	p->mine = NULL;
	p->nmine = 0;
	p->mine_mallocs = 0;
	p->mine_reused = 0;
	p->max = max_bytes / RT_POOL_BLOCK;
	hooks->alloc = pool_alloc;
	hooks->free = pool_free;
	hooks->ctx = p;
}

/** homa_rt_pool_set_outer() - See pool.h. */
void homa_rt_pool_set_outer(struct rt_pool *p, const pthread_mutex_t *outer)
{
	p->outer = outer;
}

/** homa_rt_pool_stats() - See pool.h. */
void homa_rt_pool_stats(struct rt_pool *p, size_t *count, size_t *reused)
{
	pthread_mutex_lock(&p->lock);
	if (count)
		*count = p->count;
	if (reused)
		*reused = p->reused;
	pthread_mutex_unlock(&p->lock);
}

/** homa_rt_pool_drain() - See pool.h. */
void homa_rt_pool_drain(struct rt_pool *p)
{
	void *b;

	pthread_mutex_lock(&p->lock);
	while ((b = list_pop(&p->head, &p->count, RT_POOL_BLOCK)))
		free(b);
	while ((b = list_pop(&p->small, &p->nsmall, RT_POOL_SMALL)))
		free(b);
	while ((b = list_pop(&p->mine, &p->nmine, RT_POOL_SMALL)))
		free(b);
	pthread_mutex_unlock(&p->lock);
}
