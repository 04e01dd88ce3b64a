/* SPDX-License-Identifier: MIT */
/**
 * @file wrap_helpers.c
 * Helpers of the crypto tests that interpose recvmmsg() and sendmmsg()
 * (wrap_helpers.h).
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <time.h>

#include "wrap_helpers.h"

/** crypto_fd_port() - See wrap_helpers.h. */
uint16_t crypto_fd_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t l = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &l) || sa.sin_family != AF_INET)
		return 0;
	return sa.sin_port;
}

/** crypto_gather() - See wrap_helpers.h. */
int crypto_gather(int fd, struct mmsghdr *msgs, unsigned int vlen, int n, int want)
{
	for (int i = 0; i < 200 && n < want && (unsigned int)n < vlen; i++) {
		struct timespec ts = {0, 100000};
		int m = __real_recvmmsg(fd, msgs + n, vlen - (unsigned int)n, MSG_DONTWAIT, NULL);

		if (m > 0)
			n += m;
		else
			nanosleep(&ts, NULL);
	}
	return n;
}

/** crypto_sent_to() - See wrap_helpers.h. */
bool crypto_sent_to(const struct mmsghdr *msgs, unsigned int vlen, uint16_t port, size_t min,
		    size_t max)
{
	for (unsigned int i = 0; i < vlen; i++) {
		const struct msghdr *h = &msgs[i].msg_hdr;
		const struct sockaddr_in *sa = h->msg_name;
		size_t len = 0;

		for (size_t k = 0; k < h->msg_iovlen; k++)
			len += h->msg_iov[k].iov_len;
		if (sa && sa->sin_family == AF_INET && sa->sin_port == port && len >= min &&
		    len <= max)
			return true;
	}
	return false;
}
