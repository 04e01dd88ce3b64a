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
#include <string.h>

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

/** tp_partial_publish() - See tp.h. */
void tp_partial_publish(struct homa_tp *tp, struct tp_conn *c)
{
	struct homa_rt *rt = tp->rt;
	struct tp_crpc *r;

	if (c->pub && c->pub_got == c->body_got)
		return;
	c->pub = true;
	c->pub_got = c->body_got;
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

/** tp_partial_forget() - See tp.h. */
void tp_partial_forget(struct homa_tp *tp, struct tp_conn *c, uint64_t id)
{
	struct tp_crpc *r;

	pthread_mutex_lock(&tp->lock);
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
	struct tp_crpc *r;
	uint64_t val;
	size_t n = 0;

	pthread_mutex_lock(&tp->lock);
	if (!homa_rt_idset_get(&tp->crpcs, id, &val)) {
		pthread_mutex_unlock(&tp->lock);
		return HOMA_ENOTFOUND;
	}
	r = (struct tp_crpc *)(uintptr_t)val;
	info->length = r->rx_len;
	info->arrived = r->rx_got;
	info->complete = false;
	if (r->rx_body && offset < r->rx_got && cap) {  /* cap 0: buf may be NULL */
		n = r->rx_got - offset < cap ? r->rx_got - offset : cap;
		memcpy(buf, r->rx_body + offset, n);
	}
	pthread_mutex_unlock(&tp->lock);
	return (int64_t)n;
}
