/* SPDX-License-Identifier: MIT */
/**
 * @file eventq.c
 * The event queue (see eventq.h): a ring of one-ns FIFO buckets for
 * events due within HOMA_SIM_EVQ_RING ns of the last pop, a 4-ary
 * min-heap of 16-byte keys for later ones, and a slot table holding the
 * handlers. A ring bucket only ever holds events of one time (the ring
 * spans less than its size past the last pop), and events join it in
 * sequence order, so its FIFO order is (time, seq) order. A timer moved
 * away from a ring bucket leaves a dead entry that the next pop of that
 * bucket skips.
 */
#include <stdbool.h>
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
/** Ring index mask. */
#define RING_MASK (HOMA_SIM_EVQ_RING - 1)

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

/** homa_sim_eventq_reserve() - See eventq.h. Sizes the far heap. */
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
		if (first >= q->heap_len)
			break;
		end = first + ARITY < q->heap_len ? first + ARITY : q->heap_len;
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

/** heap_remove() - Take the key at heap index @i out, refilling the hole with the last leaf. */
static void heap_remove(struct homa_sim_eventq *q, size_t i)
{
	struct homa_sim_eventq_key last = q->heap[--q->heap_len];

	if (i == q->heap_len)
		return;
	if (i > 0 && before(&last, &q->heap[(i - 1) / ARITY]))
		sift_up(q, i, last);
	else
		sift_down(q, i, last);
}

/** slot_get() - Take a free slot. Return: its index, or -1 (out of memory). */
static int64_t slot_get(struct homa_sim_eventq *q)
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
			s[i].where = HOMA_SIM_EVQ_IN_FREE;
			s[i].next = q->free_slot;
			q->free_slot = i + 1;
		}
		q->nslots = n;
	}
	i = q->free_slot - 1;
	q->free_slot = q->slots[i].next;
	return i;
}

/** slot_put() - Return slot @i to the free list. */
static inline void slot_put(struct homa_sim_eventq *q, uint32_t i)
{
	q->slots[i].where = HOMA_SIM_EVQ_IN_FREE;
	q->slots[i].next = q->free_slot;
	q->free_slot = i + 1;
}

/** ring_append() - Queue slot @i (due at its time, inside the ring's span) in its bucket. */
static void ring_append(struct homa_sim_eventq *q, uint32_t i)
{
	uint32_t b = (uint32_t)(q->slots[i].time & RING_MASK);
	struct homa_sim_eventq_bucket *bk = &q->ring[b];

	q->slots[i].where = HOMA_SIM_EVQ_IN_RING;
	q->slots[i].next = 0;
	if (bk->tail)
		q->slots[bk->tail - 1].next = i + 1;
	else
		bk->head = i + 1;
	bk->tail = i + 1;
	q->ring_bits[b / 64] |= (uint64_t)1 << (b % 64);
	q->ring_len++;
}

/**
 * ring_first() - The bucket of the ring's earliest entry: the first
 * non-empty one from the bucket of the last pop's time on, wrapping.
 * Return: the bucket, or -1 if the ring is empty.
 */
static int ring_first(const struct homa_sim_eventq *q)
{
	uint32_t start = (uint32_t)(q->now & RING_MASK);
	uint32_t w = start / 64, n;
	uint64_t bits = q->ring_bits[w] & (~(uint64_t)0 << (start % 64));

	if (!q->ring_len)
		return -1;
	for (n = 0; n <= HOMA_SIM_EVQ_RING / 64; n++) {
		if (bits)
			return (int)(w * 64 + (uint32_t)__builtin_ctzll(bits));
		w = (w + 1) % (HOMA_SIM_EVQ_RING / 64);
		bits = q->ring_bits[w];
	}
	return -1;
}

/** ring_pop() - Unlink the head of bucket @b. Return: its slot. */
static uint32_t ring_pop(struct homa_sim_eventq *q, int b)
{
	struct homa_sim_eventq_bucket *bk = &q->ring[b];
	uint32_t i = bk->head - 1;

	bk->head = q->slots[i].next;
	if (!bk->head) {
		bk->tail = 0;
		q->ring_bits[b / 64] &= ~((uint64_t)1 << (b % 64));
	}
	q->ring_len--;
	return i;
}

