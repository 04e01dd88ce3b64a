/* SPDX-License-Identifier: MIT */
/**
 * @file encrypt.h
 * Encrypted sockets: every packet sealed in the PSP format (psp.h), with
 * keys installed by the application or fetched by the TLS 1.3 key
 * exchange (docs/ENCRYPTION.md).
 *
 *     struct homa_encrypt_opts e;
 *     homa_encrypt_opts_default(&e);          // AES-GCM-128, random master keys
 *     e.cert_file = "me.pem"; e.key_file = "me.key"; e.ca_file = "ca.pem";
 *     o.encrypt = &e;                         // struct homa_open_opts o
 *     homa_open(&s, &o);
 *
 * With certificate files set, a server socket runs a TLS 1.3 service
 * (mutual certificate authentication) on TCP port kx_port (default: the
 * same number as its Homa port); a client's first homa_send() to a
 * destination asks that service for an SPI and key, gives its own in the
 * same exchange (for the responses), caches both and asks again at half
 * their lifetime. Without certificate files, associations come only
 * from homa_encrypt_tx_add() and homa_encrypt_rx_issue().
 *
 * Every packet that arrives at an encrypted socket and does not
 * authenticate, cleartext included, is dropped and counted by reason
 * (homa_encrypt_stats()); none is ever delivered.
 *
 * On an encrypted socket homa_send_request() and homa_send() may also
 * return HOMA_ENOASSOC (no association and no key exchange configured)
 * and the errors of homa_encrypt_connect(). homa_open() returns
 * HOMA_ENOTSUP for the raw and XDP drivers (before opening them: PSP is
 * implemented on the UDP driver only), HOMA_EINVAL for only some of the
 * certificate files or unreadable ones, HOMA_EADDRINUSE if the key
 * exchange's TCP port is taken.
 */
#ifndef HOMA_ENCRYPT_H
#define HOMA_ENCRYPT_H

#include "homa/export.h"

#include <stdint.h>
#include <sys/socket.h>

#include "homa/homa.h"
#include "homa/psp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Encryption options of homa_open() (opts.encrypt). */
struct homa_encrypt_opts {
	int version;                /**< enum homa_psp_version (default AES-GCM-128) */
	const uint8_t *master_keys; /**< 2 x 32 bytes, or NULL: random */
	/* TLS 1.3 key exchange: all three files, or none */
	const char *cert_file;      /**< this endpoint's certificate (PEM) */
	const char *key_file;       /**< its private key (PEM) */
	const char *ca_file;        /**< CA that signs the peers' certificates (PEM) */
	uint16_t kx_port;           /**< server: TCP port of the service; client: port to
				     *   ask at; 0 = the Homa port's number */
	/**
	 * Rotate the master keys every rotate_ns (0: only when the
	 * application calls homa_encrypt_rotate(); any length up to
	 * UINT64_MAX, where a rotation that would come after the monotonic
	 * clock's end never does). An SPI lives two rotations; the key
	 * exchange tells clients so they re-ask in time.
	 */
	uint64_t rotate_ns;
	uint32_t kx_timeout_ms;     /**< one key exchange's time limit (default 3000) */
	/**
	 * UDP port sealed packets are sent to: 0 (default) = each destination
	 * socket's own port; else the PSP port of every host (PSP assigns
	 * HOMA_PSP_UDP_PORT, 1000), from which each packet reaches the socket
	 * its clear header names (homa_encrypt_host_stats() says how). The
	 * kernel steers it there: the socket binds this port too (SO_REUSEPORT)
	 * and a BPF program picks the socket by the clear header's Homa port
	 * (needs CAP_BPF and CAP_NET_ADMIN). Where that is refused, or with
	 * HOMA_PSP_STEER=off in the environment, the socket joins instead
	 * this process's receiver, which needs
	 * CAP_NET_BIND_SERVICE for ports below 1024 and CAP_NET_ADMIN (it
	 * forwards with the sender's address as source): homa_open() returns
	 * HOMA_EPERM without them, HOMA_ENOTSUP if it is the socket's own port,
	 * HOMA_EINVAL if another socket of the process joined with another
	 * port. IPv4 and IPv6 sockets share the receiver. If the port
	 * is held by a program that is not a Homa PSP receiver, packets sent to
	 * it are lost: use 0 on the senders to that host. Sockets always accept
	 * sealed packets on their own port as well.
	 */
	uint16_t udp_port;
};

/** Counters of this process's PSP receiver (homa_encrypt_host_stats()). */
struct homa_psp_host_stats {
	uint64_t forwarded;      /**< sealed packets handed to a local socket */
	/*
	 * Drops by reason. With a steered socket in this process, each adds
	 * the host's kernel count: what the steering program of the PSP port
	 * dropped for every process of the host (network namespace) since
	 * it was loaded, not only for this one.
	 */
	uint64_t not_psp;        /**< datagrams without a PSP header (or registrations from afar) */
	uint64_t truncated;      /**< shorter than PSP header, common header and ICV */
	uint64_t no_port;        /**< for a Homa port no socket of this host registered */
	uint64_t send_errors;    /**< forwarding failed (the local socket's buffer was full) */
	uint64_t registrations;  /**< port lists received from other processes */
	uint32_t owner;          /**< 1 if this process holds the PSP port now */
	uint32_t sockets;        /**< sockets of this process that joined */
	uint64_t batches;        /**< reads of the port (recvmmsg) that returned datagrams */
	/**
	 * Sockets of this process the kernel steers to (no receiver, no
	 * hop): each binds the PSP port too, and a BPF program picks the
	 * socket by the clear header's Homa port. Sockets that could not be
	 * steered (no CAP_BPF, kernel without it, the port held by a
	 * receiver, HOMA_PSP_STEER=off) use the receiver and are counted in
	 * sockets; the log says why.
	 */
	uint32_t steered;
	uint32_t steer_refused;  /**< sockets that tried steering and use the receiver */
};

