/* SPDX-License-Identifier: MIT */
/**
 * @file tp_thread.c
 * The transport thread of a socket opened with transport TCP or AUTO:
 * accepts connections, runs AUTO's fallback checks and, while no
 * application thread does (tp_drive.c), reads and parses frames and
 * notices lost connections.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tp.h"

/** Bytes read per read() into a connection's buffer. */
#define TP_RBUF 65536
/** AUTO: how often the fallback check runs (ms). */
#define TP_TICK_MS 5

/** accept_all() - Accept every pending connection on the listener. */
static void accept_all(struct homa_tp *tp)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(tp->listen_fd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC);
		struct tp_conn *c;
		uint16_t port;

		if (fd < 0)
			return;
		pthread_mutex_lock(&tp->lock);
		c = tp_conn_new(tp, fd, true);
		if (c) {
			homa_io_addr_from_sockaddr((struct sockaddr *)&ss, &c->addr, &port);
			tp->st.tcp_accepts++;
		}
		pthread_mutex_unlock(&tp->lock);
	}
}

/**
 * take_body() - Move payload bytes from @c's buffer into the frame being
 * read. Return: true when the frame is complete.
 */
static bool take_body(struct tp_conn *c)
{
	size_t n = c->rlen - c->roff;

	if (n > c->hdr.len - c->body_got)
		n = c->hdr.len - c->body_got;
	memcpy(c->body + c->body_got, c->rbuf + c->roff, n);
	c->body_got += n;
	c->roff += n;
	return c->body_got == c->hdr.len;
}

/**
 * parse_one() - Parse what @c's buffer holds next: the preface, a header
 * or payload. Return: 1 progress, 0 needs more bytes, -1 bad input.
 */
static int parse_one(struct homa_tp *tp, struct tp_conn *c)
{
	size_t avail = c->rlen - c->roff;

	if (c->in_body) {
		if (c->body_got < c->hdr.len && !take_body(c))
			return 0;
		c->in_body = false;
		tp_on_frame(tp, c, &c->hdr, c->body);
		c->body = NULL;
		return 1;
	}
	if (c->accepted && !c->preface_ok) {
		if (avail < TP_PREFACE_LEN)
			return 0;
		if (tp_preface_decode(c->rbuf + c->roff, &c->port))
			return -1;
		c->preface_ok = true;
		c->roff += TP_PREFACE_LEN;
		return 1;
	}
	if (avail < TP_HDR_LEN)
		return 0;
	if (tp_hdr_decode(c->rbuf + c->roff, (uint32_t)tp->max_message,
			  c->accepted ? TP_REQUEST : TP_RESPONSE, &c->hdr))
		return -1;
	c->roff += TP_HDR_LEN;
	c->body = c->hdr.len ? malloc(c->hdr.len) : NULL;
	if (c->hdr.len && !c->body)
		return -1;
	c->body_got = 0;
	c->pub = false;
	c->in_body = true;
	return 1;
}

/**
 * read_body_direct() - A large payload: read it straight into the
 * message's buffer. Return: bytes read, 0 on EOF, < 0 error (errno).
 */
static ssize_t read_body_direct(struct tp_conn *c)
{
	ssize_t n = read(c->fd, c->body + c->body_got, c->hdr.len - c->body_got);

	if (n > 0)
		c->body_got += (size_t)n;
	return n;
}

/**
 * on_readable() - Read what @c has and handle every whole frame.
 * Return: 0, or the error that ends the connection (HOMA_ETIMEDOUT for a
 * lost peer, HOMA_EINVAL for bad input).
 */
