/* SPDX-License-Identifier: MIT */
/**
 * @file cpu.h
 * CPU time meter over getrusage(): user plus system time of this process,
 * of the calling thread, or of waited-for children, in microseconds.
 */
#ifndef HOMA_UTIL_CPU_H
#define HOMA_UTIL_CPU_H

#include <stdint.h>
#include <sys/resource.h>

/** Whose CPU time to measure. */
enum homa_cpu_who {
	HOMA_CPU_PROCESS = 0,  /**< all threads of this process (RUSAGE_SELF) */
	HOMA_CPU_THREAD = 1,   /**< the calling thread (RUSAGE_THREAD) */
	HOMA_CPU_CHILDREN = 2, /**< terminated, waited-for children */
};

/** A running measurement. */
struct homa_cpu_meter {
	enum homa_cpu_who who;
	int64_t start_us;
};

/**
 * homa_cpu_now_us() - Current user+system CPU time of @who in µs.
 * Return: the time, or a negative HOMA_EIO if getrusage() failed.
 */
int64_t homa_cpu_now_us(enum homa_cpu_who who);

/** homa_rusage_us() - User+system time in a struct rusage, in µs. */
int64_t homa_rusage_us(const struct rusage *ru);

/** homa_cpu_start() - Start measuring @who. Return: 0 or HOMA_EIO. */
int homa_cpu_start(struct homa_cpu_meter *m, enum homa_cpu_who who);

/**
 * homa_cpu_elapsed_us() - CPU µs used by @who since homa_cpu_start().
 * Return: µs (>= 0), or HOMA_EIO. For HOMA_CPU_THREAD call it from the
 * thread that started the meter.
 */
int64_t homa_cpu_elapsed_us(const struct homa_cpu_meter *m);

#endif
