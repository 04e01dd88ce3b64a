/* SPDX-License-Identifier: MIT */
/**
 * @file test_calls.c
 * Every call of the Linux module's API the shim implements, with the
 * results and errno values the module's man pages give: socket, bind,
 * getsockname, setsockopt/getsockopt, sendmsg/recvmsg (IPv4 and IPv6),
 * poll/epoll/select readiness, dup/fcntl, shutdown, close, HOMAIOCINFO.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/** Longest wait for a message in these tests (a loaded machine is slow,
 *  but nothing may wait without end). */
#define WAIT_MS 30000

/** port_of() - getsockname()'s port of @fd. */
static uint16_t port_of(int fd)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
					     : ((struct sockaddr_in *)&a)->sin_port);
}

/** port_from() - The port of a sockaddr returned by recvmsg(). */
static uint16_t port_from(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)a)->sin6_port
					      : ((const struct sockaddr_in *)a)->sin_port);
}

static void test_socket_kinds(void **state)
{
	int fd, v = 0;
	socklen_t len = sizeof(v);

	(void)state;
	fd = socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);
	assert_true(fd >= 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len), 0);
	assert_int_equal(v, IPPROTO_HOMA);
	assert_int_equal(close(fd), 0);
	/* Only datagram sockets are Homa sockets; the kernel refuses a
	 * stream of protocol 146, and a raw socket of it is a raw socket. */
	errno = 0;
	assert_int_equal(socket(AF_INET, SOCK_STREAM, IPPROTO_HOMA), -1);
	assert_int_equal(errno, EPROTONOSUPPORT);
	fd = socket(AF_INET, SOCK_RAW, IPPROTO_HOMA);
	if (fd >= 0) {  /* root only */
		assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len), 0);
		assert_int_equal(v, SOCK_RAW);
		close(fd);
	}
	/* Other protocols are the C library's. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len), 0);
	assert_int_equal(v, IPPROTO_UDP);
	close(fd);
	/* SOCK_CLOEXEC and SOCK_NONBLOCK are honoured. */
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_HOMA);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

static void test_bind(void **state)
{
	struct hs a, b;
	struct sockaddr_storage addr;
	int on = -1;
	socklen_t len = sizeof(on);
	uint16_t port;

	(void)state;
	hs_open(&a, AF_INET, 0);
	hs_open(&b, AF_INET, 0);
	assert_int_equal(getsockopt(a.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &on, &len), 0);
	assert_int_equal(on, 0);
	/* Ports from HOMA_MIN_DEFAULT_PORT up are assigned, not bound. */
	addr = hs_addr(AF_INET, HOMA_MIN_DEFAULT_PORT);
	assert_int_equal(bind(a.fd, (struct sockaddr *)&addr, sizeof(struct sockaddr_in)), -1);
	assert_int_equal(errno, EINVAL);
	addr = hs_addr(AF_INET6, 1000);
	assert_int_equal(bind(a.fd, (struct sockaddr *)&addr, sizeof(struct sockaddr_in6)), -1);
	assert_int_equal(errno, EAFNOSUPPORT);
	addr = hs_addr(AF_INET, 1000);
	assert_int_equal(bind(a.fd, (struct sockaddr *)&addr, 4), -1);
	assert_int_equal(errno, EINVAL);
	port = hs_serve(&a);
	assert_int_equal(port_of(a.fd), port);
	assert_int_equal(getsockopt(a.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &on, &len), 0);
	assert_int_equal(on, 1);
	/* Port 0 keeps the port; a taken port is EADDRINUSE. */
	addr = hs_addr(AF_INET, 0);
	assert_int_equal(bind(a.fd, (struct sockaddr *)&addr, sizeof(struct sockaddr_in)), 0);
	assert_int_equal(port_of(a.fd), port);
	addr = hs_addr(AF_INET, port);
	assert_int_equal(bind(b.fd, (struct sockaddr *)&addr, sizeof(struct sockaddr_in)), -1);
	assert_int_equal(errno, EADDRINUSE);
	/* An unbound socket has an automatically assigned port. */
	assert_true(port_of(b.fd) > 0);
	hs_close(&a);
	hs_close(&b);
}

