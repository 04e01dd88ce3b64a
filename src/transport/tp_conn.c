/* SPDX-License-Identifier: MIT */
/**
 * @file tp_conn.c
 * TCP connections of the transport layer: opening them (with the
 * preface), the per-peer pool, writing frames and losing connections.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tp.h"

/** Largest number of iovecs one writev() gets here. */
#define TP_MAX_VEC 64

/** tp_conn_new() - See tp.h. */
struct tp_conn *tp_conn_new(struct homa_tp *tp, int fd, bool accepted)
{
	struct tp_conn *c = calloc(1, sizeof(*c));
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP};
	int one = 1;

	if (!c || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		free(c);
		close(fd);
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->refs = 1;
	c->accepted = accepted;
	pthread_mutex_init(&c->wlock, NULL);
	ev.data.ptr = c;
	if (epoll_ctl(tp->rx_epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		pthread_mutex_destroy(&c->wlock);
		free(c);
		close(fd);
		return NULL;
	}
	c->next = tp->conns;
	tp->conns = c;
	return c;
}

/** tp_conn_put() - See tp.h. */
void tp_conn_put(struct tp_conn *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	close(c->fd);
	free(c->rbuf);
	free(c->body);
	pthread_mutex_destroy(&c->wlock);
	free(c);
}

/**
 * wait_fd() - Wait until @fd is ready for @events or @until passes.
 * Return: > 0 ready, 0 time is up, < 0 error.
 */
static int wait_fd(int fd, short events, uint64_t until)
{
	uint64_t now = homa_rt_now();
	struct pollfd p = {.fd = fd, .events = events};
	int ms;

	if (now >= until)
		return 0;
	ms = (until - now) / 1000000 > 100 ? 100 : (int)((until - now) / 1000000) + 1;
	return poll(&p, 1, ms);
}

/** send_all() - Write @len bytes of @buf to non-blocking @fd before @until. Return: 0 or -1. */
static int send_all(int fd, const uint8_t *buf, size_t len, uint64_t until)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n > 0) {
			buf += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EAGAIN) {
			if (wait_fd(fd, POLLOUT, until) < 0 || homa_rt_now() >= until)
				return -1;
		} else if (n < 0 && errno != EINTR) {
			return -1;
		}
	}
	return 0;
}

/** keepalive() - Make a lost peer show as an error within about @ns. */
static void keepalive(int fd, uint64_t ns)
{
	int one = 1, ms = ns / 1000000 > 1000 ? (int)(ns / 1000000) : 1000;
	int secs = 1, cnt = ms / 1000 > 1 ? ms / 1000 : 2;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof(secs));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &secs, sizeof(secs));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
}

