/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pattern.c
 * See fuzz_pattern.h.
 */
#include "fuzz_pattern.h"

/** fz_pattern_byte() - See fuzz_pattern.h. */
uint8_t fz_pattern_byte(uint64_t seed, uint64_t i)
{
	uint64_t x = (seed ^ (i * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;

	return (uint8_t)(x >> 56);
}

/** fz_pattern_fill() - See fuzz_pattern.h. */
void fz_pattern_fill(uint8_t *buf, uint64_t seed, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = fz_pattern_byte(seed, off + i);
}

/** fz_pattern_match() - See fuzz_pattern.h. */
int fz_pattern_match(const uint8_t *p, uint64_t seed, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != fz_pattern_byte(seed, off + i))
			return 0;
	return 1;
}

/** fz_msg_matches() - See fuzz_pattern.h. */
int fz_msg_matches(const homa_msg *m, uint64_t seed, size_t len)
{
	size_t off = 0;

	if (homa_msg_length(m) != len)
		return 0;
	while (off < len) {
		const uint8_t *p;
		size_t n = homa_msg_segment(m, off, &p);

		if (n == 0 || !fz_pattern_match(p, seed, off, n))
			return 0;
		off += n;
	}
	return 1;
}
