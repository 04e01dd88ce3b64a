/* SPDX-License-Identifier: MIT */
/**
 * @file errors.c
 * Text for homa's error codes.
 */
#include "homa/errors.h"

/** homa_strerror() - See errors.h. */
const char *homa_strerror(int err)
{
	switch (err) {
	case HOMA_OK: return "success";
	case HOMA_EINVAL: return "invalid argument";
	case HOMA_ENOMEM: return "out of memory";
	case HOMA_EAGAIN: return "would block (nothing ready, or no buffer space, and the call was not to wait)";
	case HOMA_EMSGSIZE: return "message longer than the configured maximum";
	case HOMA_ENOTFOUND: return "no such RPC";
	case HOMA_ETIMEDOUT: return "peer did not respond (RPC timed out)";
	case HOMA_ECANCELED: return "RPC aborted by the application";
	case HOMA_ESHUTDOWN: return "socket is closed";
	case HOMA_EADDRINUSE: return "port already in use";
	case HOMA_EPERM: return "operation not permitted (raw IP needs CAP_NET_RAW)";
	case HOMA_EPROTO: return "malformed packet";
	case HOMA_ESTATE: return "operation not valid in the RPC's current state";
	case HOMA_EIO: return "system I/O error";
	case HOMA_ENOSPC: return "output buffer too small";
	case HOMA_ENOTSUP: return "not supported";
	case HOMA_EPEERDEAD: return "peer (address and port) timed out recently";
	case HOMA_ENOSERVER: return "nothing serves at the destination port";
	case HOMA_ETIME: return "the call's timeout expired";
	case HOMA_EABANDONED: return "server finished or dropped the RPC without a response";
	case HOMA_EADDRNOTAVAIL: return "address not available on this host";
	case HOMA_EALREADY: return "message already released";
	case HOMA_ENOASSOC: return "no security association (SPI and key) for that destination";
	case HOMA_ECERT: return "peer certificate rejected in the key exchange";
	case HOMA_EKEYEXPIRED: return "SPI expired (its master key was rotated out)";
	case HOMA_EHANDSHAKE: return "key exchange refused or failed";
	default: return "unknown homa error";
	}
}
