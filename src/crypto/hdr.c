/* SPDX-License-Identifier: MIT */
/**
 * @file hdr.c
 * The 16-byte PSP header: next header, header extension length, crypt
 * offset, flags (S, D, version, V, always-one bit), SPI, IV; big-endian.
 */
#include "psp_int.h"

/** Flags byte: bit 0 is always one; version in bits 5..2. */
#define FLAG_ONE 0x01
#define FLAG_V 0x02
#define VERSION_SHIFT 2
#define VERSION_MASK 0x0f

/** psp_hdr_write() - See psp_int.h. */
void psp_hdr_write(const struct psp_hdr *h, uint8_t *out)
{
	out[0] = h->next_hdr;
	out[1] = h->ext_len;
	out[2] = h->crypt_off & 0x3f;
	out[3] = (uint8_t)(((h->version & VERSION_MASK) << VERSION_SHIFT) | FLAG_ONE);
	for (int i = 0; i < 4; i++)
		out[4 + i] = (uint8_t)(h->spi >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		out[8 + i] = (uint8_t)(h->iv >> (56 - 8 * i));
}

/** psp_hdr_read() - See psp_int.h. */
int psp_hdr_read(const uint8_t *in, struct psp_hdr *h)
{
	h->next_hdr = in[0];
	h->ext_len = in[1];
	if (h->next_hdr != HOMA_PSP_NEXT_HDR || h->ext_len != 1)
		return -1 - HOMA_PSP_REJ_NOT_PSP;
	h->crypt_off = in[2];
	h->version = (uint8_t)((in[3] >> VERSION_SHIFT) & VERSION_MASK);
	/* reserved bits of byte 2, S and D bits, V (no cookie), the one bit */
	if (h->crypt_off != HOMA_PSP_CRYPT_OFF || (in[3] & 0xc0) || (in[3] & FLAG_V) ||
	    !(in[3] & FLAG_ONE))
		return -1 - HOMA_PSP_REJ_BAD_HEADER;
	h->spi = 0;
	for (int i = 0; i < 4; i++)
		h->spi = h->spi << 8 | in[4 + i];
	h->iv = 0;
	for (int i = 0; i < 8; i++)
		h->iv = h->iv << 8 | in[8 + i];
	return 0;
}
