/* SPDX-License-Identifier: MIT */
/**
 * @file send.c
 * Starting client RPCs, replying to requests and aborting RPCs. Sends
 * copy the message (or, zero-copy, borrow the caller's buffers: zc.c)
 * and transmit one batch of what the engine lets out at once from the
 * calling thread (homa_rt_flush_share()); the rest follows from the I/O
 * thread (or poller) as grants and the pacer allow, so a large message
 * does not keep its caller sending while its grants arrive.
 */
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tp.h"

/**
 * check_dst() - Convert @dst for this socket: IPv6 peers need an IPv6
 * socket; the raw driver cannot reach IPv4 peers from an IPv6 socket.
 * Return: 0, HOMA_EINVAL or HOMA_ENOTSUP.
 */
static int check_dst(const struct homa_rt *rt, const struct sockaddr *dst,
		     homa_addr *addr, uint16_t *port)
{
	int err = homa_io_addr_from_sockaddr(dst, addr, port);

	if (err)
		return err;
	if (*port == 0)
		return HOMA_EINVAL;
	if (rt->drv->family == AF_INET && !homa_addr_is_ipv4(addr))
		return HOMA_ENOTSUP;
	if (rt->drv->family == AF_INET6 && homa_addr_is_ipv4(addr) &&
	    !rt->drv->maps_v4)
		return HOMA_ENOTSUP;
	return 0;
}

/** A zero-copy send's release function and its argument. */
struct zc_req {
	homa_release_fn release;
	void *arg;
};

/**
 * send_timeout() - The wait for space a send with per-call timeout
 * @timeout_ns (HOMA_SEND_TIMEOUT_SOCKET: the socket's) gets.
 */
static int64_t send_timeout(const struct homa_rt *rt, int64_t timeout_ns)
{
	return timeout_ns == HOMA_SEND_TIMEOUT_SOCKET ? rt->send_timeout_ns : timeout_ns;
}

/**
 * build_message() - Without rt->lock, make the message of @iov: a copy
 * (the copy of a large message takes milliseconds; under the lock it
 * would stall the I/O thread and every other caller of the socket), or
 * with @zc a message that borrows the caller's buffers and its release
 * record *@z (zc.c).
 * Return: 0, HOMA_EINVAL (NULL list or piece, @iovcnt < 1, lengths that
 * wrap, NULL release), HOMA_EMSGSIZE (longer than settings.max_message),
 * HOMA_ENOMEM.
 */
static int build_message(struct homa_rt *rt, const struct homa_iov *iov, int iovcnt,
			 const struct zc_req *zc, homa_msg **msg, struct rt_zc **z)
{
	uint64_t len;
	int err = iovcnt < 1 ? HOMA_EINVAL : homa_iov_length(iov, iovcnt, &len);

	if (err)
		return err;
	if (len > atomic_load(&rt->max_message))
		return HOMA_EMSGSIZE;
	if (zc)
		return homa_rt_zc_build(rt, iov, iovcnt, zc->release, zc->arg, msg, z);
	/* chunks from the socket's cache, where the engine frees them (pool.h) */
	err = homa_msg_build(&rt->chunk_alloc, iov, iovcnt, msg);
	if (!err)
		atomic_fetch_add_explicit(&rt->built_bytes, len, memory_order_relaxed);
	return err;
}

/**
 * send_locked() - Attach @msg as a new request (if @addr is set) or as
 * the reply to @id, waiting for space while the engine says HOMA_EAGAIN,
 * for @timeout_ns at most (-1: no limit; 0: not at all).
 * Called with rt->lock held. Return: the engine's result or the wait's;
 * on success the engine owns @msg.
 */
static int send_locked(struct homa_rt *rt, const homa_addr *addr, uint16_t port,
		       homa_msg *msg, uint64_t cookie, int64_t timeout_ns, uint64_t *id)
{
	uint64_t now = homa_rt_now(), until = 0;
	int err;

	for (;;) {
		if (rt->closing)
			return HOMA_ESHUTDOWN;
		if (addr)
			err = homa_engine_send_request_msg(rt->engine, addr, port, msg, cookie,
							   now, id);
		else
			err = homa_engine_send_reply_msg(rt->engine, *id, msg, now);
		if (err != HOMA_EAGAIN || timeout_ns == 0)
			return err;  /* not to wait: HOMA_EAGAIN */
		if (!until)  /* the deadline counts from the first attempt */
			until = homa_rt_deadline_at(now, timeout_ns);
		err = homa_rt_wait_space(rt, until);
		if (err)
			return err;
		now = homa_rt_now();
	}
}

