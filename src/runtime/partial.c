/* SPDX-License-Identifier: MIT */
/**
 * @file partial.c
 * Reading messages as they arrive. A client reads its response while it
 * arrives (the engine's partial message; over the TCP transport the
 * bytes the transport has read so far, homa_tp_partial()); a server that asks with
 * HOMA_RECV_PARTIAL is told of a request when its first bytes arrive
 * (the engine's or the TCP transport's HOMA_EV_REQUEST_BEGIN, queued
 * here until homa_recv() takes it) and reads it the same way; once complete, such a request is
 * kept here, not delivered again, until the server answers or aborts it.
 * A reader that waits sleeps as a "data waiter" on the socket's waiter
 * list, and is woken after each batch of events that moved its RPC on.
 * Every function here but the public ones runs with rt->lock held.
 */
#include <stdlib.h>

#include "rt.h"
#include "tp.h"

/** Announcements kept for homa_recv() at most; older ones are dropped. */
#define RT_MAX_BEGINS 4096

/** Where an RPC's incoming message stands (progress()). */
struct rt_progress {
	const homa_msg *msg;   /**< the (partial) message; NULL before its first byte */
	size_t arrived;        /**< bytes present from offset 0 on */
	size_t length;         /**< the message's length (0 before its first byte) */
	bool complete;
	bool tcp;              /**< a response arriving over TCP: read with homa_tp_partial() */
};

/** free_item() - Free @item and release its message, if any. */
static void free_item(struct homa_rt *rt, struct rt_item *item)
{
	if (item->ev.msg)
		homa_engine_msg_release(rt->engine, item->ev.msg);
	homa_rt_item_put(rt, item);
}

/** homa_rt_partial_complete() - See rt.h. */
bool homa_rt_partial_complete(struct homa_rt *rt, struct rt_item *item)
{
	uint64_t id = item->ev.id;
	struct rt_item **p, *prev = NULL;

	if (homa_rt_idset_has(&rt->reading, id) &&
	    !homa_rt_idset_put(&rt->reading, id, (uint64_t)(uintptr_t)item))
		return true;
	for (p = &rt->bhead; *p; prev = *p, p = &(*p)->next) {
		struct rt_item *b = *p;

		if (b->ev.id != id)
			continue;
		*p = b->next;
		if (rt->btail == b)
			rt->btail = prev;
		rt->nbegin--;
		free(b);
		break;
	}
	return false;
}

/** homa_rt_begin_queue() - See rt.h. */
void homa_rt_begin_queue(struct homa_rt *rt, struct rt_item *item)
{
	if (rt->nbegin >= RT_MAX_BEGINS) {
		struct rt_item *old = rt->bhead;

		rt->bhead = old->next;
		if (!rt->bhead)
			rt->btail = NULL;
		rt->nbegin--;
		free(old);
	}
	item->next = NULL;
	if (rt->btail)
		rt->btail->next = item;
	else
		rt->bhead = item;
	rt->btail = item;
	rt->nbegin++;
}

/** homa_rt_begin_handed() - See rt.h. */
void homa_rt_begin_handed(struct homa_rt *rt, const struct rt_item *item)
{
	/* without memory the request is still delivered whole when complete */
	homa_rt_idset_put(&rt->reading, item->ev.id, 0);
}

/**
 * tcp_arriving() - Whether the request of server RPC @id, announced by
 * the TCP transport, is still arriving (else it was delivered whole, cut
 * or aborted).
 */
static bool tcp_arriving(struct homa_rt *rt, uint64_t id)
{
	struct homa_partial info;

	return rt->tp && homa_tp_partial(rt->tp, id, 0, NULL, 0, &info) >= 0;
}

/** homa_rt_begin_take() - See rt.h. */
struct rt_item *homa_rt_begin_take(struct homa_rt *rt)
{
	while (rt->bhead) {
		struct rt_item *b = rt->bhead;

		rt->bhead = b->next;
		if (!rt->bhead)
			rt->btail = NULL;
		rt->nbegin--;
		b->next = NULL;
		if (b->tcp ? tcp_arriving(rt, b->ev.id)
			   : homa_engine_rx_progress(rt->engine, b->ev.id, NULL) >= 0) {
			homa_rt_begin_handed(rt, b);
			return b;
		}
		free(b); /* the RPC ended before anyone took it */
	}
	return NULL;
}

/** homa_rt_partial_end() - See rt.h. */
void homa_rt_partial_end(struct homa_rt *rt, uint64_t id)
{
	uint64_t v;

	if (!homa_rt_idset_get(&rt->reading, id, &v))
		return;
	if (v)
		free_item(rt, (struct rt_item *)(uintptr_t)v);
	homa_rt_idset_del(&rt->reading, id);
}

