/* SPDX-License-Identifier: MIT */
/**
 * @file test_aead.c
 * The AES-GCM layer (src/crypto/aead.c): per packet no EVP_CipherInit_ex()
 * (the nonce goes to the provider as a fixed part and an invocation
 * field, one parameter call), and every packet still sealed exactly as
 * a context initialised with its nonce seals it (OpenSSL's one-shot path
 * as the reference), whatever order of nonces: counters in sequence, a
 * counter started anew, another SPI; opened in any order, a forged tag
 * rejected without disturbing the next packet. The test wraps
 * EVP_CipherInit_ex() and EVP_CipherInit_ex2() (-Wl,--wrap) to count them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "psp_int.h"

/** Payload bytes per packet; AAD bytes (the PSP and common headers). */
#define LEN 100
#define AAD 44
/** Packets per test. */
#define NPKT 64

int __real_EVP_CipherInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, ENGINE *e,
			     const unsigned char *key, const unsigned char *iv, int enc);
int __real_EVP_CipherInit_ex2(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const unsigned char *key,
			      const unsigned char *iv, int enc, const OSSL_PARAM *params);

/** Calls of EVP_CipherInit_ex() and EVP_CipherInit_ex2() so far. */
static int inits;

/** __wrap_EVP_CipherInit_ex() - Count the call, then make it. */
int __wrap_EVP_CipherInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, ENGINE *e,
			     const unsigned char *key, const unsigned char *iv, int enc)
{
	inits++;
	return __real_EVP_CipherInit_ex(ctx, c, e, key, iv, enc);
}

/** __wrap_EVP_CipherInit_ex2() - Count the call, then make it. */
int __wrap_EVP_CipherInit_ex2(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const unsigned char *key,
			      const unsigned char *iv, int enc, const OSSL_PARAM *params)
{
	inits++;
	return __real_EVP_CipherInit_ex2(ctx, c, key, iv, enc, params);
}

/** A sealed test packet: its nonce, AAD, ciphertext and tag. */
struct pkt {
	uint8_t nonce[12], aad[AAD], data[LEN], tag[16];
};

/** The test's cipher and key. */
static EVP_CIPHER *gcm;
static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/** make_nonce() - @n = @spi || @iv, both big-endian (PSP's nonce). */
static void make_nonce(uint8_t *n, uint32_t spi, uint64_t iv)
{
	for (int i = 0; i < 4; i++)
		n[i] = (uint8_t)(spi >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		n[4 + i] = (uint8_t)(iv >> (56 - 8 * i));
}

/** fill() - Patterned clear text and AAD of packet @i under @nonce. */
static void fill(struct pkt *p, uint32_t spi, uint64_t iv, int i)
{
	make_nonce(p->nonce, spi, iv);
	for (int k = 0; k < AAD; k++)
		p->aad[k] = (uint8_t)(k + i);
	for (int k = 0; k < LEN; k++)
		p->data[k] = (uint8_t)(k * 7 + i);
}

/**
 * reference() - Seal @p's clear text the one-shot way, a fresh context
 * initialised with its nonce, into @out (ciphertext and tag).
 */
static void reference(const struct pkt *p, struct pkt *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l;

	*out = *p;
	assert_non_null(c);
	assert_int_equal(EVP_EncryptInit_ex2(c, gcm, key, p->nonce, NULL), 1);
	assert_int_equal(EVP_EncryptUpdate(c, NULL, &l, p->aad, AAD), 1);
	assert_int_equal(EVP_EncryptUpdate(c, out->data, &l, p->data, LEN), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, out->data + LEN, &l), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, out->tag), 1);
	EVP_CIPHER_CTX_free(c);
}

/** setup() - Fetch AES-128-GCM. */
static int setup(void **state)
{
	(void)state;
	gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	return gcm ? 0 : -1;
}

/** teardown() - Free the cipher. */
static int teardown(void **state)
{
	(void)state;
	EVP_CIPHER_free(gcm);
	return 0;
}

