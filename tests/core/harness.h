/* SPDX-License-Identifier: MIT */
/**
 * @file harness.h
 * Test harness for the core: a client and a server engine joined by an
 * ideal wire with an optional drop filter, and a readable log of every
 * packet that crossed it ("c>s DATA 1416@0 p7; s>c GRANT 50000 p3").
 */
#ifndef HOMA_TEST_HARNESS_H
#define HOMA_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "homa/engine.h"

/** Decides whether the n-th packet crossing the wire is dropped. */
typedef bool (*th_filter)(void *ctx, int from, const uint8_t *pkt, size_t len, uint64_t n);

/** Two endpoints: index 0 = client "c", 1 = server "s". */
struct th_pair {
	homa_engine *e[2];
	homa_addr addr[2];
	uint16_t port[2];
	uint64_t now;
	uint64_t npkts;           /**< packets that crossed (or were dropped) */
	th_filter filter;
	void *filter_ctx;
	char log[65536];          /**< packet log, "; "-separated */
	size_t loglen;
	bool logging;
	bool echo;                /**< server answers each request with its own bytes */
};

/** th_pair_init() - Create both engines with @s (NULL = defaults) at time 0; server serving. */
void th_pair_init(struct th_pair *p, const struct homa_settings *s);

/** th_pair_free() - Destroy both engines (releasing any messages in events). */
void th_pair_free(struct th_pair *p);

/**
 * th_pair_run() - Move packets and run timers until both engines are quiet
 * or @max_ns of simulated time passed. Events are left in the engines.
 * Return: packets moved.
 */
uint64_t th_pair_run(struct th_pair *p, uint64_t max_ns);

/** th_pattern() - Fill @buf with a pattern derived from @seed (for bit-exact checks). */
void th_pattern(uint8_t *buf, size_t len, uint32_t seed);

/** th_check_pattern() - True if message @m holds th_pattern(len, seed). */
bool th_check_pattern(const homa_msg *m, uint32_t seed);

#endif
