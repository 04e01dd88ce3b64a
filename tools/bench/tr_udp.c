/* SPDX-License-Identifier: MIT */
/*
 * The UDP floor: plain UDP ping-pong on the same path, with no transport
 * logic at all. A request datagram starts with the 8-byte tag and the
 * 4-byte wanted response length; the server answers with a datagram of
 * that length starting with the tag. Messages must fit one datagram.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "ctl.h"
#include "homa/errors.h"

/** Largest datagram this arm sends. */
#define UDP_MAX 65000

/** Client state: one socket connected to each server. */
struct udp_client {
	int fds[BENCH_MAX_SERVERS];
	size_t n;
	uint8_t buf[UDP_MAX];
};

/** udp_client_close() - Close the sockets and free @ctx. */
static void udp_client_close(void *ctx)
{
	struct udp_client *c = ctx;

	for (size_t i = 0; i < c->n; i++)
		close(c->fds[i]);
	free(c);
}

/** udp_client_open() - One connected, non-blocking socket per server. */
static int udp_client_open(void **ctx, const struct bench_tr_cfg *cfg)
{
	struct udp_client *c = calloc(1, sizeof(*c));

	if (!c)
		return HOMA_ENOMEM;
	if (cfg->max_size > UDP_MAX) {
		fprintf(stderr, "homa-bench: the UDP floor carries at most %d bytes\n", UDP_MAX);
		free(c);
		return HOMA_EMSGSIZE;
	}
	for (size_t i = 0; i < cfg->nservers; i++) {
		int fd = socket(cfg->servers[i].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (const struct sockaddr *)&cfg->servers[i],
				      cfg->server_lens[i]) != 0) {
			if (fd >= 0)
				close(fd);
			udp_client_close(c);
			return HOMA_EIO;
		}
		c->fds[c->n++] = fd;
	}
	*ctx = c;
	return 0;
}

/** udp_client_start() - Send one request datagram. */
static int udp_client_start(void *ctx, size_t server, uint32_t req, uint32_t resp, uint64_t tag)
{
	struct udp_client *c = ctx;
	uint64_t t = htobe64(tag);
	uint32_t r = htobe32(resp);

	if (req < 12 || req > UDP_MAX || resp < 8 || resp > UDP_MAX)
		return HOMA_EMSGSIZE;
	memset(c->buf, 0, req);
	memcpy(c->buf, &t, 8);
	memcpy(c->buf + 8, &r, 4);
	if (send(c->fds[server], c->buf, req, 0) != (ssize_t)req)
		return HOMA_EIO;
	return 0;
}

/** udp_client_wait() - poll() the sockets until a response or @deadline_ns. */
static int udp_client_wait(void *ctx, uint64_t deadline_ns, struct bench_done *out, int max)
{
	struct udp_client *c = ctx;
	struct pollfd p[BENCH_MAX_SERVERS];
	int got = 0;

	for (;;) {
		for (size_t i = 0; i < c->n && got < max; i++) {
			uint64_t t;
			while (got < max && recv(c->fds[i], &t, sizeof(t), 0) >= 8)
				out[got++] = (struct bench_done){ .tag = be64toh(t), .err = 0 };
		}
		uint64_t now = bench_now_ns();
		if (got || now >= deadline_ns || bench_stop)
			return got;
		for (size_t i = 0; i < c->n; i++)
			p[i] = (struct pollfd){ c->fds[i], POLLIN, 0 };
		struct timespec ts = { (deadline_ns - now) / 1000000000, (deadline_ns - now) % 1000000000 };
		if (ppoll(p, c->n, &ts, NULL) < 0 && errno != EINTR)
			return HOMA_EIO;
	}
}

const struct bench_client_ops bench_udp_client = {
	.name = "udp",
	.open = udp_client_open,
	.start = udp_client_start,
	.wait = udp_client_wait,
	.close = udp_client_close,
};

int bench_udp_server(const struct bench_opts *o)
{
	struct bench_tr_cfg cfg;
	char spec[128];
	static uint8_t buf[UDP_MAX];

	snprintf(spec, sizeof(spec), strchr(o->bind, ':') ? "[%s]:%u" : "%s:%u", o->bind, o->port);
	if (bench_parse_servers(spec, &cfg))
		return HOMA_EINVAL;
	int fd = socket(cfg.servers[0].ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&cfg.servers[0], cfg.server_lens[0]) != 0) {
		fprintf(stderr, "homa-bench: UDP bind %s: %s\n", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return errno == EADDRINUSE ? HOMA_EADDRINUSE : HOMA_EIO;
	}
	struct timeval tv = { 0, 100000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	bench_ctl_ready((uint16_t)o->port);
	while (!bench_stop) {
		struct sockaddr_storage from;
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (r < 12)
			continue;
		uint32_t resp;
		memcpy(&resp, buf + 8, 4);
		resp = be32toh(resp);
		if (resp < 8 || resp > UDP_MAX)
			continue;
		memset(buf + 8, 0, resp - 8);
		sendto(fd, buf, resp, 0, (struct sockaddr *)&from, fl);
		bench_ctl_count_rpc();
	}
	close(fd);
	return 0;
}
