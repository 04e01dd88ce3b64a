/* SPDX-License-Identifier: MIT */
/**
 * @file psp_batch.c
 * One batch of the host's PSP receiver: up to PSP_HOST_BATCH datagrams
 * read from the PSP port with one recvmmsg(), each dispatched
 * (psp_fwd.c), and the forwards sent with one sendmmsg(), so that a busy
 * port costs two system calls per batch instead of two per packet, and
 * an idle one sleeps in recvmmsg() itself (no poll() before it).
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "psp_host.h"
#include "rt.h"

/**
 * dest_of() - The destination address of received message @m
 * (IPV6_PKTINFO, or IP_PKTINFO on an IPv4 socket), in @family's form;
 * an IPv6 one carries the arrival interface as its scope. Loopback if
 * the kernel gave none.
 */
static struct sockaddr_storage dest_of(const struct msghdr *m, int family)
{
	struct sockaddr_storage d = {.ss_family = (sa_family_t)family};

	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR((struct msghdr *)m, c)) {
		if (family == AF_INET6 && c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_PKTINFO) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&d;
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			a->sin6_addr = pi.ipi6_addr;
			a->sin6_scope_id = (uint32_t)pi.ipi6_ifindex;
			return d;
		}
		if (family == AF_INET && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in *)&d)->sin_addr = pi.ipi_addr;
			return d;
		}
	}
	if (family == AF_INET6)
		((struct sockaddr_in6 *)&d)->sin6_addr = in6addr_loopback;
	else
		((struct sockaddr_in *)&d)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return d;
}

/** psp_host_drain() - See psp_host.h. */
int psp_host_drain(struct psp_host_rx *r, uint8_t *bufs, int flags)
{
	struct mmsghdr m[PSP_HOST_BATCH];
	struct iovec iov[PSP_HOST_BATCH];
	struct sockaddr_storage src[PSP_HOST_BATCH];
	union psp_host_cmsg c[PSP_HOST_BATCH];
	uint64_t now;
	int n;

	for (int i = 0; i < PSP_HOST_BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = bufs + (size_t)i * PSP_HOST_MAX_DGRAM,
					.iov_len = PSP_HOST_MAX_DGRAM};
		m[i].msg_hdr = (struct msghdr){.msg_name = &src[i], .msg_namelen = sizeof(src[i]),
					       .msg_iov = &iov[i], .msg_iovlen = 1,
					       .msg_control = c[i].b, .msg_controllen = sizeof(c[i].b)};
	}
	n = recvmmsg(r->fd, m, PSP_HOST_BATCH, flags, NULL);
	if (n <= 0 || __atomic_load_n(r->stop, __ATOMIC_ACQUIRE))
		return n;
	now = homa_rt_now();
	r->st.batches++;
	for (int i = 0; i < n; i++) {
		struct sockaddr_storage dst;

		if (m[i].msg_hdr.msg_flags & MSG_TRUNC) {
			r->st.truncated++;
			continue;
		}
		dst = dest_of(&m[i].msg_hdr, r->family);
		psp_host_dispatch(r, iov[i].iov_base, m[i].msg_len, &src[i], &dst, now);
	}
	psp_host_flush(r);
	return n;
}