/** grow_room() - make_room()'s slow path: grow the heap or the slots. Return: 0 or HOMA_ENOMEM. */
static int grow_room(struct homa_sim_eventq *q)
{
	int64_t slot;

	if (q->heap_len == q->cap &&
	    homa_sim_eventq_reserve(q, q->cap ? 2 * q->cap : 1024))
		return HOMA_ENOMEM;
	if (q->free_slot)
		return 0;
	slot = slot_get(q);
	if (slot < 0)
		return HOMA_ENOMEM;
	slot_put(q, (uint32_t)slot);
	return 0;
}

/** make_room() - Make sure one more event fits (a slot and a heap entry). Return: 0 or HOMA_ENOMEM. */
static inline int make_room(struct homa_sim_eventq *q)
{
	if (q->heap_len < q->cap && q->free_slot)
		return 0;
	return grow_room(q);
}

/**
 * insert() - Queue an event (a timer's if @timer): into the ring if it is
 * due within its span after the last pop, else into the heap.
 * Return: 0 or HOMA_ENOMEM.
 */
static inline int insert(struct homa_sim_eventq *q, uint64_t time, homa_sim_event_fn fn,
		  void *obj, void *ptr, struct homa_sim_timer *timer)
{
	struct homa_sim_eventq_slot *s;
	struct homa_sim_eventq_key k;
	int64_t slot;

	if (make_room(q))
		return HOMA_ENOMEM;
	slot = slot_get(q);
	s = &q->slots[slot];
	s->fn = fn;
	s->obj = obj;
	s->ptr = ptr;
	s->timer = timer;
	s->time = time;
	s->seq = q->next_seq++;
	if (timer)
		timer->slot = (uint32_t)slot + 1;
	q->len++;
	if (time >= q->now && time - q->now < HOMA_SIM_EVQ_RING) {
		ring_append(q, (uint32_t)slot);
		return 0;
	}
	s->where = HOMA_SIM_EVQ_IN_HEAP;
	k.time = time;
	k.tie = (s->seq << SEQ_SHIFT) | (timer ? TIMER_BIT : 0) | (uint64_t)slot;
	sift_up(q, q->heap_len++, k);
	return 0;
}

/** homa_sim_eventq_push() - See eventq.h. */
int homa_sim_eventq_push(struct homa_sim_eventq *q, uint64_t time,
			 homa_sim_event_fn fn, void *obj, void *ptr)
{
	return insert(q, time, fn, obj, ptr, NULL);
}

/** drop_dead() - Free the dead entries at the head of bucket @b. Return: true if it is now empty. */
static bool drop_dead(struct homa_sim_eventq *q, int b)
{
	while (q->ring[b].head &&
	       q->slots[q->ring[b].head - 1].where == HOMA_SIM_EVQ_IN_DEAD)
		slot_put(q, ring_pop(q, b));
	return !q->ring[b].head;
}

/**
 * next_ring() - The bucket holding the ring's earliest live event, after
 * freeing dead entries in front of it. Return: the bucket or -1.
 */
static int next_ring(struct homa_sim_eventq *q)
{
	int b;

	while ((b = ring_first(q)) >= 0 && drop_dead(q, b))
		;
	return b;
}

/**
 * prefetch_next() - If ring bucket @b (just popped) holds another event
 * of the same nanosecond, usually the next to run, start loading its
 * object and argument so that their cache misses overlap the current
 * handler's work. A hint only: nothing is read through the pointers.
 */
static inline void prefetch_next(const struct homa_sim_eventq *q, int b)
{
	const struct homa_sim_eventq_slot *s;

	if (!q->ring[b].head)
		return;
	s = &q->slots[q->ring[b].head - 1];
	__builtin_prefetch(s->obj);
	__builtin_prefetch(s->ptr);
}

/** homa_sim_eventq_pop() - See eventq.h. */
int homa_sim_eventq_pop(struct homa_sim_eventq *q, struct homa_sim_event *out)
{
	return homa_sim_eventq_pop_until(q, UINT64_MAX, out);
}

