/* SPDX-License-Identifier: MIT */
/**
 * @file recv.c
 * Receiving: homa_recv() (take a queued message or wait for one) and
 * homa_poll(); reads of messages still arriving are in partial.c.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tp.h"

/**
 * check_recv() - Validate homa_recv()'s arguments.
 * Return: 0, HOMA_EINVAL, or HOMA_ENOTFOUND (an odd @id: never a client RPC).
 */
static int check_recv(const struct homa_rt *rt, int flags, uint64_t id, int64_t timeout_ns,
		      const struct homa_message *out)
{
	if (!out || flags == 0 ||
	    (flags & ~(HOMA_RECV_REQUEST | HOMA_RECV_RESPONSE | HOMA_RECV_PARTIAL)))
		return HOMA_EINVAL;
	if ((flags & HOMA_RECV_PARTIAL) && !(flags & HOMA_RECV_REQUEST))
		return HOMA_EINVAL;
	if (timeout_ns < -1)
		return HOMA_EINVAL;
	if (id != 0 && !(flags & HOMA_RECV_RESPONSE))
		return HOMA_EINVAL;
	if ((flags & HOMA_RECV_REQUEST) && !rt->server)
		return HOMA_EINVAL;
	if (id & 1)
		return HOMA_ENOTFOUND;
	return 0;
}

/**
 * drop_item() - Free @item and release its message (nobody will see it:
 * the socket is closing). Called with rt->lock held.
 */
static void drop_item(struct homa_rt *rt, struct rt_item *item)
{
	if (item->ev.msg)
		homa_engine_msg_release(rt->engine, item->ev.msg);
	homa_rt_item_put(rt, item);
}

/**
 * fill_message() - Describe @item in @out (the item is freed by the
 * caller; its message now belongs to @out). Return: 0, or the failed
 * RPC's error.
 */
static int fill_message(struct homa_rt *rt, homa_socket *s,
			const struct rt_item *item, struct homa_message *out)
{
	const struct homa_event *ev = &item->ev;
	int len;

	memset(out, 0, sizeof(*out));
	out->id = ev->id;
	out->cookie = ev->cookie;
	out->type = ev->type == HOMA_EV_REQUEST ? HOMA_RECV_REQUEST : HOMA_RECV_RESPONSE;
	if (ev->type == HOMA_EV_REQUEST_BEGIN) {
		out->type = HOMA_RECV_PARTIAL;
		out->length = homa_rt_partial_length(rt, ev->id);
	}
	out->error = ev->type == HOMA_EV_ERROR ? ev->error : 0;
	len = homa_io_addr_to_sockaddr(rt->drv->family, &ev->peer, ev->peer_port,
				       &out->peer);
	out->peer_len = len > 0 ? (socklen_t)len : 0;
	if (ev->msg) {
		out->length = homa_msg_length(ev->msg);
		out->priv[0] = s;
		out->priv[1] = ev->msg;
		uint64_t token = ++rt->next_token | (item->tcp ? RT_TOKEN_TCP : 0);

		out->priv[2] = (void *)(uintptr_t)token;
		/* remembered so homa_close() can free it if never released */
		if (homa_rt_idset_put(&rt->held, token, (uint64_t)(uintptr_t)ev->msg)) {
			homa_engine_msg_release(rt->engine, ev->msg);
			memset(out, 0, sizeof(*out));
			return HOMA_ENOMEM;
		}
	}
	if (ev->type == HOMA_EV_RESPONSE && ev->start_ns)
		out->rtt_ns = homa_rt_now() - ev->start_ns;
	return out->error;
}

/**
 * wait_for() - Register a waiter for (@flags, @id) and wait until
 * @until, which the caller just computed from the clock (or UINT64_MAX):
 * the first pass does not read the clock again. Called with rt->lock
 * held. Return: the item, or NULL with *@err set to HOMA_ETIME or
 * HOMA_ESHUTDOWN.
 */
