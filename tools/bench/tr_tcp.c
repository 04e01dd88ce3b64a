/* SPDX-License-Identifier: MIT */
/*
 * The TCP arm: a client over N framed connections per server (requests
 * go to the connection of that server with the fewest outstanding RPCs),
 * and an epoll server with one SO_REUSEPORT listener per thread. With
 * --encrypt every connection carries TLS 1.3 (tls.h), its handshake done
 * when the connection opens.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"
#include "frame.h"
#include "homa/errors.h"
#include "tls.h"

/** Client state. */
struct tcp_client {
	int ep;
	struct frame_conn *conns; /**< nservers * per rows */
	size_t nconns, per;
	struct bench_done *done;  /**< completions read but not yet returned */
	size_t ndone, cap_done;
	int err;                  /**< first connection failure */
	void *tls;                /**< TLS context (--encrypt), or NULL */
	bool batch;               /**< requests wait for the next wait() (--homa-more 1) */
	size_t *order;            /**< batching: connections with requests queued since the
				       last wait(), in the order of their first such start */
	size_t norder;
	bool *listed;             /**< per connection: in @order */
};

/** tcp_tune() - TCP_NODELAY and the congestion control on @fd. Return: 0 or HOMA_EINVAL. */
static int tcp_tune(int fd, const char *cc)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) != 0) {
		fprintf(stderr, "homa-bench: TCP congestion control '%s' not available: %s\n", cc,
			strerror(errno));
		return HOMA_EINVAL;
	}
	return 0;
}

/**
 * tcp_connect() - Blocking connect (and, with @tls, the TLS handshake
 * into *@ssl), then non-blocking. Return: fd or error.
 */
static int tcp_connect(const struct sockaddr_storage *ss, socklen_t len, const char *cc,
		       void *tls, void **ssl)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return HOMA_EIO;
	if (tcp_tune(fd, cc)) {
		close(fd);
		return HOMA_EINVAL;
	}
	if (connect(fd, (const struct sockaddr *)ss, len) != 0) {
		fprintf(stderr, "homa-bench: TCP connect failed: %s\n", strerror(errno));
		close(fd);
		return HOMA_EIO;
	}
	int rc = tls ? bench_tls_handshake(tls, fd, false, ssl) : 0;
	if (rc) {
		fprintf(stderr, "homa-bench: TLS handshake failed: %s\n", homa_strerror(rc));
		close(fd);
		return rc;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/** tcp_client_close() - Close every connection and free @ctx. */
static void tcp_client_close(void *ctx)
{
	struct tcp_client *c = ctx;

	for (size_t i = 0; i < c->nconns; i++)
		frame_free(&c->conns[i]);
	if (c->ep >= 0)
		close(c->ep);
	free(c->conns);
	free(c->order);
	free(c->listed);
	free(c->done);
	bench_tls_ctx_free(c->tls);
	free(c);
}

/** tcp_client_open() - Connect cfg->conns connections to every server. */
static int tcp_client_open(void **ctx, const struct bench_tr_cfg *cfg)
{
	struct tcp_client *c = calloc(1, sizeof(*c));

	if (!c)
		return HOMA_ENOMEM;
	c->per = cfg->conns > 0 ? (size_t)cfg->conns : 1;
	c->batch = !cfg->homa.no_more;
	c->nconns = cfg->nservers * c->per;
	c->conns = calloc(c->nconns, sizeof(*c->conns));
	c->order = calloc(c->nconns, sizeof(*c->order));
	c->listed = calloc(c->nconns, sizeof(*c->listed));
	c->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!c->conns || !c->order || !c->listed || c->ep < 0) {
		c->nconns = 0;
		tcp_client_close(c);
		return HOMA_ENOMEM;
	}
	for (size_t i = 0; i < c->nconns; i++)
		c->conns[i].fd = -1;
	if (cfg->certs && !(c->tls = bench_tls_ctx(cfg->certs, false))) {
		tcp_client_close(c);
		return HOMA_EINVAL;
	}
	for (size_t i = 0; i < c->nconns; i++) {
		size_t s = i / c->per;
		void *ssl = NULL;
		int fd = tcp_connect(&cfg->servers[s], cfg->server_lens[s], cfg->cc, c->tls, &ssl);
		if (fd < 0) {
			tcp_client_close(c);
			return fd;
		}
		frame_init(&c->conns[i], fd);
		c->conns[i].tls = ssl;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &c->conns[i] };
		epoll_ctl(c->ep, EPOLL_CTL_ADD, fd, &ev);
	}
	*ctx = c;
	return 0;
}

/** set_out() - Ask epoll for EPOLLOUT on @fc or stop asking. */
static void set_out(int ep, struct frame_conn *fc, int on)
{
	if (fc->epoll_out == on)
		return;
	struct epoll_event ev = { .events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = fc };
	epoll_ctl(ep, EPOLL_CTL_MOD, fc->fd, &ev);
	fc->epoll_out = on;
}

