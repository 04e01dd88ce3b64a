/* SPDX-License-Identifier: MIT */
/**
 * @file api.c
 * Socket opening for the API suite (api.h).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"

int api_transport = HOMA_TRANSPORT_HOMA;

/** Default settings of the suite: a 3 s RPC timeout (a loaded CI machine). */
static struct homa_settings tolerant;

/** api_driver() - The driver HOMA_API_DRIVER names (UDP if unset or unknown). */
static int api_driver(void)
{
	const char *d = getenv("HOMA_API_DRIVER");

	return d && !strcmp(d, "raw") ? HOMA_DRIVER_RAW : HOMA_DRIVER_UDP;
}

/** api_opts() - See api.h. */
void api_opts(struct homa_open_opts *o, int mode, bool server, const struct homa_settings *st)
{
	if (!st) {
		homa_settings_default(&tolerant);
		tolerant.timeout_ticks = 3000;
		st = &tolerant;
	}
	homa_open_opts_default(o);
	o->driver = api_driver();
	o->transport = api_transport;
	o->mode = mode;
	o->server = server;
	o->bind_addr = "127.0.0.1";
	o->settings = st;
}

/** api_open() - See api.h. */
int api_open(homa_socket **s, int mode, bool server, const struct homa_settings *st)
{
	struct homa_open_opts o;

	api_opts(&o, mode, server, st);
	return homa_open(s, &o);
}

/** api_dst() - See api.h. */
struct sockaddr_storage api_dst(homa_socket *s)
{
	struct sockaddr_storage a;
	socklen_t l;

	homa_sockaddr_parse("127.0.0.1", (uint16_t)homa_local_port(s), &a, &l);
	return a;
}

/** api_now_ns() - See api.h. */
uint64_t api_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
