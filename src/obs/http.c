/* SPDX-License-Identifier: MIT */
/**
 * @file http.c
 * The optional /metrics listener: one thread, one poll() loop over the
 * listening socket, a wake-up pipe and up to max_conns connections.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "http_int.h"

#define HTTP_MAX_CONNS 64

/** The listener. */
struct homa_http {
	int lfd;                 /**< listening socket */
	int wake[2];             /**< pipe: a byte in wake[0] means stop */
	pthread_t thread;
	uint16_t port;
	struct homa_http_opts opts;
	struct homa_http_body body;
	struct homa_http_conn conns[HTTP_MAX_CONNS];
	atomic_uint_fast64_t requests;
};

/** now_ms() - Monotonic clock in milliseconds. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** accept_one() - Accept a pending connection into a free slot, if any. */
static void accept_one(struct homa_http *h)
{
	int fd = accept4(h->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int i;

	if (fd < 0)
		return;
	for (i = 0; i < h->opts.max_conns; i++) {
		struct homa_http_conn *c = &h->conns[i];

		if (c->fd >= 0)
			continue;
		c->req = malloc(h->opts.max_request + 1);
		if (!c->req)
			break;
		c->fd = fd;
		c->phase = HOMA_HTTP_READING;
		c->deadline_ms = now_ms() + h->opts.timeout_ms;
		return;
	}
	close(fd);
}

/** step_conn() - Advance connection @c after poll reported @revents. */
static void step_conn(struct homa_http *h, struct homa_http_conn *c, short revents)
{
	int r = 0;

	if (c->phase == HOMA_HTTP_READING && (revents & (POLLIN | POLLHUP | POLLERR))) {
		r = homa_http_conn_read(c, h->opts.max_request, &h->body);
		if (r == 1) {
			atomic_fetch_add(&h->requests, 1);
			c->phase = HOMA_HTTP_WRITING;
			r = 0;
			revents |= POLLOUT;
		}
	}
	if (!r && c->phase == HOMA_HTTP_WRITING && (revents & (POLLOUT | POLLERR))) {
		r = homa_http_conn_write(c);
		if (r == 1) {
			c->phase = HOMA_HTTP_DRAINING;
			r = 0;
		}
	}
	if (!r && c->phase == HOMA_HTTP_DRAINING && (revents & (POLLIN | POLLHUP | POLLERR)))
		r = homa_http_conn_drain(c);
	if (r < 0 || now_ms() >= c->deadline_ms)
		homa_http_conn_close(c);
}

/** fill_pollfds() - Build the poll set; map[k] is the conn index of pfd[k]. */
static int fill_pollfds(struct homa_http *h, struct pollfd *pfd, int *map, int *active)
{
	int n = 2, i;

	*active = 0;
	for (i = 0; i < h->opts.max_conns; i++) {
		struct homa_http_conn *c = &h->conns[i];

		if (c->fd < 0)
			continue;
		pfd[n].fd = c->fd;
		pfd[n].events = c->phase == HOMA_HTTP_WRITING ? POLLOUT : POLLIN;
		map[n++] = i;
		(*active)++;
	}
	pfd[0].fd = h->wake[0];
	pfd[0].events = POLLIN;
	pfd[1].fd = *active < h->opts.max_conns ? h->lfd : -1;
	pfd[1].events = POLLIN;
	return n;
}

/** listener_main() - The thread: serve until the wake pipe is readable. */
static void *listener_main(void *arg)
{
	struct homa_http *h = arg;
	struct pollfd pfd[HTTP_MAX_CONNS + 2];
	int map[HTTP_MAX_CONNS + 2];

	for (;;) {
		int active, k, n = fill_pollfds(h, pfd, map, &active);
		int timeout = active ? 100 : -1;

		if (poll(pfd, (nfds_t)n, timeout) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		for (k = 2; k < n; k++)
			step_conn(h, &h->conns[map[k]], pfd[k].revents);
		if (pfd[1].revents & POLLIN)
			accept_one(h);
	}
	return NULL;
}

/** parse_bind() - Fill @ss from the numeric address and port. Return: length or 0. */
static socklen_t parse_bind(const char *addr, uint16_t port, struct sockaddr_storage *ss)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		return sizeof(*v4);
	}
	if (inet_pton(AF_INET6, addr, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		return sizeof(*v6);
	}
	return 0;
}

/** errno_to_homa() - Map a bind/listen errno to a homa error. */
static int errno_to_homa(int e)
{
	if (e == EADDRINUSE)
		return HOMA_EADDRINUSE;
	if (e == EACCES || e == EPERM)
		return HOMA_EPERM;
	if (e == EADDRNOTAVAIL || e == EAFNOSUPPORT)
		return HOMA_EINVAL;
	return HOMA_EIO;
}

/** open_socket() - Create, bind and listen; sets h->lfd and h->port. Return: 0 or error. */
static int open_socket(struct homa_http *h)
{
	const char *addr = h->opts.bind_addr ? h->opts.bind_addr : "127.0.0.1";
	struct sockaddr_storage ss;
	socklen_t sl = parse_bind(addr, h->opts.port, &ss);
	int one = 1;

	if (!sl)
		return HOMA_EINVAL;
	h->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->lfd < 0)
		return errno_to_homa(errno);
	setsockopt(h->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->lfd, (struct sockaddr *)&ss, sl) || listen(h->lfd, 64))
		return errno_to_homa(errno);
	sl = sizeof(ss);
	if (getsockname(h->lfd, (struct sockaddr *)&ss, &sl))
		return HOMA_EIO;
	h->port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						 : ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/** apply_defaults() - Copy @in into h->opts, filling zeroed fields. */
