/* SPDX-License-Identifier: MIT */
/**
 * @file kx_server.c
 * The answering side of the key exchange: a thread that accepts TCP
 * connections, completes a TLS 1.3 handshake that requires the client's
 * certificate, reads one request, answers it through the owner's
 * callback and closes. Connections are served one at a time, each
 * bounded by the timeout, so a stalled peer delays others by at most
 * that much.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include "kx_int.h"
#include "homa/errors.h"

/** A running service. */
struct homa_kx_server {
	SSL_CTX *ctx;
	int fd, stop_fd;
	uint32_t timeout_ms;
	homa_kx_answer_fn fn;
	void *fn_ctx;
	pthread_t thread;
	_Atomic uint64_t served, refused;
};

/**
 * drain() - After a failed handshake: stop sending and read what the
 * client already sent (bounded), so that closing sends a FIN, not a reset
 * that would destroy the alert telling the client why it was refused.
 */
static void drain(int fd)
{
	char buf[4096];
	struct pollfd p = {.fd = fd, .events = POLLIN};

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 16 && poll(&p, 1, 100) == 1; i++)
		if (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) <= 0)
			break;
}

/** serve_one() - Handle the accepted connection @fd from @peer. */
static void serve_one(struct homa_kx_server *s, int fd, const struct sockaddr *peer)
{
	SSL *ssl = SSL_new(s->ctx);
	struct homa_kx_msg req, resp = {0};
	int err = HOMA_EHANDSHAKE;

	kx_set_timeouts(fd, s->timeout_ms);
	if (ssl && SSL_set_fd(ssl, fd) == 1 && SSL_accept(ssl) == 1) {
		err = kx_read_msg(ssl, &req);
		if (!err) {
			int r = s->fn(s->fn_ctx, peer, &req, &resp);

			resp.status = (uint8_t)(r < 0 ? -r : 0);
			err = kx_write_msg(ssl, &resp);
			if (!err)
				SSL_shutdown(ssl);
		}
	}
	if (err) {
		atomic_fetch_add(&s->refused, 1);
		drain(fd);
	} else {
		atomic_fetch_add(&s->served, 1);
	}
	SSL_free(ssl);
	ERR_clear_error();
	close(fd);
}

/** service() - The thread: accept and serve until the stop eventfd fires. */
static void *service(void *arg)
{
	struct homa_kx_server *s = arg;

	for (;;) {
		struct pollfd p[2] = {{.fd = s->fd, .events = POLLIN},
				      {.fd = s->stop_fd, .events = POLLIN}};
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		fd = accept4(s->fd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (fd >= 0)
			serve_one(s, fd, (struct sockaddr *)&peer);
	}
	return NULL;
}

/** listen_on() - A listening TCP socket on @bind. Return: fd or a homa error. */
static int listen_on(const struct sockaddr *bind_sa, socklen_t len)
{
	int fd = socket(bind_sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return HOMA_EIO;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, bind_sa, len) < 0 || listen(fd, 64) < 0) {
		close(fd);
		return HOMA_EADDRINUSE;
	}
	return fd;
}

/** homa_kx_server_start() - See kx.h. */
int homa_kx_server_start(struct homa_kx_server **out, const struct homa_kx_files *f,
			 const struct sockaddr *bind_sa, socklen_t len, uint32_t timeout_ms,
			 homa_kx_answer_fn fn, void *ctx)
{
	struct homa_kx_server *s = calloc(1, sizeof(*s));

	if (!s)
		return HOMA_ENOMEM;
	s->fd = s->stop_fd = -1;
	s->ctx = kx_ctx_new(f, true);
	if (!s->ctx) {
		homa_kx_server_stop(s);
		return HOMA_EINVAL;
	}
	s->fd = listen_on(bind_sa, len);
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (s->fd < 0 || s->stop_fd < 0) {
		int err = s->fd < 0 ? s->fd : HOMA_EIO;

		homa_kx_server_stop(s);
		return err;
	}
	s->timeout_ms = timeout_ms;
	s->fn = fn;
	s->fn_ctx = ctx;
	if (pthread_create(&s->thread, NULL, service, s)) {
		close(s->stop_fd);
		s->stop_fd = -1;
		homa_kx_server_stop(s);
		return HOMA_EIO;
	}
	*out = s;
	return 0;
}

/** homa_kx_server_counts() - See kx.h. */
void homa_kx_server_counts(struct homa_kx_server *s, uint64_t *served, uint64_t *refused)
{
	*served = s ? atomic_load(&s->served) : 0;
	*refused = s ? atomic_load(&s->refused) : 0;
}

/**
 * homa_kx_server_stop() - See kx.h. The thread exists exactly when both
 * descriptors are open (start's failure paths close stop_fd first).
 */
void homa_kx_server_stop(struct homa_kx_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (s->fd >= 0 && s->stop_fd >= 0) {
		if (write(s->stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(s->thread, NULL);
	}
	if (s->fd >= 0)
		close(s->fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	SSL_CTX_free(s->ctx);
	free(s);
}