/** free_kept() - homa_rt_idset_foreach() callback: free a kept request. */
static void free_kept(uint64_t id, uint64_t v, void *ctx)
{
	(void)id;
	if (v)
		free_item(ctx, (struct rt_item *)(uintptr_t)v);
}

/** homa_rt_partial_drop() - See rt.h. */
void homa_rt_partial_drop(struct homa_rt *rt)
{
	while (rt->bhead) {
		struct rt_item *b = rt->bhead;

		rt->bhead = b->next;
		free(b);
	}
	rt->btail = NULL;
	rt->nbegin = 0;
	homa_rt_idset_foreach(&rt->reading, free_kept, rt);
	homa_rt_idset_free(&rt->reading);
}

/**
 * tcp_progress() - Where the response of client RPC @id carried by TCP
 * (or the request of server RPC @id) stands while it arrives (nothing yet if the transport does not know it).
 * Return: 0.
 */
static int tcp_progress(struct homa_rt *rt, uint64_t id, struct rt_progress *p)
{
	struct homa_partial info;

	if (homa_tp_partial(rt->tp, id, 0, NULL, 0, &info) < 0)
		return 0;
	p->arrived = info.arrived;
	p->length = info.length;
	p->tcp = true;
	return 0;
}

/**
 * progress() - Where RPC @id's incoming message stands, in @p.
 * Return: 0; HOMA_ENOTFOUND (no such RPC, or its message is no longer
 * here); a failed client RPC's error (its error item stays queued).
 */
static int progress(struct homa_rt *rt, uint64_t id, struct rt_progress *p)
{
	const struct rt_item *item;
	int64_t got;
	uint64_t v;

	*p = (struct rt_progress){0};
	if (id & 1) {
		if (!homa_rt_idset_get(&rt->reading, id, &v))
			return HOMA_ENOTFOUND;
		item = (const struct rt_item *)(uintptr_t)v;
	} else {
		got = homa_engine_rx_progress(rt->engine, id, &p->msg);
		if (got >= 0) {
			p->arrived = (size_t)got;
			p->length = p->msg ? homa_msg_length(p->msg) : 0;
			return 0;
		}
		item = homa_rt_find_item(rt, id);
		if (!item) /* over TCP: a client RPC of ours whose response is not all here yet */
			return rt->tp && homa_rt_idset_has(&rt->ids, id) ? tcp_progress(rt, id, p)
									: HOMA_ENOTFOUND;
		if (item->ev.type == HOMA_EV_ERROR)
			return item->ev.error;
	}
	if (item) {
		p->msg = item->ev.msg;
		p->arrived = p->length = homa_msg_length(p->msg);
		p->complete = true;
		return 0;
	}
	if (tcp_arriving(rt, id)) /* a request arriving over TCP */
		return tcp_progress(rt, id, p);
	got = homa_engine_rx_progress(rt->engine, id, &p->msg);
	if (got < 0) {
		homa_rt_idset_del(&rt->reading, id); /* the request ended unanswered */
		return HOMA_ENOTFOUND;
	}
	p->arrived = (size_t)got;
	p->length = p->msg ? homa_msg_length(p->msg) : 0;
	return 0;
}

/**
 * copy_out() - Copy @p's bytes from @offset on (at most @cap) into @buf.
 * Return: bytes copied (0 at or past what arrived); HOMA_ENOTFOUND if a
 * TCP response's connection was lost since @p was read (look again).
 */
static int64_t copy_out(struct homa_rt *rt, uint64_t id, const struct rt_progress *p,
			size_t offset, void *buf, size_t cap)
{
	struct homa_partial info;

	if (offset >= p->arrived)
		return 0;
	if (cap > p->arrived - offset)
		cap = p->arrived - offset;
	if (p->tcp) /* rt->lock held: the bytes only grow until delivery or a lost connection */
		return homa_tp_partial(rt->tp, id, offset, buf, cap, &info);
	return (int64_t)homa_msg_copy(p->msg, offset, buf, cap);
}

/** homa_rt_partial_length() - See rt.h. */
size_t homa_rt_partial_length(struct homa_rt *rt, uint64_t id)
{
	struct rt_progress p;

	if (progress(rt, id, &p))
		return 0;
	return p.length;
}

/** readable() - True if a reader at @offset need not wait given @p. */
static bool readable(const struct rt_progress *p, size_t offset)
{
	return p->arrived > offset || p->complete;
}

