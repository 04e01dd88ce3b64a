/* SPDX-License-Identifier: MIT */
/**
 * @file addr.c
 * Host addresses: IPv6, with IPv4 mapped into ::ffff:0:0/96.
 */
#include <stdio.h>
#include <string.h>

#include "homa/engine.h"

static const uint8_t v4_prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/** homa_addr_ipv4() - See engine.h. */
homa_addr homa_addr_ipv4(uint32_t ip)
{
	homa_addr a;

	memcpy(a.b, v4_prefix, sizeof(v4_prefix));
	a.b[12] = (uint8_t)(ip >> 24);
	a.b[13] = (uint8_t)(ip >> 16);
	a.b[14] = (uint8_t)(ip >> 8);
	a.b[15] = (uint8_t)ip;
	return a;
}

/** homa_addr_is_ipv4() - See engine.h. */
bool homa_addr_is_ipv4(const homa_addr *a)
{
	return a && memcmp(a->b, v4_prefix, sizeof(v4_prefix)) == 0;
}

/** homa_addr_get_ipv4() - See engine.h. */
uint32_t homa_addr_get_ipv4(const homa_addr *a)
{
	if (!a)
		return 0;
	return ((uint32_t)a->b[12] << 24) | ((uint32_t)a->b[13] << 16) |
	       ((uint32_t)a->b[14] << 8) | a->b[15];
}

/** homa_addr_equal() - See engine.h. */
bool homa_addr_equal(const homa_addr *a, const homa_addr *b)
{
	return a && b && memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/** homa_addr_format() - See engine.h. IPv6 is printed as 8 hex groups. */
char *homa_addr_format(const homa_addr *a, char *buf, size_t cap)
{
	const uint8_t *b;

	if (!a || !buf) {
		if (buf && cap)
			buf[0] = 0;
		return buf;
	}
	b = a->b;
	if (homa_addr_is_ipv4(a)) {
		snprintf(buf, cap, "%u.%u.%u.%u", b[12], b[13], b[14], b[15]);
		return buf;
	}
	snprintf(buf, cap, "%x:%x:%x:%x:%x:%x:%x:%x",
		 (b[0] << 8) | b[1], (b[2] << 8) | b[3], (b[4] << 8) | b[5],
		 (b[6] << 8) | b[7], (b[8] << 8) | b[9], (b[10] << 8) | b[11],
		 (b[12] << 8) | b[13], (b[14] << 8) | b[15]);
	return buf;
}
