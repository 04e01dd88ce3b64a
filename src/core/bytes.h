/* SPDX-License-Identifier: MIT */
/**
 * @file bytes.h
 * Big-endian load and store helpers for the wire codec (private).
 */
#ifndef HOMA_CORE_BYTES_H
#define HOMA_CORE_BYTES_H

#include <stdint.h>

/** homa_put16() - Store @v big-endian at @p. */
static inline void homa_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** homa_put32() - Store @v big-endian at @p. */
static inline void homa_put32(uint8_t *p, uint32_t v)
{
	homa_put16(p, (uint16_t)(v >> 16));
	homa_put16(p + 2, (uint16_t)v);
}

/** homa_put64() - Store @v big-endian at @p. */
static inline void homa_put64(uint8_t *p, uint64_t v)
{
	homa_put32(p, (uint32_t)(v >> 32));
	homa_put32(p + 4, (uint32_t)v);
}

/** homa_get16() - Load a big-endian 16-bit value from @p. */
static inline uint16_t homa_get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/** homa_get32() - Load a big-endian 32-bit value from @p. */
static inline uint32_t homa_get32(const uint8_t *p)
{
	return ((uint32_t)homa_get16(p) << 16) | homa_get16(p + 2);
}

/** homa_get64() - Load a big-endian 64-bit value from @p. */
static inline uint64_t homa_get64(const uint8_t *p)
{
	return ((uint64_t)homa_get32(p) << 32) | homa_get32(p + 4);
}

#endif /* HOMA_CORE_BYTES_H */
