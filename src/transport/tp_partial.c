/* SPDX-License-Identifier: MIT */
/**
 * @file tp_partial.c
 * Partial reads of responses carried by TCP (homa_recv_partial(),
 * homa_recv_partial_wait()): while a response frame arrives, the reader
 * publishes in its client RPC's record (struct tp_crpc) the payload
 * buffer and how many bytes of it are there, and partial readers copy
 * from that prefix under tp->lock. The reader writes only past the
 * published prefix, and the frame's completion (tp_rpc.c) ends the
 * record under rt->lock and tp->lock before the buffer becomes the
 * delivered message, so a reader sees the bytes grow and then the whole
 * message, never a freed buffer. Frames that fit in one read are never
 * published (no cost for small messages).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tp.h"

/**
 * find() - tp->lock held: the client RPC @id whose response @c carries,
 * or NULL (ended, aborted, or not on @c).
 */
static struct tp_crpc *find(struct homa_tp *tp, struct tp_conn *c, uint64_t id)
{
	uint64_t val;
	struct tp_crpc *r;

	if (!homa_rt_idset_get(&tp->crpcs, id, &val))
		return NULL;
	r = (struct tp_crpc *)(uintptr_t)val;
	return r->conn == c ? r : NULL;
}

/**
 * find_srpc() - tp->lock held: server RPC @handle while its announced
 * request arrives, or NULL (aborted, connection lost, or whole).
 */
static struct tp_srpc *find_srpc(struct homa_tp *tp, uint64_t handle)
{
	uint64_t val;
	struct tp_srpc *r;

	if (!handle || !homa_rt_idset_get(&tp->srpcs, handle, &val))
		return NULL;
	r = (struct tp_srpc *)(uintptr_t)val;
	return r->rx_body ? r : NULL;
}

/**
 * announce() - rt->lock and tp->lock held, @c reading a request that no
 * server RPC has yet: make it server RPC c->rx_handle, arriving.
 * Return: the announcement to deliver (the caller delivers it after
 * dropping tp->lock), or NULL (no memory, connection lost: the request
 * is delivered whole when complete).
 */
static struct rt_item *announce(struct homa_tp *tp, struct tp_conn *c)
{
	struct tp_srpc *r = calloc(1, sizeof(*r));
	struct rt_item *item = calloc(1, sizeof(*item));

	if (!r || !item || c->dead)
		goto fail;
	*r = (struct tp_srpc){.handle = homa_engine_reserve_id(tp->rt->engine, true),
			      .client_id = c->hdr.id, .conn = c, .announced = true,
			      .rx_body = c->body, .rx_len = c->hdr.len};
	if (homa_rt_idset_put(&tp->srpcs, r->handle, (uint64_t)(uintptr_t)r))
		goto fail;
	tp->st.tcp_requests++;
	c->rx_handle = r->handle;
	item->ev = (struct homa_event){.type = HOMA_EV_REQUEST_BEGIN, .id = r->handle,
				       .peer = c->addr, .peer_port = c->port};
	item->tcp = true;
	return item;
fail:
	free(r);
	free(item);
	return NULL;
}

/**
 * publish_request() - tp_partial_publish() of a request: announce it the
 * first time a server asks for requests as they start, then publish.
 */
static void publish_request(struct homa_tp *tp, struct tp_conn *c)
{
	struct homa_rt *rt = tp->rt;
	struct rt_item *item = NULL;
	struct tp_srpc *r;

	homa_rt_lock(rt);
	if (!rt->announce || rt->closing) {
		homa_rt_unlock(rt);
		return;
	}
	pthread_mutex_lock(&tp->lock);
	if (!c->rx_handle)
		item = announce(tp, c);
	r = find_srpc(tp, c->rx_handle);
	if (r)
		r->rx_got = c->body_got;
	pthread_mutex_unlock(&tp->lock);
	if (item)
		homa_rt_deliver(rt, item);
	if (r && rt->data_waiters)
		homa_rt_wake_data(rt);
	homa_rt_unlock(rt);
	if (item && rt->mode == HOMA_MODE_POLLED)
		homa_rt_kick(rt);
}

/**
 * announce_all() - rt->lock held, and tp->lock held by a thread that
 * holds the reader role or saw it free (the receive state of every
 * connection stands still): announce each request being read that has
 * no server RPC yet. Return: the announcements, linked by next.
 */
static struct rt_item *announce_all(struct homa_tp *tp)
{
	struct rt_item *items = NULL, **tail = &items;

	for (struct tp_conn *c = tp->conns; c; c = c->next) {
		struct rt_item *item;
		struct tp_srpc *r;

		if (!c->accepted || !c->in_body || c->rx_handle || c->dead)
			continue;
		item = announce(tp, c);
		r = find_srpc(tp, c->rx_handle);
		if (r)
			r->rx_got = c->body_got;
		if (item) {
			*tail = item;
			tail = &item->next;
		}
	}
	return items;
}

