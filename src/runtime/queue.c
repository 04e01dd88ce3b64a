/* SPDX-License-Identifier: MIT */
/**
 * @file queue.c
 * Handing engine events to application threads. A completed message goes
 * straight to a thread already waiting for it (a waiter for that RPC id
 * first, then one waiting for any message of its kind); otherwise it is
 * queued and the socket's eventfd becomes readable. Queued messages are
 * served by priority (RT_LEVELS), as senders send them: a message of at
 * most the socket's unscheduled bytes by the priority level its cutoffs
 * give that length (homa_engine_rx_priority(), shortest highest; an event
 * without a message highest), every longer message after all of those, so
 * a small RPC waits neither behind bulk deliveries nor behind mid-sized
 * ones; within a level oldest first. Every function here runs with
 * rt->lock held.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "rt.h"

/** kind_flag() - The HOMA_RECV_* flag that accepts an event of @type. */
static int kind_flag(int type)
{
	if (type == HOMA_EV_REQUEST_BEGIN)
		return HOMA_RECV_PARTIAL;
	return type == HOMA_EV_REQUEST ? HOMA_RECV_REQUEST : HOMA_RECV_RESPONSE;
}

/** homa_rt_item_matches() - See rt.h. */
bool homa_rt_item_matches(const struct rt_item *item, int flags, uint64_t id)
{
	if (!(flags & kind_flag(item->ev.type)))
		return false;
	return id == 0 || item->ev.id == id;
}

/**
 * set_ready_fd() - Make the eventfd readable (@on) or not. Only once
 * homa_fd() has handed the descriptor out: before that nobody can watch
 * it, and keeping it current cost a write() and a read() per message that
 * found no thread waiting (homa_rt_export_ready() catches up).
 */
static void set_ready_fd(struct homa_rt *rt, bool on)
{
	uint64_t v = 1;

	if (rt->ready_fd < 0 || !rt->ready_exported)
		return;
	if (on) {
		if (write(rt->ready_fd, &v, sizeof(v)) < 0)
			return;
	} else if (read(rt->ready_fd, &v, sizeof(v)) < 0) {
		return;
	}
}

/** find_waiter() - First waiter that accepts @item, specific ids first. */
static struct rt_waiter *find_waiter(struct homa_rt *rt, const struct rt_item *item)
{
	for (struct rt_waiter *w = rt->waiters; w; w = w->next)
		if (w->id != 0 && homa_rt_item_matches(item, w->flags, w->id))
			return w;
	for (struct rt_waiter *w = rt->waiters; w; w = w->next)
		if (w->id == 0 && homa_rt_item_matches(item, w->flags, 0))
			return w;
	return NULL;
}

/** homa_rt_remove_waiter() - See rt.h. Does nothing if @w is not listed. */
void homa_rt_remove_waiter(struct homa_rt *rt, struct rt_waiter *w)
{
	for (struct rt_waiter **p = &rt->waiters; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			w->next = NULL;
			return;
		}
	}
}

/**
 * level() - Queue level of @item: 0 for an event without a message; for a
 * message of at most the socket's unscheduled bytes 7 minus the priority
 * the socket's cutoffs give its length (0 the highest); RT_LEVELS - 1 for
 * longer ones.
 */
static int level(const struct homa_rt *rt, const struct rt_item *item)
{
	const struct homa_settings *s = homa_engine_settings(rt->engine);
	uint64_t len;

	if (!item->ev.msg || !s)
		return 0;
	len = homa_msg_length(item->ev.msg);
	if (len > s->unsched_bytes)
		return RT_LEVELS - 1;
	return HOMA_MAX_PRIORITIES - 1 - (homa_engine_rx_priority(rt->engine, len) & 7);
}

/** enqueue() - Append @item to its level's queue; the eventfd turns readable. */
static void enqueue(struct homa_rt *rt, struct rt_item *item)
{
	int l = level(rt, item);

	if (rt->tail[l])
		rt->tail[l]->next = item;
	else
		rt->head[l] = item;
	rt->tail[l] = item;
	if (++rt->nready == 1)
		set_ready_fd(rt, true);
}

/** homa_rt_deliver() - See rt.h. Takes ownership of @item. */
void homa_rt_deliver(struct homa_rt *rt, struct rt_item *item)
{
	struct rt_waiter *w;

	item->next = NULL;
	if (item->ev.type == HOMA_EV_REQUEST && rt->announce &&
	    homa_rt_partial_complete(rt, item))
		return;
	w = find_waiter(rt, item);
	if (!w && item->ev.type == HOMA_EV_REQUEST_BEGIN) {
		homa_rt_begin_queue(rt, item);
		return;
	}
	if (w) {
		if (item->ev.type == HOMA_EV_REQUEST_BEGIN)
			homa_rt_begin_handed(rt, item);
		homa_rt_remove_waiter(rt, w);
		w->item = item;
		rt->wakeups++;
		homa_rt_wake_waiter(rt, w);
		return;
	}
	enqueue(rt, item);
}

/** homa_rt_export_ready() - See rt.h. */
void homa_rt_export_ready(struct homa_rt *rt)
{
	if (rt->ready_exported)
		return;
	rt->ready_exported = true;
	if (rt->nready > 0)
		set_ready_fd(rt, true);
}

