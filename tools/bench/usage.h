/* SPDX-License-Identifier: MIT */
/**
 * @file usage.h
 * What one homa-bench process used: CPU time (getrusage), context
 * switches (getrusage), system calls (a perf tracepoint counter on the
 * whole process) and the payload bytes the Homa library copied in user
 * space (homa_io_stats() of the process's socket). Clients take a
 * snapshot at both ends of the measurement window; servers answer them
 * over the control port (ctl.h).
 */
#ifndef HOMA_BENCH_USAGE_H
#define HOMA_BENCH_USAGE_H

#include <stdint.h>

/** One snapshot; a figure that cannot be measured is -1. */
struct bench_usage {
	int64_t cpu_us;    /**< user + system CPU of the process */
	int64_t ctxsw;     /**< voluntary + involuntary context switches, all threads */
	int64_t syscalls;  /**< system calls entered by all threads (-1: no perf counter) */
	int64_t copied;    /**< payload bytes the Homa library copied (-1: no Homa socket) */
};

/**
 * bench_usage_init() - Open the process's system-call counter: a perf
 * counter on the raw_syscalls:sys_enter tracepoint that follows every
 * thread created afterwards, so call it before any thread starts (a
 * forked child calls it again: the counter it inherited is its parent's). Needs
 * the tracepoint's id, from tracefs (when it is not mounted, a child
 * process mounts it in a mount namespace of its own, which needs
 * CAP_SYS_ADMIN), and the right to trace (root or perf_event_paranoid);
 * without them syscalls stay -1 and bench_usage_why() says why.
 * Return: 0, or HOMA_ENOTSUP (not available).
 */
int bench_usage_init(void);

/**
 * bench_usage_why() - Why this process cannot count system calls, as a
 * sentence (from its last bench_usage_init(), or found out now when it
 * has no counter); "" when it can. The string is static.
 */
const char *bench_usage_why(void);

/**
 * bench_usage_copied_source() - Name the function that reports the
 * process's library copy count (the Homa arm sets it when its socket
 * opens; NULL: none, copied stays -1).
 */
void bench_usage_copied_source(int64_t (*fn)(void));

/** bench_usage_now() - Fill @u with the process's figures now. */
void bench_usage_now(struct bench_usage *u);

/**
 * bench_usage_sub() - @b - @a field by field into @out; a field unknown
 * in either stays -1.
 */
void bench_usage_sub(const struct bench_usage *a, const struct bench_usage *b,
		     struct bench_usage *out);

/**
 * bench_usage_add() - Add @src to @dst field by field; a field unknown
 * in either becomes -1.
 */
void bench_usage_add(struct bench_usage *dst, const struct bench_usage *src);

#endif
