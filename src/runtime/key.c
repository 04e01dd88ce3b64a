/* SPDX-License-Identifier: MIT */
/**
 * @file key.c
 * The runtime's source of randomness for the engine: each engine's table
 * hash key (homa_engine_set_hash_key()) comes from the kernel's generator.
 */
#include <errno.h>
#include <sys/random.h>

#include "rt.h"

/** homa_rt_key_engine() - See rt.h. */
int homa_rt_key_engine(homa_engine *e)
{
	uint8_t key[HOMA_HASH_KEY_LEN];
	size_t got = 0;

	while (got < sizeof(key)) {
		ssize_t r = getrandom(key + got, sizeof(key) - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return HOMA_EIO;
		got += (size_t)r;
	}
	return homa_engine_set_hash_key(e, key) ? HOMA_EIO : 0;
}
