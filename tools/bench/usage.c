/* SPDX-License-Identifier: MIT */
/* Process usage snapshots: CPU, context switches, system calls, library copies. */
#define _GNU_SOURCE
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "homa/errors.h"
#include "util/cpu.h"

/** The tracepoint counter, or -1. */
static int sys_fd = -1;
/** Where copies are read from (tr_homa.c), or NULL. */
static int64_t (*_Atomic copied_fn)(void);

/** The id file of raw_syscalls:sys_enter below a tracefs mount. */
#define SYS_ENTER_ID "events/raw_syscalls/sys_enter/id"

/** Why system calls are not counted ("" while they are). */
static char why[200];

/** read_id() - The number in file @path, or -1 (no stdio: a forked child calls it). */
static long long read_id(const char *path)
{
	char b[32];
	long long id = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || b[0] < '0' || b[0] > '9')
		return -1;
	for (ssize_t i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++)
		id = id * 10 + (b[i] - '0');
	return id;
}

/**
 * private_mount_id() - The tracepoint's id when tracefs is not mounted:
 * a child process takes a mount namespace of its own, mounts tracefs
 * there (the machine's mounts stay as they are), reads the id and exits.
 * Needs CAP_SYS_ADMIN. Return: the id, or -1 with the cause in why.
 */
static long long private_mount_id(void)
{
	static const char dir[] = "/sys/kernel/tracing";
	int p[2], st = 0;
	long long id = -1;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		int err = 0;

		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("nodev", dir, "tracefs", 0, NULL))
			err = errno;
		id = err ? -err : read_id("/sys/kernel/tracing/" SYS_ENTER_ID);
		if (write(p[1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &id, sizeof(id)) != (ssize_t)sizeof(id))
		id = pid < 0 ? -errno : -EIO;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	if (id < 0)
		snprintf(why, sizeof(why), "tracefs is not mounted at %s and mounting it "
			 "failed (%s); run scripts/deps.sh or mount -t tracefs nodev %s",
			 dir, strerror((int)-id), dir);
	return id < 0 ? -1 : id;
}

/** tracepoint_id() - The id of raw_syscalls:sys_enter, or -1 (why says why). */
static long long tracepoint_id(void)
{
	long long id = read_id("/sys/kernel/tracing/" SYS_ENTER_ID);

	if (id < 0)
		id = read_id("/sys/kernel/debug/tracing/" SYS_ENTER_ID);
	return id >= 0 ? id : private_mount_id();
}

/** open_counter() - A counter of the process's system calls, or -1 (why says why). */
static int open_counter(void)
{
	struct perf_event_attr a;
	long long id;
	int fd;

	why[0] = 0;
	id = tracepoint_id();
	if (id < 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_TRACEPOINT;
	a.size = sizeof(a);
	a.config = (uint64_t)id;
	a.inherit = 1;          /* every thread created from now on */
	a.exclude_kernel = 0;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		snprintf(why, sizeof(why), "perf_event_open of raw_syscalls:sys_enter failed "
			 "(%s); needs root or kernel.perf_event_paranoid <= -1", strerror(errno));
	return fd;
}

int bench_usage_init(void)
{
	if (sys_fd >= 0)
		close(sys_fd); /* a forked child's copy counts the parent: start anew */
	sys_fd = open_counter();
	return sys_fd >= 0 ? 0 : HOMA_ENOTSUP;
}

const char *bench_usage_why(void)
{
	if (sys_fd < 0 && !why[0]) {  /* this process never tried: try now */
		int fd = open_counter();

		if (fd >= 0)
			close(fd);
	}
	return why;
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
