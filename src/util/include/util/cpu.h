/* SPDX-License-Identifier: MIT */
/**
 * @file cpu.h
 * CPU time meter over getrusage(): user plus system time of this process,
 * of the calling thread, or of waited-for children, in microseconds. And
 * the machine's busy time from /proc/stat: wall time x CPUs minus the
 * CPUs' idle and iowait (the kernel accounts idle exactly, while the
 * user, system and softirq columns are sampled on timer ticks and
 * undercount loads that sleep and wake often); it counts what getrusage
 * misses, softirq work above all, and everything else the CPUs ran.
 */
#ifndef HOMA_UTIL_CPU_H
#define HOMA_UTIL_CPU_H

#include <sched.h>
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

/** A snapshot of some CPUs' idle time, for busy time between two of them. */
struct homa_host_cpu {
	uint64_t wall_ns;    /**< CLOCK_MONOTONIC when it was taken */
	uint64_t idle_ticks; /**< idle + iowait of the CPUs, in USER_HZ ticks */
	int ncpus;           /**< CPUs counted */
};

/**
 * homa_host_cpu_parse() - Fill @out from the text of /proc/stat @text,
 * counting the "cpuN" lines whose N is in @cpus (NULL: every CPU), taken
 * at @wall_ns. Return: 0, or HOMA_EINVAL (no such CPU line, or a line
 * without idle and iowait columns).
 */
int homa_host_cpu_parse(const char *text, const cpu_set_t *cpus, uint64_t wall_ns,
			struct homa_host_cpu *out);

/**
 * homa_host_cpu_snap() - Snapshot the CPUs this thread may run on (its
 * affinity mask) from /proc/stat. Return: 0, HOMA_EIO (unreadable),
 * HOMA_EINVAL (see homa_host_cpu_parse()).
 */
int homa_host_cpu_snap(struct homa_host_cpu *out);

/**
 * homa_host_busy_us() - Busy µs of the CPUs between snapshots @a and @b
 * (same CPUs, @b later): wall time x CPUs minus idle and iowait, never
 * negative.
 */
double homa_host_busy_us(const struct homa_host_cpu *a, const struct homa_host_cpu *b);

#endif
