/* SPDX-License-Identifier: MIT */
/**
 * @file tp_api.c
 * The transport layer's hooks into the runtime (tp.h): opening and
 * closing it, routing a request, sending, replying, aborting, counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp.h"

/** listen_on() - A TCP listener at the socket's address and port. Return: 0 or a homa error. */
static int listen_on(struct homa_tp *tp, const struct homa_driver *drv)
{
	struct sockaddr_storage ss;
	int one = 1, len = homa_io_addr_to_sockaddr(drv->family, &drv->local, drv->port, &ss);

	if (len < 0)
		return HOMA_EIO;
	tp->listen_fd = socket(drv->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (tp->listen_fd < 0)
		return homa_io_errno(errno);
	setsockopt(tp->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (drv->family == AF_INET6) {
		int off = !drv->maps_v4;

		setsockopt(tp->listen_fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	}
	if (bind(tp->listen_fd, (struct sockaddr *)&ss, (socklen_t)len) < 0 ||
	    listen(tp->listen_fd, 128) < 0)
		return homa_io_errno(errno);
	return 0;
}

/** set_limits() - Copy the engine's limits and @o's AUTO timing into @tp. */
static void set_limits(struct homa_tp *tp, const struct homa_open_opts *o)
{
	const struct homa_settings *st = homa_engine_settings(tp->rt->engine);
	uint64_t timeout = (uint64_t)st->timeout_ticks * st->tick_ns;

	tp->max_tx = st->max_tx_buffered;
	tp->max_message = st->max_message > UINT32_MAX ? UINT32_MAX : st->max_message;
	tp->connect_ns = timeout > 1000000000 ? timeout : 1000000000;
	tp->fallback_ns = (o->auto_fallback_ms ? o->auto_fallback_ms : 50) * 1000000ull;
	tp->retry_ns = (o->auto_retry_ms ? o->auto_retry_ms : 1000) * 1000000ull;
	tp->tcp_min_bytes = o->auto_tcp_min_bytes;
}

/** homa_tp_open() - See tp.h. */
int homa_tp_open(struct homa_rt *rt, const struct homa_open_opts *o)
{
	struct homa_tp *tp;
	int err;

	if (o->transport == HOMA_TRANSPORT_HOMA)
		return 0;
	if ((o->transport != HOMA_TRANSPORT_TCP && o->transport != HOMA_TRANSPORT_AUTO) ||
	    o->driver != HOMA_DRIVER_UDP || o->encrypt)
		return HOMA_EINVAL;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return HOMA_ENOMEM;
	rt->tp = tp;
	tp->rt = rt;
	tp->transport = o->transport;
	tp->port = rt->drv->port;
	tp->family = rt->drv->family;
	tp->listen_fd = -1;
	pthread_mutex_init(&tp->lock, NULL);
	pthread_cond_init(&tp->space, NULL);
	set_limits(tp, o);
	tp->epfd = epoll_create1(EPOLL_CLOEXEC);
	tp->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	tp->rx_epfd = epoll_create1(EPOLL_CLOEXEC);
	tp->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tp->epfd < 0 || tp->stop_fd < 0 || tp->rx_epfd < 0 || tp->kick_fd < 0)
		return HOMA_EIO;
	err = o->server ? listen_on(tp, rt->drv) : 0;
	return err ? err : tp_thread_start(tp);
}

/** free_val() - foreach callback: free the record an RPC table points to. */
static void free_val(uint64_t id, uint64_t val, void *ctx)
{
	(void)id;
	(void)ctx;
	free((void *)(uintptr_t)val);
}

/** homa_tp_close() - See tp.h. */
void homa_tp_close(struct homa_rt *rt)
{
	struct homa_tp *tp = rt->tp;

	if (!tp)
		return;
	tp_thread_stop(tp);
	while (tp->conns)
		tp_conn_fail(tp, tp->conns, HOMA_ESHUTDOWN);
	while (tp->peers) {
		struct tp_peer *p = tp->peers;

		tp->peers = p->next;
		free(p);
	}
	homa_rt_idset_foreach(&tp->crpcs, free_val, NULL);
	homa_rt_idset_foreach(&tp->srpcs, free_val, NULL);
	homa_rt_idset_free(&tp->crpcs);
	homa_rt_idset_free(&tp->srpcs);
	int fds[] = {tp->listen_fd, tp->epfd, tp->stop_fd, tp->rx_epfd, tp->kick_fd};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	pthread_mutex_destroy(&tp->lock);
	pthread_cond_destroy(&tp->space);
	free(tp);
	rt->tp = NULL;
}

/**
 * bulk() - AUTO: whether a request of @len bytes with @flags goes over
 * TCP by its size (a peer Homa reaches; see homa_tp_route()).
 */
static bool bulk(const struct homa_tp *tp, uint64_t len, uint32_t flags)
{
	return tp->tcp_min_bytes && len >= tp->tcp_min_bytes && !(flags & HOMA_SEND_LATENCY);
}

/** homa_tp_route() - See tp.h. */
bool homa_tp_route(struct homa_rt *rt, const homa_addr *addr, uint16_t port, int hint,
		   uint64_t len, uint32_t flags)
{
	struct homa_tp *tp = rt->tp;
	struct tp_peer *p;
	bool tcp;

	if (!tp)
		return false;
	if (hint == HOMA_HINT_TCP || (hint == HOMA_HINT_NONE && tp->transport == HOMA_TRANSPORT_TCP))
		return true;
	pthread_mutex_lock(&tp->lock);
	if (hint == HOMA_HINT_HOMA) {
		tp->st.homa_rpcs++;
		pthread_mutex_unlock(&tp->lock);
		return false;
	}
	p = tp_peer_get(tp, addr, port);
	tcp = p && (tp_auto_route(tp, p, homa_rt_now()) || bulk(tp, len, flags));
	if (p && !tcp) {
		if (!p->wait_since)
			p->wait_since = homa_rt_now();
		tp->st.homa_rpcs++;
	}
	pthread_mutex_unlock(&tp->lock);
	return tcp;
}

/**
 * wait_budget() - tp->lock held: wait until @len more request bytes fit
 * tp->max_tx (an empty budget always takes one), at most @t ns (0: not
 * at all; < 0: for ever).
 * Return: 0 (charged), HOMA_EAGAIN, HOMA_ETIME or HOMA_ESHUTDOWN.
 */
static int wait_budget(struct homa_tp *tp, uint64_t len, int64_t t)
{
	uint64_t until = homa_rt_deadline(t);

	while (tp->tx_buffered && tp->tx_buffered + len > tp->max_tx) {
		uint64_t now = homa_rt_now(), slice = now + 10000000;
		struct timespec ts;

		if (atomic_load(&tp->rt->closing))
			return HOMA_ESHUTDOWN;
		if (t == 0)
			return HOMA_EAGAIN;
		if (now >= until)
			return HOMA_ETIME;
		clock_gettime(CLOCK_REALTIME, &ts);
		slice = (slice < until ? slice : until) - now + (uint64_t)ts.tv_nsec;
		ts.tv_sec += (time_t)(slice / 1000000000);
		ts.tv_nsec = (long)(slice % 1000000000);
		pthread_cond_timedwait(&tp->space, &tp->lock, &ts);
	}
	tp->tx_buffered += len;
	return 0;
}

/**
 * register_rpc() - Take an id for a request of @len bytes to @p and
 * enter it in both tables. Return: 0 (*@out set) or HOMA_ENOMEM.
 */
static int register_rpc(struct homa_tp *tp, struct tp_peer *p, uint64_t len,
			uint64_t cookie, struct tp_crpc **out)
{
	struct homa_rt *rt = tp->rt;
	struct tp_crpc *r = calloc(1, sizeof(*r));
	int err = r ? 0 : HOMA_ENOMEM;

	homa_rt_lock(rt);
	if (!err && rt->closing)
		err = HOMA_ESHUTDOWN;
	if (!err) {
		*r = (struct tp_crpc){.id = homa_engine_reserve_id(rt->engine, false),
				      .cookie = cookie, .start_ns = homa_rt_now(), .len = len,
				      .addr = p->addr, .port = p->port};
		err = homa_rt_idset_add(&rt->ids, r->id);
	}
	if (!err) {
		pthread_mutex_lock(&tp->lock);
		err = homa_rt_idset_put(&tp->crpcs, r->id, (uint64_t)(uintptr_t)r);
		if (err)
			homa_rt_idset_del(&rt->ids, r->id);
		else
			tp->st.tcp_rpcs++;
		pthread_mutex_unlock(&tp->lock);
	}
	homa_rt_unlock(rt);
	if (err)
		free(r);
	else
		*out = r;
	return err;
}

/**
 * unreachable() - The request of @r could not get a connection: end it
 * with @error, reported by homa_recv().
 */
static void unreachable(struct homa_tp *tp, struct tp_crpc *r, int error)
{
	uint64_t id = r->id, cookie = r->cookie, start = r->start_ns;
	homa_addr addr = r->addr;
	uint16_t port = r->port;

	pthread_mutex_lock(&tp->lock);
	tp->st.tcp_conn_errors++;
	tp_crpc_end(tp, r);
	pthread_mutex_unlock(&tp->lock);
	tp_deliver(tp, HOMA_EV_ERROR, id, cookie, &addr, port, NULL, start, error);
}

/** homa_tp_send() - See tp.h. */
int homa_tp_send(struct homa_rt *rt, const homa_addr *addr, uint16_t port,
		 const struct homa_iov *iov, int iovcnt, uint64_t cookie, uint32_t flags,
		 int64_t timeout_ns, uint64_t *id)
{
	struct homa_tp *tp = rt->tp;
	struct tp_crpc *r = NULL;
	struct tp_conn *c = NULL;
	struct tp_peer *p;
	uint64_t len;
	int err = iovcnt < 1 ? HOMA_EINVAL : homa_iov_length(iov, iovcnt, &len);

	if (err)
		return err;
	if (len > atomic_load(&rt->max_message) || len > tp->max_message)
		return HOMA_EMSGSIZE;
	pthread_mutex_lock(&tp->lock);
	p = tp_peer_get(tp, addr, port);
	err = p ? wait_budget(tp, len, timeout_ns) : HOMA_ENOMEM;
	pthread_mutex_unlock(&tp->lock);
	if (err)
		return err;
	err = register_rpc(tp, p, len, cookie, &r);
	if (err) {
		pthread_mutex_lock(&tp->lock);
		tp->tx_buffered -= len;
		pthread_cond_broadcast(&tp->space);
		pthread_mutex_unlock(&tp->lock);
		return err;
	}
	*id = r->id;
	err = flags & HOMA_SEND_LATENCY ? tp_express_get(tp, p, &c) : tp_pool_get(tp, p, &c);
	if (err) {
		unreachable(tp, r, err == HOMA_ENOSERVER ? HOMA_ENOSERVER : HOMA_ETIMEDOUT);
		return 0;
	}
	pthread_mutex_lock(&tp->lock);
	bool dead = c->dead;

	if (!dead)
		r->conn = c; /* before the request leaves: its response is matched to c */
	pthread_mutex_unlock(&tp->lock);
	if (dead) {
		unreachable(tp, r, HOMA_ETIMEDOUT);
		tp_conn_put(c);
		return 0;
	}
	if (tp_write(tp, c, &(struct tp_hdr){(uint32_t)len, TP_REQUEST, *id}, iov, iovcnt))
		shutdown(c->fd, SHUT_RDWR); /* the thread sees it and fails its RPCs */
	tp_conn_put(c);
	return 0;
}

/**
 * remember_answered() - tp->lock held: @r was answered; keep it (a
 * second reply is HOMA_ESTATE) until TP_ANSWERED later answers push it out.
 */
static void remember_answered(struct homa_tp *tp, struct tp_srpc *r)
{
	uint64_t old = tp->answered[tp->answered_pos], val;

	if (old && homa_rt_idset_get(&tp->srpcs, old, &val)) {
		homa_rt_idset_del(&tp->srpcs, old);
		free((void *)(uintptr_t)val);
	}
	r->answered = true;
	tp->answered[tp->answered_pos] = r->handle;
	tp->answered_pos = (tp->answered_pos + 1) % TP_ANSWERED;
}

/** homa_tp_reply() - See tp.h. */
int homa_tp_reply(struct homa_rt *rt, uint64_t id, const struct homa_iov *iov, int iovcnt)
{
	struct homa_tp *tp = rt->tp;
	struct tp_srpc *r;
	struct tp_conn *c = NULL;
	uint64_t val, len, client_id = 0;
	bool announced = false;
	int err;

	if (!tp)
		return TP_NOT_MINE;
	pthread_mutex_lock(&tp->lock);
	if (!homa_rt_idset_get(&tp->srpcs, id, &val)) {
		pthread_mutex_unlock(&tp->lock);
		return TP_NOT_MINE;
	}
	r = (struct tp_srpc *)(uintptr_t)val;
	err = iovcnt < 1 ? HOMA_EINVAL : homa_iov_length(iov, iovcnt, &len);
	if (!err && (len > atomic_load(&rt->max_message) || len > UINT32_MAX))
		err = HOMA_EMSGSIZE;
	if (!err && (r->answered || r->rx_body))
		err = HOMA_ESTATE; /* answered, or its request still arriving */
	if (!err) {
		c = r->conn;
		client_id = r->client_id;
		announced = r->announced;
		if (c)
			atomic_fetch_add(&c->refs, 1);
		remember_answered(tp, r);
	}
	pthread_mutex_unlock(&tp->lock);
	if (announced) { /* the runtime kept the request for partial reads */
		homa_rt_lock(rt);
		homa_rt_partial_end(rt, id);
		homa_rt_unlock(rt);
	}
	if (err || !c)
		return err;
	if (tp_write(tp, c, &(struct tp_hdr){(uint32_t)len, TP_RESPONSE, client_id}, iov, iovcnt))
		shutdown(c->fd, SHUT_RDWR);
	tp_conn_put(c);
	return 0;
}

/** homa_tp_abort() - See tp.h. */
int homa_tp_abort(struct homa_tp *tp, uint64_t id)
{
	uint64_t val;
	int err = HOMA_ENOTFOUND;

	if (!tp)
		return err;
	pthread_mutex_lock(&tp->lock);
	if (homa_rt_idset_get(&tp->crpcs, id, &val)) {
		tp_crpc_end(tp, (struct tp_crpc *)(uintptr_t)val);
		err = 0;
	} else if (homa_rt_idset_get(&tp->srpcs, id, &val)) {
		homa_rt_idset_del(&tp->srpcs, id);
		free((void *)(uintptr_t)val);
		err = 0;
	}
	pthread_mutex_unlock(&tp->lock);
	return err;
}

/** homa_transport_stats() - See homa.h. */
int homa_transport_stats(homa_socket *s, struct homa_transport_stats *out)
{
	struct homa_rt *rt = s ? homa_rt_get(s) : NULL;
	struct homa_tp *tp;

	if (!s || !out) {
		if (rt)
			homa_rt_put(rt);
		return HOMA_EINVAL;
	}
	if (!rt)
		return HOMA_ESHUTDOWN;
	tp = rt->tp;
	memset(out, 0, sizeof(*out));
	if (tp) {
		pthread_mutex_lock(&tp->lock);
		*out = tp->st;
		pthread_mutex_unlock(&tp->lock);
		out->tcp_tx_bytes = atomic_load(&tp->tx_bytes);
		out->tcp_rx_bytes = atomic_load(&tp->rx_bytes);
	}
	homa_rt_put(rt);
	return 0;
}

/** homa_tp_metrics() - See tp.h. */
size_t homa_tp_metrics(struct homa_rt *rt, struct homa_metric_value *ex)
{
	static const char *rpcs_help = "Client RPCs started, by the transport that carried them.";
	static const char *sw_help = "AUTO: peers moved to the transport named by the label.";
	struct homa_transport_stats st;

	if (!rt->tp)
		return 0;
	pthread_mutex_lock(&rt->tp->lock);
	st = rt->tp->st;
	pthread_mutex_unlock(&rt->tp->lock);
	ex[0] = (struct homa_metric_value){.name = "transport_rpcs", .help = rpcs_help,
		.kind = HOMA_METRIC_COUNTER, .value = (double)st.homa_rpcs,
		.label = "transport", .label_value = "homa"};
	ex[1] = (struct homa_metric_value){.name = "transport_rpcs", .help = rpcs_help,
		.kind = HOMA_METRIC_COUNTER, .value = (double)st.tcp_rpcs,
		.label = "transport", .label_value = "tcp"};
	ex[2] = (struct homa_metric_value){.name = "transport_tcp_requests",
		.help = "Requests received over TCP.", .kind = HOMA_METRIC_COUNTER,
		.value = (double)st.tcp_requests};
	ex[3] = (struct homa_metric_value){.name = "transport_auto_switches", .help = sw_help,
		.kind = HOMA_METRIC_COUNTER, .value = (double)st.auto_to_tcp,
		.label = "to", .label_value = "tcp"};
	ex[4] = (struct homa_metric_value){.name = "transport_auto_switches", .help = sw_help,
		.kind = HOMA_METRIC_COUNTER, .value = (double)st.auto_to_homa,
		.label = "to", .label_value = "homa"};
	return 5;
}