/** homa_sim_eventq_pop_until() - See eventq.h. */
int homa_sim_eventq_pop_until(struct homa_sim_eventq *q, uint64_t t_end,
			      struct homa_sim_event *out)
{
	struct homa_sim_eventq_slot *s;
	int b = next_ring(q);
	uint32_t slot;

	if (b < 0 && !q->heap_len)
		return 0;
	if (b >= 0) {
		s = &q->slots[q->ring[b].head - 1];
		if (q->heap_len) {
			struct homa_sim_eventq_key rk = {s->time, s->seq << SEQ_SHIFT};
			struct homa_sim_eventq_key hk = q->heap[0];

			hk.tie &= ~((uint64_t)MAX_SLOTS * 2 - 1);
			if (before(&hk, &rk))
				b = -1;
		}
	}
	if ((b >= 0 ? s->time : q->heap[0].time) > t_end)
		return 0;
	if (b >= 0) {
		slot = ring_pop(q, b);
		prefetch_next(q, b);
	} else {
		slot = slot_of(&q->heap[0]);
		heap_remove(q, 0);
	}
	s = &q->slots[slot];
	out->time = s->time;
	out->seq = s->seq;
	out->fn = s->fn;
	out->obj = s->obj;
	out->ptr = s->ptr;
	if (s->timer)
		s->timer->slot = 0;
	slot_put(q, slot);
	q->len--;
	if (out->time > q->now)
		q->now = out->time;
	return 1;
}

/**
 * unqueue() - Take timer @t's armed entry out: from the heap at once, or
 * marked dead in its ring bucket (freed when the bucket is popped).
 */
static void unqueue(struct homa_sim_eventq *q, struct homa_sim_timer *t)
{
	uint32_t slot = t->slot - 1;
	struct homa_sim_eventq_slot *s = &q->slots[slot];

	t->slot = 0;
	s->timer = NULL;
	q->len--;
	if (s->where == HOMA_SIM_EVQ_IN_HEAP) {
		heap_remove(q, s->pos);
		slot_put(q, slot);
	} else {
		s->where = HOMA_SIM_EVQ_IN_DEAD;
	}
}

/** homa_sim_eventq_arm() - See eventq.h. */
int homa_sim_eventq_arm(struct homa_sim_eventq *q, struct homa_sim_timer *t,
			uint64_t time, homa_sim_event_fn fn, void *obj, void *ptr)
{
	if (make_room(q))
		return HOMA_ENOMEM;
	if (t->slot)
		unqueue(q, t);
	return insert(q, time, fn, obj, ptr, t);
}

/** homa_sim_eventq_disarm() - See eventq.h. */
void homa_sim_eventq_disarm(struct homa_sim_eventq *q, struct homa_sim_timer *t)
{
	if (t->slot)
		unqueue(q, t);
}

/**
 * ring_peek() - Time of the ring's earliest live event, without changing
 * anything (dead entries are walked over). Return: UINT64_MAX if none.
 */
static uint64_t ring_peek(const struct homa_sim_eventq *q)
{
	uint32_t start = (uint32_t)(q->now & RING_MASK), n, b, i;
	int first = ring_first(q);

	if (first < 0)
		return UINT64_MAX;
	i = q->ring[first].head;
	if (q->slots[i - 1].where == HOMA_SIM_EVQ_IN_RING)
		return q->slots[i - 1].time; /* the usual case: a live head */
	for (n = 0; n < HOMA_SIM_EVQ_RING; n++) {
		b = (start + n) & RING_MASK;
		if (!(q->ring_bits[b / 64] & ((uint64_t)1 << (b % 64))))
			continue;
		for (i = q->ring[b].head; i; i = q->slots[i - 1].next)
			if (q->slots[i - 1].where == HOMA_SIM_EVQ_IN_RING)
				return q->slots[i - 1].time;
	}
	return UINT64_MAX;
}

/** homa_sim_eventq_peek_time() - See eventq.h. */
uint64_t homa_sim_eventq_peek_time(const struct homa_sim_eventq *q)
{
	uint64_t t = q->heap_len ? q->heap[0].time : UINT64_MAX;
	uint64_t r = ring_peek(q);

	return r < t ? r : t;
}