/** tp_connect() - See tp.h. */
int tp_connect(struct homa_tp *tp, const homa_addr *addr, uint16_t port)
{
	uint64_t until = homa_rt_now() + tp->connect_ns;
	struct sockaddr_storage ss;
	uint8_t pre[TP_PREFACE_LEN];
	int len = homa_io_addr_to_sockaddr(tp->family, addr, port, &ss);
	int fd, err = 0;
	socklen_t el = sizeof(err);

	if (len < 0)
		return len;
	fd = socket(tp->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HOMA_EIO;
	if (connect(fd, (struct sockaddr *)&ss, (socklen_t)len) < 0) {
		err = errno;
		if (err == EINPROGRESS) {
			while (wait_fd(fd, POLLOUT, until) == 0 && homa_rt_now() < until)
				;
			err = ETIMEDOUT;
			if (homa_rt_now() < until || wait_fd(fd, POLLOUT, homa_rt_now()) > 0)
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
		}
	}
	tp_preface_encode(tp->port, pre);
	if (!err && send_all(fd, pre, sizeof(pre), until))
		err = EIO;
	if (err) {
		close(fd);
		return err == ECONNREFUSED ? HOMA_ENOSERVER
			: err == EIO ? HOMA_EIO : HOMA_ETIMEDOUT;
	}
	keepalive(fd, tp->connect_ns);
	return fd;
}

/**
 * fill_vec() - Up to TP_MAX_VEC iovecs of @iov[*@i..] starting *@off
 * bytes into *@i. Return: how many.
 */
static int fill_vec(const struct homa_iov *iov, int iovcnt, int i, size_t off,
		    struct iovec *v)
{
	int n = 0;

	for (; i < iovcnt && n < TP_MAX_VEC; i++, off = 0) {
		if (iov[i].len == off)
			continue;
		v[n].iov_base = (uint8_t *)iov[i].base + off;
		v[n++].iov_len = iov[i].len - off;
	}
	return n;
}

/** advance() - Move (*@i, *@off) on by @n bytes of @iov. */
static void advance(const struct homa_iov *iov, int iovcnt, int *i, size_t *off, size_t n)
{
	while (n && *i < iovcnt) {
		size_t left = iov[*i].len - *off;

		if (n < left) {
			*off += n;
			return;
		}
		n -= left;
		(*i)++;
		*off = 0;
	}
	while (*i < iovcnt && iov[*i].len == 0)
		(*i)++;
}

/** write_locked() - tp_write() with @c->wlock held. */
static int write_locked(struct homa_tp *tp, struct tp_conn *c, const uint8_t *hdr,
			const struct homa_iov *iov, int iovcnt)
{
	struct iovec v[TP_MAX_VEC + 1];
	size_t off = 0, hleft = TP_HDR_LEN;
	int i = 0;

	advance(iov, iovcnt, &i, &off, 0);
	while (hleft || i < iovcnt) {
		int n = 0;
		ssize_t w;

		if (hleft) {
			v[0].iov_base = (uint8_t *)hdr + TP_HDR_LEN - hleft;
			v[n++].iov_len = hleft;
		}
		n += fill_vec(iov, iovcnt, i, off, v + n);
		w = writev(c->fd, v, n);
		if (w < 0 && errno == EAGAIN) {
			if (atomic_load(&tp->rt->closing))
				return HOMA_ESHUTDOWN;
			if (wait_fd(c->fd, POLLOUT, homa_rt_now() + 100000000) < 0)
				return HOMA_EIO;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return HOMA_EIO;
		atomic_fetch_add_explicit(&tp->tx_bytes, (uint64_t)w, memory_order_relaxed);
		if ((size_t)w < hleft) {
			hleft -= (size_t)w;
			continue;
		}
		w -= (ssize_t)hleft;
		hleft = 0;
		advance(iov, iovcnt, &i, &off, (size_t)w);
	}
	return 0;
}

/** tp_write() - See tp.h. */
int tp_write(struct homa_tp *tp, struct tp_conn *c, const struct tp_hdr *h,
	     const struct homa_iov *iov, int iovcnt)
{
	uint8_t hdr[TP_HDR_LEN];
	int err;

	tp_hdr_encode(h, hdr);
	pthread_mutex_lock(&c->wlock);
	err = write_locked(tp, c, hdr, iov, iovcnt);
	pthread_mutex_unlock(&c->wlock);
	return err;
}

/** unlink_conn() - Take @c out of tp->conns and its pool (tp->lock held). Return: it was there. */
static bool unlink_conn(struct homa_tp *tp, struct tp_conn *c)
{
	struct tp_conn **pp = &tp->conns;
	struct tp_peer *p = c->peer;

	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (!*pp)
		return false;
	*pp = c->next;
	for (int i = 0; p && i < p->npool; i++) {
		if (p->pool[i] == c) {
			p->pool[i] = p->pool[--p->npool];
			break;
		}
	}
	if (p && p->express == c)
		p->express = NULL;
	return true;
}

/** A failed client RPC collected for delivery after tp->lock is dropped. */
struct tp_failed {
	uint64_t id, cookie, start_ns;
	homa_addr addr;
	uint16_t port;
};

/** Collection state of tp_conn_fail(). */
struct fail_ctx {
	struct homa_tp *tp;
	struct tp_conn *c;
	struct tp_failed *out;
	size_t n, cap;
	uint64_t *drop;
	size_t ndrop;
	bool cut;               /**< an announced request was cut (its readers must look again) */
};

/** collect_crpc() - foreach callback: note a client RPC of the lost connection. */
static void collect_crpc(uint64_t id, uint64_t val, void *arg)
{
	struct fail_ctx *f = arg;
	struct tp_crpc *r = (struct tp_crpc *)(uintptr_t)val;

	if (r->conn != f->c || f->n == f->cap)
		return;
	f->out[f->n++] = (struct tp_failed){id, r->cookie, r->start_ns, r->addr, r->port};
}

/** collect_srpc() - foreach callback: note a server RPC of the lost connection. */
static void collect_srpc(uint64_t id, uint64_t val, void *arg)
{
	struct fail_ctx *f = arg;

	if (((struct tp_srpc *)(uintptr_t)val)->conn == f->c && f->ndrop < f->cap)
		f->drop[f->ndrop++] = id;
}

/**
 * forget_rpcs() - Remove @f->c's client RPCs from the table, noting them,
 * and detach its server RPCs (tp->lock held).
 */
static void forget_rpcs(struct fail_ctx *f)
{
	struct homa_tp *tp = f->tp;
	uint64_t val;

	f->cap = tp->crpcs.used + tp->srpcs.used;
	f->out = calloc(f->cap ? f->cap : 1, sizeof(*f->out));
	f->drop = calloc(f->cap ? f->cap : 1, sizeof(*f->drop));
	if (!f->out || !f->drop)
		f->cap = 0; /* no memory: the RPCs stay until homa_close() */
	if (f->c->accepted)
		f->cut = tp_partial_drop_request(tp, f->c);
	homa_rt_idset_foreach(&tp->crpcs, collect_crpc, f);
	homa_rt_idset_foreach(&tp->srpcs, collect_srpc, f);
	for (size_t i = 0; i < f->n; i++)
		if (homa_rt_idset_get(&tp->crpcs, f->out[i].id, &val))
			tp_crpc_end(tp, (struct tp_crpc *)(uintptr_t)val);
	/* as over Homa, a reply to a client that went away is accepted and goes nowhere */
	for (size_t i = 0; i < f->ndrop; i++)
		if (homa_rt_idset_get(&tp->srpcs, f->drop[i], &val))
			((struct tp_srpc *)(uintptr_t)val)->conn = NULL;
}

/** tp_conn_fail() - See tp.h. */
void tp_conn_fail(struct homa_tp *tp, struct tp_conn *c, int error)
{
	struct fail_ctx f = {.tp = tp, .c = c};
	bool was;

	pthread_mutex_lock(&tp->lock);
	was = unlink_conn(tp, c);
	if (was) {
		c->dead = true;
		forget_rpcs(&f);
		if (f.n)
			tp->st.tcp_conn_errors++;
	}
	pthread_mutex_unlock(&tp->lock);
	if (!was)
		return;
	epoll_ctl(tp->rx_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	shutdown(c->fd, SHUT_RDWR);
	if (f.cut) {
		homa_rt_lock(tp->rt);
		if (tp->rt->data_waiters)
			homa_rt_wake_data(tp->rt);
		homa_rt_unlock(tp->rt);
	}
	for (size_t i = 0; i < f.n; i++)
		tp_deliver(tp, HOMA_EV_ERROR, f.out[i].id, f.out[i].cookie, &f.out[i].addr,
			   f.out[i].port, NULL, f.out[i].start_ns, error);
	free(f.out);
	free(f.drop);
	tp_conn_put(c); /* the list's reference */
}

/** tp_peer_get() - See tp.h. */
struct tp_peer *tp_peer_get(struct homa_tp *tp, const homa_addr *addr, uint16_t port)
{
	struct tp_peer *p;

	for (p = tp->peers; p; p = p->next)
		if (p->port == port && homa_addr_equal(&p->addr, addr))
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->addr = *addr;
	p->port = port;
	p->backoff_ns = tp->retry_ns;
	p->next = tp->peers;
	tp->peers = p;
	return p;
}

/**
 * pick() - A pooled connection of @p whose writer lock is free, else the
 * next in turn if the pool is full, else NULL (tp->lock held). The one
 * returned has a reference for the caller.
 */
static struct tp_conn *pick(struct tp_peer *p)
{
	struct tp_conn *c = NULL;

	for (int i = 0; i < p->npool && !c; i++) {
		if (pthread_mutex_trylock(&p->pool[i]->wlock) == 0) {
			pthread_mutex_unlock(&p->pool[i]->wlock);
			c = p->pool[i];
		}
	}
	if (!c && p->npool == TP_POOL)
		c = p->pool[p->rr++ % TP_POOL];
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

/**
 * adopt() - tp->lock held: make connected socket @fd a connection to @p
 * (with a reference for the caller). Return: it, or NULL (no memory).
 */
static struct tp_conn *adopt(struct homa_tp *tp, struct tp_peer *p, int fd)
{
	struct tp_conn *c = tp_conn_new(tp, fd, false);

	if (c) {
		c->peer = p;
		c->addr = p->addr;
		c->port = p->port;
		atomic_fetch_add(&c->refs, 1);
	}
	return c;
}

/**
 * existing() - tp->lock held: a connection of @p to use (with a reference
 * for the caller), or NULL if one should be opened: the express one if
 * @express, else one of the pool (pick()); once a new one is @connected,
 * a pool connection only if the pool filled meanwhile.
 */
static struct tp_conn *existing(struct tp_peer *p, bool express, bool connected)
{
	struct tp_conn *c;

	if (!express)
		return connected && p->npool < TP_POOL ? NULL : pick(p);
	c = p->express;
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

/**
 * conn_get() - tp_express_get() if @express, else tp_pool_get(). Call
 * without locks. Return: as they do.
 */
static int conn_get(struct homa_tp *tp, struct tp_peer *p, bool express, struct tp_conn **out)
{
	int prio = TP_EXPRESS_PRIORITY, fd;
	struct tp_conn *c;

	pthread_mutex_lock(&tp->lock);
	c = existing(p, express, false);
	pthread_mutex_unlock(&tp->lock);
	if (c) {
		*out = c;
		return 0;
	}
	fd = tp_connect(tp, &p->addr, p->port);
	if (fd < 0)
		return fd;
	if (express)
		setsockopt(fd, SOL_SOCKET, SO_PRIORITY, &prio, sizeof(prio));
	pthread_mutex_lock(&tp->lock);
	tp->st.tcp_connects++;
	c = existing(p, express, true);
	if (c) { /* others connected meanwhile */
		close(fd);
	} else if ((c = adopt(tp, p, fd))) {
		if (express)
			p->express = c;
		else
			p->pool[p->npool++] = c;
	}
	pthread_mutex_unlock(&tp->lock);
	*out = c;
	return c ? 0 : HOMA_ENOMEM;
}

/** tp_pool_get() - See tp.h. */
int tp_pool_get(struct homa_tp *tp, struct tp_peer *p, struct tp_conn **out)
{
	return conn_get(tp, p, false, out);
}

/** tp_express_get() - See tp.h. */
int tp_express_get(struct homa_tp *tp, struct tp_peer *p, struct tp_conn **out)
{
	return conn_get(tp, p, true, out);
}
