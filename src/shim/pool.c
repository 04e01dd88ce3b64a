/* SPDX-License-Identifier: MIT */
/**
 * @file pool.c
 * The application's receive region (SO_HOMA_RCVBUF) cut into 64 KiB
 * bpages, handed out and taken back by the module's rules: a message gets
 * whole bpages (lowest free first, so use stays at the start of the
 * region) and its tail, if any, as a fragment of a shared bpage. Each
 * bpage counts its holds: the fragments the application holds, and the
 * pieces of messages still arriving, which the runtime receives straight
 * into the region through allocation hooks (shim_pool_hooks()); it is
 * free again when the runtime is done and every fragment came back
 * through recvmsg().
 */
#define _GNU_SOURCE  /* process_vm_readv, process_vm_writev */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "homa/engine.h"
#include "shim.h"

/**
 * rewrite_byte() - Read the byte at @at and write it back, through the
 * kernel (so a bad address is an error, not a signal).
 * Return: true if both worked.
 */
static bool rewrite_byte(char *at)
{
	char b;
	struct iovec mine = { &b, 1 }, there = { at, 1 };

	return process_vm_readv(getpid(), &mine, 1, &there, 1, 0) == 1 &&
	       process_vm_writev(getpid(), &mine, 1, &there, 1, 0) == 1;
}

/**
 * probe() - Whether [@base, @base + @length) is mapped (every page) and
 * writable (its first and last bytes): messages are copied there later,
 * where a bad region would crash the program.
 */
