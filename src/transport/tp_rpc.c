/* SPDX-License-Identifier: MIT */
/**
 * @file tp_rpc.c
 * RPCs carried by TCP: a frame that arrived becomes a request or a
 * response delivered through the runtime's queue, exactly as the
 * engine's events are.
 */
#include <stdlib.h>

#include "tp.h"

/** free_body() - A TCP message's done callback: free the payload it borrowed. */
static void free_body(void *body)
{
	free(body);
}

/**
 * wrap() - A message that borrows @body (@len bytes, malloc; freed with
 * the message). Return: the message, or NULL (no memory: @body is still
 * the caller's).
 */
static homa_msg *wrap(uint8_t *body, uint32_t len)
{
	struct homa_iov iov = {body, len};
	homa_msg *m = NULL;

	return homa_msg_build_ref(NULL, &iov, 1, free_body, body, &m) ? NULL : m;
}

/**
 * deliver_locked() - tp_deliver() with rt->lock held; @item is a fresh
 * allocation (NULL: no memory). Return: whether it was delivered (else
 * the caller frees @item and discards @msg).
 */
static bool deliver_locked(struct homa_tp *tp, struct rt_item *item, int type, uint64_t id,
			   uint64_t cookie, const homa_addr *peer, uint16_t port, homa_msg *msg,
			   uint64_t start_ns, int error)
{
	struct homa_rt *rt = tp->rt;

	if (!item || rt->closing || (type != HOMA_EV_REQUEST && !homa_rt_idset_has(&rt->ids, id)))
		return false;
	item->ev = (struct homa_event){.type = type, .id = id, .cookie = cookie,
				       .error = error, .peer = *peer, .peer_port = port,
				       .msg = msg, .start_ns = start_ns};
	item->tcp = true;
	if (msg)
		homa_engine_msg_adopt(rt->engine, msg);
	homa_rt_deliver(rt, item);
	if (rt->data_waiters)
		homa_rt_wake_data(rt); /* homa_recv_partial_wait() on this RPC */
	return true;
}

/**
 * delivered() - After rt->lock is dropped: if @ok, kick a polled socket;
 * else free @item and discard @msg.
 */
static void delivered(struct homa_tp *tp, bool ok, struct rt_item *item, homa_msg *msg)
{
	if (!ok) {
		free(item);
		homa_msg_discard(NULL, msg);
	} else if (tp->rt->mode == HOMA_MODE_POLLED) {
		homa_rt_kick(tp->rt);
	}
}

/** tp_deliver() - See tp.h. */
void tp_deliver(struct homa_tp *tp, int type, uint64_t id, uint64_t cookie,
		const homa_addr *peer, uint16_t port, homa_msg *msg, uint64_t start_ns,
		int error)
{
	struct rt_item *item = calloc(1, sizeof(*item));
	bool ok;

	homa_rt_lock(tp->rt);
	ok = deliver_locked(tp, item, type, id, cookie, peer, port, msg, start_ns, error);
	homa_rt_unlock(tp->rt);
	delivered(tp, ok, item, msg);
}

/** tp_crpc_end() - See tp.h. */
void tp_crpc_end(struct homa_tp *tp, struct tp_crpc *r)
{
	homa_rt_idset_del(&tp->crpcs, r->id);
	tp->tx_buffered -= r->len;
	pthread_cond_broadcast(&tp->space);
	free(r);
}

/**
 * on_response() - A response frame for client RPC @h->id: its record ends
 * and the message is delivered in one hold of rt->lock, so a partial
 * reader sees either the bytes published so far or the whole message.
 */
static void on_response(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
			homa_msg *msg)
{
	struct rt_item *item = calloc(1, sizeof(*item));
	struct tp_crpc *r = NULL;
	uint64_t val, cookie = 0, start = 0;
	bool ok = false;

	homa_rt_lock(tp->rt);
	pthread_mutex_lock(&tp->lock);
	if (homa_rt_idset_get(&tp->crpcs, h->id, &val) &&
	    ((struct tp_crpc *)(uintptr_t)val)->conn == c) {
		r = (struct tp_crpc *)(uintptr_t)val;
		cookie = r->cookie;
		start = r->start_ns;
		tp_crpc_end(tp, r);
	}
	pthread_mutex_unlock(&tp->lock);
	if (r) /* else aborted, or a response we never asked for */
		ok = deliver_locked(tp, item, HOMA_EV_RESPONSE, h->id, cookie, &c->addr, c->port,
				    msg, start, 0);
	homa_rt_unlock(tp->rt);
	delivered(tp, ok, item, msg);
}

/**
 * on_announced() - The request frame that @c announced as server RPC
 * c->rx_handle (tp_partial.c) is whole: its record stops arriving and the
 * message is delivered in one hold of rt->lock, so a partial reader sees
 * either the bytes published so far or the whole request. Dropped if the
 * RPC was aborted meanwhile.
 */
static void on_announced(struct homa_tp *tp, struct tp_conn *c, homa_msg *msg)
{
	struct rt_item *item = calloc(1, sizeof(*item));
	uint64_t handle = c->rx_handle, val;
	bool ok = false;

	c->rx_handle = 0;
	homa_rt_lock(tp->rt);
	pthread_mutex_lock(&tp->lock);
	if (homa_rt_idset_get(&tp->srpcs, handle, &val)) {
		struct tp_srpc *r = (struct tp_srpc *)(uintptr_t)val;

		ok = r->rx_body != NULL;
		r->rx_body = NULL;
	}
	pthread_mutex_unlock(&tp->lock);
	if (ok)
		ok = deliver_locked(tp, item, HOMA_EV_REQUEST, handle, 0, &c->addr, c->port, msg,
				    0, 0);
	homa_rt_unlock(tp->rt);
	delivered(tp, ok, item, msg);
}

/** on_request() - A request frame from client RPC @h->id: give it a handle and deliver it. */
static void on_request(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
		       homa_msg *msg)
{
	struct homa_rt *rt = tp->rt;
	struct tp_srpc *r;
	bool ok;

	if (c->rx_handle) {
		on_announced(tp, c, msg);
		return;
	}
	r = calloc(1, sizeof(*r));

	homa_rt_lock(rt);
	ok = r && !rt->closing;
	if (ok) {
		r->handle = homa_engine_reserve_id(rt->engine, true);
		r->client_id = h->id;
		r->conn = c;
		pthread_mutex_lock(&tp->lock);
		ok = !c->dead && homa_rt_idset_put(&tp->srpcs, r->handle,
						   (uint64_t)(uintptr_t)r) == 0;
		if (ok)
			tp->st.tcp_requests++;
		pthread_mutex_unlock(&tp->lock);
	}
	homa_rt_unlock(rt);
	if (!ok) {
		free(r);
		homa_msg_discard(NULL, msg);
		return;
	}
	tp_deliver(tp, HOMA_EV_REQUEST, r->handle, 0, &c->addr, c->port, msg, 0, 0);
}

/** tp_on_frame() - See tp.h. */
void tp_on_frame(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
		 uint8_t *body)
{
	homa_msg *msg;

	if (!body)
		body = malloc(1); /* an empty message still needs a buffer to borrow */
	msg = body ? wrap(body, h->len) : NULL;
	if (!msg) { /* no memory: like a lost packet, the RPC times out */
		tp_partial_forget(tp, c, h->id);
		free(body);
		return;
	}
	if (h->type == TP_REQUEST)
		on_request(tp, c, h, msg);
	else
		on_response(tp, c, h, msg);
}