/**
 * deliver_all() - rt->lock held, no tp->lock: deliver the announcements
 * @items (announce_all()) and wake a polled socket's caller.
 */
static void deliver_all(struct homa_rt *rt, struct rt_item *items)
{
	bool any = items != NULL;

	while (items) {
		struct rt_item *next = items->next;

		homa_rt_deliver(rt, items);
		items = next;
	}
	if (any && rt->mode == HOMA_MODE_POLLED)
		homa_rt_kick(rt);
}

/** homa_tp_announce_arriving() - See tp.h. */
void homa_tp_announce_arriving(struct homa_rt *rt)
{
	struct homa_tp *tp = rt->tp;
	struct rt_item *items;
	uint64_t one = 1;

	if (!tp || rt->closing)
		return;
	pthread_mutex_lock(&tp->lock);
	if (tp->reading) {
		/* the holder may be mid-frame: it announces (tp_partial_due()) */
		atomic_store(&tp->announce_due, true);
		pthread_mutex_unlock(&tp->lock);
		if (write(tp->kick_fd, &one, sizeof(one)) < 0) {
			/* an eventfd write fails only on overflow: it is readable then */
		}
		return;
	}
	items = announce_all(tp);
	pthread_mutex_unlock(&tp->lock);
	deliver_all(rt, items);
}

/** tp_partial_due() - See tp.h. */
void tp_partial_due(struct homa_tp *tp)
{
	struct homa_rt *rt = tp->rt;
	struct rt_item *items = NULL;

	if (!atomic_load_explicit(&tp->announce_due, memory_order_acquire))
		return;
	homa_rt_lock(rt);
	pthread_mutex_lock(&tp->lock);
	atomic_store(&tp->announce_due, false);
	if (!rt->closing)
		items = announce_all(tp);
	pthread_mutex_unlock(&tp->lock);
	deliver_all(rt, items);
	homa_rt_unlock(rt);
}

/** tp_partial_publish() - See tp.h. */
void tp_partial_publish(struct homa_tp *tp, struct tp_conn *c)
{
	struct homa_rt *rt = tp->rt;
	struct tp_crpc *r;

	if (c->pub && c->pub_got == c->body_got)
		return;
	c->pub = true;
	c->pub_got = c->body_got;
	if (c->accepted) {
		publish_request(tp, c);
		return;
	}
	homa_rt_lock(rt);
	pthread_mutex_lock(&tp->lock);
	r = find(tp, c, c->hdr.id);
	if (r) {
		r->rx_body = c->body;
		r->rx_len = c->hdr.len;
		r->rx_got = c->body_got;
	}
	pthread_mutex_unlock(&tp->lock);
	if (r && rt->data_waiters)
		homa_rt_wake_data(rt);
	homa_rt_unlock(rt);
}

/**
 * tp_partial_drop_request() - See tp.h.
 */
bool tp_partial_drop_request(struct homa_tp *tp, struct tp_conn *c)
{
	struct tp_srpc *r = find_srpc(tp, c->rx_handle);

	if (r) {
		homa_rt_idset_del(&tp->srpcs, r->handle);
		free(r);
	}
	c->rx_handle = 0;
	return r != NULL;
}

/** tp_partial_forget() - See tp.h. */
void tp_partial_forget(struct homa_tp *tp, struct tp_conn *c, uint64_t id)
{
	struct tp_crpc *r;

	pthread_mutex_lock(&tp->lock);
	if (c->accepted) {
		tp_partial_drop_request(tp, c);
		pthread_mutex_unlock(&tp->lock);
		return;
	}
	r = find(tp, c, id);
	if (r) {
		r->rx_body = NULL;
		r->rx_len = 0;
		r->rx_got = 0;
	}
	pthread_mutex_unlock(&tp->lock);
}

/** homa_tp_partial() - See tp.h. */
int64_t homa_tp_partial(struct homa_tp *tp, uint64_t id, size_t offset, void *buf, size_t cap,
			struct homa_partial *info)
{
	const uint8_t *body = NULL;
	struct tp_srpc *sr = NULL;
	struct tp_crpc *r = NULL;
	uint64_t val;
	size_t n = 0;

	pthread_mutex_lock(&tp->lock);
	if (id & 1)
		sr = find_srpc(tp, id);
	else if (homa_rt_idset_get(&tp->crpcs, id, &val))
		r = (struct tp_crpc *)(uintptr_t)val;
	if (!r && !sr) {
		pthread_mutex_unlock(&tp->lock);
		return HOMA_ENOTFOUND;
	}
	body = r ? r->rx_body : sr->rx_body;
	info->length = r ? r->rx_len : sr->rx_len;
	info->arrived = r ? r->rx_got : sr->rx_got;
	info->complete = false;
	if (body && offset < info->arrived && cap) {  /* cap 0: buf may be NULL */
		n = info->arrived - offset < cap ? info->arrived - offset : cap;
		memcpy(buf, body + offset, n);
	}
	pthread_mutex_unlock(&tp->lock);
	return (int64_t)n;
}
