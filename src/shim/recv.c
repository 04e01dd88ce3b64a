/* SPDX-License-Identifier: MIT */
/**
 * @file recv.c
 * recvmsg() on a Homa socket (the module's recvmsg(2)): give back the
 * bpages the caller passes in, wait for a message (any message but a
 * private response when homa_recvmsg_args.id is 0; else that private
 * response), and return it as bpage offsets in the registered region.
 *
 * The runtime hands out responses without knowing which are private, so
 * a thread waiting for any message may receive a private one: it parks it
 * for the thread that asks for its id. Waits are cut into slices so that a
 * waiting thread also sees what other threads park or queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim.h"

/** One wait slice inside homa_recv(), in ns. */
#define SHIM_SLICE_NS 20000000
/** How long a response waits for sendmsg() to record its RPC, in ms
 *  (past that it is delivered, with the runtime's cookie, as shared). */
#define SHIM_TRACK_WAIT_MS 5000

/** ready_new() - A shim_ready for homa_recv()'s result @err, @m. */
static struct shim_ready *ready_new(const struct homa_message *m, int err)
{
	struct shim_ready *r = calloc(1, sizeof(*r));

	if (!r) {
		if (!err)
			homa_message_release((struct homa_message *)m);
		return NULL;
	}
	r->id = m->id;
	r->cookie = m->cookie;
	r->peer = m->peer;
	r->err = err ? shim_errno(err) : 0;
	r->has_msg = err == 0;
	if (r->has_msg)
		r->msg = *m;
	return r;
}

/** cond_wait_ms() - Wait on s->cond at most @ms (lock held). */
static void cond_wait_ms(struct shim_sock *s, long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&s->cond, &s->lock, &t);
}

/**
 * classify() - A response or failure a thread waiting for any message
 * got (lock held): its tracked RPC gives the cookie; a private one is
 * parked; an aborted one is dropped. One whose sendmsg() has not recorded
 * it yet is waited for (a while).
 * Return: @r to deliver, or NULL (parked or dropped).
 */
static struct shim_ready *classify(struct shim_sock *s, struct shim_ready *r)
{
	struct shim_rpc *e = shim_rpcs_was_aborted(&s->rpcs, r->id) ? NULL :
			     shim_rpcs_find(&s->rpcs, r->id);

	for (int waited = 0; !e && waited < SHIM_TRACK_WAIT_MS / 20 &&
	     !shim_rpcs_was_aborted(&s->rpcs, r->id) && !s->shut; waited++) {
		cond_wait_ms(s, 20);  /* sendmsg() has not recorded it yet */
		e = shim_rpcs_find(&s->rpcs, r->id);
	}
	if (!e && (shim_rpcs_was_aborted(&s->rpcs, r->id) || s->shut)) {
		shim_ready_free(r);
		return NULL;
	}
	if (!e)  /* not recorded in time: delivered as a shared RPC's */
		return r;
	r->cookie = e->cookie;
	if (e->private_rpc) {
		shim_rpcs_park(&s->rpcs, r);
		pthread_cond_broadcast(&s->cond);
		return NULL;
	}
	shim_rpcs_remove(&s->rpcs, r->id, NULL);
	return r;
}

/**
 * wait_shared() - The next message or failure that is not a private
 * response. Return: it, or NULL with *@e set (EAGAIN, ESHUTDOWN, ...).
 */
static struct shim_ready *wait_shared(struct shim_sock *s, bool nonblock, int *e)
{
	for (;;) {
		struct homa_message m;
		struct shim_ready *r;
		homa_socket *h;
		int flags, err;

		pthread_mutex_lock(&s->lock);
		r = shim_rpcs_pop_shared(&s->rpcs);
		if (r)
			shim_sock_signal(s);
		h = r ? NULL : shim_sock_handle(s);
		*e = errno;
		flags = s->server ? HOMA_RECV_REQUEST | HOMA_RECV_RESPONSE : HOMA_RECV_RESPONSE;
		pthread_mutex_unlock(&s->lock);
		if (r || !h)
			return r;
		memset(&m, 0, sizeof(m));
		err = homa_recv(h, flags, 0, nonblock ? 0 : SHIM_SLICE_NS, &m);
		if (err == HOMA_ETIME)
			continue;
		if (err == HOMA_EAGAIN || (err < 0 && m.id == 0 && err != HOMA_ESHUTDOWN &&
					   err != HOMA_EINVAL)) {
			*e = shim_errno(err);
			return NULL;
		}
		if (err == HOMA_ESHUTDOWN || err == HOMA_EINVAL) {
			pthread_mutex_lock(&s->lock);
			bool again = !s->shut && s->h != h;  /* reopened under us */
			pthread_mutex_unlock(&s->lock);
			if (again)
				continue;
			*e = shim_errno(err);
			return NULL;
		}
		r = ready_new(&m, err);
		if (!r) {
			*e = ENOMEM;
			return NULL;
		}
		if (m.type == HOMA_RECV_REQUEST && err == 0)
			return r;
		pthread_mutex_lock(&s->lock);
		r = classify(s, r);
		pthread_mutex_unlock(&s->lock);
		if (r)
			return r;
	}
}

/**
 * take_parked() - The parked item of private RPC @id (lock held); its
 * tracking ends. Return: it or NULL.
 */
static struct shim_ready *take_parked(struct shim_sock *s, uint64_t id)
{
	struct shim_ready *r = shim_rpcs_unpark(&s->rpcs, id);

