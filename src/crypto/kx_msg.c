/* SPDX-License-Identifier: MIT */
/**
 * @file kx_msg.c
 * The key-exchange message's wire form (kx.h).
 */
#include <string.h>

#include "kx.h"

/** homa_kx_encode() - See kx.h. */
void homa_kx_encode(const struct homa_kx_msg *m, uint8_t *out)
{
	memcpy(out, "HKX1", 4);
	out[4] = m->status;
	out[5] = m->version;
	out[6] = (uint8_t)(m->port >> 8);
	out[7] = (uint8_t)m->port;
	for (int i = 0; i < 4; i++)
		out[8 + i] = (uint8_t)(m->spi >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		out[12 + i] = (uint8_t)(m->lifetime_ns >> (56 - 8 * i));
	memcpy(out + 20, m->key, HOMA_PSP_MAX_KEY_LEN);
}

/** homa_kx_decode() - See kx.h. */
int homa_kx_decode(const uint8_t *in, struct homa_kx_msg *m)
{
	if (memcmp(in, "HKX1", 4))
		return HOMA_EPROTO;
	m->status = in[4];
	m->version = in[5];
	m->port = (uint16_t)(in[6] << 8 | in[7]);
	m->spi = 0;
	for (int i = 0; i < 4; i++)
		m->spi = m->spi << 8 | in[8 + i];
	m->lifetime_ns = 0;
	for (int i = 0; i < 8; i++)
		m->lifetime_ns = m->lifetime_ns << 8 | in[12 + i];
	memcpy(m->key, in + 20, HOMA_PSP_MAX_KEY_LEN);
	return 0;
}
