/* SPDX-License-Identifier: MIT */
/**
 * @file dup.c
 * Descriptor copies of Homa sockets: dup(), dup2(), dup3() and fcntl()'s
 * F_DUPFD give a second descriptor of the same socket (as with any
 * socket); a descriptor overwritten by dup2() is closed first; F_SETFL's
 * O_NONBLOCK makes recvmsg() non-blocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/** copied() - @newfd (result of a dup of @s's descriptor) joins @s. */
static int copied(struct shim_sock *s, int newfd)
{
	int e;

	if (newfd < 0 || !s)
		return newfd;
	e = shim_fd_attach(newfd, s);
	if (e) {
		shim_real()->close(newfd);
		errno = e;
		return -1;
	}
	return newfd;
}

/** dup(): another descriptor of the same socket. */
SHIM_EXPORT int dup(int fd)
{
	struct shim_sock *s = shim_fd_get(fd);
	int n = copied(s, shim_real()->dup(fd));

	if (s)
		shim_fd_put(s);
	return n;
}

/** dup2(): as dup(), onto @newfd (closed first if it was a Homa socket). */
SHIM_EXPORT int dup2(int fd, int newfd)
{
	struct shim_sock *s;
	int n;

	if (fd == newfd)
		return shim_real()->dup2(fd, newfd);
	s = shim_fd_get(fd);
	shim_fd_detach(newfd);
	n = copied(s, shim_real()->dup2(fd, newfd));
	if (s)
		shim_fd_put(s);
	return n;
}

/** dup3(): as dup2(), with O_CLOEXEC. */
SHIM_EXPORT int dup3(int fd, int newfd, int flags)
{
	struct shim_sock *s;
	int n;

	if (fd == newfd)
		return shim_real()->dup3(fd, newfd, flags);
	s = shim_fd_get(fd);
	shim_fd_detach(newfd);
	n = copied(s, shim_real()->dup3(fd, newfd, flags));
	if (s)
		shim_fd_put(s);
	return n;
}

/** do_fcntl() - fcntl() through @real, following dups and O_NONBLOCK. */
static int do_fcntl(int (*real)(int, int, ...), int fd, int cmd, unsigned long arg)
{
	struct shim_sock *s = shim_fd_get(fd);
	int ret = real(fd, cmd, arg);

	if (!s)
		return ret;
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) {
		ret = copied(s, ret);
	} else if (cmd == F_SETFL && ret == 0) {
		pthread_mutex_lock(&s->lock);
		s->nonblock = (arg & O_NONBLOCK) != 0;
		pthread_mutex_unlock(&s->lock);
	}
	shim_fd_put(s);
	return ret;
}

/** fcntl(): see do_fcntl(). The argument is passed on as the C library
 *  reads it (one machine word). */
SHIM_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	return do_fcntl(shim_real()->fcntl, fd, cmd, arg);
}

/** fcntl64(): glibc's name for fcntl() in programs built with 64-bit offsets. */
SHIM_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	return do_fcntl(shim_real()->fcntl64, fd, cmd, arg);
}