static void test_sockopts(void **state)
{
	struct hs s;
	struct homa_rcvbuf_args rb, got;
	socklen_t len = sizeof(got);
	unsigned n = hs_min_bpages();
	char *region = mmap(NULL, (size_t)(n + 1) * HOMA_BPAGE_SIZE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int v = 1;

	(void)state;
	assert_true(region != MAP_FAILED);
	hs_open(&s, AF_INET, 0);
	rb.start = (uintptr_t)region + 8;  /* not page-aligned */
	rb.length = (uint64_t)n * HOMA_BPAGE_SIZE;
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), -1);
	assert_int_equal(errno, EINVAL);
	rb.start = (uintptr_t)region;
	rb.length = HOMA_BPAGE_SIZE;       /* too small */
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), -1);
	assert_int_equal(errno, EINVAL);
	rb.length = (uint64_t)n * HOMA_BPAGE_SIZE;
	/* A region that is not mapped, or not writable, is EFAULT (a later
	 * message would land there). */
	assert_int_equal(munmap(region + HOMA_BPAGE_SIZE, HOMA_BPAGE_SIZE), 0);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), -1);
	assert_int_equal(errno, EFAULT);
	assert_true(mmap(region + HOMA_BPAGE_SIZE, HOMA_BPAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED);
	assert_int_equal(mprotect(region, (size_t)n * HOMA_BPAGE_SIZE, PROT_READ), 0);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), -1);
	assert_int_equal(errno, EFAULT);
	assert_int_equal(mprotect(region, (size_t)n * HOMA_BPAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, 8), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), 0);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), -1);
	assert_int_equal(errno, EINVAL);  /* once per socket */
	assert_int_equal(getsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &got, &len), 0);
	assert_int_equal(len, sizeof(got));
	assert_int_equal(got.start, rb.start);
	assert_int_equal(got.length, rb.length);
	assert_int_equal(hs_avail(&s), (int64_t)rb.length);
	assert_int_equal(setsockopt(s.fd, SOL_SOCKET, SO_HOMA_SERVER, &v, sizeof(v)), -1);
	assert_int_equal(errno, ENOPROTOOPT);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, 99, &v, sizeof(v)), -1);
	assert_int_equal(errno, ENOPROTOOPT);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &v, 2), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(setsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &v, sizeof(v)), 0);
	len = sizeof(v);
	v = 0;
	assert_int_equal(getsockopt(s.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &v, &len), 0);
	assert_int_equal(v, 1);
	hs_close(&s);
	munmap(region, (size_t)(n + 1) * HOMA_BPAGE_SIZE);
}

/** round_trip() - One RPC between two sockets of @family; checks every field. */
static void round_trip(int family, size_t size)
{
	struct hs srv, cli;
	struct sockaddr_storage to, from;
	struct homa_recvmsg_args ra;
	char *out = malloc(size), *in = malloc(size);
	uint64_t id = 0;
	uint16_t port;
	ssize_t n;

	hs_open(&srv, family, hs_min_bpages());
	hs_open(&cli, family, hs_min_bpages());
	port = hs_serve(&srv);
	to = hs_addr(family, port);
	hs_fill(out, size, 5);
	assert_int_equal(hs_send(&cli, &to, 0, 77, 0, out, size, &id), 0);
	assert_true(id != 0 && (id & 1) == 0);
	memset(&ra, 0, sizeof(ra));
	n = hs_recv_wait(&srv, &ra, 0, &from, WAIT_MS);
	if (n != (ssize_t)size)
		fail_msg("request of %zu bytes: recvmsg %zd (%s)", size, n, strerror(errno));
	assert_int_equal(ra.id & 1, 1);  /* odd: a request (docs/LINUX_API.md: not id | 1) */
	assert_int_equal(ra.completion_cookie, 0);
	assert_int_equal(from.ss_family, family);
	assert_int_equal(port_from(&from), port_of(cli.fd));
	assert_int_equal(ra.num_bpages, (size + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE);
	for (uint32_t i = 0; i + 1 < ra.num_bpages; i++)
		assert_int_equal(ra.bpage_offsets[i] % HOMA_BPAGE_SIZE, 0);
	hs_gather(&srv, &ra, size, in);
	assert_memory_equal(in, out, size);
	/* The echo goes back as the reply. */
	assert_int_equal(hs_send(&srv, &from, ra.id, 0, 0, in, size, NULL), 0);
	struct homa_recvmsg_args rc;

	memset(&rc, 0, sizeof(rc));
	n = hs_recv_wait(&cli, &rc, 0, &from, WAIT_MS);
	if (n != (ssize_t)size)
		fail_msg("response of %zu bytes: recvmsg %zd (%s)", size, n, strerror(errno));
	assert_int_equal(rc.id, id);
	assert_int_equal(rc.completion_cookie, 77);
	assert_int_equal(port_from(&from), port);
	memset(in, 0, size);
	hs_gather(&cli, &rc, size, in);
	assert_memory_equal(in, out, size);
	hs_close(&srv);
	hs_close(&cli);
	free(out);
	free(in);
}

static void test_round_trip_v4(void **state)
{
	(void)state;
	round_trip(AF_INET, 1);
	round_trip(AF_INET, 1400);
	round_trip(AF_INET, HOMA_MAX_MESSAGE_LENGTH);
}

static void test_round_trip_v6(void **state)
{
	(void)state;
	round_trip(AF_INET6, 100);
	round_trip(AF_INET6, 3 * HOMA_BPAGE_SIZE + 17);
}

/** wait_readable() - poll() @fd until readable, at most WAIT_MS. */
static void wait_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, WAIT_MS) != 1)
		fail_msg("no message within %d ms", WAIT_MS);
}

