/* SPDX-License-Identifier: MIT */
/**
 * @file kdf.c
 * Key derivation of PSP: the key of an SPI is AES-256-CMAC, keyed by the
 * selected master key, in counter mode (NIST SP 800-108). Each 16-byte
 * block of key is the CMAC of one 16-byte input: counter (u32, from 1),
 * label "Pv0" (AES-GCM-128) or "Pv1" (AES-GCM-256), a zero byte, the SPI
 * (u32) and the key length in bits (u32), all big-endian.
 */
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include "psp_int.h"

/** homa_psp_key_len() - See psp.h. */
size_t homa_psp_key_len(int version)
{
	if (version == HOMA_PSP_AES_GCM_128 || version == HOMA_PSP_AES_GMAC_128)
		return 16;
	if (version == HOMA_PSP_AES_GCM_256 || version == HOMA_PSP_AES_GMAC_256)
		return 32;
	return 0;
}

/** put32() - Store @v big-endian at @p. */
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/**
 * cmac_block() - One CMAC of the 16 bytes at @in under @master into @out.
 * Return: 0 or HOMA_EIO.
 */
static int cmac_block(EVP_MAC *mac, const uint8_t *master, const uint8_t *in, uint8_t *out)
{
	char cipher[] = "AES-256-CBC";
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, cipher, 0),
		OSSL_PARAM_construct_end()};
	EVP_MAC_CTX *ctx = EVP_MAC_CTX_new(mac);
	size_t outl = 0;
	int ok;

	if (!ctx)
		return HOMA_EIO;
	ok = EVP_MAC_init(ctx, master, HOMA_PSP_MASTER_KEY_LEN, params) == 1 &&
	     EVP_MAC_update(ctx, in, 16) == 1 && EVP_MAC_final(ctx, out, &outl, 16) == 1 &&
	     outl == 16;
	EVP_MAC_CTX_free(ctx);
	return ok ? 0 : HOMA_EIO;
}

/**
 * psp_derive_with() - homa_psp_derive() with an already fetched CMAC.
 * Return: 0, HOMA_EINVAL or HOMA_EIO.
 */
static int psp_derive_with(EVP_MAC *mac, const uint8_t *master, int version, uint32_t spi,
			   uint8_t *key)
{
	size_t len = homa_psp_key_len(version);
	uint8_t in[16];

	if (!master || !key || !len)
		return HOMA_EINVAL;
	for (uint32_t i = 0; i < len / 16; i++) {
		put32(in, i + 1);
		memcpy(in + 4, len == 16 ? "Pv0" : "Pv1", 3);
		in[7] = 0;
		put32(in + 8, spi);
		put32(in + 12, (uint32_t)len * 8);
		if (cmac_block(mac, master, in, key + 16 * i)) {
			OPENSSL_cleanse(key, len);
			return HOMA_EIO;
		}
	}
	return 0;
}

/** homa_psp_derive() - See psp.h. */
int homa_psp_derive(const uint8_t *master, int version, uint32_t spi, uint8_t *key)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "CMAC", NULL);
	int r;

	if (!mac)
		return HOMA_EIO;
	r = psp_derive_with(mac, master, version, spi, key);
	EVP_MAC_free(mac);
	return r;
}

/** psp_derive() - Derive @spi's key from @p's master key of the SPI's phase. */
int psp_derive(const homa_psp *p, uint32_t spi, uint8_t *key)
{
	return psp_derive_with(p->cmac, p->master[spi >> 31], p->version, spi, key);
}
