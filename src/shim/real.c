/* SPDX-License-Identifier: MIT */
/**
 * @file real.c
 * The C library's versions of the calls the shim intercepts, found with
 * dlsym(RTLD_NEXT) once. Every call on a descriptor that is not a Homa
 * socket goes straight to them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"

static struct shim_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

/** need() - dlsym(RTLD_NEXT, @name); a missing call is fatal (no libc?). */
static void *need(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		fprintf(stderr, "libhoma-linux: the C library has no %s()\n", name);
		abort();
	}
	return p;
}

/** load() - Fill the table (pthread_once). */
static void load(void)
{
	real.socket = need("socket");
	real.bind = need("bind");
	real.setsockopt = need("setsockopt");
	real.getsockopt = need("getsockopt");
	real.getsockname = need("getsockname");
	real.getpeername = need("getpeername");
	real.sendmsg = need("sendmsg");
	real.recvmsg = need("recvmsg");
	real.close = need("close");
	real.shutdown = need("shutdown");
	real.ioctl = need("ioctl");
	real.fcntl = need("fcntl");
	real.fcntl64 = dlsym(RTLD_NEXT, "fcntl64"); /* glibc >= 2.28 only */
	if (!real.fcntl64)
		real.fcntl64 = real.fcntl;
	real.dup = need("dup");
	real.dup2 = need("dup2");
	real.dup3 = need("dup3");
	real.connect = need("connect");
	real.listen = need("listen");
}

/** shim_real() - See shim.h. */
const struct shim_real *shim_real(void)
{
	pthread_once(&real_once, load);
	return &real;
}