static void apply_defaults(struct homa_http *h, const struct homa_http_opts *in)
{
	if (in)
		h->opts = *in;
	if (!h->opts.max_request)
		h->opts.max_request = 8192;
	if (h->opts.timeout_ms <= 0)
		h->opts.timeout_ms = 5000;
	if (h->opts.max_conns <= 0)
		h->opts.max_conns = 16;
	if (h->opts.max_conns > HTTP_MAX_CONNS)
		h->opts.max_conns = HTTP_MAX_CONNS;
}

/** release() - Free everything of a listener whose thread is not running. */
static void release(struct homa_http *h)
{
	int i;

	for (i = 0; i < HTTP_MAX_CONNS; i++)
		homa_http_conn_close(&h->conns[i]);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->wake[0] >= 0)
		close(h->wake[0]);
	if (h->wake[1] >= 0)
		close(h->wake[1]);
	free(h->body.buf);
	free(h);
}

/** homa_http_start() - See obs.h. */
int homa_http_start(const struct homa_http_opts *opts, homa_metrics_fill_fn fill,
		    void *arg, homa_http **out)
{
	struct homa_http *h;
	int i, err;

	if (!fill || !out)
		return HOMA_EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return HOMA_ENOMEM;
	h->lfd = h->wake[0] = h->wake[1] = -1;
	for (i = 0; i < HTTP_MAX_CONNS; i++)
		h->conns[i].fd = -1;
	apply_defaults(h, opts);
	h->body.fill = fill;
	h->body.arg = arg;
	err = open_socket(h);
	if (!err && pipe2(h->wake, O_CLOEXEC))
		err = HOMA_EIO;
	if (!err && pthread_create(&h->thread, NULL, listener_main, h))
		err = HOMA_EIO;
	if (err) {
		release(h);
		return err;
	}
	*out = h;
	return 0;
}

/** homa_http_port() - See obs.h. */
uint16_t homa_http_port(const homa_http *h)
{
	return h ? h->port : 0;
}

/** homa_http_requests() - See obs.h. */
uint64_t homa_http_requests(const homa_http *h)
{
	return h ? atomic_load(&((struct homa_http *)h)->requests) : 0;
}

/** homa_http_stop() - See obs.h. */
void homa_http_stop(homa_http *h)
{
	char b = 1;

	if (!h)
		return;
	while (write(h->wake[1], &b, 1) < 0 && errno == EINTR)
		;
	pthread_join(h->thread, NULL);
	release(h);
}
