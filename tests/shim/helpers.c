/* SPDX-License-Identifier: MIT */
/**
 * @file helpers.c
 * See helpers.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

/** die() - Stop the test program: a helper's set-up failed. */
static void die(const char *what)
{
	fprintf(stderr, "shim test helper: %s: %s\n", what, strerror(errno));
	abort();
}

unsigned hs_min_bpages(void)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t min = (uint64_t)(ncpu > 0 ? ncpu : 1) * HOMA_BPAGE_SIZE +
		       2 * (uint64_t)HOMA_MAX_MESSAGE_LENGTH;

	return (unsigned)((min + HOMA_BPAGE_SIZE - 1) / HOMA_BPAGE_SIZE);
}

void hs_open(struct hs *s, int family, unsigned bpages)
{
	struct homa_rcvbuf_args rb;

	memset(s, 0, sizeof(*s));
	s->fd = socket(family, SOCK_DGRAM, IPPROTO_HOMA);
	if (s->fd < 0)
		die("socket");
	if (!bpages)
		return;
	s->region_len = (size_t)bpages * HOMA_BPAGE_SIZE;
	s->region = mmap(NULL, s->region_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->region == MAP_FAILED)
		die("mmap");
	rb.start = (uintptr_t)s->region;
	rb.length = s->region_len;
	if (setsockopt(s->fd, IPPROTO_HOMA, SO_HOMA_RCVBUF, &rb, sizeof(rb)))
		die("SO_HOMA_RCVBUF");
}

void hs_close(struct hs *s)
{
	close(s->fd);
	if (s->region)
		munmap(s->region, s->region_len);
	s->fd = -1;
	s->region = NULL;
}

struct sockaddr_storage hs_addr(int family, uint16_t port)
{
	struct sockaddr_storage a;

	memset(&a, 0, sizeof(a));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&a;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		a6->sin6_addr = in6addr_loopback;
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&a;

		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	}
	return a;
}

uint16_t hs_serve(struct hs *s)
{
	int family = 0;
	socklen_t len = sizeof(family);
	unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL);

	if (getsockopt(s->fd, SOL_SOCKET, SO_DOMAIN, &family, &len))
		die("SO_DOMAIN");
	for (int tries = 0; tries < 100; tries++) {
		uint16_t port = (uint16_t)(10000 + rand_r(&seed) % 20000);
		struct sockaddr_storage a = hs_addr(family, port);

		if (bind(s->fd, (struct sockaddr *)&a, family == AF_INET6 ?
			 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) == 0)
			return port;
		if (errno != EADDRINUSE)
			die("bind");
	}
	die("no free port");
	return 0;
}

int hs_send(struct hs *s, const struct sockaddr_storage *to, uint64_t id, uint64_t cookie,
	    uint32_t flags, const void *buf, size_t len, uint64_t *out_id)
{
	struct homa_sendmsg_args a = { .id = id, .completion_cookie = cookie, .flags = flags };
	struct iovec v = { (void *)buf, len };
	struct msghdr h;
	int ret;

	memset(&h, 0, sizeof(h));
	h.msg_name = (void *)to;
	h.msg_namelen = to->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);
	h.msg_iov = &v;
	h.msg_iovlen = 1;
	h.msg_control = &a;
	ret = (int)sendmsg(s->fd, &h, 0);
	if (ret == 0 && out_id)
		*out_id = a.id;
	return ret;
}

ssize_t hs_recv(struct hs *s, struct homa_recvmsg_args *ra, uint64_t id, int flags,
		struct sockaddr_storage *from)
{
	struct msghdr h;

	memset(&h, 0, sizeof(h));
	h.msg_name = from;
	h.msg_namelen = from ? sizeof(*from) : 0;
	h.msg_control = ra;
	h.msg_controllen = sizeof(*ra);
	ra->id = id;
	return recvmsg(s->fd, &h, flags);
}

/** ms_now() - CLOCK_MONOTONIC in ms. */
static int64_t ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

ssize_t hs_recv_wait(struct hs *s, struct homa_recvmsg_args *ra, uint64_t id,
		     struct sockaddr_storage *from, int ms)
{
	int64_t deadline = ms_now() + ms;

	for (;;) {
		struct pollfd p = { .fd = s->fd, .events = POLLIN };
		int64_t left = deadline - ms_now();
		ssize_t n;
		int ready;

		/* The first call gives back the bpages in @ra; EAGAIN zeroes them. */
		n = hs_recv(s, ra, id, MSG_DONTWAIT, from);
		if (n >= 0 || errno != EAGAIN)
			return n;
		if (left <= 0) {
			errno = ETIME;
			return -1;
		}
		ready = poll(&p, 1, (int)left);
		if (ready < 0 && errno != EINTR)
			return -1;
		if (ready == 0) {  /* deadline: one last look tells a lost wake-up */
			n = hs_recv(s, ra, id, MSG_DONTWAIT, from);
			if (n < 0 && errno == EAGAIN) {
				errno = ETIME;
				return -1;
			}
			fprintf(stderr, "shim test helper: a message was ready but poll() "
				"did not say so within %d ms\n", ms);
			errno = EPROTO;
			return -1;
		}
	}
}

void hs_gather(const struct hs *s, const struct homa_recvmsg_args *ra, size_t len, void *out)
{
	for (uint32_t i = 0; i < ra->num_bpages; i++) {
		size_t at = (size_t)i * HOMA_BPAGE_SIZE;
		size_t n = len - at < HOMA_BPAGE_SIZE ? len - at : HOMA_BPAGE_SIZE;

		memcpy((char *)out + at, s->region + ra->bpage_offsets[i], n);
	}
}

void hs_fill(void *buf, size_t len, unsigned seed)
{
	for (size_t k = 0; k < len; k++)
		((unsigned char *)buf)[k] = (unsigned char)(seed * 7 + k * 13);
}

int64_t hs_avail(struct hs *s)
{
	struct homa_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(s->fd, HOMAIOCINFO, &info))
		return -1;
	return (int64_t)info.bpool_avail_bytes;
}
