/* SPDX-License-Identifier: MIT */
/**
 * @file eventq.c
 * 4-ary min-heap of 16-byte keys (time, tie) with the handlers kept aside
 * in a slot table. Small keys and a shallow tree keep a pop to a few
 * cache lines; the slot index inside the key finds the handler, and for
 * timers the slot also records where the key sits, so a timer can be
 * moved in place.
 */
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"
#include "sim/eventq.h"

/** Bits of a key's tie that hold the slot index. */
#define SLOT_BITS 24
/** Most slots (events queued at once). */
#define MAX_SLOTS ((uint32_t)1 << SLOT_BITS)
/** Bit of a key's tie that marks a timer's entry. */
#define TIMER_BIT ((uint64_t)1 << SLOT_BITS)
/** Shift of the sequence number inside a key's tie. */
#define SEQ_SHIFT (SLOT_BITS + 1)
/** Children per heap node. */
#define ARITY 4

/** homa_sim_eventq_init() - See eventq.h. */
void homa_sim_eventq_init(struct homa_sim_eventq *q)
{
	memset(q, 0, sizeof(*q));
}

/** homa_sim_eventq_free() - See eventq.h. */
void homa_sim_eventq_free(struct homa_sim_eventq *q)
{
	free(q->heap);
	free(q->slots);
	homa_sim_eventq_init(q);
}

/** homa_sim_eventq_reserve() - See eventq.h. */
int homa_sim_eventq_reserve(struct homa_sim_eventq *q, size_t n)
{
	struct homa_sim_eventq_key *h;

	if (n <= q->cap)
		return 0;
	if (n > MAX_SLOTS)
		return HOMA_ENOMEM;
	h = realloc(q->heap, n * sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	q->heap = h;
	q->cap = n;
	return 0;
}

/** before() - True if key @a must run before key @b (computed without branches). */
static inline int before(const struct homa_sim_eventq_key *a,
			 const struct homa_sim_eventq_key *b)
{
	return (a->time < b->time) | ((a->time == b->time) & (a->tie < b->tie));
}

/** slot_of() - The slot index inside key @k. */
static inline uint32_t slot_of(const struct homa_sim_eventq_key *k)
{
	return (uint32_t)(k->tie & (MAX_SLOTS - 1));
}

/** place() - Store @k at heap index @i; a timer's slot learns where it is. */
static inline void place(struct homa_sim_eventq *q, size_t i,
			 const struct homa_sim_eventq_key *k)
{
	q->heap[i] = *k;
	if (k->tie & TIMER_BIT)
		q->slots[slot_of(k)].pos = (uint32_t)i;
}

/** sift_up() - Put @k at index @i or above, moving later parents down. */
static void sift_up(struct homa_sim_eventq *q, size_t i, struct homa_sim_eventq_key k)
{
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / ARITY;
		if (!before(&k, &q->heap[parent]))
			break;
		place(q, i, &q->heap[parent]);
		i = parent;
	}
	place(q, i, &k);
}

/** sift_down() - Put @k at index @i or below, moving earlier children up. */
static void sift_down(struct homa_sim_eventq *q, size_t i, struct homa_sim_eventq_key k)
{
	size_t first, best, c, end;

	for (;;) {
		first = ARITY * i + 1;
		if (first >= q->len)
			break;
		end = first + ARITY < q->len ? first + ARITY : q->len;
		best = first;
		for (c = first + 1; c < end; c++)
			best = before(&q->heap[c], &q->heap[best]) ? c : best;
		if (!before(&q->heap[best], &k))
			break;
		place(q, i, &q->heap[best]);
		i = best;
	}
	place(q, i, &k);
}

/** slot_get() - Take a free slot for @fn/@obj/@ptr. Return: its index, or -1 (ENOMEM). */
static int64_t slot_get(struct homa_sim_eventq *q, homa_sim_event_fn fn, void *obj,
			void *ptr, struct homa_sim_timer *timer)
{
	struct homa_sim_eventq_slot *s;
	uint32_t i;

	if (!q->free_slot) {
		uint32_t n = q->nslots ? 2 * q->nslots : 1024;

		if (n > MAX_SLOTS)
			return -1;
		s = realloc(q->slots, n * sizeof(*s));
		if (!s)
			return -1;
		q->slots = s;
		for (i = n; i-- > q->nslots;) {
			s[i].next_free = q->free_slot;
			q->free_slot = i + 1;
		}
		q->nslots = n;
	}
	i = q->free_slot - 1;
	s = &q->slots[i];
	q->free_slot = s->next_free;
	s->fn = fn;
	s->obj = obj;
	s->ptr = ptr;
	s->timer = timer;
	return i;
}