/**
 * Freed items a socket keeps (homa_rt_item_put()): enough for the
 * messages of a full receive batch and a burst of replies, so a steady
 * stream of RPCs allocates none.
 */
#define RT_ITEM_CACHE 64

__thread uint64_t homa_rt_item_mallocs;

/** homa_rt_item_get() - See rt.h. Called with rt->lock held. */
struct rt_item *homa_rt_item_get(struct homa_rt *rt)
{
	struct rt_item *item = rt->item_cache;

	if (item) {
		rt->item_cache = item->next;
		rt->nitem_cache--;
	} else {
		item = malloc(sizeof(*item));
		if (!item)
			return NULL;
		homa_rt_item_mallocs++;
	}
	*item = (struct rt_item){0};
	return item;
}

/** homa_rt_item_put() - See rt.h. Called with rt->lock held. */
void homa_rt_item_put(struct homa_rt *rt, struct rt_item *item)
{
	if (!item)
		return;
	if (rt->nitem_cache >= RT_ITEM_CACHE) {
		free(item);
		return;
	}
	item->next = rt->item_cache;
	rt->item_cache = item;
	rt->nitem_cache++;
}

/** homa_rt_item_cache_free() - See rt.h. */
void homa_rt_item_cache_free(struct homa_rt *rt)
{
	while (rt->item_cache) {
		struct rt_item *item = rt->item_cache;

		rt->item_cache = item->next;
		free(item);
	}
	rt->nitem_cache = 0;
}

/** homa_rt_collect() - See rt.h. Events that cannot be stored are released. */
void homa_rt_collect(struct homa_rt *rt)
{
	struct homa_event ev;

	while (homa_engine_next_event(rt->engine, &ev) == 1) {
		struct rt_item *item = homa_rt_item_get(rt);

		if (!item) {
			if (ev.msg)
				homa_engine_msg_release(rt->engine, ev.msg);
			continue;
		}
		item->ev = ev;  /* tcp false: the engine's */
		if ((ev.type == HOMA_EV_REQUEST || ev.type == HOMA_EV_RESPONSE) &&
		    rt->drv && rt->drv->ops->know)
			rt->drv->ops->know(rt->drv, &ev.peer, ev.peer_port);
		homa_rt_deliver(rt, item);
	}
	if (rt->data_waiters)
		homa_rt_wake_data(rt);
	if (rt->space_waiters)
		pthread_cond_broadcast(&rt->space_cond);
}

/** homa_rt_find_item() - See rt.h. */
struct rt_item *homa_rt_find_item(struct homa_rt *rt, uint64_t id)
{
	for (int l = 0; l < RT_LEVELS; l++)
		for (struct rt_item *it = rt->head[l]; it; it = it->next)
			if (it->ev.id == id)
				return it;
	return NULL;
}

/** take_level() - The first item of level @l that matches, unlinked; NULL if none. */
static struct rt_item *take_level(struct homa_rt *rt, int l, int flags, uint64_t id)
{
	struct rt_item *prev = NULL;

	for (struct rt_item *it = rt->head[l]; it; prev = it, it = it->next) {
		if (!homa_rt_item_matches(it, flags, id))
			continue;
		if (prev)
			prev->next = it->next;
		else
			rt->head[l] = it->next;
		if (rt->tail[l] == it)
			rt->tail[l] = prev;
		it->next = NULL;
		return it;
	}
	return NULL;
}

/** homa_rt_take() - See rt.h. Highest level first. The caller owns the returned item. */
struct rt_item *homa_rt_take(struct homa_rt *rt, int flags, uint64_t id)
{
	for (int l = 0; l < RT_LEVELS; l++) {
		struct rt_item *it = take_level(rt, l, flags, id);

		if (!it)
			continue;
		if (--rt->nready == 0)
			set_ready_fd(rt, false);
		return it;
	}
	return NULL;
}

/**
 * homa_rt_wake_all() - See rt.h. Also wakes polled mode's standby
 * thread, which nothing else wakes early. An exported ready_fd becomes readable
 * for good (nothing takes from the queue any more), which wakes an
 * epoll/poll loop on homa_fd() (linger.c keeps it open for that).
 */
void homa_rt_wake_all(struct homa_rt *rt)
{
	for (struct rt_waiter *w = rt->waiters; w; w = w->next)
		homa_rt_wake_waiter(rt, w);
	set_ready_fd(rt, true);
	pthread_cond_broadcast(&rt->space_cond);
	pthread_cond_broadcast(&rt->standby_cond);
	pthread_cond_broadcast(&rt->role_cond);
}

/** homa_rt_drop_queue() - See rt.h. */
void homa_rt_drop_queue(struct homa_rt *rt)
{
	for (int l = 0; l < RT_LEVELS; l++) {
		while (rt->head[l]) {
			struct rt_item *it = rt->head[l];

			rt->head[l] = it->next;
			if (it->ev.msg)
				homa_engine_msg_release(rt->engine, it->ev.msg);
			homa_rt_item_put(rt, it);
		}
		rt->tail[l] = NULL;
	}
	rt->nready = 0;
	homa_rt_partial_drop(rt);
}
