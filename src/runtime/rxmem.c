/* SPDX-License-Identifier: MIT */
/**
 * @file rxmem.c
 * The receive payload copies themselves (homa_rt_copy_payload()): a file
 * of their own so that tests can interpose on them (a linker --wrap of a
 * call between files), whatever the compiler or sanitizer does with
 * memcpy().
 */
#include <string.h>

#include "rt.h"

/** homa_rt_copy_payload() - See rt.h. */
void homa_rt_copy_payload(const struct homa_rx_copy *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		memcpy(c[i].dst, c[i].src, c[i].len);
}
