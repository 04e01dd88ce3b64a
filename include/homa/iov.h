/* SPDX-License-Identifier: MIT */
/**
 * @file iov.h
 * The gather element of outgoing messages, shared by the application API
 * (homa.h) and the engine (engine.h).
 */
#ifndef HOMA_IOV_H
#define HOMA_IOV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Gather element for outgoing messages: @len bytes at @base (owned by the caller). */
struct homa_iov {
	const void *base;
	size_t len;
};

#ifdef __cplusplus
}
#endif
#endif /* HOMA_IOV_H */
