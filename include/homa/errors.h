/* SPDX-License-Identifier: MIT */
/**
 * @file errors.h
 * Error codes shared by every layer of homa. Every function that can fail
 * returns one of these as a negative int (0 or a positive count means
 * success); homa_strerror() turns it into text. Each code has exactly one
 * meaning, the one given here; no function returns any other negative
 * number (reasons that are not errors, such as why a packet was dropped,
 * are reported separately).
 */
#ifndef HOMA_ERRORS_H
#define HOMA_ERRORS_H

#include "homa/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Negative error codes returned by homa functions. */
enum homa_error {
	HOMA_OK = 0,
	HOMA_EINVAL = -1,      /**< an argument is NULL, out of range or inconsistent */
	HOMA_ENOMEM = -2,      /**< an allocation failed */
	HOMA_EAGAIN = -3,      /**< would block, and the call was told not to wait (timeout 0); retry later */
	HOMA_EMSGSIZE = -4,    /**< message longer than settings.max_message (or the Linux module's limit toward a module host) */
	HOMA_ENOTFOUND = -5,   /**< no RPC with that id (never existed, or already finished) */
	HOMA_ETIMEDOUT = -6,   /**< the peer stopped answering; the RPC was aborted */
	HOMA_ECANCELED = -7,   /**< the RPC was aborted by this application (homa_abort()) */
	HOMA_ESHUTDOWN = -8,   /**< the endpoint is closed (nothing was filled in) */
	HOMA_EADDRINUSE = -9,  /**< the port is already bound */
	HOMA_EPERM = -10,      /**< missing privilege (raw IP needs CAP_NET_RAW) */
	HOMA_EPROTO = -11,     /**< malformed packet */
	HOMA_ESTATE = -12,     /**< operation not valid in the RPC's state (e.g. a second reply) */
	HOMA_EIO = -13,        /**< a system call failed */
	HOMA_ENOSPC = -14,     /**< the caller's output buffer is too small */
	HOMA_ENOTSUP = -15,    /**< feature not available (address family, driver) */
	HOMA_EPEERDEAD = -16,  /**< the peer (address and port) timed out recently; new RPCs to it fail at once */
	HOMA_ENOSERVER = -17,  /**< nothing serves at the destination port (the destination or ICMP unreachable said so) */
	HOMA_ETIME = -18,      /**< the call's own timeout expired before it could complete */
	HOMA_EABANDONED = -19, /**< the server finished or dropped the RPC without a response reaching us */
	HOMA_EADDRNOTAVAIL = -20, /**< the bind address is not an address of this host */
	HOMA_EALREADY = -21,   /**< the message was already released */
	/* encryption (docs/ENCRYPTION.md) */
	HOMA_ENOASSOC = -30,   /**< encrypted socket: no security association for that destination */
	HOMA_ECERT = -31,      /**< key exchange: the peer's certificate was rejected (or ours, by the peer) */
	HOMA_EKEYEXPIRED = -32, /**< the SPI has expired (its master key rotated out) */
	HOMA_EHANDSHAKE = -33, /**< key exchange: the peer refused or failed the handshake or request */
};

/**
 * homa_strerror() - Describe an error code.
 * @err: a value returned by a homa function (negative), or 0.
 * Return: a static, NUL-terminated string; never NULL. Unknown codes give
 * "unknown homa error".
 */
HOMA_API const char *homa_strerror(int err);

#ifdef __cplusplus
}
#endif
#endif /* HOMA_ERRORS_H */
