/* SPDX-License-Identifier: MIT */
/**
 * @file coll_bg.h
 * Background bulk traffic sent by a collective device through its own
 * transport (homa-bench device --bg-peer): open-loop Poisson arrivals of
 * one message size to one peer's server, from a thread of the device's
 * process, so the host's step messages and its background leave through
 * one Homa engine (one pacer, one SRPT order), as on a host whose
 * processes share the Linux module. Needs a transport whose start() may
 * be called from two threads at once (Homa: every socket call is).
 */
#ifndef HOMA_BENCH_COLL_BG_H
#define HOMA_BENCH_COLL_BG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench.h"

/** Tag bit of every background RPC: no step message has it (coll_device.c). */
#define COLL_BG_TAG (1ull << 63)

/** Answer the background asks of the peer's server, bytes. */
#define COLL_BG_RESP 100u

/** What to send and the thread that sends it. */
struct coll_bg {
	const struct bench_client_ops *ops; /**< the device's transport */
	void *ctx;              /**< its open client (not owned) */
	uint32_t peer;          /**< index of the peer's server */
	uint32_t bytes;         /**< every message's size */
	double gbps;            /**< average offered load */
	uint64_t seed;
	pthread_t th;
	bool running;           /**< the thread was started (join it) */
	atomic_bool stop;       /**< coll_bg_stop() asks the thread to end */
	_Atomic uint64_t started; /**< messages started */
	_Atomic uint64_t refused; /**< arrivals whose start() failed (skipped) */
};

/**
 * coll_bg_start() - Start the thread sending @b->bytes to server @b->peer
 * through @b->ops / @b->ctx at @b->gbps on average (Poisson arrivals, the
 * first a random gap from now), tags COLL_BG_TAG | n. The caller fills
 * ops, ctx, peer, bytes, gbps and seed; the rest is set here. Answers
 * come back through the device's own wait() and must be skipped there.
 * Return: 0, HOMA_EINVAL (no load, no size), HOMA_ENOMEM (no thread).
 */
int coll_bg_start(struct coll_bg *b);

/**
 * coll_bg_stop() - End and join the thread (nothing if it never started);
 * RPCs still in flight are left to the transport's close.
 */
void coll_bg_stop(struct coll_bg *b);

#endif
