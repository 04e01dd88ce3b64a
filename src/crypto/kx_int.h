/* SPDX-License-Identifier: MIT */
/**
 * @file kx_int.h
 * Helpers shared by the key exchange's client and server (kx_tls.c).
 */
#ifndef HOMA_CRYPTO_KX_INT_H
#define HOMA_CRYPTO_KX_INT_H

#include <stdbool.h>

#include <openssl/ssl.h>

#include "kx.h"

SSL_CTX *kx_ctx_new(const struct homa_kx_files *f, bool server);
void kx_set_timeouts(int fd, uint32_t ms);
int kx_error(SSL *ssl, int r);
int kx_read_msg(SSL *ssl, struct homa_kx_msg *m);
int kx_write_msg(SSL *ssl, const struct homa_kx_msg *m);

#endif /* HOMA_CRYPTO_KX_INT_H */