static bool probe(char *base, uint64_t length, long page)
{
	uint64_t span = (length + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;

	return madvise(base, span, MADV_NORMAL) == 0 && rewrite_byte(base) &&
	       rewrite_byte(base + length - 1);
}

/** shim_pool_init() - See shim.h. */
void shim_pool_init(struct shim_pool *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->partial = -1;
}

/** pool_set() - shim_pool_set() with p->lock held. */
static int pool_set(struct shim_pool *p, void *base, uint64_t length, uint64_t min)
{
	long page = sysconf(_SC_PAGESIZE);

	if (p->base || !base || (uintptr_t)base % (uintptr_t)(page > 0 ? page : 4096))
		return EINVAL;
	if (length < min || length < 2 * (uint64_t)HOMA_BPAGE_SIZE ||
	    length > 0x100000000ULL)
		return EINVAL;
	if (!probe(base, length, page > 0 ? page : 4096))
		return EFAULT;
	p->nbpages = (uint32_t)(length >> HOMA_BPAGE_SHIFT);
	p->refs = calloc(p->nbpages, sizeof(*p->refs));
	p->rx_refs = calloc(p->nbpages, sizeof(*p->rx_refs));
	if (!p->refs || !p->rx_refs) {
		free(p->refs);
		free(p->rx_refs);
		p->refs = p->rx_refs = NULL;
		return ENOMEM;
	}
	p->base = base;
	p->length = length;
	p->free_pages = p->nbpages;
	p->partial = -1;
	p->partial_used = 0;
	return 0;
}

/** shim_pool_set() - See shim.h. */
int shim_pool_set(struct shim_pool *p, void *base, uint64_t length, uint64_t min)
{
	int e;

	pthread_mutex_lock(&p->lock);
	e = pool_set(p, base, length, min);
	pthread_mutex_unlock(&p->lock);
	return e;
}

/** shim_pool_destroy() - See shim.h. */
void shim_pool_destroy(struct shim_pool *p)
{
	free(p->refs);
	free(p->rx_refs);
	p->refs = p->rx_refs = NULL;
	p->base = NULL;
	pthread_mutex_destroy(&p->lock);
}

/** take_page() - Lowest free bpage (refs becomes 1), or -1. */
static int64_t take_page(struct shim_pool *p, uint32_t from)
{
	for (uint32_t i = from; i < p->nbpages; i++) {
		if (p->refs[i] == 0) {
			p->refs[i] = 1;
			p->free_pages--;
			return i;
		}
	}
	return -1;
}

/** drop_ref() - One fragment of bpage @i came back. */
static void drop_ref(struct shim_pool *p, uint32_t i)
{
	if (--p->refs[i] == 0)
		p->free_pages++;
}

/**
 * tail_room() - Whether a @tail-byte fragment fits in the current
 * partial bpage, or (keeping @whole bpages aside) in a new one.
 */
static bool tail_room(const struct shim_pool *p, uint32_t whole, uint32_t tail)
{
	if (p->partial >= 0 && p->partial_used + tail <= HOMA_BPAGE_SIZE)
		return p->free_pages >= whole;
	return p->free_pages >= whole + 1;
}

/** alloc_tail() - Offset of a @tail-byte fragment (room checked). */
static uint32_t alloc_tail(struct shim_pool *p, uint32_t tail)
{
	if (p->partial < 0 || p->partial_used + tail > HOMA_BPAGE_SIZE) {
		if (p->partial >= 0)
			drop_ref(p, (uint32_t)p->partial); /* the pool's own hold */
		p->partial = take_page(p, 0);       /* refs 1: the pool's hold */
		p->partial_used = 0;
	}
	uint32_t off = ((uint32_t)p->partial << HOMA_BPAGE_SHIFT) + p->partial_used;

	p->refs[p->partial]++;
	p->partial_used += tail;
	return off;
}

/** pool_alloc() - shim_pool_alloc() with p->lock held. */
static int pool_alloc(struct shim_pool *p, uint32_t len, uint32_t *offs, uint32_t *n)
{
	uint32_t whole = len >> HOMA_BPAGE_SHIFT;
	uint32_t tail = len & (HOMA_BPAGE_SIZE - 1);

	if (!p->base || whole + (tail != 0) > HOMA_MAX_BPAGES)
		return ENOMEM;
	if (tail ? !tail_room(p, whole, tail) : p->free_pages < whole)
		return ENOMEM;
	*n = 0;
	for (uint32_t i = 0; i < whole; i++) {
		int64_t pg = take_page(p, 0);

		offs[(*n)++] = (uint32_t)pg << HOMA_BPAGE_SHIFT;
	}
	if (tail)
		offs[(*n)++] = alloc_tail(p, tail);
	return 0;
}

/** shim_pool_alloc() - See shim.h. */
int shim_pool_alloc(struct shim_pool *p, uint32_t len, uint32_t *offs, uint32_t *n)
{
	int e;

	pthread_mutex_lock(&p->lock);
	e = pool_alloc(p, len, offs, n);
	pthread_mutex_unlock(&p->lock);
	return e;
}

/** pool_free() - shim_pool_free() with p->lock held. */
static int pool_free(struct shim_pool *p, const uint32_t *offs, uint32_t n)
{
	uint32_t need[HOMA_MAX_BPAGES];

	if (n > HOMA_MAX_BPAGES)
		return EINVAL;
	if (n && !p->base)
		return EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t pg = offs[i] >> HOMA_BPAGE_SHIFT;
		uint32_t times = 1;

		if (offs[i] >= p->length || pg >= p->nbpages)
			return EINVAL;
		for (uint32_t j = 0; j < i; j++)
			times += (need[j] == pg);
		need[i] = pg;
		/* The pool's hold on the partial bpage and the runtime's are not the caller's. */
		if (p->refs[pg] - (p->partial == (int64_t)pg) - p->rx_refs[pg] < times)
			return EINVAL;
	}
	for (uint32_t i = 0; i < n; i++)
		drop_ref(p, need[i]);
	return 0;
}

/** shim_pool_free() - See shim.h. */
int shim_pool_free(struct shim_pool *p, const uint32_t *offs, uint32_t n)
{
	int e;

	pthread_mutex_lock(&p->lock);
	e = pool_free(p, offs, n);
	pthread_mutex_unlock(&p->lock);
	return e;
}

/** shim_pool_avail() - See shim.h. */
uint64_t shim_pool_avail(struct shim_pool *p)
{
	uint64_t bytes;

	pthread_mutex_lock(&p->lock);
	bytes = (uint64_t)p->free_pages << HOMA_BPAGE_SHIFT;
	if (p->partial >= 0)
		bytes += HOMA_BPAGE_SIZE - p->partial_used;
	pthread_mutex_unlock(&p->lock);
	return bytes;
}

/** region_page() - The bpage @ptr lies in, or -1 if it is not in the region. */
static int64_t region_page(const struct shim_pool *p, const void *ptr)
{
	const char *c = ptr;

	if (!p->base || c < p->base || c >= p->base + ((uint64_t)p->nbpages << HOMA_BPAGE_SHIFT))
		return -1;
	return (c - p->base) >> HOMA_BPAGE_SHIFT;
}