/**
 * send_tcp() - Send a request over the TCP transport (homa_tp_send()),
 * with @o's cookie and flags, waiting for space as @o->timeout_ns says.
 * Over TCP the request is written before the call returns, so a
 * zero-copy request's buffers are released at once on success.
 * Return: homa_tp_send()'s result.
 */
static int send_tcp(struct homa_rt *rt, const homa_addr *addr, uint16_t port,
		    const struct homa_iov *iov, int iovcnt, const struct homa_send_opts *o,
		    uint64_t *id, const struct zc_req *zc)
{
	int err = homa_tp_send(rt, addr, port, iov, iovcnt, o->cookie, o->flags,
			       send_timeout(rt, o->timeout_ns), id);

	if (!err && zc)
		zc->release(zc->arg);
	return err;
}

/**
 * request_length() - The bytes @iov holds (0 if it is malformed: the
 * send that follows reports that).
 */
static uint64_t request_length(const struct homa_iov *iov, int iovcnt)
{
	uint64_t len = 0;

	if (iovcnt < 1 || !iov || homa_iov_length(iov, iovcnt, &len))
		return 0;
	return len;
}

/**
 * start_request() - homa_request_iov(), or with @zc homa_request_zc(),
 * with @o's cookie, waiting for space as @o->timeout_ns says
 * (send_timeout()), over the transport @o->hint (enum homa_hint) names or
 * the socket picks, with @o->flags. The release of a zero-copy request is
 * reported only once the call succeeded.
 */
static int start_request(homa_socket *s, const struct sockaddr *dst,
			 const struct homa_iov *iov, int iovcnt, const struct homa_send_opts *o,
			 uint64_t *id, const struct zc_req *zc)
{
	uint64_t cookie = o->cookie;
	int64_t timeout_ns = o->timeout_ns;
	int hint = o->hint;
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	struct rt_zc *z = NULL;
	homa_msg *msg = NULL;
	homa_addr addr;
	uint16_t port;
	int err;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	err = !id || (hint == HOMA_HINT_TCP && !rt->tp) ? HOMA_EINVAL
							 : check_dst(rt, dst, &addr, &port);
	if (!err && homa_tp_route(rt, &addr, port, hint, request_length(iov, iovcnt), o->flags)) {
		err = send_tcp(rt, &addr, port, iov, iovcnt, o, id, zc);
		homa_rt_put(rt);
		return err;
	}
	if (!err)
		err = homa_rt_enc_ready(rt, &addr, port);
	if (!err)
		err = build_message(rt, iov, iovcnt, zc, &msg, &z);
	if (!err) {
		homa_rt_lock(rt);
		err = send_locked(rt, &addr, port, msg, cookie, send_timeout(rt, timeout_ns), id);
		if (!err)
			msg = NULL;  /* the engine's now */
		if (!err && homa_rt_idset_add(&rt->ids, *id)) {
			homa_engine_abort(rt->engine, *id, homa_rt_now());
			err = HOMA_ENOMEM;
		} else if (!err) {
			homa_rt_zc_attached(z);
		}
		homa_rt_unlock_send_out(rt, o->flags & HOMA_SEND_MORE);
	}
	homa_msg_discard(&rt->chunk_alloc, msg);
	if (err == HOMA_EPEERDEAD && hint != HOMA_HINT_HOMA && homa_tp_homa_dead(rt, &addr, port))
		err = send_tcp(rt, &addr, port, iov, iovcnt, o, id, zc);
	homa_rt_put(rt);
	return err;
}

/** homa_request_iov() - See homa.h. */
int homa_request_iov(homa_socket *s, const struct sockaddr *dst,
		     const struct homa_iov *iov, int iovcnt,
		     uint64_t cookie, uint64_t *id)
{
	struct homa_send_opts o;

	homa_send_opts_default(&o);
	o.cookie = cookie;
	return start_request(s, dst, iov, iovcnt, &o, id, NULL);
}

/** homa_request_zc() - See homa.h. */
int homa_request_zc(homa_socket *s, const struct sockaddr *dst,
		    const struct homa_iov *iov, int iovcnt, uint64_t cookie,
		    homa_release_fn release, void *arg, uint64_t *id)
{
	struct zc_req zc = {release, arg};
	struct homa_send_opts o;

	if (!release)
		return HOMA_EINVAL;
	homa_send_opts_default(&o);
	o.cookie = cookie;
	return start_request(s, dst, iov, iovcnt, &o, id, &zc);
}

