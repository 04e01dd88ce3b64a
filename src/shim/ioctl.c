/* SPDX-License-Identifier: MIT */
/**
 * @file ioctl.c
 * The module's ioctls (homa(7)): HOMAIOCINFO (socket status and its
 * RPCs) and HOMAIOCABORT (abort client RPCs, silently or completing them
 * with an errno that recvmsg() returns).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/** Where HOMAIOCINFO writes the RPCs it lists. */
struct info_out {
	struct shim_sock *s;
	struct homa_rpc_info *arr;
	uint64_t cap, n;
};

/** parked() - Whether @id's response waits in the park (lock held). */
static bool parked(struct shim_sock *s, uint64_t id)
{
	for (struct shim_ready *r = s->rpcs.parked; r; r = r->next)
		if (r->id == id)
			return true;
	return false;
}

/**
 * put_info() - One RPC into the caller's array. Fields the public API
 * does not expose (transmit and grant progress, gaps) are 0; lengths not
 * known are -1 (docs/LINUX_API.md).
 */
static void put_info(const struct shim_rpc *e, void *arg)
{
	struct info_out *o = arg;
	struct homa_rpc_info i;

	if (o->n >= o->cap)
		return;
	memset(&i, 0, sizeof(i));
	i.id = e->id;
	memcpy(&i.peer.storage, &e->peer, sizeof(e->peer));
	i.completion_cookie = e->cookie;
	i.tx_length = e->tx_length;
	i.rx_length = e->rx_length;
	i.flags = (e->private_rpc ? HOMA_RPC_PRIVATE : 0) |
		  (parked(o->s, e->id) ? HOMA_RPC_RX_READY : 0);
	memcpy(&o->arr[o->n++], &i, sizeof(i));
}

/** info() - HOMAIOCINFO. Return: 0 or -1 with errno. */
static int info(struct shim_sock *s, struct homa_info *a)
{
	struct info_out o = { .s = s };
	const char *msg;

	if (!a)
		return shim_sock_fail(s, EFAULT, "invalid address for homa_info");
	o.arr = (struct homa_rpc_info *)(uintptr_t)a->rpc_info;
	o.cap = o.arr ? a->rpc_info_length / sizeof(struct homa_rpc_info) : 0;
	pthread_mutex_lock(&s->lock);
	if (!shim_sock_handle(s) && !s->shut) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	a->port = s->port;
	a->bpool_avail_bytes = s->pool.base ? shim_pool_avail(&s->pool) : 0;
	a->num_rpcs = shim_rpcs_each(&s->rpcs, put_info, &o);
	pthread_mutex_unlock(&s->lock);
	msg = __atomic_load_n(&s->error_msg, __ATOMIC_RELAXED);
	memset(a->error_msg, 0, sizeof(a->error_msg));
	strncpy(a->error_msg, msg ? msg : "", sizeof(a->error_msg) - 1);
	return 0;
}

/**
 * end_rpc() - Stop tracking client RPC @e (lock held); with @error, queue
 * its failure for recvmsg() (parked if private). Return: 0 or ENOMEM.
 */
static int end_rpc(struct shim_sock *s, struct shim_rpc *e, uint32_t error)
{
	struct shim_ready *old = shim_rpcs_unpark(&s->rpcs, e->id);
	struct shim_ready *r = NULL;

	if (old)
		shim_ready_free(old);  /* a response that arrived is discarded */
	if (error) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return ENOMEM;
		r->id = e->id;
		r->cookie = e->cookie;
		r->peer = e->peer;
		r->err = (int)error;
		if (e->private_rpc)
			shim_rpcs_park(&s->rpcs, r);
		else
			shim_rpcs_push_shared(&s->rpcs, r);
	}
	shim_rpcs_mark_aborted(&s->rpcs, e->id);
	shim_rpcs_remove(&s->rpcs, e->id, NULL);
	return 0;
}

/** Ids collected under the lock, aborted in the runtime after it. */
struct id_list {
	uint64_t *ids;
	size_t n, cap;
};

/** add_client() - shim_rpcs_each() callback: collect client RPC ids. */
static void add_client(const struct shim_rpc *e, void *arg)
{
	struct id_list *l = arg;

	if ((e->id & 1) || l->n >= l->cap)
		return;
	l->ids[l->n++] = e->id;
}

/** abort_rpcs() - HOMAIOCABORT. Return: 0 or -1 with errno. */
static int abort_rpcs(struct shim_sock *s, const struct homa_abort_args *a)
{
	struct id_list l = { 0 };
	homa_socket *h;
	int e = 0;

	if (!a)
		return shim_sock_fail(s, EFAULT, "invalid address for homa_abort_args");
	if (a->_pad1 || a->_pad2[0] || a->_pad2[1])
		return shim_sock_fail(s, EINVAL, "reserved fields in homa_abort_args must be zero");
	pthread_mutex_lock(&s->lock);
	l.cap = a->id ? 1 : s->rpcs.count;
	l.ids = calloc(l.cap ? l.cap : 1, sizeof(*l.ids));
	if (!l.ids) {
		e = ENOMEM;
	} else if (a->id) {
		struct shim_rpc *r = shim_rpcs_find(&s->rpcs, a->id);

		if (r && !(r->id & 1))
			l.ids[l.n++] = a->id;
	} else {
		shim_rpcs_each(&s->rpcs, add_client, &l);
	}
	for (size_t i = 0; !e && i < l.n; i++)
		e = end_rpc(s, shim_rpcs_find(&s->rpcs, l.ids[i]), a->error);
	h = s->h;
	shim_sock_signal(s);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; h && i < l.n; i++)
		homa_abort(h, l.ids[i]);  /* HOMA_ENOTFOUND: it finished meanwhile */
	free(l.ids);
	return e ? shim_sock_fail(s, e, "no memory to abort the RPCs") : 0;
}

/** shim_ioctl() - See homa(7). Return: 0 or -1 with errno. */
int shim_ioctl(struct shim_sock *s, unsigned long req, void *arg)
{
	if (req == HOMAIOCINFO)
		return info(s, arg);
	if (req == HOMAIOCABORT)
		return abort_rpcs(s, arg);
	if (req == HOMAIOCFREEZE) {
		shim_unsupported("HOMAIOCFREEZE (the module's time trace)");
		return shim_sock_fail(s, EINVAL, "HOMAIOCFREEZE is not supported by the shim");
	}
	shim_unsupported("this ioctl on a Homa socket");
	return shim_sock_fail(s, EINVAL, "ioctl opcode isn't supported by Homa");
}