/**
 * tcp_client_start() - Queue a request on the least busy connection. With
 * batching (the default, --homa-more 1) the next tcp_client_wait() writes
 * it, the connections in the order of their first request since the last
 * wait; otherwise it is written now. Return: 0, HOMA_ENOMEM, HOMA_EIO or
 * the connections' first failure.
 */
static int tcp_client_start(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag)
{
	struct tcp_client *c = ctx;
	struct frame_conn *best = &c->conns[server * c->per];

	if (c->err)
		return c->err;
	for (size_t i = 1; i < c->per; i++)
		if (c->conns[server * c->per + i].inflight < best->inflight)
			best = &c->conns[server * c->per + i];
	int rc = frame_push(best, req, resp, tag);
	if (rc)
		return rc;
	best->inflight++;
	if (c->batch) { /* written with the others by the next tcp_client_wait() */
		size_t i = (size_t)(best - c->conns);
		if (!c->listed[i]) {
			c->listed[i] = true;
			c->order[c->norder++] = i;
		}
		return 0;
	}
	rc = frame_flush(best);
	if (rc < 0)
		return rc;
	set_out(c->ep, best, rc == 1);
	return 0;
}

/**
 * flush_queued() - Write what tcp_client_start() queued on every connection
 * that is not already waiting for EPOLLOUT: one writev() per connection for
 * all the requests started since the last wait, as the TCP server writes
 * the responses to one read's requests. The connections go in the order
 * of their first request since the last wait (c->order, emptied here), so
 * a caller's send schedule (an all-to-all's shifted destinations) reaches
 * the network as it was started. Return: 0 or HOMA_EIO (the connections
 * not reached stay listed for the next call).
 */
static int flush_queued(struct tcp_client *c)
{
	size_t k;
	int rc = 0;

	for (k = 0; k < c->norder && rc == 0; k++) {
		struct frame_conn *fc = &c->conns[c->order[k]];
		c->listed[c->order[k]] = false;
		if (fc->qlen == 0 || fc->epoll_out)
			continue;
		rc = frame_flush(fc);
		if (rc >= 0) {
			set_out(c->ep, fc, rc == 1);
			rc = 0;
		}
	}
	memmove(c->order, c->order + k, (c->norder - k) * sizeof(*c->order));
	c->norder -= k;
	return rc;
}

/** on_response() - frame_cb: record a finished RPC. */
static void on_response(void *arg, struct frame_conn *fc, uint32_t len, uint32_t aux,
			uint64_t tag)
{
	struct tcp_client *c = arg;

	if (c->ndone == c->cap_done) {
		size_t ncap = c->cap_done ? c->cap_done * 2 : 64;
		struct bench_done *nd = realloc(c->done, ncap * sizeof(*nd));
		if (!nd) {
			c->err = HOMA_ENOMEM;
			return;
		}
		c->done = nd;
		c->cap_done = ncap;
	}
	c->done[c->ndone++] = (struct bench_done){ .tag = tag, .err = 0 };
	fc->inflight--;
}

/**
 * tcp_client_wait() - Write the requests queued since the last call (with
 * batching), then run epoll until a response arrives or @deadline_ns. Fills
 * @out with up to @max completions. Return: their number, or the
 * connections' first failure when none completed.
 */
static int tcp_client_wait(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max)
{
	struct tcp_client *c = ctx;
	struct epoll_event evs[64];

	if (c->batch && !c->err)
		c->err = flush_queued(c);
	while (c->ndone == 0 && !c->err) {
		uint64_t now = bench_now_ns();
		int64_t left = deadline_ns > now ? (int64_t)(deadline_ns - now) : 0;
		struct timespec ts = { left / 1000000000, left % 1000000000 };
		int n = epoll_pwait2(c->ep, evs, 64, &ts, NULL);
		if (n < 0 && errno != EINTR)
			return HOMA_EIO;
		for (int i = 0; i < n; i++) {
			struct frame_conn *fc = evs[i].data.ptr;
			if (evs[i].events & EPOLLOUT) {
				int rc = frame_flush(fc);
				if (rc < 0)
					c->err = rc;
				else
					set_out(c->ep, fc, rc == 1);
			}
			if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
				int rc = frame_read(fc, on_response, c);
				if (rc)
					c->err = rc;
			}
		}
		if (left == 0 || bench_stop)
			break;
	}
	int k = (int)(c->ndone < (size_t)max ? c->ndone : (size_t)max);
	if (k) { /* c->done may still be NULL when nothing completed */
		memcpy(out, c->done, (size_t)k * sizeof(*out));
		memmove(c->done, c->done + k, (c->ndone - (size_t)k) * sizeof(*out));
		c->ndone -= (size_t)k;
	}
	if (k == 0 && c->err)
		return c->err;
	return k;
}

const struct bench_client_ops bench_tcp_client = {
	.name = "tcp",
	.open = tcp_client_open,
	.start = tcp_client_start,
	.wait = tcp_client_wait,
	.close = tcp_client_close,
};

/** One server thread. */
struct tcp_srv_thread {
	pthread_t th;
	int listen_fd, ep;
	const struct bench_opts *o;
	void *tls;          /**< TLS context shared by the threads (--encrypt), or NULL */
	int rc;
};

