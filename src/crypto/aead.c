/* SPDX-License-Identifier: MIT */
/**
 * @file aead.c
 * AES-GCM through OpenSSL 3 with the least per-packet work: the key is
 * set once per association in its own EVP_CIPHER_CTX; each packet only
 * sets the 12-byte nonce, adds the AAD, transforms in place and writes or
 * checks the 16-byte tag. The nonce goes to the GCM provider as a fixed
 * part (SPI) and a 64-bit invocation field (PSP's IV) through one
 * parameter call per packet (the tag rides along when opening), not
 * through EVP_CipherInit_ex(), which in OpenSSL 3.0 also asks the
 * provider for the IV length on every call.
 */
#include <string.h>

#include <openssl/core_names.h>

#include "psp_int.h"

/** psp_aead_init() - See psp_int.h. */
int psp_aead_init(struct psp_aead *a, EVP_CIPHER *cipher, const uint8_t *key, bool encrypt)
{
	a->encrypt = encrypt;
	a->fixed_set = false;
	a->nonce_inits = 0;
	a->ctx = EVP_CIPHER_CTX_new();
	if (!a->ctx)
		return HOMA_ENOMEM;
	if (EVP_CipherInit_ex2(a->ctx, cipher, key, NULL, encrypt ? 1 : 0, NULL) != 1) {
		EVP_CIPHER_CTX_free(a->ctx);
		a->ctx = NULL;
		return HOMA_EIO;
	}
	return 0;
}

/** psp_aead_free() - See psp_int.h. EVP_CIPHER_CTX_free() cleanses the key. */
void psp_aead_free(struct psp_aead *a)
{
	EVP_CIPHER_CTX_free(a->ctx);
	a->ctx = NULL;
}

/**
 * gen_nonce() - Sealing: let the provider use its next nonce (its fixed
 * part, then its 64-bit invocation counter, which it then increments)
 * and write the 8 counter bytes it used at @iv. Return: true on success.
 */
static bool gen_nonce(struct psp_aead *a, uint8_t *iv)
{
	OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN,
							     iv, 8),
			   OSSL_PARAM_construct_end()};

	return EVP_CIPHER_CTX_get_params(a->ctx, p) == 1;
}

/**
 * set_nonce() - Sealing: make @nonce (12 bytes) the provider's next
 * nonce, its last 8 bytes the counter it increments after each packet (a
 * fixed IV of length -1 sets the whole nonce). Return: true on success.
 */
static bool set_nonce(struct psp_aead *a, const uint8_t *nonce)
{
	OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
							     (void *)nonce, (size_t)-1),
			   OSSL_PARAM_construct_end()};

	a->fixed_set = EVP_CIPHER_CTX_set_params(a->ctx, p) == 1;
	memcpy(a->fixed, nonce, 4);
	a->nonce_inits++;
	return a->fixed_set;
}

/**
 * use_nonce() - Make @nonce the nonce of the next packet; when opening,
 * also hand over the @tag to check (@tag is NULL when sealing). Per packet
 * this is one parameter call: sealing takes the provider's next nonce
 * (which the association's counter normally matches: PSP's IV is that
 * counter), opening gives it the packet's 8 IV bytes and the tag at once.
 * A nonce the provider does not expect (the first packet, a sealer's
 * counter set anew, another SPI) has its fixed part set first.
 * Return: true on success.
 */
static bool use_nonce(struct psp_aead *a, const uint8_t *nonce, const uint8_t *tag)
{
	OSSL_PARAM p[4];
	uint8_t iv[8];
	int k = 0;

	if (a->encrypt) {
		if (a->fixed_set && !memcmp(a->fixed, nonce, 4) && gen_nonce(a, iv) &&
		    !memcmp(iv, nonce + 4, 8))
			return true;
		return set_nonce(a, nonce) && gen_nonce(a, iv) && !memcmp(iv, nonce + 4, 8);
	}
	/* the provider reads the tag, then the fixed part, then the invocation field */
	p[k++] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, (void *)tag,
						   HOMA_PSP_ICV_LEN);
	if (!a->fixed_set || memcmp(a->fixed, nonce, 4)) {
		p[k++] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED,
							   (void *)nonce, 4);
		memcpy(a->fixed, nonce, 4);
		a->nonce_inits++;
	}
	p[k++] = OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV,
						   (void *)(nonce + 4), 8);
	p[k] = OSSL_PARAM_construct_end();
	a->fixed_set = EVP_CIPHER_CTX_set_params(a->ctx, p) == 1;
	return a->fixed_set;
}

/**
 * start() - Set @nonce (and, opening, the @tag to check) and feed @aad.
 * Return: true on success.
 */
static bool start(struct psp_aead *a, const uint8_t *nonce, const uint8_t *tag,
		  const uint8_t *aad, size_t aad_len)
{
	int outl;

	return use_nonce(a, nonce, tag) &&
	       EVP_CipherUpdate(a->ctx, NULL, &outl, aad, (int)aad_len) == 1;
}

/**
 * get_tag() - Read the 16-byte GCM tag of the packet just sealed into
 * @tag through the provider's parameters directly (EVP_CIPHER_CTX_ctrl()
 * would translate to the same call). Return: true on success.
 */
static bool get_tag(struct psp_aead *a, uint8_t *tag)
{
	OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag,
							     HOMA_PSP_ICV_LEN),
			   OSSL_PARAM_construct_end()};

	return EVP_CIPHER_CTX_get_params(a->ctx, p) == 1;
}

/** psp_aead_seal() - See psp_int.h. */
int psp_aead_seal(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, NULL, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1) ||
	    EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1 ||
	    !get_tag(a, tag))
		return HOMA_EIO;
	return 0;
}

/** psp_aead_seal_ext() - See psp_int.h. */
int psp_aead_seal_ext(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		      size_t aad_len, uint8_t *data, size_t n, const struct homa_iov *src, int nsrc,
		      uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, NULL, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1))
		return HOMA_EIO;
	for (int i = 0; i < nsrc; i++) {
		if (src[i].len && EVP_CipherUpdate(a->ctx, data + n, &outl, src[i].base,
						   (int)src[i].len) != 1)
			return HOMA_EIO;
		n += src[i].len;
	}
	if (EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1 || !get_tag(a, tag))
		return HOMA_EIO;
	return 0;
}

/** psp_aead_open() - See psp_int.h. */
int psp_aead_open(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, const uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, tag, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1) ||
	    EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1)
		return -1;
	return 0;
}
