/* SPDX-License-Identifier: MIT */
/**
 * @file psp_fwd.c
 * What the host's PSP receiver does with one datagram that reached the
 * PSP port (psp_batch.c reads them): a registration of Homa ports from a
 * process of this host, or a sealed packet, which it checks just enough
 * to dispatch (PSP next header, length, the clear common header's
 * destination port naming a registered socket) and forwards unopened
 * (the batch's forwards go out in one sendmmsg()) to
 * that socket's own UDP port on the address it was sent to, with the
 * sender's address as source (IP_PKTINFO or IPV6_PKTINFO; the socket has
 * IP_TRANSPARENT). IPv4 and IPv6 alike: the socket is dual-stack.
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

/** is_loopback() - True if @a is 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. */
static bool is_loopback(const struct sockaddr_storage *a)
{
	const struct in6_addr *v6 = &((const struct sockaddr_in6 *)a)->sin6_addr;

	if (a->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr) >> 24) == 127;
	if (a->ss_family != AF_INET6)
		return false;
	return IN6_IS_ADDR_LOOPBACK(v6) || (IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
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
 * source_cmsg() - Fill @c to make a datagram sent to @to leave from
 * @from's address (IP_PKTINFO for IPv4, IPV6_PKTINFO for IPv6 and for
 * v4-mapped addresses on a dual-stack socket, which the kernel accepts
 * with IP_TRANSPARENT). Return: the control length to send.
 */
static size_t source_cmsg(union psp_host_cmsg *c, const struct sockaddr_storage *to,
			  const struct sockaddr_storage *from)
{
	struct cmsghdr *ch = &c->h;

	memset(c, 0, sizeof(*c));
	if (to->ss_family == AF_INET) {
		struct in_pktinfo pi = {.ipi_spec_dst = ((const struct sockaddr_in *)from)->sin_addr};

		ch->cmsg_level = IPPROTO_IP;
		ch->cmsg_type = IP_PKTINFO;
		ch->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(ch), &pi, sizeof(pi));
		return CMSG_SPACE(sizeof(pi));
	}
	struct in6_pktinfo pi6 = {.ipi6_addr = ((const struct sockaddr_in6 *)from)->sin6_addr};

	ch->cmsg_level = IPPROTO_IPV6;
	ch->cmsg_type = IPV6_PKTINFO;
	ch->cmsg_len = CMSG_LEN(sizeof(pi6));
	memcpy(CMSG_DATA(ch), &pi6, sizeof(pi6));
	return CMSG_SPACE(sizeof(pi6));
}

/**
 * queue() - Add the forward of the sealed packet @p (@len bytes) to @to,
 * sourced from @from, to @r->out (flushing it first if full).
 */
static void queue(struct psp_host_rx *r, const uint8_t *p, size_t len,
		  const struct sockaddr_storage *to, const struct sockaddr_storage *from)
{
	struct psp_host_out *o = &r->out;
	int i;

	if (o->n == PSP_HOST_BATCH)
		psp_host_flush(r);
	i = o->n++;
	o->to[i] = *to;
	o->iov[i] = (struct iovec){.iov_base = (void *)p, .iov_len = len};
	o->m[i].msg_hdr = (struct msghdr){
		.msg_name = &o->to[i],
		.msg_namelen = to->ss_family == AF_INET ? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6),
		.msg_iov = &o->iov[i], .msg_iovlen = 1, .msg_control = o->c[i].b};
	o->m[i].msg_hdr.msg_controllen = source_cmsg(&o->c[i], to, from);
}

/** psp_host_flush() - See psp_host.h. */
void psp_host_flush(struct psp_host_rx *r)
{
	struct psp_host_out *o = &r->out;

	for (int done = 0; done < o->n;) {
		int k = sendmmsg(r->fd, o->m + done, (unsigned int)(o->n - done), MSG_DONTWAIT);

		if (k <= 0) {  /* the first left failed: count it, go on with the rest */
			r->st.send_errors++;
			done++;
			continue;
		}
		for (int i = done; i < done + k; i++)
			if (o->m[i].msg_len == o->iov[i].iov_len)
				r->st.forwarded++;
			else
				r->st.send_errors++;
		done += k;
	}
	o->n = 0;
}

/** set_port() - Set the port of @a (IPv4 or IPv6) to @port. */
static void set_port(struct sockaddr_storage *a, uint16_t port)
{
	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(port);
}

/** psp_host_dispatch() - See psp_host.h. */
void psp_host_dispatch(struct psp_host_rx *r, const uint8_t *p, size_t len,
		       const struct sockaddr_storage *src, const struct sockaddr_storage *dst,
		       uint64_t now)
{
	struct sockaddr_storage to = *dst;
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
	set_port(&to, dport);
	queue(r, p, len, &to, src);
}
