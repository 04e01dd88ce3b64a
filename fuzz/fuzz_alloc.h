/* SPDX-License-Identifier: MIT */
/**
 * @file fuzz_alloc.h
 * A counting allocator for the engine's struct homa_alloc hooks, used by
 * the fuzz targets and the hardening tests. It counts allocations, frees
 * and live bytes, checks that every free names the size that was
 * allocated (a mismatch aborts), and can be told to fail allocations so
 * the engine's out-of-memory paths run.
 */
#ifndef HOMA_FUZZ_ALLOC_H
#define HOMA_FUZZ_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "homa/engine.h"

/** How allocations fail. */
enum fz_fail_mode {
	FZ_FAIL_NONE = 0,   /**< every allocation succeeds */
	FZ_FAIL_NEXT,       /**< the next @arg allocations fail, then none */
	FZ_FAIL_EVERY,      /**< every @arg-th allocation fails */
	FZ_FAIL_ABOVE,      /**< allocations larger than @arg bytes fail */
	FZ_FAIL_MODES
};

/** Counters and failure plan of one allocator (one per engine). */
struct fz_alloc {
	uint64_t allocs;      /**< successful allocations */
	uint64_t frees;
	uint64_t failed;      /**< allocations refused on purpose */
	uint64_t live_bytes;  /**< bytes allocated and not yet freed */
	uint64_t peak_bytes;
	int mode;             /**< enum fz_fail_mode */
	uint64_t arg;
	uint64_t calls;       /**< allocation requests, for FZ_FAIL_EVERY */
};

/** fz_alloc_init() - Zero @a and fill @hooks to allocate through it. */
void fz_alloc_init(struct fz_alloc *a, struct homa_alloc *hooks);

/** fz_alloc_fail() - Set the failure plan (@mode from enum fz_fail_mode). */
void fz_alloc_fail(struct fz_alloc *a, int mode, uint64_t arg);

/**
 * fz_alloc_check_clean() - Abort with a message naming @who unless every
 * allocation was freed (allocs == frees and no live bytes).
 */
void fz_alloc_check_clean(const struct fz_alloc *a, const char *who);

/** fz_fail() - Report a broken invariant on stderr and abort (a fuzz "crash"). */
void fz_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#endif
