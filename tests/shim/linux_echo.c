/* SPDX-License-Identifier: MIT */
/**
 * @file linux_echo.c
 * An echo client and server written only against the Linux Homa module's
 * socket API (homa_linux.h: socket, bind, setsockopt, sendmsg, recvmsg),
 * the way programs for the module are written. Under libhoma-linux.so it
 * talks to the native examples (echo_server, echo_client) over the same
 * wire.
 *
 *   linux_echo client PORT SIZE COUNT [HOST]
 *                                       requests to HOST:PORT (IPv4 or IPv6,
 *                                       default 127.0.0.1), checks echoes
 *   linux_echo server PORT [COUNT]      answers COUNT requests (default: no end)
 *   linux_echo server6 PORT [COUNT]     the same on an IPv6 socket (bound to ::)
 *
 * The request pattern is echo_client's (byte k of request i is i + 13 k),
 * so either side can check the other. Exit status 0 means every echo
 * matched.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "homa_linux.h"

#define REGION (64u * HOMA_BPAGE_SIZE)

/** An IPv4 or IPv6 socket address. */
union peer {
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/** peer_port() - The port of @p, host order. */
static int peer_port(const union peer *p)
{
	return ntohs(p->in.sin_family == AF_INET6 ? p->in6.sin6_port : p->in.sin_port);
}

/** open_sock() - A Homa socket of @family with a receive region at *@region. */
static int open_sock(int family, char **region)
{
	int fd = socket(family, SOCK_DGRAM, IPPROTO_HOMA);
	struct homa_rcvbuf_args rb;

	if (fd < 0) {
		perror("linux_echo: socket");
		exit(1);
	}
	*region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (*region == MAP_FAILED) {
		perror("linux_echo: mmap");
		exit(1);
	}
	rb.start = (uintptr_t)*region;
	rb.length = REGION;
	if (setsockopt(fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)) != 0) {
		perror("linux_echo: SO_HOMA_RCVBUF");
		exit(1);
	}
	return fd;
}

/** receive() - recvmsg() for @id (0: any), returning @ra's bpages first. */
static ssize_t receive(int fd, struct homa_recvmsg_args *ra, uint64_t id,
		       union peer *from)
{
	struct msghdr h;

	memset(&h, 0, sizeof(h));
	h.msg_name = from;
	h.msg_namelen = sizeof(*from);
	h.msg_control = ra;
	h.msg_controllen = sizeof(*ra);
	ra->id = id;
	return recvmsg(fd, &h, 0);
}

/** gather() - Copy a received message out of its bpages into @out. */
static void gather(const char *region, const struct homa_recvmsg_args *ra, size_t len,
		   unsigned char *out)
{
	for (uint32_t i = 0; i < ra->num_bpages; i++) {
		size_t at = (size_t)i * HOMA_BPAGE_SIZE;
		size_t n = len - at < HOMA_BPAGE_SIZE ? len - at : HOMA_BPAGE_SIZE;

		memcpy(out + at, region + ra->bpage_offsets[i], n);
	}
}

/** send_msg() - sendmsg() of @buf to @to with @args in msg_control. */
static int send_msg(int fd, struct homa_sendmsg_args *args, const void *buf, size_t len,
		    const union peer *to)
{
	struct iovec v = { (void *)buf, len };
	struct msghdr h;

	memset(&h, 0, sizeof(h));
	h.msg_name = (void *)to;
	h.msg_namelen = to->in.sin_family == AF_INET6 ? sizeof(to->in6) : sizeof(to->in);
	h.msg_iov = &v;
	h.msg_iovlen = 1;
	h.msg_control = args;
	h.msg_controllen = 0;
	return (int)sendmsg(fd, &h, 0);
}

/** client() - COUNT echoes of SIZE bytes to @host (IPv4 or IPv6). Return:
 *  mismatches (or exits). */