/**
 * rx_alloc() - Receive hook: a whole bpage for a full piece, a fragment
 * for a shorter one, or malloc when there is no region or no room.
 */
static void *rx_alloc(void *ctx, size_t size)
{
	struct shim_pool *p = ctx;
	uint32_t len = (uint32_t)size, off = UINT32_MAX;
	int64_t pg;

	pthread_mutex_lock(&p->lock);
	if (p->base && size == HOMA_BPAGE_SIZE) {
		pg = take_page(p, 0);
		if (pg >= 0)
			off = (uint32_t)pg << HOMA_BPAGE_SHIFT;
	} else if (p->base && size && size < HOMA_BPAGE_SIZE && tail_room(p, 0, len)) {
		off = alloc_tail(p, len);
	}
	if (off != UINT32_MAX)
		p->rx_refs[off >> HOMA_BPAGE_SHIFT]++;
	pthread_mutex_unlock(&p->lock);
	return off != UINT32_MAX ? p->base + off : malloc(size);
}

/** rx_free() - Receive hook: drop the runtime's hold on a region piece, or free(). */
static void rx_free(void *ctx, void *ptr, size_t size)
{
	struct shim_pool *p = ctx;
	int64_t pg;

	(void)size;
	pthread_mutex_lock(&p->lock);
	pg = region_page(p, ptr);
	if (pg >= 0) {
		p->rx_refs[pg]--;
		drop_ref(p, (uint32_t)pg);
	}
	pthread_mutex_unlock(&p->lock);
	if (pg < 0)
		free(ptr);
}

/** shim_pool_hooks() - See shim.h. */
void shim_pool_hooks(struct shim_pool *p, struct homa_alloc *a)
{
	a->alloc = rx_alloc;
	a->free = rx_free;
	a->ctx = p;
}

/**
 * adoptable() - Whether the @len-byte piece at @ptr is one the receive
 * hooks placed in the region (lock held): a full piece fills its bpage,
 * a shorter one stays inside one. Its offset goes to *@off.
 */
static bool adoptable(const struct shim_pool *p, const void *ptr, uint32_t len, uint32_t *off)
{
	int64_t pg = ptr ? region_page(p, ptr) : -1;

	if (pg < 0 || !p->rx_refs[pg])
		return false;
	*off = (uint32_t)((const char *)ptr - p->base);
	if (len == HOMA_BPAGE_SIZE)
		return (*off & (HOMA_BPAGE_SIZE - 1)) == 0;
	return (*off & (HOMA_BPAGE_SIZE - 1)) + len <= HOMA_BPAGE_SIZE;
}

/** pool_place() - shim_pool_place() with p->lock held. */
static int pool_place(struct shim_pool *p, const void *const *ptrs, const uint32_t *lens,
		      uint32_t n, uint32_t *offs, bool *fresh)
{
	uint32_t whole = 0, tail = 0, shorts = 0;

	if ((n && !p->base) || n > HOMA_MAX_BPAGES)
		return ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		fresh[i] = !adoptable(p, ptrs[i], lens[i], &offs[i]);
		shorts += lens[i] < HOMA_BPAGE_SIZE;
		if (fresh[i] && lens[i] == HOMA_BPAGE_SIZE)
			whole++;
		else if (fresh[i])
			tail = lens[i];
	}
	if (shorts > 1 || (tail ? !tail_room(p, whole, tail) : p->free_pages < whole))
		return ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		if (!fresh[i])
			p->refs[offs[i] >> HOMA_BPAGE_SHIFT]++;
		else if (lens[i] == HOMA_BPAGE_SIZE)
			offs[i] = (uint32_t)take_page(p, 0) << HOMA_BPAGE_SHIFT;
	}
	for (uint32_t i = 0; i < n; i++)
		if (fresh[i] && lens[i] < HOMA_BPAGE_SIZE)
			offs[i] = alloc_tail(p, lens[i]);
	return 0;
}

/** shim_pool_place() - See shim.h. */
int shim_pool_place(struct shim_pool *p, const void *const *ptrs, const uint32_t *lens,
		    uint32_t n, uint32_t *offs, bool *fresh)
{
	int e;

	pthread_mutex_lock(&p->lock);
	e = pool_place(p, ptrs, lens, n, offs, fresh);
	pthread_mutex_unlock(&p->lock);
	return e;
}
