/* SPDX-License-Identifier: MIT */
/**
 * @file send.c
 * Starting client RPCs, replying to requests and aborting RPCs. Sends
 * copy the message into the engine and transmit what the engine lets out
 * at once from the calling thread; the rest follows from the I/O thread
 * (or poller) as grants and the pacer allow.
 */
#include <stdlib.h>

#include "rt.h"

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

/**
 * send_locked() - Call the engine's send (request if @addr is set, else
 * reply to @id), waiting for space while it says HOMA_EAGAIN.
 * Called with rt->lock held. Return: the engine's result or the wait's.
 */
static int send_locked(struct homa_rt *rt, const homa_addr *addr, uint16_t port,
		       const struct homa_iov *iov, int iovcnt, uint64_t cookie,
		       uint64_t *id)
{
	uint64_t until = homa_rt_deadline(rt->send_timeout_ns);
	int err;

	for (;;) {
		if (rt->closing)
			return HOMA_ESHUTDOWN;
		if (addr)
			err = homa_engine_send_request(rt->engine, addr, port, iov, iovcnt,
						       cookie, homa_rt_now(), id);
		else
			err = homa_engine_send_reply(rt->engine, *id, iov, iovcnt,
						     homa_rt_now());
		if (err != HOMA_EAGAIN)
			return err;
		err = homa_rt_wait_space(rt, until);
		if (err)
			return err;
	}
}

/** homa_send_request() - See homa.h. */
int homa_send_request(homa_socket *s, const struct sockaddr *dst,
		      const struct homa_iov *iov, int iovcnt,
		      uint64_t cookie, uint64_t *id)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	homa_addr addr;
	uint16_t port;
	int err;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	err = (!iov || iovcnt < 1 || !id) ? HOMA_EINVAL : check_dst(rt, dst, &addr, &port);
	if (!err)
		err = homa_rt_enc_ready(rt, &addr, port);
	if (!err) {
		homa_rt_lock(rt);
		err = send_locked(rt, &addr, port, iov, iovcnt, cookie, id);
		if (!err && homa_rt_idset_add(&rt->ids, *id)) {
			homa_engine_abort(rt->engine, *id, homa_rt_now());
			err = HOMA_ENOMEM;
		}
		homa_rt_unlock(rt);
		homa_rt_flush(rt);
	}
	homa_rt_put(rt);
	return err;
}

/** homa_send() - See homa.h. */
int homa_send(homa_socket *s, const struct sockaddr *dst, const void *buf,
	      size_t len, uint64_t cookie, uint64_t *id)
{
	struct homa_iov iov = {buf, len};

	if (!buf)
		return HOMA_EINVAL;
	return homa_send_request(s, dst, &iov, 1, cookie, id);
}

/** homa_reply() - See homa.h. */
int homa_reply(homa_socket *s, uint64_t id, const struct homa_iov *iov,
	       int iovcnt)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	int err = HOMA_EINVAL;

	if (!rt)
		return s ? HOMA_ESHUTDOWN : HOMA_EINVAL;
	if (iov && iovcnt >= 1) {
		homa_rt_lock(rt);
		err = send_locked(rt, NULL, 0, iov, iovcnt, 0, &id);
		homa_rt_unlock(rt);
		homa_rt_flush(rt);
	}
	homa_rt_put(rt);
	return err;
}

/** homa_reply_buf() - See homa.h. */
int homa_reply_buf(homa_socket *s, uint64_t id, const void *buf, size_t len)
{
	struct homa_iov iov = {buf, len};

	if (!buf)
		return HOMA_EINVAL;
	return homa_reply(s, id, &iov, 1);
}

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
		if (item->ev.type == HOMA_EV_REQUEST)
			homa_engine_abort(rt->engine, id, homa_rt_now());
		free(item);
	} else {
		err = homa_engine_abort(rt->engine, id, homa_rt_now());
	}
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
