/* SPDX-License-Identifier: MIT */
/**
 * @file sockaddr.c
 * Conversions between homa_addr (IPv6 or mapped IPv4) and socket
 * addresses, and from errno values to homa errors.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "driver.h"

/** homa_io_addr_from_sockaddr() - See driver.h. */
int homa_io_addr_from_sockaddr(const struct sockaddr *sa, homa_addr *addr,
			       uint16_t *port)
{
	if (!sa || !addr)
		return HOMA_EINVAL;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		*addr = homa_addr_ipv4(ntohl(in->sin_addr.s_addr));
		if (port)
			*port = ntohs(in->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		memcpy(addr->b, &in6->sin6_addr, 16);
		if (port)
			*port = ntohs(in6->sin6_port);
		return 0;
	}
	return HOMA_EINVAL;
}

/** homa_io_addr_to_sockaddr() - See driver.h. */
int homa_io_addr_to_sockaddr(int family, const homa_addr *addr, uint16_t port,
			     struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)out;

		if (!homa_addr_is_ipv4(addr))
			return HOMA_ENOTSUP;
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		in->sin_addr.s_addr = htonl(homa_addr_get_ipv4(addr));
		return (int)sizeof(*in);
	}
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;

	in6->sin6_family = AF_INET6;
	in6->sin6_port = htons(port);
	memcpy(&in6->sin6_addr, addr->b, 16);
	return (int)sizeof(*in6);
}

/** homa_io_errno() - See driver.h. */
int homa_io_errno(int err)
{
	switch (err) {
	case EADDRINUSE:
		return HOMA_EADDRINUSE;
	case EPERM:
	case EACCES:
		return HOMA_EPERM;
	case EADDRNOTAVAIL:
		return HOMA_EADDRNOTAVAIL;
	case EAFNOSUPPORT:
	case EPROTONOSUPPORT:
		return HOMA_ENOTSUP;
	case ENOMEM:
	case ENOBUFS:
		return HOMA_ENOMEM;
	default:
		return HOMA_EIO;
	}
}

/** homa_io_reserve_port() - See driver.h. */
int homa_io_reserve_port(const struct homa_driver_config *cfg, uint16_t *port)
{
	struct sockaddr_storage got;
	socklen_t len = sizeof(got);
	int fd = socket(cfg->bind.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return homa_io_errno(errno);
	if (bind(fd, (const struct sockaddr *)&cfg->bind, cfg->bind_len) < 0 ||
	    getsockname(fd, (struct sockaddr *)&got, &len) < 0) {
		int err = homa_io_errno(errno);

		close(fd);
		return err;
	}
	homa_io_addr_from_sockaddr((struct sockaddr *)&got, &(homa_addr){0}, port);
	return fd;
}
