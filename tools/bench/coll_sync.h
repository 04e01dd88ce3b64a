/* SPDX-License-Identifier: MIT */
/**
 * @file coll_sync.h
 * The shared step board of the collective scenario: a region of shared
 * memory (anonymous for compare's children, a file for devices started
 * apart, e.g. in the testbed's namespaces, which share the file system)
 * that holds a barrier across the device processes, the step boundaries
 * and every device's per-step record. The barrier is out of band: it
 * stands for the free, instant synchronization a real job gets from its
 * collective library, so the transport alone decides how long a step
 * lasts. All times are CLOCK_MONOTONIC, one clock for every process.
 */
#ifndef HOMA_BENCH_COLL_SYNC_H
#define HOMA_BENCH_COLL_SYNC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/steps.h"

/** Most devices of a collective run. */
#define COLL_MAX_DEVICES 64
/** Most steps (warm-up included) of a collective run. */
#define COLL_MAX_STEPS 100000

/** Header of the shared region; the arrays follow it. */
struct coll_board {
	_Atomic uint32_t arrived;  /**< devices at the current barrier */
	_Atomic uint32_t gen;      /**< barriers released so far */
	_Atomic uint32_t failed;   /**< a device gave up: every wait returns */
	_Atomic uint32_t done;     /**< devices that finished every step */
	_Atomic uint32_t retries;  /**< messages sent again after an RPC error */
	_Atomic uint64_t release_ns; /**< when the last barrier released */
	uint32_t ndev, nsteps;
	int64_t cpu_us[COLL_MAX_DEVICES]; /**< each device's getrusage CPU over its steps */
	int64_t host_busy_us;      /**< busy time of rank 0's CPUs over the steps (-1: unknown) */
};

/** A mapping of the board. */
struct coll_sync {
	struct coll_board *b;
	uint64_t *bound;            /**< nsteps + 1 step boundaries */
	struct homa_step_dev *dev;  /**< nsteps x ndev records, step-major */
	size_t len;                 /**< bytes mapped */
};

/**
 * coll_sync_open() - Map the board for @ndev devices and @nsteps steps:
 * anonymous shared memory if @path is NULL (inherited across fork), else
 * the file @path, created zero-filled if absent. Every process of a run
 * must pass the same sizes and the file must start empty or absent.
 * Return: 0, HOMA_EINVAL (sizes out of range, or a file sized for another
 * run), HOMA_EIO (open, truncate or mmap failed).
 */
int coll_sync_open(struct coll_sync *s, const char *path, uint32_t ndev, uint32_t nsteps);

/** coll_sync_close() - Unmap (the file stays). */
void coll_sync_close(struct coll_sync *s);

/**
 * coll_sync_barrier() - Wait until all ndev devices arrive. The last to
 * arrive stamps the release time, returned in @release_ns for everyone.
 * Return: 0, HOMA_ETIMEDOUT (not all arrived by @deadline_ns: marks the
 * board failed so the others stop too), HOMA_ECANCELED (another device
 * failed).
 */
int coll_sync_barrier(struct coll_sync *s, uint64_t deadline_ns, uint64_t *release_ns);

/** coll_sync_fail() - Mark the board failed and wake every waiter. */
void coll_sync_fail(struct coll_sync *s);

#endif
