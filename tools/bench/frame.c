/* SPDX-License-Identifier: MIT */
/* Length-prefixed framing for the TCP arm. */
#include "frame.h"

#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench.h"
#include "homa/errors.h"
#include "tls.h"

/** Bytes read per recv() call; payload is discarded. */
#define FRAME_READ_CHUNK (256 * 1024)
/** Messages gathered into one writev(). */
#define FRAME_IOV_MSGS 32
/** TLS: queued bytes gathered into one call (one full TLS record). */
#define FRAME_TLS_STAGE 16384

void frame_init(struct frame_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
}

void frame_free(struct frame_conn *c)
{
	bench_tls_free(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	free(c->q);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/** grow() - Double the ring, keeping order. Return: 0 or HOMA_ENOMEM. */
static int grow(struct frame_conn *c)
{
	size_t ncap = c->qcap ? c->qcap * 2 : 16;
	struct frame_out *nq = malloc(ncap * sizeof(*nq));

	if (!nq)
		return HOMA_ENOMEM;
	for (size_t i = 0; i < c->qlen; i++)
		nq[i] = c->q[(c->qhead + i) % c->qcap];
	free(c->q);
	c->q = nq;
	c->qcap = ncap;
	c->qhead = 0;
	return 0;
}

int frame_push(struct frame_conn *c, uint32_t len, uint32_t aux, uint64_t tag)
{
	if (c->qlen == c->qcap && grow(c))
		return HOMA_ENOMEM;
	struct frame_out *o = &c->q[(c->qhead + c->qlen) % c->qcap];
	uint32_t l = htobe32(len), a = htobe32(aux);
	uint64_t t = htobe64(tag);

	memcpy(o->hdr, &l, 4);
	memcpy(o->hdr + 4, &a, 4);
	memcpy(o->hdr + 8, &t, 8);
	o->len = len;
	c->qlen++;
	return 0;
}

/** consume() - Account @n written bytes against the queue head. */
static void consume(struct frame_conn *c, size_t n)
{
	while (n > 0 && c->qlen > 0) {
		struct frame_out *o = &c->q[c->qhead];
		size_t left = FRAME_HDR + (size_t)o->len - c->sent;
		if (n < left) {
			c->sent += n;
			return;
		}
		n -= left;
		c->sent = 0;
		c->qhead = (c->qhead + 1) % c->qcap;
		c->qlen--;
	}
}

/** fill_iov() - The queued bytes not yet written, as up to 2 * FRAME_IOV_MSGS pieces. */
static int fill_iov(const struct frame_conn *c, struct iovec *iov)
{
	size_t skip = c->sent;
	int n = 0;

	for (size_t i = 0; i < c->qlen && i < FRAME_IOV_MSGS; i++) {
		struct frame_out *o = &c->q[(c->qhead + i) % c->qcap];
		size_t hs = skip < FRAME_HDR ? skip : FRAME_HDR;
		if (hs < FRAME_HDR)
			iov[n++] = (struct iovec){ o->hdr + hs, FRAME_HDR - hs };
		size_t ps = skip - hs;
		if (o->len > ps)
			iov[n++] = (struct iovec){ (void *)bench_payload(o->len), o->len - ps };
		skip = 0;
	}
	return n;
}

/**
 * tls_writev() - writev() through @c's TLS session. A first piece of a
 * full record or more goes as it is; smaller pieces are gathered into
 * one record. Either way a retry after EAGAIN offers the same leading
 * bytes and at least as many (the queue only grows at its tail), as
 * bench_tls_write() requires. Return: as writev().
 */
static ssize_t tls_writev(struct frame_conn *c, const struct iovec *iov, int n)
{
	uint8_t stage[FRAME_TLS_STAGE];
	size_t len = 0;

	if (iov[0].iov_len >= sizeof(stage))
		return bench_tls_write(c->tls, iov[0].iov_base, iov[0].iov_len);
	for (int i = 0; i < n && len < sizeof(stage); i++) {
		size_t k = iov[i].iov_len < sizeof(stage) - len ? iov[i].iov_len : sizeof(stage) - len;
		memcpy(stage + len, iov[i].iov_base, k);
		len += k;
	}
	return bench_tls_write(c->tls, stage, len);
}

int frame_flush(struct frame_conn *c)
{
	while (c->qlen > 0) {
		struct iovec iov[2 * FRAME_IOV_MSGS];
		int n = fill_iov(c, iov);
		ssize_t w = c->tls ? tls_writev(c, iov, n) : writev(c->fd, iov, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 1;
			if (errno == EINTR)
				continue;
			return HOMA_EIO;
		}
		consume(c, (size_t)w);
	}
	return 0;
}

/** parse() - Consume @n received bytes at @p, calling @cb per message. */
static int parse(struct frame_conn *c, const uint8_t *p, size_t n, frame_cb cb, void *arg)
{
	while (n > 0) {
		if (c->hgot < FRAME_HDR) {
			size_t k = FRAME_HDR - c->hgot < n ? FRAME_HDR - c->hgot : n;
			memcpy(c->hbuf + c->hgot, p, k);
			c->hgot += k;
			p += k;
			n -= k;
			if (c->hgot < FRAME_HDR)
				return 0;
			uint32_t l, a;
			uint64_t t;
			memcpy(&l, c->hbuf, 4);
			memcpy(&a, c->hbuf + 4, 4);
			memcpy(&t, c->hbuf + 8, 8);
			c->in_len = be32toh(l);
			c->in_aux = be32toh(a);
			c->in_tag = be64toh(t);
			if (c->in_len > BENCH_MAX_MSG || c->in_aux > BENCH_MAX_MSG)
				return HOMA_EPROTO;
			c->body_left = c->in_len;
		}
		size_t k = c->body_left < n ? c->body_left : n;
		c->body_left -= (uint32_t)k;
		p += k;
		n -= k;
		if (c->body_left == 0) {
			c->hgot = 0;
			cb(arg, c, c->in_len, c->in_aux, c->in_tag);
		}
	}
	return 0;
}

/* Each thread's read buffer is freed when the thread exits (buf_key's
 * destructor); LeakSanitizer reported it after every server thread. */
static pthread_key_t buf_key;
static pthread_once_t buf_once = PTHREAD_ONCE_INIT;
static int buf_key_ok;

/** buf_key_init() - Create the key whose destructor frees a thread's buffer. */
static void buf_key_init(void)
{
	buf_key_ok = pthread_key_create(&buf_key, free) == 0;
}

int frame_read(struct frame_conn *c, frame_cb cb, void *arg)
{
	static __thread uint8_t *buf;

	if (!buf) {
		if (!(buf = malloc(FRAME_READ_CHUNK)))
			return HOMA_ENOMEM;
		pthread_once(&buf_once, buf_key_init);
		if (buf_key_ok)
			pthread_setspecific(buf_key, buf);
	}
	for (;;) {
		ssize_t r = c->tls ? bench_tls_read(c->tls, buf, FRAME_READ_CHUNK)
				   : recv(c->fd, buf, FRAME_READ_CHUNK, 0);
		if (r == 0)
			return HOMA_ESHUTDOWN;
		if (r < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return HOMA_EIO;
		}
		int rc = parse(c, buf, (size_t)r, cb, arg);
		if (rc)
			return rc;
		/* TLS returns a record at a time and may hold more already
		 * read from the socket, which epoll would not report. */
		if (!c->tls && (size_t)r < FRAME_READ_CHUNK)
			return 0;
	}
}
