/* SPDX-License-Identifier: MIT */
/**
 * @file tls.c
 * The encrypted arms' certificates and the TCP arm's TLS 1.3 layer
 * (tls.h). The contexts and the mapping of handshake failures to
 * HOMA_ECERT / HOMA_EHANDSHAKE are the key exchange's (src/crypto/kx_tls.c),
 * so both encrypted arms authenticate peers the same way.
 */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "homa/errors.h"
#include "kx_int.h"

/** Age after which the default certificate folder is generated again. */
#define CERTS_MAX_AGE_S (12 * 3600)
/** Longest a handshake may block. */
#define HANDSHAKE_MS 5000
/** Bytes OpenSSL reads from the socket at a time (read-ahead). */
#define TLS_READ_BUFFER (256 * 1024)

/** bench_cert_path() - See tls.h. */
const char *bench_cert_path(char *out, size_t cap, const char *dir, const char *role,
			    const char *ext)
{
	int n = snprintf(out, cap, "%s/%s%s", dir, role, ext);

	return n > 0 && (size_t)n < cap ? out : NULL;
}

/** fresh() - True if @path exists and is younger than CERTS_MAX_AGE_S. */
static bool fresh(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && time(NULL) - st.st_mtime < CERTS_MAX_AGE_S;
}

/** bench_certs_dir() - See tls.h. */
const char *bench_certs_dir(const char *dir)
{
	char ca[512];

	if (dir) {
		if (!bench_cert_path(ca, sizeof(ca), dir, "ca", ".pem") || access(ca, R_OK)) {
			fprintf(stderr, "homa-bench: --certs %s holds no readable ca.pem\n", dir);
			return NULL;
		}
		return dir;
	}
	if (fresh(BENCH_CERTS_DEFAULT "/ca.pem") && fresh(BENCH_CERTS_DEFAULT "/client.pem"))
		return BENCH_CERTS_DEFAULT;
	if (system(HOMA_GEN_CERTS " " BENCH_CERTS_DEFAULT) != 0) {
		fprintf(stderr, "homa-bench: could not generate certificates in %s with %s; "
			"give --certs DIR\n", BENCH_CERTS_DEFAULT, HOMA_GEN_CERTS);
		return NULL;
	}
	return BENCH_CERTS_DEFAULT;
}

/** bench_tls_ctx() - See tls.h. */
void *bench_tls_ctx(const char *dir, bool server)
{
	const char *role = server ? "server" : "client";
	char cert[512], key[512], ca[512];
	struct homa_kx_files f = {bench_cert_path(cert, sizeof(cert), dir, role, ".pem"),
				  bench_cert_path(key, sizeof(key), dir, role, ".key"),
				  bench_cert_path(ca, sizeof(ca), dir, "ca", ".pem")};
	SSL_CTX *c = kx_ctx_new(&f, server);

	if (!c) {
		fprintf(stderr, "homa-bench: TLS: cannot load %s certificate, key or CA from %s\n",
			role, dir);
		return NULL;
	}
	if (SSL_CTX_set_ciphersuites(c, "TLS_AES_128_GCM_SHA256") != 1) {
		fprintf(stderr, "homa-bench: TLS: TLS_AES_128_GCM_SHA256 is not available\n");
		SSL_CTX_free(c);
		return NULL;
	}
	SSL_CTX_set_num_tickets(c, 0); /* no post-handshake messages on the data path */
	SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* read many records per system call, not a header and a body each */
	SSL_CTX_set_read_ahead(c, 1);
	SSL_CTX_set_default_read_buffer_len(c, TLS_READ_BUFFER);
	return c;
}

/** bench_tls_ctx_free() - See tls.h. */
void bench_tls_ctx_free(void *ctx)
{
	SSL_CTX_free(ctx);
}

/** bench_tls_handshake() - See tls.h. */
int bench_tls_handshake(void *ctx, int fd, bool server, void **out)
{
	int flags = fcntl(fd, F_GETFL);
	SSL *ssl = SSL_new(ctx);
	int r, err = 0;

	if (!ssl)
		return HOMA_ENOMEM;
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	kx_set_timeouts(fd, HANDSHAKE_MS);
	SSL_set_fd(ssl, fd);
	r = server ? SSL_accept(ssl) : SSL_connect(ssl);
	if (r != 1)
		err = kx_error(ssl, r);
	kx_set_timeouts(fd, 0);
	fcntl(fd, F_SETFL, flags);
	if (err) {
		SSL_free(ssl);
		return err;
	}
	*out = ssl;
	return 0;
}

/** io_result() - errno and -1 for the failed TLS call on @ssl that returned @r. */
static ssize_t io_result(SSL *ssl, int r)
{
	int e = SSL_get_error(ssl, r);

	ERR_clear_error();
	errno = (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) ? EAGAIN : EIO;
	return -1;
}

/** bench_tls_write() - See tls.h. */
ssize_t bench_tls_write(void *ssl, const void *buf, size_t n)
{
	size_t w = 0;
	int r = SSL_write_ex(ssl, buf, n, &w);

	return r == 1 ? (ssize_t)w : io_result(ssl, r);
}

/** bench_tls_read() - See tls.h. */
ssize_t bench_tls_read(void *ssl, void *buf, size_t n)
{
	size_t got = 0;
	int r = SSL_read_ex(ssl, buf, n, &got);

	if (r == 1)
		return (ssize_t)got;
	if (SSL_get_error(ssl, r) == SSL_ERROR_ZERO_RETURN)
		return 0;
	return io_result(ssl, r);
}

/** bench_tls_pending() - See tls.h. */
bool bench_tls_pending(void *ssl)
{
	return SSL_has_pending(ssl) == 1;
}

/** bench_tls_free() - See tls.h. */
void bench_tls_free(void *ssl)
{
	SSL_free(ssl);
}
