/* SPDX-License-Identifier: MIT */
/**
 * @file psp_fwd.c
 * What the host's PSP receiver does with one datagram that reached the
 * PSP port (psp_host.c runs it): a registration of Homa ports from a
 * process of this host, or a sealed packet, which it checks just enough
 * to dispatch (PSP next header, length, the clear common header's
 * destination port naming a registered socket) and forwards unopened to
 * that socket's own UDP port on the address it was sent to, with the
 * sender's address as source (IP_PKTINFO; the socket has IP_TRANSPARENT).
 * The socket then opens it with its own keys, so unknown SPIs, replays
 * and forgeries are counted there, by reason.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "psp_host.h"

/** psp_host_local_has() - See psp_host.h. */
bool psp_host_local_has(const uint64_t *bits, uint16_t port)
{
	return __atomic_load_n(&bits[port / 64], __ATOMIC_RELAXED) & (1ull << (port % 64));
}

/** is_loopback() - True if @a is in 127.0.0.0/8. */
static bool is_loopback(const struct sockaddr_in *a)
{
	return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
}

/**
 * take_registration() - Record the ports listed in the registration
 * @p (@len bytes, after the magic) as live until @now + PSP_HOST_REG_TTL_NS.
 */
static void take_registration(struct psp_host_rx *r, const uint8_t *p, size_t len, uint64_t now)
{
	for (size_t i = PSP_HOST_MAGIC_LEN; i + 2 <= len; i += 2) {
		uint16_t port = (uint16_t)(p[i] << 8 | p[i + 1]);

		if (port)
			r->seen[port] = now + PSP_HOST_REG_TTL_NS;
	}
	r->st.registrations++;
}

/**
 * forward() - Send the sealed packet @p to @to, sourced from @from.
 * Return: true if the kernel took it.
 */
static bool forward(int fd, const uint8_t *p, size_t len, const struct sockaddr_in *to,
		    struct in_addr from)
{
	union {
		struct cmsghdr h;
		uint8_t buf[CMSG_SPACE(sizeof(struct in_pktinfo))];
	} c;
	struct iovec iov = {.iov_base = (void *)p, .iov_len = len};
	struct msghdr m = {.msg_name = (void *)to, .msg_namelen = sizeof(*to), .msg_iov = &iov,
			   .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof(c.buf)};
	struct cmsghdr *ch = CMSG_FIRSTHDR(&m);
	struct in_pktinfo pi = {.ipi_spec_dst = from};

	memset(c.buf, 0, sizeof(c.buf));
	ch->cmsg_level = IPPROTO_IP;
	ch->cmsg_type = IP_PKTINFO;
	ch->cmsg_len = CMSG_LEN(sizeof(pi));
	memcpy(CMSG_DATA(ch), &pi, sizeof(pi));
	return sendmsg(fd, &m, MSG_DONTWAIT) == (ssize_t)len;
}

/** psp_host_dispatch() - See psp_host.h. */
void psp_host_dispatch(struct psp_host_rx *r, const uint8_t *p, size_t len,
		       const struct sockaddr_in *src, struct in_addr dst, uint64_t now)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr = dst};
	uint16_t dport;

	if (len >= PSP_HOST_MAGIC_LEN && !memcmp(p, PSP_HOST_MAGIC, PSP_HOST_MAGIC_LEN)) {
		if (is_loopback(src))
			take_registration(r, p, len, now);
		else
			r->st.not_psp++;
		return;
	}
	if (len < 1 || p[0] != HOMA_PSP_NEXT_HDR) {
		r->st.not_psp++;
		return;
	}
	if (len < PSP_HOST_MIN_LEN) {
		r->st.truncated++;
		return;
	}
	dport = (uint16_t)(p[HOMA_PSP_HDR_LEN + 2] << 8 | p[HOMA_PSP_HDR_LEN + 3]);
	if (dport == 0 || dport == r->port ||
	    (!psp_host_local_has(r->local, dport) && r->seen[dport] < now)) {
		r->st.no_port++;
		return;
	}
	to.sin_port = htons(dport);
	if (forward(r->fd, p, len, &to, src->sin_addr))
		r->st.forwarded++;
	else
		r->st.send_errors++;
}
