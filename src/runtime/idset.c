/* SPDX-License-Identifier: MIT */
/**
 * @file idset.c
 * A small open-addressing hash set of 64-bit keys, each with a value:
 * outstanding client RPC ids, and tokens of messages the application holds
 * (keys are never 0 or UINT64_MAX, which mark empty and deleted slots).
 */
#include <stdlib.h>

#include "rt.h"

#define EMPTY 0
#define DELETED UINT64_MAX

/** hash() - Spread the bits of @id (ids are sequential). */
static size_t hash(uint64_t id, size_t cap)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id & (cap - 1);
}

/** rehash() - Move every id into a table of @cap slots. Return: 0 or HOMA_ENOMEM. */
static int rehash(struct rt_idset *s, size_t cap)
{
	uint64_t *n = calloc(cap, sizeof(*n)), *v = calloc(cap, sizeof(*v));

	if (!n || !v) {
		free(n);
		free(v);
		return HOMA_ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++) {
		uint64_t id = s->slots[i];

		if (id == EMPTY || id == DELETED)
			continue;
		size_t j = hash(id, cap);

		while (n[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		n[j] = id;
		v[j] = s->vals[i];
	}
	free(s->slots);
	free(s->vals);
	s->slots = n;
	s->vals = v;
	s->cap = cap;
	s->tomb = 0;
	return 0;
}

/** homa_rt_idset_add() - See rt.h. */
int homa_rt_idset_add(struct rt_idset *s, uint64_t id)
{
	return homa_rt_idset_put(s, id, 0);
}

/** homa_rt_idset_put() - See rt.h. */
int homa_rt_idset_put(struct rt_idset *s, uint64_t id, uint64_t val)
{
	size_t j;

	if (id == EMPTY || id == DELETED)
		return HOMA_EINVAL;
	if ((s->used + s->tomb + 1) * 2 > s->cap) {
		size_t cap = s->cap ? s->cap : 64;

		while ((s->used + 1) * 3 > cap)
			cap *= 2;
		if (rehash(s, cap))
			return HOMA_ENOMEM;
	}
	j = hash(id, s->cap);
	while (s->slots[j] != EMPTY && s->slots[j] != DELETED) {
		if (s->slots[j] == id) {
			s->vals[j] = val;
			return 0;
		}
		j = (j + 1) & (s->cap - 1);
	}
	if (s->slots[j] == DELETED)
		s->tomb--;
	s->slots[j] = id;
	s->vals[j] = val;
	s->used++;
	return 0;
}

/** find() - Slot index of @id, or -1. */
static long find(const struct rt_idset *s, uint64_t id)
{
	if (!s->cap || id == EMPTY || id == DELETED)
		return -1;
	for (size_t j = hash(id, s->cap), n = 0; n < s->cap; n++, j = (j + 1) & (s->cap - 1)) {
		if (s->slots[j] == id)
			return (long)j;
		if (s->slots[j] == EMPTY)
			return -1;
	}
	return -1;
}

/** homa_rt_idset_has() - See rt.h. */
bool homa_rt_idset_has(const struct rt_idset *s, uint64_t id)
{
	return find(s, id) >= 0;
}

/** homa_rt_idset_get() - See rt.h. */
bool homa_rt_idset_get(const struct rt_idset *s, uint64_t id, uint64_t *val)
{
	long j = find(s, id);

	if (j < 0)
		return false;
	*val = s->vals[j];
	return true;
}

/** homa_rt_idset_del() - See rt.h. */
void homa_rt_idset_del(struct rt_idset *s, uint64_t id)
{
	long j = find(s, id);

	if (j < 0)
		return;
	s->slots[j] = DELETED;
	s->used--;
	s->tomb++;
}

/** homa_rt_idset_free() - See rt.h. */
void homa_rt_idset_free(struct rt_idset *s)
{
	free(s->slots);
	free(s->vals);
	*s = (struct rt_idset){0};
}

/** homa_rt_idset_foreach() - See rt.h. */
void homa_rt_idset_foreach(const struct rt_idset *s,
			   void (*fn)(uint64_t id, uint64_t val, void *ctx), void *ctx)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->slots[i] != EMPTY && s->slots[i] != DELETED)
			fn(s->slots[i], s->vals[i], ctx);
}