/**
 * test_receive_in_place() - A message is received straight into the
 * registered region: with the region read-only from the moment the
 * message is complete (the descriptor is readable), recvmsg() still
 * returns it intact, so recvmsg() wrote none of its bytes (a copy into
 * the region would fault). A message that arrived before SO_HOMA_RCVBUF
 * lies outside the region and is copied in, also intact.
 */
static void test_receive_in_place(void **state)
{
	const size_t size = 3 * HOMA_BPAGE_SIZE + 100;
	char *out = malloc(size), *in = malloc(size);
	struct sockaddr_storage to, from;
	struct homa_recvmsg_args ra;
	struct homa_rcvbuf_args rb;
	struct hs srv, cli;
	ssize_t n;

	(void)state;
	hs_open(&srv, AF_INET, hs_min_bpages());
	hs_open(&cli, AF_INET, hs_min_bpages());
	to = hs_addr(AF_INET, hs_serve(&srv));
	hs_fill(out, size, 9);
	assert_int_equal(hs_send(&cli, &to, 0, 1, 0, out, size, NULL), 0);
	wait_readable(srv.fd);
	assert_int_equal(mprotect(srv.region, srv.region_len, PROT_READ), 0);
	memset(&ra, 0, sizeof(ra));
	n = hs_recv(&srv, &ra, 0, MSG_DONTWAIT, &from);
	assert_int_equal(mprotect(srv.region, srv.region_len, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(n, (ssize_t)size);
	assert_int_equal(ra.num_bpages, 4);
	hs_gather(&srv, &ra, size, in);
	assert_memory_equal(in, out, size);
	hs_close(&srv);

	/* No region yet when the message arrives: it is copied in at recvmsg(). */
	hs_open(&srv, AF_INET, 0);
	to = hs_addr(AF_INET, hs_serve(&srv));
	assert_int_equal(hs_send(&cli, &to, 0, 2, 0, out, size, NULL), 0);
	wait_readable(srv.fd);
	srv.region_len = (size_t)hs_min_bpages() * HOMA_BPAGE_SIZE;
	srv.region = mmap(NULL, srv.region_len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(srv.region != MAP_FAILED);
	rb.start = (uintptr_t)srv.region;
	rb.length = srv.region_len;
	assert_int_equal(setsockopt(srv.fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)), 0);
	memset(&ra, 0, sizeof(ra));
	memset(in, 0, size);
	assert_int_equal(hs_recv_wait(&srv, &ra, 0, &from, WAIT_MS), (ssize_t)size);
	hs_gather(&srv, &ra, size, in);
	assert_memory_equal(in, out, size);
	hs_close(&srv);
	hs_close(&cli);
	free(out);
	free(in);
}

static void test_sendmsg_errors(void **state)
{
	struct hs s;
	struct sockaddr_storage to = hs_addr(AF_INET, 9);
	struct homa_sendmsg_args a = { 0 };
	struct iovec v = { "x", 1 };
	struct msghdr h;
	char *big = calloc(1, HOMA_MAX_MESSAGE_LENGTH + 1);

	(void)state;
	hs_open(&s, AF_INET, 0);
	memset(&h, 0, sizeof(h));
	h.msg_iov = &v;
	h.msg_iovlen = 1;
	h.msg_control = &a;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);          /* no msg_name */
	assert_int_equal(errno, EINVAL);
	h.msg_name = &to;
	h.msg_namelen = 8;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);          /* too short */
	assert_int_equal(errno, EINVAL);
	h.msg_namelen = sizeof(struct sockaddr_in);
	h.msg_control = NULL;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EFAULT);
	h.msg_control = &a;
	a.flags = 2;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EINVAL);
	a.flags = 0;
	a.reserved = 1;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EINVAL);
	a.reserved = 0;
	to = hs_addr(AF_INET6, 9);
	h.msg_namelen = sizeof(struct sockaddr_in6);
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EAFNOSUPPORT);
	to = hs_addr(AF_INET, 9);
	assert_int_equal(hs_send(&s, &to, 0, 0, 0, big, HOMA_MAX_MESSAGE_LENGTH + 1, NULL), -1);
	assert_int_equal(errno, EINVAL);
	/* More vectors than the kernel takes (and a count that would
	 * overflow a size): EMSGSIZE, nothing read past the array. */
	h.msg_iovlen = (size_t)1 << 62;
	assert_int_equal(sendmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EMSGSIZE);
	h.msg_iovlen = 1;
	/* Replies: a cookie is EINVAL; an unknown RPC is not an error. */
	assert_int_equal(hs_send(&s, &to, 13, 5, 0, "x", 1, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(hs_send(&s, &to, 13, 0, 0, "x", 1, NULL), 0);
	hs_close(&s);
	free(big);
}

static void test_recvmsg_errors(void **state)
{
	struct hs s, none;
	struct homa_recvmsg_args ra;
	struct msghdr h;

	(void)state;
	hs_open(&s, AF_INET, hs_min_bpages());
	hs_open(&none, AF_INET, 0);
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv(&none, &ra, 0, MSG_DONTWAIT, NULL), -1);
	assert_int_equal(errno, EINVAL);                   /* no region */
	memset(&h, 0, sizeof(h));
	assert_int_equal(recvmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EINVAL);                   /* no control */
	h.msg_control = &ra;
	h.msg_controllen = sizeof(ra) - 1;
	assert_int_equal(recvmsg(s.fd, &h, 0), -1);
	assert_int_equal(errno, EINVAL);
	ra.num_bpages = HOMA_MAX_BPAGES + 1;
	assert_int_equal(hs_recv(&s, &ra, 0, MSG_DONTWAIT, NULL), -1);
	assert_int_equal(errno, EINVAL);
	ra.num_bpages = 0;
	ra.reserved = 1;
	assert_int_equal(hs_recv(&s, &ra, 0, MSG_DONTWAIT, NULL), -1);
	assert_int_equal(errno, EINVAL);
	ra.reserved = 0;
	assert_int_equal(hs_recv(&s, &ra, 0, MSG_DONTWAIT, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(ra.id, 0);
	assert_int_equal(hs_recv(&s, &ra, 1234, MSG_DONTWAIT, NULL), -1);
	assert_int_equal(errno, EINVAL);                   /* not our RPC */
	hs_close(&s);
	hs_close(&none);
}

/** readable() - poll() says @fd is readable within @ms. */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void test_readiness(void **state)
{
	struct hs srv, cli;
	struct sockaddr_storage to, from;
	struct homa_recvmsg_args ra;
	struct epoll_event ev = { .events = EPOLLIN }, got;
	int ep = epoll_create1(0);
	fd_set set;
	struct timeval tv = { 5, 0 };

	(void)state;
	hs_open(&srv, AF_INET, hs_min_bpages());
	hs_open(&cli, AF_INET, hs_min_bpages());
	to = hs_addr(AF_INET, hs_serve(&srv));
	assert_false(readable(srv.fd, 0));
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, srv.fd, &ev), 0);
	assert_int_equal(hs_send(&cli, &to, 0, 1, 0, "ping", 4, NULL), 0);
	assert_int_equal(epoll_wait(ep, &got, 1, 10000), 1);       /* epoll */
	assert_true(readable(srv.fd, 0));                            /* poll */
	FD_ZERO(&set);
	FD_SET(srv.fd, &set);
	assert_int_equal(select(srv.fd + 1, &set, NULL, NULL, &tv), 1); /* select */
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv(&srv, &ra, 0, MSG_DONTWAIT, &from), 4);
	assert_false(readable(srv.fd, 0));
	assert_int_equal(hs_send(&srv, &from, ra.id, 0, 0, "pong", 4, NULL), 0);
	assert_true(readable(cli.fd, 10000));
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv(&cli, &ra, 0, MSG_DONTWAIT, NULL), 4);
	close(ep);
	hs_close(&srv);
	hs_close(&cli);
}