/**
 * seal_check() - Seal packet @i under @spi, @iv with @a and compare it with
 * the reference; keep the sealed packet in @p.
 */
static void seal_check(struct psp_aead *a, struct pkt *p, uint32_t spi, uint64_t iv, int i)
{
	struct pkt want;

	fill(p, spi, iv, i);
	reference(p, &want);
	assert_int_equal(psp_aead_seal(a, p->nonce, p->aad, AAD, p->data, LEN, p->tag), 0);
	assert_memory_equal(p->data, want.data, LEN);
	assert_memory_equal(p->tag, want.tag, 16);
}

/**
 * aead__no_init_per_packet() - NPKT packets with consecutive IVs are sealed
 * and then opened in reverse order with no EVP_CipherInit_ex() after the
 * contexts were keyed; the nonce's fixed part is set once per context.
 * Setting the nonce through EVP_CipherInit_ex() (once per packet) fails.
 */
static void aead__no_init_per_packet(void **state)
{
	static struct pkt p[NPKT];
	struct psp_aead s, o;
	int before;

	(void)state;
	assert_int_equal(psp_aead_init(&s, gcm, key, true), 0);
	assert_int_equal(psp_aead_init(&o, gcm, key, false), 0);
	before = inits;
	for (int i = 0; i < NPKT; i++)
		seal_check(&s, &p[i], 0x80000005u, (uint64_t)i + 1, i);
	for (int i = NPKT - 1; i >= 0; i--) {
		struct pkt clear;

		fill(&clear, 0x80000005u, (uint64_t)i + 1, i);
		assert_int_equal(psp_aead_open(&o, p[i].nonce, p[i].aad, AAD, p[i].data, LEN,
					       p[i].tag), 0);
		assert_memory_equal(p[i].data, clear.data, LEN);
	}
	assert_int_equal(inits, before);
	assert_int_equal(s.nonce_inits, 1);
	assert_int_equal(o.nonce_inits, 1);
	psp_aead_free(&s);
	psp_aead_free(&o);
}

/**
 * aead__nonce_jumps_match_reference() - Sealing with a counter that jumps,
 * starts anew and changes SPI (each such nonce is set whole) gives the
 * reference's bytes for every packet; opening under two SPIs alternating
 * and after a forged tag still opens every honest packet.
 */
static void aead__nonce_jumps_match_reference(void **state)
{
	static const struct {
		uint32_t spi;
		uint64_t iv;
	} seq[] = {{7, 1}, {7, 2}, {7, 3}, {7, 10}, {7, 11}, {7, 1}, {7, 2}, {9, 3}, {9, 4},
		   {7, 5}, {7, UINT64_MAX - 1}, {9, 5}};
	enum { N = sizeof(seq) / sizeof(seq[0]) };
	struct pkt p[N];
	struct psp_aead s, o;

	(void)state;
	assert_int_equal(psp_aead_init(&s, gcm, key, true), 0);
	assert_int_equal(psp_aead_init(&o, gcm, key, false), 0);
	for (int i = 0; i < N; i++)
		seal_check(&s, &p[i], seq[i].spi, seq[i].iv, i);
	assert_int_equal(s.nonce_inits, 7);  /* the first, 10, 1 anew, 9:3, 7:5, the jump, 9:5 */
	for (int i = 0; i < N; i++) {
		struct pkt clear, forged = p[i];

		forged.tag[i % 16] ^= 1;
		assert_int_equal(psp_aead_open(&o, forged.nonce, forged.aad, AAD, forged.data, LEN,
					       forged.tag), -1);
		fill(&clear, seq[i].spi, seq[i].iv, i);
		assert_int_equal(psp_aead_open(&o, p[i].nonce, p[i].aad, AAD, p[i].data, LEN,
					       p[i].tag), 0);
		assert_memory_equal(p[i].data, clear.data, LEN);
	}
	psp_aead_free(&s);
	psp_aead_free(&o);
}

/** main() - Run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(aead__no_init_per_packet),
		cmocka_unit_test(aead__nonce_jumps_match_reference),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
