/* SPDX-License-Identifier: MIT */
/* Control exchange: servers report their CPU time and RPC count. */
#define _GNU_SOURCE
#include "ctl.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "homa/errors.h"

int bench_ready_fd = -1;
static atomic_ulong served;
static pthread_t ctl_thread;
static int ctl_fd = -1;

void bench_ctl_count_rpc(void)
{
	atomic_fetch_add_explicit(&served, 1, memory_order_relaxed);
}

void bench_ctl_ready(uint16_t port)
{
	if (bench_ready_fd < 0)
		fprintf(stderr, "homa-bench server: ready on port %u\n", port);
	if (bench_ready_fd >= 0) {
		char b = 1;
		if (write(bench_ready_fd, &b, 1) != 1)
			fprintf(stderr, "homa-bench server: cannot signal readiness\n");
		close(bench_ready_fd);
		bench_ready_fd = -1;
	}
}

/** ctl_answer() - Serve one control connection @fd, line by line. */
static void ctl_answer(int fd)
{
	char line[64];
	size_t got = 0;

	while (!bench_stop) {
		struct pollfd p = { fd, POLLIN, 0 };
		if (poll(&p, 1, 100) <= 0)
			continue;
		ssize_t r = read(fd, line + got, sizeof(line) - 1 - got);
		if (r <= 0)
			return;
		got += (size_t)r;
		line[got] = 0;
		char *nl;
		while ((nl = strchr(line, '\n'))) {
			char out[128];
			struct bench_usage u;

			bench_usage_now(&u);
			int n = snprintf(out, sizeof(out), "%lld %lu %lld %lld %lld\n",
					 (long long)u.cpu_us, atomic_load(&served),
					 (long long)u.ctxsw, (long long)u.syscalls,
					 (long long)u.copied);
			if (write(fd, out, (size_t)n) != n)
				return;
			memmove(line, nl + 1, strlen(nl + 1) + 1);
			got = strlen(line);
		}
		if (got == sizeof(line) - 1)
			return;
	}
}

/** ctl_main() - Accept control connections until bench_stop. */
static void *ctl_main(void *arg)
{
	while (!bench_stop) {
		struct pollfd p = { ctl_fd, POLLIN, 0 };
		if (poll(&p, 1, 100) <= 0)
			continue;
		int fd = accept4(ctl_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		ctl_answer(fd);
		close(fd);
	}
	return NULL;
}

/**
 * Traffic class of the control connections: the top three DSCP bits set
 * (priority 7). Measuring must not wait behind the traffic it measures:
 * in the testbed a query marked like kernel TCP sat behind full
 * lowest-class switch queues for seconds (docs/RESULTS.md section 3).
 */
#define CTL_TOS 0xe0

/** mark_fast() - Give socket @fd of @family the control traffic class (best effort). */
static void mark_fast(int fd, int family)
{
	int tos = CTL_TOS;

	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
	else
		setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
}

int bench_ctl_start(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	char spec[128];
	int one = 1;
	int port = o->ctl_port >= 0 ? o->ctl_port : o->port + 1;

	snprintf(spec, sizeof(spec), strchr(o->bind, ':') ? "[%s]:%d" : "%s:%d", o->bind, port);
	if (bench_parse_servers(spec, &cfg))
		return HOMA_EINVAL;
	ctl_fd = socket(cfg.servers[0].ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ctl_fd < 0)
		return HOMA_EIO;
	setsockopt(ctl_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	mark_fast(ctl_fd, cfg.servers[0].ss_family); /* accepted sockets inherit it */
	if (bind(ctl_fd, (struct sockaddr *)&cfg.servers[0], cfg.server_lens[0]) ||
	    listen(ctl_fd, 16)) {
		int e = errno;
		fprintf(stderr, "homa-bench: control port %s: %s\n", spec, strerror(e));
		close(ctl_fd);
		ctl_fd = -1;
		return e == EADDRINUSE ? HOMA_EADDRINUSE : HOMA_EIO;
	}
	if (pthread_create(&ctl_thread, NULL, ctl_main, NULL) != 0) {
		close(ctl_fd);
		ctl_fd = -1;
		return HOMA_EIO;
	}
	return 0;
}

void bench_ctl_join(void)
{
	if (ctl_fd < 0)
		return;
	pthread_join(ctl_thread, NULL);
	close(ctl_fd);
	ctl_fd = -1;
}

int bench_ctl_query(const struct sockaddr_storage *ss, int port, struct bench_usage *use,
		    uint64_t *rpcs)
{
	struct sockaddr_storage a = *ss;
	socklen_t len = a.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);
	char buf[128];
	long long cpu, sw = -1, sys = -1, cp = -1;
	unsigned long n;
	int rc = HOMA_EIO;

	if (a.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&a)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)&a)->sin_port = htons((uint16_t)port);
	int fd = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return HOMA_EIO;
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* bounds connect() too */
	mark_fast(fd, a.ss_family);
	if (connect(fd, (struct sockaddr *)&a, len) == 0 && write(fd, "stat\n", 5) == 5) {
		ssize_t r = read(fd, buf, sizeof(buf) - 1);
		if (r > 0) {
			buf[r] = 0;
			if (sscanf(buf, "%lld %lu %lld %lld %lld", &cpu, &n, &sw, &sys, &cp) >= 2) {
				*use = (struct bench_usage){ cpu, sw, sys, cp };
				*rpcs = n;
				rc = 0;
			}
		}
	}
	close(fd);
	return rc;
}