static void test_dup_fcntl(void **state)
{
	struct hs srv, cli;
	struct sockaddr_storage to, from;
	struct homa_recvmsg_args ra;
	int d, d2, d3;

	(void)state;
	hs_open(&srv, AF_INET, hs_min_bpages());
	hs_open(&cli, AF_INET, hs_min_bpages());
	to = hs_addr(AF_INET, hs_serve(&srv));
	d = dup(cli.fd);
	d2 = fcntl(cli.fd, F_DUPFD_CLOEXEC, 100);
	assert_true(d >= 0 && d2 >= 100);
	d3 = dup2(d, d2 + 1);
	assert_int_equal(d3, d2 + 1);
	/* A request sent on the copy; the original's descriptor closed. */
	assert_int_equal(hs_send(&(struct hs){ .fd = d }, &to, 0, 9, 0, "abc", 3, NULL), 0);
	close(cli.fd);
	cli.fd = d3;
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv_wait(&srv, &ra, 0, &from, WAIT_MS), 3);
	assert_int_equal(hs_send(&srv, &from, ra.id, 0, 0, "def", 3, NULL), 0);
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv_wait(&(struct hs){ .fd = d2, .region = cli.region }, &ra, 0,
				      NULL, WAIT_MS), 3);
	assert_int_equal(ra.completion_cookie, 9);
	/* O_NONBLOCK through fcntl: recvmsg() does not wait. */
	assert_int_equal(fcntl(d, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(hs_recv(&cli, &ra, 0, 0, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fcntl(d, F_SETFL, 0), 0);
	close(d);
	close(d2);
	hs_close(&cli);
	hs_close(&srv);
}

/** blocked_recv() - Thread: recvmsg() that waits; stores errno. */
static void *blocked_recv(void *arg)
{
	struct hs *s = arg;
	struct homa_recvmsg_args ra;
	intptr_t e;

	memset(&ra, 0, sizeof(ra));
	e = hs_recv(s, &ra, 0, 0, NULL) < 0 ? errno : 0;
	return (void *)e;
}

static void test_shutdown(void **state)
{
	struct hs s;
	struct sockaddr_storage to = hs_addr(AF_INET, 9);
	pthread_t t;
	void *e;

	(void)state;
	hs_open(&s, AF_INET, hs_min_bpages());
	hs_serve(&s);
	assert_int_equal(pthread_create(&t, NULL, blocked_recv, &s), 0);
	usleep(100000);
	assert_int_equal(shutdown(s.fd, SHUT_RDWR), 0);
	assert_int_equal(pthread_join(t, &e), 0);
	assert_int_equal((intptr_t)e, ESHUTDOWN);
	assert_int_equal(hs_send(&s, &to, 0, 0, 0, "x", 1, NULL), -1);
	assert_int_equal(errno, ESHUTDOWN);
	hs_close(&s);
}

static void test_rebind_ends_rpcs(void **state)
{
	struct hs srv, cli;
	struct sockaddr_storage to;
	struct homa_recvmsg_args ra;
	uint64_t id;
	int off = 0, on = -1;
	socklen_t len = sizeof(on);
	uint16_t port;

	(void)state;
	hs_open(&srv, AF_INET, hs_min_bpages());
	hs_open(&cli, AF_INET, hs_min_bpages());
	to = hs_addr(AF_INET, hs_serve(&srv));
	assert_int_equal(hs_send(&cli, &to, 0, 1, HOMA_SENDMSG_PRIVATE, "q", 1, &id), 0);
	/* bind() after traffic opens the socket again: the private RPC is
	 * over, and waiting for it is EINVAL, not a wait without end. */
	port = hs_serve(&cli);
	memset(&ra, 0, sizeof(ra));
	assert_int_equal(hs_recv(&cli, &ra, id, 0, NULL), -1);
	assert_int_equal(errno, EINVAL);
	/* SO_HOMA_SERVER off keeps the port and stops serving. */
	assert_int_equal(setsockopt(cli.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &off, sizeof(off)), 0);
	assert_int_equal(port_of(cli.fd), port);
	assert_int_equal(getsockopt(cli.fd, IPPROTO_HOMA, SO_HOMA_SERVER, &on, &len), 0);
	assert_int_equal(on, 0);
	hs_close(&srv);
	hs_close(&cli);
}

static void test_info_and_misc(void **state)
{
	struct hs srv, cli;
	struct sockaddr_storage to;
	struct homa_info info;
	struct homa_rpc_info rpcs[4];
	uint64_t ids[3];
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	(void)state;
	hs_open(&srv, AF_INET, hs_min_bpages());
	hs_open(&cli, AF_INET, hs_min_bpages());
	to = hs_addr(AF_INET, hs_serve(&srv));
	for (int i = 0; i < 3; i++)
		assert_int_equal(hs_send(&cli, &to, 0, 100 + i, i == 1 ? HOMA_SENDMSG_PRIVATE : 0,
					 "q", 1, &ids[i]), 0);
	memset(&info, 0, sizeof(info));
	info.rpc_info = (uintptr_t)rpcs;
	info.rpc_info_length = 2 * sizeof(rpcs[0]);    /* room for 2 of 3 */
	assert_int_equal(ioctl(cli.fd, HOMAIOCINFO, &info), 0);
	assert_int_equal(info.port, port_of(cli.fd));
	assert_int_equal(info.num_rpcs, 3);
	assert_int_equal(info.bpool_avail_bytes, cli.region_len);
	for (int i = 0; i < 2; i++) {
		int k = rpcs[i].id == ids[0] ? 0 : rpcs[i].id == ids[1] ? 1 : 2;

		assert_int_equal(rpcs[i].id, ids[k]);
		assert_int_equal(rpcs[i].completion_cookie, 100 + k);
		assert_int_equal(rpcs[i].tx_length, 1);
		assert_int_equal(!!(rpcs[i].flags & HOMA_RPC_PRIVATE), k == 1);
	}
	/* error_msg explains the last error. */
	assert_int_equal(hs_send(&cli, &to, 0, 0, 7, "q", 1, NULL), -1);
	assert_int_equal(ioctl(cli.fd, HOMAIOCINFO, &info), 0);
	assert_true(strstr(info.error_msg, "reserved") != NULL);
	assert_int_equal(ioctl(cli.fd, HOMAIOCFREEZE, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ioctl(cli.fd, _IO('h', 0x99), NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(getpeername(cli.fd, (struct sockaddr *)&a, &len), -1);
	assert_int_equal(errno, ENOTCONN);
	assert_int_equal(connect(cli.fd, (struct sockaddr *)&to, sizeof(a)), -1);
	assert_int_equal(errno, EOPNOTSUPP);
	hs_close(&srv);
	hs_close(&cli);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_socket_kinds),
		cmocka_unit_test(test_bind),
		cmocka_unit_test(test_sockopts),
		cmocka_unit_test(test_round_trip_v4),
		cmocka_unit_test(test_round_trip_v6),
		cmocka_unit_test(test_receive_in_place),
		cmocka_unit_test(test_sendmsg_errors),
		cmocka_unit_test(test_recvmsg_errors),
		cmocka_unit_test(test_readiness),
		cmocka_unit_test(test_dup_fcntl),
		cmocka_unit_test(test_shutdown),
		cmocka_unit_test(test_rebind_ends_rpcs),
		cmocka_unit_test(test_info_and_misc),
	};

	/* A loaded machine can deschedule a process past libhoma's 100 ms RPC
	 * timeout (ETIMEDOUT in a round trip); no test here is about timeouts.
	 * Read at the first socket; a value in the environment wins. */
	setenv("HOMA_LINUX_TIMEOUT_MS", "10000", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