static struct rt_item *wait_for(struct homa_rt *rt, int flags, uint64_t id,
				uint64_t until, int *err)
{
	struct rt_waiter w = {.flags = flags, .id = id, .fresh = true};
	struct rt_waiter **tail = &rt->waiters;

	while (*tail)
		tail = &(*tail)->next;
	*tail = &w;
	*err = homa_rt_wait_item(rt, &w, until);
	return w.item;
}

/**
 * take() - The oldest item for (@flags, @id): with HOMA_RECV_PARTIAL a
 * request's announcement first, then the queue. Called with rt->lock held.
 */
static struct rt_item *take(struct homa_rt *rt, int flags, uint64_t id)
{
	struct rt_item *item = (flags & HOMA_RECV_PARTIAL) ? homa_rt_begin_take(rt) : NULL;

	return item ? item : homa_rt_take(rt, flags, id);
}

/**
 * uncork_take() - No message is ready: send what HOMA_SEND_MORE sends
 * left in the engine (homa_rt_uncork(), without rt->lock), then take()
 * again. Called and returns with rt->lock held.
 */
static struct rt_item *uncork_take(struct homa_rt *rt, int flags, uint64_t id)
{
	homa_rt_unlock(rt);
	homa_rt_uncork(rt);
	homa_rt_lock(rt);
	return rt->closing ? NULL : take(rt, flags, id);
}

/** homa_recv() - See homa.h. */
int homa_recv(homa_socket *s, int flags, uint64_t id, int64_t timeout_ns,
	      struct homa_message *out)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	struct rt_item *item = NULL;
	int err;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	err = check_recv(rt, flags, id, timeout_ns, out);
	if (err) {
		homa_rt_put(rt);
		return err;
	}
	homa_rt_lock(rt);
	if (rt->closing)
		err = HOMA_ESHUTDOWN;
	else if (id && !homa_rt_idset_has(&rt->ids, id))
		err = HOMA_ENOTFOUND;
	if (!err && (flags & HOMA_RECV_PARTIAL) && !rt->announce) {
		/* requests that started before this call are announced now */
		rt->announce = true;
		homa_engine_announce_requests(rt->engine, true);
		homa_rt_collect(rt);
		homa_tp_announce_arriving(rt);
	}
	if (!err) {
		item = take(rt, flags, id);
		if (!item && atomic_load(&rt->tx_corked))
			item = uncork_take(rt, flags, id);
		if (!item && timeout_ns == 0 && rt->mode == HOMA_MODE_POLLED &&
		    homa_rt_poll_locked(rt, homa_rt_now()))
			item = take(rt, flags, id);
		if (!item && timeout_ns != 0)
			item = wait_for(rt, flags, id, homa_rt_deadline(timeout_ns), &err);
		else if (!item)
			err = HOMA_EAGAIN;
	}
	if (item && rt->closing) {
		/* closed while waiting: HOMA_ESHUTDOWN never fills @out */
		drop_item(rt, item);
		err = HOMA_ESHUTDOWN;
	} else if (item) {
		if (item->ev.type == HOMA_EV_RESPONSE || item->ev.type == HOMA_EV_ERROR)
			homa_rt_idset_del(&rt->ids, item->ev.id);
		err = fill_message(rt, s, item, out);
		homa_rt_item_put(rt, item);
	}
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return err;
}

/** homa_poll() - See homa.h. */
int homa_poll(homa_socket *s, int64_t timeout_ns)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int n;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	if (rt->mode != HOMA_MODE_POLLED || timeout_ns < -1) {
		homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	homa_rt_uncork(rt);
	homa_rt_lock(rt);
	if (!rt->closing)
		homa_rt_poll_turn(rt, homa_rt_deadline(timeout_ns));
	/* checked again: the socket may have closed while this thread polled */
	n = rt->closing ? HOMA_ESHUTDOWN : (int)rt->nready;
	homa_rt_unlock(rt);
	homa_rt_put(rt);
	return n;
}