/** slot_put() - Return slot @i to the free list. */
static inline void slot_put(struct homa_sim_eventq *q, uint32_t i)
{
	q->slots[i].next_free = q->free_slot;
	q->free_slot = i + 1;
}

/** insert() - Add an event (a timer's if @timer). Return: 0 or HOMA_ENOMEM. */
static int insert(struct homa_sim_eventq *q, uint64_t time, homa_sim_event_fn fn,
		  void *obj, void *ptr, struct homa_sim_timer *timer)
{
	struct homa_sim_eventq_key k;
	int64_t slot;

	if (q->len == q->cap &&
	    homa_sim_eventq_reserve(q, q->cap ? 2 * q->cap : 1024))
		return HOMA_ENOMEM;
	slot = slot_get(q, fn, obj, ptr, timer);
	if (slot < 0)
		return HOMA_ENOMEM;
	k.time = time;
	k.tie = (q->next_seq++ << SEQ_SHIFT) | (timer ? TIMER_BIT : 0) | (uint64_t)slot;
	if (timer)
		timer->slot = (uint32_t)slot + 1;
	sift_up(q, q->len++, k);
	return 0;
}

/** homa_sim_eventq_push() - See eventq.h. */
int homa_sim_eventq_push(struct homa_sim_eventq *q, uint64_t time,
			 homa_sim_event_fn fn, void *obj, void *ptr)
{
	return insert(q, time, fn, obj, ptr, NULL);
}

/** remove_at() - Take the key at heap index @i out, refilling the hole with the last leaf. */
static void remove_at(struct homa_sim_eventq *q, size_t i)
{
	struct homa_sim_eventq_key last = q->heap[--q->len];

	if (i == q->len)
		return;
	if (i > 0 && before(&last, &q->heap[(i - 1) / ARITY]))
		sift_up(q, i, last);
	else
		sift_down(q, i, last);
}

/** homa_sim_eventq_pop() - See eventq.h. */
int homa_sim_eventq_pop(struct homa_sim_eventq *q, struct homa_sim_event *out)
{
	struct homa_sim_eventq_key k;
	struct homa_sim_eventq_slot *s;
	uint32_t slot;

	if (q->len == 0)
		return 0;
	k = q->heap[0];
	slot = slot_of(&k);
	s = &q->slots[slot];
	out->time = k.time;
	out->seq = k.tie >> SEQ_SHIFT;
	out->fn = s->fn;
	out->obj = s->obj;
	out->ptr = s->ptr;
	if (s->timer)
		s->timer->slot = 0;
	slot_put(q, slot);
	remove_at(q, 0);
	return 1;
}

/** homa_sim_eventq_arm() - See eventq.h. */
int homa_sim_eventq_arm(struct homa_sim_eventq *q, struct homa_sim_timer *t,
			uint64_t time, homa_sim_event_fn fn, void *obj, void *ptr)
{
	struct homa_sim_eventq_slot *s;
	struct homa_sim_eventq_key k;
	size_t i;

	if (!t->slot)
		return insert(q, time, fn, obj, ptr, t);
	s = &q->slots[t->slot - 1];
	s->fn = fn;
	s->obj = obj;
	s->ptr = ptr;
	i = s->pos;
	k.time = time;
	k.tie = (q->next_seq++ << SEQ_SHIFT) | TIMER_BIT | (t->slot - 1);
	if (before(&k, &q->heap[i]))
		sift_up(q, i, k);
	else
		sift_down(q, i, k);
	return 0;
}

/** homa_sim_eventq_disarm() - See eventq.h. */
void homa_sim_eventq_disarm(struct homa_sim_eventq *q, struct homa_sim_timer *t)
{
	uint32_t slot;

	if (!t->slot)
		return;
	slot = t->slot - 1;
	t->slot = 0;
	remove_at(q, q->slots[slot].pos);
	slot_put(q, slot);
}

/** homa_sim_eventq_peek_time() - See eventq.h. */
uint64_t homa_sim_eventq_peek_time(const struct homa_sim_eventq *q)
{
	return q->len ? q->heap[0].time : UINT64_MAX;
}
