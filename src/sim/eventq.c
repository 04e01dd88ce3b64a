/* SPDX-License-Identifier: MIT */
/**
 * @file eventq.c
 * Binary min-heap of events keyed by (time, seq).
 */
#include <stdlib.h>
#include <string.h>

#include "homa/errors.h"
#include "sim/eventq.h"

/** homa_sim_eventq_init() - See eventq.h. */
void homa_sim_eventq_init(struct homa_sim_eventq *q)
{
	memset(q, 0, sizeof(*q));
}

/** homa_sim_eventq_free() - See eventq.h. */
void homa_sim_eventq_free(struct homa_sim_eventq *q)
{
	free(q->heap);
	homa_sim_eventq_init(q);
}

/** homa_sim_eventq_reserve() - See eventq.h. */
int homa_sim_eventq_reserve(struct homa_sim_eventq *q, size_t n)
{
	struct homa_sim_event *h;

	if (n <= q->cap)
		return 0;
	h = realloc(q->heap, n * sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	q->heap = h;
	q->cap = n;
	return 0;
}

/** before() - True if event @a must run before event @b. */
static inline int before(const struct homa_sim_event *a,
			 const struct homa_sim_event *b)
{
	return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/** homa_sim_eventq_push() - See eventq.h. Sift-up from the new leaf. */
int homa_sim_eventq_push(struct homa_sim_eventq *q, uint64_t time,
			 homa_sim_event_fn fn, void *obj, void *ptr)
{
	struct homa_sim_event ev = {time, q->next_seq++, fn, obj, ptr};
	size_t i, parent;

	if (q->len == q->cap &&
	    homa_sim_eventq_reserve(q, q->cap ? 2 * q->cap : 1024))
		return HOMA_ENOMEM;
	i = q->len++;
	while (i > 0) {
		parent = (i - 1) / 2;
		if (!before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return 0;
}

/** homa_sim_eventq_pop() - See eventq.h. Sift-down of the last leaf. */
int homa_sim_eventq_pop(struct homa_sim_eventq *q, struct homa_sim_event *out)
{
	struct homa_sim_event last;
	size_t i = 0, child;

	if (q->len == 0)
		return 0;
	*out = q->heap[0];
	last = q->heap[--q->len];
	for (;;) {
		child = 2 * i + 1;
		if (child >= q->len)
			break;
		if (child + 1 < q->len && before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	if (q->len)
		q->heap[i] = last;
	return 1;
}

/** homa_sim_eventq_peek_time() - See eventq.h. */
uint64_t homa_sim_eventq_peek_time(const struct homa_sim_eventq *q)
{
	return q->len ? q->heap[0].time : UINT64_MAX;
}
