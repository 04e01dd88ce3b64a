/* SPDX-License-Identifier: MIT */
/**
 * @file fdtab.c
 * Which descriptors are Homa sockets of the shim. Every intercepted call
 * asks, so the common answer (no) is one atomic load with no lock; the
 * references that keep a socket alive while a call runs in it are taken
 * under one mutex.
 */
#include <errno.h>
#include <pthread.h>

#include "shim.h"

#define SHIM_MAX_FD 65536

static struct shim_sock *table[SHIM_MAX_FD];
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/** shim_fd_is() - See shim.h. */
bool shim_fd_is(int fd)
{
	return fd >= 0 && fd < SHIM_MAX_FD &&
	       __atomic_load_n(&table[fd], __ATOMIC_ACQUIRE) != NULL;
}

/** shim_fd_get() - See shim.h. */
struct shim_sock *shim_fd_get(int fd)
{
	struct shim_sock *s;

	if (!shim_fd_is(fd))
		return NULL;
	pthread_mutex_lock(&table_lock);
	s = table[fd];
	if (s)
		s->refs++;
	pthread_mutex_unlock(&table_lock);
	return s;
}

/** shim_fd_put() - See shim.h. */
void shim_fd_put(struct shim_sock *s)
{
	int left;

	pthread_mutex_lock(&table_lock);
	left = --s->refs;
	pthread_mutex_unlock(&table_lock);
	if (left == 0)
		shim_sock_free(s);
}

/** shim_fd_attach() - See shim.h. */
int shim_fd_attach(int fd, struct shim_sock *s)
{
	struct shim_sock *old;

	if (fd < 0 || fd >= SHIM_MAX_FD)
		return EMFILE;
	pthread_mutex_lock(&table_lock);
	old = table[fd];
	s->refs++;
	s->nfds++;
	if (old)
		old->nfds--;
	__atomic_store_n(&table[fd], s, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&table_lock);
	if (old)  /* a stale mapping (descriptor closed behind our back) */
		shim_fd_put(old);
	return 0;
}

/** shim_fd_detach() - See shim.h. */
bool shim_fd_detach(int fd)
{
	struct shim_sock *s;
	bool last = false;

	if (!shim_fd_is(fd))
		return false;
	pthread_mutex_lock(&table_lock);
	s = table[fd];
	if (s) {
		last = --s->nfds == 0;
		__atomic_store_n(&table[fd], NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&table_lock);
	if (!s)
		return false;
	if (last)
		shim_sock_shutdown(s);
	shim_fd_put(s);
	return true;
}
