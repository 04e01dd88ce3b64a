/* SPDX-License-Identifier: MIT */
/**
 * @file registry.c
 * Socket handles. A homa_socket pointer is not the runtime's memory but an
 * encoded (slot, generation) pair, so a handle used after homa_close() is
 * recognised as dead instead of touching freed memory. Each call holds a
 * reference while it runs; homa_close() waits for references to drop.
 */
#include <stdint.h>
#include <stdlib.h>

#include "rt.h"

/** One registry slot. */
struct slot {
	struct homa_rt *rt;   /**< NULL when free */
	uint32_t gen;         /**< bumped on every free */
	uint32_t refs;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reg_cond = PTHREAD_COND_INITIALIZER;
static struct slot *slots;
static uint32_t nslots;

/** encode() - The handle for slot @i with generation @gen. */
static homa_socket *encode(uint32_t i, uint32_t gen)
{
	return (homa_socket *)(uintptr_t)(((uint64_t)gen << 32) | (i + 1));
}

/** decode() - The slot of @h if its generation is current, else NULL. */
static struct slot *decode(homa_socket *h)
{
	uint64_t v = (uint64_t)(uintptr_t)h;
	uint32_t i = (uint32_t)v;

	if (i == 0 || i > nslots)
		return NULL;
	if (!slots[i - 1].rt || slots[i - 1].gen != (uint32_t)(v >> 32))
		return NULL;
	return &slots[i - 1];
}

/** homa_rt_register() - See rt.h. Reuses free slots; grows by doubling. */
int homa_rt_register(struct homa_rt *rt, homa_socket **handle)
{
	uint32_t i;

	pthread_mutex_lock(&reg_lock);
	for (i = 0; i < nslots && slots[i].rt; i++)
		;
	if (i == nslots) {
		uint32_t n = nslots ? nslots * 2 : 16;
		struct slot *s = realloc(slots, n * sizeof(*s));

		if (!s) {
			pthread_mutex_unlock(&reg_lock);
			return HOMA_ENOMEM;
		}
		for (uint32_t k = nslots; k < n; k++)
			s[k] = (struct slot){NULL, 1, 0};
		slots = s;
		nslots = n;
	}
	slots[i].rt = rt;
	slots[i].refs = 0;
	*handle = encode(i, slots[i].gen);
	pthread_mutex_unlock(&reg_lock);
	return 0;
}

/** homa_rt_get() - See rt.h. */
struct homa_rt *homa_rt_get(homa_socket *handle)
{
	struct homa_rt *rt = NULL;
	struct slot *s;

	pthread_mutex_lock(&reg_lock);
	s = decode(handle);
	if (s) {
		s->refs++;
		rt = s->rt;
	}
	pthread_mutex_unlock(&reg_lock);
	return rt;
}

/** find_slot() - The slot (live or unregistered) that holds @rt. */
static struct slot *find_slot(struct homa_rt *rt)
{
	for (uint32_t i = 0; i < nslots; i++)
		if (slots[i].rt == rt)
			return &slots[i];
	return NULL;
}

/** homa_rt_put() - See rt.h. */
void homa_rt_put(struct homa_rt *rt)
{
	struct slot *s;

	pthread_mutex_lock(&reg_lock);
	s = find_slot(rt);
	if (s && s->refs > 0 && --s->refs == 0)
		pthread_cond_broadcast(&reg_cond);
	pthread_mutex_unlock(&reg_lock);
}

/**
 * homa_rt_unregister() - See rt.h. The slot keeps pointing at @rt (with a
 * new generation, so lookups fail) until homa_rt_wait_unused() frees it.
 */
struct homa_rt *homa_rt_unregister(homa_socket *handle)
{
	struct homa_rt *rt = NULL;
	struct slot *s;

	pthread_mutex_lock(&reg_lock);
	s = decode(handle);
	if (s) {
		rt = s->rt;
		s->gen++;
	}
	pthread_mutex_unlock(&reg_lock);
	return rt;
}

/** homa_rt_wait_unused() - See rt.h. Frees the slot afterwards. */
void homa_rt_wait_unused(struct homa_rt *rt)
{
	struct slot *s;

	pthread_mutex_lock(&reg_lock);
	while ((s = find_slot(rt)) && s->refs > 0)
		pthread_cond_wait(&reg_cond, &reg_lock);
	if (s)
		s->rt = NULL;
	pthread_mutex_unlock(&reg_lock);
}
