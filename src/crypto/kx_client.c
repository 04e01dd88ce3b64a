/* SPDX-License-Identifier: MIT */
/**
 * @file kx_client.c
 * The asking side of the key exchange: connect (bounded), TLS 1.3
 * handshake with mutual certificates, one request, one answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <openssl/err.h>

#include "kx_int.h"

/**
 * connect_bounded() - A TCP socket connected to @dst within @ms.
 * Return: the fd, or HOMA_EHANDSHAKE (refused, unreachable, timeout).
 */
static int connect_bounded(const struct sockaddr *dst, socklen_t len, uint32_t ms)
{
	int fd = socket(dst->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return HOMA_EHANDSHAKE;
	if (connect(fd, dst, len) < 0 && errno != EINPROGRESS)
		goto fail;
	if (poll(&p, 1, (int)ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) ||
	    soerr)
		goto fail;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	kx_set_timeouts(fd, ms);
	return fd;
fail:
	close(fd);
	return HOMA_EHANDSHAKE;
}

/** exchange() - Handshake on @ssl, send @req, read @resp. Return: 0 or an error. */
static int exchange(SSL *ssl, const struct homa_kx_msg *req, struct homa_kx_msg *resp)
{
	int r = SSL_connect(ssl), err;

	if (r != 1)
		return kx_error(ssl, r);
	err = kx_write_msg(ssl, req);
	if (!err)
		err = kx_read_msg(ssl, resp);
	if (!err && resp->status)
		err = -(int)resp->status;
	if (!err)
		SSL_shutdown(ssl);
	return err;
}

/** homa_kx_request() - See kx.h. */
int homa_kx_request(const struct homa_kx_files *f, const struct sockaddr *dst, socklen_t len,
		    uint32_t timeout_ms, const struct homa_kx_msg *req, struct homa_kx_msg *resp)
{
	SSL_CTX *c = kx_ctx_new(f, false);
	SSL *ssl = NULL;
	int fd, err;

	if (!c)
		return HOMA_EINVAL;
	fd = connect_bounded(dst, len, timeout_ms);
	if (fd < 0) {
		SSL_CTX_free(c);
		return fd;
	}
	ssl = SSL_new(c);
	if (ssl && SSL_set_fd(ssl, fd) == 1)
		err = exchange(ssl, req, resp);
	else
		err = HOMA_EHANDSHAKE;
	SSL_free(ssl);
	SSL_CTX_free(c);
	ERR_clear_error();
	close(fd);
	return err;
}
