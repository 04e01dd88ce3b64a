/* SPDX-License-Identifier: MIT */
/**
 * @file lendpool.c
 * The UDP driver's lendable receive buffers (lendpool.h).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lendpool.h"

/** slot_of() - The index of the slot @buf lies in (@buf in the arena). */
static uint32_t slot_of(const struct homa_lendpool *p, const uint8_t *buf)
{
	return (uint32_t)((size_t)(buf - p->arena) / p->slot_size);
}

/** slot_addr() - Where slot @i begins. */
static uint8_t *slot_addr(const struct homa_lendpool *p, uint32_t i)
{
	return p->arena + (size_t)i * p->slot_size;
}

/** alloc_arrays() - @p's bookkeeping for its nslots and batch. Return: false if out of memory. */
static bool alloc_arrays(struct homa_lendpool *p)
{
	p->table = calloc(p->batch, sizeof(*p->table));
	p->table_slot = calloc(p->batch, sizeof(*p->table_slot));
	p->refs = calloc(p->nslots, sizeof(*p->refs));
	p->kept = calloc(p->nslots, sizeof(*p->kept));
	p->free = calloc(p->nslots, sizeof(*p->free));
	p->ret = calloc(p->nslots, sizeof(*p->ret));
	return p->table && p->table_slot && p->refs && p->kept && p->free && p->ret;
}

/** homa_lendpool_init() - See lendpool.h. */
int homa_lendpool_init(struct homa_lendpool *p, uint32_t batch, uint32_t extra,
		       size_t slot_size)
{
	memset(p, 0, sizeof(*p));
	if (!batch || !extra || !slot_size || extra > HOMA_LEND_SLOTS_MAX)
		return HOMA_EINVAL;
	pthread_mutex_init(&p->lock, NULL);  /* homa_lendpool_free() destroys it once batch is set */
	p->batch = batch;
	p->nslots = batch + extra;
	p->slot_size = slot_size;
	p->arena_len = (size_t)p->nslots * slot_size;
	p->arena = mmap(NULL, p->arena_len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->arena == MAP_FAILED) {
		p->arena = NULL;
		homa_lendpool_free(p);
		return HOMA_ENOMEM;
	}
	if (!alloc_arrays(p)) {
		homa_lendpool_free(p);
		return HOMA_ENOMEM;
	}
	for (uint32_t i = 0; i < batch; i++) {
		p->table[i] = slot_addr(p, i);
		p->table_slot[i] = i;
		p->refs[i] = HOMA_LEND_HOLD;
	}
	for (uint32_t i = p->nslots; i > batch; i--)
		p->free[p->nfree++] = i - 1;
	p->lend.release = homa_lendpool_release;
	p->lend.ctx = p;
	return 0;
}

/** homa_lendpool_free() - See lendpool.h. */
void homa_lendpool_free(struct homa_lendpool *p)
{
	if (p->arena)
		munmap(p->arena, p->arena_len);
	if (p->batch)
		pthread_mutex_destroy(&p->lock);
	free(p->table);
	free(p->table_slot);
	free(p->refs);
	free(p->kept);
	free(p->free);
	free(p->ret);
	memset(p, 0, sizeof(*p));
}

/**
 * leave_table() - Table slot @s, @k of whose packets the engine kept,
 * leaves the table: its hold becomes those keeps (less the releases that
 * came first); free at once if none is left.
 */
static void leave_table(struct homa_lendpool *p, uint32_t s, uint32_t k)
{
	uint32_t left = __atomic_add_fetch(&p->refs[s], k - HOMA_LEND_HOLD, __ATOMIC_ACQ_REL);

	if (!left)
		p->free[p->nfree++] = s;
}

/** take_returned() - Move the slots other threads released to the free list. */
static void take_returned(struct homa_lendpool *p)
{
	if (!__atomic_load_n(&p->nret, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&p->lock);
	memcpy(p->free + p->nfree, p->ret, p->nret * sizeof(*p->ret));
	p->nfree += p->nret;
	__atomic_store_n(&p->nret, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
}

/** homa_lendpool_settle() - See lendpool.h. */
uint32_t homa_lendpool_settle(struct homa_lendpool *p, const struct homa_io_rx *pkts, int n)
{
	uint32_t moved = 0;
	bool any = false;

	for (int i = 0; i < n; i++) {
		if (!pkts[i].lendable || !pkts[i].kept)
			continue;
		p->kept[slot_of(p, pkts[i].data)]++;
		any = true;
	}
	if (any) {
		for (uint32_t e = 0; e < p->batch; e++) {
			uint32_t s = p->table_slot[e], k = p->kept[s];

			if (!k)
				continue;
			p->kept[s] = 0;
			leave_table(p, s, k);
			/* the batch lent at most homa_lendpool_spare() entries */
			s = p->free[--p->nfree];
			__atomic_store_n(&p->refs[s], HOMA_LEND_HOLD, __ATOMIC_RELAXED);
			p->table_slot[e] = s;
			p->table[e] = slot_addr(p, s);
			moved++;
		}
	}
	take_returned(p);
	return moved;
}

/** homa_lendpool_spare() - See lendpool.h. */
uint32_t homa_lendpool_spare(const struct homa_lendpool *p)
{
	return p->nfree;
}

/** homa_lendpool_lendable() - See lendpool.h. */
bool homa_lendpool_lendable(const struct homa_lendpool *p, size_t len)
{
	return len * HOMA_LEND_MIN_FRACTION >= p->slot_size;
}

/** homa_lendpool_owns() - See lendpool.h. */
bool homa_lendpool_owns(const struct homa_lendpool *p, const uint8_t *buf)
{
	return p->arena && buf >= p->arena && buf < p->arena + p->arena_len;
}

/** homa_lendpool_held() - See lendpool.h. */
uint32_t homa_lendpool_held(const struct homa_lendpool *p)
{
	return p->nslots - p->batch - p->nfree;
}

/** homa_lendpool_release() - See lendpool.h. */
void homa_lendpool_release(void *ctx, uint8_t *buf)
{
	struct homa_lendpool *p = ctx;
	uint32_t s;

	if (!homa_lendpool_owns(p, buf))
		return;
	s = slot_of(p, buf);
	if (__atomic_sub_fetch(&p->refs[s], 1, __ATOMIC_ACQ_REL))
		return;
	pthread_mutex_lock(&p->lock);
	p->ret[p->nret] = s;  /* each slot at most once: it is out of the table and free of holds */
	__atomic_store_n(&p->nret, p->nret + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&p->lock);
}
