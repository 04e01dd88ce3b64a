/* SPDX-License-Identifier: MIT */
/**
 * @file env.c
 * The shim's settings, from environment variables (homa-linux(7)), and
 * the one-time notices about features it does not implement.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static struct shim_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/** load() - Read HOMA_LINUX_DRIVER, _ADDR4, _ADDR6, _VERBOSE. */
static void load(void)
{
	const char *d = getenv("HOMA_LINUX_DRIVER");
	const char *v = getenv("HOMA_LINUX_VERBOSE");

	env.driver = HOMA_DRIVER_UDP;
	if (d && !strcmp(d, "raw"))
		env.driver = HOMA_DRIVER_RAW;
	else if (d && *d && strcmp(d, "udp"))
		fprintf(stderr, "libhoma-linux: HOMA_LINUX_DRIVER=%s is not udp or raw; "
			"using udp\n", d);
	env.addr4 = getenv("HOMA_LINUX_ADDR4");
	if (!env.addr4 || !*env.addr4)
		env.addr4 = "0.0.0.0";
	env.addr6 = getenv("HOMA_LINUX_ADDR6");
	if (!env.addr6 || !*env.addr6)
		env.addr6 = "::";
	env.verbose = v && *v && strcmp(v, "0");
}

/** shim_env() - See shim.h. */
const struct shim_env *shim_env(void)
{
	pthread_once(&env_once, load);
	return &env;
}

#define SHIM_NOTICES 32
static const char *noticed[SHIM_NOTICES];
static int nnoticed;
static pthread_mutex_t notice_lock = PTHREAD_MUTEX_INITIALIZER;

/** shim_unsupported() - See shim.h. @what must be a static string. */
void shim_unsupported(const char *what)
{
	bool seen = false;

	pthread_mutex_lock(&notice_lock);
	for (int i = 0; i < nnoticed; i++)
		if (noticed[i] == what || !strcmp(noticed[i], what))
			seen = true;
	if (!seen && nnoticed < SHIM_NOTICES)
		noticed[nnoticed++] = what;
	pthread_mutex_unlock(&notice_lock);
	if (!seen)
		fprintf(stderr, "libhoma-linux: not supported: %s (see homa-linux(7))\n",
			what);
}
