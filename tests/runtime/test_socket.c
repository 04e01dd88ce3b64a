/* SPDX-License-Identifier: MIT */
/**
 * @file test_socket.c
 * Opening and closing sockets (src/runtime/socket.c): accurate errors for
 * addresses and timeouts; the kernel receive buffer the driver asks for.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers.h"

/**
 * homa_open__address_not_local() - A well-formed address that is not one
 * of this host's gives HOMA_EADDRNOTAVAIL (not "address family not
 * available"); a send timeout below -1 is HOMA_EINVAL.
 */
static void homa_open__address_not_local(void **state)
{
	struct homa_open_opts o;
	homa_socket *s;

	(void)state;
	homa_open_opts_default(&o);
	o.bind_addr = "192.0.2.77";  /* TEST-NET-1: never local */
	assert_int_equal(homa_open(&s, &o), HOMA_EADDRNOTAVAIL);
	homa_open_opts_default(&o);
	o.send_timeout_ns = -2;
	assert_int_equal(homa_open(&s, &o), HOMA_EINVAL);
}

/**
 * udp_fd_of() - The UDP socket of this process bound to 127.0.0.1:@port
 * (found through /proc/self/fd). Return: its fd, or -1.
 */
static int udp_fd_of(uint16_t port)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = -1;

	assert_non_null(d);
	while (found < 0 && (e = readdir(d))) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int fd = atoi(e->d_name), type = 0;
		socklen_t tl = sizeof(type);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) || type != SOCK_DGRAM ||
		    getsockname(fd, (struct sockaddr *)&a, &len) || a.sin_family != AF_INET ||
		    ntohs(a.sin_port) != port)
			continue;
		found = fd;
	}
	closedir(d);
	return found;
}

/** rcvbuf_of() - SO_RCVBUF of @fd as the kernel reports it. */
static int rcvbuf_of(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len), 0);
	return v;
}

/**
 * granted_for() - What the kernel reports for a fresh UDP socket that asks
 * for @bytes the way the driver does (SO_RCVBUFFORCE, else SO_RCVBUF):
 * twice @bytes when privileged, else capped by net.core.rmem_max.
 */
static int granted_for(int bytes)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), v;

	assert_true(fd >= 0);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	v = rcvbuf_of(fd);
	close(fd);
	return v;
}

/** open_rcvbuf() - homa_open() on 127.0.0.1 with @version and @bytes. Return: its result. */
static int open_rcvbuf(homa_socket **s, uint32_t version, uint32_t bytes)
{
	struct homa_open_opts o;

	homa_open_opts_default(&o);
	o.version = version;
	o.bind_addr = "127.0.0.1";
	o.rcvbuf_bytes = bytes;
	return homa_open(s, &o);
}

/**
 * homa_open__rcvbuf_bytes() - The UDP driver's socket asks the kernel for
 * rcvbuf_bytes of receive buffer, 1 MiB by default (a flood keeps this
 * queue full, so it is not deeper than it must be); values outside
 * 4096..1 GiB are HOMA_EINVAL; a version 4 caller's struct, which ends
 * before the field, is not read there.
 */
static void homa_open__rcvbuf_bytes(void **state)
{
	homa_socket *s;

	(void)state;
	assert_int_equal(open_rcvbuf(&s, HOMA_OPEN_OPTS_VERSION, 4095), HOMA_EINVAL);
	assert_int_equal(open_rcvbuf(&s, HOMA_OPEN_OPTS_VERSION, (1u << 30) + 1), HOMA_EINVAL);
	assert_int_equal(open_rcvbuf(&s, HOMA_OPEN_OPTS_VERSION, 0), 0);
	assert_int_equal(rcvbuf_of(udp_fd_of((uint16_t)homa_local_port(s))), granted_for(1 << 20));
	homa_close(s);
	assert_int_equal(open_rcvbuf(&s, HOMA_OPEN_OPTS_VERSION, 256 << 10), 0);
	assert_int_equal(rcvbuf_of(udp_fd_of((uint16_t)homa_local_port(s))), granted_for(256 << 10));
	homa_close(s);
	assert_int_equal(open_rcvbuf(&s, 4, 7), 0);
	assert_int_equal(rcvbuf_of(udp_fd_of((uint16_t)homa_local_port(s))), granted_for(1 << 20));
	homa_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homa_open__address_not_local),
		cmocka_unit_test(homa_open__rcvbuf_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
