/* SPDX-License-Identifier: MIT */
/**
 * @file tls.h
 * The encrypted arms' certificates and the TLS 1.3 layer of the TCP arm
 * (homa-bench --encrypt): kernel TCP carrying TLS 1.3 records with
 * AES-128-GCM (TLS_AES_128_GCM_SHA256, the cipher of Homa's PSP arm),
 * mutual certificate authentication, one handshake per connection.
 *
 * A certificate folder holds ca.pem and ROLE.pem / ROLE.key for ROLE
 * "server" and "client", as scripts/gen_certs.sh writes them.
 */
#ifndef HOMA_BENCH_TLS_H
#define HOMA_BENCH_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/** The folder --encrypt uses when --certs is not given. */
#define BENCH_CERTS_DEFAULT "/tmp/homa-bench-certs"

/**
 * bench_certs_dir() - The certificate folder of an encrypted run: @dir
 * when given (it must hold ca.pem), otherwise BENCH_CERTS_DEFAULT,
 * generated with scripts/gen_certs.sh when missing or older than 12 hours
 * (its certificates are valid for two days).
 * Return: the folder, or NULL (message on stderr).
 */
const char *bench_certs_dir(const char *dir);

/**
 * bench_cert_path() - "@dir/@role@ext" into @out (@cap bytes).
 * Return: @out, or NULL when it does not fit.
 */
const char *bench_cert_path(char *out, size_t cap, const char *dir, const char *role,
			    const char *ext);

/**
 * bench_tls_ctx() - A TLS 1.3-only context with the certificates of
 * @dir for the server or client role; peers must present a certificate
 * signed by @dir/ca.pem. The caller frees it with bench_tls_ctx_free().
 * Return: the context, or NULL (message on stderr).
 */
void *bench_tls_ctx(const char *dir, bool server);

/** bench_tls_ctx_free() - Free a context of bench_tls_ctx() (NULL: nothing). */
void bench_tls_ctx_free(void *ctx);

/**
 * bench_tls_handshake() - Run the TLS 1.3 handshake on connected socket
 * @fd, blocking up to 5 s; @fd keeps its O_NONBLOCK flag afterwards.
 * @ssl receives the session (bench_tls_free() releases it, not @fd).
 * Return: 0; HOMA_ECERT (a certificate was rejected); HOMA_EHANDSHAKE
 * (any other failure, including the peer speaking no TLS); HOMA_ENOMEM.
 */
int bench_tls_handshake(void *ctx, int fd, bool server, void **ssl);

/**
 * bench_tls_write() - Write up to @n bytes of @buf as TLS records
 * (partial writes allowed). After a -1 with errno EAGAIN the next call
 * must start with the same bytes and offer at least as many.
 * Return: bytes written, or -1 with errno EAGAIN (socket full) or EIO.
 */
ssize_t bench_tls_write(void *ssl, const void *buf, size_t n);

/**
 * bench_tls_read() - Read decrypted bytes into @buf (at most @n).
 * Return: bytes read; 0 when the peer closed; -1 with errno EAGAIN
 * (nothing buffered or on the socket) or EIO (a bad record or socket error).
 */
ssize_t bench_tls_read(void *ssl, void *buf, size_t n);

/**
 * bench_tls_pending() - True if @ssl holds bytes already read from the
 * socket (read-ahead), which epoll will not report: the handshake may
 * have read the peer's first records with its own.
 */
bool bench_tls_pending(void *ssl);

/** bench_tls_free() - Free a session of bench_tls_handshake() (NULL: nothing). */
void bench_tls_free(void *ssl);

#endif
