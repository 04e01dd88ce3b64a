/* SPDX-License-Identifier: MIT */
/**
 * @file registry.c
 * Socket handles. A homa_socket pointer is not the runtime's memory but an
 * encoded (slot, generation) pair, so a handle used after homa_close() is
 * recognised as dead instead of touching freed memory. Each call holds a
 * reference while it runs; homa_close() waits for references to drop.
 *
 * Taking and dropping a reference touches only the handle's own slot (two
 * atomic operations, no lock), so calls on different sockets never meet.
 * A slot's generation is odd while its socket is live and even once it is
 * unregistered; every handle carries the odd generation it was issued
 * with. homa_rt_get() counts its reference first and checks the
 * generation second, and homa_rt_unregister() bumps the generation first
 * and homa_rt_wait_unused() reads the count second (all sequentially
 * consistent): so either the getter sees the dead generation and backs
 * out, or the closer sees its reference and waits for it.
 *
 * Slots live in chunks that never move (a handle may be decoded while a
 * new chunk is added); only opening and closing take reg_lock.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rt.h"

/** Slots per chunk, and the most chunks (2^20 sockets open at once). */
#define CHUNK_SLOTS 1024u
#define MAX_CHUNKS 1024u

/** One registry slot. */
struct slot {
	_Atomic(struct homa_rt *) rt; /**< NULL when free */
	_Atomic uint32_t gen;  /**< odd: live; bumped at register and unregister */
	_Atomic uint32_t refs; /**< references held (and transient probes) */
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static _Atomic(struct slot *) chunks[MAX_CHUNKS];
static uint32_t nslots; /**< slots allocated (under reg_lock) */

/** slot_at() - Slot @i, or NULL if its chunk does not exist. */
static struct slot *slot_at(uint32_t i)
{
	struct slot *c;

	if (i / CHUNK_SLOTS >= MAX_CHUNKS)
		return NULL;
	c = atomic_load(&chunks[i / CHUNK_SLOTS]);
	return c ? &c[i % CHUNK_SLOTS] : NULL;
}

/** encode() - The handle for slot @i with generation @gen. */
static homa_socket *encode(uint32_t i, uint32_t gen)
{
	return (homa_socket *)(uintptr_t)(((uint64_t)gen << 32) | (i + 1));
}

/**
 * free_slot() - Under reg_lock: the index of a free slot, adding a chunk
 * if all are taken. Return: 0 with *@i set, or HOMA_ENOMEM.
 */
static int free_slot(uint32_t *i)
{
	struct slot *c;

	for (*i = 0; *i < nslots; (*i)++)
		if (!atomic_load(&slot_at(*i)->rt))
			return 0;
	if (nslots / CHUNK_SLOTS >= MAX_CHUNKS)
		return HOMA_ENOMEM;
	c = calloc(CHUNK_SLOTS, sizeof(*c));
	if (!c)
		return HOMA_ENOMEM;
	atomic_store(&chunks[nslots / CHUNK_SLOTS], c);
	nslots += CHUNK_SLOTS;
	return 0;
}

/**
 * homa_rt_register() - See rt.h. Reuses free slots; adds a chunk of
 * CHUNK_SLOTS when all are taken.
 */
int homa_rt_register(struct homa_rt *rt, homa_socket **handle)
{
	struct slot *s;
	uint32_t i;
	int err;

	pthread_mutex_lock(&reg_lock);
	err = free_slot(&i);
	if (!err) {
		s = slot_at(i);
		rt->reg_slot = i;
		atomic_store(&s->rt, rt);
		/* published last: the handle's generation becomes valid here */
		*handle = encode(i, atomic_fetch_add(&s->gen, 1) + 1);
	}
	pthread_mutex_unlock(&reg_lock);
	return err;
}

/**
 * drop_ref() - Drop one reference on @s; the last one on an unregistered
 * slot wakes homa_rt_wait_unused().
 */
static void drop_ref(struct slot *s)
{
	if (atomic_fetch_sub(&s->refs, 1) != 1 || (atomic_load(&s->gen) & 1))
		return;
	pthread_mutex_lock(&reg_lock);
	pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
}

/** homa_rt_get() - See rt.h. Lock-free: the handle's slot only. */
struct homa_rt *homa_rt_get(homa_socket *handle)
{
	uint64_t v = (uint64_t)(uintptr_t)handle;
	uint32_t gen = (uint32_t)(v >> 32);
	struct slot *s;

	if ((uint32_t)v == 0 || !(gen & 1))
		return NULL;
	s = slot_at((uint32_t)v - 1);
	if (!s)
		return NULL;
	atomic_fetch_add(&s->refs, 1);
	if (atomic_load(&s->gen) != gen) {
		drop_ref(s);
		return NULL;
	}
	return atomic_load(&s->rt);
}

/** homa_rt_put() - See rt.h. Lock-free unless the socket is closing. */
void homa_rt_put(struct homa_rt *rt)
{
	drop_ref(slot_at(rt->reg_slot));
}

/**
 * homa_rt_unregister() - See rt.h. The slot keeps pointing at @rt (with an
 * even generation, so lookups fail) until homa_rt_wait_unused() frees it.
 * Of two threads closing the same handle, one gets the socket.
 */
struct homa_rt *homa_rt_unregister(homa_socket *handle)
{
	uint64_t v = (uint64_t)(uintptr_t)handle;
	uint32_t gen = (uint32_t)(v >> 32);
	struct homa_rt *rt = NULL;
	struct slot *s;

	if ((uint32_t)v == 0 || !(gen & 1))
		return NULL;
	pthread_mutex_lock(&reg_lock);
	s = slot_at((uint32_t)v - 1);
	if (s && atomic_load(&s->rt) && atomic_load(&s->gen) == gen) {
		rt = atomic_load(&s->rt);
		atomic_store(&s->gen, gen + 1);
	}
	pthread_mutex_unlock(&reg_lock);
	return rt;
}

/** homa_rt_wait_unused() - See rt.h. Frees the slot afterwards. */
void homa_rt_wait_unused(struct homa_rt *rt)
{
	struct slot *s = slot_at(rt->reg_slot);

	pthread_mutex_lock(&reg_lock);
	while (atomic_load(&s->refs) > 0)
		pthread_cond_wait(&reg_cond, &reg_lock);
	atomic_store(&s->rt, NULL);
	pthread_mutex_unlock(&reg_lock);
}