/** homa_rt_wake_data() - See rt.h. */
void homa_rt_wake_data(struct homa_rt *rt)
{
	struct rt_progress p;

	for (struct rt_waiter *w = rt->waiters; w; w = w->next) {
		if (!w->data || w->ready)
			continue;
		if (progress(rt, w->id, &p) || readable(&p, w->want)) {
			w->ready = true;
			homa_rt_wake_waiter(rt, w);
		}
	}
}

/**
 * wait_data() - Wait until bytes of @id past @offset may be there, the
 * RPC ended, the socket closes or @until passes.
 * Return: 0 (look again), HOMA_ETIME or HOMA_ESHUTDOWN.
 */
static int wait_data(struct homa_rt *rt, uint64_t id, size_t offset, uint64_t until)
{
	struct rt_waiter w = {.id = id, .data = true, .want = offset};
	struct rt_waiter **tail = &rt->waiters;
	int err;

	while (*tail)
		tail = &(*tail)->next;
	*tail = &w;
	rt->data_waiters++;
	err = homa_rt_wait_item(rt, &w, until);
	rt->data_waiters--;
	return err == HOMA_ETIME && w.ready ? 0 : err;
}

/**
 * read_locked() - homa_recv_partial_wait() with rt->lock held.
 * Return: as homa_recv_partial_wait().
 */
static int64_t read_locked(struct homa_rt *rt, uint64_t id, size_t offset, void *buf,
			   size_t cap, int64_t timeout_ns, struct homa_partial *info)
{
	uint64_t until = homa_rt_deadline(timeout_ns);
	struct rt_progress p;
	bool polled = false;
	int64_t n = 0;
	int err;

	for (;;) {
		if (rt->closing)
			return HOMA_ESHUTDOWN;
		err = progress(rt, id, &p);
		if (err)
			return err;
		if (readable(&p, offset) && (n = copy_out(rt, id, &p, offset, buf, cap)) >= 0)
			break; /* n < 0: a TCP response's connection was just lost: look again */
		if (timeout_ns == 0 && rt->mode == HOMA_MODE_POLLED && !polled) {
			homa_rt_poll_locked(rt, homa_rt_now());
			polled = true;
			continue;
		}
		if (timeout_ns == 0)
			return HOMA_EAGAIN;
		err = wait_data(rt, id, offset, until);
		if (err)
			return err;
	}
	if (info) {
		info->length = p.length;
		info->arrived = p.arrived;
		info->complete = p.complete;
	}
	return n;
}

/** homa_recv_partial_wait() - See homa.h. */
int64_t homa_recv_partial_wait(homa_socket *s, uint64_t id, size_t offset, void *buf,
			       size_t cap, int64_t timeout_ns, struct homa_partial *info)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int64_t n;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	if ((!buf && cap) || id == 0 || timeout_ns < -1) {
		homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	homa_rt_lock(rt);
	n = read_locked(rt, id, offset, buf, cap, timeout_ns, info);
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}

/**
 * tcp_partial() - homa_recv_partial() of a response that may be arriving
 * over TCP (rt->lock held). Return: as homa_recv_partial().
 */
static int64_t tcp_partial(struct homa_rt *rt, uint64_t id, size_t offset, void *buf,
			   size_t cap, size_t *available)
{
	struct homa_partial info;
	int64_t n = homa_tp_partial(rt->tp, id, offset, buf, cap, &info);

	if (n >= 0 && available)
		*available = info.arrived;
	return n;
}

/** homa_recv_partial() - See homa.h. */
int64_t homa_recv_partial(homa_socket *s, uint64_t id, size_t offset,
			  void *buf, size_t cap, size_t *available)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	const homa_msg *msg = NULL;
	int64_t got, n = 0;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	if (!buf && cap) {
		homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	homa_rt_lock(rt);
	if (rt->closing)
		got = HOMA_ESHUTDOWN;
	else if (id & 1) /* a server RPC: its request is read with homa_recv_partial_wait() */
		got = HOMA_ENOTFOUND;
	else
		got = homa_engine_rx_progress(rt->engine, id, &msg);
	if (got == HOMA_ENOTFOUND && rt->tp && !(id & 1)) {
		n = tcp_partial(rt, id, offset, buf, cap, available);
	} else if (got >= 0) {
		if (available)
			*available = (size_t)got;
		if (msg && offset < (size_t)got) {
			size_t want = (size_t)got - offset < cap ? (size_t)got - offset : cap;

			n = (int64_t)homa_msg_copy(msg, offset, buf, want);
		}
	} else {
		n = got;
	}
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}
