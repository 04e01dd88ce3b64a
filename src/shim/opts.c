/* SPDX-License-Identifier: MIT */
/**
 * @file opts.c
 * bind(), setsockopt(), getsockopt() and getsockname() on a Homa socket,
 * with the module's rules (homa(7)): bind() picks a server port below
 * HOMA_MIN_DEFAULT_PORT and makes the socket a server; SO_HOMA_RCVBUF
 * registers the receive region once; SO_HOMA_SERVER switches serving.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/** shim_bind() - See bind(2) and homa(7). Return: 0 or -1 with errno. */
int shim_bind(struct shim_sock *s, const struct sockaddr *a, socklen_t len)
{
	uint16_t port;
	int e;

	if (!a || len < sizeof(sa_family_t))
		return shim_sock_fail(s, EINVAL, "no address passed to bind");
	if (a->sa_family != s->family)
		return shim_sock_fail(s, EAFNOSUPPORT,
				      "address family in bind address didn't match socket");
	if (s->family == AF_INET6 ? len < sizeof(struct sockaddr_in6)
				  : len < sizeof(struct sockaddr_in))
		return shim_sock_fail(s, EINVAL, "bind address too short");
	port = ntohs(s->family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port
					   : ((const struct sockaddr_in *)a)->sin_port);
	if (port == 0)
		return 0;  /* homa(7): port 0 keeps the port the socket has */
	if (port >= HOMA_MIN_DEFAULT_PORT)
		return shim_sock_fail(s, EINVAL,
				      "port number invalid: in the automatically assigned range");
	pthread_mutex_lock(&s->lock);
	if (s->h && s->port == port) {
		e = 0;
	} else {
		bool was = s->server;

		s->server = true;
		e = shim_sock_reopen(s, port);
		if (e)
			s->server = was;
	}
	pthread_mutex_unlock(&s->lock);
	if (e)
		return shim_sock_fail(s, e, e == EADDRINUSE ?
				      "requested port number is already in use" :
				      "could not bind the port");
	return 0;
}

/** set_rcvbuf() - SO_HOMA_RCVBUF. Return: 0 or -1 with errno. */
static int set_rcvbuf(struct shim_sock *s, const void *v, socklen_t len)
{
	struct homa_rcvbuf_args a;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t min = (uint64_t)(ncpu > 0 ? ncpu : 1) * HOMA_BPAGE_SIZE +
		       2 * (uint64_t)HOMA_MAX_MESSAGE_LENGTH;
	int e;

	if (len != sizeof(a))
		return shim_sock_fail(s, EINVAL,
				      "invalid optlen argument: must be sizeof(struct homa_rcvbuf_args)");
	if (!v)
		return shim_sock_fail(s, EFAULT, "invalid address for homa_rcvbuf_args");
	memcpy(&a, v, sizeof(a));
	pthread_mutex_lock(&s->lock);
	e = shim_pool_set(&s->pool, (void *)(uintptr_t)a.start, a.length, min);
	pthread_mutex_unlock(&s->lock);
	if (e)
		return shim_sock_fail(s, e, e == ENOMEM ? "no memory for the buffer pool" :
				      e == EFAULT ? "receive buffer region is not writable" :
				      "buffer region unaligned, too small, too large or already set");
	return 0;
}

/** set_server() - SO_HOMA_SERVER. Return: 0 or -1 with errno. */
static int set_server(struct shim_sock *s, const void *v, socklen_t len)
{
	int on, e = 0;

	if (len != sizeof(int))
		return shim_sock_fail(s, EINVAL, "invalid optlen argument: must be sizeof(int)");
	if (!v)
		return shim_sock_fail(s, EFAULT, "invalid address for SO_HOMA_SERVER value");
	memcpy(&on, v, sizeof(on));
	pthread_mutex_lock(&s->lock);
	if (s->server != (on != 0)) {
		s->server = on != 0;
		if (s->h)
			e = shim_sock_reopen(s, s->port);
	}
	pthread_mutex_unlock(&s->lock);
	return e ? shim_sock_fail(s, e, "could not reopen the socket") : 0;
}

