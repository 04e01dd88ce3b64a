/* SPDX-License-Identifier: MIT */
/* Process usage snapshots: CPU, context switches, system calls, library copies. */
#define _GNU_SOURCE
#include "usage.h"

#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "homa/errors.h"
#include "util/cpu.h"

/** The tracepoint counter, or -1. */
static int sys_fd = -1;
/** Where copies are read from (tr_homa.c), or NULL. */
static int64_t (*_Atomic copied_fn)(void);

/** tracepoint_id() - The id of raw_syscalls:sys_enter, or -1. */
static long long tracepoint_id(void)
{
	static const char *const paths[] = {
		"/sys/kernel/tracing/events/raw_syscalls/sys_enter/id",
		"/sys/kernel/debug/tracing/events/raw_syscalls/sys_enter/id",
	};
	long long id = -1;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]) && id < 0; i++) {
		FILE *f = fopen(paths[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%lld", &id) != 1)
			id = -1;
		fclose(f);
	}
	return id;
}

int bench_usage_init(void)
{
	struct perf_event_attr a;
	long long id = tracepoint_id();

	if (sys_fd >= 0)
		close(sys_fd); /* a forked child's copy counts the parent: start anew */
	sys_fd = -1;
	if (id < 0)
		return HOMA_ENOTSUP;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = (uint64_t)id;
	a.inherit = 1;          /* every thread created from now on */
	a.exclude_kernel = 0;
	sys_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return sys_fd >= 0 ? 0 : HOMA_ENOTSUP;
}

void bench_usage_copied_source(int64_t (*fn)(void))
{
	atomic_store(&copied_fn, fn);
}

void bench_usage_now(struct bench_usage *u)
{
	struct rusage ru;
	uint64_t n;
	int64_t (*fn)(void) = atomic_load(&copied_fn);

	u->cpu_us = u->ctxsw = u->syscalls = -1;
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		u->cpu_us = homa_rusage_us(&ru);
		u->ctxsw = ru.ru_nvcsw + ru.ru_nivcsw;
	}
	if (sys_fd >= 0 && read(sys_fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		u->syscalls = (int64_t)n;
	u->copied = fn ? fn() : -1;
}

/** sub1() - @b - @a, or -1 if either is unknown. */
static int64_t sub1(int64_t a, int64_t b)
{
	return a < 0 || b < 0 ? -1 : b >= a ? b - a : 0;
}

/** add1() - @a + @b, or -1 if either is unknown. */
static int64_t add1(int64_t a, int64_t b)
{
	return a < 0 || b < 0 ? -1 : a + b;
}

void bench_usage_sub(const struct bench_usage *a, const struct bench_usage *b,
		     struct bench_usage *out)
{
	out->cpu_us = sub1(a->cpu_us, b->cpu_us);
	out->ctxsw = sub1(a->ctxsw, b->ctxsw);
	out->syscalls = sub1(a->syscalls, b->syscalls);
	out->copied = sub1(a->copied, b->copied);
}

void bench_usage_add(struct bench_usage *dst, const struct bench_usage *src)
{
	dst->cpu_us = add1(dst->cpu_us, src->cpu_us);
	dst->ctxsw = add1(dst->ctxsw, src->ctxsw);
	dst->syscalls = add1(dst->syscalls, src->syscalls);
	dst->copied = add1(dst->copied, src->copied);
}