/** homa_encrypt_opts_default() - Fill @e with the defaults above (NULL is ignored). */
HOMA_API void homa_encrypt_opts_default(struct homa_encrypt_opts *e);

/**
 * homa_encrypt_tx_add() - Seal packets to @dst (address and Homa port)
 * with the receiver's @spi and @key (homa_psp_key_len(@version) bytes).
 * Return: 0; HOMA_EINVAL (NULL @s, @dst or @key, an address that is not
 * IPv4 or IPv6, unknown @version); HOMA_ENOTSUP (socket not encrypted);
 * HOMA_ESHUTDOWN (closed); HOMA_ENOMEM; HOMA_EIO.
 */
HOMA_API int homa_encrypt_tx_add(homa_socket *s, const struct sockaddr *dst, uint32_t spi,
			const uint8_t *key, int version);

/**
 * homa_encrypt_tx_remove() - Forget @dst's association.
 * Return: 0; HOMA_ENOASSOC (none); HOMA_EINVAL (NULL @s or @dst, an
 * address that is not IPv4 or IPv6); HOMA_ENOTSUP (not encrypted);
 * HOMA_ESHUTDOWN (closed).
 */
HOMA_API int homa_encrypt_tx_remove(homa_socket *s, const struct sockaddr *dst);

/**
 * homa_encrypt_rx_issue() - Issue an SPI and key of this socket for one
 * sender (to hand over by the application's own means). Issue one per
 * sending socket: two senders given the same SPI count their IVs from
 * the same start, so they repeat nonces under one key (which breaks
 * AES-GCM) and this socket drops the later one's packets as replays.
 * @key: receives homa_psp_key_len(version) bytes.
 * Return: 0; HOMA_EINVAL (an argument NULL); HOMA_ENOTSUP (not
 * encrypted); HOMA_ESHUTDOWN (closed); HOMA_EAGAIN (as
 * homa_psp_rx_issue()); HOMA_ENOMEM; HOMA_EIO.
 */
HOMA_API int homa_encrypt_rx_issue(homa_socket *s, uint32_t *spi, uint8_t *key);

/**
 * homa_encrypt_rotate() - Rotate this socket's master keys (@key: 32
 * bytes, or NULL for a random one); SPIs of the replaced key expire.
 * Return: 0; HOMA_ENOTSUP (not encrypted); HOMA_ESHUTDOWN (closed);
 * HOMA_EINVAL (NULL @s); HOMA_EIO (random source).
 */
HOMA_API int homa_encrypt_rotate(homa_socket *s, const uint8_t *key);

/**
 * homa_encrypt_connect() - Make sure packets to @dst can be sealed now:
 * run the key exchange unless an association exists and its renewal is
 * not due (homa_send() does this by itself before each request).
 * Return: 0; HOMA_ENOTSUP (not encrypted, no certificate files, or the
 * peer uses another PSP version); HOMA_ECERT (the peer's certificate was
 * rejected, or it rejected ours); HOMA_EHANDSHAKE (no service, refused,
 * timed out or malformed answer); HOMA_EKEYEXPIRED (the renewal failed
 * and the association has outlived the lifetime @dst announced with it:
 * @dst has rotated its SPI out; a failed renewal before that returns 0
 * and keeps the association); HOMA_EAGAIN (no receive SPI left, as
 * homa_psp_rx_issue()); HOMA_ENOMEM; HOMA_EIO; HOMA_ESHUTDOWN (closed);
 * HOMA_EINVAL (NULL @s or @dst, port 0, not IPv4 or IPv6).
 */
HOMA_API int homa_encrypt_connect(homa_socket *s, const struct sockaddr *dst);

/**
 * homa_encrypt_stats() - This socket's PSP counters (sealed, opened,
 * rejected by reason, associations, rotations) and key exchanges.
 * Return: 0; HOMA_EINVAL (NULL @s or @out); HOMA_ENOTSUP (not
 * encrypted); HOMA_ESHUTDOWN (closed).
 */
HOMA_API int homa_encrypt_stats(homa_socket *s, struct homa_psp_stats *out);

/**
 * homa_encrypt_host_stats() - Counters of this process's PSP receiver
 * (sockets opened with udp_port set). The PSP port is held by one process
 * of the host at a time; the others wait and take it over when it exits.
 * Packets rejected by the socket they were forwarded to (unknown SPI,
 * replay, forgery) are counted in its homa_encrypt_stats(). While a
 * socket of this process is steered by the kernel, not_psp, truncated
 * and no_port include the host's kernel drop counts for its PSP port
 * (all processes); if they cannot be read, a warning is logged and the
 * fields hold this process's receiver counts only.
 * Return: 0; HOMA_EINVAL (@out NULL); HOMA_ENOTSUP (no socket of this
 * process joined the receiver).
 */
HOMA_API int homa_encrypt_host_stats(struct homa_psp_host_stats *out);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_ENCRYPT_H */