/** shim_setsockopt() - See homa(7). Return: 0 or -1 with errno. */
int shim_setsockopt(struct shim_sock *s, int level, int name, const void *v, socklen_t len)
{
	if (level != IPPROTO_HOMA) {
		shim_unsupported("setsockopt() at a level other than IPPROTO_HOMA");
		return shim_sock_fail(s, ENOPROTOOPT,
				      "setsockopt invoked with level not IPPROTO_HOMA");
	}
	if (name == SO_HOMA_RCVBUF)
		return set_rcvbuf(s, v, len);
	if (name == SO_HOMA_SERVER)
		return set_server(s, v, len);
	shim_unsupported("this IPPROTO_HOMA socket option");
	return shim_sock_fail(s, ENOPROTOOPT, "setsockopt option not supported by Homa");
}

/** put_opt() - Copy @n bytes of @val out as getsockopt() does. */
static int put_opt(const void *val, socklen_t n, void *v, socklen_t *len)
{
	memcpy(v, val, n);
	*len = n;
	return 0;
}

/** sol_socket() - The SOL_SOCKET options that describe the socket. */
static int sol_socket(struct shim_sock *s, int name, void *v, socklen_t *len)
{
	int val;

	switch (name) {
	case SO_DOMAIN: val = s->family; break;
	case SO_TYPE: val = SOCK_DGRAM; break;
	case SO_PROTOCOL: val = IPPROTO_HOMA; break;
	default:
		shim_unsupported("getsockopt(SOL_SOCKET) other than SO_DOMAIN, SO_TYPE, "
				 "SO_PROTOCOL");
		return shim_sock_fail(s, ENOPROTOOPT, "getsockopt option not supported");
	}
	if (*len < sizeof(int))
		return shim_sock_fail(s, EINVAL, "invalid optlen argument: must be sizeof(int)");
	return put_opt(&val, sizeof(val), v, len);
}

/** shim_getsockopt() - See homa(7). Return: 0 or -1 with errno. */
int shim_getsockopt(struct shim_sock *s, int level, int name, void *v, socklen_t *len)
{
	if (!len || !v)
		return shim_sock_fail(s, EFAULT, "invalid address for optlen argument");
	if (level == SOL_SOCKET)
		return sol_socket(s, name, v, len);
	if (level != IPPROTO_HOMA)
		return shim_sock_fail(s, ENOPROTOOPT,
				      "getsockopt invoked with level not IPPROTO_HOMA");
	if (name == SO_HOMA_RCVBUF) {
		struct homa_rcvbuf_args a;

		if (*len < sizeof(a))
			return shim_sock_fail(s, EINVAL, "invalid optlen argument: must be "
					      "sizeof(struct homa_rcvbuf_args)");
		pthread_mutex_lock(&s->lock);
		a.start = (uintptr_t)s->pool.base;
		a.length = s->pool.base ? s->pool.length : 0;
		pthread_mutex_unlock(&s->lock);
		return put_opt(&a, sizeof(a), v, len);
	}
	if (name == SO_HOMA_SERVER) {
		int on;

		pthread_mutex_lock(&s->lock);
		on = s->server;
		pthread_mutex_unlock(&s->lock);
		if (*len < sizeof(on))
			return shim_sock_fail(s, EINVAL, "invalid optlen argument: must be sizeof(int)");
		return put_opt(&on, sizeof(on), v, len);
	}
	return shim_sock_fail(s, ENOPROTOOPT, "getsockopt option not supported by Homa");
}

/** shim_getsockname() - The wildcard address and the socket's port
 *  (opening it if needed). Return: 0 or -1 with errno. */
int shim_getsockname(struct shim_sock *s, struct sockaddr *a, socklen_t *len)
{
	struct sockaddr_storage me;
	homa_socket *h;
	uint16_t port;

	if (!a || !len)
		return shim_sock_fail(s, EFAULT, "invalid address for getsockname");
	pthread_mutex_lock(&s->lock);
	h = shim_sock_handle(s);
	port = s->port;
	pthread_mutex_unlock(&s->lock);
	if (!h)
		return -1;
	memset(&me, 0, sizeof(me));
	me.ss_family = (sa_family_t)s->family;
	if (s->family == AF_INET6)
		((struct sockaddr_in6 *)&me)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&me)->sin_port = htons(port);
	shim_sock_fill_name(s, &me, a, len);
	return 0;
}
