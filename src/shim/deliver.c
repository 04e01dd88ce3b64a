/* SPDX-License-Identifier: MIT */
/**
 * @file deliver.c
 * The last step of recvmsg(): a message described in homa_recvmsg_args
 * as bpages of the application's region, or a failed RPC returned as its
 * errno with its id and cookie. The runtime receives packets straight
 * into the region (shim_pool_hooks()), so a message is normally handed
 * over where it lies, without a copy; the pieces of one that arrived
 * partly outside it, before SO_HOMA_RCVBUF or while the region was full,
 * are copied into new bpages (only those pieces need free room).
 */
#include <errno.h>
#include <string.h>

#include "shim.h"

/**
 * place() - Bpages for @r's message: the pieces it was received into in
 * the region are handed over where they lie, the others (received
 * outside it, before SO_HOMA_RCVBUF or while the region was full) are
 * copied into new room. Return: 0 with the offsets in @offs and their
 * count in @n, or ENOMEM (no room for the pieces outside).
 */
static int place(struct shim_sock *s, struct shim_ready *r, uint32_t *offs, uint32_t *n)
{
	const void *ptrs[HOMA_MAX_BPAGES];
	uint32_t lens[HOMA_MAX_BPAGES];
	bool fresh[HOMA_MAX_BPAGES];
	size_t len = r->msg.length;
	uint32_t k = 0;
	int e;

	if (len > (size_t)HOMA_MAX_BPAGES << HOMA_BPAGE_SHIFT)
		return ENOMEM;
	for (size_t at = 0; at < len; at += HOMA_BPAGE_SIZE, k++) {
		lens[k] = (uint32_t)(len - at < HOMA_BPAGE_SIZE ? len - at : HOMA_BPAGE_SIZE);
		if (homa_message_segment(&r->msg, at, &ptrs[k]) != lens[k])
			ptrs[k] = NULL;  /* split across pieces: not one of the region's */
	}
	e = shim_pool_place(&s->pool, ptrs, lens, k, offs, fresh);
	if (e)
		return e;
	for (uint32_t i = 0; i < k; i++)
		if (fresh[i])
			homa_message_copy(&r->msg, (size_t)i << HOMA_BPAGE_SHIFT,
					  s->pool.base + offs[i], lens[i]);
	*n = k;
	return 0;
}

/**
 * no_room() - The region has no room for @r: a response's RPC ends, a
 * request is dropped (its client will time out, as with the module).
 * Return: -1 with errno ENOMEM.
 */
static ssize_t no_room(struct shim_sock *s, struct shim_ready *r)
{
	homa_socket *h;
	bool request = r->id & 1;
	uint64_t id = r->id;

	shim_ready_free(r);
	if (request) {
		pthread_mutex_lock(&s->lock);
		h = s->h;
		pthread_mutex_unlock(&s->lock);
		if (h)
			homa_abort(h, id);
	}
	return shim_sock_fail(s, ENOMEM, "no buffer space for the message in the region");
}

/** track_request() - Remember server RPC @r until its reply (INFO). */
static void track_request(struct shim_sock *s, const struct shim_ready *r)
{
	struct shim_rpc t;

	memset(&t, 0, sizeof(t));
	t.id = r->id;
	t.peer = r->peer;
	t.tx_length = -1;
	t.rx_length = (int32_t)r->msg.length;
	pthread_mutex_lock(&s->lock);
	if (!shim_rpcs_find(&s->rpcs, t.id))
		shim_rpcs_add(&s->rpcs, &t);  /* ENOMEM: only HOMAIOCINFO misses it */
	pthread_mutex_unlock(&s->lock);
}

/** shim_deliver() - See shim.h. */
ssize_t shim_deliver(struct shim_sock *s, struct shim_ready *r, struct msghdr *m,
		     struct homa_recvmsg_args *a)
{
	uint32_t n = 0;
	size_t len;
	int e;

	a->id = r->id;
	a->completion_cookie = (r->id & 1) ? 0 : r->cookie;
	a->num_bpages = 0;
	if (m->msg_name)
		shim_sock_fill_name(s, &r->peer, m->msg_name, &m->msg_namelen);
	if (r->err) {
		e = r->err;
		shim_ready_free(r);
		return shim_sock_fail(s, e, "RPC failed");
	}
	len = r->msg.length;
	if (place(s, r, a->bpage_offsets, &n))
		return no_room(s, r);
	a->num_bpages = n;
	if (r->id & 1)
		track_request(s, r);
	shim_ready_free(r);
	return (ssize_t)len;
}
