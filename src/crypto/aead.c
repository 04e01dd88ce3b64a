/* SPDX-License-Identifier: MIT */
/**
 * @file aead.c
 * AES-GCM through OpenSSL 3 with the least per-packet work: the key is
 * set once per association in its own EVP_CIPHER_CTX; each packet only
 * sets the 12-byte nonce, adds the AAD, transforms in place and writes or
 * checks the 16-byte tag.
 */
#include <openssl/core_names.h>

#include "psp_int.h"

/** psp_aead_init() - See psp_int.h. */
int psp_aead_init(struct psp_aead *a, EVP_CIPHER *cipher, const uint8_t *key, bool encrypt)
{
	a->encrypt = encrypt;
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

/** start() - Set @nonce and feed @aad. Return: true on success. */
static bool start(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad, size_t aad_len)
{
	int outl;

	return EVP_CipherInit_ex(a->ctx, NULL, NULL, NULL, nonce, -1) == 1 &&
	       EVP_CipherUpdate(a->ctx, NULL, &outl, aad, (int)aad_len) == 1;
}

/**
 * tag_param() - Read (@set false) or set the 16-byte GCM tag at @tag
 * through the provider's parameters directly (EVP_CIPHER_CTX_ctrl()
 * would translate to the same call). Return: true on success.
 */
static bool tag_param(struct psp_aead *a, uint8_t *tag, bool set)
{
	OSSL_PARAM p[2] = {OSSL_PARAM_construct_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, tag,
							     HOMA_PSP_ICV_LEN),
			   OSSL_PARAM_construct_end()};

	return (set ? EVP_CIPHER_CTX_set_params(a->ctx, p) : EVP_CIPHER_CTX_get_params(a->ctx, p)) == 1;
}

/** psp_aead_seal() - See psp_int.h. */
int psp_aead_seal(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1) ||
	    EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1 ||
	    !tag_param(a, tag, false))
		return HOMA_EIO;
	return 0;
}

/** psp_aead_seal_ext() - See psp_int.h. */
int psp_aead_seal_ext(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		      size_t aad_len, uint8_t *data, size_t n, const struct homa_iov *src, int nsrc,
		      uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1))
		return HOMA_EIO;
	for (int i = 0; i < nsrc; i++) {
		if (src[i].len && EVP_CipherUpdate(a->ctx, data + n, &outl, src[i].base,
						   (int)src[i].len) != 1)
			return HOMA_EIO;
		n += src[i].len;
	}
	if (EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1 || !tag_param(a, tag, false))
		return HOMA_EIO;
	return 0;
}

/** psp_aead_open() - See psp_int.h. */
int psp_aead_open(struct psp_aead *a, const uint8_t *nonce, const uint8_t *aad,
		  size_t aad_len, uint8_t *data, size_t n, const uint8_t *tag)
{
	int outl;

	if (!start(a, nonce, aad, aad_len) ||
	    (n && EVP_CipherUpdate(a->ctx, data, &outl, data, (int)n) != 1) ||
	    !tag_param(a, (uint8_t *)tag, true) ||
	    EVP_CipherFinal_ex(a->ctx, data + n, &outl) != 1)
		return -1;
	return 0;
}