/** homa_request_buf() - See homa.h. */
int homa_request_buf(homa_socket *s, const struct sockaddr *dst, const void *buf,
		     size_t len, uint64_t cookie, uint64_t *id)
{
	struct homa_iov iov = {buf, len};

	if (!buf && len)
		return HOMA_EINVAL;
	return homa_request_iov(s, dst, &iov, 1, cookie, id);
}

/**
 * send_reply() - homa_reply_iov(), or with @zc homa_reply_zc(); @timeout_ns
 * as start_request(); with @more (HOMA_SEND_MORE) the packets wait for the
 * next flush (homa_rt_unlock_send_out()).
 */
static int send_reply(homa_socket *s, uint64_t id, const struct homa_iov *iov, int iovcnt,
		      const struct zc_req *zc, int64_t timeout_ns, bool more)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	struct rt_zc *z = NULL;
	homa_msg *msg = NULL;
	int err;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	err = homa_tp_reply(rt, id, iov, iovcnt);
	if (err != TP_NOT_MINE) { /* a request that came over TCP */
		if (!err && zc)
			zc->release(zc->arg);
		homa_rt_put(rt);
		return err;
	}
	err = build_message(rt, iov, iovcnt, zc, &msg, &z);
	if (!err) {
		homa_rt_lock(rt);
		err = homa_rt_enc_can_reply(rt, id);
		if (!err)
			err = send_locked(rt, NULL, 0, msg, 0, send_timeout(rt, timeout_ns), &id);
		if (!err) {
			msg = NULL;
			homa_rt_partial_end(rt, id);
			homa_rt_zc_attached(z);
		}
		homa_rt_unlock_send_out(rt, more);
	}
	homa_msg_discard(&rt->chunk_alloc, msg);
	homa_rt_put(rt);
	return err;
}

/** homa_reply_iov() - See homa.h. */
int homa_reply_iov(homa_socket *s, uint64_t id, const struct homa_iov *iov,
		   int iovcnt)
{
	return send_reply(s, id, iov, iovcnt, NULL, HOMA_SEND_TIMEOUT_SOCKET, false);
}

/** homa_reply_zc() - See homa.h. */
int homa_reply_zc(homa_socket *s, uint64_t id, const struct homa_iov *iov, int iovcnt,
		  homa_release_fn release, void *arg)
{
	struct zc_req zc = {release, arg};

	if (!release)
		return HOMA_EINVAL;
	return send_reply(s, id, iov, iovcnt, &zc, HOMA_SEND_TIMEOUT_SOCKET, false);
}

/** homa_reply_buf() - See homa.h. */
int homa_reply_buf(homa_socket *s, uint64_t id, const void *buf, size_t len)
{
	struct homa_iov iov = {buf, len};

	if (!buf && len)
		return HOMA_EINVAL;
	return homa_reply_iov(s, id, &iov, 1);
}

/** homa_send_opts_default() - See homa.h. */
void homa_send_opts_default(struct homa_send_opts *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->timeout_ns = HOMA_SEND_TIMEOUT_SOCKET;
}

/**
 * import_opts() - Copy the caller's @o (NULL: defaults) into @out, reading
 * only @o->size bytes, and point *@zcp at @zc filled with its release
 * function (NULL when the send copies). Return: 0, or HOMA_EINVAL (size
 * below HOMA_SEND_OPTS_SIZE_MIN or above this library's struct, a
 * timeout below -1 other than HOMA_SEND_TIMEOUT_SOCKET, an unknown hint or
 * flag).
 */
static int import_opts(const struct homa_send_opts *o, struct homa_send_opts *out,
		       struct zc_req *zc, const struct zc_req **zcp)
{
	homa_send_opts_default(out);
	if (o && (o->size < HOMA_SEND_OPTS_SIZE_MIN || o->size > sizeof(*out)))
		return HOMA_EINVAL;
	if (o)
		memcpy(out, o, o->size);
	if ((out->timeout_ns < -1 && out->timeout_ns != HOMA_SEND_TIMEOUT_SOCKET) ||
	    out->hint < HOMA_HINT_NONE || out->hint > HOMA_HINT_TCP ||
	    (out->flags & ~(HOMA_SEND_LATENCY | HOMA_SEND_MORE)))
		return HOMA_EINVAL;
	zc->release = out->release;
	zc->arg = out->arg;
	*zcp = out->release ? zc : NULL;
	return 0;
}