/** on_request() - frame_cb: queue the response the request asks for. */
static void on_request(void *arg, struct frame_conn *fc, uint32_t len, uint32_t aux,
		       uint64_t tag)
{
	int *err = arg;

	if (frame_push(fc, aux, 0, tag))
		*err = HOMA_ENOMEM;
	bench_ctl_count_rpc();
}

/** serve_conn() - Handle epoll events @ev on connection @fc; false: close it. */
static int serve_conn(int ep, struct frame_conn *fc, uint32_t ev)
{
	int err = 0;

	if (ev & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
		int rc = frame_read(fc, on_request, &err);
		if (rc || err)
			return 0;
	}
	int rc = frame_flush(fc);
	if (rc < 0)
		return 0;
	set_out(ep, fc, rc == 1);
	return 1;
}

/** tcp_accept() - Accept every pending connection on @t's listener. */
static void tcp_accept(struct tcp_srv_thread *t)
{
	for (;;) {
		int fd = accept4(t->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		tcp_tune(fd, t->o->cc);
		void *ssl = NULL;
		struct frame_conn *fc = malloc(sizeof(*fc));
		/* A client that fails the handshake is dropped; the others go on. */
		if (!fc || (t->tls && bench_tls_handshake(t->tls, fd, true, &ssl))) {
			free(fc);
			close(fd);
			continue;
		}
		frame_init(fc, fd);
		fc->tls = ssl;
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = fc };
		epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev);
		/* requests the handshake read ahead: no epoll event will come */
		if (ssl && bench_tls_pending(ssl) && !serve_conn(t->ep, fc, EPOLLIN)) {
			epoll_ctl(t->ep, EPOLL_CTL_DEL, fd, NULL);
			frame_free(fc);
			free(fc);
		}
	}
}

/** tcp_srv_main() - Thread body: epoll loop until bench_stop. */
static void *tcp_srv_main(void *arg)
{
	struct tcp_srv_thread *t = arg;
	struct epoll_event evs[64];

	while (!bench_stop) {
		int n = epoll_wait(t->ep, evs, 64, 100);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL) {
				tcp_accept(t);
				continue;
			}
			struct frame_conn *fc = evs[i].data.ptr;
			if (!serve_conn(t->ep, fc, evs[i].events)) {
				epoll_ctl(t->ep, EPOLL_CTL_DEL, fc->fd, NULL);
				frame_free(fc);
				free(fc);
			}
		}
	}
	return NULL;
}

/** tcp_listen() - A non-blocking SO_REUSEPORT listener. Return: fd or error. */
static int tcp_listen(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	char spec[128];
	int one = 1;

	snprintf(spec, sizeof(spec), strchr(o->bind, ':') ? "[%s]:%u" : "%s:%u", o->bind, o->port);
	if (bench_parse_servers(spec, &cfg))
		return HOMA_EINVAL;
	int fd = socket(cfg.servers[0].ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HOMA_EIO;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (tcp_tune(fd, o->cc) || bind(fd, (struct sockaddr *)&cfg.servers[0], cfg.server_lens[0]) ||
	    listen(fd, 1024)) {
		fprintf(stderr, "homa-bench: TCP listen on %s failed: %s\n", spec, strerror(errno));
		close(fd);
		return errno == EADDRINUSE ? HOMA_EADDRINUSE : HOMA_EIO;
	}
	return fd;
}

int bench_tcp_server(const struct bench_opts *o)
{
	int n = o->threads > 0 ? o->threads : 1;
	struct tcp_srv_thread *t = calloc((size_t)n, sizeof(*t));
	int rc = 0, started = 0;

	void *tls = o->certs ? bench_tls_ctx(o->certs, true) : NULL;

	if (!t || (o->certs && !tls)) {
		free(t);
		bench_tls_ctx_free(tls);
		return t ? HOMA_EINVAL : HOMA_ENOMEM;
	}
	for (int i = 0; i < n; i++)
		t[i].listen_fd = t[i].ep = -1;
	for (int i = 0; i < n && rc == 0; i++) {
		t[i].o = o;
		t[i].tls = tls;
		t[i].listen_fd = tcp_listen(o);
		t[i].ep = epoll_create1(EPOLL_CLOEXEC);
		if (t[i].listen_fd < 0) {
			rc = t[i].listen_fd;
			break;
		}
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
		epoll_ctl(t[i].ep, EPOLL_CTL_ADD, t[i].listen_fd, &ev);
		if (pthread_create(&t[i].th, NULL, tcp_srv_main, &t[i]) != 0) {
			rc = HOMA_EIO;
			break;
		}
		started++;
	}
	if (rc == 0)
		bench_ctl_ready((uint16_t)o->port);
	else
		bench_stop = 1;
	for (int i = 0; i < started; i++)
		pthread_join(t[i].th, NULL);
	for (int i = 0; i < n; i++) {
		if (t[i].listen_fd >= 0)
			close(t[i].listen_fd);
		if (t[i].ep >= 0)
			close(t[i].ep);
	}
	free(t);
	bench_tls_ctx_free(tls);
	return rc;
}