	if (r)
		shim_rpcs_remove(&s->rpcs, id, NULL);
	return r;
}

/**
 * private_step() - One look at private RPC @id (lock held): its parked
 * item, or why there will be none. Return: the item, or NULL with *@e 0
 * (keep waiting on *@h) or an errno.
 */
static struct shim_ready *private_step(struct shim_sock *s, uint64_t id,
				       homa_socket **h, int *e)
{
	struct shim_ready *r = take_parked(s, id);
	struct shim_rpc *t;

	*e = 0;
	if (r)
		return r;
	t = shim_rpcs_find(&s->rpcs, id);
	if (s->shut)
		*e = ESHUTDOWN;
	else if (!t || !t->private_rpc)
		*e = EINVAL;
	else if (!(*h = shim_sock_handle(s)))
		*e = errno;
	return NULL;
}

/**
 * wait_private() - The response (or failure) of private client RPC @id.
 * Return: it, or NULL with *@e set (EINVAL: not a private RPC of this
 * socket; EAGAIN; ESHUTDOWN).
 */
static struct shim_ready *wait_private(struct shim_sock *s, uint64_t id, bool nonblock,
				       int *e)
{
	for (;;) {
		struct homa_message m;
		struct shim_ready *r;
		homa_socket *h = NULL;
		int err;

		pthread_mutex_lock(&s->lock);
		r = private_step(s, id, &h, e);
		pthread_mutex_unlock(&s->lock);
		if (r || *e)
			return r;
		memset(&m, 0, sizeof(m));
		err = homa_recv(h, HOMA_RECV_RESPONSE, id, nonblock ? 0 : SHIM_SLICE_NS, &m);
		if (err == HOMA_ETIME || err == HOMA_ESHUTDOWN || err == HOMA_ECANCELED)
			continue;  /* the next step says what happened */
		if (err == HOMA_EAGAIN || err == HOMA_ENOTFOUND) {
			/* ENOTFOUND: a thread waiting for any message took it. */
			pthread_mutex_lock(&s->lock);
			r = private_step(s, id, &h, e);
			if (!r && !*e && !nonblock)
				cond_wait_ms(s, 20);
			pthread_mutex_unlock(&s->lock);
			if (r || *e)
				return r;
			if (nonblock) {
				*e = EAGAIN;
				return NULL;
			}
			continue;
		}
		r = ready_new(&m, err);
		pthread_mutex_lock(&s->lock);
		shim_rpcs_remove(&s->rpcs, id, NULL);
		pthread_mutex_unlock(&s->lock);
		if (!r)
			*e = ENOMEM;
		return r;
	}
}

/**
 * take_args() - Check @m's control block, copy it to @a, and give back
 * the bpages it lists. Return: 0 or an errno (the caller's bpages stay
 * the caller's).
 */
static int take_args(struct shim_sock *s, struct msghdr *m, struct homa_recvmsg_args *a)
{
	int e;

	if (!m || !m->msg_control)
		return shim_sock_fail(s, EINVAL, "no msg_control passed to recvmsg"), EINVAL;
	if (m->msg_controllen != sizeof(*a))
		return shim_sock_fail(s, EINVAL, "invalid msg_controllen in recvmsg"), EINVAL;
	memcpy(a, m->msg_control, sizeof(*a));
	a->completion_cookie = 0;
	if (a->num_bpages > HOMA_MAX_BPAGES)
		return shim_sock_fail(s, EINVAL, "num_pages exceeds HOMA_MAX_BPAGES"), EINVAL;
	if (a->reserved)
		return shim_sock_fail(s, EINVAL, "reserved fields in homa_recvmsg_args "
				      "must be zero"), EINVAL;
	pthread_mutex_lock(&s->lock);
	e = s->pool.base ? shim_pool_free(&s->pool, a->bpage_offsets, a->num_bpages) : -1;
	pthread_mutex_unlock(&s->lock);
	if (e < 0)
		return shim_sock_fail(s, EINVAL, "SO_HOMA_RCVBUF socket option has not been set"),
		       EINVAL;
	if (e)
		return shim_sock_fail(s, EINVAL, "error while releasing buffer pages"), EINVAL;
	a->num_bpages = 0;
	return 0;
}

/** shim_recvmsg() - See the module's recvmsg(2). Return: the message's
 *  length, or -1 with errno. */
ssize_t shim_recvmsg(struct shim_sock *s, struct msghdr *m, int flags)
{
	struct homa_recvmsg_args a;
	struct shim_ready *r;
	bool nonblock;
	ssize_t n;
	int e = take_args(s, m, &a);

	if (e)
		return -1;
	pthread_mutex_lock(&s->lock);
	nonblock = (flags & MSG_DONTWAIT) || s->nonblock;
	pthread_mutex_unlock(&s->lock);
	r = a.id ? wait_private(s, a.id, nonblock, &e) : wait_shared(s, nonblock, &e);
	if (!r) {
		a.id = 0;
		memcpy(m->msg_control, &a, sizeof(a));
		m->msg_controllen = 0;
		return shim_sock_fail(s, e ? e : EIO, e == EINVAL ?
				      "invalid RPC id passed to recvmsg" :
				      "error while waiting for an RPC");
	}
	n = shim_deliver(s, r, m, &a);
	e = errno;
	memcpy(m->msg_control, &a, sizeof(a));
	m->msg_controllen = 0;
	errno = e;
	return n;
}
