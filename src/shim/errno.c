/* SPDX-License-Identifier: MIT */
/**
 * @file errno.c
 * From homa.h's error codes to the errno values the Linux module's man
 * pages name for the same condition.
 */
#include <errno.h>

#include "shim.h"

/** shim_errno() - See shim.h. Unknown codes give EIO. */
int shim_errno(int err)
{
	switch (err) {
	case HOMA_EINVAL: return EINVAL;
	case HOMA_ENOMEM: return ENOMEM;
	case HOMA_EAGAIN: return EAGAIN;
	case HOMA_ETIME: return EAGAIN;
	case HOMA_EMSGSIZE: return EINVAL;      /* sendmsg(2): too long is EINVAL */
	case HOMA_ENOTFOUND: return EINVAL;     /* no such RPC */
	case HOMA_ESTATE: return EINVAL;        /* not in a state to reply */
	case HOMA_EALREADY: return EINVAL;
	case HOMA_ETIMEDOUT: return ETIMEDOUT;
	case HOMA_EPEERDEAD: return ETIMEDOUT;  /* homa(7): a dead peer's RPCs time out */
	case HOMA_ECANCELED: return ECANCELED;
	case HOMA_ESHUTDOWN: return ESHUTDOWN;
	case HOMA_EADDRINUSE: return EADDRINUSE;
	case HOMA_EADDRNOTAVAIL: return EADDRNOTAVAIL;
	case HOMA_EPERM: return EPERM;
	case HOMA_EPROTO: return EPROTO;
	case HOMA_ENOSPC: return ENOMEM;
	case HOMA_ENOTSUP: return EAFNOSUPPORT;
	case HOMA_ENOSERVER: return ENOTCONN;   /* recvmsg(2): no server at the port */
	case HOMA_EABANDONED: return ECONNRESET;
	default: return EIO;
	}
}
