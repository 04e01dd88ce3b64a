/* SPDX-License-Identifier: MIT */
/**
 * @file intercept.c
 * The calls libhoma-linux.so takes over. socket(AF_INET or AF_INET6,
 * SOCK_DGRAM, IPPROTO_HOMA) makes a shim socket; every other call checks
 * whether its descriptor is one (one atomic load) and otherwise goes to
 * the C library unchanged, so the rest of the program, and the runtime's
 * own UDP sockets, see the normal calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/** Homa socket creation (homa(7)): SOCK_DGRAM, IPPROTO_HOMA; every
 *  other socket is the C library's. */
SHIM_EXPORT int socket(int domain, int type, int protocol)
{
	const struct shim_real *r = shim_real();
	int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct shim_sock *s;
	int fd, e;

	/* Other types with protocol 146 (SOCK_RAW: the raw driver's own
	 * socket) are the kernel's, as they are with the module. */
	if (protocol != IPPROTO_HOMA || kind != SOCK_DGRAM ||
	    (domain != AF_INET && domain != AF_INET6))
		return r->socket(domain, type, protocol);
	s = shim_sock_new(domain, type);
	if (!s)
		return -1;
	fd = r->fcntl(s->epfd, (type & SOCK_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	e = fd < 0 ? errno : shim_fd_attach(fd, s);
	if (e) {
		if (fd >= 0)
			r->close(fd);
		shim_sock_free(s);
		errno = e;
		return -1;
	}
	return fd;
}

/** bind(): a Homa socket's server port (homa(7)). */
SHIM_EXPORT int bind(int fd, const struct sockaddr *a, socklen_t len)
{
	struct shim_sock *s = shim_fd_get(fd);
	int ret;

	if (!s)
		return shim_real()->bind(fd, a, len);
	ret = shim_bind(s, a, len);
	shim_fd_put(s);
	return ret;
}

/** setsockopt(): SO_HOMA_RCVBUF, SO_HOMA_SERVER. */
SHIM_EXPORT int setsockopt(int fd, int level, int name, const void *v, socklen_t len)
{
	struct shim_sock *s = shim_fd_get(fd);
	int ret;

	if (!s)
		return shim_real()->setsockopt(fd, level, name, v, len);
	ret = shim_setsockopt(s, level, name, v, len);
	shim_fd_put(s);
	return ret;
}

/** getsockopt(): SO_HOMA_RCVBUF, SO_HOMA_SERVER, SO_DOMAIN/TYPE/PROTOCOL. */
SHIM_EXPORT int getsockopt(int fd, int level, int name, void *v, socklen_t *len)
{
	struct shim_sock *s = shim_fd_get(fd);
	int ret;

	if (!s)
		return shim_real()->getsockopt(fd, level, name, v, len);
	ret = shim_getsockopt(s, level, name, v, len);
	shim_fd_put(s);
	return ret;
}

/** getsockname(): the wildcard address and the socket's port. */
SHIM_EXPORT int getsockname(int fd, struct sockaddr *a, socklen_t *len)
{
	struct shim_sock *s = shim_fd_get(fd);
	int ret;

	if (!s)
		return shim_real()->getsockname(fd, a, len);
	ret = shim_getsockname(s, a, len);
	shim_fd_put(s);
	return ret;
}

/** getpeername(): Homa sockets are not connected (ENOTCONN). */
SHIM_EXPORT int getpeername(int fd, struct sockaddr *a, socklen_t *len)
{
	if (!shim_fd_is(fd))
		return shim_real()->getpeername(fd, a, len);
	errno = ENOTCONN;
	return -1;
}

/** sendmsg(): requests and responses (the module's sendmsg(2)). */
SHIM_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int flags)
{
	struct shim_sock *s = shim_fd_get(fd);
	ssize_t ret;

	if (!s)
		return shim_real()->sendmsg(fd, m, flags);
	ret = shim_sendmsg(s, m, flags);
	shim_fd_put(s);
	return ret;
}

/** recvmsg(): messages into bpages (the module's recvmsg(2)). */
SHIM_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int flags)
{
	struct shim_sock *s = shim_fd_get(fd);
	ssize_t ret;

	if (!s)
		return shim_real()->recvmsg(fd, m, flags);
	ret = shim_recvmsg(s, m, flags);
	shim_fd_put(s);
	return ret;
}

/** shutdown(): disables the socket; blocked calls return ESHUTDOWN. */
SHIM_EXPORT int shutdown(int fd, int how)
{
	struct shim_sock *s = shim_fd_get(fd);

	if (!s)
		return shim_real()->shutdown(fd, how);
	shim_sock_shutdown(s);
	shim_fd_put(s);
	return 0;
}

/** close(): the last descriptor of a Homa socket shuts it down. */
SHIM_EXPORT int close(int fd)
{
	shim_fd_detach(fd);
	return shim_real()->close(fd);
}

/** connect(), listen(): not part of Homa's API (EOPNOTSUPP). */
SHIM_EXPORT int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	if (!shim_fd_is(fd))
		return shim_real()->connect(fd, a, len);
	shim_unsupported("connect() on a Homa socket");
	errno = EOPNOTSUPP;
	return -1;
}

/** listen(): see connect(). */
SHIM_EXPORT int listen(int fd, int backlog)
{
	if (!shim_fd_is(fd))
		return shim_real()->listen(fd, backlog);
	shim_unsupported("listen() on a Homa socket");
	errno = EOPNOTSUPP;
	return -1;
}

/** ioctl(): HOMAIOCINFO, HOMAIOCABORT; FIONBIO as for any descriptor. */
SHIM_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	struct shim_sock *s;
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	s = shim_fd_get(fd);
	if (!s)
		return shim_real()->ioctl(fd, req, arg);
	if (req == FIONBIO) {
		ret = shim_real()->ioctl(fd, req, arg);
		if (ret == 0 && arg) {
			pthread_mutex_lock(&s->lock);
			s->nonblock = *(const int *)arg != 0;
			pthread_mutex_unlock(&s->lock);
		}
	} else {
		ret = shim_ioctl(s, req, arg);
	}
	shim_fd_put(s);
	return ret;
}
