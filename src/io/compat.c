/* SPDX-License-Identifier: MIT */
/**
 * @file compat.c
 * Settings a driver adjusts before they reach the engine: which hosts the
 * driver can reach decides the module-compatibility default, and the
 * address family decides the default packet size.
 */
#include <string.h>
#include <sys/socket.h>

#include "driver.h"
#include "homa/settings.h"

/** Default settings.mtu: a 1500-byte link less IPv4 (20) and UDP (8) headers. */
#define DEFAULT_MTU (1500 - 28)

/** homa_driver_settings() - See driver.h. */
void homa_driver_settings(const struct homa_driver *d, const struct homa_settings *in,
			  struct homa_settings *out)
{
	bool raw = strcmp(d->ops->name, "raw") == 0;

	*out = *in;
	if (out->compat == HOMA_COMPAT_AUTO)
		out->compat = raw ? HOMA_COMPAT_MODULE : HOMA_COMPAT_OFF;
	if (d->family == AF_INET6 && out->mtu == DEFAULT_MTU)
		out->mtu = 1500 - 40 - (raw ? 0 : 8);
}
