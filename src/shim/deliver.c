/* SPDX-License-Identifier: MIT */
/**
 * @file deliver.c
 * The last step of recvmsg(): a message described in homa_recvmsg_args
 * as bpages of the application's region, or a failed RPC returned as its
 * errno with its id and cookie. The runtime receives packets straight
 * into the region (shim_pool_hooks()), so a message is normally handed
 * over where it lies, without a copy; one that arrived (partly) outside
 * it, before SO_HOMA_RCVBUF or while the region was full, is copied into
 * new bpages.
 */
#include <errno.h>
#include <string.h>

#include "shim.h"

/** copy_out() - Copy @r's message into the bpages at @offs. */
static void copy_out(struct shim_sock *s, struct shim_ready *r, const uint32_t *offs,
		     uint32_t n)
{
	size_t len = r->msg.length;

	for (uint32_t i = 0; i < n; i++) {
		size_t at = (size_t)i << HOMA_BPAGE_SHIFT;
		size_t chunk = len - at < HOMA_BPAGE_SIZE ? len - at : HOMA_BPAGE_SIZE;

		homa_message_copy(&r->msg, at, s->pool.base + offs[i], chunk);
	}
}

/**
 * in_place() - Hand over @r's message in the bpages it was received into.
 * Return: true with its offsets in @offs and their count in @n, or false
 * (some piece lies outside the region: copy it).
 */
static bool in_place(struct shim_sock *s, struct shim_ready *r, uint32_t *offs, uint32_t *n)
{
	const void *ptrs[HOMA_MAX_BPAGES];
	uint32_t lens[HOMA_MAX_BPAGES];
	size_t len = r->msg.length;
	uint32_t k = 0;

	for (size_t at = 0; at < len; at += HOMA_BPAGE_SIZE, k++) {
		size_t want = len - at < HOMA_BPAGE_SIZE ? len - at : HOMA_BPAGE_SIZE;

		if (k == HOMA_MAX_BPAGES || homa_message_segment(&r->msg, at, &ptrs[k]) != want)
			return false;
		lens[k] = (uint32_t)want;
	}
	if (!shim_pool_adopt(&s->pool, ptrs, lens, k, offs))
		return false;
	*n = k;
	return true;
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
	if (!in_place(s, r, a->bpage_offsets, &n)) {
		e = shim_pool_alloc(&s->pool, (uint32_t)len, a->bpage_offsets, &n);
		if (e)
			return no_room(s, r);
		copy_out(s, r, a->bpage_offsets, n);
	}
	a->num_bpages = n;
	if (r->id & 1)
		track_request(s, r);
	shim_ready_free(r);
	return (ssize_t)len;
}
