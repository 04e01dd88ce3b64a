/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_input.h
 * Reading a fuzz input as a stream of small integers. Reads past the end
 * return zeros, so every input, however short, is a valid program.
 */
#ifndef HOMA_FUZZ_INPUT_H
#define HOMA_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** A cursor over the fuzz input (does not own the bytes). */
struct fz_in {
	const uint8_t *p;
	size_t len;
	size_t pos;
};

/** fz_in_init() - Start reading @len bytes at @p. */
static inline void fz_in_init(struct fz_in *in, const uint8_t *p, size_t len)
{
	in->p = p;
	in->len = len;
	in->pos = 0;
}

/** fz_in_more() - True while unread bytes remain. */
static inline bool fz_in_more(const struct fz_in *in)
{
	return in->pos < in->len;
}

/** fz_u8() - Next byte, or 0 past the end. */
static inline uint8_t fz_u8(struct fz_in *in)
{
	return in->pos < in->len ? in->p[in->pos++] : 0;
}

/** fz_u16() - Next two bytes, big-endian. */
static inline uint16_t fz_u16(struct fz_in *in)
{
	uint16_t hi = fz_u8(in);

	return (uint16_t)(hi << 8 | fz_u8(in));
}

/** fz_u32() - Next four bytes, big-endian. */
static inline uint32_t fz_u32(struct fz_in *in)
{
	uint32_t hi = fz_u16(in);

	return hi << 16 | fz_u16(in);
}

/**
 * fz_bytes() - Take up to @want bytes from the input.
 * Return: pointer into the input and the count in *@got (may be short).
 */
static inline const uint8_t *fz_bytes(struct fz_in *in, size_t want, size_t *got)
{
	size_t left = in->len - in->pos;
	const uint8_t *p = in->p + in->pos;

	*got = want < left ? want : left;
	in->pos += *got;
	return p;
}

#endif
