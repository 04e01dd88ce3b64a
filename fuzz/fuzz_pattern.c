/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_pattern.c
 * See fuzz_pattern.h. The pattern is made eight bytes at a time: word k
 * of a message is a 64-bit hash of (seed, k) and byte i is byte i % 8
 * (least significant first) of word i / 8, so filling and checking cost
 * one hash per eight bytes rather than one per byte.
 */
#include <string.h>

#include "fuzz_pattern.h"

/** Whole words can be stored and compared with memcpy (byte i%8 = bits 8*(i%8)). */
#define FZ_LE (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)

/** pattern_word() - Word @k (bytes 8k..8k+7) of the message with @seed. */
static uint64_t pattern_word(uint64_t seed, uint64_t k)
{
	uint64_t x = seed ^ (k * 0x9e3779b97f4a7c15ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/** fz_pattern_byte() - See fuzz_pattern.h. */
uint8_t fz_pattern_byte(uint64_t seed, uint64_t i)
{
	return (uint8_t)(pattern_word(seed, i >> 3) >> ((i & 7) * 8));
}

/** fz_pattern_fill() - See fuzz_pattern.h. */
void fz_pattern_fill(uint8_t *buf, uint64_t seed, uint64_t off, size_t len)
{
	while (len) {
		unsigned s = (unsigned)(off & 7), j, n = 8 - s;
		uint64_t x = pattern_word(seed, off >> 3) >> (s * 8);

		if (n > len)
			n = (unsigned)len;
		if (FZ_LE && n == 8)
			memcpy(buf, &x, 8);
		else
			for (j = 0; j < n; j++)
				buf[j] = (uint8_t)(x >> (j * 8));
		buf += n;
		off += n;
		len -= n;
	}
}

/** fz_pattern_match() - See fuzz_pattern.h. */
int fz_pattern_match(const uint8_t *p, uint64_t seed, uint64_t off, size_t len)
{
	while (len) {
		unsigned s = (unsigned)(off & 7), j, n = 8 - s;
		uint64_t x = pattern_word(seed, off >> 3) >> (s * 8);

		if (n > len)
			n = (unsigned)len;
		if (FZ_LE && n == 8) {
			uint64_t y;

			memcpy(&y, p, 8);
			if (y != x)
				return 0;
		} else {
			for (j = 0; j < n; j++)
				if (p[j] != (uint8_t)(x >> (j * 8)))
					return 0;
		}
		p += n;
		off += n;
		len -= n;
	}
	return 1;
}

/** fz_msg_matches_from() - See fuzz_pattern.h. */
int fz_msg_matches_from(const homa_msg *m, uint64_t seed, size_t from, size_t len)
{
	size_t off = from;

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

/** fz_msg_matches() - See fuzz_pattern.h. */
int fz_msg_matches(const homa_msg *m, uint64_t seed, size_t len)
{
	return fz_msg_matches_from(m, seed, 0, len);
}