static int on_readable(struct homa_tp *tp, struct tp_conn *c)
{
	int r;

	if (!c->rbuf && !(c->rbuf = malloc(TP_RBUF)))
		return HOMA_ETIMEDOUT;
	for (bool drained = false;;) {
		ssize_t n;
		size_t want;

		while ((r = parse_one(tp, c)) > 0)
			;
		if (r < 0)
			return HOMA_EINVAL;
		if (c->in_body)
			tp_partial_publish(tp, c); /* a frame part-way: partial readers see it */
		if (drained)
			return 0; /* a short read emptied the socket: epoll says when more comes */
		if (c->in_body && c->roff == c->rlen && c->hdr.len - c->body_got >= TP_RBUF) {
			want = c->hdr.len - c->body_got;
			n = read_body_direct(c);
		} else {
			memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
			c->rlen -= c->roff;
			c->roff = 0;
			want = TP_RBUF - c->rlen;
			n = read(c->fd, c->rbuf + c->rlen, want);
			if (n > 0)
				c->rlen += (size_t)n;
		}
		if (n > 0) {
			atomic_fetch_add_explicit(&tp->rx_bytes, (uint64_t)n, memory_order_relaxed);
			drained = (size_t)n < want;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		return HOMA_ETIMEDOUT; /* closed or reset: the peer is gone */
	}
}

/** on_event() - Handle epoll event @ev on a connection. */
static void on_event(struct homa_tp *tp, const struct epoll_event *ev)
{
	struct tp_conn *c = ev->data.ptr;
	int err = on_readable(tp, c);

	if (err == HOMA_EINVAL) {
		pthread_mutex_lock(&tp->lock);
		tp->st.tcp_bad_frames++;
		pthread_mutex_unlock(&tp->lock);
	}
	if (err)
		tp_conn_fail(tp, c, HOMA_ETIMEDOUT);
}

/** tp_rx_handle() - See tp.h. */
void tp_rx_handle(struct homa_tp *tp, const struct epoll_event *evs, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v;

		if (evs[i].data.ptr != &tp->kick_fd)
			on_event(tp, &evs[i]);
		else if (read(tp->kick_fd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another reader consumed the kick */
		}
	}
	tp_partial_due(tp);
}

/**
 * tick_ms() - How long the thread's wait may last: AUTO's tick, the park
 * check @park_ms (0: none), or for ever.
 */
static int tick_ms(struct homa_tp *tp, int park_ms)
{
	if (tp->transport == HOMA_TRANSPORT_AUTO)
		return park_ms && park_ms < TP_TICK_MS ? park_ms : TP_TICK_MS;
	return park_ms ? park_ms : -1;
}

/** tp_main() - The thread: wait for events until stop_fd is readable. */
static void *tp_main(void *arg)
{
	struct homa_tp *tp = arg;
	struct epoll_event evs[8];
	int park_ms = 0;

	for (;;) {
		int n = epoll_wait(tp->epfd, evs, 8, tick_ms(tp, park_ms));

		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &tp->stop_fd)
				return NULL;
			if (evs[i].data.ptr == &tp->listen_fd)
				accept_all(tp);
			else
				tp_thread_read(tp);
		}
		park_ms = tp_thread_unpark(tp, park_ms);
		if (tp->transport == HOMA_TRANSPORT_AUTO)
			tp_auto_tick(tp);
	}
}

/** tp_thread_start() - See tp.h. */
int tp_thread_start(struct homa_tp *tp)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &tp->stop_fd};
	sigset_t all, old;
	int err;

	if (epoll_ctl(tp->epfd, EPOLL_CTL_ADD, tp->stop_fd, &ev))
		return HOMA_EIO;
	ev.data.ptr = &tp->listen_fd;
	if (tp->listen_fd >= 0 && epoll_ctl(tp->epfd, EPOLL_CTL_ADD, tp->listen_fd, &ev))
		return HOMA_EIO;
	ev.data.ptr = &tp->kick_fd;
	if (epoll_ctl(tp->rx_epfd, EPOLL_CTL_ADD, tp->kick_fd, &ev))
		return HOMA_EIO;
	ev = (struct epoll_event){.events = EPOLLIN | EPOLLONESHOT, .data.ptr = &tp->rx_epfd};
	if (epoll_ctl(tp->epfd, EPOLL_CTL_ADD, tp->rx_epfd, &ev))
		return HOMA_EIO;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&tp->thread, NULL, tp_main, tp);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return HOMA_EIO;
	tp->thread_started = true;
	return 0;
}

/** tp_thread_stop() - See tp.h. */
void tp_thread_stop(struct homa_tp *tp)
{
	uint64_t one = 1;

	if (!tp->thread_started)
		return;
	if (write(tp->stop_fd, &one, sizeof(one)) < 0) {
		/* an eventfd write fails only on overflow: it is readable then */
	}
	pthread_join(tp->thread, NULL);
	tp->thread_started = false;
}
