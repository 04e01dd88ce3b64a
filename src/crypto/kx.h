/* SPDX-License-Identifier: MIT */
/**
 * @file kx.h
 * The TLS 1.3 key exchange (OpenSSL, mutual certificate authentication):
 * a client asks a server's service for an SPI and key and gives its own
 * in the same request. One request and one answer per connection.
 *
 * Message (52 bytes, big-endian): "HKX1", status u8 (0 = ok, else a
 * negative HOMA_E* code negated), version u8, the sender's own Homa port
 * u16 (the server answers for its socket; the client's port is where
 * the server's responses go), SPI u32,
 * lifetime in ns u64 (how long the SPI stays valid at the least), key
 * (32 bytes; the first homa_psp_key_len(version) are used).
 */
#ifndef HOMA_CRYPTO_KX_H
#define HOMA_CRYPTO_KX_H

#include <stdint.h>
#include <sys/socket.h>

#include "homa/psp.h"

/** Bytes of a key-exchange message. */
#define HOMA_KX_MSG_LEN 52

/** One request or answer. */
struct homa_kx_msg {
	uint8_t status;     /**< 0 or -HOMA_E* */
	uint8_t version;
	uint16_t port;
	uint32_t spi;
	uint64_t lifetime_ns;
	uint8_t key[HOMA_PSP_MAX_KEY_LEN];
};

/** Certificate, key and CA files (PEM). */
struct homa_kx_files {
	const char *cert, *key, *ca;
};

/**
 * homa_kx_encode() / homa_kx_decode() - The 52-byte wire form.
 * homa_kx_decode() returns 0 or HOMA_EPROTO (bad magic).
 */
void homa_kx_encode(const struct homa_kx_msg *m, uint8_t *out);
int homa_kx_decode(const uint8_t *in, struct homa_kx_msg *m);

/**
 * Server callback: answer @req from @peer (its address; its Homa port is
 * @req->port) into @resp. Runs on the service thread.
 * Return: 0 or a negative HOMA_E* code, sent as the status.
 */
typedef int (*homa_kx_answer_fn)(void *ctx, const struct sockaddr *peer,
				 const struct homa_kx_msg *req, struct homa_kx_msg *resp);

struct homa_kx_server;

/**
 * homa_kx_server_start() - Listen on TCP @bind and answer key requests on
 * a thread of its own, one connection at a time (each bounded by
 * @timeout_ms).
 * Return: 0; HOMA_EINVAL (files unreadable or key does not match);
 * HOMA_EADDRINUSE; HOMA_ENOMEM; HOMA_EIO.
 */
int homa_kx_server_start(struct homa_kx_server **out, const struct homa_kx_files *f,
			 const struct sockaddr *bind, socklen_t len, uint32_t timeout_ms,
			 homa_kx_answer_fn fn, void *ctx);

/** homa_kx_server_counts() - Exchanges answered and connections refused so far. */
void homa_kx_server_counts(struct homa_kx_server *s, uint64_t *served, uint64_t *refused);

/** homa_kx_server_stop() - Stop the thread, close and free (NULL is ignored). */
void homa_kx_server_stop(struct homa_kx_server *s);

/**
 * homa_kx_request() - Connect to @dst, handshake, send @req, read @resp.
 * Return: 0 (then @resp->status is 0); HOMA_ECERT (a certificate was
 * rejected, by either side); HOMA_EHANDSHAKE (no service, timeout,
 * protocol error); the server's status code if it refused; HOMA_EINVAL
 * (files unreadable).
 */
int homa_kx_request(const struct homa_kx_files *f, const struct sockaddr *dst, socklen_t len,
		    uint32_t timeout_ms, const struct homa_kx_msg *req, struct homa_kx_msg *resp);

#endif /* HOMA_CRYPTO_KX_H */