static int client(int port, size_t size, int count, const char *host)
{
	char *region;
	union peer to;
	int fd, bad = 0;
	struct homa_recvmsg_args ra;
	unsigned char *req = malloc(size), *resp = malloc(size);

	memset(&to, 0, sizeof(to));
	if (inet_pton(AF_INET, host, &to.in.sin_addr) == 1) {
		to.in.sin_family = AF_INET;
		to.in.sin_port = htons((uint16_t)port);
	} else if (inet_pton(AF_INET6, host, &to.in6.sin6_addr) == 1) {
		to.in6.sin6_family = AF_INET6;
		to.in6.sin6_port = htons((uint16_t)port);
	} else {
		fprintf(stderr, "linux_echo: %s is not an IPv4 or IPv6 address\n", host);
		exit(2);
	}
	fd = open_sock(to.in.sin_family, &region);
	memset(&ra, 0, sizeof(ra));
	for (int i = 0; i < count; i++) {
		struct homa_sendmsg_args sa = { .completion_cookie = 1000 + (uint64_t)i };
		union peer from;
		ssize_t n;

		for (size_t k = 0; k < size; k++)
			req[k] = (unsigned char)(i + k * 13);
		if (send_msg(fd, &sa, req, size, &to) != 0) {
			perror("linux_echo: sendmsg");
			return count;
		}
		n = receive(fd, &ra, 0, &from);
		if (n < 0) {
			fprintf(stderr, "linux_echo: recvmsg: %s\n", strerror(errno));
			return count;
		}
		gather(region, &ra, (size_t)n, resp);
		if ((size_t)n != size || ra.id != sa.id || ra.completion_cookie != sa.completion_cookie ||
		    memcmp(req, resp, size) != 0 || peer_port(&from) != port)
			bad++;
	}
	printf("linux_echo: %d echoes of %zu bytes, %d bad\n", count, size, bad);
	close(fd);
	free(req);
	free(resp);
	return bad;
}

/** server() - Answer COUNT requests with their own bytes on a @family socket. */
static int server(int family, int port, int count)
{
	char *region;
	int fd = open_sock(family, &region);
	union peer me;
	struct homa_recvmsg_args ra;
	unsigned char *buf = malloc(HOMA_MAX_MESSAGE_LENGTH);

	memset(&me, 0, sizeof(me));
	me.in.sin_family = (sa_family_t)family;
	if (family == AF_INET6)
		me.in6.sin6_port = htons((uint16_t)port);  /* :: */
	else
		me.in.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&me, family == AF_INET6 ? sizeof(me.in6)
								  : sizeof(me.in)) != 0) {
		perror("linux_echo: bind");
		return 1;
	}
	printf("linux_echo: serving port %d\n", port);
	fflush(stdout);
	memset(&ra, 0, sizeof(ra));
	for (int i = 0; count < 0 || i < count; i++) {
		struct homa_sendmsg_args sa = { 0 };
		union peer from;
		ssize_t n = receive(fd, &ra, 0, &from);

		if (n < 0) {
			fprintf(stderr, "linux_echo: recvmsg: %s\n", strerror(errno));
			return 1;
		}
		gather(region, &ra, (size_t)n, buf);
		sa.id = ra.id;
		if (send_msg(fd, &sa, buf, (size_t)n, &from) != 0) {
			perror("linux_echo: sendmsg (reply)");
			return 1;
		}
	}
	close(fd);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "client"))
		return client(atoi(argv[2]), (size_t)atol(argv[3]), atoi(argv[4]),
			      argc == 6 ? argv[5] : "127.0.0.1") ? 1 : 0;
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "server"))
		return server(AF_INET, atoi(argv[2]), argc == 4 ? atoi(argv[3]) : -1);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "server6"))
		return server(AF_INET6, atoi(argv[2]), argc == 4 ? atoi(argv[3]) : -1);
	fprintf(stderr, "usage: linux_echo client PORT SIZE COUNT [HOST] | server|server6 PORT "
		"[COUNT]\n");
	return 2;
}
