/* SPDX-License-Identifier: MIT */
/**
 * @file tp_frame.c
 * The TCP transport's wire format (tp.h): connection preface and frame
 * headers, big-endian, checked field by field (every byte comes from a
 * stranger).
 */
#include <string.h>

#include "tp.h"

/** put16() - Store @v big-endian at @p. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** get16() - Load a big-endian 16-bit value from @p. */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/** put_be() - Store the low @n bytes of @v big-endian at @p. */
static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/** get_be() - Load @n big-endian bytes from @p. */
static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/** tp_hdr_encode() - See tp.h. */
void tp_hdr_encode(const struct tp_hdr *h, uint8_t *out)
{
	put_be(out, h->len, 4);
	out[4] = h->type;
	out[5] = TP_VERSION;
	put16(out + 6, 0);
	put_be(out + 8, h->id, 8);
}

/** tp_hdr_decode() - See tp.h. */
int tp_hdr_decode(const uint8_t *in, uint32_t max_len, uint8_t want, struct tp_hdr *h)
{
	uint32_t len = (uint32_t)get_be(in, 4);

	if (in[4] != want || in[5] != TP_VERSION || get16(in + 6) != 0 || len > max_len)
		return HOMA_EINVAL;
	h->len = len;
	h->type = in[4];
	h->id = get_be(in + 8, 8);
	return 0;
}

/** tp_preface_encode() - See tp.h. */
void tp_preface_encode(uint16_t port, uint8_t *out)
{
	memcpy(out, TP_MAGIC, 8);
	put16(out + 8, port);
	put16(out + 10, 0);
}

/** tp_preface_decode() - See tp.h. */
int tp_preface_decode(const uint8_t *in, uint16_t *port)
{
	uint16_t p = get16(in + 8);

	if (memcmp(in, TP_MAGIC, 8) != 0 || p == 0 || get16(in + 10) != 0)
		return HOMA_EINVAL;
	*port = p;
	return 0;
}
