/* SPDX-License-Identifier: MIT */
/**
 * @file sock.c
 * One socket of the module's API: its descriptor (an epoll set watching
 * the runtime socket's homa_fd() and the shim's own eventfd), the runtime
 * socket behind it (opened lazily, opened again by bind() and
 * SO_HOMA_SERVER), shutdown and the last error's text for HOMAIOCINFO.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "homa/engine.h"
#include "shim.h"

/** watch() - Add @fd to @s's epoll set (readable). Return: 0 or errno. */
static int watch(struct shim_sock *s, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? errno : 0;
}

/** shim_sock_new() - See shim.h. */
struct shim_sock *shim_sock_new(int family, int flags)
{
	struct shim_sock *s = calloc(1, sizeof(*s));
	int e;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	shim_pool_init(&s->pool);
	s->family = family;
	s->watched_fd = -1;
	s->nonblock = flags & SOCK_NONBLOCK;
	shim_rpcs_init(&s->rpcs);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->evfd < 0 || (e = watch(s, s->evfd)) != 0 ||
	    (s->nonblock && fcntl(s->epfd, F_SETFL, O_NONBLOCK) != 0)) {
		e = errno ? errno : EMFILE;
		shim_sock_free(s);
		errno = e;
		return NULL;
	}
	return s;
}

/** close_handle() - Close the runtime socket (lock held or sole owner). */
static void close_handle(struct shim_sock *s)
{
	if (s->watched_fd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->watched_fd, NULL);
	s->watched_fd = -1;
	if (s->h)
		homa_close(s->h);
	s->h = NULL;
}

/** shim_sock_free() - See shim.h. */
void shim_sock_free(struct shim_sock *s)
{
	close_handle(s);
	shim_rpcs_destroy(&s->rpcs);
	shim_pool_destroy(&s->pool);
	if (s->evfd >= 0)
		shim_real()->close(s->evfd);
	if (s->epfd >= 0)
		shim_real()->close(s->epfd);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/**
 * driver_opts() - Fill @o and @st from the environment: driver, its
 * interface settings, the bind address of @s's family, the RPC timeout
 * (socket() refuses IPv6 sockets on the XDP driver).
 */
static void driver_opts(const struct shim_sock *s, struct homa_open_opts *o,
			struct homa_settings *st)
{
	const struct shim_env *env = shim_env();

	st->max_message = HOMA_MAX_MESSAGE_LENGTH;
	if (env->timeout_ms)
		st->timeout_ticks = (uint32_t)((uint64_t)env->timeout_ms * 1000000u / st->tick_ns);
	o->settings = st;
	o->driver = env->driver;
	o->ifname = env->ifname;
	o->xdp_queues = env->xdp_queues;
	o->xdp_raw = env->xdp_raw;
	o->bind_addr = s->family == AF_INET6 ? env->addr6 : env->addr4;
}

/** driver_name() - @driver's name for the verbose log line. */
static const char *driver_name(int driver)
{
	return driver == HOMA_DRIVER_RAW ? "raw IP" : driver == HOMA_DRIVER_XDP ? "AF_XDP" : "UDP";
}

/**
 * open_handle() - Open the runtime socket on @port.
 * Return: 0 or an errno (EAFNOSUPPORT, EADDRINUSE, EPERM, ...).
 */
static int open_handle(struct shim_sock *s, uint16_t port)
{
	const struct shim_env *env = shim_env();
	struct homa_settings st;
	struct homa_open_opts o;
	struct homa_alloc rx;
	homa_socket *h;
	int err, fd;

	homa_open_opts_default(&o);
	homa_settings_default(&st);
	driver_opts(s, &o, &st);
	o.port = port;
	o.server = s->server;
	shim_pool_hooks(&s->pool, &rx);  /* messages land in the region */
	o.rx_alloc = &rx;
	err = homa_open(&h, &o);
	if (err)
		return shim_errno(err);
	fd = homa_fd(h);
	if (fd < 0 || (err = watch(s, fd)) != 0) {
		homa_close(h);
		return fd < 0 ? shim_errno(fd) : err;
	}
	s->h = h;
	s->watched_fd = fd;
	s->port = (uint16_t)homa_local_port(h);
	if (env->verbose)
		fprintf(stderr, "libhoma-linux: socket: port %u%s (%s driver)\n", s->port,
			s->server ? ", server" : "", driver_name(env->driver));
	return 0;
}

/** shim_sock_handle() - See shim.h. */
homa_socket *shim_sock_handle(struct shim_sock *s)
{
	int e;

	if (s->shut) {
		errno = ESHUTDOWN;
		return NULL;
	}
	if (s->h)
		return s->h;
	e = open_handle(s, 0);
	if (e) {
		shim_sock_fail(s, e, "could not open the runtime socket");
		return NULL;
	}
	return s->h;
}

/** shim_sock_reopen() - See shim.h. */
int shim_sock_reopen(struct shim_sock *s, uint16_t port)
{
	if (s->shut)
		return ESHUTDOWN;
	close_handle(s);
	shim_rpcs_destroy(&s->rpcs);  /* the old socket's RPCs are over */
	shim_sock_signal(s);
	pthread_cond_broadcast(&s->cond);
	return open_handle(s, port);
}

/** shim_sock_shutdown() - See shim.h. */
void shim_sock_shutdown(struct shim_sock *s)
{
	pthread_mutex_lock(&s->lock);
	s->shut = true;
	if (s->h)
		homa_close(s->h);  /* wakes threads blocked in it */
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/** shim_sock_fail() - See shim.h. */
int shim_sock_fail(struct shim_sock *s, int e, const char *msg)
{
	__atomic_store_n(&s->error_msg, msg, __ATOMIC_RELAXED);
	errno = e;
	return -1;
}

/** shim_sock_signal() - See shim.h. */
void shim_sock_signal(struct shim_sock *s)
{
	uint64_t v = 1;

	if (s->rpcs.shared) {
		if (write(s->evfd, &v, sizeof(v)) < 0)
			return;
	} else if (read(s->evfd, &v, sizeof(v)) < 0) {
		return;
	}
}

/** shim_sock_fill_name() - See shim.h. */
void shim_sock_fill_name(const struct shim_sock *s, const struct sockaddr_storage *peer,
			 void *name, socklen_t *len)
{
	struct sockaddr_storage out;
	socklen_t n;

	memset(&out, 0, sizeof(out));
	if (s->family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out;

		a6->sin6_family = AF_INET6;
		if (peer->ss_family == AF_INET6) {
			*a6 = *(const struct sockaddr_in6 *)peer;
		} else if (peer->ss_family == AF_INET) {
			const struct sockaddr_in *a4 = (const struct sockaddr_in *)peer;

			a6->sin6_port = a4->sin_port;
			a6->sin6_addr.s6_addr[10] = 0xff;  /* ::ffff:a.b.c.d */
			a6->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&a6->sin6_addr.s6_addr[12], &a4->sin_addr, 4);
		}
		n = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&out;

		if (peer->ss_family == AF_INET)
			*a4 = *(const struct sockaddr_in *)peer;
		a4->sin_family = AF_INET;
		n = sizeof(*a4);
	}
	if (name && len) {
		memcpy(name, &out, *len < n ? *len : n);
		*len = n;
	}
}