/** homa_request_opts() - See homa.h. */
int homa_request_opts(homa_socket *s, const struct sockaddr *dst,
		      const struct homa_iov *iov, int iovcnt,
		      const struct homa_send_opts *o, uint64_t *id)
{
	struct homa_send_opts v;
	const struct zc_req *zcp;
	struct zc_req zc;
	int err = import_opts(o, &v, &zc, &zcp);

	return err ? err : start_request(s, dst, iov, iovcnt, &v, id, zcp);
}

/** homa_reply_opts() - See homa.h. */
int homa_reply_opts(homa_socket *s, uint64_t id, const struct homa_iov *iov, int iovcnt,
		    const struct homa_send_opts *o)
{
	struct homa_send_opts v;
	const struct zc_req *zcp;
	struct zc_req zc;
	int err = import_opts(o, &v, &zc, &zcp);

	return err ? err : send_reply(s, id, iov, iovcnt, zcp, v.timeout_ns,
				      v.flags & HOMA_SEND_MORE);
}

/*
 * The earlier names: aliases of the same functions (one symbol address,
 * no wrapper), so programs built against them keep working.
 */
int homa_send(homa_socket *s, const struct sockaddr *dst, const void *buf, size_t len,
	      uint64_t cookie, uint64_t *id) __attribute__((alias("homa_request_buf")));
int homa_send_request(homa_socket *s, const struct sockaddr *dst,
		      const struct homa_iov *iov, int iovcnt, uint64_t cookie,
		      uint64_t *id) __attribute__((alias("homa_request_iov")));
int homa_send_request_zc(homa_socket *s, const struct sockaddr *dst,
			 const struct homa_iov *iov, int iovcnt, uint64_t cookie,
			 homa_release_fn release, void *arg,
			 uint64_t *id) __attribute__((alias("homa_request_zc")));
int homa_reply(homa_socket *s, uint64_t id, const struct homa_iov *iov,
	       int iovcnt) __attribute__((alias("homa_reply_iov")));

/**
 * cancel_waiter() - Give a thread waiting for client RPC @id an
 * HOMA_ECANCELED result. Called with rt->lock held.
 */
static void cancel_waiter(struct homa_rt *rt, uint64_t id)
{
	struct rt_item *item;

	for (struct rt_waiter *w = rt->waiters; w; w = w->next) {
		if (w->id != id)
			continue;
		item = calloc(1, sizeof(*item));
		if (!item)
			return;
		item->ev.type = HOMA_EV_ERROR;
		item->ev.id = id;
		item->ev.error = HOMA_ECANCELED;
		homa_rt_deliver(rt, item);
		return;
	}
}

/**
 * abort_locked() - Abort @id: drop a queued message for it, or ask the
 * engine. Called with rt->lock held. Return: 0 or HOMA_ENOTFOUND.
 */
static int abort_locked(struct homa_rt *rt, uint64_t id)
{
	struct rt_item *item = homa_rt_take(rt, HOMA_RECV_REQUEST | HOMA_RECV_RESPONSE, id);
	int err = 0;

	if (item) {
		if (item->ev.msg)
			homa_engine_msg_release(rt->engine, item->ev.msg);
		if (item->ev.type == HOMA_EV_REQUEST && homa_tp_abort(rt->tp, id))
			homa_engine_abort(rt->engine, id, homa_rt_now());
		homa_rt_item_put(rt, item);
	} else if (homa_tp_abort(rt->tp, id)) {
		err = homa_engine_abort(rt->engine, id, homa_rt_now());
	}
	if (id & 1)
		homa_rt_partial_end(rt, id);
	if (!(id & 1)) {
		if (err && homa_rt_idset_has(&rt->ids, id))
			err = 0;
		homa_rt_idset_del(&rt->ids, id);
		if (!err)
			cancel_waiter(rt, id);
	}
	homa_rt_collect(rt);
	return err;
}

/** homa_abort() - See homa.h. */
int homa_abort(homa_socket *s, uint64_t id)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int err;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	if (id == 0) {
		homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	homa_rt_lock(rt);
	err = rt->closing ? HOMA_ESHUTDOWN : abort_locked(rt, id);
	homa_rt_unlock(rt);
	homa_rt_flush(rt);
	if (rt->mode == HOMA_MODE_POLLED)
		homa_rt_kick(rt);
	homa_rt_put(rt);
	return err;
}
