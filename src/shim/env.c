/* SPDX-License-Identifier: MIT */
/**
 * @file env.c
 * The shim's settings, from environment variables (homa-linux(7)): the
 * driver and its interface settings, addresses, the RPC timeout; and
 * the one-time notices about features it does not implement.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

static struct shim_env env;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/**
 * number() - Environment variable @name as a whole number in [@lo, @hi];
 * unset or empty gives @def, anything else (with a line on stderr) too.
 */
static uint32_t number(const char *name, uint32_t lo, uint32_t hi, uint32_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || v[0] == '-' || n < lo || n > hi) {
		fprintf(stderr, "libhoma-linux: %s=%s is not a number from %u to %u; "
			"using %u\n", name, v, lo, hi, def);
		return def;
	}
	return (uint32_t)n;
}

/** driver() - HOMA_LINUX_DRIVER: udp (default), raw or xdp. */
static int driver(void)
{
	const char *d = getenv("HOMA_LINUX_DRIVER");

	if (d && !strcmp(d, "raw"))
		return HOMA_DRIVER_RAW;
	if (d && !strcmp(d, "xdp"))
		return HOMA_DRIVER_XDP;
	if (d && *d && strcmp(d, "udp"))
		fprintf(stderr, "libhoma-linux: HOMA_LINUX_DRIVER=%s is not udp, raw or xdp; "
			"using udp\n", d);
	return HOMA_DRIVER_UDP;
}

/** load() - Read the HOMA_LINUX_* variables (homa-linux(7)). */
static void load(void)
{
	const char *v = getenv("HOMA_LINUX_VERBOSE");

	env.driver = driver();
	env.ifname = getenv("HOMA_LINUX_IFNAME");
	if (env.ifname && !*env.ifname)
		env.ifname = NULL;
	if (env.driver == HOMA_DRIVER_XDP && !env.ifname)
		fprintf(stderr, "libhoma-linux: HOMA_LINUX_DRIVER=xdp needs HOMA_LINUX_IFNAME "
			"(the interface); sockets will not open\n");
	env.xdp_queues = number("HOMA_LINUX_XDP_QUEUES", 0, 1024, 0);
	env.xdp_raw = number("HOMA_LINUX_XDP_RAW", 0, 1, 0) == 1;
	env.timeout_ms = number("HOMA_LINUX_TIMEOUT_MS", 10, 3600000, 0);
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
