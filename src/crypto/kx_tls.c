/* SPDX-License-Identifier: MIT */
/**
 * @file kx_tls.c
 * TLS 1.3 contexts for the key exchange: TLS 1.3 only, this endpoint's
 * certificate and key, the peers' CA, and peer certificates required and
 * verified on both sides. Plus the socket helpers both sides share.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "kx_int.h"

/** kx_ctx_new() - A TLS 1.3 context (@server side or client) for @f. NULL on failure. */
SSL_CTX *kx_ctx_new(const struct homa_kx_files *f, bool server)
{
	SSL_CTX *c;

	if (!f || !f->cert || !f->key || !f->ca)
		return NULL;
	c = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!c)
		return NULL;
	if (SSL_CTX_set_min_proto_version(c, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(c, f->cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(c, f->key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(c) != 1 ||
	    SSL_CTX_load_verify_locations(c, f->ca, NULL) != 1) {
		SSL_CTX_free(c);
		ERR_clear_error();
		return NULL;
	}
	SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	return c;
}

/** kx_set_timeouts() - Bound every read and write on @fd by @ms. */
void kx_set_timeouts(int fd, uint32_t ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/**
 * kx_error() - Map the failure of a TLS call on @ssl (result @r) to
 * HOMA_ECERT (a certificate rejected by us or by the peer) or
 * HOMA_EHANDSHAKE (anything else). Clears OpenSSL's error queue.
 */
int kx_error(SSL *ssl, int r)
{
	unsigned long e;
	int err = HOMA_EHANDSHAKE;

	if (SSL_get_verify_result(ssl) != X509_V_OK)
		err = HOMA_ECERT;
	while ((e = ERR_get_error()) != 0) {
		switch (ERR_GET_REASON(e)) {
		case SSL_R_CERTIFICATE_VERIFY_FAILED:
		case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
		case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
		case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN:
		case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
		case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
		case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
			err = HOMA_ECERT;
			break;
		default:
			break;
		}
	}
	return err;
}

/** kx_read_msg() - Read exactly one message from @ssl. Return: 0 or kx_error(). */
int kx_read_msg(SSL *ssl, struct homa_kx_msg *m)
{
	uint8_t buf[HOMA_KX_MSG_LEN];
	size_t got = 0;

	while (got < sizeof(buf)) {
		size_t n = 0;
		int r = SSL_read_ex(ssl, buf + got, sizeof(buf) - got, &n);

		if (r != 1)
			return kx_error(ssl, r);
		got += n;
	}
	return homa_kx_decode(buf, m) ? HOMA_EHANDSHAKE : 0;
}

/** kx_write_msg() - Write one message to @ssl. Return: 0 or kx_error(). */
int kx_write_msg(SSL *ssl, const struct homa_kx_msg *m)
{
	uint8_t buf[HOMA_KX_MSG_LEN];
	size_t n = 0;

	homa_kx_encode(m, buf);
	if (SSL_write_ex(ssl, buf, sizeof(buf), &n) != 1 || n != sizeof(buf))
		return kx_error(ssl, 0);
	return 0;
}
